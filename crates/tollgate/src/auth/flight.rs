//! Introspection calls in flight and refused tokens remembered: one call per token at a time
//! however many requests carry it (a single flight, keyed by the token's SHA-256 as the token
//! cache is; the token itself stays only with the call's own task, for as long as the call
//! needs it), run as a task of its own so that requests going away neither cancel it nor start
//! another, at most [`MAX_INTROSPECTION_FLIGHTS`] under way at once; and the tokens the
//! authorization server refused, kept for a short while (the refusal cache, at most
//! [`MAX_REFUSED_TOKENS`]) so that a refused token is not asked about again on every request.
//!
//! Knows nothing of how a token is checked: the flight's work is handed to it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::auth::Refused;
use crate::auth::cache::TokenKey;
use crate::facts::identity::AdmissionIdentity;

/// The most refused tokens remembered (by digest) at once.
pub const MAX_REFUSED_TOKENS: usize = 10_000;
/// The most distinct tokens being introspected at once; a request with yet another is answered
/// 503, as when the authorization server cannot be reached.
pub const MAX_INTROSPECTION_FLIGHTS: usize = 1_024;

/// What a flight ends with: the identity a token was admitted as, or why it was not.
pub(crate) type Outcome = Result<AdmissionIdentity, Refused>;

/// Flights under way and refusals remembered.
pub(crate) struct Flights {
    refuse_for: Duration,
    under_way: Mutex<HashMap<TokenKey, watch::Receiver<Option<Outcome>>>>,
    refused: Mutex<HashMap<TokenKey, Instant>>,
}

/// Each update is one insert or removal: a poisoned lock is still consistent.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Flights {
    /// Flights whose refusals are remembered for `refuse_for` (zero: not at all).
    pub(crate) fn new(refuse_for: Duration) -> Arc<Self> {
        Arc::new(Self {
            refuse_for,
            under_way: Mutex::new(HashMap::new()),
            refused: Mutex::new(HashMap::new()),
        })
    }

    /// Whether the token was refused less than the refusal cache time ago.
    pub(crate) fn refused(&self, key: &TokenKey) -> bool {
        let mut refused = lock(&self.refused);
        match refused.get(key) {
            Some(until) if Instant::now() < *until => true,
            Some(_) => {
                refused.remove(key);
                false
            }
            None => false,
        }
    }

    /// Remembers a refusal. When the cache is full, expired entries are dropped first; when
    /// none are, the refusal is not remembered (the call cap still bounds what it costs).
    fn remember_refused(&self, key: TokenKey) {
        if self.refuse_for.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut refused = lock(&self.refused);
        if refused.len() >= MAX_REFUSED_TOKENS && !refused.contains_key(&key) {
            refused.retain(|_, until| now < *until);
            if refused.len() >= MAX_REFUSED_TOKENS {
                return;
            }
        }
        refused.insert(key, now + self.refuse_for);
    }

    /// The outcome of the flight for `key`: joined if one is under way, else started with
    /// `work` as a task of its own. A request that goes away stops waiting; the flight goes
    /// on, and those still waiting (or arriving) get its outcome. Past
    /// [`MAX_INTROSPECTION_FLIGHTS`] flights, `Unavailable` at once; a flight whose task is gone
    /// before it settles (the runtime shutting down) is `Unavailable` too.
    pub(crate) async fn join<F>(
        self: &Arc<Self>,
        key: TokenKey,
        work: impl FnOnce() -> F,
    ) -> Outcome
    where
        F: Future<Output = Outcome> + Send + 'static,
    {
        let mut settled = {
            let mut under_way = lock(&self.under_way);
            match under_way.get(&key) {
                Some(flight) => flight.clone(),
                None if under_way.len() >= MAX_INTROSPECTION_FLIGHTS => {
                    return Err(Refused::Unavailable);
                }
                None => {
                    let (done, settled) = watch::channel(None);
                    under_way.insert(key, settled.clone());
                    let landing = Landing {
                        flights: Arc::clone(self),
                        key,
                        done,
                    };
                    let work = work();
                    tokio::spawn(async move { landing.land(work.await) });
                    settled
                }
            }
        };
        let outcome = settled
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|outcome| outcome.clone());
        outcome.unwrap_or(Err(Refused::Unavailable))
    }

    #[cfg(test)]
    fn under_way(&self) -> usize {
        lock(&self.under_way).len()
    }

    #[cfg(test)]
    fn remembered(&self) -> usize {
        lock(&self.refused).len()
    }
}

/// A flight's end: its refusal remembered, its outcome told to every waiter, and only then its
/// entry removed, so a request arriving meanwhile finds the outcome or the refusal, never
/// neither. Dropped without an outcome (the task gone), waiters see the flight closed.
struct Landing {
    flights: Arc<Flights>,
    key: TokenKey,
    done: watch::Sender<Option<Outcome>>,
}

impl Landing {
    fn land(self, outcome: Outcome) {
        if matches!(outcome, Err(Refused::Invalid)) {
            self.flights.remember_refused(self.key);
        }
        self.done.send_replace(Some(outcome));
    }
}

impl Drop for Landing {
    fn drop(&mut self) {
        lock(&self.flights.under_way).remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::sync::Semaphore;

    fn key(n: usize) -> TokenKey {
        crate::auth::cache::TokenCache::key(&n.to_string())
    }

    /// Work that counts its calls and ends with `outcome` once the gate lets it.
    fn work(
        calls: &Arc<AtomicUsize>,
        gate: &Arc<Semaphore>,
        outcome: Outcome,
    ) -> impl FnOnce() -> std::pin::Pin<Box<dyn Future<Output = Outcome> + Send>> + use<> {
        let (calls, gate) = (calls.clone(), gate.clone());
        move || {
            calls.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move {
                let _ = gate.acquire().await.map(|p| p.forget());
                outcome
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn requests_with_one_token_share_one_call() {
        let flights = Flights::new(Duration::from_secs(30));
        let calls = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(0));
        let who = AdmissionIdentity::principal("p");
        let mut waiting = tokio::task::JoinSet::new();
        for _ in 0..50 {
            let (flights, job) = (flights.clone(), work(&calls, &gate, Ok(who.clone())));
            waiting.spawn(async move { flights.join(key(1), job).await });
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!((calls.load(Ordering::SeqCst), flights.under_way()), (1, 1));
        gate.add_permits(1);
        while let Some(outcome) = waiting.join_next().await {
            assert_eq!(outcome.unwrap(), Ok(who.clone()));
        }
        assert_eq!((calls.load(Ordering::SeqCst), flights.under_way()), (1, 0));
        // Settled: the next request with it makes a call of its own (an admitted token is the
        // token cache's to reuse, not this one's).
        gate.add_permits(1);
        let again = flights.join(key(1), work(&calls, &gate, Ok(who))).await;
        assert!(again.is_ok());
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_flight_abandoned_by_its_request_goes_on_for_the_others() {
        let flights = Flights::new(Duration::from_secs(30));
        let calls = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(0));
        let first = flights.join(key(1), work(&calls, &gate, Err(Refused::Invalid)));
        assert!(
            tokio::time::timeout(Duration::from_millis(10), first)
                .await
                .is_err()
        );
        let (second, job) = (
            flights.clone(),
            work(&calls, &gate, Ok(AdmissionIdentity::anonymous())),
        );
        let second = tokio::spawn(async move { second.join(key(1), job).await });
        tokio::time::sleep(Duration::from_millis(1)).await;
        gate.add_permits(1);
        assert_eq!(second.await.unwrap(), Err(Refused::Invalid));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn refusals_are_remembered_for_their_time_and_no_longer() {
        let flights = Flights::new(Duration::from_secs(30));
        let calls = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(100));
        let refused = flights
            .join(key(1), work(&calls, &gate, Err(Refused::Invalid)))
            .await;
        assert_eq!(refused, Err(Refused::Invalid));
        // At the bound's last moment still refused; at the bound, asked again.
        tokio::time::advance(Duration::from_secs(30) - Duration::from_millis(1)).await;
        assert!(flights.refused(&key(1)));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(!flights.refused(&key(1)));
        // An unreachable server is not the token's fault: not remembered.
        let unavailable = flights
            .join(key(2), work(&calls, &gate, Err(Refused::Unavailable)))
            .await;
        assert_eq!(unavailable, Err(Refused::Unavailable));
        assert!(!flights.refused(&key(2)));
        // A zero time remembers nothing.
        let none = Flights::new(Duration::ZERO);
        let _ = none
            .join(key(3), work(&calls, &gate, Err(Refused::Invalid)))
            .await;
        assert!(!none.refused(&key(3)));
    }

    #[tokio::test(start_paused = true)]
    async fn the_refusal_cache_is_bounded() {
        let flights = Flights::new(Duration::from_secs(30));
        for n in 0..MAX_REFUSED_TOKENS {
            flights.remember_refused(key(n));
        }
        assert_eq!(flights.remembered(), MAX_REFUSED_TOKENS);
        // One past: not remembered while every entry is live.
        flights.remember_refused(key(MAX_REFUSED_TOKENS));
        assert_eq!(flights.remembered(), MAX_REFUSED_TOKENS);
        assert!(!flights.refused(&key(MAX_REFUSED_TOKENS)));
        assert!(flights.refused(&key(0)));
        // Once they expire, room is made.
        tokio::time::advance(Duration::from_secs(30)).await;
        flights.remember_refused(key(MAX_REFUSED_TOKENS));
        assert!(flights.refused(&key(MAX_REFUSED_TOKENS)));
        assert_eq!(flights.remembered(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn flights_are_bounded() {
        let flights = Flights::new(Duration::from_secs(30));
        let calls = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(Semaphore::new(0));
        let mut waiting = tokio::task::JoinSet::new();
        for n in 0..MAX_INTROSPECTION_FLIGHTS {
            let (flights, job) = (flights.clone(), work(&calls, &gate, Err(Refused::Invalid)));
            waiting.spawn(async move { flights.join(key(n), job).await });
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(flights.under_way(), MAX_INTROSPECTION_FLIGHTS);
        // One past: refused at once, no call made; a request joining one under way is not.
        let past = flights
            .join(
                key(MAX_INTROSPECTION_FLIGHTS),
                work(&calls, &gate, Ok(AdmissionIdentity::anonymous())),
            )
            .await;
        assert_eq!(past, Err(Refused::Unavailable));
        assert_eq!(calls.load(Ordering::SeqCst), MAX_INTROSPECTION_FLIGHTS);
        let (joiner, job) = (
            flights.clone(),
            work(&calls, &gate, Ok(AdmissionIdentity::anonymous())),
        );
        waiting.spawn(async move { joiner.join(key(0), job).await });
        gate.add_permits(MAX_INTROSPECTION_FLIGHTS);
        while let Some(outcome) = waiting.join_next().await {
            assert_eq!(outcome.unwrap(), Err(Refused::Invalid));
        }
        assert_eq!(calls.load(Ordering::SeqCst), MAX_INTROSPECTION_FLIGHTS);
        assert_eq!(flights.under_way(), 0);
    }
}
