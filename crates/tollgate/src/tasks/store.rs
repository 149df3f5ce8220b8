//! The [`TaskStore`] contract (insert, load, compare-and-swap replace, purge expired, on opaque
//! versioned rows) and [`InMemoryTaskStore`].

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use crate::model::guard::BoxFuture;
use crate::tasks::model::now_ms;

/// One stored task as a store keeps it: the id, a version for compare-and-swap, the expiry
/// (milliseconds since the Unix epoch) and the encoded record. The record is opaque and may
/// hold validated arguments' consequences and results: protect it like the task itself, and
/// store it byte for byte (a text or binary column, never one that re-renders JSON).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRow {
    /// The task id (unique, high-entropy).
    pub id: String,
    /// Incremented by every write; a replace names the version it read.
    pub version: u64,
    /// When the row may be purged, in milliseconds since the Unix epoch.
    pub expires_at_ms: u64,
    /// The encoded record.
    pub data: String,
}

/// Why a store operation failed. It names the kind only, never row data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskStoreErrorKind {
    /// The store holds as many tasks as it may.
    Full,
    /// A row with that id exists already.
    Duplicate,
    /// The backing storage failed (connection, I/O, constraint, or no answer within the
    /// runner's bound): possibly transient, so callers are told to retry.
    Backend,
    /// A stored row does not decode, or a record has grown too large for a row: retrying does
    /// not help.
    Unusable,
}

/// A failed store operation.
///
/// # Examples
///
/// ```
/// use tollgate::{task::{TaskStoreError, TaskStoreErrorKind}};
///
/// let err = TaskStoreError::new(TaskStoreErrorKind::Backend);
/// assert_eq!(err.kind(), TaskStoreErrorKind::Backend);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskStoreError {
    kind: TaskStoreErrorKind,
}

impl TaskStoreError {
    /// An error of `kind`.
    pub const fn new(kind: TaskStoreErrorKind) -> Self {
        Self { kind }
    }

    /// What failed.
    pub const fn kind(&self) -> TaskStoreErrorKind {
        self.kind
    }
}

impl fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            TaskStoreErrorKind::Full => "task store is full",
            TaskStoreErrorKind::Duplicate => "task id already stored",
            TaskStoreErrorKind::Backend => "task store backend failed",
            TaskStoreErrorKind::Unusable => "stored task row unusable",
        })
    }
}

impl std::error::Error for TaskStoreError {}

/// A boxed future a store returns.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T, TaskStoreError>>;

/// Where task records live. Implementations keep rows; they never interpret `data`. Every
/// operation must be atomic with respect to the others (a replace that names a stale version
/// changes nothing and returns `false`), and a row inserted must be visible to every later
/// `load` on any instance sharing the store before `insert` returns.
///
/// Tollgate ships [`InMemoryTaskStore`] (one process) and, with the `sqlite` feature, a SQLite
/// store; a shared database makes tasks visible to every instance.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new row.
    fn insert<'a>(&'a self, row: TaskRow) -> StoreFuture<'a, ()>;
    /// The row with this id, if stored (expired rows may still be returned; Tollgate checks).
    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRow>>;
    /// Replaces the row whose id and version are `row.id` and `expected_version` by `row`;
    /// `false` when the stored version differs or the row is gone.
    fn replace<'a>(&'a self, row: TaskRow, expected_version: u64) -> StoreFuture<'a, bool>;
    /// Deletes rows that expired before `now_ms`; returns how many.
    fn purge_expired<'a>(&'a self, now_ms: u64) -> StoreFuture<'a, u64>;
    /// Whether the store can serve now, for the built-in server's readiness probe
    /// ([`Health`](crate::transport::Health)): a database reachable (and SQLite writable). The
    /// server calls it at most once per readiness interval, bounded by the probe timeout. The
    /// default answers at once: a store in this process's memory is as ready as the process.
    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// A bounded task store in this process's memory: for development, tests and single-process
/// servers that accept losing tasks on restart. Expired rows are purged as new ones arrive.
///
/// # Examples
///
/// ```
/// use tollgate::task::InMemoryTaskStore;
///
/// let store = InMemoryTaskStore::with_capacity(1_000);
/// assert_eq!(store.capacity(), 1_000);
/// assert!(store.is_empty());
/// ```
#[derive(Debug)]
pub struct InMemoryTaskStore {
    rows: Mutex<HashMap<String, TaskRow>>,
    capacity: usize,
}

impl InMemoryTaskStore {
    /// Default capacity: 10,000 tasks.
    pub const DEFAULT_CAPACITY: usize = 10_000;

    /// A store holding at most `capacity` tasks (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            rows: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// The most tasks it holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many tasks it holds now (expired ones included until purged): a gauge for
    /// monitoring.
    pub fn len(&self) -> usize {
        self.rows().len()
    }

    /// Whether it holds no task.
    pub fn is_empty(&self) -> bool {
        self.rows().is_empty()
    }

    pub(crate) fn rows(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRow>> {
        self.rows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY)
    }
}

impl TaskStore for InMemoryTaskStore {
    fn insert<'a>(&'a self, row: TaskRow) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut rows = self.rows();
            if rows.contains_key(&row.id) {
                return Err(TaskStoreError::new(TaskStoreErrorKind::Duplicate));
            }
            if rows.len() >= self.capacity {
                let now = now_ms();
                rows.retain(|_, r| r.expires_at_ms > now);
                if rows.len() >= self.capacity {
                    return Err(TaskStoreError::new(TaskStoreErrorKind::Full));
                }
            }
            rows.insert(row.id.clone(), row);
            Ok(())
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRow>> {
        Box::pin(async move { Ok(self.rows().get(id).cloned()) })
    }

    fn replace<'a>(&'a self, row: TaskRow, expected_version: u64) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut rows = self.rows();
            match rows.get_mut(&row.id) {
                Some(stored) if stored.version == expected_version => {
                    *stored = row;
                    Ok(true)
                }
                _ => Ok(false),
            }
        })
    }

    fn purge_expired<'a>(&'a self, now_ms: u64) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let mut rows = self.rows();
            let before = rows.len();
            rows.retain(|_, r| r.expires_at_ms > now_ms);
            Ok((before - rows.len()) as u64)
        })
    }
}

/// A shared store: several endpoints (or servers in one process) can use the same one.
impl<T: TaskStore + ?Sized> TaskStore for Arc<T> {
    fn insert<'a>(&'a self, row: TaskRow) -> StoreFuture<'a, ()> {
        (**self).insert(row)
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRow>> {
        (**self).load(id)
    }

    fn replace<'a>(&'a self, row: TaskRow, expected_version: u64) -> StoreFuture<'a, bool> {
        (**self).replace(row, expected_version)
    }

    fn purge_expired<'a>(&'a self, now_ms: u64) -> StoreFuture<'a, u64> {
        (**self).purge_expired(now_ms)
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        (**self).ping()
    }
}
