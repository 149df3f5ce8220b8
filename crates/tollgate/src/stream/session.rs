//! The streams of one 2025 session: numbering, the standalone stream, resumption after an event
//! id, the requests still running (for `notifications/cancelled`, and counted against the
//! session's and its principal's bounds), server-to-client requests waiting for answers, and
//! resource subscriptions, each bounded; resumable streams reserve replay bytes from the
//! session's, its principal's and the endpoint's budgets (`HoldLimits`, set by `session/`);
//! pruned by requests and by the session store's timed sweep.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::stream::event::{Connection, EventStream, Numbering};
use crate::stream::{
    MAX_PENDING_REQUESTS, MAX_SESSION_SUBSCRIPTION_BYTES, MAX_SUBSCRIPTIONS, MAX_TRACKED_ID_BYTES,
    MAX_TRACKED_REQUESTS, StreamConfig, lock, parse_event_id,
};
use crate::version::ProtocolVersion;
use crate::wire::id::RequestId;

/// What a session shared with other instances needs of them (implemented by `session/`, over
/// the shared store): answers to its server-to-client requests POSTed elsewhere find this
/// instance, and its events are recorded so a `GET` elsewhere can resume its streams.
pub(crate) trait AnswerRoute: Send + Sync {
    /// What this instance's request ids start with (unique among the instances).
    fn prefix(&self) -> &str;
    /// What this instance's stream numbers start from (unique among the instances).
    fn stream_base(&self) -> u64;
    /// Records one event of stream `number` for the other instances (`seq` 0: the stream
    /// exists, with no event yet); events before `keep_from` are no longer kept.
    fn record(&self, number: u64, seq: u64, frame: &Bytes, response: bool, keep_from: u64);
    /// Records that request `id` waits here; false when it could not be recorded.
    fn expect<'a>(&'a self, id: &'a str) -> crate::wire::unwind::BoxFuture<'a, bool>;
    /// Request `id`, which [`expect`](Self::expect) recorded, no longer waits.
    fn forget(&self, id: &str);
}

/// What one session, and one principal in all its sessions, may hold at once (part of
/// `SessionConfig`, which documents each bound and its default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HoldLimits {
    /// Requests running in one session.
    pub(crate) requests: usize,
    /// Requests running in all of one principal's sessions.
    pub(crate) principal_requests: usize,
    /// Resumable streams of one principal.
    pub(crate) principal_streams: usize,
    /// Replay bytes one session may reserve.
    pub(crate) session_replay: usize,
    /// Replay bytes one principal may reserve.
    pub(crate) principal_replay: usize,
    /// Replay bytes every session may reserve together.
    pub(crate) replay: usize,
    /// How long a server-to-client request waits for its answer.
    pub(crate) client_request_timeout: Duration,
}

impl Default for HoldLimits {
    fn default() -> Self {
        Self {
            requests: 64,
            principal_requests: 256,
            principal_streams: 256,
            session_replay: 16 * 1024 * 1024,
            principal_replay: 64 * 1024 * 1024,
            replay: 512 * 1024 * 1024,
            client_request_timeout: Duration::from_secs(60),
        }
    }
}

/// What one principal (or the whole endpoint) holds now.
#[derive(Debug, Default)]
pub(crate) struct Usage {
    pub(crate) requests: AtomicUsize,
    pub(crate) streams: AtomicUsize,
    pub(crate) replay: AtomicUsize,
}

/// Adds `n` to `counter` unless that passes `max`; whether it did.
fn take(counter: &AtomicUsize, n: usize, max: usize) -> bool {
    counter
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
            held.checked_add(n).filter(|after| *after <= max)
        })
        .is_ok()
}

/// The session's bounds with the usage it shares: its principal's (`None`: anonymous) and the
/// endpoint's.
#[derive(Debug)]
pub(crate) struct Budget {
    pub(crate) limits: HoldLimits,
    pub(crate) principal: Option<Arc<Usage>>,
    pub(crate) endpoint: Arc<Usage>,
}

/// A resumable stream's reservation: one stream and its replay bytes, from its principal's and
/// the endpoint's budgets; given back when dropped.
#[derive(Debug)]
pub(crate) struct Ticket {
    bytes: usize,
    principal: Option<Arc<Usage>>,
    endpoint: Arc<Usage>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(principal) = &self.principal {
            principal.streams.fetch_sub(1, Ordering::AcqRel);
            principal.replay.fetch_sub(self.bytes, Ordering::AcqRel);
        }
        self.endpoint.replay.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// A request counted as running in its session (and its principal's sessions) until dropped.
#[derive(Debug)]
pub(crate) struct Running {
    session: Arc<SessionStreams>,
    principal: Option<Arc<Usage>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.session.running.fetch_sub(1, Ordering::AcqRel);
        if let Some(principal) = &self.principal {
            principal.requests.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The streams and in-flight requests of one 2025 session.
pub(crate) struct SessionStreams {
    pub(crate) config: StreamConfig,
    pub(crate) revision: ProtocolVersion,
    pub(crate) idle_timeout: Duration,
    pub(crate) born: Instant,
    /// Milliseconds after `born` of the session's last request.
    pub(crate) last_seen: AtomicU64,
    pub(crate) state: Mutex<SessionStreamsState>,
    /// Set for a session shared with other instances.
    pub(crate) route: std::sync::OnceLock<Arc<dyn AnswerRoute>>,
    /// Its bounds and the usage it shares (set by the session table; the defaults, shared with
    /// nothing, until then).
    pub(crate) budget: std::sync::OnceLock<Budget>,
    /// Woken when a server-to-client request is recorded (a stdio reader waiting for a free
    /// slot stops waiting: it must read that request's answer).
    asked: tokio::sync::Notify,
    /// Its requests running now.
    pub(crate) running: AtomicUsize,
    /// Its view of a live catalog with per-principal views (set at `initialize`): which list
    /// changes it is told of.
    pub(crate) view: std::sync::OnceLock<Arc<dyn crate::stream::ListView>>,
}

#[derive(Default)]
pub(crate) struct SessionStreamsState {
    pub(crate) next_number: u64,
    pub(crate) streams: VecDeque<(u64, Arc<EventStream>)>,
    /// No stream in `streams` can be past the replay window before this moment (`None`: the
    /// next prune looks at each): set by each full pass from the streams' finish times. It is
    /// never later than that pass plus the window, so a stream adopted since (finishing after
    /// the pass) cannot expire before it.
    pub(crate) expiry_bound: Option<Instant>,
    pub(crate) standalone: Option<Arc<EventStream>>,
    /// Its requests running now, by id, for `notifications/cancelled` (at most
    /// `MAX_TRACKED_REQUESTS`). Hashed with foldhash, seeded per map: the ids are the session's
    /// own client's, a map never holds more than the bound, and a request looks its id up in a
    /// fraction of SipHash's instructions.
    pub(crate) in_flight: HashMap<RequestId, Weak<EventStream>, foldhash::fast::RandomState>,
    pub(crate) subscriptions: std::collections::HashSet<Arc<str>>,
    /// The bytes of URI in `subscriptions`.
    pub(crate) subscription_bytes: usize,
    /// Server-to-client requests awaiting the client's response, by id.
    pub(crate) pending: HashMap<Arc<str>, PendingRequest>,
    pub(crate) next_request: u64,
    pub(crate) closed: bool,
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
    /// A replay or stream budget is spent (503).
    Full,
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
            route: std::sync::OnceLock::new(),
            budget: std::sync::OnceLock::new(),
            asked: tokio::sync::Notify::new(),
            running: AtomicUsize::new(0),
            view: std::sync::OnceLock::new(),
        }
    }

    /// The session's bounds and shared usage.
    pub(crate) fn budget(&self) -> &Budget {
        self.budget.get_or_init(|| Budget {
            limits: HoldLimits::default(),
            principal: None,
            endpoint: Arc::default(),
        })
    }

    /// How long since the session began here.
    pub(crate) fn age(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.born)
    }

    /// Counts a request as running, within the session's bound and its principal's; `None`
    /// past either (the request is refused).
    pub(crate) fn begin(self: &Arc<Self>) -> Option<Running> {
        let budget = self.budget();
        if !take(&self.running, 1, budget.limits.requests) {
            return None;
        }
        // Dropped on refusal below, giving the session's place back.
        let mut running = Running {
            session: Arc::clone(self),
            principal: None,
        };
        if let Some(principal) = &budget.principal {
            if !take(&principal.requests, 1, budget.limits.principal_requests) {
                return None;
            }
            running.principal = Some(Arc::clone(principal));
        }
        Some(running)
    }

    /// Reserves a resumable stream's replay bytes (and, for a principal, one of its streams)
    /// within the session's, the principal's and the endpoint's budgets; `None` past any.
    fn reserve(&self, state: &SessionStreamsState) -> Option<Ticket> {
        let budget = self.budget();
        let limits = &budget.limits;
        let bytes = self.config.replay_bytes;
        let held = state.streams.len() + usize::from(state.standalone.is_some());
        if (held + 1).saturating_mul(bytes) > limits.session_replay {
            return None;
        }
        if !take(&budget.endpoint.replay, bytes, limits.replay) {
            return None;
        }
        // Dropped on refusal below, giving the endpoint's bytes back.
        let mut ticket = Ticket {
            bytes,
            principal: None,
            endpoint: Arc::clone(&budget.endpoint),
        };
        if let Some(principal) = &budget.principal {
            if !take(&principal.streams, 1, limits.principal_streams) {
                return None;
            }
            if !take(&principal.replay, bytes, limits.principal_replay) {
                principal.streams.fetch_sub(1, Ordering::AcqRel);
                return None;
            }
            ticket.principal = Some(Arc::clone(principal));
        }
        Some(ticket)
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
    pub(crate) fn idled_out(&self) -> bool {
        self.idle_for(Instant::now()) >= self.idle_timeout
    }

    /// Forgets finished streams past the replay window, then the oldest finished ones past the
    /// count bound. Returns whether there is room for one more.
    pub(crate) fn prune(&self, state: &mut SessionStreamsState) -> bool {
        let now = Instant::now();
        let window = self.config.replay_window;
        state.in_flight.retain(|_, s| s.strong_count() > 0);
        // A stream expires a window after it finishes, so none can before the bound: the pass
        // (a lock per stream) runs only once one might have.
        // An unset bound (`None` orders first, and a window too long to add to an instant
        // leaves it unset) means the next prune looks again: never a stream kept too long.
        if state.expiry_bound.is_none_or(|bound| now >= bound) {
            let mut bound = now.checked_add(window);
            state.streams.retain(|(_, s)| match s.finished_at() {
                Some(at) if now.duration_since(at) >= window => false,
                Some(at) => {
                    bound = bound.min(at.checked_add(window));
                    true
                }
                None => true,
            });
            state.expiry_bound = bound;
        }
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

    /// Enrolls `stream` as the answer to request `id` and numbers it at once, as its first
    /// event would. Without room the stream stays unnumbered (it still streams, without
    /// resumption).
    #[cfg(test)]
    pub(crate) fn adopt(self: &Arc<Self>, stream: &Arc<EventStream>, id: Option<&RequestId>) {
        self.enroll(stream, id);
        stream.number_deferred();
    }

    /// Registers `stream` as the answer to request `id` (cancellation finds it, the session's
    /// end closes it) and leaves its numbering to its first event: an answer that ends as one
    /// JSON document (most do) can never be resumed, so it takes no number, no place among the
    /// streams kept for replay and nothing of the replay budgets. The first notification, or
    /// the handler closing the connection, numbers it as [`adopt`](Self::adopt) would have
    /// ([`EventStream::number_deferred`]).
    pub(crate) fn enroll(self: &Arc<Self>, stream: &Arc<EventStream>, id: Option<&RequestId>) {
        *lock(&stream.session) = Some(Arc::downgrade(self));
        let mut state = lock(&self.state);
        if state.closed {
            return;
        }
        state.in_flight.retain(|_, s| s.strong_count() > 0);
        track(&mut state, stream, id);
        let _ = stream
            .deferred
            .set(self.revision == ProtocolVersion::V2025_11_25);
    }

    /// Numbers an enrolled stream at its first event, when the session has room for it (not
    /// once it has answered: a late notification is dropped, and nothing can resume it).
    pub(crate) fn number_enrolled(&self, stream: &Arc<EventStream>) {
        if stream.is_finished() {
            return;
        }
        let mut state = lock(&self.state);
        if !state.closed && self.prune(&mut state) {
            self.number_in(&mut state, stream);
        }
    }

    /// Numbers `stream` and keeps it for resumption, within the replay and stream budgets
    /// (past one the answer still streams, without ids).
    fn number_in(&self, state: &mut SessionStreamsState, stream: &Arc<EventStream>) {
        // Past a replay or stream budget the answer still streams, without ids.
        let Some(ticket) = self.reserve(state) else {
            return;
        };
        let _ = stream.ticket.set(ticket);
        let number = self.number(state);
        lock(&stream.state).numbering = Some(Numbering {
            number,
            priming: self.revision == ProtocolVersion::V2025_11_25,
        });
        self.share(state, stream);
        state.streams.push_back((number, Arc::clone(stream)));
    }

    /// The next stream number: from 1 alone, from this instance's base when shared.
    fn number(&self, state: &mut SessionStreamsState) -> u64 {
        let number = state.next_number;
        state.next_number += 1;
        match self.route.get() {
            Some(route) => route.stream_base() + (number & crate::stream::STREAM_NUMBER_MASK),
            None => number,
        }
    }

    /// Lets a shared session's stream record its events for the other instances, while this
    /// instance's numbers last (past 2^20 streams in one session they would repeat: later
    /// streams resume only here).
    fn share(&self, state: &SessionStreamsState, stream: &Arc<EventStream>) {
        // The counter just given is `next_number - 1`; counters 1 to MASK + 1 give distinct
        // numbers (the last wraps to the base itself), the next would repeat the first.
        let fresh = state.next_number <= crate::stream::STREAM_NUMBER_MASK + 2;
        if let Some(route) = self.route.get().filter(|_| fresh) {
            let _ = stream.share.set(Arc::clone(route));
        }
    }

    /// Whether `number` is one this instance gives its streams in this session.
    pub(crate) fn numbers_here(&self, number: u64) -> bool {
        match self.route.get() {
            Some(route) => number & !crate::stream::STREAM_NUMBER_MASK == route.stream_base(),
            None => true,
        }
    }

    /// Keeps a stream another instance wrote, relayed here for a resuming client: whether it
    /// was kept (not when the session ended, when another resume relayed it first, or when the
    /// session keeps its most streams, all running).
    pub(crate) fn adopt_relayed(&self, stream: &Arc<EventStream>) -> bool {
        let Some(number) = lock(&stream.state).numbering.as_ref().map(|n| n.number) else {
            return false;
        };
        let mut state = lock(&self.state);
        if state.closed || state.streams.iter().any(|(n, _)| *n == number) {
            return false;
        }
        if !self.prune(&mut state) {
            return false;
        }
        let Some(ticket) = self.reserve(&state) else {
            return false;
        };
        let _ = stream.ticket.set(ticket);
        // It may have finished on the other instance long ago: the next prune looks again.
        state.expiry_bound = None;
        state.streams.push_back((number, Arc::clone(stream)));
        true
    }

    /// `notifications/cancelled`: aborts the request `id` if it is still running here; whether
    /// it was.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        let stream = lock(&self.state)
            .in_flight
            .remove(id)
            .and_then(|s| s.upgrade());
        let found = stream.is_some();
        if let Some(stream) = stream {
            stream.cancel();
        }
        found
    }

    /// `GET` with `Last-Event-ID`: attaches a connection to the stream the id names, to replay
    /// what followed it.
    pub(crate) fn resume(
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

    /// The session's standalone stream when a `GET` connection is reading it now (never made
    /// here): where a message for a client that is not waiting on any request can be read at
    /// once.
    pub(crate) fn attached_standalone(&self) -> Option<Arc<EventStream>> {
        let state = lock(&self.state);
        let stream = state.standalone.as_ref().filter(|_| !state.closed)?;
        let read = stream
            .connections
            .load(std::sync::atomic::Ordering::Acquire)
            > 0;
        read.then(|| Arc::clone(stream))
    }

    /// The session's standalone stream, made on first use (`None` when the session ended, or
    /// past a replay or stream budget).
    pub(crate) fn standalone_stream(&self) -> Option<Arc<EventStream>> {
        let mut state = lock(&self.state);
        if state.closed {
            return None;
        }
        if let Some(s) = &state.standalone {
            return Some(Arc::clone(s));
        }
        self.prune(&mut state);
        let ticket = self.reserve(&state)?;
        let stream = EventStream::new(self.config);
        let _ = stream.ticket.set(ticket);
        let number = self.number(&mut state);
        self.share(&state, &stream);
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
    pub(crate) fn standalone(self: &Arc<Self>) -> Result<Connection, AttachFailure> {
        let stream = self.standalone_stream().ok_or_else(|| {
            if lock(&self.state).closed {
                AttachFailure::Closed
            } else {
                AttachFailure::Full
            }
        })?;
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
        let prefix = self.route.get().map_or("tollgate-", |r| r.prefix());
        let id: Arc<str> = Arc::from(format!("{prefix}{}", state.next_request));
        state.pending.insert(Arc::clone(&id), pending);
        drop(state);
        self.asked.notify_waiters();
        Some(id)
    }

    /// Forgets a request whose caller stopped waiting.
    pub(crate) fn forget_request(&self, id: &str) {
        lock(&self.state).pending.remove(id);
    }

    /// Whether a request sent to the client waits for its answer.
    pub(crate) fn awaits_answers(&self) -> bool {
        !lock(&self.state).pending.is_empty()
    }

    /// Ready once a request sent to the client waits for its answer (at once if one does).
    pub(crate) async fn asked(&self) {
        loop {
            let notified = self.asked.notified();
            let mut notified = std::pin::pin!(notified);
            // Registered before the check: a request recorded after it still wakes this one.
            notified.as_mut().enable();
            if self.awaits_answers() {
                return;
            }
            notified.await;
        }
    }

    /// Takes the request a client's response answers.
    pub(crate) fn take_request(&self, id: &str) -> Option<PendingRequest> {
        lock(&self.state).pending.remove(id)
    }

    /// Subscribes the session to updates of `uri` (whose length `resources/subscribe` checked
    /// against [`MAX_SUBSCRIPTION_URI_BYTES`](crate::stream::MAX_SUBSCRIPTION_URI_BYTES) before
    /// routing it); false past the count or byte budget.
    pub(crate) fn subscribe(&self, uri: &str) -> bool {
        let mut state = lock(&self.state);
        if state.subscriptions.contains(uri) {
            return true;
        }
        if state.subscriptions.len() >= MAX_SUBSCRIPTIONS
            || state.subscription_bytes + uri.len() > MAX_SESSION_SUBSCRIPTION_BYTES
        {
            return false;
        }
        state.subscriptions.insert(Arc::from(uri));
        state.subscription_bytes += uri.len();
        true
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
        self.running.load(Ordering::Acquire) > 0
            || lock(&self.state)
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

    pub(crate) fn all_streams(&self) -> Vec<Arc<EventStream>> {
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

    /// Whether the session ended here.
    #[cfg(test)]
    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.state).closed
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

/// Whether a request id is short enough to track for cancellation (its length is read, never
/// a copy of it written).
pub(crate) fn trackable(id: &RequestId) -> bool {
    match id {
        RequestId::String(s) => s.as_str().len() + 2 <= MAX_TRACKED_ID_BYTES,
        RequestId::Integer(n) => n.spelling_len() <= MAX_TRACKED_ID_BYTES,
    }
}

/// Registers `stream` as the answer to request `id`, for cancellation, while the session tracks
/// fewer than its most requests (an id tracked already is replaced).
fn track(state: &mut SessionStreamsState, stream: &Arc<EventStream>, id: Option<&RequestId>) {
    let Some(id) = id.filter(|id| trackable(id)) else {
        return;
    };
    // One lookup: an insert below the bound, a replacement in place at it.
    if state.in_flight.len() < MAX_TRACKED_REQUESTS {
        state.in_flight.insert(id.clone(), Arc::downgrade(stream));
    } else if let Some(tracked) = state.in_flight.get_mut(id) {
        *tracked = Arc::downgrade(stream);
    }
}
