//! Uniswap's Permit2 signature transfers: the canonical contract, the x402 exact and upto proxies that spend them,
//! the typed data a payer signs (`PermitTransferFrom`; `PermitWitnessTransferFrom` with x402's witness; the single
//! or batch witness transfer of MPP's `evm` method, under the Permit2 deployment its challenge names), and its
//! EIP-712 digest computed from `sol!` static structs.

use alloy_primitives::{Address, U256};
use alloy_sol_types::Eip712Domain;
use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::codec::{Eip712Parts, address_in, decimal_in, is_address_text, object};
use super::typed_data::{TypedData, TypedField};
use crate::json::Member;
use crate::refusal::{Reason, Refusal};

/// The canonical Permit2 contract, the same address on every chain.
pub const PERMIT2: &str = "0x000000000022D473030F116dDEE9F6B43aC78BA3";
/// The x402 exact Permit2 proxy: the spender of an `exact` Permit2 payment.
pub const EXACT_PERMIT2_PROXY: &str = "0x402085c248EeA27D92E8b30b2C58ed07f9E20001";
/// The x402 upto Permit2 proxy: the spender of an `upto` Permit2 payment.
pub const UPTO_PERMIT2_PROXY: &str = "0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002";

/// Permit2's structs without a witness.
pub mod plain {
    alloy_sol_types::sol! {
        /// The token and the most the spender may move.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct TokenPermissions {
            address token;
            uint256 amount;
        }

        /// A signature transfer with no witness.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct PermitTransferFrom {
            TokenPermissions permitted;
            address spender;
            uint256 nonce;
            uint256 deadline;
        }
    }
}

/// Permit2's witness transfer with the x402 `exact` witness `{to, validAfter}`.
pub mod exact {
    alloy_sol_types::sol! {
        /// The token and the most the spender may move.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct TokenPermissions {
            address token;
            uint256 amount;
        }

        /// The x402 exact witness: the payee, and the time from which the transfer is valid.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct Witness {
            address to;
            uint256 validAfter;
        }

        /// A signature transfer with the witness.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct PermitWitnessTransferFrom {
            TokenPermissions permitted;
            address spender;
            uint256 nonce;
            uint256 deadline;
            Witness witness;
        }
    }
}

/// Permit2's witness transfer with the x402 `upto` witness `{to, facilitator, validAfter}`.
pub mod upto {
    alloy_sol_types::sol! {
        /// The token and the most the spender may move.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct TokenPermissions {
            address token;
            uint256 amount;
        }

        /// The x402 upto witness: the payee, the facilitator that settles, and the time from which it is valid.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct Witness {
            address to;
            address facilitator;
            uint256 validAfter;
        }

        /// A signature transfer with the witness.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct PermitWitnessTransferFrom {
            TokenPermissions permitted;
            address spender;
            uint256 nonce;
            uint256 deadline;
            Witness witness;
        }
    }
}

/// Permit2's witness transfers, single and batch, with the `PaymentWitness` of MPP's `evm` method.
pub mod payment {
    alloy_sol_types::sol! {
        /// The token and the most the spender may move.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct TokenPermissions {
            address token;
            uint256 amount;
        }

        /// The `evm` method's witness: the challenge hash and the request's external id.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct PaymentWitness {
            bytes32 challengeHash;
            string externalId;
        }

        /// A signature transfer of one token with the witness.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct PermitWitnessTransferFrom {
            TokenPermissions permitted;
            address spender;
            uint256 nonce;
            uint256 deadline;
            PaymentWitness witness;
        }

        /// A batch signature transfer (one entry per transfer) with the witness.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct PermitBatchWitnessTransferFrom {
            TokenPermissions[] permitted;
            address spender;
            uint256 nonce;
            uint256 deadline;
            PaymentWitness witness;
        }
    }
}

/// The most entries a batch witness transfer takes.
pub const MAX_BATCH: usize = 32;

/// The witness a Permit2 transfer carries: its fields (the struct named `Witness`) and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Witness {
    /// The `Witness` struct's fields, in order.
    pub fields: Vec<TypedField>,
    /// The witness value, uint256 members as decimal strings.
    pub value: Map<String, Value>,
}

/// What a Permit2 signature transfer moves: the token, the most, to whom, under which nonce, until when.
#[derive(Debug, Clone, PartialEq)]
pub struct Transfer<'a> {
    /// The chain.
    pub chain_id: u64,
    /// The token.
    pub token: &'a str,
    /// The most the spender may move.
    pub amount: U256,
    /// The spender.
    pub spender: &'a str,
    /// The unordered nonce.
    pub nonce: U256,
    /// The signature deadline.
    pub deadline: u64,
}

/// Permit2's typed data under its domain (name `Permit2`, no version): `PermitTransferFrom` without a witness,
/// `PermitWitnessTransferFrom` with one. uint256 members are written as decimal strings.
pub fn typed_data(transfer: &Transfer<'_>, witness: Option<&Witness>) -> TypedData {
    let permitted = [Permitted { token: transfer.token, amount: transfer.amount }];
    let shape = Shape {
        chain_id: transfer.chain_id,
        permit2: PERMIT2,
        permitted: &permitted,
        batch: false,
        spender: transfer.spender,
        nonce: transfer.nonce,
        deadline: transfer.deadline,
    };
    build(&shape, witness.map(|w| ("Witness", w)))
}

/// One token and the most the spender may move of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Permitted<'a> {
    /// The token.
    pub token: &'a str,
    /// The most the spender may move.
    pub amount: U256,
}

/// A Permit2 witness transfer, of one token amount or a batch, under a Permit2 deployment: what MPP's `evm` method
/// signs (a batch when the charge has splits, the primary transfer first).
#[derive(Debug, Clone, PartialEq)]
pub struct WitnessTransfer<'a> {
    /// The chain.
    pub chain_id: u64,
    /// The Permit2 contract (the domain's verifying contract), e.g. [`PERMIT2`].
    pub permit2: &'a str,
    /// The tokens and amounts: exactly one unless `batch`.
    pub permitted: &'a [Permitted<'a>],
    /// `PermitBatchWitnessTransferFrom` (`permitted` a list) rather than `PermitWitnessTransferFrom`.
    pub batch: bool,
    /// The spender.
    pub spender: &'a str,
    /// The unordered nonce.
    pub nonce: U256,
    /// The signature deadline.
    pub deadline: u64,
}

/// The typed data of a witness transfer whose witness struct is named `witness_type`, e.g.
/// [`PAYMENT_WITNESS`](super::charge::PAYMENT_WITNESS), or the rail's refusal: `evm/network-malformed` for a chain
/// id of 0 or past 2^53 − 1; `evm/field-malformed` for an address that is not `0x` and 40 hex digits, no entry, more
/// than [`MAX_BATCH`], more than one without `batch`, or a witness name that is not an upper-case letter and up to 63
/// letters and digits, or is `TokenPermissions` or starts with `Permit`.
pub fn witness_typed_data(
    transfer: &WitnessTransfer<'_>,
    witness_type: &str,
    witness: &Witness,
) -> Result<TypedData, Refusal> {
    if transfer.chain_id == 0 || transfer.chain_id > crate::json::MAX_SAFE_INTEGER as u64 {
        return Err(Refusal::evm(Reason::NetworkMalformed));
    }
    let malformed = || Refusal::evm(Reason::FieldMalformed);
    let n = transfer.permitted.len();
    if n == 0 || n > MAX_BATCH || (!transfer.batch && n != 1) {
        return Err(malformed());
    }
    let addresses_ok = is_address_text(transfer.permit2)
        && is_address_text(transfer.spender)
        && transfer.permitted.iter().all(|p| is_address_text(p.token));
    let b = witness_type.as_bytes();
    let name_ok = b.first().is_some_and(u8::is_ascii_uppercase)
        && b.len() <= 64
        && b.iter().all(u8::is_ascii_alphanumeric)
        && witness_type != "TokenPermissions"
        && !witness_type.starts_with("Permit");
    if !addresses_ok || !name_ok {
        return Err(malformed());
    }
    let shape = Shape {
        chain_id: transfer.chain_id,
        permit2: transfer.permit2,
        permitted: transfer.permitted,
        batch: transfer.batch,
        spender: transfer.spender,
        nonce: transfer.nonce,
        deadline: transfer.deadline,
    };
    Ok(build(&shape, Some((witness_type, witness))))
}

/// What every Permit2 typed data is built from.
struct Shape<'a> {
    chain_id: u64,
    permit2: &'a str,
    permitted: &'a [Permitted<'a>],
    batch: bool,
    spender: &'a str,
    nonce: U256,
    deadline: u64,
}

fn build(shape: &Shape<'_>, witness: Option<(&str, &Witness)>) -> TypedData {
    let field = TypedField::new;
    let mut types = IndexMap::new();
    types.insert(
        "EIP712Domain".to_owned(),
        vec![field("name", "string"), field("chainId", "uint256"), field("verifyingContract", "address")],
    );
    types.insert("TokenPermissions".to_owned(), vec![field("token", "address"), field("amount", "uint256")]);
    let permitted_type = if shape.batch { "TokenPermissions[]" } else { "TokenPermissions" };
    let mut fields = vec![
        field("permitted", permitted_type),
        field("spender", "address"),
        field("nonce", "uint256"),
        field("deadline", "uint256"),
    ];
    let entries: Vec<Value> =
        shape.permitted.iter().map(|p| json!({"token": p.token, "amount": p.amount.to_string()})).collect();
    let permitted = match (shape.batch, entries.first()) {
        (false, Some(one)) => one.clone(),
        _ => Value::Array(entries),
    };
    let mut message = object(json!({
        "permitted": permitted,
        "spender": shape.spender,
        "nonce": shape.nonce.to_string(),
        "deadline": shape.deadline.to_string(),
    }));
    let primary_type = match (witness, shape.batch) {
        (None, _) => "PermitTransferFrom",
        (Some((name, w)), batch) => {
            fields.push(TypedField::new("witness", name.to_owned()));
            message.insert("witness".into(), Value::Object(w.value.clone()));
            if batch { "PermitBatchWitnessTransferFrom" } else { "PermitWitnessTransferFrom" }
        }
    };
    types.insert(primary_type.to_owned(), fields);
    if let Some((name, w)) = witness {
        types.insert(name.to_owned(), w.fields.clone());
    }
    TypedData {
        domain: object(json!({"name": "Permit2", "chainId": shape.chain_id, "verifyingContract": shape.permit2})),
        types,
        primary_type: primary_type.to_owned(),
        message,
    }
}

/// The EIP-712 parts of Permit2 typed data built by [`typed_data`] (no witness, or the x402 exact or upto
/// witness) or by [`witness_typed_data`] with the `evm` method's `PaymentWitness` (single or batch), computed from
/// the `sol!` static structs rather than from the JSON types; `None` for any other shape.
pub fn eip712_parts(typed: &TypedData) -> Option<Eip712Parts> {
    let d = &typed.domain;
    let m = &typed.message;
    if d.member("name")?.as_str()? != "Permit2" || d.contains_key("version") {
        return None;
    }
    let domain = Eip712Domain::new(
        Some("Permit2".into()),
        None,
        Some(U256::from(d.member("chainId")?.as_u64()?)),
        Some(address_in(d.member("verifyingContract"))?),
        None,
    );
    let (spender, nonce, deadline) =
        (address_in(m.member("spender"))?, decimal_in(m.member("nonce"))?, decimal_in(m.member("deadline"))?);
    let witness_type = typed.types.get(typed.primary_type.as_str())?.iter().find(|f| f.name == "witness");
    if witness_type.is_some_and(|f| f.ty == super::charge::PAYMENT_WITNESS) {
        return payment_parts(typed, &domain, spender, nonce, deadline);
    }
    let permitted = m.member("permitted")?;
    let (token, amount) = (address_in(permitted.member("token"))?, decimal_in(permitted.member("amount"))?);
    let witness_fields: Option<Vec<&str>> =
        typed.types.get("Witness").map(|fs| fs.iter().map(|f| f.name.as_ref()).collect());
    match (typed.primary_type.as_str(), witness_fields.as_deref()) {
        ("PermitTransferFrom", None) => Some(Eip712Parts::of(
            &plain::PermitTransferFrom {
                permitted: plain::TokenPermissions { token, amount },
                spender,
                nonce,
                deadline,
            },
            &domain,
        )),
        ("PermitWitnessTransferFrom", Some(["to", "validAfter"])) => {
            let w = m.member("witness")?;
            Some(Eip712Parts::of(
                &exact::PermitWitnessTransferFrom {
                    permitted: exact::TokenPermissions { token, amount },
                    spender,
                    nonce,
                    deadline,
                    witness: exact::Witness {
                        to: address_in(w.member("to"))?,
                        validAfter: decimal_in(w.member("validAfter"))?,
                    },
                },
                &domain,
            ))
        }
        ("PermitWitnessTransferFrom", Some(["to", "facilitator", "validAfter"])) => {
            let w = m.member("witness")?;
            Some(Eip712Parts::of(
                &upto::PermitWitnessTransferFrom {
                    permitted: upto::TokenPermissions { token, amount },
                    spender,
                    nonce,
                    deadline,
                    witness: upto::Witness {
                        to: address_in(w.member("to"))?,
                        facilitator: address_in(w.member("facilitator"))?,
                        validAfter: decimal_in(w.member("validAfter"))?,
                    },
                },
                &domain,
            ))
        }
        _ => None,
    }
}

/// The parts of a witness transfer with the `evm` method's `PaymentWitness`, single or batch.
fn payment_parts(
    typed: &TypedData,
    domain: &Eip712Domain,
    spender: Address,
    nonce: U256,
    deadline: U256,
) -> Option<Eip712Parts> {
    use payment::{PaymentWitness, PermitBatchWitnessTransferFrom, PermitWitnessTransferFrom, TokenPermissions};
    let names: Vec<&str> = typed.types.get(super::charge::PAYMENT_WITNESS)?.iter().map(|f| f.name.as_ref()).collect();
    if names != ["challengeHash", "externalId"] {
        return None;
    }
    let m = &typed.message;
    let w = m.member("witness")?;
    let witness = PaymentWitness {
        challengeHash: w.member("challengeHash")?.as_str()?.parse().ok()?,
        externalId: w.member("externalId")?.as_str()?.to_owned(),
    };
    let entry = |p: &Value| -> Option<TokenPermissions> {
        Some(TokenPermissions { token: address_in(p.member("token"))?, amount: decimal_in(p.member("amount"))? })
    };
    match typed.primary_type.as_str() {
        "PermitWitnessTransferFrom" => Some(Eip712Parts::of(
            &PermitWitnessTransferFrom { permitted: entry(m.member("permitted")?)?, spender, nonce, deadline, witness },
            domain,
        )),
        "PermitBatchWitnessTransferFrom" => {
            let permitted = m.member("permitted")?.as_array()?.iter().map(entry).collect::<Option<Vec<_>>>()?;
            Some(Eip712Parts::of(
                &PermitBatchWitnessTransferFrom { permitted, spender, nonce, deadline, witness },
                domain,
            ))
        }
        _ => None,
    }
}
