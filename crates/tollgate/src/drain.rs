//! Graceful shutdown of the server's HTTP connections: a signal each connection reads with one
//! atomic load per poll, and each connection's waker, registered once (again only if its task's
//! waker changes), woken when the server stops. When the signal is seen, hyper is told to finish
//! the request in flight and close instead of waiting for another (an idle connection closes at
//! once).
//!
//! Knows hyper's graceful connections; nothing of MCP, requests or responses.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use hyper_util::server::graceful::GracefulConnection;

/// The server's drain signal, shared by its connections.
#[derive(Clone, Default)]
pub(crate) struct Drain(Arc<Inner>);

#[derive(Default)]
struct Inner {
    stopping: AtomicBool,
    wakers: Mutex<Wakers>,
}

/// The wakers of the connections not yet stopping, in numbered slots.
#[derive(Default)]
struct Wakers {
    slots: Vec<Option<Waker>>,
    free: Vec<usize>,
}

impl Wakers {
    /// Keeps `waker` in `slot` (or a new one), returning the slot.
    fn put(&mut self, slot: Option<usize>, waker: Waker) -> usize {
        if let Some(s) = slot
            && let Some(kept) = self.slots.get_mut(s)
        {
            *kept = Some(waker);
            return s;
        }
        match self.free.pop() {
            Some(s) => {
                if let Some(kept) = self.slots.get_mut(s) {
                    *kept = Some(waker);
                }
                s
            }
            None => {
                self.slots.push(Some(waker));
                self.slots.len() - 1
            }
        }
    }

    fn remove(&mut self, slot: usize) {
        if let Some(kept) = self.slots.get_mut(slot)
            && kept.take().is_some()
        {
            self.free.push(slot);
        }
    }
}

fn lock(wakers: &Mutex<Wakers>) -> MutexGuard<'_, Wakers> {
    // A waker's `wake` runs outside the lock, so nothing can panic while it is held; a poisoned
    // lock still holds consistent slots.
    wakers.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Drain {
    /// `connection`, stopped gracefully when [`stop`](Self::stop) is called.
    pub(crate) fn watch<C: GracefulConnection>(&self, connection: C) -> Watched<C> {
        Watched {
            connection,
            drain: Arc::clone(&self.0),
            slot: None,
            waker: None,
            draining: false,
        }
    }

    /// Tells every connection, now and later, to finish its request in flight and close.
    pub(crate) fn stop(&self) {
        self.0.stopping.store(true, Ordering::Release);
        let wakers = std::mem::take(&mut *lock(&self.0.wakers));
        for waker in wakers.slots.into_iter().flatten() {
            waker.wake();
        }
    }
}

pin_project_lite::pin_project! {
    /// A connection under the drain signal.
    pub(crate) struct Watched<C> {
        #[pin]
        connection: C,
        drain: Arc<Inner>,
        slot: Option<usize>,
        // The waker registered in `slot`, to see whether the task's waker changed.
        waker: Option<Waker>,
        draining: bool,
    }

    impl<C> PinnedDrop for Watched<C> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let Some(slot) = this.slot.take() {
                lock(&this.drain.wakers).remove(slot);
            }
        }
    }
}

impl<C: GracefulConnection> Future for Watched<C> {
    type Output = C::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<C::Output> {
        let mut this = self.project();
        if !*this.draining {
            let mut stopping = this.drain.stopping.load(Ordering::Acquire);
            if !stopping && !this.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                let waker = cx.waker().clone();
                *this.slot = Some(lock(&this.drain.wakers).put(*this.slot, waker.clone()));
                *this.waker = Some(waker);
                // `stop` may have taken the wakers between the load and the registration.
                stopping = this.drain.stopping.load(Ordering::Acquire);
            }
            if stopping {
                *this.draining = true;
                this.connection.as_mut().graceful_shutdown();
            }
        }
        this.connection.poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_a_removed_slot_is_not_woken() {
        let mut wakers = Wakers::default();
        let a = wakers.put(None, Waker::noop().clone());
        let b = wakers.put(None, Waker::noop().clone());
        assert_ne!(a, b);
        // Put again in its own slot: the same slot.
        assert_eq!(wakers.put(Some(a), Waker::noop().clone()), a);
        wakers.remove(a);
        wakers.remove(a);
        assert_eq!(wakers.free, [a], "a slot is freed once");
        assert_eq!(wakers.put(None, Waker::noop().clone()), a, "and reused");
        // A slot from before `stop` took the wakers: nothing to remove, nothing breaks.
        let mut taken = std::mem::take(&mut wakers);
        wakers.remove(b);
        assert!(wakers.slots.is_empty() && wakers.free.is_empty());
        taken.remove(b);
        assert_eq!(taken.slots.iter().flatten().count(), 1);
    }
}
