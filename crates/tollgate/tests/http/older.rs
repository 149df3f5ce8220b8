//! The older revisions over real HTTP: 2025-03-26 beside 2025-06-18 (its projection, the
//! revision taken when a request names none, sessions without the revision header) and
//! 2024-11-05, which is not served over HTTP (negotiated away in `initialize`, refused in a
//! header).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;

use support::{Response, post, start};
use tollgate::json::JsonValue;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    content::{ResourceLink, TextContent},
    endpoint::SessionConfig,
    tool::{CompleteResult, OperationResult, ToolAnnotations, ToolOutput},
};

const V0326: ProtocolVersion = ProtocolVersion::V2025_03_26;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const SERVED: [ProtocolVersion; 5] = ProtocolVersion::ALL;

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Sum {
    n: i64,
}

async fn add_one(
    _: &RequestContext,
    args: ToolArguments<Sum>,
    _: &InvocationFeatures,
) -> Result<Sum, Infallible> {
    Ok(Sum {
        n: args.into_converted().n + 1,
    })
}

async fn linked(
    _: &RequestContext,
    _: ToolArguments<tollgate::json::JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, tollgate::content::ContentError> {
    let out = ToolOutput::builder()
        .add_content(ResourceLink::new("https://example.com/a", "a")?)
        .add_content(TextContent::new("see a"))
        .build();
    Ok(CompleteResult::with_tool_output(out).build().into())
}

fn endpoint(sessions: Option<SessionConfig>) -> Endpoint {
    Endpoint::with_path(
        "/mcp",
        SERVED,
        Implementation::new("older", "1.0.0").title("Older"),
    )
    .legacy_sessions(sessions)
    .add_tool(
        ToolRegistration::with_name("add", [V0326, V0618])
            .argument_and_output_types::<Sum, Sum>()
            .handler(add_one)
            .title("Add one")
            .annotations(ToolAnnotations::new().read_only_hint(true))
            .add_icon_source("https://example.com/add.png")
            .build()
            .unwrap(),
    )
    .add_tool(
        ToolRegistration::with_name("linked", SERVED)
            .json_object_arguments()
            .handler(linked)
            .build()
            .unwrap(),
    )
    .build()
    .unwrap()
}

async fn server(sessions: Option<SessionConfig>) -> std::net::SocketAddr {
    start(McpService::new(endpoint(sessions))).await
}

async fn initialize(addr: std::net::SocketAddr, requested: &str) -> Response {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{requested}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    );
    post(addr, &[], body.as_bytes()).await
}

fn body(method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}}}}}"#)
}

#[tokio::test]
async fn initialize_negotiates_the_older_revisions_over_http() {
    let addr = server(None).await;
    for (requested, expected) in [
        ("2025-03-26", "2025-03-26"),
        // 2024-11-05's transport is HTTP+SSE, not served: the newest initialize revision.
        ("2024-11-05", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let resp = initialize(addr, requested).await;
        let result = resp.result();
        assert_eq!(
            result.get("protocolVersion").and_then(JsonValue::as_str),
            Some(expected),
            "{requested}"
        );
        let info = result.get("serverInfo").unwrap();
        // 2025-03-26's Implementation is a name and a version.
        assert_eq!(
            info.get("title").is_some(),
            expected != "2025-03-26",
            "{requested}"
        );
    }
    // A header naming 2024-11-05 names a revision not served here.
    let refused = post(
        addr,
        &[("MCP-Protocol-Version", "2024-11-05")],
        body("tools/list", "").as_bytes(),
    )
    .await;
    assert_eq!((refused.status, refused.code()), (400, -32022));
    // The revisions to retry with over HTTP leave 2024-11-05 out.
    let supported = refused.json();
    let supported = supported
        .get("error")
        .and_then(|e| e.get("data"))
        .and_then(|d| d.get("supported"))
        .unwrap();
    assert_eq!(
        tollgate::json::to_string(supported, &Default::default()).unwrap(),
        r#"["2026-07-28","2025-11-25","2025-06-18","2025-03-26"]"#
    );
}

/// The same typed tool on 2025-03-26 and 2025-06-18: the descriptor's title moves into the
/// annotations and the output schema, title and icons are left out; the call's structured
/// content travels as its text mirror alone.
#[tokio::test]
async fn a_typed_tool_on_2025_03_26_and_2025_06_18() {
    let addr = server(None).await;
    // No header, no session: taken as 2025-03-26.
    let list = post(addr, &[], body("tools/list", "").as_bytes()).await;
    assert_eq!(list.status, 200, "{}", list.text());
    assert_eq!(
        list.text(),
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add","#,
            r#""inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"Sum","type":"object","#,
            r#""properties":{"n":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807}},"required":["n"]},"#,
            r#""annotations":{"title":"Add one","readOnlyHint":true}},"#,
            r#"{"name":"linked","inputSchema":{"type":"object"}}]}}"#
        )
    );
    let june = post(
        addr,
        &[("MCP-Protocol-Version", "2025-06-18")],
        body("tools/list", "").as_bytes(),
    )
    .await;
    let tools = june
        .result()
        .get("tools")
        .and_then(JsonValue::as_array)
        .unwrap()
        .clone();
    let tool = &tools.as_slice()[0];
    assert_eq!(
        tool.get("title").and_then(JsonValue::as_str),
        Some("Add one")
    );
    assert!(tool.get("outputSchema").is_some());
    assert!(tool.get("icons").is_none());

    let call = body("tools/call", r#""name":"add","arguments":{"n":1}"#);
    let march = post(
        addr,
        &[("MCP-Protocol-Version", "2025-03-26")],
        call.as_bytes(),
    )
    .await;
    assert_eq!(
        march.text(),
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"n\":2}"}]}}"#
    );
    let june = post(
        addr,
        &[("MCP-Protocol-Version", "2025-06-18")],
        call.as_bytes(),
    )
    .await;
    assert_eq!(
        june.text(),
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"n\":2}"}],"structuredContent":{"n":2}}}"#
    );
    // A resource link is left out where the revision has none (as icons are).
    let link = body("tools/call", r#""name":"linked","arguments":{}"#);
    let march = post(addr, &[], link.as_bytes()).await;
    assert_eq!(
        march.text(),
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"see a"}]}}"#
    );
    let june = post(
        addr,
        &[("MCP-Protocol-Version", "2025-06-18")],
        link.as_bytes(),
    )
    .await;
    assert!(june.text().contains(r#""type":"resource_link""#));
    // Invalid arguments stay a JSON-RPC error there, as on 2025-06-18.
    let bad = body("tools/call", r#""name":"add","arguments":{"n":"x"}"#);
    let march = post(addr, &[], bad.as_bytes()).await;
    assert_eq!((march.status, march.code()), (200, -32602));
}

/// With sessions, a 2025-03-26 session takes requests without the revision header (that
/// revision has none); a 2025-06-18 session still requires it; a request with neither header
/// nor session needs a session.
#[tokio::test]
async fn a_2025_03_26_session_takes_requests_without_the_header() {
    let addr = server(Some(SessionConfig::default())).await;
    let opened = initialize(addr, "2025-03-26").await;
    let session = opened.header("mcp-session-id").unwrap().to_owned();
    let ping = body("ping", "");
    let ok = post(addr, &[("Mcp-Session-Id", &session)], ping.as_bytes()).await;
    assert_eq!(ok.text(), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    let named = post(
        addr,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-03-26"),
        ],
        ping.as_bytes(),
    )
    .await;
    assert_eq!(named.status, 200);
    let mixed = post(
        addr,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        ping.as_bytes(),
    )
    .await;
    assert_eq!((mixed.status, mixed.code()), (400, -32600));
    let june = initialize(addr, "2025-06-18").await;
    let june = june.header("mcp-session-id").unwrap().to_owned();
    let bare = post(addr, &[("Mcp-Session-Id", &june)], ping.as_bytes()).await;
    assert_eq!((bare.status, bare.code()), (400, -32600));
    let none = post(addr, &[], ping.as_bytes()).await;
    assert_eq!(
        (none.status, none.code(), none.message()),
        (400, -32600, "Session required".to_owned())
    );
}

/// A session's `GET` stream without the revision header: opened on 2025-03-26 (whose revision
/// has none), refused on 2025-06-18 (which requires it).
#[tokio::test]
async fn a_2025_03_26_session_opens_its_stream_without_the_header() {
    let addr = server(Some(SessionConfig::default())).await;
    for (revision, status) in [("2025-03-26", 200), ("2025-06-18", 400)] {
        let opened = initialize(addr, revision).await;
        let session = opened.header("mcp-session-id").unwrap().to_owned();
        let get = format!(
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n",
            addr.port()
        );
        let stream = support::Open::send(addr, get).await;
        assert_eq!(stream.status, status, "{revision}");
    }
}
