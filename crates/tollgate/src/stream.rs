//! Server-sent event streams: the frames a request's notifications and response travel in, the
//! connections that carry them and, inside a 2025 session, event ids, a bounded replay buffer
//! and resumption with `Last-Event-ID`.
//!
//! Owns SSE framing, stream numbering within a session, the replay buffer, keep-alive comments,
//! closing a connection without ending its stream, and the in-flight registry that
//! `notifications/cancelled` consults over HTTP. Knows nothing of JSON-RPC methods or HTTP
//! routing: the service decides when an answer becomes a stream and the legacy module decides
//! which streams a session adopts.
//!
//! A stream is numbered within its session; its events are numbered from 1, and an event's id is
//! `<stream>-<event>`, so ids are unique across every stream of the session and name the stream
//! to resume. Only one connection carries a stream at a time: attaching a new one (a `GET` with
//! `Last-Event-ID`, or a new standalone `GET`) ends the old one, so no message is sent twice on
//! two live connections.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::task::AbortHandle;

use crate::context::RequestId;
use crate::version::ProtocolVersion;
use crate::wire::reply::Reply;

/// Settings of server-sent event streams.
///
/// Every stream sends a keep-alive comment when it has been quiet for the keep-alive interval.
/// Inside a 2025 session, streams are resumable: each event carries an id, the events of a
/// stream are kept in a bounded replay buffer, and a client that lost its connection resumes
/// with `GET` and `Last-Event-ID`. A notification pushed past the buffer's byte budget evicts
/// the oldest notifications of that stream (a resuming client then misses them); a response is
/// never evicted while its stream is kept.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tollgate::StreamConfig;
///
/// let config = StreamConfig::new()
///     .keep_alive(Duration::from_secs(20))
///     .replay_bytes(512 * 1024);
/// assert_eq!(config.get_keep_alive(), Duration::from_secs(20));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamConfig {
    keep_alive: Duration,
    retry: Duration,
    replay_bytes: usize,
    max_streams: usize,
    replay_window: Duration,
}

impl Default for StreamConfig {
    fn default() -> Self {
        Self {
            keep_alive: Duration::from_secs(15),
            retry: Duration::from_secs(1),
            replay_bytes: 1024 * 1024,
            max_streams: 16,
            replay_window: Duration::from_secs(60),
        }
    }
}

impl StreamConfig {
    /// The defaults: a keep-alive comment after 15 s of quiet, clients told to wait 1 s before
    /// reconnecting, 1 MiB of notifications kept per stream, 16 streams kept per session, and a
    /// finished stream resumable for 60 s.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long a stream may stay quiet before a keep-alive comment is sent (at least 100 ms).
    #[must_use]
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.keep_alive = interval.max(Duration::from_millis(100));
        self
    }

    /// The reconnection delay announced to 2025-11-25 clients in the `retry` field of a stream's
    /// first event (at most one hour).
    #[must_use]
    pub fn retry(mut self, delay: Duration) -> Self {
        self.retry = delay.min(Duration::from_secs(3600));
        self
    }

    /// The bytes of notifications one stream keeps for replay (at least 4 KiB).
    #[must_use]
    pub fn replay_bytes(mut self, bytes: usize) -> Self {
        self.replay_bytes = bytes.max(4 * 1024);
        self
    }

    /// How many streams a session keeps (at least 2). Past it, the oldest finished stream is
    /// forgotten; when every kept stream is still running, a new answer streams without ids and
    /// cannot be resumed.
    #[must_use]
    pub fn max_streams(mut self, n: usize) -> Self {
        self.max_streams = n.max(2);
        self
    }

    /// How long a finished stream stays resumable (at least one second).
    #[must_use]
    pub fn replay_window(mut self, window: Duration) -> Self {
        self.replay_window = window.max(Duration::from_secs(1));
        self
    }

    /// The keep-alive interval.
    pub fn get_keep_alive(&self) -> Duration {
        self.keep_alive
    }

    /// The announced reconnection delay.
    pub fn get_retry(&self) -> Duration {
        self.retry
    }

    /// The replay budget per stream, in bytes.
    pub fn get_replay_bytes(&self) -> usize {
        self.replay_bytes
    }

    /// The number of streams a session keeps.
    pub fn get_max_streams(&self) -> usize {
        self.max_streams
    }

    /// How long a finished stream stays resumable.
    pub fn get_replay_window(&self) -> Duration {
        self.replay_window
    }
}

/// The most server-to-client requests one session may have waiting.
pub(crate) const MAX_PENDING_REQUESTS: usize = 64;

/// The most resources one session may subscribe to.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1_024;

/// The longest resource URI a `subscriptions/listen` stream or a 2025 session may subscribe to,
/// in bytes.
///
/// ```
/// assert_eq!(tollgate::MAX_SUBSCRIPTION_URI_BYTES, 8192);
/// ```
pub const MAX_SUBSCRIPTION_URI_BYTES: usize = 8192;

/// The bytes of URI one session's subscriptions may hold together.
pub(crate) const MAX_SESSION_SUBSCRIPTION_BYTES: usize = 256 * 1024;

/// The most running requests a session tracks for `notifications/cancelled`; past it (or for
/// an id longer than [`MAX_TRACKED_ID_BYTES`]) a request still runs and answers, but cannot be
/// cancelled by notification.
pub(crate) const MAX_TRACKED_REQUESTS: usize = 1_024;

/// The longest request id (in bytes of its JSON form) a session tracks for cancellation.
pub(crate) const MAX_TRACKED_ID_BYTES: usize = 256;

/// Notifications a stream without ids holds for a slow connection before dropping new ones.
const MAX_PENDING_UNNUMBERED: usize = 64;

const KEEP_ALIVE_FRAME: &[u8] = b": keep-alive\n\n";

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update below leaves the state whole before it can panic (they do not), so a
    // poisoned lock still guards consistent data.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One SSE event: `event: message` with one JSON-RPC message, and an id when numbered.
fn frame(id: Option<(u64, u64)>, json: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(json.len() + 64);
    if let Some((stream, seq)) = id {
        event.extend_from_slice(format!("id: {stream}-{seq}\n").as_bytes());
    }
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(json);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// Parses a `Last-Event-ID` this server issued: `<stream>-<event>`, both decimal.
pub(crate) fn parse_event_id(value: &str) -> Option<(u64, u64)> {
    let (stream, seq) = value.split_once('-')?;
    let number = |s: &str| {
        if s.is_empty() || s.len() > 19 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse::<u64>().ok()
    };
    Some((number(stream)?, number(seq)?))
}

/// What a stream knows once a session adopted it.
struct Numbering {
    number: u64,
    /// 2025-11-25: the first frame of a POST stream is a priming event with the reconnection
    /// delay, and the handler may close the connection early.
    priming: bool,
}

struct Event {
    seq: u64,
    frame: Bytes,
    response: bool,
}

struct StreamState {
    numbering: Option<Numbering>,
    events: VecDeque<Event>,
    next_seq: u64,
    /// The highest event handed to a connection.
    delivered: u64,
    notification_bytes: usize,
    /// The answer is a stream: a notification, or a closed connection, came before the reply.
    started: bool,
    /// The reply, while the answer may still be a single JSON document.
    reply: Option<Reply>,
    finished: Option<Instant>,
    /// The connection allowed to carry the stream; attaching a new one ends the old.
    generation: u64,
    /// The handler asked to close this connection (by generation).
    close_generation: Option<u64>,
    /// The session ended or the server is shutting down: every connection ends.
    closed: bool,
    waker: Option<Waker>,
    task: Option<AbortHandle>,
    cancelled: bool,
}

/// The events of one answer (a request's notifications then its response), or of a session's
/// standalone stream.
pub(crate) struct EventStream {
    state: Mutex<StreamState>,
    config: StreamConfig,
    /// The session that adopted it (server-to-client requests are answered through it).
    session: Mutex<Option<Weak<SessionStreams>>>,
}

impl fmt::Debug for EventStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventStream").finish_non_exhaustive()
    }
}

/// How a request is answered once the stream knows.
pub(crate) enum Answer {
    /// The request finished before notifying: one JSON reply.
    Json(Reply),
    /// The answer is an event stream.
    Stream,
}

impl EventStream {
    pub(crate) fn new(config: StreamConfig) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(StreamState {
                numbering: None,
                events: VecDeque::new(),
                next_seq: 1,
                delivered: 0,
                notification_bytes: 0,
                started: false,
                reply: None,
                finished: None,
                generation: 0,
                close_generation: None,
                closed: false,
                waker: None,
                task: None,
                cancelled: false,
            }),
            config,
            session: Mutex::new(None),
        })
    }

    /// The session that adopted this stream, if it is still live.
    pub(crate) fn session(&self) -> Option<Arc<SessionStreams>> {
        lock(&self.session).as_ref().and_then(Weak::upgrade)
    }

    fn wake(state: &mut StreamState) {
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
    }

    /// Whether a session adopted this stream (its events carry ids and can be replayed).
    pub(crate) fn is_numbered(&self) -> bool {
        lock(&self.state).numbering.is_some()
    }

    /// Whether the handler may close the connection early (2025-11-25 session streams).
    pub(crate) fn may_close_connection(&self) -> bool {
        lock(&self.state)
            .numbering
            .as_ref()
            .is_some_and(|n| n.priming)
    }

    /// Records the task answering the request, so cancellation can abort it.
    pub(crate) fn set_task(&self, task: AbortHandle) {
        let mut state = lock(&self.state);
        if state.cancelled {
            task.abort();
        } else if state.finished.is_none() {
            state.task = Some(task);
        }
    }

    /// Aborts the request's task (`notifications/cancelled`, or the end of its session).
    fn cancel(&self) {
        let task = {
            let mut state = lock(&self.state);
            state.cancelled = true;
            state.task.take()
        };
        if let Some(task) = task {
            task.abort();
        }
    }

    /// Queues a notification. After the reply, or once the stream ended, it is dropped.
    pub(crate) fn push_notification(&self, json: &[u8]) {
        let mut state = lock(&self.state);
        if state.finished.is_some() || state.closed {
            return;
        }
        let id = state.numbering.as_ref().map(|n| (n.number, state.next_seq));
        let frame = frame(id, json);
        if id.is_some() {
            // Numbered: evict the oldest notifications past the replay budget.
            state.notification_bytes += frame.len();
            while state.notification_bytes > self.config.replay_bytes {
                match state.events.pop_front() {
                    Some(old) => {
                        state.notification_bytes =
                            state.notification_bytes.saturating_sub(old.frame.len());
                    }
                    None => {
                        // A single notification larger than the budget is still delivered.
                        break;
                    }
                }
            }
        } else if state.events.len() >= MAX_PENDING_UNNUMBERED
            || state.notification_bytes + frame.len() > self.config.replay_bytes
        {
            // Not resumable: a connection this far behind loses the newest notification.
            return;
        } else {
            state.notification_bytes += frame.len();
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        state.events.push_back(Event {
            seq,
            frame,
            response: false,
        });
        state.started = true;
        Self::wake(&mut state);
    }

    /// Records the reply: the last event of a stream, or the whole answer if nothing streamed.
    pub(crate) fn finish(&self, reply: Reply) {
        let mut state = lock(&self.state);
        if state.finished.is_some() {
            return;
        }
        state.finished = Some(Instant::now());
        state.task = None;
        if state.started {
            if let Some(body) = &reply.body {
                let id = state.numbering.as_ref().map(|n| (n.number, state.next_seq));
                let seq = state.next_seq;
                state.next_seq += 1;
                let frame = frame(id, body);
                state.events.push_back(Event {
                    seq,
                    frame,
                    response: true,
                });
            }
        } else {
            state.reply = Some(reply);
        }
        Self::wake(&mut state);
    }

    /// Ends the stream without a reply (its task was cancelled or failed to run).
    pub(crate) fn finish_without_reply(&self) {
        let mut state = lock(&self.state);
        if state.finished.is_none() {
            state.finished = Some(Instant::now());
            state.task = None;
            Self::wake(&mut state);
        }
    }

    /// Ends the current connection but not the stream (2025-11-25): the client resumes with
    /// `GET` and `Last-Event-ID`.
    fn close_connection(&self) {
        let mut state = lock(&self.state);
        if state.numbering.as_ref().is_some_and(|n| n.priming) && state.finished.is_none() {
            state.started = true;
            state.close_generation = Some(state.generation);
            Self::wake(&mut state);
        }
    }

    /// Ends every connection and refuses new ones (the session ended).
    fn close(&self) {
        let mut state = lock(&self.state);
        state.closed = true;
        Self::wake(&mut state);
    }

    /// Ends the attached connection (server shutdown); the stream stays resumable.
    fn detach(&self) {
        let mut state = lock(&self.state);
        state.generation += 1;
        Self::wake(&mut state);
    }

    /// Waits until the answer's shape is known: a JSON reply, or a stream.
    pub(crate) fn poll_answer(&self, cx: &mut Context<'_>) -> Poll<Answer> {
        let mut state = lock(&self.state);
        if state.started {
            return Poll::Ready(Answer::Stream);
        }
        if let Some(reply) = state.reply.take() {
            return Poll::Ready(Answer::Json(reply));
        }
        if state.finished.is_some() || state.closed {
            // Cancelled before anything was sent: an empty stream, no response.
            return Poll::Ready(Answer::Stream);
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    /// The frame a POST connection opens with: a priming event (2025-11-25 session streams).
    fn priming_frame(&self) -> Option<Bytes> {
        let state = lock(&self.state);
        let numbering = state.numbering.as_ref().filter(|n| n.priming)?;
        Some(Bytes::from(format!(
            "id: {}-0\nretry: {}\ndata: \n\n",
            numbering.number,
            self.config.retry.as_millis()
        )))
    }

    /// Attaches a new connection resuming after event `after`, ending any other.
    fn attach(&self, after: u64) -> Option<(u64, u64)> {
        let mut state = lock(&self.state);
        if state.closed {
            return None;
        }
        state.generation += 1;
        Self::wake(&mut state);
        Some((state.generation, after.saturating_add(1)))
    }

    /// The next frame for the connection `generation` whose next event is `cursor`; `None` when
    /// that connection ends.
    fn poll_frame(
        &self,
        cx: &mut Context<'_>,
        generation: u64,
        cursor: &mut u64,
    ) -> Poll<Option<Bytes>> {
        let mut state = lock(&self.state);
        if state.closed || state.generation != generation {
            return Poll::Ready(None);
        }
        let numbered = state.numbering.is_some();
        if numbered {
            if let Some(front) = state.events.front() {
                // Evicted events are skipped.
                *cursor = (*cursor).max(front.seq);
                let index = usize::try_from(*cursor - front.seq).unwrap_or(usize::MAX);
                if let Some(event) = state.events.get(index) {
                    let (seq, frame) = (event.seq, event.frame.clone());
                    *cursor += 1;
                    state.delivered = state.delivered.max(seq);
                    return Poll::Ready(Some(frame));
                }
            }
        } else if let Some(event) = state.events.pop_front() {
            if !event.response {
                state.notification_bytes =
                    state.notification_bytes.saturating_sub(event.frame.len());
            }
            return Poll::Ready(Some(event.frame));
        }
        if state.finished.is_some() {
            return Poll::Ready(None);
        }
        if state.close_generation == Some(generation) {
            state.close_generation = None;
            return Poll::Ready(None);
        }
        state.waker = Some(cx.waker().clone());
        Poll::Pending
    }

    /// Whether a finished stream has been kept past `window`.
    fn expired(&self, now: Instant, window: Duration) -> bool {
        lock(&self.state)
            .finished
            .is_some_and(|at| now.duration_since(at) >= window)
    }

    fn is_finished(&self) -> bool {
        lock(&self.state).finished.is_some()
    }
}

/// Finishes the stream without a reply if the request's task ends before finishing it
/// (aborted by cancellation, or by its connection going away).
pub(crate) struct FinishOnDrop(pub(crate) Arc<EventStream>);

impl Drop for FinishOnDrop {
    fn drop(&mut self) {
        self.0.finish_without_reply();
    }
}

/// The streams and in-flight requests of one 2025 session.
pub(crate) struct SessionStreams {
    config: StreamConfig,
    revision: ProtocolVersion,
    idle_timeout: Duration,
    born: Instant,
    /// Milliseconds after `born` of the session's last request.
    last_seen: AtomicU64,
    state: Mutex<SessionStreamsState>,
}

#[derive(Default)]
struct SessionStreamsState {
    next_number: u64,
    streams: VecDeque<(u64, Arc<EventStream>)>,
    standalone: Option<Arc<EventStream>>,
    in_flight: HashMap<RequestId, Weak<EventStream>>,
    subscriptions: std::collections::HashSet<Arc<str>>,
    /// The bytes of URI in `subscriptions`.
    subscription_bytes: usize,
    /// Server-to-client requests awaiting the client's response, by id.
    pending: HashMap<Arc<str>, PendingRequest>,
    next_request: u64,
    closed: bool,
}

/// A server-to-client request awaiting its response.
pub(crate) struct PendingRequest {
    pub(crate) method: &'static str,
    pub(crate) reply: tokio::sync::oneshot::Sender<Option<tollgate_json::JsonValue>>,
}

impl fmt::Debug for SessionStreams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionStreams").finish_non_exhaustive()
    }
}

/// Why a `GET` could not attach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AttachFailure {
    /// `Last-Event-ID` names no stream this session keeps.
    UnknownEvent,
    /// The session ended.
    Closed,
}

impl SessionStreams {
    pub(crate) fn new(
        config: StreamConfig,
        revision: ProtocolVersion,
        idle_timeout: Duration,
    ) -> Self {
        Self {
            config,
            revision,
            idle_timeout,
            born: Instant::now(),
            last_seen: AtomicU64::new(0),
            state: Mutex::new(SessionStreamsState {
                next_number: 1,
                ..SessionStreamsState::default()
            }),
        }
    }

    /// Records a request at `now`.
    pub(crate) fn touch(&self, now: Instant) {
        let ms =
            u64::try_from(now.saturating_duration_since(self.born).as_millis()).unwrap_or(u64::MAX);
        self.last_seen.store(ms, Ordering::Relaxed);
    }

    /// How long since the session's last request.
    pub(crate) fn idle_for(&self, now: Instant) -> Duration {
        let seen = self.born + Duration::from_millis(self.last_seen.load(Ordering::Relaxed));
        now.saturating_duration_since(seen)
    }

    /// Whether the session has gone without a request for its idle timeout (the store ends it
    /// at its next use; its `GET` connections end at their next keep-alive).
    fn idled_out(&self) -> bool {
        self.idle_for(Instant::now()) >= self.idle_timeout
    }

    /// Forgets finished streams past the replay window, then the oldest finished ones past the
    /// count bound. Returns whether there is room for one more.
    fn prune(&self, state: &mut SessionStreamsState) -> bool {
        let now = Instant::now();
        let window = self.config.replay_window;
        state.in_flight.retain(|_, s| s.strong_count() > 0);
        state.streams.retain(|(_, s)| !s.expired(now, window));
        while state.streams.len() >= self.config.max_streams {
            match state.streams.iter().position(|(_, s)| s.is_finished()) {
                Some(i) => {
                    state.streams.remove(i);
                }
                None => return false,
            }
        }
        true
    }

    /// Numbers `stream` in this session and registers it as the answer to request `id`.
    /// Without room the stream stays unnumbered (it still streams, without resumption).
    pub(crate) fn adopt(self: &Arc<Self>, stream: &Arc<EventStream>, id: Option<&RequestId>) {
        *lock(&stream.session) = Some(Arc::downgrade(self));
        let mut state = lock(&self.state);
        if state.closed {
            return;
        }
        let room = self.prune(&mut state);
        if let Some(id) = id.filter(|id| trackable(id)) {
            if state.in_flight.len() < MAX_TRACKED_REQUESTS || state.in_flight.contains_key(id) {
                state.in_flight.insert(id.clone(), Arc::downgrade(stream));
            }
        }
        if !room {
            return;
        }
        let number = state.next_number;
        state.next_number += 1;
        lock(&stream.state).numbering = Some(Numbering {
            number,
            priming: self.revision == ProtocolVersion::V2025_11_25,
        });
        state.streams.push_back((number, Arc::clone(stream)));
    }

    /// `notifications/cancelled`: aborts the request `id` if it is still running here.
    pub(crate) fn cancel(&self, id: &RequestId) {
        let stream = lock(&self.state)
            .in_flight
            .remove(id)
            .and_then(|s| s.upgrade());
        if let Some(stream) = stream {
            stream.cancel();
        }
    }

    /// `GET` with `Last-Event-ID`: attaches a connection to the stream the id names, to replay
    /// what followed it.
    fn resume(
        self: &Arc<Self>,
        stream_number: u64,
        after: u64,
    ) -> Result<Connection, AttachFailure> {
        let stream = {
            let mut state = lock(&self.state);
            if state.closed {
                return Err(AttachFailure::Closed);
            }
            self.prune(&mut state);
            state
                .streams
                .iter()
                .find(|(n, _)| *n == stream_number)
                .map(|(_, s)| Arc::clone(s))
                .ok_or(AttachFailure::UnknownEvent)?
        };
        let (generation, cursor) = stream.attach(after).ok_or(AttachFailure::Closed)?;
        Ok(Connection::new(stream, generation, cursor, None).in_session(self))
    }

    /// The session's standalone stream, made on first use.
    fn standalone_stream(&self) -> Option<Arc<EventStream>> {
        let mut state = lock(&self.state);
        if state.closed {
            return None;
        }
        if let Some(s) = &state.standalone {
            return Some(Arc::clone(s));
        }
        let stream = EventStream::new(self.config);
        let number = state.next_number;
        state.next_number += 1;
        {
            let mut inner = lock(&stream.state);
            inner.numbering = Some(Numbering {
                number,
                priming: false,
            });
            inner.started = true;
        }
        // The standalone stream is kept outside the count bound: it never finishes.
        state.standalone = Some(Arc::clone(&stream));
        Some(stream)
    }

    /// `GET` without `Last-Event-ID`: the session's standalone stream, for messages unrelated to
    /// any request, from the first event no connection has taken yet. A new `GET` takes it over
    /// from an older connection.
    fn standalone(self: &Arc<Self>) -> Result<Connection, AttachFailure> {
        let stream = self.standalone_stream().ok_or(AttachFailure::Closed)?;
        let delivered = lock(&stream.state).delivered;
        let (generation, cursor) = stream.attach(delivered).ok_or(AttachFailure::Closed)?;
        Ok(Connection::new(stream, generation, cursor, None).in_session(self))
    }

    /// Registers a server-to-client request and returns its id, or `None` past the bound (or
    /// when the session ended).
    pub(crate) fn register_request(&self, pending: PendingRequest) -> Option<Arc<str>> {
        let mut state = lock(&self.state);
        if state.closed || state.pending.len() >= MAX_PENDING_REQUESTS {
            return None;
        }
        state.next_request += 1;
        // Scoped to the session, which only its principal can reach: a response is delivered
        // only within the session that sent the request.
        let id: Arc<str> = Arc::from(format!("tollgate-{}", state.next_request));
        state.pending.insert(Arc::clone(&id), pending);
        Some(id)
    }

    /// Forgets a request whose caller stopped waiting.
    pub(crate) fn forget_request(&self, id: &str) {
        lock(&self.state).pending.remove(id);
    }

    /// Takes the request a client's response answers.
    pub(crate) fn take_request(&self, id: &str) -> Option<PendingRequest> {
        lock(&self.state).pending.remove(id)
    }

    /// Subscribes the session to updates of `uri`, within the count and byte budgets.
    pub(crate) fn subscribe(&self, uri: &str) -> Subscribed {
        if uri.len() > MAX_SUBSCRIPTION_URI_BYTES {
            return Subscribed::TooLong;
        }
        let mut state = lock(&self.state);
        if state.subscriptions.contains(uri) {
            return Subscribed::Yes;
        }
        if state.subscriptions.len() >= MAX_SUBSCRIPTIONS
            || state.subscription_bytes + uri.len() > MAX_SESSION_SUBSCRIPTION_BYTES
        {
            return Subscribed::Full;
        }
        state.subscriptions.insert(Arc::from(uri));
        state.subscription_bytes += uri.len();
        Subscribed::Yes
    }

    /// Ends the session's subscription to `uri` (if any).
    pub(crate) fn unsubscribe(&self, uri: &str) {
        let mut state = lock(&self.state);
        if state.subscriptions.remove(uri) {
            state.subscription_bytes = state.subscription_bytes.saturating_sub(uri.len());
        }
    }

    /// Whether a request of the session is still running (a long call keeps its session
    /// alive past the idle timeout).
    pub(crate) fn is_busy(&self) -> bool {
        lock(&self.state)
            .in_flight
            .values()
            .any(|s| s.strong_count() > 0)
    }

    /// The timed sweep: forgets finished streams past the replay window and requests that
    /// ended, as a request would.
    pub(crate) fn sweep(&self) {
        let mut state = lock(&self.state);
        if !state.closed {
            self.prune(&mut state);
        }
    }

    /// Queues `notification` on the standalone stream if the session subscribed to `uri`; it
    /// waits in the replay buffer until a `GET` takes it.
    pub(crate) fn resource_updated(&self, uri: &str, notification: &[u8]) {
        if !lock(&self.state).subscriptions.contains(uri) {
            return;
        }
        if let Some(stream) = self.standalone_stream() {
            stream.push_notification(notification);
        }
    }

    fn all_streams(&self) -> Vec<Arc<EventStream>> {
        let state = lock(&self.state);
        let mut all: Vec<_> = state.streams.iter().map(|(_, s)| Arc::clone(s)).collect();
        all.extend(state.standalone.iter().cloned());
        all.extend(state.in_flight.values().filter_map(Weak::upgrade));
        all
    }

    /// The session ended: every connection ends and every request still running is cancelled.
    pub(crate) fn close(&self) {
        lock(&self.state).closed = true;
        for stream in self.all_streams() {
            stream.cancel();
            stream.close();
        }
        let mut state = lock(&self.state);
        state.streams.clear();
        state.standalone = None;
        state.in_flight.clear();
        // Waiting callers see the session end.
        state.pending.clear();
    }

    /// Ends every open connection (server shutdown); streams stay resumable.
    pub(crate) fn detach_all(&self) {
        for stream in self.all_streams() {
            stream.detach();
        }
    }

    /// Opens a `GET` stream: resuming after `last_event_id`, or the standalone stream.
    pub(crate) fn open(
        self: &Arc<Self>,
        last_event_id: Option<&str>,
    ) -> Result<Connection, AttachFailure> {
        match last_event_id {
            Some(id) => match parse_event_id(id) {
                Some((stream, after)) => self.resume(stream, after),
                None => Err(AttachFailure::UnknownEvent),
            },
            None => self.standalone(),
        }
    }
}

/// What a `resources/subscribe` came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Subscribed {
    Yes,
    /// The URI is longer than [`MAX_SUBSCRIPTION_URI_BYTES`].
    TooLong,
    /// The session holds its most subscriptions, or its most bytes of them.
    Full,
}

/// Whether a request id is short enough to track for cancellation.
fn trackable(id: &RequestId) -> bool {
    match id {
        RequestId::String(s) => s.as_str().len() + 2 <= MAX_TRACKED_ID_BYTES,
        RequestId::Integer(n) => n.to_string().len() <= MAX_TRACKED_ID_BYTES,
    }
}

/// A handler's handle on the stream carrying its response (2025-11-25 sessions over HTTP).
///
/// Found in [`InvocationFeatures`](crate::InvocationFeatures) when the request may be resumed:
/// a 2025-11-25 request inside a session, over Streamable HTTP. A long-running handler may close
/// the HTTP connection early to free it; the client reconnects with `GET` and `Last-Event-ID`
/// after the delay announced in the stream's first event, and receives what followed, including
/// the response.
///
/// # Examples
///
/// ```
/// use tollgate::{InvocationFeatures, ResponseStream};
///
/// fn free_the_connection(features: &InvocationFeatures) {
///     if let Some(stream) = features.find::<ResponseStream>() {
///         stream.close_connection();
///     }
/// }
/// # free_the_connection(&InvocationFeatures::for_test());
/// ```
pub struct ResponseStream {
    stream: Arc<EventStream>,
}

impl fmt::Debug for ResponseStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseStream").finish_non_exhaustive()
    }
}

impl ResponseStream {
    pub(crate) fn new(stream: Arc<EventStream>) -> Self {
        Self { stream }
    }

    /// Closes the HTTP connection carrying the response, without ending the stream: the answer
    /// becomes an event stream (if it was not one already) whose connection ends after the
    /// events sent so far. Notifications and the response sent later wait in the replay buffer.
    pub fn close_connection(&self) {
        self.stream.close_connection();
    }
}

/// One HTTP connection carrying a stream: frames in order, keep-alive comments when quiet.
pub(crate) struct Connection {
    stream: Arc<EventStream>,
    generation: u64,
    cursor: u64,
    prelude: Option<Bytes>,
    keep_alive: Pin<Box<tokio::time::Sleep>>,
    interval: Duration,
    ended: bool,
    /// A `GET` connection's session: the connection ends when the session idles out.
    session: Option<Weak<SessionStreams>>,
}

impl Connection {
    fn new(stream: Arc<EventStream>, generation: u64, cursor: u64, prelude: Option<Bytes>) -> Self {
        let interval = stream.config.keep_alive;
        Self {
            stream,
            generation,
            cursor,
            prelude,
            keep_alive: Box::pin(tokio::time::sleep(interval)),
            interval,
            ended: false,
            session: None,
        }
    }

    fn in_session(mut self, session: &Arc<SessionStreams>) -> Self {
        self.session = Some(Arc::downgrade(session));
        self
    }

    /// The connection of a POST answer that became a stream (generation 0, from the first
    /// event), opening with the priming event where the revision has one.
    pub(crate) fn for_post(stream: Arc<EventStream>) -> Self {
        let prelude = stream.priming_frame();
        Self::new(stream, 0, 1, prelude)
    }

    pub(crate) fn is_ended(&self) -> bool {
        self.ended && self.prelude.is_none()
    }

    pub(crate) fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if let Some(prelude) = self.prelude.take() {
            return Poll::Ready(Some(prelude));
        }
        if self.ended {
            return Poll::Ready(None);
        }
        match self
            .stream
            .poll_frame(cx, self.generation, &mut self.cursor)
        {
            Poll::Ready(Some(frame)) => {
                self.reset_keep_alive();
                Poll::Ready(Some(frame))
            }
            Poll::Ready(None) => {
                self.ended = true;
                Poll::Ready(None)
            }
            Poll::Pending => match self.keep_alive.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    let session_over = self
                        .session
                        .as_ref()
                        .is_some_and(|s| s.upgrade().is_none_or(|s| s.idled_out()));
                    if session_over {
                        self.ended = true;
                        return Poll::Ready(None);
                    }
                    self.reset_keep_alive();
                    Poll::Ready(Some(Bytes::from_static(KEEP_ALIVE_FRAME)))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn reset_keep_alive(&mut self) {
        let deadline = tokio::time::Instant::now() + self.interval;
        self.keep_alive.as_mut().reset(deadline);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At most `MAX_TRACKED_REQUESTS` running requests are tracked for cancellation, each id
    /// at most `MAX_TRACKED_ID_BYTES`; past either, the request is not tracked.
    #[test]
    fn tracked_requests_are_bounded_in_count_and_id_length() {
        let session = Arc::new(SessionStreams::new(
            StreamConfig::default(),
            ProtocolVersion::V2025_11_25,
            Duration::from_secs(60),
        ));
        let id = |s: String| RequestId::String(tollgate_json::JsonString::from(s.as_str()));
        // An id of exactly the largest length (two quotes included) is tracked; one more is not.
        let at = EventStream::new(StreamConfig::default());
        session.adopt(&at, Some(&id("x".repeat(MAX_TRACKED_ID_BYTES - 2))));
        let past = EventStream::new(StreamConfig::default());
        session.adopt(&past, Some(&id("x".repeat(MAX_TRACKED_ID_BYTES - 1))));
        assert_eq!(lock(&session.state).in_flight.len(), 1);
        let mut alive = vec![at, past];
        for n in 1..=MAX_TRACKED_REQUESTS {
            let stream = EventStream::new(StreamConfig::default());
            session.adopt(&stream, Some(&id(format!("r{n}"))));
            alive.push(stream);
        }
        assert_eq!(lock(&session.state).in_flight.len(), MAX_TRACKED_REQUESTS);
        // Requests that ended give their places back (the session itself keeps only the
        // streams it may replay).
        alive.truncate(2);
        let stream = EventStream::new(StreamConfig::default());
        session.adopt(&stream, Some(&id("after".to_owned())));
        let state = lock(&session.state);
        assert!(state.in_flight.len() <= StreamConfig::default().get_max_streams() + 3);
        assert!(state.in_flight.contains_key(&id("after".to_owned())));
    }
    use http::StatusCode;

    fn reply(body: &str) -> Reply {
        let mut r = Reply::empty(StatusCode::OK);
        r.body = Some(body.as_bytes().to_vec());
        r
    }

    fn drain(connection: &mut Connection) -> Vec<String> {
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut out = Vec::new();
        while let Poll::Ready(Some(frame)) = connection.poll_frame(&mut cx) {
            out.push(String::from_utf8_lossy(&frame).into_owned());
        }
        out
    }

    fn session(revision: ProtocolVersion) -> Arc<SessionStreams> {
        with_config(StreamConfig::new(), revision)
    }

    fn with_config(config: StreamConfig, revision: ProtocolVersion) -> Arc<SessionStreams> {
        Arc::new(SessionStreams::new(
            config,
            revision,
            Duration::from_secs(60),
        ))
    }

    #[test]
    fn event_ids_parse_strictly() {
        assert_eq!(parse_event_id("3-17"), Some((3, 17)));
        for bad in [
            "",
            "3",
            "3-",
            "-1",
            "a-1",
            "1-1-1",
            "1- 2",
            "+1-2",
            "99999999999999999999-1",
        ] {
            assert_eq!(parse_event_id(bad), None, "{bad}");
        }
    }

    #[tokio::test]
    async fn a_reply_before_any_notification_is_json() {
        let stream = EventStream::new(StreamConfig::new());
        stream.finish(reply("{}"));
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(matches!(
            stream.poll_answer(&mut cx),
            Poll::Ready(Answer::Json(_))
        ));
    }

    #[tokio::test]
    async fn numbered_events_replay_after_the_last_id() {
        let streams = session(ProtocolVersion::V2025_11_25);
        let stream = EventStream::new(StreamConfig::new());
        streams.adopt(&stream, None);
        stream.push_notification(b"{\"n\":1}");
        let mut post = Connection::for_post(Arc::clone(&stream));
        let first = drain(&mut post);
        assert_eq!(first[0], "id: 1-0\nretry: 1000\ndata: \n\n");
        assert_eq!(first[1], "id: 1-1\nevent: message\ndata: {\"n\":1}\n\n");
        stream.push_notification(b"{\"n\":2}");
        stream.finish(reply("{\"r\":1}"));
        // The client lost the connection after 1-1 and resumes.
        let mut resumed = streams
            .open(Some("1-1"))
            .ok()
            .unwrap_or_else(|| unreachable!());
        let replayed = drain(&mut resumed);
        assert_eq!(replayed.len(), 2);
        assert!(replayed[0].starts_with("id: 1-2\n"));
        assert!(replayed[1].starts_with("id: 1-3\n") && replayed[1].contains("{\"r\":1}"));
        assert!(resumed.is_ended());
        // The old connection ended when the new one attached.
        assert!(drain(&mut post).is_empty());
        assert!(matches!(
            streams.open(Some("9-0")),
            Err(AttachFailure::UnknownEvent)
        ));
        assert!(matches!(
            streams.open(Some("junk")),
            Err(AttachFailure::UnknownEvent)
        ));
    }

    #[tokio::test]
    async fn the_replay_budget_evicts_old_notifications_but_not_the_response() {
        let config = StreamConfig::new().replay_bytes(4 * 1024);
        let streams = with_config(config, ProtocolVersion::V2025_06_18);
        let stream = EventStream::new(config);
        streams.adopt(&stream, None);
        let note = vec![b'x'; 1000];
        for _ in 0..10 {
            stream.push_notification(&note);
        }
        stream.finish(reply("{\"r\":1}"));
        let mut resumed = streams
            .open(Some("1-0"))
            .ok()
            .unwrap_or_else(|| unreachable!());
        let frames = drain(&mut resumed);
        // 2025-06-18 has no priming event; the last three notifications fit the budget (each
        // frame is a little over 1,000 bytes), then the response.
        assert_eq!(frames.len(), 3 + 1);
        assert!(frames[0].starts_with("id: 1-8\n"));
        assert!(frames[3].contains("{\"r\":1}"));
    }

    #[tokio::test]
    async fn unnumbered_streams_bound_pending_notifications() {
        let stream = EventStream::new(StreamConfig::new());
        for _ in 0..(MAX_PENDING_UNNUMBERED + 10) {
            stream.push_notification(b"{}");
        }
        stream.finish(reply("{\"r\":1}"));
        let mut connection = Connection::for_post(Arc::clone(&stream));
        let frames = drain(&mut connection);
        assert_eq!(frames.len(), MAX_PENDING_UNNUMBERED + 1);
        assert!(!frames[0].starts_with("id:"));
    }

    #[tokio::test]
    async fn closing_the_connection_keeps_the_stream() {
        let streams = session(ProtocolVersion::V2025_11_25);
        let stream = EventStream::new(StreamConfig::new());
        streams.adopt(&stream, None);
        ResponseStream::new(Arc::clone(&stream)).close_connection();
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(matches!(
            stream.poll_answer(&mut cx),
            Poll::Ready(Answer::Stream)
        ));
        let mut post = Connection::for_post(Arc::clone(&stream));
        assert_eq!(
            drain(&mut post),
            vec!["id: 1-0\nretry: 1000\ndata: \n\n".to_owned()]
        );
        assert!(post.is_ended());
        stream.finish(reply("{\"r\":1}"));
        let mut resumed = streams
            .open(Some("1-0"))
            .ok()
            .unwrap_or_else(|| unreachable!());
        assert_eq!(drain(&mut resumed).len(), 1);
    }

    #[tokio::test]
    async fn cancelling_aborts_the_task_and_ends_the_stream() {
        let streams = session(ProtocolVersion::V2025_11_25);
        let stream = EventStream::new(StreamConfig::new());
        let id = RequestId::from_json(&tollgate_json::JsonValue::from(7))
            .unwrap_or_else(|| unreachable!());
        streams.adopt(&stream, Some(&id));
        // The guard is made before the task, so it finishes the stream even if the task is
        // aborted before its first poll.
        let finish = FinishOnDrop(Arc::clone(&stream));
        let task = tokio::spawn(async move {
            let _finish = finish;
            std::future::pending::<()>().await;
        });
        stream.set_task(task.abort_handle());
        streams.cancel(&id);
        assert!(task.await.is_err_and(|e| e.is_cancelled()));
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(matches!(
            stream.poll_answer(&mut cx),
            Poll::Ready(Answer::Stream)
        ));
        let mut post = Connection::for_post(stream);
        assert_eq!(drain(&mut post).len(), 1); // the priming event only
    }

    #[tokio::test]
    async fn the_stream_bound_forgets_finished_streams_first() {
        let config = StreamConfig::new().max_streams(2);
        let streams = with_config(config, ProtocolVersion::V2025_11_25);
        let a = EventStream::new(config);
        let b = EventStream::new(config);
        let c = EventStream::new(config);
        streams.adopt(&a, None);
        streams.adopt(&b, None);
        // Both running: no room, the third streams without ids.
        streams.adopt(&c, None);
        assert!(!c.is_numbered());
        a.finish(reply("{}"));
        let d = EventStream::new(config);
        streams.adopt(&d, None);
        assert!(d.is_numbered());
        assert!(matches!(
            streams.open(Some("1-0")),
            Err(AttachFailure::UnknownEvent)
        ));
        assert!(streams.open(Some("2-0")).is_ok());
    }

    #[tokio::test]
    async fn the_standalone_stream_is_taken_over_and_ends_with_the_session() {
        let streams = session(ProtocolVersion::V2025_11_25);
        let mut first = streams.open(None).ok().unwrap_or_else(|| unreachable!());
        let mut second = streams.open(None).ok().unwrap_or_else(|| unreachable!());
        assert!(drain(&mut first).is_empty() && first.is_ended());
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(second.poll_frame(&mut cx).is_pending());
        streams.close();
        assert!(matches!(second.poll_frame(&mut cx), Poll::Ready(None)));
        assert!(matches!(streams.open(None), Err(AttachFailure::Closed)));
    }
}
