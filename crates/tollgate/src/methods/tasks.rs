//! `tasks/get`, `tasks/update` and `tasks/cancel` (2026-07-28, an endpoint with a task store):
//! one prologue (the extension declared, the id, the caller's own task), then the detailed task,
//! the partial answers, or the cancellation. 2025-11-25's `tasks/get`, `tasks/cancel` and
//! `tasks/result` (`methods/requested_tasks.rs`) share the prologue (no extension there) and
//! the cancellation.

use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue, OutputLimits};

use crate::facts::context::missing_capabilities;
use crate::facts::context::{ClientCapability, RequestContext};
use crate::methods::tools::typed_output;
use crate::model::input::input_response_shape;
use crate::model::intercept::sanitize;
use crate::model::projection::render_tool_result;
use crate::registry::Endpoint;
use crate::tasks::model::{MAX_TASK_ID_BYTES, TASKS_EXTENSION, TaskStatus};
use crate::tasks::record::{MemberWriter, TaskRecord};
use crate::tasks::runner::Lookup;
use crate::tasks::runner::{Tasks, owner_of};
use crate::version::ProtocolVersion;
use crate::wire::fault::Fault;
use crate::wire::id::RequestId;
use crate::wire::reply::{Reply, fail, result_reply};
use crate::wire::stage::stage;

/// Reads and checks `params.taskId`.
fn task_id(params: &JsonObject) -> Option<&str> {
    params
        .get("taskId")
        .and_then(JsonValue::as_str)
        .filter(|id| !id.is_empty() && id.len() <= MAX_TASK_ID_BYTES)
}

/// The request's gate for every `tasks/*` method: the client declared the extension.
fn gate(context: &RequestContext) -> Result<(), Reply> {
    if context.client_capabilities.extension(TASKS_EXTENSION) {
        return Ok(());
    }
    Err(missing_extension(context))
}

/// HTTP 400 / -32021 naming the tasks extension.
pub(crate) fn missing_extension(context: &RequestContext) -> Reply {
    missing_capabilities(
        context.protocol_version,
        context.request_id.as_ref(),
        [ClientCapability::Extension(TASKS_EXTENSION.into())].iter(),
    )
}

pub(crate) fn no_task(context: &RequestContext) -> Reply {
    fail(
        context.protocol_version,
        context.request_id.as_ref(),
        Fault::TaskNotFound,
        None,
    )
}

pub(crate) fn internal(context: &RequestContext) -> Reply {
    fail(
        context.protocol_version,
        context.request_id.as_ref(),
        Fault::Internal,
        None,
    )
}

/// The store could not be reached: HTTP 503 `Server busy`, which a client may retry.
pub(crate) fn unavailable(context: &RequestContext) -> Reply {
    fail(
        context.protocol_version,
        context.request_id.as_ref(),
        Fault::Busy,
        None,
    )
}

/// A failed store write: 503 when the store did not answer (retry), the fixed -32603 when the
/// record cannot be used (retrying does not help).
pub(crate) fn store_failure(
    context: &RequestContext,
    kind: crate::tasks::store::TaskStoreErrorKind,
) -> Reply {
    if kind == crate::tasks::store::TaskStoreErrorKind::Backend {
        unavailable(context)
    } else {
        internal(context)
    }
}

fn ack(context: &RequestContext) -> Reply {
    match context.request_id.as_ref() {
        Some(id) => result_reply(id, br#"{"resultType":"complete"}"#),
        None => internal(context),
    }
}

/// The gate (2026-07-28), the task id and the caller's own task, or the reply that ends the
/// request.
pub(crate) async fn own_task<'p>(
    endpoint: &Endpoint,
    tasks: &Tasks,
    params: &'p JsonObject,
    context: &RequestContext,
) -> Result<(&'p str, TaskRecord), Reply> {
    // 2025-11-25's tasks are the server's, asked for per call: no client capability gates them.
    if !context.protocol_version.has_requested_tasks() {
        gate(context)?;
    }
    let id = task_id(params).ok_or_else(|| no_task(context))?;
    let owner = owner_of(&endpoint.inner.path, context);
    match tasks.lookup_for_client(id, &owner).await {
        Lookup::Found(record) => Ok((id, record)),
        Lookup::Absent => Err(no_task(context)),
        Lookup::StoreFailed => Err(unavailable(context)),
        Lookup::Unreadable => Err(internal(context)),
    }
}

/// `tasks/get`: the detailed task, with the outstanding input requests (when the client can
/// answer every kind), the result or the error.
pub(crate) async fn get(
    endpoint: &Endpoint,
    tasks: &Tasks,
    params: &JsonObject,
    context: &RequestContext,
) -> Reply {
    stage!(Lookup);
    let record = match own_task(endpoint, tasks, params, context).await {
        Ok((_, record)) => record,
        Err(reply) => return reply,
    };
    if record.status == TaskStatus::InputRequired {
        // Every outstanding request's capability, all missing ones reported together.
        match record.missing_capabilities(&context.client_capabilities) {
            None => return internal(context),
            Some(missing) if !missing.is_empty() => {
                return missing_capabilities(
                    context.protocol_version,
                    context.request_id.as_ref(),
                    missing.iter(),
                );
            }
            Some(_) => {}
        }
    }
    let Some(request_id) = context.request_id.as_ref() else {
        return internal(context);
    };
    let mut record = record;
    if record.status == TaskStatus::Completed {
        match visible_result(endpoint, &record, context) {
            Ok(text) => record.result = Some(text),
            Err(fault) => {
                let id = context.request_id.as_ref();
                return fail(context.protocol_version, id, fault, None);
            }
        }
    }
    match write_detailed(&record, request_id, &endpoint.inner.limits.output) {
        Some(body) => Reply::ok(body),
        None => internal(context),
    }
}

/// A completed task's result as `context` may see it, in its revision: through the endpoint's
/// sanitizer (with the creating call's tool and arguments), then, for a typed tool, checked
/// against its output schema (and mirrored as text, as the call itself would have been). The
/// stored result is left as it is, so a later read can succeed. A result that does not read
/// back, is refused by the sanitizer, fails the schema, or belongs to a tool that is no longer
/// typed here is the fixed internal error.
pub(crate) fn visible_result(
    endpoint: &Endpoint,
    record: &TaskRecord,
    context: &RequestContext,
) -> Result<Arc<str>, Fault> {
    let text = record.result.as_ref().ok_or(Fault::Internal)?;
    let sanitizer = endpoint.inner.sanitizer.as_ref();
    let revision = context.protocol_version;
    // Stored as 2026-07-28 writes it: another revision's reader gets it written again.
    if sanitizer.is_none() && !record.typed && revision == ProtocolVersion::V2026_07_28 {
        return Ok(text.clone());
    }
    let parsed = record.stored_result().ok_or(Fault::Internal)?;
    let clean = sanitize(sanitizer, context, &record.tool, &record.arguments, parsed)
        .ok_or(Fault::Internal)?;
    let shown = if record.typed {
        let catalog = endpoint.catalog();
        let tool = catalog
            .tool(&record.tool, ProtocolVersion::V2026_07_28)
            .filter(|t| t.has_output() && !t.inner.completes)
            .ok_or(Fault::Internal)?;
        typed_output(tool, clean, &endpoint.inner.limits)?
    } else {
        clean
    };
    let limits = &endpoint.inner.limits.output;
    render_tool_result(limits, revision, &shown).ok_or(Fault::Internal)
}

/// The `tasks/get` response: the envelope written around the stored result or error text,
/// member by member (no tree of the answer is made).
fn write_detailed(record: &TaskRecord, id: &RequestId, limits: &OutputLimits) -> Option<Vec<u8>> {
    let payload = match (record.status, &record.result, &record.error) {
        (TaskStatus::Completed, Some(result), _) => Some(("result", result)),
        (TaskStatus::Failed, _, Some(error)) => Some(("error", error)),
        (TaskStatus::Completed | TaskStatus::Failed, _, _) => return None,
        _ => None,
    };
    let mut body = Vec::with_capacity(320 + payload.map_or(0, |(_, text)| text.len()));
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    tollgate_json::write_into(&id.to_json(), &mut body, limits).ok()?;
    body.extend_from_slice(br#","result":{"resultType":"complete""#);
    // The members sit in `result`, two levels deep; the whole answer is bounded.
    let written = body.len();
    let mut w = MemberWriter::new(&mut body, written, 2, limits)?;
    record.write_common(&mut w)?;
    if record.status == TaskStatus::InputRequired {
        w.value("inputRequests", &JsonValue::Object(record.requests.clone()))?;
    }
    // The stored text is JSON Tollgate wrote: copied as it is.
    if let Some((key, text)) = payload {
        w.raw(key, text.as_bytes())?;
    }
    body.extend_from_slice(b"}}");
    (body.len() <= limits.max_output_bytes()).then_some(body)
}

/// `tasks/update`: answers for outstanding requests are kept (each shape-checked for its
/// request's method); unknown, answered and malformed ones are ignored. Acknowledged with an
/// empty result.
pub(crate) async fn update(
    endpoint: &Endpoint,
    tasks: &Tasks,
    params: &JsonObject,
    context: &RequestContext,
) -> Reply {
    stage!(Lookup);
    let (id, known) = match own_task(endpoint, tasks, params, context).await {
        Ok(found) => found,
        Err(reply) => return reply,
    };
    let Some(JsonValue::Object(responses)) = params.get("inputResponses") else {
        return fail(
            context.protocol_version,
            context.request_id.as_ref(),
            Fault::InvalidParams,
            None,
        );
    };
    let updated = tasks
        .update_from(id, Some(known), |r| {
            if r.status != TaskStatus::InputRequired {
                return false;
            }
            let mut kept = r.responses.to_builder();
            let mut outstanding = JsonObject::builder();
            let mut changed = false;
            for (key, request) in r.requests.iter() {
                let method = request
                    .get("method")
                    .and_then(JsonValue::as_str)
                    .unwrap_or("");
                match responses.get(key.as_str()) {
                    Some(answer) if input_response_shape(method, answer) => {
                        kept.push(key.clone(), answer.clone());
                        changed = true;
                    }
                    _ => outstanding.push(key.clone(), request.clone()),
                }
            }
            if !changed {
                return false;
            }
            r.responses = kept.build();
            r.requests = outstanding.build();
            true
        })
        .await;
    match updated {
        Ok(_) => {
            tasks.wake(id);
            ack(context)
        }
        Err(e) => store_failure(context, e.kind()),
    }
}

/// `tasks/cancel`: a task not yet terminal becomes `cancelled` and its work (here) is
/// stopped; a terminal one is left as it is. Acknowledged with an empty result either way.
pub(crate) async fn cancel(
    endpoint: &Endpoint,
    tasks: &Tasks,
    params: &JsonObject,
    context: &RequestContext,
) -> Reply {
    stage!(Lookup);
    let (id, known) = match own_task(endpoint, tasks, params, context).await {
        Ok(found) => found,
        Err(reply) => return reply,
    };
    match cancelled(tasks, id, known).await {
        Ok(_) => {
            tasks.cancel_local(id);
            ack(context)
        }
        Err(e) => store_failure(context, e.kind()),
    }
}

/// Moves a task not yet terminal to `cancelled` (its outstanding requests and answers
/// dropped); a terminal one is left as it is. The record as stored after.
pub(crate) async fn cancelled(
    tasks: &Tasks,
    id: &str,
    known: TaskRecord,
) -> Result<Option<TaskRecord>, crate::tasks::store::TaskStoreError> {
    tasks
        .update_from(id, Some(known), |r| {
            if r.status.is_terminal() {
                return false;
            }
            r.status = TaskStatus::Cancelled;
            r.message = None;
            r.requests = JsonObject::new();
            r.responses = JsonObject::new();
            true
        })
        .await
}
