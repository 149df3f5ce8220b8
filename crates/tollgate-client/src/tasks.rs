//! Tasks (2026-07-28) as the client drives them: get, update, cancel, wait by polling at the
//! server's `pollInterval`. It owns the polling rule; it must not know transports.

use std::time::Duration;

use tollgate_json::{JsonObject, JsonValue};

use crate::client::Client;
use crate::error::Error;

/// The poll interval used when the server names none (1 s).
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The shortest poll interval honoured (100 ms), whatever the server says.
const MIN_POLL: Duration = Duration::from_millis(100);

/// Whether a task status is final.
fn finished(task: &JsonValue) -> bool {
    let status = task
        .get("status")
        .or_else(|| task.get("task").and_then(|t| t.get("status")))
        .and_then(JsonValue::as_str);
    matches!(status, Some("completed" | "failed" | "cancelled"))
}

/// How long to wait before the next poll: the server's `pollInterval` (ms), at least 100 ms,
/// at most `cap`.
fn poll_interval(task: &JsonValue, cap: Duration) -> Duration {
    task.get("pollInterval")
        .or_else(|| task.get("task").and_then(|t| t.get("pollInterval")))
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_u64())
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(MIN_POLL, cap.max(MIN_POLL))
}

impl Client {
    /// `tasks/get`: the task's current state (and its result once it has one).
    ///
    /// # Errors
    ///
    /// The transport's errors or the server's.
    pub async fn get_task(&self, task_id: &str) -> Result<JsonValue, Error> {
        let params = JsonObject::builder().insert("taskId", task_id).build();
        self.request("tasks/get", Some(params)).await
    }

    /// `tasks/cancel`.
    ///
    /// # Errors
    ///
    /// The transport's errors or the server's.
    pub async fn cancel_task(&self, task_id: &str) -> Result<JsonValue, Error> {
        let params = JsonObject::builder().insert("taskId", task_id).build();
        self.request("tasks/cancel", Some(params)).await
    }

    /// `tasks/update` with the input responses a task asked for.
    ///
    /// # Errors
    ///
    /// The transport's errors or the server's.
    pub async fn update_task(
        &self,
        task_id: &str,
        input_responses: JsonObject,
    ) -> Result<JsonValue, Error> {
        let params = JsonObject::builder()
            .insert("taskId", task_id)
            .insert("inputResponses", input_responses)
            .build();
        self.request("tasks/update", Some(params)).await
    }

    /// Polls `tasks/get` until the task is completed, failed or cancelled, waiting the server's
    /// `pollInterval` between polls (at least 100 ms, at most
    /// [`ClientLimits::max_retry_delay`](crate::ClientLimits::max_retry_delay)).
    ///
    /// # Errors
    ///
    /// The transport's errors or the server's.
    pub async fn wait_task(&self, task_id: &str) -> Result<JsonValue, Error> {
        loop {
            let task = self.get_task(task_id).await?;
            if finished(&task) {
                return Ok(task);
            }
            tokio::time::sleep(poll_interval(&task, self.limits().max_retry_delay())).await;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use tollgate_json::{JsonLimits, from_str};

    fn json(text: &str) -> JsonValue {
        from_str(text, &JsonLimits::default()).unwrap()
    }

    #[test]
    fn the_server_interval_bounded_both_ways() {
        let cap = Duration::from_secs(30);
        assert_eq!(
            poll_interval(&json(r#"{"pollInterval":250}"#), cap),
            Duration::from_millis(250)
        );
        assert_eq!(
            poll_interval(&json(r#"{"pollInterval":100}"#), cap),
            MIN_POLL
        );
        assert_eq!(
            poll_interval(&json(r#"{"pollInterval":99}"#), cap),
            MIN_POLL
        );
        assert_eq!(poll_interval(&json(r#"{"pollInterval":30000}"#), cap), cap);
        assert_eq!(poll_interval(&json(r#"{"pollInterval":30001}"#), cap), cap);
        assert_eq!(poll_interval(&json(r#"{}"#), cap), DEFAULT_POLL);
    }

    #[test]
    fn final_statuses() {
        assert!(finished(&json(r#"{"status":"completed"}"#)));
        assert!(finished(&json(r#"{"task":{"status":"cancelled"}}"#)));
        assert!(!finished(&json(r#"{"status":"working"}"#)));
        assert!(!finished(&json(r#"{"status":"input_required"}"#)));
    }
}
