//! The revisions' gates, the pipeline's first stage after the envelope: which revision a message
//! belongs to on an endpoint serving several, and what that revision requires before admission.
//! 2026-07-28 is stateless (`modern`); 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05 (stdio
//! only) have `initialize` and sessions (`legacy`).
//!
//! A gate checks and returns facts ([`Gated`]: the route the message takes and its context, not
//! yet admitted); it never admits, looks up a session or dispatches. Owns the rule that tells the
//! revisions apart (`legacy::selects` over HTTP, [`stdio`] over a line stream). Knows nothing of
//! sockets or of methods' handlers.

pub(crate) mod legacy;
pub(crate) mod modern;

use tollgate_json::JsonValue;

use crate::facts::context::{ClientCapabilities, ClientInfo, RequestContext};
use crate::model::origin::Transport;
use crate::pipeline::envelope::Envelope;
use crate::registry::Endpoint;
use crate::session::local::LocalSession;
use crate::version::ProtocolVersion;
use crate::wire::method::Method;
use crate::wire::reply::Reply;

/// What a gate learned of a message: where it goes after admission, and its context.
pub(crate) struct Gated {
    pub(crate) route: Route,
    pub(crate) context: RequestContext,
}

/// Where an admitted message goes.
pub(crate) enum Route {
    /// A 2026-07-28 request: straight to routing.
    Modern(Method),
    /// A message with nothing to dispatch once admitted: a 2026-07-28 notification over HTTP,
    /// or any notification over a line stream (a `notifications/cancelled` there stops the
    /// named request). Answered with the status alone.
    Notice,
    /// `initialize`: a session to start in the context's revision.
    Initialize(Opening),
    /// Any other 2025 message: its session (HTTP: by its id in the endpoint's store; a line
    /// stream: the one `initialize` started) must be the admitted principal's. `header` is the
    /// revision the HTTP header named, if any.
    Legacy { header: Option<ProtocolVersion> },
}

/// What `initialize` declared of its client, kept for the session it starts.
pub(crate) struct Opening {
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: ClientInfo,
}

/// The gate for a message over HTTP (`transport.head()` is present).
pub(crate) fn http(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    message: &Envelope,
) -> Result<Gated, Reply> {
    let Some(head) = transport.head() else {
        return Err(crate::wire::reply::fault_reply(
            message.id.as_ref(),
            crate::wire::fault::Fault::Internal,
            None,
        ));
    };
    // The 2025 revisions, when served: `initialize`, or a request naming one of them (in its
    // header, or through its session).
    if let Some(selection) = legacy::selects(endpoint, head, message) {
        return legacy::gate(endpoint, transport, head, message, selection);
    }
    if message.id.is_none() {
        return modern::notification(endpoint, transport, message);
    }
    modern::gate(endpoint, transport, message)
}

/// The gate for a message on a line stream (stdio), where the connection is its own session:
/// a notification is admitted under the session's revision (or the endpoint's default) and
/// stops there; `initialize` opens the 2025 session; inside that session, a message that does
/// not name 2026-07-28 in its `_meta` (and `logging/setLevel` always) is the session's;
/// everything else is a 2026-07-28 request.
pub(crate) fn stdio(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    local: &LocalSession,
    message: &Envelope,
) -> Result<Gated, Reply> {
    let session = local.revision();
    if message.id.is_none() {
        let revision = session.unwrap_or_else(|| default_revision(endpoint));
        let context = legacy::context(endpoint, transport, message, revision);
        return Ok(Gated {
            route: Route::Notice,
            context,
        });
    }
    if message.kind == Some(Method::Initialize) && legacy::newest_legacy(endpoint).is_some() {
        return legacy::initialize(endpoint, transport, message, endpoint.inner.revisions);
    }
    if let Some(revision) = session
        && (message.kind == Some(Method::LoggingSetLevel) || !names_modern(message))
    {
        let context = legacy::context(endpoint, transport, message, revision);
        return Ok(Gated {
            route: Route::Legacy { header: None },
            context,
        });
    }
    modern::gate(endpoint, transport, message)
}

/// Whether a line that is a JSON array is a batch: inside a 2025-03-26 session (the one revision
/// with batches); elsewhere it stays the invalid request it is.
pub(crate) fn stdio_takes_batches(local: &LocalSession) -> bool {
    local.revision() == Some(ProtocolVersion::V2025_03_26)
}

/// Whether the body's `_meta` names a revision (as a 2026-07-28 request's must).
fn names_modern(message: &Envelope) -> bool {
    let meta = message.params.as_ref().and_then(|p| p.get("_meta"));
    meta.and_then(|m| m.get(modern::META_PROTOCOL_VERSION))
        .is_some()
}

/// The revision the body's `_meta` names (`io.modelcontextprotocol/protocolVersion`), if any.
pub(crate) fn body_revision(message: &Envelope) -> Option<&str> {
    let meta = message.params.as_ref()?.get("_meta")?.as_object()?;
    meta.get(modern::META_PROTOCOL_VERSION)
        .and_then(JsonValue::as_str)
}

/// The revision a line-stream message is admitted under before a session exists: 2026-07-28
/// when served, else the newest 2025 revision.
fn default_revision(endpoint: &Endpoint) -> ProtocolVersion {
    if endpoint
        .inner
        .revisions
        .contains(ProtocolVersion::V2026_07_28)
    {
        ProtocolVersion::V2026_07_28
    } else {
        legacy::newest_legacy(endpoint).unwrap_or(ProtocolVersion::V2026_07_28)
    }
}
