//! Sessions for the 2025 revisions: issued at `initialize`, required afterwards, bounded in
//! number (in all and per principal) and idle time, each owned by the principal admitted at its
//! `initialize`; held in this process's memory, or recorded in a shared [`SessionStore`] so
//! every instance behind one URL serves them.
//!
//! Owns session identifiers (128 random bits from the operating system, hex-encoded), what a
//! session remembers (owner, revision, client capabilities and implementation, its streams), the
//! row a shared store keeps of it (`record.rs`), and the sweep that ends idle sessions and prunes
//! their replay buffers on a timer. A lookup by any principal but the owner finds nothing and
//! touches nothing. Ending a session, by `DELETE` or by idling out, ends its streams and cancels
//! its requests still running. With a shared store, the store decides whether a session lives
//! (its bounds and idle clock hold for the cluster) and each instance keeps the streams of the
//! sessions it has served, created at the session's first request there and dropped when the
//! store no longer has it. Knows nothing of HTTP; the 2025 gate (`pipeline/gate/legacy.rs` and `pipeline/session.rs`) decides
//! when to create, look up and end one. 2026-07-28 has no sessions.

pub(crate) mod bus;
#[cfg(any(test, feature = "postgres"))]
pub(crate) mod contract;
pub(crate) mod local;
pub(crate) mod memory;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
mod record;
mod relay;
pub(crate) mod replay;
pub(crate) mod store;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use crate::facts::context::{ClientCapabilities, ClientInfo};
use crate::stream::StreamConfig;
use crate::stream::session::{Budget, HoldLimits, SessionStreams, Usage};
use crate::version::ProtocolVersion;
use store::{SessionStore, SessionStoreErrorKind};

/// How long a shared session store may take to answer one call before the call counts as
/// failed (the request gets the revision's retryable answer).
pub(crate) const SESSION_STORE_CALL_BOUND: Duration = Duration::from_secs(10);

/// Bounds on the session store, and on what each session and each principal may hold at once.
///
/// Every bound has a safe default (see [`new`](Self::new)); past a bound on requests the request
/// is refused with 503 / -32603 `Server busy`, past a bound on resumable streams a new answer
/// still streams but without event ids (it cannot be resumed, and ends with its connection).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tollgate::endpoint::SessionConfig;
///
/// let config = SessionConfig::new().max_sessions(1_000).idle_timeout(Duration::from_secs(600));
/// assert_eq!(config.get_max_sessions(), 1_000);
/// assert_eq!(config.get_max_anonymous_sessions(), 1_000);
/// assert_eq!(config.get_max_lifetime(), Duration::from_secs(24 * 3600));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    max_sessions: usize,
    max_sessions_per_principal: usize,
    max_anonymous_sessions: usize,
    idle_timeout: Duration,
    max_lifetime: Duration,
    pub(crate) held: crate::stream::session::HoldLimits,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            max_sessions: 10_000,
            max_sessions_per_principal: 256,
            max_anonymous_sessions: 1_000,
            idle_timeout: Duration::from_secs(30 * 60),
            max_lifetime: Duration::from_secs(24 * 3600),
            held: crate::stream::session::HoldLimits::default(),
        }
    }
}

impl SessionConfig {
    /// The defaults: at most 10,000 live sessions, at most 256 of them owned by any one admitted
    /// principal and at most 1,000 anonymous ones, each ended after 30 minutes without a request
    /// and 24 hours after it began, whatever it is doing; per session at most 64 requests running
    /// and 16 MiB reserved for replay; per principal at most 256 requests running, 256 resumable
    /// streams and 64 MiB reserved for replay; 512 MiB reserved for replay in all; a
    /// server-to-client request unanswered after 60 seconds fails.
    pub fn new() -> Self {
        Self::default()
    }

    /// The most live sessions (at least 1). When full, expired sessions are dropped first; if
    /// none has expired, `initialize` is refused with 503.
    #[must_use]
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// The most live sessions one admitted principal may own (at least 1); its next
    /// `initialize` is refused with 503 until one ends. Anonymous callers cannot be told apart:
    /// they share [`max_anonymous_sessions`](Self::max_anonymous_sessions).
    #[must_use]
    pub fn max_sessions_per_principal(mut self, n: usize) -> Self {
        self.max_sessions_per_principal = n.max(1);
        self
    }

    /// The most live sessions without a principal (admitted anonymously), together (default
    /// 1,000; 0 refuses every anonymous `initialize`): anonymous callers cannot fill
    /// [`max_sessions`](Self::max_sessions) and lock the named principals out. Past it,
    /// `initialize` is refused with 503.
    #[must_use]
    pub fn max_anonymous_sessions(mut self, n: usize) -> Self {
        self.max_anonymous_sessions = n;
        self
    }

    /// How long a session may go without a request before it ends (at least one second).
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout.max(Duration::from_secs(1));
        self
    }

    /// The longest a session lives (default 24 hours, at least one second): it ends then even
    /// with requests running (they are cancelled) or its idle clock fresh, and the client
    /// initializes again. With a shared store each instance counts from when it first served
    /// the session.
    #[must_use]
    pub fn max_lifetime(mut self, lifetime: Duration) -> Self {
        self.max_lifetime = lifetime.max(Duration::from_secs(1));
        self
    }

    /// The most requests one session may have running at once (default 64, at least 1); the
    /// next is refused with 503 / -32603 `Server busy` until one ends.
    #[must_use]
    pub fn max_requests_per_session(mut self, n: usize) -> Self {
        self.held.requests = n.max(1);
        self
    }

    /// The most requests one admitted principal may have running at once in all its sessions
    /// (default 256, at least 1); the next is refused with 503 / -32603 `Server busy`.
    /// Anonymous sessions are bounded by [`max_requests_per_session`](Self::max_requests_per_session).
    #[must_use]
    pub fn max_requests_per_principal(mut self, n: usize) -> Self {
        self.held.principal_requests = n.max(1);
        self
    }

    /// The most resumable streams one admitted principal may hold in all its sessions (default
    /// 256, at least 1; a session keeps at most `StreamConfig::max_streams` of them). Past it a
    /// new answer streams without event ids, and a new standalone `GET` stream is refused with 503.
    #[must_use]
    pub fn max_streams_per_principal(mut self, n: usize) -> Self {
        self.held.principal_streams = n.max(1);
        self
    }

    /// The bytes one session may reserve for replay (default 16 MiB): each resumable stream
    /// reserves `StreamConfig::replay_bytes`, given back when the stream is forgotten. Past it a
    /// new answer streams without event ids, and a new standalone `GET` stream is refused with 503.
    #[must_use]
    pub fn max_replay_bytes_per_session(mut self, bytes: usize) -> Self {
        self.held.session_replay = bytes;
        self
    }

    /// The bytes one admitted principal may reserve for replay in all its sessions (default
    /// 64 MiB), as [`max_replay_bytes_per_session`](Self::max_replay_bytes_per_session).
    #[must_use]
    pub fn max_replay_bytes_per_principal(mut self, bytes: usize) -> Self {
        self.held.principal_replay = bytes;
        self
    }

    /// The bytes every session of the endpoint may reserve for replay together (default
    /// 512 MiB), as [`max_replay_bytes_per_session`](Self::max_replay_bytes_per_session).
    #[must_use]
    pub fn max_replay_bytes(mut self, bytes: usize) -> Self {
        self.held.replay = bytes;
        self
    }

    /// How long a server-to-client request (elicitation, sampling, roots) waits for the
    /// client's answer (default 60 seconds, at least one second); then
    /// `ClientRequests::send` fails with `ClientRequestError::TimedOut`.
    #[must_use]
    pub fn client_request_timeout(mut self, timeout: Duration) -> Self {
        self.held.client_request_timeout = timeout.max(Duration::from_secs(1));
        self
    }

    /// The session bound.
    pub fn get_max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// The idle timeout.
    pub fn get_idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// The per-principal session bound.
    pub fn get_max_sessions_per_principal(&self) -> usize {
        self.max_sessions_per_principal
    }

    /// The bound on anonymous sessions.
    pub fn get_max_anonymous_sessions(&self) -> usize {
        self.max_anonymous_sessions
    }

    /// The longest a session lives.
    pub fn get_max_lifetime(&self) -> Duration {
        self.max_lifetime
    }

    /// The bound on one session's running requests.
    pub fn get_max_requests_per_session(&self) -> usize {
        self.held.requests
    }

    /// The bound on one principal's running requests.
    pub fn get_max_requests_per_principal(&self) -> usize {
        self.held.principal_requests
    }

    /// The bound on one principal's resumable streams.
    pub fn get_max_streams_per_principal(&self) -> usize {
        self.held.principal_streams
    }

    /// The replay bytes one session may reserve.
    pub fn get_max_replay_bytes_per_session(&self) -> usize {
        self.held.session_replay
    }

    /// The replay bytes one principal may reserve.
    pub fn get_max_replay_bytes_per_principal(&self) -> usize {
        self.held.principal_replay
    }

    /// The replay bytes every session may reserve together.
    pub fn get_max_replay_bytes(&self) -> usize {
        self.held.replay
    }

    /// How long a server-to-client request waits for its answer.
    pub fn get_client_request_timeout(&self) -> Duration {
        self.held.client_request_timeout
    }
}

/// What a session remembers from its `initialize`.
#[derive(Clone, Debug)]
pub(crate) struct Session {
    /// The principal admitted at `initialize` (`None`: anonymous). Only it can use the session.
    pub(crate) owner: Option<Arc<str>>,
    pub(crate) revision: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<ClientInfo>,
    /// Set by `logging/setLevel`.
    pub(crate) log_level: Option<crate::wire::level::LogLevel>,
    /// Its event streams, in-flight requests and idle clock.
    pub(crate) streams: Arc<SessionStreams>,
}

/// Why a session could not be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CreateFailure {
    /// The store is full of live sessions, or the principal owns its most.
    Full,
    /// The operating system gave no randomness.
    NoEntropy,
    /// The shared store failed or did not answer in time.
    Unavailable,
}

/// The shared session store failed or did not answer within [`SESSION_STORE_CALL_BOUND`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unavailable;

/// The sessions one endpoint serves: all of them, or (with a shared store) those it has served.
pub(crate) struct SessionTable {
    config: SessionConfig,
    entries: Mutex<Entries>,
    /// Whether the sweep task runs (started with the first session, inside a runtime).
    sweeping: std::sync::atomic::AtomicBool,
    /// Where the sessions of every instance are recorded, when they are shared.
    shared: Option<Arc<dyn SessionStore>>,
    /// How a session's streams are bounded (for a session first seen here).
    streams: StreamConfig,
    /// The endpoint's request limits, under which a shared row is read.
    limits: tollgate_json::JsonLimits,
    /// The endpoint's response limits, under which notifications to its sessions are written.
    output: tollgate_json::OutputLimits,
    /// This instance's name and waiting requests, with a shared store.
    relay: Option<Arc<relay::Relay>>,
    /// The endpoint's event bus, for events other instances send (with a shared store).
    publisher: std::sync::OnceLock<crate::model::subscription::Publisher>,
}

#[derive(Default)]
struct Entries {
    /// By id. Only this instance puts ids in (made here, or read from the shared store for one a
    /// client sent and the store had), so foldhash's per-process seed serves as `NameMap`'s
    /// does: a lookup hashes the id in a fraction of SipHash's instructions.
    sessions: HashMap<Arc<str>, Session, foldhash::fast::RandomState>,
    /// Live sessions per named principal, with what the principal holds in all of them.
    owned: HashMap<Arc<str>, (usize, Arc<Usage>)>,
    /// Live sessions without a principal.
    anonymous: usize,
    /// What each session and principal may hold.
    limits: HoldLimits,
    /// What every session holds together.
    endpoint: Arc<Usage>,
}

impl Entries {
    fn insert(&mut self, id: Arc<str>, session: Session) {
        let principal = match &session.owner {
            Some(owner) => {
                let (n, usage) = self.owned.entry(Arc::clone(owner)).or_default();
                *n += 1;
                Some(Arc::clone(usage))
            }
            None => {
                self.anonymous += 1;
                None
            }
        };
        let _ = session.streams.budget.set(Budget {
            limits: self.limits,
            principal,
            endpoint: Arc::clone(&self.endpoint),
        });
        if let Some(replaced) = self.sessions.insert(id, session) {
            self.uncount(&replaced);
        }
    }

    fn uncount(&mut self, session: &Session) {
        match &session.owner {
            Some(owner) => {
                if let Some((n, _)) = self.owned.get_mut(owner) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        self.owned.remove(owner);
                    }
                }
            }
            None => self.anonymous = self.anonymous.saturating_sub(1),
        }
    }

    fn remove(&mut self, id: &str) -> Option<Session> {
        let session = self.sessions.remove(id)?;
        self.uncount(&session);
        Some(session)
    }

    /// Ends every session idle for `timeout` (and not busy), or alive for `lifetime` (busy or
    /// not: its requests are cancelled).
    fn expire(&mut self, now: Instant, timeout: Duration, lifetime: Duration) {
        let expired: Vec<Arc<str>> = self
            .sessions
            .iter()
            .filter(|(_, s)| {
                s.streams.age(now) >= lifetime
                    || s.streams.idle_for(now) >= timeout && !s.streams.is_busy()
            })
            .map(|(id, _)| Arc::clone(id))
            .collect();
        if !expired.is_empty() {
            let ended = expired.len();
            tracing::info!(target: crate::wire::log::SESSION, ended, "sessions ended: idle or past their lifetime");
        }
        for id in expired {
            if let Some(session) = self.remove(&id) {
                session.streams.close();
            }
        }
    }
}

/// The principal a request was admitted as, compared with a session's owner.
fn owns(session: &Session, principal: Option<&str>) -> bool {
    session.owner.as_deref() == principal
}

/// Spawns the task `start` makes on the current runtime unless `running` says it runs already.
/// Outside a runtime nothing starts and the flag stays clear, so a later call inside one starts
/// it.
pub(crate) fn spawn_once<F>(running: &std::sync::atomic::AtomicBool, start: impl FnOnce() -> F)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    use std::sync::atomic::Ordering;
    // A load first: most calls find it running, and a plain read costs no cache-line write.
    if running.load(Ordering::Acquire) || running.swap(true, Ordering::AcqRel) {
        return;
    }
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(start());
        }
        Err(_) => running.store(false, Ordering::Release),
    }
}

/// A shared store's call, bounded in time; any failure is [`Unavailable`] (the error's kind is
/// handed back for `create`, which tells a full store from a failed one).
async fn bounded<T>(call: store::SessionStoreFuture<'_, T>) -> Result<T, store::SessionStoreError> {
    crate::facts::telemetry::stage_fallible("session_store", async {
        let called = tokio::time::timeout(SESSION_STORE_CALL_BOUND, call).await;
        let outcome = match &called {
            Ok(Ok(_)) => None,
            // A full store is an answer, not a failure.
            Ok(Err(e)) if e.kind() == SessionStoreErrorKind::Full => None,
            Ok(Err(_)) => Some("error"),
            Err(_) => Some("timeout"),
        };
        if let Some(outcome) = outcome {
            let store = "session";
            tracing::warn!(target: crate::wire::log::STORE, store, outcome, "store call failed");
        }
        called.unwrap_or_else(|_| {
            Err(store::SessionStoreError::new(
                SessionStoreErrorKind::Backend,
            ))
        })
    })
    .await
}

impl SessionTable {
    /// The store shared with other instances, if any (for the built-in server's readiness
    /// probe).
    pub(crate) fn shared_store(&self) -> Option<&Arc<dyn SessionStore>> {
        self.shared.as_ref()
    }

    pub(crate) fn new(
        config: SessionConfig,
        streams: StreamConfig,
        limits: tollgate_json::JsonLimits,
        shared: Option<Arc<dyn SessionStore>>,
    ) -> Self {
        Self {
            config,
            entries: Mutex::new(Entries {
                limits: config.held,
                ..Entries::default()
            }),
            sweeping: std::sync::atomic::AtomicBool::new(false),
            relay: shared.as_ref().and_then(relay::Relay::new).map(Arc::new),
            shared,
            streams,
            limits,
            output: tollgate_json::OutputLimits::default(),
            publisher: std::sync::OnceLock::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A panic while holding the lock cannot leave an entry half-written (every update is a
        // single insert, remove, count or timestamp store), so a poisoned map is still
        // consistent.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes the notifications it sends its sessions under `output` (the endpoint's response
    /// limits; the defaults until set).
    pub(crate) fn with_output(mut self, output: tollgate_json::OutputLimits) -> Self {
        self.output = output;
        self
    }

    /// How many sessions are open here.
    pub(crate) fn len(&self) -> usize {
        self.lock().sessions.len()
    }

    /// What a session's requests, streams and requests to the client are held to.
    pub(crate) fn held(&self) -> crate::stream::session::HoldLimits {
        self.config.held
    }

    /// The streams of a new session here. With a shared store the store's idle clock decides
    /// when a session ends (its requests may all go to other instances while its stream is held
    /// here), so the streams keep no idle clock of their own.
    pub(crate) fn new_streams(&self, revision: ProtocolVersion) -> Arc<SessionStreams> {
        let idle = if self.shared.is_some() {
            Duration::MAX
        } else {
            self.config.idle_timeout
        };
        Arc::new(SessionStreams::new(self.streams, revision, idle))
    }

    /// How often the sweep runs: a quarter of the idle timeout, between 250 ms and 60 s (a busy
    /// session is refreshed in the shared store well within its idle timeout).
    fn sweep_interval(&self) -> Duration {
        (self.config.idle_timeout / 4).clamp(Duration::from_millis(250), Duration::from_secs(60))
    }

    /// Starts the sweep on the current runtime, once; it stops when the table is dropped.
    fn start_sweep(self: &Arc<Self>) {
        let table: Weak<Self> = Arc::downgrade(self);
        let interval = self.sweep_interval();
        spawn_once(&self.sweeping, || async move {
            let mut ticks = tokio::time::interval(interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                let Some(table) = table.upgrade() else {
                    return;
                };
                table.sweep(Instant::now());
                table.sweep_shared().await;
            }
        });
    }

    /// Ends idle sessions (kept here alone) and prunes the replay buffers of the others.
    pub(crate) fn sweep(&self, now: Instant) {
        let live: Vec<Arc<SessionStreams>> = {
            let mut entries = self.lock();
            if self.shared.is_none() {
                entries.expire(now, self.config.idle_timeout, self.config.max_lifetime);
            }
            entries
                .sessions
                .values()
                .map(|s| Arc::clone(&s.streams))
                .collect()
        };
        for streams in live {
            streams.sweep();
        }
    }

    /// With a shared store: ends everywhere the sessions this instance has served for the
    /// lifetime ceiling, keeps the others busy here alive there, and ends here the sessions it
    /// no longer has (ended on another instance, or idle everywhere). A store that fails is
    /// asked again at the next tick; nothing is ended for its failure.
    pub(crate) async fn sweep_shared(&self) {
        let Some(shared) = &self.shared else {
            return;
        };
        let now = Instant::now();
        let (held, busy, old) = {
            let entries = self.lock();
            let held: Vec<String> = entries.sessions.keys().map(|id| id.to_string()).collect();
            let old_enough = |s: &Session| s.streams.age(now) >= self.config.max_lifetime;
            let busy: Vec<String> = entries
                .sessions
                .iter()
                .filter(|(_, s)| s.streams.is_busy() && !old_enough(s))
                .map(|(id, _)| id.to_string())
                .collect();
            let old: Vec<(String, Option<Arc<str>>)> = entries
                .sessions
                .iter()
                .filter(|(_, s)| old_enough(s))
                .map(|(id, s)| (id.to_string(), s.owner.clone()))
                .collect();
            (held, busy, old)
        };
        // Sessions at the lifetime ceiling end for every instance, busy or not.
        for (id, owner) in old {
            if bounded(shared.end(&id, owner.as_deref())).await.is_ok() {
                self.forget(&id, owner.as_deref());
            }
        }
        let Ok(live) = bounded(shared.sweep(&busy, &held, self.config.idle_timeout)).await else {
            return;
        };
        let live: std::collections::HashSet<&str> = live.iter().map(String::as_str).collect();
        let gone: Vec<Session> = {
            let mut entries = self.lock();
            held.iter()
                .filter(|id| !live.contains(id.as_str()))
                .filter_map(|id| entries.remove(id))
                .collect()
        };
        for session in gone {
            session.streams.close();
        }
    }

    /// Starts a session and returns its identifier.
    pub(crate) async fn create(
        self: &Arc<Self>,
        session: Session,
    ) -> Result<Arc<str>, CreateFailure> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|_| CreateFailure::NoEntropy)?;
        let id: Arc<str> = Arc::from(crate::wire::syntax::hex(&bytes));
        let now = Instant::now();
        session.streams.touch(now);
        self.start_sweep();
        if let Some(shared) = &self.shared {
            let row = record::row(&id, &session).ok_or(CreateFailure::Unavailable)?;
            match bounded(shared.create(row, &self.config)).await {
                Ok(()) => {}
                Err(e) if e.kind() == SessionStoreErrorKind::Full => {
                    return Err(CreateFailure::Full);
                }
                Err(_) => return Err(CreateFailure::Unavailable),
            }
            self.route(&id, &session.streams);
            self.start_receiving();
            self.lock().insert(Arc::clone(&id), session);
            tracing::debug!(target: crate::wire::log::SESSION, "session created");
            return Ok(id);
        }
        let mut entries = self.lock();
        let full = |e: &Entries| {
            let (owned, max) = match &session.owner {
                Some(o) => (
                    e.owned.get(o).map_or(0, |(n, _)| *n),
                    self.config.max_sessions_per_principal,
                ),
                None => (e.anonymous, self.config.max_anonymous_sessions),
            };
            e.sessions.len() >= self.config.max_sessions || owned >= max
        };
        if full(&entries) {
            entries.expire(now, self.config.idle_timeout, self.config.max_lifetime);
        }
        if full(&entries) {
            return Err(CreateFailure::Full);
        }
        entries.insert(Arc::clone(&id), session);
        tracing::debug!(target: crate::wire::log::SESSION, "session created");
        Ok(id)
    }

    /// The live session `id` names when `principal` owns it, refreshing its idle clock; an
    /// expired one is ended. Another principal's session is not found, and not touched. With a
    /// shared store, a session first seen here gets its streams here, once however many of its
    /// requests arrive together.
    pub(crate) async fn touch(
        self: &Arc<Self>,
        id: &str,
        principal: Option<&str>,
    ) -> Result<Option<Session>, Unavailable> {
        let Some(shared) = &self.shared else {
            return Ok(self.touch_here(id, principal));
        };
        // An instance that only serves sessions made elsewhere sweeps them too, and hears the
        // others.
        self.start_sweep();
        self.start_receiving();
        let row = bounded(shared.touch(id, principal, self.config.idle_timeout))
            .await
            .map_err(|_| Unavailable)?;
        let Some(row) = row else {
            self.forget(id, principal);
            return Ok(None);
        };
        let level = record::level(&row);
        let mut entries = self.lock();
        if let Some(session) = entries.sessions.get_mut(id)
            && owns(session, principal)
        {
            session.log_level = level;
            session.streams.touch(Instant::now());
            return Ok(Some(session.clone()));
        }
        let Some(mut session) =
            record::session(&row, &self.limits, |revision| self.new_streams(revision))
        else {
            // A row this version of Tollgate cannot read: refused as the store failing would be.
            return Err(Unavailable);
        };
        session.log_level = level;
        // Routed before any request can see the streams.
        self.route(id, &session.streams);
        entries.insert(Arc::from(id), session.clone());
        Ok(Some(session))
    }

    /// Lets a shared session's answers find this instance.
    fn route(self: &Arc<Self>, id: &str, streams: &SessionStreams) {
        if let Some(shared) = &self.shared
            && let Some(route) = relay::Route::new(self, shared, id)
        {
            let _ = streams.route.set(Arc::new(route));
        }
    }

    /// The streams of session `id` here, if it has been served here.
    fn streams_of(&self, id: &str) -> Option<Arc<SessionStreams>> {
        self.lock().sessions.get(id).map(|s| Arc::clone(&s.streams))
    }

    fn touch_here(&self, id: &str, principal: Option<&str>) -> Option<Session> {
        let now = Instant::now();
        let mut entries = self.lock();
        let session = entries.sessions.get(id)?;
        if !owns(session, principal) {
            return None;
        }
        if session.streams.idle_for(now) < self.config.idle_timeout
            && session.streams.age(now) < self.config.max_lifetime
        {
            session.streams.touch(now);
            return Some(session.clone());
        }
        if let Some(expired) = entries.remove(id) {
            expired.streams.close();
        }
        None
    }

    /// Drops `principal`'s session `id` from this instance, ending its streams here.
    fn forget(&self, id: &str, principal: Option<&str>) {
        let removed = {
            let mut entries = self.lock();
            match entries.sessions.get(id) {
                Some(session) if owns(session, principal) => entries.remove(id),
                _ => None,
            }
        };
        if let Some(session) = removed {
            session.streams.close();
        }
    }

    /// Records the log level a session's client chose; whether `principal`'s session is live.
    pub(crate) async fn set_log_level(
        &self,
        id: &str,
        principal: Option<&str>,
        level: crate::wire::level::LogLevel,
    ) -> Result<bool, Unavailable> {
        if let Some(shared) = &self.shared {
            let set = shared.set_log_level(id, principal, level.as_str(), self.config.idle_timeout);
            if !bounded(set).await.map_err(|_| Unavailable)? {
                return Ok(false);
            }
        }
        match self.lock().sessions.get_mut(id) {
            Some(session) if owns(session, principal) => {
                session.log_level = Some(level);
                Ok(true)
            }
            // Recorded in the shared store; this instance reads it at the session's next request.
            _ => Ok(self.shared.is_some()),
        }
    }

    /// Ends `principal`'s session `id`; whether it existed (another principal's is untouched).
    /// With a shared store, the other instances end their streams of it at their next sweep.
    pub(crate) async fn end(&self, id: &str, principal: Option<&str>) -> Result<bool, Unavailable> {
        let ended = match &self.shared {
            Some(shared) => bounded(shared.end(id, principal))
                .await
                .map_err(|_| Unavailable)?,
            None => self
                .lock()
                .sessions
                .get(id)
                .is_some_and(|s| owns(s, principal)),
        };
        self.forget(id, principal);
        if ended {
            tracing::debug!(target: crate::wire::log::SESSION, "session ended: deleted");
        }
        Ok(ended)
    }

    /// Every live session's streams here (a snapshot).
    pub(crate) fn all_streams(&self) -> Vec<Arc<SessionStreams>> {
        self.lock()
            .sessions
            .values()
            .map(|s| Arc::clone(&s.streams))
            .collect()
    }

    /// Ends every open stream connection of every session (server shutdown); the streams stay
    /// resumable.
    pub(crate) fn detach_all(&self) {
        for streams in self.all_streams() {
            streams.detach_all();
        }
    }
}

#[cfg(test)]
mod tests;
