//! [`InMemoryReplayStore`]: the used nonces of one process, bounded in entries.
//!
//! Owns the nonces and their expiries in memory; knows nothing of request state or of when the
//! runtime asks it to purge.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};

use crate::single_use::{ReplayFuture, ReplayStore, ReplayStoreError, ReplayStoreErrorKind};

/// The most nonces an [`InMemoryReplayStore`] keeps by default: 100,000 (about 110 single-use
/// states a second used over their 15-minute life, a few megabytes).
///
/// # Examples
///
/// ```
/// use tollgate::endpoint::{DEFAULT_REPLAY_STORE_CAPACITY, InMemoryReplayStore};
///
/// assert_eq!(InMemoryReplayStore::new().capacity(), DEFAULT_REPLAY_STORE_CAPACITY);
/// ```
pub const DEFAULT_REPLAY_STORE_CAPACITY: usize = 100_000;

/// The used request states of one process, in its memory: for a single instance (states then
/// do not outlive a restart of the process, nor do the keys that seal them unless configured).
/// Bounded: at [`capacity`](Self::capacity) unexpired nonces it purges the expired ones and, if
/// none are, refuses the new one ([`ReplayStoreErrorKind::Full`], which the endpoint answers as
/// a state that does not open) rather than forget a nonce whose state could still be replayed.
///
/// # Examples
///
/// ```
/// use tollgate::endpoint::InMemoryReplayStore;
///
/// let store = InMemoryReplayStore::with_capacity(10_000);
/// assert_eq!(store.capacity(), 10_000);
/// assert!(store.is_empty());
/// ```
#[derive(Debug)]
pub struct InMemoryReplayStore {
    nonces: Mutex<Nonces>,
    capacity: usize,
}

/// The nonces, and the same ordered by expiry for the purge.
#[derive(Debug, Default)]
pub(super) struct Nonces {
    pub(super) by_nonce: HashMap<Box<str>, u64>,
    by_expiry: BTreeSet<(u64, Box<str>)>,
}

impl Nonces {
    /// Forgets the nonces expired at or before `now_ms`; returns how many.
    fn purge(&mut self, now_ms: u64) -> u64 {
        let mut purged = 0;
        while let Some(first) = self.by_expiry.first() {
            if first.0 > now_ms {
                break;
            }
            if let Some((_, nonce)) = self.by_expiry.pop_first() {
                self.by_nonce.remove(&nonce);
                purged += 1;
            }
        }
        purged
    }
}

impl Default for InMemoryReplayStore {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryReplayStore {
    /// A store of at most [`DEFAULT_REPLAY_STORE_CAPACITY`] nonces.
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_REPLAY_STORE_CAPACITY)
    }

    /// A store of at most `capacity` nonces (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            nonces: Mutex::new(Nonces::default()),
            capacity: capacity.max(1),
        }
    }

    /// The most nonces it keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many nonces it keeps now (expired ones included until purged).
    pub fn len(&self) -> usize {
        self.lock().by_nonce.len()
    }

    /// Whether it keeps none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Nonces> {
        self.nonces.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The consume, without a future.
    fn consume_now(&self, nonce: &str, expires_at_ms: u64) -> Result<bool, ReplayStoreError> {
        let mut nonces = self.lock();
        if nonces.by_nonce.contains_key(nonce) {
            return Ok(false);
        }
        if nonces.by_nonce.len() >= self.capacity {
            nonces.purge(crate::single_use::now_ms());
            if nonces.by_nonce.len() >= self.capacity {
                return Err(ReplayStoreError::new(ReplayStoreErrorKind::Full));
            }
        }
        nonces.by_nonce.insert(nonce.into(), expires_at_ms);
        nonces.by_expiry.insert((expires_at_ms, nonce.into()));
        Ok(true)
    }
}

impl ReplayStore for InMemoryReplayStore {
    fn consume<'a>(&'a self, nonce: &'a str, expires_at_ms: u64) -> ReplayFuture<'a, bool> {
        let done = self.consume_now(nonce, expires_at_ms);
        Box::pin(async move { done })
    }

    fn purge_expired<'a>(&'a self, now_ms: u64) -> ReplayFuture<'a, u64> {
        let purged = self.lock().purge(now_ms);
        Box::pin(async move { Ok(purged) })
    }
}
