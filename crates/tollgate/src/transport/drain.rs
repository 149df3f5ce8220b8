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

/// The wakers of the connections registered before the server stopped, in numbered slots;
/// once stopped (`stopped`), it takes no more and frees nothing.
#[derive(Default)]
struct Wakers {
    slots: Vec<Option<Waker>>,
    free: Vec<usize>,
    stopped: bool,
}

impl Wakers {
    /// Keeps `waker` in `slot` (or a free or new one) and returns that slot, with the waker it
    /// replaces for the caller to drop after the lock; once stopped, keeps nothing (`None`, and
    /// `waker` handed back).
    fn put(&mut self, slot: Option<usize>, waker: Waker) -> (Option<usize>, Option<Waker>) {
        if self.stopped {
            return (None, Some(waker));
        }
        // Its own slot, else a freed one (freed slots are always in the table).
        if let Some(s) = slot.or_else(|| self.free.pop())
            && let Some(kept) = self.slots.get_mut(s)
        {
            return (Some(s), kept.replace(waker));
        }
        self.slots.push(Some(waker));
        (Some(self.slots.len() - 1), None)
    }

    /// Frees `slot`, returning its waker for the caller to drop after the lock.
    fn remove(&mut self, slot: usize) -> Option<Waker> {
        if self.stopped {
            return None;
        }
        let taken = self.slots.get_mut(slot).and_then(Option::take);
        if taken.is_some() {
            self.free.push(slot);
        }
        taken
    }
}

fn lock(wakers: &Mutex<Wakers>) -> MutexGuard<'_, Wakers> {
    // Wakers are cloned, dropped and woken outside the lock; a lock poisoned by a failed
    // allocation under it still holds consistent slots.
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
        let slots = {
            let mut wakers = lock(&self.0.wakers);
            wakers.stopped = true;
            wakers.free.clear();
            std::mem::take(&mut wakers.slots)
        };
        for waker in slots.into_iter().flatten() {
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
                let freed = lock(&this.drain.wakers).remove(slot);
                drop(freed);
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
                let kept = waker.clone();
                let (slot, replaced) = lock(&this.drain.wakers).put(*this.slot, kept);
                drop(replaced);
                *this.slot = slot;
                *this.waker = Some(waker);
                // `stop` may have taken the wakers between the load and the registration (then
                // nothing was kept, and the flag is set).
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

    fn put(wakers: &mut Wakers, slot: Option<usize>) -> Option<usize> {
        wakers.put(slot, Waker::noop().clone()).0
    }

    #[test]
    fn slots_are_reused_and_freed_once() {
        let mut wakers = Wakers::default();
        let a = put(&mut wakers, None);
        let b = put(&mut wakers, None);
        assert!(a.is_some() && b.is_some() && a != b);
        // Put again in its own slot: the same slot, the old waker handed back.
        let (again, replaced) = wakers.put(a, Waker::noop().clone());
        assert_eq!(again, a);
        assert!(replaced.is_some());
        let a = a.unwrap_or_default();
        assert!(wakers.remove(a).is_some());
        assert!(wakers.remove(a).is_none());
        assert_eq!(wakers.free, [a], "a slot is freed once");
        assert_eq!(put(&mut wakers, None), Some(a), "and reused");
    }

    #[test]
    fn a_stopped_drain_keeps_and_frees_nothing() {
        let drain = Drain::default();
        let slot = put(&mut lock(&drain.0.wakers), None);
        drain.stop();
        let mut wakers = lock(&drain.0.wakers);
        assert!(wakers.slots.is_empty() && wakers.free.is_empty());
        // A registration that raced the stop, and the drop of one from before it.
        assert_eq!(put(&mut wakers, None), None);
        assert_eq!(put(&mut wakers, slot), None);
        assert!(wakers.remove(slot.unwrap_or_default()).is_none());
        assert!(wakers.slots.is_empty() && wakers.free.is_empty());
    }
}
