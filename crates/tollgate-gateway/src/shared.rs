//! Two small things every room of the gateway uses: the `tracing` target of upstream events and
//! the lock that tolerates poisoning. It knows nothing else, so any module may depend on it.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// The target of the gateway's events: an upstream imported, a tool left out, an upstream's
/// standard error (`info`, with the upstream's name), a catalog change applied or refused.
pub(crate) const UPSTREAM: &str = "tollgate_gateway::upstream";

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update is whole (a name inserted or removed, a list replaced): a poisoned lock still
    // holds a consistent value.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
