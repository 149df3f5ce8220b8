//! [`MemorySessionStore`]: the shared session store of one process (several endpoints in one
//! server, and the tests), keeping the whole [`SessionStore`] contract in memory.
//!
//! Owns its maps (rows with their last use, waiting answers, kept events) and its broadcast
//! channel. Knows nothing of what a row's data says.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::session::SessionConfig;
use crate::session::store::{
    MAX_BROADCAST_BYTES, SessionAnswer, SessionEvent, SessionRow, SessionStore, SessionStoreError,
    SessionStoreErrorKind, SessionStoreFuture, Wakers, stream_key,
};
use crate::wire::unwind::BoxFuture;

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
    woken: std::sync::Arc<Wakers>,
    /// Kept events by (session, stream), by seq, with when they were written.
    events: Mutex<Events>,
    /// Broadcast messages.
    messages: std::sync::OnceLock<tokio::sync::broadcast::Sender<String>>,
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

    fn messages(&self) -> &tokio::sync::broadcast::Sender<String> {
        self.messages
            .get_or_init(|| tokio::sync::broadcast::channel(1024).0)
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
            let max = if row.owner.is_some() {
                config.get_max_sessions_per_principal()
            } else {
                config.get_max_anonymous_sessions()
            };
            live().count() >= config.get_max_sessions()
                || live().filter(|(r, _)| r.owner == row.owner).count() >= max
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
                stream.entry(event.seq).or_insert((event.clone(), now));
                // Evicted after the insert, as PostgreSQL does; the stream's start mark stays.
                stream.retain(|seq, _| *seq >= event.keep_from || *seq == 0);
                woken.push(stream_key(&event.session, event.stream));
            }
        }
        for key in woken {
            self.woken.wake(&key);
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
        self.woken.wait(&stream_key(session, stream))
    }

    fn broadcast<'a>(&'a self, message: &'a str) -> SessionStoreFuture<'a, ()> {
        if message.len() > MAX_BROADCAST_BYTES {
            return ready(Err(SessionStoreError::new(SessionStoreErrorKind::Backend)));
        }
        let _ = self.messages().send(message.to_owned());
        ready(Ok(()))
    }

    fn subscribe(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        Some(self.messages().subscribe())
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
            self.woken.wake(instance);
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
        self.woken.wait(instance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::contract::check_session_store_contract;

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
