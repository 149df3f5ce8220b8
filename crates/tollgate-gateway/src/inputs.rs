//! An upstream's input request (a form elicitation, a sampling or a roots request) rebuilt
//! through the endpoint's own constructors, so what reaches a caller is checked as the runtime
//! checks its own: from the value a 2026-07-28 `input_required` result or task status carries,
//! or from a 2025 upstream's request on a call's stream. Knows nothing of calls, links or tasks.

use tollgate::context::InputRequest;
use tollgate::json::{JsonObject, JsonValue};

/// One upstream input request as a value (`{method, params}`), as a 2026-07-28 upstream's
/// `input_required` result and its task's status carry it, rebuilt by [`input_request_of`].
pub(crate) fn input_request_in(request: &JsonValue) -> Option<InputRequest> {
    let params = match request.get("params") {
        None => JsonObject::new(),
        Some(params) => params.as_object()?.clone(),
    };
    let method = request.get("method").and_then(JsonValue::as_str)?;
    input_request_of(method, params)
}

/// An upstream's request (`method` with `params`) rebuilt through the endpoint's constructors:
/// a form elicitation, sampling or roots. `None` for anything else (another method, a URL
/// elicitation, a malformed request).
pub(crate) fn input_request_of(method: &str, params: JsonObject) -> Option<InputRequest> {
    Some(match method {
        "elicitation/create" => {
            if params
                .get("mode")
                .is_some_and(|m| m.as_str() != Some("form"))
            {
                return None;
            }
            let message = params.get("message")?.as_str()?;
            let schema = params.get("requestedSchema")?.as_object()?.clone();
            InputRequest::elicitation(message, schema)
        }
        "sampling/createMessage" => InputRequest::sampling(params).ok()?,
        "roots/list" => InputRequest::list_roots(),
        _ => return None,
    })
}
