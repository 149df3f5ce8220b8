//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout (logs belong on stderr),
//! for desktop clients that start the server as a subprocess.
//!
//! Owns line framing (each line bounded by the endpoint's input byte limit) and concurrency
//! (each request runs in its own task, at most 64 at once, a 65th read once one ends, or refused
//! busy while one of them waits for the client's answer, which only the reader can read; lines
//! that change what the next one means run in order). Every message goes through the same pipeline as over HTTP
//! (`pipeline::handle`), minus what only HTTP has (headers, statuses): on 2026-07-28 every
//! request names its revision in `_meta`; the 2025 revisions `initialize` once per connection,
//! whose session (and requests in flight, for `notifications/cancelled`) the connection keeps.
//! In a 2025 session a handler's requests to the client (`ClientRequests`) go out as lines and
//! the client's responses come back as lines, delivered to the handler waiting for each. In a
//! 2025-03-26 session a line may be a JSON-RPC batch, answered as one line
//! (`pipeline/batch.rs`).

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError, mpsc};
use tokio::task::AbortHandle;

use tollgate_json::JsonValue;

use crate::client_request::{deliver, is_response};
use crate::model::features::NotificationSink;
use crate::model::origin::Transport;
use crate::pipeline::Arrival;
use crate::pipeline::envelope::{Envelope, parse, read, unreadable};
use crate::registry::Endpoint;
use crate::session::local::{LocalSession, id_key};
use crate::stream::session::SessionStreams;
use crate::wire::fault::Fault;
use crate::wire::method::Method;
use crate::wire::reply::{Reply, fault_reply};
use crate::wire::stage::stage;

const MAX_IN_FLIGHT: usize = 64;

/// Serves one endpoint over a byte stream pair, normally the process's stdin and stdout.
///
/// # Examples
///
/// ```no_run
/// use tollgate::{Endpoint, Implementation, ProtocolVersion, transport::StdioServer};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
///     Implementation::new("demo", "1.0.0")).build()?;
/// StdioServer::new(endpoint).serve_stdio().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct StdioServer {
    endpoint: Endpoint,
}

impl StdioServer {
    /// A stdio server for `endpoint` (its path is not used).
    pub fn new(endpoint: Endpoint) -> Self {
        Self { endpoint }
    }

    /// Serves the process's stdin and stdout until stdin closes.
    ///
    /// # Errors
    ///
    /// An I/O error reading stdin or writing stdout.
    pub async fn serve_stdio(self) -> io::Result<()> {
        self.serve(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves `input` and `output` until `input` ends, then waits for requests in flight.
    ///
    /// # Errors
    ///
    /// An I/O error on either stream.
    pub async fn serve<R, W>(self, input: R, output: W) -> io::Result<()>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let endpoint = self.endpoint;
        let max_line = endpoint.inner.limits.max_body_bytes();
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(MAX_IN_FLIGHT);
        let writer = tokio::spawn(async move {
            let mut output = output;
            while let Some(mut line) = rx.recv().await {
                line.push(b'\n');
                output.write_all(&line).await?;
                output.flush().await?;
            }
            Ok::<(), io::Error>(())
        });
        let mut connection = Lines {
            endpoint,
            tx,
            local: Arc::default(),
            permits: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            listens: Vec::new(),
        };
        let mut reader = BufReader::new(input);
        let mut line = Vec::new();
        let mut failed = None;
        loop {
            line.clear();
            let (complete, oversized) = match read_line(&mut reader, &mut line, max_line).await {
                Ok(read) => read,
                // Ended as input that ends is, the error returned once the rest is done.
                Err(error) => {
                    failed = Some(error);
                    break;
                }
            };
            if !complete && line.is_empty() && !oversized {
                break;
            }
            if oversized {
                send(&connection.tx, unreadable()).await;
                continue;
            }
            while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                line.pop();
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if !connection.line(&line).await {
                break;
            }
        }
        // Input ended: subscriptions end with their transport (no response: nobody reads it);
        // let other requests in flight answer, then close the output.
        for listen in connection.listens {
            listen.abort();
        }
        // No answer to a request sent to the client can come any more: its handler is told so.
        if let Some(streams) = connection.local.legacy_streams() {
            streams.close();
        }
        let _ = connection.permits.acquire_many(MAX_IN_FLIGHT as u32).await;
        drop(connection.tx);
        let written = writer.await.unwrap_or_else(|e| Err(io::Error::other(e)));
        failed.map_or(written, Err)
    }
}

/// One stdio connection's state: where lines go out, its session and requests in flight, and
/// the open `subscriptions/listen` streams.
struct Lines {
    endpoint: Endpoint,
    tx: mpsc::Sender<Vec<u8>>,
    local: Arc<LocalSession>,
    permits: Arc<Semaphore>,
    listens: Vec<AbortHandle>,
}

impl Lines {
    /// One line: parsed and framed, then handed to the pipeline; `initialize`, `logging/setLevel`
    /// and notifications in order, any other request in a task of its own. False when no more
    /// requests can be taken.
    async fn line(&mut self, line: &[u8]) -> bool {
        stage!(Transport);
        let endpoint = &self.endpoint;
        let value = match parse(endpoint, line) {
            Ok(value) => value,
            Err(reply) => {
                send(&self.tx, reply).await;
                return true;
            }
        };
        if value.as_array().is_some() && crate::pipeline::gate::stdio_takes_batches(&self.local) {
            return self.batch(value).await;
        }
        // In a 2025 session, a client's response answers a request a handler sent it; one that
        // answers nothing waiting (late, or never asked) is dropped: a response gets no reply.
        if delivered(&value, || self.local.legacy_streams()) {
            return true;
        }
        let message = match read(&value) {
            Ok(m) => m,
            Err(reply) => {
                send(&self.tx, reply).await;
                return true;
            }
        };
        // Lines that change what the next line means (the session, its log level, a
        // cancellation) are answered before the next is read.
        let in_order = message.id.is_none()
            || matches!(
                message.kind,
                Some(Method::Initialize | Method::LoggingSetLevel)
            );
        if in_order {
            let arrival = Arrival {
                transport: Transport::stdio(None),
                local: Some(&self.local),
            };
            let opened = self.local.opened();
            let reply = crate::pipeline::handle(endpoint, arrival, message).await;
            if self.local.opened() != opened
                && let Some(revision) = self.local.revision()
            {
                // A live catalog's changes travel on the line stream of the new session.
                let tx = self.tx.clone();
                let view = self
                    .local
                    .session()
                    .and_then(|session| session.streams.view.get().cloned());
                let lines = crate::registry::live::announce_lines(endpoint, revision, tx, view);
                self.listens.extend(lines);
            }
            send(&self.tx, reply).await;
            return true;
        }
        let key = value.get("id").map(id_key).unwrap_or_default();
        self.spawn(key, message).await
    }

    /// Answers a batch (2025-03-26) in a task of its own: each element through the pipeline in
    /// turn, the answers in one line. False when no more requests can be taken.
    async fn batch(&mut self, value: tollgate_json::JsonValue) -> bool {
        let permit = match self.slot().await {
            Ok(Some(permit)) => permit,
            Ok(None) => {
                send(&self.tx, fault_reply(None, Fault::Busy, None)).await;
                return true;
            }
            Err(Closed) => return false,
        };
        let (endpoint, tx) = (self.endpoint.clone(), self.tx.clone());
        let local = Arc::clone(&self.local);
        tokio::spawn(async move {
            let elements = value
                .as_array()
                .map(tollgate_json::JsonArray::as_slice)
                .unwrap_or_default();
            let arrival = Arrival {
                transport: Transport::stdio(None),
                local: Some(&local),
            };
            let endpoint = &endpoint;
            // A client's responses in the batch answer requests sent to it (no reply for them).
            let streams = local.legacy_streams();
            let one = |element: &JsonValue| {
                let answered = delivered(element, || streams.clone());
                let message = read(element);
                async move {
                    match message {
                        _ if answered => Reply::empty(http::StatusCode::ACCEPTED),
                        Ok(message) => crate::pipeline::handle(endpoint, arrival, message).await,
                        Err(reply) => reply,
                    }
                }
            };
            let reply = crate::pipeline::batch::run(endpoint, elements, one).await;
            send(&tx, reply).await;
            drop(permit);
        });
        true
    }

    /// Answers a request in a task of its own, registered so `notifications/cancelled` can
    /// abort it. False when no more requests can be taken.
    async fn spawn(&mut self, key: String, message: Envelope) -> bool {
        let listening = message.kind == Some(Method::SubscriptionsListen);
        let permit = match self.slot().await {
            Ok(Some(permit)) => permit,
            Ok(None) => {
                send(
                    &self.tx,
                    fault_reply(message.id.as_ref(), Fault::Busy, None),
                )
                .await;
                return true;
            }
            Err(Closed) => return false,
        };
        let (endpoint, tx) = (self.endpoint.clone(), self.tx.clone());
        let local = Arc::clone(&self.local);
        let task_key = key.clone();
        let task = self.local.track(key, || {
            tokio::spawn(async move {
                // Progress notifications (and, in a 2025 session, requests to the client) go
                // out as lines before the response.
                let sink = match local.legacy_streams() {
                    Some(streams) => NotificationSink::SessionLines(tx.clone(), streams),
                    None => NotificationSink::Lines(tx.clone()),
                };
                let arrival = Arrival {
                    transport: Transport::stdio(Some(&sink)),
                    local: Some(&local),
                };
                let reply = crate::pipeline::handle(&endpoint, arrival, message).await;
                local.finished(&task_key);
                send(&tx, reply).await;
                drop(permit);
            })
            .abort_handle()
        });
        if listening {
            self.listens.push(task);
        }
        true
    }
}

/// Delivers `value` to the request waiting for it when it is a client's response and the
/// connection's 2025 session (`streams`, asked only then) can take it; whether it was.
fn delivered(value: &JsonValue, streams: impl FnOnce() -> Option<Arc<SessionStreams>>) -> bool {
    match value.as_object() {
        Some(response) if is_response(response) => match streams() {
            Some(streams) => {
                // One nothing waits for (late, or never asked) is dropped just the same.
                deliver(&streams, response);
                true
            }
            None => false,
        },
        _ => false,
    }
}

/// No more requests can be taken (the connection is ending).
struct Closed;

impl Lines {
    /// A slot for one more request in flight: at once when one of the 64 is free; else the
    /// first of a slot freed and (in a 2025 session) a request sent to the client while all 64
    /// run, whose answer only this reader can read: then `None`, and the request is refused
    /// busy rather than the reader waiting out that request's timeout.
    async fn slot(&self) -> Result<Option<OwnedSemaphorePermit>, Closed> {
        match Arc::clone(&self.permits).try_acquire_owned() {
            Ok(permit) => return Ok(Some(permit)),
            Err(TryAcquireError::Closed) => return Err(Closed),
            Err(TryAcquireError::NoPermits) => {}
        }
        let streams = self.local.legacy_streams();
        let asked = async {
            match &streams {
                Some(streams) => streams.asked().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            permit = Arc::clone(&self.permits).acquire_owned() => permit.map(Some).map_err(|_| Closed),
            () = asked => Ok(None),
        }
    }
}

async fn send(tx: &mpsc::Sender<Vec<u8>>, reply: Reply) {
    if let Some(body) = reply.body {
        let _ = tx.send(body).await;
    }
}

/// Reads one line into `line`, keeping at most `max` bytes. Returns (ended with a newline,
/// longer than `max`); an over-long line is consumed to its end but not kept.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
    max: usize,
) -> io::Result<(bool, bool)> {
    let mut oversized = false;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok((false, oversized));
        }
        let (chunk, done) = match buffer.iter().position(|b| *b == b'\n') {
            Some(i) => (&buffer[..=i], true),
            None => (buffer, false),
        };
        let used = chunk.len();
        if !oversized {
            // The newline itself does not count against the limit.
            let content = if done { used - 1 } else { used };
            if line.len() + content > max {
                oversized = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if done {
            return Ok((true, oversized));
        }
    }
}
