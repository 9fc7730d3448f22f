//! What a buyer fetches to check a contract alone: a document from its fixed address, a seller's key list, a
//! mandate's status, and the upstream receipts a receipt names. Every GET goes through the crate's [`Fetch`] under
//! the gate's own rules (those of the ATR fetch): an https link only, `Accept-Encoding: identity` asked and any
//! other content coding refused unread, status 200 only (a redirect is refused, never followed), a byte cap checked
//! on the declared length and while streaming, and one deadline of 10 s over the headers and the body. Each refusal
//! is `Unfetchable` with what happened.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::Value;

use super::read::{Document, MAX_DOCUMENT_BYTES, Signed, read, read_keys, read_object};
use super::types::{KeyList, Receipt};
use super::{ContractError, MAX_UPSTREAM};
use crate::fetch::{Fetch, Request};
use crate::gate::atr::{FETCH_DEADLINE, IDENTITY, declared_over, is_identity, read_capped};

/// The most bytes a status answer may have: it is one small object.
const MAX_STATUS_BYTES: usize = 4 * 1024;

fn unfetchable(url: &str, detail: impl Into<String>) -> ContractError {
    ContractError::Unfetchable { url: url.to_owned(), detail: detail.into() }
}

/// One GET under the gate's rules, the body at most `cap` bytes.
async fn get(fetch: &dyn Fetch, url: &str, cap: usize) -> Result<Vec<u8>, ContractError> {
    if !crate::link::is_agreement_url(url) {
        return Err(unfetchable(url, "not an https link"));
    }
    tokio::time::timeout(FETCH_DEADLINE, get_once(fetch, url, cap))
        .await
        .unwrap_or_else(|_| Err(unfetchable(url, format!("no whole answer within {} s", FETCH_DEADLINE.as_secs()))))
}

async fn get_once(fetch: &dyn Fetch, url: &str, cap: usize) -> Result<Vec<u8>, ContractError> {
    let headers = [IDENTITY];
    let mut response = fetch
        .get(Request { url, headers: &headers })
        .await
        .map_err(|e| unfetchable(url, format!("the fetch failed: {e}")))?;
    let status = response.status;
    if (300..400).contains(&status) {
        return Err(unfetchable(url, format!("answered a redirect (status {status}), which is not followed")));
    }
    if status != 200 {
        return Err(unfetchable(url, format!("answered status {status}, not 200")));
    }
    if let Some(coding) = response.header("content-encoding").filter(|c| !is_identity(Some(c))) {
        return Err(unfetchable(url, format!("answered with the content coding `{coding}`, not identity")));
    }
    let too_large = || unfetchable(url, format!("answered more than {cap} bytes"));
    if declared_over(response.header("content-length").as_deref(), cap) {
        return Err(too_large());
    }
    match read_capped(&mut response, cap).await {
        Ok(body) => Ok(body),
        Err(Some(())) => Err(too_large()),
        Err(None) => Err(unfetchable(url, "the body ended with a transport error")),
    }
}

/// Fetches a document from its fixed address (an offer card, a quote, a receipt, an attestation) and reads it
/// ([`read`]): at most [`MAX_DOCUMENT_BYTES`]. The signature is not checked: verify it under the signer's key list
/// ([`fetch_keys`], [`Signed::verify`]).
pub async fn fetch_document<T: Document>(fetch: &dyn Fetch, url: &str) -> Result<Signed<T>, ContractError> {
    let bytes = get(fetch, url, MAX_DOCUMENT_BYTES).await?;
    read::<T>(&bytes)
}

/// Fetches and reads a seller's key list from `https://{host}/.well-known/receipt-keys`. `host` is a host and an
/// optional port, nothing else (no path, query, userinfo), or the fetch is refused unsent.
pub async fn fetch_keys(fetch: &dyn Fetch, host: &str) -> Result<KeyList, ContractError> {
    let url = format!("https://{host}/.well-known/receipt-keys");
    if host.is_empty() || host.contains(['/', '?', '#', '@', '\\']) {
        return Err(unfetchable(&url, format!("`{host}` is not a host")));
    }
    let bytes = get(fetch, &url, MAX_DOCUMENT_BYTES).await?;
    read_keys(&bytes)
}

/// Asks a mandate's status address (a presentation's `status`) whether the mandate still holds. The answer must be
/// status 200 with a JSON object of at most 4 KiB, no member twice, whose `status` member is exactly the string
/// `"active"` or `"revoked"` (other members are ignored): `{"status":"active"}`. `active` is `Ok`, `revoked` is
/// `Revoked`; anything else (a redirect, another status, another value, a body that is not such an object) is
/// `Unfetchable`, so a buyer never reads an unclear answer as active.
pub async fn check_status(fetch: &dyn Fetch, url: &str) -> Result<(), ContractError> {
    let bytes = get(fetch, url, MAX_STATUS_BYTES).await?;
    let object = read_object(&bytes).map_err(|e| unfetchable(url, format!("the status answer is unreadable: {e}")))?;
    match object.get("status") {
        Some(Value::String(s)) if s == "active" => Ok(()),
        Some(Value::String(s)) if s == "revoked" => Err(ContractError::Revoked),
        Some(other) => Err(unfetchable(url, format!("the status is {other}, neither \"active\" nor \"revoked\""))),
        None => Err(unfetchable(url, "the status answer has no `status` member")),
    }
}

/// Follows a receipt's `upstream` receipts, breadth first: each URL fetched ([`fetch_document`]), read, and
/// verified under its own seller's key list ([`fetch_keys`] of its `seller`, fetched once per seller). The
/// receipts `receipt` names directly are at depth 1; a receipt at depth `max_depth` that names more is
/// `UpstreamTooDeep(max_depth)` (so `max_depth` 0 allows none). A URL already followed, or a receipt whose seller
/// and id were already seen (the first receipt's included), is `UpstreamLoop`; so two receipts naming the same
/// upstream receipt are refused too, as a buyer cannot tell that from a loop without following it twice. More than
/// [`MAX_UPSTREAM`] receipts in all is `UpstreamTooMany`. Answers the verified receipts in the order followed;
/// `receipt` itself is not verified here.
pub async fn follow_upstream(
    fetch: &dyn Fetch,
    receipt: &Receipt,
    max_depth: usize,
) -> Result<Vec<Signed<Receipt>>, ContractError> {
    let mut urls: HashSet<String> = HashSet::new();
    let mut ids: HashSet<(String, String)> = HashSet::from([(receipt.seller.to_ascii_lowercase(), receipt.id.clone())]);
    let mut lists: HashMap<String, KeyList> = HashMap::new();
    let mut queue: VecDeque<(String, usize)> = VecDeque::new();
    let mut followed: Vec<Signed<Receipt>> = Vec::new();
    enqueue(&mut queue, receipt, 0, max_depth, 0)?;
    while let Some((url, depth)) = queue.pop_front() {
        if !urls.insert(url.clone()) {
            return Err(ContractError::UpstreamLoop(url));
        }
        let signed = fetch_document::<Receipt>(fetch, &url).await?;
        let seller = signed.doc().seller.to_ascii_lowercase();
        let list = match lists.remove(&seller) {
            Some(list) => list,
            None => fetch_keys(fetch, &seller).await?,
        };
        let verified = signed.verify(&list);
        lists.insert(seller.clone(), list);
        verified?;
        if !ids.insert((seller, signed.doc().id.clone())) {
            return Err(ContractError::UpstreamLoop(url));
        }
        enqueue(&mut queue, signed.doc(), depth, max_depth, followed.len() + 1)?;
        followed.push(signed);
    }
    Ok(followed)
}

/// Queues the upstream URLs of a receipt at `depth`, refusing them past `max_depth`, or when they would bring the
/// receipts followed (`followed` so far) and queued past [`MAX_UPSTREAM`].
fn enqueue(
    queue: &mut VecDeque<(String, usize)>,
    receipt: &Receipt,
    depth: usize,
    max_depth: usize,
    followed: usize,
) -> Result<(), ContractError> {
    if receipt.upstream.is_empty() {
        return Ok(());
    }
    if depth >= max_depth {
        return Err(ContractError::UpstreamTooDeep(max_depth));
    }
    if followed + queue.len() + receipt.upstream.len() > MAX_UPSTREAM {
        return Err(ContractError::UpstreamTooMany(MAX_UPSTREAM));
    }
    queue.extend(receipt.upstream.iter().map(|u| (u.clone(), depth + 1)));
    Ok(())
}
