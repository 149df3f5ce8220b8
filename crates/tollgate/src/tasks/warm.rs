//! PostgreSQL connections kept open between store calls, so that a statement costs one round
//! trip. sqlx 0.8's pool pings a connection (a round trip of its own) each time one goes back to
//! it, and again each time one comes out of it when `test_before_acquire` is on, its default:
//! three round trips for each statement. Here a connection taken from the pool is detached from
//! it and kept; it is pinged again only after it sat unused for [`CHECK_AFTER`] (HikariCP's
//! rule, with its 500 ms), when a database restart or an idle-connection killer may have ended
//! it.
//!
//! Owns which connection a store call gets and whether it is kept after; knows nothing of tasks
//! or sessions, nor of the statements run on a connection.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use sqlx::postgres::{PgArguments, PgQueryResult, PgRow};
use sqlx::query::{Query, QueryAs};
use sqlx::{Connection, FromRow, PgConnection, PgPool, Postgres};
use tokio::sync::{Semaphore, SemaphorePermit};

/// A connection unused for this long is pinged before it is used again.
pub(crate) const CHECK_AFTER: Duration = Duration::from_millis(500);

/// How long a connection that is let go may take to say goodbye to the server.
const CLOSE_BOUND: Duration = Duration::from_secs(1);

/// A connection kept between store calls.
struct Kept {
    conn: PgConnection,
    opened: Instant,
    used: Instant,
}

/// At most the pool's `max_connections` connections, each either lent to a store call or kept
/// for the next; they are opened through the pool (its connect options, its acquire timeout)
/// and then detached from it, so the pool may open others for other users.
pub(crate) struct Warm {
    pool: PgPool,
    permits: Semaphore,
    kept: Mutex<Vec<Kept>>,
}

impl std::fmt::Debug for Warm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Warm")
            .field("pool", &self.pool)
            .field("available", &self.permits.available_permits())
            .finish_non_exhaustive()
    }
}

impl Warm {
    /// Connections from `pool`, at most its `max_connections` at once.
    pub(crate) fn new(pool: PgPool) -> Self {
        let most = usize::try_from(pool.options().get_max_connections())
            .unwrap_or(1)
            .max(1);
        Self {
            pool,
            permits: Semaphore::new(most),
            kept: Mutex::new(Vec::with_capacity(most)),
        }
    }

    /// A connection for one store call: the one used last if it is fresh enough, else one
    /// the pool opens. Waits at most the pool's acquire timeout for a free place.
    pub(crate) async fn lend(&self) -> Result<Lent<'_>, sqlx::Error> {
        if self.pool.is_closed() {
            return Err(sqlx::Error::PoolClosed);
        }
        let permit = tokio::time::timeout(
            self.pool.options().get_acquire_timeout(),
            self.permits.acquire(),
        )
        .await
        .map_err(|_| sqlx::Error::PoolTimedOut)?
        .map_err(|_| sqlx::Error::PoolClosed)?;
        while let Some(mut kept) = self.pop() {
            let now = Instant::now();
            if self.expired(&kept, now) {
                let _ = tokio::time::timeout(CLOSE_BOUND, kept.conn.close()).await;
                continue;
            }
            // A connection that fails its ping is broken: dropped, not closed politely.
            if now.saturating_duration_since(kept.used) < CHECK_AFTER
                || kept.conn.ping().await.is_ok()
            {
                return Ok(Lent {
                    warm: self,
                    conn: Some(kept.conn),
                    opened: kept.opened,
                    _permit: permit,
                });
            }
        }
        let conn = self.pool.acquire().await?.detach();
        Ok(Lent {
            warm: self,
            conn: Some(conn),
            opened: Instant::now(),
            _permit: permit,
        })
    }

    /// The pool connections are opened through (the `LISTEN` connection and schema creation
    /// use it directly).
    pub(crate) fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Runs one statement on a kept connection.
    pub(crate) async fn execute<'q>(
        &self,
        query: Query<'q, Postgres, PgArguments>,
    ) -> Result<PgQueryResult, sqlx::Error> {
        let mut lent = self.lend().await?;
        let done = query.execute(lent.conn()?).await;
        lent.finish(done)
    }

    /// Runs one statement on a kept connection, for its rows.
    pub(crate) async fn fetch_all<'q, O>(
        &self,
        query: QueryAs<'q, Postgres, O, PgArguments>,
    ) -> Result<Vec<O>, sqlx::Error>
    where
        O: for<'r> FromRow<'r, PgRow> + Send + Unpin,
    {
        let mut lent = self.lend().await?;
        let done = query.fetch_all(lent.conn()?).await;
        lent.finish(done)
    }

    /// Runs one statement on a kept connection, for at most one row.
    pub(crate) async fn fetch_optional<'q, O>(
        &self,
        query: QueryAs<'q, Postgres, O, PgArguments>,
    ) -> Result<Option<O>, sqlx::Error>
    where
        O: for<'r> FromRow<'r, PgRow> + Send + Unpin,
    {
        let mut lent = self.lend().await?;
        let done = query.fetch_optional(lent.conn()?).await;
        lent.finish(done)
    }

    /// The connection used last (the others age towards their idle timeout).
    fn pop(&self) -> Option<Kept> {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    }

    /// Past the pool's idle timeout or its maximum lifetime.
    fn expired(&self, kept: &Kept, now: Instant) -> bool {
        let options = self.pool.options();
        options
            .get_idle_timeout()
            .is_some_and(|idle| now.saturating_duration_since(kept.used) >= idle)
            || options
                .get_max_lifetime()
                .is_some_and(|life| now.saturating_duration_since(kept.opened) >= life)
    }
}

/// A connection lent to one store call. [`Lent::finish`] keeps it for the next call when the
/// call's outcome leaves it usable; dropped unfinished (the call was cancelled or timed out in
/// the middle of a statement), it is closed, since its state is unknown.
pub(crate) struct Lent<'a> {
    warm: &'a Warm,
    conn: Option<PgConnection>,
    opened: Instant,
    _permit: SemaphorePermit<'a>,
}

impl std::fmt::Debug for Lent<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lent").finish_non_exhaustive()
    }
}

impl Lent<'_> {
    /// The connection to run a statement on.
    pub(crate) fn conn(&mut self) -> Result<&mut PgConnection, sqlx::Error> {
        // Taken only by `finish`, which consumes the loan.
        self.conn.as_mut().ok_or(sqlx::Error::PoolClosed)
    }

    /// Ends the loan with the statement's `outcome`, passed back. A success or the database's
    /// own refusal of the statement (a constraint: the connection answered and is ready for
    /// more) keeps the connection; anything else (I/O, protocol, a decoding failure
    /// mid-stream, a FATAL error such as the server ending the connection) closes it, and a
    /// later call gets a new one.
    pub(crate) fn finish<T>(mut self, outcome: Result<T, sqlx::Error>) -> Result<T, sqlx::Error> {
        if outcome.as_ref().err().is_none_or(answered)
            && let Some(conn) = self.conn.take()
        {
            let now = Instant::now();
            let kept = Kept {
                conn,
                opened: self.opened,
                used: now,
            };
            if !self.warm.expired(&kept, now) && !self.warm.pool.is_closed() {
                self.warm
                    .kept
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(kept);
            }
        }
        outcome
    }

    /// Ends the loan after a transaction: the connection is kept only when the transaction
    /// ended (committed or rolled back) without error, since one dropped half-way leaves its
    /// rollback queued on the connection, holding its locks until the connection's next use.
    pub(crate) fn finish_transaction<T>(
        mut self,
        outcome: Result<T, sqlx::Error>,
    ) -> Result<T, sqlx::Error> {
        if outcome.is_err() {
            self.conn = None;
        }
        self.finish(outcome)
    }
}

/// An error the database answered with that leaves the connection ready for the next
/// statement: not a FATAL or PANIC one (the server ends the connection after it, as
/// `pg_terminate_backend` or a shutdown does), nor one of the connection classes (08, 57P).
fn answered(error: &sqlx::Error) -> bool {
    use sqlx::postgres::{PgDatabaseError, PgSeverity};
    match error {
        sqlx::Error::RowNotFound => true,
        sqlx::Error::Database(e) => {
            let ending = e
                .try_downcast_ref::<PgDatabaseError>()
                .is_none_or(|pg| matches!(pg.severity(), PgSeverity::Fatal | PgSeverity::Panic));
            let code = e.code();
            let about_the_connection = code
                .as_deref()
                .is_some_and(|c| c.starts_with("08") || c.starts_with("57P"));
            !ending && !about_the_connection
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_errors_the_database_answered_with_keep_the_connection() {
        assert!(answered(&sqlx::Error::RowNotFound));
        assert!(!answered(&sqlx::Error::Io(std::io::Error::from(
            std::io::ErrorKind::ConnectionReset
        ))));
        assert!(!answered(&sqlx::Error::Protocol(
            "unexpected message".into()
        )));
        assert!(!answered(&sqlx::Error::PoolTimedOut));
        assert!(!answered(&sqlx::Error::WorkerCrashed));
    }
}
