//! Interception, sanitizing and the request context over real HTTP, on every revision: the
//! interceptor runs after admission and before input validation (counters prove what ran), may
//! short-circuit, add a request-scoped value, or fail (a panic or an output of the wrong kind is
//! the fixed -32603); a task it creates with invalid arguments gets the fixed invalid-arguments
//! answer; the sanitizer rewrites handler results, the fixed invalid-arguments result and a
//! task's result at `tasks/get`; a handler reads a header, the peer and the trace context.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use support::{Response, first_text, post, start};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    content::{ContentBlock, TextContent},
    context::{
        HandlerFailure, HandlerOutput, Intercepted, Interceptor, Outcome, SanitizeError,
        ToolResultSanitizer,
    },
    policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest},
    prompt::{PromptArguments, PromptMessage, PromptRegistration, PromptResult},
    task::{InMemoryTaskStore, TaskCreation},
    tool::{CompleteResult, OperationResult, TaskSupport, ToolOutput},
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const ALL: [ProtocolVersion; 3] = [V26, V1125, V0618];
const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

#[derive(Default)]
struct Counters {
    intercepted: AtomicUsize,
    entered: AtomicUsize,
}

/// A request-scoped value the interceptor adds for the handler.
struct Tenant(String);

async fn interceptor(
    mut call: Intercepted<'_>,
    counters: Arc<Counters>,
) -> Result<HandlerOutput, HandlerFailure> {
    counters.intercepted.fetch_add(1, Ordering::SeqCst);
    let request = call.context().originating_request();
    match request.header("x-mode") {
        Some("refuse") => {
            let refusal = CompleteResult::from_tool_error_text("Closed today.");
            Ok(HandlerOutput::Tool(OperationResult::Complete(refusal)))
        }
        Some("panic") => panic!("an interceptor bug with a secret inside"),
        Some("wrong-kind") => Ok(HandlerOutput::Prompt(Outcome::Complete(
            PromptResult::with_message(PromptMessage::user(TextContent::new("no"))),
        ))),
        Some("fail") => Err(HandlerFailure::new()),
        // A handle kept past `proceed`, which refused the arguments: the task is refused too.
        Some("copy-task") => {
            let Some(tasks) = call.features().find::<TaskCreation>().cloned() else {
                return Err(HandlerFailure::new());
            };
            let _ = call.proceed().await;
            let created = tasks
                .spawn(|_| async { Ok(CompleteResult::from_tool_text("never")) })
                .await
                .map_err(|_| HandlerFailure::new())?;
            Ok(HandlerOutput::Tool(OperationResult::TaskCreated(created)))
        }
        Some("task") => {
            let Some(tasks) = call.features().find::<TaskCreation>() else {
                return Err(HandlerFailure::new());
            };
            let created = tasks
                .spawn(|_| async { Ok(CompleteResult::from_tool_text("task secret")) })
                .await
                .map_err(|_| HandlerFailure::new())?;
            Ok(HandlerOutput::Tool(OperationResult::TaskCreated(created)))
        }
        _ => {
            if let Some(tenant) = request.header("x-tenant") {
                let _ = call.features_mut().insert(Tenant(tenant.to_owned()));
            }
            call.proceed().await
        }
    }
}

/// A stateful interceptor: a type implementing the trait (a plain `async fn` needs no state).
struct Counting(Arc<Counters>);

impl<'a> Interceptor<'a> for Counting {
    type Future = Pin<Box<dyn Future<Output = Result<HandlerOutput, HandlerFailure>> + Send + 'a>>;

    fn intercept(&self, call: Intercepted<'a>) -> Self::Future {
        Box::pin(interceptor(call, Arc::clone(&self.0)))
    }
}

/// Replaces `secret` with `[redacted]` in every text block, and marks the text it saw.
struct Redact;

impl ToolResultSanitizer for Redact {
    fn sanitize(
        &self,
        context: &RequestContext,
        _tool: &str,
        _arguments: &JsonObject,
        result: CompleteResult,
    ) -> Result<CompleteResult, SanitizeError> {
        match context.originating_request().header("x-sanitizer") {
            Some("refuse") => return Err(SanitizeError),
            Some("panic") => panic!("a sanitizer bug with a secret inside"),
            _ => {}
        }
        let output = result.tool_output();
        let mut b = ToolOutput::builder().error(output.is_error());
        for block in output.content() {
            b = match block {
                ContentBlock::Text(t) => b.add_content(TextContent::new(format!(
                    "{} (sanitized)",
                    t.text().replace("secret", "[redacted]")
                ))),
                other => b.add_content(other.clone()),
            };
        }
        if let Some(s) = output.structured_content() {
            b = b.structured_content(s.clone());
        }
        Ok(CompleteResult::with_tool_output(b.build()).build())
    }
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Sum {
    n: i64,
}

async fn typed(
    _: &RequestContext,
    args: ToolArguments<Sum>,
    _: &InvocationFeatures,
) -> Result<Sum, Infallible> {
    Ok(Sum {
        n: args.into_converted().n + 1,
    })
}

fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
    match request.header("x-api-key") {
        Some("k") => AdmissionDecision::admit(AdmissionIdentity::principal("team")),
        _ => AdmissionDecision::unauthorized(),
    }
}

async fn fixture() -> (SocketAddr, Arc<Counters>) {
    let counters = Arc::new(Counters::default());
    let c = Arc::clone(&counters);
    let tool = move |ctx: &RequestContext, _: ToolArguments<JsonObject>, f: &InvocationFeatures| {
        c.entered.fetch_add(1, Ordering::SeqCst);
        let request = ctx.originating_request();
        let text = format!(
            "team={} tenant={} trace={} baggage={} peer={} secret",
            request.header("x-team").unwrap_or("-"),
            f.find::<Tenant>().map_or("-", |t| t.0.as_str()),
            ctx.trace_context().map_or("-", |t| t.trace_id()),
            ctx.baggage().and_then(|b| b.get("k")).unwrap_or("-"),
            request.peer_addr().is_some(),
        );
        async move { Ok::<OperationResult, Infallible>(CompleteResult::from_tool_text(text).into()) }
    };
    let c = Arc::clone(&counters);
    let prompt = move |_: &RequestContext, _: PromptArguments, _: &InvocationFeatures| {
        c.entered.fetch_add(1, Ordering::SeqCst);
        async {
            Ok::<_, Infallible>(PromptResult::with_message(PromptMessage::user(
                TextContent::new("hi"),
            )))
        }
    };
    let schema = from_str(
        r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    let c = Arc::clone(&counters);
    let endpoint = Endpoint::with_path("/mcp", ALL, Implementation::new("intercept", "1"))
        .legacy_sessions(None)
        .admission(admit)
        .task_store(InMemoryTaskStore::default())
        .interceptor(Counting(c))
        .tool_result_sanitizer(Redact)
        .add_tool(
            ToolRegistration::with_name("count", ALL)
                .input_schema(&schema)
                .unwrap()
                .handler(tool)
                .task_support(TaskSupport::Optional)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("typed", ALL)
                .argument_and_output_types::<Sum, Sum>()
                .handler(typed)
                .build()
                .unwrap(),
        )
        .add_prompt(
            PromptRegistration::with_name("greet", ALL)
                .handler(prompt)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    (start(McpService::new(endpoint)).await, counters)
}

/// One request on `revision`: `params` without braces, with `_meta` (tasks declared) on
/// 2026-07-28 plus `meta` (more `_meta` members, without braces).
async fn send(
    addr: SocketAddr,
    revision: ProtocolVersion,
    method: &str,
    name: &str,
    params: &str,
    meta: &str,
    extra: &[(&str, &str)],
) -> Response {
    let mut headers = vec![
        ("MCP-Protocol-Version", revision.as_str()),
        ("X-Api-Key", "k"),
    ];
    let mut all_meta = String::new();
    if revision == V26 {
        headers.push(("Mcp-Method", method));
        headers.push(("Mcp-Name", name));
        all_meta = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#.to_owned();
    }
    if !meta.is_empty() {
        if !all_meta.is_empty() {
            all_meta.push(',');
        }
        all_meta.push_str(meta);
    }
    headers.extend_from_slice(extra);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params},"_meta":{{{all_meta}}}}}}}"#
    );
    post(addr, &headers, body.as_bytes()).await
}

async fn call(
    addr: SocketAddr,
    revision: ProtocolVersion,
    args: &str,
    extra: &[(&str, &str)],
) -> Response {
    let params = format!(r#""name":"count","arguments":{args}"#);
    send(addr, revision, "tools/call", "count", &params, "", extra).await
}

fn counts(c: &Counters) -> (usize, usize) {
    (
        c.intercepted.load(Ordering::SeqCst),
        c.entered.load(Ordering::SeqCst),
    )
}

#[tokio::test]
async fn admission_runs_before_the_interceptor() {
    let (addr, counters) = fixture().await;
    for revision in ALL {
        // The 2026-07-28 `_meta` on that revision only (a 2025 request naming 2026-07-28 in its
        // body is a header mismatch, before admission).
        let meta = if revision == V26 {
            support::META
        } else {
            r#""_meta":{}"#
        };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"count","arguments":{{"n":1}},{meta}}}}}"#
        );
        let mut headers = vec![("MCP-Protocol-Version", revision.as_str())];
        if revision == V26 {
            headers.extend([("Mcp-Method", "tools/call"), ("Mcp-Name", "count")]);
        }
        let response = post(addr, &headers, body.as_bytes()).await;
        assert_eq!(response.status, 401, "{revision:?}");
    }
    assert_eq!(
        counts(&counters),
        (0, 0),
        "neither the interceptor nor the handler ran"
    );
}

#[tokio::test]
async fn the_interceptor_precedes_input_validation_and_the_fixed_result_is_sanitized() {
    let (addr, counters) = fixture().await;
    for (i, revision) in ALL.into_iter().enumerate() {
        let response = call(addr, revision, r#"{"n":"not a number"}"#, &[]).await;
        if revision == V0618 {
            assert_eq!((response.status, response.code()), (200, -32602));
        } else {
            let result = response.result();
            assert_eq!(
                result.get("isError").and_then(JsonValue::as_bool),
                Some(true)
            );
            assert_eq!(
                first_text(&result),
                "Arguments do not match the tool's inputSchema. (sanitized)"
            );
        }
        assert_eq!(
            counts(&counters),
            (i + 1, 0),
            "{revision:?}: intercepted, not entered"
        );
    }
}

#[tokio::test]
async fn a_handler_result_passes_the_sanitizer_and_reads_the_request() {
    let (addr, counters) = fixture().await;
    for revision in ALL {
        let extra = [
            ("X-Team", "blue"),
            ("X-Tenant", "acme"),
            ("Baggage", "k=v%21"),
        ];
        let meta = format!(r#""traceparent":"{PARENT}""#);
        let params = r#""name":"count","arguments":{"n":1}"#;
        let response = send(addr, revision, "tools/call", "count", params, &meta, &extra).await;
        assert_eq!(
            first_text(&response.result()),
            "team=blue tenant=acme trace=0af7651916cd43dd8448eb211c80319c baggage=v! peer=true [redacted] (sanitized)",
            "{revision:?}"
        );
    }
    assert_eq!(counts(&counters), (3, 3));
}

#[tokio::test]
async fn trace_context_comes_from_meta_else_headers_and_malformed_values_are_dropped() {
    let (addr, _) = fixture().await;
    let trace_of = |r: Response| {
        let text = first_text(&r.result());
        text.split(' ')
            .find_map(|w| w.strip_prefix("trace="))
            .unwrap()
            .to_owned()
    };
    let params = r#""name":"count","arguments":{"n":1}"#;
    // From the header when `_meta` has none.
    let r = send(
        addr,
        V26,
        "tools/call",
        "count",
        params,
        "",
        &[("traceparent", PARENT)],
    )
    .await;
    assert_eq!(trace_of(r), "0af7651916cd43dd8448eb211c80319c");
    // `_meta` wins; a malformed `_meta` value does not fall back to the header.
    let r = send(
        addr,
        V26,
        "tools/call",
        "count",
        params,
        r#""traceparent":"00-zz""#,
        &[("traceparent", PARENT)],
    )
    .await;
    assert_eq!(trace_of(r), "-");
    // All-zero, upper case, wrong type: dropped, never an error.
    for bad in [
        r#""traceparent":"00-00000000000000000000000000000000-b7ad6b7169203331-01""#,
        r#""traceparent":"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01""#,
        r#""traceparent":7"#,
    ] {
        let r = send(addr, V1125, "tools/call", "count", params, bad, &[]).await;
        assert_eq!(r.status, 200);
        assert_eq!(trace_of(r), "-", "{bad}");
    }
}

/// A typed tool behind an interceptor: its output is still validated and mirrored, its invalid
/// arguments still get the fixed result, and an interceptor's refusal needs no structured
/// content.
#[tokio::test]
async fn a_typed_tool_keeps_its_answers_behind_the_interceptor() {
    let (addr, _) = fixture().await;
    for revision in ALL {
        let ok = send(
            addr,
            revision,
            "tools/call",
            "typed",
            r#""name":"typed","arguments":{"n":1}"#,
            "",
            &[],
        )
        .await;
        let result = ok.result();
        assert_eq!(
            result
                .get("structuredContent")
                .and_then(|s| s.get("n"))
                .and_then(JsonValue::as_number)
                .and_then(|n| n.to_i64()),
            Some(2),
            "{revision:?}"
        );
        // The text mirror is made after sanitizing, from the sanitized structured content.
        assert_eq!(first_text(&result), r#"{"n":2}"#);
        let bad = send(
            addr,
            revision,
            "tools/call",
            "typed",
            r#""name":"typed","arguments":{"n":"x"}"#,
            "",
            &[],
        )
        .await;
        if revision == V0618 {
            assert_eq!(bad.code(), -32602);
        } else {
            assert_eq!(
                first_text(&bad.result()),
                "Arguments do not match the tool's inputSchema. (sanitized)"
            );
        }
        let refused = send(
            addr,
            revision,
            "tools/call",
            "typed",
            r#""name":"typed","arguments":{"n":1}"#,
            "",
            &[("X-Mode", "refuse")],
        )
        .await;
        assert_eq!(
            first_text(&refused.result()),
            "Closed today. (sanitized)",
            "{revision:?}"
        );
    }
}

#[tokio::test]
async fn an_interceptor_may_answer_without_the_handler() {
    let (addr, counters) = fixture().await;
    for revision in ALL {
        let result = call(addr, revision, r#"{"n":1}"#, &[("X-Mode", "refuse")])
            .await
            .result();
        assert_eq!(first_text(&result), "Closed today. (sanitized)");
    }
    assert_eq!(counts(&counters), (3, 0));
}

#[tokio::test]
async fn interceptor_failures_are_the_fixed_internal_error() {
    let (addr, counters) = fixture().await;
    for revision in ALL {
        for mode in ["panic", "wrong-kind", "fail"] {
            let response = call(addr, revision, r#"{"n":1}"#, &[("X-Mode", mode)]).await;
            assert_eq!(
                (response.status, response.code()),
                (200, -32603),
                "{revision:?} {mode}"
            );
            assert_eq!(response.message(), "Internal error");
            assert!(!response.text().contains("secret"));
        }
    }
    assert_eq!(counts(&counters).1, 0);
}

#[tokio::test]
async fn a_task_an_interceptor_creates_has_its_arguments_validated_and_its_result_sanitized() {
    let (addr, counters) = fixture().await;
    // Invalid arguments: the fixed answer, sanitized like any result.
    let result = call(addr, V26, r#"{"n":"x"}"#, &[("X-Mode", "task")])
        .await
        .result();
    assert_eq!(
        first_text(&result),
        "Arguments do not match the tool's inputSchema. (sanitized)"
    );
    // Valid arguments: the task, whose result `tasks/get` returns sanitized.
    let created = call(addr, V26, r#"{"n":1}"#, &[("X-Mode", "task")])
        .await
        .result();
    assert_eq!(
        created.get("resultType").and_then(JsonValue::as_str),
        Some("task")
    );
    let id = created
        .get("taskId")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned();
    let params = format!(r#""taskId":"{id}""#);
    let mut text = String::new();
    for _ in 0..200 {
        let got = send(addr, V26, "tasks/get", &id, &params, "", &[])
            .await
            .result();
        if got.get("status").and_then(JsonValue::as_str) == Some("completed") {
            text = first_text(got.get("result").unwrap());
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(text, "task [redacted] (sanitized)");
    assert_eq!(counts(&counters), (2, 0));
}

#[tokio::test]
async fn a_task_handle_kept_past_refused_arguments_creates_nothing() {
    let (addr, counters) = fixture().await;
    let result = call(addr, V26, r#"{"n":"x"}"#, &[("X-Mode", "copy-task")])
        .await
        .result();
    assert_eq!(
        first_text(&result),
        "Arguments do not match the tool's inputSchema. (sanitized)"
    );
    assert_eq!(counts(&counters), (1, 0));
}

#[tokio::test]
async fn a_sanitizer_that_refuses_or_panics_is_the_fixed_internal_error() {
    let (addr, _) = fixture().await;
    for revision in ALL {
        for mode in ["refuse", "panic"] {
            for args in [r#"{"n":1}"#, r#"{"n":"x"}"#] {
                let response = call(addr, revision, args, &[("X-Sanitizer", mode)]).await;
                if revision == V0618 && args.contains('x') {
                    // 2025-06-18 answers invalid arguments with -32602, not a result.
                    assert_eq!(response.code(), -32602);
                    continue;
                }
                assert_eq!(
                    (response.status, response.code()),
                    (200, -32603),
                    "{revision:?} {mode}"
                );
                assert!(!response.text().contains("secret"));
            }
        }
    }
}

#[tokio::test]
async fn prompts_are_intercepted_too() {
    let (addr, counters) = fixture().await;
    for revision in ALL {
        let r = send(
            addr,
            revision,
            "prompts/get",
            "greet",
            r#""name":"greet""#,
            "",
            &[],
        )
        .await;
        assert_eq!(r.status, 200, "{revision:?}");
        // A tool's output for a prompt is the fixed internal error.
        let r = send(
            addr,
            revision,
            "prompts/get",
            "greet",
            r#""name":"greet""#,
            "",
            &[("X-Mode", "refuse")],
        )
        .await;
        assert_eq!(r.code(), -32603, "{revision:?}");
    }
    assert_eq!(counts(&counters), (6, 3));
}
