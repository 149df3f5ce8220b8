//! The 2025-11-25 and 2025-06-18 revisions beside 2026-07-28 on one endpoint, over real HTTP:
//! lifecycle, sessions, and each revision's projection, side by side.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::time::Duration;

use support::{Response, call, post, raw, start};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    content::{Icon, ResourceLink},
    endpoint::SessionConfig,
    tool::{CompleteResult, INVALID_ARGUMENTS_TEXT, OperationResult, ToolOutput},
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const LEGACY: [ProtocolVersion; 2] = [V1125, V0618];

async fn link(
    ctx: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, tollgate::content::ContentError> {
    let link = ResourceLink::new("https://example.com/a", "a")?
        .add_icon(Icon::with_source("https://example.com/i.png")?);
    let caps = ctx.client_capabilities().elicitation();
    let out = ToolOutput::builder()
        .add_content(link)
        .structured_content(
            JsonObject::builder()
                .insert("revision", ctx.protocol_version().as_str())
                .insert("elicitation", caps)
                .build(),
        )
        .build();
    Ok(CompleteResult::with_tool_output(out).build().into())
}

async fn array(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let value: JsonValue = vec![JsonValue::from(1), JsonValue::from(2)].into();
    Ok(
        CompleteResult::with_tool_output(ToolOutput::builder().structured_content(value).build())
            .build()
            .into(),
    )
}

fn endpoint(sessions: Option<SessionConfig>) -> Endpoint {
    let all = [V26, V1125, V0618];
    let strict = from_str(
        r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    let mirrored = from_str(
        r#"{"type":"object","properties":{"t":{"type":"string","x-mcp-header":"T"}}}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    Endpoint::with_path(
        "/mcp",
        all,
        Implementation::new("legacy-test", "1.0.0").description("desc"),
    )
    .instructions("be nice")
    .legacy_sessions(sessions)
    .add_tool(
        ToolRegistration::with_name("link", all)
            .json_object_arguments()
            .handler(link)
            .add_icon(Icon::with_source("https://example.com/t.png").unwrap())
            .build()
            .unwrap(),
    )
    .add_tool(
        ToolRegistration::with_name("array", all)
            .json_object_arguments()
            .handler(array)
            .build()
            .unwrap(),
    )
    .add_tool(
        ToolRegistration::with_name("strict", all)
            .input_schema(&strict)
            .unwrap()
            .handler(array)
            .build()
            .unwrap(),
    )
    .add_tool(
        ToolRegistration::with_name("only.2025-11-25", [V1125])
            .json_object_arguments()
            .handler(array)
            .build()
            .unwrap(),
    )
    .add_tool(
        ToolRegistration::with_name("mirrored", [V26])
            .input_schema(&mirrored)
            .unwrap()
            .handler(array)
            .build()
            .unwrap(),
    )
    .build()
    .unwrap()
}

async fn server(sessions: Option<SessionConfig>) -> std::net::SocketAddr {
    start(McpService::new(endpoint(sessions))).await
}

/// `initialize` for `revision`, returning the response (with its session header).
async fn initialize(addr: std::net::SocketAddr, requested: &str, capabilities: &str) -> Response {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{requested}","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    );
    post(addr, &[], body.as_bytes()).await
}

/// Sends a 2025 request with the revision header and (when given) the session.
async fn legacy(
    addr: std::net::SocketAddr,
    revision: ProtocolVersion,
    session: Option<&str>,
    method: &str,
    params: &str,
) -> Response {
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":"r1","method":"{method}","params":{{{params}}}}}"#);
    let mut headers = vec![("MCP-Protocol-Version", revision.as_str())];
    if let Some(s) = session {
        headers.push(("Mcp-Session-Id", s));
    }
    post(addr, &headers, body.as_bytes()).await
}

async fn session_for(addr: std::net::SocketAddr, revision: ProtocolVersion) -> String {
    let resp = initialize(addr, revision.as_str(), "{}").await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.header("mcp-session-id").expect("a session").to_owned()
}

#[tokio::test]
async fn initialize_negotiates_and_describes_each_revision() {
    let addr = server(Some(SessionConfig::default())).await;
    for (requested, expected) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2024-11-05", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("junk", "2025-11-25"),
    ] {
        let resp = initialize(addr, requested, "{}").await;
        assert_eq!(resp.status, 200);
        let result = resp.result();
        assert_eq!(
            result.get("protocolVersion").and_then(JsonValue::as_str),
            Some(expected),
            "{requested}"
        );
        assert!(
            result.get("resultType").is_none(),
            "2025 results carry no resultType"
        );
        assert_eq!(
            result.get("instructions").and_then(JsonValue::as_str),
            Some("be nice")
        );
        let info = result.get("serverInfo").unwrap();
        assert_eq!(
            info.get("name").and_then(JsonValue::as_str),
            Some("legacy-test")
        );
        // 2025-06-18's Implementation has no description.
        assert_eq!(info.get("description").is_some(), expected != "2025-06-18");
        assert_eq!(
            result
                .get("capabilities")
                .and_then(|c| c.get("tools"))
                .and_then(|t| t.get("listChanged")),
            Some(&JsonValue::Bool(false))
        );
        let session = resp.header("mcp-session-id").unwrap();
        assert!(session.len() == 32 && session.bytes().all(|b| b.is_ascii_hexdigit()));
    }
    for bad in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    ] {
        let resp = post(addr, &[], bad.as_bytes()).await;
        assert_eq!((resp.status, resp.code()), (200, -32602), "{bad}");
        assert!(resp.header("mcp-session-id").is_none());
    }
}

#[tokio::test]
async fn sessions_are_required_bound_to_their_revision_and_end_with_delete() {
    let addr = server(Some(SessionConfig::default())).await;
    for revision in LEGACY {
        let session = session_for(addr, revision).await;
        let ok = legacy(addr, revision, Some(&session), "ping", "").await;
        assert_eq!(ok.status, 200);
        assert_eq!(ok.text(), r#"{"jsonrpc":"2.0","id":"r1","result":{}}"#);
        // The initialized notification is accepted without a body.
        let note = post(
            addr,
            &[
                ("MCP-Protocol-Version", revision.as_str()),
                ("Mcp-Session-Id", &session),
            ],
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        )
        .await;
        assert_eq!((note.status, note.body.len()), (202, 0));
        // Missing, unknown, and a mismatched revision.
        let missing = legacy(addr, revision, None, "ping", "").await;
        assert_eq!(
            (missing.status, missing.code(), missing.message()),
            (400, -32600, "Session required".to_owned())
        );
        let unknown = legacy(
            addr,
            revision,
            Some("0123456789abcdef0123456789abcdef"),
            "ping",
            "",
        )
        .await;
        assert_eq!(
            (unknown.status, unknown.message()),
            (404, "Session not found".to_owned())
        );
        let other = if revision == V1125 { V0618 } else { V1125 };
        let mixed = legacy(addr, other, Some(&session), "ping", "").await;
        assert_eq!((mixed.status, mixed.code()), (400, -32600));
        // After initialize the revision header is required (clients MUST send it).
        let body = br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
        let bare = post(addr, &[("Mcp-Session-Id", &session)], body).await;
        assert_eq!((bare.status, bare.code()), (400, -32600));
        let note = post(
            addr,
            &[("Mcp-Session-Id", &session)],
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        )
        .await;
        assert_eq!(note.status, 400);
        // DELETE ends it; afterwards it is unknown.
        let delete = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(raw(addr, delete.as_bytes()).await.status, 200);
        assert_eq!(raw(addr, delete.as_bytes()).await.status, 404);
        assert_eq!(
            legacy(addr, revision, Some(&session), "ping", "")
                .await
                .status,
            404
        );
    }
}

#[tokio::test]
async fn sessions_expire_and_are_bounded() {
    let config = SessionConfig::new()
        .max_sessions(2)
        .idle_timeout(Duration::from_secs(1));
    let addr = server(Some(config)).await;
    let a = session_for(addr, V1125).await;
    let _b = session_for(addr, V1125).await;
    let full = initialize(addr, "2025-11-25", "{}").await;
    assert_eq!(
        (full.status, full.code(), full.message()),
        (503, -32603, "Server busy".to_owned())
    );
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(
        legacy(addr, V1125, Some(&a), "ping", "").await.status,
        404,
        "expired"
    );
    assert_eq!(
        initialize(addr, "2025-11-25", "{}").await.status,
        200,
        "expired sessions make room"
    );
}

#[tokio::test]
async fn stateless_mode_needs_only_the_revision_header() {
    let addr = server(None).await;
    let resp = initialize(addr, "2025-11-25", "{}").await;
    assert_eq!(resp.status, 200);
    assert!(resp.header("mcp-session-id").is_none());
    for revision in LEGACY {
        assert_eq!(legacy(addr, revision, None, "ping", "").await.status, 200);
    }
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let unsupported = post(addr, &[("MCP-Protocol-Version", "2024-11-05")], body).await;
    assert_eq!((unsupported.status, unsupported.code()), (400, -32022));
    let delete =
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: x\r\nConnection: close\r\n\r\n";
    assert_eq!(raw(addr, delete.as_bytes()).await.status, 405);
}

fn names(result: &JsonValue) -> Vec<String> {
    result
        .get("tools")
        .and_then(JsonValue::as_array)
        .unwrap()
        .iter()
        .map(|t| {
            t.get("name")
                .and_then(JsonValue::as_str)
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[tokio::test]
async fn each_revision_lists_exactly_its_tools_in_its_shape() {
    let addr = server(Some(SessionConfig::default())).await;
    for (revision, expected, icons) in [
        (
            V1125,
            vec!["link", "array", "strict", "only.2025-11-25"],
            true,
        ),
        (V0618, vec!["link", "array", "strict"], false),
    ] {
        let session = session_for(addr, revision).await;
        let result = legacy(addr, revision, Some(&session), "tools/list", "")
            .await
            .result();
        assert_eq!(names(&result), expected);
        assert!(
            result.get("resultType").is_none()
                && result.get("ttlMs").is_none()
                && result.get("cacheScope").is_none()
        );
        let link = &result
            .get("tools")
            .and_then(JsonValue::as_array)
            .unwrap()
            .as_slice()[0];
        assert_eq!(link.get("icons").is_some(), icons, "{revision}");
    }
    let modern = support::send(addr, "tools/list", "").await.result();
    assert_eq!(names(&modern), vec!["link", "array", "strict", "mirrored"]);
    assert!(modern.get("resultType").is_some());
}

#[tokio::test]
async fn calls_project_per_revision() {
    let addr = server(Some(SessionConfig::default())).await;
    for revision in LEGACY {
        let resp = initialize(addr, revision.as_str(), r#"{"elicitation":{}}"#).await;
        let session = resp.header("mcp-session-id").unwrap().to_owned();
        let call = |name: &str, args: &str| {
            let params = format!(r#""name":"{name}","arguments":{args}"#);
            let session = session.clone();
            async move { legacy(addr, revision, Some(&session), "tools/call", &params).await }
        };
        // Capabilities declared at initialize reach the handler; resource-link icons follow the
        // revision.
        let result = call("link", "{}").await.result();
        assert!(result.get("resultType").is_none());
        assert_eq!(
            result
                .get("structuredContent")
                .and_then(|s| s.get("revision"))
                .and_then(JsonValue::as_str),
            Some(revision.as_str())
        );
        assert_eq!(
            result
                .get("structuredContent")
                .and_then(|s| s.get("elicitation")),
            Some(&JsonValue::Bool(true))
        );
        let block = &result
            .get("content")
            .and_then(JsonValue::as_array)
            .unwrap()
            .as_slice()[0];
        assert_eq!(block.get("icons").is_some(), revision == V1125);
        // A non-object structured value cannot be projected onto a 2025 revision.
        let resp = call("array", "{}").await;
        assert_eq!(
            (resp.status, resp.code(), resp.message()),
            (200, -32603, "Internal error".to_owned())
        );
        // Invalid arguments: 2025-06-18 keeps -32602; 2025-11-25 completes with isError.
        let resp = call("strict", r#"{"n":"x"}"#).await;
        if revision == V0618 {
            assert_eq!(
                (resp.status, resp.code(), resp.message()),
                (200, -32602, "Invalid params".to_owned())
            );
        } else {
            let result = resp.result();
            assert_eq!(result.get("isError"), Some(&JsonValue::Bool(true)));
            assert_eq!(support::first_text(&result), INVALID_ARGUMENTS_TEXT);
        }
        // Unknown tools, including one that exists only on 2026-07-28, and unknown methods.
        for name in ["nope", "mirrored"] {
            let resp = call(name, "{}").await;
            assert_eq!(
                (resp.status, resp.code(), resp.message()),
                (200, -32602, "Unknown tool".to_owned())
            );
        }
        let resp = legacy(addr, revision, Some(&session), "server/discover", "").await;
        assert_eq!((resp.status, resp.code()), (200, -32601));
    }
    // The same array result is fine on 2026-07-28.
    let modern = call(addr, "array", "{}", &[]).await;
    assert_eq!(modern.status, 200);
    assert!(
        modern
            .result()
            .get("structuredContent")
            .and_then(JsonValue::as_array)
            .is_some()
    );
}

#[tokio::test]
async fn parse_errors_are_400_on_every_revision() {
    let addr = server(Some(SessionConfig::default())).await;
    let session = session_for(addr, V1125).await;
    for headers in [
        vec![
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", session.as_str()),
        ],
        vec![("MCP-Protocol-Version", "2025-06-18")],
        vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
    ] {
        let resp = post(addr, &headers, b"{not json").await;
        assert_eq!(
            (resp.status, resp.code(), resp.message()),
            (400, -32700, "Parse error".to_owned())
        );
    }
}

#[tokio::test]
async fn a_modern_only_endpoint_refuses_initialize() {
    let v = [V26];
    let endpoint = Endpoint::with_path("/mcp", v, Implementation::new("m", "1"))
        .add_tool(
            ToolRegistration::with_name("array", v)
                .json_object_arguments()
                .handler(array)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let resp = initialize(addr, "2025-11-25", "{}").await;
    assert_eq!((resp.status, resp.code()), (404, -32601));
}

#[tokio::test]
async fn registration_rules_for_2025_revisions() {
    use tollgate::BuildErrorKind;
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct In {}
    async fn numbers(
        _: &RequestContext,
        _: ToolArguments<In>,
        _: &InvocationFeatures,
    ) -> Result<Vec<u8>, Infallible> {
        Ok(vec![1])
    }
    // What a 2025 revision cannot serve is refused when the endpoint is built, naming the
    // tool, the endpoint path and the tool's revisions.
    let both = [V26, V1125];
    let refused = |tool: ToolRegistration| {
        Endpoint::with_path("/catalog/mcp", both, Implementation::new("m", "1"))
            .add_tool(tool)
            .build()
            .unwrap_err()
    };
    let numbers_tool = |revisions: &[tollgate::ProtocolVersion]| {
        ToolRegistration::with_name(
            "numbers",
            revisions
                .iter()
                .copied()
                .collect::<tollgate::endpoint::ProtocolVersions>(),
        )
        .argument_and_output_types::<In, Vec<u8>>()
        .handler(numbers)
        .build()
        .unwrap()
    };
    let err = refused(numbers_tool(&both));
    assert_eq!(
        (err.kind(), err.tool(), err.path(), err.revisions()),
        (
            BuildErrorKind::LegacyOutputNotObject,
            Some("numbers"),
            Some("/catalog/mcp"),
            both.into_iter().collect()
        )
    );
    let text = err.to_string();
    assert!(
        text.contains("`numbers`") && text.contains("/catalog/mcp") && text.contains("2025-11-25"),
        "{text}"
    );
    assert!(
        Endpoint::with_path("/mcp", both, Implementation::new("m", "1"))
            .add_tool(numbers_tool(&[V26]))
            .build()
            .is_ok()
    );
    let mirrored = from_str(
        r#"{"type":"object","properties":{"t":{"type":"string","x-mcp-header":"T"}}}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    let tool = ToolRegistration::with_name("m", [V26, V1125])
        .input_schema(&mirrored)
        .unwrap()
        .handler(array)
        .build()
        .unwrap();
    let err = refused(tool);
    assert_eq!(
        (err.kind(), err.path()),
        (
            BuildErrorKind::MirroredHeaderOnLegacyRevision,
            Some("/catalog/mcp")
        )
    );
    // Request state exists only on 2026-07-28; declared input requests are served on 2025
    // through requests inside the call.
    use tollgate::tool::{InputRequestDeclaration, InputRequestKind, InputRequirement};
    let declared = ToolRegistration::with_name("ask", [V26, V1125])
        .json_object_arguments()
        .handler(array)
        .input_request_declarations([InputRequestDeclaration::new(
            InputRequestKind::Elicitation,
            InputRequirement::Conditional,
        )])
        .build()
        .unwrap();
    assert!(
        Endpoint::with_path("/catalog/mcp", both, Implementation::new("m", "1"))
            .add_tool(declared)
            .build()
            .is_ok()
    );
    let stateful = ToolRegistration::with_name("keep", [V26, V1125])
        .json_object_arguments()
        .handler(array)
        .request_state_mode(tollgate::tool::RequestStateMode::FrameworkProtected)
        .build()
        .unwrap();
    let err = refused(stateful);
    assert_eq!(
        (err.kind(), err.tool(), err.path()),
        (
            BuildErrorKind::RequestStateOnLegacyRevision,
            Some("keep"),
            Some("/catalog/mcp")
        )
    );
    let err = Endpoint::with_path("/mcp", [V26], Implementation::new("m", "1"))
        .add_tool(
            ToolRegistration::with_name("a", [V1125])
                .json_object_arguments()
                .handler(array)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.tool(), err.path()),
        (
            BuildErrorKind::RevisionOutsideEndpoint,
            Some("a"),
            Some("/mcp")
        )
    );
}

async fn chatty(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    if let Some(log) = features.find::<tollgate::context::RequestLogger>() {
        log.log(tollgate::context::LogLevel::Debug, "debug detail");
        log.log_from(tollgate::context::LogLevel::Warning, "db", "slow query");
    }
    Ok(CompleteResult::from_tool_text("done").into())
}

fn logging_service(sessions: Option<SessionConfig>, logging: bool) -> McpService {
    let all = [V26, V1125];
    McpService::new(
        Endpoint::with_path("/mcp", all, Implementation::new("log", "1"))
            .logging(logging)
            .legacy_sessions(sessions)
            .add_tool(
                ToolRegistration::with_name("chatty", all)
                    .json_object_arguments()
                    .handler(chatty)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    )
}

fn log_events(resp: &Response) -> Vec<String> {
    resp.text()
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| d.contains("notifications/message"))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn log_messages_follow_the_level_each_revision_sets() {
    let addr = start(logging_service(Some(SessionConfig::default()), true)).await;
    // 2025-11-25: logging/setLevel in the session, then the call streams what passes the level.
    let init = initialize(addr, "2025-11-25", "{}").await;
    assert!(
        init.result()
            .get("capabilities")
            .and_then(|c| c.get("logging"))
            .is_some()
    );
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let call = r#""name":"chatty","arguments":{}"#;
    let quiet = legacy(addr, V1125, Some(&session), "tools/call", call).await;
    assert!(log_events(&quiet).is_empty(), "no level chosen, no logs");
    let set = legacy(
        addr,
        V1125,
        Some(&session),
        "logging/setLevel",
        r#""level":"warning""#,
    )
    .await;
    assert_eq!(set.text(), r#"{"jsonrpc":"2.0","id":"r1","result":{}}"#);
    let bad = legacy(
        addr,
        V1125,
        Some(&session),
        "logging/setLevel",
        r#""level":"loud""#,
    )
    .await;
    assert_eq!(bad.code(), -32602);
    let resp = legacy(addr, V1125, Some(&session), "tools/call", call).await;
    assert_eq!(resp.header("content-type"), Some("text/event-stream"));
    assert_eq!(
        log_events(&resp),
        vec![
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"db","data":"slow query"}}"#
        ]
    );
    // 2026-07-28: each request names its level in _meta.
    let body = |level: &str| {
        let meta = if level.is_empty() {
            support::META.to_owned()
        } else {
            support::META.replace(
                "\"_meta\":{",
                &format!("\"_meta\":{{\"io.modelcontextprotocol/logLevel\":\"{level}\","),
            )
        };
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"chatty","arguments":{{}},{meta}}}}}"#
        )
    };
    let h = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "chatty"),
    ];
    assert_eq!(
        log_events(&post(addr, &h, body("debug").as_bytes()).await).len(),
        2
    );
    assert!(log_events(&post(addr, &h, body("").as_bytes()).await).is_empty());
    let resp = post(addr, &h, body("chatter").as_bytes()).await;
    assert_eq!((resp.status, resp.code()), (400, -32602));
}

#[tokio::test]
async fn set_level_needs_logging_and_a_session() {
    let off = start(logging_service(Some(SessionConfig::default()), false)).await;
    let session = session_for(off, V1125).await;
    assert_eq!(
        legacy(
            off,
            V1125,
            Some(&session),
            "logging/setLevel",
            r#""level":"info""#
        )
        .await
        .code(),
        -32601
    );
    let stateless = start(logging_service(None, true)).await;
    let init = initialize(stateless, "2025-11-25", "{}").await;
    assert!(
        init.result()
            .get("capabilities")
            .and_then(|c| c.get("logging"))
            .is_none(),
        "nothing would remember the level"
    );
    assert_eq!(
        legacy(
            stateless,
            V1125,
            None,
            "logging/setLevel",
            r#""level":"info""#
        )
        .await
        .code(),
        -32601
    );
}

/// Every combination of the `MCP-Protocol-Version` header and the body's `_meta` revision on an
/// endpoint serving all three: equal ones are served (`tools/list`, 200); unequal ones are the
/// 2026-07-28 transport's header mismatch, 400 and -32020, whichever revision the header names
/// (before, a 2025 header with a 2026-07-28 body was a 2025 request without its session).
#[tokio::test]
async fn a_header_and_meta_revision_that_disagree_are_a_header_mismatch() {
    let addr = server(None).await;
    for header in [V26, V1125, V0618] {
        for body in [V26, V1125, V0618] {
            let params = format!(
                r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#,
                body.as_str()
            );
            let request = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{params}}}}}"#
            );
            let mut headers = vec![("MCP-Protocol-Version", header.as_str())];
            if header == V26 {
                headers.push(("Mcp-Method", "tools/list"));
            }
            let resp = post(addr, &headers, request.as_bytes()).await;
            if header == body {
                assert_eq!(resp.status, 200, "{header:?} {body:?}: {}", resp.text());
                assert!(resp.json().get("result").is_some());
            } else {
                assert_eq!(
                    (resp.status, resp.code()),
                    (400, -32020),
                    "{header:?} {body:?}"
                );
            }
        }
    }
    // A notification that disagrees gets the status alone.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let resp = post(
        addr,
        &[("MCP-Protocol-Version", "2025-11-25")],
        note.as_bytes(),
    )
    .await;
    assert_eq!((resp.status, resp.body.len()), (400, 0));
}

/// Requests of `hold` running now, and the permits that let them finish.
static HELD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static RELEASE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(0);

/// Runs until the test releases it.
async fn hold(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    HELD.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    if let Ok(permit) = RELEASE.acquire().await {
        permit.forget();
    }
    HELD.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    Ok(
        CompleteResult::with_tool_output(ToolOutput::builder().build())
            .build()
            .into(),
    )
}

/// Waits (a bounded number of short pauses) until `n` calls of `hold` run.
async fn until_held(n: usize) {
    for _ in 0..1_000 {
        if HELD.load(std::sync::atomic::Ordering::SeqCst) == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("{n} calls never ran at once");
}

#[tokio::test]
async fn a_session_runs_at_most_its_cap_of_requests_at_once() {
    let sessions = SessionConfig::default().max_requests_per_session(2);
    let endpoint = Endpoint::with_path("/mcp", LEGACY, Implementation::new("cap", "1"))
        .legacy_sessions(Some(sessions))
        .add_tool(
            ToolRegistration::with_name("hold", LEGACY)
                .json_object_arguments()
                .handler(hold)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let session = session_for(addr, V1125).await;
    let params = r#""name":"hold","arguments":{}"#;
    let running = |session: String| {
        tokio::spawn(async move { legacy(addr, V1125, Some(&session), "tools/call", params).await })
    };
    // At the cap: two running at once.
    let first = [running(session.clone()), running(session.clone())];
    until_held(2).await;
    // One past it: refused at once, without running.
    let past = legacy(addr, V1125, Some(&session), "tools/call", params).await;
    assert_eq!(past.status, 503, "{}", past.text());
    assert_eq!(
        (past.code(), past.message().as_str()),
        (-32603, "Server busy")
    );
    // Another session has a cap of its own.
    let other = session_for(addr, V1125).await;
    let third = running(other);
    until_held(3).await;
    // Once they end, the places are given back.
    RELEASE.add_permits(3);
    for call in first.into_iter().chain([third]) {
        assert_eq!(call.await.unwrap().status, 200);
    }
    until_held(0).await;
    let again = running(session);
    until_held(1).await;
    RELEASE.add_permits(1);
    assert_eq!(again.await.unwrap().status, 200);
}
