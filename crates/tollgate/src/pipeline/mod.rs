//! The request pipeline: one function, [`handle`], runs every message of every transport
//! through the same stages, in order (the named values of `wire/stage.rs`):
//!
//! ```text
//! Transport    transport/: framing, the HTTP checks, the bounded body or line   ─┐ above
//! Envelope     envelope.rs: strict JSON under every limit, the JSON-RPC envelope ─┘
//! Revision     gate/: which revision, what it requires (returns facts: route, context)
//! Admission    admission.rs: the refusal throttle, admission, the request limiter
//! Session      session.rs: (2025) the admitted principal's session; `initialize`,
//!              `logging/setLevel` and notifications end here
//! Routing      route.rs: the method offered here on this revision → its handler in methods/
//! Lookup … Output   methods/: lookup, limiter, request state, interception, validation,
//!              handler, sanitizing, input required, output
//! ```
//!
//! `order.rs` lists every check by stage and renders `docs/protocol.md`'s table; a test below
//! runs requests of each method and revision and compares the stages they ran (and the rooms
//! that ran them) with it. The HTTP requests that carry no JSON-RPC method (a 2025 session's
//! `GET`, `DELETE` and client responses) are admitted the same way in `bare.rs`.
//!
//! Knows nothing of sockets or line framing (the transports hand it a parsed message and
//! [`Arrival`]); the method handlers below it know nothing of revisions' envelopes or sessions.

pub(crate) mod admission;
pub(crate) mod bare;
pub(crate) mod batch;
pub(crate) mod envelope;
pub(crate) mod gate;
pub(crate) mod order;
mod route;
mod session;

use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::request::OriginatingRequest;
use crate::model::features::NotificationSink;
use crate::model::origin::Transport;
use crate::pipeline::envelope::Envelope;
use crate::pipeline::gate::{Gated, Route};
use crate::registry::Endpoint;
use crate::session::local::LocalSession;
use crate::wire::fault::Fault;
use crate::wire::head::Head;
use crate::wire::method::Method;
use crate::wire::reply::{Reply, fault_reply};
use crate::wire::stage::stage;

/// What the transport knows of a message besides its body.
#[derive(Clone, Copy)]
pub(crate) struct Arrival<'a> {
    /// Its caller, its HTTP head (if any) and where its notifications go.
    pub(crate) transport: Transport<'a>,
    /// A line stream's own session (stdio); `None` over HTTP, where sessions are kept by the
    /// endpoint's session table.
    pub(crate) local: Option<&'a LocalSession>,
}

/// An HTTP body, parsed: a batch where its revision takes them (2025-03-26: each element as a
/// message of its own, `batch.rs`), a client's response to a server-to-client request (2025
/// sessions only; elsewhere a response is an invalid request), or a message for [`handle`].
pub(crate) async fn receive(
    endpoint: &Endpoint,
    origin: &Arc<OriginatingRequest>,
    head: &Head<'_>,
    value: &JsonValue,
    sink: Option<&NotificationSink>,
) -> Reply {
    if let Some(elements) = value.as_array()
        && gate::legacy::takes_batches(endpoint, head)
    {
        // A batch is answered as one array: nothing of it streams.
        // Boxed: batches are 2025-03-26's, and every request's future would carry their size.
        let one = |element| one(endpoint, origin, head, element, None);
        return Box::pin(batch::run(endpoint, elements.as_slice(), one)).await;
    }
    one(endpoint, origin, head, value, sink).await
}

/// One HTTP message (a body, or one element of a batch).
async fn one(
    endpoint: &Endpoint,
    origin: &Arc<OriginatingRequest>,
    head: &Head<'_>,
    value: &JsonValue,
    sink: Option<&NotificationSink>,
) -> Reply {
    let transport = Transport::http(origin, head, sink);
    if let (Some(object), true) = (
        value.as_object(),
        endpoint.inner.sessions.is_some() && head.session_id.is_present(),
    ) && crate::client_request::is_response(object)
    {
        return bare::client_response(endpoint, transport.caller(), object).await;
    }
    let message = match envelope::read(value) {
        Ok(message) => message,
        Err(reply) => return reply,
    };
    let arrival = Arrival {
        transport,
        local: None,
    };
    handle(endpoint, arrival, message).await
}

/// Every message, on every transport: the stages from the revision's gate to the reply.
///
/// The request's telemetry (feature `otel`) wraps its work and is dropped after it, so that a
/// request dropped unfinished drops its work (ending its stage spans) before recording its end.
/// No `async` block here: the request's future is the stages' own, wrapped, and [`stages`] is
/// one `async` block over its arguments (an `async fn` would keep a second copy of each in the
/// request's future).
pub(crate) fn handle<'a>(
    endpoint: &'a Endpoint,
    arrival: Arrival<'a>,
    message: Envelope,
) -> impl Future<Output = Reply> + 'a {
    use tracing::Instrument as _;
    let transport = arrival.transport;
    let headers = transport.headers().zip(transport.head());
    let telemetry = telemetry(endpoint, &message, headers);
    // The `tracing` span, where a subscriber has been set and OpenTelemetry (feature `otel`)
    // does not already hold the request's span: never two spans for one request.
    let span = if telemetry.owns_trace() || !tracing::dispatcher::has_been_set() {
        tracing::Span::none()
    } else {
        request_span(endpoint, &message)
    };
    telemetry
        .begin()
        .run(stages(endpoint, arrival, message))
        .instrument(span)
}

/// The request's `tracing` span (`wire/log.rs`): its method, its registered tool or prompt name
/// (an unregistered name is never recorded) and its id. Disabled, it costs one relaxed load.
fn request_span(endpoint: &Endpoint, message: &Envelope) -> tracing::Span {
    let method = message.kind.map_or("unknown", Method::name);
    let span = crate::wire::log::request_span(method, None, message.id.as_ref());
    if !span.is_disabled()
        && let Some(name) = registered(endpoint, message)
            .and_then(|_| message.params.as_ref()?.get("name")?.as_str())
    {
        span.record("name", name);
    }
    span
}

/// The stages, in order; the first refusal is the answer.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would hold its arguments twice in the request's future"
)]
fn stages<'a>(
    endpoint: &'a Endpoint,
    arrival: Arrival<'a>,
    message: Envelope,
) -> impl Future<Output = Reply> + 'a {
    async move {
        let transport = arrival.transport;
        stage!(Revision);
        // Matched where it is made: a named result would keep its place (the context's size
        // again) in the request's future after its parts are moved out.
        let Gated { route, mut context } = match through_gate(endpoint, arrival, &message) {
            Ok(gated) => gated,
            Err(reply) => return reply,
        };
        if let Err(reply) = admission::admit(endpoint, transport.caller(), &mut context).await {
            return reply;
        }
        // A 2026-07-28 request has no session: straight to routing. The 2025 path is boxed, so
        // a 2026-07-28 request's future does not carry (and copy) its size.
        let Route::Modern(method) = route else {
            return Box::pin(in_session(endpoint, arrival, &message, route, &mut context)).await;
        };
        // The gate found `_meta` in the parameters: they are present.
        let Some(params) = message.params.as_ref() else {
            return fault_reply(context.request_id.as_ref(), Fault::Internal, None);
        };
        route::dispatch(endpoint, transport, method, params, &mut context, None).await
    }
}

/// The revision's gate for a message, by its transport.
fn through_gate(
    endpoint: &Endpoint,
    arrival: Arrival<'_>,
    message: &Envelope,
) -> Result<Gated, Reply> {
    match arrival.local {
        Some(local) => gate::stdio(endpoint, arrival.transport, local, message),
        None => gate::http(endpoint, arrival.transport, message),
    }
}

/// The session stage of a 2025 message (or a notification, or `initialize`), then routing.
///
/// The message and context stay in [`stages`]' future, which awaits this one: the boxed
/// future holds pointers to them, not copies.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would hold its arguments twice in the boxed future"
)]
fn in_session<'a>(
    endpoint: &'a Endpoint,
    arrival: Arrival<'a>,
    message: &'a Envelope,
    route: Route,
    context: &'a mut crate::facts::context::RequestContext,
) -> impl Future<Output = Reply> + 'a {
    async move {
        // (`arrival.transport` where it is used: a copy here would be one more in the future.)
        stage!(Session);
        let bound = match session::bind(
            endpoint,
            arrival.transport,
            arrival.local,
            message,
            route,
            context,
        )
        .await
        {
            Ok(bound) => bound,
            Err(reply) => return reply,
        };
        let empty = JsonObject::new();
        let params = message.params.as_ref().unwrap_or(&empty);
        let session = bound.session.as_ref();
        let method = bound.method;
        let reply = route::dispatch(
            endpoint,
            arrival.transport,
            method,
            params,
            context,
            session,
        )
        .await;
        // The request counted against its session's bounds until answered.
        drop(bound.running);
        reply
    }
}

/// The telemetry of one request (nothing without the `otel` feature): its span starts here,
/// parented by the trace context of its `_meta` or headers.
fn telemetry(
    endpoint: &Endpoint,
    message: &Envelope,
    headers: Option<(&http::HeaderMap, &Head<'_>)>,
) -> crate::facts::telemetry::Request {
    crate::facts::telemetry::Request::start(
        message.kind,
        message.id.as_ref(),
        message
            .params
            .as_ref()
            .and_then(|p| p.get("_meta")?.as_object()),
        headers,
        || registered(endpoint, message),
    )
}

/// The registered tool or prompt a `tools/call` or `prompts/get` names, for its span's name
/// (an unregistered name is never recorded).
fn registered<'e>(
    endpoint: &'e Endpoint,
    message: &Envelope,
) -> Option<crate::facts::telemetry::Target<'e>> {
    use crate::facts::telemetry::Target;
    let name = message.params.as_ref()?.get("name")?.as_str()?;
    // The catalog as built (a live endpoint's later tools are named by their handler's stage).
    let inner = &endpoint.inner.catalog;
    match message.kind? {
        Method::ToolsCall => {
            let tool = inner.tools.get(*inner.by_name.get(name)?)?;
            Some(Target::Tool(tool.shared_name()))
        }
        Method::PromptsGet => {
            let prompt = inner.prompts.get(*inner.prompt_by_name.get(name)?)?;
            Some(Target::Prompt(prompt.shared_name()))
        }
        _ => None,
    }
}
