//! How a POST request with an id is answered: in the request's own future, or behind an event
//! stream its notifications can go out on before the response. A request that may stream runs in
//! the request's own future until its answer's shape is known, and moves to a task of its own
//! only once it streams.
//!
//! Owns the choice and the move. Knows nothing of the HTTP checks before it (the service's
//! `mod.rs`) nor of what the request does (`pipeline::receive`).

use std::future::Future;
use std::sync::Arc;

use tollgate_json::JsonValue;

use super::{McpBody, Outcome};
use crate::facts::request::OriginatingRequest;
use crate::model::features::NotificationSink;
use crate::pipeline::envelope::asks_for_progress;
use crate::pipeline::receive;
use crate::registry::Endpoint;
use crate::stream::event::{Answer, Connection, EventStream, FinishOnDrop};
use crate::wire::head::Head;
use crate::wire::method::Method as McpMethod;

/// How a request with an id is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Answering {
    /// In the request's own future.
    Inline,
    /// Behind an event stream, so its notifications can stream while it works.
    InTask,
    /// Behind an event stream, for as long as the stream lasts (`subscriptions/listen`).
    Listen,
}

/// A request is answered behind an event stream when it is a listen, asks for progress, the
/// endpoint lets handlers log, or it is a tool call, `prompts/get` or `resources/read` inside a
/// 2025 session (whose handler may ask the client, close the connection, and whose client may
/// resume it); otherwise inline.
pub(super) fn answering(endpoint: &Endpoint, in_session: bool, value: &JsonValue) -> Answering {
    if value.get("id").is_none() {
        return Answering::Inline;
    }
    // The envelope is read later (in the task, or inline): the few methods asked about here
    // are each one comparison, rather than the method read twice.
    let method = value
        .get("method")
        .and_then(JsonValue::as_str)
        .unwrap_or_default();
    if McpMethod::SubscriptionsListen.is_named(method) {
        Answering::Listen
    } else if endpoint.inner.logging
        || asks_for_progress(value)
        || (endpoint.inner.sessions.is_some()
            && in_session
            && (McpMethod::ToolsCall.is_named(method)
                || McpMethod::PromptsGet.is_named(method)
                || McpMethod::ResourcesRead.is_named(method)))
    {
        Answering::InTask
    } else {
        Answering::Inline
    }
}

/// Runs the request behind an event stream. It is polled in the request's own future until its
/// answer's shape is known: if it finishes before notifying, the answer is the usual JSON reply
/// and no task was spawned. Once it sends a notification (or its handler closes the
/// connection), the rest of its work moves, as it is, to a task of its own, and the answer
/// becomes an event stream carrying the notifications and then the response.
///
/// Cancellation (`notifications/cancelled`, the session's end) drops the work where it runs:
/// here before it streams, by aborting its task after. A client that goes away before the
/// answer streams drops the work with the request's future; from a stream it cannot resume, its
/// connection aborts the task; a resumable stream keeps running, for a `GET` with
/// `Last-Event-ID`.
pub(super) async fn answer_in_task(
    endpoint: Endpoint,
    origin: Arc<OriginatingRequest>,
    value: JsonValue,
) -> Outcome {
    let stream = EventStream::new(endpoint.inner.streams);
    let sink = NotificationSink::Stream(Arc::clone(&stream));
    let finish = FinishOnDrop(Arc::clone(&stream));
    // The work carries the caller's telemetry context (feature `otel`), wherever it is polled.
    // Boxed: the request's large future is written once, on the heap, and a task takes the box
    // as it is (a polled future may move only behind its pin).
    let mut work = Some(Box::pin(crate::facts::telemetry::carry(async move {
        let head = Head::read(origin.headers());
        let reply = receive(&endpoint, &origin, &head, &value, Some(&sink)).await;
        drop(sink);
        finish.0.finish(reply);
    })));
    let answer = std::future::poll_fn(|cx| {
        if work.is_some() && stream.is_cancelled() {
            // As an aborted task would be: dropped unpolled, its stream finished without a reply.
            work = None;
        }
        if let Some(running) = work.as_mut()
            && running.as_mut().poll(cx).is_ready()
        {
            work = None;
        }
        stream.poll_answer(cx)
    })
    .await;
    match answer {
        Answer::Json(reply) => Outcome::Reply(reply),
        Answer::Stream => {
            // Still running: on in a task of its own, which a cancellation can abort. A future
            // polled here registered this connection's waker; its next poll, in the task,
            // registers the task's.
            let task = work.map(tokio::spawn).map(|task| task.abort_handle());
            if let Some(task) = &task {
                stream.set_task(task.clone());
            }
            let mut guard = AbortOnDrop(task);
            if stream.is_numbered() {
                guard.disarm();
            }
            Outcome::Stream(McpBody::events(Connection::for_post(stream), guard))
        }
    }
}

/// Aborts the request's task when dropped, unless disarmed.
pub(super) struct AbortOnDrop(pub(super) Option<tokio::task::AbortHandle>);

impl AbortOnDrop {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}
