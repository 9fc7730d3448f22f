//! Who may ask the console anything: the operator holding the token `terms console` printed, from a page the console
//! served itself. Every request names the console's own address in `Host` (a DNS-rebound name is refused), carries
//! the token (the `HttpOnly`, `SameSite=Strict` cookie the printed link sets once, or an `Authorization: Bearer`
//! header), and comes from no other site (`Sec-Fetch-Site`); a form is posted from the console's own origin
//! (`Origin`) with the CSRF token the console wrote into it. Every answer forbids framing and names what the page
//! may load (the content security policy).

use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, StatusCode};

/// The content security policy of every answer: nothing but the console's stylesheet, inline images of `data:`,
/// forms posted back to it, and no frame around it. No script at all.
pub(crate) const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; \
     base-uri 'none'";

/// The most a posted form may hold, in bytes.
pub(crate) const MAX_FORM: usize = 4096;

/// The console's secrets and address.
#[derive(Debug, Clone)]
pub(crate) struct Guard {
    port: u16,
    token: String,
    csrf: String,
}

/// Why a request is refused: its status and a sentence for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused(pub(crate) StatusCode, pub(crate) String);

/// A request let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Admitted {
    /// The operator: answer it.
    Operator,
    /// The printed link (`?token=`) with the right token: set the cookie and send the browser to `location`, the
    /// same page without the token in its address.
    Login {
        /// Where to go next.
        location: String,
    },
}

/// Whether two secrets are equal, in time that depends on their lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A header's value as text; a missing or non-text one is `None`.
fn text<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

impl Guard {
    /// A console on `127.0.0.1:port` with these secrets.
    pub(crate) const fn new(port: u16, token: String, csrf: String) -> Self {
        Self { port, token, csrf }
    }

    /// The CSRF token every form carries.
    pub(crate) fn csrf(&self) -> &str {
        &self.csrf
    }

    /// `127.0.0.1:PORT`: the only `Host` the console answers.
    pub(crate) fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The console's origin, `http://127.0.0.1:PORT`.
    pub(crate) fn origin(&self) -> String {
        format!("http://{}", self.host())
    }

    /// The link `terms console` prints: the page with the token, once.
    pub(crate) fn link(&self) -> String {
        format!("{}/?token={}", self.origin(), self.token)
    }

    /// The cookie's name: one per port, as a browser keeps cookies per host, not per port.
    fn cookie_name(&self) -> String {
        format!("terms_console_{}", self.port)
    }

    /// The `Set-Cookie` value of a login: the token, for this site's own requests only, out of scripts' reach.
    pub(crate) fn cookie(&self) -> String {
        format!("{}={}; Path=/; HttpOnly; SameSite=Strict", self.cookie_name(), self.token)
    }

    /// Checks a request before anything reads it: its `Host`, its site, its token, and for a form its origin.
    pub(crate) fn admit(
        &self,
        method: &Method,
        path: &str,
        query: &str,
        headers: &HeaderMap,
    ) -> Result<Admitted, Refused> {
        let refused = |status, why: &str| Err(Refused(status, why.to_owned()));
        if text(headers, &header::HOST) != Some(self.host().as_str()) {
            return refused(
                StatusCode::MISDIRECTED_REQUEST,
                &format!("the console answers only requests for http://{}/", self.host()),
            );
        }
        let site = HeaderName::from_static("sec-fetch-site");
        if let Some(site) = headers.get(&site)
            && !matches!(site.to_str(), Ok("same-origin" | "none"))
        {
            return refused(StatusCode::FORBIDDEN, "the console answers no request made from another site");
        }
        let is_form = method == Method::POST;
        if is_form {
            // A browser always names the origin of a form it posts; a form from another origin (or from an opaque
            // one, `null`) is refused before its token is looked at.
            if let Some(origin) = headers.get(header::ORIGIN)
                && origin.to_str().ok() != Some(self.origin().as_str())
            {
                return refused(StatusCode::FORBIDDEN, "the console takes forms from its own pages only");
            }
        } else if method != Method::GET && method != Method::HEAD {
            return refused(StatusCode::METHOD_NOT_ALLOWED, "the console answers GET and POST only");
        }
        if self.carries_token(headers) {
            return Ok(Admitted::Operator);
        }
        let given = url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "token").map(|(_, v)| v);
        match given {
            Some(token) if !is_form && same(token.as_bytes(), self.token.as_bytes()) => {
                let rest: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
                    .filter(|(k, _)| k != "token")
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
                let location = if rest.is_empty() {
                    path.to_owned()
                } else {
                    format!(
                        "{path}?{}",
                        url::form_urlencoded::Serializer::new(String::new()).extend_pairs(rest).finish()
                    )
                };
                Ok(Admitted::Login { location })
            }
            Some(_) => refused(StatusCode::UNAUTHORIZED, "that is not the console's token"),
            None => refused(
                StatusCode::UNAUTHORIZED,
                "open the link `terms console` printed: every request needs the console's token",
            ),
        }
    }

    /// Whether the request carries the token: in the console's cookie, or as `Authorization: Bearer TOKEN`.
    fn carries_token(&self, headers: &HeaderMap) -> bool {
        let name = self.cookie_name();
        let in_cookie = headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).any(|cookies| {
            cookies
                .split(';')
                .filter_map(|c| c.trim().split_once('='))
                .any(|(k, v)| k == name && same(v.as_bytes(), self.token.as_bytes()))
        });
        let bearer = text(headers, &header::AUTHORIZATION)
            .and_then(|v| v.strip_prefix("Bearer "))
            .is_some_and(|t| same(t.trim().as_bytes(), self.token.as_bytes()));
        in_cookie || bearer
    }

    /// Checks a posted form's CSRF token; the form's fields come back where it is the console's.
    pub(crate) fn form(&self, body: &[u8]) -> Result<Vec<(String, String)>, Refused> {
        let fields: Vec<(String, String)> =
            url::form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        let csrf = fields.iter().find(|(k, _)| k == "csrf").map(|(_, v)| v.as_bytes());
        if csrf.is_some_and(|c| same(c, self.csrf.as_bytes())) {
            Ok(fields)
        } else {
            Err(Refused(
                StatusCode::FORBIDDEN,
                "the form did not carry the console's CSRF token: reload the page".into(),
            ))
        }
    }
}

/// The headers of every answer: the content security policy, no framing, no sniffing, no referrer to another site,
/// no caching.
pub(crate) fn secure(headers: &mut HeaderMap) {
    let fixed: [(HeaderName, &'static str); 7] = [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        // Not `no-referrer`: under it a browser names the origin of a form it posts `null`, and the console's own
        // forms would be refused (the browser test found it). `same-origin` gives other sites no referrer.
        (header::REFERRER_POLICY, "same-origin"),
        (header::CACHE_CONTROL, "no-store"),
        (HeaderName::from_static("cross-origin-opener-policy"), "same-origin"),
        (HeaderName::from_static("cross-origin-resource-policy"), "same-origin"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard::new(8401, "t0ken".into(), "c5rf".into())
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap());
        }
        map
    }

    fn status(r: Result<Admitted, Refused>) -> Result<Admitted, StatusCode> {
        r.map_err(|Refused(s, _)| s)
    }

    #[test]
    fn the_token_the_host_the_site_and_the_origin_are_each_required() {
        let g = guard();
        let host = ("host", "127.0.0.1:8401");
        let cookie = ("cookie", "other=1; terms_console_8401=t0ken");
        let get = |h: &[(&str, &str)], q: &str| status(g.admit(&Method::GET, "/", q, &headers(h)));
        let post = |h: &[(&str, &str)]| status(g.admit(&Method::POST, "/approve", "", &headers(h)));
        assert_eq!(get(&[host, cookie], ""), Ok(Admitted::Operator));
        assert_eq!(get(&[host, ("authorization", "Bearer t0ken")], ""), Ok(Admitted::Operator));
        assert_eq!(get(&[host], "token=t0ken&x=1"), Ok(Admitted::Login { location: "/?x=1".into() }));
        assert_eq!(get(&[host], ""), Err(StatusCode::UNAUTHORIZED));
        assert_eq!(get(&[host], "token=t0kem"), Err(StatusCode::UNAUTHORIZED));
        assert_eq!(get(&[host, ("cookie", "terms_console_8401=t0ke")], ""), Err(StatusCode::UNAUTHORIZED));
        assert_eq!(get(&[host, ("cookie", "terms_console_8402=t0ken")], ""), Err(StatusCode::UNAUTHORIZED));
        assert_eq!(get(&[host, ("authorization", "Bearer nope")], ""), Err(StatusCode::UNAUTHORIZED));
        // A rebound name, another port, no Host: refused even with the token.
        for h in ["localhost:8401", "evil.example:8401", "127.0.0.1:8402", "127.0.0.1"] {
            assert_eq!(get(&[("host", h), cookie], ""), Err(StatusCode::MISDIRECTED_REQUEST), "{h}");
        }
        assert_eq!(get(&[cookie], ""), Err(StatusCode::MISDIRECTED_REQUEST));
        for site in ["cross-site", "same-site"] {
            assert_eq!(get(&[host, cookie, ("sec-fetch-site", site)], ""), Err(StatusCode::FORBIDDEN));
        }
        assert_eq!(get(&[host, cookie, ("sec-fetch-site", "none")], ""), Ok(Admitted::Operator));
        // A form: from its own origin, or with no origin (not a browser); never another, nor `null`.
        assert_eq!(post(&[host, cookie, ("origin", "http://127.0.0.1:8401")]), Ok(Admitted::Operator));
        assert_eq!(post(&[host, cookie]), Ok(Admitted::Operator));
        for origin in ["http://evil.example", "null", "http://localhost:8401", "https://127.0.0.1:8401"] {
            assert_eq!(post(&[host, cookie, ("origin", origin)]), Err(StatusCode::FORBIDDEN), "{origin}");
        }
        // The printed link logs in a page, never a form.
        assert_eq!(
            status(g.admit(&Method::POST, "/approve", "token=t0ken", &headers(&[host]))),
            Err(StatusCode::UNAUTHORIZED)
        );
        let put = g.admit(&Method::PUT, "/", "", &headers(&[host, cookie]));
        assert_eq!(status(put), Err(StatusCode::METHOD_NOT_ALLOWED));
    }

    #[test]
    fn a_form_needs_the_csrf_token() {
        let g = guard();
        assert!(g.form(b"id=ap_1&csrf=c5rf").is_ok());
        for body in [&b"id=ap_1"[..], b"id=ap_1&csrf=", b"id=ap_1&csrf=c5rg", b"csrf=c5rf0", b"csrf=t0ken"] {
            assert_eq!(g.form(body).map_err(|r| r.0), Err(StatusCode::FORBIDDEN), "{}", String::from_utf8_lossy(body));
        }
        assert!(same(b"abc", b"abc") && !same(b"abc", b"abd") && !same(b"abc", b"ab"));
    }
}
