//! Sessions for the 2025 revisions: issued at `initialize`, required afterwards, bounded in
//! number and idle time, held in memory.
//!
//! Owns session identifiers (128 random bits from the operating system, hex-encoded) and what a
//! session remembers (revision, client capabilities and implementation, its streams). Ending a
//! session, by `DELETE` or by idling out, ends its streams and cancels its requests still
//! running. Knows nothing of HTTP;
//! the legacy protocol module decides when to create, look up and end one. 2026-07-28 has no
//! sessions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::context::{ClientCapabilities, ClientInfo};
use crate::stream::SessionStreams;
use crate::version::ProtocolVersion;

/// Bounds on the session store.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tollgate::SessionConfig;
///
/// let config = SessionConfig::new().max_sessions(1_000).idle_timeout(Duration::from_secs(600));
/// assert_eq!(config.get_max_sessions(), 1_000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    max_sessions: usize,
    idle_timeout: Duration,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            max_sessions: 10_000,
            idle_timeout: Duration::from_secs(30 * 60),
        }
    }
}

impl SessionConfig {
    /// The defaults: at most 10,000 live sessions, each ended after 30 minutes without a request.
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
}

/// What a session remembers from its `initialize`.
#[derive(Clone, Debug)]
pub(crate) struct Session {
    pub(crate) revision: ProtocolVersion,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<ClientInfo>,
    /// Set by `logging/setLevel`.
    pub(crate) log_level: Option<crate::features::LogLevel>,
    /// Its event streams, in-flight requests and idle clock.
    pub(crate) streams: Arc<SessionStreams>,
}

/// Why a session could not be created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CreateFailure {
    /// The store is full of live sessions.
    Full,
    /// The operating system gave no randomness.
    NoEntropy,
}

pub(crate) struct SessionStore {
    config: SessionConfig,
    entries: Mutex<HashMap<Arc<str>, Session>>,
}

impl SessionStore {
    pub(crate) fn new(config: SessionConfig) -> Self {
        Self {
            config,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Session>> {
        // A panic while holding the lock cannot leave an entry half-written (every update is a
        // single insert, remove or timestamp store), so a poisoned map is still consistent.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long a session may go without a request.
    pub(crate) fn idle_timeout(&self) -> Duration {
        self.config.idle_timeout
    }

    /// Starts a session and returns its identifier.
    pub(crate) fn create(&self, session: Session) -> Result<Arc<str>, CreateFailure> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|_| CreateFailure::NoEntropy)?;
        let id: Arc<str> = Arc::from(bytes.iter().map(|b| format!("{b:02x}")).collect::<String>());
        let now = Instant::now();
        session.streams.touch(now);
        let mut entries = self.lock();
        if entries.len() >= self.config.max_sessions {
            let timeout = self.config.idle_timeout;
            entries.retain(|_, s| {
                let live = s.streams.idle_for(now) < timeout;
                if !live {
                    s.streams.close();
                }
                live
            });
            if entries.len() >= self.config.max_sessions {
                return Err(CreateFailure::Full);
            }
        }
        entries.insert(id.clone(), session);
        Ok(id)
    }

    /// The live session `id` names, refreshing its idle clock; an expired one is ended.
    pub(crate) fn touch(&self, id: &str) -> Option<Session> {
        let now = Instant::now();
        let mut entries = self.lock();
        let session = entries.get(id)?;
        if session.streams.idle_for(now) < self.config.idle_timeout {
            session.streams.touch(now);
            return Some(session.clone());
        }
        if let Some(expired) = entries.remove(id) {
            expired.streams.close();
        }
        None
    }

    /// Records the log level a session's client chose; whether the session is live.
    pub(crate) fn set_log_level(&self, id: &str, level: crate::features::LogLevel) -> bool {
        match self.lock().get_mut(id) {
            Some(session) => {
                session.log_level = Some(level);
                true
            }
            None => false,
        }
    }

    /// Ends a session; whether it existed.
    pub(crate) fn end(&self, id: &str) -> bool {
        let ended = self.lock().remove(id);
        ended.map(|s| s.streams.close()).is_some()
    }

    /// Every live session's streams (a snapshot).
    pub(crate) fn all_streams(&self) -> Vec<Arc<SessionStreams>> {
        self.lock()
            .values()
            .map(|s| Arc::clone(&s.streams))
            .collect()
    }

    /// Ends every open stream connection of every session (server shutdown); the streams stay
    /// resumable.
    pub(crate) fn detach_all(&self) {
        let sessions: Vec<Arc<SessionStreams>> = self
            .lock()
            .values()
            .map(|s| Arc::clone(&s.streams))
            .collect();
        for streams in sessions {
            streams.detach_all();
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        Session {
            revision: ProtocolVersion::V2025_11_25,
            capabilities: ClientCapabilities::default(),
            client_info: None,
            log_level: None,
            streams: Arc::new(SessionStreams::new(
                crate::StreamConfig::default(),
                ProtocolVersion::V2025_11_25,
                Duration::from_secs(60),
            )),
        }
    }

    #[test]
    fn ids_are_random_hex_and_sessions_end() {
        let store = SessionStore::new(SessionConfig::default());
        let a = store.create(session()).unwrap_or_else(|_| Arc::from(""));
        let b = store.create(session()).unwrap_or_else(|_| Arc::from(""));
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert!(store.touch(&a).is_some());
        assert!(store.end(&a));
        assert!(store.touch(&a).is_none());
        assert!(!store.end(&a));
    }

    #[test]
    fn the_bound_at_and_past() {
        let store = SessionStore::new(SessionConfig::new().max_sessions(2));
        assert!(store.create(session()).is_ok());
        assert!(store.create(session()).is_ok());
        assert_eq!(
            store.create(session()).map(|_| ()),
            Err(CreateFailure::Full)
        );
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn idle_sessions_expire_and_make_room() {
        let store = SessionStore::new(SessionConfig {
            max_sessions: 1,
            idle_timeout: Duration::from_millis(30),
        });
        let a = store.create(session()).unwrap_or_else(|_| Arc::from(""));
        std::thread::sleep(Duration::from_millis(60));
        assert!(store.touch(&a).is_none(), "expired");
        let _ = store.create(session());
        std::thread::sleep(Duration::from_millis(60));
        assert!(
            store.create(session()).is_ok(),
            "an expired session gives way to a new one"
        );
    }
}
