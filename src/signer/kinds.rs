//! The table of signing-request kinds. Each kind is one row, written once: the row gives the variant, its wire name
//! (the `kind` member of the JSON form) and, for a typed kind, its members; a row with no members carries its members
//! as a JSON object ([`Fields`]). The enum [`SigningRequest`], its serde names, [`SigningRequest::kind`],
//! [`SigningRequest::fields`] and the list of wire names are all generated from the table.

use serde::{Deserialize, Serialize};

use super::{Fields, TypedData};
use crate::rail::evm::request::{Call, GatewayPreimage};

/// Expands the table below. Rows are munched one at a time into the pieces each generated item needs, so that the
/// enum keeps the table's order and a row is the only place a kind is written.
macro_rules! signing_kinds {
    // Every row consumed: write the enum, `kind()`, `fields()` and the lists.
    (@rows []
        head [$(#[$attr:meta])* $name:ident]
        variants [$($variant:tt)*]
        kinds [$($kind_arm:tt)*]
        fields [$($fields_arm:tt)*]
        wires [$($wire:tt)*]
        fields_wires [$($fields_wire:tt)*]
        examples [$($example_arm:tt)*]
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "kind")]
        #[non_exhaustive]
        pub enum $name {
            $($variant)*
        }

        impl $name {
            /// The request's kind as the reference writes it, e.g. `eip712`.
            pub fn kind(&self) -> &'static str {
                match self {
                    $($kind_arm)*
                }
            }

            /// The members beside `kind`, for the kinds that carry them as a JSON object.
            pub fn fields(&self) -> Option<&Fields> {
                match self {
                    $($fields_arm)*
                }
            }

            /// A request of this kind with example members, for the round-trip tests; `None` for an unknown kind.
            #[cfg(test)]
            pub(crate) fn example(kind: &str) -> Option<Self> {
                use self::example::Example;
                match kind {
                    $($example_arm)*
                    _ => None,
                }
            }
        }

        /// Every kind's wire name, in the table's order.
        #[cfg(test)]
        pub(crate) const KINDS: &[&str] = &[$($wire),*];

        /// The wire names of the kinds that carry their members as a JSON object ([`Fields`]), in the table's order.
        #[cfg(test)]
        pub(crate) const FIELDS_KINDS: &[&str] = &[$($fields_wire),*];
    };

    // A typed row: `Variant = "wire" { members },`.
    (@rows [
            $(#[$vattr:meta])* $variant_name:ident = $wire_name:literal {
                $($(#[$mattr:meta])* $member:ident : $ty:ty),* $(,)?
            },
            $($rest:tt)*
        ]
        head [$($head:tt)*]
        variants [$($variant:tt)*]
        kinds [$($kind_arm:tt)*]
        fields [$($fields_arm:tt)*]
        wires [$($wire:tt)*]
        fields_wires [$($fields_wire:tt)*]
        examples [$($example_arm:tt)*]
    ) => {
        signing_kinds! { @rows [$($rest)*]
            head [$($head)*]
            variants [$($variant)*
                $(#[$vattr])*
                #[doc = ""]
                #[doc = concat!("Wire kind `", $wire_name, "`.")]
                #[serde(rename = $wire_name)]
                $variant_name { $($(#[$mattr])* $member: $ty,)* },
            ]
            kinds [$($kind_arm)* Self::$variant_name { .. } => $wire_name,]
            fields [$($fields_arm)* Self::$variant_name { .. } => None,]
            wires [$($wire)* $wire_name]
            fields_wires [$($fields_wire)*]
            examples [$($example_arm)*
                $wire_name => Some(Self::$variant_name { $($member: Example::example(),)* }),
            ]
        }
    };

    // A row whose members are a JSON object: `Variant = "wire",`.
    (@rows [
            $(#[$vattr:meta])* $variant_name:ident = $wire_name:literal,
            $($rest:tt)*
        ]
        head [$($head:tt)*]
        variants [$($variant:tt)*]
        kinds [$($kind_arm:tt)*]
        fields [$($fields_arm:tt)*]
        wires [$($wire:tt)*]
        fields_wires [$($fields_wire:tt)*]
        examples [$($example_arm:tt)*]
    ) => {
        signing_kinds! { @rows [$($rest)*]
            head [$($head)*]
            variants [$($variant)*
                $(#[$vattr])*
                #[doc = ""]
                #[doc = concat!("Wire kind `", $wire_name, "`, its members beside `kind` as a JSON object.")]
                #[serde(rename = $wire_name)]
                $variant_name(Fields),
            ]
            kinds [$($kind_arm)* Self::$variant_name(_) => $wire_name,]
            fields [$($fields_arm)* Self::$variant_name(f) => Some(f),]
            wires [$($wire)* $wire_name]
            fields_wires [$($fields_wire)* $wire_name]
            examples [$($example_arm)* $wire_name => Some(Self::$variant_name(Example::example())),]
        }
    };

    // The entry: the enum's attributes and name, then the rows.
    ($(#[$attr:meta])* pub enum $name:ident { $($rows:tt)* }) => {
        signing_kinds! { @rows [$($rows)*]
            head [$(#[$attr])* $name]
            variants []
            kinds []
            fields []
            wires []
            fields_wires []
            examples []
        }
    };
}

signing_kinds! {
    /// What the signer is handed: one variant per request kind. It serialises to the reference's JSON form,
    /// `{"kind": "...", ...}`, with byte strings as `0x` lower-case hex.
    ///
    /// The kinds whose pairings are built carry typed payloads; the others carry their members as a JSON object until
    /// their family lands.
    pub enum SigningRequest {
        /// EIP-712 typed data (EIP-3009, Permit2, vouchers): answer a 65-byte signature as `0x` hex.
        Eip712 = "eip712" {
            /// The typed data to sign.
            #[serde(rename = "typedData")]
            typed_data: TypedData,
        },
        /// An ERC-7710 delegation for the option: answer `{delegationManager, permissionContext, delegator}`.
        Erc7710 = "erc7710",
        /// Several requests signed in order: answer a list of the answers, same length and order.
        Batch = "batch" {
            /// The requests, in order.
            requests: Vec<Self>,
        },
        /// A contract call on an EVM chain (MPP's EVM `transaction` and `hash` charges): sign it as one EIP-1559
        /// transaction with the account's nonce and fees and answer the signed transaction, `0x` hex of its EIP-2718
        /// bytes; with `broadcast`, send it and answer its transaction hash, `0x` and 64 hex digits.
        EvmCall = "evm-call" {
            /// The chain.
            #[serde(rename = "chainId")]
            chain_id: u64,
            /// The call, with no value.
            call: Call,
            /// Whether the signer broadcasts the transaction and answers its hash (money moves before the gate
            /// sees the answer).
            broadcast: bool,
        },
        EvmCalls = "evm-calls",
        /// A Circle Gateway burn intent for a charge (`mpp/charge/usdc/gateway`): compute the TransferSpec's salt
        /// over the preimage and the client's own values, sign the burn intent, and answer `{source, sourceNetwork,
        /// destinationNetwork, maxFee, burnIntent, signature}`.
        GatewayBurnIntent = "gateway-burn-intent" {
            /// The charge's values of the salt's preimage.
            preimage: GatewayPreimage,
        },
        TempoCall = "tempo-call",
        TempoCalls = "tempo-calls",
        TempoKeyAuthorization = "tempo-key-authorization",
        SolanaMessage = "solana-message",
        /// The values the wallet's channel client composes a Solana session's `open` from (`mpp/session/solana`):
        /// `{salt, channelProgram, network, recentBlockhash, recentSlot}`, the salt H's first 8 bytes as a
        /// little-endian u64. The client composes and signs the open transaction and answers the open payload, an
        /// object `{action: "open", channelId, transaction, ...}`; the crate's local signer does not answer it.
        SolanaSessionOpen = "solana-session-open",
        Ed25519Raw = "ed25519-raw",
        StellarAuth = "stellar-auth",
        /// An XRPL transaction to sign (`x402/exact/xrpl`, `mpp/charge/xrpl`): `{txJson}`, in xrpl.js's field names;
        /// answered with the signed blob, hex without `0x`.
        XrplTx = "xrpl-tx",
        /// An XRPL session's opening (`mpp/session/xrpl`): `{txJson, claim: {channelId, drops, bytes}}`, the
        /// PaymentChannelCreate and the first claim (its bytes `CLM\0`, the channel id and the drops, in `0x`
        /// hex); answered `{signedBlob, claimSignature}`, hex without `0x`.
        XrplSessionOpen = "xrpl-session-open",
        /// A claim in an XRPL session: `{channelId, drops, bytes}` (the bytes in `0x` hex); answered with the
        /// signature, hex without `0x`.
        XrplClaim = "xrpl-claim",
        HederaBody = "hedera-body",
        HederaExecutor = "hedera-executor",
        HederaSessionOpen = "hedera-session-open",
        AlgorandTxn = "algorand-txn",
        AptosTransaction = "aptos-transaction",
        SuiTransaction = "sui-transaction",
        CardanoTransaction = "cardano-transaction",
        NearDelegate = "near-delegate",
        StarknetSnip12 = "starknet-snip12",
        SubstrateCall = "substrate-call",
        TronTxid = "tron-txid",
        TonW5 = "ton-w5",
        CasperEip712 = "casper-eip712",
        CcdTransfer = "ccd-transfer",
        StacksContractCall = "stacks-contract-call",
        /// A BOLT11 invoice for the signer's Lightning node to pay exactly (the x402 and MPP Lightning pairings): pay
        /// it and answer its preimage, 64 lower-case hex digits. The money moves before the gate sees the answer.
        Bolt11Pay = "bolt11-pay" {
            /// The invoice, as the seller's node wrote it.
            invoice: String,
        },
        TapField = "tap-field",
        ViCheckoutMandate = "vi-checkout-mandate",
        Ap2CheckoutMandate = "ap2-checkout-mandate",
        UcpCheckout = "ucp-checkout",
        AcpAllowance = "acp-allowance",
    }
}

/// Example payloads for [`SigningRequest::example`]: every payload type a row carries implements [`Example`], so a new
/// row is covered by the round-trip tests as soon as it compiles.
#[cfg(test)]
mod example {
    use indexmap::IndexMap;
    use serde_json::{Value, json};

    use super::{Call, Fields, GatewayPreimage, SigningRequest, TypedData};
    use crate::signer::TypedField;

    /// A value with example contents.
    pub(crate) trait Example {
        /// The example.
        fn example() -> Self;
    }

    impl Example for Fields {
        fn example() -> Self {
            let fields = json!({
                "broadcast": true,
                "to": "0x00000000000000000000000000000000000000aa",
                "value": "340282366920938463463374607431768211455",
                "data": "0x",
                "nested": {"list": [1, "two", null, false], "n": 1.5},
            });
            fields.as_object().cloned().unwrap_or_default()
        }
    }

    impl Example for TypedData {
        fn example() -> Self {
            let object = |value: Value| value.as_object().cloned().unwrap_or_default();
            let mut types = IndexMap::new();
            types.insert(
                "EIP712Domain".to_owned(),
                vec![TypedField::new("name", "string"), TypedField::new("chainId", "uint256")],
            );
            types.insert("Mail".to_owned(), vec![TypedField::new("contents", "string")]);
            Self {
                domain: object(json!({"name": "Example", "chainId": 84532})),
                types,
                primary_type: "Mail".to_owned(),
                message: object(json!({"contents": "hello"})),
            }
        }
    }

    impl Example for u64 {
        fn example() -> Self {
            84532
        }
    }

    impl Example for String {
        fn example() -> Self {
            "lnbc250n1p4tzwuqpp5".to_owned()
        }
    }

    impl Example for bool {
        fn example() -> Self {
            true
        }
    }

    impl Example for Call {
        fn example() -> Self {
            Self {
                to: "0x036CbD53842c5426634e7929541eC2318f3dCF7e".into(),
                data: "0xa9059cbb000000000000000000000000209693bc6afc0c5328ba36faf03c514ef312287c\
                       0000000000000000000000000000000000000000000000000000000000002710"
                    .into(),
            }
        }
    }

    impl Example for GatewayPreimage {
        fn example() -> Self {
            Self {
                id: "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0.0".into(),
                realm: "api.seller.example".into(),
                request_hash: "0x387b120b1febad23a00d22ab0c0e405db1b4c44e3fd8862ec6d562510b772e73".into(),
                recipient: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C".into(),
            }
        }
    }

    impl Example for Vec<SigningRequest> {
        fn example() -> Self {
            vec![
                SigningRequest::Eip712 { typed_data: TypedData::example() },
                SigningRequest::Erc7710(Fields::example()),
                SigningRequest::Batch { requests: vec![SigningRequest::EvmCalls(Fields::example())] },
            ]
        }
    }
}
