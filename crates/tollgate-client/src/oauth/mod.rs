//! The OAuth 2.1 client of the MCP authorization specification (feature `oauth`):
//! [`OAuthClient`] implements [`Authorizer`] for the HTTP transport. On a 401 it discovers the
//! protected resource's metadata and its authorization server's, checks the resource and the
//! issuer, identifies the client (pre-registered, client ID metadata document, or dynamic
//! registration), runs the authorization-code flow with PKCE S256 through a [`Redirect`], and
//! keeps the tokens in a [`TokenStore`]; it refreshes before it re-authorizes, and steps up on
//! a 403 `insufficient_scope` a bounded number of times. It owns the flow's order; it must not
//! know the MCP messages the tokens authorize.
//!
//! Errors carry a fixed kind ([`AuthError::kind`](crate::auth::AuthError::kind)), never a token, secret, code or URL.

mod assertion;
mod challenge;
mod discovery;
mod fetch;
mod file_store;
mod flow;
mod jwt;
pub(crate) mod kind;
mod pkce;
mod redirect;
mod register;
mod store;
mod token;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use url::Url;

use crate::auth::{AuthError, AuthFuture, Authorizer, Retry};

pub use assertion::{Assertion, IdJagExchange, WorkloadIdentity};
pub use file_store::FileTokenStore;
pub use jwt::KeyAlgorithm;
pub use redirect::{FollowRedirect, LoopbackRedirect, Opener, Redirect, RedirectQuery};
pub use store::{MemoryTokenStore, TokenStore, Tokens};
pub use token::{ClientCredentials, TokenEndpointAuth};

/// An OAuth client for MCP servers; hand it to the HTTP transport as its [`Authorizer`].
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use tollgate_client::oauth::{FollowRedirect, OAuthClient};
///
/// let redirect = Arc::new(FollowRedirect::new("http://localhost:3000/callback")?);
/// let client = OAuthClient::builder()
///     .redirect(redirect)
///     .client_name("my agent")
///     .step_up_limit(2)
///     .build()?;
/// # let _ = client;
/// # Ok::<(), tollgate_client::auth::AuthError>(())
/// ```
pub struct OAuthClient {
    http: reqwest::Client,
    redirect: Option<Arc<dyn Redirect>>,
    store: Arc<dyn TokenStore>,
    registrations: register::Registrations,
    grant: Grant,
    offline_access: bool,
    step_up_limit: u32,
    max_document_bytes: usize,
    legacy_discovery: bool,
    dpop: Option<jwt::Dpop>,
    scopes: BTreeSet<String>,
    flow: tokio::sync::Mutex<flow::FlowState>,
}

/// Builds an [`OAuthClient`]; see [`OAuthClient::builder`].
pub struct OAuthClientBuilder {
    http: Option<reqwest::Client>,
    redirect: Option<Arc<dyn Redirect>>,
    store: Arc<dyn TokenStore>,
    pre_registered: Vec<ClientCredentials>,
    grant: Grant,
    metadata_document: Option<String>,
    client_name: String,
    offline_access: bool,
    step_up_limit: u32,
    max_document_bytes: usize,
    legacy_discovery: bool,
    dpop: bool,
    scopes: BTreeSet<String>,
}

impl OAuthClient {
    /// The default number of times one set of scopes is stepped up to before giving up: 2
    /// (so at most three authorizations for the same scopes in a row).
    pub const DEFAULT_STEP_UP_LIMIT: u32 = 2;
    /// The default cap on a metadata, registration or token answer: 64 KiB.
    pub const DEFAULT_MAX_DOCUMENT_BYTES: usize = 64 * 1024;
    /// The most scopes [`OAuthClientBuilder::scopes`] takes.
    pub const MAX_SCOPES: usize = 32;
    /// The longest scope [`OAuthClientBuilder::scopes`] takes, in bytes.
    pub const MAX_SCOPE_BYTES: usize = 256;

    /// A builder with the defaults below; give it a [`Redirect`] (for the authorization-code
    /// flow) or client credentials with [`OAuthClientBuilder::client_credentials_grant`].
    pub fn builder() -> OAuthClientBuilder {
        OAuthClientBuilder {
            http: None,
            redirect: None,
            store: Arc::new(MemoryTokenStore::default()),
            pre_registered: Vec::new(),
            grant: Grant::AuthorizationCode,
            metadata_document: None,
            client_name: "tollgate-client".to_owned(),
            offline_access: true,
            step_up_limit: Self::DEFAULT_STEP_UP_LIMIT,
            max_document_bytes: Self::DEFAULT_MAX_DOCUMENT_BYTES,
            legacy_discovery: true,
            dpop: true,
            scopes: BTreeSet::new(),
        }
    }
}

impl OAuthClientBuilder {
    /// How the user is sent to the authorization endpoint and back (default: none, so the
    /// authorization-code flow fails with a fixed error until one is given).
    #[must_use]
    pub fn redirect(mut self, redirect: Arc<dyn Redirect>) -> Self {
        self.redirect = Some(redirect);
        self
    }

    /// Obtains tokens with the client credentials grant (no user, no redirect) using these
    /// credentials: a secret (`client_secret_basic` or `_post`) or a private key
    /// (`private_key_jwt`). Default: off (the authorization-code flow).
    #[must_use]
    pub fn client_credentials_grant(mut self, credentials: ClientCredentials) -> Self {
        self.pre_registered.push(credentials);
        self.grant = Grant::ClientCredentials;
        self
    }

    /// Obtains tokens with the JWT bearer grant (RFC 7523; no user, no redirect): the
    /// assertion comes from `assertion` (a [`WorkloadIdentity`]'s token, or the ID-JAG of an
    /// [`IdJagExchange`] for enterprise-managed authorization), and the client authenticates
    /// with `credentials` (no secret: `none`). Default: off.
    #[must_use]
    pub fn jwt_bearer_grant(
        mut self,
        credentials: ClientCredentials,
        assertion: Arc<dyn Assertion>,
    ) -> Self {
        self.pre_registered.push(credentials);
        self.grant = Grant::JwtBearer(assertion);
        self
    }
    /// The HTTP client for discovery, registration and token requests (default: rustls with the
    /// platform's roots, no redirects followed, 30-second timeout).
    #[must_use]
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Where tokens are kept (default: [`MemoryTokenStore`]).
    #[must_use]
    pub fn token_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// Credentials pre-registered at one authorization server (used there first, and only
    /// there). May be given once per issuer.
    #[must_use]
    pub fn pre_registered(mut self, credentials: ClientCredentials) -> Self {
        self.pre_registered.push(credentials);
        self
    }

    /// The HTTPS URL of this client's metadata document (a client ID metadata document),
    /// used as its `client_id` at servers that advertise
    /// `client_id_metadata_document_supported` (default: none).
    #[must_use]
    pub fn client_metadata_document(mut self, url: impl Into<String>) -> Self {
        self.metadata_document = Some(url.into());
        self
    }

    /// The `client_name` sent in dynamic registration (default `"tollgate-client"`).
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// Whether to ask for `offline_access` (a refresh token) where the authorization server
    /// lists it in `scopes_supported` (default `true`; never asked where it is not listed).
    #[must_use]
    pub fn offline_access(mut self, wanted: bool) -> Self {
        self.offline_access = wanted;
        self
    }

    /// How many times in a row the client re-authorizes for the same scopes after a 403
    /// `insufficient_scope` before it gives up (default
    /// [`OAuthClient::DEFAULT_STEP_UP_LIMIT`], 2).
    #[must_use]
    pub fn step_up_limit(mut self, limit: u32) -> Self {
        self.step_up_limit = limit;
        self
    }

    /// The most bytes read of a metadata, registration or token answer (default
    /// [`OAuthClient::DEFAULT_MAX_DOCUMENT_BYTES`], 64 KiB); a longer one is an error.
    #[must_use]
    pub fn max_document_bytes(mut self, bytes: usize) -> Self {
        self.max_document_bytes = bytes;
        self
    }

    /// Whether a server without protected-resource metadata (a 2025-03-26 server) is
    /// authorized the way that revision describes: its origin as the authorization server, with
    /// RFC 8414 metadata there or else the default `/authorize`, `/token` and `/register`
    /// (default `true`; off, such a server is refused). Never used when a challenge names a
    /// metadata URL.
    #[must_use]
    pub fn legacy_discovery(mut self, allowed: bool) -> Self {
        self.legacy_discovery = allowed;
        self
    }

    /// Whether to bind tokens to a DPoP key (RFC 9449) where the authorization server
    /// advertises ES256 in `dpop_signing_alg_values_supported` (default `true`). The key is a
    /// P-256 key made when the client is built, held in memory only.
    #[must_use]
    pub fn dpop(mut self, wanted: bool) -> Self {
        self.dpop = wanted;
        self
    }

    /// Scopes asked for in every authorization and token request, beside the ones the server
    /// names (the challenge's `scope`, else the protected resource's `scopes_supported`):
    /// e.g. the wider scopes a user grants once at a login, so a later step-up needs no user
    /// (default: none). Each is an RFC 6749 §3.3 scope token: 1 to
    /// [`OAuthClient::MAX_SCOPE_BYTES`] bytes of printable ASCII other than space, `"` and
    /// `\`; at most [`OAuthClient::MAX_SCOPES`] of them.
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// The client.
    ///
    /// # Errors
    ///
    /// When the default HTTP client cannot be built (TLS setup), no DPoP key can be made, or a
    /// scope given to [`scopes`](Self::scopes) breaks its rules (the kind names the rule,
    /// never the scope).
    pub fn build(self) -> Result<OAuthClient, AuthError> {
        if self.scopes.len() > OAuthClient::MAX_SCOPES
            || !self.scopes.iter().all(|s| is_scope_token(s))
        {
            return Err(AuthError::new(kind::BAD_SCOPE));
        }
        let dpop = if self.dpop {
            Some(jwt::Dpop::new()?)
        } else {
            None
        };
        let http = match self.http {
            Some(http) => http,
            None => fetch::http_client()?,
        };
        Ok(OAuthClient {
            http,
            redirect: self.redirect,
            store: self.store,
            registrations: register::Registrations {
                pre_registered: self.pre_registered,
                metadata_document: self.metadata_document,
                client_name: self.client_name,
                registered: Mutex::new(Vec::new()),
                unbound_at: Mutex::new(None),
            },
            grant: self.grant,
            offline_access: self.offline_access,
            step_up_limit: self.step_up_limit,
            max_document_bytes: self.max_document_bytes,
            legacy_discovery: self.legacy_discovery,
            dpop,
            scopes: self.scopes,
            flow: tokio::sync::Mutex::new(flow::FlowState::default()),
        })
    }
}

impl Authorizer for OAuthClient {
    fn headers<'a>(
        &'a self,
        method: &'a http::Method,
        url: &'a str,
    ) -> AuthFuture<'a, Result<Vec<(http::HeaderName, http::HeaderValue)>, AuthError>> {
        Box::pin(async move {
            let Some(tokens) = self.store.load(&store_key(url)) else {
                return Ok(Vec::new());
            };
            let bad = |_| AuthError::new(kind::BAD_TOKEN);
            let dpop = self.dpop.as_ref().filter(|_| tokens.dpop);
            let scheme = if dpop.is_some() { "DPoP" } else { "Bearer" };
            let text = zeroize::Zeroizing::new(format!("{scheme} {}", *tokens.access_token));
            let mut value = http::HeaderValue::from_str(&text).map_err(bad)?;
            value.set_sensitive(true);
            let mut out = vec![(http::header::AUTHORIZATION, value)];
            if let Some(dpop) = dpop {
                let proof = dpop.resource_proof(method.as_str(), url, &tokens.access_token)?;
                let proof = http::HeaderValue::from_str(&proof).map_err(bad)?;
                out.push((http::HeaderName::from_static("dpop"), proof));
            }
            Ok(out)
        })
    }

    fn challenged<'a>(
        &'a self,
        url: &'a str,
        status: u16,
        headers: &'a http::HeaderMap,
    ) -> AuthFuture<'a, Result<Retry, AuthError>> {
        Box::pin(async move {
            let challenge = challenge::parse(headers.get_all(http::header::WWW_AUTHENTICATE));
            let nonce_challenge = challenge.error.as_deref() == Some("use_dpop_nonce");
            // RFC 9449 §9: the resource server wants a proof with its nonce; retry once per
            // new nonce.
            if status == 401
                && nonce_challenge
                && self.dpop.as_ref().is_some_and(|d| d.take_rs_nonce(headers))
            {
                return Ok(Retry::Again);
            }
            match status {
                401 => self.unauthorized(url, &challenge).await,
                403 if challenge.insufficient_scope() => self.step_up(url, &challenge).await,
                _ => Ok(Retry::GiveUp),
            }
        })
    }
}

/// How tokens are obtained after a challenge.
enum Grant {
    /// The authorization-code flow with a user, through the redirect.
    AuthorizationCode,
    /// The client credentials grant.
    ClientCredentials,
    /// The JWT bearer grant with the assertion's JWT.
    JwtBearer(Arc<dyn Assertion>),
}

/// The store's key for an MCP server URL: the URL without its fragment.
fn store_key(url: &str) -> String {
    url.split('#').next().unwrap_or(url).to_owned()
}

/// Scopes as a set from a space-separated list.
fn scope_set(scope: Option<&str>) -> BTreeSet<String> {
    scope
        .unwrap_or("")
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether `scope` is one RFC 6749 §3.3 scope token (`1*NQCHAR`: %x21 / %x23-5B / %x5D-7E) of
/// at most [`OAuthClient::MAX_SCOPE_BYTES`] bytes: what [`OAuthClientBuilder::scopes`] takes.
///
/// # Examples
///
/// ```
/// use tollgate_client::oauth::is_scope_token;
///
/// assert!(is_scope_token("mcp:write"));
/// assert!(!is_scope_token("mcp:read mcp:write"));
/// ```
pub fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope.len() <= OAuthClient::MAX_SCOPE_BYTES
        && scope
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

/// Whether the URL's host is the loopback interface (where plain HTTP is allowed).
fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// An authorization-server endpoint: an absolute HTTPS URL (plain HTTP only on loopback).
fn endpoint(url: Option<&str>) -> Result<Url, AuthError> {
    let url = Url::parse(url.ok_or(AuthError::new(kind::BAD_ENDPOINT))?)
        .map_err(|_| AuthError::new(kind::BAD_ENDPOINT))?;
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        _ => Err(AuthError::new(kind::BAD_ENDPOINT)),
    }
}
