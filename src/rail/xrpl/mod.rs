//! The XRP Ledger rail: the binary codec's subset the XRPL pairings need, written by hand on `sha2` and `bs58` (no
//! XRPL crate is both light and settled: see the design note on chains). The decoding walk over a serialized
//! transaction with its canonical-form checks and the caps of `decoder-caps.json` ([`decode`]), classic addresses in
//! the XRPL alphabet ([`address`]), the writing of the Payment and PaymentChannelCreate the pairings build, amounts
//! (XRP drops, issued currencies, MPT), SHA-512Half, the signing prefixes (`STX\0`, `TXN\0`, `CLM\0`), the channel id
//! and the claim's signing bytes ([`tx`]). Pure and I/O-free: nothing here fetches, hashes an ATR or signs.

pub mod address;
pub mod decode;
pub mod fields;
#[cfg(any(feature = "x402", feature = "mpp"))]
pub(crate) mod signed;
pub mod tx;
pub mod values;

pub use address::{account_id, encode_account, is_address};
pub use decode::{DecodeError, Field, MAX_DEPTH, MAX_FIELDS};
pub use tx::{Tx, channel_id, claim_bytes, sha512_half, signing_bytes, tx_hash, without_signature};

use crate::refusal::{Reason, Refusal};

/// The longest signed blob a pairing reads, in hex digits.
pub const MAX_BLOB_HEX: usize = 4096;

/// A refusal in the `xrpl` namespace.
pub(crate) const fn xrpl(reason: Reason) -> Refusal {
    Refusal::new("xrpl", reason)
}

/// A signed blob, decoded, with its bytes and its transaction id.
#[derive(Debug, Clone)]
pub struct Blob {
    bytes: Vec<u8>,
    /// The transaction id: SHA-512Half of `TXN\0` and the blob.
    pub hash: [u8; 32],
}

impl Blob {
    /// The blob's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The blob's top-level fields (it decoded when the blob was read).
    pub fn fields(&self) -> Vec<Field<'_>> {
        decode::decode(&self.bytes).unwrap_or_default()
    }
}

/// Whether a text is a non-empty even number of hex digits in either case, without a prefix.
pub fn is_blob_hex(text: &str) -> bool {
    !text.is_empty() && text.len().is_multiple_of(2) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A signed blob of at most [`MAX_BLOB_HEX`] hex digits, decoded in its canonical form within the caps, with a
/// `TransactionType` and an `Account`: `xrpl/blob-malformed` otherwise (`xrpl/blob-too-large` past the length).
pub fn decode_blob(text: &str) -> Result<Blob, Refusal> {
    if !is_blob_hex(text) {
        return Err(xrpl(Reason::BlobMalformed));
    }
    if text.len() > MAX_BLOB_HEX {
        return Err(xrpl(Reason::BlobTooLarge));
    }
    let bytes = hex::decode(text).map_err(|_| xrpl(Reason::BlobMalformed))?;
    let fields = decode::decode(&bytes).map_err(|_| xrpl(Reason::BlobMalformed))?;
    if decode::find(&fields, fields::TRANSACTION_TYPE).is_none()
        || decode::find(&fields, fields::ACCOUNT_FIELD).is_none()
    {
        return Err(xrpl(Reason::BlobMalformed));
    }
    drop(fields);
    let hash = tx_hash(&bytes);
    Ok(Blob { bytes, hash })
}

/// A presented payment's signed blob, read as [`decode_blob`] reads it; one that carries `Signers` is
/// `xrpl/multisigned`: the payer signs with a single key.
pub fn decode_presented(text: &str) -> Result<Blob, Refusal> {
    let blob = decode_blob(text)?;
    if decode::find(&blob.fields(), fields::SIGNERS).is_some() {
        return Err(xrpl(Reason::Multisigned));
    }
    Ok(blob)
}

/// Whether a node of the network `xrpl:<id>` takes a transaction with this `NetworkID` (rippled's preflight0): a
/// network whose id is at most 1024 takes one without NetworkID only, one above 1024 one with its own id only.
pub fn network_id_held(fields: &[Field<'_>], network_id: u32) -> bool {
    let held = decode::u32_of(fields, fields::NETWORK_ID);
    let present = decode::find(fields, fields::NETWORK_ID).is_some();
    if network_id <= 1024 { !present } else { held == Some(network_id) }
}

/// An `xrpl:<id>` network's id, from 0 to 2^32 - 1 without a leading zero.
pub fn network_id(network: &str) -> Option<u32> {
    let id = network.strip_prefix("xrpl:")?;
    let canonical = !id.is_empty() && id.len() <= 10 && (id == "0" || !id.starts_with('0'));
    if !canonical || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse().ok()
}
