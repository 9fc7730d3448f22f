//! The stdio transport with bounds: every request line is read with a length limit and checked for depth and JSON
//! syntax before rmcp sees it, and each one refused is answered (a JSON-RPC error with the limit in its message)
//! or, where no id can be read from it, reported on stderr. Nothing is dropped in silence.

use std::io;

use rmcp::ServiceExt as _;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::BuyerServer;

/// The longest request line read, in bytes (without its newline): 16 MiB.
pub const MAX_LINE: usize = 16 << 20;

/// The deepest nesting of arrays and objects a request may have: the message object is level 1 and a tool
/// argument's value level 4, so an argument nests at most 124 levels.
pub const MAX_DEPTH: usize = 127;

/// How much of an over-long line is kept to read its id from.
const PREFIX: usize = 64 << 10;

/// JSON-RPC's parse error.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's invalid request.
const INVALID_REQUEST: i64 = -32600;

/// Serves `server` on this process's stdin and stdout, with the bounds of [`MAX_LINE`] and [`MAX_DEPTH`].
pub async fn serve_stdio(server: BuyerServer) -> io::Result<()> {
    serve_bounded(server, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves `server` on newline-delimited JSON-RPC from `input` to `output`, with the bounds of [`MAX_LINE`] and
/// [`MAX_DEPTH`]; ends when the input ends (or the session does).
pub async fn serve_bounded<R, W>(server: BuyerServer, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (server_end, ours) = tokio::io::duplex(1 << 16);
    let (from_server, to_server) = tokio::io::split(ours);
    let (refusals, refused) = mpsc::unbounded_channel::<Vec<u8>>();
    let reader = tokio::spawn(read_requests(BufReader::new(input), to_server, refusals));
    let writer = tokio::spawn(write_answers(BufReader::new(from_server), refused, output));
    // rmcp counts a line's newline in its own bound (and drops a longer line with no answer): every line passed on is
    // at most MAX_LINE bytes and its newline.
    let (server_in, server_out) = tokio::io::split(server_end);
    let transport = AsyncRwTransport::new_server(server_in, server_out).with_max_line_length(MAX_LINE + 1);
    let served = match server.serve(transport).await {
        Ok(running) => running.waiting().await.map(drop).map_err(io::Error::other),
        Err(e) => Err(io::Error::other(e.to_string())),
    };
    reader.abort();
    let written = writer.await.map_err(io::Error::other)?;
    served.and(written)
}

/// What one read of a line gave.
enum Line {
    /// A whole line within [`MAX_LINE`].
    Whole(Vec<u8>),
    /// A line over [`MAX_LINE`]: its length and its first [`PREFIX`] bytes.
    TooLong(usize, Vec<u8>),
    /// The end of the input.
    End,
}

async fn next_line<R: AsyncBufRead + Unpin>(input: &mut R) -> io::Result<Line> {
    let mut line = Vec::new();
    let mut length = 0usize;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if length == 0 { Line::End } else { finished(line, length) });
        }
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (chunk.get(..i).unwrap_or_default(), true),
            None => (chunk, false),
        };
        length = length.saturating_add(part.len());
        let keep = if length > MAX_LINE { PREFIX } else { MAX_LINE };
        let room = keep.saturating_sub(line.len());
        line.extend_from_slice(part.get(..room.min(part.len())).unwrap_or_default());
        let used = part.len() + usize::from(done);
        input.consume(used);
        if done {
            return Ok(finished(line, length));
        }
    }
}

fn finished(mut line: Vec<u8>, length: usize) -> Line {
    if length > MAX_LINE {
        line.truncate(PREFIX);
        Line::TooLong(length, line)
    } else {
        Line::Whole(line)
    }
}

async fn read_requests<R, W>(mut input: R, mut to_server: W, refusals: mpsc::UnboundedSender<Vec<u8>>)
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let refusal = match next_line(&mut input).await {
            Ok(Line::End) | Err(_) => break,
            Ok(Line::TooLong(length, prefix)) => Some(refuse(
                &prefix,
                INVALID_REQUEST,
                &format!("request line of {length} bytes is over the limit of {MAX_LINE} bytes (16 MiB)"),
            )),
            Ok(Line::Whole(line)) => match check(&line) {
                Ok(()) if line.iter().all(u8::is_ascii_whitespace) => None,
                Ok(()) => {
                    let mut line = line;
                    line.push(b'\n');
                    if to_server.write_all(&line).await.is_err() || to_server.flush().await.is_err() {
                        break;
                    }
                    None
                }
                Err((code, message)) => Some(refuse(&line, code, &message)),
            },
        };
        if let Some(Some(answer)) = refusal
            && refusals.send(answer).is_err()
        {
            break;
        }
    }
    let _ = to_server.shutdown().await;
}

/// The error answer to a refused line, or `None` (after a line on stderr) where no id can be read from it.
fn refuse(line: &[u8], code: i64, message: &str) -> Option<Vec<u8>> {
    match read_id(line) {
        Some(id) => {
            let answer = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
            let mut bytes = serde_json::to_vec(&answer).unwrap_or_default();
            bytes.push(b'\n');
            Some(bytes)
        }
        None => {
            eprintln!("terms-mcp: dropped a request with no readable id ({code}): {message}");
            None
        }
    }
}

/// A line's depth and syntax: the refusal's code and message where it fails.
fn check(line: &[u8]) -> Result<(), (i64, String)> {
    let depth = depth(line);
    if depth > MAX_DEPTH {
        return Err((
            INVALID_REQUEST,
            format!("request nested {depth} levels deep is over the limit of {MAX_DEPTH} levels"),
        ));
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    serde_json::from_slice::<serde::de::IgnoredAny>(line)
        .map(drop)
        .map_err(|e| (PARSE_ERROR, format!("request is not JSON: {e}")))
}

/// The deepest nesting of arrays and objects outside strings.
fn depth(line: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in line {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The `id` member of a top-level object (a number or a string), read without parsing the rest: a line too deep,
/// too long (only its start is kept) or broken after its id still yields it.
fn read_id(line: &[u8]) -> Option<Value> {
    let mut at = skip_ws(line, 0);
    if line.get(at) != Some(&b'{') {
        return None;
    }
    loop {
        at = skip_ws(line, at + 1);
        let key_end = string_end(line, at)?;
        let key: String = serde_json::from_slice(line.get(at..key_end)?).ok()?;
        at = skip_ws(line, key_end);
        if line.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_ws(line, at + 1);
        let end = value_end(line, start)?;
        if key == "id" {
            return serde_json::from_slice::<Value>(line.get(start..end)?)
                .ok()
                .filter(|v| v.is_number() || v.is_string());
        }
        at = skip_ws(line, end);
        if line.get(at) != Some(&b',') {
            return None;
        }
    }
}

fn skip_ws(line: &[u8], mut at: usize) -> usize {
    while line.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The index after the string starting at `at`.
fn string_end(line: &[u8], at: usize) -> Option<usize> {
    if line.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match line.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The index after the value starting at `at` (nesting counted, not recursed).
fn value_end(line: &[u8], at: usize) -> Option<usize> {
    match line.get(at)? {
        b'"' => string_end(line, at),
        b'{' | b'[' => {
            let (mut depth, mut i) = (0usize, at);
            loop {
                match line.get(i)? {
                    b'"' => {
                        i = string_end(line, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while line.get(i).is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace()) {
                i += 1;
            }
            (i > at).then_some(i)
        }
    }
}

async fn write_answers<R, W>(
    mut from_server: R,
    mut refused: mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: W,
) -> io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut line = Vec::new();
    let mut refusals_open = true;
    loop {
        tokio::select! {
            read = from_server.read_until(b'\n', &mut line) => {
                if read? == 0 {
                    break;
                }
                output.write_all(&line).await?;
                output.flush().await?;
                line.clear();
            }
            answer = refused.recv(), if refusals_open => match answer {
                Some(answer) => {
                    output.write_all(&answer).await?;
                    output.flush().await?;
                }
                None => refusals_open = false,
            },
        }
    }
    while let Ok(answer) = refused.try_recv() {
        output.write_all(&answer).await?;
    }
    output.flush().await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ids_are_read_from_broken_lines() {
        assert_eq!(read_id(br#"{"jsonrpc":"2.0","id":7,"method":"#), Some(json!(7)));
        assert_eq!(read_id(br#" { "a" : [1,{"id":2}], "id" : "x\"y" , "#), Some(json!("x\"y")));
        assert_eq!(read_id(br#"{"method":"x","params":[[[["#), None);
        assert_eq!(read_id(br#"{"id":null}"#), None);
        assert_eq!(read_id(b"[1]"), None);
    }

    #[test]
    fn depth_counts_outside_strings() {
        assert_eq!(depth(br#"{"a":[{"b":"[[[[{{"}]}"#), 3);
        assert_eq!(depth(br#"{"a":"\"[["}"#), 1);
        assert_eq!(depth(b"1"), 0);
    }
}
