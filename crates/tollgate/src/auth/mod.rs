//! The OAuth 2.1 resource server of MCP authorization (feature `oauth`): [`BearerAuth`], an
//! admission controller that reads the request's bearer token, checks it — a JWT access token
//! against its issuer's keys ([`JwtValidation`]) or an opaque one by introspection
//! ([`Introspection`]) — for *this* resource (RFC 8707 audience), and admits its subject with the
//! scopes it grants and the claims the deployment keeps. Its answers are the MCP authorization
//! spec's: 401 with a `WWW-Authenticate: Bearer resource_metadata=…` challenge (and
//! `error="invalid_token"` when a token was refused), 400 `invalid_request` for a malformed
//! `Authorization`, 403 `insufficient_scope` when a baseline scope is missing, and 503 with
//! `Retry-After` when the authorization server cannot be reached. None carries the token or
//! anything from it.
//!
//! Knows nothing of the protocol revisions, the registry or transports beyond
//! [`AdmissionRequest`]; the metadata document and challenges are `ProtectedResource`'s.

mod cache;
mod claims;
mod fetch;
mod flight;
mod header;
mod introspect;
mod jwks;
mod jwt;

use std::sync::Arc;
use std::time::Duration;

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::error::{BuildError, BuildErrorKind};
use crate::facts::identity::AdmissionIdentity;
use crate::policy::admission::{
    Admission, AdmissionController, AdmissionDecision, AdmissionRequest,
};
use crate::policy::authorization::{ProtectedResource, Scopes};

pub use cache::MAX_CACHED_TOKENS;
pub use flight::{MAX_INTROSPECTION_FLIGHTS, MAX_REFUSED_TOKENS};
pub use header::MAX_BEARER_TOKEN_BYTES;
pub use introspect::{
    CALL_PLACE_WAIT, Introspection, MAX_INTROSPECTION_CACHE, MAX_INTROSPECTION_CALLS,
};
pub use jwks::{MAX_JWKS_BYTES, MAX_JWKS_KEYS};
pub use jwt::{JwtValidation, MAX_LEEWAY};

use cache::{TokenCache, TokenKey};
pub(crate) use claims::{Refused, Verified, b64, claims_of};
use flight::Flights;
use header::Credential;
use introspect::Introspector;
use jwt::JwtVerifier;

/// The most claims [`BearerAuthBuilder::keep_claims`] may name.
pub const MAX_KEPT_CLAIMS: usize = 32;
/// What a 503 asks the client to wait, when the authorization server cannot be reached.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// An asymmetric JWS algorithm a JWT access token may be signed with. There is no HMAC and no
/// `none`: a resource server verifies with the issuer's public keys only.
///
/// ```
/// use tollgate::auth::{JwtValidation, SigningAlgorithm};
///
/// let jwt = JwtValidation::new("https://auth.example.com")
///     .algorithms([SigningAlgorithm::Es256, SigningAlgorithm::EdDsa]);
/// # let _ = jwt;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    Rs384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    Rs512,
    /// RSASSA-PSS with SHA-256.
    Ps256,
    /// RSASSA-PSS with SHA-384.
    Ps384,
    /// RSASSA-PSS with SHA-512.
    Ps512,
    /// ECDSA on P-256 with SHA-256.
    Es256,
    /// ECDSA on P-384 with SHA-384.
    Es384,
    /// Ed25519.
    EdDsa,
}

impl SigningAlgorithm {
    pub(crate) const ALL: [Self; 9] = [
        Self::Rs256,
        Self::Rs384,
        Self::Rs512,
        Self::Ps256,
        Self::Ps384,
        Self::Ps512,
        Self::Es256,
        Self::Es384,
        Self::EdDsa,
    ];

    /// The algorithm a JOSE `alg` names, if it is one of these (exactly: `"none"`, `"HS256"`
    /// and unknown names are `None`).
    ///
    /// ```
    /// use tollgate::auth::SigningAlgorithm;
    ///
    /// assert_eq!(SigningAlgorithm::from_name("ES256"), Some(SigningAlgorithm::Es256));
    /// assert_eq!(SigningAlgorithm::from_name("HS256"), None);
    /// assert_eq!(SigningAlgorithm::from_name("none"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Its JOSE name.
    ///
    /// ```
    /// use tollgate::auth::SigningAlgorithm;
    ///
    /// assert_eq!(SigningAlgorithm::EdDsa.name(), "EdDSA");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Self::Rs256 => "RS256",
            Self::Rs384 => "RS384",
            Self::Rs512 => "RS512",
            Self::Ps256 => "PS256",
            Self::Ps384 => "PS384",
            Self::Ps512 => "PS512",
            Self::Es256 => "ES256",
            Self::Es384 => "ES384",
            Self::EdDsa => "EdDSA",
        }
    }

    pub(crate) fn family(self) -> jwks::Family {
        match self {
            Self::Rs256 | Self::Rs384 | Self::Rs512 | Self::Ps256 | Self::Ps384 | Self::Ps512 => {
                jwks::Family::Rsa
            }
            Self::Es256 => jwks::Family::P256,
            Self::Es384 => jwks::Family::P384,
            Self::EdDsa => jwks::Family::Ed25519,
        }
    }

    pub(crate) fn to_jose(self) -> jsonwebtoken::Algorithm {
        use jsonwebtoken::Algorithm as A;
        match self {
            Self::Rs256 => A::RS256,
            Self::Rs384 => A::RS384,
            Self::Rs512 => A::RS512,
            Self::Ps256 => A::PS256,
            Self::Ps384 => A::PS384,
            Self::Ps512 => A::PS512,
            Self::Es256 => A::ES256,
            Self::Es384 => A::ES384,
            Self::EdDsa => A::EdDSA,
        }
    }
}

/// Bearer-token admission for an OAuth-protected endpoint.
///
/// Give it the endpoint's [`ProtectedResource`] and how tokens are checked: one
/// [`JwtValidation`] per issuer, an [`Introspection`] for opaque tokens, or both (a token
/// shaped as a JWS goes to the JWT check of its `iss`, anything else to introspection).
/// Install it with `EndpointBuilder::admission` beside `EndpointBuilder::protected_resource`.
///
/// An admitted identity's principal is the token's `sub` (prefixed `issuer#` when several
/// issuers are configured, so their subjects cannot collide); its scopes are the token's; its
/// claims are those named by [`keep_claims`](BearerAuthBuilder::keep_claims). Positive results
/// are reused, keyed by the token's SHA-256, until the token expires (at most 5 minutes for a
/// JWT, the introspection cache time for an opaque token).
///
/// # Examples
///
/// ```
/// use tollgate::auth::{BearerAuth, JwtValidation};
/// use tollgate::policy::ProtectedResource;
///
/// let resource = ProtectedResource::builder("https://mcp.example.com/mcp")
///     .authorization_server("https://auth.example.com")
///     .scopes_supported(["catalog:read", "catalog:write"])
///     .build()?;
/// let auth = BearerAuth::builder(&resource)
///     .jwt(JwtValidation::new("https://auth.example.com"))
///     .required_scopes(["catalog:read"])
///     .keep_claims(["client_id"])
///     .build()?;
/// # let _ = auth;
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct BearerAuth {
    inner: Arc<Inner>,
}

struct Inner {
    resource: ProtectedResource,
    jwt: Vec<JwtVerifier>,
    introspection: Option<Introspector>,
    required: Scopes,
    keep: Vec<String>,
    stdio: Option<AdmissionIdentity>,
    cache: TokenCache,
    /// Introspection calls under way, and the tokens introspection refused lately.
    flights: Arc<Flights>,
    /// The fixed challenges: no token, a refused token, a malformed `Authorization`.
    missing: String,
    invalid: String,
    malformed: String,
}

impl std::fmt::Debug for BearerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerAuth")
            .field("resource", &self.inner.resource.resource())
            .finish_non_exhaustive()
    }
}

/// Builds a [`BearerAuth`].
///
/// ```
/// use tollgate::auth::{BearerAuth, JwtValidation};
/// use tollgate::policy::ProtectedResource;
///
/// let resource = ProtectedResource::builder("https://mcp.example.com/mcp")
///     .authorization_server("https://auth.example.com")
///     .build()?;
/// let builder = BearerAuth::builder(&resource).jwt(JwtValidation::new("https://auth.example.com"));
/// let auth = builder.build()?;
/// # let _ = auth;
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Debug)]
#[must_use = "call build() to finish the bearer authentication"]
pub struct BearerAuthBuilder {
    resource: ProtectedResource,
    jwt: Vec<JwtValidation>,
    introspection: Option<Introspection>,
    required: Vec<String>,
    keep: Vec<String>,
    stdio: Option<AdmissionIdentity>,
}

impl BearerAuth {
    /// Starts bearer authentication for `resource`.
    ///
    /// ```
    /// # use tollgate::auth::{BearerAuth, JwtValidation};
    /// # let resource = tollgate::policy::ProtectedResource::builder("https://mcp.example.com/mcp")
    /// #     .authorization_server("https://auth.example.com")
    /// #     .build()?;
    /// let auth = BearerAuth::builder(&resource)
    ///     .jwt(JwtValidation::new("https://auth.example.com"))
    ///     .build()?;
    /// # let _ = auth;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn builder(resource: &ProtectedResource) -> BearerAuthBuilder {
        BearerAuthBuilder {
            resource: resource.clone(),
            jwt: Vec::new(),
            introspection: None,
            required: Vec::new(),
            keep: Vec::new(),
            stdio: None,
        }
    }

    /// The protected resource it admits for.
    ///
    /// ```
    /// # use tollgate::auth::{BearerAuth, JwtValidation};
    /// # let resource = tollgate::policy::ProtectedResource::builder("https://mcp.example.com/mcp")
    /// #     .authorization_server("https://auth.example.com")
    /// #     .build()?;
    /// let auth = BearerAuth::builder(&resource)
    ///     .jwt(JwtValidation::new("https://auth.example.com"))
    ///     .build()?;
    /// assert_eq!(auth.resource().resource(), "https://mcp.example.com/mcp");
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn resource(&self) -> &ProtectedResource {
        &self.inner.resource
    }
}

impl BearerAuthBuilder {
    /// Accepts JWT access tokens of one issuer (call once per issuer).
    ///
    /// ```
    /// # use tollgate::auth::{BearerAuth, JwtValidation};
    /// # let resource = tollgate::policy::ProtectedResource::builder("https://mcp.example.com/mcp")
    /// #     .authorization_server("https://auth.example.com")
    /// #     .build()?;
    /// use tollgate::auth::SigningAlgorithm;
    ///
    /// let auth = BearerAuth::builder(&resource)
    ///     .jwt(JwtValidation::new("https://auth.example.com").algorithms([SigningAlgorithm::Es256]))
    ///     .build()?;
    /// # let _ = auth;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn jwt(mut self, validation: JwtValidation) -> Self {
        self.jwt.push(validation);
        self
    }

    /// Accepts opaque tokens by introspection.
    ///
    /// ```
    /// # use tollgate::auth::{BearerAuth, JwtValidation};
    /// # let resource = tollgate::policy::ProtectedResource::builder("https://mcp.example.com/mcp")
    /// #     .authorization_server("https://auth.example.com")
    /// #     .build()?;
    /// use tollgate::auth::Introspection;
    ///
    /// let auth = BearerAuth::builder(&resource)
    ///     .introspection(Introspection::new("https://auth.example.com").client_credentials("mcp", "s3cret"))
    ///     .build()?;
    /// # let _ = auth;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn introspection(mut self, introspection: Introspection) -> Self {
        self.introspection = Some(introspection);
        self
    }

    /// Scopes every request needs, whatever it asks for (a token without them gets the 403
    /// `insufficient_scope` challenge). Operations add their own with `required_scopes`.
    ///
    /// ```
    /// # use tollgate::auth::{BearerAuth, JwtValidation};
    /// # let resource = tollgate::policy::ProtectedResource::builder("https://mcp.example.com/mcp")
    /// #     .authorization_server("https://auth.example.com")
    /// #     .build()?;
    /// let auth = BearerAuth::builder(&resource)
    ///     .jwt(JwtValidation::new("https://auth.example.com"))
    ///     .required_scopes(["mcp:use"])
    ///     .build()?;
    /// # let _ = auth;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.required.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Claims copied from the token into the admitted identity (at most 32 names; `sub`,
    /// `iss` and `scope` need not be named). Nothing else of the token is kept.
    ///
    /// ```
    /// # use tollgate::auth::{BearerAuth, JwtValidation};
    /// # let resource = tollgate::policy::ProtectedResource::builder("https://mcp.example.com/mcp")
    /// #     .authorization_server("https://auth.example.com")
    /// #     .build()?;
    /// let auth = BearerAuth::builder(&resource)
    ///     .jwt(JwtValidation::new("https://auth.example.com"))
    ///     .keep_claims(["client_id", "tenant"])
    ///     .build()?;
    /// # let _ = auth;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn keep_claims<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.keep.extend(names.into_iter().map(Into::into));
        self
    }

    /// Over stdio there are no bearer tokens (the MCP authorization spec leaves a local
    /// process to its environment's credentials): admit stdio requests as `identity`. Without
    /// this, stdio requests are refused.
    ///
    /// ```
    /// # use tollgate::auth::{BearerAuth, JwtValidation};
    /// # let resource = tollgate::policy::ProtectedResource::builder("https://mcp.example.com/mcp")
    /// #     .authorization_server("https://auth.example.com")
    /// #     .build()?;
    /// use tollgate::policy::AdmissionIdentity;
    ///
    /// let auth = BearerAuth::builder(&resource)
    ///     .jwt(JwtValidation::new("https://auth.example.com"))
    ///     .stdio_identity(AdmissionIdentity::principal("local-user"))
    ///     .build()?;
    /// # let _ = auth;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn stdio_identity(mut self, identity: AdmissionIdentity) -> Self {
        self.stdio = Some(identity);
        self
    }

    /// Finishes, or names the first problem: no way to check tokens, an issuer that is not one
    /// of the resource's authorization servers, two checks for one issuer, a bad URL, leeway,
    /// timeout or cache setting, or scope and claim lists past their bounds.
    ///
    /// ```
    /// # use tollgate::auth::{BearerAuth, JwtValidation};
    /// # let resource = tollgate::policy::ProtectedResource::builder("https://mcp.example.com/mcp")
    /// #     .authorization_server("https://auth.example.com")
    /// #     .build()?;
    /// // Nothing to check tokens with:
    /// let refused = BearerAuth::builder(&resource).build();
    /// assert_eq!(
    ///     refused.unwrap_err().kind(),
    ///     tollgate::BuildErrorKind::InvalidAuthorization
    /// );
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn build(self) -> Result<BearerAuth, BuildError> {
        let fail = |text: &'static str| {
            Err(BuildError::new(BuildErrorKind::InvalidAuthorization).with_detail(text))
        };
        if self.jwt.is_empty() && self.introspection.is_none() {
            return fail("bearer authentication needs a JWT validation or introspection");
        }
        let servers: Vec<&str> = self.resource.authorization_servers().collect();
        let issuers: Vec<&str> = self
            .jwt
            .iter()
            .map(|j| j.issuer.as_str())
            .chain(self.introspection.iter().map(|i| i.issuer.as_str()))
            .collect();
        if issuers.iter().any(|i| !servers.contains(i)) {
            return fail(
                "a token issuer must be one of the protected resource's authorization servers",
            );
        }
        if self
            .jwt
            .iter()
            .enumerate()
            .any(|(n, j)| self.jwt[..n].iter().any(|k| k.issuer == j.issuer))
        {
            return fail("one JWT validation per issuer");
        }
        if let Some(problem) = self
            .jwt
            .iter()
            .find_map(JwtValidation::problem)
            .or_else(|| self.introspection.as_ref().and_then(Introspection::problem))
        {
            return fail(problem);
        }
        let Some(required) = Scopes::parse(&self.required) else {
            return fail("required scopes must be at most 64 scope tokens");
        };
        if self.keep.len() > MAX_KEPT_CLAIMS
            || self.keep.iter().any(|k| k.is_empty() || k.len() > 256)
        {
            return fail("keep_claims names at most 32 claims of 1 to 256 bytes");
        }
        // The process-wide verifier choice, made once (an error means one is already chosen).
        let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        let mut jwt = Vec::with_capacity(self.jwt.len());
        for validation in self.jwt {
            let Some(verifier) = JwtVerifier::new(validation) else {
                return fail("no HTTPS client could be made for the authorization server");
            };
            jwt.push(verifier);
        }
        let refuse_for = self
            .introspection
            .as_ref()
            .map_or(Duration::ZERO, |i| i.refusal_cache);
        let introspection = match self.introspection {
            Some(config) => match Introspector::new(config) {
                Some(introspector) => Some(introspector),
                None => return fail("no HTTPS client could be made for the authorization server"),
            },
            None => None,
        };
        // A 401 names the baseline scopes when there are some (a client starts with the least
        // it needs and steps up on a 403), else everything the resource supports.
        let challenge = |invalid: bool| {
            if required.is_empty() {
                self.resource.unauthorized_challenge(invalid)
            } else {
                self.resource
                    .unauthorized_challenge_with(invalid, required.iter())
            }
        };
        let (missing, invalid) = (challenge(false), challenge(true));
        let malformed = self.resource.invalid_request_challenge();
        Ok(BearerAuth {
            inner: Arc::new(Inner {
                missing,
                invalid,
                malformed,
                resource: self.resource,
                jwt,
                introspection,
                required,
                keep: self.keep,
                stdio: self.stdio,
                cache: TokenCache::new(),
                flights: Flights::new(refuse_for),
            }),
        })
    }
}

impl AdmissionController for BearerAuth {
    fn admit<'a>(&'a self, request: &'a AdmissionRequest<'a>) -> Admission<'a> {
        let inner = &*self.inner;
        if !request.is_http() {
            return Admission::ready(match &inner.stdio {
                Some(identity) => AdmissionDecision::admit(identity.clone()),
                None => AdmissionDecision::unauthorized(),
            });
        }
        let token = match header::credential(request) {
            Credential::Bearer(token) => token,
            Credential::Missing => {
                return Admission::ready(AdmissionDecision::unauthorized_with_challenge(
                    &inner.missing,
                ));
            }
            Credential::Malformed => {
                return Admission::ready(AdmissionDecision::malformed_with_challenge(
                    &inner.malformed,
                ));
            }
        };
        let key = TokenCache::key(token);
        if let Some(identity) = inner.cache.get(&key) {
            return Admission::ready(inner.decide(identity));
        }
        if inner.flights.refused(&key) {
            return Admission::ready(AdmissionDecision::unauthorized_with_challenge(
                &inner.invalid,
            ));
        }
        let shared = &self.inner;
        Admission::pending(async move {
            match Inner::check(shared, token, key).await {
                Ok(identity) => inner.decide(identity),
                Err(Refused::Invalid) => {
                    AdmissionDecision::unauthorized_with_challenge(&inner.invalid)
                }
                Err(Refused::Unavailable) => AdmissionDecision::unavailable(RETRY_AFTER),
            }
        })
    }
}

impl Inner {
    /// The token checked by the JWT validation of its issuer, or by introspection (one call
    /// per token at a time, shared by the requests carrying it: `flight.rs`), and the identity
    /// it admits cached under `key`.
    async fn check(
        this: &Arc<Self>,
        token: &str,
        key: TokenKey,
    ) -> Result<AdmissionIdentity, Refused> {
        if !this.jwt.is_empty() {
            let lenient = this.jwt.iter().any(JwtVerifier::plain_jwt_type);
            if let Some(parts) = jwt::parse(token, lenient) {
                let issuer = parts.claims.get("iss").and_then(JsonValue::as_str);
                let verifier = this.jwt.iter().find(|v| Some(v.issuer()) == issuer);
                return match verifier {
                    Some(v) if v.plain_jwt_type() || jwt::parse(token, false).is_some() => {
                        let verified = v.verify(parts, &this.resource).await?;
                        Ok(this.admitted(key, verified))
                    }
                    _ => Err(Refused::Invalid),
                };
            }
        }
        if this.introspection.is_none() {
            return Err(Refused::Invalid);
        }
        // The call's own task keeps the token (wiped when it is done with it) and the shared
        // state, so a request going away neither cancels the call nor starts another.
        let shared = Arc::clone(this);
        let token = zeroize::Zeroizing::new(token.to_owned());
        this.flights
            .join(key, move || async move {
                let Some(introspector) = &shared.introspection else {
                    return Err(Refused::Invalid);
                };
                let verified = introspector.introspect(&token, &shared.resource).await;
                drop(token);
                Ok(shared.admitted(key, verified?))
            })
            .await
    }

    /// The identity `verified` admits, cached under `key` while the token's checks hold.
    fn admitted(&self, key: TokenKey, verified: Verified) -> AdmissionIdentity {
        let until = verified.until;
        let identity = self.identity(verified);
        self.cache.put(key, identity.clone(), until);
        identity
    }

    fn identity(&self, verified: Verified) -> AdmissionIdentity {
        let principal: Arc<str> = match (&verified.issuer, self.issuers()) {
            (Some(issuer), 2..) => format!("{issuer}#{}", verified.subject).into(),
            _ => verified.subject,
        };
        let mut kept = JsonObject::builder();
        for name in &self.keep {
            if let Some(value) = verified.claims.get(name) {
                kept = kept.insert(name.as_str(), value.clone());
            }
        }
        // The credential's end, which ends the streams and listens it opens: `exp` as checked
        // (a JWT's with its leeway, which `until` holds; an introspected token's `until` is
        // only how long the answer is cached, so its `exp` claim).
        let expires = jwt::seconds(verified.claims.get("exp"))
            .and_then(|exp| std::time::UNIX_EPOCH.checked_add(Duration::from_secs(exp)))
            .map_or(verified.until, |exp| exp.max(verified.until));
        AdmissionIdentity::principal(principal)
            .with_scopes(verified.scopes)
            .with_claims(kept.build())
            .with_expiry(expires)
    }

    fn issuers(&self) -> usize {
        let introspected = self.introspection.as_ref().map(Introspector::issuer);
        self.jwt.len()
            + usize::from(introspected.is_some_and(|i| self.jwt.iter().all(|j| j.issuer() != i)))
    }

    /// Admits `identity`, unless it lacks a baseline scope.
    fn decide(&self, identity: AdmissionIdentity) -> AdmissionDecision {
        match self.resource.missing(&identity, &self.required) {
            None => AdmissionDecision::admit(identity),
            Some(challenge) => match challenge.to_str() {
                Ok(challenge) => AdmissionDecision::forbidden_with_challenge(challenge),
                Err(_) => AdmissionDecision::forbidden(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;
    use tollgate_json::JsonLimits;

    /// The admitted identity carries the token's `exp` (a JWT's with its leeway, which `until`
    /// holds; an introspected token's `exp` past the shorter cache time), for the streams and
    /// listens it opens to end then.
    #[test]
    fn the_identity_carries_the_tokens_expiry() {
        let Ok(resource) = ProtectedResource::builder("https://mcp.example/mcp")
            .authorization_server("https://as.example")
            .build()
        else {
            unreachable!("a valid resource")
        };
        let Ok(auth) = BearerAuth::builder(&resource)
            .jwt(JwtValidation::new("https://as.example"))
            .build()
        else {
            unreachable!("a valid configuration")
        };
        let exp = 4_000_000_000_u64;
        let at = |secs: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
        let verified = |until| {
            let value = tollgate_json::from_str(
                &format!(r#"{{"sub":"a","exp":{exp}}}"#),
                &JsonLimits::new(),
            );
            let claims = value.ok().and_then(|v| v.as_object().cloned());
            claims_of(claims.unwrap_or_default(), "https://as.example", until).ok()
        };
        // Introspection: cached for less than the token lives; the identity ends at `exp`.
        let cached = verified(at(exp - 600)).map(|v| auth.inner.identity(v));
        assert_eq!(cached.and_then(|i| i.expires_at()), Some(at(exp)));
        // A JWT: `until` is `exp` plus the leeway the check allowed.
        let lenient = verified(at(exp + 60)).map(|v| auth.inner.identity(v));
        assert_eq!(lenient.and_then(|i| i.expires_at()), Some(at(exp + 60)));
    }
}
