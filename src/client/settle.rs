//! The seller's word on a payment that was sent: x402's `PAYMENT-RESPONSE` or MPP's `Payment-Receipt`, read and
//! held against the payment (its network and payer), and the recovery and journal answer that follow.

use serde_json::Value;

use super::offer::{PAYMENT_RECEIPT, PAYMENT_RESPONSE, Wire};
use super::types::{Incoming, Settlement, SettlementResponse};
use crate::safety::recovery::{Action, Charge, Recovery};

/// What the seller's headers say of the payment.
#[derive(Debug)]
pub(crate) enum Word {
    /// Nothing: no settlement header.
    Silent,
    /// A settlement the client read and that names this payment (or names nothing that contradicts it).
    Read(Box<Settlement>),
    /// A settlement header the client cannot take: not base64 JSON, or naming another network or payer.
    Unreadable(String),
}

/// Reads the settlement header of the wire; `network` and `account` are the payment's (CAIP-2, CAIP-10).
pub(crate) fn read(answer: &Incoming, wire: Wire, network: Option<&str>, account: &str) -> Word {
    match wire {
        Wire::X402 => match answer.header(PAYMENT_RESPONSE) {
            None => Word::Silent,
            Some(header) => x402(&header, network, account),
        },
        Wire::Mpp => match answer.header(PAYMENT_RECEIPT) {
            None => Word::Silent,
            Some(header) => mpp(&header),
        },
    }
}

/// The longest settlement header read, in bytes.
const MAX_HEADER: usize = 65_536;

fn x402(header: &str, network: Option<&str>, account: &str) -> Word {
    let header = header.trim();
    if header.len() > MAX_HEADER {
        return Word::Unreadable("PAYMENT-RESPONSE is longer than 65536 bytes".into());
    }
    let Some(bytes) = crate::codec::b64_decode(header) else {
        return Word::Unreadable("PAYMENT-RESPONSE is not base64".into());
    };
    let Some(raw @ Value::Object(_)) = std::str::from_utf8(&bytes).ok().and_then(crate::json::parse) else {
        return Word::Unreadable("PAYMENT-RESPONSE is not a JSON object".into());
    };
    let Some(success) = raw.get("success").and_then(Value::as_bool) else {
        return Word::Unreadable("PAYMENT-RESPONSE has no boolean success".into());
    };
    let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
    let response = SettlementResponse {
        success,
        error_reason: text("errorReason"),
        payer: text("payer"),
        transaction: text("transaction"),
        network: text("network"),
        amount: text("amount").or_else(|| raw.get("amount").filter(|v| v.is_u64()).map(Value::to_string)),
        extensions: raw.get("extensions").cloned(),
        raw: raw.clone(),
    };
    let pending = response.is_pending();
    if success && pending {
        return Word::Unreadable("PAYMENT-RESPONSE claims success and a pending settlement at once".into());
    }
    // A success or a pending settlement says money moved: it must be this payment's, on its network, by its payer.
    let claim = if success { "success" } else { "a pending settlement" };
    if success || pending {
        if let (Some(said), Some(ours)) = (&response.network, network)
            && said != ours
        {
            return Word::Unreadable(format!("PAYMENT-RESPONSE claims {claim} on {said}, the payment is on {ours}"));
        }
        let address = account.rsplit(':').next().unwrap_or(account);
        if let Some(payer) = &response.payer
            && !payer.eq_ignore_ascii_case(address)
        {
            return Word::Unreadable(format!(
                "PAYMENT-RESPONSE claims {claim} for payer {payer}, the payer is {address}"
            ));
        }
    }
    if pending {
        let ours = network.or(response.network.as_deref()).unwrap_or_default();
        match response.transaction.as_deref() {
            None | Some("") => {
                return Word::Unreadable(
                    "PAYMENT-RESPONSE says the settlement is pending and names no transaction".into(),
                );
            }
            Some(hash) if !is_transaction_of(hash, ours) => {
                return Word::Unreadable(format!(
                    "PAYMENT-RESPONSE says the settlement is pending with transaction {}, which is no transaction \
                     hash of {ours}",
                    hash.get(..80).unwrap_or(hash)
                ));
            }
            Some(_) => {}
        }
    }
    Word::Read(Box::new(Settlement::X402(response)))
}

/// The longest transaction hash taken, in bytes, on a network whose hash form the client does not know.
const MAX_TRANSACTION: usize = 256;

/// Whether `hash` has the form of a transaction hash of the CAIP-2 `network`: on `eip155:` `0x` and 64 hex digits, on
/// `solana:` a signature's base58 (64 bytes: 64 to 88 characters of the alphabet); on any other network visible ASCII
/// of at most 256 bytes.
fn is_transaction_of(hash: &str, network: &str) -> bool {
    let namespace = network.split(':').next().unwrap_or_default();
    match namespace {
        "eip155" => hash.strip_prefix("0x").is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit())),
        "solana" => {
            const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
            (64..=88).contains(&hash.len()) && hash.bytes().all(|b| ALPHABET.contains(&b))
        }
        _ => hash.len() <= MAX_TRANSACTION && hash.bytes().all(|b| b.is_ascii_graphic()),
    }
}

#[cfg(feature = "mpp")]
fn mpp(header: &str) -> Word {
    match crate::mpp::read_receipt(header) {
        Err(e) => Word::Unreadable(format!("Payment-Receipt: {e}")),
        Ok(_) => {
            let receipt = crate::codec::b64u_decode(header.trim_matches([' ', '\t']))
                .and_then(|b| String::from_utf8(b).ok())
                .and_then(|t| crate::json::parse(&t))
                .unwrap_or(Value::Null);
            Word::Read(Box::new(Settlement::Mpp { receipt }))
        }
    }
}

#[cfg(not(feature = "mpp"))]
fn mpp(_header: &str) -> Word {
    Word::Unreadable("this build reads no MPP receipt (the `mpp` feature is off)".into())
}

/// The recovery of a settlement the client could not take: a person looks, the charge unknown.
pub(crate) const UNREADABLE: Recovery = Recovery::new(Action::OperatorReview, Charge::Unknown);

/// The recovery of a settlement read: x402's by its `success` and `errorReason`; a receipt is a success.
pub(crate) fn recovery(settlement: &Settlement) -> Option<Recovery> {
    match settlement {
        Settlement::X402(r) => Recovery::of_settlement(&r.raw),
        Settlement::Mpp { .. } => None,
    }
}

/// The job id of a 202 answer: the body's `jobId`, `job_id`, `id` or `job.id`, in that order, where the body is
/// JSON; else the `Location` header as written.
pub(crate) fn job_id(answer: &Incoming) -> Option<String> {
    let body = std::str::from_utf8(&answer.body).ok().and_then(crate::json::parse);
    let text = |v: &Value| match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    body.as_ref()
        .and_then(|b| ["/jobId", "/job_id", "/id", "/job/id"].iter().find_map(|p| b.pointer(p).and_then(&text)))
        .or_else(|| answer.header("location"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::b64_encode;

    const ACCOUNT: &str = "eip155:84532:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

    fn with(header: &str) -> Incoming {
        Incoming { status: 200, headers: vec![("PAYMENT-RESPONSE".into(), header.into())], body: Default::default() }
    }

    fn json(value: &str) -> String {
        b64_encode(value.as_bytes())
    }

    #[test]
    fn a_settlement_is_read_whole() {
        let header = json(
            r#"{"success":true,"payer":"0xF39FD6E51AAD88F6F4CE6AB8827279CFFFB92266","transaction":"0xab","network":"eip155:84532","amount":"10000","extensions":{"x":1}}"#,
        );
        let Word::Read(s) = read(&with(&header), Wire::X402, Some("eip155:84532"), ACCOUNT) else { panic!("not read") };
        let Settlement::X402(r) = *s else { panic!("not x402") };
        assert!(r.success);
        assert_eq!((r.transaction.as_deref(), r.amount.as_deref()), (Some("0xab"), Some("10000")));
        assert_eq!(r.extensions, Some(serde_json::json!({"x": 1})));
        assert_eq!(recovery(&Settlement::X402(r)), None);
    }

    #[test]
    fn a_settlement_that_is_not_base64_json_or_names_another_network_or_payer_is_not_taken() {
        let other_payer = json(r#"{"success":true,"payer":"0x0000000000000000000000000000000000000001"}"#);
        let other_network = json(r#"{"success":true,"network":"eip155:1"}"#);
        for header in ["%%%", json("nope").as_str(), json("[true]").as_str(), json(r#"{"success":"yes"}"#).as_str()]
            .into_iter()
            .chain([other_payer.as_str(), other_network.as_str()])
        {
            let word = read(&with(header), Wire::X402, Some("eip155:84532"), ACCOUNT);
            assert!(matches!(word, Word::Unreadable(_)), "{header}: {word:?}");
        }
        assert!(matches!(
            read(&Incoming { status: 200, headers: vec![], body: Default::default() }, Wire::X402, None, ACCOUNT),
            Word::Silent
        ));
    }

    #[test]
    fn a_failed_settlement_keeps_its_reason_and_recovery() {
        let header = json(r#"{"success":false,"errorReason":"invalid_exact_evm_payload_signature"}"#);
        let Word::Read(s) = read(&with(&header), Wire::X402, Some("eip155:84532"), ACCOUNT) else { panic!() };
        let Settlement::X402(r) = s.as_ref() else { panic!() };
        assert_eq!(r.error_reason.as_deref(), Some("invalid_exact_evm_payload_signature"));
        assert_eq!(recovery(&s), Some(Recovery::new(Action::DoNotRetry, Charge::No)));
    }

    #[test]
    fn a_pending_settlement_is_read_with_a_transaction_hash_of_its_own_network_alone() {
        let evm = format!("0x{}", "ab".repeat(32));
        let signature = "5".repeat(88);
        let pending = |network: &str, tx: &str| {
            json(
                &serde_json::json!({"success": false, "errorReason": "settlement_pending", "transaction": tx,
                "network": network})
                .to_string(),
            )
        };
        let sol = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
        let solana = |tx: &str| read(&with(&pending(sol, tx)), Wire::X402, Some(sol), &format!("{sol}:payer"));
        let base = |tx: &str| read(&with(&pending("eip155:84532", tx)), Wire::X402, Some("eip155:84532"), ACCOUNT);
        for word in [base(&evm), solana(&signature)] {
            let Word::Read(s) = word else { panic!("not read: {word:?}") };
            let Settlement::X402(r) = s.as_ref() else { panic!() };
            assert!(r.is_pending());
            assert_eq!(recovery(&s), Some(Recovery::new(Action::QueryFirst, Charge::Unknown)));
        }
        let upper = format!("0x{}", "AB".repeat(32));
        assert!(matches!(base(&upper), Word::Read(_)));
        for word in [base(&signature), base(&evm[..65]), base("0xzz"), solana(&evm), solana("0OIl".repeat(22).as_str())]
        {
            assert!(matches!(word, Word::Unreadable(ref why) if why.contains("no transaction hash of")), "{word:?}");
        }
        // On a network whose hash form the client does not know: visible ASCII of at most 256 bytes.
        let other = |tx: &str| read(&with(&pending("xrpl:0", tx)), Wire::X402, Some("xrpl:0"), "xrpl:0:rPayer");
        assert!(matches!(other("ABC123"), Word::Read(_)));
        assert!(matches!(other("a b"), Word::Unreadable(_)) && matches!(other(&"a".repeat(257)), Word::Unreadable(_)));
    }

    #[test]
    fn a_job_id_comes_from_the_body_or_the_location() {
        let answer = |body: &str, location: Option<&str>| Incoming {
            status: 202,
            headers: location.map(|l| ("Location".to_owned(), l.to_owned())).into_iter().collect(),
            body: bytes::Bytes::copy_from_slice(body.as_bytes()),
        };
        assert_eq!(job_id(&answer(r#"{"jobId":"j-1"}"#, None)).as_deref(), Some("j-1"));
        assert_eq!(job_id(&answer(r#"{"job":{"id":7}}"#, None)).as_deref(), Some("7"));
        assert_eq!(job_id(&answer("queued", Some("/jobs/9"))).as_deref(), Some("/jobs/9"));
        assert_eq!(job_id(&answer("queued", None)), None);
    }
}
