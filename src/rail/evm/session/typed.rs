//! What the payer signs for a session: the opening's token authorization (EIP-3009 `ReceiveWithAuthorization` to the
//! escrow, or a Permit2 witness transfer whose witness carries the salt) and the vouchers under the escrow's domain,
//! each as the typed data a wallet takes and, computed from `sol!` static structs, its EIP-712 parts.

use alloy_primitives::{B256, U256};
use alloy_sol_types::Eip712Domain;
use serde_json::{Map, Value, json};

use super::abi::{ChannelOpenWitness, PermitWitnessTransferFrom, ReceiveWithAuthorization, TokenPermissions, Voucher};
use super::channel::{EvmAddress, SessionChannel};
use crate::rail::evm::eip3009::{Eip3009Token, eip3009_message, eip3009_typed_data};
use crate::rail::evm::typed_data::TypedData;
use crate::rail::evm::{EIP712_DOMAIN, Eip712Parts, object, types};

/// The escrow's EIP-712 domain name: the domain of every voucher.
pub const ESCROW_DOMAIN_NAME: &str = "EVM Payment Channel";
/// The escrow's EIP-712 domain version.
pub const ESCROW_DOMAIN_VERSION: &str = "1";
/// The Permit2 opening's witness type.
pub const OPEN_WITNESS_TYPE: &str = "ChannelOpenWitness";

/// The token's EIP-712 domain name and version (the buyer's `tokenDomain` input): what an EIP-3009 opening is signed
/// under, beside the chain and the token's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenDomain<'a> {
    /// The domain's `name`, e.g. `USDC`.
    pub name: &'a str,
    /// The domain's `version`, e.g. `2`.
    pub version: &'a str,
}

fn escrow_domain(chain_id: u64, escrow: &EvmAddress<'_>) -> Eip712Domain {
    Eip712Domain::new(
        Some(ESCROW_DOMAIN_NAME.into()),
        Some(ESCROW_DOMAIN_VERSION.into()),
        Some(U256::from(chain_id)),
        Some(escrow.bytes()),
        None,
    )
}

/// A voucher, `Voucher(bytes32 channelId, uint128 cumulativeAmount)` under the escrow's domain ("EVM Payment Channel",
/// version 1, the chain, the escrow): what the payer (or the channel's authorized signer) signs for the opening's
/// first voucher (`cumulative` 0) and every later payment. The amount is a decimal string; the types list
/// `EIP712Domain` first, as every typed data the crate builds.
pub fn voucher_typed_data(chain_id: u64, escrow: &EvmAddress<'_>, channel_id: &B256, cumulative: u128) -> TypedData {
    escrow_voucher_typed_data(VoucherDomain::EVM, chain_id, escrow, channel_id, cumulative)
}

/// An escrow's voucher domain: its EIP-712 name (version 1) and the width of the amount its `Voucher` signs. The EVM
/// session's escrow and Tempo's two session escrows sign the same `Voucher(bytes32 channelId, uint<width>
/// cumulativeAmount)` under their own names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VoucherDomain {
    /// The domain's `name`.
    pub name: &'static str,
    /// The Solidity type of `cumulativeAmount`, e.g. `uint128`.
    pub amount_type: &'static str,
}

impl VoucherDomain {
    /// The EVM session escrow's: "EVM Payment Channel", `uint128`.
    pub const EVM: Self = Self { name: ESCROW_DOMAIN_NAME, amount_type: "uint128" };
}

/// A voucher under `domain` (version 1, the chain, the escrow as verifying contract): the typed data of
/// [`voucher_typed_data`] for any escrow that signs the same `Voucher` struct.
pub fn escrow_voucher_typed_data(
    domain: VoucherDomain,
    chain_id: u64,
    escrow: &EvmAddress<'_>,
    channel_id: &B256,
    cumulative: u128,
) -> TypedData {
    TypedData {
        domain: object(json!({
            "name": domain.name,
            "version": ESCROW_DOMAIN_VERSION,
            "chainId": chain_id,
            "verifyingContract": escrow.text(),
        })),
        types: types(&[
            ("EIP712Domain", EIP712_DOMAIN),
            ("Voucher", &[("channelId", "bytes32"), ("cumulativeAmount", domain.amount_type)]),
        ]),
        primary_type: "Voucher".into(),
        message: object(json!({"channelId": channel_id.to_string(), "cumulativeAmount": cumulative.to_string()})),
    }
}

/// The EIP-712 parts of [`voucher_typed_data`], from the `sol!` struct.
pub fn voucher_parts(chain_id: u64, escrow: &EvmAddress<'_>, channel_id: &B256, cumulative: u128) -> Eip712Parts {
    let voucher = Voucher { channelId: *channel_id, cumulativeAmount: cumulative };
    Eip712Parts::of(&voucher, &escrow_domain(chain_id, escrow))
}

impl SessionChannel<'_> {
    /// The opening's EIP-3009 authorization as the credential carries it: from the payer to the escrow, the deposit,
    /// valid from 0 until `valid_before` (the challenge's expiry), with [`SessionChannel::authorization_nonce`].
    pub fn receive_authorization(&self, deposit: u128, valid_before: u64) -> Map<String, Value> {
        eip3009_message(
            self.payer.text(),
            self.escrow.text(),
            deposit.to_string(),
            valid_before.to_string(),
            self.authorization_nonce().to_string(),
        )
    }

    /// The typed data of [`SessionChannel::receive_authorization`]: `ReceiveWithAuthorization` under the token's
    /// domain (its name and version, the chain, the token), so only the escrow can execute it.
    pub fn receive_typed_data(&self, token: TokenDomain<'_>, deposit: u128, valid_before: u64) -> TypedData {
        let domain = Eip3009Token {
            name: token.name,
            version: token.version,
            chain_id: self.chain_id,
            address: self.token.text(),
        };
        eip3009_typed_data("ReceiveWithAuthorization", domain, self.receive_authorization(deposit, valid_before))
    }

    /// The EIP-712 parts of [`SessionChannel::receive_typed_data`], from the `sol!` struct.
    pub fn receive_parts(&self, token: TokenDomain<'_>, deposit: u128, valid_before: u64) -> Eip712Parts {
        let domain = Eip712Domain::new(
            Some(token.name.to_owned().into()),
            Some(token.version.to_owned().into()),
            Some(U256::from(self.chain_id)),
            Some(self.token.bytes()),
            None,
        );
        let message = ReceiveWithAuthorization {
            from: self.payer.bytes(),
            to: self.escrow.bytes(),
            value: U256::from(deposit),
            validAfter: U256::ZERO,
            validBefore: U256::from(valid_before),
            nonce: self.authorization_nonce(),
        };
        Eip712Parts::of(&message, &domain)
    }

    /// The Permit2 opening's nonce: the salt read as a uint256 (Permit2's unordered nonce is then H itself).
    pub fn permit2_nonce(&self) -> U256 {
        U256::from_be_bytes(*self.salt.as_bytes())
    }

    fn witness(&self) -> Value {
        json!({
            "payee": self.payee.text(),
            "salt": self.salt.to_hex(),
            "authorizedSigner": self.authorized_signer.text(),
        })
    }

    /// The opening's Permit2 transfer as the credential carries it: `{from, permitted: {token, amount}, nonce,
    /// deadline, witness: {payee, salt, authorizedSigner}}`, the numbers as decimal strings.
    pub fn permit2_authorization(&self, deposit: u128, deadline: u64) -> Map<String, Value> {
        object(json!({
            "from": self.payer.text(),
            "permitted": {"token": self.token.text(), "amount": deposit.to_string()},
            "nonce": self.permit2_nonce().to_string(),
            "deadline": deadline.to_string(),
            "witness": self.witness(),
        }))
    }

    /// The typed data of the Permit2 opening: `PermitWitnessTransferFrom` of the deposit of the token to the escrow
    /// as spender, nonce [`SessionChannel::permit2_nonce`], until `deadline`, with the witness
    /// `ChannelOpenWitness(address payee, bytes32 salt, address authorizedSigner)`, under Permit2's domain at
    /// `permit2` (`methodDetails.permit2Contract`, else the canonical deployment). The types are listed as the
    /// reference lists them: `EIP712Domain`, `TokenPermissions`, the primary type, the witness.
    pub fn permit2_typed_data(&self, deposit: u128, deadline: u64, permit2: &EvmAddress<'_>) -> TypedData {
        let permitted: &[(&str, &str)] = &[
            ("permitted", "TokenPermissions"),
            ("spender", "address"),
            ("nonce", "uint256"),
            ("deadline", "uint256"),
            ("witness", OPEN_WITNESS_TYPE),
        ];
        TypedData {
            domain: object(json!({"name": "Permit2", "chainId": self.chain_id, "verifyingContract": permit2.text()})),
            types: types(&[
                ("EIP712Domain", &[("name", "string"), ("chainId", "uint256"), ("verifyingContract", "address")]),
                ("TokenPermissions", &[("token", "address"), ("amount", "uint256")]),
                ("PermitWitnessTransferFrom", permitted),
                (OPEN_WITNESS_TYPE, &[("payee", "address"), ("salt", "bytes32"), ("authorizedSigner", "address")]),
            ]),
            primary_type: "PermitWitnessTransferFrom".into(),
            message: object(json!({
                "permitted": {"token": self.token.text(), "amount": deposit.to_string()},
                "spender": self.escrow.text(),
                "nonce": self.permit2_nonce().to_string(),
                "deadline": deadline.to_string(),
                "witness": self.witness(),
            })),
        }
    }

    /// The EIP-712 parts of [`SessionChannel::permit2_typed_data`], from the `sol!` structs.
    pub fn permit2_parts(&self, deposit: u128, deadline: u64, permit2: &EvmAddress<'_>) -> Eip712Parts {
        let domain = Eip712Domain::new(
            Some("Permit2".into()),
            None,
            Some(U256::from(self.chain_id)),
            Some(permit2.bytes()),
            None,
        );
        let message = PermitWitnessTransferFrom {
            permitted: TokenPermissions { token: self.token.bytes(), amount: U256::from(deposit) },
            spender: self.escrow.bytes(),
            nonce: self.permit2_nonce(),
            deadline: U256::from(deadline),
            witness: ChannelOpenWitness {
                payee: self.payee.bytes(),
                salt: B256::from(*self.salt.as_bytes()),
                authorizedSigner: self.authorized_signer.bytes(),
            },
        };
        Eip712Parts::of(&message, &domain)
    }
}
