//! Opaque access tokens through RFC 7662 introspection: [`Introspection`] configures the
//! authorization server's endpoint and this resource server's client credentials;
//! [`Introspector`] asks about one token and reads the answer strictly — `active` true, `iss`
//! (when given) exactly the issuer, `aud` naming this resource, `exp` required, `nbf` passed,
//! `sub` present. A discovered endpoint is looked up one attempt at a time, within the fetch
//! timeout, and not again for a while after an attempt failed. At most
//! [`max_concurrent_calls`](Introspection::max_concurrent_calls) calls are made at once; a
//! request that finds no place within [`CALL_PLACE_WAIT`] is answered as when the server
//! cannot be reached.
//!
//! Knows nothing of HTTP headers of the MCP request, scopes an operation needs, or the admission
//! decision.

use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tollgate_json::{JsonObject, JsonValue};

use crate::auth::fetch::{FetchError, Fetcher};
use crate::auth::jwks::discover;
use crate::auth::jwt::{seconds, unix_now};
use crate::auth::{RETRY_AFTER, Refused, Verified, claims_of};
use crate::policy::authorization::{ProtectedResource, Url};

/// The largest introspection answer read, in bytes.
const MAX_INTROSPECTION_BYTES: usize = 64 * 1024;
/// The longest time an introspection answer is trusted.
pub const MAX_INTROSPECTION_CACHE: Duration = Duration::from_secs(60);
/// The most introspection calls [`Introspection::max_concurrent_calls`] may allow at once.
pub const MAX_INTROSPECTION_CALLS: usize = 256;
/// How long a request waits for a place among the concurrent introspection calls before it is
/// answered 503, as when the authorization server cannot be reached.
pub const CALL_PLACE_WAIT: Duration = Duration::from_millis(100);
/// The least time between two discoveries of the introspection endpoint (after one failed):
/// what a 503 asks the client to wait.
const DISCOVERY_RETRY: Duration = RETRY_AFTER;

/// How opaque tokens are introspected (RFC 7662).
///
/// # Examples
///
/// ```
/// use tollgate::auth::Introspection;
///
/// let introspection = Introspection::new("https://auth.example.com")
///     .client_credentials("mcp-resource", "s3cret");
/// # let _ = introspection;
/// ```
#[derive(Clone)]
#[must_use]
pub struct Introspection {
    pub(crate) issuer: String,
    pub(crate) endpoint: Option<String>,
    pub(crate) client: Option<(String, String)>,
    pub(crate) cache: Duration,
    pub(crate) refusal_cache: Duration,
    pub(crate) max_calls: usize,
    pub(crate) timeout: Duration,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("issuer", &self.issuer)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Introspection {
    /// Tokens of `issuer` (one of the protected resource's authorization servers), whose
    /// `introspection_endpoint` is found through its metadata unless
    /// [`endpoint`](Self::endpoint) names it. An active answer is trusted for up to
    /// 30 seconds (never past the token's `exp`); each call may take 5 seconds, and so may
    /// discovering the endpoint (all metadata URLs together). After a discovery fails, none is
    /// tried for 5 seconds: requests meanwhile are answered 503 at once. A refused token is
    /// remembered for 30 seconds, and at most 16 calls are made at once.
    pub fn new(issuer: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            endpoint: None,
            client: None,
            cache: Duration::from_secs(30),
            refusal_cache: Duration::from_secs(30),
            max_calls: 16,
            timeout: Duration::from_secs(5),
        }
    }

    /// The introspection endpoint's URL (`https`; `http` only on loopback).
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// This resource server's client credentials, sent as HTTP Basic (`client_secret_basic`).
    pub fn client_credentials(mut self, id: impl Into<String>, secret: impl Into<String>) -> Self {
        self.client = Some((id.into(), secret.into()));
        self
    }

    /// How long an active answer is trusted (at most 60 seconds; zero asks every time).
    pub fn cache_for(mut self, duration: Duration) -> Self {
        self.cache = duration;
        self
    }

    /// How long a refused token (an answer that is not an active access token for this
    /// resource) is remembered and refused without asking again (default 30 seconds, at most
    /// 60; zero asks every time). At most [`MAX_REFUSED_TOKENS`](crate::auth::MAX_REFUSED_TOKENS)
    /// are remembered, by digest. Requests carrying the same token while it is being asked
    /// about share the one call, whatever this says.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tollgate::auth::Introspection;
    ///
    /// let introspection = Introspection::new("https://auth.example.com")
    ///     .refusal_cache_for(Duration::from_secs(10));
    /// # let _ = introspection;
    /// ```
    pub fn refusal_cache_for(mut self, duration: Duration) -> Self {
        self.refusal_cache = duration;
        self
    }

    /// The most introspection calls made at once (default 16, 1 to
    /// [`MAX_INTROSPECTION_CALLS`]). A request that finds none free within
    /// [`CALL_PLACE_WAIT`] (100 ms) is answered 503 with `Retry-After`, as when the
    /// authorization server cannot be reached: a flood of unknown tokens costs the
    /// authorization server at most this many calls at a time.
    ///
    /// ```
    /// use tollgate::auth::Introspection;
    ///
    /// let introspection = Introspection::new("https://auth.example.com").max_concurrent_calls(32);
    /// # let _ = introspection;
    /// ```
    pub fn max_concurrent_calls(mut self, calls: usize) -> Self {
        self.max_calls = calls;
        self
    }

    /// How long one call may take, and discovering the endpoint altogether (1 to 30 seconds).
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub(crate) fn problem(&self) -> Option<&'static str> {
        let secure =
            |u: &str| Url::parse(u).is_some_and(|u| u.scheme == "https" || u.is_loopback());
        if !secure(&self.issuer) {
            return Some("an introspection issuer must be an https URL (http only on loopback)");
        }
        if self.endpoint.as_deref().is_some_and(|e| !secure(e)) {
            return Some("an introspection endpoint must be an https URL (http only on loopback)");
        }
        if self.cache > MAX_INTROSPECTION_CACHE {
            return Some("introspection answers are trusted for at most 60 seconds");
        }
        if self.refusal_cache > MAX_INTROSPECTION_CACHE {
            return Some("refused tokens are remembered for at most 60 seconds");
        }
        if !(1..=MAX_INTROSPECTION_CALLS).contains(&self.max_calls) {
            return Some("introspection allows 1 to 256 concurrent calls");
        }
        if !(Duration::from_secs(1)..=Duration::from_secs(30)).contains(&self.timeout) {
            return Some("an authorization server fetch timeout is 1 to 30 seconds");
        }
        if let Some((id, secret)) = &self.client
            && (id.is_empty() || id.contains(':') || secret.is_empty())
        {
            return Some("introspection client credentials need an id without ':' and a secret");
        }
        None
    }
}

/// Asks one authorization server about tokens.
pub(crate) struct Introspector {
    config: Introspection,
    fetcher: Fetcher,
    basic: Option<String>,
    /// The introspection endpoint, once configured or discovered.
    endpoint: OnceLock<String>,
    /// When the last discovery failed: none is tried again before `DISCOVERY_RETRY` has
    /// passed.
    failed: Mutex<Option<Instant>>,
    /// One discovery at a time: requests arriving meanwhile wait for its outcome.
    discovering: tokio::sync::Mutex<()>,
    /// A place for each concurrent call.
    calls: tokio::sync::Semaphore,
}

impl Introspector {
    pub(crate) fn new(config: Introspection) -> Option<Self> {
        use base64::Engine as _;
        let fetcher = Fetcher::new(config.timeout, MAX_INTROSPECTION_BYTES)?;
        let basic = config.client.as_ref().map(|(id, secret)| {
            // RFC 6749 §2.3.1: each form-encoded before joining. The copies of the secret made
            // on the way are wiped.
            let secret = zeroize::Zeroizing::new(form_encode(secret));
            let pair = zeroize::Zeroizing::new(format!("{}:{}", form_encode(id), *secret));
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair.as_bytes())
            )
        });
        let config_calls = config.max_calls;
        let endpoint = OnceLock::new();
        if let Some(url) = &config.endpoint {
            let _ = endpoint.set(url.clone());
        }
        Some(Self {
            config,
            fetcher,
            basic,
            endpoint,
            failed: Mutex::new(None),
            discovering: tokio::sync::Mutex::new(()),
            calls: tokio::sync::Semaphore::new(config_calls),
        })
    }

    pub(crate) fn issuer(&self) -> &str {
        &self.config.issuer
    }

    /// The introspection endpoint: configured, found before, or discovered now. One discovery
    /// runs at a time, within the fetch timeout altogether, and requests arriving meanwhile wait
    /// for its outcome; after one fails, none is tried for `DISCOVERY_RETRY`, and every request
    /// meanwhile (those that waited on it included) is answered `Unreachable` at once.
    async fn endpoint(&self) -> Result<&str, FetchError> {
        if let Some(endpoint) = self.endpoint.get() {
            return Ok(endpoint);
        }
        if self.failed_lately() {
            return Err(FetchError::Unreachable);
        }
        let _one_at_a_time = self.discovering.lock().await;
        // The discovery this request waited for may have settled it.
        if let Some(endpoint) = self.endpoint.get() {
            return Ok(endpoint);
        }
        if self.failed_lately() {
            return Err(FetchError::Unreachable);
        }
        let lookup = discover(&self.fetcher, &self.config.issuer, "introspection_endpoint");
        match self.fetcher.bounded(lookup).await {
            Ok(found) => Ok(self.endpoint.get_or_init(|| found)),
            Err(error) => {
                *self.failures() = Some(Instant::now());
                Err(error)
            }
        }
    }

    fn failures(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        // One field store per update: a poisoned lock is still consistent.
        self.failed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a discovery failed less than `DISCOVERY_RETRY` ago.
    fn failed_lately(&self) -> bool {
        self.failures()
            .is_some_and(|at| at.elapsed() < DISCOVERY_RETRY)
    }

    /// Introspects `token`.
    pub(crate) async fn introspect(
        &self,
        token: &str,
        resource: &ProtectedResource,
    ) -> Result<Verified, Refused> {
        let unavailable = |_| Refused::Unavailable;
        let endpoint = self.endpoint().await.map_err(unavailable)?;
        let _place = tokio::time::timeout(CALL_PLACE_WAIT, self.calls.acquire())
            .await
            .map_err(|_| Refused::Unavailable)?
            .map_err(|_| Refused::Unavailable)?;
        let form = format!("token={}&token_type_hint=access_token", form_encode(token));
        let answer = self
            .fetcher
            .post_form(endpoint, self.basic.as_deref(), form)
            .await
            .map_err(unavailable)?;
        self.check(answer, resource)
    }

    fn check(&self, answer: JsonObject, resource: &ProtectedResource) -> Result<Verified, Refused> {
        if answer.get("active").and_then(JsonValue::as_bool) != Some(true) {
            return Err(Refused::Invalid);
        }
        // An access token only: an active refresh token is no credential for a resource.
        if answer
            .get("token_type")
            .and_then(JsonValue::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case("refresh_token"))
        {
            return Err(Refused::Invalid);
        }
        if let Some(iss) = answer.get("iss")
            && iss.as_str() != Some(self.config.issuer.as_str())
        {
            return Err(Refused::Invalid);
        }
        let audience = match answer.get("aud") {
            Some(JsonValue::String(one)) => resource.is_audience(one.as_str()),
            Some(JsonValue::Array(many)) if many.len() <= 16 => many
                .iter()
                .any(|a| a.as_str().is_some_and(|a| resource.is_audience(a))),
            _ => false,
        };
        if !audience {
            return Err(Refused::Invalid);
        }
        let now = unix_now();
        let expires = seconds(answer.get("exp")).ok_or(Refused::Invalid)?;
        if expires <= now {
            return Err(Refused::Invalid);
        }
        if let Some(nbf) = answer.get("nbf")
            && seconds(Some(nbf)).is_none_or(|at| at > now)
        {
            return Err(Refused::Invalid);
        }
        let until = UNIX_EPOCH
            .checked_add(Duration::from_secs(expires))
            .ok_or(Refused::Invalid)?;
        let until = until.min(SystemTime::now() + self.config.cache);
        claims_of(answer, &self.config.issuer, until)
    }
}

/// `application/x-www-form-urlencoded` encoding of one value.
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'*') {
            out.push(char::from(byte));
        } else if byte == b' ' {
            out.push('+');
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_values_are_encoded() {
        assert_eq!(form_encode("a b+c/=~"), "a+b%2Bc%2F%3D%7E");
        assert_eq!(form_encode("tok-1.2_3"), "tok-1.2_3");
    }

    #[test]
    fn configurations_are_checked() {
        assert!(Introspection::new("https://as.example").problem().is_none());
        assert!(Introspection::new("http://as.example").problem().is_some());
        assert!(Introspection::new("http://127.0.0.1:9").problem().is_none());
        let long = Introspection::new("https://as.example").cache_for(MAX_INTROSPECTION_CACHE);
        assert!(long.problem().is_none());
        let past = long.cache_for(MAX_INTROSPECTION_CACHE + Duration::from_secs(1));
        assert!(past.problem().is_some());
        let colon = Introspection::new("https://as.example").client_credentials("a:b", "s");
        assert!(colon.problem().is_some());
        let refusals =
            Introspection::new("https://as.example").refusal_cache_for(MAX_INTROSPECTION_CACHE);
        assert!(refusals.problem().is_none());
        let past = refusals.refusal_cache_for(MAX_INTROSPECTION_CACHE + Duration::from_secs(1));
        assert!(past.problem().is_some());
        let calls = |n| Introspection::new("https://as.example").max_concurrent_calls(n);
        assert!(calls(MAX_INTROSPECTION_CALLS).problem().is_none());
        assert!(calls(1).problem().is_none());
        assert!(calls(MAX_INTROSPECTION_CALLS + 1).problem().is_some());
        assert!(calls(0).problem().is_some());
    }
}
