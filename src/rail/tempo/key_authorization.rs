//! The account keychain's key authorization (Tempo's access keys): `rlp([chain_id, key_type, key_id, expiry, limits,
//! allowed_calls, witness])`, each limit `rlp([token, limit, period])`, each allowed call `rlp([target,
//! [rlp([selector, [recipient, …]]), …]])`; signed, `rlp([that list, signature])`. MPP's Tempo subscription writes H
//! as the witness. Written through alloy-rlp, with the reference's caps: 16 limits, 16 scopes, 16 selector rules a
//! scope and 16 recipients a rule, 8192 bytes. A signed authorization is read back as the reference reads it
//! ([`SignedKeyAuthorization::decode`]): the items MPP's subscription compares (chain, key, witness) and the digest.

use alloy_primitives::{Address, B256, U256, keccak256};
use alloy_rlp::{Encodable, Header};

use super::transaction::{Item, check_depth};

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

/// The deepest list of a signed key authorization: the outermost is at depth 0, a recipient list at depth 6.
const MAX_DEPTH: usize = 6;

/// A signed key authorization as read back: what MPP's subscription compares with the challenge, and the digest the
/// key's owner signed (keccak256 of the authorization's bytes as received).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignedKeyAuthorization {
    /// keccak256 of the unsigned authorization, as received.
    pub digest: B256,
    /// The chain id (item 0), any canonical integer of up to 32 bytes.
    pub chain_id: U256,
    /// The key type (item 1), as Tempo numbers it (any other value as given).
    pub key_type: U256,
    /// The key's address (item 2).
    pub key_id: Address,
    /// The witness (item 6), where the authorization carries 32 bytes there; `None` for none or an empty item.
    pub witness: Option<B256>,
}

impl SignedKeyAuthorization {
    /// Reads `rlp([authorization, signature])` as the reference does: at most [`MAX_KEY_AUTHORIZATION_BYTES`],
    /// canonical RLP no deeper than 6 lists, an authorization of 3 to 9 items and a byte-string signature; a 20-byte
    /// key id; chain id and key type canonical integers of up to 32 bytes; limits and allowed calls (items 4 and 5),
    /// where present, of at most 16 entries each (16 selector rules a scope, 16 recipients a rule), each limit `[token,
    /// limit]` or `[token, limit, period]`, each scope `[target, [[selector, [recipient, …]], …]]` of 20-byte
    /// addresses and 4-byte selectors; a witness of 0 or 32 bytes. The expiry and any later item are not read.
    pub fn decode(signed: &[u8]) -> Result<Self, KeyAuthorizationMalformed> {
        let bad = |_| KeyAuthorizationMalformed;
        if signed.len() > MAX_KEY_AUTHORIZATION_BYTES {
            return Err(KeyAuthorizationMalformed);
        }
        let mut rest = signed;
        let top = Item::read(&mut rest).map_err(bad)?;
        if !rest.is_empty() || !top.list {
            return Err(KeyAuthorizationMalformed);
        }
        check_depth(top.payload, 1, MAX_DEPTH).map_err(bad)?;
        let [auth, signature] = top.items().map_err(bad)?.try_into().map_err(|_| KeyAuthorizationMalformed)?;
        let items = auth.items().map_err(bad)?;
        if signature.list || !(3..=9).contains(&items.len()) {
            return Err(KeyAuthorizationMalformed);
        }
        let [chain, kind, key, ..] = items.as_slice() else { return Err(KeyAuthorizationMalformed) };
        let key_id = fixed(Some(key), 20).map(Address::from_slice).ok_or(KeyAuthorizationMalformed)?;
        let (chain_id, key_type) = (chain.uint::<U256>().map_err(bad)?, kind.uint::<U256>().map_err(bad)?);
        let (limits, calls) = (items.get(4), items.get(5));
        if limits.is_some_and(|l| limits_read(l).is_none()) || calls.is_some_and(|c| calls_read(c).is_none()) {
            return Err(KeyAuthorizationMalformed);
        }
        let witness = match items.get(6) {
            None => None,
            Some(w) if !w.list && w.payload.is_empty() => None,
            Some(w) => Some(fixed(Some(w), 32).map(B256::from_slice).ok_or(KeyAuthorizationMalformed)?),
        };
        Ok(Self { digest: keccak256(auth.raw), chain_id, key_type, key_id, witness })
    }
}

/// The bytes of a byte-string item of exactly `n` bytes.
fn fixed<'a>(item: Option<&Item<'a>>, n: usize) -> Option<&'a [u8]> {
    item.filter(|i| !i.list && i.payload.len() == n).map(|i| i.payload)
}

/// The entries of a list of at most [`MAX_SCOPES`], or none for an empty byte string; `None` otherwise.
fn bounded<'a>(item: &Item<'a>) -> Option<Vec<Item<'a>>> {
    match item.list {
        false if item.payload.is_empty() => Some(Vec::new()),
        true => item.items().ok().filter(|e| e.len() <= MAX_SCOPES),
        false => None,
    }
}

/// Each limit `[token, limit]` or `[token, limit, period]`: a 20-byte token, then canonical integers.
fn limits_read(item: &Item<'_>) -> Option<()> {
    for limit in bounded(item)? {
        let parts = limit.items().ok()?;
        let [token, numbers @ ..] = parts.as_slice() else { return None };
        if !(1..=2).contains(&numbers.len()) || fixed(Some(token), 20).is_none() {
            return None;
        }
        for n in numbers {
            n.uint::<U256>().ok()?;
        }
    }
    Some(())
}

/// Each scope `[target, rules]`, each rule `[selector, recipients]`, the rules and recipients lists of at most
/// [`MAX_SCOPES`]: a 20-byte target, 4-byte selectors and 20-byte recipients.
fn calls_read(item: &Item<'_>) -> Option<()> {
    for scope in bounded(item)? {
        let [target, rules] = <[Item<'_>; 2]>::try_from(scope.items().ok()?).ok()?;
        fixed(Some(&target), 20)?;
        if !rules.list {
            return None;
        }
        for rule in bounded(&rules)? {
            let [selector, recipients] = <[Item<'_>; 2]>::try_from(rule.items().ok()?).ok()?;
            fixed(Some(&selector), 4)?;
            if !recipients.list {
                return None;
            }
            for r in bounded(&recipients)? {
                fixed(Some(&r), 20)?;
            }
        }
    }
    Some(())
}
