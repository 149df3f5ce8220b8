//! The admission stage, run for every request before anything answers from the endpoint's
//! state: `policy/rules.rs` decides and renders its refusals as the fixed replies.

use crate::facts::context::RequestContext;
use crate::policy::rules::Caller;
use crate::policy::rules::refusal_reply;
use crate::registry::Endpoint;
use crate::wire::reply::Reply;
use crate::wire::stage::stage;

/// The admission stage for a well-formed request (see `policy/rules.rs`): the refusal throttle,
/// admission and the request limiter. A refusal becomes its fixed reply.
pub(crate) async fn admit(
    endpoint: &Endpoint,
    caller: Caller<'_>,
    context: &mut RequestContext,
) -> Result<(), Reply> {
    stage!(Admission);
    crate::facts::telemetry::revision(context.protocol_version);
    let admitted = crate::facts::telemetry::stage(
        "admission",
        crate::policy::rules::admit(&endpoint.inner.policy, caller, context),
    )
    .await;
    admitted.map_err(|refusal| refusal_reply(context, refusal))
}
