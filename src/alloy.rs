//! alloy's signers as the gate's (feature `alloy-signer`): [`AlloySigner`] is a [`Signer`] of one EIP-155 account
//! over any [`alloy_signer::Signer`] (alloy's local key, a Ledger, AWS or GCP KMS, a remote signer), and
//! [`AlloyWallet`] is a [`Wallet`] over the same signer on every EIP-155 chain, since an EIP-712 signature does not
//! depend on the signer's own chain (the chain is in the typed data's domain).
//!
//! Both sign `eip712` requests by their signing hash (`alloy_signer::Signer::sign_hash`), and `batch` requests of
//! them in order, and refuse every other kind.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::signer::{Answer, BoxFuture, Signer, SignerError, SigningRequest, Wallet};

/// A [`Signer`] of the account `eip155:<chain id>:<address>` over an alloy signer.
pub struct AlloySigner<S> {
    inner: Arc<S>,
    account: String,
}

impl<S> fmt::Debug for AlloySigner<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlloySigner").field("account", &self.account).finish_non_exhaustive()
    }
}

impl<S: alloy_signer::Signer + Send + Sync + 'static> AlloySigner<S> {
    /// The signer on the chain `chain_id`.
    pub fn new(signer: S, chain_id: u64) -> Self {
        Self::shared(Arc::new(signer), chain_id)
    }

    /// The signer on the chain `chain_id`, shared.
    pub fn shared(signer: Arc<S>, chain_id: u64) -> Self {
        let account = format!("eip155:{chain_id}:{}", signer.address().to_checksum(None));
        Self { inner: signer, account }
    }

    /// The signer on the chain its alloy signer names (`alloy_signer::Signer::chain_id`); `None` where it names
    /// none.
    pub fn on_its_chain(signer: S) -> Option<Self> {
        let chain = signer.chain_id()?;
        Some(Self::new(signer, chain))
    }
}

/// One answer of an alloy signer, for an `eip712` request or a `batch` of them.
fn answer<'a, S: alloy_signer::Signer + Send + Sync>(
    signer: &'a S,
    request: &'a SigningRequest,
) -> BoxFuture<'a, Result<Value, SignerError>> {
    Box::pin(async move {
        match request {
            SigningRequest::Eip712 { typed_data } => {
                let hash = typed_data.signing_hash().ok_or_else(|| SignerError::new("typed data does not hash"))?;
                let signature = signer.sign_hash(&hash).await.map_err(SignerError::new)?;
                Ok(Value::String(crate::codec::to_hex(&signature.as_bytes())))
            }
            SigningRequest::Batch { requests } => {
                let mut answers = Vec::with_capacity(requests.len());
                for r in requests {
                    answers.push(answer(signer, r).await?);
                }
                Ok(Value::Array(answers))
            }
            other => Err(SignerError::new(format!("an alloy signer does not sign {} requests", other.kind()))),
        }
    })
}

impl<S: alloy_signer::Signer + Send + Sync + 'static> Signer for AlloySigner<S> {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move { answer(self.inner.as_ref(), request).await.map(Answer::new) })
    }
}

/// A [`Wallet`] over an alloy signer: the same key on every `eip155:<chain id>` network.
pub struct AlloyWallet<S> {
    inner: Arc<S>,
}

impl<S: alloy_signer::Signer + Send + Sync + 'static> AlloyWallet<S> {
    /// The wallet of this signer.
    pub fn new(signer: S) -> Self {
        Self { inner: Arc::new(signer) }
    }
}

impl<S: alloy_signer::Signer> fmt::Debug for AlloyWallet<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlloyWallet").field("address", &self.inner.address()).finish_non_exhaustive()
    }
}

impl<S: alloy_signer::Signer + Send + Sync + 'static> Wallet for AlloyWallet<S> {
    fn on(&self, network: &str) -> Option<Arc<dyn Signer>> {
        let chain = crate::signer::eip155_chain(network)?;
        Some(Arc::new(AlloySigner::shared(self.inner.clone(), chain)))
    }
}
