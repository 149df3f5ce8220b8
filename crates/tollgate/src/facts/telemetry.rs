//! OpenTelemetry for requests (feature `otel`): one server span per JSON-RPC request, named and
//! attributed by the OpenTelemetry semantic conventions for MCP and parented by the caller's
//! validated trace context, child spans for the stages that take time (admission, validation,
//! the handler, output, task store calls), the `mcp.server.operation.duration` histogram and
//! Tollgate's request, stream, task and refusal instruments.
//!
//! Spans are made through the OpenTelemetry API's global tracer provider, as the OpenTelemetry
//! project asks of instrumentation libraries, so the application's sampler decides when the
//! request starts: an unsampled request costs a sampler call and no stage spans. While a
//! request runs, its context is the current OpenTelemetry context, so a handler's own spans
//! (and `tracing` spans through `tracing-opentelemetry`) are its children. The tracer and the
//! instruments are read from the global providers once, on the first request. Only fixed
//! strings, registered operation names, revisions, codes, the request id and a validated 2025
//! session id are recorded: never an argument, a result, a header or an unregistered name.
//! Without the feature every function here is empty and inlined away.
//!
//! Knows nothing of transports, revisions' envelopes or handlers beyond the names it is given.

#[cfg(feature = "otel")]
pub(crate) use on::*;

#[cfg(not(feature = "otel"))]
pub(crate) use off::*;

/// An operation's registered target, for the span name and attributes.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(feature = "otel"),
    allow(dead_code, reason = "read only with the feature")
)]
pub(crate) enum Target<'a> {
    Tool(&'a str),
    Prompt(&'a str),
}

#[cfg(not(feature = "otel"))]
mod off {
    use std::future::Future;

    use http::HeaderMap;
    use tollgate_json::JsonObject;

    use super::Target;
    use crate::wire::id::RequestId;
    use crate::wire::reply::Reply;

    /// A request's telemetry: nothing without the feature.
    pub(crate) struct Request;

    impl Request {
        #[inline(always)]
        pub(crate) fn start<'t>(
            _: &str,
            _: Option<&RequestId>,
            _: Option<&JsonObject>,
            _: Option<&HeaderMap>,
            _: impl FnOnce() -> Option<Target<'t>>,
        ) -> Self {
            Self
        }

        /// The work itself: no wrapper future without the feature.
        #[inline(always)]
        pub(crate) fn run<F: Future<Output = Reply>>(self, work: F) -> F {
            work
        }
    }

    #[inline(always)]
    pub(crate) fn revision(_: &'static str) {}

    #[inline(always)]
    pub(crate) fn session(_: &str) {}

    #[inline(always)]
    pub(crate) fn task_status(_: &'static str) {}

    #[inline(always)]
    pub(crate) fn target(_: Target<'_>) {}

    #[inline(always)]
    pub(crate) fn tool_error() {}

    #[inline(always)]
    pub(crate) fn refused_input() {}

    #[inline(always)]
    pub(crate) fn stage<F: Future>(_: &'static str, work: F) -> F {
        work
    }

    #[inline(always)]
    pub(crate) fn stage_fallible<F: Future>(_: &'static str, work: F) -> F {
        work
    }

    #[inline(always)]
    pub(crate) fn stage_sync<T>(_: &'static str, work: impl FnOnce() -> T) -> T {
        work()
    }

    /// The work itself: no context to carry without the feature.
    #[inline(always)]
    pub(crate) fn carry<F: Future>(work: F) -> F {
        work
    }

    /// An open stream: nothing to count without the feature.
    pub(crate) struct StreamGauge;

    impl StreamGauge {
        #[inline(always)]
        pub(crate) fn open() -> Self {
            Self
        }
    }
}

#[cfg(feature = "otel")]
mod on {
    use std::future::Future;
    use std::sync::{Arc, Mutex, OnceLock, PoisonError};
    use std::time::Instant;

    use opentelemetry::context::FutureExt as _;
    use opentelemetry::global::BoxedTracer;
    use opentelemetry::metrics::{Counter, Histogram, UpDownCounter};
    use opentelemetry::trace::{
        Span as _, SpanBuilder, SpanContext, SpanId, SpanKind, Status, TraceContextExt as _,
        TraceFlags, TraceId, TraceState, Tracer as _,
    };
    use opentelemetry::{Context, InstrumentationScope, KeyValue, Value};

    use http::HeaderMap;
    use tollgate_json::JsonObject;

    use super::Target;
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

    struct Telemetry {
        tracer: BoxedTracer,
        duration: Histogram<f64>,
        active_requests: UpDownCounter<i64>,
        active_streams: UpDownCounter<i64>,
        refusals: Counter<u64>,
        task_transitions: Counter<u64>,
    }

    fn telemetry() -> &'static Telemetry {
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
                active_requests: meter
                    .i64_up_down_counter("tollgate.server.active_requests")
                    .with_unit("{request}")
                    .with_description("MCP requests being answered")
                    .build(),
                active_streams: meter
                    .i64_up_down_counter("tollgate.server.active_streams")
                    .with_unit("{stream}")
                    .with_description("Server-sent event streams open on a connection")
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

    /// Whether the request running on this task records (its span is sampled and not a no-op;
    /// the current context is then the request's or one of its stages').
    fn recording() -> bool {
        RECORDED
            .try_with(|r| lock(r).span.is_some())
            .unwrap_or(false)
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
            let telemetry = telemetry();
            let http = headers.is_some();
            let method = method_name(method);
            let transport = if http { "tcp" } else { "pipe" };
            let started = Instant::now();
            let caller = crate::facts::trace::read_trace(meta, headers);
            let parent = match caller.as_ref().and_then(remote) {
                Some(remote) => Context::new().with_remote_span_context(remote),
                None => Context::current(),
            };
            let mut attributes = Vec::with_capacity(3);
            attributes.push(KeyValue::new("mcp.method.name", method));
            attributes.push(KeyValue::new("network.transport", transport));
            if http {
                attributes.push(KeyValue::new("network.protocol.name", "http"));
            }
            let builder = SpanBuilder::from_name(method)
                .with_kind(SpanKind::Server)
                .with_attributes(attributes);
            let span = telemetry.tracer.build_with_context(builder, &parent);
            let recording = span.is_recording();
            // The API's no-op tracer, with no caller's trace to carry: no context at all.
            if !recording && !span.span_context().is_valid() {
                return Self {
                    cx: None,
                    recording,
                    method,
                    transport,
                    started,
                };
            }
            let cx = parent.with_span(span);
            let span = cx.span();
            if recording {
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
                cx: Some(cx),
                recording,
                method,
                transport,
                started,
            }
        }

        /// Runs the request with its span as the current context, then records its outcome
        /// and duration; a request dropped before it answers (its client went away, or it was
        /// cancelled) is recorded too, with `error.type` `cancelled`.
        pub(crate) async fn run<F: Future<Output = Reply>>(self, work: F) -> Reply {
            let telemetry = telemetry();
            // Without attributes the SDK counts without hashing a set.
            telemetry.active_requests.add(1, &[]);
            let recorded = Arc::new(Mutex::new(Recorded {
                span: if self.recording {
                    self.cx.clone()
                } else {
                    None
                },
                ..Recorded::default()
            }));
            let mut finish = Finish {
                recorded: Arc::clone(&recorded),
                outcome: None,
                request: self,
            };
            let reply = match &finish.request.cx {
                // Boxed once: the request's future is large, and each wrapper would move it.
                Some(cx) => {
                    let work = Box::pin(work.with_context(cx.clone()));
                    RECORDED.scope(recorded, work).await
                }
                None => RECORDED.scope(recorded, work).await,
            };
            finish.outcome = Some(reply.fault.map(|f| f.code()));
            reply
        }
    }

    /// The end of a request, recorded when it is dropped: after its reply (`outcome` set: the
    /// fault's code, if any) or when the request went away first (`outcome` unset).
    struct Finish {
        request: Request,
        recorded: Arc<Mutex<Recorded>>,
        outcome: Option<Option<i64>>,
    }

    impl Drop for Finish {
        fn drop(&mut self) {
            let telemetry = telemetry();
            telemetry.active_requests.add(-1, &[]);
            let recorded = std::mem::take(&mut *lock(&self.recorded));
            let request = &self.request;
            let mut attributes = Vec::with_capacity(5);
            attributes.push(KeyValue::new("mcp.method.name", request.method));
            attributes.push(KeyValue::new("network.transport", request.transport));
            if let Some(revision) = recorded.revision {
                attributes.push(KeyValue::new("mcp.protocol.version", revision));
            }
            match recorded.target {
                Some(Owned::Tool(name)) => attributes.push(KeyValue::new("gen_ai.tool.name", name)),
                Some(Owned::Prompt(name)) => {
                    attributes.push(KeyValue::new("gen_ai.prompt.name", name));
                }
                None => {}
            }
            let fault = self.outcome.flatten();
            let error: Option<Value> = match self.outcome {
                None => Some(Value::from("cancelled")),
                Some(Some(code)) => {
                    if let Some(kind) = refusal_kind(code) {
                        telemetry
                            .refusals
                            .add(1, &[KeyValue::new("tollgate.refusal.kind", kind)]);
                    }
                    Some(Value::from(code.to_string()))
                }
                Some(None) if recorded.tool_error => Some(Value::from("tool_error")),
                Some(None) => None,
            };
            if let Some(cx) = &request.cx {
                let span = cx.span();
                if let Some(error) = error.as_ref().filter(|_| request.recording) {
                    if fault.is_some() {
                        span.set_attribute(KeyValue::new(
                            "rpc.response.status_code",
                            error.clone(),
                        ));
                    }
                    span.set_status(Status::error(error.as_str().into_owned()));
                    span.set_attribute(KeyValue::new("error.type", error.clone()));
                }
                span.end();
            }
            if let Some(error) = error {
                attributes.push(KeyValue::new("error.type", error));
            }
            telemetry
                .duration
                .record(request.started.elapsed().as_secs_f64(), &attributes);
        }
    }

    fn lock(recorded: &Mutex<Recorded>) -> std::sync::MutexGuard<'_, Recorded> {
        // Every update is a field store: a poisoned lock is still consistent.
        recorded.lock().unwrap_or_else(PoisonError::into_inner)
    }

    enum Owned {
        Tool(String),
        Prompt(String),
    }

    /// What the pipeline learned about the request, kept for the metric at its end (a span's
    /// attributes cannot be read back, and an unsampled span keeps none).
    #[derive(Default)]
    struct Recorded {
        /// The request's span, when it records: attributes learned later go on it (never on
        /// whatever span is current, which inside a stage is the stage's).
        span: Option<Context>,
        revision: Option<&'static str>,
        target: Option<Owned>,
        tool_error: bool,
    }

    tokio::task_local! {
        static RECORDED: Arc<Mutex<Recorded>>;
    }

    impl Recorded {
        /// Sets `attribute` on the request's span, when it records.
        fn attribute(&self, attribute: impl FnOnce() -> KeyValue) {
            if let Some(cx) = &self.span {
                cx.span().set_attribute(attribute());
            }
        }
    }

    fn with(update: impl FnOnce(&mut Recorded)) {
        let _ = RECORDED.try_with(|r| update(&mut lock(r)));
    }

    /// The request's revision, once its gate has read it.
    pub(crate) fn revision(revision: &'static str) {
        with(|r| {
            r.attribute(|| KeyValue::new("mcp.protocol.version", revision));
            r.revision = Some(revision);
        });
    }

    /// The 2025 session the request belongs to, once the session store has found it (the id
    /// is the server's own, never one the store did not know).
    pub(crate) fn session(id: &str) {
        with(|r| r.attribute(|| KeyValue::new("mcp.session.id", id.to_owned())));
    }

    /// The registered operation the request names, once it was looked up.
    pub(crate) fn target(target: Target<'_>) {
        with(|r| {
            let owned = match target {
                Target::Tool(name) => {
                    r.attribute(|| KeyValue::new("gen_ai.operation.name", "execute_tool"));
                    r.attribute(|| KeyValue::new("gen_ai.tool.name", name.to_owned()));
                    Owned::Tool(name.to_owned())
                }
                Target::Prompt(name) => {
                    r.attribute(|| KeyValue::new("gen_ai.prompt.name", name.to_owned()));
                    Owned::Prompt(name.to_owned())
                }
            };
            r.target = Some(owned);
        });
    }

    /// A completed tool result with `isError: true`.
    pub(crate) fn tool_error() {
        with(|r| r.tool_error = true);
    }

    /// A message refused before it was read as JSON-RPC: past an input limit, or not JSON
    /// (-32700, answered before any span starts).
    pub(crate) fn refused_input() {
        telemetry()
            .refusals
            .add(1, &[KeyValue::new("tollgate.refusal.kind", "limits")]);
    }

    /// A task this instance moved into `status` (created, or changed by a stored update).
    pub(crate) fn task_status(status: &'static str) {
        telemetry()
            .task_transitions
            .add(1, &[KeyValue::new("tollgate.task.status", status)]);
    }

    /// A child span of the current request's span, when that one records.
    fn child(name: &'static str) -> Option<Context> {
        if !recording() {
            return None;
        }
        let parent = Context::current();
        let builder = SpanBuilder::from_name(name).with_kind(SpanKind::Internal);
        let span = telemetry().tracer.build_with_context(builder, &parent);
        Some(parent.with_span(span))
    }

    /// Runs `work` in a child span named `name` when the request records; an output `failed`
    /// says is a failure sets the span's status to error, naming only the stage.
    async fn staged<F: Future>(
        name: &'static str,
        work: F,
        failed: impl FnOnce(&F::Output) -> bool,
    ) -> F::Output {
        let Some(cx) = child(name) else {
            return work.await;
        };
        let out = work.with_context(cx.clone()).await;
        if failed(&out) {
            cx.span().set_status(Status::error(name));
        }
        cx.span().end();
        out
    }

    /// Runs one stage of the request (`admission`, `handler`) in a child span of its own.
    pub(crate) async fn stage<F: Future>(name: &'static str, work: F) -> F::Output {
        staged(name, work, |_| false).await
    }

    /// [`stage`] for a call that may fail (a task store call): a failure sets the span's
    /// status to error, with the stage's name and nothing of the error.
    pub(crate) async fn stage_fallible<T, E, F>(name: &'static str, work: F) -> Result<T, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        staged(name, work, Result::is_err).await
    }

    /// [`stage`] for a stage that does not wait (`validation`, `output`).
    pub(crate) fn stage_sync<T>(name: &'static str, work: impl FnOnce() -> T) -> T {
        match child(name) {
            None => work(),
            Some(cx) => {
                let out = {
                    let _attached = cx.clone().attach();
                    work()
                };
                cx.span().end();
                out
            }
        }
    }

    /// `work` with the current context as its own, for a task spawned to run it (a spawned
    /// task starts with an empty context).
    pub(crate) fn carry<F: Future>(work: F) -> opentelemetry::context::WithContext<F> {
        work.with_current_context()
    }

    /// One server-sent event stream open on a connection, counted while it lives.
    pub(crate) struct StreamGauge(());

    impl StreamGauge {
        pub(crate) fn open() -> Self {
            telemetry().active_streams.add(1, &[]);
            Self(())
        }
    }

    impl Drop for StreamGauge {
        fn drop(&mut self) {
            telemetry().active_streams.add(-1, &[]);
        }
    }
}
