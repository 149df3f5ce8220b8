//! A request while it runs (feature `otel`): [`Running`] holds its span and what the pipeline
//! learns about it from its start to its end, and records that end exactly once, at the reply
//! or, when it is dropped first, as cancelled; [`Instrumented`] polls the request's work with
//! the span as the current context and the record in place for this thread.
//!
//! A `Running` is declared before the work it runs, so a request dropped unfinished drops its
//! work first (its stage spans end) and records its own end after.
//!
//! Knows the OpenTelemetry API and the reply's fault code; nothing of transports, envelopes or
//! handlers.

use std::borrow::BorrowMut;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::Instant;

use opentelemetry::trace::{Status, TraceContextExt as _};
use opentelemetry::{Context, KeyValue};

use super::cells::{self, Cell, Outcome};
use super::current::{self, Recorded};
use super::on::{ACTIVE_REQUESTS, Request, telemetry};
use crate::wire::reply::Reply;

/// A request from its start to its end (see the module's doc).
pub(crate) struct Running {
    /// `None` once the end is recorded.
    request: Option<Request>,
    recorded: Option<Recorded>,
}

impl Request {
    /// Counts the request as active; its end is recorded by the returned [`Running`].
    pub(crate) fn begin(self) -> Running {
        ACTIVE_REQUESTS.fetch_add(1, Ordering::Relaxed);
        let span = self.recording_context().cloned();
        Running {
            request: Some(self),
            recorded: Some(Recorded::new(span)),
        }
    }
}

impl Running {
    /// Runs the request's work with its span as the current context, recording the end at its
    /// reply. The wrapper holds the work and then the request, so a request dropped unfinished
    /// drops its work first.
    pub(crate) fn run<F: Future<Output = Reply>>(self, work: F) -> Instrumented<F, Self> {
        Instrumented::new(self, work)
    }

    /// Records the end of the request, once: `outcome` is the reply's fault code, if any, or
    /// `None` when the request went away before it answered.
    fn finish(&mut self, outcome: Option<Option<i64>>) {
        let Some(request) = self.request.take() else {
            return;
        };
        let recorded = self.recorded.take().unwrap_or_default();
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
        if let Some(cx) = request.recording_context() {
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
            method: request.method,
            transport: request.transport,
            revision: recorded
                .revision
                .map(crate::version::ProtocolVersion::as_str),
            target: recorded.target.as_ref(),
            outcome,
        };
        let now = Instant::now();
        let seconds = now.saturating_duration_since(request.started).as_secs_f64();
        cells::record(&telemetry.duration, &cell, seconds, now);
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.finish(None);
    }
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

pin_project_lite::pin_project! {
    /// A request's work, polled with the request's span as the current context and its record
    /// in place for this thread; the reply ends the request.
    /// `R` is the request, owned, or borrowed where its caller reads it afterwards.
    pub(crate) struct Instrumented<F, R> {
        #[pin]
        work: F,
        running: R,
    }
}

impl<F, R> Instrumented<F, R> {
    /// `work`, run as `running`'s.
    pub(crate) fn new(running: R, work: F) -> Self {
        Self { work, running }
    }
}

impl<F: Future<Output = Reply>, R: BorrowMut<Running>> Future for Instrumented<F, R> {
    type Output = Reply;

    fn poll(self: Pin<&mut Self>, task: &mut std::task::Context<'_>) -> Poll<Reply> {
        let this = self.project();
        let running: &mut Running = this.running.borrow_mut();
        let poll = {
            let _attached = running
                .request
                .as_ref()
                .and_then(|r| r.context().cloned())
                .map(Context::attach);
            let _current = current::enter(&mut running.recorded);
            this.work.poll(task)
        };
        if let Poll::Ready(reply) = &poll {
            running.finish(Some(reply.fault.map(|f| f.code())));
        }
        poll
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::wire::method::Method;
    use http::{HeaderMap, HeaderValue, StatusCode};

    fn traced() -> Request {
        let mut headers = HeaderMap::new();
        headers.insert(
            "traceparent",
            HeaderValue::from_static("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        );
        let head = crate::wire::head::Head::read(&headers);
        Request::start(
            Some(Method::ToolsCall),
            None,
            None,
            Some((&headers, &head)),
            || None,
        )
    }

    /// The work sees the request's context and record on every poll, and neither after.
    #[tokio::test]
    async fn the_work_runs_in_its_request() {
        let mut running = traced().begin();
        let work = std::pin::pin!(async {
            super::super::revision(crate::version::ProtocolVersion::V2026_07_28);
            tokio::task::yield_now().await;
            assert_eq!(current::revision_here(), Some("2026-07-28"));
            let cx = Context::current();
            assert_eq!(
                cx.span().span_context().span_id().to_string(),
                "b7ad6b7169203331"
            );
            Reply::empty(StatusCode::OK)
        });
        let reply = Instrumented::new(&mut running, work).await;
        assert_eq!(reply.status, StatusCode::OK);
        assert!(running.request.is_none(), "ended at the reply");
        assert_eq!(current::revision_here(), None);
        assert!(!Context::current().span().span_context().is_valid());
    }

    /// Dropping unfinished work does not end the request; dropping the request does.
    #[test]
    fn a_request_dropped_unfinished_ends_after_its_work() {
        let mut running = traced().begin();
        {
            let work = std::pin::pin!(async {
                super::super::revision(crate::version::ProtocolVersion::V2025_11_25);
                std::future::pending::<Reply>().await
            });
            let mut task = std::task::Context::from_waker(std::task::Waker::noop());
            let mut instrumented = std::pin::pin!(Instrumented::new(&mut running, work));
            assert!(instrumented.as_mut().poll(&mut task).is_pending());
        }
        assert!(
            running.request.is_some(),
            "still running once its work is gone"
        );
        assert_eq!(
            running.recorded.as_ref().and_then(|r| r.revision),
            Some(crate::version::ProtocolVersion::V2025_11_25),
            "the record came back from the poll"
        );
        running.finish(None);
        assert!(running.request.is_none() && running.recorded.is_none());
    }
}
