//! A connection that is its own session (the stdio transport): the 2025 session `initialize`
//! started on it, and the requests in flight on it by id so `notifications/cancelled` can stop
//! one. Owns only that state; it knows nothing of lines, framing or revisions' rules.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::task::AbortHandle;
use tollgate_json::JsonValue;

use crate::session::Session;
use crate::stream::session::SessionStreams;
use crate::version::ProtocolVersion;
use crate::wire::level::LogLevel;

/// The session and the requests in flight of one line-stream connection.
#[derive(Default)]
pub(crate) struct LocalSession {
    session: Mutex<Option<Session>>,
    /// How many sessions `initialize` has started here.
    opened: std::sync::atomic::AtomicU64,
    in_flight: Mutex<HashMap<String, AbortHandle>>,
}

/// Locks `mutex`; its value is replaced whole under the lock, so a poisoned one is consistent.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The key a request id is tracked by: its JSON text (a string id and a number id differ).
pub(crate) fn id_key(id: &JsonValue) -> String {
    tollgate_json::to_string(id, &tollgate_json::OutputLimits::default()).unwrap_or_default()
}

impl LocalSession {
    /// The session's revision, once `initialize` has started one.
    pub(crate) fn revision(&self) -> Option<ProtocolVersion> {
        lock(&self.session).as_ref().map(|s| s.revision)
    }

    /// The session, once started.
    pub(crate) fn session(&self) -> Option<Session> {
        lock(&self.session).clone()
    }

    /// The streams of the session when it is a 2025 one (it can carry server-to-client
    /// requests, and waits for the client's answers there).
    pub(crate) fn legacy_streams(&self) -> Option<std::sync::Arc<SessionStreams>> {
        let session = lock(&self.session);
        session
            .as_ref()
            .filter(|s| crate::version::is_legacy(s.revision))
            .map(|s| std::sync::Arc::clone(&s.streams))
    }

    /// Starts (or, on a second `initialize`, replaces) the connection's session.
    pub(crate) fn open(&self, session: Session) {
        let replaced = lock(&self.session).replace(session);
        // The old session's requests to the client can get no answer now (answers go to the
        // new one, whose ids start over): their handlers are told so at once.
        if let Some(replaced) = replaced {
            replaced.streams.close();
        }
        self.opened
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many sessions `initialize` has started on this connection (a new one tells the
    /// transport to relay its list changes).
    pub(crate) fn opened(&self) -> u64 {
        self.opened.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Remembers `level` when `principal` owns the session; false otherwise (or with none).
    pub(crate) fn set_log_level(&self, principal: Option<&str>, level: LogLevel) -> bool {
        let mut session = lock(&self.session);
        match session.as_mut() {
            Some(s) if s.owner.as_deref() == principal => {
                s.log_level = Some(level);
                true
            }
            _ => false,
        }
    }

    /// Registers the request `key` as in flight: `start` runs under the registry's lock, so the
    /// request cannot finish (and [`finished`](Self::finished)) before it is registered.
    pub(crate) fn track(&self, key: String, start: impl FnOnce() -> AbortHandle) -> AbortHandle {
        let mut in_flight = lock(&self.in_flight);
        let handle = start();
        in_flight.insert(key, handle.clone());
        handle
    }

    /// The request `key` finished.
    pub(crate) fn finished(&self, key: &str) {
        lock(&self.in_flight).remove(key);
    }

    /// Stops the request in flight with this id, if any (its cancellation token fires as its
    /// future is dropped; no response is sent for it).
    pub(crate) fn cancel(&self, id: &JsonValue) {
        if let Some(handle) = lock(&self.in_flight).remove(&id_key(id)) {
            handle.abort();
        }
    }
}
