//! Invocation features: optional, request-scoped behaviour a handler can look up, starting
//! with cooperative cancellation.
//!
//! Owns [`InvocationFeatures`] and [`CancellationToken`]. Knows nothing of the transport: the
//! dispatcher cancels the token when the request is abandoned (client disconnect, shutdown).

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

use crate::wire::level::LogLevel;

/// A cooperative cancellation signal for one invocation.
///
/// Tollgate cancels it when the request is abandoned: the client disconnects, or the server
/// shuts down. Handlers check it between expensive steps or await [`cancelled`](Self::cancelled)
/// in a `select!`; work that outlives the request should watch it.
///
/// # Examples
///
/// ```
/// use tollgate::context::CancellationToken;
///
/// let token = CancellationToken::new();
/// assert!(!token.is_cancelled());
/// token.cancel();
/// assert!(token.is_cancelled());
/// ```
#[derive(Clone, Default)]
pub struct CancellationToken {
    inner: Arc<Signal>,
}

#[derive(Default)]
struct Signal {
    cancelled: AtomicBool,
    notify: Notify,
}

impl CancellationToken {
    /// A token not yet cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether cancellation was signalled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// Signals cancellation (idempotent).
    pub fn cancel(&self) {
        if !self.inner.cancelled.swap(true, Ordering::AcqRel) {
            self.inner.notify.notify_waiters();
        }
    }

    /// Completes once cancellation is signalled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

impl fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancellationToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// Cancels the token when dropped unless disarmed: the request future was abandoned.
pub(crate) struct CancelOnDrop(Option<CancellationToken>);

impl CancelOnDrop {
    pub(crate) fn new(token: CancellationToken) -> Self {
        Self(Some(token))
    }

    pub(crate) fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

/// The feature a handler required was not available for this invocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MissingFeature {
    type_name: &'static str,
}

impl MissingFeature {
    /// The Rust type that was required.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl fmt::Display for MissingFeature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invocation feature `{}` is not available for this request",
            self.type_name
        )
    }
}

impl std::error::Error for MissingFeature {}

/// Request-scoped optional behaviour, looked up by type.
///
/// Every invocation carries a [`CancellationToken`]; a [`ProgressReporter`] is present when the
/// request asked for progress (`_meta.progressToken`) on a transport that can stream it.
///
/// # Examples
///
/// ```
/// use tollgate::{context::CancellationToken, InvocationFeatures};
///
/// let features = InvocationFeatures::for_test();
/// let token: &CancellationToken = features.require::<CancellationToken>()?;
/// assert!(!token.is_cancelled());
/// assert!(features.find::<String>().is_none());
/// # Ok::<(), tollgate::context::MissingFeature>(())
/// ```
pub struct InvocationFeatures {
    cancellation: CancellationToken,
    /// The features a call's stream gives together, in one allocation (`None`: none).
    set: Option<Box<dyn FeatureSet>>,
    others: Vec<Box<dyn Any + Send + Sync>>,
}

/// Features Tollgate provides together for one call (a 2025 session call's response stream
/// and server-to-client requests), held in one allocation rather than one each, and found by
/// type like the others.
pub(crate) trait FeatureSet: Send + Sync {
    /// The member of type `wanted`, if the set holds one.
    fn member(&self, wanted: TypeId) -> Option<&(dyn Any + Send + Sync)>;
}

impl InvocationFeatures {
    pub(crate) fn new(cancellation: CancellationToken) -> Self {
        Self {
            cancellation,
            set: None,
            others: Vec::new(),
        }
    }

    /// Adds the features of `set` (found by type as any other; one set per invocation, the
    /// last given kept).
    pub(crate) fn with_set(mut self, set: impl FeatureSet + 'static) -> Self {
        self.set = Some(Box::new(set));
        self
    }

    pub(crate) fn with(mut self, feature: impl Any + Send + Sync) -> Self {
        self.others.push(Box::new(feature));
        self
    }

    /// Features for unit-testing application code: a fresh cancellation token and nothing else.
    pub fn for_test() -> Self {
        Self::new(CancellationToken::new())
    }

    /// The feature of type `T`, if this invocation has it.
    pub fn find<T: Any>(&self) -> Option<&T> {
        (&self.cancellation as &dyn Any)
            .downcast_ref::<T>()
            .or_else(|| {
                let member = self.set.as_ref()?.member(TypeId::of::<T>())?;
                (member as &dyn Any).downcast_ref::<T>()
            })
            .or_else(|| {
                self.others
                    .iter()
                    .find_map(|f| (&**f as &dyn Any).downcast_ref::<T>())
            })
    }

    /// The feature of type `T`.
    ///
    /// # Errors
    ///
    /// [`MissingFeature`] when this invocation does not have it.
    pub fn require<T: Any>(&self) -> Result<&T, MissingFeature> {
        self.find::<T>().ok_or(MissingFeature {
            type_name: std::any::type_name::<T>(),
        })
    }

    /// Adds a request-scoped value for the handler to [`find`](Self::find) (an interceptor's,
    /// say: the tenant it resolved). Refused, and handed back, when a value of that type is
    /// already present: a feature Tollgate provides cannot be shadowed.
    ///
    /// # Errors
    ///
    /// `value` itself, when a feature of its type is already present.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) -> Result<(), T> {
        if self.find::<T>().is_some() {
            return Err(value);
        }
        self.others.push(Box::new(value));
        Ok(())
    }

    /// The cancellation token (always present).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }
}

impl fmt::Debug for InvocationFeatures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvocationFeatures")
            .field("cancellation", &self.cancellation)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn cancelled_wakes_waiters_and_drop_guard_cancels() {
        let token = CancellationToken::new();
        let waiter = {
            let token = token.clone();
            tokio::spawn(async move { token.cancelled().await })
        };
        drop(CancelOnDrop::new(token.clone()));
        assert!(token.is_cancelled());
        assert!(waiter.await.is_ok());

        let kept = CancellationToken::new();
        CancelOnDrop::new(kept.clone()).disarm();
        assert!(!kept.is_cancelled());
    }
}

/// Where an invocation's notifications go: stdout lines, or the HTTP answer's event stream.
/// Bounded: when the client reads slower than the handler reports, notifications are dropped
/// (a later progress report supersedes an earlier one); see [`crate::endpoint::StreamConfig`].
#[derive(Clone)]
pub(crate) enum NotificationSink {
    /// Lines for the stdio writer.
    Lines(tokio::sync::mpsc::Sender<Vec<u8>>),
    /// Lines for the stdio writer of a 2025 session, whose requests to the client they carry too.
    SessionLines(
        tokio::sync::mpsc::Sender<Vec<u8>>,
        std::sync::Arc<crate::stream::session::SessionStreams>,
    ),
    /// The event stream of an HTTP answer.
    Stream(std::sync::Arc<crate::stream::event::EventStream>),
}

impl NotificationSink {
    /// Queues the notification `method` with `params`; a full queue drops it, a closed one
    /// means the request is over.
    pub(crate) fn notify(&self, method: &str, params: tollgate_json::JsonObject) {
        let notification: tollgate_json::JsonValue = tollgate_json::JsonObject::builder()
            .insert("jsonrpc", "2.0")
            .insert("method", method)
            .insert("params", params)
            .build()
            .into();
        if let Ok(bytes) =
            tollgate_json::to_vec(&notification, &tollgate_json::OutputLimits::default())
        {
            self.notify_encoded(bytes);
        }
    }

    /// Queues a notification already encoded as one compact JSON-RPC message (a caller that
    /// sends the same shape often encodes its fixed part once), as [`Self::notify`] does.
    pub(crate) fn notify_encoded(&self, json: Vec<u8>) {
        match self {
            Self::Lines(lines) | Self::SessionLines(lines, _) => {
                let _ = lines.try_send(json);
            }
            Self::Stream(stream) => stream.push_notification(&json),
        }
    }
}

/// Why a progress report was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProgressError {
    /// The progress is lower than one already reported.
    NotIncreasing,
    /// The progress or total is not a finite number.
    NotFinite,
}

impl fmt::Display for ProgressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotIncreasing => "progress must not decrease",
            Self::NotFinite => "progress and total must be finite",
        })
    }
}

impl std::error::Error for ProgressError {}

/// Reports progress for the request that asked for it with `_meta.progressToken`; the client
/// receives `notifications/progress` on the response stream (HTTP) or before the response
/// (stdio).
///
/// Progress must increase: an equal value is coalesced (nothing is sent) and a lower one is
/// refused. Reports after the request finished, or after cancellation, have no effect.
///
/// # Examples
///
/// ```
/// use tollgate::{InvocationFeatures, context::ProgressReporter};
///
/// async fn work(features: &InvocationFeatures) {
///     if let Some(progress) = features.find::<ProgressReporter>() {
///         let _ = progress.report(50.0, Some(100.0), Some("half way"));
///     }
/// }
/// ```
pub struct ProgressReporter {
    token: tollgate_json::JsonValue,
    sink: NotificationSink,
    last: std::sync::Mutex<Option<f64>>,
}

impl fmt::Debug for ProgressReporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressReporter").finish_non_exhaustive()
    }
}

impl ProgressReporter {
    pub(crate) fn new(token: tollgate_json::JsonValue, sink: NotificationSink) -> Self {
        Self {
            token,
            sink,
            last: std::sync::Mutex::new(None),
        }
    }

    /// Reports `progress` (of `total`, when known), with an optional human-readable message.
    ///
    /// # Errors
    ///
    /// [`ProgressError::NotIncreasing`] below an earlier report; [`ProgressError::NotFinite`]
    /// for NaN or infinities.
    pub fn report(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ProgressError> {
        use tollgate_json::{JsonNumber, JsonObject};
        // Whole numbers are written as integers (`50`, not `50.0`).
        let number = |v: f64| {
            if v.fract() == 0.0 && v.abs() < 9.0e15 {
                Some(JsonNumber::from(v as i64))
            } else {
                JsonNumber::from_f64(v)
            }
        };
        let (Some(p), total) = (number(progress), total.map(number)) else {
            return Err(ProgressError::NotFinite);
        };
        if total.as_ref().is_some_and(Option::is_none) {
            return Err(ProgressError::NotFinite);
        }
        {
            let mut last = self
                .last
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match *last {
                Some(l) if progress < l => return Err(ProgressError::NotIncreasing),
                Some(l) if progress == l => return Ok(()),
                _ => *last = Some(progress),
            }
        }
        let mut params = JsonObject::builder()
            .insert("progressToken", self.token.clone())
            .insert("progress", p);
        if let Some(Some(t)) = total {
            params.push("total", t);
        }
        if let Some(m) = message {
            params.push("message", m);
        }
        self.sink.notify("notifications/progress", params.build());
        Ok(())
    }
}

/// Sends log messages (`notifications/message`) to the client that asked for them: on
/// 2026-07-28 with `_meta["io.modelcontextprotocol/logLevel"]`, on the 2025 revisions with
/// `logging/setLevel`. Present only when the endpoint enables logging and the client chose a
/// level; messages below that level are not sent. Never put secrets or raw input in a message.
///
/// # Examples
///
/// ```
/// use tollgate::{InvocationFeatures, context::{LogLevel, RequestLogger}};
///
/// async fn work(features: &InvocationFeatures) {
///     if let Some(log) = features.find::<RequestLogger>() {
///         log.log(LogLevel::Info, "indexing started");
///     }
/// }
/// ```
pub struct RequestLogger {
    minimum: LogLevel,
    sink: NotificationSink,
}

impl fmt::Debug for RequestLogger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestLogger")
            .field("minimum", &self.minimum)
            .finish_non_exhaustive()
    }
}

impl RequestLogger {
    pub(crate) fn new(minimum: LogLevel, sink: NotificationSink) -> Self {
        Self { minimum, sink }
    }

    /// The least severe level the client wants.
    pub fn minimum(&self) -> LogLevel {
        self.minimum
    }

    /// Sends `data` at `level`, unless the client asked for more severe messages only.
    pub fn log(&self, level: LogLevel, data: impl Into<tollgate_json::JsonValue>) {
        self.send(level, None, data.into());
    }

    /// As [`log`](Self::log), naming the logger.
    pub fn log_from(
        &self,
        level: LogLevel,
        logger: &str,
        data: impl Into<tollgate_json::JsonValue>,
    ) {
        self.send(level, Some(logger), data.into());
    }

    fn send(&self, level: LogLevel, logger: Option<&str>, data: tollgate_json::JsonValue) {
        use tollgate_json::JsonObject;
        if level < self.minimum {
            return;
        }
        let mut params = JsonObject::builder().insert("level", level.as_str());
        if let Some(logger) = logger {
            params.push("logger", logger);
        }
        params.push("data", data);
        self.sink.notify("notifications/message", params.build());
    }
}
