//! What applications name about tasks: the extension identifier and bounds, [`TaskSupport`],
//! [`TaskStatus`], [`TaskConfig`], [`TaskError`] and [`TaskInputError`]; and the timestamps
//! records carry. Depends on nothing of the runtime.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tollgate_json::{JsonObject, OutputLimits, to_string};

use crate::wire::fault::Fault;

/// The extension's identifier, as clients declare it and `server/discover` advertises it.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The longest task id accepted in a request (Tollgate's own ids are 32 characters).
pub const MAX_TASK_ID_BYTES: usize = 128;

/// The longest status message a task carries, and the longest message of an application's
/// [`TaskError`], in bytes.
pub const MAX_STATUS_MESSAGE_BYTES: usize = 1024;

/// A task's status, as the extension names it on the wire.
///
/// # Examples
///
/// ```
/// use tollgate::task::TaskStatus;
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

    pub(crate) fn from_wire(text: &str) -> Option<Self> {
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
/// use tollgate::task::TaskConfig;
///
/// let config = TaskConfig::default().ttl(Duration::from_secs(600)).poll_interval(Duration::from_millis(500));
/// assert_eq!(config.ttl_value(), Duration::from_secs(600));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskConfig {
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) max_running_per_principal: usize,
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
    /// (default 1,000, at least 1); past it [`TaskCreation::spawn`](crate::task::TaskCreation::spawn) fails with
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
    let (hour, minute, second) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Written digit by digit (every `tasks/*` answer carries two of these); a year past 9999,
    // which no clock reaches, takes `format!`'s wider field.
    let (Ok(y @ 0..=9999), Ok(mo), Ok(d)) = (
        u64::try_from(year),
        u64::try_from(month),
        u64::try_from(day),
    ) else {
        return format!(
            "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z"
        );
    };
    let mut out = [0u8; 24];
    let fields: [(u64, usize, u8); 7] = [
        (y, 4, b'-'),
        (mo, 2, b'-'),
        (d, 2, b'T'),
        (hour, 2, b':'),
        (minute, 2, b':'),
        (second, 2, b'.'),
        (millis, 3, b'Z'),
    ];
    let mut at = 0;
    for (value, width, after) in fields {
        let mut v = value;
        for i in (0..width).rev() {
            out[at + i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
        out[at + width] = after;
        at += width + 1;
    }
    // Digits and separators only: always ASCII.
    std::str::from_utf8(&out)
        .map(str::to_owned)
        .unwrap_or_default()
}

/// An error a task's work ends with: the task becomes `failed` with this JSON-RPC error.
/// Application errors use a code outside the JSON-RPC reserved range and a client-safe
/// message (never an exception's text or a secret); [`TaskError::internal`] is the fixed
/// -32603.
///
/// # Examples
///
/// ```
/// use tollgate::task::TaskError;
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
    /// An application error: `code` outside -32768..=-32000, `message` at most
    /// [`MAX_STATUS_MESSAGE_BYTES`] (1,024) bytes. `None` otherwise.
    pub fn application(code: i64, message: impl Into<Arc<str>>) -> Option<Self> {
        let message = message.into();
        ((!(-32768..=-32000).contains(&code)) && message.len() <= MAX_STATUS_MESSAGE_BYTES)
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

    pub(crate) fn render(&self) -> Option<Arc<str>> {
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

/// What ended a [`TaskContext::request_input`](crate::task::TaskContext::request_input) wait without answers.
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
