//! The limits matrix: every request and response limit at its bound and one past it, over real
//! HTTP on loopback, on each revision (2026-07-28, 2025-11-25, 2025-06-18), with the production
//! defaults. The request at the bound succeeds; the one past it gets exactly the fixed code and
//! status. The evaluation budget (one million operations) is reached over HTTP for input (the
//! ordinary invalid-arguments answer) and for output (the fixed -32603), and the output and
//! string ceilings cannot be raised. (Limits that are not per-request — schema size, evaluation concurrency, sessions,
//! headers, mirrored values — are tested at the bound where they live; see docs/reliability.md.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;

use support::{META, Response, post, start};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    content::ImageContent,
    tool::{CompleteResult, OperationResult, ToolOutput},
};

const MIB: usize = 1024 * 1024;

async fn echo(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("ok").into())
}

fn size(args: &JsonObject, name: &str) -> usize {
    args.get(name)
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_u64())
        .unwrap_or(0) as usize
}

async fn text(
    _: &RequestContext,
    args: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    // Several blocks, each within the string ceiling, so only the response ceiling is reached.
    let mut left = size(args.raw(), "n");
    let mut out = ToolOutput::builder();
    while left > 0 {
        let take = left.min(MIB - 1);
        out = out.add_content(tollgate::content::TextContent::new("x".repeat(take)));
        left -= take;
    }
    Ok(CompleteResult::with_tool_output(out.build()).build().into())
}

async fn blob(
    _: &RequestContext,
    args: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, tollgate::content::ContentError> {
    let out = ToolOutput::builder()
        .add_content(ImageContent::new(
            &vec![0u8; size(args.raw(), "n")],
            "image/png",
        )?)
        .build();
    Ok(CompleteResult::with_tool_output(out).build().into())
}

const ALL: [ProtocolVersion; 3] = [
    ProtocolVersion::V2026_07_28,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2025_06_18,
];

async fn server() -> std::net::SocketAddr {
    let raw =
        |name: &str| ToolRegistration::with_name(name.to_owned(), ALL).json_object_arguments();
    let endpoint = Endpoint::with_path("/mcp", ALL, Implementation::new("limits", "1"))
        .legacy_sessions(None)
        .add_tool(raw("echo").handler(echo).build().unwrap())
        .add_tool(raw("text").handler(text).build().unwrap())
        .add_tool(raw("blob").handler(blob).build().unwrap())
        .build()
        .unwrap();
    start(McpService::new(endpoint)).await
}

/// A `tools/call` of `tool` whose arguments are `arguments`, on `revision`.
async fn call(
    addr: std::net::SocketAddr,
    revision: ProtocolVersion,
    tool: &str,
    arguments: &str,
) -> Response {
    let (body, headers) = request(revision, tool, arguments);
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    post(addr, &headers, body.as_bytes()).await
}

fn request(
    revision: ProtocolVersion,
    tool: &str,
    arguments: &str,
) -> (String, Vec<(&'static str, String)>) {
    if revision == ProtocolVersion::V2026_07_28 {
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments},{META}}}}}"#
            ),
            vec![
                ("MCP-Protocol-Version", revision.as_str().to_owned()),
                ("Mcp-Method", "tools/call".to_owned()),
                ("Mcp-Name", tool.to_owned()),
            ],
        )
    } else {
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
            ),
            vec![("MCP-Protocol-Version", revision.as_str().to_owned())],
        )
    }
}

fn ok(resp: &Response, what: &str) {
    assert_eq!(
        resp.status,
        200,
        "{what}: {}",
        &resp.text()[..resp.text().len().min(300)]
    );
    assert!(resp.json().get("result").is_some(), "{what}");
}

fn refused(resp: &Response, status: u16, code: i64, what: &str) {
    assert_eq!((resp.status, resp.code()), (status, code), "{what}");
}

/// Arguments whose request body is exactly `target` bytes: `{"p":["…","…",…]}` with strings
/// each under the string ceiling.
fn arguments_for_body(revision: ProtocolVersion, target: usize) -> String {
    let base = request(revision, "echo", r#"{"p":[]}"#).0.len();
    let mut fill = target - base;
    let mut parts = Vec::new();
    while fill > 0 {
        // Each element costs its quotes, plus a comma after the first.
        let overhead = if parts.is_empty() { 2 } else { 3 };
        let take = (fill - overhead).min(MIB - 16);
        parts.push(format!("\"{}\"", "a".repeat(take)));
        fill -= take + overhead;
    }
    format!(r#"{{"p":[{}]}}"#, parts.join(","))
}

#[tokio::test]
async fn request_body_bytes_10_mib() {
    let addr = server().await;
    for revision in ALL {
        let at = arguments_for_body(revision, 10 * MIB);
        assert_eq!(request(revision, "echo", &at).0.len(), 10 * MIB);
        ok(&call(addr, revision, "echo", &at).await, "10 MiB body");
        let past = arguments_for_body(revision, 10 * MIB + 1);
        refused(
            &call(addr, revision, "echo", &past).await,
            400,
            -32700,
            "10 MiB + 1 body",
        );
    }
}

#[tokio::test]
async fn values_100_000() {
    let addr = server().await;
    for revision in ALL {
        // Count the values of the request with an empty array, then fill it to 100,000.
        let base = tollgate::json::from_str(
            &request(revision, "echo", r#"{"p":[]}"#).0,
            &Default::default(),
        )
        .unwrap();
        let used = count(&base);
        let elements = |n: usize| format!(r#"{{"p":[{}]}}"#, vec!["0"; n].join(","));
        ok(
            &call(addr, revision, "echo", &elements(100_000 - used)).await,
            "100,000 values",
        );
        refused(
            &call(addr, revision, "echo", &elements(100_001 - used)).await,
            400,
            -32700,
            "100,001 values",
        );
    }
}

fn count(v: &JsonValue) -> usize {
    1 + match v {
        JsonValue::Array(a) => a.iter().map(count).sum(),
        JsonValue::Object(o) => o.iter().map(|(_, v)| count(v)).sum(),
        _ => 0,
    }
}

#[tokio::test]
async fn depth_128() {
    let addr = server().await;
    for revision in ALL {
        // The envelope, params and arguments are three levels, the member one more.
        let nest =
            |levels: usize| format!(r#"{{"p":{}0{}}}"#, "[".repeat(levels), "]".repeat(levels));
        ok(&call(addr, revision, "echo", &nest(125)).await, "depth 128");
        refused(
            &call(addr, revision, "echo", &nest(126)).await,
            400,
            -32700,
            "depth 129",
        );
    }
}

#[tokio::test]
async fn string_units_1_048_576_decoded_and_as_spelled() {
    let addr = server().await;
    for revision in ALL {
        let decoded = |n: usize| format!(r#"{{"p":"{}"}}"#, "a".repeat(n));
        ok(
            &call(addr, revision, "echo", &decoded(MIB)).await,
            "1,048,576 units",
        );
        refused(
            &call(addr, revision, "echo", &decoded(MIB + 1)).await,
            400,
            -32700,
            "1,048,577 units",
        );
        // Each escaped newline is one decoded unit but two token units.
        let newlines = |n: usize| format!(r#"{{"p":"{}"}}"#, "\\n".repeat(n));
        ok(
            &call(addr, revision, "echo", &newlines(MIB / 2)).await,
            "524,288 newlines",
        );
        refused(
            &call(addr, revision, "echo", &newlines(MIB / 2 + 1)).await,
            400,
            -32700,
            "524,289 newlines",
        );
        // A supplementary character is two units, spelled as a surrogate pair escape twelve.
        let pairs = |n: usize| format!(r#"{{"p":"{}"}}"#, "\\uD83D\\uDE80".repeat(n));
        ok(
            &call(addr, revision, "echo", &pairs(MIB / 12)).await,
            "surrogate pairs within the token ceiling",
        );
        refused(
            &call(addr, revision, "echo", &pairs(MIB / 12 + 1)).await,
            400,
            -32700,
            "surrogate pairs past the token ceiling",
        );
    }
}

#[tokio::test]
async fn response_4_mib() {
    let addr = server().await;
    for revision in ALL {
        // Measure the response around an empty text, then size the text to reach 4 MiB exactly.
        let zero = call(addr, revision, "text", r#"{"n":0}"#).await;
        let overhead = zero.body.len();
        // Each block adds `{"type":"text","text":""}`, and a comma after the first.
        let block = r#",{"type":"text","text":""}"#.len();
        let text_for = |total: usize| {
            let blocks = (total - overhead).div_ceil(MIB - 1 + block);
            total - overhead - blocks * block + 1
        };
        let at = call(
            addr,
            revision,
            "text",
            &format!(r#"{{"n":{}}}"#, text_for(4 * MIB)),
        )
        .await;
        ok(&at, "a 4 MiB response");
        assert_eq!(at.body.len(), 4 * MIB, "{revision}");
        let past = call(
            addr,
            revision,
            "text",
            &format!(r#"{{"n":{}}}"#, text_for(4 * MIB) + 1),
        )
        .await;
        refused(&past, 200, -32603, "a 4 MiB + 1 response");
    }
}

#[tokio::test]
async fn inline_bytes_786_432() {
    let addr = server().await;
    for revision in ALL {
        ok(
            &call(addr, revision, "blob", r#"{"n":786432}"#).await,
            "786,432 inline bytes",
        );
        refused(
            &call(addr, revision, "blob", r#"{"n":786433}"#).await,
            200,
            -32603,
            "786,433 inline bytes",
        );
    }
}

#[test]
fn schema_nodes_4_096_and_depth_64() {
    let v = [ProtocolVersion::V2026_07_28];
    let register = |document: String| {
        let deep_json = tollgate::json::JsonLimits::default()
            .with_max_depth(512)
            .unwrap();
        let schema = tollgate::json::from_str(&document, &deep_json).unwrap();
        ToolRegistration::with_name("s", v)
            .input_schema(&schema)
            .map(|_| ())
    };
    // The root plus n property schemas.
    let wide = |n: usize| {
        let props: Vec<String> = (0..n).map(|i| format!(r#""p{i}":{{}}"#)).collect();
        format!(
            r#"{{"type":"object","properties":{{{}}}}}"#,
            props.join(",")
        )
    };
    assert!(register(wide(4095)).is_ok(), "4,096 nodes");
    assert_eq!(
        register(wide(4096)).map_err(|e| e.kind()),
        Err(tollgate::BuildErrorKind::InputSchema),
        "4,097 nodes"
    );
    // Depth: the root is level 1.
    let deep = |levels: usize| {
        let mut s = String::from(r#"{"type":"object""#);
        for _ in 1..levels {
            s.push_str(r#","properties":{"x":{"type":"object""#);
        }
        s.push_str(&"}}".repeat(levels - 1));
        s.push('}');
        s
    };
    assert!(register(deep(64)).is_ok(), "depth 64");
    assert!(register(deep(65)).is_err(), "depth 65");
}

/// An item of [`Many`]: ten members, so each element costs about twenty-five evaluation
/// operations against the derived output schema.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Wide {
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    e: u8,
    f: u8,
    g: u8,
    h: u8,
    i: u8,
    j: u8,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Many {
    items: Vec<Wide>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct HowMany {
    n: u32,
}

async fn many(
    _: &RequestContext,
    args: ToolArguments<HowMany>,
    _: &InvocationFeatures,
) -> Result<Many, Infallible> {
    let n = args.converted().n as usize;
    let wide = || Wide {
        a: 0,
        b: 0,
        c: 0,
        d: 0,
        e: 0,
        f: 0,
        g: 0,
        h: 0,
        i: 0,
        j: 0,
    };
    Ok(Many {
        items: (0..n).map(|_| wide()).collect(),
    })
}

/// An input schema whose evaluation costs about twelve operations per element of `p`.
const COSTLY_INPUT: &str = r#"{"type":"object","properties":{"p":{"items":{"allOf":[true,true,true,true,true,true,true,true,true,true]}}}}"#;

async fn budget_server() -> std::net::SocketAddr {
    let schema =
        tollgate::json::from_str(COSTLY_INPUT, &tollgate::json::JsonLimits::default()).unwrap();
    let endpoint = Endpoint::with_path("/mcp", ALL, Implementation::new("budget", "1"))
        .legacy_sessions(None)
        .add_tool(
            ToolRegistration::with_name("costly", ALL)
                .input_schema(&schema)
                .unwrap()
                .handler(echo)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("many", ALL)
                .argument_and_output_types::<HowMany, Many>()
                .handler(many)
                .structured_content_text_mirror(false)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    start(McpService::new(endpoint)).await
}

fn zeros(n: usize) -> String {
    format!(r#"{{"p":[{}]}}"#, vec!["0"; n].join(","))
}

#[tokio::test]
async fn input_evaluation_budget_1_000_000_operations() {
    let addr = budget_server().await;
    for revision in ALL {
        // 50,000 elements: about 600,000 operations. 99,000 (inside the 100,000-value bound):
        // about 1.2 million, valid or not.
        ok(
            &call(addr, revision, "costly", &zeros(50_000)).await,
            "within the budget",
        );
        let past = call(addr, revision, "costly", &zeros(99_000)).await;
        if revision == ProtocolVersion::V2025_06_18 {
            refused(&past, 200, -32602, "past the input budget, 2025-06-18");
        } else {
            // The ordinary input-validation answer: a tool error with the fixed text.
            assert_eq!(past.status, 200, "{revision}");
            let result = past.result();
            assert_eq!(
                result.get("isError"),
                Some(&JsonValue::Bool(true)),
                "{revision}"
            );
            assert!(
                past.text().contains(tollgate::tool::INVALID_ARGUMENTS_TEXT),
                "{revision}"
            );
        }
    }
}

#[tokio::test]
async fn output_evaluation_budget_1_000_000_operations() {
    let addr = budget_server().await;
    for revision in ALL {
        let small = call(addr, revision, "many", r#"{"n":5000}"#).await;
        ok(&small, "an output within the budget");
        // 60,000 wide items: well over a million operations, in about 2.6 MB of output
        // (inside the 4 MiB ceiling): the fixed internal error on every revision.
        let big = call(addr, revision, "many", r#"{"n":60000}"#).await;
        assert!(big.body.len() < 1024, "an error, not a truncated result");
        refused(&big, 200, -32603, "an output past the evaluation budget");
        assert!(!big.text().contains(r#""a":0"#));
    }
}

#[test]
fn the_output_and_string_ceilings_are_fixed() {
    use tollgate::endpoint::EndpointLimits;
    use tollgate::json::{JsonLimits, OutputLimits};
    let build = |limits: EndpointLimits| {
        Endpoint::with_path(
            "/mcp",
            [ProtocolVersion::V2026_07_28],
            Implementation::new("c", "1"),
        )
        .limits(limits)
        .build()
        .map(|_| ())
        .map_err(|e| e.kind())
    };
    let above = Err(tollgate::BuildErrorKind::LimitAboveCeiling);
    let output = |bytes| {
        EndpointLimits::new().output(
            OutputLimits::default()
                .with_max_output_bytes(bytes)
                .unwrap(),
        )
    };
    assert_eq!(EndpointLimits::MAX_OUTPUT_BYTES, 4 * MIB);
    assert!(build(output(4 * MIB)).is_ok());
    assert!(build(output(1024)).is_ok(), "lowering is allowed");
    assert_eq!(build(output(4 * MIB + 1)), above);
    let strings = |units| {
        EndpointLimits::new().output(
            OutputLimits::default()
                .with_max_string_units(units)
                .unwrap(),
        )
    };
    assert_eq!(EndpointLimits::MAX_STRING_UNITS, 1_048_576);
    assert!(build(strings(1_048_576)).is_ok());
    assert!(build(strings(100)).is_ok());
    assert_eq!(build(strings(1_048_577)), above);
    let input = |units| {
        EndpointLimits::new().json(JsonLimits::default().with_max_string_units(units).unwrap())
    };
    assert!(build(input(1_048_576)).is_ok());
    assert_eq!(build(input(1_048_577)), above);
    // The request body's own ceiling (16 MiB) is unchanged.
    let body = EndpointLimits::new().json(
        JsonLimits::default()
            .with_max_input_bytes(16 * MIB)
            .unwrap(),
    );
    assert!(build(body).is_ok());
}
