//! Replay stores over sqlx: [`SqliteReplayStore`] (an embedded database file, feature `sqlite`)
//! and [`PostgresReplayStore`] (shared by every instance, feature `postgres`).
//!
//! Owns the table `tollgate_request_state_uses (nonce, expires_at_ms)` and its two statements:
//! `INSERT ... ON CONFLICT DO NOTHING` (one row affected is a first use: the database's primary
//! key makes the consume atomic across instances) and the purge of expired rows. Reuses the task
//! stores' pool, schema creation and kept connections (`tasks/sql.rs`, `tasks/warm.rs`). Knows
//! nothing of request state. Database errors become [`ReplayStoreErrorKind::Backend`] without
//! their text.

use crate::single_use::{ReplayFuture, ReplayStore, ReplayStoreError, ReplayStoreErrorKind};

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS tollgate_request_state_uses (\
     nonce TEXT PRIMARY KEY NOT NULL, \
     expires_at_ms BIGINT NOT NULL)";
const CREATE_INDEX: &str = "CREATE INDEX IF NOT EXISTS tollgate_request_state_uses_expiry \
     ON tollgate_request_state_uses (expires_at_ms)";

fn backend<E>(_: E) -> ReplayStoreError {
    ReplayStoreError::new(ReplayStoreErrorKind::Backend)
}

/// Milliseconds are stored as signed 64-bit integers.
fn signed(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Implements [`ReplayStore`] for a store with an `execute` over its database's queries.
macro_rules! sql_replay_store {
    ($store:ident, $db:ty, $consume:expr, $purge:expr, $ping:expr) => {
        impl ReplayStore for $store {
            fn consume<'a>(&'a self, nonce: &'a str, expires_at_ms: u64) -> ReplayFuture<'a, bool> {
                Box::pin(async move {
                    let done = self
                        .execute(
                            sqlx::query::<$db>($consume)
                                .bind(nonce)
                                .bind(signed(expires_at_ms)),
                        )
                        .await
                        .map_err(backend)?;
                    Ok(done.rows_affected() == 1)
                })
            }

            fn purge_expired<'a>(&'a self, now_ms: u64) -> ReplayFuture<'a, u64> {
                Box::pin(async move {
                    let done = self
                        .execute(sqlx::query::<$db>($purge).bind(signed(now_ms)))
                        .await
                        .map_err(backend)?;
                    Ok(done.rows_affected())
                })
            }

            fn ping(&self) -> ReplayFuture<'_, ()> {
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

/// Used request states in an embedded SQLite database file (WAL journal): they stay used
/// across a restart of the process. One file serves one machine; instances on several share a
/// [`PostgresReplayStore`] instead. Expired rows are purged by the endpoint about once a
/// minute.
///
/// # Examples
///
/// ```no_run
/// # async fn demo() -> Result<(), tollgate::endpoint::ReplayStoreError> {
/// use tollgate::endpoint::SqliteReplayStore;
///
/// let store = SqliteReplayStore::open("request-state-uses.sqlite3").await?;
/// # let _ = store;
/// # Ok(()) }
/// ```
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
#[derive(Clone, Debug)]
pub struct SqliteReplayStore {
    pool: sqlx::SqlitePool,
}

#[cfg(feature = "sqlite")]
impl SqliteReplayStore {
    /// Opens (creating if missing) the database file at `path` and its table. The file may be
    /// the one a `SqliteTaskStore` uses.
    ///
    /// # Errors
    ///
    /// [`ReplayStoreErrorKind::Backend`] when the file cannot be opened or created.
    pub async fn open(path: impl AsRef<std::path::Path>) -> Result<Self, ReplayStoreError> {
        let pool = crate::tasks::sql::sqlite_file(path.as_ref()).await;
        Self::from_pool(pool.map_err(backend)?).await
    }

    /// A private in-memory database (one connection, gone with the store): for tests.
    ///
    /// # Errors
    ///
    /// [`ReplayStoreErrorKind::Backend`] when SQLite cannot start.
    pub async fn open_in_memory() -> Result<Self, ReplayStoreError> {
        let pool = crate::tasks::sql::sqlite_in_memory().await;
        Self::from_pool(pool.map_err(backend)?).await
    }

    /// Uses an existing pool, creating the table if it is missing.
    ///
    /// # Errors
    ///
    /// [`ReplayStoreErrorKind::Backend`] when the table cannot be created.
    pub async fn from_pool(pool: sqlx::SqlitePool) -> Result<Self, ReplayStoreError> {
        for statement in [CREATE_TABLE, CREATE_INDEX] {
            sqlx::query(statement)
                .execute(&pool)
                .await
                .map_err(backend)?;
        }
        Ok(Self { pool })
    }

    async fn execute<'q>(
        &self,
        query: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
    ) -> Result<sqlx::sqlite::SqliteQueryResult, sqlx::Error> {
        query.execute(&self.pool).await
    }
}

#[cfg(feature = "sqlite")]
sql_replay_store!(
    SqliteReplayStore,
    sqlx::Sqlite,
    "INSERT INTO tollgate_request_state_uses (nonce, expires_at_ms) VALUES (?1, ?2) \
     ON CONFLICT DO NOTHING",
    "DELETE FROM tollgate_request_state_uses WHERE expires_at_ms <= ?1",
    // Writable: a write statement takes the write lock and changes nothing.
    "DELETE FROM tollgate_request_state_uses WHERE expires_at_ms < 0"
);

/// Used request states in PostgreSQL: a state used through one instance is refused by every
/// other sharing the database. Expired rows are purged by each endpoint about once a minute.
///
/// # Examples
///
/// ```no_run
/// # async fn demo() -> Result<(), tollgate::endpoint::ReplayStoreError> {
/// use tollgate::endpoint::PostgresReplayStore;
///
/// let store = PostgresReplayStore::connect("postgres://tollgate@db.internal/tollgate").await?;
/// # let _ = store;
/// # Ok(()) }
/// ```
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
#[derive(Clone, Debug)]
pub struct PostgresReplayStore {
    warm: std::sync::Arc<crate::tasks::warm::Warm>,
}

#[cfg(feature = "postgres")]
impl PostgresReplayStore {
    /// Connects to `url` and creates the table if it is missing. Connections as
    /// `PostgresTaskStore::connect` keeps them: at most 8, kept open between calls, at most
    /// 5 s waited for one.
    ///
    /// # Errors
    ///
    /// [`ReplayStoreErrorKind::Backend`] when the database is unreachable or refuses.
    pub async fn connect(url: &str) -> Result<Self, ReplayStoreError> {
        Self::from_pool(
            crate::tasks::sql::postgres_pool(url)
                .await
                .map_err(backend)?,
        )
        .await
    }

    /// Uses an existing pool (its connections detached and kept as
    /// `PostgresTaskStore::from_pool` does, each set up with `enable_seqscan = off`), creating
    /// the table if it is missing.
    ///
    /// # Errors
    ///
    /// [`ReplayStoreErrorKind::Backend`] when the table cannot be created.
    pub async fn from_pool(pool: sqlx::PgPool) -> Result<Self, ReplayStoreError> {
        crate::tasks::sql::create_schema(&pool, 7_367_617_419, &[CREATE_TABLE, CREATE_INDEX])
            .await
            .map_err(backend)?;
        Ok(Self {
            warm: std::sync::Arc::new(crate::tasks::warm::Warm::new(
                pool,
                Some(crate::tasks::sql::POSTGRES_CONNECTION_SETUP),
            )),
        })
    }

    async fn execute(
        &self,
        query: sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments>,
    ) -> Result<sqlx::postgres::PgQueryResult, sqlx::Error> {
        self.warm.execute(query).await
    }
}

#[cfg(feature = "postgres")]
sql_replay_store!(
    PostgresReplayStore,
    sqlx::Postgres,
    "INSERT INTO tollgate_request_state_uses (nonce, expires_at_ms) VALUES ($1, $2) \
     ON CONFLICT DO NOTHING",
    "DELETE FROM tollgate_request_state_uses WHERE expires_at_ms <= $1",
    "SELECT 1"
);
