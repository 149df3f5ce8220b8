//! PostgreSQL connections kept open between store calls, so that a statement costs one round
//! trip. sqlx 0.8's pool pings a connection (a round trip of its own) each time one goes back to
//! it, and again each time one comes out of it when `test_before_acquire` is on, its default:
//! three round trips for each statement. Here a connection taken from the pool is detached from
//! it and kept; it is pinged again only after it sat unused for [`CHECK_AFTER`] (HikariCP's
//! rule, with its 500 ms), when a database restart or an idle-connection killer may have ended
//! it. Kept connections are closed past the pool's idle timeout or maximum lifetime (counted
//! from when the store took them), by a background sweep every [`SWEEP_EVERY`].
//!
//! Owns which connection a store call gets and whether it is kept after; knows nothing of tasks
//! or sessions, nor of the statements run on a connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use sqlx::postgres::{PgArguments, PgQueryResult, PgRow};
use sqlx::query::{Query, QueryAs};
use sqlx::{Connection, FromRow, PgConnection, PgPool, Postgres};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A connection unused for this long is pinged before it is used again.
const CHECK_AFTER: Duration = Duration::from_millis(500);

/// How often, at most, kept connections are looked over for the pool's idle timeout and
/// lifetime (and at least twice in the shorter of the two).
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// How long a connection that is let go may take to say goodbye to the server.
const CLOSE_BOUND: Duration = Duration::from_secs(1);

/// How long a loan dropped mid-statement keeps its place while the statement ends: three store
/// calls' bound. Past it (a database host gone silent, a lock never released) the connection
/// is dropped, so the store recovers even before TCP gives up on it.
const DRAIN_BOUND: Duration = Duration::from_secs(30);

/// A connection kept between store calls.
struct Kept {
    conn: PgConnection,
    opened: Instant,
    used: Instant,
}

/// The pool's idle timeout and maximum lifetime, applied to kept connections.
#[derive(Clone, Copy, Debug)]
struct Ages {
    idle: Option<Duration>,
    life: Option<Duration>,
}

impl Ages {
    /// How long the sweep sleeps between looks.
    fn sweep_every(self) -> Duration {
        [self.idle, self.life]
            .into_iter()
            .flatten()
            .map(|d| d / 2)
            .fold(SWEEP_EVERY, Duration::min)
            .max(Duration::from_millis(100))
    }

    fn expired(self, opened: Instant, used: Instant, now: Instant) -> bool {
        self.idle
            .is_some_and(|idle| now.saturating_duration_since(used) >= idle)
            || self
                .life
                .is_some_and(|life| now.saturating_duration_since(opened) >= life)
    }
}

type KeptList = Mutex<Vec<Kept>>;

/// Closes a connection that is let go, saying goodbye to the server within [`CLOSE_BOUND`].
async fn close(conn: PgConnection) {
    let _ = tokio::time::timeout(CLOSE_BOUND, conn.close()).await;
}

fn lock(kept: &KeptList) -> std::sync::MutexGuard<'_, Vec<Kept>> {
    kept.lock().unwrap_or_else(PoisonError::into_inner)
}

/// At most the pool's `max_connections` connections, each either lent to a store call, kept
/// for the next, or (after a call dropped mid-statement) waiting for its statement to end; they
/// are opened through the pool (its connect options and acquire timeout) and then detached
/// from it, so the pool may open others for other users.
pub(crate) struct Warm {
    pool: PgPool,
    /// Run once on each connection the store takes from the pool, before the store's first
    /// statement on it (session settings).
    setup: Option<&'static str>,
    ages: Ages,
    permits: Arc<Semaphore>,
    kept: Arc<KeptList>,
    /// Whether a sweep task runs (set back by the task itself when it ends or is dropped).
    sweeping: Arc<AtomicBool>,
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
    /// Connections from `pool`, at most its `max_connections` at once, each set up with
    /// `setup` (run once when taken from the pool, as an unnamed statement) when given.
    pub(crate) fn new(pool: PgPool, setup: Option<&'static str>) -> Self {
        let most = usize::try_from(pool.options().get_max_connections())
            .unwrap_or(1)
            .max(1);
        let ages = Ages {
            idle: pool.options().get_idle_timeout(),
            life: pool.options().get_max_lifetime(),
        };
        Self {
            pool,
            setup,
            ages,
            permits: Arc::new(Semaphore::new(most)),
            kept: Arc::new(Mutex::new(Vec::with_capacity(most))),
            sweeping: Arc::new(AtomicBool::new(false)),
        }
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

    /// A connection for one store call: the one used last if it is fresh enough, else one the
    /// pool opens. All of it (a free place, the ping, the pool's connect) within the pool's
    /// acquire timeout, else [`sqlx::Error::PoolTimedOut`].
    pub(crate) async fn lend(&self) -> Result<Lent<'_>, sqlx::Error> {
        if self.pool.is_closed() {
            // The pool was closed by its owner: the connections kept from it close too.
            let closing = std::mem::take(&mut *lock(&self.kept));
            for k in closing {
                close(k.conn).await;
            }
            return Err(sqlx::Error::PoolClosed);
        }
        self.sweep_in_background();
        tokio::time::timeout(self.pool.options().get_acquire_timeout(), self.lend_now())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)?
    }

    async fn lend_now(&self) -> Result<Lent<'_>, sqlx::Error> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| sqlx::Error::PoolClosed)?;
        loop {
            let popped = lock(&self.kept).pop();
            let Some(mut kept) = popped else { break };
            let now = Instant::now();
            if self.ages.expired(kept.opened, kept.used, now) {
                close(kept.conn).await;
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
                    permit: Some(permit),
                });
            }
        }
        let mut conn = self.pool.acquire().await?.detach();
        if let Some(setup) = self.setup {
            // A connection that cannot be set up is not used (nor kept).
            sqlx::query(setup)
                .persistent(false)
                .execute(&mut conn)
                .await?;
        }
        Ok(Lent {
            warm: self,
            conn: Some(conn),
            opened: Instant::now(),
            permit: Some(permit),
        })
    }

    /// Starts, once and inside a runtime, the sweep that closes kept connections past their
    /// age even when no call comes to find them; it ends with the store.
    fn sweep_in_background(&self) {
        if self.sweeping.load(Ordering::Relaxed) || self.sweeping.swap(true, Ordering::Relaxed) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.sweeping.store(false, Ordering::Relaxed);
            return;
        };
        let running = Sweeping(self.sweeping.clone());
        let (kept, ages) = (Arc::downgrade(&self.kept), self.ages);
        runtime.spawn(async move {
            sweep(kept, ages).await;
            drop(running);
        });
    }
}

/// Clears the sweeping flag when the sweep task ends, or is dropped with its runtime, so the
/// next call starts another.
struct Sweeping(Arc<AtomicBool>);

impl Drop for Sweeping {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// Now and then ([`Ages::sweep_every`]), closes the kept connections past their age, until
/// `kept` is gone.
async fn sweep(kept: Weak<KeptList>, ages: Ages) {
    loop {
        tokio::time::sleep(ages.sweep_every()).await;
        let Some(list) = kept.upgrade() else {
            return;
        };
        let now = Instant::now();
        let expired: Vec<Kept> = lock(&list)
            .extract_if(.., |k| ages.expired(k.opened, k.used, now))
            .collect();
        drop(list);
        for k in expired {
            close(k.conn).await;
        }
    }
}

/// A connection lent to one store call. [`Lent::finish`] keeps it for the next call when the
/// call's outcome leaves it usable. Dropped unfinished (the call was cancelled or timed out in
/// the middle of a statement, which may still run on the server), its place stays taken until
/// the connection answers a ping (as sqlx's pool does on return), at most [`DRAIN_BOUND`], and
/// it is then closed: a statement stuck on a lock gets no more connections opened beside it
/// for that long.
pub(crate) struct Lent<'a> {
    warm: &'a Warm,
    conn: Option<PgConnection>,
    opened: Instant,
    permit: Option<OwnedSemaphorePermit>,
}

impl std::fmt::Debug for Lent<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lent").finish_non_exhaustive()
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let (Some(mut conn), Some(permit)) = (self.conn.take(), self.permit.take()) else {
            return;
        };
        // Outside a runtime there is nothing to wait with: the connection is dropped.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Ok(Ok(())) = tokio::time::timeout(DRAIN_BOUND, conn.ping()).await {
                    close(conn).await;
                }
                drop(permit);
            });
        }
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
        let conn = self.conn.take();
        if outcome.as_ref().err().is_none_or(answered)
            && let Some(conn) = conn
            && !self.warm.pool.is_closed()
        {
            let now = Instant::now();
            if !self.warm.ages.expired(self.opened, now, now) {
                lock(&self.warm.kept).push(Kept {
                    conn,
                    opened: self.opened,
                    used: now,
                });
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
    fn the_sweep_looks_twice_per_idle_timeout_and_at_least_every_30_s() {
        let every = |idle: Option<u64>, life: Option<u64>| {
            Ages {
                idle: idle.map(Duration::from_secs),
                life: life.map(Duration::from_secs),
            }
            .sweep_every()
        };
        assert_eq!(every(None, None), SWEEP_EVERY);
        assert_eq!(every(Some(600), Some(1800)), SWEEP_EVERY);
        assert_eq!(every(Some(20), Some(1800)), Duration::from_secs(10));
        assert_eq!(every(None, Some(4)), Duration::from_secs(2));
        assert_eq!(every(Some(0), None), Duration::from_millis(100));
    }

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
