//! Newline-delimited JSON-RPC over any byte pipe: a child's stdin and stdout, or an in-memory
//! pipe to an endpoint in the same process. It owns framing (each line bounded by
//! [`ClientLimits::max_message_bytes`]), matching answers to requests, answering server
//! requests through the handler (the client's, or with `sole_call` the one outstanding
//! request's own, when it is the only one), and `notifications/cancelled` when a request's
//! future is dropped; it must not know what is on the other end of the pipe.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tollgate_json::{JsonNumber, JsonObject, JsonValue};

use super::{BoxFuture, Outgoing, RevisionCell, Transport, answer, for_call};
use crate::error::{Error, ErrorKind};
use crate::handler::Handler;
use crate::limits::ClientLimits;
use crate::message::{self, Incoming};
use crate::revision::Revision;

/// Lines waiting to be written, at most.
const QUEUE: usize = 64;

/// A request waiting for its answer, with its own handler (kept only with `sole_call`).
struct Waiting {
    answer: oneshot::Sender<Result<JsonValue, Error>>,
    handler: Option<Arc<dyn Handler>>,
}

type Pending = Arc<Mutex<Option<HashMap<u64, Waiting>>>>;

/// What ends the other side when the transport closes.
type OnClose = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

/// The line transport. Dropping it closes the writing side (the peer sees end of input).
pub(crate) struct Lines {
    out: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    pending: Pending,
    next_id: AtomicU64,
    /// Ends the child or the in-process server when the transport closes.
    on_close: Mutex<Option<OnClose>>,
    /// The revision in use, which the reader needs (batches, requests it defines).
    revision: Arc<RevisionCell>,
    /// Whether a request's own handler is kept, for the server's requests while it is the
    /// only one outstanding.
    sole_call: bool,
}

impl Lines {
    /// Starts the reader and writer tasks over `input` (what the server writes) and `output`.
    /// With `sole_call`, a server request or log message that arrives while exactly one
    /// request is outstanding goes to that request's own handler when it has one (nothing on
    /// a line names the call it belongs to); otherwise to `handler`.
    pub(crate) fn start<R, W>(
        input: R,
        output: W,
        limits: ClientLimits,
        handler: Arc<dyn Handler>,
        sole_call: bool,
    ) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(QUEUE);
        tokio::spawn(async move {
            let mut output = output;
            while let Some(mut line) = rx.recv().await {
                line.push(b'\n');
                if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                    break;
                }
            }
            let _ = output.shutdown().await;
        });
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        let revision = Arc::new(RevisionCell::default());
        let reader = Reader {
            pending: Arc::clone(&pending),
            out: tx.downgrade(),
            limits,
            handler,
            revision: Arc::clone(&revision),
        };
        tokio::spawn(reader.run(BufReader::new(input)));
        Self {
            out: Mutex::new(Some(tx)),
            pending,
            next_id: AtomicU64::new(1),
            on_close: Mutex::new(None),
            revision,
            sole_call,
        }
    }

    pub(crate) fn on_close(
        self,
        f: impl FnOnce() -> BoxFuture<'static, ()> + Send + 'static,
    ) -> Self {
        *self.on_close.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(f));
        self
    }

    fn sender(&self) -> Result<mpsc::Sender<Vec<u8>>, Error> {
        self.out
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or(Error::new(ErrorKind::Closed, ""))
    }

    async fn exchange(&self, out: Outgoing) -> Result<JsonValue, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let bytes = message::request(id, &out.method, out.params)?;
        let (tx, rx) = oneshot::channel();
        let waiting = Waiting {
            answer: tx,
            handler: out.handler.filter(|_| self.sole_call),
        };
        match self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            Some(map) => map.insert(id, waiting),
            None => return Err(Error::new(ErrorKind::Closed, "")),
        };
        let sender = self.sender()?;
        let mut guard = Cancel {
            id,
            pending: Arc::clone(&self.pending),
            out: sender.clone(),
            armed: out.method != "initialize",
        };
        sender
            .send(bytes)
            .await
            .map_err(|_| Error::new(ErrorKind::Closed, ""))?;
        let outcome = rx.await.map_err(|_| Error::new(ErrorKind::Closed, ""))?;
        guard.armed = false;
        outcome
    }
}

/// Reads the server's lines until the pipe ends; then every waiting request fails as closed.
struct Reader {
    pending: Pending,
    /// Weak, so closing the transport ends the writer even while the reader runs.
    out: mpsc::WeakSender<Vec<u8>>,
    limits: ClientLimits,
    handler: Arc<dyn Handler>,
    revision: Arc<RevisionCell>,
}

impl Reader {
    async fn run<R: AsyncBufRead + Unpin>(self, mut input: R) {
        let mut line = Vec::new();
        loop {
            line.clear();
            match read_line(&mut input, &mut line, self.limits.max_message_bytes()).await {
                Ok(LineRead::Line) => self.on_line(&line),
                // A line past the bound was skipped whole: nothing in it can be trusted, and
                // the request it answered (if any) fails when the pipe ends or is dropped.
                Ok(LineRead::TooLong) => {}
                Ok(LineRead::End) | Err(_) => break,
            }
        }
        // Dropping the senders fails every waiting request as closed.
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }

    fn on_line(&self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        // A line that is not a message (or a batch, on 2025-03-26) names no request it could
        // fail: it is dropped.
        let batches = self.revision.takes_batches();
        let Ok(messages) = message::read_all(line, &self.limits, batches) else {
            return;
        };
        for incoming in messages {
            self.on_message(incoming);
        }
    }

    fn on_message(&self, incoming: Incoming) {
        match incoming {
            Incoming::Response { id, outcome } => {
                let waiting = message::numeric_id(&id).and_then(|id| {
                    self.pending
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .as_mut()
                        .and_then(|map| map.remove(&id))
                });
                if let Some(waiting) = waiting {
                    let _ = waiting.answer.send(outcome);
                }
            }
            Incoming::Notification { method, params } => {
                let call = self.sole_call();
                for_call(&self.handler, call.as_ref(), &method, false)
                    .notification(&method, params.as_ref());
            }
            Incoming::Request { id, method, params } => {
                let call = self.sole_call();
                let handler = Arc::clone(for_call(&self.handler, call.as_ref(), &method, true));
                let out = self.out.clone();
                let revision = self.revision.get();
                tokio::spawn(async move {
                    if let Ok(reply) =
                        answer(&handler, revision, &id, &method, params.as_ref()).await
                        && let Some(out) = out.upgrade()
                    {
                        let _ = out.send(reply).await;
                    }
                });
            }
        }
    }
}

impl Reader {
    /// The handler of the only request outstanding, when it has one of its own.
    fn sole_call(&self) -> Option<Arc<dyn Handler>> {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let map = pending.as_ref()?;
        if map.len() != 1 {
            return None;
        }
        map.values().next()?.handler.clone()
    }
}

enum LineRead {
    Line,
    TooLong,
    End,
}

/// One line into `line` (without its newline), at most `max` bytes; a longer one is read to
/// its end and discarded.
async fn read_line<R: AsyncBufRead + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    let mut too_long = false;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if line.is_empty() && !too_long {
                LineRead::End
            } else if too_long {
                LineRead::TooLong
            } else {
                LineRead::Line
            });
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(end) => (end, true),
            None => (buf.len(), false),
        };
        if !too_long {
            if line.len() + take > max {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(&buf[..take]);
            }
        }
        input.consume(take + usize::from(done));
        if done {
            return Ok(if too_long {
                LineRead::TooLong
            } else {
                LineRead::Line
            });
        }
    }
}

/// A request dropped before its answer: forget it and tell the server.
struct Cancel {
    id: u64,
    pending: Pending,
    out: mpsc::Sender<Vec<u8>>,
    armed: bool,
}

impl Drop for Cancel {
    fn drop(&mut self) {
        if let Some(map) = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            map.remove(&self.id);
        }
        if !self.armed {
            return;
        }
        let params = JsonObject::builder()
            .insert("requestId", JsonNumber::from(self.id))
            .insert("reason", "the client dropped the request")
            .build();
        if let Ok(bytes) = message::notification("notifications/cancelled", Some(params)) {
            let _ = self.out.try_send(bytes);
        }
    }
}

impl Transport for Lines {
    fn request(&self, out: Outgoing) -> BoxFuture<'_, Result<JsonValue, Error>> {
        Box::pin(self.exchange(out))
    }

    fn notify(&self, method: &str, params: Option<JsonObject>) -> BoxFuture<'_, Result<(), Error>> {
        let bytes = message::notification(method, params);
        Box::pin(async move {
            self.sender()?
                .send(bytes?)
                .await
                .map_err(|_| Error::new(ErrorKind::Closed, ""))
        })
    }

    fn set_revision(&self, revision: Option<Revision>) {
        self.revision.set(revision);
    }

    fn close(&self) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
            self.out
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let on_close = self
                .on_close
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(on_close) = on_close {
                on_close().await;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Result<Vec<u8>, ()>> {
        let mut reader = BufReader::with_capacity(3, input);
        let mut out = Vec::new();
        loop {
            let mut line = Vec::new();
            match read_line(&mut reader, &mut line, max).await.unwrap() {
                LineRead::Line => out.push(Ok(line)),
                LineRead::TooLong => out.push(Err(())),
                LineRead::End => return out,
            }
        }
    }

    #[tokio::test]
    async fn a_line_at_the_bound_and_one_past() {
        assert_eq!(lines(b"12345\n", 5).await, [Ok(b"12345".to_vec())]);
        assert_eq!(
            lines(b"123456\nok\n", 5).await,
            [Err(()), Ok(b"ok".to_vec())]
        );
        assert_eq!(lines(b"tail", 5).await, [Ok(b"tail".to_vec())]);
    }
}
