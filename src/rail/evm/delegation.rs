//! MetaMask's reference DelegationManager (Delegation Framework v1.3.0), the ERC-7710 manager x402's `erc7710`
//! payments name: where it is deployed, its `Delegation` and `Caveat` structs, the EIP-712 hash a delegator signs,
//! and the permission context (`abi.encode(Delegation[])`, leaf first) a payment carries, decoded strictly and
//! within bounds.

use alloy_primitives::{Address, B256, Bytes, U256};
use alloy_sol_types::{Eip712Domain, SolStruct, SolValue};
use serde_json::Value;

use super::codec::chain_id_of;
use crate::codec::{hex_bytes, to_hex};

/// The DelegationManager v1.3.0, at one CREATE2 address on every chain it is deployed on.
pub const DELEGATION_MANAGER: &str = "0xdb9B1e94B5b69Df7e401DDbedE43491141047dB3";

/// The chain ids whose deployment record holds the DelegationManager at [`DELEGATION_MANAGER`].
pub(crate) const DELEGATION_MANAGER_CHAINS: [u64; 51] = [
    1, 10, 56, 97, 100, 130, 137, 143, 146, 1155, 1301, 1328, 1329, 2020, 2021, 4114, 4217, 4663, 5000, 5003, 5042,
    5115, 6342, 6343, 8453, 10143, 10200, 13579, 14601, 42161, 42170, 42220, 42431, 46630, 50312, 57073, 59141, 59144,
    80002, 80069, 80094, 84532, 421614, 560048, 737373, 747474, 763373, 5042002, 11142220, 11155111, 11155420,
];

/// The authority of a root delegation: `bytes32(type(uint256).max)`.
pub const ROOT_AUTHORITY: B256 = B256::repeat_byte(0xff);
/// The largest permission context read, in bytes.
pub(crate) const MAX_CONTEXT_BYTES: usize = 32_768;
/// The most delegations a permission context may chain.
pub(crate) const MAX_DELEGATIONS: usize = 8;
/// The most caveats one delegation may carry.
pub(crate) const MAX_CAVEATS: usize = 16;
/// The longest `bytes` value (a signature, a caveat's terms or args) read, in bytes.
pub(crate) const MAX_ABI_BYTES: usize = 8192;

/// The structs as the DelegationManager's `redeemDelegations` takes them (ABI).
pub mod abi {
    alloy_sol_types::sol! {
        /// A condition an enforcer checks when the delegation is redeemed.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct Caveat {
            address enforcer;
            bytes terms;
            bytes args;
        }

        /// A delegation, signed by its delegator.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct Delegation {
            address delegate;
            address delegator;
            bytes32 authority;
            Caveat[] caveats;
            uint256 salt;
            bytes signature;
        }
    }
}

/// The structs as the delegator signs them (EIP-712): a caveat's `args` and the signature are not signed.
pub mod eip712 {
    alloy_sol_types::sol! {
        /// A caveat as signed.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct Caveat {
            address enforcer;
            bytes terms;
        }

        /// A delegation as signed.
        #[allow(missing_docs)]
        #[derive(Debug, PartialEq, Eq)]
        struct Delegation {
            address delegate;
            address delegator;
            bytes32 authority;
            Caveat[] caveats;
            uint256 salt;
        }
    }
}

/// Whether `manager` is the reference DelegationManager on a chain where it is deployed.
pub(crate) fn is_reference_manager(manager: &Value, network: &Value) -> bool {
    manager.as_str().is_some_and(|m| m.eq_ignore_ascii_case(DELEGATION_MANAGER))
        && chain_id_of(network).is_some_and(|c| DELEGATION_MANAGER_CHAINS.contains(&c))
}

/// The DelegationManager's EIP-712 domain on a chain.
pub fn domain(chain_id: u64, manager: Address) -> Eip712Domain {
    Eip712Domain::new(
        Some("DelegationManager".into()),
        Some("1".into()),
        Some(U256::from(chain_id)),
        Some(manager),
        None,
    )
}

/// A delegation as its delegator signs it.
pub fn signed_form(delegation: &abi::Delegation) -> eip712::Delegation {
    eip712::Delegation {
        delegate: delegation.delegate,
        delegator: delegation.delegator,
        authority: delegation.authority,
        caveats: delegation
            .caveats
            .iter()
            .map(|c| eip712::Caveat { enforcer: c.enforcer, terms: c.terms.clone() })
            .collect(),
        salt: delegation.salt,
    }
}

/// The delegation's hash (its EIP-712 struct hash): the `authority` of a delegation that redelegates it.
pub fn delegation_hash(delegation: &abi::Delegation) -> B256 {
    signed_form(delegation).eip712_hash_struct()
}

/// The digest the delegator signs for the DelegationManager at `manager` on `chain_id`.
pub fn signing_hash(delegation: &abi::Delegation, chain_id: u64, manager: Address) -> B256 {
    signed_form(delegation).eip712_signing_hash(&domain(chain_id, manager))
}

/// The permission context of a chain of delegations, leaf first: `abi.encode(Delegation[])` as `0x` hex.
pub fn encode_permission_context(delegations: &[abi::Delegation]) -> String {
    to_hex(&delegations.to_vec().abi_encode())
}

/// Why a permission context does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the permission context is not abi.encode(Delegation[]) within the bounds")]
pub struct ContextMalformed;

/// Decodes a permission context, `abi.encode(Delegation[])` of at most 32 KiB, strictly: `0x` and an even number
/// of hex digits, a non-empty multiple of 32 bytes, every offset and length word inside it at a 32-byte-aligned
/// position, every offset a multiple of 32, address words with 12 zero bytes, at most 8 delegations of at most 16
/// caveats each, and at most 8 KiB per `bytes`; the padding after a `bytes` value is not read. The delegations come
/// back in the input's order, leaf first; an empty array decodes to none.
pub fn decode_permission_context(context: &str) -> Result<Vec<abi::Delegation>, ContextMalformed> {
    if context.len() > 2 + 2 * MAX_CONTEXT_BYTES {
        return Err(ContextMalformed);
    }
    let data = hex_bytes(context).ok_or(ContextMalformed)?;
    if data.is_empty() || !data.len().is_multiple_of(32) {
        return Err(ContextMalformed);
    }
    Walk { b: &data }.delegations().ok_or(ContextMalformed)?;
    // The walk holds the words to the bounds above, which alloy's decoder does not apply; alloy reads the values.
    let delegations = Vec::<abi::Delegation>::abi_decode(&data).map_err(|_| ContextMalformed)?;
    Ok(delegations)
}

/// The structural walk of a permission context: every word it reads exists, is aligned and within bounds.
struct Walk<'a> {
    b: &'a [u8],
}

impl Walk<'_> {
    fn word(&self, pos: usize) -> Option<&[u8]> {
        if !pos.is_multiple_of(32) {
            return None;
        }
        self.b.get(pos..pos.checked_add(32)?)
    }

    /// A word holding a number below the input's length.
    fn num(&self, pos: usize) -> Option<usize> {
        let word: [u8; 32] = self.word(pos)?.try_into().ok()?;
        let value = U256::from_be_bytes(word);
        (value < U256::from(self.b.len())).then(|| value.saturating_to::<usize>())
    }

    /// `base` plus the offset word at `pos`: a multiple of 32, landing inside the input.
    fn offset(&self, base: usize, pos: usize) -> Option<usize> {
        let o = self.num(pos)?;
        if !o.is_multiple_of(32) {
            return None;
        }
        let at = base.checked_add(o)?;
        (at < self.b.len()).then_some(at)
    }

    /// An address word: 12 zero bytes, then the address.
    fn address(&self, pos: usize) -> Option<()> {
        self.word(pos)?.iter().take(12).all(|b| *b == 0).then_some(())
    }

    /// A `bytes` value at `at`: its length word, at most 8 KiB, and that many bytes inside the input.
    fn bytes_at(&self, at: Option<usize>) -> Option<()> {
        let at = at?;
        let length = self.num(at)?;
        if length > MAX_ABI_BYTES {
            return None;
        }
        (at.checked_add(32)?.checked_add(length)? <= self.b.len()).then_some(())
    }

    fn delegations(&self) -> Option<()> {
        let array = self.offset(0, 0)?;
        let count = self.num(array)?;
        if count > MAX_DELEGATIONS {
            return None;
        }
        let heads = array.checked_add(32)?;
        for i in 0..count {
            let t = self.offset(heads, heads + 32 * i)?;
            self.address(t)?;
            self.address(t + 32)?;
            self.word(t + 64)?;
            let caveats_at = self.offset(t, t + 96)?;
            self.word(t + 128)?;
            self.bytes_at(self.offset(t, t + 160))?;
            let n = self.num(caveats_at)?;
            if n > MAX_CAVEATS {
                return None;
            }
            let caveat_heads = caveats_at + 32;
            for j in 0..n {
                let c = self.offset(caveat_heads, caveat_heads + 32 * j)?;
                self.address(c)?;
                self.bytes_at(self.offset(c, c + 32))?;
                self.bytes_at(self.offset(c, c + 64))?;
            }
        }
        Some(())
    }
}

/// A root delegation from `delegator` to `delegate` with these caveats and salt, unsigned.
pub fn root_delegation(
    delegate: Address,
    delegator: Address,
    caveats: Vec<abi::Caveat>,
    salt: U256,
) -> abi::Delegation {
    abi::Delegation { delegate, delegator, authority: ROOT_AUTHORITY, caveats, salt, signature: Bytes::new() }
}
