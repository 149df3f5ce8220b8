//! The session store contract, run against any [`SessionStore`]: the in-memory one in the unit
//! tests, PostgreSQL in `tests/stores/postgres_sessions.rs`. Owns nothing else.

use std::time::Duration;

use crate::session::SessionConfig;
use crate::session::store::{
    MAX_BROADCAST_BYTES, SessionAnswer, SessionEvent, SessionRow, SessionStore, SessionStoreError,
    SessionStoreErrorKind,
};

/// The session store contract, run against any store (the in-memory one here; PostgreSQL in
/// `tests/stores/postgres_sessions.rs`). `prefix` keeps the rows of one run apart from
/// another's; rows are made idle by waiting past a one-second idle timeout (with a wide margin,
/// so a slow database still passes).
#[doc(hidden)]
pub async fn check_session_store_contract(
    store: &dyn SessionStore,
    prefix: &str,
) -> Result<(), String> {
    let roomy = SessionConfig::new()
        .max_sessions(1_000_000)
        .max_sessions_per_principal(2);
    check_owners(store, prefix, &roomy).await?;
    check_principal_bound(store, prefix, &roomy).await?;
    check_idle(store, prefix, &roomy).await?;
    check_answers(store, prefix).await?;
    check_events(store, prefix, &roomy).await?;
    check_broadcast(store, prefix).await
}

/// A row of the contract's run: `id` after `prefix`, owned by `owner`.
fn row(prefix: &str, id: &str, owner: Option<&str>) -> SessionRow {
    SessionRow {
        id: format!("{prefix}{id}"),
        owner: owner.map(str::to_owned),
        data: format!(r#"{{"id":"{id}"}}"#),
        log_level: None,
    }
}

/// The owner part of the contract: a row is created once, and only its owner touches it, sets
/// its log level or ends it. Leaves alice's row `a` in the store.
async fn check_owners(
    store: &dyn SessionStore,
    prefix: &str,
    roomy: &SessionConfig,
) -> Result<(), String> {
    let fail = |what: &str| Err(format!("session store contract: {what}"));
    let hour = Duration::from_secs(3600);
    let a = row(prefix, "a", Some("alice"));
    if store.create(a.clone(), roomy).await.is_err() {
        return fail("create");
    }
    if store.create(a.clone(), roomy).await.map_err(|e| e.kind())
        != Err(SessionStoreErrorKind::Duplicate)
    {
        return fail("duplicate create");
    }
    if store.touch(&a.id, Some("alice"), hour).await != Ok(Some(a.clone())) {
        return fail("touch by the owner");
    }
    for other in [None, Some("bob"), Some("alice ")] {
        if store.touch(&a.id, other, hour).await != Ok(None) {
            return fail("touch by another owner");
        }
        if store.set_log_level(&a.id, other, "debug", hour).await != Ok(false) {
            return fail("log level set by another owner");
        }
        if store.end(&a.id, other).await != Ok(false) {
            return fail("end by another owner");
        }
    }
    if store
        .set_log_level(&a.id, Some("alice"), "debug", hour)
        .await
        != Ok(true)
    {
        return fail("log level");
    }
    let leveled = SessionRow {
        log_level: Some("debug".into()),
        ..a.clone()
    };
    if store.touch(&a.id, Some("alice"), hour).await != Ok(Some(leveled)) {
        return fail("touch after the log level");
    }
    if store
        .touch(&format!("{prefix}missing"), None, hour)
        .await
        .ok()
        .flatten()
        .is_some()
    {
        return fail("touch of a missing id");
    }
    Ok(())
}

/// The per-principal bound, at and past it (alice's row `a` counts); anonymous rows are not
/// bounded by it. Then `a` ends, once.
async fn check_principal_bound(
    store: &dyn SessionStore,
    prefix: &str,
    roomy: &SessionConfig,
) -> Result<(), String> {
    let fail = |what: &str| Err(format!("session store contract: {what}"));
    let hour = Duration::from_secs(3600);
    let row = |id: &str, owner: Option<&str>| row(prefix, id, owner);
    let a = row("a", Some("alice"));
    if store.create(row("a2", Some("alice")), roomy).await.is_err() {
        return fail("create up to the per-principal bound");
    }
    if store
        .create(row("a3", Some("alice")), roomy)
        .await
        .map_err(|e| e.kind())
        != Err(SessionStoreErrorKind::Full)
    {
        return fail("create past the per-principal bound");
    }
    for n in 0..3 {
        if store
            .create(row(&format!("anon{n}"), None), roomy)
            .await
            .is_err()
        {
            return fail("anonymous create");
        }
    }
    if store.end(&a.id, Some("alice")).await != Ok(true) {
        return fail("end");
    }
    if store.end(&a.id, Some("alice")).await != Ok(false) {
        return fail("end twice");
    }
    if store.touch(&a.id, Some("alice"), hour).await != Ok(None) {
        return fail("touch after end");
    }
    Ok(())
}

/// Idle rows: gone for an idle timeout they have outlived, kept by a sweep while busy.
async fn check_idle(
    store: &dyn SessionStore,
    prefix: &str,
    roomy: &SessionConfig,
) -> Result<(), String> {
    let fail = |what: &str| Err(format!("session store contract: {what}"));
    let hour = Duration::from_secs(3600);
    let idle = row(prefix, "idle", None);
    let busy = row(prefix, "busy", None);
    for r in [&idle, &busy] {
        if store.create(r.clone(), roomy).await.is_err() {
            return fail("create before idling");
        }
    }
    let short = Duration::from_secs(1);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let live = store
        .sweep(
            std::slice::from_ref(&busy.id),
            &[idle.id.clone(), busy.id.clone()],
            hour,
        )
        .await;
    if live.map(|mut l| {
        l.sort();
        l
    }) != Ok(vec![busy.id.clone(), idle.id.clone()])
    {
        return fail("sweep of live rows");
    }
    if store.touch(&idle.id, None, short).await != Ok(None) {
        return fail("touch of an idle row");
    }
    if store
        .touch(&busy.id, None, short)
        .await
        .ok()
        .flatten()
        .is_none()
    {
        return fail("a busy row kept live by the sweep");
    }
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    if store
        .sweep(&[], std::slice::from_ref(&idle.id), short)
        .await
        != Ok(Vec::new())
    {
        return fail("sweep of an idle row");
    }
    if store.end(&idle.id, None).await != Ok(false) {
        return fail("end of a swept row");
    }
    Ok(())
}

/// The broadcast part of the contract: a message reaches a subscriber, at the bound and not
/// past it.
async fn check_broadcast(store: &dyn SessionStore, prefix: &str) -> Result<(), String> {
    let fail = |what: &str| Err(format!("session store contract: {what}"));
    let Some(mut heard) = store.subscribe() else {
        return fail("subscribe");
    };
    let longest = format!("{prefix}{}", "x".repeat(MAX_BROADCAST_BYTES - prefix.len()));
    if store.broadcast(&format!("{longest}x")).await.is_ok() {
        return fail("broadcast past the bound");
    }
    // A PostgreSQL store starts listening at its first subscription, and a message sent before
    // it listens is not heard: sent again every half second until heard, for ten seconds.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while tokio::time::Instant::now() < deadline {
        if store.broadcast(&longest).await.is_err() {
            return fail("broadcast at the bound");
        }
        let round = tokio::time::Instant::now() + Duration::from_millis(500);
        loop {
            match tokio::time::timeout_at(round, heard.recv()).await {
                Ok(Ok(message)) if message == longest => return Ok(()),
                Ok(Ok(_)) | Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
                Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => {
                    return fail("the broadcast heard");
                }
                Err(_) => break,
            }
        }
    }
    fail("the broadcast heard")
}

/// The event replay part of the contract.
async fn check_events(
    store: &dyn SessionStore,
    prefix: &str,
    roomy: &SessionConfig,
) -> Result<(), String> {
    let fail = |what: &str| Err(format!("session store contract: {what}"));
    let hour = Duration::from_secs(3600);
    let session = format!("{prefix}events");
    let row = SessionRow {
        id: session.clone(),
        owner: None,
        data: "{}".into(),
        log_level: None,
    };
    if store.create(row, roomy).await.is_err() {
        return fail("create the session of the events");
    }
    let got = |events: Result<Option<Vec<SessionEvent>>, SessionStoreError>| {
        events.map(|e| e.map(|e| e.into_iter().map(|e| e.seq).collect::<Vec<_>>()))
    };
    let event = |seq: u64, keep_from: u64| SessionEvent {
        session: session.clone(),
        stream: 7,
        seq,
        frame: if seq == 0 {
            String::new()
        } else {
            format!("id: 7-{seq}\n\n")
        },
        response: seq == 3,
        keep_from,
    };
    if store.stream_events(&session, 7, 0).await != Ok(None) {
        return fail("a stream nothing was recorded of");
    }
    if store.record_events(&[event(0, 1)]).await.is_err() {
        return fail("record a stream's start");
    }
    if store.stream_events(&session, 7, 0).await != Ok(Some(Vec::new())) {
        return fail("a stream with no event yet");
    }
    if store
        .record_events(&[event(1, 1), event(2, 1)])
        .await
        .is_err()
    {
        return fail("record events");
    }
    let all = store.stream_events(&session, 7, 0).await;
    if all != Ok(Some(vec![event(1, 0), event(2, 0)])) {
        return fail("the events in order, as written");
    }
    if got(store.stream_events(&session, 7, 1).await) != Ok(Some(vec![2])) {
        return fail("the events after one");
    }
    if store.stream_events(&session, 8, 0).await != Ok(None) {
        return fail("another stream");
    }
    // Event 3 is written when only events from 2 are kept: event 1 is gone.
    if store.record_events(&[event(3, 2)]).await.is_err() {
        return fail("record the response");
    }
    if got(store.stream_events(&session, 7, 0).await) != Ok(Some(vec![2, 3])) {
        return fail("events before keep_from dropped");
    }
    // Gone with the session.
    if store.end(&session, None).await != Ok(true) {
        return fail("end the session of the events");
    }
    if store.sweep(&[], &[], hour).await.is_err() {
        return fail("sweep after the session ended");
    }
    if store.stream_events(&session, 7, 0).await != Ok(None) {
        return fail("events of an ended session");
    }
    Ok(())
}

/// The answer routing part of the contract.
async fn check_answers(store: &dyn SessionStore, prefix: &str) -> Result<(), String> {
    let fail = |what: &str| Err(format!("session store contract: {what}"));
    let session = format!("{prefix}answers");
    let (here, there) = (format!("{prefix}i1"), format!("{prefix}i2"));
    let answer = r#"{"jsonrpc":"2.0","id":"r1","result":{}}"#;
    if store.expect_answer(&session, "r1", &here).await.is_err() {
        return fail("expect an answer");
    }
    if store.answer(&session, "r0", answer).await != Ok(false) {
        return fail("an answer nobody waits for");
    }
    if store.answer(&session, "r1", answer).await != Ok(true) {
        return fail("an answer handed over");
    }
    if store.answer(&session, "r1", answer).await != Ok(false) {
        return fail("a second answer to the same request");
    }
    if store.take_answers(&there).await != Ok(Vec::new()) {
        return fail("another instance's answers");
    }
    let taken = SessionAnswer {
        session: session.clone(),
        request: "r1".into(),
        answer: answer.into(),
    };
    if store.take_answers(&here).await != Ok(vec![taken]) {
        return fail("take the answers");
    }
    if store.take_answers(&here).await != Ok(Vec::new()) {
        return fail("answers taken once");
    }
    let forgotten = async {
        store.expect_answer(&session, "r2", &here).await?;
        store.forget_answer(&session, "r2").await?;
        store.answer(&session, "r2", answer).await
    };
    if forgotten.await != Ok(false) {
        return fail("an answer to a forgotten request");
    }
    Ok(())
}
