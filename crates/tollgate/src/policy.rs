//! Policy: who may make a request (admission) and how often (rate limits).
//!
//! Owns [`AdmissionController`] and its decision, [`RateLimiter`] and the built-in
//! [`TokenBucket`], and the order they run in: admission, then the endpoint's request limiter,
//! then (for `tools/call`) the tool's limiter. Knows nothing of JSON-RPC framing; the protocol
//! paths call [`police`](crate::policy) once a request is validated far enough to describe
//! itself, and render its refusals with the fixed codes of `fault.rs`.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use http::{HeaderMap, HeaderValue};

use crate::context::{AdmissionIdentity, RequestContext};

/// What admission sees of a request: its validated context (operation, method, operation name,
/// revision, informational client information, `_meta`) and, over HTTP, its headers.
///
/// # Examples
///
/// ```
/// use tollgate::{AdmissionDecision, AdmissionIdentity, AdmissionRequest};
///
/// // Admit callers presenting the right API key, under that key's principal.
/// fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
///     match request.header("x-api-key") {
///         Some("k-123") => AdmissionDecision::admit(AdmissionIdentity::principal("team-a")),
///         Some(_) => AdmissionDecision::forbidden(),
///         None => AdmissionDecision::unauthorized(),
///     }
/// }
/// # let _ = admit;
/// ```
pub struct AdmissionRequest<'a> {
    context: &'a RequestContext,
    headers: Option<&'a HeaderMap>,
}

impl fmt::Debug for AdmissionRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdmissionRequest")
            .field("method", &self.context.json_rpc_method())
            .finish_non_exhaustive()
    }
}

impl<'a> AdmissionRequest<'a> {
    /// The validated request (its admission identity is still anonymous here).
    pub fn context(&self) -> &'a RequestContext {
        self.context
    }

    /// A request header's value, when the request came over HTTP and carries it exactly once as
    /// visible ASCII. Over stdio there are no headers: the process's owner is the caller.
    pub fn header(&self, name: &str) -> Option<&'a str> {
        let headers = self.headers?;
        let mut values = headers.get_all(name).iter();
        let first = values.next()?;
        if values.next().is_some() {
            return None;
        }
        first.to_str().ok()
    }

    /// Whether the request came over HTTP.
    pub fn is_http(&self) -> bool {
        self.headers.is_some()
    }
}

/// An admission controller's answer.
///
/// # Examples
///
/// ```
/// use tollgate::{AdmissionDecision, AdmissionIdentity};
///
/// let ok = AdmissionDecision::admit(AdmissionIdentity::principal("alice"));
/// assert!(ok.is_admitted());
/// let challenge = AdmissionDecision::unauthorized_with_challenge(r#"Bearer realm="mcp""#);
/// assert!(!challenge.is_admitted());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionDecision(pub(crate) Decision);

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Admit(AdmissionIdentity),
    Unauthorized(Option<HeaderValue>),
    Forbidden,
}

impl AdmissionDecision {
    /// Admits the request under `identity` (handlers see it in
    /// [`RequestContext::admission_identity`]).
    pub fn admit(identity: AdmissionIdentity) -> Self {
        Self(Decision::Admit(identity))
    }

    /// Refuses an unauthenticated caller: HTTP 401, JSON-RPC -32001 `Unauthorized`.
    pub fn unauthorized() -> Self {
        Self(Decision::Unauthorized(None))
    }

    /// As [`unauthorized`](Self::unauthorized), with a `WWW-Authenticate` challenge (for
    /// example the OAuth resource-metadata pointer MCP authorization uses). A challenge that is
    /// not a valid header value is left out.
    pub fn unauthorized_with_challenge(challenge: &str) -> Self {
        Self(Decision::Unauthorized(
            HeaderValue::from_str(challenge).ok(),
        ))
    }

    /// Refuses an authenticated caller that may not do this: HTTP 403, JSON-RPC -32003
    /// `Forbidden`.
    pub fn forbidden() -> Self {
        Self(Decision::Forbidden)
    }

    /// Whether the request is admitted.
    pub fn is_admitted(&self) -> bool {
        matches!(self.0, Decision::Admit(_))
    }
}

/// Decides whether a validated request may proceed, and under which identity. Runs for every
/// request before any catalog is rendered or handler runs (for `tools/call`, after the tool's
/// required client capabilities are checked). A panicking controller refuses the request.
///
/// Any `Fn(&AdmissionRequest<'_>) -> AdmissionDecision` is a controller.
pub trait AdmissionController: Send + Sync + 'static {
    /// Decides.
    fn admit(&self, request: &AdmissionRequest<'_>) -> AdmissionDecision;
}

impl<F> AdmissionController for F
where
    F: Fn(&AdmissionRequest<'_>) -> AdmissionDecision + Send + Sync + 'static,
{
    fn admit(&self, request: &AdmissionRequest<'_>) -> AdmissionDecision {
        self(request)
    }
}

/// A rate limiter's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateLimitDecision {
    /// The request may proceed (a token was taken).
    Allowed,
    /// The request is refused; the caller may retry after the given time.
    Denied {
        /// When a token will be available again.
        retry_after: Duration,
    },
}

/// Charges requests to the admitted identity's partition. Denial is HTTP 429 with
/// `Retry-After`, JSON-RPC -31999 `Rate limit exceeded`.
pub trait RateLimiter: Send + Sync + 'static {
    /// Takes one token from `identity`'s partition, or refuses.
    fn try_acquire(&self, identity: &AdmissionIdentity) -> RateLimitDecision;
}

/// A token bucket per admitted principal (anonymous callers share one bucket): `capacity`
/// tokens, refilled continuously at `refill_tokens` per `refill_interval` (default 60 per
/// minute). At most `max_partitions` buckets are kept (default 100,000); when full, buckets
/// that have refilled completely are dropped first, and if none has, a new partition is refused
/// rather than let memory grow.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tollgate::{AdmissionIdentity, RateLimitDecision, RateLimiter, TokenBucket};
///
/// let limiter = TokenBucket::with_capacity(2).refill(1, Duration::from_secs(10));
/// let alice = AdmissionIdentity::principal("alice");
/// assert_eq!(limiter.try_acquire(&alice), RateLimitDecision::Allowed);
/// assert_eq!(limiter.try_acquire(&alice), RateLimitDecision::Allowed);
/// assert!(matches!(limiter.try_acquire(&alice), RateLimitDecision::Denied { .. }));
/// // Another principal has a bucket of its own.
/// assert_eq!(limiter.try_acquire(&AdmissionIdentity::principal("bob")), RateLimitDecision::Allowed);
/// ```
pub struct TokenBucket {
    capacity: f64,
    per_second: f64,
    max_partitions: usize,
    buckets: Mutex<HashMap<Option<Arc<str>>, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl fmt::Debug for TokenBucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenBucket")
            .field("capacity", &self.capacity)
            .field("per_second", &self.per_second)
            .finish_non_exhaustive()
    }
}

impl TokenBucket {
    /// A bucket of `capacity` tokens (at least 1), refilled at 60 per minute.
    pub fn with_capacity(capacity: u32) -> Self {
        Self {
            capacity: f64::from(capacity.max(1)),
            per_second: 1.0,
            max_partitions: 100_000,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Refills `tokens` (at least 1) every `interval` (at least 1 ms), continuously.
    #[must_use]
    pub fn refill(mut self, tokens: u32, interval: Duration) -> Self {
        let interval = interval.max(Duration::from_millis(1)).as_secs_f64();
        self.per_second = f64::from(tokens.max(1)) / interval;
        self
    }

    /// The most partitions (principals) kept at once (at least 1).
    #[must_use]
    pub fn max_partitions(mut self, n: usize) -> Self {
        self.max_partitions = n.max(1);
        self
    }

    fn refilled(&self, bucket: Bucket, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        (bucket.tokens + elapsed * self.per_second).min(self.capacity)
    }

    fn retry_after(&self, tokens: f64) -> Duration {
        Duration::from_secs_f64(((1.0 - tokens) / self.per_second).max(0.001))
    }
}

impl RateLimiter for TokenBucket {
    fn try_acquire(&self, identity: &AdmissionIdentity) -> RateLimitDecision {
        let now = Instant::now();
        // Every update is a single insert or field store: a poisoned map is still consistent.
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let key = identity.principal_name().map(Arc::from);
        if !buckets.contains_key(&key) && buckets.len() >= self.max_partitions {
            buckets.retain(|_, b| self.refilled(*b, now) < self.capacity);
            if buckets.len() >= self.max_partitions {
                return RateLimitDecision::Denied {
                    retry_after: self.retry_after(0.0),
                };
            }
        }
        let bucket = buckets.entry(key).or_insert(Bucket {
            tokens: self.capacity,
            at: now,
        });
        let tokens = self.refilled(*bucket, now);
        if tokens >= 1.0 {
            *bucket = Bucket {
                tokens: tokens - 1.0,
                at: now,
            };
            RateLimitDecision::Allowed
        } else {
            *bucket = Bucket { tokens, at: now };
            RateLimitDecision::Denied {
                retry_after: self.retry_after(tokens),
            }
        }
    }
}

/// An endpoint's policy: its controller and limiters.
#[derive(Clone, Default)]
pub(crate) struct Policy {
    pub(crate) admission: Option<Arc<dyn AdmissionController>>,
    pub(crate) request_limiter: Option<Arc<dyn RateLimiter>>,
    pub(crate) tool_limiter: Option<Arc<dyn RateLimiter>>,
    pub(crate) named: HashMap<Arc<str>, Arc<dyn RateLimiter>>,
}

/// Why [`police`] refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    Unauthorized(Option<HeaderValue>),
    Forbidden,
    RateLimited(Duration),
    /// The controller panicked: refused, as an internal error.
    Failed,
}

/// Admission, then the request limiter, then (for a tool call) the tool's limiter, resolved as
/// the tool's named limiter or the endpoint's tool limiter. On success the context carries the
/// admitted identity.
pub(crate) fn police(
    policy: &Policy,
    headers: Option<&HeaderMap>,
    context: &mut RequestContext,
    tool_limiter: Option<Option<&str>>,
) -> Result<(), Refusal> {
    if let Some(controller) = &policy.admission {
        let request = AdmissionRequest { context, headers };
        let decision =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| controller.admit(&request)))
                .map_err(|_| Refusal::Failed)?;
        match decision.0 {
            Decision::Admit(identity) => context.admission = identity,
            Decision::Unauthorized(challenge) => return Err(Refusal::Unauthorized(challenge)),
            Decision::Forbidden => return Err(Refusal::Forbidden),
        }
    }
    let charge = |limiter: &Arc<dyn RateLimiter>| match limiter.try_acquire(&context.admission) {
        RateLimitDecision::Allowed => Ok(()),
        RateLimitDecision::Denied { retry_after } => Err(Refusal::RateLimited(retry_after)),
    };
    if let Some(limiter) = &policy.request_limiter {
        charge(limiter)?;
    }
    if let Some(name) = tool_limiter {
        let limiter = match name {
            Some(name) => policy.named.get(name),
            None => policy.tool_limiter.as_ref(),
        };
        if let Some(limiter) = limiter {
            charge(limiter)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_refill_and_are_bounded() {
        let limiter = TokenBucket::with_capacity(1)
            .refill(1, Duration::from_millis(50))
            .max_partitions(2);
        let id = |n: &str| AdmissionIdentity::principal(n);
        assert_eq!(limiter.try_acquire(&id("a")), RateLimitDecision::Allowed);
        let RateLimitDecision::Denied { retry_after } = limiter.try_acquire(&id("a")) else {
            unreachable!("the bucket is empty");
        };
        assert!(retry_after <= Duration::from_millis(50));
        assert_eq!(limiter.try_acquire(&id("b")), RateLimitDecision::Allowed);
        // Two partitions kept, both drained: a third principal is refused, not stored.
        assert!(matches!(
            limiter.try_acquire(&id("c")),
            RateLimitDecision::Denied { .. }
        ));
        std::thread::sleep(Duration::from_millis(60));
        // Refilled buckets give way.
        assert_eq!(limiter.try_acquire(&id("c")), RateLimitDecision::Allowed);
        assert_eq!(
            limiter.try_acquire(&AdmissionIdentity::anonymous()),
            RateLimitDecision::Allowed
        );
    }
}
