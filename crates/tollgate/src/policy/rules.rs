//! Policy: who may make a request (admission) and how often (rate limits).
//!
//! Owns when an [`AdmissionController`] runs (its decision's shape is `policy/admission.rs`'s),
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

use crate::facts::context::{AdmissionIdentity, RequestContext};
#[cfg(test)]
use crate::policy::admission::AdmissionDecision;
use crate::policy::admission::{AdmissionController, AdmissionRequest, Decision};
use crate::policy::authorization::{ProtectedResource, Scopes};
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

    /// Gives back one token taken by [`acquire_key`](Self::acquire_key) (never past the
    /// capacity). A partition evicted meanwhile is left alone: it starts full when it returns.
    pub(crate) fn refund_key(&self, key: Option<&str>) {
        let now = Instant::now();
        let mut shard = self.shard(key);
        let Some(bucket) = shard.buckets.get_mut(&key.map(Arc::from)) else {
            return;
        };
        let tokens = (self.refilled(*bucket, now) + 1.0).min(self.capacity);
        *bucket = Bucket { tokens, at: now };
    }

    /// When the partition `key` has no token left, how long until it has one (takes nothing).
    #[cfg(test)]
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
    /// (429) before its credentials are looked at again. The token is taken before the
    /// controller runs and given back when it admits (or cannot decide), so a peer's
    /// concurrent requests reach the controller only as far as its tokens go.
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
///
/// The throttle is charged before the controller runs: a request takes one of its peer's tokens
/// (none left: 429 at once, the controller never asked), and the token is given back when the
/// controller admits, cannot decide (503) or fails. A refusal keeps it, and so does a request
/// that goes away while the controller decides (what it set off, an introspection call say,
/// was made): so a burst of concurrent requests with bad credentials from one peer reaches the
/// controller at most as many times as the peer has tokens, not once per request.
pub(crate) async fn admit(
    policy: &Policy,
    caller: Caller<'_>,
    context: &mut RequestContext,
) -> Result<(), Refusal> {
    if let Some(controller) = &policy.admission {
        // An IPv6 peer is keyed by its /64, the block one host usually holds.
        let peer = policy.refusals.as_ref().and(caller.peer).map(peer_key);
        let throttle = policy.refusals.as_deref().zip(peer.as_deref());
        if let Some((throttle, peer)) = throttle
            && let RateLimitDecision::Denied { retry_after } = throttle.acquire_key(Some(peer))
        {
            return Err(Refusal::RateLimited(retry_after));
        }
        let give_back = || {
            if let Some((throttle, peer)) = throttle {
                throttle.refund_key(Some(peer));
            }
        };
        let Some(decision) = decide(controller.as_ref(), context, caller.headers).await else {
            give_back();
            return Err(Refusal::Failed);
        };
        match decision {
            Decision::Admit(identity) => {
                give_back();
                context.admission = identity;
            }
            // Not the caller's fault: never charged to the refusal throttle.
            Decision::Unavailable(retry_after) => {
                give_back();
                return Err(Refusal::Unavailable(retry_after));
            }
            Decision::Unauthorized(challenge) => return Err(Refusal::Unauthorized(challenge)),
            Decision::Forbidden(challenge) => return Err(Refusal::Forbidden(challenge)),
            Decision::Malformed(challenge) => return Err(Refusal::Malformed(challenge)),
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
    peer_block(ip).to_string()
}

/// The block a peer is counted by (the refused-admission throttle here, the built-in server's
/// per-peer connection cap): its IPv4 address (an IPv4-mapped IPv6 one included), or its IPv6
/// /64, the block one host usually holds.
pub(crate) fn peer_block(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
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

    /// A controller that counts its calls and decides `answer` once the gate lets it.
    struct Gated {
        calls: std::sync::atomic::AtomicUsize,
        gate: tokio::sync::Semaphore,
        answer: fn() -> AdmissionDecision,
    }

    impl AdmissionController for Gated {
        fn admit<'a>(
            &'a self,
            _: &'a AdmissionRequest<'a>,
        ) -> crate::policy::admission::Admission<'a> {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            crate::policy::admission::Admission::pending(async move {
                let _ = self.gate.acquire().await.map(|p| p.forget());
                (self.answer)()
            })
        }
    }

    fn gated(answer: fn() -> AdmissionDecision, capacity: u32) -> (Policy, Arc<Gated>) {
        let controller = Arc::new(Gated {
            calls: 0.into(),
            gate: tokio::sync::Semaphore::new(0),
            answer,
        });
        let policy = Policy {
            admission: Some(controller.clone()),
            refusals: Some(Arc::new(
                TokenBucket::with_capacity(capacity).refill(1, Duration::from_secs(3600)),
            )),
            ..Policy::default()
        };
        (policy, controller)
    }

    fn context() -> RequestContext {
        RequestContext::for_test("tools/list", crate::version::ProtocolVersion::V2026_07_28)
    }

    const PEER: Caller<'static> = Caller {
        headers: None,
        peer: Some(IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 9))),
    };

    #[tokio::test]
    async fn concurrent_bad_credentials_reach_the_controller_only_as_far_as_the_tokens_go() {
        let calls = |c: &Gated| c.calls.load(std::sync::atomic::Ordering::SeqCst);
        let (policy, controller) = gated(AdmissionDecision::unauthorized, 2);
        let (mut one, mut two, mut three) = (context(), context(), context());
        // Two tokens: two requests at once reach the controller (at the bound); the third,
        // arriving while they are decided, is refused without it (one past).
        let (a, b, c) = tokio::join!(
            admit(&policy, PEER, &mut one),
            admit(&policy, PEER, &mut two),
            async {
                let third = admit(&policy, PEER, &mut three).await;
                assert_eq!(calls(&controller), 2);
                controller.gate.add_permits(2);
                third
            }
        );
        assert_eq!(a, Err(Refusal::Unauthorized(None)));
        assert_eq!(b, Err(Refusal::Unauthorized(None)));
        assert!(matches!(c, Err(Refusal::RateLimited(_))), "{c:?}");
        // Refusals keep their tokens: the peer is throttled from now on.
        assert!(matches!(
            admit(&policy, PEER, &mut one).await,
            Err(Refusal::RateLimited(_))
        ));
        assert_eq!(calls(&controller), 2);

        // A request that goes away while the controller decides keeps its token too.
        let (policy, controller) = gated(AdmissionDecision::unauthorized, 1);
        let gone =
            tokio::time::timeout(Duration::from_millis(1), admit(&policy, PEER, &mut one)).await;
        assert!(gone.is_err());
        assert!(matches!(
            admit(&policy, PEER, &mut one).await,
            Err(Refusal::RateLimited(_))
        ));
        assert_eq!(calls(&controller), 1);
    }

    #[tokio::test]
    async fn admitted_and_undecided_requests_give_their_token_back() {
        for answer in [
            (|| AdmissionDecision::admit(AdmissionIdentity::principal("p")))
                as fn() -> AdmissionDecision,
            || AdmissionDecision::unavailable(Duration::from_secs(5)),
        ] {
            let (policy, controller) = gated(answer, 1);
            controller.gate.add_permits(100);
            // One token, given back each time: any number of requests in turn.
            for _ in 0..5 {
                let outcome = admit(&policy, PEER, &mut context()).await;
                assert!(
                    matches!(outcome, Ok(()) | Err(Refusal::Unavailable(_))),
                    "{outcome:?}"
                );
            }
            assert_eq!(
                controller.calls.load(std::sync::atomic::Ordering::SeqCst),
                5
            );
        }
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
