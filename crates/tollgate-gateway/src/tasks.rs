//! Tasks relayed (2026-07-28 on both sides): an upstream's `CreateTaskResult` made a task of
//! the gateway's own, created through the runtime's [`TaskCreation`] (stored before the caller
//! hears of it, owned by the caller's principal, its id the gateway's: the upstream's id stays
//! inside the task's work and is never handed to a caller). The work follows the upstream task
//! by polling `tasks/get` at the upstream's `pollIntervalMs` (bounded both ways): its status
//! message copied, its input requests rebuilt through the endpoint's constructors and asked of
//! the caller through the gateway task (answers sent back with `tasks/update`), its result read
//! back through the content constructors (the runtime checks it against the tool's output schema
//! and the output limits when `tasks/get` shows it), its failure or cancellation the fixed
//! -32603. The gateway's task cancelled, expired or dropped cancels the upstream's. Knows
//! nothing of catalogs, names or configuration.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use tollgate::json::{JsonObject, JsonValue};
use tollgate::task::{
    MAX_STATUS_MESSAGE_BYTES, MAX_TASK_ID_BYTES, TASKS_EXTENSION, TaskContext, TaskCreation,
    TaskError,
};
use tollgate::tool::{CompleteResult, OperationResult};

use crate::error::ForwardError;
use crate::inputs::input_request_in;
use crate::link::Link;
use crate::naming::Naming;

/// The shortest wait between two polls of an upstream task, whatever the upstream says.
pub(crate) const MIN_UPSTREAM_POLL: Duration = Duration::from_millis(100);

/// The longest wait between two polls of an upstream task, whatever the upstream says (so a
/// status change reaches the caller within it).
pub(crate) const MAX_UPSTREAM_POLL: Duration = Duration::from_secs(5);

/// Whether an upstream's `tools/call` result is a `CreateTaskResult`.
pub(crate) fn is_task(result: &JsonValue) -> bool {
    result.get("resultType").and_then(JsonValue::as_str) == Some("task")
}

/// `capabilities` (a 2026-07-28 request's client capabilities) with the tasks extension
/// declared, so the upstream may answer with a task.
pub(crate) fn with_extension(capabilities: JsonObject) -> JsonObject {
    let extensions = match capabilities.get("extensions") {
        Some(JsonValue::Object(e)) if e.contains_key(TASKS_EXTENSION) => return capabilities,
        Some(JsonValue::Object(e)) => e.to_builder(),
        _ => JsonObject::builder(),
    };
    let extensions = extensions
        .insert(TASKS_EXTENSION, JsonObject::new())
        .build();
    let mut out = JsonObject::builder();
    for (key, value) in capabilities.iter() {
        if key.as_str() != "extensions" {
            out.push(key.clone(), value.clone());
        }
    }
    out.push("extensions", extensions);
    out.build()
}

/// The upstream's `CreateTaskResult` made the gateway's own task through `creation`, its work
/// following the upstream task on `link` (each request bounded by `timeout`; the URIs of its
/// result's content served as `naming` says).
///
/// # Errors
///
/// [`ForwardError::Malformed`] for a result without a usable `taskId` (the upstream task is
/// then left to its TTL: there is no id to cancel), or for a task the caller was not offered
/// (`creation` is `None`: the upstream task is cancelled); [`ForwardError::Upstream`] when the
/// gateway's task cannot be created (the upstream task is cancelled).
pub(crate) async fn adopt(
    link: &Arc<Link>,
    timeout: Duration,
    naming: &Naming,
    creation: Option<&TaskCreation>,
    result: &JsonValue,
) -> Result<OperationResult, ForwardError> {
    let id = result
        .get("taskId")
        .and_then(JsonValue::as_str)
        .filter(|id| !id.is_empty() && id.len() <= MAX_TASK_ID_BYTES)
        .ok_or(ForwardError::Malformed)?;
    let upstream = UpstreamTask {
        link: Arc::clone(link),
        id: Arc::from(id),
        timeout,
        naming: naming.clone(),
        open: true,
    };
    // Dropped unadopted, the upstream task is cancelled.
    let creation = creation.ok_or(ForwardError::Malformed)?;
    // Should the task not be created, the work (and the upstream task with it) is dropped.
    let created = creation
        .spawn(move |task| follow(upstream, task))
        .await
        .map_err(|_| ForwardError::Upstream)?;
    Ok(created.into())
}

/// An upstream task the gateway follows: cancelled upstream when dropped still open (the
/// gateway's task cancelled, expired, or its work failed).
struct UpstreamTask {
    link: Arc<Link>,
    id: Arc<str>,
    timeout: Duration,
    /// How the upstream's URIs are served (its result's content).
    naming: Naming,
    /// Whether the upstream task may still be running.
    open: bool,
}

impl Drop for UpstreamTask {
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let link = Arc::clone(&self.link);
        let id = Arc::clone(&self.id);
        let timeout = self.timeout;
        runtime.spawn(async move {
            let client = link.client();
            let _ = link.bounded(timeout, client.cancel_task(&id)).await;
        });
    }
}

/// What one poll found.
enum Step {
    /// Still running: poll again after this long.
    Again(Duration),
    /// Ended with this result.
    Done(CompleteResult),
}

/// The gateway task's work: the upstream task followed to its end.
async fn follow(
    mut upstream: UpstreamTask,
    task: TaskContext,
) -> Result<CompleteResult, TaskError> {
    let mut relayed = Relayed::default();
    loop {
        let client = upstream.link.client();
        let detail = upstream
            .link
            .bounded(upstream.timeout, client.get_task(&upstream.id))
            .await
            .map_err(|_| TaskError::internal())?;
        match step(&mut upstream, &task, &mut relayed, &detail).await? {
            Step::Done(result) => return Ok(result),
            Step::Again(wait) => tokio::time::sleep(wait).await,
        }
    }
}

/// What the gateway's task has already passed on: the input keys asked of the caller, the last
/// status message.
#[derive(Default)]
struct Relayed {
    asked: HashSet<String>,
    message: Option<String>,
}

/// One upstream `tasks/get` answer acted on.
async fn step(
    upstream: &mut UpstreamTask,
    task: &TaskContext,
    relayed: &mut Relayed,
    detail: &JsonValue,
) -> Result<Step, TaskError> {
    let status = detail.get("status").and_then(JsonValue::as_str);
    match status {
        Some("completed") => {
            upstream.open = false;
            let result = detail
                .get("result")
                .and_then(JsonValue::as_object)
                .and_then(|result| {
                    CompleteResult::from_wire(&upstream.naming.served_result(result))
                })
                .ok_or_else(TaskError::internal)?;
            return Ok(Step::Done(result));
        }
        Some("failed" | "cancelled") => {
            upstream.open = false;
            return Err(TaskError::internal());
        }
        Some("working" | "input_required") => {}
        _ => return Err(TaskError::internal()),
    }
    if let Some(message) = detail.get("statusMessage").and_then(JsonValue::as_str)
        && relayed.message.as_deref() != Some(message)
    {
        relayed.message = Some(message.to_owned());
        // Refused only once the task has ended, which the next poll or the runtime notices.
        let _ = task.set_status_message(cut(message)).await;
    }
    if status == Some("input_required") {
        ask(upstream, task, relayed, detail).await?;
    }
    Ok(Step::Again(poll_interval(detail)))
}

/// The upstream's outstanding input requests not yet asked of the caller, asked through the
/// gateway's task; the caller's answers sent to the upstream task.
async fn ask(
    upstream: &UpstreamTask,
    task: &TaskContext,
    relayed: &mut Relayed,
    detail: &JsonValue,
) -> Result<(), TaskError> {
    let Some(requests) = detail.get("inputRequests").and_then(JsonValue::as_object) else {
        return Ok(());
    };
    let mut fresh = Vec::new();
    for (key, request) in requests.iter() {
        if relayed.asked.contains(key.as_str()) {
            continue;
        }
        let rebuilt = input_request_in(request).ok_or_else(TaskError::internal)?;
        fresh.push((key.as_str().to_owned(), rebuilt));
    }
    if fresh.is_empty() {
        return Ok(());
    }
    relayed
        .asked
        .extend(fresh.iter().map(|(key, _)| key.clone()));
    let answers = task
        .request_input(fresh)
        .await
        .map_err(|_| TaskError::internal())?;
    let client = upstream.link.client();
    upstream
        .link
        .bounded(upstream.timeout, client.update_task(&upstream.id, answers))
        .await
        .map_err(|_| TaskError::internal())?;
    Ok(())
}

/// The upstream's `pollIntervalMs`, bounded by [`MIN_UPSTREAM_POLL`] and [`MAX_UPSTREAM_POLL`]
/// (the least when it names none).
fn poll_interval(detail: &JsonValue) -> Duration {
    detail
        .get("pollIntervalMs")
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_u64())
        .map_or(MIN_UPSTREAM_POLL, Duration::from_millis)
        .clamp(MIN_UPSTREAM_POLL, MAX_UPSTREAM_POLL)
}

/// `text` cut to at most [`MAX_STATUS_MESSAGE_BYTES`] (the runtime's bound) at a character
/// boundary: an upstream's longer status message is cut, not refused.
fn cut(text: &str) -> &str {
    if text.len() <= MAX_STATUS_MESSAGE_BYTES {
        return text;
    }
    let mut end = MAX_STATUS_MESSAGE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use tollgate::json::{JsonLimits, from_str};

    fn json(text: &str) -> JsonValue {
        from_str(text, &JsonLimits::default()).unwrap()
    }

    #[test]
    fn the_upstream_interval_is_bounded_both_ways() {
        let at = |ms: u64| poll_interval(&json(&format!(r#"{{"pollIntervalMs":{ms}}}"#)));
        assert_eq!(at(100), MIN_UPSTREAM_POLL);
        assert_eq!(at(99), MIN_UPSTREAM_POLL);
        assert_eq!(at(250), Duration::from_millis(250));
        assert_eq!(at(5_000), MAX_UPSTREAM_POLL);
        assert_eq!(at(5_001), MAX_UPSTREAM_POLL);
        assert_eq!(poll_interval(&json("{}")), MIN_UPSTREAM_POLL);
        assert_eq!(
            poll_interval(&json(r#"{"pollIntervalMs":"9"}"#)),
            MIN_UPSTREAM_POLL
        );
    }

    #[test]
    fn status_messages_are_cut_at_a_character_boundary() {
        let at = "a".repeat(MAX_STATUS_MESSAGE_BYTES);
        assert_eq!(cut(&at), at);
        let past = format!("{}é", "a".repeat(MAX_STATUS_MESSAGE_BYTES - 1));
        assert_eq!(cut(&past).len(), MAX_STATUS_MESSAGE_BYTES - 1);
    }

    #[test]
    fn the_extension_is_declared_beside_the_caller_s_capabilities() {
        let plain = with_extension(json(r#"{"elicitation":{}}"#).as_object().unwrap().clone());
        assert!(plain.get("elicitation").is_some());
        assert!(
            plain
                .get("extensions")
                .and_then(|e| e.get(TASKS_EXTENSION))
                .is_some()
        );
        let other = json(r#"{"extensions":{"x/y":{"a":1}}}"#);
        let both = with_extension(other.as_object().unwrap().clone());
        let extensions = both.get("extensions").unwrap();
        assert!(extensions.get("x/y").is_some());
        assert!(extensions.get(TASKS_EXTENSION).is_some());
        assert!(is_task(&json(r#"{"resultType":"task"}"#)));
        assert!(!is_task(&json(r#"{"resultType":"complete"}"#)));
    }
}
