//! The console's HTML: every text from the journal goes through [`esc`] (a seller's terms, a URL, an agent's name
//! are anyone's text), the page frame with its navigation and its short poll, and the one stylesheet.

use std::fmt::Write as _;

/// `text` with `&`, `<`, `>`, `"` and `'` written as character references: safe in an element and in a quoted
/// attribute. Control characters other than tab and newline become U+FFFD.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' => out.push(c),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a query value (percent-encoded), for a link the console writes.
pub(crate) fn query(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The pages of the navigation: path and name.
const PAGES: [(&str, &str); 3] = [("/", "Approvals"), ("/history", "History"), ("/budgets", "Budgets")];

/// How often a page that polls reloads itself, in seconds.
pub(crate) const POLL_SECONDS: u32 = 5;

/// A whole page: `title`, the navigation with `current` marked, and `body` (already HTML). A page that `polls`
/// reloads itself every [`POLL_SECONDS`] (a `<meta http-equiv=refresh>`: no script).
pub(crate) fn page(title: &str, current: &str, polls: bool, body: &str) -> String {
    let mut html = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
    if polls {
        let _ = writeln!(html, "<meta http-equiv=\"refresh\" content=\"{POLL_SECONDS}\">");
    }
    let _ = write!(
        html,
        "<title>{} · terms console</title>\n<link rel=\"stylesheet\" href=\"/console.css\">\n</head><body>\n<header>\
         <strong>terms console</strong><nav>",
        esc(title)
    );
    for (path, name) in PAGES {
        let mark = if path == current { " aria-current=\"page\"" } else { "" };
        let _ = write!(html, "<a href=\"{path}\"{mark}>{name}</a>");
    }
    let _ =
        write!(html, "</nav></header>\n<main id=\"main\">\n<h1>{}</h1>\n{body}</main>\n</body></html>\n", esc(title));
    html
}

/// The first `lines` non-empty lines of the terms, each cut at 160 characters, as a `<pre>` (text only).
pub(crate) fn terms_excerpt(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let shown: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(lines)
        .map(|l| {
            let cut: String = l.chars().take(160).collect();
            if cut.len() < l.len() { format!("{cut}…") } else { cut }
        })
        .collect();
    format!("<pre class=\"terms\">{}</pre>", esc(&shown.join("\n")))
}

/// The stylesheet (`/console.css`): the only thing a page loads besides itself.
pub(crate) const CSS: &str = "\
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{display:flex;gap:24px;align-items:center;padding:10px 24px;background:#1d2330;color:#fff}
header nav a{color:#c9d3e6;margin-right:16px;text-decoration:none}
header nav a[aria-current=page]{color:#fff;border-bottom:2px solid #7aa2ff}
main{padding:8px 24px 40px;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin:18px 0 6px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #e3e6ec;vertical-align:top}
th{font-weight:600;background:#eef1f6}
code,.mono{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
.card{background:#fff;border:1px solid #dde2ea;border-radius:6px;padding:12px 16px;margin:12px 0}
.card dl{display:grid;grid-template-columns:110px 1fr;gap:2px 12px;margin:8px 0}
.card dt{color:#5b6475}.card dd{margin:0}
pre.terms{background:#f3f4f7;border-left:3px solid #b8c2d6;padding:6px 10px;white-space:pre-wrap;margin:4px 0}
pre.json{background:#f3f4f7;padding:8px;white-space:pre-wrap;word-break:break-all;font-size:12px}
form{display:inline}button{font:inherit;padding:5px 14px;border-radius:4px;border:1px solid #8893a8;cursor:pointer}
button.approve{background:#1f7a3d;color:#fff;border-color:#1f7a3d}button.deny{background:#fff;color:#a3231a}
.state{display:inline-block;padding:1px 8px;border-radius:10px;background:#e3e6ec;font-size:12px}
.state-settled,.state-approved,.state-used{background:#d7f0de}.state-unknown,.state-pending{background:#fdf0c8}
.state-denied,.state-expired{background:#f7d9d6}
.note{color:#5b6475}.said{background:#e8f0ff;border:1px solid #b9cdfa;padding:8px 12px;border-radius:6px}
.chart{background:#fff;border:1px solid #dde2ea;border-radius:6px}
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_text_is_written_as_text() {
        let hostile = "<script>alert(1)</script>\"'&\u{7}";
        assert_eq!(esc(hostile), "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;\u{fffd}");
        let shown = terms_excerpt(b"\n<img src=x onerror=alert(1)>\nline two\nline three\n", 2);
        assert_eq!(shown, "<pre class=\"terms\">&lt;img src=x onerror=alert(1)&gt;\nline two</pre>");
        let page = page("<b>x</b>", "/", true, "");
        assert!(page.contains("<title>&lt;b&gt;x&lt;/b&gt; · terms console</title>"), "{page}");
        assert!(page.contains("http-equiv=\"refresh\""));
        assert_eq!(query("a b&c=d"), "a+b%26c%3Dd");
    }
}
