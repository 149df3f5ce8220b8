//! The 2025-11-25 and 2025-06-18 gate: `initialize`, sessions owned by the principal admitted at
//! it, `logging/setLevel`, the session's stream `GET`, `DELETE` and client responses; then the
//! shared pipeline (admission before the session is looked up, the one dispatch).
//!
//! Owns how one endpoint tells a 2025 request from a 2026-07-28 one (the rule below), the
//! session checks, and the lifecycle methods. Every other method is the pipeline's, whose
//! handlers apply each revision's projection.
//!
//! The rule: on an endpoint that serves a 2025 revision, a request is a 2025 request when its
//! method is `initialize` (unless its header names 2026-07-28), when its `MCP-Protocol-Version`
//! header names a served 2025 revision,
//! when it has no such header but carries `Mcp-Session-Id`, or when the endpoint serves no
//! 2026-07-28 at all. Everything else takes the 2026-07-28 path. Inside a session, a request
//! without the header is then refused (400 -32600): clients must send it after `initialize`.

use std::sync::Arc;

use http::{HeaderMap, StatusCode};
use tollgate_json::{JsonObject, JsonValue};

use crate::facts::context::{ClientCapabilities, ClientInfo, RequestContext, RequestFacts};
use crate::facts::policy::Caller;
use crate::model::features::NotificationSink;
use crate::model::origin::Transport;
use crate::pipeline::admission::admit;
use crate::pipeline::envelope::Envelope;
use crate::registry::{Endpoint, revision_slot};
use crate::session::{CreateFailure, Session};
use crate::stream::event::Connection;
use crate::stream::session::AttachFailure;
use crate::stream::session::SessionStreams;
use crate::version::{ProtocolVersion, is_legacy};
use crate::wire::fault::Fault;
use crate::wire::head::Head;
use crate::wire::headers;
use crate::wire::id::RequestId;
use crate::wire::level::LogLevel;
use crate::wire::method::OperationType;
use crate::wire::method::{Method, Notice};
use crate::wire::reply::{Reply, fail, fault_reply, result_reply, result_reply_json};

pub(crate) use crate::wire::headers::SESSION_ID;

/// How a 2025 request was recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Selection {
    Initialize,
    Header(ProtocolVersion),
    Implicit,
    /// The header names a 2025 revision while the body's `_meta` names another revision: the
    /// 2026-07-28 transport's header mismatch (400, -32020), before anything else.
    Mismatch,
}

pub(crate) fn newest_legacy(endpoint: &Endpoint) -> Option<ProtocolVersion> {
    endpoint.inner.revisions.iter().find(|r| is_legacy(*r))
}

/// Whether the message belongs to a 2025 revision on this endpoint (see the module rule).
pub(crate) fn selects(
    endpoint: &Endpoint,
    head: &Head<'_>,
    message: &Envelope,
) -> Option<Selection> {
    newest_legacy(endpoint)?;
    let served = endpoint.inner.revisions;
    // A request that names 2026-07-28 in its header is a 2026 request, whatever its method:
    // `initialize` then gets that revision's 404.
    let version = head.protocol_version.single();
    let modern_header = matches!(
        version,
        Ok(Some(v)) if v == ProtocolVersion::V2026_07_28.as_str() && served.contains(ProtocolVersion::V2026_07_28)
    );
    if message.kind == Some(Method::Initialize) && !modern_header {
        return Some(Selection::Initialize);
    }
    match version {
        Ok(Some(value)) => match ProtocolVersion::from_wire(value) {
            Some(r) if is_legacy(r) && served.contains(r) => {
                if body_revision(message).is_some_and(|body| body != value) {
                    Some(Selection::Mismatch)
                } else {
                    Some(Selection::Header(r))
                }
            }
            _ if !served.contains(ProtocolVersion::V2026_07_28) => Some(Selection::Implicit),
            _ => None,
        },
        Ok(None) if head.session_id.is_present() => Some(Selection::Implicit),
        _ if !served.contains(ProtocolVersion::V2026_07_28) => Some(Selection::Implicit),
        _ => None,
    }
}

/// The revision the body's `_meta` names (`io.modelcontextprotocol/protocolVersion`), if any.
fn body_revision(message: &Envelope) -> Option<&str> {
    let meta = message.params.as_ref()?.get("_meta")?.as_object()?;
    meta.get(crate::revision::modern::META_PROTOCOL_VERSION)?
        .as_str()
}

fn unsupported(endpoint: &Endpoint, revision: ProtocolVersion, id: Option<&RequestId>) -> Reply {
    let data = JsonObject::builder()
        .insert("supported", endpoint.inner.supported_json.clone())
        .insert("requested", "")
        .build();
    fail(revision, id, Fault::UnsupportedVersion, Some(data.into()))
}

/// The revision a 2025 request names before its session is found: its header's, else the
/// newest served.
fn named_revision(endpoint: &Endpoint, headers: Option<&HeaderMap>) -> ProtocolVersion {
    headers
        .and_then(|h| headers::single(h, headers::PROTOCOL_VERSION).ok().flatten())
        .and_then(ProtocolVersion::from_wire)
        .filter(|r| is_legacy(*r) && endpoint.inner.revisions.contains(*r))
        .or_else(|| newest_legacy(endpoint))
        .unwrap_or(ProtocolVersion::V2025_11_25)
}

/// Admission for a 2025 message before anything of its session is looked at: the context says
/// what the message says of itself (its method, id, revision and operation name); what its
/// session remembers is added once the session is found as the admitted principal's.
pub(crate) async fn admit_message(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    message: &Envelope,
    revision: ProtocolVersion,
) -> Result<RequestContext, Reply> {
    let params = message.params.as_ref();
    let mut facts = RequestFacts::bare(revision);
    if let Some(JsonValue::Object(meta)) = params.and_then(|p| p.get("_meta")) {
        facts.meta = meta.clone();
    }
    let mut context = RequestContext::admitted(
        endpoint.inner.path.clone(),
        &message.method,
        message.id.clone(),
        facts,
        transport.origin(),
    );
    context.operation_name = message
        .kind
        .zip(params)
        .and_then(|(m, p)| m.operation_name(p));
    admit(endpoint, transport.caller(), &mut context).await?;
    Ok(context)
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

/// Handles one 2025-revision message over HTTP. Every message, notifications included, is
/// admitted before its session is looked up; a session is found only by the principal that
/// opened it (anyone else gets the same 404 as for a session that does not exist).
pub(crate) async fn handle(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    message: Envelope,
    selection: Selection,
) -> Reply {
    let Some(newest) = newest_legacy(endpoint) else {
        return fault_reply(message.id.as_ref(), Fault::Internal, None);
    };
    let Some(head) = transport.head() else {
        return fault_reply(message.id.as_ref(), Fault::Internal, None);
    };
    let id = message.id.clone();
    let id = id.as_ref();
    if selection == Selection::Mismatch {
        return match id {
            Some(id) => fault_reply(Some(id), Fault::HeaderMismatch, None),
            None => Reply::empty(StatusCode::BAD_REQUEST),
        };
    }
    if selection == Selection::Initialize {
        return initialize(
            endpoint,
            message,
            newest,
            endpoint.inner.sessions.as_ref(),
            transport,
        )
        .await
        .0;
    }
    let header_revision = match selection {
        Selection::Header(r) => Some(r),
        _ => match head.protocol_version.single() {
            Ok(None) => None,
            // A header naming anything this endpoint does not serve as a 2025 revision.
            _ => return unsupported(endpoint, newest, id),
        },
    };
    let notification = message.id.is_none();
    let (revision, session, context) = match &endpoint.inner.sessions {
        Some(store) => {
            let Ok(Some(session_id)) = head.session_id.single() else {
                return fail(newest, id, Fault::SessionRequired, None);
            };
            let revision = header_revision.unwrap_or(newest);
            let context = match admit_message(endpoint, transport, &message, revision).await {
                Ok(context) => context,
                Err(reply) => return reply,
            };
            let found = store
                .touch(session_id, context.admission.principal_name())
                .await;
            let Ok(found) = found else {
                // The shared store failed: a fixed, retryable answer, never a wait past its
                // bound.
                if notification {
                    return Reply::empty(StatusCode::SERVICE_UNAVAILABLE);
                }
                return fail(header_revision.unwrap_or(newest), id, Fault::Internal, None);
            };
            let Some(session) = found else {
                if notification {
                    return Reply::empty(StatusCode::NOT_FOUND);
                }
                return fail(newest, id, Fault::SessionNotFound, None);
            };
            crate::facts::telemetry::session(session_id);
            if header_revision != Some(session.revision) {
                // After `initialize` every request names its session's revision in
                // `MCP-Protocol-Version` (a client MUST on both 2025 revisions); a request may
                // not mix revisions.
                return fail(session.revision, id, Fault::InvalidRequest, None);
            }
            (session.revision, Some(session), context)
        }
        None => match header_revision {
            Some(r) => match admit_message(endpoint, transport, &message, r).await {
                Ok(context) => (r, None, context),
                Err(reply) => return reply,
            },
            None => return unsupported(endpoint, newest, id),
        },
    };
    // A request counts against its session's and its principal's bounds while it runs.
    let _running = match &session {
        Some(session) => match enter(endpoint, transport, head, &message, session) {
            Ok(running) => running,
            Err(()) => return fail(revision, id, Fault::Busy, None),
        },
        None => None,
    };
    if message.kind == Some(Method::LoggingSetLevel) {
        let level = match requested_level(endpoint, &message, revision) {
            Ok(level) => level,
            Err(reply) => return reply,
        };
        let session_id = head.session_id.single().ok().flatten();
        let stored = match session_id.zip(endpoint.inner.sessions.as_ref()) {
            Some((session_id, store)) => {
                let principal = context.admission.principal_name();
                match store.set_log_level(session_id, principal, level).await {
                    Ok(stored) => stored,
                    Err(_) => return fail(revision, id, Fault::Internal, None),
                }
            }
            None => false,
        };
        return level_set(&message, revision, stored);
    }
    dispatch(endpoint, transport, message, session, context).await
}

/// A message inside its session: a request is counted as running (`Err` past the session's or
/// its principal's bound) and its answer numbered for resumption; `notifications/cancelled`
/// stops the named request of this session if it still runs (no response is then sent for it).
fn enter(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    head: &Head<'_>,
    message: &Envelope,
    session: &Session,
) -> Result<Option<crate::stream::session::Running>, ()> {
    if message.id.is_some() {
        let running = session.streams.begin().ok_or(())?;
        if let Some(NotificationSink::Stream(stream)) = transport.sink() {
            // The answer may stream: number it in the session so it can be resumed.
            session.streams.adopt(stream, message.id.as_ref());
        }
        return Ok(Some(running));
    }
    if message.notice == Some(Notice::Cancelled)
        && let Some(cancelled) = message
            .params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(RequestId::from_json)
        && let (Some(store), Ok(Some(session_id))) =
            (&endpoint.inner.sessions, head.session_id.single())
    {
        store.cancel(session_id, &session.streams, &cancelled);
    }
    Ok(None)
}

/// `logging/setLevel`'s level: only where logging is on (otherwise the method does not exist
/// here), and only a level the protocol names.
pub(crate) fn requested_level(
    endpoint: &Endpoint,
    message: &Envelope,
    revision: ProtocolVersion,
) -> Result<LogLevel, Reply> {
    let id = message.id.as_ref();
    if !endpoint.inner.logging {
        return Err(fail(revision, id, Fault::MethodNotFound, None));
    }
    message
        .params
        .as_ref()
        .and_then(|p| p.get("level"))
        .and_then(JsonValue::as_str)
        .and_then(LogLevel::from_wire)
        .ok_or_else(|| fail(revision, id, Fault::InvalidParams, None))
}

/// `logging/setLevel`'s answer: empty when a session remembered the level (`stored`); otherwise
/// the method does not exist here.
pub(crate) fn level_set(message: &Envelope, revision: ProtocolVersion, stored: bool) -> Reply {
    let id = message.id.as_ref();
    if stored {
        result_reply_json(id, &JsonValue::Object(JsonObject::new()), revision)
    } else {
        fail(revision, id, Fault::MethodNotFound, None)
    }
}

/// Serves one admitted 2025-revision message once its session (if any) is known.
pub(crate) async fn dispatch(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    message: Envelope,
    session: Option<Session>,
    mut context: RequestContext,
) -> Reply {
    let id = message.id.clone();
    let id = id.as_ref();
    if id.is_none() {
        // Notifications (`notifications/initialized`, `notifications/cancelled`, ...) carry
        // nothing this server acts on here; the stdio transport handles cancellation itself.
        return Reply::empty(StatusCode::ACCEPTED);
    }
    let revision = session
        .as_ref()
        .map_or(context.protocol_version, |s| s.revision);
    with_session_facts(&mut context, revision, session.as_ref());
    let empty = JsonObject::new();
    let params = message.params.as_ref().unwrap_or(&empty);
    // Methods this revision does not have are -32601; the dispatcher answers for those the
    // endpoint does not offer.
    let Some(method) = message.kind.filter(|m| m.exists_on(revision)) else {
        return fail(revision, id, Fault::MethodNotFound, None);
    };
    crate::pipeline::dispatch(
        endpoint,
        transport,
        method,
        params,
        context,
        session.as_ref(),
    )
    .await
}

/// What a session remembers (the client's capabilities, implementation and log level), added to
/// an admitted context; without a session the client declared nothing.
fn with_session_facts(
    context: &mut RequestContext,
    revision: ProtocolVersion,
    session: Option<&Session>,
) {
    context.protocol_version = revision;
    if let Some(s) = session {
        context.client_capabilities = s.capabilities.clone();
        context.client_info = s.client_info.clone();
        context.log_level = s.log_level;
    }
}

/// `initialize`: negotiates the revision (the client's when served, else the newest 2025
/// revision served) and, given a store, starts a session in it. Returns the reply and what the
/// session remembers (the stdio transport keeps that itself).
pub(crate) async fn initialize(
    endpoint: &Endpoint,
    message: Envelope,
    newest: ProtocolVersion,
    store: Option<&Arc<crate::session::SessionTable>>,
    transport: Transport<'_>,
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
    let Some(result) = &endpoint.catalog().discover[revision_slot(revision)] else {
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
        transport.origin(),
    );
    if let Err(reply) = admit(endpoint, transport.caller(), &mut context).await {
        return (reply, None);
    }
    let streams = match store {
        Some(store) => store.new_streams(revision),
        None => Arc::new(SessionStreams::new(
            endpoint.inner.streams,
            revision,
            crate::session::SessionConfig::default().get_idle_timeout(),
        )),
    };
    let session = Session {
        owner: context.admission.principal_name().map(Arc::from),
        revision,
        capabilities: ClientCapabilities::from_json(capabilities.clone()),
        client_info: Some(client_info),
        log_level: None,
        streams,
    };
    let session_id = match store {
        None => None,
        Some(store) => match store.create(session.clone()).await {
            Ok(session_id) => {
                crate::facts::telemetry::session(&session_id);
                Some(session_id)
            }
            Err(CreateFailure::Full | CreateFailure::NoEntropy | CreateFailure::Unavailable) => {
                return (fail(revision, Some(id), Fault::Busy, None), None);
            }
        },
    };
    let mut reply = result_reply(id, result);
    reply.session = session_id;
    (reply, Some(session))
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
    match headers::single(headers, headers::PROTOCOL_VERSION) {
        Ok(Some(v)) if v == session.revision.as_str() => {}
        // The header is required after `initialize`, and a stream of one revision cannot be
        // opened by a request naming another.
        _ => return Err(Reply::empty(StatusCode::BAD_REQUEST)),
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
    match headers::single(headers, headers::PROTOCOL_VERSION) {
        Ok(Some(v)) if v == session.revision.as_str() => {}
        _ => return refused,
    }
    match store.answer(session_id, &session.streams, response).await {
        Ok(true) => Reply::empty(StatusCode::ACCEPTED),
        Ok(false) => refused,
        Err(_) => Reply::empty(StatusCode::SERVICE_UNAVAILABLE),
    }
}
