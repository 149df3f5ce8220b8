//! The session stage, after admission: a 2025 message's session found as the admitted
//! principal's (HTTP: by its id in the endpoint's store; a line stream: the one `initialize`
//! started on it), counted against its bounds while it runs; `initialize` starting one;
//! `logging/setLevel` remembered in it; notifications ending here (a `notifications/cancelled`
//! stops the named request). What a session remembers is added to the context for routing.
//!
//! Owns the lifecycle answers of the 2025 revisions. Knows nothing of framing; the methods'
//! handlers below know nothing of sessions beyond the context.

use std::sync::Arc;

use http::StatusCode;
use tollgate_json::{JsonObject, JsonValue};

use crate::facts::context::RequestContext;
use crate::model::features::NotificationSink;
use crate::model::origin::Transport;
use crate::pipeline::envelope::Envelope;
use crate::pipeline::gate::{Opening, Route, legacy};
use crate::registry::{Endpoint, revision_slot};
use crate::session::local::LocalSession;
use crate::session::{CreateFailure, Session};
use crate::stream::session::{Running, SessionStreams};
use crate::version::ProtocolVersion;
use crate::wire::fault::Fault;
use crate::wire::head::Head;
use crate::wire::id::RequestId;
use crate::wire::level::LogLevel;
use crate::wire::method::{Method, Notice};
use crate::wire::reply::{Reply, fail, fault_reply, result_reply, result_reply_json};

/// An admitted message its session lets through to routing.
pub(crate) struct Bound {
    pub(crate) method: Method,
    pub(crate) session: Option<Session>,
    /// Counts the request against its session's and principal's bounds until dropped.
    pub(crate) running: Option<Running>,
}

/// The session stage for every route but a 2026-07-28 request (which has no session): `Ok` to
/// route, `Err` with the answer when the message ends here.
pub(crate) async fn bind(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    local: Option<&LocalSession>,
    message: &Envelope,
    route: Route,
    context: &mut RequestContext,
) -> Result<Bound, Reply> {
    match route {
        Route::Modern(method) => Ok(Bound {
            method,
            session: None,
            running: None,
        }),
        Route::Notice => {
            if let Some(local) = local {
                cancel_local(local, message);
            }
            Err(Reply::empty(StatusCode::ACCEPTED))
        }
        Route::Initialize(opening) => {
            Err(initialize(endpoint, local, message, opening, context).await)
        }
        Route::Legacy { header } => match local {
            Some(local) => on_line(endpoint, local, message, context),
            None => over_http(endpoint, transport, message, header, context).await,
        },
    }
}

/// A 2025 message on a line stream: the connection's session must be the admitted principal's.
fn on_line(
    endpoint: &Endpoint,
    local: &LocalSession,
    message: &Envelope,
    context: &mut RequestContext,
) -> Result<Bound, Reply> {
    let id = message.id.as_ref();
    let Some(session) = local.session() else {
        return Err(fail(
            context.protocol_version,
            id,
            Fault::SessionNotFound,
            None,
        ));
    };
    let principal = context.admission.principal_name();
    if message.kind == Some(Method::LoggingSetLevel) {
        let level = requested_level(endpoint, message, session.revision)?;
        let stored = local.set_log_level(principal, level);
        return Err(level_set(message, session.revision, stored));
    }
    if session.owner.as_deref() != principal {
        return Err(fail(session.revision, id, Fault::SessionNotFound, None));
    }
    route(message, Some(session), None, context)
}

/// A 2025 message over HTTP: with sessions, the session its id names, found as the admitted
/// principal's (anyone else gets the same 404 as for a session that does not exist), in the
/// revision its header names; without them, the header's revision.
async fn over_http(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    message: &Envelope,
    header: Option<ProtocolVersion>,
    context: &mut RequestContext,
) -> Result<Bound, Reply> {
    let id = message.id.as_ref();
    let notification = id.is_none();
    let (Some(store), Some(head)) = (&endpoint.inner.sessions, transport.head()) else {
        // No sessions: the header named the revision; `logging/setLevel` has nowhere to
        // remember a level.
        if message.kind == Some(Method::LoggingSetLevel) {
            let level = requested_level(endpoint, message, context.protocol_version);
            return Err(level.map_or_else(
                |reply| reply,
                |_| level_set(message, context.protocol_version, false),
            ));
        }
        if notification {
            return Err(Reply::empty(StatusCode::ACCEPTED));
        }
        return route(message, None, None, context);
    };
    let newest = legacy::newest_legacy_http(endpoint).unwrap_or(context.protocol_version);
    let Ok(Some(session_id)) = head.session_id.single() else {
        return Err(fail(newest, id, Fault::SessionRequired, None));
    };
    let found = store
        .touch(session_id, context.admission.principal_name())
        .await;
    let Ok(found) = found else {
        // The shared store failed: a fixed, retryable answer, never a wait past its bound.
        if notification {
            return Err(Reply::empty(StatusCode::SERVICE_UNAVAILABLE));
        }
        return Err(fail(header.unwrap_or(newest), id, Fault::Internal, None));
    };
    let Some(session) = found else {
        if notification {
            return Err(Reply::empty(StatusCode::NOT_FOUND));
        }
        return Err(fail(newest, id, Fault::SessionNotFound, None));
    };
    crate::facts::telemetry::session(session_id);
    let named = header.map_or(session.revision == ProtocolVersion::V2025_03_26, |h| {
        h == session.revision
    });
    if !named {
        // After `initialize` every request names its session's revision in
        // `MCP-Protocol-Version` (a client MUST from 2025-06-18 on; 2025-03-26 has no such
        // header, so its sessions take requests without it); a request may not mix revisions.
        return Err(fail(session.revision, id, Fault::InvalidRequest, None));
    }
    // With per-principal views, a session adopted from the shared store has no view here until
    // its first request here gives it one (the session's own principal's).
    if endpoint.inner.views.is_some()
        && session.streams.view.get().is_none()
        && let Some(view) = endpoint.list_view(&context.admission)
    {
        let _ = session.streams.view.set(view);
    }
    // A request counts against its session's and its principal's bounds while it runs.
    let Ok(running) = enter(endpoint, transport, head, message, &session) else {
        crate::wire::log::budget_reached(crate::wire::log::Budget::SessionRequests);
        return Err(fail(session.revision, id, Fault::Busy, None));
    };
    if message.kind == Some(Method::LoggingSetLevel) {
        let revision = session.revision;
        let level = requested_level(endpoint, message, revision)?;
        let principal = context.admission.principal_name();
        let stored = match store.set_log_level(session_id, principal, level).await {
            Ok(stored) => stored,
            Err(_) => return Err(fail(revision, id, Fault::Internal, None)),
        };
        return Err(level_set(message, revision, stored));
    }
    if notification {
        // Notifications (`notifications/initialized`, `notifications/cancelled`, ...) carry
        // nothing more this server acts on.
        return Err(Reply::empty(StatusCode::ACCEPTED));
    }
    route(message, Some(session), running, context)
}

/// What the session remembers (the client's capabilities, implementation and log level) added
/// to the context, and the method checked against the session's revision (-32601 when that
/// revision has no such method; the dispatcher answers for those the endpoint does not offer).
fn route(
    message: &Envelope,
    mut session: Option<Session>,
    running: Option<Running>,
    context: &mut RequestContext,
) -> Result<Bound, Reply> {
    if let Some(s) = &mut session {
        context.protocol_version = s.revision;
        // Moved, not copied: this request's copy of the session (the table keeps its own)
        // hands them to the context, which is what reads them from here on.
        context.client_capabilities = std::mem::take(&mut s.capabilities);
        context.client_info = s.client_info.take();
        context.log_level = s.log_level;
    }
    let revision = context.protocol_version;
    let Some(method) = message.kind.filter(|m| m.exists_on(revision)) else {
        return Err(fail(
            revision,
            message.id.as_ref(),
            Fault::MethodNotFound,
            None,
        ));
    };
    Ok(Bound {
        method,
        session,
        running,
    })
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
) -> Result<Option<Running>, ()> {
    if message.id.is_some() {
        let running = session.streams.begin().ok_or(())?;
        if let Some(NotificationSink::Stream(stream)) = transport.sink() {
            // The answer may stream: tracked for cancellation, and numbered in the session at
            // its first event so it can be resumed (an answer that ends as JSON never is).
            session.streams.enroll(stream, message.id.as_ref());
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

/// `notifications/cancelled` on a line stream stops the named request in flight there.
fn cancel_local(local: &LocalSession, message: &Envelope) {
    if message.notice != Some(Notice::Cancelled) {
        return;
    }
    if let Some(id) = message.params.as_ref().and_then(|p| p.get("requestId")) {
        local.cancel(id);
    }
}

/// `logging/setLevel`'s level: only where logging is on (otherwise the method does not exist
/// here), and only a level the protocol names.
fn requested_level(
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
fn level_set(message: &Envelope, revision: ProtocolVersion, stored: bool) -> Reply {
    let id = message.id.as_ref();
    if stored {
        result_reply_json(id, &JsonValue::Object(JsonObject::new()), revision)
    } else {
        fail(revision, id, Fault::MethodNotFound, None)
    }
}

/// `initialize`, admitted: starts a session in the negotiated revision, owned by the admitted
/// principal (in the endpoint's store over HTTP, given one; a line stream keeps its own), and
/// answers with the result rendered at build.
async fn initialize(
    endpoint: &Endpoint,
    local: Option<&LocalSession>,
    message: &Envelope,
    opening: Opening,
    context: &RequestContext,
) -> Reply {
    let revision = context.protocol_version;
    let catalog = endpoint.catalog();
    let (Some(id), Some(result)) = (
        message.id.as_ref(),
        catalog.discover[revision_slot(revision)].as_deref(),
    ) else {
        return fault_reply(message.id.as_ref(), Fault::Internal, None);
    };
    let store = endpoint.inner.sessions.as_ref().filter(|_| local.is_none());
    let streams = match store {
        Some(store) => store.new_streams(revision),
        None => Arc::new(SessionStreams::new(
            endpoint.inner.streams,
            revision,
            crate::session::SessionConfig::default().get_idle_timeout(),
        )),
    };
    // With per-principal views, the session is told of the list changes its view saw.
    if let Some(view) = endpoint.list_view(&context.admission) {
        let _ = streams.view.set(view);
    }
    let session = Session {
        owner: context.admission.principal_name().map(Arc::from),
        revision,
        capabilities: opening.capabilities,
        client_info: Some(opening.client_info),
        log_level: None,
        streams,
    };
    let session_id = match (local, store) {
        (Some(local), _) => {
            // A connection's session is held to the endpoint's session settings too (its
            // requests to the client wait the configured timeout).
            if let Some(table) = &endpoint.inner.sessions {
                let _ = session.streams.budget.set(crate::stream::session::Budget {
                    limits: table.held(),
                    principal: None,
                    endpoint: Arc::default(),
                });
            }
            local.open(session);
            None
        }
        (None, None) => None,
        (None, Some(store)) => match store.create(session).await {
            Ok(session_id) => {
                crate::facts::telemetry::session(&session_id);
                Some(session_id)
            }
            Err(failure) => {
                if matches!(failure, CreateFailure::Full) {
                    crate::wire::log::budget_reached(crate::wire::log::Budget::Sessions);
                }
                return fail(revision, Some(id), Fault::Busy, None);
            }
        },
    };
    let mut reply = result_reply(id, result);
    reply.session = session_id;
    reply
}
