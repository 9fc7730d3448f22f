//! The seller: the examples' stand-in seller of the scenario's terms (the ATR at the offer's link, and the agreement
//! URL). Every payment that reaches it (the agreement payment in `PAYMENT-SIGNATURE`, the main payment sent after
//! `transact`) is appended to its log and synced before it answers: the log is what left the buyer's process.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use terms::{BoxFuture, Fetch, FetchError, Request, Response};

use crate::seller;
use crate::tripwire::Steps;
use crate::wallet::{append, lines};

pub(crate) struct Shop {
    pub(crate) seller: seller::Seller,
    pub(crate) log: PathBuf,
    pub(crate) purchase: usize,
    pub(crate) steps: Arc<Steps>,
}

impl Shop {
    /// `what` ("agreement" or "payment") reached the seller.
    pub(crate) fn receive(&self, what: &str, payment: &str) {
        append(&self.log, &json!({"purchase": self.purchase, "what": what, "payment": payment}));
    }
}

/// What reached the seller for `purchase`: each payment's role and text, in order.
pub(crate) fn received(log: &Path, purchase: usize) -> Vec<(String, String)> {
    lines(log)
        .into_iter()
        .filter(|v| v["purchase"].as_u64() == u64::try_from(purchase).ok())
        .map(|v| (v["what"].as_str().unwrap().to_owned(), v["payment"].as_str().unwrap().to_owned()))
        .collect()
}

/// What reached the seller, per purchase and role: the distinct payments.
pub(crate) fn received_all(log: &Path) -> BTreeMap<(usize, String), BTreeSet<String>> {
    let mut out: BTreeMap<(usize, String), BTreeSet<String>> = BTreeMap::new();
    for v in lines(log) {
        let purchase = usize::try_from(v["purchase"].as_u64().unwrap()).unwrap();
        let key = (purchase, v["what"].as_str().unwrap().to_owned());
        out.entry(key).or_default().insert(v["payment"].as_str().unwrap().to_owned());
    }
    out
}

impl Fetch for Shop {
    fn get<'a>(&'a self, request: Request<'a>) -> BoxFuture<'a, Result<Response, FetchError>> {
        Box::pin(async move {
            let paid = request.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("payment-signature"));
            self.steps.step(if paid.is_some() { "fetch.paid.before" } else { "fetch.before" });
            if let Some((_, payment)) = paid {
                self.receive("agreement", payment);
            }
            let r = self.seller.get(request).await;
            self.steps.step("fetch.after");
            r
        })
    }
}
