//! Policy: who may make a request (admission) and how often (rate limits).
//!
//! Owns when an [`AdmissionController`] runs (its decision's shape is `facts/admission.rs`'s),
//! [`RateLimiter`] and the built-in
//! [`TokenBucket`], the throttle on refused admissions, and the order they run in: the refusal
//! throttle and admission, then the endpoint's request limiter ([`admit`], for every request and
//! notification, before anything looks at the endpoint's state), then, once a tool is known,
//! its limiter ([`charge_tool`]); and how a refusal is answered ([`refusal_reply`], with the
//! fixed faults of `wire`). Knows nothing of JSON-RPC framing beyond that: the request pipeline
//! and the tool-call handler call these stages.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::BuildHasher;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use http::{HeaderMap, HeaderValue, StatusCode};

#[cfg(test)]
use crate::facts::admission::AdmissionDecision;
use crate::facts::admission::{AdmissionController, AdmissionRequest, Decision};
use crate::facts::authorization::{ProtectedResource, Scopes};
use crate::facts::context::{AdmissionIdentity, RequestContext};
use crate::wire::fault::Fault;
use crate::wire::reply::{Reply, fail};
use crate::wire::unwind::CatchUnwind;

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
/// minute). At most `max_partitions` buckets are kept (default 100,000), in 16 shards each with
/// a lock of its own; a shard that is full evicts its oldest partition to make room, so a
/// newcomer is never refused because the table is full and no request scans the table.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tollgate::{policy::{AdmissionIdentity, RateLimitDecision, RateLimiter, TokenBucket}};
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
    shards: Box<[Mutex<Shard>]>,
    hasher: std::collections::hash_map::RandomState,
}

const SHARDS: usize = 16;

/// One shard: its buckets and the order they were made in (oldest first), for eviction.
#[derive(Default)]
struct Shard {
    buckets: HashMap<Option<Arc<str>>, Bucket>,
    order: VecDeque<Option<Arc<str>>>,
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
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            hasher: std::collections::hash_map::RandomState::new(),
        }
    }

    /// Refills `tokens` (at least 1) every `interval` (at least 1 ms), continuously.
    #[must_use]
    pub fn refill(mut self, tokens: u32, interval: Duration) -> Self {
        let interval = interval.max(Duration::from_millis(1)).as_secs_f64();
        self.per_second = f64::from(tokens.max(1)) / interval;
        self
    }

    /// The most partitions (principals) kept at once (at least 1; spread over the shards, each
    /// keeping at least one). Past it the oldest partition of a shard is evicted.
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
        Duration::try_from_secs_f64(((1.0 - tokens) / self.per_second).max(0.001))
            .unwrap_or(Duration::MAX)
    }

    fn shard(&self, key: Option<&str>) -> std::sync::MutexGuard<'_, Shard> {
        // Keyed per limiter, so which partitions share a shard cannot be predicted.
        let index = usize::try_from(self.hasher.hash_one(key) % SHARDS as u64).unwrap_or(0);
        // Every update is a single insert, removal or field store: a poisoned shard is still
        // consistent.
        self.shards[index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn per_shard(&self) -> usize {
        self.max_partitions.div_ceil(SHARDS).max(1)
    }

    /// Takes a token from the partition `key` (a principal, or anonymous), making the partition
    /// (full) when it is new.
    pub(crate) fn acquire_key(&self, key: Option<&str>) -> RateLimitDecision {
        let now = Instant::now();
        let mut shard = self.shard(key);
        let owned = key.map(Arc::from);
        if !shard.buckets.contains_key(&owned) {
            while shard.buckets.len() >= self.per_shard() {
                let Some(oldest) = shard.order.pop_front() else {
                    break;
                };
                shard.buckets.remove(&oldest);
            }
            shard.buckets.insert(
                owned.clone(),
                Bucket {
                    tokens: self.capacity,
                    at: now,
                },
            );
            shard.order.push_back(owned.clone());
        }
        let Some(bucket) = shard.buckets.get_mut(&owned) else {
            return RateLimitDecision::Denied {
                retry_after: self.retry_after(0.0),
            };
        };
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

    /// When the partition `key` has no token left, how long until it has one (takes nothing).
    pub(crate) fn exhausted(&self, key: Option<&str>) -> Option<Duration> {
        let now = Instant::now();
        let shard = self.shard(key);
        let bucket = shard.buckets.get(&key.map(Arc::from))?;
        let tokens = self.refilled(*bucket, now);
        (tokens < 1.0).then(|| self.retry_after(tokens))
    }

    #[cfg(test)]
    fn partitions(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                s.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .buckets
                    .len()
            })
            .sum()
    }
}

impl RateLimiter for TokenBucket {
    fn try_acquire(&self, identity: &AdmissionIdentity) -> RateLimitDecision {
        self.acquire_key(identity.principal_name())
    }
}

/// An endpoint's policy: its controller and limiters.
#[derive(Clone, Default)]
pub(crate) struct Policy {
    pub(crate) admission: Option<Arc<dyn AdmissionController>>,
    pub(crate) request_limiter: Option<Arc<dyn RateLimiter>>,
    pub(crate) tool_limiter: Option<Arc<dyn RateLimiter>>,
    pub(crate) named: HashMap<Arc<str>, Arc<dyn RateLimiter>>,
    /// Charged once per refused admission, by peer address; a peer out of tokens is refused
    /// (429) before its credentials are looked at again.
    pub(crate) refusals: Option<Arc<TokenBucket>>,
    /// The protected resource the endpoint is (MCP authorization), for scope challenges.
    pub(crate) protected: Option<ProtectedResource>,
}

/// Why [`admit`] or [`charge_tool`] refused a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    Unauthorized(Option<HeaderValue>),
    Forbidden(Option<HeaderValue>),
    /// Malformed credentials (400), with their challenge.
    Malformed(Option<HeaderValue>),
    /// The controller cannot decide now (503).
    Unavailable(Duration),
    RateLimited(Duration),
    /// The controller panicked: refused, as an internal error.
    Failed,
}

/// Who is asking, as far as the transport knows: the request's headers (HTTP only) and the
/// peer's address (when the server knows it).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Caller<'a> {
    pub(crate) headers: Option<&'a HeaderMap>,
    pub(crate) peer: Option<IpAddr>,
}

/// The first stage of policy, for every request: the refusal throttle, admission, then the
/// endpoint's request limiter. On success the context carries the admitted identity.
pub(crate) async fn admit(
    policy: &Policy,
    caller: Caller<'_>,
    context: &mut RequestContext,
) -> Result<(), Refusal> {
    if let Some(controller) = &policy.admission {
        // A peer that was refused too often waits before its credentials are tried again. An
        // IPv6 peer is keyed by its /64, the block one host usually holds.
        let peer = policy.refusals.as_ref().and(caller.peer).map(peer_key);
        let throttle = policy.refusals.as_deref().zip(peer.as_deref());
        if let Some(retry_after) = throttle.and_then(|(t, p)| t.exhausted(Some(p))) {
            return Err(Refusal::RateLimited(retry_after));
        }
        let decision = decide(controller.as_ref(), context, caller.headers)
            .await
            .ok_or(Refusal::Failed)?;
        let refusal = match decision {
            Decision::Admit(identity) => {
                context.admission = identity;
                None
            }
            Decision::Unauthorized(challenge) => Some(Refusal::Unauthorized(challenge)),
            Decision::Forbidden(challenge) => Some(Refusal::Forbidden(challenge)),
            Decision::Malformed(challenge) => Some(Refusal::Malformed(challenge)),
            // Not the caller's fault: never charged to the refusal throttle.
            Decision::Unavailable(retry_after) => return Err(Refusal::Unavailable(retry_after)),
        };
        if let Some(refusal) = refusal {
            if let Some((throttle, peer)) = throttle {
                let _ = throttle.acquire_key(Some(peer));
            }
            return Err(refusal);
        }
    }
    if let Some(limiter) = &policy.request_limiter {
        charge(limiter.as_ref(), &context.admission)?;
    }
    Ok(())
}

/// Runs the controller, its panics (while deciding or while its future runs) caught as `None`.
async fn decide(
    controller: &dyn AdmissionController,
    context: &RequestContext,
    headers: Option<&HeaderMap>,
) -> Option<Decision> {
    let request = AdmissionRequest { context, headers };
    let started =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| controller.admit(&request)))
            .ok()?;
    CatchUnwind(Box::pin(started)).await.map(|d| d.0)
}

/// The throttle's partition for a peer: its IPv4 address, or its IPv6 /64.
fn peer_key(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

/// The operation stage of policy, for a tool call once its tool is known: the tool's named
/// limiter, else the endpoint's tool limiter.
pub(crate) fn charge_tool(
    policy: &Policy,
    context: &RequestContext,
    named: Option<&str>,
) -> Result<(), Refusal> {
    let limiter = match named {
        Some(name) => policy.named.get(name),
        None => policy.tool_limiter.as_ref(),
    };
    match limiter {
        Some(limiter) => charge(limiter.as_ref(), &context.admission),
        None => Ok(()),
    }
}

/// The scope stage, once an operation is known: the admitted identity holds every scope the
/// operation requires (granted, or implied by a granted scope), else 403 with the
/// `insufficient_scope` challenge asking for them.
pub(crate) fn check_scopes(
    policy: &Policy,
    context: &RequestContext,
    required: &Scopes,
) -> Result<(), Refusal> {
    if required.is_empty() {
        return Ok(());
    }
    // The endpoint refuses to build scoped operations without a protected resource.
    let Some(resource) = &policy.protected else {
        return Err(Refusal::Forbidden(None));
    };
    match resource.missing(&context.admission, required) {
        None => Ok(()),
        Some(challenge) => Err(Refusal::Forbidden(Some(challenge))),
    }
}

fn charge(limiter: &dyn RateLimiter, identity: &AdmissionIdentity) -> Result<(), Refusal> {
    match limiter.try_acquire(identity) {
        RateLimitDecision::Allowed => Ok(()),
        RateLimitDecision::Denied { retry_after } => Err(Refusal::RateLimited(retry_after)),
    }
}

/// `Retry-After` in whole seconds, rounded up.
fn retry_after_header(retry_after: Duration) -> (http::HeaderName, HeaderValue) {
    let seconds = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
    (http::header::RETRY_AFTER, HeaderValue::from(seconds))
}

/// A policy refusal as its fixed reply, with `WWW-Authenticate` or `Retry-After` where it has
/// one. A notification gets the status and header alone.
pub(crate) fn refusal_reply(context: &RequestContext, refusal: Refusal) -> Reply {
    let (revision, id) = (context.protocol_version, context.request_id.as_ref());
    let (fault, extra) = match refusal {
        Refusal::Unauthorized(challenge) => (
            Fault::Unauthorized,
            challenge.map(|c| (http::header::WWW_AUTHENTICATE, c)),
        ),
        Refusal::Forbidden(challenge) => (
            Fault::Forbidden,
            challenge.map(|c| (http::header::WWW_AUTHENTICATE, c)),
        ),
        Refusal::Malformed(challenge) => (
            Fault::InvalidRequest,
            challenge.map(|c| (http::header::WWW_AUTHENTICATE, c)),
        ),
        Refusal::Unavailable(retry_after) => (Fault::Busy, Some(retry_after_header(retry_after))),
        Refusal::RateLimited(retry_after) => {
            (Fault::RateLimited, Some(retry_after_header(retry_after)))
        }
        Refusal::Failed => (Fault::Internal, None),
    };
    let mut reply = match id {
        Some(_) => fail(revision, id, fault, None),
        // Notifications, stream `GET`s, session `DELETE`s and client responses have no id to
        // answer: the status alone.
        None => Reply::empty(match fault {
            // A broken controller is a server error, never a success status.
            Fault::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            _ => fault.status(),
        }),
    };
    reply.extra = extra;
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_refill_and_full_tables_evict_the_oldest() {
        let limiter = TokenBucket::with_capacity(1)
            .refill(1, Duration::from_millis(50))
            .max_partitions(1);
        let id = |n: &str| AdmissionIdentity::principal(n);
        assert_eq!(limiter.try_acquire(&id("a")), RateLimitDecision::Allowed);
        let RateLimitDecision::Denied { retry_after } = limiter.try_acquire(&id("a")) else {
            unreachable!("the bucket is empty");
        };
        assert!(retry_after <= Duration::from_millis(50));
        // One partition per shard at most: newcomers are never refused for room.
        for n in 0..200 {
            assert_eq!(
                limiter.try_acquire(&id(&format!("p{n}"))),
                RateLimitDecision::Allowed
            );
        }
        assert!(limiter.partitions() <= SHARDS, "{}", limiter.partitions());
        assert_eq!(
            limiter.try_acquire(&AdmissionIdentity::anonymous()),
            RateLimitDecision::Allowed
        );
    }

    #[test]
    fn the_partition_bound_at_and_past() {
        let limiter = TokenBucket::with_capacity(1).max_partitions(SHARDS * 4);
        for n in 0..SHARDS * 64 {
            let _ = limiter.try_acquire(&AdmissionIdentity::principal(format!("p{n}")));
        }
        assert!(limiter.partitions() <= SHARDS * 4);
        // A drained partition is still drained while it is kept.
        let a = AdmissionIdentity::principal("kept");
        assert_eq!(limiter.try_acquire(&a), RateLimitDecision::Allowed);
        assert!(limiter.exhausted(Some("kept")).is_some());
        assert!(matches!(
            limiter.try_acquire(&a),
            RateLimitDecision::Denied { .. }
        ));
    }

    #[tokio::test]
    async fn refused_admissions_are_throttled_per_peer() {
        let policy = Policy {
            admission: Some(Arc::new(|_: &AdmissionRequest<'_>| {
                AdmissionDecision::unauthorized()
            })),
            refusals: Some(Arc::new(
                TokenBucket::with_capacity(2).refill(1, Duration::from_secs(3600)),
            )),
            ..Policy::default()
        };
        let mut context =
            RequestContext::for_test("tools/list", crate::version::ProtocolVersion::V2026_07_28);
        let peer = |last: u8| Caller {
            headers: None,
            peer: Some(IpAddr::from([10, 0, 0, last])),
        };
        assert_eq!(
            admit(&policy, peer(1), &mut context).await,
            Err(Refusal::Unauthorized(None))
        );
        assert_eq!(
            admit(&policy, peer(1), &mut context).await,
            Err(Refusal::Unauthorized(None))
        );
        // The third refusal from that peer is throttled before the controller runs.
        assert!(matches!(
            admit(&policy, peer(1), &mut context).await,
            Err(Refusal::RateLimited(_))
        ));
        // Another peer, and a caller with no known address, are not.
        assert_eq!(
            admit(&policy, peer(2), &mut context).await,
            Err(Refusal::Unauthorized(None))
        );
        for _ in 0..5 {
            assert_eq!(
                admit(&policy, Caller::default(), &mut context).await,
                Err(Refusal::Unauthorized(None))
            );
        }
        // Two addresses of one IPv6 /64 share a bucket.
        let v6 = |last: u16| Caller {
            headers: None,
            peer: Some(IpAddr::from([0x2001, 0xdb8, 1, 2, 0, 0, 0, last])),
        };
        let _ = admit(&policy, v6(1), &mut context).await;
        let _ = admit(&policy, v6(2), &mut context).await;
        assert!(matches!(
            admit(&policy, v6(3), &mut context).await,
            Err(Refusal::RateLimited(_))
        ));
    }
}
