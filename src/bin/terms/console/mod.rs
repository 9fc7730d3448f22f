//! `terms console`: the operator's pages on `127.0.0.1` (ours). The approvals waiting for a person, with approve and
//! deny; the history, newest first, each payment with its terms, state and receipt; each budget's spend with a
//! chart of its window; a purchase's full record. It reads the journal the agents write (a SQLite file, or a
//! PostgreSQL server for a fleet), one short query at a time, and decides approvals through the library's queue.
//! Only the operator holding the token it prints gets an answer ([`guard`]).

mod budgets;
mod guard;
mod html;
mod pages;

use std::convert::Infallible;
use std::io::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use terms::safety::ApprovalError;
use terms::safety::journal::Journal;
use terms::safety::policy::Policy;
use terms::{Clock, SystemClock};

use crate::setup::Setup;
use crate::units::Assets;
use crate::{Fail, exit};
use guard::{Admitted, Guard, Refused};

/// `terms console`'s flags.
#[derive(clap::Args, Debug)]
pub(crate) struct ConsoleArgs {
    /// The port on 127.0.0.1 to serve on (0: any free one). The console never listens on another address.
    #[arg(long, default_value_t = 8401)]
    port: u16,
}

/// What every request reads.
pub(crate) struct Cx {
    journal: Arc<dyn Journal>,
    policy: Option<Arc<Policy>>,
    assets: Assets,
    clock: Arc<dyn Clock>,
    guard: Guard,
}

/// 32 bytes of the system's random source, in hex.
fn secret() -> Result<String, Fail> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Fail(exit::INTERNAL, format!("the system's random source: {e}")))?;
    Ok(hex::encode(bytes))
}

/// Serves the console until the process is stopped.
pub(crate) async fn run(setup: &Setup, args: &ConsoleArgs) -> Result<u8, Fail> {
    let journal = crate::setup::journal(setup).await?;
    let listener = tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, args.port)))
        .await
        .map_err(|e| Fail(exit::USAGE, format!("127.0.0.1:{}: {e}", args.port)))?;
    let port = listener.local_addr().map_err(|e| Fail(exit::INTERNAL, e.to_string()))?.port();
    let guard = Guard::new(port, secret()?, secret()?);
    let link = guard.link();
    let cx = Arc::new(Cx {
        journal,
        policy: setup.policy.clone(),
        assets: setup.assets.clone(),
        clock: Arc::new(SystemClock),
        guard,
    });
    // The link on stdout, alone on its line, for the operator (and a script) to open; the rest on stderr.
    println!("{link}");
    let _ = std::io::stdout().flush();
    eprintln!("terms: the console is on http://127.0.0.1:{port}/ : open the link above (it holds the operator token)");
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let cx = cx.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let cx = cx.clone();
                async move { Ok::<_, Infallible>(answer(&cx, request).await) }
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

/// A page or a refusal, with the headers every answer carries.
fn respond(status: StatusCode, content_type: &'static str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    guard::secure(response.headers_mut());
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A refusal or failure, said on a page of its own.
fn said(status: StatusCode, why: &str) -> Response<Full<Bytes>> {
    let body = format!("<p class=\"said\" id=\"refused\">{}</p>", html::esc(why));
    let title = status.canonical_reason().unwrap_or("Refused");
    respond(status, "text/html; charset=utf-8", html::page(title, "", false, &body))
}

/// A redirect after a login or a decision (`303 See Other`), with `cookie` set where given.
fn see_other(location: &str, cookie: Option<String>) -> Response<Full<Bytes>> {
    let mut response = respond(StatusCode::SEE_OTHER, "text/plain; charset=utf-8", String::new());
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    if let Some(value) = cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// One request: admitted by the guard first, then routed.
async fn answer(cx: &Cx, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query().unwrap_or("").to_owned();
    match cx.guard.admit(&parts.method, &path, &query, &parts.headers) {
        Err(Refused(status, why)) => return said(status, &why),
        Ok(Admitted::Login { location }) => return see_other(&location, Some(cx.guard.cookie())),
        Ok(Admitted::Operator) => {}
    }
    if parts.method == Method::POST {
        let Ok(collected) = Limited::new(body, guard::MAX_FORM).collect().await else {
            return said(StatusCode::PAYLOAD_TOO_LARGE, "the form is larger than the console takes");
        };
        return match cx.guard.form(&collected.to_bytes()) {
            Err(Refused(status, why)) => said(status, &why),
            Ok(fields) => decide(cx, &path, &fields).await,
        };
    }
    let param = |name: &str| {
        url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
    };
    let page = match path.as_str() {
        "/console.css" => return respond(StatusCode::OK, "text/css; charset=utf-8", html::CSS.to_owned()),
        "/" => pages::approvals(cx, param("decided").as_deref()).await.map(Some),
        "/history" => pages::history(cx).await.map(Some),
        "/budgets" => budgets::budgets(cx).await.map(Some),
        "/purchase" => match param("key") {
            Some(key) => pages::purchase(cx, &key).await,
            None => Ok(None),
        },
        _ => Ok(None),
    };
    match page {
        Ok(Some(html)) => respond(StatusCode::OK, "text/html; charset=utf-8", html),
        Ok(None) => said(StatusCode::NOT_FOUND, "no such page or purchase"),
        Err(e) => said(StatusCode::INTERNAL_SERVER_ERROR, &format!("the journal: {e}")),
    }
}

/// A person's decision from a form (`/approve` or `/deny`, the approval's `id`): recorded once, through the queue.
async fn decide(cx: &Cx, path: &str, fields: &[(String, String)]) -> Response<Full<Bytes>> {
    let approve = match path {
        "/approve" => true,
        "/deny" => false,
        _ => return said(StatusCode::NOT_FOUND, "no such form"),
    };
    let Some(id) = fields.iter().find(|(k, _)| k == "id").map(|(_, v)| v.as_str()) else {
        return said(StatusCode::BAD_REQUEST, "the form names no approval");
    };
    let now = cx.clock.now();
    let decided = if approve { cx.journal.approve(id, now).await } else { cx.journal.deny(id, now).await };
    match decided {
        Ok(a) => see_other(&format!("/?decided={}", html::query(&a.id)), None),
        Err(e @ ApprovalError::NotFound(_)) => said(StatusCode::NOT_FOUND, &e.to_string()),
        Err(e @ ApprovalError::Journal(_)) => said(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        Err(e) => said(StatusCode::CONFLICT, &e.to_string()),
    }
}
