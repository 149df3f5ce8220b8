//! The revisions' gates: which revision a message belongs to on an endpoint serving several, and
//! what each revision requires before the shared pipeline takes the message. 2026-07-28 is
//! stateless (`modern`); 2025-11-25 and 2025-06-18 have `initialize`, sessions owned by their
//! principal, the session's streams and server-to-client requests (`legacy`).
//!
//! Owns the rule that tells them apart and the entry for a parsed HTTP body
//! ([`handle_value`]). Knows nothing of sockets; below it, the pipeline knows nothing of
//! revisions' envelopes.

pub(crate) mod legacy;
pub(crate) mod modern;

use std::sync::Arc;

use tollgate_json::JsonValue;

use crate::facts::request::OriginatingRequest;
use crate::model::features::NotificationSink;
use crate::model::origin::Transport;
use crate::pipeline::envelope::envelope;
use crate::registry::Endpoint;
use crate::wire::fault::Fault;
use crate::wire::head::Head;
use crate::wire::method::Method;
use crate::wire::reply::{Reply, fault_reply};

/// Handles a parsed body. `head` holds the fields [`Head::read`] found in `origin`'s headers.
pub(crate) async fn handle_value(
    endpoint: &Endpoint,
    origin: &Arc<OriginatingRequest>,
    head: &Head<'_>,
    value: &JsonValue,
    sink: Option<&NotificationSink>,
) -> Reply {
    let headers = origin.headers();
    let transport = Transport::http(origin, head, sink);
    // A client's response to a server-to-client request (2025 sessions only; elsewhere a
    // response is an invalid request).
    if let (Some(object), true) = (
        value.as_object(),
        endpoint.inner.sessions.is_some() && head.session_id.is_present(),
    ) && !object.contains_key("method")
        && object.contains_key("id")
        && (object.contains_key("result") || object.contains_key("error"))
    {
        return legacy::client_response(endpoint, transport.caller(), object).await;
    }
    // 2. Envelope.
    let message = match envelope(value) {
        Ok(m) => m,
        Err(id) => return fault_reply(id.as_ref(), Fault::InvalidRequest, None),
    };
    // The request's telemetry (feature `otel`), declared before its work so that a request
    // dropped unfinished drops its work (ending its stage spans) before recording its end. The
    // work is pinned where it is built and the wrapper holds a pointer to it: the request's
    // future is large, and each move would copy it.
    let mut running = telemetry(endpoint, &message, Some((headers, head))).begin();
    let work = std::pin::pin!(async move {
        // The 2025 revisions, when served: `initialize`, or a request naming one of them (in
        // its header, or through its session). Their gate's future is the larger of the two
        // and is boxed, so a 2026-07-28 request's future does not carry (and copy) its size.
        if let Some(revision) = legacy::selects(endpoint, head, &message) {
            return Box::pin(legacy::handle(endpoint, transport, message, revision)).await;
        }
        if message.id.is_none() {
            return modern::notification(endpoint, transport, &message).await;
        }
        modern::modern(endpoint, transport, message).await
    });
    running.run(work).await
}

/// The telemetry of one request (nothing without the `otel` feature): its span starts here,
/// parented by the trace context of its `_meta` or headers.
pub(crate) fn telemetry(
    endpoint: &Endpoint,
    message: &crate::pipeline::envelope::Envelope,
    headers: Option<(&http::HeaderMap, &Head<'_>)>,
) -> crate::facts::telemetry::Request {
    crate::facts::telemetry::Request::start(
        message.method.as_str(),
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
    message: &crate::pipeline::envelope::Envelope,
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
