//! Stdio: a server started as a child process, spoken to over its stdin and stdout. It owns
//! spawning, surfacing the child's stderr (to a callback, line by line, each line bounded) and
//! ending the child (on close, and killed if the client is dropped); it must not know framing
//! (that is `lines.rs`).

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

use super::lines::Lines;
use crate::error::{Error, ErrorKind};
use crate::handler::Handler;
use crate::limits::ClientLimits;

/// How long a child may take to exit after its stdin closes before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);
/// The longest stderr line handed to the callback, in bytes (the rest of the line is cut).
const STDERR_LINE: usize = 8 * 1024;

/// What receives the child's stderr, line by line.
pub(crate) type StderrSink = Arc<dyn Fn(&str) + Send + Sync>;

pub(crate) fn spawn(
    mut command: Command,
    limits: ClientLimits,
    handler: Arc<dyn Handler>,
    stderr: Option<StderrSink>,
    sole_call: bool,
) -> Result<Lines, Error> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(if stderr.is_some() {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|_| {
        Error::new(
            ErrorKind::Connect,
            "the server process could not be started",
        )
    })?;
    let closed = || Error::new(ErrorKind::Connect, "the server process has no pipes");
    let stdin = child.stdin.take().ok_or_else(closed)?;
    let stdout = child.stdout.take().ok_or_else(closed)?;
    if let (Some(sink), Some(err)) = (stderr, child.stderr.take()) {
        tokio::spawn(async move {
            let mut reader = BufReader::new(err);
            let mut line = Vec::new();
            loop {
                line.clear();
                match take_line(&mut reader, &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let end = line.len().min(STDERR_LINE);
                        sink(String::from_utf8_lossy(&line[..end]).trim_end());
                    }
                }
            }
        });
    }
    let child = Arc::new(Mutex::new(child));
    Ok(Lines::start(stdout, stdin, limits, handler, sole_call)
        .on_close(move || Box::pin(async move { end(&mut *child.lock().await).await })))
}

/// Waits for the child to exit after its stdin closed; kills it past the grace period.
async fn end(child: &mut Child) {
    if tokio::time::timeout(EXIT_GRACE, child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

/// `read_until` that stops storing past [`STDERR_LINE`] (the rest is consumed and dropped).
async fn take_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(total);
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(end) => (end + 1, true),
            None => (buf.len(), false),
        };
        let room = STDERR_LINE.saturating_sub(line.len()).min(take);
        line.extend_from_slice(&buf[..room]);
        reader.consume(take);
        total += take;
        if done {
            return Ok(total);
        }
    }
}
