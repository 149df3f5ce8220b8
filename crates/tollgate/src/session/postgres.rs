//! [`PostgresSessionStore`]: the 2025 sessions of every instance behind one URL, in PostgreSQL
//! (feature `postgres`).
//!
//! Owns the table `tollgate_sessions (id, owner, data, log_level, last_used)` and the statements
//! the [`SessionStore`] contract needs; the database's clock decides idleness, so instances need
//! not agree on the time. Creation is serialised by a transaction-scoped advisory lock, so the
//! cluster-wide bounds hold under concurrent `initialize`s. Knows nothing of what a row's `data`
//! says. Database errors become [`SessionStoreErrorKind::Backend`] without their text.

use std::time::Duration;

use crate::session::SessionConfig;
use crate::session::store::{
    SessionAnswer, SessionEvent, SessionRow, SessionStore, SessionStoreError,
    SessionStoreErrorKind, SessionStoreFuture,
};

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS tollgate_sessions (\
     id TEXT PRIMARY KEY NOT NULL, \
     owner TEXT, \
     data TEXT NOT NULL, \
     log_level TEXT, \
     last_used TIMESTAMPTZ NOT NULL)";
const CREATE_ANSWERS: &str = "CREATE TABLE IF NOT EXISTS tollgate_session_answers (\
     session_id TEXT NOT NULL, \
     request_id TEXT NOT NULL, \
     instance TEXT NOT NULL, \
     answer TEXT, \
     created TIMESTAMPTZ NOT NULL, \
     PRIMARY KEY (session_id, request_id))";
const CREATE_EVENTS: &str = "CREATE TABLE IF NOT EXISTS tollgate_session_events (\
     session_id TEXT NOT NULL, \
     stream BIGINT NOT NULL, \
     seq BIGINT NOT NULL, \
     frame TEXT NOT NULL, \
     response BOOLEAN NOT NULL, \
     created TIMESTAMPTZ NOT NULL, \
     PRIMARY KEY (session_id, stream, seq))";
/// The channel broadcasts travel on.
const BROADCAST_CHANNEL: &str = "tollgate_session_broadcast";
/// The channel followers of a stream are woken on (the payload names `session:stream`).
const EVENTS_CHANNEL: &str = "tollgate_session_events";
const INSERT_EVENTS: &str = "INSERT INTO tollgate_session_events \
     (session_id, stream, seq, frame, response, created) \
     SELECT s, st, q, f, r, now() FROM UNNEST($1::text[], $2::int8[], $3::int8[], $4::text[], \
     $5::bool[]) AS e(s, st, q, f, r) ON CONFLICT DO NOTHING";
const EVICT_EVENTS: &str = "DELETE FROM tollgate_session_events e \
     USING UNNEST($1::text[], $2::int8[], $3::int8[]) AS k(s, st, keep) \
     WHERE e.session_id = k.s AND e.stream = k.st AND e.seq < k.keep AND e.seq > 0";
const WAKE_FOLLOWERS: &str = "SELECT pg_notify('tollgate_session_events', k) \
     FROM (SELECT DISTINCT s || ':' || st AS k FROM UNNEST($1::text[], $2::int8[]) AS e(s, st)) w";
const STREAM_EVENTS: &str = "SELECT seq, frame, response FROM tollgate_session_events \
     WHERE session_id = $1 AND stream = $2 AND seq > $3 ORDER BY seq";
const STREAM_KEPT: &str = "SELECT EXISTS (SELECT 1 FROM tollgate_session_events \
     WHERE session_id = $1 AND stream = $2)";
const PURGE_EVENTS: &str = "DELETE FROM tollgate_session_events e \
     WHERE created <= now() - make_interval(secs => $1) OR NOT EXISTS \
     (SELECT 1 FROM tollgate_sessions s WHERE s.id = e.session_id)";
const CREATE_INDEXES: [&str; 3] = [
    "CREATE INDEX IF NOT EXISTS tollgate_sessions_used ON tollgate_sessions (last_used)",
    "CREATE INDEX IF NOT EXISTS tollgate_sessions_owner ON tollgate_sessions (owner)",
    "CREATE INDEX IF NOT EXISTS tollgate_session_answers_instance \
     ON tollgate_session_answers (instance)",
];
/// The channel an instance is woken on when an answer is handed to it (the payload names it).
const ANSWERS_CHANNEL: &str = "tollgate_session_answers";
const EXPECT: &str = "INSERT INTO tollgate_session_answers \
     (session_id, request_id, instance, answer, created) VALUES ($1, $2, $3, NULL, now()) \
     ON CONFLICT (session_id, request_id) DO UPDATE \
     SET instance = $3, answer = NULL, created = now()";
const FORGET: &str =
    "DELETE FROM tollgate_session_answers WHERE session_id = $1 AND request_id = $2";
const ANSWER: &str = "WITH given AS (UPDATE tollgate_session_answers SET answer = $3 \
     WHERE session_id = $1 AND request_id = $2 AND answer IS NULL RETURNING instance) \
     SELECT pg_notify('tollgate_session_answers', instance) FROM given";
const TAKE: &str = "DELETE FROM tollgate_session_answers \
     WHERE instance = $1 AND answer IS NOT NULL RETURNING session_id, request_id, answer";
/// Answers of ended sessions, and requests left waiting longer than the idle timeout (their
/// instance died, or their caller gave up without forgetting them).
const PURGE_ANSWERS: &str = "DELETE FROM tollgate_session_answers a \
     WHERE created <= now() - make_interval(secs => $1) OR NOT EXISTS \
     (SELECT 1 FROM tollgate_sessions s WHERE s.id = a.session_id)";
/// Serialises schema creation and session creation across instances.
const SCHEMA_LOCK: i64 = 7_367_617_417;
const CREATE_LOCK: i64 = 7_367_617_418;

/// "Still live": used within the idle timeout (`$n`, in seconds).
macro_rules! live {
    ($n:literal) => {
        concat!("last_used > now() - make_interval(secs => $", $n, ")")
    };
}

const INSERT: &str = concat!(
    "INSERT INTO tollgate_sessions (id, owner, data, log_level, last_used) \
     SELECT $1, $2, $3, $4, now() \
     WHERE (SELECT count(*) FROM tollgate_sessions WHERE ",
    live!(5),
    ") < $6 AND CASE WHEN $2::text IS NULL THEN (SELECT count(*) FROM tollgate_sessions \
     WHERE owner IS NULL AND ",
    live!(5),
    ") < $8 ELSE (SELECT count(*) FROM tollgate_sessions WHERE owner = $2 AND ",
    live!(5),
    ") < $7 END"
);
/// Read-mostly: the row's use is written only when the recorded one is older than `$4` seconds
/// (a sixteenth of the idle timeout), so most requests in a session cost one read.
const TOUCH: &str = concat!(
    "WITH found AS (SELECT id, owner, data, log_level, last_used FROM tollgate_sessions \
     WHERE id = $1 AND owner IS NOT DISTINCT FROM $2 AND ",
    live!(3),
    "), used AS (UPDATE tollgate_sessions t SET last_used = now() FROM found \
     WHERE t.id = found.id AND found.last_used <= now() - make_interval(secs => $4)) \
     SELECT id, owner, data, log_level FROM found"
);
const SET_LEVEL: &str = concat!(
    "UPDATE tollgate_sessions SET log_level = $3, last_used = now() \
     WHERE id = $1 AND owner IS NOT DISTINCT FROM $2 AND ",
    live!(4)
);
const END: &str = "DELETE FROM tollgate_sessions WHERE id = $1 AND owner IS NOT DISTINCT FROM $2";
const KEEP_BUSY: &str = concat!(
    "UPDATE tollgate_sessions SET last_used = now() WHERE id = ANY($1) AND ",
    live!(2)
);
const PURGE: &str = "DELETE FROM tollgate_sessions \
     WHERE last_used <= now() - make_interval(secs => $1)";
const HELD: &str = concat!(
    "SELECT id FROM tollgate_sessions WHERE id = ANY($1) AND ",
    live!(2)
);

fn backend<E>(_: E) -> SessionStoreError {
    SessionStoreError::new(SessionStoreErrorKind::Backend)
}

/// Seconds for `make_interval`, at most about a hundred years (an "endless" idle timeout must
/// not put an interval out of PostgreSQL's range and make every statement fail).
fn seconds(timeout: Duration) -> f64 {
    timeout.as_secs_f64().min(3_155_760_000.0)
}

fn signed(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Sessions in PostgreSQL: a session `initialize` created on one instance is found, kept alive
/// and ended through any other sharing the database, and the session bounds and idle timeout
/// hold for all of them together.
///
/// # Examples
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use tollgate::endpoint::PostgresSessionStore;
///
/// let sessions = PostgresSessionStore::connect("postgres://tollgate@db.internal/tollgate").await?;
/// # let _ = sessions;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct PostgresSessionStore {
    /// Connections kept open between calls (`tasks/warm.rs`), and the pool they come from.
    warm: std::sync::Arc<crate::tasks::warm::Warm>,
    /// Wakes this process's instances when an answer is handed to them (one `LISTEN`
    /// connection, started at the first wait).
    woken: std::sync::Arc<Woken>,
}

/// The instances of this process waiting for answers, and whether the listener runs.
#[derive(Debug, Default)]
struct Woken {
    wakers: std::sync::Arc<crate::session::store::Wakers>,
    listening: std::sync::atomic::AtomicBool,
    /// Broadcast messages heard.
    messages: std::sync::OnceLock<tokio::sync::broadcast::Sender<String>>,
}

impl Woken {
    fn messages(&self) -> &tokio::sync::broadcast::Sender<String> {
        self.messages
            .get_or_init(|| tokio::sync::broadcast::channel(1024).0)
    }

    fn wake(&self, key: &str) {
        self.wakers.wake(key);
    }
}

/// `LISTEN`s for handed-over answers while the store lives, reconnecting after a failure (the
/// waiting instances ask every second meanwhile, so nothing is lost while it is down).
async fn listen(pool: sqlx::PgPool, woken: std::sync::Weak<Woken>) {
    loop {
        if let Ok(mut listener) = sqlx::postgres::PgListener::connect_with(&pool).await
            && listener
                .listen_all([ANSWERS_CHANNEL, EVENTS_CHANNEL, BROADCAST_CHANNEL])
                .await
                .is_ok()
        {
            // Woken at least every 30 s to see whether the store is gone.
            loop {
                let received = tokio::time::timeout(Duration::from_secs(30), listener.recv()).await;
                let Some(woken) = woken.upgrade() else {
                    return;
                };
                match received {
                    Ok(Ok(notification)) if notification.channel() == BROADCAST_CHANNEL => {
                        let _ = woken.messages().send(notification.payload().to_owned());
                    }
                    Ok(Ok(notification)) => woken.wake(notification.payload()),
                    Ok(Err(_)) => break,
                    Err(_) => {}
                }
            }
        }
        if woken.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

impl PostgresSessionStore {
    /// Connects to `url` and creates the table if it is missing. The store holds at most 8
    /// connections (and one more for `LISTEN`) and keeps them open between calls, as
    /// [`PostgresTaskStore::connect`](crate::task::PostgresTaskStore::connect) describes: a
    /// connection unused for 500 ms or more is checked with a ping before its next use, one a
    /// call fails on for any reason but the database's own refusal is closed. It waits at most
    /// [`POSTGRES_ACQUIRE_TIMEOUT`](crate::task::POSTGRES_ACQUIRE_TIMEOUT) for a connection; a
    /// call that gets no answer in 10 s counts as failed. While the database is down,
    /// `initialize` gets 503 and a request in a session the revision's internal error; new
    /// connections are opened when it is back.
    ///
    /// # Errors
    ///
    /// [`SessionStoreErrorKind::Backend`] when the database is unreachable or refuses.
    pub async fn connect(url: &str) -> Result<Self, SessionStoreError> {
        let pool = crate::tasks::sql::postgres_pool(url)
            .await
            .map_err(backend)?;
        Self::from_pool(pool).await
    }

    /// Uses an existing pool (the task store's, say), creating the table if it is missing. The
    /// store opens its connections through the pool and detaches them from it, as
    /// [`PostgresTaskStore::from_pool`](crate::task::PostgresTaskStore::from_pool) describes.
    ///
    /// # Errors
    ///
    /// [`SessionStoreErrorKind::Backend`] when the table cannot be created.
    pub async fn from_pool(pool: sqlx::PgPool) -> Result<Self, SessionStoreError> {
        let statements: Vec<&str> = [CREATE_TABLE, CREATE_ANSWERS, CREATE_EVENTS]
            .into_iter()
            .chain(CREATE_INDEXES)
            .collect();
        crate::tasks::sql::create_schema(&pool, SCHEMA_LOCK, &statements)
            .await
            .map_err(backend)?;
        Ok(Self {
            warm: std::sync::Arc::new(crate::tasks::warm::Warm::new(pool, None)),
            woken: std::sync::Arc::default(),
        })
    }

    /// Resolves when a notification names `key` (the listener starts at the first wait).
    fn woken_by(&self, key: &str) -> crate::wire::unwind::BoxFuture<'static, ()> {
        self.listen();
        self.woken.wakers.wait(key)
    }

    /// Starts the `LISTEN` task, once (inside a runtime).
    fn listen(&self) {
        crate::session::spawn_once(&self.woken.listening, || {
            listen(
                self.warm.pool().clone(),
                std::sync::Arc::downgrade(&self.woken),
            )
        });
    }

    async fn insert(
        &self,
        row: &SessionRow,
        config: &SessionConfig,
    ) -> Result<(), SessionStoreError> {
        let mut lent = self.warm.lend().await.map_err(backend)?;
        let ended = insert_on(lent.conn().map_err(backend)?, row, config).await;
        lent.finish_transaction(ended).map_err(backend)?
    }
}

/// Creates the session in one transaction under the creation lock, which ends either way:
/// committed, or rolled back when the bounds refuse the row (`Full`) or its id is taken.
async fn insert_on(
    conn: &mut sqlx::PgConnection,
    row: &SessionRow,
    config: &SessionConfig,
) -> Result<Result<(), SessionStoreError>, sqlx::Error> {
    use sqlx::Connection as _;
    let mut tx = conn.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(CREATE_LOCK)
        .execute(&mut *tx)
        .await?;
    let done = sqlx::query(INSERT)
        .bind(&row.id)
        .bind(&row.owner)
        .bind(&row.data)
        .bind(&row.log_level)
        .bind(seconds(config.get_idle_timeout()))
        .bind(signed(config.get_max_sessions()))
        .bind(signed(config.get_max_sessions_per_principal()))
        .bind(signed(config.get_max_anonymous_sessions()))
        .execute(&mut *tx)
        .await;
    let refused = match done {
        Ok(r) if r.rows_affected() == 1 => return tx.commit().await.map(Ok),
        Ok(_) => SessionStoreErrorKind::Full,
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            SessionStoreErrorKind::Duplicate
        }
        Err(e) => return Err(e),
    };
    tx.rollback().await?;
    Ok(Err(SessionStoreError::new(refused)))
}

impl SessionStore for PostgresSessionStore {
    fn ping(&self) -> SessionStoreFuture<'_, ()> {
        Box::pin(async move {
            self.warm
                .execute(sqlx::query("SELECT 1"))
                .await
                .map_err(backend)?;
            Ok(())
        })
    }

    fn create<'a>(
        &'a self,
        row: SessionRow,
        config: &'a SessionConfig,
    ) -> SessionStoreFuture<'a, ()> {
        Box::pin(async move { self.insert(&row, config).await })
    }

    fn touch<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, Option<SessionRow>> {
        Box::pin(async move {
            let row: Option<(String, Option<String>, String, Option<String>)> = self
                .warm
                .fetch_optional(
                    sqlx::query_as(TOUCH)
                        .bind(id)
                        .bind(owner)
                        .bind(seconds(idle_timeout))
                        .bind(seconds(idle_timeout / 16)),
                )
                .await
                .map_err(backend)?;
            Ok(row.map(|(id, owner, data, log_level)| SessionRow {
                id,
                owner,
                data,
                log_level,
            }))
        })
    }

    fn set_log_level<'a>(
        &'a self,
        id: &'a str,
        owner: Option<&'a str>,
        level: &'a str,
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, bool> {
        Box::pin(async move {
            let done = self
                .warm
                .execute(
                    sqlx::query(SET_LEVEL)
                        .bind(id)
                        .bind(owner)
                        .bind(level)
                        .bind(seconds(idle_timeout)),
                )
                .await
                .map_err(backend)?;
            Ok(done.rows_affected() == 1)
        })
    }

    fn end<'a>(&'a self, id: &'a str, owner: Option<&'a str>) -> SessionStoreFuture<'a, bool> {
        Box::pin(async move {
            let done = self
                .warm
                .execute(sqlx::query(END).bind(id).bind(owner))
                .await
                .map_err(backend)?;
            Ok(done.rows_affected() == 1)
        })
    }

    fn sweep<'a>(
        &'a self,
        busy: &'a [String],
        held: &'a [String],
        idle_timeout: Duration,
    ) -> SessionStoreFuture<'a, Vec<String>> {
        Box::pin(async move {
            let idle = seconds(idle_timeout);
            if !busy.is_empty() {
                self.warm
                    .execute(sqlx::query(KEEP_BUSY).bind(busy).bind(idle))
                    .await
                    .map_err(backend)?;
            }
            for purge in [PURGE, PURGE_ANSWERS, PURGE_EVENTS] {
                self.warm
                    .execute(sqlx::query(purge).bind(idle))
                    .await
                    .map_err(backend)?;
            }
            if held.is_empty() {
                return Ok(Vec::new());
            }
            let live: Vec<(String,)> = self
                .warm
                .fetch_all(sqlx::query_as(HELD).bind(held).bind(idle))
                .await
                .map_err(backend)?;
            let live: std::collections::HashSet<String> =
                live.into_iter().map(|(id,)| id).collect();
            Ok(held
                .iter()
                .filter(|id| live.contains(*id))
                .cloned()
                .collect())
        })
    }

    fn expect_answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
        instance: &'a str,
    ) -> SessionStoreFuture<'a, ()> {
        Box::pin(async move {
            self.warm
                .execute(
                    sqlx::query(EXPECT)
                        .bind(session)
                        .bind(request)
                        .bind(instance),
                )
                .await
                .map_err(backend)?;
            Ok(())
        })
    }

    fn forget_answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
    ) -> SessionStoreFuture<'a, ()> {
        Box::pin(async move {
            self.warm
                .execute(sqlx::query(FORGET).bind(session).bind(request))
                .await
                .map_err(backend)?;
            Ok(())
        })
    }

    fn answer<'a>(
        &'a self,
        session: &'a str,
        request: &'a str,
        answer: &'a str,
    ) -> SessionStoreFuture<'a, bool> {
        Box::pin(async move {
            // One row (the notification sent) when the request was waiting for this answer.
            let given = self
                .warm
                .execute(sqlx::query(ANSWER).bind(session).bind(request).bind(answer))
                .await
                .map_err(backend)?;
            Ok(given.rows_affected() == 1)
        })
    }

    fn take_answers<'a>(&'a self, instance: &'a str) -> SessionStoreFuture<'a, Vec<SessionAnswer>> {
        Box::pin(async move {
            let taken: Vec<(String, String, String)> = self
                .warm
                .fetch_all(sqlx::query_as(TAKE).bind(instance))
                .await
                .map_err(backend)?;
            Ok(taken
                .into_iter()
                .map(|(session, request, answer)| SessionAnswer {
                    session,
                    request,
                    answer,
                })
                .collect())
        })
    }

    fn answers_waiting<'a>(&'a self, instance: &'a str) -> crate::wire::unwind::BoxFuture<'a, ()> {
        self.woken_by(instance)
    }

    fn record_events<'a>(&'a self, events: &'a [SessionEvent]) -> SessionStoreFuture<'a, ()> {
        Box::pin(async move {
            let sessions: Vec<&str> = events.iter().map(|e| e.session.as_str()).collect();
            let streams: Vec<i64> = events.iter().map(|e| wide(e.stream)).collect();
            let seqs: Vec<i64> = events.iter().map(|e| wide(e.seq)).collect();
            let frames: Vec<&str> = events.iter().map(|e| e.frame.as_str()).collect();
            let responses: Vec<bool> = events.iter().map(|e| e.response).collect();
            let keeps: Vec<i64> = events.iter().map(|e| wide(e.keep_from)).collect();
            let mut lent = self.warm.lend().await.map_err(backend)?;
            let ended = async {
                use sqlx::Connection as _;
                let mut tx = lent.conn()?.begin().await?;
                sqlx::query(INSERT_EVENTS)
                    .bind(&sessions)
                    .bind(&streams)
                    .bind(&seqs)
                    .bind(&frames)
                    .bind(&responses)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(EVICT_EVENTS)
                    .bind(&sessions)
                    .bind(&streams)
                    .bind(&keeps)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(WAKE_FOLLOWERS)
                    .bind(&sessions)
                    .bind(&streams)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await
            }
            .await;
            lent.finish_transaction(ended).map_err(backend)
        })
    }

    fn stream_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
    ) -> SessionStoreFuture<'a, Option<Vec<SessionEvent>>> {
        Box::pin(async move {
            let rows: Vec<(i64, String, bool)> = self
                .warm
                .fetch_all(
                    sqlx::query_as(STREAM_EVENTS)
                        .bind(session)
                        .bind(wide(stream))
                        .bind(wide(after)),
                )
                .await
                .map_err(backend)?;
            if rows.is_empty() {
                let kept: Option<(bool,)> = self
                    .warm
                    .fetch_optional(sqlx::query_as(STREAM_KEPT).bind(session).bind(wide(stream)))
                    .await
                    .map_err(backend)?;
                return Ok(kept.is_some_and(|(kept,)| kept).then(Vec::new));
            }
            Ok(Some(
                rows.into_iter()
                    .map(|(seq, frame, response)| SessionEvent {
                        session: session.to_owned(),
                        stream,
                        seq: u64::try_from(seq).unwrap_or(0),
                        frame,
                        response,
                        keep_from: 0,
                    })
                    .collect(),
            ))
        })
    }

    fn events_waiting<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> crate::wire::unwind::BoxFuture<'a, ()> {
        self.woken_by(&crate::session::store::stream_key(session, stream))
    }

    fn broadcast<'a>(&'a self, message: &'a str) -> SessionStoreFuture<'a, ()> {
        Box::pin(async move {
            if message.len() > crate::session::store::MAX_BROADCAST_BYTES {
                return Err(SessionStoreError::new(SessionStoreErrorKind::Backend));
            }
            self.warm
                .execute(
                    sqlx::query("SELECT pg_notify($1, $2)")
                        .bind(BROADCAST_CHANNEL)
                        .bind(message),
                )
                .await
                .map_err(backend)?;
            Ok(())
        })
    }

    fn subscribe(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        let heard = self.woken.messages().subscribe();
        self.listen();
        Some(heard)
    }
}

/// A stream or event number as PostgreSQL's BIGINT (Tollgate's stay under 2^60).
fn wide(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
