//! One request to the gateway: the checks that stand before anything is sent, then the request as the client sends
//! it, paid under the policy, journal and approval queue of `terms pay`.

use std::net::{IpAddr, SocketAddr};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{CONNECTION, HeaderMap, HeaderName};
use hyper::{Request, Response};
use terms::client::{ClientError, Outgoing};

use super::answer;
use super::{Gateway, TOKEN_HEADER};

/// The largest request body the gateway takes and holds to re-send: 1 MiB (the client's own limit).
pub(super) const MAX_REQUEST_BODY: usize = terms::client::MAX_BODY_BYTES;

/// The hop-by-hop headers (RFC 9110 §7.6.1, and the old `Keep-Alive` and `Proxy-Connection`): never passed on, in
/// either direction.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The request headers never forwarded beside the hop-by-hop ones: those the gateway's own connection to the seller
/// sets (`Host`, `Content-Length`, `Expect`), and the operator token.
const NOT_FORWARDED: [&str; 4] = ["host", "content-length", "expect", TOKEN_HEADER];

/// Whether a header is hop-by-hop: one of [`HOP_BY_HOP`], or named by the message's own `Connection` header.
pub(super) fn hop_by_hop(name: &str, headers: &HeaderMap) -> bool {
    HOP_BY_HOP.iter().any(|f| name.eq_ignore_ascii_case(f))
        || headers
            .get_all(CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.split(',').any(|token| token.trim().eq_ignore_ascii_case(name)))
}

/// Serves one request: refused with a `gateway/…` code (ours), or forwarded and answered.
pub(super) async fn handle(gateway: &Gateway, peer: SocketAddr, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let method = req.method().to_string();
    let target = req.uri().path_and_query().map_or_else(String::new, |p| p.as_str().to_owned());
    let response = match forward(gateway, req).await {
        Ok(r) => r,
        Err(no) => answer::refuse(no.status, no.code, &no.detail),
    };
    let outcome = response.headers().get("terms-outcome").and_then(|v| v.to_str().ok()).unwrap_or("-");
    eprintln!("terms gateway: {peer} {method} {target} -> {} {outcome}", response.status().as_u16());
    response
}

type Answer = Response<Full<Bytes>>;

/// The gateway's own refusal, before anything is sent: the status, a `gateway/…` code (ours) and the detail.
struct Refusal {
    status: u16,
    code: &'static str,
    detail: String,
}

fn refuse(status: u16, code: &'static str, detail: &str) -> Refusal {
    Refusal { status, code, detail: detail.to_owned() }
}

async fn forward(gateway: &Gateway, req: Request<Incoming>) -> Result<Answer, Refusal> {
    let headers = req.headers().clone();
    local_host(&headers)?;
    not_a_browser(&headers)?;
    token(gateway, &headers)?;
    let url = seller_url(gateway, req.uri().path_and_query().map_or("/", |p| p.as_str()))?;
    if let Some(length) = headers.get(hyper::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        && length > MAX_REQUEST_BODY as u64
    {
        return Err(too_large(&length.to_string()));
    }
    let mut outgoing = Outgoing::new(req.method().as_str(), url.as_str());
    for (name, value) in &headers {
        if hop_by_hop(name.as_str(), &headers) || NOT_FORWARDED.contains(&name.as_str()) {
            continue;
        }
        let Ok(value) = value.to_str() else {
            return Err(refuse(400, "gateway/bad-header", &format!("the header {name} is not visible ASCII")));
        };
        outgoing = outgoing.header(name.as_str(), value);
    }
    let body = match Limited::new(req.into_body(), MAX_REQUEST_BODY).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => return Err(too_large("more than that")),
        Err(e) => return Err(refuse(400, "gateway/bad-body", &format!("the request body could not be read: {e}"))),
    };
    let outgoing = outgoing.body(body);
    let user_agent = headers.get(hyper::header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("no User-Agent");
    let mut options = gateway.client.options().clone().agent(format!("terms gateway ({user_agent})"));
    if let Some(required) = crate::discovery::for_gateway(&gateway.setup, gateway.fetch.as_ref(), url.as_str()).await {
        options = options.acceptance_required(required);
    }
    match gateway.client.send_with(outgoing, &options).await {
        Ok(outcome) => Ok(answer::outcome(outcome)),
        Err(ClientError::BodyTooLarge { size, .. }) => Err(too_large(&size.to_string())),
        Err(ClientError::Transport(why)) if why.contains("ENOTPUBLIC") => Err(refuse(
            403,
            "gateway/not-public",
            &format!("the seller's host resolves to an address that is not public ({why}); nothing was sent"),
        )),
        Err(ClientError::Transport(why)) => Err(refuse(
            502,
            "gateway/unreached",
            &format!("the seller did not answer: {why}; nothing was paid, so trying again is safe"),
        )),
        Err(e) => Err(refuse(400, "gateway/bad-request", &format!("{e}; nothing was sent"))),
    }
}

fn too_large(size: &str) -> Refusal {
    refuse(
        413,
        "gateway/body-too-large",
        &format!("the request body ({size} bytes) is larger than the {MAX_REQUEST_BODY} bytes the gateway takes"),
    )
}

/// The `Host` header must name this machine (`127.0.0.1`, `[::1]`, `localhost`): a web page that rebinds its own
/// name to 127.0.0.1 sends its own name there.
fn local_host(headers: &HeaderMap) -> Result<(), Refusal> {
    let host = headers.get(hyper::header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    if name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok_and(|ip| ip.to_canonical().is_loopback())
    {
        return Ok(());
    }
    Err(refuse(403, "gateway/not-local", &format!("the Host header {host:?} does not name this machine")))
}

/// A web page's request (it carries `Origin`, or a `Sec-Fetch-Site` other than `none`, a person's own navigation)
/// is refused: no page a browser loads pays through the gateway.
fn not_a_browser(headers: &HeaderMap) -> Result<(), Refusal> {
    let site = headers.get("sec-fetch-site").map(|v| v.to_str().unwrap_or("?"));
    if headers.contains_key(hyper::header::ORIGIN) || site.is_some_and(|s| s != "none") {
        return Err(refuse(
            403,
            "gateway/browser-refused",
            "a web page's request is not forwarded (Origin or Sec-Fetch-Site)",
        ));
    }
    Ok(())
}

/// The operator token, where one is configured, compared in constant time.
fn token(gateway: &Gateway, headers: &HeaderMap) -> Result<(), Refusal> {
    let Some(expected) = &gateway.token else { return Ok(()) };
    let Some(given) = headers.get(HeaderName::from_static(TOKEN_HEADER)) else {
        return Err(refuse(
            401,
            "gateway/token-missing",
            "this gateway requires its operator token (Terms-Gateway-Token)",
        ));
    };
    let same = given.len() == expected.len()
        && given.as_bytes().iter().zip(expected.as_bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0;
    if same {
        Ok(())
    } else {
        Err(refuse(401, "gateway/token-wrong", "the Terms-Gateway-Token header is not this gateway's token"))
    }
}

/// The seller's URL from the request's path: `/https://HOST/PATH?QUERY`, https only, the host public or the
/// `--local-seller` host.
fn seller_url(gateway: &Gateway, target: &str) -> Result<url::Url, Refusal> {
    let named = target.strip_prefix('/').unwrap_or(target);
    let url = url::Url::parse(named).map_err(|e| {
        refuse(400, "gateway/not-a-url", &format!("{named:?} is not a seller's URL ({e}): ask for /https://HOST/PATH"))
    })?;
    if url.scheme() != "https" {
        return Err(refuse(400, "gateway/not-https", &format!("{url}: only https sellers are forwarded to")));
    }
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    };
    if gateway.local_host.as_deref() == Some(authority.as_str()) {
        return Ok(url);
    }
    terms::http::check_link(url.as_str()).map_err(|e| {
        refuse(
            403,
            "gateway/not-public",
            &format!("{url}: {e}; only a public seller (or --local-seller) is forwarded to"),
        )
    })?;
    Ok(url)
}
