//! Uniswap's Permit2 signature transfers: the canonical contract, the x402 exact and upto proxies that spend them,
//! the typed data a payer signs (`PermitTransferFrom`, or `PermitWitnessTransferFrom` with x402's witness), and its
//! EIP-712 digest computed from `sol!` static structs.

use alloy_primitives::U256;
use alloy_sol_types::Eip712Domain;
use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::codec::{Eip712Parts, address_in, decimal_in, object};
use super::typed_data::{TypedData, TypedField};
use crate::json::Member;

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
    let field = TypedField::new;
    let mut types = IndexMap::new();
    types.insert(
        "EIP712Domain".to_owned(),
        vec![field("name", "string"), field("chainId", "uint256"), field("verifyingContract", "address")],
    );
    types.insert("TokenPermissions".to_owned(), vec![field("token", "address"), field("amount", "uint256")]);
    let mut fields = vec![
        field("permitted", "TokenPermissions"),
        field("spender", "address"),
        field("nonce", "uint256"),
        field("deadline", "uint256"),
    ];
    let mut message = object(json!({
        "permitted": {"token": transfer.token, "amount": transfer.amount.to_string()},
        "spender": transfer.spender,
        "nonce": transfer.nonce.to_string(),
        "deadline": transfer.deadline.to_string(),
    }));
    let primary_type = match witness {
        None => "PermitTransferFrom",
        Some(w) => {
            fields.push(field("witness", "Witness"));
            message.insert("witness".into(), Value::Object(w.value.clone()));
            "PermitWitnessTransferFrom"
        }
    };
    types.insert(primary_type.to_owned(), fields);
    if let Some(w) = witness {
        types.insert("Witness".to_owned(), w.fields.clone());
    }
    TypedData {
        domain: object(json!({"name": "Permit2", "chainId": transfer.chain_id, "verifyingContract": PERMIT2})),
        types,
        primary_type: primary_type.to_owned(),
        message,
    }
}

/// The EIP-712 parts of Permit2 typed data built by [`typed_data`] (no witness, or the x402 exact or upto
/// witness), computed from the `sol!` static structs rather than from the JSON types; `None` for any other shape.
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
    let permitted = m.member("permitted")?;
    let (token, amount) = (address_in(permitted.member("token"))?, decimal_in(permitted.member("amount"))?);
    let (spender, nonce, deadline) =
        (address_in(m.member("spender"))?, decimal_in(m.member("nonce"))?, decimal_in(m.member("deadline"))?);
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
