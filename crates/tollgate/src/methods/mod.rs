//! The methods' handlers, one per method for every revision: each takes an admitted request
//! (its context says the revision), looks up what it names, runs its handler through the
//! pipeline's guard, and writes its result in the revision's projection. They know no
//! transport framing and no revision envelope.

pub(crate) mod discover;
pub(crate) mod listen;
pub(crate) mod prompts;
pub(crate) mod requested_tasks;
pub(crate) mod resources;
pub(crate) mod skills;
pub(crate) mod tasks;
pub(crate) mod tools;

use tollgate_json::{JsonObject, JsonValue};

use crate::registry::{page_of, revision_slot};
use crate::version::ProtocolVersion;
use crate::wire::fault::Fault;
use crate::wire::id::RequestId;
use crate::wire::reply::{Reply, fail, fault_reply, result_reply};
use crate::wire::stage::stage;

/// A catalog rendered as one page per revision when the endpoint was built: any cursor is one
/// this endpoint did not issue.
pub(crate) fn one_page(
    revision: ProtocolVersion,
    params: &JsonObject,
    id: Option<&RequestId>,
    pages: &[Option<Vec<u8>>; crate::registry::REVISIONS],
) -> Reply {
    stage!(Lookup);
    match params.get("cursor") {
        None => {}
        Some(JsonValue::String(_)) => return fail(revision, id, Fault::InvalidCursor, None),
        Some(_) => return fail(revision, id, Fault::InvalidParams, None),
    }
    match (&pages[revision_slot(revision)], id) {
        (Some(result), Some(id)) => result_reply(id, result),
        _ => fault_reply(id, Fault::Internal, None),
    }
}

/// A list rendered page by page when the endpoint was built: the page the cursor names, if it
/// was issued under `fingerprint` (the first page without one).
pub(crate) fn paged(
    revision: ProtocolVersion,
    params: &JsonObject,
    id: Option<&RequestId>,
    pages: &[Vec<u8>],
    fingerprint: u64,
) -> Reply {
    stage!(Lookup);
    let page = match params.get("cursor") {
        None => 0,
        Some(JsonValue::String(cursor)) => match page_of(fingerprint, cursor, pages.len()) {
            Some(page) => page,
            None => return fail(revision, id, Fault::InvalidCursor, None),
        },
        Some(_) => return fail(revision, id, Fault::InvalidParams, None),
    };
    match (pages.get(page), id) {
        (Some(result), Some(id)) => result_reply(id, result),
        _ => fault_reply(id, Fault::Internal, None),
    }
}

/// The scope stage of an operation once it is found (`policy/rules.rs::check_scopes`): a
/// caller lacking a required scope gets 403 with its `insufficient_scope` challenge.
pub(crate) fn require_scopes(
    endpoint: &crate::registry::Endpoint,
    context: &crate::facts::context::RequestContext,
    required: &crate::policy::authorization::Scopes,
) -> Result<(), Reply> {
    crate::policy::rules::check_scopes(&endpoint.inner.policy, context, required)
        .map_err(|refusal| crate::policy::rules::refusal_reply(context, refusal))
}
