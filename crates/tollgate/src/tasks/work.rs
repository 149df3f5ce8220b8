//! The work-facing side of a task: [`TaskContext`], which a task's work receives to read its
//! id and cancellation, report a status message, and ask the client for input through the
//! store (answered through `tasks/update` on any instance). Knows nothing of transports.

use std::fmt;
use std::sync::Arc;

use tokio::sync::Notify;
use tollgate_json::{JsonObject, JsonValue};

use crate::model::features::CancellationToken;
use crate::model::input::{InputRequest, MAX_INPUT_REQUESTS};
use crate::model::tool::options::InputRequestDeclaration;
use crate::tasks::model::{MAX_STATUS_MESSAGE_BYTES, TaskInputError, TaskStatus};
use crate::tasks::runner::Tasks;

/// What a task's work receives: its id, its cancellation signal, and the means to report a
/// status message and to ask the client for input.
pub struct TaskContext {
    pub(crate) tasks: Arc<Tasks>,
    pub(crate) id: Arc<str>,
    pub(crate) cancel: CancellationToken,
    pub(crate) wake: Arc<Notify>,
    pub(crate) declared: Arc<[InputRequestDeclaration]>,
}

impl fmt::Debug for TaskContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskContext").finish_non_exhaustive()
    }
}

impl TaskContext {
    /// The task id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Cancelled when the client cancels the task (the work is then dropped at its next
    /// await; long synchronous sections should check it).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Sets the status message clients see on `tasks/get` (at most 1,024 bytes; longer text
    /// is refused).
    ///
    /// # Errors
    ///
    /// [`TaskInputError::InvalidRequests`] for an overlong message, [`TaskInputError::Ended`]
    /// once the task is terminal, [`TaskInputError::Store`] when the store fails.
    pub async fn set_status_message(&self, message: &str) -> Result<(), TaskInputError> {
        if message.len() > MAX_STATUS_MESSAGE_BYTES {
            return Err(TaskInputError::InvalidRequests);
        }
        let updated = self
            .tasks
            .update(&self.id, |r| {
                if r.status.is_terminal() {
                    return false;
                }
                r.message = Some(message.into());
                true
            })
            .await
            .map_err(|_| TaskInputError::Store)?;
        match updated {
            Some(r) if !r.status.is_terminal() => Ok(()),
            _ => Err(TaskInputError::Ended),
        }
    }

    /// Moves the task to `input_required` with these requests, waits until the client has
    /// answered every one (through `tasks/update`, possibly over several calls and on any
    /// instance), then returns to `working` and yields the answers by key. Keys must be
    /// unique over the task's lifetime, and each request of a kind its tool declared
    /// ([`ToolBuilder::input_request_declarations`](crate::tool::ToolBuilder::input_request_declarations)).
    ///
    /// # Errors
    ///
    /// [`TaskInputError::InvalidRequests`] (also for an undeclared kind),
    /// [`TaskInputError::Ended`] (cancelled or expired meanwhile), [`TaskInputError::Store`].
    pub async fn request_input<K: Into<Arc<str>>>(
        &self,
        requests: impl IntoIterator<Item = (K, InputRequest)>,
    ) -> Result<JsonObject, TaskInputError> {
        let requests: Vec<(Arc<str>, InputRequest)> =
            requests.into_iter().map(|(k, r)| (k.into(), r)).collect();
        let mut keys: Vec<&str> = requests.iter().map(|(k, _)| &**k).collect();
        keys.sort_unstable();
        let undeclared = requests
            .iter()
            .any(|(_, r)| !self.declared.iter().any(|d| d.kind() == r.kind()));
        if requests.is_empty()
            || undeclared
            || requests.len() > MAX_INPUT_REQUESTS
            || keys.iter().any(|k| k.is_empty() || k.len() > 256)
            || keys.windows(2).any(|w| w[0] == w[1])
        {
            return Err(TaskInputError::InvalidRequests);
        }
        let mut reused = false;
        let stored = self
            .tasks
            .update(&self.id, |r| {
                if r.status.is_terminal() {
                    return false;
                }
                if requests
                    .iter()
                    .any(|(k, _)| r.asked.iter().any(|a| a.as_str() == Some(k)))
                {
                    reused = true;
                    return false;
                }
                let mut outstanding = r.requests.to_builder();
                for (key, request) in &requests {
                    outstanding.push(&**key, request.render());
                    r.asked.push(JsonValue::from(&**key));
                }
                r.requests = outstanding.build();
                r.status = TaskStatus::InputRequired;
                true
            })
            .await
            .map_err(|_| TaskInputError::Store)?;
        if reused {
            return Err(TaskInputError::InvalidRequests);
        }
        match stored {
            Some(r) if !r.status.is_terminal() => {}
            _ => return Err(TaskInputError::Ended),
        }
        loop {
            let notified = self.wake.notified();
            if self.cancel.is_cancelled() {
                return Err(TaskInputError::Ended);
            }
            let mut taken = None;
            let updated = self
                .tasks
                .update(&self.id, |r| {
                    if r.status.is_terminal()
                        || requests.iter().any(|(k, _)| !r.responses.contains_key(k))
                    {
                        return false;
                    }
                    let mut answers = JsonObject::builder();
                    let mut rest = JsonObject::builder();
                    for (key, value) in r.responses.iter() {
                        if requests.iter().any(|(k, _)| **k == *key.as_str()) {
                            answers.push(key.clone(), value.clone());
                        } else {
                            rest.push(key.clone(), value.clone());
                        }
                    }
                    r.responses = rest.build();
                    if r.requests.is_empty() {
                        r.status = TaskStatus::Working;
                    }
                    taken = Some(answers.build());
                    true
                })
                .await
                .map_err(|_| TaskInputError::Store)?;
            match (updated, taken) {
                (Some(_), Some(answers)) => return Ok(answers),
                (Some(r), None) if !r.status.is_terminal() => {}
                _ => return Err(TaskInputError::Ended),
            }
            // Woken by a local `tasks/update`, or re-read after the poll interval (answers may
            // arrive through another instance).
            let _ = tokio::time::timeout(self.tasks.config.poll_interval, notified).await;
        }
    }
}
