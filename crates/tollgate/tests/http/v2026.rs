//! The 2026-07-28 endpoint over real HTTP on loopback: every validation row with its exact
//! status, code and text; mirrored arguments; content and output limits; handler failures.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use support::{META, call, first_text, post, raw, request, send, start};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    content::{ImageContent, TextContent},
    context::ClientCapability,
    endpoint::EndpointLimits,
    tool::{CompleteResult, INVALID_ARGUMENTS_TEXT, OperationResult, ToolOutput},
};

const V: ProtocolVersion = ProtocolVersion::V2026_07_28;

async fn echo(
    _: &RequestContext,
    args: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_structured_content(args.raw().clone()).into())
}

/// Only `invalid_arguments_complete_with_the_fixed_text_and_skip_the_handler` calls it.
static COUNTED_CALLS: AtomicUsize = AtomicUsize::new(0);

async fn counted(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    COUNTED_CALLS.fetch_add(1, Ordering::SeqCst);
    Ok(CompleteResult::from_tool_text("counted").into())
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

async fn add(
    ctx: &RequestContext,
    args: ToolArguments<Add>,
    _: &InvocationFeatures,
) -> Result<Sum, Infallible> {
    assert_eq!(ctx.operation_name(), Some("typed.add"));
    assert_eq!(ctx.protocol_version(), V);
    let Add { a, b } = args.into_converted();
    Ok(Sum {
        sum: a.saturating_add(b),
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Wide {
    n: i128,
}

async fn wide(
    _: &RequestContext,
    args: ToolArguments<Wide>,
    _: &InvocationFeatures,
) -> Result<Sum, Infallible> {
    Ok(Sum {
        sum: i64::try_from(args.converted().n).unwrap_or(i64::MAX),
    })
}

#[derive(Serialize, schemars::JsonSchema)]
struct Bounded {
    #[schemars(range(max = 10))]
    n: u32,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct NoArguments {}

async fn bad_output(
    _: &RequestContext,
    _: ToolArguments<NoArguments>,
    _: &InvocationFeatures,
) -> Result<Bounded, Infallible> {
    Ok(Bounded { n: 11 })
}

async fn fail(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, String> {
    Err("database password is hunter2".to_owned())
}

async fn explode(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let v: Vec<u8> = Vec::new();
    // An out-of-bounds index: a real panic in application code.
    let i = v.len() + 3;
    Ok(CompleteResult::from_tool_text(format!("{}", v[i])).into())
}

async fn huge_text(
    _: &RequestContext,
    args: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let n = args
        .raw()
        .get("n")
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_u64())
        .unwrap_or(0);
    let block = "x".repeat(1_000_000);
    let mut out = ToolOutput::builder();
    for _ in 0..n {
        out = out.add_content(TextContent::new(block.as_str()));
    }
    Ok(CompleteResult::with_tool_output(out.build()).build().into())
}

async fn image(
    _: &RequestContext,
    args: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, tollgate::content::ContentError> {
    let n = args
        .raw()
        .get("bytes")
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_u64())
        .unwrap_or(0);
    let data = vec![7u8; usize::try_from(n).unwrap_or(0)];
    let out = ToolOutput::builder()
        .add_content(ImageContent::new(&data, "image/png")?)
        .build();
    Ok(CompleteResult::with_tool_output(out).build().into())
}

const MIRROR_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "tenant": {"type": "string", "x-mcp-header": "Tenant"},
    "count": {"type": "integer", "x-mcp-header": "Count"},
    "flag": {"type": "boolean", "x-mcp-header": "Flag"},
    "place": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
    "note": {"type": "string", "x-mcp-header": "Note"}
  }
}"#;

fn endpoint(limits: EndpointLimits, page_size: usize) -> Endpoint {
    let raw =
        |name: &str| ToolRegistration::with_name(name.to_owned(), [V]).json_object_arguments();
    let echo_schema = from_str(
        r#"{"type":"object","properties":{"q":{"type":"string"},"deep":{}},"additionalProperties":false}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    let mirror_schema = from_str(MIRROR_SCHEMA, &JsonLimits::default()).unwrap();
    let counted_schema = from_str(
        r#"{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    Endpoint::with_path("/mcp", [V], Implementation::new("test-server", "9.9.9"))
        .tools_page_size(page_size)
        .limits(limits)
        .add_tool(
            ToolRegistration::with_name("echo", [V])
                .input_schema(&echo_schema)
                .unwrap()
                .handler(echo)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("typed.add", [V])
                .argument_and_output_types::<Add, Sum>()
                .handler(add)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("typed.wide", [V])
                .argument_and_output_types::<Wide, Sum>()
                .handler(wide)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("typed.bad_output", [V])
                .argument_and_output_types::<NoArguments, Bounded>()
                .handler(bad_output)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("counted", [V])
                .input_schema(&counted_schema)
                .unwrap()
                .handler(counted)
                .build()
                .unwrap(),
        )
        .add_tool(raw("fail").handler(fail).build().unwrap())
        .add_tool(raw("wait").handler(wait).build().unwrap())
        .add_tool(raw("explode").handler(explode).build().unwrap())
        .add_tool(raw("huge.text").handler(huge_text).build().unwrap())
        .add_tool(raw("huge.image").handler(image).build().unwrap())
        .add_tool(
            ToolRegistration::with_name("mirror", [V])
                .input_schema(&mirror_schema)
                .unwrap()
                .handler(echo)
                .build()
                .unwrap(),
        )
        .add_tool(
            raw("needs.elicitation")
                .handler(echo)
                .require_client_capability(ClientCapability::Elicitation)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

/// Set by work the `wait` tool hands off, once the request's cancellation token fires.
static HANDED_OFF_WORK_CANCELLED: AtomicUsize = AtomicUsize::new(0);

async fn wait(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let token = features.cancellation().clone();
    tokio::spawn(async move {
        token.cancelled().await;
        HANDED_OFF_WORK_CANCELLED.fetch_add(1, Ordering::SeqCst);
    });
    features.cancellation().cancelled().await;
    Ok(CompleteResult::from_tool_text("cancelled").into())
}

async fn server() -> std::net::SocketAddr {
    start(McpService::new(endpoint(EndpointLimits::default(), 100))).await
}

fn assert_error(resp: &support::Response, status: u16, code: i64, message: &str) {
    assert_eq!(resp.status, status, "{}", resp.text());
    assert_eq!(resp.code(), code, "{}", resp.text());
    assert_eq!(resp.message(), message);
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    assert_eq!(resp.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn discover_describes_the_server() {
    let addr = server().await;
    let resp = send(addr, "server/discover", "").await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    let result = resp.result();
    assert_eq!(
        result.get("resultType").and_then(JsonValue::as_str),
        Some("complete")
    );
    assert_eq!(
        tollgate::json::to_string(
            result.get("supportedVersions").unwrap(),
            &Default::default()
        )
        .unwrap(),
        r#"["2026-07-28"]"#
    );
    assert!(
        result
            .get("capabilities")
            .and_then(|c| c.get("tools"))
            .is_some()
    );
    let info = result
        .get("_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
        .unwrap();
    assert_eq!(
        info.get("name").and_then(JsonValue::as_str),
        Some("test-server")
    );
    assert_eq!(
        result
            .get("ttlMs")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_u64()),
        Some(0)
    );
    assert_eq!(
        result.get("cacheScope").and_then(JsonValue::as_str),
        Some("private")
    );
    assert_eq!(
        resp.json()
            .get("id")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64()),
        Some(7)
    );
}

#[tokio::test]
async fn tools_list_pages_with_opaque_cursors() {
    let addr = start(McpService::new(endpoint(EndpointLimits::default(), 4))).await;
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let params = cursor
            .as_ref()
            .map(|c| format!(r#""cursor":"{c}""#))
            .unwrap_or_default();
        let result = send(addr, "tools/list", &params).await.result();
        assert_eq!(
            result.get("resultType").and_then(JsonValue::as_str),
            Some("complete")
        );
        assert!(result.get("ttlMs").is_some() && result.get("cacheScope").is_some());
        for tool in result
            .get("tools")
            .and_then(JsonValue::as_array)
            .unwrap()
            .iter()
        {
            names.push(
                tool.get("name")
                    .and_then(JsonValue::as_str)
                    .unwrap()
                    .to_owned(),
            );
            assert_eq!(
                tool.get("inputSchema")
                    .and_then(|s| s.get("type"))
                    .and_then(JsonValue::as_str),
                Some("object")
            );
        }
        cursor = result
            .get("nextCursor")
            .and_then(JsonValue::as_str)
            .map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(names.len(), 12);
    assert_eq!(names[0], "echo");
    assert_eq!(names[11], "needs.elicitation");

    for bad in [
        r#""cursor":"bm9wZQ==""#,
        r#""cursor":"""#,
        r#""cursor":"%%%""#,
    ] {
        assert_error(
            &send(addr, "tools/list", bad).await,
            400,
            -32602,
            "Invalid cursor",
        );
    }
    assert_error(
        &send(addr, "tools/list", r#""cursor":5"#).await,
        400,
        -32602,
        "Invalid params",
    );
    // A cursor from a different catalog is refused.
    let other = start(McpService::new(endpoint(EndpointLimits::default(), 3))).await;
    let foreign = send(other, "tools/list", "").await.result();
    let foreign = foreign
        .get("nextCursor")
        .and_then(JsonValue::as_str)
        .unwrap();
    assert_error(
        &send(addr, "tools/list", &format!(r#""cursor":"{foreign}""#)).await,
        400,
        -32602,
        "Invalid cursor",
    );
}

#[tokio::test]
async fn typed_tool_round_trips_with_structured_output_and_text_mirror() {
    let addr = server().await;
    let result = call(addr, "typed.add", r#"{"a":2,"b":40}"#, &[])
        .await
        .result();
    assert_eq!(
        result.get("resultType").and_then(JsonValue::as_str),
        Some("complete")
    );
    assert_eq!(
        result
            .get("structuredContent")
            .and_then(|s| s.get("sum"))
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64()),
        Some(42)
    );
    assert_eq!(first_text(&result), r#"{"sum":42}"#);
    assert!(result.get("isError").is_none());
}

#[tokio::test]
async fn parse_errors_and_json_limits_are_fixed_400s() {
    let addr = server().await;
    for body in [
        &b"{"[..],
        b"",
        b"[1,]",
        b"\xff",
        b"{\"a\":1,\"a\":2}",
        b"\xef\xbb\xbf{}",
    ] {
        let resp = post(
            addr,
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/list"),
            ],
            body,
        )
        .await;
        assert_error(&resp, 400, -32700, "Parse error");
        assert!(resp.json().get("id").is_none());
    }

    // The body byte limit, at and past.
    let json = JsonLimits::default().with_max_input_bytes(2048).unwrap();
    let small = start(McpService::new(endpoint(
        EndpointLimits::new().json(json),
        100,
    )))
    .await;
    let base = request("1", "tools/call", r#""name":"echo","arguments":{"q":""}"#);
    let pad = 2048 - base.len();
    let at = request(
        "1",
        "tools/call",
        &format!(r#""name":"echo","arguments":{{"q":"{}"}}"#, "a".repeat(pad)),
    );
    assert_eq!(at.len(), 2048);
    let h = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    assert_eq!(post(small, &h, at.as_bytes()).await.status, 200);
    let past = request(
        "1",
        "tools/call",
        &format!(
            r#""name":"echo","arguments":{{"q":"{}"}}"#,
            "a".repeat(pad + 1)
        ),
    );
    assert_error(
        &post(small, &h, past.as_bytes()).await,
        400,
        -32700,
        "Parse error",
    );

    // The depth limit (128), at and past: the envelope, params and arguments take 3 levels.
    let nest = |levels: usize| {
        format!(
            r#"{{"deep":{}0{}}}"#,
            "[".repeat(levels),
            "]".repeat(levels)
        )
    };
    let ok = call(addr, "echo", &nest(125), &[]).await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_error(
        &call(addr, "echo", &nest(126), &[]).await,
        400,
        -32700,
        "Parse error",
    );
}

#[tokio::test]
async fn invalid_requests_keep_a_readable_id() {
    let addr = server().await;
    let h = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    for (body, id) in [
        (r#"[]"#, None),
        (r#"{"id":1,"method":"tools/list"}"#, Some(1)),
        (r#"{"jsonrpc":"1.0","id":2,"method":"tools/list"}"#, Some(2)),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","extra":1}"#,
            Some(3),
        ),
        (r#"{"jsonrpc":"2.0","id":4,"method":7}"#, Some(4)),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[]}"#,
            Some(5),
        ),
        (r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#, None),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#, None),
        (r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, Some(1)),
    ] {
        let resp = post(addr, &h, body.as_bytes()).await;
        assert_error(&resp, 400, -32600, "Invalid Request");
        assert_eq!(
            resp.json()
                .get("id")
                .and_then(JsonValue::as_number)
                .and_then(|n| n.to_i64()),
            id,
            "{body}"
        );
    }
}

#[tokio::test]
async fn removed_and_unknown_methods_are_404() {
    let addr = server().await;
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/list",
        "prompts/list",
        "made/up",
    ] {
        assert_error(
            &send(addr, method, "").await,
            404,
            -32601,
            "Method not found",
        );
    }
}

#[tokio::test]
async fn standard_headers_must_agree_with_the_body() {
    let addr = server().await;
    let list = request("1", "tools/list", "");
    let mismatch = |resp: support::Response| assert_error(&resp, 400, -32020, "Header mismatch");
    mismatch(post(addr, &[("Mcp-Method", "tools/list")], list.as_bytes()).await);
    mismatch(
        post(
            addr,
            &[("MCP-Protocol-Version", "2026-07-28")],
            list.as_bytes(),
        )
        .await,
    );
    mismatch(
        post(
            addr,
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
            ],
            list.as_bytes(),
        )
        .await,
    );
    mismatch(
        post(
            addr,
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/list"),
                ("Mcp-Method", "tools/list"),
            ],
            list.as_bytes(),
        )
        .await,
    );
    mismatch(
        post(
            addr,
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("mcp-method", "Tools/List"),
            ],
            list.as_bytes(),
        )
        .await,
    );

    let body = request("1", "tools/call", r#""name":"echo","arguments":{}"#);
    let base = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
    ];
    mismatch(post(addr, &base, body.as_bytes()).await);
    mismatch(
        post(
            addr,
            &[base[0], base[1], ("Mcp-Name", "other")],
            body.as_bytes(),
        )
        .await,
    );
    let resp = post(
        addr,
        &[base[0], base[1], ("Mcp-Name", "=?base64?ZWNobw==?=")],
        body.as_bytes(),
    )
    .await;
    assert_eq!(
        resp.status, 200,
        "the base64 sentinel form of Mcp-Name is decoded"
    );
    // Header names are case-insensitive.
    let resp = post(
        addr,
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("MCP-METHOD", "tools/call"),
            ("mcp-name", "echo"),
        ],
        body.as_bytes(),
    )
    .await;
    assert_eq!(resp.status, 200);
    // The body's revision must agree with the header.
    let other = body.replace(
        r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#,
        r#""io.modelcontextprotocol/protocolVersion":"2025-11-25""#,
    );
    mismatch(
        post(
            addr,
            &[base[0], base[1], ("Mcp-Name", "echo")],
            other.as_bytes(),
        )
        .await,
    );
}

#[tokio::test]
async fn unsupported_versions_list_what_is_supported() {
    let addr = server().await;
    let list = request("1", "tools/list", "");
    for (version, requested) in [
        ("1900-01-01", "1900-01-01"),
        ("2025-06-18", "2025-06-18"),
        ("<script>alert(1)</script>", ""),
    ] {
        let resp = post(
            addr,
            &[
                ("MCP-Protocol-Version", version),
                ("Mcp-Method", "tools/list"),
            ],
            list.as_bytes(),
        )
        .await;
        assert_error(&resp, 400, -32022, "Unsupported protocol version");
        let data = resp
            .json()
            .get("error")
            .and_then(|e| e.get("data"))
            .cloned()
            .unwrap();
        assert_eq!(
            tollgate::json::to_string(data.get("supported").unwrap(), &Default::default()).unwrap(),
            r#"["2026-07-28"]"#
        );
        assert_eq!(
            data.get("requested").and_then(JsonValue::as_str),
            Some(requested)
        );
    }
}

#[tokio::test]
async fn required_meta_fields_are_invalid_params() {
    let addr = server().await;
    let h = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    for body in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x"}}}}"#,
    ] {
        assert_error(
            &post(addr, &h, body.as_bytes()).await,
            400,
            -32602,
            "Invalid params",
        );
    }
}

#[tokio::test]
async fn unknown_tools_are_protocol_errors_that_echo_nothing() {
    let addr = server().await;
    let resp = call(addr, "no.such.tool", "{}", &[]).await;
    assert_error(&resp, 400, -32602, "Unknown tool");
    assert!(!resp.text().contains("no.such.tool"));
    let body = request("1", "tools/call", r#""name":5"#);
    let resp = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "5"),
        ],
        body.as_bytes(),
    )
    .await;
    assert_error(&resp, 400, -32020, "Header mismatch");
    assert_error(
        &call(addr, "echo", "[]", &[]).await,
        400,
        -32602,
        "Invalid params",
    );
    let retry = request(
        "1",
        "tools/call",
        r#""name":"echo","arguments":{},"requestState":"x""#,
    );
    let resp = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "echo"),
        ],
        retry.as_bytes(),
    )
    .await;
    // A state this endpoint never sealed does not open.
    assert_error(&resp, 400, -32602, "Invalid request state");
}

#[tokio::test]
async fn invalid_arguments_complete_with_the_fixed_text_and_skip_the_handler() {
    let addr = server().await;
    for (tool, arguments) in [
        ("counted", r#"{"q":5}"#),
        ("counted", r#"{"secret_name":"secret value"}"#),
        ("typed.add", r#"{"a":1}"#),
        ("typed.add", r#"{"a":"1","b":2}"#),
        // Schema-valid, but binding refuses: the integer expands past 1,024 characters.
        ("typed.wide", r#"{"n":1e2000}"#),
        // Schema-valid, but out of i128's range.
        ("typed.wide", r#"{"n":1e60}"#),
    ] {
        let resp = call(addr, tool, arguments, &[]).await;
        assert_eq!(resp.status, 200, "{tool} {arguments}");
        let result = resp.result();
        assert_eq!(result.get("isError"), Some(&JsonValue::Bool(true)));
        assert_eq!(first_text(&result), INVALID_ARGUMENTS_TEXT);
        assert_eq!(
            result
                .get("content")
                .and_then(JsonValue::as_array)
                .map(|c| c.len()),
            Some(1)
        );
        assert!(!resp.text().contains("secret"));
    }
    assert_eq!(
        COUNTED_CALLS.load(Ordering::SeqCst),
        0,
        "the handler never ran"
    );
    assert_eq!(
        call(addr, "counted", r#"{"q":"fine"}"#, &[]).await.status,
        200
    );
    assert_eq!(COUNTED_CALLS.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn handler_errors_and_panics_are_fixed_internal_errors() {
    let addr = server().await;
    let resp = call(addr, "fail", "{}", &[]).await;
    assert_error(&resp, 200, -32603, "Internal error");
    assert!(!resp.text().contains("hunter2"));
    assert_eq!(
        resp.json()
            .get("id")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64()),
        Some(1)
    );
    assert_error(
        &call(addr, "explode", "{}", &[]).await,
        200,
        -32603,
        "Internal error",
    );
    // The server survives.
    assert_eq!(
        call(addr, "typed.add", r#"{"a":1,"b":1}"#, &[])
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn output_failures_are_internal_errors_in_200() {
    let addr = server().await;
    // Output schema (derived, maximum 10) refuses 11.
    assert_error(
        &call(addr, "typed.bad_output", "{}", &[]).await,
        200,
        -32603,
        "Internal error",
    );
    // 4 MiB response ceiling: three 1 MB texts fit, five do not.
    assert_eq!(call(addr, "huge.text", r#"{"n":3}"#, &[]).await.status, 200);
    assert_error(
        &call(addr, "huge.text", r#"{"n":5}"#, &[]).await,
        200,
        -32603,
        "Internal error",
    );
    // Inline bytes: 786,432 fit, one more does not.
    let at = call(addr, "huge.image", r#"{"bytes":786432}"#, &[]).await;
    assert_eq!(at.status, 200);
    assert!(at.json().get("result").is_some());
    assert_error(
        &call(addr, "huge.image", r#"{"bytes":786433}"#, &[]).await,
        200,
        -32603,
        "Internal error",
    );
}

#[tokio::test]
async fn mirrored_arguments_must_agree_with_their_headers() {
    let addr = server().await;
    let ok = |resp: support::Response| assert_eq!(resp.status, 200, "{}", resp.text());
    let mismatch = |resp: support::Response| assert_error(&resp, 400, -32020, "Header mismatch");

    ok(call(
        addr,
        "mirror",
        r#"{"tenant":"acme"}"#,
        &[("Mcp-Param-Tenant", "acme")],
    )
    .await);
    ok(call(
        addr,
        "mirror",
        r#"{"tenant":"Hello, 世界"}"#,
        &[("Mcp-Param-Tenant", "=?base64?SGVsbG8sIOS4lueVjA==?=")],
    )
    .await);
    ok(call(
        addr,
        "mirror",
        r#"{"tenant":"=?base64?literal?="}"#,
        &[("Mcp-Param-Tenant", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=")],
    )
    .await);
    ok(call(addr, "mirror", "{}", &[]).await);
    ok(call(addr, "mirror", r#"{"note":null}"#, &[]).await);
    mismatch(call(addr, "mirror", r#"{"tenant":"acme"}"#, &[]).await);
    mismatch(call(addr, "mirror", "{}", &[("Mcp-Param-Tenant", "acme")]).await);
    mismatch(
        call(
            addr,
            "mirror",
            r#"{"note":null}"#,
            &[("Mcp-Param-Note", "")],
        )
        .await,
    );
    mismatch(
        call(
            addr,
            "mirror",
            r#"{"tenant":"acme"}"#,
            &[("Mcp-Param-Tenant", "ACME")],
        )
        .await,
    );
    mismatch(
        call(
            addr,
            "mirror",
            r#"{"tenant":"acme"}"#,
            &[("Mcp-Param-Tenant", "acme"), ("Mcp-Param-Tenant", "acme")],
        )
        .await,
    );
    mismatch(
        call(
            addr,
            "mirror",
            r#"{"tenant":"acme"}"#,
            &[("Mcp-Param-Tenant", "=?base64?YWNtZQ?=")],
        )
        .await,
    );

    for body in ["1", "1.0", "1e0", "10e-1"] {
        ok(call(
            addr,
            "mirror",
            &format!(r#"{{"count":{body}}}"#),
            &[("Mcp-Param-Count", "1")],
        )
        .await);
    }
    for header in ["+1", "01", "1.0", "0x1", "1 1"] {
        mismatch(
            call(
                addr,
                "mirror",
                r#"{"count":1}"#,
                &[("Mcp-Param-Count", header)],
            )
            .await,
        );
    }
    mismatch(
        call(
            addr,
            "mirror",
            r#"{"count":0}"#,
            &[("Mcp-Param-Count", "-0")],
        )
        .await,
    );
    ok(call(
        addr,
        "mirror",
        r#"{"count":9007199254740991}"#,
        &[("Mcp-Param-Count", "9007199254740991")],
    )
    .await);
    mismatch(
        call(
            addr,
            "mirror",
            r#"{"count":9007199254740992}"#,
            &[("Mcp-Param-Count", "9007199254740992")],
        )
        .await,
    );
    ok(call(
        addr,
        "mirror",
        r#"{"count":-9007199254740991}"#,
        &[("Mcp-Param-Count", "-9007199254740991")],
    )
    .await);
    mismatch(
        call(
            addr,
            "mirror",
            r#"{"count":-9007199254740992}"#,
            &[("Mcp-Param-Count", "-9007199254740992")],
        )
        .await,
    );

    ok(call(
        addr,
        "mirror",
        r#"{"flag":true}"#,
        &[("Mcp-Param-Flag", "true")],
    )
    .await);
    mismatch(
        call(
            addr,
            "mirror",
            r#"{"flag":true}"#,
            &[("Mcp-Param-Flag", "True")],
        )
        .await,
    );
    mismatch(
        call(
            addr,
            "mirror",
            r#"{"flag":false}"#,
            &[("Mcp-Param-Flag", "true")],
        )
        .await,
    );
    ok(call(
        addr,
        "mirror",
        r#"{"place":{"region":"us-west1"}}"#,
        &[("Mcp-Param-Region", "us-west1")],
    )
    .await);
    mismatch(call(addr, "mirror", r#"{"place":{"region":"us-west1"}}"#, &[]).await);

    // 16 KiB of decoded UTF-8 per value, at and past, plain and base64.
    let at = "a".repeat(16 * 1024);
    ok(call(
        addr,
        "mirror",
        &format!(r#"{{"tenant":"{at}"}}"#),
        &[("Mcp-Param-Tenant", &at)],
    )
    .await);
    let past = "a".repeat(16 * 1024 + 1);
    mismatch(
        call(
            addr,
            "mirror",
            &format!(r#"{{"tenant":"{past}"}}"#),
            &[("Mcp-Param-Tenant", &past)],
        )
        .await,
    );
    let encoded_at = format!("=?base64?{}?=", tollgate_base64(at.as_bytes()));
    ok(call(
        addr,
        "mirror",
        &format!(r#"{{"tenant":"{at}"}}"#),
        &[("Mcp-Param-Tenant", &encoded_at)],
    )
    .await);
    let encoded_past = format!("=?base64?{}?=", tollgate_base64(past.as_bytes()));
    mismatch(
        call(
            addr,
            "mirror",
            &format!(r#"{{"tenant":"{past}"}}"#),
            &[("Mcp-Param-Tenant", &encoded_past)],
        )
        .await,
    );
}

fn tollgate_base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            out.push(if i <= c.len() {
                A[(n >> shift) as usize & 63] as char
            } else {
                '='
            });
        }
    }
    out
}

#[tokio::test]
async fn missing_required_capability_is_400_listing_it() {
    let addr = server().await;
    let resp = call(addr, "needs.elicitation", "{}", &[]).await;
    assert_error(&resp, 400, -32021, "Missing required client capability");
    let data = resp
        .json()
        .get("error")
        .and_then(|e| e.get("data"))
        .cloned()
        .unwrap();
    assert!(
        data.get("requiredCapabilities")
            .and_then(|c| c.get("elicitation"))
            .is_some()
    );
    let body = request(
        "1",
        "tools/call",
        r#""name":"needs.elicitation","arguments":{}"#,
    )
    .replace(
        r#""io.modelcontextprotocol/clientCapabilities":{}"#,
        r#""io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}"#,
    );
    let resp = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "needs.elicitation"),
        ],
        body.as_bytes(),
    )
    .await;
    assert_eq!(resp.status, 200);
}

#[tokio::test]
async fn transport_rules() {
    let addr = server().await;
    let port = addr.port();
    for method in ["GET", "DELETE", "PUT", "OPTIONS"] {
        let resp = raw(
            addr,
            format!(
                "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        .await;
        assert_eq!(resp.status, 405, "{method}");
        assert_eq!(resp.header("allow"), Some("POST"));
    }
    let list = request("1", "tools/list", "");
    let send_raw = |head: String| {
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(list.as_bytes());
        async move { raw(addr, &bytes).await }
    };
    let head = |path: &str, host: &str, ctype: &str, accept: &str, extra: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {ctype}\r\n{accept}MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n{extra}Connection: close\r\nContent-Length: {}\r\n\r\n",
            list.len()
        )
    };
    let host = format!("127.0.0.1:{port}");
    let both = "Accept: application/json, text/event-stream\r\n";
    assert_eq!(
        send_raw(head("/other", &host, "application/json", both, ""))
            .await
            .status,
        404
    );
    assert_eq!(
        send_raw(head("/mcp", &host, "text/plain", both, ""))
            .await
            .status,
        415
    );
    assert_eq!(
        send_raw(head(
            "/mcp",
            &host,
            "application/json",
            "Accept: application/json\r\n",
            ""
        ))
        .await
        .status,
        406
    );
    assert_eq!(
        send_raw(head(
            "/mcp",
            &host,
            "application/json; charset=utf-8",
            "",
            ""
        ))
        .await
        .status,
        200
    );
    assert_eq!(
        send_raw(head(
            "/mcp",
            "evil.example:80",
            "application/json",
            both,
            ""
        ))
        .await
        .status,
        403
    );
    assert_eq!(
        send_raw(head(
            "/mcp",
            &format!("localhost:{port}"),
            "application/json",
            both,
            ""
        ))
        .await
        .status,
        200
    );
    let mixed_case = format!("LocalHost:{port}");
    for (host, accept, status) in [
        // Host names compare without case; the other order of the usual Accept list is as good.
        (
            &mixed_case,
            "Accept: text/event-stream, application/json\r\n",
            200,
        ),
        (
            &host,
            "Accept: application/json, text/event-stream;q=0\r\n",
            406,
        ),
        // The usual list, then a field that is not text: refused, as the general reading
        // refuses.
        (
            &host,
            "Accept: application/json, text/event-stream\r\nAccept: text/caf\u{e9}\r\n",
            406,
        ),
    ] {
        let resp = send_raw(head("/mcp", host, "application/json", accept, "")).await;
        assert_eq!(resp.status, status, "{host} {accept:?}");
    }
    assert_eq!(
        send_raw(head(
            "/mcp",
            &host,
            "application/json",
            both,
            "Origin: https://evil.example\r\n"
        ))
        .await
        .status,
        403
    );
    let local_page = format!("Origin: http://127.0.0.1:{port}\r\n");
    let resp = send_raw(head("/mcp", &host, "application/json", both, &local_page)).await;
    assert_eq!(
        resp.status, 200,
        "a page served from loopback may call a loopback server"
    );
    // Legacy session headers are ignored, never echoed.
    let resp = send_raw(head(
        "/mcp",
        &host,
        "application/json",
        both,
        "Mcp-Session-Id: abc\r\nLast-Event-ID: 5\r\n",
    ))
    .await;
    assert_eq!(resp.status, 200);
    assert!(resp.header("mcp-session-id").is_none());
}

#[tokio::test]
async fn an_allowed_origin_and_host_are_accepted() {
    let service = McpService::builder()
        .endpoint(endpoint(EndpointLimits::default(), 100))
        .allowed_host("mcp.example.com")
        .allowed_origin("https://app.example.com")
        .build()
        .unwrap();
    let addr = start(service).await;
    let list = request("1", "tools/list", "");
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: MCP.example.com\r\nOrigin: https://app.example.com\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{list}",
        list.len()
    );
    assert_eq!(raw(addr, req.as_bytes()).await.status, 200);
}

#[tokio::test]
async fn notifications_are_accepted_without_a_body() {
    let addr = server().await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":1,{META}}}}}"#
    );
    let resp = post(
        addr,
        &[("MCP-Protocol-Version", "2026-07-28")],
        body.as_bytes(),
    )
    .await;
    assert_eq!(resp.status, 202);
    assert!(resp.body.is_empty());
    let resp = post(
        addr,
        &[("MCP-Protocol-Version", "1999-01-01")],
        body.as_bytes(),
    )
    .await;
    assert_eq!(resp.status, 400);
    assert!(resp.body.is_empty());
}

#[tokio::test]
async fn concurrent_requests_may_share_an_id() {
    let addr = server().await;
    let calls = (0..16).map(|i| async move {
        call(addr, "typed.add", &format!(r#"{{"a":{i},"b":0}}"#), &[]).await
    });
    let results = futures_join(calls).await;
    for (i, resp) in results.into_iter().enumerate() {
        let sum = resp
            .result()
            .get("structuredContent")
            .and_then(|s| s.get("sum"))
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64());
        assert_eq!(sum, Some(i as i64));
    }
}

async fn futures_join<F: std::future::Future<Output = support::Response> + Send + 'static>(
    futures: impl Iterator<Item = F>,
) -> Vec<support::Response> {
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test]
async fn a_client_disconnect_cancels_the_invocation() {
    use tokio::io::AsyncWriteExt;
    let addr = server().await;
    let body = request("1", "tools/call", r#""name":"wait","arguments":{}"#);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: wait\r\nContent-Length: {}\r\n\r\n{body}",
        addr.port(),
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(
        HANDED_OFF_WORK_CANCELLED.load(Ordering::SeqCst),
        0,
        "still running while connected"
    );
    drop(stream);
    for _ in 0..100 {
        if HANDED_OFF_WORK_CANCELLED.load(Ordering::SeqCst) == 1 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the cancellation token was not signalled after the client went away");
}

#[tokio::test]
async fn the_aggregate_header_ceiling_at_and_past() {
    let addr = server().await;
    let body = request("1", "tools/list", "");
    let fixed: Vec<(String, String)> = vec![
        ("host".into(), format!("127.0.0.1:{}", addr.port())),
        ("content-type".into(), "application/json".into()),
        (
            "accept".into(),
            "application/json, text/event-stream".into(),
        ),
        ("connection".into(), "close".into()),
        ("content-length".into(), body.len().to_string()),
        ("mcp-protocol-version".into(), "2026-07-28".into()),
        ("mcp-method".into(), "tools/list".into()),
    ];
    let used: usize = fixed
        .iter()
        .map(|(k, v)| k.len() + v.len() + 4)
        .sum::<usize>()
        + "x-pad".len()
        + 4;
    for (extra, status) in [(0, 200), (1, 431)] {
        let pad = "p".repeat(tollgate::transport::DEFAULT_MAX_HEADER_BYTES - used + extra);
        let mut head = String::from("POST /mcp HTTP/1.1\r\n");
        for (k, v) in &fixed {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!("x-pad: {pad}\r\n\r\n{body}"));
        assert_eq!(
            raw(addr, head.as_bytes()).await.status,
            status,
            "{extra} byte(s) past the ceiling"
        );
    }
}

static STREAM_CANCELLED: AtomicUsize = AtomicUsize::new(0);

async fn progress(
    _: &RequestContext,
    args: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let reporter = features.find::<tollgate::context::ProgressReporter>();
    if let Some(p) = reporter {
        assert_eq!(p.report(10.0, Some(100.0), Some("starting")), Ok(()));
        assert_eq!(
            p.report(10.0, Some(100.0), None),
            Ok(()),
            "an equal value is coalesced"
        );
        assert_eq!(
            p.report(5.0, None, None),
            Err(tollgate::context::ProgressError::NotIncreasing)
        );
        assert_eq!(
            p.report(f64::NAN, None, None),
            Err(tollgate::context::ProgressError::NotFinite)
        );
        assert_eq!(p.report(100.5, None, None), Ok(()));
    }
    if args.raw().contains_key("hang") {
        let token = features.cancellation().clone();
        tokio::spawn(async move {
            token.cancelled().await;
            STREAM_CANCELLED.fetch_add(1, Ordering::SeqCst);
        });
        features.cancellation().cancelled().await;
    }
    Ok(CompleteResult::from_tool_text(if reporter.is_some() {
        "with progress"
    } else {
        "without"
    })
    .into())
}

fn progress_service() -> McpService {
    let v = [V];
    McpService::new(
        Endpoint::with_path("/mcp", v, Implementation::new("p", "1"))
            .add_tool(
                ToolRegistration::with_name("progress", v)
                    .json_object_arguments()
                    .handler(progress)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    )
}

fn progress_call(token: &str, arguments: &str) -> String {
    let meta = if token.is_empty() {
        META.to_owned()
    } else {
        META.replace(
            "\"_meta\":{",
            &format!("\"_meta\":{{\"progressToken\":{token},"),
        )
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"progress","arguments":{arguments},{meta}}}}}"#
    )
}

#[tokio::test]
async fn progress_streams_as_sse_before_the_response() {
    let addr = start(progress_service()).await;
    let h = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "progress"),
    ];
    let resp = post(addr, &h, progress_call("\"tok\"", "{}").as_bytes()).await;
    assert_eq!(resp.status, 200);
    assert_eq!(resp.header("content-type"), Some("text/event-stream"));
    assert_eq!(resp.header("cache-control"), Some("no-store"));
    let text = resp.text();
    let data: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    let body = |i: usize| tollgate::json::from_str(data[i], &JsonLimits::default()).unwrap();
    assert_eq!(data.len(), 3, "{text}");
    assert_eq!(
        body(0).get("method").and_then(JsonValue::as_str),
        Some("notifications/progress")
    );
    assert_eq!(
        tollgate::json::to_string(body(0).get("params").unwrap(), &Default::default()).unwrap(),
        r#"{"progressToken":"tok","progress":10,"total":100,"message":"starting"}"#
    );
    assert_eq!(
        body(1)
            .get("params")
            .and_then(|p| p.get("progress"))
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_f64()),
        Some(100.5)
    );
    assert_eq!(
        body(2)
            .get("id")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64()),
        Some(9)
    );
    assert_eq!(
        first_text(&body(2).get("result").cloned().unwrap()),
        "with progress"
    );
    // An integer token works; without a token there is no reporter and the answer is JSON.
    let resp = post(addr, &h, progress_call("7", "{}").as_bytes()).await;
    assert!(resp.text().contains(r#""progressToken":7"#));
    let resp = post(addr, &h, progress_call("", "{}").as_bytes()).await;
    assert_eq!(resp.header("content-type"), Some("application/json"));
    assert_eq!(first_text(&resp.result()), "without");
    // A token of another type is not a progress request.
    let resp = post(addr, &h, progress_call("1.5", "{}").as_bytes()).await;
    assert_eq!(first_text(&resp.result()), "without");
}

#[tokio::test]
async fn dropping_the_stream_cancels_the_invocation() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = start(progress_service()).await;
    let body = progress_call("\"t\"", r#"{"hang":true}"#);
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: progress\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut first = [0u8; 64];
    let n = stream.read(&mut first).await.unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200 OK"));
    drop(stream);
    for _ in 0..100 {
        if STREAM_CANCELLED.load(Ordering::SeqCst) == 1 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the invocation was not cancelled when its stream was dropped");
}

/// RFC 9112 §3.2: a request without `Host`, with two, or with one that is not a host and an
/// optional port, is 400; a well-formed host that is not allowed is the rebinding guard's 403.
#[tokio::test]
async fn host_is_required_once_and_well_formed() {
    let addr = start(McpService::new(
        Endpoint::with_path(
            "/mcp",
            [ProtocolVersion::V2026_07_28],
            Implementation::new("h", "1"),
        )
        .build()
        .unwrap(),
    ))
    .await;
    let list = request("1", "tools/list", "");
    let send = |hosts: &[&str]| {
        let mut head = String::from("POST /mcp HTTP/1.1\r\n");
        for h in hosts {
            head.push_str(&format!("Host: {h}\r\n"));
        }
        head.push_str(&format!(
            "Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{list}",
            list.len()
        ));
        async move { raw(addr, head.as_bytes()).await.status }
    };
    assert_eq!(send(&[]).await, 400, "no Host");
    assert_eq!(send(&["127.0.0.1", "127.0.0.1"]).await, 400, "two");
    for bad in ["a@b", "localhost:", "localhost:123456", "[::1]x", ":80"] {
        assert_eq!(send(&[bad]).await, 400, "{bad}");
    }
    assert_eq!(send(&["evil.example"]).await, 403);
    assert_eq!(send(&["127.0.0.1"]).await, 200);
}

/// Lingering close: a client that writes a whole over-limit body before reading (as many do)
/// reads the fixed 400 instead of a connection reset, whether the length was declared or the
/// body was chunked. The body here (8 MiB) is far past what socket buffers absorb, against a
/// 64 KiB limit.
#[tokio::test]
async fn an_over_limit_body_is_drained_so_the_client_reads_its_answer() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let limits = tollgate::endpoint::EndpointLimits::default().json(
        tollgate::json::JsonLimits::default()
            .with_max_input_bytes(64 * 1024)
            .unwrap(),
    );
    let endpoint = Endpoint::with_path(
        "/mcp",
        [ProtocolVersion::V2026_07_28],
        Implementation::new("big", "1"),
    )
    .limits(limits)
    .build()
    .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let body = vec![b' '; 8 * 1024 * 1024];
    for chunked in [false, true] {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let framing = if chunked {
            "Transfer-Encoding: chunked".to_owned()
        } else {
            format!("Content-Length: {}", body.len())
        };
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nConnection: close\r\n{framing}\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        if chunked {
            for piece in body.chunks(64 * 1024) {
                stream
                    .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                    .await
                    .unwrap();
                stream.write_all(piece).await.unwrap();
                stream.write_all(b"\r\n").await.unwrap();
            }
            stream.write_all(b"0\r\n\r\n").await.unwrap();
        } else {
            stream.write_all(&body).await.unwrap();
        }
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        let text = String::from_utf8_lossy(&answer);
        assert!(
            text.starts_with("HTTP/1.1 400"),
            "chunked={chunked}: {text}"
        );
        assert!(text.contains("-32700"), "chunked={chunked}: {text}");
    }
}
