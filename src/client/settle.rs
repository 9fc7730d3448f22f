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
    if success {
        if let (Some(said), Some(ours)) = (&response.network, network)
            && said != ours
        {
            return Word::Unreadable(format!("PAYMENT-RESPONSE claims success on {said}, the payment is on {ours}"));
        }
        let address = account.rsplit(':').next().unwrap_or(account);
        if let Some(payer) = &response.payer
            && !payer.eq_ignore_ascii_case(address)
        {
            return Word::Unreadable(format!(
                "PAYMENT-RESPONSE claims success for payer {payer}, the payer is {address}"
            ));
        }
    }
    Word::Read(Box::new(Settlement::X402(response)))
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
