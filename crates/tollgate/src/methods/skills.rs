//! `skills/list`, `skills/get` and `resources/directory/read`: the skills extension's methods
//! (2026-07-28), answered from what `registry/skills.rs` rendered when the endpoint was built
//! (the caller's view of it, with per-principal views).
//! An unknown skill or directory is a fixed -32602 that does not repeat the URI.

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::identity::AdmissionIdentity;
use crate::methods::paged;
use crate::registry::Endpoint;
use crate::version::ProtocolVersion;
use crate::wire::fault::Fault;
use crate::wire::id::RequestId;
use crate::wire::reply::{Reply, fail, fault_reply, result_reply};
use crate::wire::stage::stage;

/// `skills/list`: the page the cursor names (issued by this build of the list).
pub(crate) fn list(
    endpoint: &Endpoint,
    revision: ProtocolVersion,
    params: &JsonObject,
    id: Option<&RequestId>,
    who: &AdmissionIdentity,
) -> Reply {
    stage!(Lookup);
    match endpoint.catalog_for(who).skills.as_ref() {
        Some(skills) => paged(revision, params, id, &skills.pages, skills.fingerprint),
        None => fail(revision, id, Fault::MethodNotFound, None),
    }
}

/// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`.
pub(crate) fn get(
    endpoint: &Endpoint,
    revision: ProtocolVersion,
    params: &JsonObject,
    id: Option<&RequestId>,
    who: &AdmissionIdentity,
) -> Reply {
    stage!(Lookup);
    let catalog = endpoint.catalog_for(who);
    let answers = catalog.skills.as_ref().map(|s| &s.get);
    by_uri(revision, params, id, answers, Fault::SkillNotFound)
}

/// `resources/directory/read`: the direct children of a skill's directory, on one page (any
/// cursor is one this endpoint did not issue).
pub(crate) fn read_directory(
    endpoint: &Endpoint,
    revision: ProtocolVersion,
    params: &JsonObject,
    id: Option<&RequestId>,
    who: &AdmissionIdentity,
) -> Reply {
    stage!(Lookup);
    match params.get("cursor") {
        None => {}
        Some(JsonValue::String(_)) => return fail(revision, id, Fault::InvalidCursor, None),
        Some(_) => return fail(revision, id, Fault::InvalidParams, None),
    }
    let catalog = endpoint.catalog_for(who);
    let answers = catalog.skills.as_ref().map(|s| &s.directories);
    by_uri(revision, params, id, answers, Fault::NotADirectory)
}

/// The answer rendered for `params.uri`, else `missing`.
fn by_uri(
    revision: ProtocolVersion,
    params: &JsonObject,
    id: Option<&RequestId>,
    answers: Option<&crate::registry::NameMap<Vec<u8>>>,
    missing: Fault,
) -> Reply {
    let Some(answers) = answers else {
        return fail(revision, id, Fault::MethodNotFound, None);
    };
    let Some(JsonValue::String(uri)) = params.get("uri") else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    match (answers.get(uri.as_str()), id) {
        (Some(result), Some(id)) => result_reply(id, result),
        (Some(_), None) => fault_reply(id, Fault::Internal, None),
        (None, _) => fail(revision, id, missing, None),
    }
}
