//! An authorization server's signing keys: the JWK Set read into verification keys
//! ([`KeySet`]), and the cache that fetches it ([`KeySource`]): discovered from the issuer's
//! metadata (RFC 8414, then OpenID Connect discovery) unless configured, kept until its expiry,
//! refreshed once when a token names a key it lacks (no more often than the refresh interval,
//! counted from when a fetch starts), one fetch at a time however many requests wait, each fetch
//! (discovery included) within the fetch timeout altogether and run as a task of its own that no
//! departing request cancels or undoes, and still used for a while after it expires when the
//! server cannot be reached.
//!
//! Knows nothing of tokens beyond a key id and an algorithm.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jsonwebtoken::DecodingKey;
use tokio::sync::watch;
use tollgate_json::{JsonObject, JsonValue};

use crate::auth::fetch::{FetchError, Fetcher};
use crate::auth::{SigningAlgorithm, b64};
use crate::policy::authorization::Url;

/// The most keys a JWK Set may hold (a larger one is refused whole).
pub const MAX_JWKS_KEYS: usize = 64;
/// The largest JWK Set or metadata document read, in bytes.
pub const MAX_JWKS_BYTES: usize = 256 * 1024;
/// The longest key id, in bytes.
const MAX_KID_BYTES: usize = 256;

/// One verification key.
pub(crate) struct Key {
    kid: Option<Box<str>>,
    /// The algorithms this key may verify (its family and curve, narrowed by its `alg`).
    algorithms: Vec<SigningAlgorithm>,
    pub(crate) key: DecodingKey,
}

/// A JWK Set's usable signature keys. Keys for other uses, of other types (symmetric `oct`
/// keys among them: never HMAC) or with unsupported parameters are left out.
#[derive(Default)]
pub(crate) struct KeySet {
    keys: Vec<Key>,
}

/// What a key lookup found.
pub(crate) enum Lookup<'a> {
    Found(&'a Key),
    /// No key by that id fits the algorithm.
    Unknown,
    /// Several keys fit: refused rather than guessed.
    Ambiguous,
}

impl KeySet {
    /// Reads a JWK Set document. `None` when it is not one (no `keys` array, more than 64
    /// entries, an entry that is not an object).
    pub(crate) fn from_document(document: &JsonObject) -> Option<Self> {
        let keys = document.get("keys")?.as_array()?;
        if keys.len() > MAX_JWKS_KEYS {
            return None;
        }
        let mut set = Self::default();
        for entry in keys.iter() {
            if let Some(key) = read_key(entry.as_object()?) {
                set.keys.push(key);
            }
        }
        Some(set)
    }

    /// The key for a token's `kid` (or, without one, the only key fitting) and algorithm.
    pub(crate) fn find(&self, kid: Option<&str>, algorithm: SigningAlgorithm) -> Lookup<'_> {
        let mut fitting = self.keys.iter().filter(|k| {
            k.algorithms.contains(&algorithm) && (kid.is_none() || k.kid.as_deref() == kid)
        });
        match (fitting.next(), fitting.next()) {
            (Some(key), None) => Lookup::Found(key),
            (None, _) => Lookup::Unknown,
            (Some(_), Some(_)) => Lookup::Ambiguous,
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }
}

fn text<'a>(jwk: &'a JsonObject, name: &str) -> Option<&'a str> {
    jwk.get(name).and_then(JsonValue::as_str)
}

/// One JWK as a verification key, or `None` when it is not a usable signature key.
fn read_key(jwk: &JsonObject) -> Option<Key> {
    if text(jwk, "use").is_some_and(|u| u != "sig") {
        return None;
    }
    if let Some(ops) = jwk.get("key_ops") {
        let verifies = ops
            .as_array()
            .is_some_and(|ops| ops.iter().any(|o| o.as_str() == Some("verify")));
        if !verifies {
            return None;
        }
    }
    let kid = match jwk.get("kid") {
        None => None,
        Some(JsonValue::String(kid)) if (1..=MAX_KID_BYTES).contains(&kid.as_str().len()) => {
            Some(Box::from(kid.as_str()))
        }
        Some(_) => return None,
    };
    let named = match jwk.get("alg") {
        None => None,
        Some(alg) => Some(SigningAlgorithm::from_name(alg.as_str()?)?),
    };
    let (family, key) = match text(jwk, "kty")? {
        "RSA" => {
            let n = b64(text(jwk, "n")?)?;
            let e = b64(text(jwk, "e")?)?;
            let bits = n.iter().skip_while(|b| **b == 0).count() * 8;
            // At least 2,048 bits (RFC 7518 §3.3), at most 8,192; a small odd exponent.
            if !(2_048..=8_192).contains(&bits) || e.is_empty() || e.len() > 8 {
                return None;
            }
            (Family::Rsa, DecodingKey::from_rsa_raw_components(&n, &e))
        }
        "EC" => {
            let (family, size) = match text(jwk, "crv")? {
                "P-256" => (Family::P256, 32),
                "P-384" => (Family::P384, 48),
                _ => return None,
            };
            let (x, y) = (text(jwk, "x")?, text(jwk, "y")?);
            if b64(x)?.len() != size || b64(y)?.len() != size {
                return None;
            }
            (family, DecodingKey::from_ec_components(x, y).ok()?)
        }
        "OKP" => {
            if text(jwk, "crv")? != "Ed25519" {
                return None;
            }
            let x = text(jwk, "x")?;
            if b64(x)?.len() != 32 {
                return None;
            }
            (Family::Ed25519, DecodingKey::from_ed_components(x).ok()?)
        }
        // `oct` (a shared secret: never a verification key here) and anything else.
        _ => return None,
    };
    let algorithms: Vec<SigningAlgorithm> = SigningAlgorithm::ALL
        .iter()
        .copied()
        .filter(|a| a.family() == family && named.is_none_or(|n| n == *a))
        .collect();
    if algorithms.is_empty() {
        return None;
    }
    Some(Key {
        kid,
        algorithms,
        key,
    })
}

/// A key type and curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    Rsa,
    P256,
    P384,
    Ed25519,
}

/// Where the key set comes from.
#[derive(Clone, Debug)]
pub(crate) enum Origin {
    /// The issuer's metadata names it (`jwks_uri`).
    Discover {
        issuer: String,
    },
    Configured(String),
}

/// The cache's timings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timing {
    /// How long a fetched set is fresh when its answer says nothing.
    pub(crate) ttl: Duration,
    /// The least time between two fetches (for an unknown key id, or after a failure).
    pub(crate) min_refresh: Duration,
    /// How long past its expiry a set is still used while fetching fails.
    pub(crate) stale_grace: Duration,
}

/// Why no key could be had.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyError {
    /// No set could be fetched (and none is held, or it is past its grace).
    Unavailable,
}

struct Held {
    set: Arc<KeySet>,
    fetched: Instant,
}

#[derive(Default)]
struct State {
    held: Option<Held>,
    jwks_uri: Option<String>,
    /// When the last fetch started (successful or not). Set as a fetch starts and never put
    /// back: the refresh interval runs from it whatever becomes of the requests that waited.
    attempted: Option<Instant>,
    /// The fetch under way, if one is: it turns `true` when the fetch has settled.
    fetching: Option<watch::Receiver<bool>>,
}

/// What a fetch task shares with the requests that wait on it.
struct Shared {
    origin: Origin,
    timing: Timing,
    fetcher: Fetcher,
    state: Mutex<State>,
}

/// The cached key set of one issuer.
pub(crate) struct KeySource {
    shared: Arc<Shared>,
}

impl KeySource {
    pub(crate) fn new(origin: Origin, timing: Timing, fetcher: Fetcher) -> Self {
        let jwks_uri = match &origin {
            Origin::Configured(uri) => Some(uri.clone()),
            Origin::Discover { .. } => None,
        };
        Self {
            shared: Arc::new(Shared {
                origin,
                timing,
                fetcher,
                state: Mutex::new(State {
                    jwks_uri,
                    ..State::default()
                }),
            }),
        }
    }

    #[cfg(test)]
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.lock()
    }

    /// The set to verify with: the held one, refreshed first when it is stale, or when
    /// `want_new` (a token named a key it lacks) and the refresh interval allows.
    ///
    /// A fetch runs as a task of its own, started by the request that found it due and awaited
    /// by every request arriving while it runs: a request that goes away (its client
    /// disconnected) stops waiting, not the fetch, and the attempt it started still counts, so
    /// no second fetch starts inside the refresh interval however requests come and go.
    pub(crate) async fn keys(&self, want_new: bool) -> Result<Arc<KeySet>, KeyError> {
        let mut settled = {
            let mut state = self.shared.lock();
            let (held, due) = self.shared.snapshot(&state, want_new);
            match (&state.fetching, held) {
                // Fresh, and no newer set wanted: no need to wait for anything.
                (_, Some(set)) if !due && !want_new && self.shared.fresh(&state) => {
                    return Ok(set);
                }
                // A fetch under way (the first, as a burst of requests arrives, or a refresh):
                // wait for its outcome.
                (Some(fetching), _) => fetching.clone(),
                (None, held) if !due => return held.ok_or(KeyError::Unavailable),
                (None, _) => {
                    state.attempted = Some(Instant::now());
                    let (done, settled) = watch::channel(false);
                    state.fetching = Some(settled.clone());
                    tokio::spawn(Shared::fetch_task(self.shared.clone(), done));
                    settled
                }
            }
        };
        // Settled, or its task gone (the runtime shutting down): either way, what is held now.
        let _ = settled.wait_for(|done| *done).await;
        let state = self.shared.lock();
        self.shared
            .snapshot(&state, false)
            .0
            .ok_or(KeyError::Unavailable)
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every update is one field store: a poisoned lock is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the held set is younger than its time to live.
    fn fresh(&self, state: &State) -> bool {
        state
            .held
            .as_ref()
            .is_some_and(|h| h.fetched.elapsed() < self.timing.ttl)
    }

    /// The held set, if usable (fresh, or stale within its grace); whether a fetch is due
    /// (stale, none, or `want_new`, and the refresh interval has passed since the last one
    /// started).
    fn snapshot(&self, state: &State, want_new: bool) -> (Option<Arc<KeySet>>, bool) {
        let now = Instant::now();
        let may_fetch = state
            .attempted
            .is_none_or(|at| now.saturating_duration_since(at) >= self.timing.min_refresh);
        match &state.held {
            Some(held) => {
                let age = now.saturating_duration_since(held.fetched);
                let fresh = age < self.timing.ttl;
                let usable = age < self.timing.ttl.saturating_add(self.timing.stale_grace);
                let due = (!fresh || want_new) && may_fetch;
                (usable.then(|| held.set.clone()), due)
            }
            None => (None, may_fetch),
        }
    }

    /// One fetch, detached from the request that started it: discovery and the set together
    /// within one fetch timeout (however many metadata URLs are tried), the documented bound of
    /// a request waiting on keys. Its end is announced however it comes (the task dropped
    /// included), so no request waits on a fetch that is gone.
    async fn fetch_task(shared: Arc<Self>, done: watch::Sender<bool>) {
        let settle = Settle {
            shared: &shared,
            done,
        };
        if let Ok(set) = shared.fetcher.bounded(shared.fetch()).await {
            shared.lock().held = Some(Held {
                set: Arc::new(set),
                fetched: Instant::now(),
            });
        }
        drop(settle);
    }

    async fn fetch(&self) -> Result<KeySet, FetchError> {
        let known = self.lock().jwks_uri.clone();
        let uri = match known {
            Some(uri) => uri,
            None => {
                let Origin::Discover { issuer } = &self.origin else {
                    return Err(FetchError::Unusable);
                };
                let uri = discover(&self.fetcher, issuer, "jwks_uri").await?;
                self.lock().jwks_uri = Some(uri.clone());
                uri
            }
        };
        let document = self.fetcher.get(&uri).await?;
        KeySet::from_document(&document).ok_or(FetchError::Unusable)
    }
}

/// The end of a fetch task: the fetch is no longer under way, and its waiters are told. The
/// attempt time stays as the fetch set it.
struct Settle<'a> {
    shared: &'a Shared,
    done: watch::Sender<bool>,
}

impl Drop for Settle<'_> {
    fn drop(&mut self) {
        self.shared.lock().fetching = None;
        self.done.send_replace(true);
    }
}

/// The metadata URLs of an issuer, in the order tried: RFC 8414's path-inserted
/// `oauth-authorization-server`, OpenID Connect's path-inserted form, then its appended form.
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let Some(url) = Url::parse(issuer) else {
        return Vec::new();
    };
    let path = url.path.strip_suffix('/').unwrap_or(&url.path);
    let origin = url.origin();
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    urls
}

/// An endpoint the issuer's metadata names (`member`: `jwks_uri`, `introspection_endpoint`):
/// the first metadata document found whose `issuer` is exactly `issuer` (RFC 8414 §3.3) and
/// whose `member` is an `https` URL (`http` on loopback).
pub(crate) async fn discover(
    fetcher: &Fetcher,
    issuer: &str,
    member: &str,
) -> Result<String, FetchError> {
    let mut outcome = FetchError::Unusable;
    for url in metadata_urls(issuer) {
        match fetcher.get(&url).await {
            Ok(document) => {
                if text(&document, "issuer") != Some(issuer) {
                    return Err(FetchError::Unusable);
                }
                let endpoint = text(&document, member).filter(|u| {
                    Url::parse(u).is_some_and(|u| u.scheme == "https" || u.is_loopback())
                });
                return endpoint.map(str::to_owned).ok_or(FetchError::Unusable);
            }
            Err(FetchError::Unreachable) => outcome = FetchError::Unreachable,
            Err(FetchError::Unusable) => {}
        }
    }
    Err(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate_json::JsonLimits;

    fn set(json: &str) -> Option<KeySet> {
        let value = tollgate_json::from_str(json, &JsonLimits::new()).ok()?;
        KeySet::from_document(value.as_object()?)
    }

    const EC_X: &str = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
    const EC_Y: &str = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";

    #[test]
    fn only_signature_keys_of_known_types_are_kept() {
        let doc = format!(
            r#"{{"keys":[
            {{"kty":"oct","k":"c2VjcmV0","kid":"hmac"}},
            {{"kty":"EC","crv":"P-256","x":"{EC_X}","y":"{EC_Y}","kid":"ec"}},
            {{"kty":"EC","crv":"P-256","x":"{EC_X}","y":"{EC_Y}","kid":"enc","use":"enc"}},
            {{"kty":"EC","crv":"P-256","x":"{EC_X}","y":"{EC_Y}","kid":"rsa-alg","alg":"RS256"}},
            {{"kty":"EC","crv":"P-521","x":"{EC_X}","y":"{EC_Y}","kid":"p521"}},
            {{"kty":"RSA","n":"AQAB","e":"AQAB","kid":"short"}}
            ]}}"#
        );
        let keys = set(&doc).unwrap();
        assert_eq!(keys.len(), 1);
        assert!(matches!(
            keys.find(Some("ec"), SigningAlgorithm::Es256),
            Lookup::Found(_)
        ));
        assert!(matches!(
            keys.find(Some("ec"), SigningAlgorithm::Es384),
            Lookup::Unknown
        ));
        assert!(matches!(
            keys.find(Some("hmac"), SigningAlgorithm::Es256),
            Lookup::Unknown
        ));
        assert!(matches!(
            keys.find(None, SigningAlgorithm::Es256),
            Lookup::Found(_)
        ));
    }

    #[test]
    fn sets_are_bounded() {
        let one = format!(r#"{{"kty":"EC","crv":"P-256","x":"{EC_X}","y":"{EC_Y}"}}"#);
        let at = vec![one.as_str(); MAX_JWKS_KEYS].join(",");
        let keys = set(&format!(r#"{{"keys":[{at}]}}"#)).unwrap();
        // Several keys without ids fit: a token must name one.
        assert!(matches!(
            keys.find(None, SigningAlgorithm::Es256),
            Lookup::Ambiguous
        ));
        let past = vec![one.as_str(); MAX_JWKS_KEYS + 1].join(",");
        assert!(set(&format!(r#"{{"keys":[{past}]}}"#)).is_none());
        assert!(set(r#"{"keys":{}}"#).is_none());
        assert!(set(r#"{"keys":[1]}"#).is_none());
    }

    /// A key server on loopback: counts connections, answers each with a one-key set, and
    /// holds its answer on the first until `release` is notified.
    async fn key_server() -> (
        std::net::SocketAddr,
        Arc<std::sync::atomic::AtomicUsize>,
        Arc<tokio::sync::Notify>,
    ) {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let release = Arc::new(tokio::sync::Notify::new());
        let (count, held) = (connections.clone(), release.clone());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let first = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
                let held = held.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    if first {
                        held.notified().await;
                    }
                    let body = format!(
                        r#"{{"keys":[{{"kty":"EC","crv":"P-256","x":"{EC_X}","y":"{EC_Y}","kid":"k1"}}]}}"#
                    );
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = socket.write_all(answer.as_bytes()).await;
                });
            }
        });
        (addr, connections, release)
    }

    #[tokio::test]
    async fn a_fetch_abandoned_by_its_requests_runs_on_and_holds_off_the_next() {
        let (addr, connections, release) = key_server().await;
        let fetches = || connections.load(std::sync::atomic::Ordering::SeqCst);
        let timing = Timing {
            ttl: Duration::from_secs(300),
            min_refresh: Duration::from_secs(60),
            stale_grace: Duration::from_secs(3600),
        };
        let fetcher = Fetcher::new(Duration::from_secs(30), 1 << 16).unwrap();
        let source = KeySource::new(
            Origin::Configured(format!("http://{addr}/jwks")),
            timing,
            fetcher,
        );
        // The request that starts the first fetch goes away (its client disconnected) while
        // the key server holds its answer.
        let gone = tokio::time::timeout(Duration::from_millis(50), source.keys(false)).await;
        assert!(gone.is_err());
        for _ in 0..1000 {
            if fetches() == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(fetches(), 1);
        // Its attempt is not given back: the fetch is still under way, and a request naming an
        // unknown key (which may fetch once the refresh interval allows) waits for it rather
        // than starting another; it goes away too.
        let started = source.lock().attempted;
        assert!(started.is_some());
        let gone = tokio::time::timeout(Duration::from_millis(50), source.keys(true)).await;
        assert!(gone.is_err());
        assert_eq!((fetches(), source.lock().attempted), (1, started));
        // The fetch, abandoned by every request that waited, still completes and is kept.
        release.notify_one();
        let keys = source.keys(false).await.map_err(|_| "no keys").unwrap();
        assert_eq!(keys.len(), 1);
        // Inside the refresh interval, an unknown key id makes no second fetch.
        for _ in 0..5 {
            assert!(source.keys(true).await.is_ok());
        }
        assert_eq!((fetches(), source.lock().attempted), (1, started));
        assert!(source.lock().fetching.is_none());
    }

    #[test]
    fn metadata_urls_insert_the_well_known_path() {
        assert_eq!(
            metadata_urls("https://as.example/tenant/1"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant/1",
                "https://as.example/.well-known/openid-configuration/tenant/1",
                "https://as.example/tenant/1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            metadata_urls("http://127.0.0.1:9000"),
            [
                "http://127.0.0.1:9000/.well-known/oauth-authorization-server",
                "http://127.0.0.1:9000/.well-known/openid-configuration",
            ]
        );
    }
}
