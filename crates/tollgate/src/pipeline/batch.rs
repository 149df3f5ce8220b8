//! JSON-RPC batches, on 2025-03-26 (the one revision that has them): an array of requests,
//! notifications or responses. Each element runs the whole pipeline as a message of its own
//! (HTTP: `pipeline::one`; stdio: `pipeline::handle`), so admission, the request limiter, the
//! session stage and every method's budgets see each one; the answers are one array.
//!
//! Owns the batch's own rules: an empty array is one -32600 with `id: null` (HTTP 400); more
//! elements than `EndpointLimits::max_batch_elements` is refused whole before any element runs;
//! `initialize` inside a batch is refused (2025-03-26: it MUST NOT be part of one); an element's
//! admission, scope or rate-limit refusal (401, 403, 429) answers the whole batch; the answers together stay within the output byte limit (past it, the
//! element that overflowed and every later request are answered -32603 without running). Which
//! messages may be batches is the gates' question (`gate::legacy::takes_batches`). Knows nothing
//! of sockets or line framing.

use std::future::Future;

use http::StatusCode;
use tollgate_json::JsonValue;

use crate::registry::Endpoint;
use crate::wire::fault::Fault;
use crate::wire::id::RequestId;
use crate::wire::method::Method;
use crate::wire::reply::{Reply, fault_reply};
use crate::wire::stage::stage;

/// The empty batch's answer: JSON-RPC 2.0's one error with `id: null`.
const EMPTY: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#;

/// Runs a batch's elements one after another through `one` and gathers the answers.
pub(crate) async fn run<'v, F, Fut>(
    endpoint: &Endpoint,
    elements: &'v [JsonValue],
    mut one: F,
) -> Reply
where
    F: FnMut(&'v JsonValue) -> Fut,
    Fut: Future<Output = Reply>,
{
    stage!(Envelope);
    if elements.is_empty() {
        crate::wire::log::refused(Fault::InvalidRequest);
        let mut reply = Reply::json(StatusCode::BAD_REQUEST, EMPTY.to_vec());
        reply.fault = Some(Fault::InvalidRequest);
        return reply;
    }
    if elements.len() > endpoint.inner.limits.max_batch_elements {
        return fault_reply(None, Fault::BatchTooLarge, None);
    }
    let max = endpoint.inner.limits.output.max_output_bytes();
    let mut answers: Vec<u8> = Vec::new();
    let mut count = 0usize;
    let mut refused: Option<StatusCode> = None;
    let mut full = false;
    for element in elements {
        let id = element.get("id").and_then(RequestId::from_json);
        let reply = if full {
            // Past the output limit: a request is answered without running.
            match &id {
                Some(id) => fault_reply(Some(id), Fault::Internal, None),
                None => continue,
            }
        } else if is_initialize(element) {
            fault_reply(id.as_ref(), Fault::InvalidRequest, None)
        } else {
            one(element).await
        };
        if refuses_caller(&reply) {
            // Admission, a scope check or a rate limit refused the caller: that answer, with
            // its status and header, is the batch's.
            return reply;
        }
        let Some(mut body) = reply.body else {
            if !reply.status.is_success() {
                refused.get_or_insert(reply.status);
            }
            continue;
        };
        if answers.len() + body.len() + 2 > max {
            full = true;
            body = fault_reply(id.as_ref(), Fault::Internal, None)
                .body
                .unwrap_or_default();
        }
        answers.push(if count == 0 { b'[' } else { b',' });
        answers.extend_from_slice(&body);
        count += 1;
    }
    if count == 0 {
        // Only notifications and responses: accepted (202) unless one was refused.
        return Reply::empty(refused.unwrap_or(StatusCode::ACCEPTED));
    }
    answers.push(b']');
    Reply::json(StatusCode::OK, answers)
}

/// Whether a reply refuses the caller rather than the element: 401, 403 or 429 (with its
/// `WWW-Authenticate` or `Retry-After`, when it has one).
fn refuses_caller(reply: &Reply) -> bool {
    reply.extra.is_some()
        || matches!(
            reply.status,
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN | StatusCode::TOO_MANY_REQUESTS
        )
}

/// Whether an element is an `initialize` request or notification.
fn is_initialize(element: &JsonValue) -> bool {
    element
        .get("method")
        .and_then(JsonValue::as_str)
        .is_some_and(|m| Method::Initialize.is_named(m))
}
