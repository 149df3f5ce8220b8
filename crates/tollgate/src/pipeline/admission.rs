//! The admission stage, run for every request before anything answers from the endpoint's state,
//! and the operation limiter a tool call runs once its tool is known: `policy.rs` decides, this
//! renders its refusals as the fixed replies.

use http::StatusCode;

use crate::context::RequestContext;
use crate::endpoint::Endpoint;
use crate::origin::Caller;
use crate::policy::Refusal;
use crate::wire::fault::Fault;
use crate::wire::reply::{Reply, fail};

/// The admission stage for a well-formed request (see `policy.rs`): the refusal throttle,
/// admission and the request limiter. A refusal becomes its fixed reply.
pub(crate) fn admit(
    endpoint: &Endpoint,
    caller: Caller<'_>,
    context: &mut RequestContext,
) -> Result<(), Reply> {
    crate::policy::admit(&endpoint.inner.policy, caller, context)
        .map_err(|refusal| refusal_reply(context, refusal))
}

/// The operation limiter of a tool call: the tool's named limiter, else the endpoint's.
pub(crate) fn charge_tool(
    endpoint: &Endpoint,
    context: &RequestContext,
    named: Option<&str>,
) -> Result<(), Reply> {
    crate::policy::charge_tool(&endpoint.inner.policy, context, named)
        .map_err(|refusal| refusal_reply(context, refusal))
}

/// A policy refusal as its fixed reply, with `WWW-Authenticate` or `Retry-After` where it has
/// one. A notification gets the status and header alone.
pub(crate) fn refusal_reply(context: &RequestContext, refusal: Refusal) -> Reply {
    let (revision, id) = (context.protocol_version, context.request_id.as_ref());
    let (fault, extra) = match refusal {
        Refusal::Unauthorized(challenge) => (
            Fault::Unauthorized,
            challenge.map(|c| (http::header::WWW_AUTHENTICATE, c)),
        ),
        Refusal::Forbidden => (Fault::Forbidden, None),
        Refusal::RateLimited(retry_after) => {
            let seconds = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
            (
                Fault::RateLimited,
                Some((http::header::RETRY_AFTER, http::HeaderValue::from(seconds))),
            )
        }
        Refusal::Failed => (Fault::Internal, None),
    };
    let mut reply = match id {
        Some(_) => fail(revision, id, fault, None),
        // Notifications, stream `GET`s, session `DELETE`s and client responses have no id to
        // answer: the status alone.
        None => Reply::empty(match fault {
            // A broken controller is a server error, never a success status.
            Fault::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            _ => fault.status(),
        }),
    };
    reply.extra = extra;
    reply
}
