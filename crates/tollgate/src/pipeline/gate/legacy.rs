//! The gate of the `initialize` revisions (2025-11-25, 2025-06-18, 2025-03-26 and, over stdio
//! only, 2024-11-05): what a message must carry before admission (`initialize`'s
//! parameters and the revision it negotiates; after it, the revision header and the session id).
//! The session itself is found after admission (`pipeline/session.rs`), by the admitted
//! principal.
//!
//! Owns how one endpoint tells a 2025 request from a 2026-07-28 one over HTTP (the rule below).
//!
//! The rule: on an endpoint that serves a 2025 revision, a request is a 2025 request when its
//! method is `initialize` (unless its header names 2026-07-28), when its `MCP-Protocol-Version`
//! header names a served 2025 revision,
//! when it has no such header but carries `Mcp-Session-Id`, when it has neither and its body names
//! no revision while the endpoint serves 2025-03-26 (taken as 2025-03-26, as the later
//! transports say a server SHOULD assume), or when the endpoint serves no 2026-07-28 at all.
//! Everything else takes the 2026-07-28 path. Inside a session, a request without the header is
//! then refused (400 -32600): clients must send it after `initialize` (2025-03-26 clients,
//! whose revision has no such header, excepted). 2024-11-05 is not served over HTTP (its
//! HTTP+SSE transport is deprecated): over HTTP it is a revision this endpoint does not serve.

use http::StatusCode;
use tollgate_json::JsonObject;
use tollgate_json::JsonValue;

use crate::facts::context::{ClientCapabilities, ClientInfo, RequestContext, RequestFacts};
use crate::model::origin::Transport;
use crate::pipeline::envelope::Envelope;
use crate::pipeline::gate::{Gated, Opening, Route};
use crate::registry::{Endpoint, revision_slot};
use crate::version::{ProtocolVersion, ProtocolVersions, is_legacy};
use crate::wire::fault::Fault;
use crate::wire::head::Head;
use crate::wire::id::RequestId;
use crate::wire::method::Method;
use crate::wire::reply::{Reply, fail, fault_reply};

/// Whether an HTTP body that is a JSON array is a batch: the endpoint serves 2025-03-26 (the one
/// revision with batches) and the revision header is absent or names it. Elsewhere an array stays
/// the invalid request it is on the later revisions. Each element then passes this gate as a
/// message of its own.
pub(crate) fn takes_batches(endpoint: &Endpoint, head: &Head<'_>) -> bool {
    served_over_http(endpoint).contains(ProtocolVersion::V2025_03_26)
        && match head.protocol_version.single() {
            Ok(None) => true,
            Ok(Some(v)) => v == ProtocolVersion::V2025_03_26.as_str(),
            Err(_) => false,
        }
}

/// How a 2025 request was recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Selection {
    Initialize,
    Header(ProtocolVersion),
    Implicit,
    /// Neither a revision header nor a session id, nor a revision in the body: 2025-03-26.
    Assumed,
    /// The header names a 2025 revision while the body's `_meta` names another revision: the
    /// 2026-07-28 transport's header mismatch (400, -32020), before anything else.
    Mismatch,
}

/// The newest `initialize` revision the endpoint serves on any transport (stdio).
pub(crate) fn newest_legacy(endpoint: &Endpoint) -> Option<ProtocolVersion> {
    endpoint.inner.revisions.iter().find(|r| is_legacy(*r))
}

/// The revisions the endpoint serves over HTTP: all it serves but 2024-11-05.
pub(crate) fn served_over_http(endpoint: &Endpoint) -> ProtocolVersions {
    endpoint
        .inner
        .revisions
        .iter()
        .filter(|r| r.on_http())
        .collect()
}

/// The newest `initialize` revision the endpoint serves over HTTP.
pub(crate) fn newest_legacy_http(endpoint: &Endpoint) -> Option<ProtocolVersion> {
    served_over_http(endpoint).iter().find(|r| is_legacy(*r))
}

/// Whether the message belongs to a 2025 revision on this endpoint (see the module rule).
pub(crate) fn selects(
    endpoint: &Endpoint,
    head: &Head<'_>,
    message: &Envelope,
) -> Option<Selection> {
    newest_legacy_http(endpoint)?;
    let served = served_over_http(endpoint);
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
                if super::body_revision(message).is_some_and(|body| body != value) {
                    Some(Selection::Mismatch)
                } else {
                    Some(Selection::Header(r))
                }
            }
            _ if !served.contains(ProtocolVersion::V2026_07_28) => Some(Selection::Implicit),
            _ => None,
        },
        Ok(None) if head.session_id.is_present() => Some(Selection::Implicit),
        Ok(None)
            if served.contains(ProtocolVersion::V2025_03_26)
                && super::body_revision(message).is_none() =>
        {
            Some(Selection::Assumed)
        }
        _ if !served.contains(ProtocolVersion::V2026_07_28) => Some(Selection::Implicit),
        _ => None,
    }
}

fn unsupported(endpoint: &Endpoint, revision: ProtocolVersion, id: Option<&RequestId>) -> Reply {
    let data = JsonObject::builder()
        .insert("supported", endpoint.inner.supported_http_json.clone())
        .insert("requested", "")
        .build();
    fail(revision, id, Fault::UnsupportedVersion, Some(data.into()))
}

/// The context of a 2025 message before anything of its session is looked at: what the message
/// says of itself (its method, id, revision, `_meta` and operation name). What its session
/// remembers is added once the session is found as the admitted principal's.
pub(crate) fn context(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    message: &Envelope,
    revision: ProtocolVersion,
) -> RequestContext {
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
    context
}

/// The gate for a 2025 message over HTTP, in order: a header contradicting the body's `_meta`;
/// `initialize`'s parameters; a revision header naming nothing served; with sessions, the
/// session id (required); without them, the revision header (required).
pub(crate) fn gate(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    head: &Head<'_>,
    message: &Envelope,
    selection: Selection,
) -> Result<Gated, Reply> {
    let Some(newest) = newest_legacy_http(endpoint) else {
        return Err(fault_reply(message.id.as_ref(), Fault::Internal, None));
    };
    let id = message.id.as_ref();
    match selection {
        Selection::Mismatch => {
            return Err(match id {
                Some(id) => fault_reply(Some(id), Fault::HeaderMismatch, None),
                None => Reply::empty(StatusCode::BAD_REQUEST),
            });
        }
        Selection::Initialize => {
            return initialize(endpoint, transport, message, served_over_http(endpoint));
        }
        Selection::Header(_) | Selection::Implicit | Selection::Assumed => {}
    }
    let header = match selection {
        Selection::Header(r) => Some(r),
        Selection::Assumed => None,
        _ => match head.protocol_version.single() {
            Ok(None) => None,
            // A header naming anything this endpoint does not serve as a 2025 revision.
            _ => return Err(unsupported(endpoint, newest, id)),
        },
    };
    let revision = if endpoint.inner.sessions.is_some() {
        if !matches!(head.session_id.single(), Ok(Some(_))) {
            return Err(fail(newest, id, Fault::SessionRequired, None));
        }
        header.unwrap_or(newest)
    } else {
        match (header, selection) {
            (Some(r), _) => r,
            (None, Selection::Assumed) => ProtocolVersion::V2025_03_26,
            (None, _) => return Err(unsupported(endpoint, newest, id)),
        }
    };
    Ok(Gated {
        route: Route::Legacy { header },
        context: context(endpoint, transport, message, revision),
    })
}

/// `initialize`'s gate: its parameters (`protocolVersion`, `capabilities`, `clientInfo`), and the
/// revision it negotiates among `served` (the revisions of the message's transport): the
/// client's when served, else the newest `initialize` revision served (never 2026-07-28).
pub(crate) fn initialize(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    message: &Envelope,
    served: ProtocolVersions,
) -> Result<Gated, Reply> {
    let Some(newest) = served.iter().find(|r| is_legacy(*r)) else {
        return Err(fault_reply(message.id.as_ref(), Fault::Internal, None));
    };
    let Some(id) = message.id.as_ref() else {
        return Err(Reply::empty(StatusCode::BAD_REQUEST));
    };
    let invalid = || fail(newest, Some(id), Fault::InvalidParams, None);
    let Some(params) = &message.params else {
        return Err(invalid());
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
        return Err(invalid());
    };
    let Some(client_info) = ClientInfo::from_object(info.clone()) else {
        return Err(invalid());
    };
    let revision = match ProtocolVersion::from_wire(requested) {
        Some(r) if is_legacy(r) && served.contains(r) => r,
        _ => newest,
    };
    if endpoint.catalog().discover[revision_slot(revision)].is_none() {
        return Err(fail(revision, Some(id), Fault::Internal, None));
    }
    let capabilities = ClientCapabilities::from_json(capabilities.clone());
    let context = RequestContext::admitted(
        endpoint.inner.path.clone(),
        &message.method,
        message.id.clone(),
        RequestFacts {
            protocol_version: revision,
            client_info: Some(client_info.clone()),
            client_capabilities: capabilities.clone(),
            meta: JsonObject::new(),
            log_level: None,
        },
        transport.origin(),
    );
    Ok(Gated {
        route: Route::Initialize(Opening {
            capabilities,
            client_info,
        }),
        context,
    })
}
