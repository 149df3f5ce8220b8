//! HTTP requests of a 2025 session that carry no JSON-RPC method: the session's stream `GET`
//! (opening its standalone stream or resuming one after `Last-Event-ID`), `DELETE` ending it,
//! and a POSTed client response to a server-to-client request. Each is admitted first, like
//! every message, then finds its session as the admitted principal's.
//!
//! Knows nothing of framing beyond the statuses it answers with.

use http::{HeaderMap, StatusCode};
use tollgate_json::JsonObject;

use crate::facts::context::RequestContext;
use crate::pipeline::admission::admit;
use crate::pipeline::gate::legacy::newest_legacy_http;
use crate::policy::rules::Caller;
use crate::registry::Endpoint;
use crate::stream::event::Connection;
use crate::stream::session::AttachFailure;
use crate::version::{ProtocolVersion, is_legacy};
use crate::wire::headers::{self, SESSION_ID};
use crate::wire::method::OperationType;
use crate::wire::reply::Reply;

/// The revision a 2025 request names before its session is found: its header's, else the
/// newest served.
fn named_revision(endpoint: &Endpoint, headers: Option<&HeaderMap>) -> ProtocolVersion {
    headers
        .and_then(|h| headers::single(h, headers::PROTOCOL_VERSION).ok().flatten())
        .and_then(ProtocolVersion::from_wire)
        .filter(|r| is_legacy(*r) && r.on_http() && endpoint.inner.revisions.contains(*r))
        .or_else(|| newest_legacy_http(endpoint))
        .unwrap_or(ProtocolVersion::V2025_11_25)
}

/// Whether a request inside a session names the session's revision: its `MCP-Protocol-Version`
/// header does, or it has none and the session is 2025-03-26's (a revision without the header).
fn names_session_revision(headers: &HeaderMap, revision: ProtocolVersion) -> bool {
    match headers::single(headers, headers::PROTOCOL_VERSION) {
        Ok(Some(v)) => v == revision.as_str(),
        Ok(None) => revision == ProtocolVersion::V2025_03_26,
        Err(_) => false,
    }
}

/// Admission for an HTTP request that carries no JSON-RPC method (a stream `GET`, a session
/// `DELETE`, a client's response).
async fn admit_bare(
    endpoint: &Endpoint,
    caller: Caller<'_>,
    operation: OperationType,
) -> Result<RequestContext, Reply> {
    let mut context = RequestContext::without_method(
        endpoint.inner.path.clone(),
        operation,
        named_revision(endpoint, caller.headers),
    );
    admit(endpoint, caller, &mut context).await?;
    Ok(context)
}

/// `DELETE` with `Mcp-Session-Id`, admitted first: ends the admitted principal's session (200),
/// or 404 when it has none by that id; 405 when the endpoint keeps no sessions.
pub(crate) async fn end_session(endpoint: &Endpoint, caller: Caller<'_>) -> Reply {
    let (Some(store), Some(headers)) = (&endpoint.inner.sessions, caller.headers) else {
        return Reply::empty(StatusCode::METHOD_NOT_ALLOWED);
    };
    let session_id = match headers::single(headers, SESSION_ID) {
        Ok(Some(id)) => id,
        _ => return Reply::empty(StatusCode::BAD_REQUEST),
    };
    let context = match admit_bare(endpoint, caller, OperationType::EndSession).await {
        Ok(context) => context,
        Err(reply) => return reply,
    };
    match store
        .end(session_id, context.admission.principal_name())
        .await
    {
        Ok(true) => Reply::empty(StatusCode::OK),
        Ok(false) => Reply::empty(StatusCode::NOT_FOUND),
        Err(_) => Reply::empty(StatusCode::SERVICE_UNAVAILABLE),
    }
}

/// `GET`, admitted first: opens the admitted principal's session's standalone event stream, or
/// resumes one of its streams after the event `Last-Event-ID` names, until the admitted
/// credential expires. Only a 2025 session has
/// streams to open: without `Mcp-Session-Id` (a 2026-07-28 client, or an endpoint without
/// sessions) the answer is 405.
pub(crate) async fn open_stream(
    endpoint: &Endpoint,
    caller: Caller<'_>,
) -> Result<Connection, Reply> {
    let (Some(store), Some(headers)) = (&endpoint.inner.sessions, caller.headers) else {
        return Err(Reply::empty(StatusCode::METHOD_NOT_ALLOWED));
    };
    let session_id = match headers::single(headers, SESSION_ID) {
        Ok(Some(id)) => id,
        Ok(None) => {
            // A 2025 client that forgot its session is told so; anyone else learns that this
            // endpoint has no stream for it.
            let names_legacy = matches!(
                headers::single(headers, headers::PROTOCOL_VERSION),
                Ok(Some(v)) if ProtocolVersion::from_wire(v).is_some_and(is_legacy)
            );
            return Err(Reply::empty(if names_legacy {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::METHOD_NOT_ALLOWED
            }));
        }
        Err(_) => return Err(Reply::empty(StatusCode::BAD_REQUEST)),
    };
    let Ok(last_event_id) = headers::single(headers, LAST_EVENT_ID) else {
        return Err(Reply::empty(StatusCode::BAD_REQUEST));
    };
    let context = admit_bare(endpoint, caller, OperationType::OpenStream).await?;
    let session = match store
        .touch(session_id, context.admission.principal_name())
        .await
    {
        Ok(Some(session)) => session,
        Ok(None) => return Err(Reply::empty(StatusCode::NOT_FOUND)),
        Err(_) => return Err(Reply::empty(StatusCode::SERVICE_UNAVAILABLE)),
    };
    // The header is required after `initialize`, and a stream of one revision cannot be
    // opened by a request naming another.
    if !names_session_revision(headers, session.revision) {
        return Err(Reply::empty(StatusCode::BAD_REQUEST));
    }
    match store
        .open_stream(session_id, &session.streams, last_event_id)
        .await
    {
        // The stream ends when the credential it was opened with expires.
        Ok(Ok(connection)) => Ok(connection.until(context.admission.expires_in())),
        Ok(Err(AttachFailure::UnknownEvent)) => Err(Reply::empty(StatusCode::BAD_REQUEST)),
        Ok(Err(AttachFailure::Closed)) => Err(Reply::empty(StatusCode::NOT_FOUND)),
        // The session's, its principal's or the endpoint's replay budget is spent.
        Ok(Err(AttachFailure::Full)) => Err(Reply::empty(StatusCode::SERVICE_UNAVAILABLE)),
        Err(_) => Err(Reply::empty(StatusCode::SERVICE_UNAVAILABLE)),
    }
}

const LAST_EVENT_ID: http::HeaderName = http::HeaderName::from_static("last-event-id");

/// A POSTed JSON-RPC response carrying `Mcp-Session-Id`, admitted first: delivered to the
/// server-to-client request of the admitted principal's session that is waiting for it, here or
/// (with a shared session store) on the instance that sent it (202), else refused (400; 404 when
/// the principal has no session by that id).
pub(crate) async fn client_response(
    endpoint: &Endpoint,
    caller: Caller<'_>,
    response: &JsonObject,
) -> Reply {
    let refused = Reply::empty(StatusCode::BAD_REQUEST);
    let (Some(store), Some(headers)) = (&endpoint.inner.sessions, caller.headers) else {
        return refused;
    };
    let Ok(Some(session_id)) = headers::single(headers, SESSION_ID) else {
        return refused;
    };
    let context = match admit_bare(endpoint, caller, OperationType::ClientResponse).await {
        Ok(context) => context,
        Err(reply) => return reply,
    };
    let session = match store
        .touch(session_id, context.admission.principal_name())
        .await
    {
        Ok(Some(session)) => session,
        Ok(None) => return Reply::empty(StatusCode::NOT_FOUND),
        Err(_) => return Reply::empty(StatusCode::SERVICE_UNAVAILABLE),
    };
    if !names_session_revision(headers, session.revision) {
        return refused;
    }
    match store.answer(session_id, &session.streams, response).await {
        Ok(true) => Reply::empty(StatusCode::ACCEPTED),
        Ok(false) => refused,
        Err(_) => Reply::empty(StatusCode::SERVICE_UNAVAILABLE),
    }
}
