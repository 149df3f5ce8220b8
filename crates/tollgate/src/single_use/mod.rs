//! Single-use request state: the [`ReplayStore`] contract (one atomic consume of a state's
//! sealed use nonce, and a purge of expired ones), `InMemoryReplayStore` (`memory.rs`), the
//! SQL stores (`sql.rs`, features `sqlite` and `postgres`), the store contract check, and the
//! consume the request-state stage runs before a handler (`consume`).
//!
//! Owns when a nonce counts as used and how long it is kept; knows nothing of the envelope
//! (`state/seal.rs` seals the nonce and hands it over as a [`Ticket`]) nor of JSON-RPC beyond
//! the fixed fault a refusal is answered with.

use crate::wire::log::STORE;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::model::guard::BoxFuture;
use crate::wire::fault::Fault;

/// What single use needs of an opened state: its sealed use nonce (`None` in a state sealed
/// before states carried one: such a state cannot be consumed, so single use refuses it) and its
/// expiry, in seconds since the Unix epoch (the state opens up to and including that second).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ticket {
    pub(crate) nonce: Option<String>,
    pub(crate) expires_at_secs: u64,
}

pub(crate) mod memory;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod sql;

/// Why a replay store call failed. It names the kind only, never a nonce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReplayStoreErrorKind {
    /// The store holds as many unexpired nonces as it may: it refuses rather than forget one.
    Full,
    /// The backing storage failed or did not answer in time (possibly transient).
    Backend,
}

/// A failed replay store call.
///
/// # Examples
///
/// ```
/// use tollgate::endpoint::{ReplayStoreError, ReplayStoreErrorKind};
///
/// let err = ReplayStoreError::new(ReplayStoreErrorKind::Full);
/// assert_eq!(err.kind(), ReplayStoreErrorKind::Full);
/// assert_eq!(err.to_string(), "replay store is full");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayStoreError {
    kind: ReplayStoreErrorKind,
}

impl ReplayStoreError {
    /// An error of `kind`.
    pub const fn new(kind: ReplayStoreErrorKind) -> Self {
        Self { kind }
    }

    /// What failed.
    pub const fn kind(&self) -> ReplayStoreErrorKind {
        self.kind
    }
}

impl fmt::Display for ReplayStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            ReplayStoreErrorKind::Full => "replay store is full",
            ReplayStoreErrorKind::Backend => "replay store backend failed",
        })
    }
}

impl std::error::Error for ReplayStoreError {}

/// A boxed future a replay store returns.
pub type ReplayFuture<'a, T> = BoxFuture<'a, Result<T, ReplayStoreError>>;

/// Where a single-use endpoint records the request states already used (see
/// [`EndpointBuilder::request_state_single_use`](crate::endpoint::EndpointBuilder::request_state_single_use)).
/// A store keeps opaque nonces (short ASCII strings, random, one per sealed state) with the
/// time each may be forgotten.
///
/// `consume` must be atomic: of any number of calls with one nonce, concurrent or not, on any
/// instances sharing the store, exactly one returns `true` until the nonce is purged. A nonce
/// must be kept until its expiry: a store that cannot record a new one fails
/// ([`ReplayStoreErrorKind::Full`]) rather than forget another early. Check an implementation
/// with [`check_replay_store_contract`].
///
/// Tollgate ships [`InMemoryReplayStore`](memory::InMemoryReplayStore) (one process) and, with the `sqlite` and `postgres`
/// features, `SqliteReplayStore` (one machine) and `PostgresReplayStore` (every instance
/// behind one URL).
pub trait ReplayStore: Send + Sync + 'static {
    /// Records `nonce` as used, kept at least until `expires_at_ms` (milliseconds since the
    /// Unix epoch): `true` when it was not recorded yet (the state's first use), `false` when
    /// it was (a replay).
    fn consume<'a>(&'a self, nonce: &'a str, expires_at_ms: u64) -> ReplayFuture<'a, bool>;
    /// Forgets the nonces whose expiry is at or before `now_ms`; returns how many.
    fn purge_expired<'a>(&'a self, now_ms: u64) -> ReplayFuture<'a, u64>;
    /// Whether the store can serve now, for the built-in server's readiness probe
    /// ([`Health`](crate::transport::Health)): a database reachable (and SQLite writable). The
    /// server calls it at most once per readiness interval, bounded by the probe timeout. The
    /// default answers at once: a store in this process's memory is as ready as the process.
    fn ping(&self) -> ReplayFuture<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

impl<S: ReplayStore + ?Sized> ReplayStore for Arc<S> {
    fn consume<'a>(&'a self, nonce: &'a str, expires_at_ms: u64) -> ReplayFuture<'a, bool> {
        (**self).consume(nonce, expires_at_ms)
    }
    fn purge_expired<'a>(&'a self, now_ms: u64) -> ReplayFuture<'a, u64> {
        (**self).purge_expired(now_ms)
    }
    fn ping(&self) -> ReplayFuture<'_, ()> {
        (**self).ping()
    }
}

/// How much longer than its state a nonce is kept: instances whose clocks disagree by less
/// than this still agree that an expired state's nonce may go.
pub(crate) const CLOCK_MARGIN: Duration = Duration::from_secs(60);

/// How often, at most, an endpoint asks its store to purge expired nonces.
const PURGE_EVERY: Duration = Duration::from_secs(60);

/// The longest one store call may take before it counts as failed (as for task stores).
const STORE_CALL_BOUND: Duration = Duration::from_secs(10);

/// An endpoint's single-use setting: its store, and when it next purges.
pub(crate) struct SingleUse {
    store: Arc<dyn ReplayStore>,
    next_purge_ms: Arc<AtomicU64>,
}

impl SingleUse {
    /// The store (for the built-in server's readiness probe).
    pub(crate) fn store(&self) -> &Arc<dyn ReplayStore> {
        &self.store
    }

    pub(crate) fn new(store: Arc<dyn ReplayStore>) -> Self {
        Self {
            store,
            next_purge_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Consumes an opened state's ticket before its handler runs: `Ok` on its first use; the
    /// fixed [`Fault::InvalidRequestState`] on any later one (on this instance or another
    /// sharing the store), for a state with no nonce, or when the store is full; HTTP 503
    /// [`Fault::Busy`] when the store fails or does not answer within 10 s (the handler has not
    /// run; if the nonce was recorded after all, the client's retry is refused as a replay).
    pub(crate) async fn consume(&self, ticket: &Ticket) -> Result<(), Fault> {
        let Some(nonce) = ticket.nonce.as_deref() else {
            return Err(Fault::InvalidRequestState);
        };
        let now = now_ms();
        self.purge_now_and_then(now);
        let keep_until = ticket
            .expires_at_secs
            .saturating_add(1)
            .saturating_mul(1000)
            .saturating_add(u64::try_from(CLOCK_MARGIN.as_millis()).unwrap_or(u64::MAX));
        let consumed =
            tokio::time::timeout(STORE_CALL_BOUND, self.store.consume(nonce, keep_until)).await;
        match consumed {
            Ok(Ok(true)) => Ok(()),
            Ok(Ok(false)) => Err(Fault::InvalidRequestState),
            Ok(Err(e)) if e.kind() == ReplayStoreErrorKind::Full => Err(Fault::InvalidRequestState),
            Ok(Err(_)) => {
                tracing::warn!(target: STORE, store = "replay", outcome = "error", "store call failed");
                Err(Fault::Busy)
            }
            Err(_) => {
                tracing::warn!(target: STORE, store = "replay", outcome = "timeout", "store call failed");
                Err(Fault::Busy)
            }
        }
    }

    /// At most once a [`PURGE_EVERY`], a purge of expired nonces in the background (its failure
    /// ignored: the next one tries again).
    fn purge_now_and_then(&self, now: u64) {
        let due = self.next_purge_ms.load(Ordering::Relaxed);
        let next = now.saturating_add(u64::try_from(PURGE_EVERY.as_millis()).unwrap_or(60_000));
        if now < due
            || self
                .next_purge_ms
                .compare_exchange(due, next, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let store = Arc::clone(&self.store);
        runtime.spawn(async move {
            let _ = tokio::time::timeout(STORE_CALL_BOUND, store.purge_expired(now)).await;
        });
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The replay store contract, run against any store: a first consume is `true`, a second of
/// the same nonce `false`, other nonces are apart, a purge forgets exactly the expired nonces,
/// and of concurrent consumes of one nonce exactly one wins. `prefix` keeps one run's nonces
/// apart from another's in a shared store.
///
/// # Errors
///
/// A description of the first rule the store broke.
///
/// # Examples
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use tollgate::endpoint::{InMemoryReplayStore, check_replay_store_contract};
///
/// let store = InMemoryReplayStore::new();
/// assert_eq!(check_replay_store_contract(&store, "doc-").await, Ok(()));
/// # });
/// ```
pub async fn check_replay_store_contract(
    store: &dyn ReplayStore,
    prefix: &str,
) -> Result<(), String> {
    let fail = |what: &str| Err(format!("replay store contract: {what}"));
    let far = now_ms().saturating_add(3_600_000);
    let (a, b, old) = (
        format!("{prefix}a"),
        format!("{prefix}b"),
        format!("{prefix}old"),
    );
    if store.consume(&a, far).await != Ok(true) {
        return fail("first consume");
    }
    if store.consume(&a, far).await != Ok(false) {
        return fail("second consume of the same nonce");
    }
    if store.consume(&b, far).await != Ok(true) {
        return fail("first consume of another nonce");
    }
    if store.consume(&old, 1_000).await != Ok(true) {
        return fail("consume of a nonce kept briefly");
    }
    match store.purge_expired(2_000).await {
        Ok(n) if n >= 1 => {}
        _ => return fail("purge"),
    }
    if store.consume(&old, far).await != Ok(true) {
        return fail("a purged nonce is still recorded");
    }
    if store.consume(&a, far).await != Ok(false) || store.consume(&b, far).await != Ok(false) {
        return fail("purge forgot an unexpired nonce");
    }
    let raced = format!("{prefix}raced");
    let tries = tokio::join!(
        store.consume(&raced, far),
        store.consume(&raced, far),
        store.consume(&raced, far),
        store.consume(&raced, far),
    );
    let won = [tries.0, tries.1, tries.2, tries.3]
        .into_iter()
        .filter(|r| *r == Ok(true))
        .count();
    if won != 1 {
        return fail("concurrent consumes of one nonce: not exactly one first use");
    }
    Ok(())
}

#[cfg(test)]
mod tests;
