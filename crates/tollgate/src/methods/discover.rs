//! `server/discover` (2026-07-28): the result rendered when the endpoint was built, with the
//! request's id spliced in.

use crate::registry::{Endpoint, revision_slot};
use crate::version::ProtocolVersion;
use crate::wire::fault::Fault;
use crate::wire::id::RequestId;
use crate::wire::reply::{Reply, fault_reply, result_reply};
use crate::wire::stage::stage;

/// `server/discover`: the revision's pre-rendered result.
pub(crate) fn discover(
    endpoint: &Endpoint,
    revision: ProtocolVersion,
    id: Option<&RequestId>,
) -> Reply {
    stage!(Lookup);
    match (&endpoint.catalog().discover[revision_slot(revision)], id) {
        (Some(result), Some(id)) => result_reply(id, result),
        _ => fault_reply(id, Fault::Internal, None),
    }
}
