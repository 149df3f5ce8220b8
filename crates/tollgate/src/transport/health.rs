//! Liveness and readiness on the built-in server: two fixed paths answered before the MCP
//! service (no Host or Origin check, no admission, no body read), each with a fixed body that
//! echoes nothing of the request. Liveness answers 200 while the process serves; readiness
//! answers 200 when the endpoints' task, session and replay stores answer their `ping`, and 503
//! while draining for shutdown or after more consecutive failed probes than tolerated.
//!
//! Owns the paths, the probe's cache and its tolerance. Knows the service only to find its
//! stores; knows nothing of JSON-RPC or revisions.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};
use tokio::time::Instant;

use crate::transport::service::{McpBody, McpService};
use crate::wire::log::HEALTH;
use crate::wire::unwind::BoxFuture;

/// The default liveness path.
///
/// # Examples
///
/// ```
/// assert_eq!(tollgate::transport::DEFAULT_LIVENESS_PATH, "/healthz");
/// ```
pub const DEFAULT_LIVENESS_PATH: &str = "/healthz";

/// The default readiness path.
///
/// # Examples
///
/// ```
/// assert_eq!(tollgate::transport::DEFAULT_READINESS_PATH, "/readyz");
/// ```
pub const DEFAULT_READINESS_PATH: &str = "/readyz";

/// How long a readiness probe's result is kept by default: 2 s. Callers in that time get the
/// kept answer, so they cannot load the stores through the path.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// assert_eq!(tollgate::transport::DEFAULT_READINESS_INTERVAL, Duration::from_secs(2));
/// ```
pub const DEFAULT_READINESS_INTERVAL: Duration = Duration::from_secs(2);

/// How long one store's `ping` may take by default before it counts as failed: 2 s.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// assert_eq!(tollgate::transport::DEFAULT_PROBE_TIMEOUT, Duration::from_secs(2));
/// ```
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest probe timeout and readiness interval accepted: 60 s (a longer one is cut to it).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// assert_eq!(tollgate::transport::MAX_PROBE_DURATION, Duration::from_secs(60));
/// ```
pub const MAX_PROBE_DURATION: Duration = Duration::from_secs(60);

/// How many consecutive failed probes readiness tolerates by default (still ready): 1, so one
/// blip does not take every instance out at once.
///
/// # Examples
///
/// ```
/// assert_eq!(tollgate::transport::DEFAULT_TOLERATED_PROBE_FAILURES, 1);
/// ```
pub const DEFAULT_TOLERATED_PROBE_FAILURES: u32 = 1;

/// The most consecutive failed probes that can be tolerated: 10 (more is cut to it).
///
/// # Examples
///
/// ```
/// assert_eq!(tollgate::transport::MAX_TOLERATED_PROBE_FAILURES, 10);
/// ```
pub const MAX_TOLERATED_PROBE_FAILURES: u32 = 10;

/// The built-in server's liveness and readiness paths
/// ([`Server::health`](crate::Server::health)). On by default at [`DEFAULT_LIVENESS_PATH`] and
/// [`DEFAULT_READINESS_PATH`]. Clones share their state: keep one to mark the server draining
/// before a shutdown (a Kubernetes `preStop`), so load balancers stop sending first.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tollgate::transport::Health;
///
/// let health = Health::new()
///     .liveness_path(Some("/livez"))
///     .readiness_interval(Duration::from_secs(5));
/// // On SIGTERM: /readyz answers 503 from now on; then shut the server down.
/// health.mark_draining();
/// assert!(health.is_draining());
/// ```
#[derive(Clone, Debug)]
pub struct Health {
    liveness: Option<Arc<str>>,
    readiness: Option<Arc<str>>,
    interval: Duration,
    probe_timeout: Duration,
    tolerated: u32,
    state: Arc<State>,
}

#[derive(Debug, Default)]
struct State {
    draining: AtomicBool,
    probed: tokio::sync::Mutex<Probed>,
}

#[derive(Debug, Default)]
struct Probed {
    at: Option<Instant>,
    failures: u32,
}

impl Default for Health {
    fn default() -> Self {
        Self::new()
    }
}

impl Health {
    /// The defaults: liveness at `/healthz`, readiness at `/readyz`, a probe kept for 2 s,
    /// each store's `ping` bounded by 2 s, one failed probe tolerated.
    pub fn new() -> Self {
        Self {
            liveness: Some(DEFAULT_LIVENESS_PATH.into()),
            readiness: Some(DEFAULT_READINESS_PATH.into()),
            interval: DEFAULT_READINESS_INTERVAL,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            tolerated: DEFAULT_TOLERATED_PROBE_FAILURES,
            state: Arc::default(),
        }
    }

    /// Neither path: every request goes to the MCP service.
    pub fn disabled() -> Self {
        Self::new().liveness_path(None).readiness_path(None)
    }

    /// The liveness path (default `/healthz`; `None`: none). Use a path no endpoint serves.
    #[must_use]
    pub fn liveness_path(mut self, path: Option<&str>) -> Self {
        self.liveness = path.map(Into::into);
        self
    }

    /// The readiness path (default `/readyz`; `None`: none).
    #[must_use]
    pub fn readiness_path(mut self, path: Option<&str>) -> Self {
        self.readiness = path.map(Into::into);
        self
    }

    /// How long a probe's result is kept (default 2 s, at most [`MAX_PROBE_DURATION`]; zero
    /// probes on every request).
    #[must_use]
    pub fn readiness_interval(mut self, interval: Duration) -> Self {
        self.interval = interval.min(MAX_PROBE_DURATION);
        self
    }

    /// How long one store's `ping` may take before it counts as failed (default 2 s, at most
    /// [`MAX_PROBE_DURATION`]).
    #[must_use]
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout.min(MAX_PROBE_DURATION);
        self
    }

    /// How many consecutive failed probes still answer ready (default 1, at most
    /// [`MAX_TOLERATED_PROBE_FAILURES`]; zero: the first failure answers 503).
    #[must_use]
    pub fn tolerated_probe_failures(mut self, n: u32) -> Self {
        self.tolerated = n.min(MAX_TOLERATED_PROBE_FAILURES);
        self
    }

    /// Readiness answers 503 from now on (the server also marks it when its shutdown begins).
    pub fn mark_draining(&self) {
        self.state.draining.store(true, Ordering::Release);
    }

    /// Whether the server is draining.
    pub fn is_draining(&self) -> bool {
        self.state.draining.load(Ordering::Acquire)
    }

    /// The probe a request path asks for, if any (one length check per configured path on the
    /// request path of every other request).
    #[inline]
    pub(crate) fn route(&self, path: &str) -> Option<Probe> {
        if self.liveness.as_deref() == Some(path) {
            Some(Probe::Liveness)
        } else if self.readiness.as_deref() == Some(path) {
            Some(Probe::Readiness)
        } else {
            None
        }
    }

    /// The answer to `probe`.
    pub(crate) fn answer(&self, probe: Probe, service: &McpService) -> BoxFuture<'static, Reply> {
        let health = self.clone();
        let service = service.clone();
        Box::pin(async move {
            let ready = match probe {
                Probe::Liveness => true,
                Probe::Readiness => health.ready(&service).await,
            };
            Ok(fixed(ready))
        })
    }

    /// Whether the server is ready: not draining, and the last probe (made now if the kept one
    /// is older than the interval) within the tolerated failures.
    async fn ready(&self, service: &McpService) -> bool {
        if self.is_draining() {
            return false;
        }
        // One probe at a time: callers meanwhile wait for it and read its result.
        let mut probed = self.state.probed.lock().await;
        let now = Instant::now();
        let fresh = probed
            .at
            .is_some_and(|at| now.saturating_duration_since(at) < self.interval);
        if !fresh {
            let ok = self.probe(service).await;
            let before = probed.failures;
            probed.failures = if ok { 0 } else { before.saturating_add(1) };
            probed.at = Some(Instant::now());
            let failures = probed.failures;
            if !ok {
                tracing::warn!(target: HEALTH, failures, "readiness probe failed");
            } else if before > 0 {
                tracing::info!(target: HEALTH, "readiness probe passed again");
            }
        }
        probed.failures <= self.tolerated && !self.is_draining()
    }

    /// Pings every store of every endpoint, each within the probe timeout.
    async fn probe(&self, service: &McpService) -> bool {
        for endpoint in service.endpoints() {
            let inner = &endpoint.inner;
            if let Some(tasks) = &inner.tasks {
                let ping = tasks.store.ping();
                if !self.within(async { ping.await.is_ok() }).await {
                    return false;
                }
            }
            for table in [&inner.sessions, &inner.cluster].into_iter().flatten() {
                if let Some(store) = table.shared_store() {
                    let ping = store.ping();
                    if !self.within(async { ping.await.is_ok() }).await {
                        return false;
                    }
                }
            }
            if let Some(single_use) = &inner.single_use {
                let ping = single_use.store().ping();
                if !self.within(async { ping.await.is_ok() }).await {
                    return false;
                }
            }
        }
        true
    }

    async fn within(&self, ping: impl Future<Output = bool>) -> bool {
        tokio::time::timeout(self.probe_timeout, ping)
            .await
            .unwrap_or(false)
    }
}

/// What a probe path asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    Liveness,
    Readiness,
}

type Reply = Result<Response<McpBody>, Infallible>;

/// The fixed answer: 200 `ok` or 503 `unavailable`, plain text, never cached.
fn fixed(ready: bool) -> Response<McpBody> {
    let (status, text): (_, &'static [u8]) = if ready {
        (StatusCode::OK, b"ok\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, b"unavailable\n")
    };
    let mut response = Response::new(McpBody::full(Bytes::from_static(text)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

pin_project_lite::pin_project! {
    /// A connection's answer: the MCP service's, or a probe's.
    #[project = RoutedProject]
    pub(crate) enum Routed<F> {
        Mcp { #[pin] answer: F },
        Probe { answer: BoxFuture<'static, Reply> },
    }
}

impl<F: Future<Output = Reply>> Future for Routed<F> {
    type Output = Reply;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        match self.project() {
            RoutedProject::Mcp { answer } => answer.poll(cx),
            RoutedProject::Probe { answer } => answer.as_mut().poll(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::sync::atomic::AtomicU32;

    use super::*;
    use crate::tasks::store::{InMemoryTaskStore, StoreFuture, TaskRow, TaskStore};
    use crate::tasks::store::{TaskStoreError, TaskStoreErrorKind};
    use crate::version::ProtocolVersion;
    use crate::{Endpoint, Implementation};

    /// A task store whose `ping` fails while `down` is set, or takes `delay`; it counts pings.
    #[derive(Default)]
    struct Probed {
        rows: InMemoryTaskStore,
        down: AtomicBool,
        delay: std::sync::Mutex<Duration>,
        pings: AtomicU32,
    }

    impl TaskStore for Probed {
        fn insert(&self, row: TaskRow) -> StoreFuture<'_, ()> {
            self.rows.insert(row)
        }
        fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRow>> {
            self.rows.load(id)
        }
        fn replace(&self, row: TaskRow, expected: u64) -> StoreFuture<'_, bool> {
            self.rows.replace(row, expected)
        }
        fn purge_expired(&self, now_ms: u64) -> StoreFuture<'_, u64> {
            self.rows.purge_expired(now_ms)
        }
        fn ping(&self) -> StoreFuture<'_, ()> {
            self.pings.fetch_add(1, Ordering::SeqCst);
            let down = self.down.load(Ordering::SeqCst);
            let delay = *self.delay.lock().unwrap();
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                if down {
                    Err(TaskStoreError::new(TaskStoreErrorKind::Backend))
                } else {
                    Ok(())
                }
            })
        }
    }

    fn service(store: &Arc<Probed>) -> McpService {
        let endpoint = Endpoint::with_path(
            "/mcp",
            [ProtocolVersion::V2026_07_28],
            Implementation::new("health", "1"),
        )
        .task_store(Arc::clone(store))
        .build()
        .unwrap();
        McpService::new(endpoint)
    }

    #[tokio::test(start_paused = true)]
    async fn one_failed_probe_is_tolerated_and_the_next_is_not() {
        let store = Arc::new(Probed::default());
        let service = service(&store);
        let health = Health::new().readiness_interval(Duration::ZERO);
        assert!(health.ready(&service).await);
        store.down.store(true, Ordering::SeqCst);
        assert!(
            health.ready(&service).await,
            "one failure: at the tolerance"
        );
        assert!(!health.ready(&service).await, "two: one past it");
        store.down.store(false, Ordering::SeqCst);
        assert!(
            health.ready(&service).await,
            "a passing probe clears the failures"
        );
        assert_eq!(store.pings.load(Ordering::SeqCst), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn with_no_failure_tolerated_the_first_failed_probe_is_unready() {
        let store = Arc::new(Probed::default());
        store.down.store(true, Ordering::SeqCst);
        let service = service(&store);
        let health = Health::new()
            .readiness_interval(Duration::ZERO)
            .tolerated_probe_failures(0);
        assert!(!health.ready(&service).await);
    }

    #[tokio::test(start_paused = true)]
    async fn a_probe_is_kept_for_the_interval_and_made_again_at_its_end() {
        let store = Arc::new(Probed::default());
        let service = service(&store);
        let health = Health::new();
        assert!(health.ready(&service).await);
        assert_eq!(store.pings.load(Ordering::SeqCst), 1);
        tokio::time::advance(DEFAULT_READINESS_INTERVAL - Duration::from_millis(1)).await;
        assert!(health.ready(&service).await);
        assert_eq!(
            store.pings.load(Ordering::SeqCst),
            1,
            "kept, within the interval"
        );
        tokio::time::advance(Duration::from_millis(1)).await;
        assert!(health.ready(&service).await);
        assert_eq!(
            store.pings.load(Ordering::SeqCst),
            2,
            "probed again at its end"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_ping_past_the_probe_timeout_fails_and_one_within_passes() {
        let store = Arc::new(Probed::default());
        let service = service(&store);
        let health = Health::new()
            .readiness_interval(Duration::ZERO)
            .tolerated_probe_failures(0);
        *store.delay.lock().unwrap() = DEFAULT_PROBE_TIMEOUT - Duration::from_millis(1);
        assert!(health.ready(&service).await, "within the timeout");
        *store.delay.lock().unwrap() = DEFAULT_PROBE_TIMEOUT + Duration::from_millis(1);
        assert!(!health.ready(&service).await, "past it");
    }

    #[tokio::test(start_paused = true)]
    async fn draining_is_unready_without_a_probe() {
        let store = Arc::new(Probed::default());
        let service = service(&store);
        let health = Health::new();
        let kept = health.clone();
        kept.mark_draining();
        assert!(health.is_draining());
        assert!(!health.ready(&service).await);
        assert_eq!(store.pings.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn the_paths_route_exactly_and_can_be_turned_off() {
        let health = Health::new();
        assert_eq!(health.route("/healthz"), Some(Probe::Liveness));
        assert_eq!(health.route("/readyz"), Some(Probe::Readiness));
        assert_eq!(health.route("/healthz/"), None);
        assert_eq!(health.route("/mcp"), None);
        let off = Health::disabled();
        assert_eq!(off.route("/healthz"), None);
        assert_eq!(off.route("/readyz"), None);
    }

    #[test]
    fn the_settings_are_bounded() {
        let at = Health::new()
            .readiness_interval(MAX_PROBE_DURATION)
            .probe_timeout(MAX_PROBE_DURATION)
            .tolerated_probe_failures(MAX_TOLERATED_PROBE_FAILURES);
        assert_eq!(at.interval, MAX_PROBE_DURATION);
        assert_eq!(at.probe_timeout, MAX_PROBE_DURATION);
        assert_eq!(at.tolerated, MAX_TOLERATED_PROBE_FAILURES);
        let past = Health::new()
            .readiness_interval(MAX_PROBE_DURATION + Duration::from_nanos(1))
            .probe_timeout(MAX_PROBE_DURATION + Duration::from_nanos(1))
            .tolerated_probe_failures(MAX_TOLERATED_PROBE_FAILURES + 1);
        assert_eq!(past.interval, MAX_PROBE_DURATION);
        assert_eq!(past.probe_timeout, MAX_PROBE_DURATION);
        assert_eq!(past.tolerated, MAX_TOLERATED_PROBE_FAILURES);
    }
}
