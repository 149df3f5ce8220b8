//! The request running on this thread (feature `otel`): what the pipeline learns about it
//! (its revision, its registered target, a tool error) for the duration metric, its span when
//! it records, and the stage spans made under it; plus the instruments that count outside a
//! request (refusals before a span, task transitions, open streams).
//!
//! [`super::running::Instrumented`] puts its request's record here for each poll and takes it back
//! after (a nested request keeps the outer one aside), so a record is never shared and needs
//! no lock; work the request spawns starts without one, as it starts without the request's
//! context unless [`carry`] gives it that.
//!
//! Knows the OpenTelemetry API; nothing of transports, envelopes or handlers.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use opentelemetry::context::FutureExt as _;
use opentelemetry::trace::{SpanBuilder, SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};

use super::on::{ACTIVE_STREAMS, telemetry};
use super::target::Target;
use crate::version::ProtocolVersion;

/// A registered target's name, shared with its registration.
pub(super) enum Owned {
    Tool(Arc<str>),
    Prompt(Arc<str>),
}

/// What the pipeline learned about a request, kept for the metric at its end (a span's
/// attributes cannot be read back, and an unsampled span keeps none). It moves into this
/// thread's slot and back at every poll, so it is kept small (40 bytes): the span is boxed (a
/// request that records pays one allocation more), the revision is one byte.
#[derive(Default)]
pub(super) struct Recorded {
    /// The request's span, when it records: attributes learned later go on it (never on
    /// whatever span is current, which inside a stage is the stage's).
    span: Option<Box<Context>>,
    pub(super) revision: Option<ProtocolVersion>,
    pub(super) target: Option<Owned>,
    pub(super) tool_error: bool,
}

impl Recorded {
    /// A request's record, with its span when that records.
    pub(super) fn new(span: Option<Context>) -> Self {
        Self {
            span: span.map(Box::new),
            ..Self::default()
        }
    }

    /// Sets `attribute` on the request's span, when it records.
    fn attribute(&self, attribute: impl FnOnce() -> KeyValue) {
        if let Some(cx) = &self.span {
            cx.span().set_attribute(attribute());
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Recorded>> = const { RefCell::new(None) };
    /// Whether the record in [`CURRENT`] records (has its span): what every stage asks first,
    /// kept apart in a cell with nothing to drop, so asking is one load and no borrow.
    static RECORDING: Cell<bool> = const { Cell::new(false) };
}

/// Puts `record` in place as this thread's, returning the one it replaces.
#[inline]
fn swap(record: Option<Recorded>) -> Option<Recorded> {
    CURRENT
        .try_with(|c| {
            c.try_borrow_mut()
                .map(|mut c| std::mem::replace(&mut *c, record))
        })
        .ok()
        .and_then(Result::ok)
        .flatten()
}

/// Sets whether this thread's record records, returning what it was.
fn set_recording(recording: bool) -> bool {
    RECORDING
        .try_with(|r| r.replace(recording))
        .unwrap_or(false)
}

/// A request's record in place as this thread's for one poll; put back when dropped (also
/// when the poll panics), with the record it set aside restored.
pub(super) struct Entered<'a> {
    slot: &'a mut Option<Recorded>,
    outer: Option<Recorded>,
    outer_recording: bool,
}

/// Makes `slot`'s record this thread's until the returned guard is dropped.
#[inline]
pub(super) fn enter(slot: &mut Option<Recorded>) -> Entered<'_> {
    let outer_recording = set_recording(slot.as_ref().is_some_and(|r| r.span.is_some()));
    let outer = swap(slot.take());
    Entered {
        slot,
        outer,
        outer_recording,
    }
}

impl Drop for Entered<'_> {
    #[inline]
    fn drop(&mut self) {
        set_recording(self.outer_recording);
        *self.slot = swap(self.outer.take());
    }
}

/// Applies `update` to the current request's record, if a request is running here.
fn with<T>(update: impl FnOnce(&mut Recorded) -> T) -> Option<T> {
    CURRENT
        .try_with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            c.as_mut().map(update)
        })
        .ok()
        .flatten()
}

/// The revision recorded for the request running here (tests read it back).
#[cfg(test)]
pub(super) fn revision_here() -> Option<&'static str> {
    with(|r| r.revision.map(ProtocolVersion::as_str)).flatten()
}

/// Whether the request running here records (its span is sampled and not a no-op; the
/// current context is then the request's or one of its stages').
#[inline]
fn recording() -> bool {
    RECORDING.try_with(Cell::get).unwrap_or(false)
}

/// The request's revision, once its gate has read it.
pub(crate) fn revision(revision: ProtocolVersion) {
    with(|r| {
        r.attribute(|| KeyValue::new("mcp.protocol.version", revision.as_str()));
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
                r.attribute(|| KeyValue::new("gen_ai.tool.name", name.to_string()));
                Owned::Tool(Arc::clone(name))
            }
            Target::Prompt(name) => {
                r.attribute(|| KeyValue::new("gen_ai.prompt.name", name.to_string()));
                Owned::Prompt(Arc::clone(name))
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
#[inline]
fn child(name: &'static str) -> Option<Context> {
    if recording() {
        Some(new_child(name))
    } else {
        None
    }
}

/// A child span of the current context (the request records).
#[cold]
fn new_child(name: &'static str) -> Context {
    let parent = Context::current();
    let builder = SpanBuilder::from_name(name).with_kind(SpanKind::Internal);
    let span = telemetry().tracer.build_with_context(builder, &parent);
    parent.with_span(span)
}

pin_project_lite::pin_project! {
    /// One stage of a request, in a child span of its own when the request records (else
    /// the work alone, polled in place). The span ends when the stage does, or when it is
    /// dropped unfinished.
    pub(crate) struct Staged<F: Future> {
        #[pin]
        work: F,
        span: Option<Context>,
        name: &'static str,
        failed: fn(&F::Output) -> bool,
    }

    impl<F: Future> PinnedDrop for Staged<F> {
        fn drop(this: Pin<&mut Self>) {
            if let Some(cx) = this.project().span.take() {
                cx.span().end();
            }
        }
    }
}

impl<F: Future> Future for Staged<F> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, task: &mut std::task::Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let Some(cx) = this.span.as_ref() else {
            return this.work.poll(task);
        };
        let poll = {
            let _attached = cx.clone().attach();
            this.work.poll(task)
        };
        if let Poll::Ready(out) = &poll
            && let Some(cx) = this.span.take()
        {
            // A failure names only the stage, nothing of the error.
            if (this.failed)(out) {
                cx.span().set_status(Status::error(*this.name));
            }
            cx.span().end();
        }
        poll
    }
}

/// Runs one stage of the request (`admission`, `handler`) in a child span of its own.
#[inline]
pub(crate) fn stage<F: Future>(name: &'static str, work: F) -> Staged<F> {
    Staged {
        work,
        span: child(name),
        name,
        failed: |_| false,
    }
}

/// [`stage`] for a call that may fail (a task store call): a failure sets the span's
/// status to error, with the stage's name and nothing of the error.
pub(crate) fn stage_fallible<T, E, F>(name: &'static str, work: F) -> Staged<F>
where
    F: Future<Output = Result<T, E>>,
{
    Staged {
        work,
        span: child(name),
        name,
        failed: Result::is_err,
    }
}

/// [`stage`] for a stage that does not wait (`validation`, `output`).
#[inline]
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
        // The instruments are made with the first count, so the meter observes this one.
        let _ = telemetry();
        ACTIVE_STREAMS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Self(())
    }
}

impl Drop for StreamGauge {
    fn drop(&mut self) {
        ACTIVE_STREAMS.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn a_nested_request_sets_the_outer_one_aside_and_back() {
        // The outer request records (it has a span); the inner one does not.
        let mut outer = Some(Recorded::new(Some(Context::new())));
        let mut inner = Some(Recorded::default());
        assert_eq!(with(|_| ()), None, "no request outside");
        assert!(!recording());
        {
            let _o = enter(&mut outer);
            assert!(recording());
            revision(ProtocolVersion::V2025_11_25);
            {
                let _i = enter(&mut inner);
                assert!(!recording());
                assert_eq!(revision_here(), None);
                revision(ProtocolVersion::V2026_07_28);
                tool_error();
            }
            assert!(recording());
            assert_eq!(revision_here(), Some("2025-11-25"));
            assert!(!with(|r| r.tool_error).unwrap());
        }
        assert!(!recording());
        assert_eq!(with(|_| ()), None);
        let (outer, inner) = (outer.unwrap(), inner.unwrap());
        assert_eq!(outer.revision, Some(ProtocolVersion::V2025_11_25));
        assert_eq!(inner.revision, Some(ProtocolVersion::V2026_07_28));
        assert!(inner.tool_error && !outer.tool_error);
    }

    #[test]
    fn the_record_moved_at_each_poll_stays_small() {
        assert!(std::mem::size_of::<Option<Recorded>>() <= 40);
    }

    #[test]
    fn a_panicking_poll_still_puts_the_record_back() {
        let mut slot = Some(Recorded::new(Some(Context::new())));
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _entered = enter(&mut slot);
            assert!(recording());
            revision(ProtocolVersion::V2026_07_28);
            panic!("the work panicked");
        }));
        assert!(caught.is_err());
        assert_eq!(with(|_| ()), None);
        assert_eq!(slot.unwrap().revision, Some(ProtocolVersion::V2026_07_28));
        assert!(!recording());
    }
}
