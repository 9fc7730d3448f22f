//! `transact`: confirm, then the agreement payment where the pairing's payment is no public proof, then the signer,
//! then finish. It stands above the gate because the agreement exchange does.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agreement::{Agreement, AgreementReceipt, ToApprove};
use crate::decline::Declined;
use crate::fetch::Fetch;
use crate::gate::{Confirmed, Document, Options, confirm, sign_steps};
use crate::hash::AtrHash;
use crate::pairing::{Pairing, namespace};
use crate::payment::Payment;
use crate::signer::Signer;

/// A transaction the gate completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transacted {
    /// The payment to send; `None` when the pairing has nothing for the buyer to sign.
    pub signed: Option<Payment>,
    /// The ATR bytes compared.
    #[serde(with = "crate::codec::base64_bytes")]
    pub bytes: Vec<u8>,
    /// Their hash.
    pub h: AtrHash,
    /// The agreement's receipt, when an agreement payment came first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<AgreementReceipt>,
    /// The landed read to keep beside the payment, where the pairing has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed: Option<Value>,
}

/// What `transact` gives when it does not decline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Transaction {
    /// The payment (and the agreement receipt, where one was paid).
    Signed(Transacted),
    /// An agreement payment to approve first; nothing was signed.
    ToApprove(ToApprove),
}

/// confirm, then (for a pairing whose payment is no public proof) the agreement payment, then the signer, then
/// finish: the signer is called at most once per step of the payment, and never before the bytes are compared or
/// after a decline.
pub async fn transact(
    doc: impl Document,
    pairing: &dyn Pairing,
    signer: &dyn Signer,
    fetch: &dyn Fetch,
    options: &Options,
) -> Result<Transaction, Declined> {
    let confirmed = confirm(doc, pairing, signer.account(), fetch, options).await?;
    let Confirmed { chosen, request, bytes, h } = confirmed;
    let mut receipt = None;
    if let Some(url) = &chosen.agreement {
        let payer: &dyn Signer = match &options.agreement_signer {
            Some(s) => s.as_ref(),
            None => signer,
        };
        match crate::agreement::exchange(&bytes, url, payer, fetch, options, namespace(pairing.id())).await? {
            Agreement::Agreed { receipt: r } => receipt = Some(r),
            Agreement::ToApprove(t) => return Ok(Transaction::ToApprove(t)),
        }
    }
    let done = sign_steps(pairing, &chosen, request, signer, &bytes, h).await?;
    Ok(Transaction::Signed(match done {
        None => Transacted { signed: None, bytes, h, agreement: receipt, landed: None },
        Some(f) => Transacted { signed: Some(f.signed), bytes, h: f.h, agreement: receipt, landed: f.landed },
    }))
}
