//! The account keychain's key authorization (Tempo's access keys): `rlp([chain_id, key_type, key_id, expiry, limits,
//! allowed_calls, witness])`, each limit `rlp([token, limit, period])`, each allowed call `rlp([target,
//! [rlp([selector, [recipient, …]]), …]])`; signed, `rlp([that list, signature])`. MPP's Tempo subscription writes H
//! as the witness. Written through alloy-rlp, with the reference's caps: 16 limits, 16 scopes, 16 selector rules a
//! scope and 16 recipients a rule, 8192 bytes.

use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_rlp::{Encodable, Header};

/// The most bytes of a key authorization, signed or not.
pub const MAX_KEY_AUTHORIZATION_BYTES: usize = 8192;
/// The most limits, scopes, selector rules of a scope and recipients of a rule.
pub const MAX_SCOPES: usize = 16;

/// A spending limit of the key: at most `limit` of `token` each `period` seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// The TIP-20 token.
    pub token: Address,
    /// The most it may spend in a period.
    pub limit: U256,
    /// The period, in seconds.
    pub period: u64,
}

/// A selector the key may call on a scope's target, and the recipients it may name (none: any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectorRule {
    /// The 4-byte selector.
    pub selector: [u8; 4],
    /// The recipients allowed.
    pub recipients: Vec<Address>,
}

/// A contract the key may call, and the selectors it may call on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The contract.
    pub target: Address,
    /// Its selector rules.
    pub selector_rules: Vec<SelectorRule>,
}

/// A key authorization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAuthorization {
    /// The chain id.
    pub chain_id: u64,
    /// The key's type: 0 secp256k1, 1 P256, 2 WebAuthn.
    pub key_type: u8,
    /// The key's address.
    pub key_id: Address,
    /// When it expires, Unix seconds.
    pub expiry: u64,
    /// Its spending limits.
    pub limits: Vec<Limit>,
    /// The calls it may make.
    pub allowed_calls: Vec<Scope>,
    /// The witness (H, for MPP's Tempo subscription).
    pub witness: B256,
}

/// Why a key authorization is not written (`tempo/key-authorization-malformed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyAuthorizationMalformed;

impl KeyAuthorization {
    /// The unsigned authorization's RLP: refused past a cap, for a key type other than 0, 1 or 2.
    pub fn encode(&self) -> Result<Vec<u8>, KeyAuthorizationMalformed> {
        let over = |n: usize| n > MAX_SCOPES;
        if self.key_type > 2 || over(self.limits.len()) || over(self.allowed_calls.len()) {
            return Err(KeyAuthorizationMalformed);
        }
        let mut limits = Vec::new();
        for l in &self.limits {
            let mut item = Vec::new();
            l.token.encode(&mut item);
            l.limit.encode(&mut item);
            l.period.encode(&mut item);
            list(&item, &mut limits);
        }
        let mut scopes = Vec::new();
        for s in &self.allowed_calls {
            if over(s.selector_rules.len()) {
                return Err(KeyAuthorizationMalformed);
            }
            let mut rules = Vec::new();
            for r in &s.selector_rules {
                if over(r.recipients.len()) {
                    return Err(KeyAuthorizationMalformed);
                }
                let mut recipients = Vec::new();
                for a in &r.recipients {
                    a.encode(&mut recipients);
                }
                let mut rule = Vec::new();
                r.selector.as_slice().encode(&mut rule);
                list(&recipients, &mut rule);
                list(&rule, &mut rules);
            }
            let mut scope = Vec::new();
            s.target.encode(&mut scope);
            list(&rules, &mut scope);
            list(&scope, &mut scopes);
        }
        let mut body = Vec::with_capacity(160);
        self.chain_id.encode(&mut body);
        self.key_type.encode(&mut body);
        self.key_id.encode(&mut body);
        self.expiry.encode(&mut body);
        list(&limits, &mut body);
        list(&scopes, &mut body);
        self.witness.encode(&mut body);
        let mut out = Vec::with_capacity(body.len() + 3);
        list(&body, &mut out);
        if out.len() > MAX_KEY_AUTHORIZATION_BYTES {
            return Err(KeyAuthorizationMalformed);
        }
        Ok(out)
    }

    /// What the key's owner signs: keccak256 of the unsigned authorization.
    pub fn digest(&self) -> Result<B256, KeyAuthorizationMalformed> {
        self.encode().map(keccak256)
    }

    /// The signed authorization, `rlp([unsigned, signature])`: refused for an empty signature or past the cap.
    pub fn encode_signed(&self, signature: &[u8]) -> Result<Vec<u8>, KeyAuthorizationMalformed> {
        let unsigned = self.encode()?;
        if signature.is_empty() || signature.len() > MAX_KEY_AUTHORIZATION_BYTES {
            return Err(KeyAuthorizationMalformed);
        }
        let mut body = unsigned;
        signature.encode(&mut body);
        let mut out = Vec::with_capacity(body.len() + 3);
        list(&body, &mut out);
        if out.len() > MAX_KEY_AUTHORIZATION_BYTES {
            return Err(KeyAuthorizationMalformed);
        }
        Ok(out)
    }
}

/// An RLP list header for `payload`, then the payload.
fn list(payload: &[u8], out: &mut Vec<u8>) {
    Header { list: true, payload_length: payload.len() }.encode(out);
    out.extend_from_slice(payload);
}
