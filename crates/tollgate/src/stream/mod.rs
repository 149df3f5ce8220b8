//! Server-sent event streams: the frames a request's notifications and response travel in, the
//! connections that carry them and, inside a 2025 session, event ids, a bounded replay buffer
//! and resumption with `Last-Event-ID`.
//!
//! Owns SSE framing, stream numbering within a session, the replay buffer, keep-alive comments,
//! closing a connection without ending its stream, and the in-flight registry that
//! `notifications/cancelled` consults over HTTP. Knows nothing of JSON-RPC methods or HTTP
//! routing: the service decides when an answer becomes a stream and the 2025 gate
//! (`pipeline/gate/legacy.rs` and `pipeline/session.rs`) decides which streams a session adopts.
//!
//! A stream is numbered within its session; its events are numbered from 1, and an event's id is
//! `<stream>-<event>`, so ids are unique across every stream of the session and name the stream
//! to resume. Only one connection carries a stream at a time: attaching a new one (a `GET` with
//! `Last-Event-ID`, or a new standalone `GET`) ends the old one, so no message is sent twice on
//! two live connections.
//!
//! - `event`: one stream ([`EventStream`](event::EventStream)), its frames, numbering, replay
//!   buffer and the connection that carries it, and the handler's
//!   [`ResponseStream`](event::ResponseStream);
//! - `session`: a 2025 session's streams, its in-flight requests, its server-to-client requests
//!   waiting for answers, and its resource subscriptions, each bounded;
//! - this module: [`StreamConfig`], and `ListView`, what a listener's per-principal view lets
//!   through of a live catalog's list changes.

pub(crate) mod event;
pub(crate) mod session;

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;

/// What one listener sees of a live catalog's lists, when the endpoint has per-principal views
/// (`registry/view.rs`): a listener whose view did not change is not told of a change.
pub(crate) trait ListView: Send + Sync {
    /// Of the lists `announced` (a set of `model::subscription::list_bit`s) changed in the
    /// whole catalog, those that changed in this listener's view since it was last asked (its
    /// own comparison: a change outside the view is none of its).
    fn changed(&self, announced: u16) -> u16;
}

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
/// use tollgate::endpoint::StreamConfig;
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

/// The stream numbers one instance issues in a shared session: its base plus a counter within
/// this mask (20 bits), so the numbers of two instances never meet.
pub(crate) const STREAM_NUMBER_MASK: u64 = (1 << 20) - 1;

/// The most server-to-client requests one session may have waiting.
pub(crate) const MAX_PENDING_REQUESTS: usize = 64;

/// The most resources one session may subscribe to.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1_024;

/// The longest resource URI a `subscriptions/listen` stream or a 2025 session may subscribe to,
/// in bytes.
///
/// ```
/// assert_eq!(tollgate::endpoint::MAX_SUBSCRIPTION_URI_BYTES, 8192);
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
pub(crate) const MAX_PENDING_UNNUMBERED: usize = 64;

pub(crate) const KEEP_ALIVE_FRAME: &[u8] = b": keep-alive\n\n";

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update below leaves the state whole before it can panic (they do not), so a
    // poisoned lock still guards consistent data.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One SSE event: `event: message` with one JSON-RPC message, and an id when numbered.
///
/// Made in one buffer of exactly its length: `Bytes` takes such a buffer as it is, where one
/// with room to spare costs a second allocation (issue 50: one per stream and event).
pub(crate) fn frame(id: Option<(u64, u64)>, json: &[u8]) -> Bytes {
    const HEAD: &[u8] = b"event: message\ndata: ";
    let digits = |n: u64| n.checked_ilog10().map_or(1, |d| d as usize + 1);
    // `id: ` + stream + `-` + event + a line end.
    let id_len = id.map_or(0, |(stream, seq)| 6 + digits(stream) + digits(seq));
    let mut event = Vec::with_capacity(id_len + HEAD.len() + json.len() + 2);
    if let Some((stream, seq)) = id {
        use std::io::Write as _;
        // Writing into a Vec cannot fail.
        let _ = writeln!(event, "id: {stream}-{seq}");
    }
    event.extend_from_slice(HEAD);
    event.extend_from_slice(json);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The number a session gave `stream`, if it is numbered.
pub(crate) fn stream_number(stream: &event::EventStream) -> Option<u64> {
    lock(&stream.state).numbering.as_ref().map(|n| n.number)
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::task::{Context, Poll, Waker};
    use std::time::{Duration, Instant};

    use super::event::*;
    use super::session::*;
    use super::*;
    use crate::version::ProtocolVersion;
    use crate::wire::id::RequestId;
    use crate::wire::reply::Reply;

    /// A frame is exactly its bytes, with and without an id, at the digits' edges (0, 9, 10,
    /// `u64::MAX`).
    #[test]
    fn frames_are_exact() {
        assert_eq!(&frame(None, b"{}")[..], b"event: message\ndata: {}\n\n");
        for (stream, seq) in [(0, 9), (10, 0), (u64::MAX, u64::MAX)] {
            let framed = frame(Some((stream, seq)), b"{}");
            let text = format!("id: {stream}-{seq}\nevent: message\ndata: {{}}\n\n");
            assert_eq!(&framed[..], text.as_bytes());
        }
    }

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

    /// Streams past the replay window are forgotten once a prune runs at or after the bound
    /// the last full pass set; the pass sets it from the earliest finish it keeps (a stream
    /// adopted after the pass cannot expire before that).
    #[tokio::test]
    async fn the_expiry_bound_follows_the_finish_times() {
        let streams = session(ProtocolVersion::V2025_11_25);
        let now = Instant::now();
        let (Some(long_ago), Some(lately)) = (
            now.checked_sub(Duration::from_secs(61)),
            now.checked_sub(Duration::from_secs(10)),
        ) else {
            return;
        };
        let old = EventStream::new(StreamConfig::new());
        streams.adopt(&old, None);
        old.finish(reply("{}"));
        let recent = EventStream::new(StreamConfig::new());
        streams.adopt(&recent, None);
        recent.finish(reply("{}"));
        // As if `old` finished 61 s ago and `recent` 10 s ago, the last pass having run when
        // `old` finished (so its bound fell due a second ago).
        lock(&old.state).finished = Some(long_ago);
        lock(&recent.state).finished = Some(lately);
        lock(&streams.state).expiry_bound = now.checked_sub(Duration::from_secs(1));
        let next = EventStream::new(StreamConfig::new());
        streams.adopt(&next, None);
        let state = lock(&streams.state);
        let kept: Vec<u64> = state.streams.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            kept,
            vec![2, 3],
            "the expired stream is gone, the others stay"
        );
        assert_eq!(
            state.expiry_bound,
            lately.checked_add(Duration::from_secs(60)),
            "the bound is the earliest kept finish plus the window"
        );
        drop(state);
        // A relayed stream may have finished anywhere: the next prune looks at each again.
        let relayed = EventStream::new(StreamConfig::new());
        lock(&relayed.state).numbering = Some(Numbering {
            number: 9,
            priming: true,
        });
        assert!(streams.adopt_relayed(&relayed));
        assert_eq!(lock(&streams.state).expiry_bound, None);
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
        let finish = FinishOnDrop::new(Arc::clone(&stream));
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

    /// A `GET` stream opened under a credential ends when it expires (keep-alives flow until
    /// then); the stream itself stays, for a `GET` with a fresh credential.
    #[tokio::test(start_paused = true)]
    async fn a_get_stream_ends_when_its_credential_expires() {
        let streams = session(ProtocolVersion::V2025_11_25);
        let mut get = streams
            .open(None)
            .ok()
            .unwrap_or_else(|| unreachable!())
            .until(Some(Duration::from_secs(40)));
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(get.poll_frame(&mut cx).is_pending());
        tokio::time::sleep(Duration::from_secs(39)).await;
        assert!(matches!(
            get.poll_frame(&mut cx),
            Poll::Ready(Some(frame)) if frame == KEEP_ALIVE_FRAME
        ));
        assert!(get.poll_frame(&mut cx).is_pending());
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(matches!(get.poll_frame(&mut cx), Poll::Ready(None)));
        assert!(get.is_ended());
        let mut fresh = streams.open(None).ok().unwrap_or_else(|| unreachable!());
        assert!(fresh.poll_frame(&mut cx).is_pending());
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

    /// An enrolled answer takes a number, a kept place and replay bytes at its first event, not
    /// before: answers that end as JSON take none, so a session keeping at most two streams
    /// still numbers two streaming answers after many JSON ones (at the bound); a third while
    /// both run streams without ids (one past it).
    #[tokio::test]
    async fn an_enrolled_answer_is_numbered_at_its_first_event() {
        let streams = with_config(
            StreamConfig::new().max_streams(2),
            ProtocolVersion::V2025_11_25,
        );
        for _ in 0..10 {
            let json = EventStream::new(StreamConfig::new());
            streams.enroll(&json, None);
            json.finish(reply("{}"));
            assert!(!json.is_numbered() && json.ticket.get().is_none());
            // A late notification is dropped: the answer was JSON, nothing can resume it.
            json.push_notification(b"{}");
            assert!(!json.is_numbered());
        }
        assert!(lock(&streams.state).streams.is_empty(), "no place kept");
        let streaming = |n: u32| {
            let stream = EventStream::new(StreamConfig::new());
            streams.enroll(&stream, None);
            assert!(!stream.is_numbered(), "not before its first event");
            stream.push_notification(format!("{{\"n\":{n}}}").as_bytes());
            stream
        };
        let kept = [streaming(1), streaming(2)];
        assert!(kept.iter().all(|k| k.is_numbered()), "at the bound");
        assert!(
            !streaming(3).is_numbered(),
            "one past it streams without ids"
        );
        // The numbered stream's first event carries its id.
        let mut connection = Connection::for_post(Arc::clone(&kept[0]));
        let frames = drain(&mut connection);
        assert!(frames.iter().any(|f| f.contains("id: 1-1")), "{frames:?}");
    }

    /// A 2025-11-25 answer may close its connection before it is numbered; closing numbers it,
    /// and the client can resume it. A 2025-06-18 answer has no early close.
    #[test]
    fn closing_an_enrolled_answer_numbers_it() {
        let streams = session(ProtocolVersion::V2025_11_25);
        let stream = EventStream::new(StreamConfig::new());
        streams.enroll(&stream, None);
        assert!(stream.may_close_connection());
        stream.close_connection();
        assert!(stream.is_numbered());
        assert!(stream.may_close_connection());
        let older = session(ProtocolVersion::V2025_06_18);
        let stream = EventStream::new(StreamConfig::new());
        older.enroll(&stream, None);
        assert!(!stream.may_close_connection());
    }

    /// Cancelling wakes whoever waits on the answer's shape (the request's own future, while
    /// the request runs there), which then drops the work.
    #[test]
    fn cancelling_wakes_the_answer() {
        struct Flag(std::sync::atomic::AtomicBool);
        impl std::task::Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let flag = Arc::new(Flag(std::sync::atomic::AtomicBool::new(false)));
        let waker = Waker::from(Arc::clone(&flag));
        let mut cx = Context::from_waker(&waker);
        let stream = EventStream::new(StreamConfig::new());
        assert!(stream.poll_answer(&mut cx).is_pending());
        assert!(!stream.is_cancelled());
        stream.cancel();
        assert!(stream.is_cancelled());
        assert!(flag.0.load(std::sync::atomic::Ordering::SeqCst), "woken");
    }
}
