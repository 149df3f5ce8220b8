//! Tasks: the `io.modelcontextprotocol/tasks` extension on 2026-07-28 — durable task records,
//! the stores that keep them, the in-process runner, and the `tasks/get`, `tasks/update` and
//! `tasks/cancel` methods.
//!
//! Owns [`TaskSupport`], [`TaskStatus`], [`TaskConfig`], the [`TaskStore`] contract (a store is
//! a dumb versioned row keeper: every transition rule lives here, so an in-memory map and a SQL
//! table behave the same), [`InMemoryTaskStore`], the handler-facing [`TaskCreation`] feature,
//! [`TaskCreated`] and the work-facing [`TaskContext`]. Knows nothing of transports: the
//! protocol module routes the methods here and writes the replies.
//!
//! A task record is created (durably, in the store) before its handle is returned; its work
//! runs on this process's runtime; every later read and write goes through the store, so any
//! instance sharing the store answers `tasks/get`, `tasks/update` and `tasks/cancel`, and a
//! worker notices a cancellation made elsewhere on its next poll.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::Notify;
use tollgate_json::{JsonLimits, JsonObject, JsonValue, OutputLimits, from_slice, to_string};

use crate::context::{ClientCapability, RequestContext, RequestId};
use crate::endpoint::Endpoint;
use crate::features::CancellationToken;
use crate::input::{InputRequest, MAX_INPUT_REQUESTS};
use crate::pipeline::guard::guarded;
use crate::pipeline::retry::input_response_shape;
use crate::result::CompleteResult;
use crate::tool::BoxFuture;
use crate::version::ProtocolVersion;
use crate::wire::fault::Fault;
use crate::wire::reply::{Reply, fail, missing_capabilities, result_reply};

/// The extension's identifier, as clients declare it and `server/discover` advertises it.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The longest task id accepted in a request (Tollgate's own ids are 32 characters).
pub const MAX_TASK_ID_BYTES: usize = 128;

/// How a tool takes part in tasks.
///
/// # Examples
///
/// ```
/// use tollgate::TaskSupport;
///
/// assert_eq!(TaskSupport::default(), TaskSupport::Forbidden);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskSupport {
    /// The tool always completes inline; its handler never sees a [`TaskCreation`].
    #[default]
    Forbidden,
    /// The handler may create a task when the client declared the extension on the call
    /// ([`TaskCreation`] is then among its features), and completes inline otherwise.
    Optional,
    /// The tool cannot complete inline: a call whose client did not declare the extension is
    /// refused with HTTP 400 / -32021 before the handler runs.
    Required,
}

/// A task's status, as the extension names it on the wire.
///
/// # Examples
///
/// ```
/// use tollgate::TaskStatus;
///
/// assert_eq!(TaskStatus::Cancelled.as_str(), "cancelled");
/// assert!(TaskStatus::Completed.is_terminal());
/// assert!(!TaskStatus::InputRequired.is_terminal());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskStatus {
    /// The work is in progress.
    Working,
    /// The work waits for the client's answers to its input requests.
    InputRequired,
    /// The work finished with a tool result (including an `isError` one).
    Completed,
    /// The work failed with a JSON-RPC error.
    Failed,
    /// The task was cancelled.
    Cancelled,
}

impl TaskStatus {
    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Whether the status never changes again.
    pub const fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    fn from_wire(text: &str) -> Option<Self> {
        Some(match text {
            "working" => Self::Working,
            "input_required" => Self::InputRequired,
            "completed" => Self::Completed,
            "failed" => Self::Failed,
            "cancelled" => Self::Cancelled,
            _ => return None,
        })
    }
}

/// Lifetimes an endpoint gives its tasks.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tollgate::TaskConfig;
///
/// let config = TaskConfig::default().ttl(Duration::from_secs(600)).poll_interval(Duration::from_millis(500));
/// assert_eq!(config.ttl_value(), Duration::from_secs(600));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskConfig {
    ttl: Duration,
    poll_interval: Duration,
    max_running_per_principal: usize,
}

impl TaskConfig {
    /// Default time to live from creation: one hour.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(3600);
    /// Default suggested polling interval: one second.
    pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
    /// Bounds on the time to live: one second to seven days.
    pub const TTL_RANGE: (Duration, Duration) =
        (Duration::from_secs(1), Duration::from_secs(7 * 24 * 3600));
    /// Bounds on the polling interval: 50 ms to one minute (and never above the TTL).
    pub const POLL_INTERVAL_RANGE: (Duration, Duration) =
        (Duration::from_millis(50), Duration::from_secs(60));

    /// The time to live of each task from its creation; past it the task is gone (`tasks/get`
    /// answers as for an unknown id).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The polling interval suggested to clients (and used by workers to notice changes made
    /// by other instances).
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// The most tasks one admitted principal may have running on this instance at once
    /// (default 1,000, at least 1); past it [`TaskCreation::spawn`] fails with
    /// [`TaskError::internal`]. Anonymous callers cannot be told apart: the store's capacity
    /// bounds them.
    #[must_use]
    pub fn max_running_per_principal(mut self, n: usize) -> Self {
        self.max_running_per_principal = n.max(1);
        self
    }

    /// The per-principal bound on running tasks.
    pub fn max_running_per_principal_value(&self) -> usize {
        self.max_running_per_principal
    }

    /// The time to live.
    pub fn ttl_value(&self) -> Duration {
        self.ttl
    }

    /// The polling interval.
    pub fn poll_interval_value(&self) -> Duration {
        self.poll_interval
    }

    pub(crate) fn is_valid(&self) -> bool {
        let (lo, hi) = Self::TTL_RANGE;
        let (plo, phi) = Self::POLL_INTERVAL_RANGE;
        (lo..=hi).contains(&self.ttl)
            && (plo..=phi).contains(&self.poll_interval)
            && self.poll_interval <= self.ttl
    }
}

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            ttl: Self::DEFAULT_TTL,
            poll_interval: Self::DEFAULT_POLL_INTERVAL,
            max_running_per_principal: 1_000,
        }
    }
}

/// One stored task as a store keeps it: the id, a version for compare-and-swap, the expiry
/// (milliseconds since the Unix epoch) and the encoded record. The record is opaque and may
/// hold validated arguments' consequences and results: protect it like the task itself, and
/// store it byte for byte (a text or binary column, never one that re-renders JSON).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRow {
    /// The task id (unique, high-entropy).
    pub id: String,
    /// Incremented by every write; a replace names the version it read.
    pub version: u64,
    /// When the row may be purged, in milliseconds since the Unix epoch.
    pub expires_at_ms: u64,
    /// The encoded record.
    pub data: String,
}

/// Why a store operation failed. It names the kind only, never row data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskStoreErrorKind {
    /// The store holds as many tasks as it may.
    Full,
    /// A row with that id exists already.
    Duplicate,
    /// The backing storage failed (connection, I/O, constraint).
    Backend,
}

/// A failed store operation.
///
/// # Examples
///
/// ```
/// use tollgate::{TaskStoreError, TaskStoreErrorKind};
///
/// let err = TaskStoreError::new(TaskStoreErrorKind::Backend);
/// assert_eq!(err.kind(), TaskStoreErrorKind::Backend);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskStoreError {
    kind: TaskStoreErrorKind,
}

impl TaskStoreError {
    /// An error of `kind`.
    pub const fn new(kind: TaskStoreErrorKind) -> Self {
        Self { kind }
    }

    /// What failed.
    pub const fn kind(&self) -> TaskStoreErrorKind {
        self.kind
    }
}

impl fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            TaskStoreErrorKind::Full => "task store is full",
            TaskStoreErrorKind::Duplicate => "task id already stored",
            TaskStoreErrorKind::Backend => "task store backend failed",
        })
    }
}

impl std::error::Error for TaskStoreError {}

/// A boxed future a store returns.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T, TaskStoreError>>;

/// Where task records live. Implementations keep rows; they never interpret `data`. Every
/// operation must be atomic with respect to the others (a replace that names a stale version
/// changes nothing and returns `false`), and a row inserted must be visible to every later
/// `load` on any instance sharing the store before `insert` returns.
///
/// Tollgate ships [`InMemoryTaskStore`] (one process) and, with the `sqlite` feature, a SQLite
/// store; a shared database makes tasks visible to every instance.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new row.
    fn insert<'a>(&'a self, row: TaskRow) -> StoreFuture<'a, ()>;
    /// The row with this id, if stored (expired rows may still be returned; Tollgate checks).
    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRow>>;
    /// Replaces the row whose id and version are `row.id` and `expected_version` by `row`;
    /// `false` when the stored version differs or the row is gone.
    fn replace<'a>(&'a self, row: TaskRow, expected_version: u64) -> StoreFuture<'a, bool>;
    /// Deletes rows that expired before `now_ms`; returns how many.
    fn purge_expired<'a>(&'a self, now_ms: u64) -> StoreFuture<'a, u64>;
}

/// A bounded task store in this process's memory: for development, tests and single-process
/// servers that accept losing tasks on restart. Expired rows are purged as new ones arrive.
///
/// # Examples
///
/// ```
/// use tollgate::InMemoryTaskStore;
///
/// let store = InMemoryTaskStore::with_capacity(1_000);
/// assert_eq!(store.capacity(), 1_000);
/// ```
#[derive(Debug)]
pub struct InMemoryTaskStore {
    rows: Mutex<HashMap<String, TaskRow>>,
    capacity: usize,
}

impl InMemoryTaskStore {
    /// Default capacity: 10,000 tasks.
    pub const DEFAULT_CAPACITY: usize = 10_000;

    /// A store holding at most `capacity` tasks (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            rows: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// The most tasks it holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn rows(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRow>> {
        self.rows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Default for InMemoryTaskStore {
    fn default() -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY)
    }
}

impl TaskStore for InMemoryTaskStore {
    fn insert<'a>(&'a self, row: TaskRow) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut rows = self.rows();
            if rows.contains_key(&row.id) {
                return Err(TaskStoreError::new(TaskStoreErrorKind::Duplicate));
            }
            if rows.len() >= self.capacity {
                let now = now_ms();
                rows.retain(|_, r| r.expires_at_ms > now);
                if rows.len() >= self.capacity {
                    return Err(TaskStoreError::new(TaskStoreErrorKind::Full));
                }
            }
            rows.insert(row.id.clone(), row);
            Ok(())
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRow>> {
        Box::pin(async move { Ok(self.rows().get(id).cloned()) })
    }

    fn replace<'a>(&'a self, row: TaskRow, expected_version: u64) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut rows = self.rows();
            match rows.get_mut(&row.id) {
                Some(stored) if stored.version == expected_version => {
                    *stored = row;
                    Ok(true)
                }
                _ => Ok(false),
            }
        })
    }

    fn purge_expired<'a>(&'a self, now_ms: u64) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let mut rows = self.rows();
            let before = rows.len();
            rows.retain(|_, r| r.expires_at_ms > now_ms);
            Ok((before - rows.len()) as u64)
        })
    }
}

/// A shared store: several endpoints (or servers in one process) can use the same one.
impl<T: TaskStore> TaskStore for Arc<T> {
    fn insert<'a>(&'a self, row: TaskRow) -> StoreFuture<'a, ()> {
        (**self).insert(row)
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRow>> {
        (**self).load(id)
    }

    fn replace<'a>(&'a self, row: TaskRow, expected_version: u64) -> StoreFuture<'a, bool> {
        (**self).replace(row, expected_version)
    }

    fn purge_expired<'a>(&'a self, now_ms: u64) -> StoreFuture<'a, u64> {
        (**self).purge_expired(now_ms)
    }
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// An ISO 8601 / RFC 3339 UTC timestamp with milliseconds.
pub(crate) fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let millis = ms % 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The record every store keeps (encoded as JSON text in [`TaskRow::data`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TaskRecord {
    pub(crate) id: Arc<str>,
    pub(crate) version: u64,
    /// Endpoint path and admitted principal: lookups by anyone else find nothing.
    pub(crate) owner: Arc<str>,
    pub(crate) tool: Arc<str>,
    pub(crate) status: TaskStatus,
    pub(crate) message: Option<Arc<str>>,
    pub(crate) created_ms: u64,
    pub(crate) updated_ms: u64,
    pub(crate) ttl_ms: u64,
    pub(crate) poll_ms: u64,
    /// Until when the worker running it is known alive (renewed every poll interval): a task
    /// not yet terminal whose lease ran out lost its worker and is failed when next read.
    pub(crate) lease_ms: u64,
    /// Outstanding input requests, key → `{method, params}`.
    pub(crate) requests: JsonObject,
    /// Every key ever asked (keys are unique over a task's lifetime).
    pub(crate) asked: Vec<JsonValue>,
    /// Answers received and not yet taken by the worker.
    pub(crate) responses: JsonObject,
    /// The completed tool result, as written JSON text.
    pub(crate) result: Option<Arc<str>>,
    /// The failure's JSON-RPC error, as written JSON text.
    pub(crate) error: Option<Arc<str>>,
}

/// Limits for decoding stored records: shallow (results and errors are text inside), but
/// with room for a whole output-limited result.
fn record_limits() -> JsonLimits {
    JsonLimits::default()
        .with_max_input_bytes(JsonLimits::MAX_INPUT_BYTES_CEILING)
        .and_then(|l| l.with_max_string_units(JsonLimits::MAX_STRING_UNITS_CEILING))
        .and_then(|l| l.with_max_nodes(1_000_000))
        .unwrap_or_default()
}

fn record_output_limits() -> OutputLimits {
    OutputLimits::default()
        .with_max_output_bytes(OutputLimits::MAX_OUTPUT_BYTES_CEILING)
        .and_then(|l| l.with_max_string_units(JsonLimits::MAX_STRING_UNITS_CEILING))
        .unwrap_or_default()
}

impl TaskRecord {
    fn expires_at_ms(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }

    fn to_row(&self) -> Option<TaskRow> {
        let mut b = JsonObject::builder()
            .insert("v", 1u64)
            .insert("owner", &*self.owner)
            .insert("tool", &*self.tool)
            .insert("status", self.status.as_str())
            .insert("created", self.created_ms)
            .insert("updated", self.updated_ms)
            .insert("ttl", self.ttl_ms)
            .insert("poll", self.poll_ms)
            .insert("lease", self.lease_ms)
            .insert("requests", self.requests.clone())
            .insert("asked", JsonValue::from(self.asked.clone()))
            .insert("responses", self.responses.clone());
        if let Some(m) = &self.message {
            b.push("message", &**m);
        }
        if let Some(r) = &self.result {
            b.push("result", &**r);
        }
        if let Some(e) = &self.error {
            b.push("error", &**e);
        }
        let data = to_string(&b.build().into(), &record_output_limits()).ok()?;
        Some(TaskRow {
            id: self.id.to_string(),
            version: self.version,
            expires_at_ms: self.expires_at_ms(),
            data,
        })
    }

    fn from_row(row: &TaskRow) -> Option<Self> {
        let value = from_slice(row.data.as_bytes(), &record_limits()).ok()?;
        let o = value.as_object()?;
        if o.get("v")?.as_number()?.to_u64()? != 1 {
            return None;
        }
        let num = |k: &str| o.get(k).and_then(JsonValue::as_number)?.to_u64();
        let text = |k: &str| o.get(k).and_then(JsonValue::as_str).map(Arc::<str>::from);
        Some(Self {
            id: row.id.as_str().into(),
            version: row.version,
            owner: text("owner")?,
            tool: text("tool")?,
            status: TaskStatus::from_wire(o.get("status")?.as_str()?)?,
            message: text("message"),
            created_ms: num("created")?,
            updated_ms: num("updated")?,
            ttl_ms: num("ttl")?,
            poll_ms: num("poll")?,
            lease_ms: num("lease")?,
            requests: o.get("requests")?.as_object()?.clone(),
            asked: o.get("asked")?.as_array()?.iter().cloned().collect(),
            responses: o.get("responses")?.as_object()?.clone(),
            result: text("result"),
            error: text("error"),
        })
    }

    /// The capabilities the outstanding input requests need that `declared` lacks, each once;
    /// `None` when a stored request names a method Tollgate never asks (a corrupt record).
    fn missing_capabilities(
        &self,
        declared: &crate::context::ClientCapabilities,
    ) -> Option<Vec<ClientCapability>> {
        let mut missing = Vec::new();
        for (_, request) in self.requests.iter() {
            let capability = match request.get("method").and_then(JsonValue::as_str)? {
                "elicitation/create" => ClientCapability::Elicitation,
                "sampling/createMessage" => ClientCapability::Sampling,
                "roots/list" => ClientCapability::Roots,
                _ => return None,
            };
            if !declared.declares(&capability) && !missing.contains(&capability) {
                missing.push(capability);
            }
        }
        Some(missing)
    }

    /// The fields every task shape shares, in wire order.
    fn push_common(&self, b: &mut tollgate_json::JsonObjectBuilder) {
        b.push("taskId", &*self.id);
        b.push("status", self.status.as_str());
        if let Some(m) = &self.message {
            b.push("statusMessage", &**m);
        }
        b.push("createdAt", iso8601(self.created_ms));
        b.push("lastUpdatedAt", iso8601(self.updated_ms));
        b.push("ttlMs", self.ttl_ms);
        b.push("pollIntervalMs", self.poll_ms);
    }
}

/// An error a task's work ends with: the task becomes `failed` with this JSON-RPC error.
/// Application errors use a code outside the JSON-RPC reserved range and a client-safe
/// message (never an exception's text or a secret); [`TaskError::internal`] is the fixed
/// -32603.
///
/// # Examples
///
/// ```
/// use tollgate::TaskError;
///
/// let err = TaskError::application(-31903, "Operation failed").expect("outside the reserved range");
/// assert_eq!(err.code(), -31903);
/// assert!(TaskError::application(-32603, "no").is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskError {
    code: i64,
    message: Arc<str>,
}

impl TaskError {
    /// An application error: `code` outside -32768..=-32000, `message` at most 1,024 bytes.
    /// `None` otherwise.
    pub fn application(code: i64, message: impl Into<Arc<str>>) -> Option<Self> {
        let message = message.into();
        ((!(-32768..=-32000).contains(&code)) && message.len() <= 1024)
            .then_some(Self { code, message })
    }

    /// The fixed internal error (-32603).
    pub fn internal() -> Self {
        Self {
            code: Fault::Internal.code(),
            message: Fault::Internal.message().into(),
        }
    }

    /// The JSON-RPC code.
    pub fn code(&self) -> i64 {
        self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn render(&self) -> Option<Arc<str>> {
        let value = JsonObject::builder()
            .insert("code", self.code)
            .insert("message", &*self.message)
            .build();
        to_string(&value.into(), &OutputLimits::default())
            .ok()
            .map(Arc::from)
    }
}

impl fmt::Display for TaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task failed with code {}", self.code)
    }
}

impl std::error::Error for TaskError {}

/// What ended a [`TaskContext::request_input`] wait without answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskInputError {
    /// The requests were malformed: no request, more than 32, an empty, overlong or repeated
    /// key, or a key already used earlier in this task.
    InvalidRequests,
    /// The task was cancelled, expired or is otherwise no longer waiting.
    Ended,
    /// The store failed.
    Store,
}

impl fmt::Display for TaskInputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::InvalidRequests => "invalid task input requests",
            Self::Ended => "the task is no longer running",
            Self::Store => "task store failed",
        })
    }
}

impl std::error::Error for TaskInputError {}

impl From<TaskInputError> for TaskError {
    fn from(_: TaskInputError) -> Self {
        Self::internal()
    }
}

/// What an endpoint with tasks keeps: the store, the lifetimes, and this process's running
/// work (for prompt cancellation and input wake-ups).
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) config: TaskConfig,
    /// Where visible changes are announced to `subscriptions/listen` streams (this process).
    events: Option<tokio::sync::broadcast::Sender<crate::subscription::Event>>,
    running: Mutex<HashMap<Arc<str>, Running>>,
    /// Tasks running here per admitted principal's owner binding.
    per_owner: Mutex<HashMap<Arc<str>, usize>>,
    last_purge: AtomicU64,
}

struct Running {
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
enum Lookup {
    Found(TaskRecord),
    Absent,
    StoreFailed,
}

/// How long a worker's lease lasts: three poll intervals, at least ten seconds.
fn lease_span(config: &TaskConfig) -> u64 {
    u64::try_from(config.poll_interval.as_millis())
        .unwrap_or(u64::MAX / 4)
        .saturating_mul(3)
        .max(10_000)
}

impl Tasks {
    /// A task read by a client: one whose worker's lease ran out before it finished (the
    /// process ended, or lost the store) is failed with the fixed internal error first, so
    /// pollers never wait on work that no longer runs.
    async fn lookup_for_client(&self, id: &str, owner: &str) -> Lookup {
        match self.lookup(id, Some(owner)).await {
            Lookup::Found(r) if !r.status.is_terminal() && r.lease_ms < now_ms() => {
                let failed = self
                    .update(id, |r| {
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
                    Err(_) => Lookup::StoreFailed,
                }
            }
            other => other,
        }
    }

    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        config: TaskConfig,
        events: Option<tokio::sync::broadcast::Sender<crate::subscription::Event>>,
    ) -> Self {
        Self {
            store,
            config,
            events,
            running: Mutex::new(HashMap::new()),
            per_owner: Mutex::new(HashMap::new()),
            last_purge: AtomicU64::new(0),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Running>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn per_owner(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, usize>> {
        self.per_owner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a running place for `owner` when it names a principal; false at its bound.
    fn reserve(&self, owner: &Arc<str>) -> bool {
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
    fn release(&self, owner: &Arc<str>) {
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

    async fn lookup(&self, id: &str, owner: Option<&str>) -> Lookup {
        let row = match self.store.load(id).await {
            Ok(Some(row)) => row,
            Ok(None) => return Lookup::Absent,
            Err(_) => return Lookup::StoreFailed,
        };
        let Some(record) = TaskRecord::from_row(&row) else {
            return Lookup::StoreFailed;
        };
        if record.expires_at_ms() <= now_ms() || owner.is_some_and(|o| o != &*record.owner) {
            return Lookup::Absent;
        }
        Lookup::Found(record)
    }

    /// Applies `change` to the stored record until a compare-and-swap succeeds. `change`
    /// returns `false` to leave the record as it is. Returns the record as stored after.
    async fn update(
        &self,
        id: &str,
        mut change: impl FnMut(&mut TaskRecord) -> bool,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        for _ in 0..64 {
            let record = match self.lookup(id, None).await {
                Lookup::Found(r) => r,
                Lookup::Absent => return Ok(None),
                Lookup::StoreFailed => {
                    return Err(TaskStoreError::new(TaskStoreErrorKind::Backend));
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
            let row = next
                .to_row()
                .ok_or(TaskStoreError::new(TaskStoreErrorKind::Backend))?;
            if self.store.replace(row, record.version).await? {
                if visible {
                    if let Some(events) = &self.events {
                        let _ =
                            events.send(crate::subscription::Event::TaskChanged(next.id.clone()));
                    }
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
    /// error parsed back from the stored text), and whether it is terminal. `None` when the
    /// listener may not see it, cannot answer its outstanding requests, or it does not fit.
    pub(crate) async fn notification(
        &self,
        id: &str,
        owner: &str,
        capabilities: &crate::context::ClientCapabilities,
        limits: &OutputLimits,
    ) -> Option<(JsonObject, bool)> {
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
                let text = record.result.as_deref()?;
                b.push(
                    "result",
                    from_slice(text.as_bytes(), &record_limits()).ok()?,
                );
            }
            TaskStatus::Failed => {
                let text = record.error.as_deref()?;
                b.push("error", from_slice(text.as_bytes(), &record_limits()).ok()?);
            }
            TaskStatus::Working | TaskStatus::Cancelled => {}
        }
        let params = b.build();
        // Written once here to know it fits the output limits before it is queued.
        to_string(&JsonValue::Object(params.clone()), limits).ok()?;
        Some((params, record.status.is_terminal()))
    }

    /// Purges expired rows at most once a minute.
    async fn maybe_purge(&self) {
        let now = now_ms();
        let last = self.last_purge.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= 60_000
            && self
                .last_purge
                .compare_exchange(last, now, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            let _ = self.store.purge_expired(now).await;
        }
    }

    fn wake(&self, id: &str) {
        if let Some(running) = self.running().get(id) {
            running.wake.notify_waiters();
        }
    }

    fn cancel_local(&self, id: &str) {
        if let Some(running) = self.running().get(id) {
            running.cancel.cancel();
            running.wake.notify_waiters();
        }
    }
}

/// A running place taken for a task being created: given back on drop unless kept.
struct Reservation<'a> {
    tasks: &'a Tasks,
    owner: &'a Arc<str>,
    kept: bool,
}

impl<'a> Reservation<'a> {
    fn take(tasks: &'a Tasks, owner: &'a Arc<str>) -> Option<Self> {
        tasks.reserve(owner).then_some(Self {
            tasks,
            owner,
            kept: false,
        })
    }

    fn keep(mut self) {
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
fn names_principal(owner: &str) -> bool {
    owner.split('\n').nth(1) == Some("p")
}

/// The owner binding of a request: its endpoint and admitted principal.
pub(crate) fn owner_of(endpoint: &Endpoint, context: &RequestContext) -> Arc<str> {
    let principal = context.admission.principal_name().unwrap_or("");
    let anonymous = if context.admission.principal_name().is_some() {
        "p"
    } else {
        "a"
    };
    format!("{}\n{anonymous}\n{principal}", endpoint.inner.path).into()
}

static SERIAL: AtomicU64 = AtomicU64::new(1);

/// The invocation feature that lets a tool handler create a task. Present only on 2026-07-28,
/// on an endpoint with a task store, for a tool with [`TaskSupport::Optional`] or
/// [`TaskSupport::Required`], when the client declared the extension on this call.
///
/// # Examples
///
/// ```no_run
/// use tollgate::{CompleteResult, InvocationFeatures, OperationResult, RequestContext,
///     TaskCreation, ToolArguments};
/// use tollgate::json::JsonObject;
///
/// async fn report(
///     _: &RequestContext,
///     _: ToolArguments<JsonObject>,
///     features: &InvocationFeatures,
/// ) -> Result<OperationResult, tollgate::TaskError> {
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
    endpoint: Endpoint,
    owner: Arc<str>,
    tool: Arc<str>,
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
        endpoint: Endpoint,
        owner: Arc<str>,
        tool: Arc<str>,
    ) -> Self {
        Self {
            tasks,
            endpoint,
            owner,
            tool,
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
    /// [`TaskError::internal`] when the store refuses the task (full or failing), or when the
    /// admitted principal already has its most tasks running here
    /// ([`TaskConfig::max_running_per_principal`]).
    pub async fn spawn<W, F>(&self, work: W) -> Result<TaskCreated, TaskError>
    where
        W: FnOnce(TaskContext) -> F + Send + 'static,
        F: Future<Output = Result<CompleteResult, TaskError>> + Send + 'static,
    {
        let tasks = &self.tasks;
        tasks.maybe_purge().await;
        // 128 random bits, as 32 lowercase hex digits (header-safe for `Mcp-Name`).
        let mut id_bytes = [0u8; 16];
        getrandom::fill(&mut id_bytes).map_err(|_| TaskError::internal())?;
        let id: Arc<str> = id_bytes
            .iter()
            .fold(String::with_capacity(32), |mut s, b| {
                use std::fmt::Write as _;
                let _ = write!(s, "{b:02x}");
                s
            })
            .into();
        let now = now_ms();
        let record = TaskRecord {
            id: id.clone(),
            version: 1,
            owner: self.owner.clone(),
            tool: self.tool.clone(),
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
        let row = record.to_row().ok_or_else(TaskError::internal)?;
        // Given back if the store refuses, or if this future is dropped while it waits.
        let reservation = Reservation::take(tasks, &self.owner).ok_or_else(TaskError::internal)?;
        tasks
            .store
            .insert(row)
            .await
            .map_err(|_| TaskError::internal())?;
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
        };
        tokio::spawn(run(
            tasks.clone(),
            self.endpoint.clone(),
            id,
            cancel,
            Box::pin(work(context)),
        ));
        Ok(TaskCreated {
            record,
            serial: self.serial,
        })
    }
}

/// Runs a task's work to its end: completes or fails the record, unless the task was
/// cancelled (here, or on another instance: the store is polled) or expired first.
async fn run(
    tasks: Arc<Tasks>,
    endpoint: Endpoint,
    id: Arc<str>,
    cancel: CancellationToken,
    work: BoxFuture<'static, Result<CompleteResult, TaskError>>,
) {
    let watch = {
        let tasks = tasks.clone();
        let id = id.clone();
        async move {
            loop {
                tokio::time::sleep(tasks.config.poll_interval).await;
                // Renew the lease; stop when the task ended elsewhere (cancelled, expired).
                let span = lease_span(&tasks.config);
                let renewed = tasks
                    .update(&id, |r| {
                        if r.status.is_terminal() {
                            return false;
                        }
                        r.lease_ms = now_ms().saturating_add(span);
                        true
                    })
                    .await;
                match renewed {
                    Ok(Some(r)) if !r.status.is_terminal() => {}
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
            Some(Ok(result)) => match crate::wire::tool_result::render_tool_result(
                &endpoint.inner.limits.output,
                ProtocolVersion::V2026_07_28,
                &result,
            ) {
                Some(text) => (Some(text), None),
                None => (None, TaskError::internal().render()),
            },
            Some(Err(error)) => (None, error.render()),
            None => (None, TaskError::internal().render()),
        };
        let _ = tasks
            .update(&id, |r| {
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
    }
    let ended = tasks.running().remove(&id);
    if let Some(owner) = ended.and_then(|r| r.counted) {
        tasks.release(&owner);
    }
}

/// A created task, returned from a handler as [`OperationResult::TaskCreated`](crate::OperationResult::TaskCreated).
/// It can only come from [`TaskCreation::spawn`] on the same call.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskCreated {
    pub(crate) record: TaskRecord,
    pub(crate) serial: u64,
}

impl TaskCreated {
    /// The task id.
    pub fn task_id(&self) -> &str {
        &self.record.id
    }
}

impl From<TaskCreated> for crate::result::OperationResult {
    fn from(created: TaskCreated) -> Self {
        Self::TaskCreated(created)
    }
}

/// What a task's work receives: its id, its cancellation signal, and the means to report a
/// status message and to ask the client for input.
pub struct TaskContext {
    tasks: Arc<Tasks>,
    id: Arc<str>,
    cancel: CancellationToken,
    wake: Arc<Notify>,
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
        if message.len() > 1024 {
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
    /// unique over the task's lifetime.
    ///
    /// # Errors
    ///
    /// [`TaskInputError::InvalidRequests`], [`TaskInputError::Ended`] (cancelled or expired
    /// meanwhile), [`TaskInputError::Store`].
    pub async fn request_input<K: Into<Arc<str>>>(
        &self,
        requests: impl IntoIterator<Item = (K, InputRequest)>,
    ) -> Result<JsonObject, TaskInputError> {
        let requests: Vec<(Arc<str>, InputRequest)> =
            requests.into_iter().map(|(k, r)| (k.into(), r)).collect();
        let mut keys: Vec<&str> = requests.iter().map(|(k, _)| &**k).collect();
        keys.sort_unstable();
        if requests.is_empty()
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

fn no_task(context: &RequestContext) -> Reply {
    fail(
        context.protocol_version,
        context.request_id.as_ref(),
        Fault::TaskNotFound,
        None,
    )
}

fn internal(context: &RequestContext) -> Reply {
    fail(
        context.protocol_version,
        context.request_id.as_ref(),
        Fault::Internal,
        None,
    )
}

fn ack(context: &RequestContext) -> Reply {
    match context.request_id.as_ref() {
        Some(id) => result_reply(id, br#"{"resultType":"complete"}"#),
        None => internal(context),
    }
}

/// The gate, the task id and the caller's own task, or the reply that ends the request.
async fn own_task<'p>(
    endpoint: &Endpoint,
    tasks: &Tasks,
    params: &'p JsonObject,
    context: &RequestContext,
) -> Result<(&'p str, TaskRecord), Reply> {
    gate(context)?;
    let id = task_id(params).ok_or_else(|| no_task(context))?;
    let owner = owner_of(endpoint, context);
    match tasks.lookup_for_client(id, &owner).await {
        Lookup::Found(record) => Ok((id, record)),
        Lookup::Absent => Err(no_task(context)),
        Lookup::StoreFailed => Err(internal(context)),
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
    match write_detailed(&record, request_id, &endpoint.inner.limits.output) {
        Some(body) => Reply::ok(body),
        None => internal(context),
    }
}

/// The `tasks/get` response: the envelope written around the stored result or error text.
fn write_detailed(record: &TaskRecord, id: &RequestId, limits: &OutputLimits) -> Option<Vec<u8>> {
    let mut b = JsonObject::builder().insert("resultType", "complete");
    record.push_common(&mut b);
    if record.status == TaskStatus::InputRequired {
        b.push("inputRequests", record.requests.clone());
    }
    let head = to_string(&b.build().into(), limits).ok()?;
    let mut body = Vec::with_capacity(head.len() + 64);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    tollgate_json::write_into(&id.to_json(), &mut body, limits).ok()?;
    body.extend_from_slice(br#","result":"#);
    // The head ends with '}': reopen it for the payload.
    body.extend_from_slice(head.strip_suffix('}')?.as_bytes());
    match (record.status, &record.result, &record.error) {
        (TaskStatus::Completed, Some(result), _) => {
            body.extend_from_slice(br#","result":"#);
            body.extend_from_slice(result.as_bytes());
        }
        (TaskStatus::Failed, _, Some(error)) => {
            body.extend_from_slice(br#","error":"#);
            body.extend_from_slice(error.as_bytes());
        }
        (TaskStatus::Completed | TaskStatus::Failed, _, _) => return None,
        _ => {}
    }
    body.extend_from_slice(b"}}");
    (body.len() <= limits.max_output_bytes()).then_some(body)
}

/// The `CreateTaskResult` for a new task (flat: `resultType` and the task's fields).
pub(crate) fn created_result(created: &TaskCreated) -> JsonObject {
    let mut b = JsonObject::builder().insert("resultType", "task");
    created.record.push_common(&mut b);
    b.build()
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
    let id = match own_task(endpoint, tasks, params, context).await {
        Ok((id, _)) => id,
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
        .update(id, |r| {
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
        Err(_) => internal(context),
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
    let id = match own_task(endpoint, tasks, params, context).await {
        Ok((id, _)) => id,
        Err(reply) => return reply,
    };
    let updated = tasks
        .update(id, |r| {
            if r.status.is_terminal() {
                return false;
            }
            r.status = TaskStatus::Cancelled;
            r.message = None;
            r.requests = JsonObject::new();
            r.responses = JsonObject::new();
            true
        })
        .await;
    match updated {
        Ok(_) => {
            tasks.cancel_local(id);
            ack(context)
        }
        Err(_) => internal(context),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> TaskRecord {
        TaskRecord {
            id: "abc".into(),
            version: 3,
            owner: "/mcp\na\n".into(),
            tool: "t".into(),
            status: TaskStatus::InputRequired,
            message: Some("waiting".into()),
            created_ms: 1_700_000_000_123,
            updated_ms: 1_700_000_001_000,
            ttl_ms: 60_000,
            poll_ms: 1000,
            lease_ms: 1_700_000_011_000,
            requests: JsonObject::builder()
                .insert(
                    "k",
                    JsonObject::builder().insert("method", "roots/list").build(),
                )
                .build(),
            asked: vec![JsonValue::from("k")],
            responses: JsonObject::new(),
            result: Some(r#"{"content":[]}"#.into()),
            error: None,
        }
    }

    #[test]
    fn records_round_trip_through_rows() {
        let r = record();
        let row = r.to_row().expect("encodes");
        assert_eq!(row.expires_at_ms, 1_700_000_060_123);
        assert_eq!(TaskRecord::from_row(&row), Some(r));
        let broken = TaskRow {
            data: "{".into(),
            ..row
        };
        assert_eq!(TaskRecord::from_row(&broken), None);
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_005), "2000-02-29T00:00:00.005Z");
        assert_eq!(iso8601(1_796_256_000_000), "2026-12-03T00:00:00.000Z");
    }

    #[test]
    fn config_bounds() {
        assert!(TaskConfig::default().is_valid());
        // At each bound, then just past it.
        let (ttl_lo, ttl_hi) = TaskConfig::TTL_RANGE;
        let (poll_lo, poll_hi) = TaskConfig::POLL_INTERVAL_RANGE;
        let at = |ttl, poll| {
            TaskConfig::default()
                .ttl(ttl)
                .poll_interval(poll)
                .is_valid()
        };
        assert!(at(ttl_lo, poll_lo));
        assert!(at(ttl_hi, poll_hi));
        assert!(!at(ttl_lo - Duration::from_millis(1), poll_lo));
        assert!(!at(ttl_hi, poll_hi + Duration::from_millis(1)));
        // The poll interval never exceeds the TTL.
        assert!(at(Duration::from_secs(2), Duration::from_secs(2)));
        assert!(!at(Duration::from_secs(2), Duration::from_millis(2001)));
        assert!(
            !TaskConfig::default()
                .ttl(Duration::from_millis(999))
                .is_valid()
        );
        assert!(
            !TaskConfig::default()
                .poll_interval(Duration::from_millis(49))
                .is_valid()
        );
        assert!(
            TaskConfig::default()
                .ttl(Duration::from_secs(7 * 24 * 3600))
                .is_valid()
        );
        assert!(
            !TaskConfig::default()
                .ttl(Duration::from_secs(7 * 24 * 3600 + 1))
                .is_valid()
        );
    }

    #[test]
    fn application_errors_stay_outside_the_reserved_range() {
        assert!(TaskError::application(-32000, "x").is_none());
        assert!(TaskError::application(-32768, "x").is_none());
        assert!(TaskError::application(-31999, "x").is_some());
        assert!(TaskError::application(1, "x".repeat(1025)).is_none());
    }

    #[tokio::test]
    async fn a_task_whose_worker_is_gone_fails_when_read() {
        let store = Arc::new(InMemoryTaskStore::default());
        let tasks = Tasks::new(store.clone(), TaskConfig::default(), None);
        let now = now_ms();
        let mut r = record();
        r.status = TaskStatus::Working;
        r.requests = JsonObject::new();
        r.result = None;
        r.created_ms = now;
        r.updated_ms = now;
        r.lease_ms = now + 60_000;
        let mut orphan = r.clone();
        orphan.id = "orphan".into();
        orphan.lease_ms = now - 1;
        store
            .insert(r.to_row().expect("encodes"))
            .await
            .expect("stored");
        store
            .insert(orphan.to_row().expect("encodes"))
            .await
            .expect("stored");
        let owner = r.owner.clone();
        match tasks.lookup_for_client("abc", &owner).await {
            Lookup::Found(live) => assert_eq!(live.status, TaskStatus::Working),
            _ => unreachable!("the live task is found"),
        }
        match tasks.lookup_for_client("orphan", &owner).await {
            Lookup::Found(dead) => {
                assert_eq!(dead.status, TaskStatus::Failed);
                assert_eq!(
                    dead.error.as_deref(),
                    Some(r#"{"code":-32603,"message":"Internal error"}"#)
                );
            }
            _ => unreachable!("the orphan is found, failed"),
        }
        // Another owner sees neither.
        assert!(matches!(
            tasks.lookup_for_client("abc", "/mcp\np\nmallory").await,
            Lookup::Absent
        ));
    }

    #[tokio::test]
    async fn memory_store_is_bounded_and_versioned() {
        let store = InMemoryTaskStore::with_capacity(1);
        let mut row = record().to_row().expect("encodes");
        row.expires_at_ms = u64::MAX;
        store.insert(row.clone()).await.expect("first fits");
        let mut other = row.clone();
        other.id = "other".into();
        assert_eq!(
            store.insert(other).await.map_err(|e| e.kind()),
            Err(TaskStoreErrorKind::Full)
        );
        assert_eq!(
            store.insert(row.clone()).await.map_err(|e| e.kind()),
            Err(TaskStoreErrorKind::Duplicate)
        );
        let mut next = row.clone();
        next.version = 4;
        assert_eq!(store.replace(next.clone(), 2).await, Ok(false));
        assert_eq!(store.replace(next.clone(), 3).await, Ok(true));
        assert_eq!(store.load("abc").await, Ok(Some(next)));
        assert_eq!(store.purge_expired(u64::MAX).await, Ok(1));
        assert_eq!(store.load("abc").await, Ok(None));
    }
}
