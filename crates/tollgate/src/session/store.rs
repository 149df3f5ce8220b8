//! The shared session store contract: where the 2025 sessions of several instances behind one
//! URL are recorded, so a session created by `initialize` on one instance is found, validated and
//! ended on any other.
//!
//! Owns [`SessionRow`] (a session's id, owner, opaque data and log level), the answers, events
//! and broadcasts a store carries between instances, and the operations a store implements
//! ([`MemorySessionStore`](crate::endpoint::MemorySessionStore) in `memory.rs`, PostgreSQL in
//! `postgres.rs`, the contract check in `contract.rs`). Knows nothing of streams, HTTP or the
//! revisions' rules: `data` is written and read by `session/record.rs` only. A store never sees
//! a session's live streams: each instance keeps the streams of the sessions it serves, and a
//! store keeps only the events recorded for resumption elsewhere.

use std::fmt;
use std::time::Duration;

use crate::session::SessionConfig;
use crate::wire::unwind::BoxFuture;

/// One session as a store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRow {
    /// The session identifier Tollgate issued (32 lowercase hex digits).
    pub id: String,
    /// The principal admitted at `initialize` (`None`: anonymous); only it finds the row.
    pub owner: Option<String>,
    /// What the session remembers from `initialize` (revision, client capabilities and
    /// implementation), as Tollgate wrote it; stores never interpret it.
    pub data: String,
    /// The level `logging/setLevel` chose, if any, as its wire name.
    pub log_level: Option<String>,
}

/// A client's answer to a server-to-client request, handed over by the instance it was POSTed to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionAnswer {
    /// The session the request belongs to.
    pub session: String,
    /// The request's id, as the server sent it.
    pub request: String,
    /// The client's JSON-RPC response, as sent.
    pub answer: String,
}

/// One event of a shared session's stream, as its instance wrote it (an SSE frame with its id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionEvent {
    /// The session.
    pub session: String,
    /// The stream's number (unique in the session across instances).
    pub stream: u64,
    /// The event's number in its stream (0: the stream exists, with no event yet).
    pub seq: u64,
    /// The SSE frame, as sent.
    pub frame: String,
    /// Whether it is the stream's last event (the response).
    pub response: bool,
    /// The stream's first event still kept when this one was written.
    pub keep_from: u64,
}

/// Waiters by key (an instance's answers, a stream's events), each key kept only while something
/// waits on it: a wake with nobody waiting is dropped (waiters ask again on a timer anyway).
#[derive(Debug, Default)]
pub(crate) struct Wakers {
    waiting:
        std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<tokio::sync::Notify>>>,
}

impl Wakers {
    fn map(
        &self,
    ) -> std::sync::MutexGuard<
        '_,
        std::collections::HashMap<String, std::sync::Arc<tokio::sync::Notify>>,
    > {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Wakes a waiter of `key`, if there is one.
    pub(crate) fn wake(&self, key: &str) {
        if let Some(notify) = self.map().get(key) {
            notify.notify_one();
        }
    }

    /// Resolves when `key` is woken; the key is forgotten when its last waiter goes.
    pub(crate) fn wait(self: &std::sync::Arc<Self>, key: &str) -> BoxFuture<'static, ()> {
        let notify = std::sync::Arc::clone(self.map().entry(key.to_owned()).or_default());
        let guard = Waiter {
            wakers: std::sync::Arc::clone(self),
            key: key.to_owned(),
            notify: std::sync::Arc::clone(&notify),
        };
        Box::pin(async move {
            let _guard = guard;
            notify.notified().await;
        })
    }
}

/// Forgets its key when the last waiter of it goes.
struct Waiter {
    wakers: std::sync::Arc<Wakers>,
    key: String,
    notify: std::sync::Arc<tokio::sync::Notify>,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        let mut map = self.wakers.map();
        // The map's and this waiter's: nobody else waits.
        if std::sync::Arc::strong_count(&self.notify) <= 2 {
            map.remove(&self.key);
        }
    }
}

/// The key an event stream's waiters are woken by.
pub(crate) fn stream_key(session: &str, stream: u64) -> String {
    format!("{session}:{stream}")
}

/// What went wrong in a session store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionStoreErrorKind {
    /// The store holds its most live sessions, in all or for the row's owner.
    Full,
    /// A row with that id is already stored.
    Duplicate,
    /// The backend failed or did not answer in time (retryable).
    Backend,
}

/// A session store failure: its kind only, never row data or a backend's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionStoreError {
    kind: SessionStoreErrorKind,
}

impl SessionStoreError {
    /// An error of `kind`.
    pub const fn new(kind: SessionStoreErrorKind) -> Self {
        Self { kind }
    }

    /// What failed.
    pub const fn kind(&self) -> SessionStoreErrorKind {
        self.kind
    }
}

impl fmt::Display for SessionStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            SessionStoreErrorKind::Full => "session store is full",
            SessionStoreErrorKind::Duplicate => "session id already stored",
            SessionStoreErrorKind::Backend => "session store backend failed",
        })
    }
}

impl std::error::Error for SessionStoreError {}

/// A boxed future a session store returns.
pub type SessionStoreFuture<'a, T> = BoxFuture<'a, Result<T, SessionStoreError>>;

/// Where the 2025 sessions of every instance behind one URL are recorded.
///
/// A row is *live* while it has been used (created, touched, or kept busy by a sweep) within the
/// idle timeout each call names; a row idle longer is treated as gone by every operation and may
/// be deleted. Each operation is atomic with respect to the others and visible to every
/// instance sharing the store before it returns. An owner matches only the same owner (`None`
/// matches `None` only); a row another owner asks for is neither returned nor changed.
///
/// Tollgate ships [`MemorySessionStore`](crate::endpoint::MemorySessionStore) and, with the
/// `postgres` feature,
/// [`PostgresSessionStore`](crate::endpoint::PostgresSessionStore). Without a store an endpoint
/// keeps its sessions in its own memory.
pub trait SessionStore: Send + Sync + 'static {
    /// Adds `row`, used now, unless the store already holds `config`'s most live sessions, or
    /// the most per principal for its (named) owner, or the most anonymous ones
    /// (`SessionConfig::get_max_anonymous_sessions`) for a row without an owner: then
    /// [`SessionStoreErrorKind::Full`]
    /// (expired rows never count, and may be deleted to make room).
    fn create<'a>(
        &'a self,
        row: SessionRow,
        config: &'a SessionConfig,
    ) -> SessionStoreFuture<'a, ()>;

    /// The live row `id` names when `owner` owns it, marked used now. A store may write the use
    /// coarsely, skipping the write while the recorded use is less than a sixteenth of the idle
    /// timeout old (a session then ends up to that much early), but never later than exact.
    fn touch<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, Option<SessionRow>>;

    /// Records `level` on `owner`'s live row `id`; whether there was one.
    fn set_log_level<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        level: &'a str,
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, bool>;

    /// Deletes `owner`'s row `id`; whether there was one (an idle row not yet deleted counts).
    fn end<'a>(&'a self, id: &'a str, owner: Option<&'a str>) -> SessionStoreFuture<'a, bool>;

    /// Upkeep, run by every instance on a timer: marks the live rows in `busy` used now (a long
    /// call keeps its session alive), deletes rows idle for `idle_timeout`, and returns which of
    /// `held` are still live (an instance drops the streams of the others).
    fn sweep<'a>(
        &'a self,
        busy: &'a [String],
        held: &'a [String],
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, Vec<String>>;

    /// Records that the server-to-client request `request` of session `session` waits on
    /// `instance` for the client's answer. A store that does not route answers between
    /// instances keeps the default (nothing recorded: an answer is taken only by the instance
    /// that asked).
    fn expect_answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
        instance: &'a str,
    ) -> SessionStoreFuture<'a, ()> {
        let _ = (session, request, instance);
        Box::pin(std::future::ready(Ok(())))
    }

    /// Forgets a request that no longer waits (answered, given up, or its session ended).
    fn forget_answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
    ) -> SessionStoreFuture<'a, ()> {
        let _ = (session, request);
        Box::pin(std::future::ready(Ok(())))
    }

    /// Hands the client's `answer` (a JSON-RPC response, as sent) to the instance whose
    /// request `request` of `session` waits for it, and wakes that instance; whether one waits
    /// (a second answer to the same request finds none).
    fn answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
        answer: &'a str,
    ) -> SessionStoreFuture<'a, bool> {
        let _ = (session, request, answer);
        Box::pin(std::future::ready(Ok(false)))
    }

    /// Takes every answer handed to `instance`'s waiting requests.
    fn take_answers<'a>(&'a self, instance: &'a str) -> SessionStoreFuture<'a, Vec<SessionAnswer>> {
        let _ = instance;
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    /// Resolves when an answer may have been handed to `instance` (it may also resolve without
    /// one; Tollgate asks again every second in any case).
    fn answers_waiting<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, ()> {
        let _ = instance;
        Box::pin(std::future::pending())
    }

    /// Records events of shared sessions' streams, in order, so a client resuming a stream on
    /// another instance gets what it missed; for each event, the stream's events before its
    /// `keep_from` are no longer kept. Wakes the instances following those streams. `sweep`
    /// deletes the events of sessions that are gone and events older than the idle timeout. A
    /// store that does not share events keeps the default (a stream is resumed only where it
    /// was written).
    fn record_events<'a>(&'a self, events: &'a [SessionEvent]) -> SessionStoreFuture<'a, ()> {
        let _ = events;
        Box::pin(std::future::ready(Ok(())))
    }

    /// The kept events of `stream` in `session` after `after`, in order (`seq` 0 marks a stream
    /// without events yet, and is never returned); `None` when nothing of the stream is kept.
    /// Their `keep_from` is 0.
    fn stream_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> SessionStoreFuture<'a, Option<Vec<SessionEvent>>> {
        let _ = (session, stream, after);
        Box::pin(std::future::ready(Ok(None)))
    }

    /// Resolves when an event of `stream` in `session` may have been recorded (it may also
    /// resolve without one; Tollgate asks again every second in any case).
    fn events_waiting<'a>(&'a self, session: &'a str, stream: u64) -> BoxFuture<'a, ()> {
        let _ = (session, stream);
        Box::pin(std::future::pending())
    }

    /// Sends `message` (at most [`MAX_BROADCAST_BYTES`]) to every instance sharing the store,
    /// the sender included: resource updates, task changes and cancellations one instance hears
    /// of that others must act on.
    fn broadcast<'a>(&'a self, message: &'a str) -> SessionStoreFuture<'a, ()> {
        let _ = message;
        Box::pin(std::future::ready(Ok(())))
    }

    /// The messages broadcast from now on (`None`: this store does not broadcast).
    fn subscribe(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        None
    }
    /// Whether the store can serve now, for the built-in server's readiness probe
    /// ([`Health`](crate::transport::Health)): a database reachable (and SQLite writable). The
    /// server calls it at most once per readiness interval, bounded by the probe timeout. The
    /// default answers at once: a store in this process's memory is as ready as the process.
    fn ping(&self) -> SessionStoreFuture<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// The longest message [`SessionStore::broadcast`] carries, in bytes (within PostgreSQL's
/// `NOTIFY` payload bound).
pub const MAX_BROADCAST_BYTES: usize = 7_900;

impl<S: SessionStore + ?Sized> SessionStore for std::sync::Arc<S> {
    fn create<'a>(
        &'a self,
        row: SessionRow,
        config: &'a SessionConfig,
    ) -> SessionStoreFuture<'a, ()> {
        (**self).create(row, config)
    }

    fn touch<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, Option<SessionRow>> {
        (**self).touch(id, owner, idle_timeout)
    }

    fn set_log_level<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        level: &'a str,
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, bool> {
        (**self).set_log_level(id, owner, level, idle_timeout)
    }

    fn end<'a>(&'a self, id: &'a str, owner: Option<&'a str>) -> SessionStoreFuture<'a, bool> {
        (**self).end(id, owner)
    }

    fn sweep<'a>(
        &'a self,
        busy: &'a [String],
        held: &'a [String],
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, Vec<String>> {
        (**self).sweep(busy, held, idle_timeout)
    }

    fn expect_answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
        instance: &'a str,
    ) -> SessionStoreFuture<'a, ()> {
        (**self).expect_answer(session, request, instance)
    }

    fn forget_answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
    ) -> SessionStoreFuture<'a, ()> {
        (**self).forget_answer(session, request)
    }

    fn answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
        answer: &'a str,
    ) -> SessionStoreFuture<'a, bool> {
        (**self).answer(session, request, answer)
    }

    fn take_answers<'a>(&'a self, instance: &'a str) -> SessionStoreFuture<'a, Vec<SessionAnswer>> {
        (**self).take_answers(instance)
    }

    fn answers_waiting<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, ()> {
        (**self).answers_waiting(instance)
    }

    fn record_events<'a>(&'a self, events: &'a [SessionEvent]) -> SessionStoreFuture<'a, ()> {
        (**self).record_events(events)
    }

    fn stream_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> SessionStoreFuture<'a, Option<Vec<SessionEvent>>> {
        (**self).stream_events(session, stream, after)
    }

    fn events_waiting<'a>(&'a self, session: &'a str, stream: u64) -> BoxFuture<'a, ()> {
        (**self).events_waiting(session, stream)
    }

    fn broadcast<'a>(&'a self, message: &'a str) -> SessionStoreFuture<'a, ()> {
        (**self).broadcast(message)
    }

    fn subscribe(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        (**self).subscribe()
    }

    fn ping(&self) -> SessionStoreFuture<'_, ()> {
        (**self).ping()
    }
}
