//! Replies: a status and an optional JSON body, and the builders every path answers with (fixed
//! faults with each revision's status, results spliced from pre-rendered bytes, small results
//! from trees, results written under the output limits).

use http::StatusCode;
use tollgate_json::{JsonObject, JsonObjectBuilder, JsonValue, OutputLimits, to_vec, write_into};

use crate::version::{ProtocolVersion, is_legacy};
use crate::wire::fault::Fault;
use crate::wire::id::RequestId;

/// One reply: a status and, unless empty, a JSON body.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) body: Option<Vec<u8>>,
    /// An `Mcp-Session-Id` to send (a 2025-revision `initialize` only).
    pub(crate) session: Option<std::sync::Arc<str>>,
    /// One more response header: `WWW-Authenticate` or `Retry-After` for a policy refusal.
    pub(crate) extra: Option<(http::HeaderName, http::HeaderValue)>,
    /// The fault a fault reply answers (for telemetry; one byte, in the status's padding).
    pub(crate) fault: Option<Fault>,
}

impl Reply {
    pub(crate) fn empty(status: StatusCode) -> Self {
        Self {
            status,
            body: None,
            session: None,
            extra: None,
            fault: None,
        }
    }

    /// HTTP 200 with a rendered JSON-RPC response.
    pub(crate) fn ok(body: Vec<u8>) -> Self {
        Self::json(StatusCode::OK, body)
    }

    pub(crate) fn json(status: StatusCode, body: Vec<u8>) -> Self {
        Self {
            status,
            body: Some(body),
            session: None,
            extra: None,
            fault: None,
        }
    }
}

/// A fault, with the status the request's revision gives it. Cold: an answered request takes
/// none of these paths, and their code stays out of its way.
#[cold]
pub(crate) fn fail(
    revision: ProtocolVersion,
    id: Option<&RequestId>,
    fault: Fault,
    data: Option<JsonValue>,
) -> Reply {
    let mut reply = fault_reply(id, fault, data);
    if is_legacy(revision) {
        reply.status = fault.legacy_status();
    }
    reply
}

/// A fault as a JSON-RPC error response. `data` is only ever framework-built.
#[cold]
pub(crate) fn fault_reply(id: Option<&RequestId>, fault: Fault, data: Option<JsonValue>) -> Reply {
    crate::wire::log::refused(fault);
    let mut error = JsonObject::builder()
        .insert("code", fault.code())
        .insert("message", fault.message());
    if let Some(data) = data {
        error.push("data", data);
    }
    let mut envelope = JsonObject::builder().insert("jsonrpc", "2.0");
    if let Some(id) = id {
        envelope.push("id", id.to_json());
    }
    envelope.push("error", error.build());
    // Framework-built and small: within any output limit.
    let body = to_vec(
        &envelope.build().into(),
        &tollgate_json::OutputLimits::default(),
    )
    .unwrap_or_default();
    let mut reply = Reply::json(fault.status(), body);
    reply.fault = Some(fault);
    reply
}

/// A successful result whose `result` member is already rendered.
pub(crate) fn result_reply(id: &RequestId, result: &[u8]) -> Reply {
    let mut body = Vec::with_capacity(result.len() + 48);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // An id read from a bounded request always fits.
    if write_into(
        &id.to_json(),
        &mut body,
        &tollgate_json::OutputLimits::default(),
    )
    .is_err()
    {
        return fault_reply(None, Fault::Internal, None);
    }
    body.extend_from_slice(br#","result":"#);
    body.extend_from_slice(result);
    body.push(b'}');
    Reply::json(StatusCode::OK, body)
}

/// A successful result built from a tree (small framework results such as `ping`).
pub(crate) fn result_reply_json(
    id: Option<&RequestId>,
    result: &JsonValue,
    revision: ProtocolVersion,
) -> Reply {
    let Some(id) = id else {
        return fail(revision, None, Fault::Internal, None);
    };
    match to_vec(result, &tollgate_json::OutputLimits::default()) {
        Ok(bytes) => result_reply(id, &bytes),
        Err(_) => fail(revision, Some(id), Fault::Internal, None),
    }
}

/// Writes a result built as a tree under the output limits (`-32603` past them).
pub(crate) fn tree_reply(
    limits: &OutputLimits,
    revision: ProtocolVersion,
    id: Option<&RequestId>,
    result: JsonObjectBuilder,
) -> Reply {
    let Some(id) = id else {
        return fault_reply(None, Fault::Internal, None);
    };
    let mut body = Vec::with_capacity(256);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    let written = put(&id.to_json(), &mut body, limits).and_then(|()| {
        body.extend_from_slice(br#","result":"#);
        put(&result.build().into(), &mut body, limits)
    });
    match written {
        Ok(()) => {
            body.push(b'}');
            Reply::json(StatusCode::OK, body)
        }
        Err(Overflow) => fail(revision, Some(id), Fault::Internal, None),
    }
}

/// The response cannot be written within the output contract (size, string or depth limits, an
/// oversized inline item, or a value the revision cannot carry).
pub(crate) struct Overflow;

/// Appends `value`, keeping the whole response within the byte limit (each write is bounded by
/// it too, so the buffer never grows past twice the limit).
pub(crate) fn put(
    value: &JsonValue,
    out: &mut Vec<u8>,
    limits: &OutputLimits,
) -> Result<(), Overflow> {
    write_into(value, out, limits).map_err(|_| Overflow)?;
    if out.len() > limits.max_output_bytes() {
        Err(Overflow)
    } else {
        Ok(())
    }
}
