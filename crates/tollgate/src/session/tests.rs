//! The session table: alone, and as two instances sharing one store.

use super::*;
use crate::session::memory::MemorySessionStore;

fn owned_by(owner: Option<&str>) -> Session {
    Session {
        owner: owner.map(Arc::from),
        revision: ProtocolVersion::V2025_11_25,
        capabilities: ClientCapabilities::default(),
        client_info: None,
        log_level: None,
        streams: Arc::new(SessionStreams::new(
            StreamConfig::default(),
            ProtocolVersion::V2025_11_25,
            Duration::from_secs(60),
        )),
    }
}

fn session() -> Session {
    owned_by(None)
}

fn store(config: SessionConfig) -> Arc<SessionTable> {
    Arc::new(SessionTable::new(
        config,
        StreamConfig::default(),
        tollgate_json::JsonLimits::default(),
        None,
    ))
}

/// Two instances sharing one store.
fn pair(config: SessionConfig) -> (Arc<SessionTable>, Arc<SessionTable>) {
    let shared: Arc<dyn SessionStore> = Arc::new(MemorySessionStore::new());
    let table = || {
        Arc::new(SessionTable::new(
            config,
            StreamConfig::default(),
            tollgate_json::JsonLimits::default(),
            Some(Arc::clone(&shared)),
        ))
    };
    (table(), table())
}

async fn id(table: &Arc<SessionTable>, session: Session) -> Arc<str> {
    table
        .create(session)
        .await
        .unwrap_or_else(|_| Arc::from(""))
}

async fn found(table: &Arc<SessionTable>, id: &str, principal: Option<&str>) -> bool {
    matches!(table.touch(id, principal).await, Ok(Some(_)))
}

#[tokio::test]
async fn ids_are_random_hex_and_sessions_end() {
    let store = store(SessionConfig::default());
    let a = id(&store, session()).await;
    let b = id(&store, session()).await;
    assert_eq!(a.len(), 32);
    assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(a, b);
    assert!(found(&store, &a, None).await);
    assert_eq!(store.end(&a, None).await, Ok(true));
    assert!(!found(&store, &a, None).await);
    assert_eq!(store.end(&a, None).await, Ok(false));
}

#[tokio::test]
async fn a_session_belongs_to_its_principal() {
    for (one, two) in [(store(SessionConfig::default()), None), {
        let (a, b) = pair(SessionConfig::default());
        (a, Some(b))
    }] {
        let a = id(&one, owned_by(Some("alice"))).await;
        for table in std::iter::once(&one).chain(two.as_ref()) {
            for other in [None, Some("bob"), Some("alice ")] {
                assert!(!found(table, &a, other).await);
                assert_eq!(table.end(&a, other).await, Ok(false));
                let level = crate::wire::level::LogLevel::Debug;
                assert_eq!(table.set_log_level(&a, other, level).await, Ok(false));
            }
            assert!(found(table, &a, Some("alice")).await);
        }
        assert_eq!(
            two.as_ref().unwrap_or(&one).end(&a, Some("alice")).await,
            Ok(true)
        );
    }
}

#[tokio::test]
async fn the_bound_at_and_past() {
    for (one, two) in [(store(SessionConfig::new().max_sessions(2)), None), {
        let (a, b) = pair(SessionConfig::new().max_sessions(2));
        (a, Some(b))
    }] {
        assert!(one.create(session()).await.is_ok());
        let other = two.as_ref().unwrap_or(&one);
        assert!(other.create(session()).await.is_ok());
        // The bound holds for the instances together.
        assert_eq!(
            other.create(session()).await.map(|_| ()),
            Err(CreateFailure::Full)
        );
        assert_eq!(
            one.create(session()).await.map(|_| ()),
            Err(CreateFailure::Full)
        );
    }
}

#[tokio::test]
async fn the_per_principal_bound_at_and_past() {
    let store = store(SessionConfig::new().max_sessions_per_principal(2));
    let first = id(&store, owned_by(Some("alice"))).await;
    assert!(store.create(owned_by(Some("alice"))).await.is_ok());
    assert_eq!(
        store.create(owned_by(Some("alice"))).await.map(|_| ()),
        Err(CreateFailure::Full)
    );
    // Others are not held back by alice's quota.
    assert!(store.create(owned_by(Some("bob"))).await.is_ok());
    assert!(store.create(session()).await.is_ok());
    // Ending one of alice's sessions makes room for another.
    assert_eq!(store.end(&first, Some("alice")).await, Ok(true));
    assert!(store.create(owned_by(Some("alice"))).await.is_ok());
}

#[tokio::test]
async fn idle_sessions_expire_and_make_room() {
    let store = store(SessionConfig {
        max_sessions: 1,
        max_sessions_per_principal: 1,
        idle_timeout: Duration::from_millis(30),
        ..SessionConfig::default()
    });
    let a = id(&store, session()).await;
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert!(!found(&store, &a, None).await, "expired");
    let _ = store.create(session()).await;
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert!(
        store.create(session()).await.is_ok(),
        "an expired session gives way to a new one"
    );
}

#[tokio::test]
async fn the_sweep_ends_idle_sessions_untouched() {
    let store = store(SessionConfig {
        max_sessions: 10,
        max_sessions_per_principal: 10,
        idle_timeout: Duration::from_secs(60),
        ..SessionConfig::default()
    });
    let a = id(&store, owned_by(Some("alice"))).await;
    store.sweep(Instant::now());
    assert_eq!(store.len(), 1, "not idle yet");
    store.sweep(Instant::now() + Duration::from_secs(61));
    assert_eq!(store.len(), 0, "swept without being touched");
    assert!(!found(&store, &a, Some("alice")).await);
    // The per-principal count went with it.
    assert!(store.lock().owned.is_empty());
}

#[tokio::test]
async fn the_sweep_runs_on_a_timer() {
    // The shortest idle timeout (1 s) sweeps every second: an untouched session is gone
    // within a few seconds, without any request touching the store.
    let store = store(SessionConfig::new().idle_timeout(Duration::from_millis(1)));
    let _ = store.create(session()).await;
    assert_eq!(store.len(), 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.len() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(store.len(), 0, "the timer swept the idle session");
}

#[tokio::test]
async fn a_session_is_served_and_ended_by_any_instance() {
    let (one, two) = pair(SessionConfig::default());
    let a = id(&one, owned_by(Some("alice"))).await;
    assert_eq!(two.len(), 0);
    // First seen on the second instance: its streams are made there, its facts read back.
    let there = two.touch(&a, Some("alice")).await;
    let there = there.ok().flatten();
    assert!(
        there
            .as_ref()
            .is_some_and(|s| s.revision == ProtocolVersion::V2025_11_25)
    );
    assert_eq!(two.len(), 1);
    // A level set through one instance is what the other reads.
    let level = crate::wire::level::LogLevel::Error;
    assert_eq!(one.set_log_level(&a, Some("alice"), level).await, Ok(true));
    let read = two.touch(&a, Some("alice")).await.ok().flatten();
    assert_eq!(read.and_then(|s| s.log_level), Some(level));
    // Ended through the second: gone for the first at its next request.
    assert_eq!(two.end(&a, Some("alice")).await, Ok(true));
    assert_eq!(two.len(), 0);
    assert!(!found(&one, &a, Some("alice")).await);
    assert_eq!(one.len(), 0, "the first instance dropped its streams");
}

#[tokio::test]
async fn the_restore_race_makes_one_set_of_streams() {
    // The same session hit on two instances at once, many times each: every request finds
    // it, and each instance holds exactly one set of streams for it.
    let (one, two) = pair(SessionConfig::default());
    let a = id(&one, session()).await;
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..64 {
        let table = Arc::clone(if n % 2 == 0 { &one } else { &two });
        let a = Arc::clone(&a);
        calls.spawn(async move { table.touch(&a, None).await.ok().flatten() });
    }
    let mut streams: Vec<(bool, Arc<SessionStreams>)> = Vec::new();
    let mut n = 0;
    while let Some(done) = calls.join_next().await {
        let session = done.ok().flatten();
        assert!(session.is_some(), "every request found the session");
        if let Some(s) = session {
            let on_one = one.all_streams().iter().any(|x| Arc::ptr_eq(x, &s.streams));
            streams.push((on_one, s.streams));
        }
        n += 1;
    }
    assert_eq!(n, 64);
    assert_eq!((one.len(), two.len()), (1, 1));
    let two_streams = two.all_streams();
    for (on_one, s) in &streams {
        assert!(*on_one || Arc::ptr_eq(s, &two_streams[0]));
    }
}

#[tokio::test]
async fn a_session_ended_elsewhere_ends_here_at_the_sweep() {
    let (one, two) = pair(SessionConfig::default());
    let a = id(&one, session()).await;
    let streams = one.all_streams();
    assert_eq!(two.end(&a, None).await, Ok(true));
    assert_eq!(one.len(), 1, "not known here yet");
    one.sweep_shared().await;
    assert_eq!(one.len(), 0);
    assert!(streams.iter().all(|s| s.is_closed()));
}

#[tokio::test]
async fn a_failing_store_is_unavailable_not_missing() {
    struct Down;
    fn down<'a, T: Send + 'a>() -> store::SessionStoreFuture<'a, T> {
        Box::pin(std::future::ready(Err(store::SessionStoreError::new(
            SessionStoreErrorKind::Backend,
        ))))
    }
    impl SessionStore for Down {
        fn create<'a>(
            &'a self,
            _: store::SessionRow,
            _: &'a SessionConfig,
        ) -> store::SessionStoreFuture<'a, ()> {
            down()
        }
        fn touch<'a>(
            &'a self,
            _: &'a str,
            _: Option<&'a str>,
            _: Duration,
        ) -> store::SessionStoreFuture<'a, Option<store::SessionRow>> {
            down()
        }
        fn set_log_level<'a>(
            &'a self,
            _: &'a str,
            _: Option<&'a str>,
            _: &'a str,
            _: Duration,
        ) -> store::SessionStoreFuture<'a, bool> {
            down()
        }
        fn end<'a>(
            &'a self,
            _: &'a str,
            _: Option<&'a str>,
        ) -> store::SessionStoreFuture<'a, bool> {
            down()
        }
        fn sweep<'a>(
            &'a self,
            _: &'a [String],
            _: &'a [String],
            _: Duration,
        ) -> store::SessionStoreFuture<'a, Vec<String>> {
            down()
        }
    }
    let table = Arc::new(SessionTable::new(
        SessionConfig::default(),
        StreamConfig::default(),
        tollgate_json::JsonLimits::default(),
        Some(Arc::new(Down)),
    ));
    assert_eq!(
        table.create(session()).await.map(|_| ()),
        Err(CreateFailure::Unavailable)
    );
    assert_eq!(table.touch("00", None).await.map(|_| ()), Err(Unavailable));
    assert_eq!(table.end("00", None).await, Err(Unavailable));
    let level = crate::wire::level::LogLevel::Info;
    assert_eq!(
        table.set_log_level("00", None, level).await,
        Err(Unavailable)
    );
}

#[tokio::test]
async fn an_answer_posted_to_another_instance_reaches_the_waiting_request() {
    use crate::stream::session::PendingRequest;
    let (one, two) = pair(SessionConfig::default());
    let a = id(&one, session()).await;
    let here = one.touch(&a, None).await.ok().flatten();
    let there = two.touch(&a, None).await.ok().flatten();
    let (Some(here), Some(there)) = (here, there) else {
        unreachable!("the session is live on both");
    };
    let (reply, answer) = tokio::sync::oneshot::channel();
    let request = here.streams.register_request(PendingRequest {
        method: "roots/list",
        reply,
    });
    let request = request.unwrap_or_else(|| Arc::from(""));
    assert!(request.starts_with("tollgate-"));
    let route = here.streams.route.get().map(Arc::clone);
    let route = route.unwrap_or_else(|| unreachable!("a shared session has a route"));
    assert!(route.expect(&request).await);
    // Request ids name their instance: the same session's requests on the other instance never
    // collide with these.
    let other = there.streams.route.get().map(|r| r.prefix().to_owned());
    assert_ne!(other.as_deref(), Some(route.prefix()));
    let response = |id: &str| {
        tollgate_json::JsonObject::builder()
            .insert("jsonrpc", "2.0")
            .insert("id", id)
            .insert(
                "result",
                tollgate_json::JsonObject::builder()
                    .insert("roots", tollgate_json::JsonArray::new())
                    .build(),
            )
            .build()
    };
    // Nobody waits for this one, anywhere.
    assert_eq!(
        two.answer(&a, &there.streams, &response("tollgate-x-1"))
            .await,
        Ok(false)
    );
    assert_eq!(
        two.answer(&a, &there.streams, &response(&request)).await,
        Ok(true)
    );
    let got = tokio::time::timeout(Duration::from_secs(5), answer).await;
    assert!(
        matches!(got, Ok(Ok(Some(_)))),
        "delivered on the instance that asked"
    );
    // Answered once: a second answer is refused.
    assert_eq!(
        two.answer(&a, &there.streams, &response(&request)).await,
        Ok(false)
    );
    route.forget(&request);
}

#[tokio::test]
async fn events_and_cancellations_reach_the_other_instance() {
    use crate::model::subscription::{Event, Listeners};
    use crate::stream::event::EventStream;
    let (one, two) = pair(SessionConfig::default());
    let (here, there) = (Listeners::default(), Listeners::default());
    one.share_events(&here);
    two.share_events(&there);
    one.start_receiving();
    two.start_receiving();
    let mut heard_here = here.events.subscribe();
    let mut heard_there = there.events.subscribe();
    here.publish(Event::TaskChanged(Arc::from("task-1")));
    let got = tokio::time::timeout(Duration::from_secs(5), heard_there.recv()).await;
    assert!(matches!(got, Ok(Ok(Event::TaskChanged(id))) if &*id == "task-1"));
    // Heard once where it was published: its own broadcast is not published again.
    assert!(matches!(heard_here.recv().await, Ok(Event::TaskChanged(_))));
    let again = tokio::time::timeout(Duration::from_millis(300), heard_here.recv()).await;
    assert!(again.is_err(), "published once here");

    // A request running on the second instance, cancelled through the first.
    let a = id(&one, session()).await;
    let (Ok(Some(s1)), Ok(Some(s2))) = (one.touch(&a, None).await, two.touch(&a, None).await)
    else {
        unreachable!("the session is live on both");
    };
    let running = EventStream::new(StreamConfig::default());
    let request = crate::wire::id::RequestId::from_json(&tollgate_json::JsonValue::from("r-7"));
    let request = request.unwrap_or_else(|| unreachable!("a string id"));
    s2.streams.adopt(&running, Some(&request));
    one.cancel(&a, &s1.streams, &request);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !crate::stream::lock(&running.state).cancelled && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        crate::stream::lock(&running.state).cancelled,
        "cancelled where it runs"
    );
}

#[test]
fn the_outbox_bound_at_and_past() {
    use crate::session::replay::MAX_OUTBOX_BYTES;
    // No runtime: nothing drains the outbox, so what it holds is what it took.
    let (one, _) = pair(SessionConfig::default());
    let session = "s".repeat(32);
    let at = "x".repeat(MAX_OUTBOX_BYTES - session.len() - 64);
    let frame = bytes::Bytes::from(at);
    let Some(outbox) = one.relay.as_ref().map(|r| Arc::clone(&r.events)) else {
        unreachable!("a shared table has an outbox");
    };
    outbox.record(&session, 1, 1, &frame, false, 1);
    assert_eq!(one.outbox_len(), 1, "at the bound: kept");
    outbox.record(&session, 1, 2, &bytes::Bytes::from("x"), false, 1);
    assert_eq!(one.outbox_len(), 1, "one byte past: not shared");
}

#[test]
fn the_broadcast_queue_bound_at_and_past() {
    use crate::session::bus::MAX_QUEUED_BROADCASTS;
    // No runtime: nothing sends, so what the queue holds is what it took.
    let (one, _) = pair(SessionConfig::default());
    let Some(outgoing) = one.relay.as_ref().map(|r| Arc::clone(&r.outgoing)) else {
        unreachable!("a shared table broadcasts");
    };
    for n in 0..MAX_QUEUED_BROADCASTS {
        outgoing.send(format!("m{n}"));
    }
    assert_eq!(outgoing.len(), MAX_QUEUED_BROADCASTS, "at the bound: kept");
    outgoing.send("one more".into());
    assert_eq!(outgoing.len(), MAX_QUEUED_BROADCASTS, "past it: dropped");
}

#[tokio::test]
async fn streams_past_the_numbers_an_instance_has_are_not_shared() {
    use crate::stream::STREAM_NUMBER_MASK;
    use crate::stream::event::EventStream;
    let (one, _) = pair(SessionConfig::default());
    let a = id(&one, session()).await;
    let Ok(Some(here)) = one.touch(&a, None).await else {
        unreachable!("the session is live");
    };
    let adopt = |next: u64| {
        crate::stream::lock(&here.streams.state).next_number = next;
        let stream = EventStream::new(StreamConfig::default());
        here.streams.adopt(&stream, None);
        stream
    };
    // The last number of this instance's range is shared, and the one after it is not.
    let last = adopt(STREAM_NUMBER_MASK + 1);
    assert!(last.share.get().is_some(), "the last number: shared");
    let past = adopt(STREAM_NUMBER_MASK + 2);
    assert!(
        past.share.get().is_none(),
        "past the range: resumed only here"
    );
}

/// Anonymous sessions share their own bound: at it the next anonymous `initialize` is refused
/// while named principals still get sessions (alone, and across instances sharing a store).
#[tokio::test]
async fn the_anonymous_bound_at_and_past() {
    let config = SessionConfig::new().max_anonymous_sessions(2);
    for (one, two) in [(store(config), None), {
        let (a, b) = pair(config);
        (a, Some(b))
    }] {
        let other = two.as_ref().unwrap_or(&one);
        let first = id(&one, session()).await;
        assert!(other.create(session()).await.is_ok(), "at the bound");
        assert_eq!(
            other.create(session()).await.map(|_| ()),
            Err(CreateFailure::Full),
            "one past it"
        );
        assert!(one.create(owned_by(Some("alice"))).await.is_ok());
        assert_eq!(one.end(&first, None).await, Ok(true));
        assert!(
            other.create(session()).await.is_ok(),
            "an ended one makes room"
        );
    }
    let none = store(SessionConfig::new().max_anonymous_sessions(0));
    assert_eq!(
        none.create(session()).await.map(|_| ()),
        Err(CreateFailure::Full)
    );
}

/// A session ends at its lifetime ceiling even with a request running (which is cancelled),
/// and not before.
#[tokio::test]
async fn the_lifetime_ceiling_ends_a_busy_session() {
    let store = store(
        SessionConfig::new()
            .idle_timeout(Duration::from_secs(60))
            .max_lifetime(Duration::from_secs(3600)),
    );
    let made = owned_by(Some("alice"));
    let streams = Arc::clone(&made.streams);
    let a = id(&store, made).await;
    let running = streams.begin();
    assert!(running.is_some());
    // Busy: past the idle timeout it stays.
    store.sweep(Instant::now() + Duration::from_secs(120));
    assert_eq!(store.len(), 1, "a busy session outlives its idle timeout");
    store.sweep(Instant::now() + Duration::from_secs(3599));
    assert_eq!(store.len(), 1, "not before the ceiling");
    store.sweep(Instant::now() + Duration::from_secs(3600));
    assert_eq!(store.len(), 0, "ended at the ceiling, busy or not");
    assert!(streams.is_closed());
    assert!(!found(&store, &a, Some("alice")).await);
}

/// With a shared store an instance ends, for every instance, a session it has served for the
/// lifetime ceiling.
#[tokio::test]
async fn the_lifetime_ceiling_holds_with_a_shared_store() {
    let (one, two) = pair(SessionConfig::new().max_lifetime(Duration::from_secs(1)));
    let a = id(&one, owned_by(Some("alice"))).await;
    one.sweep_shared().await;
    assert!(found(&two, &a, Some("alice")).await, "not yet");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    one.sweep_shared().await;
    assert!(!found(&two, &a, Some("alice")).await, "ended everywhere");
}

/// Running requests: at most `max_requests_per_session` in one session, and at most
/// `max_requests_per_principal` in all of one principal's sessions; one that ends gives its
/// place back. Anonymous sessions are bounded per session alone.
#[tokio::test]
async fn running_requests_are_bounded_per_session_and_per_principal() {
    let store = store(
        SessionConfig::new()
            .max_requests_per_session(2)
            .max_requests_per_principal(3),
    );
    let (a, b) = (owned_by(Some("alice")), owned_by(Some("alice")));
    let _ = id(&store, a.clone()).await;
    let _ = id(&store, b.clone()).await;
    let first = a.streams.begin();
    let second = a.streams.begin();
    assert!(
        first.is_some() && second.is_some(),
        "at the session's bound"
    );
    assert!(a.streams.begin().is_none(), "one past it");
    let third = b.streams.begin();
    assert!(third.is_some(), "at the principal's bound");
    assert!(
        b.streams.begin().is_none(),
        "one past the principal's bound"
    );
    drop(first);
    assert!(
        b.streams.begin().is_some(),
        "an ended request gives its place back"
    );
    let bob = owned_by(Some("bob"));
    let _ = id(&store, bob.clone()).await;
    assert!(bob.streams.begin().is_some(), "others are not held back");
    let anonymous = session();
    let _ = id(&store, anonymous.clone()).await;
    let held = (anonymous.streams.begin(), anonymous.streams.begin());
    assert!(held.0.is_some() && held.1.is_some());
    assert!(anonymous.streams.begin().is_none());
}

/// Resumable streams reserve `replay_bytes` each from the session's, the principal's and the
/// endpoint's budgets: at a budget the next answer streams without ids (and a standalone `GET`
/// is refused), and a forgotten stream gives its reservation back.
#[tokio::test]
async fn replay_reservations_are_bounded_per_session_principal_and_endpoint() {
    use crate::stream::event::EventStream;
    use crate::stream::session::AttachFailure;
    let kib = 4 * 1024;
    let streams = StreamConfig::new().replay_bytes(kib).max_streams(64);
    let table = |config: SessionConfig| {
        Arc::new(SessionTable::new(
            config,
            streams,
            tollgate_json::JsonLimits::default(),
            None,
        ))
    };
    let made = |table: &Arc<SessionTable>, owner: Option<&str>| {
        let mut session = owned_by(owner);
        session.streams = table.new_streams(ProtocolVersion::V2025_11_25);
        session
    };
    let adopt = |session: &Session| {
        let stream = EventStream::new(streams);
        session.streams.adopt(&stream, None);
        stream
    };
    // The session's budget: two streams' bytes.
    let t = table(SessionConfig::new().max_replay_bytes_per_session(2 * kib));
    let s = made(&t, Some("alice"));
    let _ = id(&t, s.clone()).await;
    let kept = [adopt(&s), adopt(&s)];
    assert!(kept.iter().all(|k| k.is_numbered()), "at the bound");
    assert!(!adopt(&s).is_numbered(), "one past it streams without ids");
    assert!(matches!(s.streams.open(None), Err(AttachFailure::Full)));
    // The principal's budget, in streams and in bytes, across its sessions.
    for config in [
        SessionConfig::new().max_streams_per_principal(3),
        SessionConfig::new().max_replay_bytes_per_principal(3 * kib),
    ] {
        let t = table(config);
        let (a, b) = (made(&t, Some("alice")), made(&t, Some("alice")));
        let _ = id(&t, a.clone()).await;
        let _ = id(&t, b.clone()).await;
        let kept = [adopt(&a), adopt(&a), adopt(&b)];
        assert!(kept.iter().all(|k| k.is_numbered()), "at the bound");
        assert!(!adopt(&b).is_numbered(), "one past it");
        let bob = made(&t, Some("bob"));
        let _ = id(&t, bob.clone()).await;
        assert!(adopt(&bob).is_numbered(), "others are not held back");
        // A finished stream forgotten (here: its session ended) gives its place back.
        a.streams.close();
        drop(kept);
        assert!(adopt(&b).is_numbered(), "room again");
    }
    // The endpoint's budget, across principals.
    let t = table(SessionConfig::new().max_replay_bytes(2 * kib));
    let (a, b) = (made(&t, Some("alice")), made(&t, None));
    let _ = id(&t, a.clone()).await;
    let _ = id(&t, b.clone()).await;
    let kept = [adopt(&a), adopt(&b)];
    assert!(kept.iter().all(|k| k.is_numbered()), "at the bound");
    assert!(!adopt(&b).is_numbered(), "one past it");
    let carol = made(&t, Some("carol"));
    let _ = id(&t, carol.clone()).await;
    assert!(!adopt(&carol).is_numbered(), "whoever asks");
}
