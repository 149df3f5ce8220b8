//! Durable task stores over sqlx: [`SqliteTaskStore`] (an embedded database file, feature
//! `sqlite`) and [`PostgresTaskStore`] (shared by every instance, feature `postgres`).
//!
//! Owns the table `tollgate_tasks (id, version, expires_at_ms, data)` and the four statements
//! the [`TaskStore`] contract needs; the insert's capacity check reads the row count that
//! `tasks/count.rs` keeps. Knows nothing of task semantics: rows are opaque, and
//! every transition is a compare-and-swap on `version` decided in `tasks/runner.rs`. Database errors
//! become [`TaskStoreErrorKind::Backend`] without their text (which could quote row data).

use crate::tasks::store::StoreFuture;
use crate::tasks::store::TaskRow;
use crate::tasks::store::TaskStore;
use crate::tasks::store::TaskStoreError;
use crate::tasks::store::TaskStoreErrorKind;

/// The most rows a SQL store holds by default: 1,000,000 (expired rows are purged first).
pub const DEFAULT_SQL_TASK_CAPACITY: u64 = 1_000_000;

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS tollgate_tasks (\
     id TEXT PRIMARY KEY NOT NULL, \
     version BIGINT NOT NULL, \
     expires_at_ms BIGINT NOT NULL, \
     data TEXT NOT NULL)";
const CREATE_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS tollgate_tasks_expiry ON tollgate_tasks (expires_at_ms)";

fn backend<E>(_: E) -> TaskStoreError {
    TaskStoreError::new(TaskStoreErrorKind::Backend)
}

/// The pool a SQLite store opens on a database file (created if missing): write-ahead logging,
/// 5 s of waiting for a lock, four connections. The task and replay stores share it.
///
/// A connection is not pinged as it leaves the pool (sqlx's `test_before_acquire`, on by
/// default): a connection to a file in this process has no server or network to lose, and a
/// ping is one more round trip to the connection's thread before every statement. A statement
/// on a connection that did break fails as a ping would (a store error, which the request
/// answers as 503), and sqlx still checks each connection as it goes back.
#[cfg(feature = "sqlite")]
pub(crate) async fn sqlite_file(path: &std::path::Path) -> Result<sqlx::SqlitePool, sqlx::Error> {
    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(std::time::Duration::from_secs(5));
    SqlitePoolOptions::new()
        .max_connections(4)
        .test_before_acquire(false)
        .connect_with(options)
        .await
}

/// A private in-memory SQLite database: one connection kept for the pool's life (the database
/// goes with it). For tests.
#[cfg(feature = "sqlite")]
pub(crate) async fn sqlite_in_memory() -> Result<sqlx::SqlitePool, sqlx::Error> {
    use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
    SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(SqliteConnectOptions::new().in_memory(true))
        .await
}

/// Milliseconds and versions are stored as signed 64-bit integers.
fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn unsigned(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// Implements [`TaskStore`] for a sqlx pool type with its placeholder syntax.
macro_rules! sql_task_store {
    ($store:ident, $db:ty, $insert:expr, $load:expr, $replace:expr, $purge:expr, $ping:expr) => {
        impl $store {
            /// Holds at most `capacity` rows (at least one; default
            /// [`DEFAULT_SQL_TASK_CAPACITY`]).
            #[must_use]
            pub fn with_capacity(mut self, capacity: u64) -> Self {
                self.capacity = capacity.max(1);
                self
            }
        }

        impl TaskStore for $store {
            fn insert<'a>(&'a self, row: TaskRow) -> StoreFuture<'a, ()> {
                Box::pin(async move {
                    for attempt in 0..2 {
                        let done = self
                            .execute(
                                sqlx::query::<$db>($insert)
                                    .bind(&row.id)
                                    .bind(signed(row.version))
                                    .bind(signed(row.expires_at_ms))
                                    .bind(&row.data)
                                    .bind(signed(self.capacity)),
                            )
                            .await;
                        match done {
                            Ok(r) if r.rows_affected() == 1 => return Ok(()),
                            Ok(_) if attempt == 0 => {
                                // Full: make room from expired rows once, then retry.
                                self.purge_expired(crate::tasks::model::now_ms()).await?;
                            }
                            Ok(_) => {}
                            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                                return Err(TaskStoreError::new(TaskStoreErrorKind::Duplicate));
                            }
                            Err(e) => return Err(backend(e)),
                        }
                    }
                    Err(TaskStoreError::new(TaskStoreErrorKind::Full))
                })
            }

            fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRow>> {
                Box::pin(async move {
                    let row: Option<(String, i64, i64, String)> = self
                        .fetch_optional(sqlx::query_as($load).bind(id))
                        .await
                        .map_err(backend)?;
                    Ok(row.map(|(id, version, expires, data)| TaskRow {
                        id,
                        version: unsigned(version),
                        expires_at_ms: unsigned(expires),
                        data,
                    }))
                })
            }

            fn replace<'a>(&'a self, row: TaskRow, expected_version: u64) -> StoreFuture<'a, bool> {
                Box::pin(async move {
                    let done = self
                        .execute(
                            sqlx::query::<$db>($replace)
                                .bind(signed(row.version))
                                .bind(signed(row.expires_at_ms))
                                .bind(&row.data)
                                .bind(&row.id)
                                .bind(signed(expected_version)),
                        )
                        .await
                        .map_err(backend)?;
                    Ok(done.rows_affected() == 1)
                })
            }

            fn purge_expired<'a>(&'a self, now_ms: u64) -> StoreFuture<'a, u64> {
                Box::pin(async move {
                    let done = self
                        .execute(sqlx::query::<$db>($purge).bind(signed(now_ms)))
                        .await
                        .map_err(backend)?;
                    Ok(done.rows_affected())
                })
            }

            fn ping(&self) -> StoreFuture<'_, ()> {
                Box::pin(async move {
                    self.execute(sqlx::query::<$db>($ping))
                        .await
                        .map_err(backend)?;
                    Ok(())
                })
            }
        }
    };
}

/// Tasks in an embedded SQLite database file (WAL journal): they survive a restart of the
/// process. One file serves one process; instances on several machines share a
/// [`PostgresTaskStore`] instead.
///
/// # Examples
///
/// ```no_run
/// # async fn demo() -> Result<(), tollgate::task::TaskStoreError> {
/// use tollgate::task::SqliteTaskStore;
///
/// let store = SqliteTaskStore::open("tasks.sqlite3").await?;
/// # let _ = store;
/// # Ok(()) }
/// ```
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
#[derive(Clone, Debug)]
pub struct SqliteTaskStore {
    pool: sqlx::SqlitePool,
    capacity: u64,
}

#[cfg(feature = "sqlite")]
impl SqliteTaskStore {
    /// Opens (creating if missing) the database file at `path` and its table.
    ///
    /// # Errors
    ///
    /// [`TaskStoreErrorKind::Backend`] when the file cannot be opened or created.
    pub async fn open(path: impl AsRef<std::path::Path>) -> Result<Self, TaskStoreError> {
        Self::from_pool(sqlite_file(path.as_ref()).await.map_err(backend)?).await
    }

    /// A private in-memory database (one connection, gone with the store): for tests.
    ///
    /// # Errors
    ///
    /// [`TaskStoreErrorKind::Backend`] when SQLite cannot start.
    pub async fn open_in_memory() -> Result<Self, TaskStoreError> {
        Self::from_pool(sqlite_in_memory().await.map_err(backend)?).await
    }

    /// Uses an existing pool, creating the table if it is missing.
    ///
    /// # Errors
    ///
    /// [`TaskStoreErrorKind::Backend`] when the table cannot be created.
    pub async fn from_pool(pool: sqlx::SqlitePool) -> Result<Self, TaskStoreError> {
        // One write transaction from the start: the count is taken with the triggers in place,
        // nothing between.
        let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(backend)?;
        for statement in [CREATE_TABLE, CREATE_INDEX] {
            sqlx::query(statement)
                .execute(&mut *tx)
                .await
                .map_err(backend)?;
        }
        crate::tasks::count::sqlite(&mut tx)
            .await
            .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(Self {
            pool,
            capacity: DEFAULT_SQL_TASK_CAPACITY,
        })
    }
}

#[cfg(feature = "sqlite")]
impl SqliteTaskStore {
    async fn execute<'q>(
        &self,
        query: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
    ) -> Result<sqlx::sqlite::SqliteQueryResult, sqlx::Error> {
        query.execute(&self.pool).await
    }

    async fn fetch_optional<'q, O>(
        &self,
        query: sqlx::query::QueryAs<'q, sqlx::Sqlite, O, sqlx::sqlite::SqliteArguments<'q>>,
    ) -> Result<Option<O>, sqlx::Error>
    where
        O: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow> + Send + Unpin,
    {
        query.fetch_optional(&self.pool).await
    }
}

#[cfg(feature = "sqlite")]
sql_task_store!(
    SqliteTaskStore,
    sqlx::Sqlite,
    "INSERT INTO tollgate_tasks (id, version, expires_at_ms, data) \
     SELECT ?1, ?2, ?3, ?4 WHERE (SELECT n FROM tollgate_task_count WHERE one = 1) < ?5",
    "SELECT id, version, expires_at_ms, data FROM tollgate_tasks WHERE id = ?1",
    "UPDATE tollgate_tasks SET version = ?1, expires_at_ms = ?2, data = ?3 \
     WHERE id = ?4 AND version = ?5",
    "DELETE FROM tollgate_tasks WHERE expires_at_ms <= ?1",
    // Writable: a write statement takes the write lock (a read-only file refuses it) and
    // changes nothing.
    "UPDATE tollgate_task_count SET n = n WHERE one = 0"
);

/// What each connection of the PostgreSQL task store is set up with. Every statement it runs
/// finds its rows through an index (the id, the expiry, the count's one row), and it runs them
/// as prepared statements kept for the connection's life. After five runs PostgreSQL may keep
/// one generic plan for a statement, made from the table's size at that moment: made while the
/// table held a few rows and had been vacuumed (so PostgreSQL knows it is small; a table never
/// vacuumed is assumed larger), the plan reads the whole table, and keeps doing so on every call
/// as the table grows, until the table is next analyzed (autovacuum's analyze, once enough rows
/// changed). Scans left out, the plan always takes the index. Measured with the tasks bench,
/// whose table is emptied and vacuumed before each short run, so no analyze ends the plan: 0.4
/// to 1.1 full-table reads per cycle before (two runs), of about 6,000 rows each, none after.
///
/// Behind a pooler in transaction mode, where a session setting does not follow the store's
/// connections, set the same on the store's role instead.
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub const POSTGRES_CONNECTION_SETUP: &str = "SET enable_seqscan = off";

/// The pool every PostgreSQL store of Tollgate connects with: at most 8 connections, at most
/// [`POSTGRES_ACQUIRE_TIMEOUT`] waited for one.
#[cfg(feature = "postgres")]
pub(crate) async fn postgres_pool(url: &str) -> Result<sqlx::PgPool, sqlx::Error> {
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(8)
        .acquire_timeout(POSTGRES_ACQUIRE_TIMEOUT)
        .connect(url)
        .await
}

/// Runs `statements` (each `IF NOT EXISTS`) in one transaction under the advisory lock `lock`:
/// instances starting together race on `IF NOT EXISTS` (PostgreSQL may report the loser's
/// catalog insert as a unique violation), so they take turns.
#[cfg(feature = "postgres")]
pub(crate) async fn create_schema(
    pool: &sqlx::PgPool,
    lock: i64,
    statements: &[&str],
) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(lock)
        .execute(&mut *tx)
        .await?;
    for statement in statements {
        sqlx::query(statement).execute(&mut *tx).await?;
    }
    tx.commit().await
}

/// How long [`PostgresTaskStore::connect`]'s pool waits for a connection.
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub const POSTGRES_ACQUIRE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Tasks in PostgreSQL: every instance sharing the database answers for every task, and a
/// worker notices a cancellation or an answer made through another instance on its next poll.
///
/// # Examples
///
/// ```no_run
/// # async fn demo() -> Result<(), tollgate::task::TaskStoreError> {
/// use tollgate::task::PostgresTaskStore;
///
/// let store = PostgresTaskStore::connect("postgres://tollgate@db.internal/tollgate").await?;
/// # let _ = store;
/// # Ok(()) }
/// ```
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
#[derive(Clone, Debug)]
pub struct PostgresTaskStore {
    warm: std::sync::Arc<crate::tasks::warm::Warm>,
    capacity: u64,
}

#[cfg(feature = "postgres")]
impl PostgresTaskStore {
    /// Connects to `url` and creates the table if it is missing. The store holds at most 8
    /// connections, keeps them open between calls (a connection unused for 500 ms or more is
    /// checked with a ping before its next use; one a call fails on for any reason but the
    /// database's own refusal is closed), and waits at most [`POSTGRES_ACQUIRE_TIMEOUT`] for
    /// one: while the database is down, a request that needs it fails within that bound with
    /// HTTP 503 `Server busy` instead of hanging (and any store call that gets no answer within
    /// 10 s counts as failed), and new connections are opened when the database is back.
    ///
    /// # Errors
    ///
    /// [`TaskStoreErrorKind::Backend`] when the database is unreachable or refuses.
    pub async fn connect(url: &str) -> Result<Self, TaskStoreError> {
        Self::from_pool(postgres_pool(url).await.map_err(backend)?).await
    }

    /// Uses an existing pool, creating the table if it is missing. The store opens its
    /// connections through the pool (its connect options and acquire timeout), at most the
    /// pool's `max_connections` at once, and keeps them as [`PostgresTaskStore::connect`]
    /// describes. It detaches them from the pool to do so, so code that shares the pool may
    /// see it open that many more, and sets `enable_seqscan = off` on each it takes (every
    /// statement it runs goes through an index; see `docs/guide/deployment.md`).
    ///
    /// # Errors
    ///
    /// [`TaskStoreErrorKind::Backend`] when the table cannot be created.
    pub async fn from_pool(pool: sqlx::PgPool) -> Result<Self, TaskStoreError> {
        // The count's triggers before the count, in one transaction (see tasks/count.rs): every
        // insert is counted from then on, an earlier Tollgate's too.
        create_schema(
            &pool,
            7_367_617_416,
            &[
                CREATE_TABLE,
                CREATE_INDEX,
                crate::tasks::count::CREATE_COUNT,
                crate::tasks::count::POSTGRES_COUNT,
            ],
        )
        .await
        .map_err(backend)?;
        Ok(Self {
            warm: std::sync::Arc::new(crate::tasks::warm::Warm::new(
                pool,
                Some(POSTGRES_CONNECTION_SETUP),
            )),
            capacity: DEFAULT_SQL_TASK_CAPACITY,
        })
    }

    /// Runs one statement on a connection kept open (see `tasks/warm.rs`).
    async fn execute(
        &self,
        query: sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments>,
    ) -> Result<sqlx::postgres::PgQueryResult, sqlx::Error> {
        self.warm.execute(query).await
    }

    async fn fetch_optional<O>(
        &self,
        query: sqlx::query::QueryAs<'_, sqlx::Postgres, O, sqlx::postgres::PgArguments>,
    ) -> Result<Option<O>, sqlx::Error>
    where
        O: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow> + Send + Unpin,
    {
        self.warm.fetch_optional(query).await
    }
}

#[cfg(feature = "postgres")]
sql_task_store!(
    PostgresTaskStore,
    sqlx::Postgres,
    "INSERT INTO tollgate_tasks (id, version, expires_at_ms, data) \
     SELECT $1, $2, $3, $4 WHERE (SELECT n FROM tollgate_task_count WHERE one = 1) < $5",
    "SELECT id, version, expires_at_ms, data FROM tollgate_tasks WHERE id = $1",
    "UPDATE tollgate_tasks SET version = $1, expires_at_ms = $2, data = $3 \
     WHERE id = $4 AND version = $5",
    "DELETE FROM tollgate_tasks WHERE expires_at_ms <= $1",
    "SELECT 1"
);

/// The store contract, run against any store (the SQLite one here; PostgreSQL in
/// `tests/stores/postgres_store.rs`).
#[cfg(any(test, feature = "postgres"))]
#[doc(hidden)]
pub async fn check_store_contract(store: &dyn TaskStore, prefix: &str) -> Result<(), String> {
    let row = |id: &str, version: u64, expires: u64| TaskRow {
        id: format!("{prefix}{id}"),
        version,
        expires_at_ms: expires,
        data: format!(r#"{{"v":{version}}}"#),
    };
    let fail = |what: &str| Err(format!("store contract: {what}"));
    let a = row("a", 1, u64::MAX / 4);
    if store.insert(a.clone()).await.is_err() {
        return fail("insert");
    }
    if store.insert(a.clone()).await.map_err(|e| e.kind()) != Err(TaskStoreErrorKind::Duplicate) {
        return fail("duplicate insert");
    }
    if store.load(&a.id).await != Ok(Some(a.clone())) {
        return fail("load after insert");
    }
    if store.load(&format!("{prefix}missing")).await != Ok(None) {
        return fail("load of a missing id");
    }
    let next = row("a", 2, u64::MAX / 4);
    if store.replace(next.clone(), 7).await != Ok(false) {
        return fail("replace with a stale version");
    }
    if store.replace(next.clone(), 1).await != Ok(true) {
        return fail("replace");
    }
    if store.load(&a.id).await != Ok(Some(next)) {
        return fail("load after replace");
    }
    let old = row("old", 1, 1_000);
    if store.insert(old.clone()).await.is_err() {
        return fail("insert of an expiring row");
    }
    match store.purge_expired(2_000).await {
        Ok(n) if n >= 1 => {}
        _ => return fail("purge"),
    }
    if store.load(&old.id).await != Ok(None) {
        return fail("purged row still loads");
    }
    if store.load(&a.id).await.ok().flatten().is_none() {
        return fail("purge removed a live row");
    }
    Ok(())
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sqlite_keeps_the_contract_and_its_bound() {
        let store = SqliteTaskStore::open_in_memory().await.unwrap_or_else(|_| {
            unreachable!("in-memory SQLite opens");
        });
        assert_eq!(check_store_contract(&store, "t-").await, Ok(()));

        let small = SqliteTaskStore::open_in_memory()
            .await
            .unwrap_or_else(|_| unreachable!("in-memory SQLite opens"))
            .with_capacity(1);
        let row = |id: &str, expires| TaskRow {
            id: id.into(),
            version: 1,
            expires_at_ms: expires,
            data: "{}".into(),
        };
        assert_eq!(small.insert(row("x", 5)).await, Ok(()));
        // Full, but the only row has expired: purged to make room.
        assert_eq!(small.insert(row("y", u64::MAX)).await, Ok(()));
        assert_eq!(
            small.insert(row("z", u64::MAX)).await.map_err(|e| e.kind()),
            Err(TaskStoreErrorKind::Full)
        );
    }

    /// The count the capacity check reads: a refused duplicate does not count, a purge gives
    /// its rows back, and rows a counterless table already held are counted when it opens.
    #[tokio::test]
    async fn sqlite_counts_rows_for_the_bound() {
        let row = |id: &str, expires| TaskRow {
            id: id.into(),
            version: 1,
            expires_at_ms: expires,
            data: "{}".into(),
        };
        let full = |r: Result<(), TaskStoreError>| r.map_err(|e| e.kind());
        let store = SqliteTaskStore::open_in_memory()
            .await
            .unwrap_or_else(|_| unreachable!("in-memory SQLite opens"))
            .with_capacity(2);
        assert_eq!(store.insert(row("a", u64::MAX)).await, Ok(()));
        assert_eq!(
            full(store.insert(row("a", u64::MAX)).await),
            Err(TaskStoreErrorKind::Duplicate)
        );
        assert_eq!(store.insert(row("b", 5)).await, Ok(()));
        // Full at two; `b` has expired, so the retry after the purge finds room.
        assert_eq!(store.insert(row("c", u64::MAX)).await, Ok(()));
        assert_eq!(
            full(store.insert(row("d", u64::MAX)).await),
            Err(TaskStoreErrorKind::Full)
        );

        // A table made without the count (an earlier Tollgate), two rows in it.
        let pool = sqlx::sqlite::SqlitePoolOptions::new()
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(sqlx::sqlite::SqliteConnectOptions::new().in_memory(true))
            .await
            .unwrap_or_else(|_| unreachable!("in-memory SQLite opens"));
        for statement in [
            CREATE_TABLE,
            "INSERT INTO tollgate_tasks VALUES ('x', 1, 9223372036854775807, '{}')",
            "INSERT INTO tollgate_tasks VALUES ('y', 1, 9223372036854775807, '{}')",
        ] {
            assert!(sqlx::query(statement).execute(&pool).await.is_ok());
        }
        let upgraded = SqliteTaskStore::from_pool(pool.clone())
            .await
            .unwrap_or_else(|_| unreachable!("the schema upgrades"))
            .with_capacity(3);
        assert_eq!(upgraded.insert(row("z", u64::MAX)).await, Ok(()));
        assert_eq!(
            full(upgraded.insert(row("w", u64::MAX)).await),
            Err(TaskStoreErrorKind::Full)
        );
        // Emptied by one DELETE, or dropped and made again: counted right either way.
        assert!(
            sqlx::query("DELETE FROM tollgate_tasks")
                .execute(&pool)
                .await
                .is_ok()
        );
        for id in ["d1", "d2", "d3"] {
            assert_eq!(upgraded.insert(row(id, u64::MAX)).await, Ok(()));
        }
        assert!(
            sqlx::query("DROP TABLE tollgate_tasks")
                .execute(&pool)
                .await
                .is_ok()
        );
        let remade = SqliteTaskStore::from_pool(pool)
            .await
            .unwrap_or_else(|_| unreachable!("the table is made again"))
            .with_capacity(1);
        assert_eq!(remade.insert(row("r", u64::MAX)).await, Ok(()));
        assert_eq!(
            full(remade.insert(row("s", u64::MAX)).await),
            Err(TaskStoreErrorKind::Full)
        );
    }

    #[tokio::test]
    async fn sqlite_files_outlive_the_store() {
        let dir = std::env::temp_dir().join(format!("tollgate-sqlite-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("tasks.sqlite3");
        let _ = std::fs::remove_file(&path);
        let row = TaskRow {
            id: "kept".into(),
            version: 3,
            expires_at_ms: u64::MAX / 2,
            data: r#"{"v":1}"#.into(),
        };
        {
            let store = SqliteTaskStore::open(&path)
                .await
                .unwrap_or_else(|_| unreachable!("opens"));
            assert_eq!(store.insert(row.clone()).await, Ok(()));
            store.pool.close().await;
        }
        let reopened = SqliteTaskStore::open(&path)
            .await
            .unwrap_or_else(|_| unreachable!("reopens"));
        assert_eq!(reopened.load("kept").await, Ok(Some(row)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
