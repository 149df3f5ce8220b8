//! OpenTelemetry for requests (feature `otel`): one server span per JSON-RPC request, named and
//! attributed by the OpenTelemetry semantic conventions for MCP and parented by the caller's
//! validated trace context, child spans for the stages that take time, and the
//! `mcp.server.operation.duration` histogram with Tollgate's request and refusal counters.
//!
//! Spans are `tracing` spans: an application installs `tracing-opentelemetry`'s layer (and
//! whatever exporter it likes) and they become OpenTelemetry spans; without a subscriber they
//! cost a callsite check. Instruments come from the global meter provider, read once on the first
//! request. Only fixed strings, registered operation names, revisions, codes and the request id
//! are recorded: never an argument, a result, a header or an unregistered name. Without the
//! feature every function here is empty and inlined away.
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
    pub(crate) fn revision(_: &'static str, _: Option<&str>) {}

    #[inline(always)]
    pub(crate) fn target(_: Target<'_>) {}

    #[inline(always)]
    pub(crate) fn tool_error() {}

    #[inline(always)]
    pub(crate) fn stage<F: Future>(_: &'static str, work: F) -> F {
        work
    }

    #[inline(always)]
    pub(crate) fn stage_sync<T>(_: &'static str, work: impl FnOnce() -> T) -> T {
        work()
    }
}

#[cfg(feature = "otel")]
mod on {
    use std::future::Future;
    use std::sync::OnceLock;
    use std::time::Instant;

    use opentelemetry::KeyValue;
    use opentelemetry::metrics::{Counter, Histogram, UpDownCounter};
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    };
    use tracing::Instrument as _;
    use tracing::field::Empty;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

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

    struct Instruments {
        duration: Histogram<f64>,
        active: UpDownCounter<i64>,
        refusals: Counter<u64>,
    }

    fn instruments() -> &'static Instruments {
        static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();
        INSTRUMENTS.get_or_init(|| {
            let meter = opentelemetry::global::meter("tollgate");
            Instruments {
                duration: meter
                    .f64_histogram("mcp.server.operation.duration")
                    .with_unit("s")
                    .with_description(
                        "MCP request or notification duration as observed on the receiver",
                    )
                    .with_boundaries(DURATION_BUCKETS.to_vec())
                    .build(),
                active: meter
                    .i64_up_down_counter("tollgate.server.active_requests")
                    .with_unit("{request}")
                    .with_description("MCP requests being answered")
                    .build(),
                refusals: meter
                    .u64_counter("tollgate.server.refusals")
                    .with_unit("{request}")
                    .with_description("MCP requests refused, by kind")
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

    fn parent(trace: &TraceContext) -> Option<opentelemetry::Context> {
        let trace_id = TraceId::from_hex(trace.trace_id()).ok()?;
        let span_id = SpanId::from_hex(trace.parent_id()).ok()?;
        let state = trace
            .tracestate()
            .and_then(|s| s.parse::<TraceState>().ok())
            .unwrap_or_default();
        let context = SpanContext::new(
            trace_id,
            span_id,
            TraceFlags::new(trace.flags()),
            true,
            state,
        );
        Some(opentelemetry::Context::new().with_remote_span_context(context))
    }

    /// A request's span and clock, from its envelope to its reply.
    pub(crate) struct Request {
        span: tracing::Span,
        method: &'static str,
        transport: &'static str,
        started: Instant,
    }

    impl Request {
        /// Starts the span of a request for `method` (as sent) with id `id`, parented by the
        /// caller's `trace` when it sent a valid one.
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
            // No subscriber takes request spans: nothing to name, parse or parent.
            if !tracing::enabled!(target: "tollgate::request", tracing::Level::INFO) {
                return Self {
                    span: tracing::Span::none(),
                    method,
                    transport,
                    started,
                };
            }
            let trace = meta.and_then(|m| crate::facts::trace::read(m, headers).0);
            let trace = trace.as_ref();
            let id = id.map(|id| match id {
                RequestId::String(s) => s.as_str().to_owned(),
                RequestId::Integer(n) => n.to_string(),
            });
            let id = id.as_deref();
            // `{mcp.method.name} {target}` for a registered tool or prompt (a bounded set of
            // names), else the method alone. The name is fixed when the span starts.
            let name = match target() {
                Some(Target::Tool(t) | Target::Prompt(t)) => format!("{method} {t}"),
                None => method.to_owned(),
            };
            let span = tracing::info_span!(
                target: "tollgate::request",
                "mcp.request",
                otel.name = name,
                otel.kind = "server",
                otel.status_code = Empty,
                mcp.method.name = method,
                mcp.protocol.version = Empty,
                mcp.session.id = Empty,
                jsonrpc.request.id = id,
                network.transport = transport,
                network.protocol.name = if http { Some("http") } else { None },
                gen_ai.operation.name = Empty,
                gen_ai.tool.name = Empty,
                gen_ai.prompt.name = Empty,
                error.type = Empty,
                rpc.response.status_code = Empty,
            );
            if let Some(parent) = trace.and_then(parent) {
                let _ = span.set_parent(parent);
            }
            Self {
                span,
                method,
                transport,
                started,
            }
        }

        /// Runs the request inside its span, then records its outcome and duration.
        pub(crate) async fn run<F: Future<Output = Reply>>(self, work: F) -> Reply {
            let instruments = instruments();
            let base = [
                KeyValue::new("mcp.method.name", self.method),
                KeyValue::new("network.transport", self.transport),
            ];
            instruments.active.add(1, &base);
            let traced = work.instrument(self.span.clone());
            let (reply, recorded) = RECORDED
                .scope(std::cell::RefCell::new(Recorded::default()), async {
                    let reply = traced.await;
                    (reply, Recorded::take())
                })
                .await;
            instruments.active.add(-1, &base);
            let mut attributes = base.to_vec();
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
            let error = match reply.fault.map(|f| f.code()) {
                Some(code) => {
                    self.span
                        .record("rpc.response.status_code", code.to_string());
                    if let Some(kind) = refusal_kind(code) {
                        instruments
                            .refusals
                            .add(1, &[KeyValue::new("tollgate.refusal.kind", kind)]);
                    }
                    Some(code.to_string())
                }
                None if recorded.tool_error => Some("tool_error".to_owned()),
                None => None,
            };
            if let Some(error) = error {
                self.span.record("error.type", error.as_str());
                self.span.record("otel.status_code", "ERROR");
                attributes.push(KeyValue::new("error.type", error));
            }
            instruments
                .duration
                .record(self.started.elapsed().as_secs_f64(), &attributes);
            reply
        }
    }

    enum Owned {
        Tool(String),
        Prompt(String),
    }

    /// What the pipeline learned about the request, kept for the metric at its end (a span's
    /// fields cannot be read back).
    #[derive(Default)]
    struct Recorded {
        revision: Option<&'static str>,
        target: Option<Owned>,
        tool_error: bool,
    }

    tokio::task_local! {
        static RECORDED: std::cell::RefCell<Recorded>;
    }

    impl Recorded {
        fn take() -> Self {
            RECORDED
                .try_with(|r| std::mem::take(&mut *r.borrow_mut()))
                .unwrap_or_default()
        }
    }

    fn with(update: impl FnOnce(&mut Recorded)) {
        let _ = RECORDED.try_with(|r| update(&mut r.borrow_mut()));
    }

    /// The request's revision (and 2025 session), once its gate has read them.
    pub(crate) fn revision(revision: &'static str, session: Option<&str>) {
        let span = tracing::Span::current();
        span.record("mcp.protocol.version", revision);
        if let Some(session) = session {
            span.record("mcp.session.id", session);
        }
        with(|r| r.revision = Some(revision));
    }

    /// The registered operation the request names, once it was looked up.
    pub(crate) fn target(target: Target<'_>) {
        let span = tracing::Span::current();
        match target {
            Target::Tool(name) => {
                span.record("gen_ai.tool.name", name);
                span.record("gen_ai.operation.name", "execute_tool");
                with(|r| r.target = Some(Owned::Tool(name.to_owned())));
            }
            Target::Prompt(name) => {
                span.record("gen_ai.prompt.name", name);
                with(|r| r.target = Some(Owned::Prompt(name.to_owned())));
            }
        }
    }

    /// A completed tool result with `isError: true`.
    pub(crate) fn tool_error() {
        with(|r| r.tool_error = true);
    }

    /// Runs one stage of the request (`admission`, `validation`, `handler`, `output`, a task
    /// store operation) in a child span of its own.
    pub(crate) async fn stage<F: Future>(name: &'static str, work: F) -> F::Output {
        let span = tracing::info_span!(target: "tollgate::stage", "mcp.stage", otel.name = name);
        work.instrument(span).await
    }

    /// [`stage`] for a stage that does not wait.
    pub(crate) fn stage_sync<T>(name: &'static str, work: impl FnOnce() -> T) -> T {
        let span = tracing::info_span!(target: "tollgate::stage", "mcp.stage", otel.name = name);
        let _entered = span.enter();
        work()
    }
}
