//! A request's span and clock (feature `otel`): the tracer and instruments read once from the
//! global providers, the span started for a request, and [`Instrumented`], the future that runs
//! the request with its span current and records its end exactly once (at its reply, or when it
//! is dropped first).
//!
//! Knows the OpenTelemetry API and the reply's fault code; nothing of transports, envelopes or
//! handlers.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::task::Poll;
use std::time::Instant;

use opentelemetry::global::BoxedTracer;
use opentelemetry::metrics::{Counter, Histogram, ObservableUpDownCounter};
use opentelemetry::trace::{
    Span as _, SpanBuilder, SpanContext, SpanId, SpanKind, Status, TraceContextExt as _,
    TraceFlags, TraceId, TraceState, Tracer as _,
};
use opentelemetry::{Context, InstrumentationScope, KeyValue, Value};

use http::HeaderMap;
use tollgate_json::JsonObject;

use super::Target;
use super::cells::{self, Cell, Outcome};
use super::current::{self, Recorded};
use crate::facts::trace::TraceContext;
use crate::wire::id::RequestId;
use crate::wire::method::Method;
use crate::wire::reply::Reply;

/// The semantic conventions' advised buckets for `mcp.server.operation.duration`, seconds.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The longest request id recorded on a span, in bytes.
pub(crate) const MAX_RECORDED_ID_BYTES: usize = 128;

/// Requests being answered and event streams open, counted here and observed by the meter
/// when it collects (an atomic add per change instead of an SDK call).
static ACTIVE_REQUESTS: AtomicI64 = AtomicI64::new(0);
pub(super) static ACTIVE_STREAMS: AtomicI64 = AtomicI64::new(0);

/// The tracer makes no spans (it is the API's no-op tracer, or its provider was shut down):
/// learned from a request without a parent whose span came back without a valid context, which
/// a working tracer never returns. Requests then skip the tracer.
static INERT: AtomicBool = AtomicBool::new(false);

pub(super) struct Telemetry {
    pub(super) tracer: BoxedTracer,
    pub(super) duration: Histogram<f64>,
    _active_requests: ObservableUpDownCounter<i64>,
    _active_streams: ObservableUpDownCounter<i64>,
    pub(super) refusals: Counter<u64>,
    pub(super) task_transitions: Counter<u64>,
}

pub(super) fn telemetry() -> &'static Telemetry {
    static TELEMETRY: OnceLock<Telemetry> = OnceLock::new();
    TELEMETRY.get_or_init(|| {
        let scope = InstrumentationScope::builder("tollgate")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        let meter = opentelemetry::global::meter_with_scope(scope.clone());
        Telemetry {
            tracer: opentelemetry::global::tracer_with_scope(scope),
            duration: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description(
                    "MCP request or notification duration as observed on the receiver",
                )
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build(),
            _active_requests: meter
                .i64_observable_up_down_counter("tollgate.server.active_requests")
                .with_unit("{request}")
                .with_description("MCP requests being answered")
                .with_callback(|o| o.observe(ACTIVE_REQUESTS.load(Ordering::Relaxed), &[]))
                .build(),
            _active_streams: meter
                .i64_observable_up_down_counter("tollgate.server.active_streams")
                .with_unit("{stream}")
                .with_description("Server-sent event streams open on a connection")
                .with_callback(|o| o.observe(ACTIVE_STREAMS.load(Ordering::Relaxed), &[]))
                .build(),
            refusals: meter
                .u64_counter("tollgate.server.refusals")
                .with_unit("{request}")
                .with_description("MCP requests refused, by kind")
                .build(),
            task_transitions: meter
                .u64_counter("tollgate.server.task.transitions")
                .with_unit("{task}")
                .with_description("Tasks this instance moved into a status, by status")
                .build(),
        }
    })
}

/// The method's name as the conventions record it: a method Tollgate knows, else `_OTHER`
/// (what a client sends is not a metric attribute).
fn method_name(sent: &str) -> &'static str {
    Method::of(sent).map_or("_OTHER", Method::name)
}

/// What a refused request was refused for, by its JSON-RPC code.
fn refusal_kind(code: i64) -> Option<&'static str> {
    match code {
        -32001 | -32003 => Some("admission"),
        -31999 => Some("rate_limit"),
        -32700 => Some("limits"),
        -32602 => Some("invalid_params"),
        _ => None,
    }
}

/// The caller's span as a remote parent.
fn remote(trace: &TraceContext) -> Option<SpanContext> {
    let trace_id = TraceId::from_hex(trace.trace_id()).ok()?;
    let span_id = SpanId::from_hex(trace.parent_id()).ok()?;
    let state = trace
        .tracestate()
        .and_then(|s| s.parse::<TraceState>().ok())
        .unwrap_or_default();
    Some(SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::new(trace.flags()),
        true,
        state,
    ))
}

/// The request's context under `parent` and whether its span records. The context is `None`
/// when there is nothing to record or pass on (the tracer makes no spans and the parent has no
/// span context), and holds only the span context when the span does not record.
fn span(
    method: &'static str,
    transport: &'static str,
    http: bool,
    parent: Context,
) -> (Option<Context>, bool) {
    let inherited = parent.span().span_context().is_valid();
    if INERT.load(Ordering::Relaxed) {
        // What the no-op tracer's span would carry: the parent's span context, if any.
        return (inherited.then_some(parent), false);
    }
    // The attributes a sampler may decide on are given at creation, as the conventions ask.
    let mut attributes = Vec::with_capacity(3);
    attributes.push(KeyValue::new("mcp.method.name", method));
    attributes.push(KeyValue::new("network.transport", transport));
    if http {
        attributes.push(KeyValue::new("network.protocol.name", "http"));
    }
    let builder = SpanBuilder::from_name(method)
        .with_kind(SpanKind::Server)
        .with_attributes(attributes);
    let span = telemetry().tracer.build_with_context(builder, &parent);
    if span.is_recording() {
        return (Some(parent.with_span(span)), true);
    }
    let carried = span.span_context().clone();
    if !carried.is_valid() {
        // Only a tracer that makes no spans answers a parent without one so.
        if !inherited && !parent.is_telemetry_suppressed() {
            INERT.store(true, Ordering::Relaxed);
        }
        return (None, false);
    }
    // An unsampled span records nothing: the context keeps its span context alone (to parent
    // and propagate), not the span object.
    (Some(parent.with_remote_span_context(carried)), false)
}

/// A request's span and clock, from its envelope to its reply.
pub(crate) struct Request {
    /// The request's span in its parent's context: `None` when there is nothing to record
    /// or pass on (no tracer provider installed and no caller's trace), so the request
    /// runs with no context of its own.
    cx: Option<Context>,
    recording: bool,
    method: &'static str,
    transport: &'static str,
    started: Instant,
}

impl Request {
    /// Starts the span of a request for `method` (as sent) with id `id`, parented by the
    /// caller's trace context when it sent a valid one (`_meta` first, then the
    /// `traceparent` header), else by the current context.
    pub(crate) fn start<'t>(
        method: &str,
        id: Option<&RequestId>,
        meta: Option<&JsonObject>,
        headers: Option<&HeaderMap>,
        target: impl FnOnce() -> Option<Target<'t>>,
    ) -> Self {
        let http = headers.is_some();
        let method = method_name(method);
        let transport = if http { "tcp" } else { "pipe" };
        let started = Instant::now();
        let caller = crate::facts::trace::read_trace(meta, headers);
        let parent = match caller.as_ref().and_then(remote) {
            Some(remote) => Context::new().with_remote_span_context(remote),
            None => Context::current(),
        };
        let (cx, recording) = span(method, transport, http, parent);
        if let Some(cx) = cx.as_ref().filter(|_| recording) {
            let span = cx.span();
            // `{mcp.method.name} {target}` for a registered tool or prompt (a bounded set
            // of names), else the method alone.
            if let Some(Target::Tool(t) | Target::Prompt(t)) = target() {
                span.update_name(format!("{method} {t}"));
            }
            // An id longer than the bound is not recorded (nor copied): a client chooses it.
            let id = match id {
                Some(RequestId::String(s)) if s.as_str().len() <= MAX_RECORDED_ID_BYTES => {
                    Some(s.as_str().to_owned())
                }
                Some(RequestId::Integer(n)) => Some(n.to_string()),
                _ => None,
            };
            if let Some(id) = id {
                span.set_attribute(KeyValue::new("jsonrpc.request.id", id));
            }
        }
        Self {
            cx,
            recording,
            method,
            transport,
            started,
        }
    }

    /// Runs the request with its span as the current context, then records its outcome
    /// and duration; a request dropped before it answers (its client went away, or it was
    /// cancelled) is recorded too, with `error.type` `cancelled`. A large request future is best given pinned in place (`Pin<&mut F>`), so the wrapper
    /// holds a pointer instead of a copy.
    pub(crate) fn run<F: Future<Output = Reply>>(self, work: F) -> Instrumented<F> {
        let recorded = self.begin();
        Instrumented {
            work,
            recorded: Some(recorded),
            request: Some(self),
        }
    }

    /// Counts the request as active and makes its record.
    fn begin(&self) -> Recorded {
        ACTIVE_REQUESTS.fetch_add(1, Ordering::Relaxed);
        Recorded::new(self.cx.as_ref().filter(|_| self.recording).cloned())
    }

    /// Records the end of the request: `outcome` is the reply's fault code, if any, or `None`
    /// when the request went away before it answered.
    fn finish(self, recorded: Recorded, outcome: Option<Option<i64>>) {
        let telemetry = telemetry();
        ACTIVE_REQUESTS.fetch_sub(1, Ordering::Relaxed);
        let outcome = match outcome {
            None => Outcome::Cancelled,
            Some(Some(code)) => {
                if let Some(kind) = refusal_kind(code) {
                    telemetry
                        .refusals
                        .add(1, &[KeyValue::new("tollgate.refusal.kind", kind)]);
                }
                Outcome::Code(code)
            }
            Some(None) if recorded.tool_error => Outcome::ToolError,
            Some(None) => Outcome::Ok,
        };
        if let Some(cx) = self.cx.as_ref().filter(|_| self.recording) {
            let span = cx.span();
            if let Some(error) = outcome.error_type() {
                if let Outcome::Code(_) = outcome {
                    span.set_attribute(KeyValue::new("rpc.response.status_code", error.clone()));
                }
                span.set_status(Status::error(error.as_str().into_owned()));
                span.set_attribute(KeyValue::new("error.type", error));
            }
            span.end();
        }
        let cell = Cell {
            method: self.method,
            transport: self.transport,
            revision: recorded.revision,
            target: recorded.target.as_ref(),
            outcome,
        };
        cells::record(
            &telemetry.duration,
            &cell,
            self.started.elapsed().as_secs_f64(),
        );
    }
}

impl Outcome {
    /// The `error.type` the outcome records, if it is one.
    pub(super) fn error_type(&self) -> Option<Value> {
        match self {
            Self::Ok => None,
            Self::Cancelled => Some(Value::from("cancelled")),
            Self::ToolError => Some(Value::from("tool_error")),
            Self::Code(code) => Some(Value::from(code.to_string())),
        }
    }
}

pin_project_lite::pin_project! {
    /// A request's work with its span as the current context on every poll and what the
    /// pipeline learns about it kept for this thread while it runs; its end is recorded
    /// once, at its reply or, when it is dropped before that, as cancelled. The work stays
    /// where it was built: the wrapper adds no allocation and no copy of it.
    pub(crate) struct Instrumented<F> {
        #[pin]
        work: F,
        recorded: Option<Recorded>,
        request: Option<Request>,
    }

    impl<F> PinnedDrop for Instrumented<F> {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let Some(request) = this.request.take() {
                request.finish(this.recorded.take().unwrap_or_default(), None);
            }
        }
    }
}

impl<F: Future<Output = Reply>> Future for Instrumented<F> {
    type Output = Reply;

    fn poll(self: Pin<&mut Self>, task: &mut std::task::Context<'_>) -> Poll<Reply> {
        let this = self.project();
        let poll = {
            let _attached = this
                .request
                .as_ref()
                .and_then(|r| r.cx.clone())
                .map(Context::attach);
            let _current = current::enter(this.recorded);
            this.work.poll(task)
        };
        if let Poll::Ready(reply) = &poll
            && let Some(request) = this.request.take()
        {
            let recorded = this.recorded.take().unwrap_or_default();
            request.finish(recorded, Some(reply.fault.map(|f| f.code())));
        }
        poll
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    /// The lib tests install no tracer provider: the global tracer is the API's no-op one.
    #[test]
    fn with_the_no_op_tracer_requests_carry_only_a_callers_trace() {
        let request = Request::start("tools/call", None, None, None, || None);
        assert!(request.cx.is_none());
        assert!(INERT.load(Ordering::Relaxed));
        // Skipping the tracer still passes a caller's trace on, unsampled and remote.
        let mut headers = HeaderMap::new();
        headers.insert(
            "traceparent",
            http::HeaderValue::from_static(
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
            ),
        );
        let request = Request::start("tools/call", None, None, Some(&headers), || None);
        let cx = request.cx.as_ref().unwrap();
        let carried = cx.span().span_context().clone();
        assert_eq!(
            carried.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(carried.span_id().to_string(), "b7ad6b7169203331");
        assert!(carried.is_remote() && !carried.is_sampled());
        assert!(!request.recording);
    }

    /// The work sees the request's context and record on every poll, and neither after.
    #[tokio::test]
    async fn the_work_runs_in_its_request() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "traceparent",
            http::HeaderValue::from_static(
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            ),
        );
        let request = Request::start("tools/call", None, None, Some(&headers), || None);
        let work = std::pin::pin!(async {
            super::super::revision("2026-07-28");
            tokio::task::yield_now().await;
            let cx = Context::current();
            assert_eq!(
                cx.span().span_context().span_id().to_string(),
                "b7ad6b7169203331"
            );
            Reply::empty(http::StatusCode::OK)
        });
        let reply = request.run(work).await;
        assert_eq!(reply.status, http::StatusCode::OK);
        assert!(!Context::current().span().span_context().is_valid());
    }
}
