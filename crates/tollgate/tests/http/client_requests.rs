//! Server-to-client requests on the 2025 revisions over real HTTP: the request on the call's
//! SSE stream, the client's POSTed response resuming the handler, and every refusal.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;

use support::{Open, post, post_request, start};
use tollgate::json::{JsonObject, to_string};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    context::{ClientRequestError, ClientRequests, InputRequest},
    tool::{
        CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement,
        OperationResult,
    },
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;

/// Asks the client for its roots and reports the answer (or why there was none).
async fn roots(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let Some(client) = features.find::<ClientRequests>() else {
        return Ok(CompleteResult::from_tool_text("no client requests here").into());
    };
    let text = match client.send(InputRequest::list_roots()).await {
        Ok(answer) => format!(
            "roots: {}",
            to_string(&answer, &Default::default()).unwrap()
        ),
        Err(ClientRequestError::MissingCapability) => "missing capability".to_owned(),
        Err(ClientRequestError::Rejected) => "rejected".to_owned(),
        Err(ClientRequestError::Undeclared) => "undeclared".to_owned(),
        Err(e) => format!("unavailable: {e}"),
    };
    Ok(CompleteResult::from_tool_text(text).into())
}

async fn server() -> SocketAddr {
    let all = [V26, V1125, V0618];
    start(McpService::new(
        Endpoint::with_path("/mcp", all, Implementation::new("client", "1"))
            .add_tool(
                ToolRegistration::with_name("roots", all)
                    .json_object_arguments()
                    .handler(roots)
                    .input_request_declarations([InputRequestDeclaration::new(
                        InputRequestKind::Roots,
                        InputRequirement::Conditional,
                    )])
                    .build()
                    .unwrap(),
            )
            .add_tool(
                ToolRegistration::with_name("undeclared", all)
                    .json_object_arguments()
                    .handler(roots)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    ))
    .await
}

async fn session(addr: SocketAddr, revision: ProtocolVersion, capabilities: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
        revision.as_str()
    );
    let resp = post(addr, &[], body.as_bytes()).await;
    resp.header("mcp-session-id").unwrap().to_owned()
}

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"roots","arguments":{}}}"#;

/// Starts the call, reads the server's request off the stream, answers it with `answer` (a
/// JSON-RPC member: `"result":...` or `"error":...`), and returns the answer's HTTP status and
/// the call's final text.
async fn round_trip(
    addr: SocketAddr,
    revision: ProtocolVersion,
    session: &str,
    answer: &str,
) -> (u16, String) {
    let h = [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", revision.as_str()),
    ];
    let mut call = Open::send(addr, post_request(addr, &h, CALL)).await;
    assert_eq!(call.header("content-type"), Some("text/event-stream"));
    assert!(
        call.until(r#""method":"roots/list""#).await,
        "{}",
        call.text()
    );
    assert!(
        call.text()
            .contains(r#"{"jsonrpc":"2.0","id":"tollgate-1","method":"roots/list","params":{}}"#)
    );
    let response = format!(r#"{{"jsonrpc":"2.0","id":"tollgate-1",{answer}}}"#);
    let status = post(addr, &h, response.as_bytes()).await.status;
    assert!(call.until(r#""id":5"#).await, "{}", call.text());
    (status, call.text())
}

#[tokio::test]
async fn a_request_on_the_stream_is_answered_by_a_post() {
    let addr = server().await;
    for revision in [V1125, V0618] {
        let s = session(addr, revision, r#"{"roots":{}}"#).await;
        let (status, text) = round_trip(
            addr,
            revision,
            &s,
            r#""result":{"roots":[{"uri":"file:///w"}]}"#,
        )
        .await;
        assert_eq!(status, 202, "{revision}");
        assert!(
            text.contains(r#"roots: {\"roots\":[{\"uri\":\"file:///w\"}]}"#),
            "{text}"
        );
        // An error answer, or a result of the wrong shape, is a rejection.
        let s = session(addr, revision, r#"{"roots":{}}"#).await;
        let (_, text) =
            round_trip(addr, revision, &s, r#""error":{"code":-1,"message":"no"}"#).await;
        assert!(text.contains("rejected"), "{text}");
        let s = session(addr, revision, r#"{"roots":{}}"#).await;
        let (_, text) = round_trip(addr, revision, &s, r#""result":{"roots":7}"#).await;
        assert!(text.contains("rejected"), "{text}");
    }
}

#[tokio::test]
async fn refusals() {
    let addr = server().await;
    // Without the capability nothing is sent.
    let s = session(addr, V1125, "{}").await;
    let h = [
        ("Mcp-Session-Id", s.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let resp = post(addr, &h, CALL.as_bytes()).await;
    assert!(
        resp.text().contains("missing capability"),
        "{}",
        resp.text()
    );
    // A tool that did not declare roots cannot ask for them, whatever the client declared.
    let s = session(addr, V1125, r#"{"roots":{}}"#).await;
    let h2 = [
        ("Mcp-Session-Id", s.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let undeclared = CALL.replace(r#""name":"roots""#, r#""name":"undeclared""#);
    let resp = post(addr, &h2, undeclared.as_bytes()).await;
    assert!(resp.text().contains("undeclared"), "{}", resp.text());
    assert!(!resp.text().contains("roots/list"), "{}", resp.text());
    // A response nobody waits for, or outside a session, is refused.
    let stray = r#"{"jsonrpc":"2.0","id":"tollgate-9","result":{"roots":[]}}"#;
    assert_eq!(post(addr, &h, stray.as_bytes()).await.status, 400);
    assert_eq!(
        post(
            addr,
            &[("MCP-Protocol-Version", "2025-11-25")],
            stray.as_bytes()
        )
        .await
        .status,
        400
    );
    // 2026-07-28 has no server-to-client requests (it uses input_required results).
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"roots","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}}"#;
    let resp = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "roots"),
        ],
        body.as_bytes(),
    )
    .await;
    assert!(
        resp.text().contains("no client requests here"),
        "{}",
        resp.text()
    );
}
