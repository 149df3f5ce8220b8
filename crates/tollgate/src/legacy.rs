//! The 2025-11-25 and 2025-06-18 request path: `initialize`, sessions, `ping`, and tools with
//! those revisions' projection.
//!
//! Owns how one endpoint tells a 2025 request from a 2026-07-28 one (the rule below), the
//! session checks, and the legacy lifecycle methods. Tool listing and calling are shared with the
//! 2026-07-28 path, which applies each revision's result projection.
//!
//! The rule: on an endpoint that serves a 2025 revision, a request is a 2025 request when its
//! method is `initialize` (unless its header names 2026-07-28), when its `MCP-Protocol-Version`
//! header names a served 2025 revision,
//! when it has no such header but carries `Mcp-Session-Id`, or when the endpoint serves no
//! 2026-07-28 at all. Everything else takes the 2026-07-28 path. Inside a session, a request
//! without the header is then refused (400 -32600): clients must send it after `initialize`.

use http::{HeaderMap, StatusCode};
use tollgate_json::{JsonObject, JsonValue};

use crate::context::{ClientCapabilities, ClientInfo, RequestContext, RequestFacts, RequestId};
use crate::endpoint::{Endpoint, is_legacy, revision_slot};
use crate::fault::Fault;
use crate::features::{LogLevel, NotificationSink};
use crate::headers;
use crate::protocol::{Envelope, Reply, Transport, fail, fault_reply, tools_call, tools_list};
use crate::session::{CreateFailure, Session};
use crate::stream::{AttachFailure, Connection, SessionStreams};
use crate::version::ProtocolVersion;

pub(crate) const SESSION_ID: http::HeaderName = http::HeaderName::from_static("mcp-session-id");

/// How a 2025 request was recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Selection {
    Initialize,
    Header(ProtocolVersion),
    Implicit,
}

pub(crate) fn newest_legacy(endpoint: &Endpoint) -> Option<ProtocolVersion> {
    endpoint.inner.revisions.iter().find(|r| is_legacy(*r))
}

/// Whether the message belongs to a 2025 revision on this endpoint (see the module rule).
pub(crate) fn selects(
    endpoint: &Endpoint,
    headers: &HeaderMap,
    message: &Envelope,
) -> Option<Selection> {
    newest_legacy(endpoint)?;
    let served = endpoint.inner.revisions;
    // A request that names 2026-07-28 in its header is a 2026 request, whatever its method:
    // `initialize` then gets that revision's 404.
    let modern_header = matches!(
        headers::single(headers, headers::PROTOCOL_VERSION),
        Ok(Some(v)) if v == ProtocolVersion::V2026_07_28.as_str() && served.contains(ProtocolVersion::V2026_07_28)
    );
    if message.method.as_str() == "initialize" && !modern_header {
        return Some(Selection::Initialize);
    }
    match headers::single(headers, headers::PROTOCOL_VERSION) {
        Ok(Some(value)) => match ProtocolVersion::from_wire(value) {
            Some(r) if is_legacy(r) && served.contains(r) => Some(Selection::Header(r)),
            _ if !served.contains(ProtocolVersion::V2026_07_28) => Some(Selection::Implicit),
            _ => None,
        },
        Ok(None) if headers.contains_key(SESSION_ID) => Some(Selection::Implicit),
        _ if !served.contains(ProtocolVersion::V2026_07_28) => Some(Selection::Implicit),
        _ => None,
    }
}

fn unsupported(endpoint: &Endpoint, revision: ProtocolVersion, id: Option<&RequestId>) -> Reply {
    let data = JsonObject::builder()
        .insert("supported", endpoint.inner.supported_json.clone())
        .insert("requested", "")
        .build();
    fail(revision, id, Fault::UnsupportedVersion, Some(data.into()))
}

/// Handles one 2025-revision message.
pub(crate) async fn handle(
    endpoint: &Endpoint,
    headers: &HeaderMap,
    message: Envelope,
    selection: Selection,
    sink: Option<&crate::features::NotificationSink>,
) -> Reply {
    let Some(newest) = newest_legacy(endpoint) else {
        return fault_reply(message.id.as_ref(), Fault::Internal, None);
    };
    let id = message.id.clone();
    let id = id.as_ref();
    if selection == Selection::Initialize {
        return initialize(
            endpoint,
            message,
            newest,
            endpoint.inner.sessions.as_ref(),
            Some(headers),
        )
        .0;
    }
    let header_revision = match selection {
        Selection::Header(r) => Some(r),
        _ => match headers::single(headers, headers::PROTOCOL_VERSION) {
            Ok(None) => None,
            // A header naming anything this endpoint does not serve as a 2025 revision.
            _ => return unsupported(endpoint, newest, id),
        },
    };
    let (revision, session) = match &endpoint.inner.sessions {
        Some(store) => {
            let Ok(Some(session_id)) = headers::single(headers, SESSION_ID) else {
                return fail(newest, id, Fault::SessionRequired, None);
            };
            let Some(session) = store.touch(session_id) else {
                return fail(newest, id, Fault::SessionNotFound, None);
            };
            if header_revision != Some(session.revision) {
                // After `initialize` every request names its session's revision in
                // `MCP-Protocol-Version` (a client MUST on both 2025 revisions); a request may
                // not mix revisions.
                return fail(session.revision, id, Fault::InvalidRequest, None);
            }
            (session.revision, Some(session))
        }
        None => match header_revision {
            Some(r) => (r, None),
            None => return unsupported(endpoint, newest, id),
        },
    };
    if let Some(session) = &session {
        if message.id.is_none() {
            // `notifications/cancelled` stops the named request of this session if it still
            // runs; no response is then sent for it.
            if message.method.as_str() == "notifications/cancelled" {
                if let Some(cancelled) = message
                    .params
                    .as_ref()
                    .and_then(|p| p.get("requestId"))
                    .and_then(RequestId::from_json)
                {
                    session.streams.cancel(&cancelled);
                }
            }
        } else if let Some(NotificationSink::Stream(stream)) = sink {
            // The answer may stream: number it in the session so it can be resumed.
            session.streams.adopt(stream, message.id.as_ref());
        }
    }
    if message.method.as_str() == "logging/setLevel" {
        let session_id = headers::single(headers, SESSION_ID).ok().flatten();
        return set_level(endpoint, &message, revision, |level| {
            session_id
                .zip(endpoint.inner.sessions.as_ref())
                .is_some_and(|(id, store)| store.set_log_level(id, level))
        });
    }
    dispatch(
        endpoint,
        Transport::Http(headers, sink),
        message,
        revision,
        session,
    )
    .await
}

/// `logging/setLevel`: only where logging is on and a session can remember the level (`store`
/// says whether it did); otherwise the method does not exist here.
pub(crate) fn set_level(
    endpoint: &Endpoint,
    message: &Envelope,
    revision: ProtocolVersion,
    store: impl FnOnce(LogLevel) -> bool,
) -> Reply {
    let id = message.id.as_ref();
    if !endpoint.inner.logging {
        return fail(revision, id, Fault::MethodNotFound, None);
    }
    let level = message
        .params
        .as_ref()
        .and_then(|p| p.get("level"))
        .and_then(JsonValue::as_str)
        .and_then(LogLevel::from_wire);
    match level {
        None => fail(revision, id, Fault::InvalidParams, None),
        Some(level) if store(level) => {
            crate::protocol::result_reply_json(id, &JsonValue::Object(JsonObject::new()), revision)
        }
        Some(_) => fail(revision, id, Fault::MethodNotFound, None),
    }
}

/// Serves one 2025-revision message once its revision (and session, if any) is known.
pub(crate) async fn dispatch(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    message: Envelope,
    revision: ProtocolVersion,
    session: Option<Session>,
) -> Reply {
    let id = message.id.clone();
    let id = id.as_ref();
    if id.is_none() {
        // Notifications (`notifications/initialized`, `notifications/cancelled`, ...) carry
        // nothing this server acts on here; the stdio transport handles cancellation itself.
        return Reply::empty(StatusCode::ACCEPTED);
    }
    let empty = JsonObject::new();
    let params = message.params.as_ref().unwrap_or(&empty);
    // The methods of a capability not advertised on this revision do not exist here.
    let offered = match message.method.as_str() {
        "ping" | "tools/list" | "tools/call" => true,
        "prompts/list" | "prompts/get" => endpoint.offers_prompts(revision),
        "completion/complete" => endpoint.offers_completions(revision),
        "resources/list" | "resources/templates/list" | "resources/read" => {
            endpoint.offers_resources(revision)
        }
        // Updates reach a session on its standalone stream: without sessions there are none.
        "resources/subscribe" | "resources/unsubscribe" => {
            endpoint.offers_resources(revision) && session.is_some()
        }
        _ => false,
    };
    if !offered {
        return fail(revision, id, Fault::MethodNotFound, None);
    }
    let mut context = context_for(endpoint, &message, revision, session.as_ref(), params);
    // Admission and the request limiter; a tool call runs them after its capability check.
    if message.method.as_str() != "tools/call" {
        if let Err(reply) =
            crate::protocol::police(endpoint, transport.headers(), &mut context, None)
        {
            return reply;
        }
    }
    match message.method.as_str() {
        "ping" => {
            crate::protocol::result_reply_json(id, &JsonValue::Object(JsonObject::new()), revision)
        }
        "tools/list" => tools_list(endpoint, revision, params, id),
        "prompts/list" => crate::protocol::prompts_list(endpoint, revision, params, id),
        "resources/list" => {
            crate::protocol::one_page(revision, params, id, &endpoint.inner.resource_pages)
        }
        "resources/templates/list" => {
            crate::protocol::one_page(revision, params, id, &endpoint.inner.template_pages)
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            subscription(endpoint, &message, revision, session.as_ref())
        }
        "tools/call" => tools_call(endpoint, transport, params, context).await,
        "prompts/get" => crate::protocol::prompts_get(endpoint, transport, params, context).await,
        "resources/read" => crate::protocol::resources_read(endpoint, params, context).await,
        _ => crate::protocol::completion_complete(endpoint, params, context).await,
    }
}

/// The context of a 2025 request: what its session remembers, or nothing without one.
fn context_for(
    endpoint: &Endpoint,
    message: &Envelope,
    revision: ProtocolVersion,
    session: Option<&Session>,
    params: &JsonObject,
) -> RequestContext {
    let (capabilities, client_info, log_level) = match session {
        Some(s) => (s.capabilities.clone(), s.client_info.clone(), s.log_level),
        None => (ClientCapabilities::default(), None, None),
    };
    let meta = match params.get("_meta") {
        Some(JsonValue::Object(m)) => m.clone(),
        _ => JsonObject::new(),
    };
    let facts = RequestFacts {
        protocol_version: revision,
        client_info,
        client_capabilities: capabilities,
        meta,
        log_level,
    };
    RequestContext::admitted(
        endpoint.inner.path.clone(),
        &message.method,
        message.id.clone(),
        facts,
    )
}

/// `resources/subscribe` and `resources/unsubscribe`: the URI must name a resource served on
/// this revision (an exact one, or a template match); a session holds at most 1,024.
fn subscription(
    endpoint: &Endpoint,
    message: &Envelope,
    revision: ProtocolVersion,
    session: Option<&Session>,
) -> Reply {
    let id = message.id.as_ref();
    let Some(session) = session else {
        return fail(revision, id, Fault::MethodNotFound, None);
    };
    let Some(uri) = message
        .params
        .as_ref()
        .and_then(|p| p.get("uri"))
        .and_then(JsonValue::as_str)
    else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    let inner = &endpoint.inner;
    if crate::resource::route(uri, revision, &inner.resources, &inner.templates).is_none() {
        return fail(revision, id, Fault::ResourceNotFound2025, None);
    }
    if message.method.as_str() == "resources/subscribe" {
        if !session.streams.subscribe(uri) {
            return fail(revision, id, Fault::Busy, None);
        }
    } else {
        session.streams.unsubscribe(uri);
    }
    crate::protocol::result_reply_json(id, &JsonValue::Object(JsonObject::new()), revision)
}

/// `initialize`: negotiates the revision (the client's when served, else the newest 2025
/// revision served) and, given a store, starts a session in it. Returns the reply and what the
/// session remembers (the stdio transport keeps that itself).
pub(crate) fn initialize(
    endpoint: &Endpoint,
    message: Envelope,
    newest: ProtocolVersion,
    store: Option<&crate::session::SessionStore>,
    headers: Option<&HeaderMap>,
) -> (Reply, Option<Session>) {
    let Some(id) = message.id.as_ref() else {
        return (Reply::empty(StatusCode::BAD_REQUEST), None);
    };
    let Some(params) = &message.params else {
        return (fail(newest, Some(id), Fault::InvalidParams, None), None);
    };
    let (
        Some(JsonValue::String(requested)),
        Some(JsonValue::Object(capabilities)),
        Some(JsonValue::Object(info)),
    ) = (
        params.get("protocolVersion"),
        params.get("capabilities"),
        params.get("clientInfo"),
    )
    else {
        return (fail(newest, Some(id), Fault::InvalidParams, None), None);
    };
    let Some(client_info) = ClientInfo::from_object(info.clone()) else {
        return (fail(newest, Some(id), Fault::InvalidParams, None), None);
    };
    let revision = match ProtocolVersion::from_wire(requested) {
        Some(r) if is_legacy(r) && endpoint.inner.revisions.contains(r) => r,
        _ => newest,
    };
    let Some(result) = &endpoint.inner.discover[revision_slot(revision)] else {
        return (fail(revision, Some(id), Fault::Internal, None), None);
    };
    // Admission before a session exists: a refused client gets none.
    let mut context = RequestContext::admitted(
        endpoint.inner.path.clone(),
        &message.method,
        message.id.clone(),
        RequestFacts {
            protocol_version: revision,
            client_info: Some(client_info.clone()),
            client_capabilities: ClientCapabilities::from_json(capabilities.clone()),
            meta: JsonObject::new(),
            log_level: None,
        },
    );
    if let Err(reply) = crate::protocol::police(endpoint, headers, &mut context, None) {
        return (reply, None);
    }
    let idle_timeout = store.map_or_else(
        || crate::SessionConfig::default().get_idle_timeout(),
        crate::session::SessionStore::idle_timeout,
    );
    let session = Session {
        revision,
        capabilities: ClientCapabilities::from_json(capabilities.clone()),
        client_info: Some(client_info),
        log_level: None,
        streams: std::sync::Arc::new(SessionStreams::new(
            endpoint.inner.streams,
            revision,
            idle_timeout,
        )),
    };
    let session_id = match store {
        None => None,
        Some(store) => match store.create(session.clone()) {
            Ok(session_id) => Some(session_id),
            Err(CreateFailure::Full | CreateFailure::NoEntropy) => {
                return (fail(revision, Some(id), Fault::Busy, None), None);
            }
        },
    };
    let mut reply = crate::protocol::result_reply(id, result);
    reply.session = session_id;
    (reply, Some(session))
}

/// `DELETE` with `Mcp-Session-Id`: ends the session (200), or 404 when it is unknown; 405 when
/// the endpoint keeps no sessions.
pub(crate) fn end_session(endpoint: &Endpoint, headers: &HeaderMap) -> Reply {
    let Some(store) = &endpoint.inner.sessions else {
        return Reply::empty(StatusCode::METHOD_NOT_ALLOWED);
    };
    match headers::single(headers, SESSION_ID) {
        Ok(Some(id)) if store.end(id) => Reply::empty(StatusCode::OK),
        Ok(Some(_)) => Reply::empty(StatusCode::NOT_FOUND),
        _ => Reply::empty(StatusCode::BAD_REQUEST),
    }
}

/// `GET`: opens the session's standalone event stream, or resumes a stream after the event
/// `Last-Event-ID` names. Only a 2025 session has streams to open: without `Mcp-Session-Id` (a
/// 2026-07-28 client, or an endpoint without sessions) the answer is 405.
pub(crate) fn open_stream(endpoint: &Endpoint, headers: &HeaderMap) -> Result<Connection, Reply> {
    let Some(store) = &endpoint.inner.sessions else {
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
    let Some(session) = store.touch(session_id) else {
        return Err(Reply::empty(StatusCode::NOT_FOUND));
    };
    match headers::single(headers, headers::PROTOCOL_VERSION) {
        Ok(Some(v)) if v == session.revision.as_str() => {}
        // The header is required after `initialize`, and a stream of one revision cannot be
        // opened by a request naming another.
        _ => return Err(Reply::empty(StatusCode::BAD_REQUEST)),
    }
    let last_event_id = match headers::single(headers, LAST_EVENT_ID) {
        Ok(id) => id,
        Err(_) => return Err(Reply::empty(StatusCode::BAD_REQUEST)),
    };
    match session.streams.open(last_event_id) {
        Ok(connection) => Ok(connection),
        Err(AttachFailure::UnknownEvent) => Err(Reply::empty(StatusCode::BAD_REQUEST)),
        Err(AttachFailure::Closed) => Err(Reply::empty(StatusCode::NOT_FOUND)),
    }
}

const LAST_EVENT_ID: http::HeaderName = http::HeaderName::from_static("last-event-id");

/// A POSTed JSON-RPC response carrying `Mcp-Session-Id`: delivered to the server-to-client
/// request of the session that is waiting for it (202), else refused (400; 404 for an unknown
/// session).
pub(crate) fn client_response(
    endpoint: &Endpoint,
    headers: &HeaderMap,
    response: &JsonObject,
) -> Reply {
    let refused = Reply::empty(StatusCode::BAD_REQUEST);
    let Some(store) = &endpoint.inner.sessions else {
        return refused;
    };
    let Ok(Some(session_id)) = headers::single(headers, SESSION_ID) else {
        return refused;
    };
    let Some(session) = store.touch(session_id) else {
        return Reply::empty(StatusCode::NOT_FOUND);
    };
    match headers::single(headers, headers::PROTOCOL_VERSION) {
        Ok(Some(v)) if v == session.revision.as_str() => {}
        _ => return refused,
    }
    if crate::client_request::deliver(&session.streams, response) {
        Reply::empty(StatusCode::ACCEPTED)
    } else {
        refused
    }
}
