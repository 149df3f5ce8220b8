//! JWT access tokens (RFC 9068) of one issuer: [`JwtValidation`] configures them, [`JwtVerifier`]
//! checks one — compact JWS with an allowed asymmetric algorithm and the `at+jwt` type, no
//! critical extensions, a key from the issuer's JWK Set (refreshed once for an unknown key
//! id), then `iss` exactly, `aud` naming this resource (RFC 8707), `exp` required and `nbf`/`iat`
//! within the leeway, `sub` present. The signature is checked by `jsonwebtoken`; the header and
//! claims are read by `tollgate-json`.
//!
//! Knows nothing of HTTP headers, scopes an operation needs, or the admission decision.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tollgate_json::{JsonObject, JsonValue};

use crate::auth::fetch::Fetcher;
use crate::auth::jwks::{KeyError, KeySource, Lookup, MAX_JWKS_BYTES, Origin, Timing};
use crate::auth::{Refused, SigningAlgorithm, Verified, b64, claims_of};
use crate::policy::authorization::{ProtectedResource, Url};

/// The largest leeway for `exp`, `nbf` and `iat`.
pub const MAX_LEEWAY: Duration = Duration::from_secs(300);
/// The largest decoded JWS header, in bytes.
const MAX_HEADER_BYTES: usize = 2 * 1024;

/// How one issuer's JWT access tokens are checked.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tollgate::auth::{JwtValidation, SigningAlgorithm};
///
/// let jwt = JwtValidation::new("https://auth.example.com")
///     .algorithms([SigningAlgorithm::Es256, SigningAlgorithm::Rs256])
///     .leeway(Duration::from_secs(10));
/// # let _ = jwt;
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct JwtValidation {
    pub(crate) issuer: String,
    pub(crate) jwks_uri: Option<String>,
    pub(crate) algorithms: Vec<SigningAlgorithm>,
    pub(crate) leeway: Duration,
    pub(crate) plain_jwt_type: bool,
    pub(crate) timing: Timing,
    pub(crate) timeout: Duration,
}

impl JwtValidation {
    /// Tokens issued by `issuer` (exactly the `iss` they carry, and one of the protected
    /// resource's authorization servers). Its key set is found through its metadata (RFC 8414,
    /// then OpenID Connect discovery) unless [`jwks_uri`](Self::jwks_uri) names it. By default:
    /// RS256, PS256 and ES256, 30 s of leeway, the key set fresh for 10 minutes and refetched
    /// at most once a minute, 5 s for each fetch.
    pub fn new(issuer: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            jwks_uri: None,
            algorithms: vec![
                SigningAlgorithm::Rs256,
                SigningAlgorithm::Ps256,
                SigningAlgorithm::Es256,
            ],
            leeway: Duration::from_secs(30),
            plain_jwt_type: false,
            timing: Timing {
                ttl: Duration::from_secs(600),
                min_refresh: Duration::from_secs(60),
                stale_grace: Duration::from_secs(3_600),
            },
            timeout: Duration::from_secs(5),
        }
    }

    /// The JWK Set's URL, instead of discovering it (`https`; `http` only on loopback).
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// The algorithms a token may be signed with (replacing the default). HMAC and `none` are
    /// not among them: a resource server holds no shared secret.
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = SigningAlgorithm>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self.algorithms.dedup();
        self
    }

    /// Clock skew allowed on `exp`, `nbf` and `iat` (at most 5 minutes).
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Also accepts tokens typed `JWT` or untyped, for authorization servers that do not type
    /// their access tokens `at+jwt` (RFC 9068 §2.1). Off by default.
    pub fn accept_plain_jwt_type(mut self, accept: bool) -> Self {
        self.plain_jwt_type = accept;
        self
    }

    /// How long a fetched key set is used before it is fetched again, and the least time
    /// between two fetches (for a token naming an unknown key, or after a failure).
    pub fn jwks_cache(mut self, ttl: Duration, min_refresh: Duration) -> Self {
        self.timing.ttl = ttl;
        self.timing.min_refresh = min_refresh;
        self
    }

    /// How long one fetch from the authorization server may take (1 to 30 seconds).
    pub fn fetch_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Why this configuration cannot be used, if it cannot.
    pub(crate) fn problem(&self) -> Option<&'static str> {
        if Url::parse(&self.issuer).is_none_or(|u| u.scheme != "https" && !u.is_loopback()) {
            return Some("a JWT issuer must be an https URL (http only on loopback)");
        }
        if let Some(uri) = &self.jwks_uri
            && Url::parse(uri).is_none_or(|u| u.scheme != "https" && !u.is_loopback())
        {
            return Some("a JWKS URI must be an https URL (http only on loopback)");
        }
        if self.algorithms.is_empty() {
            return Some("a JWT validation needs at least one algorithm");
        }
        if self.leeway > MAX_LEEWAY {
            return Some("JWT leeway is at most 300 seconds");
        }
        if !(Duration::from_secs(1)..=Duration::from_secs(30)).contains(&self.timeout) {
            return Some("an authorization server fetch timeout is 1 to 30 seconds");
        }
        if self.timing.min_refresh < Duration::from_secs(1)
            || self.timing.min_refresh > self.timing.ttl
        {
            return Some(
                "a JWKS refresh interval is at least 1 second and no longer than the cache lifetime",
            );
        }
        None
    }
}

/// A compact JWS split and its header read.
pub(crate) struct Parts<'t> {
    message: &'t str,
    signature: &'t str,
    algorithm: SigningAlgorithm,
    kid: Option<String>,
    pub(crate) claims: JsonObject,
}

/// Splits `token` and reads its header and claims, or `None` when it is not a well-formed JWS
/// this resource could accept (whoever issued it).
pub(crate) fn parse(token: &str, plain_jwt_type: bool) -> Option<Parts<'_>> {
    let mut pieces = token.split('.');
    let (header, claims, signature) = (pieces.next()?, pieces.next()?, pieces.next()?);
    if pieces.next().is_some() || signature.is_empty() {
        return None;
    }
    let message = &token[..header.len() + 1 + claims.len()];
    let header_bytes = b64(header)?;
    if header_bytes.len() > MAX_HEADER_BYTES {
        return None;
    }
    let header = crate::auth::fetch::parse_object(&header_bytes, MAX_HEADER_BYTES).ok()?;
    let algorithm = SigningAlgorithm::from_name(header.get("alg")?.as_str()?)?;
    let typed = match header.get("typ") {
        None => false,
        Some(typ) => {
            let typ = typ.as_str()?.to_ascii_lowercase();
            match typ.as_str() {
                "at+jwt" | "application/at+jwt" => true,
                "jwt" | "application/jwt" => false,
                _ => return None,
            }
        }
    };
    if !typed && !plain_jwt_type {
        return None;
    }
    // No critical extension is understood (RFC 7515 §4.1.11).
    if header.contains_key("crit") {
        return None;
    }
    let kid = match header.get("kid") {
        None => None,
        Some(kid) => Some(
            kid.as_str()
                .filter(|k| !k.is_empty() && k.len() <= 256)?
                .to_owned(),
        ),
    };
    let claims = crate::auth::fetch::parse_object(&b64(claims)?, token.len()).ok()?;
    Some(Parts {
        message,
        signature,
        algorithm,
        kid,
        claims,
    })
}

/// Checks one issuer's tokens.
pub(crate) struct JwtVerifier {
    config: JwtValidation,
    keys: KeySource,
}

impl JwtVerifier {
    pub(crate) fn new(config: JwtValidation) -> Option<Self> {
        let fetcher = Fetcher::new(config.timeout, MAX_JWKS_BYTES)?;
        let origin = match &config.jwks_uri {
            Some(uri) => Origin::Configured(uri.clone()),
            None => Origin::Discover {
                issuer: config.issuer.clone(),
            },
        };
        let keys = KeySource::new(origin, config.timing, fetcher);
        Some(Self { config, keys })
    }

    pub(crate) fn issuer(&self) -> &str {
        &self.config.issuer
    }

    pub(crate) fn plain_jwt_type(&self) -> bool {
        self.config.plain_jwt_type
    }

    /// Checks a parsed token whose (unverified) `iss` named this verifier's issuer.
    pub(crate) async fn verify(
        &self,
        parts: Parts<'_>,
        resource: &ProtectedResource,
    ) -> Result<Verified, Refused> {
        if !self.config.algorithms.contains(&parts.algorithm) {
            return Err(Refused::Invalid);
        }
        let mut refreshed = false;
        loop {
            let set = self
                .keys
                .keys(refreshed)
                .await
                .map_err(|KeyError::Unavailable| Refused::Unavailable)?;
            match set.find(parts.kid.as_deref(), parts.algorithm) {
                Lookup::Found(key) => {
                    let good = jsonwebtoken::crypto::verify(
                        parts.signature,
                        parts.message.as_bytes(),
                        &key.key,
                        parts.algorithm.to_jose(),
                    )
                    .unwrap_or(false);
                    if !good {
                        return Err(Refused::Invalid);
                    }
                    break;
                }
                Lookup::Ambiguous => return Err(Refused::Invalid),
                // A key id the held set lacks: the issuer may have rotated; look once more.
                Lookup::Unknown if !refreshed && parts.kid.is_some() => refreshed = true,
                Lookup::Unknown => return Err(Refused::Invalid),
            }
        }
        self.check_claims(parts.claims, resource)
    }

    fn check_claims(
        &self,
        claims: JsonObject,
        resource: &ProtectedResource,
    ) -> Result<Verified, Refused> {
        if claims.get("iss").and_then(JsonValue::as_str) != Some(self.config.issuer.as_str()) {
            return Err(Refused::Invalid);
        }
        if !audience_fits(claims.get("aud"), resource) {
            return Err(Refused::Invalid);
        }
        let now = unix_now();
        let leeway = self.config.leeway.as_secs();
        let expires = seconds(claims.get("exp")).ok_or(Refused::Invalid)?;
        if expires.saturating_add(leeway) <= now {
            return Err(Refused::Invalid);
        }
        for name in ["nbf", "iat"] {
            if let Some(value) = claims.get(name) {
                let at = seconds(Some(value)).ok_or(Refused::Invalid)?;
                if at > now.saturating_add(leeway) {
                    return Err(Refused::Invalid);
                }
            }
        }
        let expires = UNIX_EPOCH
            .checked_add(Duration::from_secs(expires.saturating_add(leeway)))
            .ok_or(Refused::Invalid)?;
        claims_of(claims, &self.config.issuer, expires)
    }
}

/// Whether `aud` (a string or an array of at most 16 strings) names `resource`.
fn audience_fits(aud: Option<&JsonValue>, resource: &ProtectedResource) -> bool {
    match aud {
        Some(JsonValue::String(one)) => resource.is_audience(one.as_str()),
        Some(JsonValue::Array(many)) if many.len() <= 16 => many
            .iter()
            .any(|a| a.as_str().is_some_and(|a| resource.is_audience(a))),
        _ => false,
    }
}

/// A NumericDate (whole seconds since the epoch; a fraction is cut off), or `None`.
pub(crate) fn seconds(value: Option<&JsonValue>) -> Option<u64> {
    let number = value?.as_number()?;
    if number.is_negative() {
        return None;
    }
    match number.to_u64() {
        Some(n) => Some(n),
        None => number
            .to_f64()
            .filter(|f| f.is_finite() && *f < 1e15)
            .map(|f| f as u64),
    }
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(json: &str) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    fn token(header: &str, claims: &str) -> String {
        format!("{}.{}.c2ln", encode(header), encode(claims))
    }

    #[test]
    fn headers_are_strict() {
        let ok = token(r#"{"alg":"ES256","typ":"at+jwt","kid":"k"}"#, "{}");
        let parts = parse(&ok, false).unwrap();
        assert_eq!(parts.algorithm, SigningAlgorithm::Es256);
        assert_eq!(parts.kid.as_deref(), Some("k"));
        for header in [
            r#"{"alg":"none","typ":"at+jwt"}"#,
            r#"{"alg":"HS256","typ":"at+jwt"}"#,
            r#"{"typ":"at+jwt"}"#,
            r#"{"alg":"ES256","typ":"at+jwt","crit":["exp"]}"#,
            r#"{"alg":"ES256","typ":"dpop+jwt"}"#,
            r#"{"alg":"ES256","typ":"at+jwt","kid":""}"#,
            r#"{"alg":"ES256","typ":"at+jwt","kid":7}"#,
            r#"{"alg":"ES256","typ":"JWT"}"#,
            r#"{"alg":"ES256"}"#,
        ] {
            assert!(parse(&token(header, "{}"), false).is_none(), "{header}");
        }
        assert!(parse(&token(r#"{"alg":"ES256","typ":"JWT"}"#, "{}"), true).is_some());
        assert!(parse("a.b", false).is_none());
        assert!(parse(&format!("{ok}.x"), false).is_none());
        let unsigned = token(r#"{"alg":"ES256","typ":"at+jwt"}"#, "{}");
        let unsigned = unsigned.rsplit_once('.').unwrap().0.to_owned() + ".";
        assert!(parse(&unsigned, false).is_none());
    }

    #[test]
    fn numeric_dates() {
        let read = |s: &str| {
            seconds(
                tollgate_json::from_str(s, &Default::default())
                    .ok()
                    .as_ref(),
            )
        };
        assert_eq!(read("1700000000"), Some(1_700_000_000));
        assert_eq!(read("1700000000.9"), Some(1_700_000_000));
        assert_eq!(read("-1"), None);
        assert_eq!(read("\"1700000000\""), None);
        assert_eq!(read("1e400"), None);
    }
}
