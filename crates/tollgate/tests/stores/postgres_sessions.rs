//! 2025 sessions shared through PostgreSQL: the session store contract against a real server;
//! two instances on loopback sharing one database (a session made on one is served, leveled and
//! ended by the other; the same session hit on both at once; the cluster-wide bound at and past);
//! and the database killed and restarted (fixed, retryable answers within a bound, then recovery
//! without a restart). Needs `TOLLGATE_TEST_POSTGRES_URL` and `TOLLGATE_TEST_POSTGRES_CTL`
//! (`scripts/with-postgres` sets both); `scripts/test` runs it with one test thread, since one
//! test kills the database.

#![cfg(feature = "postgres")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use support::{Response, control, env_var, post, raw, start};
use tollgate::endpoint::{PostgresSessionStore, SessionConfig};
use tollgate::json::JsonObject;
use tollgate::tool::{CompleteResult, OperationResult};
use tollgate::transport::McpService;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext, ToolArguments,
    ToolRegistration,
};

const V: ProtocolVersion = ProtocolVersion::V2025_11_25;

/// A pool whose tables live in `schema` (created if missing), so a test's bound counts only its
/// own sessions.
async fn store_in(schema: &str) -> PostgresSessionStore {
    use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
    let url = env_var("TOLLGATE_TEST_POSTGRES_URL");
    let admin = PgPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .unwrap();
    sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
        .execute(&admin)
        .await
        .unwrap();
    let options: PgConnectOptions = url.parse().unwrap();
    let pool = PgPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options.options([("search_path", schema)]))
        .await
        .unwrap();
    PostgresSessionStore::from_pool(pool).await.unwrap()
}

async fn hi(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, std::convert::Infallible> {
    Ok(CompleteResult::from_tool_text("hi").into())
}

/// Reports progress 1, frees its connection, then reports progress 2 and answers `resumed`.
async fn slow(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, std::convert::Infallible> {
    let progress = features.find::<tollgate::context::ProgressReporter>();
    if let Some(progress) = progress {
        let _ = progress.report(1.0, Some(2.0), None);
    }
    if let Some(stream) = features.find::<tollgate::transport::ResponseStream>() {
        stream.close_connection();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    if let Some(progress) = progress {
        let _ = progress.report(2.0, Some(2.0), None);
    }
    Ok(CompleteResult::from_tool_text("resumed").into())
}

async fn instance(store: PostgresSessionStore, config: SessionConfig) -> SocketAddr {
    let echo = ToolRegistration::with_name("echo", [V])
        .json_object_arguments()
        .handler(hi)
        .build()
        .unwrap();
    let slow = ToolRegistration::with_name("slow", [V])
        .json_object_arguments()
        .handler(slow)
        .build()
        .unwrap();
    let endpoint = Endpoint::with_path("/mcp", [V], Implementation::new("shared", "1"))
        .legacy_sessions(Some(config))
        .session_store(store)
        .logging(true)
        .add_tool(echo)
        .add_tool(slow)
        .build()
        .unwrap();
    start(McpService::new(endpoint)).await
}

async fn pair(schema: &str, config: SessionConfig) -> (SocketAddr, SocketAddr) {
    let a = instance(store_in(schema).await, config).await;
    let b = instance(store_in(schema).await, config).await;
    (a, b)
}

async fn initialize(addr: SocketAddr) -> Response {
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#;
    post(addr, &[], body.as_bytes()).await
}

async fn session(addr: SocketAddr) -> String {
    let r = initialize(addr).await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.header("mcp-session-id").expect("a session").to_owned()
}

async fn request(addr: SocketAddr, session: &str, method: &str, params: &str) -> Response {
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":"r1","method":"{method}","params":{{{params}}}}}"#);
    let headers = [
        ("MCP-Protocol-Version", V.as_str()),
        ("Mcp-Session-Id", session),
    ];
    post(addr, &headers, body.as_bytes()).await
}

async fn echo(addr: SocketAddr, session: &str) -> Response {
    request(
        addr,
        session,
        "tools/call",
        r#""name":"echo","arguments":{}"#,
    )
    .await
}

async fn delete(addr: SocketAddr, session: &str) -> Response {
    let head = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: {}\r\nConnection: close\r\n\r\n",
        addr.port(),
        V.as_str()
    );
    raw(addr, head.as_bytes()).await
}

#[tokio::test]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn postgres_keeps_the_session_store_contract() {
    let store = store_in("contract").await;
    let prefix = format!("contract-{}-", std::process::id());
    assert_eq!(
        tollgate::__private::check_session_store_contract(&store, &prefix).await,
        Ok(())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn a_session_is_served_leveled_and_ended_by_either_instance() {
    let (a, b) = pair("shared", SessionConfig::default()).await;
    let id = session(a).await;
    let r = echo(b, &id).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("hi"));
    let r = request(b, &id, "logging/setLevel", r#""level":"error""#).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json().get("result").is_some(), "{}", r.text());
    assert_eq!(delete(a, &id).await.status, 200);
    let r = echo(b, &id).await;
    assert_eq!(r.status, 404, "ended on the other instance: {}", r.text());
    assert_eq!(delete(b, &id).await.status, 404);
    // A session id nobody issued is not found on either.
    let r = echo(a, "0123456789abcdef0123456789abcdef").await;
    assert_eq!(r.status, 404);
}

async fn resume(addr: SocketAddr, session: &str, last_event_id: &str) -> Response {
    let head = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: {}\r\nLast-Event-ID: {last_event_id}\r\nConnection: close\r\n\r\n",
        addr.port(),
        V.as_str()
    );
    tokio::time::timeout(Duration::from_secs(20), raw(addr, head.as_bytes()))
        .await
        .expect("the resumed stream ends with its response")
}

/// The ids of a response's SSE events, in order.
fn event_ids(r: &Response) -> Vec<String> {
    r.text()
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn a_stream_written_on_one_instance_is_resumed_on_the_other() {
    let (a, b) = pair("replay", SessionConfig::default()).await;
    let id = session(a).await;
    let body = r#"{"jsonrpc":"2.0","id":"slow1","method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p"}}}"#;
    let headers = [
        ("MCP-Protocol-Version", V.as_str()),
        ("Mcp-Session-Id", id.as_str()),
    ];
    let first = post(a, &headers, body.as_bytes()).await;
    assert_eq!(first.status, 200, "{}", first.text());
    let ids = event_ids(&first);
    // The priming event and the first progress notification, then the connection was freed.
    assert_eq!(ids.len(), 2, "{}", first.text());
    assert!(first.text().contains(r#""progress":1"#));
    assert!(!first.text().contains("resumed"));
    // Resumed on the other instance after the last event seen: the rest, then the response.
    let rest = resume(b, &id, &ids[1]).await;
    assert_eq!(rest.status, 200, "{}", rest.text());
    assert!(rest.text().contains(r#""progress":2"#), "{}", rest.text());
    assert!(rest.text().contains("resumed"), "{}", rest.text());
    assert!(
        !rest.text().contains(r#""progress":1"#),
        "nothing sent twice"
    );
    // Resumed again there from the priming event: everything, from that instance's copy.
    let again = resume(b, &id, &ids[0]).await;
    assert!(again.text().contains(r#""progress":1"#), "{}", again.text());
    assert!(again.text().contains("resumed"), "{}", again.text());
    // An event id of a stream this session never had, on either instance: 400.
    let stream: u64 = ids[0].split('-').next().unwrap().parse().unwrap();
    let unknown = format!("{}-1", stream + 7);
    assert_eq!(resume(b, &id, &unknown).await.status, 400);
    assert_eq!(resume(a, &id, &unknown).await.status, 400);
    // Another session's event ids do not open this session's streams.
    let other = session(b).await;
    assert_eq!(resume(b, &other, &ids[1]).await.status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn the_same_session_on_both_instances_at_once() {
    let (a, b) = pair("race", SessionConfig::default()).await;
    for _ in 0..5 {
        let id = session(a).await;
        let calls: Vec<_> = (0..16)
            .map(|n| {
                let id = id.clone();
                tokio::spawn(async move { echo(if n % 2 == 0 { a } else { b }, &id).await })
            })
            .collect();
        for call in calls {
            let r = call.await.unwrap();
            assert_eq!(r.status, 200, "{}", r.text());
            assert!(r.text().contains("hi"), "{}", r.text());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn the_session_bound_holds_for_the_cluster_at_and_past() {
    let schema = format!("bound{}", std::process::id());
    let config = SessionConfig::new().max_sessions(3);
    let (a, b) = pair(&schema, config).await;
    let first = session(a).await;
    session(b).await;
    session(a).await;
    for addr in [a, b] {
        let r = initialize(addr).await;
        assert_eq!(r.status, 503, "past the bound: {}", r.text());
        assert_eq!(r.message(), "Server busy");
    }
    assert_eq!(delete(b, &first).await.status, 200);
    session(b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs scripts/with-postgres; kills the database"]
async fn postgres_down_gives_fixed_answers_and_recovers() {
    const BOUND: Duration = Duration::from_secs(12);
    let (a, b) = pair("outage", SessionConfig::default()).await;
    let id = session(a).await;
    control("TOLLGATE_TEST_POSTGRES_CTL", "kill");
    let started = Instant::now();
    let r = tokio::time::timeout(BOUND, initialize(b))
        .await
        .expect("bounded");
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.message(), "Server busy");
    assert!(r.header("mcp-session-id").is_none());
    let r = tokio::time::timeout(BOUND, echo(b, &id))
        .await
        .expect("bounded");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.code(), -32603);
    assert_eq!(r.message(), "Internal error");
    assert!(r.json().get("error").and_then(|e| e.get("data")).is_none());
    assert!(started.elapsed() < 2 * BOUND);
    control("TOLLGATE_TEST_POSTGRES_CTL", "start");
    // Recovery without a restart: the session made before the outage is served again.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = echo(b, &id).await;
        if r.status == 200 && r.text().contains("hi") {
            break;
        }
        assert!(Instant::now() < deadline, "not recovered: {}", r.text());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let fresh = session(b).await;
    assert_eq!(echo(a, &fresh).await.status, 200);
}
