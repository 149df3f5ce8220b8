//! Sessions for the 2025 revisions: issued at `initialize`, required afterwards, bounded in
//! number (in all and per principal) and idle time, held in memory, each owned by the principal
//! admitted at its `initialize`.
//!
//! Owns session identifiers (128 random bits from the operating system, hex-encoded), what a
//! session remembers (owner, revision, client capabilities and implementation, its streams), and
//! the sweep that ends idle sessions and prunes their replay buffers on a timer. A lookup by any
//! principal but the owner finds nothing and touches nothing. Ending a session, by `DELETE` or by
//! idling out, ends its streams and cancels its requests still running. Knows nothing of HTTP;
//! the 2025 gate (`revision/legacy.rs`) decides when to create, look up and end one. 2026-07-28
//! has no sessions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use crate::facts::context::{ClientCapabilities, ClientInfo};
use crate::stream::session::SessionStreams;
use crate::version::ProtocolVersion;

/// Bounds on the session store.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tollgate::endpoint::SessionConfig;
///
/// let config = SessionConfig::new().max_sessions(1_000).idle_timeout(Duration::from_secs(600));
/// assert_eq!(config.get_max_sessions(), 1_000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    max_sessions: usize,
    max_sessions_per_principal: usize,
    idle_timeout: Duration,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            max_sessions: 10_000,
            max_sessions_per_principal: 256,
            idle_timeout: Duration::from_secs(30 * 60),
        }
    }
}

impl SessionConfig {
    /// The defaults: at most 10,000 live sessions, at most 256 of them owned by any one admitted
    /// principal, each ended after 30 minutes without a request.
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
    /// `initialize` is refused with 503 until one ends. Anonymous callers cannot be told apart,
    /// so they are bounded by [`max_sessions`](Self::max_sessions) alone.
    #[must_use]
    pub fn max_sessions_per_principal(mut self, n: usize) -> Self {
        self.max_sessions_per_principal = n.max(1);
        self
    }

    /// How long a session may go without a request before it ends (at least one second).
    #[must_use]
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout.max(Duration::from_secs(1));
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
}

pub(crate) struct SessionStore {
    config: SessionConfig,
    entries: Mutex<Entries>,
    /// Whether the sweep task runs (started with the first session, inside a runtime).
    sweeping: std::sync::atomic::AtomicBool,
}

#[derive(Default)]
struct Entries {
    sessions: HashMap<Arc<str>, Session>,
    /// Live sessions per named principal.
    owned: HashMap<Arc<str>, usize>,
}

impl Entries {
    fn remove(&mut self, id: &str) -> Option<Session> {
        let session = self.sessions.remove(id)?;
        if let Some(owner) = &session.owner
            && let Some(n) = self.owned.get_mut(owner)
        {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.owned.remove(owner);
            }
        }
        Some(session)
    }

    /// Ends every session idle for `timeout`.
    fn expire(&mut self, now: Instant, timeout: Duration) {
        let expired: Vec<Arc<str>> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.streams.idle_for(now) >= timeout && !s.streams.is_busy())
            .map(|(id, _)| Arc::clone(id))
            .collect();
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

impl SessionStore {
    pub(crate) fn new(config: SessionConfig) -> Self {
        Self {
            config,
            entries: Mutex::new(Entries::default()),
            sweeping: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // A panic while holding the lock cannot leave an entry half-written (every update is a
        // single insert, remove, count or timestamp store), so a poisoned map is still
        // consistent.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many sessions are open.
    pub(crate) fn len(&self) -> usize {
        self.lock().sessions.len()
    }

    /// How long a session may go without a request.
    pub(crate) fn idle_timeout(&self) -> Duration {
        self.config.idle_timeout
    }

    /// How often the sweep runs: a quarter of the idle timeout, between 1 s and 60 s.
    fn sweep_interval(&self) -> Duration {
        (self.config.idle_timeout / 4).clamp(Duration::from_secs(1), Duration::from_secs(60))
    }

    /// Starts the sweep on the current runtime, once; it stops when the store is dropped.
    fn start_sweep(self: &Arc<Self>) {
        use std::sync::atomic::Ordering;
        if self.sweeping.load(Ordering::Acquire) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.sweeping.swap(true, Ordering::AcqRel) {
            return;
        }
        let store: Weak<Self> = Arc::downgrade(self);
        let interval = self.sweep_interval();
        runtime.spawn(async move {
            let mut ticks = tokio::time::interval(interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                let Some(store) = store.upgrade() else {
                    return;
                };
                store.sweep(Instant::now());
            }
        });
    }

    /// Ends idle sessions and prunes the replay buffers of the others.
    pub(crate) fn sweep(&self, now: Instant) {
        let live: Vec<Arc<SessionStreams>> = {
            let mut entries = self.lock();
            entries.expire(now, self.config.idle_timeout);
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

    /// Starts a session and returns its identifier.
    pub(crate) fn create(self: &Arc<Self>, session: Session) -> Result<Arc<str>, CreateFailure> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|_| CreateFailure::NoEntropy)?;
        let id: Arc<str> = Arc::from(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>());
        let now = Instant::now();
        session.streams.touch(now);
        self.start_sweep();
        let mut entries = self.lock();
        let owned = |e: &Entries| {
            session
                .owner
                .as_ref()
                .and_then(|o| e.owned.get(o))
                .copied()
                .unwrap_or(0)
        };
        if entries.sessions.len() >= self.config.max_sessions
            || owned(&entries) >= self.config.max_sessions_per_principal
        {
            entries.expire(now, self.config.idle_timeout);
        }
        if entries.sessions.len() >= self.config.max_sessions
            || owned(&entries) >= self.config.max_sessions_per_principal
        {
            return Err(CreateFailure::Full);
        }
        if let Some(owner) = &session.owner {
            *entries.owned.entry(Arc::clone(owner)).or_insert(0) += 1;
        }
        entries.sessions.insert(id.clone(), session);
        Ok(id)
    }

    /// The live session `id` names when `principal` owns it, refreshing its idle clock; an
    /// expired one is ended. Another principal's session is not found, and not touched.
    pub(crate) fn touch(&self, id: &str, principal: Option<&str>) -> Option<Session> {
        let now = Instant::now();
        let mut entries = self.lock();
        let session = entries.sessions.get(id)?;
        if !owns(session, principal) {
            return None;
        }
        if session.streams.idle_for(now) < self.config.idle_timeout {
            session.streams.touch(now);
            return Some(session.clone());
        }
        if let Some(expired) = entries.remove(id) {
            expired.streams.close();
        }
        None
    }

    /// Records the log level a session's client chose; whether `principal`'s session is live.
    pub(crate) fn set_log_level(
        &self,
        id: &str,
        principal: Option<&str>,
        level: crate::wire::level::LogLevel,
    ) -> bool {
        match self.lock().sessions.get_mut(id) {
            Some(session) if owns(session, principal) => {
                session.log_level = Some(level);
                true
            }
            _ => false,
        }
    }

    /// Ends `principal`'s session `id`; whether it existed (another principal's is untouched).
    pub(crate) fn end(&self, id: &str, principal: Option<&str>) -> bool {
        let ended = {
            let mut entries = self.lock();
            match entries.sessions.get(id) {
                Some(session) if owns(session, principal) => entries.remove(id),
                _ => None,
            }
        };
        ended.map(|s| s.streams.close()).is_some()
    }

    /// Every live session's streams (a snapshot).
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
mod tests {
    use super::*;

    fn owned_by(owner: Option<&str>) -> Session {
        Session {
            owner: owner.map(Arc::from),
            revision: ProtocolVersion::V2025_11_25,
            capabilities: ClientCapabilities::default(),
            client_info: None,
            log_level: None,
            streams: Arc::new(SessionStreams::new(
                crate::stream::StreamConfig::default(),
                ProtocolVersion::V2025_11_25,
                Duration::from_secs(60),
            )),
        }
    }

    fn session() -> Session {
        owned_by(None)
    }

    fn store(config: SessionConfig) -> Arc<SessionStore> {
        Arc::new(SessionStore::new(config))
    }

    #[test]
    fn ids_are_random_hex_and_sessions_end() {
        let store = store(SessionConfig::default());
        let a = store.create(session()).unwrap_or_else(|_| Arc::from(""));
        let b = store.create(session()).unwrap_or_else(|_| Arc::from(""));
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert!(store.touch(&a, None).is_some());
        assert!(store.end(&a, None));
        assert!(store.touch(&a, None).is_none());
        assert!(!store.end(&a, None));
    }

    #[test]
    fn a_session_belongs_to_its_principal() {
        let store = store(SessionConfig::default());
        let a = store
            .create(owned_by(Some("alice")))
            .unwrap_or_else(|_| Arc::from(""));
        for other in [None, Some("bob"), Some("alice ")] {
            assert!(store.touch(&a, other).is_none());
            assert!(!store.end(&a, other));
            assert!(!store.set_log_level(&a, other, crate::wire::level::LogLevel::Debug));
        }
        assert!(store.touch(&a, Some("alice")).is_some());
        assert!(store.end(&a, Some("alice")));
    }

    #[test]
    fn the_bound_at_and_past() {
        let store = store(SessionConfig::new().max_sessions(2));
        assert!(store.create(session()).is_ok());
        assert!(store.create(session()).is_ok());
        assert_eq!(
            store.create(session()).map(|_| ()),
            Err(CreateFailure::Full)
        );
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn the_per_principal_bound_at_and_past() {
        let store = store(SessionConfig::new().max_sessions_per_principal(2));
        let first = store.create(owned_by(Some("alice")));
        assert!(first.is_ok());
        assert!(store.create(owned_by(Some("alice"))).is_ok());
        assert_eq!(
            store.create(owned_by(Some("alice"))).map(|_| ()),
            Err(CreateFailure::Full)
        );
        // Others are not held back by alice's quota.
        assert!(store.create(owned_by(Some("bob"))).is_ok());
        assert!(store.create(session()).is_ok());
        // Ending one of alice's sessions makes room for another.
        let first = first.unwrap_or_else(|_| Arc::from(""));
        assert!(store.end(&first, Some("alice")));
        assert!(store.create(owned_by(Some("alice"))).is_ok());
    }

    #[test]
    fn idle_sessions_expire_and_make_room() {
        let store = store(SessionConfig {
            max_sessions: 1,
            max_sessions_per_principal: 1,
            idle_timeout: Duration::from_millis(30),
        });
        let a = store.create(session()).unwrap_or_else(|_| Arc::from(""));
        std::thread::sleep(Duration::from_millis(60));
        assert!(store.touch(&a, None).is_none(), "expired");
        let _ = store.create(session());
        std::thread::sleep(Duration::from_millis(60));
        assert!(
            store.create(session()).is_ok(),
            "an expired session gives way to a new one"
        );
    }

    #[test]
    fn the_sweep_ends_idle_sessions_untouched() {
        let store = store(SessionConfig {
            max_sessions: 10,
            max_sessions_per_principal: 10,
            idle_timeout: Duration::from_secs(60),
        });
        let a = store
            .create(owned_by(Some("alice")))
            .unwrap_or_else(|_| Arc::from(""));
        store.sweep(Instant::now());
        assert_eq!(store.len(), 1, "not idle yet");
        store.sweep(Instant::now() + Duration::from_secs(61));
        assert_eq!(store.len(), 0, "swept without being touched");
        assert!(store.touch(&a, Some("alice")).is_none());
        // The per-principal count went with it.
        assert!(store.lock().owned.is_empty());
    }

    #[tokio::test]
    async fn the_sweep_runs_on_a_timer() {
        // The shortest idle timeout (1 s) sweeps every second: an untouched session is gone
        // within a few seconds, without any request touching the store.
        let store = store(SessionConfig::new().idle_timeout(Duration::from_millis(1)));
        let _ = store.create(session());
        assert_eq!(store.len(), 1);
        let deadline = Instant::now() + Duration::from_secs(10);
        while store.len() > 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(store.len(), 0, "the timer swept the idle session");
    }
}
