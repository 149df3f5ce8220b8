//! The 2026-07-28 gate: what a stateless request must carry before the pipeline takes it. A
//! revision header naming a served revision, a method of this revision's table, `Mcp-Method`
//! and `Mcp-Name` agreeing with the body (HTTP), the required `_meta` (revision, client
//! capabilities, optional client information and log level) and the revision selected from them.
//! It returns what it found; admission and dispatch follow in the pipeline.

use http::StatusCode;
use tollgate_json::{JsonObject, JsonValue};

use crate::facts::context::{ClientCapabilities, ClientInfo, RequestContext, RequestFacts};
use crate::model::origin::Transport;
use crate::pipeline::envelope::Envelope;
use crate::pipeline::gate::{Gated, Route};
use crate::registry::Endpoint;
use crate::version::{ProtocolVersion, is_legacy};
use crate::wire::fault::Fault;
use crate::wire::head::Head;
use crate::wire::headers;
use crate::wire::id::RequestId;
use crate::wire::level::LogLevel;
use crate::wire::method::Method;
use crate::wire::reply::{Reply, fault_reply};

pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// `requested` for the unsupported-version error: the header value when it is a short,
/// plain token, otherwise empty (the field is required by the schema; an arbitrary value is
/// never echoed).
fn requested_version(value: &str) -> &str {
    let plain = value.len() <= 32
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    if plain { value } else { "" }
}

/// 400 / -32022 with the revisions to retry from and the requested one (when plain).
fn unsupported_version(
    endpoint: &Endpoint,
    http: bool,
    id: Option<&RequestId>,
    requested: &str,
) -> Reply {
    // Over HTTP, 2024-11-05 is not offered: it is served on stdio only.
    let supported = if http {
        &endpoint.inner.supported_http_json
    } else {
        &endpoint.inner.supported_json
    };
    let data = JsonObject::builder()
        .insert("supported", supported.clone())
        .insert("requested", requested_version(requested))
        .build();
    fault_reply(id, Fault::UnsupportedVersion, Some(data.into()))
}

/// The gate, in order (the first failure wins): an unserved revision header (answered with the
/// list to retry from, whatever the method); the method (unknown and removed ones 404 / -32601);
/// the standard headers; the required `_meta`; the revision the header and body agree on.
pub(crate) fn gate(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    message: &Envelope,
) -> Result<Gated, Reply> {
    let id = message.id.as_ref();
    // Read once: checked against the served revisions here, then with the other headers.
    let header_version = transport.head().map(|h| (h, h.protocol_version.single()));
    if let Some((_, Ok(Some(version)))) = header_version {
        // A header is HTTP's: 2024-11-05 is not served there.
        let served = ProtocolVersion::from_wire(version)
            .is_some_and(|v| v.on_http() && endpoint.inner.revisions.contains(v));
        if !served {
            return Err(unsupported_version(endpoint, true, id, version));
        }
    }
    let on_this_revision = |m: &Method| m.exists_on(ProtocolVersion::V2026_07_28);
    let Some(method) = message.kind.filter(on_this_revision) else {
        return Err(fault_reply(id, Fault::MethodNotFound, None));
    };
    let version_header = match header_version {
        Some((head, version)) => {
            match standard_headers(head, version, message, method, &endpoint.inner.limits) {
                Ok(version) => Some(version),
                Err(()) => return Err(fault_reply(id, Fault::HeaderMismatch, None)),
            }
        }
        None => None,
    };
    let meta = message
        .params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(JsonValue::as_object);
    let Some((body_version, mut facts)) = meta.and_then(read_meta) else {
        return Err(fault_reply(id, Fault::InvalidParams, None));
    };
    // The revision: the header's (which the body must repeat), or the body's on stdio.
    let requested = match version_header {
        Some(header) if body_version != header => {
            return Err(fault_reply(id, Fault::HeaderMismatch, None));
        }
        Some(header) => header,
        None => body_version,
    };
    facts.protocol_version = match ProtocolVersion::from_wire(requested) {
        Some(v) if endpoint.inner.revisions.contains(v) && !is_legacy(v) => v,
        _ => {
            let http = transport.head().is_some();
            return Err(unsupported_version(endpoint, http, id, requested));
        }
    };
    let mut context = RequestContext::for_operation(
        endpoint.inner.path.clone(),
        method.operation_type(),
        &message.method,
        message.id.clone(),
        facts,
        transport.origin(),
    );
    // Admission sees the operation's name as sent (the `_meta` read above is in the params).
    context.operation_name = message
        .params
        .as_ref()
        .and_then(|p| method.operation_name(p));
    Ok(Gated {
        route: Route::Modern(method),
        context,
    })
}

/// The required `_meta`: a string revision and object client capabilities; client information,
/// if sent, an object with string `name` and `version`; a log level, if sent, one of the
/// protocol's. Returns the body's revision and what the request says of its client.
fn read_meta(meta: &JsonObject) -> Option<(&str, RequestFacts)> {
    let (Some(JsonValue::String(body_version)), Some(JsonValue::Object(capabilities))) = (
        meta.get(META_PROTOCOL_VERSION),
        meta.get(META_CLIENT_CAPABILITIES),
    ) else {
        return None;
    };
    let client_info = match meta.get(META_CLIENT_INFO) {
        None => None,
        Some(JsonValue::Object(info)) => Some(ClientInfo::from_object(info.clone())?),
        Some(_) => return None,
    };
    let log_level = match meta.get(META_LOG_LEVEL) {
        None => None,
        Some(v) => Some(v.as_str().and_then(LogLevel::from_wire)?),
    };
    let facts = RequestFacts {
        // Selected by the gate once the header and body agree.
        protocol_version: ProtocolVersion::V2026_07_28,
        client_info,
        client_capabilities: ClientCapabilities::from_json(capabilities.clone()),
        meta: meta.clone(),
        log_level,
    };
    Some((body_version.as_str(), facts))
}

/// `MCP-Protocol-Version` and `Mcp-Method` once each, `Mcp-Method` equal to the body's method,
/// and `Mcp-Name` equal (after base64-sentinel decoding) to the parameter the method table names.
/// Returns the revision header's value.
fn standard_headers<'h>(
    head: &Head<'h>,
    version: Result<Option<&'h str>, ()>,
    message: &Envelope,
    method: Method,
    limits: &crate::registry::EndpointLimits,
) -> Result<&'h str, ()> {
    let version = version?.ok_or(())?;
    let method_header = head.method.single()?.ok_or(())?;
    if method_header != message.method.as_str() {
        return Err(());
    }
    if let Some(source) = method.mcp_name_source() {
        // `Mcp-Name` mirrors `params.name`, `params.uri` for a resource read, `params.taskId`
        // for the tasks methods.
        let body_name = message
            .params
            .as_ref()
            .and_then(|p| p.get(source))
            .and_then(JsonValue::as_str)
            .ok_or(())?;
        let header = head.name.single()?.ok_or(())?;
        if !headers::agrees(header, body_name, limits.json.max_input_bytes()) {
            return Err(());
        }
    }
    Ok(version)
}

/// A notification: this revision defines none over HTTP, so an accepted one is a bare 202.
/// Its protocol version header must still name a served revision, and it is admitted like any
/// request (a refusal is the status alone).
pub(crate) fn notification(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    message: &Envelope,
) -> Result<Gated, Reply> {
    let served = transport
        .head()
        .and_then(|h| h.protocol_version.single().ok().flatten())
        .and_then(ProtocolVersion::from_wire)
        .filter(|v| endpoint.inner.revisions.contains(*v));
    let Some(revision) = served else {
        return Err(Reply::empty(StatusCode::BAD_REQUEST));
    };
    let context = RequestContext::admitted(
        endpoint.inner.path.clone(),
        &message.method,
        None,
        RequestFacts::bare(revision),
        transport.origin(),
    );
    Ok(Gated {
        route: Route::Notice,
        context,
    })
}
