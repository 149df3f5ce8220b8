//! OpenTelemetry (feature `otel`) over real HTTP, with the SDK's in-memory exporters: the span
//! tree of a `tools/call` and its names, kinds and attributes (MCP semantic conventions),
//! parentage from the client's `traceparent` (header and `_meta`), a handler's own `tracing`
//! span as a child, an unsampled caller (no spans), the 2025 session id, task store spans,
//! error types, the instruments, and that nothing of the arguments is recorded.
//!
//! One test function: the tracer provider, subscriber and meter provider are process-wide.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "integration tests"
)]

mod support;

use std::convert::Infallible;
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;

use opentelemetry::trace::{
    SpanContext, SpanKind, Status, TraceContextExt as _, TracerProvider as _,
};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use support::{META, post, start};
use tollgate::json::JsonObject;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    endpoint::SessionConfig,
    policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest},
    task::{InMemoryTaskStore, TaskCreation, TaskError},
    tool::{CompleteResult, OperationResult, TaskSupport},
};
use tracing_subscriber::layer::SubscriberExt as _;

const MARKER: &str = "Zq7argumentMarker";
const TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT: &str = "b7ad6b7169203331";

async fn echo(
    _: &RequestContext,
    args: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let text = args
        .into_converted()
        .get("say")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_owned();
    if text == "fail" {
        return Ok(CompleteResult::from_tool_error_text("it failed").into());
    }
    // The application's own span, through tracing-opentelemetry: a child of the handler stage.
    tracing::info_span!("app.work").in_scope(|| {});
    // What the handler would propagate on its own calls.
    *SEEN.lock().unwrap() = Some(
        opentelemetry::Context::current()
            .span()
            .span_context()
            .clone(),
    );
    Ok(CompleteResult::from_tool_text(text).into())
}

/// The span context current in the last `echo` call.
static SEEN: std::sync::Mutex<Option<SpanContext>> = std::sync::Mutex::new(None);

/// Waits until the call is cancelled.
async fn wait(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    features.cancellation().cancelled().await;
    Ok(CompleteResult::from_tool_text("cancelled").into())
}

async fn job(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, TaskError> {
    let tasks = features
        .find::<TaskCreation>()
        .cloned()
        .ok_or_else(TaskError::internal)?;
    let created = tasks
        .spawn(|_| async { Ok(CompleteResult::from_tool_text("done")) })
        .await?;
    Ok(OperationResult::from(created))
}

fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
    match request.header("authorization") {
        Some("Bearer ok") | None if !request.is_http() => {
            AdmissionDecision::admit(AdmissionIdentity::principal("u"))
        }
        Some("Bearer ok") => AdmissionDecision::admit(AdmissionIdentity::principal("u")),
        _ => AdmissionDecision::unauthorized(),
    }
}

fn endpoint() -> Endpoint {
    let all = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];
    Endpoint::with_path("/mcp", all, Implementation::new("otel", "1"))
        .legacy_sessions(Some(SessionConfig::default()))
        .task_store(InMemoryTaskStore::default())
        .admission(admit)
        .add_tool(
            ToolRegistration::with_name("wait", all)
                .json_object_arguments()
                .handler(wait)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("job", [ProtocolVersion::V2026_07_28])
                .json_object_arguments()
                .handler(job)
                .task_support(TaskSupport::Required)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("echo", all)
                .json_object_arguments()
                .handler(echo)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

fn call_body(tool: &str, say: &str, meta_extra: &str) -> String {
    let meta = if meta_extra.is_empty() {
        META.to_owned()
    } else {
        META.replacen("\"_meta\":{", &format!("\"_meta\":{{{meta_extra},"), 1)
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":"req-1","method":"tools/call","params":{{"name":"{tool}","arguments":{{"say":"{say}"}},{meta}}}}}"#
    )
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn text(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}

/// `tollgate.server.active_streams` as the meter provider reports it now.
fn open_streams(meter: &SdkMeterProvider, metrics: &InMemoryMetricExporter) -> i64 {
    meter.force_flush().unwrap();
    let exported = metrics.get_finished_metrics().unwrap();
    // Cumulative: the last export at the end still holds everything, so this one is dropped.
    metrics.reset();
    let latest = exported.last().unwrap();
    latest
        .scope_metrics()
        .flat_map(|scope| scope.metrics())
        .filter(|metric| metric.name() == "tollgate.server.active_streams")
        .map(|metric| match metric.data() {
            AggregatedMetrics::I64(MetricData::Sum(sum)) => {
                sum.data_points().map(|p| p.value()).sum()
            }
            _ => 0,
        })
        .sum()
}

fn server_spans(exporter: &InMemorySpanExporter) -> Vec<SpanData> {
    exporter
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|s| s.span_kind == SpanKind::Server)
        .collect()
}

#[tokio::test]
async fn requests_are_traced_and_measured_by_the_mcp_conventions() {
    let spans = InMemorySpanExporter::default();
    let tracer = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    opentelemetry::global::set_tracer_provider(tracer.clone());
    // An application that also traces through `tracing`.
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer.tracer("app")));
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let metrics = InMemoryMetricExporter::default();
    let meter = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    opentelemetry::global::set_meter_provider(meter.clone());

    let addr = start(McpService::new(endpoint())).await;
    let headers = |traceparent: Option<&'static str>| {
        let mut h = vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "echo"),
            ("Authorization", "Bearer ok"),
        ];
        if let Some(t) = traceparent {
            h.push(("traceparent", t));
        }
        h
    };

    // 1. A call continuing the client's trace from its traceparent header.
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let ok = post(
        addr,
        &headers(Some(traceparent)),
        call_body("echo", MARKER, "").as_bytes(),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    let all = spans.get_finished_spans().unwrap();
    let server = server_spans(&spans);
    assert_eq!(server.len(), 1, "{all:#?}");
    let span = &server[0];
    assert_eq!(span.name, "tools/call echo", "{:?}", span.attributes);
    assert_eq!(span.span_context.trace_id().to_string(), TRACE_ID);
    assert_eq!(span.parent_span_id.to_string(), PARENT);
    assert!(span.parent_span_is_remote);
    assert_eq!(text(span, "mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(text(span, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(
        text(span, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        text(span, "mcp.protocol.version").as_deref(),
        Some("2026-07-28")
    );
    assert_eq!(text(span, "jsonrpc.request.id").as_deref(), Some("req-1"));
    assert_eq!(text(span, "network.transport").as_deref(), Some("tcp"));
    assert_eq!(text(span, "network.protocol.name").as_deref(), Some("http"));
    assert_eq!(attribute(span, "error.type"), None);
    assert_eq!(span.status, Status::Unset);
    // The stages are its children, in the same trace.
    let stages: Vec<&str> = all
        .iter()
        .filter(|s| s.parent_span_id == span.span_context.span_id())
        .map(|s| s.name.as_ref())
        .collect();
    for stage in ["admission", "validation", "handler", "output"] {
        assert!(stages.contains(&stage), "{stage} in {stages:?}");
    }
    let handler = all.iter().find(|s| s.name == "handler").unwrap();
    let app = all.iter().find(|s| s.name == "app.work").unwrap();
    assert_eq!(app.parent_span_id, handler.span_context.span_id());
    assert!(
        all.iter()
            .all(|s| s.span_context.trace_id().to_string() == TRACE_ID)
    );
    // One span for the request: Tollgate's `tracing` span (`mcp.request`) is not made where the
    // OpenTelemetry span is, so a tracing-opentelemetry layer exports no duplicate.
    assert!(!all.iter().any(|s| s.name == "mcp.request"), "{all:?}");

    // 2. `_meta` carries the trace context too (and wins over the header).
    spans.reset();
    let other = "00-11111111111111111111111111111111-2222222222222222-01";
    let meta = format!(r#""traceparent":"{other}""#);
    let response = post(
        addr,
        &headers(Some(traceparent)),
        call_body("echo", "fail", &meta).as_bytes(),
    )
    .await;
    assert_eq!(response.status, 200);
    let server = server_spans(&spans);
    assert_eq!(
        server[0].span_context.trace_id().to_string(),
        "11111111111111111111111111111111"
    );
    // A tool result with isError: true.
    assert_eq!(
        text(&server[0], "error.type").as_deref(),
        Some("tool_error")
    );
    assert!(matches!(server[0].status, Status::Error { .. }));

    // 3. Refusals and unknown names: the JSON-RPC code as error.type, no unregistered name.
    spans.reset();
    let refused = post(
        addr,
        &headers(None)[..3],
        call_body("echo", MARKER, "").as_bytes(),
    )
    .await;
    assert_eq!(refused.status, 401);
    let mut unknown_headers = headers(None);
    unknown_headers[2] = ("Mcp-Name", "secret-tool-name");
    let unknown = post(
        addr,
        &unknown_headers,
        call_body("secret-tool-name", MARKER, "").as_bytes(),
    )
    .await;
    assert_eq!(unknown.status, 400, "{}", unknown.text());
    let server = server_spans(&spans);
    assert_eq!(server.len(), 2);
    assert_eq!(text(&server[0], "error.type").as_deref(), Some("-32001"));
    assert_eq!(
        text(&server[0], "rpc.response.status_code").as_deref(),
        Some("-32001")
    );
    // A registered name may name the span; the tool attribute waits for the lookup.
    assert_eq!(server[0].name, "tools/call echo");
    assert_eq!(attribute(&server[0], "gen_ai.tool.name"), None);
    assert_eq!(attribute(&server[1], "gen_ai.tool.name"), None);
    assert_eq!(server[1].name, "tools/call");
    assert_eq!(text(&server[1], "error.type").as_deref(), Some("-32602"));
    // An unknown method is `_OTHER`, not what the client sent.
    spans.reset();
    let body = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"{MARKER}/x","params":{{{META}}}}}"#);
    let _ = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
        body.as_bytes(),
    )
    .await;
    let server = server_spans(&spans);
    assert_eq!(
        text(&server[0], "mcp.method.name").as_deref(),
        Some("_OTHER")
    );

    // 4. A caller whose trace is not sampled: the parent-based sampler records nothing, so
    //    no stage span either.
    spans.reset();
    let unsampled = "00-33333333333333333333333333333333-4444444444444444-00";
    let quiet = post(
        addr,
        &headers(Some(unsampled)),
        call_body("echo", MARKER, "").as_bytes(),
    )
    .await;
    assert_eq!(quiet.status, 200);
    assert!(spans.get_finished_spans().unwrap().is_empty());
    // The handler still runs in the server's own (unsampled) span context: the caller's
    // trace, a span id of its own, not sampled, so its calls carry the trace on.
    let seen = SEEN.lock().unwrap().clone().unwrap();
    assert_eq!(
        seen.trace_id().to_string(),
        "33333333333333333333333333333333"
    );
    assert!(seen.is_valid() && !seen.is_sampled() && !seen.is_remote());
    assert_ne!(seen.span_id().to_string(), "4444444444444444");

    // 5. A 2025 session: the session's id and revision on the span.
    spans.reset();
    let init = post(
        addr,
        &[("Authorization", "Bearer ok")],
        br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    )
    .await;
    assert_eq!(init.status, 200, "{}", init.text());
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let legacy = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", &session),
            ("Authorization", "Bearer ok"),
        ],
        br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"say":"hi"}}}"#,
    )
    .await;
    assert_eq!(legacy.status, 200, "{}", legacy.text());
    let server = server_spans(&spans);
    let call = server.iter().find(|s| s.name == "tools/call echo").unwrap();
    assert_eq!(
        text(call, "mcp.session.id").as_deref(),
        Some(session.as_str())
    );
    assert_eq!(
        text(call, "mcp.protocol.version").as_deref(),
        Some("2025-11-25")
    );
    let initialize = server.iter().find(|s| s.name == "initialize").unwrap();
    assert_eq!(
        text(initialize, "mcp.session.id").as_deref(),
        Some(session.as_str())
    );

    // 5b. The session's GET stream is counted among the open streams while it is open, and no
    //     more once `DELETE` ends the session (and so its stream).
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {session}\r\nAuthorization: Bearer ok\r\n\r\n",
        addr.port()
    );
    let stream = support::Open::send(addr, get).await;
    assert_eq!(stream.status, 200);
    assert_eq!(open_streams(&meter, &metrics), 1);
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {session}\r\nAuthorization: Bearer ok\r\nConnection: close\r\n\r\n",
        addr.port()
    );
    assert_eq!(support::raw(addr, delete.as_bytes()).await.status, 200);
    let mut closed = false;
    for _ in 0..100 {
        if open_streams(&meter, &metrics) == 0 {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(closed, "the ended session's stream is no longer counted");
    drop(stream);

    // 6. A task: the store call is a child span of the handler that created it.
    spans.reset();
    let body = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"job","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}"#;
    let mut job_headers = headers(None);
    job_headers[2] = ("Mcp-Name", "job");
    let created = post(addr, &job_headers, body.as_bytes()).await;
    assert_eq!(created.status, 200, "{}", created.text());
    // The task's work ends on its own worker; give it a moment to be stored.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let all = spans.get_finished_spans().unwrap();
    let request = all.iter().find(|s| s.name == "tools/call job").unwrap();
    let handler = all
        .iter()
        .find(|s| s.name == "handler" && s.parent_span_id == request.span_context.span_id())
        .unwrap();
    assert!(
        all.iter()
            .any(|s| s.name == "task_store.insert"
                && s.parent_span_id == handler.span_context.span_id()),
        "{all:#?}"
    );

    // 7. A request id is recorded up to 128 bytes; a longer one (the client's choice) is not.
    spans.reset();
    for (length, recorded) in [(128, true), (129, false)] {
        let id = "i".repeat(length);
        let body =
            call_body("echo", "hi", "").replace(r#""id":"req-1""#, &format!(r#""id":"{id}""#));
        let answered = post(addr, &headers(None), body.as_bytes()).await;
        assert_eq!(answered.status, 200, "{}", answered.text());
        let server = server_spans(&spans);
        let last = server.last().unwrap();
        assert_eq!(
            text(last, "jsonrpc.request.id").is_some(),
            recorded,
            "{length}"
        );
    }
    // 8. A body that is not JSON is refused before any span: counted as a `limits` refusal.
    let refused = post(addr, &headers(None), b"{not json").await;
    assert_eq!(refused.status, 400);

    // 9. A request cancelled before it answers (stdio `notifications/cancelled`): its span ends,
    //    after its stages, with `error.type` `cancelled`, and the active-request count comes
    //    back down.
    spans.reset();
    let (client_in, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, _client_out) = tokio::io::duplex(1 << 16);
    let stdio = tokio::spawn(
        tollgate::transport::StdioServer::new(endpoint()).serve(server_in, server_out),
    );
    let mut input = client_in;
    let slow = format!(
        r#"{{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{{"name":"wait","arguments":{{}},{META}}}}}"#
    );
    let cancel =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow"}}"#;
    input
        .write_all(format!("{slow}\n").as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    input
        .write_all(format!("{cancel}\n").as_bytes())
        .await
        .unwrap();
    let mut cancelled = None;
    for _ in 0..100 {
        cancelled = server_spans(&spans)
            .into_iter()
            .find(|s| s.name == "tools/call wait");
        if cancelled.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let cancelled = cancelled.expect("the cancelled request's span ended");
    assert_eq!(text(&cancelled, "error.type").as_deref(), Some("cancelled"));
    assert_eq!(
        text(&cancelled, "network.transport").as_deref(),
        Some("pipe")
    );
    assert!(matches!(cancelled.status, Status::Error { .. }));
    // Its work was dropped first: the handler's stage span ended (and was exported, the
    // exporter being the simple one) before the request's.
    let finished = spans.get_finished_spans().unwrap();
    let position = |wanted: &dyn Fn(&SpanData) -> bool| finished.iter().position(wanted);
    let handler =
        position(&|s| s.name == "handler" && s.parent_span_id == cancelled.span_context.span_id())
            .expect("the cancelled request's handler span ended");
    let request = position(&|s| s.span_context == cancelled.span_context).unwrap();
    assert!(handler < request, "the handler span ended first");
    drop(input);
    stdio.await.unwrap().unwrap();

    // 10. Metrics: the duration histogram by method, tool, revision and error type; refusals by
    //    kind; and nothing anywhere carries the argument marker or an unregistered name.
    meter.force_flush().unwrap();
    let exported = metrics.get_finished_metrics().unwrap();
    let mut seen = Vec::new();
    for resource in &exported {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics() {
                seen.push(metric.name().to_owned());
                let points: Vec<Vec<KeyValue>> = match metric.data() {
                    AggregatedMetrics::F64(MetricData::Histogram(h)) => h
                        .data_points()
                        .map(|p| p.attributes().cloned().collect())
                        .collect(),
                    AggregatedMetrics::U64(MetricData::Sum(s)) => s
                        .data_points()
                        .map(|p| p.attributes().cloned().collect())
                        .collect(),
                    AggregatedMetrics::I64(MetricData::Sum(s)) => s
                        .data_points()
                        .map(|p| p.attributes().cloned().collect())
                        .collect(),
                    _ => Vec::new(),
                };
                for point in points {
                    let rendered = format!("{point:?}");
                    assert!(!rendered.contains(MARKER), "{rendered}");
                    assert!(!rendered.contains("secret-tool-name"), "{rendered}");
                }
                if metric.name() == "tollgate.server.active_requests" {
                    let AggregatedMetrics::I64(MetricData::Sum(sum)) = metric.data() else {
                        panic!("a sum");
                    };
                    assert_eq!(sum.data_points().map(|p| p.value()).sum::<i64>(), 0);
                }
                if metric.name() == "tollgate.server.refusals" {
                    let AggregatedMetrics::U64(MetricData::Sum(sum)) = metric.data() else {
                        panic!("a sum");
                    };
                    for kind in ["admission", "invalid_params", "limits"] {
                        assert!(
                            sum.data_points().any(|p| p.attributes().any(|kv| {
                                kv.key.as_str() == "tollgate.refusal.kind"
                                    && kv.value.as_str() == kind
                            })),
                            "{kind}"
                        );
                    }
                }
                if metric.name() == "tollgate.server.task.transitions" {
                    let AggregatedMetrics::U64(MetricData::Sum(sum)) = metric.data() else {
                        panic!("a sum");
                    };
                    assert!(sum.data_points().any(|p| {
                        p.value() >= 1
                            && p.attributes().any(|kv| {
                                kv.key.as_str() == "tollgate.task.status"
                                    && kv.value.as_str() == "working"
                            })
                    }));
                }
                if metric.name() == "mcp.server.operation.duration" {
                    let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
                        panic!("a histogram");
                    };
                    assert!(h.data_points().any(|p| {
                        let a: Vec<_> = p.attributes().collect();
                        a.iter().any(|kv| {
                            kv.key.as_str() == "gen_ai.tool.name" && kv.value.as_str() == "echo"
                        }) && a.iter().any(|kv| {
                            kv.key.as_str() == "mcp.protocol.version"
                                && kv.value.as_str() == "2026-07-28"
                        })
                    }));
                    for error in ["-32001", "cancelled"] {
                        assert!(
                            h.data_points()
                                .any(|p| p.attributes().any(|kv| kv.key.as_str() == "error.type"
                                    && kv.value.as_str() == error)),
                            "{error}"
                        );
                    }
                }
            }
        }
    }
    for name in [
        "mcp.server.operation.duration",
        "tollgate.server.active_requests",
        "tollgate.server.refusals",
        "tollgate.server.task.transitions",
    ] {
        assert!(seen.iter().any(|s| s == name), "{name} in {seen:?}");
    }
    for span in spans.get_finished_spans().unwrap() {
        assert!(!format!("{span:?}").contains(MARKER));
    }
}
