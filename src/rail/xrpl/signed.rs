//! What the XRPL pairings read of a signed blob, shared by `x402/exact/xrpl`, `mpp/charge/xrpl` and the channel
//! `mpp/session/xrpl`: the wallet's answer held to the transaction built, and a Payment's `InvoiceID`.

use super::{Blob, Field, decode, decode_presented, fields, is_blob_hex, network_id_held, without_signature, xrpl};
use crate::refusal::{Reason, Refusal};

/// The signer's one answer as a signed blob, held to what was built: it decodes (`xrpl/blob-malformed`, and
/// `xrpl/multisigned` for one with Signers), its `NetworkID` is the network's (`xrpl/network-mismatch`), it is the
/// transaction built with nothing changed or added (`xrpl/tx-mismatch`), and it carries a signing key of 33 bytes
/// and a signature of that key's length (`xrpl/signature-malformed`).
pub(crate) fn signed_as_built(answer: Option<&str>, unsigned: &[u8], network: u32) -> Result<Blob, Refusal> {
    let text = answer.filter(|t| is_blob_hex(t)).ok_or(xrpl(Reason::BlobMalformed))?;
    let blob = decode_presented(text)?;
    let fields = blob.fields();
    if !network_id_held(&fields, network) {
        return Err(xrpl(Reason::NetworkMismatch));
    }
    if without_signature(&fields) != unsigned {
        return Err(xrpl(Reason::TxMismatch));
    }
    let key = decode::leaf_of(&fields, fields::SIGNING_PUB_KEY).unwrap_or_default();
    let signature = decode::leaf_of(&fields, fields::TXN_SIGNATURE).unwrap_or_default();
    if !signature_fits(key, signature) {
        return Err(xrpl(Reason::SignatureMalformed));
    }
    Ok(blob)
}

/// Whether a signature is of its 33-byte key's form: 64 bytes for an ed25519 key (`ED…`), a DER sequence of 8 to
/// 72 bytes for a compressed secp256k1 point.
pub(crate) fn signature_fits(key: &[u8], signature: &[u8]) -> bool {
    match key.first() {
        Some(0xED) => key.len() == 33 && signature.len() == 64,
        Some(0x02 | 0x03) => key.len() == 33 && (8..=72).contains(&signature.len()) && signature.first() == Some(&0x30),
        _ => false,
    }
}

/// The Payment's `InvoiceID`: `xrpl/not-payment` for another transaction type, `xrpl/no-invoice-id` for none.
pub(crate) fn payment_invoice<'a>(fields: &[Field<'a>]) -> Result<&'a [u8], Refusal> {
    if decode::leaf_of(fields, fields::TRANSACTION_TYPE) != Some(&[0, 0][..]) {
        return Err(xrpl(Reason::NotPayment));
    }
    decode::leaf_of(fields, fields::INVOICE_ID).ok_or(xrpl(Reason::NoInvoiceId))
}
