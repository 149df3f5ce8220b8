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
//! With the feature: [`on`] starts a request's span, [`running`] carries the request to its end
//! and polls its work with the span current, [`current`] keeps what the pipeline learns about
//! the request running on this thread and makes the stage spans, and [`cells`] records the
//! duration histogram through per-thread handles bound to each attribute set. [`target`] is what
//! a request names, with or without the feature.
//!
//! Knows nothing of transports, revisions' envelopes or handlers beyond the names it is given.

#[cfg(feature = "otel")]
mod cells;
#[cfg(feature = "otel")]
mod current;
#[cfg(feature = "otel")]
mod on;
#[cfg(feature = "otel")]
mod running;

#[cfg(feature = "otel")]
pub(crate) use current::{
    StreamGauge, carry, refused_input, revision, session, stage, stage_fallible, stage_sync,
    target, task_status, tool_error,
};
#[cfg(feature = "otel")]
pub(crate) use on::Request;

#[cfg(not(feature = "otel"))]
pub(crate) use off::*;

mod target;

pub(crate) use target::Target;

#[cfg(not(feature = "otel"))]
mod off {
    use std::future::Future;

    use http::HeaderMap;
    use tollgate_json::JsonObject;

    use super::target::Target;
    use crate::wire::head::Head;
    use crate::wire::id::RequestId;
    use crate::wire::method::Method;
    use crate::wire::reply::Reply;

    /// A request's telemetry: nothing without the feature.
    pub(crate) struct Request;

    /// A running request: nothing without the feature.
    pub(crate) struct Running;

    impl Request {
        #[inline(always)]
        pub(crate) fn start<'t>(
            _: Option<Method>,
            _: Option<&RequestId>,
            _: Option<&JsonObject>,
            _: Option<(&HeaderMap, &Head<'_>)>,
            _: impl FnOnce() -> Option<Target<'t>>,
        ) -> Self {
            Self
        }

        #[inline(always)]
        pub(crate) fn begin(self) -> Running {
            Running
        }

        /// No OpenTelemetry context without the feature.
        #[inline(always)]
        pub(crate) fn owns_trace(&self) -> bool {
            false
        }
    }

    impl Running {
        /// The work itself: no wrapper future without the feature.
        #[inline(always)]
        pub(crate) fn run<F: Future<Output = Reply>>(self, work: F) -> F {
            work
        }
    }

    #[inline(always)]
    pub(crate) fn revision(_: crate::version::ProtocolVersion) {}

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
