//! One event stream: the frames a request's notifications and response travel in, its numbering
//! and replay buffer inside a session, keep-alives, and the connection that carries it (one at a
//! time: attaching a new one ends the old one).

use std::collections::VecDeque;
use std::fmt;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::task::AbortHandle;

use crate::stream::session::SessionStreams;
use crate::stream::{KEEP_ALIVE_FRAME, MAX_PENDING_UNNUMBERED, StreamConfig, frame, lock};
use crate::wire::reply::Reply;

/// What a stream knows once a session adopted it.
pub(crate) struct Numbering {
    pub(crate) number: u64,
    /// 2025-11-25: the first frame of a POST stream is a priming event with the reconnection
    /// delay, and the handler may close the connection early.
    pub(crate) priming: bool,
}

pub(crate) struct Event {
    pub(crate) seq: u64,
    pub(crate) frame: Bytes,
    pub(crate) response: bool,
}

pub(crate) struct StreamState {
    pub(crate) numbering: Option<Numbering>,
    pub(crate) events: VecDeque<Event>,
    pub(crate) next_seq: u64,
    /// The highest event handed to a connection.
    pub(crate) delivered: u64,
    pub(crate) notification_bytes: usize,
    /// The answer is a stream: a notification, or a closed connection, came before the reply.
    pub(crate) started: bool,
    /// The reply, while the answer may still be a single JSON document.
    pub(crate) reply: Option<Reply>,
    pub(crate) finished: Option<Instant>,
    /// The connection allowed to carry the stream; attaching a new one ends the old.
    pub(crate) generation: u64,
    /// The handler asked to close this connection (by generation).
    pub(crate) close_generation: Option<u64>,
    /// The session ended or the server is shutting down: every connection ends.
    pub(crate) closed: bool,
    pub(crate) waker: Option<Waker>,
    pub(crate) task: Option<AbortHandle>,
    pub(crate) cancelled: bool,
    /// Whether the request's work may hand the rest of it over ([`EventStream::hand_off`]), and
    /// whether it did: the rest is then polled where the work was, and ends the stream.
    pub(crate) takes_rest: bool,
    pub(crate) handed_off: bool,
    pub(crate) rest: Option<Work>,
}

/// A request's work, or the rest of it, as the stream's answer polls it.
pub(crate) type Work = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// The events of one answer (a request's notifications then its response), or of a session's
/// standalone stream.
pub(crate) struct EventStream {
    pub(crate) state: Mutex<StreamState>,
    pub(crate) config: StreamConfig,
    /// The session that adopted it (server-to-client requests are answered through it).
    pub(crate) session: Mutex<Option<Weak<SessionStreams>>>,
    /// Where a shared session's stream records its events for the other instances.
    pub(crate) share: std::sync::OnceLock<Arc<dyn crate::stream::session::AnswerRoute>>,
    /// The connections carrying it now.
    pub(crate) connections: std::sync::atomic::AtomicUsize,
    /// Written by another instance and relayed here for a resuming client.
    pub(crate) relayed: std::sync::atomic::AtomicBool,
    /// A relayed stream whose new events are being fetched.
    pub(crate) following: std::sync::atomic::AtomicBool,
    /// What a resumable stream holds of its principal's and the endpoint's budgets, given back
    /// when the stream is dropped.
    pub(crate) ticket: std::sync::OnceLock<crate::stream::session::Ticket>,
    /// Set when a session enrolled the stream ([`SessionStreams::enroll`]): it is numbered at its
    /// first event, not before; `true` when that numbering opens with a priming event.
    pub(crate) deferred: std::sync::OnceLock<bool>,
    /// The deferred numbering, once decided (callers racing to it wait for the first).
    numbered: std::sync::OnceLock<()>,
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
                takes_rest: false,
                handed_off: false,
                rest: None,
            }),
            config,
            session: Mutex::new(None),
            share: std::sync::OnceLock::new(),
            connections: std::sync::atomic::AtomicUsize::new(0),
            relayed: std::sync::atomic::AtomicBool::new(false),
            following: std::sync::atomic::AtomicBool::new(false),
            ticket: std::sync::OnceLock::new(),
            deferred: std::sync::OnceLock::new(),
            numbered: std::sync::OnceLock::new(),
        })
    }

    /// Numbers an enrolled stream in its session, once, before its first event: called without
    /// either lock held (the session's is taken before the stream's, as everywhere).
    pub(crate) fn number_deferred(self: &Arc<Self>) {
        if self.deferred.get().is_none() {
            return;
        }
        self.numbered.get_or_init(|| {
            if let Some(session) = self.session() {
                session.number_enrolled(self);
            }
        });
    }

    /// Whether the stream ended for good (its session ended).
    pub(crate) fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }

    /// Records a numbered event for the other instances of a shared session. Called with the
    /// state lock held, so a stream's events are recorded in their order (the recorder's own
    /// lock is always taken last).
    fn record(&self, event: Option<(u64, u64, Bytes, bool, u64)>) {
        if let (Some((number, seq, frame, response, keep_from)), Some(share)) =
            (event, self.share.get())
        {
            share.record(number, seq, &frame, response, keep_from);
        }
    }

    /// A stream another instance wrote, numbered `number`, to be filled by
    /// [`push_relayed`](Self::push_relayed).
    pub(crate) fn relayed(config: StreamConfig, number: u64) -> Arc<Self> {
        let stream = Self::new(config);
        {
            let mut state = lock(&stream.state);
            state.numbering = Some(Numbering {
                number,
                priming: false,
            });
            state.started = true;
        }
        stream
            .relayed
            .store(true, std::sync::atomic::Ordering::Release);
        stream
    }

    /// Adds an event another instance recorded. Events arrive in order; one past a gap (its
    /// predecessors were evicted there) drops what is kept before it, as eviction would here.
    /// An empty last event ends the stream without a frame (its request ended without a reply).
    /// Notifications past the replay budget evict the oldest, as on the instance that wrote them.
    pub(crate) fn push_relayed(&self, seq: u64, frame: Bytes, response: bool) {
        let mut state = lock(&self.state);
        if state.finished.is_some() || state.closed || seq < state.next_seq {
            return;
        }
        if seq > state.next_seq {
            state.events.clear();
            state.notification_bytes = 0;
        }
        state.next_seq = seq + 1;
        if response && frame.is_empty() {
            state.finished = Some(Instant::now());
            Self::wake(&mut state);
            return;
        }
        if !response {
            state.notification_bytes += frame.len();
            while state.notification_bytes > self.config.replay_bytes {
                let Some(old) = state.events.pop_front() else {
                    break;
                };
                state.notification_bytes = state.notification_bytes.saturating_sub(old.frame.len());
            }
        }
        state.events.push_back(Event {
            seq,
            frame,
            response,
        });
        if response {
            state.finished = Some(Instant::now());
        }
        Self::wake(&mut state);
    }

    /// The next event a relayed stream expects.
    pub(crate) fn next_seq(&self) -> u64 {
        lock(&self.state).next_seq
    }

    /// The session that adopted this stream, if it is still live.
    pub(crate) fn session(&self) -> Option<Arc<SessionStreams>> {
        lock(&self.session).as_ref().and_then(Weak::upgrade)
    }

    pub(crate) fn wake(state: &mut StreamState) {
        if let Some(waker) = state.waker.take() {
            waker.wake();
        }
    }

    /// Whether a session adopted this stream (its events carry ids and can be replayed).
    pub(crate) fn is_numbered(&self) -> bool {
        lock(&self.state).numbering.is_some()
    }

    /// Whether the handler may close the connection early (2025-11-25 session streams; an
    /// enrolled one is numbered when it closes, and keeps its connection if the session has no
    /// room left to keep it for resumption).
    pub(crate) fn may_close_connection(&self) -> bool {
        if self.deferred.get() == Some(&true) && self.numbered.get().is_none() {
            return true;
        }
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

    /// Aborts the request's task (`notifications/cancelled`, or the end of its session); a
    /// request not yet moved to a task is woken where it runs, to be dropped there.
    pub(crate) fn cancel(&self) {
        let task = {
            let mut state = lock(&self.state);
            state.cancelled = true;
            Self::wake(&mut state);
            state.task.take()
        };
        if let Some(task) = task {
            task.abort();
        }
    }

    /// Forgets the connection's waker, before the request's work is polled by that very
    /// connection (a listen's, in its response body): the frames it queues are read in the same
    /// poll, which registers the waker again. Whether the request was cancelled.
    pub(crate) fn forget_waker(&self) -> bool {
        let mut state = lock(&self.state);
        state.waker = None;
        state.cancelled
    }

    /// Whether the request was cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        lock(&self.state).cancelled
    }

    /// Lets the request's work hand the rest of it over ([`Self::hand_off`]): set where that
    /// rest is polled on (a listen answered in its response body).
    pub(crate) fn take_rest_over(&self) {
        lock(&self.state).takes_rest = true;
    }

    /// Whether the request's work may hand the rest of it over.
    pub(crate) fn takes_rest(&self) -> bool {
        lock(&self.state).takes_rest
    }

    /// Hands the rest of the request's work over, to be polled where the work was and to end
    /// the stream itself (a listen's loop, once acknowledged, so that the request's pipeline
    /// ends and frees what it held). `Err` gives it back where no one takes it over: it is then
    /// awaited in place.
    pub(crate) fn hand_off(&self, rest: Work) -> Result<(), Work> {
        let mut state = lock(&self.state);
        if !state.takes_rest || state.handed_off || state.finished.is_some() {
            return Err(rest);
        }
        state.handed_off = true;
        state.rest = Some(rest);
        Ok(())
    }

    /// The rest handed over, once.
    pub(crate) fn take_rest(&self) -> Option<Work> {
        lock(&self.state).rest.take()
    }

    /// Queues a notification. After the reply, or once the stream ended, it is dropped.
    pub(crate) fn push_notification(self: &Arc<Self>, json: &[u8]) {
        self.number_deferred();
        let mut state = lock(&self.state);
        let recorded = self.queue_notification(&mut state, json);
        self.record(recorded);
    }

    fn queue_notification(
        &self,
        state: &mut StreamState,
        json: &[u8],
    ) -> Option<(u64, u64, Bytes, bool, u64)> {
        if state.finished.is_some() || state.closed {
            return None;
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
            return None;
        } else {
            state.notification_bytes += frame.len();
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        let recorded = id.map(|(number, _)| {
            let keep_from = state.events.front().map_or(seq, |e| e.seq);
            (number, seq, frame.clone(), false, keep_from)
        });
        state.events.push_back(Event {
            seq,
            frame,
            response: false,
        });
        state.started = true;
        Self::wake(state);
        recorded
    }

    /// Records the reply: the last event of a stream, or the whole answer if nothing streamed.
    pub(crate) fn finish(&self, reply: Reply) {
        let mut state = lock(&self.state);
        if state.finished.is_some() {
            return;
        }
        state.finished = Some(Instant::now());
        state.task = None;
        let mut recorded = None;
        if state.started {
            if let Some(body) = &reply.body {
                let id = state.numbering.as_ref().map(|n| (n.number, state.next_seq));
                let seq = state.next_seq;
                state.next_seq += 1;
                let frame = frame(id, body);
                recorded = id.map(|(number, _)| {
                    let keep_from = state.events.front().map_or(seq, |e| e.seq);
                    (number, seq, frame.clone(), true, keep_from)
                });
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
        self.record(recorded);
    }

    /// Ends the stream without a reply (its task was cancelled or failed to run).
    pub(crate) fn finish_without_reply(&self) {
        let mut state = lock(&self.state);
        if state.finished.is_none() {
            state.finished = Some(Instant::now());
            state.task = None;
            Self::wake(&mut state);
            // A copy of a started stream on another instance ends too (an empty last event).
            let ended = state
                .numbering
                .as_ref()
                .filter(|_| state.started)
                .map(|n| (n.number, state.next_seq, Bytes::new(), true, state.next_seq));
            self.record(ended);
        }
    }

    /// Ends the current connection but not the stream (2025-11-25): the client resumes with
    /// `GET` and `Last-Event-ID`.
    pub(crate) fn close_connection(self: &Arc<Self>) {
        self.number_deferred();
        let mut state = lock(&self.state);
        let Some(number) = state
            .numbering
            .as_ref()
            .filter(|n| n.priming)
            .map(|n| n.number)
        else {
            return;
        };
        if state.finished.is_none() {
            state.started = true;
            state.close_generation = Some(state.generation);
            Self::wake(&mut state);
            let keep_from = state.events.front().map_or(state.next_seq, |e| e.seq);
            // The client may resume elsewhere before any event: the stream exists there.
            self.record(Some((number, 0, Bytes::new(), false, keep_from)));
        }
    }

    /// Ends every connection and refuses new ones (the session ended).
    pub(crate) fn close(&self) {
        let mut state = lock(&self.state);
        state.closed = true;
        Self::wake(&mut state);
    }

    /// Ends the attached connection (server shutdown); the stream stays resumable.
    pub(crate) fn detach(&self) {
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
    pub(crate) fn priming_frame(&self) -> Option<Bytes> {
        let state = lock(&self.state);
        let numbering = state.numbering.as_ref().filter(|n| n.priming)?;
        Some(Bytes::from(format!(
            "id: {}-0\nretry: {}\ndata: \n\n",
            numbering.number,
            self.config.retry.as_millis()
        )))
    }

    /// Attaches a new connection resuming after event `after`, ending any other.
    pub(crate) fn attach(&self, after: u64) -> Option<(u64, u64)> {
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
    pub(crate) fn poll_frame(
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

    /// When the stream finished, if it has.
    pub(crate) fn finished_at(&self) -> Option<Instant> {
        lock(&self.state).finished
    }

    pub(crate) fn is_finished(&self) -> bool {
        lock(&self.state).finished.is_some()
    }
}

/// Finishes the stream without a reply if the request's task ends before finishing it
/// (aborted by cancellation, or by its connection going away).
pub(crate) struct FinishOnDrop {
    stream: Arc<EventStream>,
    /// Whether the work may hand its rest over ([`EventStream::hand_off`]): its stream's end is
    /// then the rest's. Only then is the stream's state read for it (not on every request).
    may_hand_off: bool,
}

impl Drop for FinishOnDrop {
    fn drop(&mut self) {
        if !self.handed_off() {
            self.stream.finish_without_reply();
        }
    }
}

impl FinishOnDrop {
    /// The guard of a work that ends its stream itself (a listen's rest handed over is one).
    pub(crate) fn new(stream: Arc<EventStream>) -> Self {
        Self {
            stream,
            may_hand_off: false,
        }
    }

    /// The guard of a work that may hand its rest over (a listen's, answered in its body).
    pub(crate) fn handing_off(stream: Arc<EventStream>) -> Self {
        Self {
            stream,
            may_hand_off: true,
        }
    }

    /// Records the reply, unless the work handed its rest over (which records its own).
    pub(crate) fn finish(&self, reply: Reply) {
        if !self.handed_off() {
            self.stream.finish(reply);
        }
    }

    fn handed_off(&self) -> bool {
        self.may_hand_off && lock(&self.stream.state).handed_off
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
/// use tollgate::{InvocationFeatures, transport::ResponseStream};
///
/// fn free_the_connection(features: &InvocationFeatures) {
///     if let Some(stream) = features.find::<ResponseStream>() {
///         stream.close_connection();
///     }
/// }
/// # free_the_connection(&InvocationFeatures::for_test());
/// ```
pub struct ResponseStream {
    pub(crate) stream: Arc<EventStream>,
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
    /// When the session has no room left to keep the stream for resumption (its, its
    /// principal's or the endpoint's stream and replay budgets), the connection stays open and
    /// the answer streams on it.
    pub fn close_connection(&self) {
        self.stream.close_connection();
    }
}

/// One HTTP connection carrying a stream: frames in order, keep-alive comments when quiet.
pub(crate) struct Connection {
    pub(crate) stream: Arc<EventStream>,
    pub(crate) generation: u64,
    pub(crate) cursor: u64,
    pub(crate) prelude: Option<Bytes>,
    pub(crate) keep_alive: Pin<Box<tokio::time::Sleep>>,
    pub(crate) interval: Duration,
    pub(crate) ended: bool,
    /// A `GET` connection's session: the connection ends when the session idles out.
    pub(crate) session: Option<Weak<SessionStreams>>,
    /// A `GET` connection ends when the credential it was opened with expires.
    pub(crate) expiry: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Counts the connection among the open streams while it lives (feature `otel`).
    _gauge: crate::facts::telemetry::StreamGauge,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.stream
            .connections
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

impl Connection {
    pub(crate) fn new(
        stream: Arc<EventStream>,
        generation: u64,
        cursor: u64,
        prelude: Option<Bytes>,
    ) -> Self {
        let interval = stream.config.keep_alive;
        stream
            .connections
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Self {
            stream,
            generation,
            cursor,
            prelude,
            keep_alive: Box::pin(tokio::time::sleep(interval)),
            interval,
            ended: false,
            session: None,
            expiry: None,
            _gauge: crate::facts::telemetry::StreamGauge::open(),
        }
    }

    pub(crate) fn in_session(mut self, session: &Arc<SessionStreams>) -> Self {
        self.session = Some(Arc::downgrade(session));
        self
    }

    /// Ends the connection `expires_in` from now (the admitted credential's expiry; `None`:
    /// no such end). The stream itself stays, resumable with a fresh credential.
    pub(crate) fn until(mut self, expires_in: Option<Duration>) -> Self {
        self.expiry = expires_in.map(|d| Box::pin(tokio::time::sleep(d)));
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
        if let Some(expiry) = &mut self.expiry
            && expiry.as_mut().poll(cx).is_ready()
        {
            self.ended = true;
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

    pub(crate) fn reset_keep_alive(&mut self) {
        let deadline = tokio::time::Instant::now() + self.interval;
        self.keep_alive.as_mut().reset(deadline);
    }
}
