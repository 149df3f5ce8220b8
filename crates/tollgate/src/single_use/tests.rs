//! The replay stores' contract and bounds, and what a single-use endpoint answers for each
//! outcome of a consume.

use std::sync::Arc;

use super::memory::{DEFAULT_REPLAY_STORE_CAPACITY, InMemoryReplayStore};
use super::*;

const FAR: u64 = u64::MAX / 4;

#[tokio::test]
async fn the_memory_store_keeps_the_contract() {
    assert_eq!(
        check_replay_store_contract(&InMemoryReplayStore::new(), "m-").await,
        Ok(())
    );
}

#[tokio::test]
async fn the_memory_store_refuses_one_past_its_bound_and_forgets_nothing_unexpired() {
    let store = InMemoryReplayStore::with_capacity(3);
    for n in ["a", "b", "c"] {
        assert_eq!(store.consume(n, FAR).await, Ok(true), "{n}");
    }
    // At the bound: full, and every nonce still recorded.
    assert_eq!(store.len(), 3);
    assert_eq!(
        store.consume("d", FAR).await.map_err(|e| e.kind()),
        Err(ReplayStoreErrorKind::Full)
    );
    for n in ["a", "b", "c"] {
        assert_eq!(store.consume(n, FAR).await, Ok(false), "{n}");
    }
    assert_eq!(store.len(), 3);
}

#[tokio::test]
async fn the_memory_store_makes_room_from_expired_nonces_only() {
    let store = InMemoryReplayStore::with_capacity(2);
    assert_eq!(store.consume("old", 1).await, Ok(true));
    assert_eq!(store.consume("live", FAR).await, Ok(true));
    // Full; `old` expired long ago, so it goes and `new` fits.
    assert_eq!(store.consume("new", FAR).await, Ok(true));
    assert_eq!(store.len(), 2);
    assert_eq!(store.consume("live", FAR).await, Ok(false));
    assert_eq!(
        store.consume("next", FAR).await.map_err(|e| e.kind()),
        Err(ReplayStoreErrorKind::Full)
    );
    assert_eq!(InMemoryReplayStore::with_capacity(0).capacity(), 1);
    assert_eq!(
        InMemoryReplayStore::new().capacity(),
        DEFAULT_REPLAY_STORE_CAPACITY
    );
}

/// A store that always fails, or records nothing and says so.
struct Fails(ReplayStoreErrorKind);

impl ReplayStore for Fails {
    fn consume<'a>(&'a self, _: &'a str, _: u64) -> ReplayFuture<'a, bool> {
        let kind = self.0;
        Box::pin(async move { Err(ReplayStoreError::new(kind)) })
    }
    fn purge_expired<'a>(&'a self, _: u64) -> ReplayFuture<'a, u64> {
        Box::pin(async { Ok(0) })
    }
}

fn ticket(nonce: Option<&str>) -> Ticket {
    Ticket {
        nonce: nonce.map(str::to_owned),
        expires_at_secs: now_ms() / 1000 + 900,
    }
}

#[tokio::test]
async fn a_consume_answers_first_use_replay_and_failure_apart() {
    let memory = Arc::new(InMemoryReplayStore::with_capacity(1));
    let single = SingleUse::new(memory.clone());
    assert_eq!(single.consume(&ticket(Some("n1"))).await, Ok(()));
    // The same state again, then one the full store cannot record: the fixed error both times.
    assert_eq!(
        single.consume(&ticket(Some("n1"))).await,
        Err(Fault::InvalidRequestState)
    );
    assert_eq!(
        single.consume(&ticket(Some("n2"))).await,
        Err(Fault::InvalidRequestState)
    );
    // A state sealed without a nonce cannot be used once: refused.
    assert_eq!(
        single.consume(&ticket(None)).await,
        Err(Fault::InvalidRequestState)
    );
    // The nonce is kept past the state's expiry by the clock margin.
    let kept = memory.lock().by_nonce.get("n1").copied().unwrap_or(0);
    let expiry = ticket(None).expires_at_secs;
    assert_eq!(kept, (expiry + 1) * 1000 + 60_000);
    let down = SingleUse::new(Arc::new(Fails(ReplayStoreErrorKind::Backend)));
    assert_eq!(down.consume(&ticket(Some("n"))).await, Err(Fault::Busy));
}

#[tokio::test(start_paused = true)]
async fn a_store_that_does_not_answer_is_busy_after_ten_seconds() {
    struct Silent;
    impl ReplayStore for Silent {
        fn consume<'a>(&'a self, _: &'a str, _: u64) -> ReplayFuture<'a, bool> {
            Box::pin(std::future::pending())
        }
        fn purge_expired<'a>(&'a self, _: u64) -> ReplayFuture<'a, u64> {
            Box::pin(std::future::pending())
        }
    }
    let single = SingleUse::new(Arc::new(Silent));
    let started = tokio::time::Instant::now();
    assert_eq!(single.consume(&ticket(Some("n"))).await, Err(Fault::Busy));
    assert_eq!(started.elapsed(), STORE_CALL_BOUND);
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn the_sqlite_store_keeps_the_contract() {
    let store = sql::SqliteReplayStore::open_in_memory()
        .await
        .unwrap_or_else(|_| unreachable!("in-memory SQLite opens"));
    assert_eq!(check_replay_store_contract(&store, "s-").await, Ok(()));
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn the_sqlite_store_keeps_uses_across_a_reopen() {
    let dir = std::env::temp_dir().join(format!("tollgate-replay-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("uses.sqlite3");
    let _ = std::fs::remove_file(&path);
    {
        let store = sql::SqliteReplayStore::open(&path)
            .await
            .unwrap_or_else(|_| unreachable!("opens"));
        assert_eq!(store.consume("kept", FAR).await, Ok(true));
    }
    let reopened = sql::SqliteReplayStore::open(&path)
        .await
        .unwrap_or_else(|_| unreachable!("reopens"));
    assert_eq!(reopened.consume("kept", FAR).await, Ok(false));
    let _ = std::fs::remove_dir_all(&dir);
}
