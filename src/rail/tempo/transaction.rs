//! The signed Tempo transaction, type 0x76: `0x76 ‖ rlp([chain_id, max_priority_fee_per_gas, max_fee_per_gas,
//! gas_limit, calls, access_list, nonce_key, nonce, valid_before, valid_after, fee_token, fee_payer_signature,
//! authorization_list, key_authorization?, signature])`, each call `rlp([to, value, input])`. Written and read
//! through alloy-rlp; a wire is read as the reference reads it: at most 64 KiB and RLP depth 8, 14 or 15 items,
//! every integer canonical, at most 64 calls.

use alloy_primitives::{Address, Bytes, U256};
use alloy_rlp::{Decodable, Encodable, Header};

/// The transaction type: the first byte of the wire.
pub const TEMPO_TX_TYPE: u8 = 0x76;
/// The most bytes of a wire the rail reads (64 KiB).
pub const MAX_WIRE_BYTES: usize = 65_536;
/// The deepest list of a wire: the outermost is at depth 0.
const MAX_DEPTH: usize = 8;
/// The most calls of a transaction.
const MAX_CALLS: usize = 64;

/// One call of a Tempo transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TempoCall {
    /// The contract called; `None` for a creation (written empty).
    pub to: Option<Address>,
    /// The value sent with it.
    pub value: U256,
    /// Its calldata.
    pub input: Bytes,
}

/// A signed Tempo transaction. The lists the gate does not read (access list, authorization list, key
/// authorization) and the fee payer's signature are kept as their RLP items, written back as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TempoTransaction {
    /// The chain id.
    pub chain_id: u64,
    /// The priority fee per gas.
    pub max_priority_fee_per_gas: u128,
    /// The fee cap per gas.
    pub max_fee_per_gas: u128,
    /// The gas limit.
    pub gas_limit: u64,
    /// The calls, in order.
    pub calls: Vec<TempoCall>,
    /// The access list's RLP item (`0xc0` when empty).
    pub access_list: Bytes,
    /// The nonce key (2D nonces).
    pub nonce_key: U256,
    /// The nonce.
    pub nonce: u64,
    /// The time before which it is valid, `None` when written empty.
    pub valid_before: Option<u64>,
    /// The time after which it is valid, `None` when written empty.
    pub valid_after: Option<u64>,
    /// The token fees are paid in, `None` when written empty.
    pub fee_token: Option<Address>,
    /// The fee payer's signature item, `None` when written empty.
    pub fee_payer_signature: Option<Bytes>,
    /// The authorization list's RLP item (`0xc0` when empty).
    pub authorization_list: Bytes,
    /// The key authorization's RLP item, when one precedes the signature.
    pub key_authorization: Option<Bytes>,
    /// The sender's signature bytes.
    pub signature: Bytes,
}

/// Why a wire is not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxError {
    /// Not a 0x76 transaction of the form above (`tempo/tx-malformed`).
    Malformed,
    /// More than [`MAX_WIRE_BYTES`] (`tempo/tx-too-large`).
    TooLarge,
}

/// An empty RLP list.
pub const EMPTY_LIST: [u8; 1] = [alloy_rlp::EMPTY_LIST_CODE];

impl TempoTransaction {
    /// The wire: `0x76` and the RLP list of the fields and the signature.
    pub fn encode(&self) -> Vec<u8> {
        self.encode_fields(true)
    }

    /// `0x76` and the RLP list of the fields, then the signature when `signed`; unsigned, as the sender signs it
    /// (`fee_token` as `0x80` and the fee payer's signature as `0x00` when a fee payer has signed).
    pub(super) fn encode_fields(&self, signed: bool) -> Vec<u8> {
        let fee_payer = signed || self.fee_payer_signature.is_none();
        let mut body = Vec::with_capacity(256);
        self.chain_id.encode(&mut body);
        self.max_priority_fee_per_gas.encode(&mut body);
        self.max_fee_per_gas.encode(&mut body);
        self.gas_limit.encode(&mut body);
        let mut calls = Vec::new();
        for c in &self.calls {
            let mut item = Vec::with_capacity(c.input.len() + 40);
            match c.to {
                Some(to) => to.encode(&mut item),
                None => item.push(alloy_rlp::EMPTY_STRING_CODE),
            }
            c.value.encode(&mut item);
            c.input.encode(&mut item);
            list(&item, &mut calls);
        }
        list(&calls, &mut body);
        body.extend_from_slice(&self.access_list);
        self.nonce_key.encode(&mut body);
        self.nonce.encode(&mut body);
        optional(self.valid_before, &mut body);
        optional(self.valid_after, &mut body);
        match self.fee_token {
            Some(t) if fee_payer => t.encode(&mut body),
            _ => body.push(alloy_rlp::EMPTY_STRING_CODE),
        }
        match &self.fee_payer_signature {
            Some(item) if signed => body.extend_from_slice(item),
            Some(_) => body.push(0x00),
            None => body.push(alloy_rlp::EMPTY_STRING_CODE),
        }
        body.extend_from_slice(&self.authorization_list);
        if let Some(k) = &self.key_authorization {
            body.extend_from_slice(k);
        }
        if signed {
            self.signature.encode(&mut body);
        }
        let mut wire = Vec::with_capacity(body.len() + 4);
        wire.push(TEMPO_TX_TYPE);
        list(&body, &mut wire);
        wire
    }

    /// Reads a wire (see the module's note for what is refused).
    pub fn decode(wire: &[u8]) -> Result<Self, TxError> {
        if wire.len() > MAX_WIRE_BYTES {
            return Err(TxError::TooLarge);
        }
        let (&kind, mut rest) = wire.split_first().ok_or(TxError::Malformed)?;
        if kind != TEMPO_TX_TYPE || rest.is_empty() {
            return Err(TxError::Malformed);
        }
        let top = Item::read(&mut rest)?;
        if !rest.is_empty() || !top.list {
            return Err(TxError::Malformed);
        }
        check_depth(top.payload, 1, MAX_DEPTH)?;
        let items = top.items()?;
        let [
            chain,
            tip,
            cap,
            gas,
            calls,
            access,
            nonce_key,
            nonce,
            before,
            after,
            fee_token,
            fee_payer,
            auths,
            tail @ ..,
        ] = items.as_slice()
        else {
            return Err(TxError::Malformed);
        };
        let (key_authorization, signature) = match tail {
            [sig] => (None, sig),
            [key, sig] if key.list => (Some(Bytes::copy_from_slice(key.raw)), sig),
            _ => return Err(TxError::Malformed),
        };
        if !calls.list || !access.list || !auths.list || fee_token.list || signature.list {
            return Err(TxError::Malformed);
        }
        let call_items = calls.items()?;
        if call_items.len() > MAX_CALLS {
            return Err(TxError::Malformed);
        }
        let calls = call_items.iter().map(TempoCall::read).collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            chain_id: chain.uint()?,
            max_priority_fee_per_gas: tip.uint()?,
            max_fee_per_gas: cap.uint()?,
            gas_limit: gas.uint()?,
            calls,
            access_list: Bytes::copy_from_slice(access.raw),
            nonce_key: nonce_key.uint()?,
            nonce: nonce.uint()?,
            valid_before: before.optional()?,
            valid_after: after.optional()?,
            fee_token: match fee_token.payload {
                [] => None,
                _ => Some(fee_token.address()?),
            },
            fee_payer_signature: (fee_payer.list || !fee_payer.payload.is_empty())
                .then(|| Bytes::copy_from_slice(fee_payer.raw)),
            authorization_list: Bytes::copy_from_slice(auths.raw),
            key_authorization,
            signature: Bytes::copy_from_slice(signature.payload),
        })
    }
}

impl TempoTransaction {
    /// The signature of each entry of the authorization list, in order. Tempo writes an entry `rlp([chain_id,
    /// address, nonce, signature])`; an entry of another shape, or whose signature is a `0x03` keychain signature
    /// (not 65 bytes and that first byte: refused by Tempo from its T1C hardfork on), is [`TxError::Malformed`].
    pub fn authorization_signatures(&self) -> Result<Vec<&[u8]>, TxError> {
        let mut raw = self.authorization_list.as_ref();
        let list = Item::read(&mut raw)?;
        let mut out = Vec::new();
        for entry in list.items()? {
            let signature = match entry.items().ok().as_deref() {
                Some([_, _, _, signature]) if !signature.list => signature.payload,
                _ => return Err(TxError::Malformed),
            };
            if signature.len() != 65 && signature.first() == Some(&KEYCHAIN_V1) {
                return Err(TxError::Malformed);
            }
            out.push(signature);
        }
        Ok(out)
    }
}

/// The keychain signature's first version, which Tempo refuses from T1C on.
const KEYCHAIN_V1: u8 = 0x03;

impl TempoCall {
    fn read(item: &Item<'_>) -> Result<Self, TxError> {
        let [to, value, input] = item.items()?.try_into().map_err(|_| TxError::Malformed)?;
        if input.list {
            return Err(TxError::Malformed);
        }
        let to = match to.payload {
            [] if !to.list => None,
            _ => Some(to.address()?),
        };
        Ok(Self { to, value: value.uint()?, input: Bytes::copy_from_slice(input.payload) })
    }
}

/// An RLP list header for `payload`, then the payload.
fn list(payload: &[u8], out: &mut Vec<u8>) {
    Header { list: true, payload_length: payload.len() }.encode(out);
    out.extend_from_slice(payload);
}

/// An integer, or the empty string for `None`.
fn optional(value: Option<u64>, out: &mut Vec<u8>) {
    match value {
        Some(v) => v.encode(out),
        None => out.push(alloy_rlp::EMPTY_STRING_CODE),
    }
}

/// One RLP item: whether it is a list, its payload and its whole encoding (the key authorization's reader shares it).
#[derive(Clone, Copy)]
pub(super) struct Item<'a> {
    pub(super) list: bool,
    pub(super) payload: &'a [u8],
    pub(super) raw: &'a [u8],
}

impl<'a> Item<'a> {
    /// Reads one item off the front of `buf` (alloy-rlp's header: canonical lengths, single bytes not wrapped).
    pub(super) fn read(buf: &mut &'a [u8]) -> Result<Self, TxError> {
        let start = *buf;
        let header = Header::decode(buf).map_err(|_| TxError::Malformed)?;
        let (payload, rest) = buf.split_at_checked(header.payload_length).ok_or(TxError::Malformed)?;
        *buf = rest;
        let raw = start.get(..start.len() - rest.len()).ok_or(TxError::Malformed)?;
        Ok(Self { list: header.list, payload, raw })
    }

    /// The items of a list.
    pub(super) fn items(&self) -> Result<Vec<Self>, TxError> {
        if !self.list {
            return Err(TxError::Malformed);
        }
        let mut buf = self.payload;
        let mut out = Vec::new();
        while !buf.is_empty() {
            out.push(Self::read(&mut buf)?);
        }
        Ok(out)
    }

    /// A canonical unsigned integer (alloy-rlp refuses a leading zero and a value past the type).
    pub(super) fn uint<T: Decodable>(&self) -> Result<T, TxError> {
        if self.list {
            return Err(TxError::Malformed);
        }
        let mut raw = self.raw;
        T::decode(&mut raw).map_err(|_| TxError::Malformed)
    }

    /// An integer, `None` when written empty.
    fn optional(&self) -> Result<Option<u64>, TxError> {
        match (self.list, self.payload) {
            (false, []) => Ok(None),
            _ => self.uint().map(Some),
        }
    }

    /// A 20-byte address.
    fn address(&self) -> Result<Address, TxError> {
        match (self.list, self.payload.len()) {
            (false, 20) => Ok(Address::from_slice(self.payload)),
            _ => Err(TxError::Malformed),
        }
    }
}

/// No list among the items of `payload`, which stand at `depth`, or inside them, is deeper than `max` (the outermost
/// list at depth 0).
pub(super) fn check_depth(mut payload: &[u8], depth: usize, max: usize) -> Result<(), TxError> {
    while !payload.is_empty() {
        let item = Item::read(&mut payload)?;
        if item.list {
            if depth > max {
                return Err(TxError::Malformed);
            }
            check_depth(item.payload, depth + 1, max)?;
        }
    }
    Ok(())
}
