//! Event streams of the 2025 revisions over real HTTP: the standalone `GET` stream, event ids,
//! resumption with `Last-Event-ID` after a dropped connection, a handler closing its connection,
//! keep-alive comments, `notifications/cancelled`, and streams ending with their session.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use support::{Open, Response, post, post_request, raw, start};
use tollgate::json::JsonObject;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    context::ProgressReporter,
    endpoint::{SessionConfig, StreamConfig},
    tool::{CompleteResult, OperationResult},
    transport::ResponseStream,
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;

/// Reports progress, then works a little longer before answering.
async fn slow(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    if let Some(progress) = features.find::<ProgressReporter>() {
        let _ = progress.report(1.0, Some(2.0), None);
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    Ok(CompleteResult::from_tool_text("slow done").into())
}

/// Closes its connection when it can, then answers.
async fn hang_up(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let Some(stream) = features.find::<ResponseStream>() else {
        return Ok(CompleteResult::from_tool_text("no stream to close").into());
    };
    stream.close_connection();
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok(CompleteResult::from_tool_text("after reconnect").into())
}

static CANCELLED: AtomicBool = AtomicBool::new(false);

/// Runs until cancelled, recording the cancellation.
async fn forever(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let token = features.cancellation().clone();
    tokio::spawn(async move {
        token.cancelled().await;
        CANCELLED.store(true, Ordering::SeqCst);
    });
    std::future::pending::<()>().await;
    Ok(CompleteResult::from_tool_text("unreachable").into())
}

fn service(sessions: Option<SessionConfig>, revisions: &[ProtocolVersion]) -> McpService {
    let revisions: tollgate::endpoint::ProtocolVersions = revisions.iter().copied().collect();
    let tool = |name: &str| ToolRegistration::with_name(name, revisions).json_object_arguments();
    McpService::new(
        Endpoint::with_path("/mcp", revisions, Implementation::new("sse", "1"))
            .legacy_sessions(sessions)
            .streams(StreamConfig::new().keep_alive(Duration::from_millis(200)))
            .add_tool(tool("slow").handler(slow).build().unwrap())
            .add_tool(tool("hang_up").handler(hang_up).build().unwrap())
            .add_tool(tool("forever").handler(forever).build().unwrap())
            .build()
            .unwrap(),
    )
}

async fn server() -> SocketAddr {
    start(service(
        Some(SessionConfig::default()),
        &[V26, V1125, V0618],
    ))
    .await
}

async fn session_for(addr: SocketAddr, revision: ProtocolVersion) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
        revision.as_str()
    );
    let resp = post(addr, &[], body.as_bytes()).await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.header("mcp-session-id").expect("a session").to_owned()
}

fn get(addr: SocketAddr, headers: &[(&str, &str)]) -> String {
    let mut request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\n",
        addr.port()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request
}

fn tool_call(id: u32, tool: &str, progress: bool) -> String {
    let meta = if progress {
        r#","_meta":{"progressToken":"p"}"#
    } else {
        ""
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}{meta}}}}}"#
    )
}

async fn get_once(addr: SocketAddr, headers: &[(&str, &str)]) -> Response {
    let mut request = get(addr, headers);
    request.insert_str(request.len() - 2, "Connection: close\r\n");
    raw(addr, request.as_bytes()).await
}

#[tokio::test]
async fn get_opens_the_standalone_stream_with_keep_alives_and_delete_ends_it() {
    let addr = server().await;
    for revision in [V1125, V0618] {
        let session = session_for(addr, revision).await;
        let h = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", revision.as_str()),
        ];
        let mut stream = Open::send(addr, get(addr, &h)).await;
        assert_eq!(stream.status, 200, "{revision}");
        assert_eq!(stream.header("content-type"), Some("text/event-stream"));
        assert_eq!(stream.header("cache-control"), Some("no-store"));
        assert!(stream.until(": keep-alive\n\n").await, "{revision}");
        // Nothing but comments: no event, no response on the standalone stream.
        assert!(stream.event_ids().is_empty());
        let delete = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(raw(addr, delete.as_bytes()).await.status, 200);
        assert!(
            stream.finish_reading().await,
            "the stream ends with its session ({revision})"
        );
    }
}

#[tokio::test]
async fn get_refusals_per_endpoint_and_request() {
    let addr = server().await;
    let session = session_for(addr, V1125).await;
    let s = session.as_str();
    let version = ("MCP-Protocol-Version", "2025-11-25");
    let cases: [(&[(&str, &str)], u16); 6] = [
        // A 2026-07-28 client (no session): GET is not offered to it.
        (&[("MCP-Protocol-Version", "2026-07-28")], 405),
        (&[], 405),
        // A 2025 client without its session.
        (&[version], 400),
        (
            &[
                ("Mcp-Session-Id", "0123456789abcdef0123456789abcdef"),
                version,
            ],
            404,
        ),
        // The session's revision is 2025-11-25.
        (
            &[
                ("Mcp-Session-Id", s),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            400,
        ),
        (
            &[
                ("Mcp-Session-Id", s),
                version,
                ("Last-Event-ID", "nonsense"),
            ],
            400,
        ),
    ];
    for (headers, status) in cases {
        let resp = get_once(addr, headers).await;
        assert_eq!(resp.status, status, "{headers:?}");
        assert!(resp.body.is_empty());
        if status == 405 {
            assert_eq!(resp.header("allow"), Some("GET, POST, DELETE"));
        }
    }
    // An id this session never issued.
    let resp = get_once(
        addr,
        &[("Mcp-Session-Id", s), version, ("Last-Event-ID", "99-0")],
    )
    .await;
    assert_eq!(resp.status, 400);
    // A GET that does not accept an event stream.
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nMcp-Session-Id: {s}\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(raw(addr, request.as_bytes()).await.status, 406);
    // Endpoints without sessions have no streams to open.
    for (sessions, revisions) in [
        (None, &[V26, V1125][..]),
        (Some(SessionConfig::default()), &[V26][..]),
    ] {
        let addr = start(service(sessions, revisions)).await;
        let resp = get_once(addr, &[("Mcp-Session-Id", s), version]).await;
        assert_eq!(resp.status, 405);
        assert_eq!(resp.header("allow"), Some("POST"));
    }
}

#[tokio::test]
async fn a_dropped_stream_resumes_after_its_last_event_id() {
    let addr = server().await;
    for revision in [V1125, V0618] {
        let session = session_for(addr, revision).await;
        let h = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", revision.as_str()),
        ];
        let mut call = Open::send(addr, post_request(addr, &h, &tool_call(5, "slow", true))).await;
        assert_eq!(call.status, 200);
        assert_eq!(call.header("content-type"), Some("text/event-stream"));
        assert!(call.until("notifications/progress").await, "{revision}");
        let ids = call.event_ids();
        let text = call.text();
        if revision == V1125 {
            // The priming event comes first: an id, the reconnection delay, empty data.
            assert!(text.starts_with("id: "), "{text}");
            assert!(text.contains("\nretry: 1000\ndata: \n\n"), "{text}");
            assert_eq!(ids.len(), 2);
            assert!(ids[0].ends_with("-0"));
        } else {
            // 2025-06-18 has no priming event and no retry field.
            assert!(!text.contains("retry:"), "{text}");
            assert_eq!(ids.len(), 1);
        }
        let last = ids.last().unwrap().clone();
        assert!(!text.contains("slow done"));
        // The connection drops before the response; the request runs on.
        drop(call);
        let mut h = h.to_vec();
        h.push(("Last-Event-ID", last.as_str()));
        let mut resumed = Open::send(addr, get(addr, &h)).await;
        assert_eq!(resumed.status, 200);
        assert!(resumed.until("slow done").await, "{revision}");
        assert!(
            resumed.finish_reading().await,
            "the resumed stream ends after the response"
        );
        let replayed = resumed.event_ids();
        assert_eq!(
            replayed.len(),
            1,
            "only what followed {last}: {}",
            resumed.text()
        );
        assert!(!resumed.text().contains("notifications/progress"));
        let (stream, seq) = last.split_once('-').unwrap();
        let next: u64 = seq.parse::<u64>().unwrap() + 1;
        assert_eq!(replayed[0], format!("{stream}-{next}"));
        // Resuming again from the same id replays the response again (the stream is kept).
        let mut again = Open::send(addr, get(addr, &h)).await;
        assert!(again.until("slow done").await);
    }
}

#[tokio::test]
async fn a_handler_closes_its_connection_and_the_client_resumes() {
    let addr = server().await;
    let session = session_for(addr, V1125).await;
    let h = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let mut call = Open::send(
        addr,
        post_request(addr, &h, &tool_call(8, "hang_up", false)),
    )
    .await;
    assert_eq!(call.header("content-type"), Some("text/event-stream"));
    assert!(call.finish_reading().await, "the connection ends early");
    let ids = call.event_ids();
    assert_eq!(ids.len(), 1, "only the priming event: {}", call.text());
    assert!(!call.text().contains("after reconnect"));
    let mut h = h.to_vec();
    h.push(("Last-Event-ID", ids[0].as_str()));
    let mut resumed = Open::send(addr, get(addr, &h)).await;
    assert!(resumed.until("after reconnect").await);
    assert!(resumed.text().contains(r#""id":8"#));

    // 2025-06-18 has no early close: the handler finds no ResponseStream and answers in JSON.
    let session = session_for(addr, V0618).await;
    let resp = post(
        addr,
        &[
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        tool_call(9, "hang_up", false).as_bytes(),
    )
    .await;
    assert_eq!(resp.header("content-type"), Some("application/json"));
    assert!(resp.text().contains("no stream to close"));
}

#[tokio::test]
async fn cancelled_notifications_stop_the_request_without_a_response() {
    let addr = server().await;
    let session = session_for(addr, V1125).await;
    let h = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    // The answer's head waits until the request notifies or ends, so it is read in a task.
    let request = post_request(addr, &h, &tool_call(77, "forever", false));
    let call = tokio::spawn(Open::send(addr, request));
    // Give the handler a moment to start.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77,"reason":"user"}}"#;
    assert_eq!(post(addr, &h, cancel.as_bytes()).await.status, 202);
    let mut call = call.await.unwrap();
    assert_eq!(call.status, 200);
    assert!(
        call.finish_reading().await,
        "the cancelled request's answer ends"
    );
    assert!(
        !call.text().contains("\"id\":77"),
        "no response: {}",
        call.text()
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
    while !CANCELLED.load(Ordering::SeqCst) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        CANCELLED.load(Ordering::SeqCst),
        "the handler saw the cancellation"
    );
}

#[tokio::test]
async fn streams_end_when_their_session_idles_out() {
    let addr = start(service(
        Some(SessionConfig::new().idle_timeout(Duration::from_secs(1))),
        &[V1125],
    ))
    .await;
    let session = session_for(addr, V1125).await;
    let h = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let mut stream = Open::send(addr, get(addr, &h)).await;
    assert_eq!(stream.status, 200);
    assert!(
        stream.finish_reading().await,
        "the stream ends after the idle timeout"
    );
    assert!(stream.text().contains(": keep-alive"));
    assert_eq!(get_once(addr, &h).await.status, 404);
}

#[tokio::test]
async fn the_2026_revision_streams_without_ids() {
    let addr = server().await;
    let body = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let resp = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "slow"),
            // Ignored: 2026-07-28 streams are not resumable.
            ("Last-Event-ID", "1-1"),
        ],
        body.as_bytes(),
    )
    .await;
    assert_eq!(resp.header("content-type"), Some("text/event-stream"));
    let text = resp.text();
    assert!(text.contains("notifications/progress") && text.contains("slow done"));
    assert!(!text.contains("id: ") && !text.contains("retry:"), "{text}");
}

#[tokio::test]
async fn shutdown_ends_open_streams_at_once() {
    let server = tollgate::Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        service(Some(SessionConfig::default()), &[V1125]),
    )
    .await
    .unwrap();
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_with_shutdown(async {
        let _ = stopped.await;
    }));
    let session = session_for(addr, V1125).await;
    let h = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let mut stream = Open::send(addr, get(addr, &h)).await;
    assert_eq!(stream.status, 200);
    let _ = stop.send(());
    // The shutdown timeout is 10 s; an open stream must not hold the server that long.
    let finished = tokio::time::timeout(Duration::from_secs(3), serving).await;
    assert!(finished.is_ok(), "the server stopped promptly");
    assert!(stream.finish_reading().await, "the stream ended");
}
