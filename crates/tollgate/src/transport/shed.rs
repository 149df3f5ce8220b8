//! The built-in server's connection places, shared so that nobody can hold them all: at most so
//! many open connections per peer (an IPv4 address, or an IPv6 /64), and, when every place is
//! taken and a new connection waits for one, the slowest connection that is only waiting on its
//! client (a request head or body half-read, or nothing sent yet) is shed to make room.
//!
//! Each connection has a [`Seat`]: its connection's wrapper (`idle/`) writes what the connection
//! is doing into it with one relaxed store when that changes (waiting since when, with how many
//! bytes of a head or body; or busy: a request served, an answer or an event stream going out),
//! and is woken to close when it is shed. A busy connection is never shed: long-lived event
//! streams and listens are not idle. Only the table's changes (a connection opened, closed or
//! shed) take its lock.
//!
//! Knows addresses, wakers and the clock; nothing of HTTP or MCP.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Waker;

use tokio::time::Instant;

use crate::policy::rules::peer_block;

/// A seat's word: busy (the top bit), or waiting since a time (milliseconds after the table was
/// made, in the bits above [`BYTES_BITS`]) with how many bytes it has brought (below), and
/// whether a request is half-read (the next bit: a head begun, or a body still to read).
const BUSY: u64 = 1 << 63;
const HALF_READ: u64 = 1 << 62;
const BYTES_BITS: u32 = 24;
const BYTES_MAX: u64 = (1 << BYTES_BITS) - 1;
const SINCE_MAX: u64 = (HALF_READ >> BYTES_BITS) - 1;

/// The server's connection places: the connections open now, and how many each peer holds.
#[derive(Clone)]
pub(crate) struct Seats(Arc<Inner>);

struct Inner {
    per_peer: usize,
    made: Instant,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    seats: Vec<Option<Arc<Shared>>>,
    free: Vec<usize>,
    peers: HashMap<IpAddr, usize>,
}

/// What a connection shows, and how it is told to close.
struct Shared {
    word: AtomicU64,
    shed: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

/// A waiting connection's rank for shedding: whether it has nothing half-read, its rate, and
/// how much less than the longest it has waited.
type Rank = (bool, u64, u64);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every change under these locks leaves them consistent (a push, a pop, a count).
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Seats {
    /// Places for connections, at most `per_peer` of them (at least 1) from one peer.
    pub(crate) fn new(per_peer: usize) -> Self {
        Self(Arc::new(Inner {
            per_peer: per_peer.max(1),
            made: Instant::now(),
            table: Mutex::default(),
        }))
    }

    /// A seat for a connection from `peer` (counted against its peer's cap unless `uncounted`,
    /// as a trusted proxy's connections are), or `None` when the peer holds its cap already.
    pub(crate) fn take(&self, peer: IpAddr, uncounted: bool) -> Option<Seat> {
        // Waiting from now, with nothing brought yet.
        let since = self.0.millis(Instant::now()) << BYTES_BITS;
        let shared = Arc::new(Shared {
            word: AtomicU64::new(since),
            shed: AtomicBool::new(false),
            waker: Mutex::new(None),
        });
        let block = (!uncounted).then(|| peer_block(peer));
        let mut table = lock(&self.0.table);
        if let Some(block) = block {
            let held = table.peers.entry(block).or_insert(0);
            if *held >= self.0.per_peer {
                return None;
            }
            *held += 1;
        }
        let slot = match table.free.pop() {
            Some(slot) => slot,
            None => {
                table.seats.push(None);
                table.seats.len() - 1
            }
        };
        if let Some(place) = table.seats.get_mut(slot) {
            *place = Some(Arc::clone(&shared));
        }
        drop(table);
        Some(Seat {
            shared,
            seats: Arc::clone(&self.0),
            slot,
            block,
        })
    }

    /// Sheds the slowest connection that is waiting on its client: first those with a request
    /// half-read (a head or body begun), the lowest rate of bytes brought since it began first;
    /// then those that sent nothing, the longest waiting first. Returns whether one was shed
    /// (none is when every connection is busy).
    pub(crate) fn shed_slowest(&self) -> bool {
        let now = self.0.millis(Instant::now());
        let victim = {
            let table = lock(&self.0.table);
            // The least rank is shed.
            let mut slowest: Option<(Rank, &Arc<Shared>)> = None;
            for shared in table.seats.iter().flatten() {
                let word = shared.word.load(Ordering::Relaxed);
                if word & BUSY != 0 || shared.shed.load(Ordering::Relaxed) {
                    continue;
                }
                let bytes = word & BYTES_MAX;
                let waited = now.saturating_sub((word & !HALF_READ) >> BYTES_BITS).max(1);
                // Bytes a second, scaled so that rates below one byte a second still differ;
                // the longest waiting first among equals.
                let rank = (
                    word & HALF_READ == 0,
                    bytes.saturating_mul(1_000_000) / waited,
                    u64::MAX - waited,
                );
                if slowest.is_none_or(|(least, _)| rank < least) {
                    slowest = Some((rank, shared));
                }
            }
            slowest.map(|(_, shared)| {
                shared.shed.store(true, Ordering::Release);
                Arc::clone(shared)
            })
        };
        let Some(victim) = victim else {
            return false;
        };
        tracing::info!(target: crate::wire::log::CONNECTION, "connection shed: slowest waiting");
        let waker = lock(&victim.waker).clone();
        if let Some(waker) = waker {
            waker.wake();
        }
        true
    }

    /// How many connections are open (for tests).
    #[cfg(test)]
    fn open(&self) -> usize {
        lock(&self.0.table).seats.iter().flatten().count()
    }
}

impl Inner {
    fn millis(&self, at: Instant) -> u64 {
        // Whole seconds and milliseconds apart (no 128-bit arithmetic on the request path).
        let since = at.saturating_duration_since(self.made);
        let millis = since
            .as_secs()
            .saturating_mul(1000)
            .saturating_add(u64::from(since.subsec_millis()));
        millis.min(SINCE_MAX)
    }
}

/// One connection's place: what it shows, given back when dropped.
pub(crate) struct Seat {
    shared: Arc<Shared>,
    seats: Arc<Inner>,
    slot: usize,
    block: Option<IpAddr>,
}

impl Seat {
    /// The connection waits on its client for a request head since `since`, and has brought
    /// `bytes` of one since (none: it sent nothing; some: a head is half-read).
    pub(crate) fn waiting(&self, since: Instant, bytes: u64) {
        let half = if bytes > 0 { HALF_READ } else { 0 };
        self.store(since, bytes, half);
    }

    /// The connection waits on its client for a request body since `since` (its head's
    /// arrival), and has brought `bytes` of it since: a request half-read.
    pub(crate) fn reading(&self, since: Instant, bytes: u64) {
        self.store(since, bytes, HALF_READ);
    }

    fn store(&self, since: Instant, bytes: u64, half: u64) {
        let word = (self.seats.millis(since) << BYTES_BITS) | bytes.min(BYTES_MAX) | half;
        self.shared.word.store(word, Ordering::Relaxed);
    }

    /// The connection serves a request or sends an answer: never shed.
    pub(crate) fn busy(&self) {
        self.shared.word.store(BUSY, Ordering::Relaxed);
    }

    /// Whether the connection was shed (it must close).
    pub(crate) fn is_shed(&self) -> bool {
        self.shared.shed.load(Ordering::Acquire)
    }

    /// The waker to wake when the connection is shed (called when the task's waker changes).
    pub(crate) fn register(&self, waker: &Waker) {
        let replaced = lock(&self.shared.waker).replace(waker.clone());
        drop(replaced);
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut table = lock(&self.seats.table);
        if let Some(place) = table.seats.get_mut(self.slot)
            && place.take().is_some()
        {
            table.free.push(self.slot);
        }
        if let Some(block) = self.block
            && let Some(held) = table.peers.get_mut(&block)
        {
            *held = held.saturating_sub(1);
            if *held == 0 {
                table.peers.remove(&block);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::time::Duration;

    use super::*;

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));

    #[test]
    fn a_peer_holds_its_cap_and_one_more_is_refused_until_one_closes() {
        let seats = Seats::new(3);
        let held: Vec<_> = (0..3).map(|_| seats.take(A, false).unwrap()).collect();
        assert!(seats.take(A, false).is_none(), "one past the cap");
        assert!(seats.take(B, false).is_some(), "another peer is not");
        assert!(seats.take(A, true).is_some(), "nor an uncounted connection");
        drop(held);
        assert_eq!(seats.open(), 0, "every seat given back");
        assert!(seats.take(A, false).is_some());
    }

    #[test]
    fn an_ipv6_peer_is_counted_by_its_64() {
        let seats = Seats::new(1);
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let same: IpAddr = "2001:db8:1:2::ffff".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        let _held = seats.take(a, false).unwrap();
        assert!(seats.take(same, false).is_none());
        assert!(seats.take(other, false).is_some());
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(peer_block(mapped), A);
    }

    #[tokio::test(start_paused = true)]
    async fn the_slowest_waiting_connection_is_shed_and_a_busy_one_never() {
        let seats = Seats::new(10);
        let opened = Instant::now();
        let busy = seats.take(A, false).unwrap();
        busy.busy();
        let fast = seats.take(A, false).unwrap();
        let slow = seats.take(A, false).unwrap();
        tokio::time::advance(Duration::from_secs(10)).await;
        fast.waiting(opened, 10_000);
        slow.waiting(opened, 10);
        let silent = seats.take(B, false).unwrap();
        silent.waiting(opened, 0);
        // Half-read ones first, the slowest first; then one that sent nothing.
        assert!(seats.shed_slowest());
        assert!(slow.is_shed() && !fast.is_shed() && !busy.is_shed());
        assert!(seats.shed_slowest());
        assert!(fast.is_shed() && !silent.is_shed());
        assert!(seats.shed_slowest());
        assert!(silent.is_shed());
        assert!(!seats.shed_slowest(), "a busy connection is never shed");
        assert!(!busy.is_shed());
    }

    #[tokio::test(start_paused = true)]
    async fn among_equals_the_longest_waiting_is_shed_and_its_task_woken() {
        let seats = Seats::new(10);
        let old = seats.take(A, false).unwrap();
        tokio::time::advance(Duration::from_secs(5)).await;
        let young = seats.take(B, false).unwrap();
        young.waiting(Instant::now(), 0);
        let woken = Arc::new(AtomicBool::new(false));
        struct Flag(Arc<AtomicBool>);
        impl std::task::Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        old.register(&Waker::from(Arc::new(Flag(Arc::clone(&woken)))));
        assert!(seats.shed_slowest());
        assert!(old.is_shed() && !young.is_shed());
        assert!(woken.load(Ordering::SeqCst));
    }
}
