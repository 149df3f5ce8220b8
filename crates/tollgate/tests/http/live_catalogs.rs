//! Live catalogs over real HTTP, on every revision: tools added, replaced and removed while
//! calls are in flight (those finish on the catalog they started on), `listChanged` declared,
//! `notifications/tools/list_changed` on 2025 sessions' standalone streams and through a
//! 2026-07-28 `subscriptions/listen` asking for it, a burst of changes announced a few times at
//! most, a removed tool answering as one never registered, a cursor across a change, and a
//! refused change leaving every answer as it was.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use support::{Open, Response, call, first_text, post, post_request, send, start};
use tokio::sync::Notify;
use tollgate::endpoint::{CatalogChange, Catalogs, LIST_CHANGED_WINDOW};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext, ToolArguments, ToolRegistration,
    tool::{CompleteResult, OperationResult},
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const ALL: [ProtocolVersion; 3] = [V26, V1125, V0618];

async fn v1(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("v1").into())
}

async fn v2(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("v2").into())
}

/// Calls entered and the signal that lets them answer.
static ENTERED: AtomicUsize = AtomicUsize::new(0);
fn release() -> &'static Notify {
    static RELEASE: OnceLock<Notify> = OnceLock::new();
    RELEASE.get_or_init(Notify::new)
}

/// Waits to be released, then answers as the first version did.
async fn held(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let released = release().notified();
    ENTERED.fetch_add(1, Ordering::SeqCst);
    released.await;
    Ok(CompleteResult::from_tool_text("held v1").into())
}

fn named(name: &str, version: u8) -> ToolRegistration {
    let builder = ToolRegistration::with_name(name, ALL).json_object_arguments();
    match version {
        1 => builder.handler(v1).build().unwrap(),
        _ => builder.handler(v2).build().unwrap(),
    }
}

fn live(page_size: usize) -> (Endpoint, Catalogs) {
    let endpoint = Endpoint::with_path("/mcp", ALL, Implementation::new("live", "1"))
        .tools_page_size(page_size)
        .add_tool(named("stay", 1))
        .add_tool(
            ToolRegistration::with_name("work", ALL)
                .json_object_arguments()
                .handler(held)
                .build()
                .unwrap(),
        )
        .add_tool(named("other", 1))
        .live_catalogs()
        .build()
        .unwrap();
    let catalogs = endpoint.catalogs().expect("built live");
    (endpoint, catalogs)
}

async fn session_for(addr: SocketAddr, revision: ProtocolVersion) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
        revision.as_str()
    );
    let resp = post(addr, &[], body.as_bytes()).await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert!(
        resp.text().contains(
            r#""tools":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true}"#
        ),
        "{revision}: {}",
        resp.text()
    );
    resp.header("mcp-session-id").expect("a session").to_owned()
}

/// A request in a 2025 session.
async fn legacy(
    addr: SocketAddr,
    revision: ProtocolVersion,
    session: &str,
    body: &str,
) -> Response {
    let headers = [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", revision.as_str()),
    ];
    post(addr, &headers, body.as_bytes()).await
}

fn standalone(addr: SocketAddr, revision: ProtocolVersion, session: &str) -> String {
    format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: {}\r\n\r\n",
        addr.port(),
        revision.as_str()
    )
}

async fn listen(addr: SocketAddr, filter: &str) -> Open {
    let body = support::request(
        "41",
        "subscriptions/listen",
        &format!(r#""notifications":{filter}"#),
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "subscriptions/listen"),
    ];
    let mut stream = Open::send(addr, post_request(addr, &headers, &body)).await;
    assert!(stream.until("acknowledged").await);
    stream
}

fn tool_names(list: &Response) -> Vec<String> {
    list.result()
        .get("tools")
        .and_then(JsonValue::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t.get("name").and_then(JsonValue::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_with_calls_in_flight_finish_on_their_catalog_on_every_revision() {
    let (endpoint, catalogs) = live(100);
    let addr = start(McpService::new(endpoint)).await;
    // Discovery declares what a live catalog can announce.
    let discover = send(addr, "server/discover", "").await;
    assert!(
        discover.text().contains(
            r#""tools":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true}"#
        ),
        "{}",
        discover.text()
    );
    let entered = ENTERED.load(Ordering::SeqCst);
    let in_flight = tokio::spawn(async move { call(addr, "work", "{}", &[]).await });
    while ENTERED.load(Ordering::SeqCst) == entered {
        tokio::task::yield_now().await;
    }
    let unknown_before = call(addr, "never_registered", "{}", &[]).await;
    let version = catalogs
        .apply(
            CatalogChange::new()
                .replace_tool(named("work", 2))
                .remove_tool("other")
                .add_tool(named("added", 1)),
        )
        .unwrap();
    assert_eq!(version, 1);
    release().notify_waiters();
    let finished = in_flight.await.unwrap();
    assert_eq!(first_text(&finished.result()), "held v1", "on its catalog");
    assert_eq!(
        first_text(&call(addr, "work", "{}", &[]).await.result()),
        "v2"
    );
    assert_eq!(
        first_text(&call(addr, "added", "{}", &[]).await.result()),
        "v1"
    );
    // A removed tool answers exactly as one never registered.
    let removed = call(addr, "other", "{}", &[]).await;
    let unknown = call(addr, "never_registered", "{}", &[]).await;
    assert_eq!(removed.status, unknown.status);
    assert_eq!(removed.body, unknown.body);
    assert_eq!(unknown.body, unknown_before.body);
    let list = send(addr, "tools/list", "").await;
    assert_eq!(tool_names(&list), ["stay", "work", "added"]);
    // The 2025 revisions see the same catalog.
    for revision in [V1125, V0618] {
        let session = session_for(addr, revision).await;
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        let list = legacy(addr, revision, &session, list).await;
        assert_eq!(tool_names(&list), ["stay", "work", "added"], "{revision}");
        let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"added","arguments":{}}}"#;
        let answer = legacy(addr, revision, &session, call).await;
        assert_eq!(first_text(&answer.result()), "v1", "{revision}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_reaches_2025_sessions_and_2026_listens_and_a_burst_is_coalesced() {
    let (endpoint, catalogs) = live(100);
    let addr = start(McpService::new(endpoint)).await;
    let mut streams = Vec::new();
    for revision in [V1125, V0618] {
        let session = session_for(addr, revision).await;
        let stream = Open::send(addr, standalone(addr, revision, &session)).await;
        assert_eq!(stream.status, 200);
        streams.push(stream);
    }
    let mut listening = listen(
        addr,
        r#"{"toolsListChanged":true,"promptsListChanged":true}"#,
    )
    .await;
    assert!(
        listening
            .text()
            .contains(r#""notifications":{"toolsListChanged":true,"promptsListChanged":true}"#),
        "{}",
        listening.text()
    );
    // A burst of 100 changes: each stream hears of the tools list at least once, at most thrice.
    for n in 0..50 {
        catalogs.add_tool(named(&format!("burst_{n}"), 1)).unwrap();
        catalogs.remove_tool(&format!("burst_{n}")).unwrap();
    }
    // A change that stays: the burst does not end where it started.
    catalogs.add_tool(named("gift", 1)).unwrap();
    for stream in streams.iter_mut().chain([&mut listening]) {
        assert!(stream.until("notifications/tools/list_changed").await);
    }
    // Whatever was still held is announced within a window; then nothing more comes.
    for stream in streams.iter_mut().chain([&mut listening]) {
        stream.read_for(LIST_CHANGED_WINDOW * 4).await;
        let heard = stream
            .text()
            .matches("notifications/tools/list_changed")
            .count();
        assert!((1..=3).contains(&heard), "{heard}: {}", stream.text());
        // The prompts list did not change: nobody hears of it.
        assert!(!stream.text().contains("notifications/prompts/list_changed"));
    }
    assert!(
        listening
            .text()
            .contains(r#""method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":41}}"#),
        "{}",
        listening.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cursor_across_a_change_is_refused_and_a_refused_change_changes_nothing() {
    let (endpoint, catalogs) = live(1);
    let addr = start(McpService::new(endpoint)).await;
    let first = send(addr, "tools/list", "").await;
    let cursor = first
        .result()
        .get("nextCursor")
        .and_then(JsonValue::as_str)
        .expect("a next page")
        .to_owned();
    let page = |cursor: String| async move {
        send(addr, "tools/list", &format!(r#""cursor":"{cursor}""#)).await
    };
    assert_eq!(tool_names(&page(cursor.clone()).await), ["work"]);
    // Refused whole: a valid addition beside a duplicate changes nothing.
    let refused = catalogs
        .apply(
            CatalogChange::new()
                .add_tool(named("fresh", 1))
                .add_tool(named("stay", 2)),
        )
        .unwrap_err();
    assert_eq!(refused.kind(), BuildErrorKind::DuplicateToolName);
    let unknown = catalogs.remove_tool("missing").unwrap_err();
    assert_eq!(unknown.kind(), BuildErrorKind::UnknownRegistration);
    assert_eq!(catalogs.version(), 0);
    assert_eq!(send(addr, "tools/list", "").await.body, first.body);
    assert_eq!(tool_names(&page(cursor.clone()).await), ["work"]);
    // Across an accepted change: the old cursor is the revision's invalid-cursor error.
    catalogs.add_tool(named("fresh", 1)).unwrap();
    let stale = page(cursor).await;
    assert_eq!(stale.code(), -32602, "{}", stale.text());
    assert_eq!(stale.message(), "Invalid cursor");
    // The new catalog's own cursors lead through it, every page of it.
    let mut names = tool_names(&send(addr, "tools/list", "").await);
    let mut next = send(addr, "tools/list", "").await;
    while let Some(cursor) = next.result().get("nextCursor").and_then(JsonValue::as_str) {
        next = page(cursor.to_owned()).await;
        names.extend(tool_names(&next));
    }
    assert_eq!(names, ["stay", "work", "other", "fresh"]);
}
