//! The shared session store contract: where the 2025 sessions of several instances behind one
//! URL are recorded, so a session created by `initialize` on one instance is found, validated and
//! ended on any other.
//!
//! Owns [`SessionRow`] (a session's id, owner, opaque data and log level), the five operations a
//! store implements, [`MemorySessionStore`] (one process: several endpoints sharing it behave as
//! a cluster) and the contract check every store passes. Knows nothing of streams, HTTP or the
//! revisions' rules: `data` is written and read by `session/mod.rs` only. A store never sees a
//! session's streams: each instance keeps the streams of the sessions it serves.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

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
/// Tollgate ships [`MemorySessionStore`] and, with the `postgres` feature,
/// [`PostgresSessionStore`](crate::endpoint::PostgresSessionStore). Without a store an endpoint
/// keeps its sessions in its own memory.
pub trait SessionStore: Send + Sync + 'static {
    /// Adds `row`, used now, unless the store already holds `config`'s most live sessions, or
    /// the most per principal for its (named) owner: then [`SessionStoreErrorKind::Full`]
    /// (expired rows never count, and may be deleted to make room).
    fn create<'a>(
        &'a self,
        row: SessionRow,
        config: &'a SessionConfig,
    ) -> SessionStoreFuture<'a, ()>;

    /// The live row `id` names when `owner` owns it, marked used now.
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
}

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
}

/// Waiting requests by (session, request): the instance waiting, and its answer once given.
type Waiting = HashMap<(String, String), (String, Option<String>)>;

/// Sessions shared by the endpoints of one process: what a [`PostgresSessionStore`] does for
/// instances on several machines, for tests and for several endpoints in one server.
///
/// [`PostgresSessionStore`]: crate::endpoint::PostgresSessionStore
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use tollgate::endpoint::MemorySessionStore;
///
/// let shared = Arc::new(MemorySessionStore::new());
/// // Give `Arc::clone(&shared)` to each endpoint's `session_store`.
/// assert_eq!(shared.len(), 0);
/// ```
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    rows: Mutex<HashMap<String, (SessionRow, Instant)>>,
    /// Waiting requests by (session, request): the instance waiting, and its answer once given.
    answers: Mutex<Waiting>,
    /// Wakes the instances an answer was handed to, and the followers of streams.
    woken: Mutex<HashMap<String, std::sync::Arc<tokio::sync::Notify>>>,
    /// Kept events by (session, stream), by seq, with when they were written.
    events: Mutex<Events>,
}

type Events = HashMap<(String, u64), std::collections::BTreeMap<u64, (SessionEvent, Instant)>>;

impl MemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many rows it holds (live or not yet deleted).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn waker(&self, instance: &str) -> std::sync::Arc<tokio::sync::Notify> {
        let mut woken = self.woken.lock().unwrap_or_else(PoisonError::into_inner);
        std::sync::Arc::clone(woken.entry(instance.to_owned()).or_default())
    }

    fn events(&self) -> std::sync::MutexGuard<'_, Events> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn answers(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.answers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (SessionRow, Instant)>> {
        // Every update is one insert, remove or field store: a poisoned map is consistent.
        self.rows.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `owner`'s live row `id`, for an update.
    fn live<'m>(
        rows: &'m mut HashMap<String, (SessionRow, Instant)>,
        id: &str,
        owner: Option<&str>,
        idle_timeout: Duration,
    ) -> Option<&'m mut (SessionRow, Instant)> {
        rows.get_mut(id)
            .filter(|(row, used)| row.owner.as_deref() == owner && used.elapsed() < idle_timeout)
    }
}

fn ready<'a, T: Send + 'a>(value: Result<T, SessionStoreError>) -> SessionStoreFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl SessionStore for MemorySessionStore {
    fn create<'a>(
        &'a self,
        row: SessionRow,
        config: &'a SessionConfig,
    ) -> SessionStoreFuture<'a, ()> {
        let mut rows = self.lock();
        let idle = config.get_idle_timeout();
        let full = |rows: &HashMap<String, (SessionRow, Instant)>| {
            let live = || rows.values().filter(|(_, used)| used.elapsed() < idle);
            live().count() >= config.get_max_sessions()
                || row.owner.is_some()
                    && live().filter(|(r, _)| r.owner == row.owner).count()
                        >= config.get_max_sessions_per_principal()
        };
        if full(&rows) {
            return ready(Err(SessionStoreError::new(SessionStoreErrorKind::Full)));
        }
        rows.retain(|_, (_, used)| used.elapsed() < idle);
        if rows.contains_key(&row.id) {
            return ready(Err(SessionStoreError::new(
                SessionStoreErrorKind::Duplicate,
            )));
        }
        rows.insert(row.id.clone(), (row, Instant::now()));
        ready(Ok(()))
    }

    fn touch<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, Option<SessionRow>> {
        let mut rows = self.lock();
        let found = Self::live(&mut rows, id, owner, idle_timeout).map(|entry| {
            entry.1 = Instant::now();
            entry.0.clone()
        });
        ready(Ok(found))
    }

    fn set_log_level<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        level: &'a str,
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, bool> {
        let mut rows = self.lock();
        let found = Self::live(&mut rows, id, owner, idle_timeout).map(|entry| {
            entry.0.log_level = Some(level.to_owned());
            entry.1 = Instant::now();
        });
        ready(Ok(found.is_some()))
    }

    fn end<'a>(&'a self, id: &'a str, owner: Option<&'a str>) -> SessionStoreFuture<'a, bool> {
        let mut rows = self.lock();
        let owned = rows
            .get(id)
            .is_some_and(|(row, _)| row.owner.as_deref() == owner);
        ready(Ok(owned && rows.remove(id).is_some()))
    }

    fn sweep<'a>(
        &'a self,
        busy: &'a [String],
        held: &'a [String],
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, Vec<String>> {
        let mut rows = self.lock();
        let now = Instant::now();
        for id in busy {
            if let Some(entry) = rows.get_mut(id)
                && entry.1.elapsed() < idle_timeout
            {
                entry.1 = now;
            }
        }
        rows.retain(|_, (_, used)| used.elapsed() < idle_timeout);
        let live = held
            .iter()
            .filter(|id| rows.contains_key(id.as_str()))
            .cloned()
            .collect();
        self.answers()
            .retain(|(session, _), _| rows.contains_key(session.as_str()));
        let mut events = self.events();
        events.retain(|(session, _), _| rows.contains_key(session.as_str()));
        for kept in events.values_mut() {
            kept.retain(|_, (_, at)| at.elapsed() < idle_timeout);
        }
        events.retain(|_, kept| !kept.is_empty());
        ready(Ok(live))
    }

    fn record_events<'a>(&'a self, events: &'a [SessionEvent]) -> SessionStoreFuture<'a, ()> {
        let mut woken = Vec::new();
        {
            let mut kept = self.events();
            let now = Instant::now();
            for event in events {
                let stream = kept
                    .entry((event.session.clone(), event.stream))
                    .or_default();
                stream.retain(|seq, _| *seq >= event.keep_from);
                stream.entry(event.seq).or_insert((event.clone(), now));
                woken.push(stream_key(&event.session, event.stream));
            }
        }
        for key in woken {
            self.waker(&key).notify_one();
        }
        ready(Ok(()))
    }

    fn stream_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> SessionStoreFuture<'a, Option<Vec<SessionEvent>>> {
        let kept = self.events();
        let found = kept.get(&(session.to_owned(), stream)).map(|events| {
            events
                .range(after.saturating_add(1)..)
                .map(|(_, (event, _))| SessionEvent {
                    keep_from: 0,
                    ..event.clone()
                })
                .collect()
        });
        ready(Ok(found))
    }

    fn events_waiting<'a>(&'a self, session: &'a str, stream: u64) -> BoxFuture<'a, ()> {
        let waker = self.waker(&stream_key(session, stream));
        Box::pin(async move { waker.notified().await })
    }

    fn expect_answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
        instance: &'a str,
    ) -> SessionStoreFuture<'a, ()> {
        self.answers().insert(
            (session.to_owned(), request.to_owned()),
            (instance.to_owned(), None),
        );
        ready(Ok(()))
    }

    fn forget_answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
    ) -> SessionStoreFuture<'a, ()> {
        self.answers()
            .remove(&(session.to_owned(), request.to_owned()));
        ready(Ok(()))
    }

    fn answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
        answer: &'a str,
    ) -> SessionStoreFuture<'a, bool> {
        let instance = {
            let mut answers = self.answers();
            match answers.get_mut(&(session.to_owned(), request.to_owned())) {
                Some((instance, slot @ None)) => {
                    *slot = Some(answer.to_owned());
                    Some(instance.clone())
                }
                _ => None,
            }
        };
        if let Some(instance) = &instance {
            self.waker(instance).notify_one();
        }
        ready(Ok(instance.is_some()))
    }

    fn take_answers<'a>(&'a self, instance: &'a str) -> SessionStoreFuture<'a, Vec<SessionAnswer>> {
        let mut answers = self.answers();
        let given: Vec<(String, String)> = answers
            .iter()
            .filter(|(_, (i, a))| i == instance && a.is_some())
            .map(|(key, _)| key.clone())
            .collect();
        let taken = given
            .into_iter()
            .filter_map(|key| {
                let (_, answer) = answers.remove(&key)?;
                Some(SessionAnswer {
                    session: key.0,
                    request: key.1,
                    answer: answer?,
                })
            })
            .collect();
        ready(Ok(taken))
    }

    fn answers_waiting<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, ()> {
        let waker = self.waker(instance);
        Box::pin(async move { waker.notified().await })
    }
}

/// The session store contract, run against any store (the in-memory one here; PostgreSQL in
/// `tests/postgres_sessions.rs`). `prefix` keeps the rows of one run apart from another's; rows
/// are made idle by waiting past a one-second idle timeout (with a wide margin, so a slow
/// database still passes).
#[cfg(any(test, feature = "postgres"))]
#[doc(hidden)]
pub async fn check_session_store_contract(
    store: &dyn SessionStore,
    prefix: &str,
) -> Result<(), String> {
    let hour = Duration::from_secs(3600);
    let row = |id: &str, owner: Option<&str>| SessionRow {
        id: format!("{prefix}{id}"),
        owner: owner.map(str::to_owned),
        data: format!(r#"{{"id":"{id}"}}"#),
        log_level: None,
    };
    let fail = |what: &str| Err(format!("session store contract: {what}"));
    let roomy = SessionConfig::new()
        .max_sessions(1_000_000)
        .max_sessions_per_principal(2);
    let a = row("a", Some("alice"));
    if store.create(a.clone(), &roomy).await.is_err() {
        return fail("create");
    }
    if store.create(a.clone(), &roomy).await.map_err(|e| e.kind())
        != Err(SessionStoreErrorKind::Duplicate)
    {
        return fail("duplicate create");
    }
    if store.touch(&a.id, Some("alice"), hour).await != Ok(Some(a.clone())) {
        return fail("touch by the owner");
    }
    for other in [None, Some("bob"), Some("alice ")] {
        if store.touch(&a.id, other, hour).await != Ok(None) {
            return fail("touch by another owner");
        }
        if store.set_log_level(&a.id, other, "debug", hour).await != Ok(false) {
            return fail("log level set by another owner");
        }
        if store.end(&a.id, other).await != Ok(false) {
            return fail("end by another owner");
        }
    }
    if store
        .set_log_level(&a.id, Some("alice"), "debug", hour)
        .await
        != Ok(true)
    {
        return fail("log level");
    }
    let leveled = SessionRow {
        log_level: Some("debug".into()),
        ..a.clone()
    };
    if store.touch(&a.id, Some("alice"), hour).await != Ok(Some(leveled)) {
        return fail("touch after the log level");
    }
    if store
        .touch(&format!("{prefix}missing"), None, hour)
        .await
        .ok()
        .flatten()
        .is_some()
    {
        return fail("touch of a missing id");
    }
    // The per-principal bound, at and past it; anonymous rows are not bounded by it.
    if store
        .create(row("a2", Some("alice")), &roomy)
        .await
        .is_err()
    {
        return fail("create up to the per-principal bound");
    }
    if store
        .create(row("a3", Some("alice")), &roomy)
        .await
        .map_err(|e| e.kind())
        != Err(SessionStoreErrorKind::Full)
    {
        return fail("create past the per-principal bound");
    }
    for n in 0..3 {
        if store
            .create(row(&format!("anon{n}"), None), &roomy)
            .await
            .is_err()
        {
            return fail("anonymous create");
        }
    }
    if store.end(&a.id, Some("alice")).await != Ok(true) {
        return fail("end");
    }
    if store.end(&a.id, Some("alice")).await != Ok(false) {
        return fail("end twice");
    }
    if store.touch(&a.id, Some("alice"), hour).await != Ok(None) {
        return fail("touch after end");
    }
    // Idle rows: gone for an idle timeout they have outlived, kept by a sweep while busy.
    let idle = row("idle", None);
    let busy = row("busy", None);
    for r in [&idle, &busy] {
        if store.create(r.clone(), &roomy).await.is_err() {
            return fail("create before idling");
        }
    }
    let short = Duration::from_secs(1);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let live = store
        .sweep(
            std::slice::from_ref(&busy.id),
            &[idle.id.clone(), busy.id.clone()],
            hour,
        )
        .await;
    if live.map(|mut l| {
        l.sort();
        l
    }) != Ok(vec![busy.id.clone(), idle.id.clone()])
    {
        return fail("sweep of live rows");
    }
    if store.touch(&idle.id, None, short).await != Ok(None) {
        return fail("touch of an idle row");
    }
    if store
        .touch(&busy.id, None, short)
        .await
        .ok()
        .flatten()
        .is_none()
    {
        return fail("a busy row kept live by the sweep");
    }
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    if store
        .sweep(&[], std::slice::from_ref(&idle.id), short)
        .await
        != Ok(Vec::new())
    {
        return fail("sweep of an idle row");
    }
    if store.end(&idle.id, None).await != Ok(false) {
        return fail("end of a swept row");
    }
    check_answers(store, prefix).await?;
    check_events(store, prefix, &roomy).await
}

/// The event replay part of the contract.
#[cfg(any(test, feature = "postgres"))]
async fn check_events(
    store: &dyn SessionStore,
    prefix: &str,
    roomy: &SessionConfig,
) -> Result<(), String> {
    let fail = |what: &str| Err(format!("session store contract: {what}"));
    let hour = Duration::from_secs(3600);
    let session = format!("{prefix}events");
    let row = SessionRow {
        id: session.clone(),
        owner: None,
        data: "{}".into(),
        log_level: None,
    };
    if store.create(row, roomy).await.is_err() {
        return fail("create the session of the events");
    }
    let got = |events: Result<Option<Vec<SessionEvent>>, SessionStoreError>| {
        events.map(|e| e.map(|e| e.into_iter().map(|e| e.seq).collect::<Vec<_>>()))
    };
    let event = |seq: u64, keep_from: u64| SessionEvent {
        session: session.clone(),
        stream: 7,
        seq,
        frame: if seq == 0 {
            String::new()
        } else {
            format!("id: 7-{seq}\n\n")
        },
        response: seq == 3,
        keep_from,
    };
    if store.stream_events(&session, 7, 0).await != Ok(None) {
        return fail("a stream nothing was recorded of");
    }
    if store.record_events(&[event(0, 1)]).await.is_err() {
        return fail("record a stream's start");
    }
    if store.stream_events(&session, 7, 0).await != Ok(Some(Vec::new())) {
        return fail("a stream with no event yet");
    }
    if store
        .record_events(&[event(1, 1), event(2, 1)])
        .await
        .is_err()
    {
        return fail("record events");
    }
    let all = store.stream_events(&session, 7, 0).await;
    if all != Ok(Some(vec![event(1, 0), event(2, 0)])) {
        return fail("the events in order, as written");
    }
    if got(store.stream_events(&session, 7, 1).await) != Ok(Some(vec![2])) {
        return fail("the events after one");
    }
    if store.stream_events(&session, 8, 0).await != Ok(None) {
        return fail("another stream");
    }
    // Event 3 is written when only events from 2 are kept: event 1 is gone.
    if store.record_events(&[event(3, 2)]).await.is_err() {
        return fail("record the response");
    }
    if got(store.stream_events(&session, 7, 0).await) != Ok(Some(vec![2, 3])) {
        return fail("events before keep_from dropped");
    }
    // Gone with the session.
    if store.end(&session, None).await != Ok(true) {
        return fail("end the session of the events");
    }
    if store.sweep(&[], &[], hour).await.is_err() {
        return fail("sweep after the session ended");
    }
    if store.stream_events(&session, 7, 0).await != Ok(None) {
        return fail("events of an ended session");
    }
    Ok(())
}

/// The answer routing part of the contract.
#[cfg(any(test, feature = "postgres"))]
async fn check_answers(store: &dyn SessionStore, prefix: &str) -> Result<(), String> {
    let fail = |what: &str| Err(format!("session store contract: {what}"));
    let session = format!("{prefix}answers");
    let (here, there) = (format!("{prefix}i1"), format!("{prefix}i2"));
    let answer = r#"{"jsonrpc":"2.0","id":"r1","result":{}}"#;
    if store.expect_answer(&session, "r1", &here).await.is_err() {
        return fail("expect an answer");
    }
    if store.answer(&session, "r0", answer).await != Ok(false) {
        return fail("an answer nobody waits for");
    }
    if store.answer(&session, "r1", answer).await != Ok(true) {
        return fail("an answer handed over");
    }
    if store.answer(&session, "r1", answer).await != Ok(false) {
        return fail("a second answer to the same request");
    }
    if store.take_answers(&there).await != Ok(Vec::new()) {
        return fail("another instance's answers");
    }
    let taken = SessionAnswer {
        session: session.clone(),
        request: "r1".into(),
        answer: answer.into(),
    };
    if store.take_answers(&here).await != Ok(vec![taken]) {
        return fail("take the answers");
    }
    if store.take_answers(&here).await != Ok(Vec::new()) {
        return fail("answers taken once");
    }
    let forgotten = async {
        store.expect_answer(&session, "r2", &here).await?;
        store.forget_answer(&session, "r2").await?;
        store.answer(&session, "r2", answer).await
    };
    if forgotten.await != Ok(false) {
        return fail("an answer to a forgotten request");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_keeps_the_contract() {
        let store = MemorySessionStore::new();
        assert_eq!(check_session_store_contract(&store, "s-").await, Ok(()));
    }

    #[tokio::test]
    async fn the_bound_at_and_past_with_expired_rows_giving_way() {
        let store = MemorySessionStore::new();
        let config = SessionConfig::new().max_sessions(2);
        let row = |id: &str| SessionRow {
            id: id.into(),
            owner: None,
            data: "{}".into(),
            log_level: None,
        };
        assert_eq!(store.create(row("a"), &config).await, Ok(()));
        assert_eq!(store.create(row("b"), &config).await, Ok(()));
        assert_eq!(
            store.create(row("c"), &config).await.map_err(|e| e.kind()),
            Err(SessionStoreErrorKind::Full)
        );
        // The shortest idle timeout is one second: once it passes, the rows give way.
        let short = SessionConfig::new()
            .max_sessions(2)
            .idle_timeout(Duration::from_secs(1));
        tokio::time::sleep(Duration::from_millis(1_050)).await;
        assert_eq!(store.create(row("c"), &short).await, Ok(()));
        assert_eq!(store.len(), 1, "the expired rows were deleted");
    }
}
