//! A request's span and clock (feature `otel`): the tracer and instruments, read once from the
//! global providers, and the span a request starts with, parented by its caller's trace.
//! [`super::running`] carries the request from there to its end.
//!
//! Knows the OpenTelemetry API; nothing of transports, envelopes or handlers beyond the
//! method, transport kind, trace headers and `_meta` it is given.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

use opentelemetry::global::BoxedTracer;
use opentelemetry::metrics::{Counter, Histogram, ObservableUpDownCounter};
use opentelemetry::trace::{
    Span as _, SpanBuilder, SpanContext, SpanId, SpanKind, TraceContextExt as _, TraceFlags,
    TraceId, TraceState, Tracer,
};
use opentelemetry::{Context, InstrumentationScope, KeyValue};

use http::HeaderMap;
use tollgate_json::JsonObject;

use super::target::Target;
use crate::facts::trace::TraceContext;
use crate::wire::head::Head;
use crate::wire::id::RequestId;
use crate::wire::method::Method;

/// The semantic conventions' advised buckets for `mcp.server.operation.duration`, seconds.
const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The longest request id recorded on a span, in bytes.
pub(crate) const MAX_RECORDED_ID_BYTES: usize = 128;

/// Requests being answered and event streams open, counted where they begin and end and
/// observed by the meter when it collects (an atomic add per change instead of an SDK call).
pub(super) static ACTIVE_REQUESTS: AtomicI64 = AtomicI64::new(0);
pub(super) static ACTIVE_STREAMS: AtomicI64 = AtomicI64::new(0);

/// The made-up parent [`makes_no_spans`] asks the tracer under: trace and span ids no caller
/// sends. The SDK and the API's no-op tracer record nothing under it; a tracer of another kind
/// that records spans under a suppressed or an unsampled parent could export a
/// `tollgate.probe` span with these ids, once.
const PROBE_TRACE: u128 = 0x746f_6c6c_6761_7465_2d70_726f_6265_0001;
const PROBE_SPAN: u64 = 0x7072_6f62_6500_0001;

pub(super) struct Telemetry {
    pub(super) tracer: BoxedTracer,
    /// The tracer makes no spans (the API's no-op tracer): requests skip it.
    inert: bool,
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
        let tracer = opentelemetry::global::tracer_with_scope(scope);
        Telemetry {
            inert: makes_no_spans(&tracer),
            tracer,
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

/// Whether `tracer` makes no spans of its own, asked once under a made-up unsampled parent. A
/// tracer that makes spans gives each one an id of its own, recorded or not; only one that
/// makes none (the API's no-op tracer) hands back its parent's span context. It is asked first
/// with telemetry suppressed, which the SDK answers without making a span at all; only a tracer
/// that answered that with the parent's own context is asked again, unsuppressed.
fn makes_no_spans<T: Tracer>(tracer: &T) -> bool {
    let probe = SpanContext::new(
        TraceId::from(PROBE_TRACE),
        SpanId::from(PROBE_SPAN),
        TraceFlags::default(),
        true,
        TraceState::default(),
    );
    let parent = Context::new().with_remote_span_context(probe.clone());
    let echoes = |cx: &Context| {
        let span = tracer.build_with_context(SpanBuilder::from_name("tollgate.probe"), cx);
        !span.is_recording() && *span.span_context() == probe
    };
    echoes(&parent.with_telemetry_suppressed()) && echoes(&parent)
}

/// The method's name as the conventions record it: a method Tollgate knows (as the envelope
/// read it), else `_OTHER` (what a client sends is not a metric attribute).
fn method_name(known: Option<Method>) -> &'static str {
    known.map_or("_OTHER", Method::name)
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
/// when there is nothing to pass on (no span, and a parent without a span context), and holds
/// only the span context when the span does not record.
fn span<T: Tracer>(
    tracer: &T,
    inert: bool,
    (method, transport, http): (&'static str, &'static str, bool),
    parent: Context,
) -> (Option<Context>, bool)
where
    T::Span: Send + Sync + 'static,
{
    let inherited = parent.span().span_context().is_valid();
    if inert {
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
    let span = tracer.build_with_context(builder, &parent);
    if span.is_recording() {
        return (Some(parent.with_span(span)), true);
    }
    let carried = span.span_context().clone();
    if !carried.is_valid() {
        // No span (telemetry suppressed, or the provider shut down): the parent's passes on.
        return (inherited.then_some(parent), false);
    }
    // An unsampled span records nothing: the context keeps its span context alone (to parent
    // and propagate), not the span object.
    (Some(parent.with_remote_span_context(carried)), false)
}

/// A request's span and clock, from its envelope to its reply.
pub(crate) struct Request {
    /// The request's span in its parent's context: `None` when there is nothing to record
    /// or pass on (no span made and no caller's trace), so the request runs with no context
    /// of its own.
    cx: Option<Context>,
    recording: bool,
    pub(super) method: &'static str,
    pub(super) transport: &'static str,
    pub(super) started: Instant,
}

impl Request {
    /// Starts the span of a request for `method` (`None`: one Tollgate does not know) with id
    /// `id`, parented by the
    /// caller's trace context when it sent a valid one (`_meta` first, then the
    /// `traceparent` header), else by the current context. `headers` are an HTTP request's,
    /// with the fields [`Head::read`] found in them.
    pub(crate) fn start<'t>(
        method: Option<Method>,
        id: Option<&RequestId>,
        meta: Option<&JsonObject>,
        headers: Option<(&HeaderMap, &Head<'_>)>,
        target: impl FnOnce() -> Option<Target<'t>>,
    ) -> Self {
        let telemetry = telemetry();
        let http = headers.is_some();
        let method = method_name(method);
        let transport = if http { "tcp" } else { "pipe" };
        let started = Instant::now();
        // Without a `traceparent` field the headers hold no trace context (and the map is not
        // asked for one).
        let traced = headers
            .filter(|(_, head)| head.traceparent.is_present())
            .map(|(map, _)| map);
        let caller = crate::facts::trace::read_trace(meta, traced);
        let parent = match caller.as_ref().and_then(remote) {
            Some(remote) => Context::new().with_remote_span_context(remote),
            None => Context::current(),
        };
        let shape = (method, transport, http);
        let (cx, recording) = span(&telemetry.tracer, telemetry.inert, shape, parent);
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

    /// Whether the request has an OpenTelemetry context of its own (its span, or its caller's
    /// trace carried on): the request's span then is this one, and a `tracing` span for it
    /// would be a second one (a `tracing-opentelemetry` layer would export it outside the
    /// caller's trace).
    pub(crate) fn owns_trace(&self) -> bool {
        self.cx.is_some()
    }

    /// The context the request runs in, if it has one of its own.
    pub(super) fn context(&self) -> Option<&Context> {
        self.cx.as_ref()
    }

    /// The context of the request's span, when that span records.
    pub(super) fn recording_context(&self) -> Option<&Context> {
        self.cx.as_ref().filter(|_| self.recording)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry::trace::noop::NoopTracer;
    use opentelemetry_sdk::trace::{InMemorySpanExporter, Sampler, SdkTracerProvider};

    const SHAPE: (&str, &str, bool) = ("tools/call", "tcp", true);
    const TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
    const CALLER: &str = "b7ad6b7169203331";

    fn sdk(sampler: Sampler) -> (SdkTracerProvider, InMemorySpanExporter) {
        let spans = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_sampler(sampler)
            .with_simple_exporter(spans.clone())
            .build();
        (provider, spans)
    }

    /// A caller's context, sampled or not.
    fn caller(sampled: bool) -> Context {
        Context::new().with_remote_span_context(SpanContext::new(
            TraceId::from_hex(TRACE).unwrap(),
            SpanId::from_hex(CALLER).unwrap(),
            if sampled {
                TraceFlags::SAMPLED
            } else {
                TraceFlags::default()
            },
            true,
            TraceState::default(),
        ))
    }

    fn carried(cx: Option<Context>) -> SpanContext {
        cx.unwrap().span().span_context().clone()
    }

    #[test]
    fn only_a_tracer_that_makes_no_spans_is_skipped() {
        assert!(makes_no_spans(&NoopTracer::new()));
        let samplers = [
            Sampler::AlwaysOff,
            Sampler::AlwaysOn,
            Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
        ];
        for sampler in samplers {
            let (provider, spans) = sdk(sampler);
            assert!(!makes_no_spans(&provider.tracer("t")));
            // Asking made no span an exporter sees, whatever the sampler.
            assert!(spans.get_finished_spans().unwrap().is_empty());
            // Nor is a provider that was shut down taken for one that makes none.
            provider.shutdown().unwrap();
            assert!(!makes_no_spans(&provider.tracer("t")));
        }
    }

    #[test]
    fn an_unsampled_span_passes_on_its_own_context() {
        let (provider, spans) = sdk(Sampler::AlwaysOff);
        let (cx, recording) = span(&provider.tracer("t"), false, SHAPE, caller(true));
        assert!(!recording);
        let own = carried(cx);
        assert_eq!(own.trace_id().to_string(), TRACE);
        assert_ne!(own.span_id().to_string(), CALLER);
        assert!(own.is_valid() && !own.is_sampled() && !own.is_remote());
        assert!(spans.get_finished_spans().unwrap().is_empty());
        // A sampled one is kept, with its span.
        let (provider, _) = sdk(Sampler::AlwaysOn);
        let (cx, recording) = span(&provider.tracer("t"), false, SHAPE, caller(false));
        assert!(recording);
        assert!(carried(cx).is_sampled());
    }

    #[test]
    fn without_a_span_the_callers_context_still_passes_on() {
        // A provider that was shut down makes no span; the caller's trace goes on.
        let (provider, _) = sdk(Sampler::AlwaysOn);
        provider.shutdown().unwrap();
        let tracer = provider.tracer("t");
        let (cx, recording) = span(&tracer, false, SHAPE, caller(true));
        assert!(!recording);
        assert_eq!(carried(cx).span_id().to_string(), CALLER);
        let (cx, _) = span(&tracer, false, SHAPE, Context::new());
        assert!(cx.is_none());
        // Skipping a tracer that makes no spans does the same.
        let (cx, recording) = span(&NoopTracer::new(), true, SHAPE, caller(false));
        assert!(!recording);
        assert_eq!(carried(cx).span_id().to_string(), CALLER);
        assert!(
            span(&NoopTracer::new(), true, SHAPE, Context::new())
                .0
                .is_none()
        );
    }
}
