//! An external signer: a command (run by `sh -c`) that reads one `SigningRequest` as JSON on stdin and prints its
//! answer on stdout: a `0x` signature, or a JSON value. A command that exits non-zero, runs past its deadline (it is
//! killed) or prints anything else is a signer failure, and the gate signs nothing.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use crate::signer::{Answer, BoxFuture, Signer, SignerError, SigningRequest, Wallet};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The command and the address it signs for.
#[derive(Debug, Clone)]
pub(crate) struct Command {
    pub(crate) command: String,
    pub(crate) address: String,
    pub(crate) timeout: Duration,
}

/// The command on one chain.
#[derive(Debug)]
struct OnChain {
    command: Command,
    account: String,
}

impl Wallet for Command {
    fn on(&self, network: &str) -> Option<Arc<dyn Signer>> {
        let chain = network.strip_prefix("eip155:")?;
        if chain.is_empty() || chain.starts_with('0') || !chain.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(Arc::new(OnChain { command: self.clone(), account: format!("{network}:{}", self.address) }))
    }
}

impl Signer for OnChain {
    fn account(&self) -> &str {
        &self.account
    }

    fn sign<'a>(&'a self, request: &'a SigningRequest) -> BoxFuture<'a, Result<Answer, SignerError>> {
        Box::pin(async move {
            let input = serde_json::to_vec(request).map_err(SignerError::new)?;
            let answered =
                run(&self.command.command, &input, self.command.timeout).await.and_then(|out| answer(&out, request));
            // The gate keeps a signer's message out of its decline: say it here, where a person reads it.
            if let Err(e) = &answered {
                eprintln!("terms: {e}");
            }
            answered
        })
    }
}

/// Runs the command in its own process group; past the deadline the whole group is killed, so a command's own
/// children (a `sleep` under `sh`) do not outlive it holding its output open.
async fn run(command: &str, input: &[u8], timeout: Duration) -> Result<Vec<u8>, SignerError> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| SignerError::new(format!("the signer command did not start: {e}")))?;
    let group = child.id();
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let talk = async {
        if let Some(stdin) = stdin.as_mut() {
            // A command that does not read its input is answered by its output all the same.
            let _ = stdin.write_all(input).await;
        }
        drop(stdin.take());
        let (mut out, mut said) = (Vec::new(), Vec::new());
        let read_out = async {
            match stdout.as_mut() {
                Some(s) => s.read_to_end(&mut out).await.map(drop),
                None => Ok(()),
            }
        };
        let read_err = async {
            match stderr.as_mut() {
                Some(s) => s.read_to_end(&mut said).await.map(drop),
                None => Ok(()),
            }
        };
        let (read, _) = tokio::join!(read_out, read_err);
        read.map_err(SignerError::new)?;
        // The command's own messages, passed on (its stderr is a pipe, so a child it leaves behind holds nothing
        // of ours open).
        if !said.is_empty() {
            eprint!("{}", String::from_utf8_lossy(&said));
        }
        let status = child.wait().await.map_err(SignerError::new)?;
        Ok::<_, SignerError>((out, status))
    };
    let Ok(done) = tokio::time::timeout(timeout, talk).await else {
        if let Some(pid) = group {
            let _ = std::process::Command::new("kill").args(["-s", "KILL", "--", &format!("-{pid}")]).status();
        }
        return Err(SignerError::new(format!("the signer command gave no answer within {} s", timeout.as_secs())));
    };
    let (out, status) = done?;
    if !status.success() {
        return Err(SignerError::new(format!("the signer command failed ({status})")));
    }
    Ok(out)
}

/// The command's output as an answer: a 65-byte `0x` signature for an `eip712` request; else JSON.
fn answer(out: &[u8], request: &SigningRequest) -> Result<Answer, SignerError> {
    let text = std::str::from_utf8(out).map_err(|_| SignerError::new("the signer command printed no UTF-8"))?.trim();
    let hex65 =
        |t: &str| t.strip_prefix("0x").is_some_and(|h| h.len() == 130 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    if matches!(request, SigningRequest::Eip712 { .. }) {
        let sig = text.trim_matches('"');
        return if hex65(sig) {
            Ok(Answer::from(sig))
        } else {
            Err(SignerError::new("the signer command did not print a 65-byte 0x signature"))
        };
    }
    if hex65(text) {
        return Ok(Answer::from(text));
    }
    serde_json::from_str(text)
        .map(Answer::new)
        .map_err(|_| SignerError::new("the signer command printed no JSON answer"))
}
