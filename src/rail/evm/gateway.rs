//! Circle Gateway burn intents: the EIP-712 `BurnIntent` and `TransferSpec` a depositor signs (domain
//! `GatewayWallet`, version `1`, no chain and no contract), their typed data and digest, the JSON form a Gateway
//! client answers read back, the TransferSpec's 32-byte accounts as CAIP-10, and the salt the `usdc` method's
//! Gateway profile derives from a charge (keccak256 of the RFC 8785 form of its preimage), which Circle Gateway
//! validates and the destination mint carries.

use alloy_primitives::{Address, B256, Bytes, U256};
use alloy_sol_types::{Eip712Domain, SolStruct, sol};
use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::charge::keccak_jcs;
use super::codec::{Eip712Parts, is_address_text};
use super::typed_data::{TypedData, TypedField};
use crate::codec::{hex_bytes, to_hex};
use crate::json::{Member, safe_int};

/// The Gateway EIP-712 domain's name.
pub const DOMAIN_NAME: &str = "GatewayWallet";
/// The Gateway EIP-712 domain's version.
pub const DOMAIN_VERSION: &str = "1";
/// The `format` of a Gateway transfer authorization in the `usdc` method's credential.
pub const FORMAT: &str = "circle-gateway-v1";
/// The most bytes of hook data a burn intent read back may carry.
pub const MAX_HOOK_DATA_BYTES: usize = 8192;

sol! {
    /// What a burn moves: from a source domain's Gateway wallet to a destination domain's minter, 32-byte
    /// accounts (an EVM address left-padded with zeros), the amount, the salt and the hook data.
    #[allow(missing_docs)]
    #[derive(Debug, PartialEq, Eq)]
    struct TransferSpec {
        uint32 version;
        uint32 sourceDomain;
        uint32 destinationDomain;
        bytes32 sourceContract;
        bytes32 destinationContract;
        bytes32 sourceToken;
        bytes32 destinationToken;
        bytes32 sourceDepositor;
        bytes32 destinationRecipient;
        bytes32 sourceSigner;
        bytes32 destinationCaller;
        uint256 value;
        bytes32 salt;
        bytes hookData;
    }

    /// The burn intent a depositor signs: the transfer, the last source block it may be burned in and the most
    /// fee Gateway may take.
    #[allow(missing_docs)]
    #[derive(Debug, PartialEq, Eq)]
    struct BurnIntent {
        uint256 maxBlockHeight;
        uint256 maxFee;
        TransferSpec spec;
    }
}

/// The Gateway EIP-712 domain: a name and a version, nothing else.
pub fn domain() -> Eip712Domain {
    Eip712Domain::new(Some(DOMAIN_NAME.into()), Some(DOMAIN_VERSION.into()), None, None, None)
}

/// The EIP-712 parts of a burn intent under the Gateway domain, from the `sol!` static structs.
pub fn eip712_parts(intent: &BurnIntent) -> Eip712Parts {
    Eip712Parts::of(intent, &domain())
}

/// A burn intent's digest: `keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(intent))`.
pub fn signing_hash(intent: &BurnIntent) -> B256 {
    intent.eip712_signing_hash(&domain())
}

/// The members of `TransferSpec`, in order.
const TRANSFER_SPEC: &[(&str, &str)] = &[
    ("version", "uint32"),
    ("sourceDomain", "uint32"),
    ("destinationDomain", "uint32"),
    ("sourceContract", "bytes32"),
    ("destinationContract", "bytes32"),
    ("sourceToken", "bytes32"),
    ("destinationToken", "bytes32"),
    ("sourceDepositor", "bytes32"),
    ("destinationRecipient", "bytes32"),
    ("sourceSigner", "bytes32"),
    ("destinationCaller", "bytes32"),
    ("value", "uint256"),
    ("salt", "bytes32"),
    ("hookData", "bytes"),
];

/// The burn intent's JSON form, as Gateway's API and a wallet take it: uint32 members as numbers, uint256 members
/// as decimal strings, byte strings as `0x` and lower-case hex.
pub fn burn_intent_json(intent: &BurnIntent) -> Value {
    let s = &intent.spec;
    let word = |w: &B256| to_hex(w.as_slice());
    json!({
        "maxBlockHeight": intent.maxBlockHeight.to_string(),
        "maxFee": intent.maxFee.to_string(),
        "spec": {
            "version": s.version,
            "sourceDomain": s.sourceDomain,
            "destinationDomain": s.destinationDomain,
            "sourceContract": word(&s.sourceContract),
            "destinationContract": word(&s.destinationContract),
            "sourceToken": word(&s.sourceToken),
            "destinationToken": word(&s.destinationToken),
            "sourceDepositor": word(&s.sourceDepositor),
            "destinationRecipient": word(&s.destinationRecipient),
            "sourceSigner": word(&s.sourceSigner),
            "destinationCaller": word(&s.destinationCaller),
            "value": s.value.to_string(),
            "salt": word(&s.salt),
            "hookData": to_hex(&s.hookData),
        },
    })
}

/// The typed data of a burn intent, for a wallet's `eth_signTypedData_v4`.
pub fn typed_data(intent: &BurnIntent) -> TypedData {
    let field = |(name, ty): &(&'static str, &'static str)| TypedField::new(*name, *ty);
    let mut types = IndexMap::with_capacity(3);
    types.insert("EIP712Domain".to_owned(), vec![field(&("name", "string")), field(&("version", "string"))]);
    types.insert("TransferSpec".to_owned(), TRANSFER_SPEC.iter().map(field).collect());
    types.insert(
        "BurnIntent".to_owned(),
        vec![field(&("maxBlockHeight", "uint256")), field(&("maxFee", "uint256")), field(&("spec", "TransferSpec"))],
    );
    let mut domain = Map::with_capacity(2);
    domain.insert("name".into(), DOMAIN_NAME.into());
    domain.insert("version".into(), DOMAIN_VERSION.into());
    let message = match burn_intent_json(intent) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    TypedData { domain, types, primary_type: "BurnIntent".to_owned(), message }
}

/// A Gateway uint256 as its decimal string without leading zeros: from a string of 1 to 78 decimal digits, or a
/// non-negative safe integer (an integral float included), as the reference reads `value` and `maxFee`.
pub fn amount_of(value: &Value) -> Option<String> {
    if let Some(s) = value.as_str() {
        if s.is_empty() || s.len() > 78 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = s.trim_start_matches('0');
        return Some(if digits.is_empty() { "0".to_owned() } else { digits.to_owned() });
    }
    let n = safe_int(value).filter(|n| *n >= 0)?;
    Some(n.to_string())
}

/// A 32-byte account word: `0x` and 64 hex digits in either case.
fn word_of(text: &str) -> Option<B256> {
    let digits = text.strip_prefix("0x")?;
    (digits.len() == 64 && digits.bytes().all(|b| b.is_ascii_hexdigit())).then(|| text.parse().ok())?
}

/// The CAIP-10 account of a TransferSpec word on an `eip155:` network: the network, then the word's last 20 bytes
/// as `0x` and lower-case hex, once its first 12 bytes are zero; `None` for another word or another namespace (a
/// Solana account's base58 form is the Solana rail's).
pub fn account_of(network: &str, word: &str) -> Option<String> {
    if !network.starts_with("eip155:") {
        return None;
    }
    let w = word_of(word)?;
    let (pad, address) = w.as_slice().split_at(12);
    pad.iter().all(|b| *b == 0).then(|| format!("{network}:{}", to_hex(address)))
}

/// An EVM address as a TransferSpec word: 12 zero bytes, then the address; `None` for text that is not `0x` and
/// 40 hex digits.
pub fn address_word(address: &str) -> Option<B256> {
    let a = address.parse::<Address>().ok().filter(|_| is_address_text(address))?;
    Some(a.into_word())
}

/// Reads a burn intent's JSON form ([`burn_intent_json`]'s, or a Gateway client's answer): uint256 members as
/// [`amount_of`] reads them and below 2^256, uint32 members as non-negative safe integers below 2^32, words as `0x`
/// and 64 hex digits, the hook data as `0x` hex of at most [`MAX_HOOK_DATA_BYTES`]. `None` for anything else.
pub fn burn_intent_of(value: &Value) -> Option<BurnIntent> {
    let uint = |v: Option<&Value>| U256::from_str_radix(&amount_of(v?)?, 10).ok();
    let small = |v: Option<&Value>| u32::try_from(safe_int(v?)?).ok();
    let spec = value.member("spec")?;
    let word = |key: &str| word_of(spec.member(key)?.as_str()?);
    let hook = hex_bytes(spec.member("hookData")?.as_str()?).filter(|b| b.len() <= MAX_HOOK_DATA_BYTES)?;
    Some(BurnIntent {
        maxBlockHeight: uint(value.member("maxBlockHeight"))?,
        maxFee: uint(value.member("maxFee"))?,
        spec: TransferSpec {
            version: small(spec.member("version"))?,
            sourceDomain: small(spec.member("sourceDomain"))?,
            destinationDomain: small(spec.member("destinationDomain"))?,
            sourceContract: word("sourceContract")?,
            destinationContract: word("destinationContract")?,
            sourceToken: word("sourceToken")?,
            destinationToken: word("destinationToken")?,
            sourceDepositor: word("sourceDepositor")?,
            destinationRecipient: word("destinationRecipient")?,
            sourceSigner: word("sourceSigner")?,
            destinationCaller: word("destinationCaller")?,
            value: uint(spec.member("value"))?,
            salt: word("salt")?,
            hookData: Bytes::from(hook),
        },
    })
}

/// The values of a Gateway salt's preimage: the charge's (id, realm, request hash, recipient) and the Gateway
/// client's (networks, accounts as CAIP-10, amount and fee as decimal strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaltInput<'a> {
    /// The challenge id.
    pub id: &'a str,
    /// The challenge's realm.
    pub realm: &'a str,
    /// keccak256 of the challenge's request bytes ([`usdc_request_hash`](super::charge::usdc_request_hash)).
    pub request_hash: &'a B256,
    /// The CAIP-2 network burned on, e.g. `eip155:5042002`.
    pub source_network: &'a str,
    /// The CAIP-2 network minted on.
    pub destination_network: &'a str,
    /// The depositor's CAIP-10 account (the credential's `source`).
    pub source_depositor: &'a str,
    /// The signer's CAIP-10 account ([`account_of`] the TransferSpec's `sourceSigner`).
    pub source_signer: &'a str,
    /// The request's recipient, as the seller wrote it.
    pub recipient: &'a str,
    /// The recipient's CAIP-10 account on the destination ([`account_of`] the TransferSpec's
    /// `destinationRecipient`).
    pub destination_recipient: &'a str,
    /// The TransferSpec's value ([`amount_of`]).
    pub amount: &'a str,
    /// The burn intent's `maxFee` ([`amount_of`]).
    pub max_fee: &'a str,
}

/// The `usdc` method's Gateway salt: keccak256 of the RFC 8785 form of the preimage's members with `method:
/// "usdc"`, `intent: "charge"` and `type: "gateway"`, the request hash as `0x` and lower-case hex.
pub fn gateway_salt(input: &SaltInput<'_>) -> B256 {
    let request_hash = to_hex(input.request_hash.as_slice());
    keccak_jcs(&[
        ("method", "usdc"),
        ("intent", "charge"),
        ("type", "gateway"),
        ("id", input.id),
        ("realm", input.realm),
        ("requestHash", &request_hash),
        ("sourceNetwork", input.source_network),
        ("destinationNetwork", input.destination_network),
        ("sourceDepositor", input.source_depositor),
        ("sourceSigner", input.source_signer),
        ("recipient", input.recipient),
        ("destinationRecipient", input.destination_recipient),
        ("amount", input.amount),
        ("maxFee", input.max_fee),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_as_the_reference_reads_them() {
        assert_eq!(amount_of(&json!("0025")).as_deref(), Some("25"));
        assert_eq!(amount_of(&json!("000")).as_deref(), Some("0"));
        assert_eq!(amount_of(&json!(500000)).as_deref(), Some("500000"));
        assert_eq!(amount_of(&json!(5.0)).as_deref(), Some("5"));
        for bad in
            [json!(""), json!("1e3"), json!("-1"), json!(" 1"), json!(-1), json!(1.5), json!(9007199254740992_u64)]
        {
            assert_eq!(amount_of(&bad), None, "{bad}");
        }
        assert_eq!(amount_of(&json!("9".repeat(78))).map(|s| s.len()), Some(78));
        assert_eq!(amount_of(&json!("9".repeat(79))), None);
    }

    #[test]
    fn accounts_are_eip155_words_with_a_zero_pad() {
        let word = "0x000000000000000000000000F39FD6E51AAD88F6F4CE6AB8827279CFFFB92266";
        assert_eq!(
            account_of("eip155:1", word).as_deref(),
            Some("eip155:1:0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266")
        );
        assert_eq!(account_of("solana:devnet", word), None);
        assert_eq!(account_of("eip155:1", &word.replacen("0x00", "0x01", 1)), None);
        assert_eq!(account_of("eip155:1", &word[..65]), None);
        let back = address_word("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266").map(|w| to_hex(w.as_slice()));
        assert_eq!(back, Some(word.to_lowercase()));
        assert_eq!(address_word("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb9226"), None);
    }
}
