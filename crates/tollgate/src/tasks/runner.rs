//! The in-process runner: an endpoint's [`Tasks`] (store, lifetimes, running work, per-principal
//! bounds), the handler-facing [`TaskCreation`], leases, and the transitions every store shares
//! (the work-facing `TaskContext` is `work.rs`).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tollgate_json::{JsonObject, JsonValue, OutputLimits, from_str, to_string};

use crate::facts::context::RequestContext;
use crate::model::features::CancellationToken;
use crate::model::guard::{BoxFuture, guarded};
use crate::model::result::CompleteResult;
use crate::model::result::TaskCreated;
use crate::model::tool::check::{ArgumentCheck, Checked};
use crate::model::tool::options::InputRequestDeclaration;
use crate::tasks::decoded::Decoded;
use crate::tasks::model::{TaskConfig, TaskError, TaskStatus, now_ms};
use crate::tasks::record::{TaskRecord, record_limits, stored_text_limits};
use crate::tasks::store::TaskStoreErrorKind;
use crate::tasks::store::{TaskStore, TaskStoreError};
use crate::tasks::work::TaskContext;
use crate::version::ProtocolVersion;

/// What an endpoint with tasks keeps: the store, the lifetimes, and this process's running
/// work (for prompt cancellation and input wake-ups).
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) config: TaskConfig,
    /// Where visible changes are announced to `subscriptions/listen` streams (this process).
    events: Option<crate::model::subscription::Publisher>,
    running: Mutex<HashMap<Arc<str>, Running>>,
    /// Tasks running here per admitted principal's owner binding.
    per_owner: Mutex<HashMap<Arc<str>, usize>>,
    last_purge: AtomicU64,
    /// Rows lately written or read here, with their records: one read back unchanged is not
    /// decoded again.
    decoded: Decoded,
    /// Tasks whose input requests are being asked of a 2025-11-25 client on its session's
    /// standalone stream from here (one relay per task at a time).
    pub(crate) relaying: Mutex<std::collections::HashSet<Arc<str>>>,
}

pub(crate) struct Running {
    cancel: CancellationToken,
    wake: Arc<Notify>,
    /// The owner binding, when it names a principal (counted in `per_owner`).
    counted: Option<Arc<str>>,
}

impl fmt::Debug for Tasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tasks")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Load and decode, then check owner and expiry: anything else reads as absent.
#[allow(
    clippy::large_enum_variant,
    reason = "a found record is the usual answer: boxing it would allocate on every lookup"
)]
pub(crate) enum Lookup {
    Found(TaskRecord),
    Absent,
    /// The store did not answer (possibly transient).
    StoreFailed,
    /// The row does not decode (retrying does not help).
    Unreadable,
}

/// The longest one store call may take before it counts as a failure, so a database that
/// stops answering (stopped, partitioned) never holds a request.
pub(crate) const STORE_CALL_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

/// A store call within [`STORE_CALL_BOUND`], in a telemetry stage span named `operation`.
async fn bounded<T>(
    operation: &'static str,
    call: crate::tasks::store::StoreFuture<'_, T>,
) -> Result<T, TaskStoreError> {
    crate::facts::telemetry::stage_fallible(operation, async {
        match tokio::time::timeout(STORE_CALL_BOUND, call).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => {
                store_failed(operation, "error");
                Err(error)
            }
            Err(_) => {
                store_failed(operation, "timeout");
                Err(TaskStoreError::new(TaskStoreErrorKind::Backend))
            }
        }
    })
    .await
}

/// The `tollgate::store` event of a task store call that failed or timed out (`warn`).
#[cold]
fn store_failed(operation: &'static str, outcome: &'static str) {
    tracing::warn!(
        target: crate::wire::log::STORE,
        store = "task",
        operation,
        outcome,
        "store call failed"
    );
}

/// How long a worker's lease lasts: three poll intervals, at least ten seconds.
pub(crate) fn lease_span(config: &TaskConfig) -> u64 {
    u64::try_from(config.poll_interval.as_millis())
        .unwrap_or(u64::MAX / 4)
        .saturating_mul(3)
        .max(10_000)
}

impl Tasks {
    /// A task read by a client: one whose worker's lease ran out before it finished (the
    /// process ended, or lost the store) is failed with the fixed internal error first, so
    /// pollers never wait on work that no longer runs.
    pub(crate) async fn lookup_for_client(&self, id: &str, owner: &str) -> Lookup {
        match self.lookup(id, Some(owner)).await {
            Lookup::Found(r) if !r.status.is_terminal() && r.lease_ms < now_ms() => {
                let failed = self
                    .update_from(id, Some(r), |r| {
                        if r.status.is_terminal() || r.lease_ms >= now_ms() {
                            return false;
                        }
                        r.status = TaskStatus::Failed;
                        r.requests = JsonObject::new();
                        r.responses = JsonObject::new();
                        r.error = TaskError::internal().render();
                        true
                    })
                    .await;
                match failed {
                    Ok(Some(r)) => Lookup::Found(r),
                    Ok(None) => Lookup::Absent,
                    Err(e) if e.kind() == TaskStoreErrorKind::Unusable => Lookup::Unreadable,
                    Err(_) => Lookup::StoreFailed,
                }
            }
            other => other,
        }
    }

    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        config: TaskConfig,
        events: Option<crate::model::subscription::Publisher>,
    ) -> Self {
        Self {
            store,
            config,
            events,
            running: Mutex::new(HashMap::new()),
            relaying: Mutex::default(),
            per_owner: Mutex::new(HashMap::new()),
            last_purge: AtomicU64::new(0),
            decoded: Decoded::default(),
        }
    }

    pub(crate) fn running(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Running>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn per_owner(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, usize>> {
        self.per_owner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a running place for `owner` when it names a principal; false at its bound.
    pub(crate) fn reserve(&self, owner: &Arc<str>) -> bool {
        if !names_principal(owner) {
            return true;
        }
        let mut counts = self.per_owner();
        let count = counts.entry(Arc::clone(owner)).or_insert(0);
        if *count >= self.config.max_running_per_principal {
            return false;
        }
        *count += 1;
        true
    }

    /// Gives back a place [`reserve`](Self::reserve) took.
    pub(crate) fn release(&self, owner: &Arc<str>) {
        if !names_principal(owner) {
            return;
        }
        let mut counts = self.per_owner();
        if let Some(n) = counts.get_mut(owner) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.remove(owner);
            }
        }
    }

    /// The task `id` as stored, absent when expired or (given `owner`) another's. A terminal
    /// record this instance wrote or read is answered without a store call: no transition
    /// changes it again, so it is the store's row until it expires (`tasks/decoded.rs`).
    pub(crate) async fn lookup(&self, id: &str, owner: Option<&str>) -> Lookup {
        let record = match self.decoded.terminal(id) {
            Some(record) => record,
            None => {
                let row = match bounded("task_store.load", self.store.load(id)).await {
                    Ok(Some(row)) => row,
                    Ok(None) => return Lookup::Absent,
                    Err(_) => return Lookup::StoreFailed,
                };
                let Some(record) = self.decoded.decode(&row) else {
                    return Lookup::Unreadable;
                };
                record
            }
        };
        if record.expires_at_ms() <= now_ms() || owner.is_some_and(|o| o != &*record.owner) {
            return Lookup::Absent;
        }
        Lookup::Found(record)
    }

    /// Applies `change` to the stored record until a compare-and-swap succeeds. `change`
    /// returns `false` to leave the record as it is. Returns the record as stored after.
    pub(crate) async fn update(
        &self,
        id: &str,
        change: impl FnMut(&mut TaskRecord) -> bool,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        self.update_from(id, None, change).await
    }

    /// [`Tasks::update`], starting from `known`, the record `id` as it was just read or
    /// written here: while it is still the stored version, the first compare-and-swap needs no
    /// read; when it is not, that swap fails and the loop reads the record as usual.
    pub(crate) async fn update_from(
        &self,
        id: &str,
        mut known: Option<TaskRecord>,
        mut change: impl FnMut(&mut TaskRecord) -> bool,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        for _ in 0..64 {
            let found = match known.take() {
                // Expired is absent, as `lookup` has it.
                Some(r) if r.expires_at_ms() <= now_ms() => Lookup::Absent,
                Some(r) => Lookup::Found(r),
                None => self.lookup(id, None).await,
            };
            let record = match found {
                Lookup::Found(r) => r,
                Lookup::Absent => return Ok(None),
                Lookup::StoreFailed => {
                    return Err(TaskStoreError::new(TaskStoreErrorKind::Backend));
                }
                Lookup::Unreadable => {
                    return Err(TaskStoreError::new(TaskStoreErrorKind::Unusable));
                }
            };
            let mut next = record.clone();
            if !change(&mut next) {
                return Ok(Some(record));
            }
            next.version = record.version.wrapping_add(1);
            let visible = {
                let mut seen = next.clone();
                seen.lease_ms = record.lease_ms;
                seen.version = record.version;
                seen != record
            };
            if visible {
                next.updated_ms = now_ms().max(record.updated_ms);
            }
            let (row, whole) = next
                .encode()
                .ok_or(TaskStoreError::new(TaskStoreErrorKind::Unusable))?;
            let keep = Decoded::to_keep(&row, whole);
            if bounded(
                "task_store.replace",
                self.store.replace(row, record.version),
            )
            .await?
            {
                self.decoded.wrote(keep, &next);
                if next.status != record.status {
                    crate::facts::telemetry::task_status(next.status.as_str());
                    let status = next.status.as_str();
                    tracing::debug!(target: crate::wire::log::TASK, status, "task status changed");
                }
                if visible && let Some(events) = &self.events {
                    events.publish(crate::model::subscription::Event::TaskChanged(
                        next.id.clone(),
                    ));
                }
                return Ok(Some(next));
            }
        }
        Err(TaskStoreError::new(TaskStoreErrorKind::Backend))
    }

    /// Whether `owner` may see the task (for a `subscriptions/listen` filter).
    pub(crate) async fn visible(&self, id: &str, owner: &str) -> bool {
        matches!(self.lookup_for_client(id, owner).await, Lookup::Found(_))
    }

    /// The `notifications/tasks` parameters for a listener: the detailed task (its result or
    /// error parsed back from the stored text; a result through the endpoint's sanitizer with
    /// the listener's context, as `tasks/get` does), and whether it is terminal. `None` when
    /// the listener may not see it, cannot answer its outstanding requests, the sanitizer
    /// refuses, or it does not fit.
    pub(crate) async fn notification(
        &self,
        id: &str,
        owner: &str,
        listener: &crate::facts::context::RequestContext,
        visible: &(dyn Fn(&TaskRecord) -> Option<Arc<str>> + Sync),
        limits: &OutputLimits,
    ) -> Option<(JsonObject, bool)> {
        let capabilities = &listener.client_capabilities;
        let Lookup::Found(record) = self.lookup_for_client(id, owner).await else {
            return None;
        };
        let mut b = JsonObject::builder();
        record.push_common(&mut b);
        match record.status {
            TaskStatus::InputRequired => {
                // Sent only to a listener that can answer every request.
                if !record.missing_capabilities(capabilities)?.is_empty() {
                    return None;
                }
                b.push("inputRequests", record.requests.clone());
            }
            TaskStatus::Completed => {
                // A result the sanitizer refuses, or that fails a typed tool's output schema,
                // is left out: the listener still learns the task ended (and `tasks/get`
                // answers it with the fixed internal error).
                record.result.as_deref()?;
                let shown =
                    visible(&record).and_then(|text| from_str(&text, &stored_text_limits()).ok());
                if let Some(result) = shown {
                    b.push("result", result);
                }
            }
            TaskStatus::Failed => {
                let text = record.error.as_deref()?;
                b.push("error", from_str(text, &record_limits()).ok()?);
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        let params = b.build();
        // Written once here to know it fits the output limits before it is queued.
        to_string(&JsonValue::Object(params.clone()), limits).ok()?;
        Some((params, record.status.is_terminal()))
    }

    /// Purges expired rows at most once a minute.
    pub(crate) async fn maybe_purge(&self) {
        let now = now_ms();
        let last = self.last_purge.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= 60_000
            && self
                .last_purge
                .compare_exchange(last, now, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            let _ = bounded("task_store.purge", self.store.purge_expired(now)).await;
        }
    }

    pub(crate) fn wake(&self, id: &str) {
        if let Some(running) = self.running().get(id) {
            running.wake.notify_waiters();
        }
    }

    pub(crate) fn cancel_local(&self, id: &str) {
        if let Some(running) = self.running().get(id) {
            running.cancel.cancel();
            running.wake.notify_waiters();
        }
    }
}

/// A running place taken for a task being created: given back on drop unless kept.
pub(crate) struct Reservation<'a> {
    tasks: &'a Tasks,
    owner: &'a Arc<str>,
    kept: bool,
}

impl<'a> Reservation<'a> {
    pub(crate) fn take(tasks: &'a Tasks, owner: &'a Arc<str>) -> Option<Self> {
        tasks.reserve(owner).then_some(Self {
            tasks,
            owner,
            kept: false,
        })
    }

    pub(crate) fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.tasks.release(self.owner);
        }
    }
}

/// Whether an owner binding names an admitted principal (not anonymous).
pub(crate) fn names_principal(owner: &str) -> bool {
    owner.split('\n').nth(1) == Some("p")
}

/// The owner binding of a request: its endpoint and admitted principal.
pub(crate) fn owner_of(endpoint_path: &str, context: &RequestContext) -> Arc<str> {
    let principal = context.admission.principal_name().unwrap_or("");
    let anonymous = if context.admission.principal_name().is_some() {
        "p"
    } else {
        "a"
    };
    // Pushed piece by piece: `format!` costs several times as much, once per task request.
    let mut owner = String::with_capacity(endpoint_path.len() + principal.len() + 4);
    for piece in [endpoint_path, "\n", anonymous, "\n", principal] {
        owner.push_str(piece);
    }
    owner.into()
}

static SERIAL: AtomicU64 = AtomicU64::new(1);

/// What a task keeps of the tool whose call created it.
pub(crate) struct CreatingTool {
    pub(crate) name: Arc<str>,
    /// The kinds of input the tool declared.
    pub(crate) declared: Arc<[InputRequestDeclaration]>,
    /// Whether its results are checked against an output schema.
    pub(crate) typed: bool,
}

/// The invocation feature that lets a tool handler create a task. Present only on 2026-07-28,
/// on an endpoint with a task store, for a tool with [`TaskSupport::Optional`](crate::tool::TaskSupport::Optional) or
/// [`TaskSupport::Required`](crate::tool::TaskSupport::Required), when the client declared the extension on this call.
///
/// # Examples
///
/// ```no_run
/// use tollgate::{
///     tool::{CompleteResult, OperationResult}, InvocationFeatures, RequestContext, ToolArguments,
///     task::TaskCreation,
/// };
/// use tollgate::json::JsonObject;
///
/// async fn report(
///     _: &RequestContext,
///     _: ToolArguments<JsonObject>,
///     features: &InvocationFeatures,
/// ) -> Result<OperationResult, tollgate::task::TaskError> {
///     let Some(tasks) = features.find::<TaskCreation>() else {
///         return Ok(CompleteResult::from_tool_text("done inline").into());
///     };
///     let created = tasks
///         .spawn(|_task| async move { Ok(CompleteResult::from_tool_text("done later")) })
///         .await?;
///     Ok(created.into())
/// }
/// ```
#[derive(Clone)]
pub struct TaskCreation {
    tasks: Arc<Tasks>,
    output: OutputLimits,
    owner: Arc<str>,
    tool: Arc<str>,
    /// Kept with the task for the sanitizer (`None` without one).
    arguments: Option<JsonObject>,
    /// The call's arguments against its tool's input schema: no task is created for
    /// arguments that fail it.
    check: Arc<ArgumentCheck>,
    /// The kinds of input the tool declared (its task's work may ask for no other).
    declared: Arc<[InputRequestDeclaration]>,
    /// Whether the tool is typed (its result is checked against the output schema when read).
    typed: bool,
    serial: u64,
}

impl fmt::Debug for TaskCreation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskCreation")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl TaskCreation {
    pub(crate) fn new(
        tasks: Arc<Tasks>,
        output: OutputLimits,
        owner: Arc<str>,
        tool: CreatingTool,
        arguments: Option<JsonObject>,
        check: Arc<ArgumentCheck>,
    ) -> Self {
        Self {
            tasks,
            output,
            owner,
            tool: tool.name,
            arguments,
            check,
            declared: tool.declared,
            typed: tool.typed,
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
        }
    }

    pub(crate) fn serial(&self) -> u64 {
        self.serial
    }

    /// Creates the task (stored before this returns, so an immediate `tasks/get` finds it)
    /// and starts `work` on the runtime. The work's `Ok` result completes the task (an
    /// `isError` result is still `completed`); its `Err`, or a panic (the fixed -32603),
    /// fails it. Return the [`TaskCreated`] from the handler.
    ///
    /// # Errors
    ///
    /// [`TaskError::internal`] when the store refuses the task (full, or failing: the call then
    /// answers HTTP 503 `Server busy` whatever the handler returns), or when the
    /// admitted principal already has its most tasks running here
    /// ([`TaskConfig::max_running_per_principal`]).
    pub async fn spawn<W, F>(&self, work: W) -> Result<TaskCreated, TaskError>
    where
        W: FnOnce(TaskContext) -> F + Send + 'static,
        F: Future<Output = Result<CompleteResult, TaskError>> + Send + 'static,
    {
        // Only for arguments that pass the tool's input schema (an interceptor may create a
        // task before they were validated): the call then answers as for those arguments.
        match self.check.ensure() {
            Checked::Valid => {}
            other => {
                self.check.refuse(other);
                return Err(TaskError::internal());
            }
        }
        let tasks = &self.tasks;
        tasks.maybe_purge().await;
        // 128 random bits, as 32 lowercase hex digits (header-safe for `Mcp-Name`).
        let mut id_bytes = [0u8; 16];
        getrandom::fill(&mut id_bytes).map_err(|_| TaskError::internal())?;
        let id: Arc<str> = crate::wire::syntax::hex(&id_bytes).into();
        let now = now_ms();
        let record = TaskRecord {
            id: id.clone(),
            version: 1,
            owner: self.owner.clone(),
            tool: self.tool.clone(),
            typed: self.typed,
            arguments: self.arguments.clone().unwrap_or_default(),
            status: TaskStatus::Working,
            message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: u64::try_from(tasks.config.ttl.as_millis()).unwrap_or(u64::MAX),
            poll_ms: u64::try_from(tasks.config.poll_interval.as_millis()).unwrap_or(1000),
            lease_ms: now.saturating_add(lease_span(&tasks.config)),
            requests: JsonObject::new(),
            asked: Vec::new(),
            responses: JsonObject::new(),
            result: None,
            error: None,
        };
        let (row, whole) = record.encode().ok_or_else(TaskError::internal)?;
        let keep = Decoded::to_keep(&row, whole);
        // Given back if the store refuses, or if this future is dropped while it waits.
        let reservation = Reservation::take(tasks, &self.owner).ok_or_else(TaskError::internal)?;
        match bounded("task_store.insert", tasks.store.insert(row)).await {
            // A retry that succeeds answers as any created task would.
            Ok(()) => {
                tasks.decoded.wrote(keep, &record);
                crate::facts::telemetry::task_status(TaskStatus::Working.as_str());
                self.check.clear_busy();
            }
            Err(e) => {
                // A store that cannot be reached (not one that is full): the call answers 503
                // `Server busy`, which a client may retry, whatever the handler makes of the
                // error.
                if e.kind() == TaskStoreErrorKind::Backend {
                    self.check.refuse(Checked::Busy);
                }
                return Err(TaskError::internal());
            }
        }
        // From here the place is given back when the work ends.
        reservation.keep();
        let cancel = CancellationToken::new();
        let wake = Arc::new(Notify::new());
        tasks.running().insert(
            id.clone(),
            Running {
                cancel: cancel.clone(),
                wake: wake.clone(),
                counted: names_principal(&self.owner).then(|| self.owner.clone()),
            },
        );
        let context = TaskContext {
            tasks: tasks.clone(),
            id: id.clone(),
            cancel: cancel.clone(),
            wake,
            declared: self.declared.clone(),
        };
        tokio::spawn(run(
            tasks.clone(),
            self.output,
            record.clone(),
            cancel,
            Box::pin(work(context)),
        ));
        let mut result = JsonObject::builder().insert("resultType", "task");
        record.push_common(&mut result);
        Ok(TaskCreated {
            id: record.id.clone(),
            result: result.build(),
            serial: self.serial,
        })
    }
}

/// Runs a task's work to its end: completes or fails the record, unless the task was
/// cancelled (here, or on another instance: the store is polled) or expired first.
pub(crate) async fn run(
    tasks: Arc<Tasks>,
    output: OutputLimits,
    created: TaskRecord,
    cancel: CancellationToken,
    work: BoxFuture<'static, Result<CompleteResult, TaskError>>,
) {
    let id = created.id.clone();
    // The record as this worker last wrote it (created, then each lease renewal): the next
    // write starts from it with no read, which holds unless the task changed elsewhere (the
    // work reported progress or asked for input, a client cancelled it).
    let known = std::sync::Mutex::new(Some(created));
    let take_known = |known: &std::sync::Mutex<Option<TaskRecord>>| {
        known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    };
    let watch = {
        let tasks = tasks.clone();
        let id = id.clone();
        let known = &known;
        async move {
            loop {
                tokio::time::sleep(tasks.config.poll_interval).await;
                // Renew the lease; stop when the task ended elsewhere (cancelled, expired).
                let span = lease_span(&tasks.config);
                let renewed = tasks
                    .update_from(&id, take_known(known), |r| {
                        if r.status.is_terminal() {
                            return false;
                        }
                        r.lease_ms = now_ms().saturating_add(span);
                        true
                    })
                    .await;
                match renewed {
                    Ok(Some(r)) if !r.status.is_terminal() => {
                        *known
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(r);
                    }
                    Err(_) => {}
                    _ => return,
                }
            }
        }
    };
    let outcome = tokio::select! {
        outcome = guarded(|| work) => Some(outcome),
        () = cancel.cancelled() => None,
        () = watch => None,
    };
    if let Some(outcome) = outcome {
        let (result, error) = match outcome {
            Some(Ok(result)) => match crate::model::projection::render_tool_result(
                &output,
                ProtocolVersion::V2026_07_28,
                &result,
            ) {
                Some(text) => (Some(text), None),
                None => (None, TaskError::internal().render()),
            },
            Some(Err(error)) => (None, error.render()),
            None => (None, TaskError::internal().render()),
        };
        // The end is written until it sticks or the lease runs out: a store that is down for a
        // moment (a database restart) does not lose a finished task's result.
        let give_up = now_ms().saturating_add(lease_span(&tasks.config));
        loop {
            let written = tasks
                .update_from(&id, take_known(&known), |r| {
                    if r.status.is_terminal() {
                        return false;
                    }
                    r.requests = JsonObject::new();
                    r.responses = JsonObject::new();
                    // A progress message does not describe the end.
                    r.message = None;
                    if let Some(text) = &result {
                        r.status = TaskStatus::Completed;
                        r.result = Some(text.clone());
                    } else {
                        r.status = TaskStatus::Failed;
                        r.error = error.clone().or_else(|| TaskError::internal().render());
                    }
                    true
                })
                .await;
            match written {
                Err(e) if e.kind() == TaskStoreErrorKind::Backend && now_ms() < give_up => {
                    tokio::time::sleep(tasks.config.poll_interval).await;
                }
                _ => break,
            }
        }
    }
    let ended = tasks.running().remove(&id);
    if let Some(owner) = ended.and_then(|r| r.counted) {
        tasks.release(&owner);
    }
}
