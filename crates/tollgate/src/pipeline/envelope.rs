//! The first stages after transport framing: strict JSON under every input limit, and the
//! JSON-RPC envelope read into its parts.

use tollgate_json::{JsonObject, JsonString, JsonValue, from_slice};

use crate::registry::Endpoint;
use crate::wire::fault::Fault;
use crate::wire::id::RequestId;
use crate::wire::method::{Method, Notice};
use crate::wire::reply::{Reply, fault_reply};
use crate::wire::stage::stage;

/// Strict JSON under every input limit.
pub(crate) fn parse(endpoint: &Endpoint, body: &[u8]) -> Result<JsonValue, Reply> {
    stage!(Envelope);
    from_slice(body, &endpoint.inner.limits.json).map_err(|_| unreadable())
}

/// The answer to a message that cannot be read as JSON within the input limits (too large, too
/// deep, not JSON): the fixed -32700, counted as a `limits` refusal (feature `otel`), since no
/// request exists yet to record it.
pub(crate) fn unreadable() -> Reply {
    crate::facts::telemetry::refused_input();
    fault_reply(None, Fault::Parse, None)
}

/// Whether a parsed request asks for progress (`params._meta.progressToken`).
pub(crate) fn asks_for_progress(value: &JsonValue) -> bool {
    value
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("progressToken"))
        .is_some()
}

/// The readable parts of a JSON-RPC message.
pub(crate) struct Envelope {
    pub(crate) id: Option<RequestId>,
    /// The method as sent.
    pub(crate) method: JsonString,
    /// The method, read once from the one table (`None`: not a method Tollgate serves on any
    /// revision).
    pub(crate) kind: Option<Method>,
    /// The notification, when it is one Tollgate acts on.
    pub(crate) notice: Option<Notice>,
    pub(crate) params: Option<JsonObject>,
}

/// The envelope of a parsed message, or the fixed -32600 (with the id, when it was readable).
pub(crate) fn read(value: &JsonValue) -> Result<Envelope, Reply> {
    stage!(Envelope);
    envelope(value).map_err(|id| fault_reply(id.as_ref(), Fault::InvalidRequest, None))
}

/// Classifies the body. `Err` carries the id when it was readable.
fn envelope(value: &JsonValue) -> Result<Envelope, Option<RequestId>> {
    let Some(object) = value.as_object() else {
        return Err(None);
    };
    let id = match object.get("id") {
        None => None,
        Some(raw) => Some(RequestId::from_json(raw).ok_or(None)?),
    };
    let fail = || Err(id.clone());
    if object.get("jsonrpc").and_then(JsonValue::as_str) != Some("2.0") {
        return fail();
    }
    if object
        .keys()
        .any(|k| !matches!(k, "jsonrpc" | "id" | "method" | "params"))
    {
        return fail();
    }
    let Some(JsonValue::String(method)) = object.get("method") else {
        return fail();
    };
    let params = match object.get("params") {
        None => None,
        Some(JsonValue::Object(p)) => Some(p.clone()),
        Some(_) => return fail(),
    };
    Ok(Envelope {
        kind: Method::of(method.as_str()),
        notice: id.is_none().then(|| Notice::of(method.as_str())).flatten(),
        id,
        method: method.clone(),
        params,
    })
}
