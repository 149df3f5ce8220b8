//! The stdio transport: newline-delimited JSON-RPC through an in-memory pipe pair, each
//! revision, framing limits and cancellation, live catalogs, per-principal views, MCP Apps
//! metadata per declaration, a 2025 handler's requests to its client (`asks.rs`), and
//! 2025-11-25's tasks with their input asked in lines (`tasks.rs`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_slice, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext, ToolArguments,
    ToolRegistration,
    endpoint::EndpointLimits,
    tool::{CompleteResult, OperationResult},
    transport::StdioServer,
};

mod stdio {
    mod asks;
    mod tasks;
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

static CANCELLED: AtomicUsize = AtomicUsize::new(0);

async fn echo(
    _: &RequestContext,
    a: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_structured_content(a.raw().clone()).into())
}

async fn wait(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    f: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let token = f.cancellation().clone();
    tokio::spawn(async move {
        token.cancelled().await;
        CANCELLED.fetch_add(1, Ordering::SeqCst);
    });
    f.cancellation().cancelled().await;
    Ok(CompleteResult::from_tool_text("done").into())
}

async fn progress(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    f: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    if let Some(p) = f.find::<tollgate::context::ProgressReporter>() {
        let _ = p.report(1.0, Some(2.0), None);
        let _ = p.report(2.0, Some(2.0), None);
    }
    Ok(CompleteResult::from_tool_text("done").into())
}

fn endpoint(max_bytes: usize) -> Endpoint {
    let all = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];
    let mirrored = from_str(
        r#"{"type":"object","properties":{"t":{"type":"string","x-mcp-header":"T"}}}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    Endpoint::with_path("/mcp", all, Implementation::new("stdio-test", "1"))
        .limits(
            EndpointLimits::new().json(
                JsonLimits::default()
                    .with_max_input_bytes(max_bytes)
                    .unwrap(),
            ),
        )
        .add_tool(
            ToolRegistration::with_name("echo", all)
                .json_object_arguments()
                .handler(echo)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("wait", all)
                .json_object_arguments()
                .handler(wait)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("progress", [ProtocolVersion::V2026_07_28])
                .json_object_arguments()
                .handler(progress)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("mirrored", [ProtocolVersion::V2026_07_28])
                .input_schema(&mirrored)
                .unwrap()
                .handler(echo)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

struct Pipe {
    input: tokio::io::DuplexStream,
    output: tokio::io::Lines<BufReader<tokio::io::DuplexStream>>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

fn start(max_bytes: usize) -> Pipe {
    serve(endpoint(max_bytes))
}

fn serve(endpoint: Endpoint) -> Pipe {
    let (client_in, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_out) = tokio::io::duplex(1 << 20);
    let server = tokio::spawn(StdioServer::new(endpoint).serve(server_in, server_out));
    Pipe {
        input: client_in,
        output: BufReader::new(client_out).lines(),
        server,
    }
}

impl Pipe {
    async fn send(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).await.unwrap();
        self.input.write_all(b"\n").await.unwrap();
    }

    async fn receive(&mut self) -> JsonValue {
        let line = tokio::time::timeout(Duration::from_secs(5), self.output.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        from_slice(line.as_bytes(), &JsonLimits::default()).unwrap()
    }
}

fn code(v: &JsonValue) -> Option<i64> {
    v.get("error")
        .and_then(|e| e.get("code"))
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_i64())
}

#[tokio::test]
async fn modern_requests_name_their_revision_in_meta() {
    let mut pipe = start(1 << 20);
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#
    ))
    .await;
    let discover = pipe.receive().await;
    assert_eq!(
        discover
            .get("result")
            .and_then(|r| r.get("resultType"))
            .and_then(JsonValue::as_str),
        Some("complete")
    );
    // No headers on stdio: a mirrored tool needs none.
    pipe.send(&format!(r#"{{"jsonrpc":"2.0","id":"m","method":"tools/call","params":{{"name":"mirrored","arguments":{{"t":"x"}},{META}}}}}"#)).await;
    let call = pipe.receive().await;
    assert_eq!(call.get("id").and_then(JsonValue::as_str), Some("m"));
    assert!(
        call.get("result")
            .and_then(|r| r.get("structuredContent"))
            .is_some()
    );
    // Missing _meta, unknown methods, unsupported revisions: the same fixed errors.
    pipe.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#)
        .await;
    assert_eq!(code(&pipe.receive().await), Some(-32602));
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{{META}}}}}"#
    ))
    .await;
    assert_eq!(code(&pipe.receive().await), Some(-32601));
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{{{}}}}}"#,
        META.replace("2026-07-28", "1999-01-01")
    ))
    .await;
    assert_eq!(code(&pipe.receive().await), Some(-32022));
    drop(pipe.input);
    assert!(
        pipe.server.await.unwrap().is_ok(),
        "the server ends when its input does"
    );
}

#[tokio::test]
async fn framing_errors_and_limits() {
    let limit = 512;
    let mut pipe = start(limit);
    pipe.send("{not json").await;
    let parse = pipe.receive().await;
    assert_eq!(code(&parse), Some(-32700));
    assert!(parse.get("id").is_none());
    pipe.send("[]").await;
    assert_eq!(code(&pipe.receive().await), Some(-32600));
    // A line of exactly the limit is read; one byte more is a parse error, and the stream goes on.
    let base = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"echo","arguments":{{"p":""}},{META}}}}}"#
    );
    let at = base.replace(
        r#""p":"""#,
        &format!(r#""p":"{}""#, "a".repeat(limit - base.len())),
    );
    assert_eq!(at.len(), limit);
    pipe.send(&at).await;
    assert!(pipe.receive().await.get("result").is_some());
    let past = base.replace(
        r#""p":"""#,
        &format!(r#""p":"{}""#, "a".repeat(limit - base.len() + 1)),
    );
    pipe.send(&past).await;
    assert_eq!(code(&pipe.receive().await), Some(-32700));
    pipe.send("").await;
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{{{META}}}}}"#
    ))
    .await;
    assert_eq!(
        pipe.receive()
            .await
            .get("id")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64()),
        Some(6)
    );
}

#[tokio::test]
async fn legacy_clients_initialize_once_per_process() {
    let mut pipe = start(1 << 20);
    pipe.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    let init = pipe.receive().await;
    assert_eq!(
        init.get("result")
            .and_then(|r| r.get("protocolVersion"))
            .and_then(JsonValue::as_str),
        Some("2025-11-25")
    );
    pipe.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    assert_eq!(
        tollgate::json::to_string(&pipe.receive().await, &Default::default()).unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
    );
    pipe.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .await;
    let list = pipe.receive().await;
    let result = list.get("result").unwrap();
    assert!(result.get("resultType").is_none());
    let names: Vec<_> = result
        .get("tools")
        .and_then(JsonValue::as_array)
        .unwrap()
        .iter()
        .filter_map(|t| t.get("name").and_then(JsonValue::as_str).map(str::to_owned))
        .collect();
    assert_eq!(names, ["echo", "wait"]);
    pipe.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}"#).await;
    assert!(
        pipe.receive()
            .await
            .get("result")
            .and_then(|r| r.get("structuredContent"))
            .is_some()
    );
}

#[tokio::test]
async fn cancelled_notifications_abort_the_request() {
    let mut pipe = start(1 << 20);
    pipe.send(&format!(r#"{{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{{"name":"wait","arguments":{{}},{META}}}}}"#)).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    pipe.send(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}"#,
    )
    .await;
    // The next request is answered; the cancelled one never is.
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"next","method":"tools/list","params":{{{META}}}}}"#
    ))
    .await;
    assert_eq!(
        pipe.receive().await.get("id").and_then(JsonValue::as_str),
        Some("next")
    );
    for _ in 0..100 {
        if CANCELLED.load(Ordering::SeqCst) == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(CANCELLED.load(Ordering::SeqCst), 1);
    drop(pipe.input);
    pipe.server.await.unwrap().unwrap();
    assert!(
        pipe.output.next_line().await.unwrap().is_none(),
        "nothing was written for the cancelled request"
    );
}

#[tokio::test]
async fn progress_notifications_precede_the_response() {
    let mut pipe = start(1 << 20);
    let meta = META.replace("\"_meta\":{", "\"_meta\":{\"progressToken\":\"p\",");
    pipe.send(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"progress","arguments":{{}},{meta}}}}}"#)).await;
    for expected in [1, 2] {
        let note = pipe.receive().await;
        assert_eq!(
            note.get("method").and_then(JsonValue::as_str),
            Some("notifications/progress")
        );
        assert_eq!(
            note.get("params")
                .and_then(|p| p.get("progress"))
                .and_then(JsonValue::as_number)
                .and_then(|n| n.to_i64()),
            Some(expected)
        );
    }
    assert_eq!(
        pipe.receive()
            .await
            .get("id")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64()),
        Some(1)
    );
}

#[tokio::test]
async fn subscriptions_share_the_channel_and_end_with_it() {
    let mut pipe = start(1 << 20);
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{META}}}}}"#
    ))
    .await;
    let ack = pipe.receive().await;
    assert_eq!(
        ack.get("method").and_then(JsonValue::as_str),
        Some("notifications/subscriptions/acknowledged")
    );
    assert_eq!(
        ack.get("params")
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get("io.modelcontextprotocol/subscriptionId"))
            .and_then(JsonValue::as_str),
        Some("sub")
    );
    // The channel stays usable beside the open subscription.
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"next","method":"tools/list","params":{{{META}}}}}"#
    ))
    .await;
    assert_eq!(
        pipe.receive().await.get("id").and_then(JsonValue::as_str),
        Some("next")
    );
    // The input ends with the subscription still open: the server still finishes.
    drop(pipe.input);
    tokio::time::timeout(Duration::from_secs(5), pipe.server)
        .await
        .expect("the open subscription does not hold the server")
        .unwrap()
        .unwrap();
}

/// A live catalog's change reaches a 2025 session over stdio as a notification line, and the
/// next `tools/list` shows it.
#[tokio::test]
async fn a_live_catalog_change_is_a_list_changed_line_for_a_2025_session() {
    let legacy = [ProtocolVersion::V2025_11_25];
    let tool = |name: &str| {
        ToolRegistration::with_name(name, legacy)
            .json_object_arguments()
            .handler(echo)
            .build()
            .unwrap()
    };
    let endpoint = Endpoint::with_path("/mcp", legacy, Implementation::new("stdio-live", "1"))
        .add_tool(tool("echo"))
        .live_catalogs()
        .build()
        .unwrap();
    let catalogs = endpoint.catalogs().unwrap();
    let (client_in, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_out) = tokio::io::duplex(1 << 20);
    let server = tokio::spawn(StdioServer::new(endpoint).serve(server_in, server_out));
    let mut pipe = Pipe {
        input: client_in,
        output: BufReader::new(client_out).lines(),
        server,
    };
    pipe.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    let init = pipe.receive().await;
    let tools = init
        .get("result")
        .and_then(|r| r.get("capabilities")?.get("tools"));
    assert_eq!(
        tools.and_then(|t| t.get("listChanged")?.as_bool()),
        Some(true)
    );
    catalogs.add_tool(tool("gift")).unwrap();
    let line = pipe.receive().await;
    assert_eq!(
        line.get("method").and_then(JsonValue::as_str),
        Some("notifications/tools/list_changed")
    );
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    let list = pipe.receive().await;
    let names: Vec<String> = list
        .get("result")
        .and_then(|r| r.get("tools")?.as_array().cloned())
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t.get("name")?.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(names, ["echo", "gift"]);
}

/// With a per-principal view, a change outside the session's view is no line on its stream; a
/// change inside it is. The window runs on tokio's paused clock.
#[tokio::test(start_paused = true)]
async fn a_change_outside_the_sessions_view_is_no_line() {
    let legacy = [ProtocolVersion::V2025_11_25];
    let tool = |name: &str| {
        ToolRegistration::with_name(name, legacy)
            .json_object_arguments()
            .handler(echo)
            .build()
            .unwrap()
    };
    let endpoint = Endpoint::with_path("/mcp", legacy, Implementation::new("stdio-view", "1"))
        .add_tool(tool("echo"))
        // The local process is anonymous: it never sees `hidden.*`.
        .view(|who, item| who.principal_name().is_some() || !item.key().starts_with("hidden."))
        .live_catalogs()
        .build()
        .unwrap();
    let catalogs = endpoint.catalogs().unwrap();
    let (client_in, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_out) = tokio::io::duplex(1 << 20);
    let server = tokio::spawn(StdioServer::new(endpoint).serve(server_in, server_out));
    let mut pipe = Pipe {
        input: client_in,
        output: BufReader::new(client_out).lines(),
        server,
    };
    pipe.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    assert!(pipe.receive().await.get("result").is_some());
    catalogs.add_tool(tool("hidden.audit")).unwrap();
    tokio::time::sleep(tollgate::endpoint::LIST_CHANGED_WINDOW * 4).await;
    // The next line is the answer to this request: no notification came before it.
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .await;
    let list = pipe.receive().await;
    assert_eq!(
        list.get("id")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64()),
        Some(1)
    );
    assert!(!format!("{list:?}").contains("hidden.audit"));
    catalogs.add_tool(tool("gift")).unwrap();
    let line = pipe.receive().await;
    assert_eq!(
        line.get("method").and_then(JsonValue::as_str),
        Some("notifications/tools/list_changed")
    );
}

async fn suggest(
    _: &RequestContext,
    _: tollgate::prompt::CompletionRequest,
) -> Result<tollgate::prompt::Completion, Infallible> {
    Ok(tollgate::prompt::Completion::from_values(["one"]))
}

async fn greet(
    _: &RequestContext,
    _: tollgate::prompt::PromptArguments,
    _: &InvocationFeatures,
) -> Result<tollgate::prompt::PromptResult, Infallible> {
    Ok(tollgate::prompt::PromptResult::with_message(
        tollgate::prompt::PromptMessage::user(tollgate::content::TextContent::new("hi")),
    ))
}

/// Every revision, with a titled, annotated tool and a prompt that completes its argument.
fn older_endpoint() -> Endpoint {
    let all = ProtocolVersion::ALL;
    Endpoint::with_path("/mcp", all, Implementation::new("stdio-older", "1"))
        .add_tool(
            ToolRegistration::with_name("echo", all)
                .json_object_arguments()
                .handler(echo)
                .title("Echo")
                .annotations(tollgate::tool::ToolAnnotations::new().read_only_hint(true))
                .build()
                .unwrap(),
        )
        .add_prompt(
            tollgate::prompt::PromptRegistration::with_name("greet", all)
                .handler(greet)
                .add_argument(tollgate::prompt::PromptArgument::optional("who"))
                .completion(suggest)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

/// `initialize` for `revision` on a fresh connection, its `notifications/initialized` sent.
async fn opened(revision: &str) -> (Pipe, JsonValue) {
    let mut pipe = serve(older_endpoint());
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{revision}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    ))
    .await;
    let result = pipe.receive().await.get("result").unwrap().clone();
    pipe.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    (pipe, result)
}

/// 2024-11-05 over stdio: negotiated, with no `completions` capability (while
/// `completion/complete` answers) and tools without annotations; 2025-03-26 beside it has both,
/// its tool's title in the annotations.
#[tokio::test]
async fn the_older_revisions_over_stdio() {
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;
    let complete = r#"{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"o"}}}"#;
    let (mut pipe, result) = opened("2024-11-05").await;
    assert_eq!(
        result.get("protocolVersion").and_then(JsonValue::as_str),
        Some("2024-11-05")
    );
    let capabilities = result.get("capabilities").unwrap();
    assert!(capabilities.get("completions").is_none());
    assert!(capabilities.get("prompts").is_some());
    pipe.send(list).await;
    let tools = pipe.receive().await;
    assert_eq!(
        tollgate::json::to_string(&tools, &Default::default()).unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#
    );
    pipe.send(complete).await;
    let values = pipe.receive().await;
    assert!(
        values
            .get("result")
            .and_then(|r| r.get("completion"))
            .is_some()
    );

    let (mut pipe, result) = opened("2025-03-26").await;
    assert_eq!(
        result.get("protocolVersion").and_then(JsonValue::as_str),
        Some("2025-03-26")
    );
    assert!(
        result
            .get("capabilities")
            .unwrap()
            .get("completions")
            .is_some()
    );
    pipe.send(list).await;
    let tools = pipe.receive().await;
    assert_eq!(
        tollgate::json::to_string(&tools, &Default::default()).unwrap(),
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"},"annotations":{"title":"Echo","readOnlyHint":true}}]}}"#
    );
}

/// Batches on stdio: one line of answers in a 2025-03-26 session (each element through the
/// pipeline, the bad one answered alone, the empty batch one error with `id: null`); in a
/// 2024-11-05 session an array stays the invalid request it is.
#[tokio::test]
async fn batches_in_a_2025_03_26_session_only() {
    let (mut pipe, _) = opened("2025-03-26").await;
    pipe.send(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping","params":7},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]"#)
        .await;
    let answers = pipe.receive().await;
    assert_eq!(
        tollgate::json::to_string(&answers, &Default::default()).unwrap(),
        concat!(
            r#"[{"jsonrpc":"2.0","id":1,"result":{}},"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request"}}]"#
        )
    );
    pipe.send("[]").await;
    assert_eq!(
        tollgate::json::to_string(&pipe.receive().await, &Default::default()).unwrap(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#
    );
    let (mut pipe, _) = opened("2024-11-05").await;
    pipe.send(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)
        .await;
    assert_eq!(
        tollgate::json::to_string(&pipe.receive().await, &Default::default()).unwrap(),
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}"#
    );
}

/// The `_meta` of the one tool of an MCP Apps endpoint's `tools/list` answer, as JSON text.
fn first_tool_meta(list: &JsonValue) -> Option<String> {
    let tools = list.get("result")?.get("tools")?.as_array()?;
    let meta = tools.first()?.get("_meta")?;
    Some(tollgate::json::to_string(meta, &Default::default()).unwrap())
}

fn apps_endpoint() -> Endpoint {
    let tool = ToolRegistration::named("show")
        .json_object_arguments()
        .handler(echo)
        .app_view("ui://t/v")
        .build()
        .unwrap();
    let view = tollgate::AppView::html("ui://t/v", "<p>v</p>")
        .build()
        .unwrap();
    Endpoint::with_path(
        "/mcp",
        [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25],
        Implementation::new("apps", "1"),
    )
    .add_tool(tool)
    .app_view(view)
    .build()
    .unwrap()
}

const UI: &str =
    r#"{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}"#;
const SHOWN: &str = r#"{"ui":{"resourceUri":"ui://t/v","visibility":["model","app"]}}"#;

#[tokio::test]
async fn mcp_apps_metadata_over_stdio_follows_each_declaration() {
    let mut pipe = serve(apps_endpoint());
    for (caps, expected) in [(UI, Some(SHOWN)), ("{}", None), (UI, Some(SHOWN))] {
        pipe.send(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{caps}}}}}}}"#
        ))
        .await;
        assert_eq!(first_tool_meta(&pipe.receive().await).as_deref(), expected);
    }
    // A 2025 process declares once, in `initialize`.
    let mut legacy = serve(apps_endpoint());
    legacy.send(&format!(r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{UI},"clientInfo":{{"name":"t","version":"1"}}}}}}"#)).await;
    let init = legacy.receive().await;
    assert!(
        init.get("result")
            .and_then(|r| r.get("capabilities"))
            .and_then(|c| c.get("extensions"))
            .and_then(|e| e.get("io.modelcontextprotocol/ui"))
            .is_some()
    );
    legacy
        .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    legacy
        .send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .await;
    assert_eq!(
        first_tool_meta(&legacy.receive().await).as_deref(),
        Some(SHOWN)
    );
}
