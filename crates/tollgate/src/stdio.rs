//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout (logs belong on stderr),
//! for desktop clients that start the server as a subprocess.
//!
//! Owns line framing (each line bounded by the endpoint's input byte limit), concurrency (each
//! request runs in its own task, at most 64 at once) and `notifications/cancelled`, which
//! cancels the named in-flight request. Validation, errors and results are the endpoint's own,
//! as over HTTP, minus what only HTTP has (headers, statuses, sessions): on 2026-07-28 every
//! request names its revision in `_meta`; the 2025 revisions `initialize` once per process.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::AbortHandle;
use tollgate_json::{JsonValue, from_slice};

use crate::facts::context::RequestContext;
use crate::model::features::NotificationSink;
use crate::model::origin::Transport;
use crate::pipeline::envelope::{Envelope, envelope, unreadable};
use crate::registry::Endpoint;
use crate::revision::legacy;
use crate::revision::modern::modern;
use crate::session::Session;
use crate::wire::fault::Fault;
use crate::wire::method::{Method, Notice};
use crate::wire::reply::{Reply, fail, fault_reply};

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

type InFlight = Arc<Mutex<HashMap<String, AbortHandle>>>;

fn lock(map: &InFlight) -> std::sync::MutexGuard<'_, HashMap<String, AbortHandle>> {
    // Entries are inserted and removed whole; a poisoned map is still consistent.
    map.lock().unwrap_or_else(PoisonError::into_inner)
}

fn id_key(id: &JsonValue) -> String {
    tollgate_json::to_string(id, &tollgate_json::OutputLimits::default()).unwrap_or_default()
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
            in_flight: Arc::default(),
            permits: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            session: None,
            listens: Vec::new(),
        };
        let mut reader = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            line.clear();
            let (complete, oversized) = read_line(&mut reader, &mut line, max_line).await?;
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
        let _ = connection.permits.acquire_many(MAX_IN_FLIGHT as u32).await;
        drop(connection.tx);
        writer.await.unwrap_or_else(|e| Err(io::Error::other(e)))
    }
}

/// One stdio connection's state: where lines go out, the requests in flight, the 2025 session
/// `initialize` started, and the open `subscriptions/listen` streams.
struct Lines {
    endpoint: Endpoint,
    tx: mpsc::Sender<Vec<u8>>,
    in_flight: InFlight,
    permits: Arc<Semaphore>,
    session: Option<Session>,
    listens: Vec<AbortHandle>,
}

impl Lines {
    /// One line: parsed, framed, admitted and answered (a request in a task of its own).
    /// False when no more requests can be taken.
    async fn line(&mut self, line: &[u8]) -> bool {
        let endpoint = &self.endpoint;
        let Ok(value) = from_slice(line, &endpoint.inner.limits.json) else {
            send(&self.tx, unreadable()).await;
            return true;
        };
        let message = match envelope(&value) {
            Ok(m) => m,
            Err(id) => {
                let reply = fault_reply(id.as_ref(), Fault::InvalidRequest, None);
                send(&self.tx, reply).await;
                return true;
            }
        };
        if message.kind == Some(Method::Initialize)
            && let Some(newest) = legacy::newest_legacy(endpoint)
        {
            let (reply, negotiated) =
                legacy::initialize(endpoint, message, newest, None, Transport::stdio(None)).await;
            if let Some(session) = negotiated {
                // A live catalog's changes travel on the line stream.
                let tx = self.tx.clone();
                let lines = crate::registry::live::announce_lines(endpoint, session.revision, tx);
                self.listens.extend(lines);
                self.session = Some(session);
            }
            send(&self.tx, reply).await;
            return true;
        }
        let names_modern = message
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
            .is_some();
        let legacy_session = if names_modern {
            None
        } else {
            self.session.clone()
        };
        // Every message is admitted, notifications included (over stdio the process's owner is
        // the caller: the controller sees no headers). A 2026-07-28 request is admitted once,
        // by the request pipeline; every other message here.
        let context = if message.id.is_none()
            || legacy_session.is_some()
            || message.kind == Some(Method::LoggingSetLevel)
        {
            let revision = self
                .session
                .as_ref()
                .map_or_else(|| default_revision(endpoint), |s| s.revision);
            match legacy::admit_message(endpoint, Transport::stdio(None), &message, revision).await
            {
                Ok(context) => Some(context),
                Err(reply) => {
                    send(&self.tx, reply).await;
                    return true;
                }
            }
        } else {
            None
        };
        if message.id.is_none() {
            cancel_if_asked(&message, &self.in_flight);
            return true;
        }
        if message.kind == Some(Method::LoggingSetLevel)
            && let (Some(current), Some(context)) = (self.session.as_mut(), context.as_ref())
        {
            let revision = current.revision;
            let owner = current.owner.as_deref() == context.admission.principal_name();
            let reply = match legacy::requested_level(endpoint, &message, revision) {
                Ok(level) => {
                    if owner {
                        current.log_level = Some(level);
                    }
                    legacy::level_set(&message, revision, owner)
                }
                Err(reply) => reply,
            };
            send(&self.tx, reply).await;
            return true;
        }
        let key = value.get("id").map(id_key).unwrap_or_default();
        self.spawn(key, message, legacy_session, context).await
    }

    /// Answers a request in a task of its own, registered so `notifications/cancelled` can
    /// abort it. False when no more requests can be taken.
    async fn spawn(
        &mut self,
        key: String,
        message: Envelope,
        legacy_session: Option<Session>,
        context: Option<RequestContext>,
    ) -> bool {
        let listening = message.kind == Some(Method::SubscriptionsListen);
        let Ok(permit) = Arc::clone(&self.permits).acquire_owned().await else {
            return false;
        };
        let (endpoint, tx) = (self.endpoint.clone(), self.tx.clone());
        let registry = Arc::clone(&self.in_flight);
        let task_key = key.clone();
        // The entry is made before the task can finish and remove it (the task waits for the
        // lock), so no finished request leaves an entry behind.
        let mut registered = lock(&self.in_flight);
        let task = tokio::spawn(async move {
            // Progress notifications go out as lines before the response.
            let sink = NotificationSink::Lines(tx.clone());
            let transport = Transport::stdio(Some(&sink));
            // Declared before the work, so a request aborted unfinished drops its work first.
            let mut running = crate::revision::telemetry(&endpoint, &message, None).begin();
            let reply = running
                .run(async {
                    match (legacy_session, context) {
                        // The process's session is its initializing principal's.
                        (Some(s), Some(context))
                            if s.owner.as_deref() == context.admission.principal_name() =>
                        {
                            legacy::dispatch(&endpoint, transport, message, Some(s), context).await
                        }
                        (Some(s), _) => fail(
                            s.revision,
                            message.id.as_ref(),
                            Fault::SessionNotFound,
                            None,
                        ),
                        (None, _) => modern(&endpoint, transport, message).await,
                    }
                })
                .await;
            lock(&registry).remove(&task_key);
            send(&tx, reply).await;
            drop(permit);
        });
        if listening {
            self.listens.push(task.abort_handle());
        }
        registered.insert(key, task.abort_handle());
        true
    }
}

/// The revision a stdio message is admitted under before a session exists: 2026-07-28 when
/// served, else the newest 2025 revision.
fn default_revision(endpoint: &Endpoint) -> crate::version::ProtocolVersion {
    if endpoint
        .inner
        .revisions
        .contains(crate::version::ProtocolVersion::V2026_07_28)
    {
        crate::version::ProtocolVersion::V2026_07_28
    } else {
        legacy::newest_legacy(endpoint).unwrap_or(crate::version::ProtocolVersion::V2026_07_28)
    }
}

async fn send(tx: &mpsc::Sender<Vec<u8>>, reply: Reply) {
    if let Some(body) = reply.body {
        let _ = tx.send(body).await;
    }
}

/// `notifications/cancelled` with a `requestId` of a request in flight aborts it (its
/// cancellation token fires as the future is dropped) and no response is sent for it.
fn cancel_if_asked(message: &Envelope, in_flight: &InFlight) {
    if message.notice != Some(Notice::Cancelled) {
        return;
    }
    if let Some(id) = message.params.as_ref().and_then(|p| p.get("requestId"))
        && let Some(handle) = lock(in_flight).remove(&id_key(id))
    {
        handle.abort();
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
