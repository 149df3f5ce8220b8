//! 2025-11-25's experimental tasks, as the endpoint's task records show there: the `Task` that
//! `tasks/get` and `tasks/cancel` answer, and `tasks/result`, which waits for the task's end and
//! answers what the call itself would have (relaying the work's input requests to a client in
//! a session while it waits). The records, their store and their rules are `tasks/`'s; the
//! shared lookups are `methods/tasks.rs`'s. Knows no transport beyond the request's channel to
//! its client.

use std::time::Duration;

use tollgate_json::{JsonObject, JsonValue, from_str};

use std::sync::Arc;

use crate::client_request::{
    Asks, ClientRequestError, ClientRequests, Outbound, transport_features,
};
use crate::facts::context::{ClientCapability, RequestContext, missing_capabilities};
use crate::methods::tasks::{
    cancelled, internal, no_task, own_task, store_failure, unavailable, visible_result,
};
use crate::model::features::{CancellationToken, InvocationFeatures};
use crate::model::input::{InputRequest, input_response_shape};
use crate::model::origin::Transport;
use crate::registry::Endpoint;
use crate::stream::session::SessionStreams;
use crate::tasks::model::TaskStatus;
use crate::tasks::record::{TaskRecord, stored_text_limits};
use crate::tasks::runner::{Lookup, Tasks, owner_of};
use crate::wire::fault::Fault;
use crate::wire::reply::{Reply, fail, tree_reply};
use crate::wire::stage::stage;

/// The `_meta` key that ties a message to its task.
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The status 2025-11-25 shows: a tool result with `isError` ended its task as `failed`.
fn shown_status(record: &TaskRecord) -> TaskStatus {
    let failed_result = record.status == TaskStatus::Completed
        && record
            .stored_result()
            .is_some_and(|r| r.tool_output().is_error());
    if failed_result {
        TaskStatus::Failed
    } else {
        record.status
    }
}

/// The `Task` as 2025-11-25 writes it (`tasks/get`, `tasks/cancel`).
fn task_reply(endpoint: &Endpoint, record: &TaskRecord, context: &RequestContext) -> Reply {
    let mut task = JsonObject::builder();
    record.push_requested(&mut task, shown_status(record));
    let (revision, id) = (context.protocol_version, context.request_id.as_ref());
    tree_reply(&endpoint.inner.limits.output, revision, id, task)
}

/// `tasks/get`: the caller's own task. Inside a session whose standalone `GET` stream is being
/// read, a task waiting for input has its requests asked there (once at a time per task), where
/// requestors that poll rather than wait on `tasks/result` expect them.
pub(crate) async fn get(
    endpoint: &Endpoint,
    tasks: &Tasks,
    params: &JsonObject,
    context: &RequestContext,
    session: Option<&Arc<SessionStreams>>,
) -> Reply {
    stage!(Lookup);
    match own_task(endpoint, tasks, params, context).await {
        Ok((_, record)) => {
            if let Some(streams) = session {
                ask_on_standalone(endpoint, &record, context, streams);
            }
            task_reply(endpoint, &record, context)
        }
        Err(reply) => reply,
    }
}

/// Starts asking a waiting task's requests on the session's standalone stream, unless no
/// `GET` reads it now (stdio has none), they are already being asked here, or the client
/// cannot answer them all. A relay that fails (an error answer, none in time) holds its place
/// a while, so polls do not ask again at once.
fn ask_on_standalone(
    endpoint: &Endpoint,
    record: &TaskRecord,
    context: &RequestContext,
    streams: &Arc<SessionStreams>,
) {
    let Some(tasks) = endpoint.inner.tasks.clone() else {
        return;
    };
    let capable = record
        .missing_capabilities(&context.client_capabilities)
        .is_some_and(|missing| missing.is_empty());
    if record.status != TaskStatus::InputRequired || record.requests.is_empty() || !capable {
        return;
    }
    let Some(stream) = streams.attached_standalone() else {
        return;
    };
    if relaying(&tasks, &record.id) {
        return;
    }
    let channel = ClientRequests::new(
        Outbound::Stream(stream),
        Arc::clone(streams),
        context.client_capabilities.clone(),
        Asks::Any,
    );
    let id = Arc::clone(&record.id);
    tokio::spawn(async move {
        if let Some(_asking) = Relaying::take(&tasks, &id)
            && let Err(AskFailure::Failed) = ask_all(&tasks, &id, &channel).await
        {
            tokio::time::sleep(RETRY_AFTER_FAILED_RELAY).await;
        }
    });
}

/// How long a failed standalone relay keeps its place before a poll may ask again.
const RETRY_AFTER_FAILED_RELAY: Duration = Duration::from_secs(5);

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether a task's requests are being asked from here now.
fn relaying(tasks: &Tasks, id: &str) -> bool {
    lock(&tasks.relaying).contains(id)
}

/// The one relay of a task's requests from here: taken, or `None` while another asks; given
/// back when dropped (asked, failed, or its request gone).
struct Relaying<'t> {
    tasks: &'t Tasks,
    id: Arc<str>,
}

impl<'t> Relaying<'t> {
    fn take(tasks: &'t Tasks, id: &Arc<str>) -> Option<Self> {
        lock(&tasks.relaying).insert(Arc::clone(id)).then(|| Self {
            tasks,
            id: Arc::clone(id),
        })
    }
}

impl Drop for Relaying<'_> {
    fn drop(&mut self) {
        lock(&self.tasks.relaying).remove(&self.id);
    }
}

/// `tasks/cancel`: the caller's task, cancelled (its work here stopped); one that has ended is
/// refused (-32602), as the revision asks.
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
    let ended = || {
        let id = context.request_id.as_ref();
        fail(context.protocol_version, id, Fault::TaskEnded, None)
    };
    if known.status.is_terminal() {
        return ended();
    }
    match cancelled(tasks, id, known).await {
        Ok(Some(r)) if r.status == TaskStatus::Cancelled => {
            tasks.cancel_local(id);
            task_reply(endpoint, &r, context)
        }
        // It ended meanwhile.
        Ok(Some(_)) => ended(),
        Ok(None) => no_task(context),
        Err(e) => store_failure(context, e.kind()),
    }
}

/// `tasks/result`: the call's own answer once the task has ended (its result with the task
/// named in `_meta`, or its error), waiting until then. While the work waits for input, its
/// requests are sent to the client on this request's channel (a 2025 session) and the answers
/// kept as `tasks/update` keeps them on 2026-07-28. The wait ends with the task, its expiry
/// (then it is not found), the server's shutdown (503, to retry) or the client going away.
pub(crate) async fn result(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    tasks: &Tasks,
    params: &JsonObject,
    context: &RequestContext,
) -> Reply {
    stage!(Lookup);
    let (id, mut record) = match own_task(endpoint, tasks, params, context).await {
        Ok(found) => found,
        Err(reply) => return reply,
    };
    let owner = owner_of(&endpoint.inner.path, context);
    let listeners = &endpoint.inner.listeners;
    let mut events = listeners.events.subscribe();
    let mut channel: Option<InvocationFeatures> = None;
    loop {
        match record.status {
            TaskStatus::Completed => return completed(endpoint, &record, context),
            TaskStatus::Failed => return failed(endpoint, &record, context),
            TaskStatus::Cancelled => {
                let id = context.request_id.as_ref();
                return fail(context.protocol_version, id, Fault::TaskCancelled, None);
            }
            // Asked here unless a relay (the standalone stream's) is asking already.
            TaskStatus::InputRequired if !record.requests.is_empty() && !relaying(tasks, id) => {
                let Some(_asking) = Relaying::take(tasks, &record.id) else {
                    continue;
                };
                let features = channel.get_or_insert_with(|| {
                    let features = InvocationFeatures::new(CancellationToken::new());
                    transport_features(features, transport, context, false, || Asks::Any)
                });
                if let Err(reply) = relay(tasks, &record, features.find(), context).await {
                    return reply;
                }
            }
            TaskStatus::Working | TaskStatus::InputRequired => {
                // A change made here is announced on the endpoint's events; one made on
                // another instance is seen at the next poll.
                let changed = async {
                    loop {
                        match events.recv().await {
                            Ok(crate::model::subscription::Event::TaskChanged(t)) if *t == *id => {
                                return;
                            }
                            Ok(_) => {}
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return,
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                                std::future::pending::<()>().await;
                            }
                        }
                    }
                };
                let poll = tasks.config.poll_interval.max(Duration::from_millis(10));
                tokio::select! {
                    () = changed => {}
                    () = tokio::time::sleep(poll) => {}
                    () = listeners.closing.cancelled() => return unavailable(context),
                }
            }
        }
        record = match tasks.lookup_for_client(id, &owner).await {
            Lookup::Found(record) => record,
            Lookup::Absent => return no_task(context),
            Lookup::StoreFailed => return unavailable(context),
            Lookup::Unreadable => return internal(context),
        };
    }
}

/// A completed task: its result as the call would have answered on this revision, with the
/// task named in `_meta`.
fn completed(endpoint: &Endpoint, record: &TaskRecord, context: &RequestContext) -> Reply {
    let (revision, id) = (context.protocol_version, context.request_id.as_ref());
    let text = match visible_result(endpoint, record, context) {
        Ok(text) => text,
        Err(fault) => return fail(revision, id, fault, None),
    };
    let Some(result) = from_str(&text, &stored_text_limits())
        .ok()
        .and_then(|v| v.as_object().cloned())
    else {
        return internal(context);
    };
    let related = JsonObject::builder().insert("taskId", &*record.id).build();
    let mut meta = match result.get("_meta") {
        Some(JsonValue::Object(m)) => m.to_builder(),
        _ => JsonObject::builder(),
    };
    meta.push(RELATED_TASK, related);
    let mut out = result.to_builder();
    out.push("_meta", meta.build());
    tree_reply(&endpoint.inner.limits.output, revision, id, out)
}

/// A failed task: the JSON-RPC error the call would have answered (the work's error, or the
/// fixed internal one), as stored.
fn failed(endpoint: &Endpoint, record: &TaskRecord, context: &RequestContext) -> Reply {
    let Some(id) = context.request_id.as_ref() else {
        return internal(context);
    };
    // Written by Tollgate when the task ended (`TaskError::render`): a code and a message.
    let error = record
        .error
        .as_deref()
        .and_then(|text| from_str(text, &stored_text_limits()).ok())
        .filter(|e| {
            e.get("code").and_then(JsonValue::as_number).is_some()
                && e.get("message").and_then(JsonValue::as_str).is_some()
        });
    let Some(error) = error else {
        return internal(context);
    };
    let envelope = JsonObject::builder()
        .insert("jsonrpc", "2.0")
        .insert("id", id.to_json())
        .insert("error", error)
        .build();
    match tollgate_json::to_vec(&envelope.into(), &endpoint.inner.limits.output) {
        Ok(body) => Reply::ok(body),
        Err(_) => internal(context),
    }
}

/// Why the work's requests could not all be asked and answered.
enum AskFailure {
    /// The client did not declare what a request needs.
    Missing(ClientCapability),
    /// A stored request does not read back, or the answer was an error, malformed or late.
    Failed,
    /// The store did not answer.
    Store,
}

/// Sends the work's outstanding input requests to the client, one by one, each naming the
/// task, and keeps each answer for the work (shape-checked, as `tasks/update` keeps them).
/// The task is read first, so what another relay had answered is not asked again.
async fn ask_all(tasks: &Tasks, id: &Arc<str>, channel: &ClientRequests) -> Result<(), AskFailure> {
    let record = match tasks.lookup(id, None).await {
        Lookup::Found(record) if record.status == TaskStatus::InputRequired => record,
        Lookup::Found(_) | Lookup::Absent => return Ok(()),
        Lookup::StoreFailed | Lookup::Unreadable => return Err(AskFailure::Store),
    };
    let related = JsonObject::builder().insert("taskId", &*record.id).build();
    for (key, stored) in record.requests.iter() {
        let request = InputRequest::from_stored(stored, (RELATED_TASK, &related))
            .ok_or(AskFailure::Failed)?;
        let (method, capability) = (request.method(), request.capability().clone());
        let answer = match channel.send(request).await {
            Ok(answer) => answer,
            Err(ClientRequestError::MissingCapability) => {
                return Err(AskFailure::Missing(capability));
            }
            Err(_) => return Err(AskFailure::Failed),
        };
        if !input_response_shape(method, &answer) {
            return Err(AskFailure::Failed);
        }
        let kept = tasks
            .update(&record.id, |r| {
                if r.status != TaskStatus::InputRequired || !r.requests.contains_key(key.as_str()) {
                    return false;
                }
                let mut outstanding = JsonObject::builder();
                for (k, v) in r.requests.iter().filter(|(k, _)| *k != key) {
                    outstanding.push(k.clone(), v.clone());
                }
                let mut responses = r.responses.to_builder();
                responses.push(key.clone(), answer.clone());
                r.requests = outstanding.build();
                r.responses = responses.build();
                true
            })
            .await;
        match kept {
            Ok(_) => tasks.wake(&record.id),
            Err(_) => return Err(AskFailure::Store),
        }
    }
    Ok(())
}

/// [`ask_all`] on the `tasks/result` request's own channel, its failures as that request's
/// answer: a client that cannot be asked, or that refuses, ends `tasks/result` with the
/// refusal (the task stays waiting, and another `tasks/result` asks again).
async fn relay(
    tasks: &Tasks,
    record: &TaskRecord,
    channel: Option<&ClientRequests>,
    context: &RequestContext,
) -> Result<(), Reply> {
    let (revision, request_id) = (context.protocol_version, context.request_id.as_ref());
    match record.missing_capabilities(&context.client_capabilities) {
        None => return Err(internal(context)),
        Some(missing) if !missing.is_empty() => {
            return Err(missing_capabilities(revision, request_id, missing.iter()));
        }
        Some(_) => {}
    }
    // Without a session there is no channel to the client: the work cannot be answered here.
    let Some(channel) = channel else {
        return Err(internal(context));
    };
    match ask_all(tasks, &record.id, channel).await {
        Ok(()) => Ok(()),
        Err(AskFailure::Missing(capability)) => Err(missing_capabilities(
            revision,
            request_id,
            [capability].iter(),
        )),
        Err(AskFailure::Failed) => Err(internal(context)),
        Err(AskFailure::Store) => Err(unavailable(context)),
    }
}
