//! The token endpoint: the client's identity and how it authenticates there (`none`,
//! `client_secret_basic`, `client_secret_post`), the authorization-code and refresh grants, and
//! reading the answer. It must not know how the code was obtained or where tokens are kept.

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use zeroize::Zeroizing;

use crate::auth::AuthError;

use super::discovery::ServerMetadata;
use super::jwt::{Dpop, KeyAlgorithm, PrivateKey, client_assertion};
use super::store::Tokens;
use super::{fetch, kind};

/// How the client authenticates at the token endpoint (RFC 7591 §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenEndpointAuth {
    /// A public client: `client_id` in the body, no secret (`none`).
    None,
    /// HTTP Basic with the client ID and secret (`client_secret_basic`).
    ClientSecretBasic,
    /// The client ID and secret in the form body (`client_secret_post`).
    ClientSecretPost,
    /// A JWT signed with the client's private key (`private_key_jwt`, RFC 7523).
    PrivateKeyJwt,
}

impl TokenEndpointAuth {
    /// The method's registered name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Self> {
        match name {
            "none" => Some(Self::None),
            "client_secret_basic" => Some(Self::ClientSecretBasic),
            "client_secret_post" => Some(Self::ClientSecretPost),
            "private_key_jwt" => Some(Self::PrivateKeyJwt),
            _ => None,
        }
    }
}

/// A client's identity at one authorization server: pre-registered, registered dynamically, or
/// a client ID metadata document's URL.
#[derive(Clone)]
pub struct ClientCredentials {
    pub(crate) issuer: Option<String>,
    pub(crate) client_id: String,
    pub(crate) secret: Option<Zeroizing<String>>,
    pub(crate) key: Option<PrivateKey>,
    pub(crate) method: Option<TokenEndpointAuth>,
}

impl ClientCredentials {
    /// A client pre-registered at the authorization server with this issuer identifier. It is
    /// used there only: credentials are never presented to another authorization server.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate_client::oauth::{ClientCredentials, TokenEndpointAuth};
    ///
    /// let client = ClientCredentials::new("https://as.example", "my-client")
    ///     .secret("s3cret".to_owned())
    ///     .method(TokenEndpointAuth::ClientSecretPost);
    /// assert_eq!(client.client_id(), "my-client");
    /// assert!(!format!("{client:?}").contains("s3cret"));
    /// ```
    pub fn new(issuer: impl Into<String>, client_id: impl Into<String>) -> Self {
        Self {
            issuer: Some(issuer.into()),
            client_id: client_id.into(),
            secret: None,
            key: None,
            method: None,
        }
    }

    /// A client whose authorization server is not known in advance: the credentials are bound
    /// to the first authorization server they are used at, and never presented to another.
    pub fn unbound(client_id: impl Into<String>) -> Self {
        Self {
            issuer: None,
            client_id: client_id.into(),
            secret: None,
            key: None,
            method: None,
        }
    }

    /// A private key (PEM; PKCS#8, or PKCS#1 for RSA) to authenticate with `private_key_jwt`
    /// (wiped from memory on drop).
    #[must_use]
    pub fn private_key(mut self, pem: String, algorithm: KeyAlgorithm) -> Self {
        self.key = Some(PrivateKey {
            pem: Zeroizing::new(pem),
            algorithm,
        });
        self
    }

    /// The client secret (wiped from memory on drop).
    #[must_use]
    pub fn secret(mut self, secret: String) -> Self {
        self.secret = Some(Zeroizing::new(secret));
        self
    }

    /// The token endpoint authentication method. Without one, a client with a secret uses
    /// `client_secret_basic` where the server lists it, else `client_secret_post`; a client
    /// without a secret uses `none`.
    #[must_use]
    pub fn method(mut self, method: TokenEndpointAuth) -> Self {
        self.method = Some(method);
        self
    }

    /// The client ID.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The issuer of the authorization server these credentials belong to (`None` when
    /// unbound).
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The client secret, if there is one (for a [`TokenStore`](super::TokenStore) that keeps a
    /// registration; never print it).
    pub fn client_secret(&self) -> Option<&str> {
        self.secret.as_deref().map(String::as_str)
    }

    /// The token endpoint authentication method named for this client, if one was.
    pub fn token_endpoint_auth(&self) -> Option<TokenEndpointAuth> {
        self.method
    }

    /// The method used with this server's metadata.
    pub(crate) fn method_for(&self, server: &ServerMetadata) -> TokenEndpointAuth {
        if let Some(method) = self.method {
            return method;
        }
        if self.key.is_some() {
            TokenEndpointAuth::PrivateKeyJwt
        } else if self.secret.is_none() {
            TokenEndpointAuth::None
        } else if server.supports_auth_method("client_secret_basic")
            || !server.supports_auth_method("client_secret_post")
        {
            TokenEndpointAuth::ClientSecretBasic
        } else {
            TokenEndpointAuth::ClientSecretPost
        }
    }

    /// A registration answer (RFC 7591 §3.2.1) as credentials at `issuer`.
    pub(crate) fn registered(issuer: &str, answer: RegistrationAnswer) -> Self {
        Self {
            issuer: Some(issuer.to_owned()),
            client_id: answer.client_id,
            secret: answer.client_secret.map(Zeroizing::new),
            key: None,
            method: answer
                .token_endpoint_auth_method
                .as_deref()
                .and_then(TokenEndpointAuth::from_name),
        }
    }
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("secret", &self.secret.as_ref().map(|_| "[redacted]"))
            .field("key", &self.key.as_ref().map(|k| k.algorithm))
            .field("method", &self.method)
            .finish()
    }
}

/// The fields of a registration answer the client reads.
#[derive(Deserialize)]
pub(crate) struct RegistrationAnswer {
    pub(crate) client_id: String,
    #[serde(default)]
    pub(crate) client_secret: Option<String>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_method: Option<String>,
}

/// The fields of a token answer the client reads (RFC 6749 §5.1).
#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    access_token: Option<String>,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

/// A token request's grant-specific parameters (secrets among them are wiped on drop).
pub(crate) type Params = Vec<(&'static str, Zeroizing<String>)>;

/// What a token request needs besides its grant's parameters.
pub(crate) struct TokenCall<'a> {
    pub(crate) http: &'a reqwest::Client,
    pub(crate) server: &'a ServerMetadata,
    pub(crate) client: &'a ClientCredentials,
    pub(crate) limit: usize,
    /// The DPoP key and nonces, where the server binds tokens to a key.
    pub(crate) dpop: Option<&'a Dpop>,
}

/// Adds the client's authentication to `params`, or returns the `Authorization` header that
/// carries it (`client_secret_basic`).
fn authenticate(
    call: &TokenCall<'_>,
    params: &mut Params,
) -> Result<Option<http::HeaderValue>, AuthError> {
    let client = call.client;
    let secret = || {
        client
            .secret
            .clone()
            .ok_or(AuthError::new(kind::CREDENTIAL))
    };
    let id = || Zeroizing::new(client.client_id.clone());
    match client.method_for(call.server) {
        TokenEndpointAuth::None => params.push(("client_id", id())),
        TokenEndpointAuth::ClientSecretPost => {
            params.push(("client_id", id()));
            params.push(("client_secret", secret()?));
        }
        TokenEndpointAuth::PrivateKeyJwt => {
            let key = client
                .key
                .as_ref()
                .ok_or(AuthError::new(kind::CREDENTIAL))?;
            let assertion = client_assertion(key, &client.client_id, &call.server.issuer)?;
            params.push(("client_id", id()));
            params.push((
                "client_assertion_type",
                Zeroizing::new("urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into()),
            ));
            params.push(("client_assertion", assertion));
        }
        TokenEndpointAuth::ClientSecretBasic => {
            let secret = secret()?;
            // RFC 6749 §2.3.1: both parts form-encoded before Basic encoding.
            let encode = |text: &str| {
                Zeroizing::new(
                    url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>(),
                )
            };
            let pair = Zeroizing::new(format!(
                "{}:{}",
                *encode(&client.client_id),
                *encode(&secret)
            ));
            let value = Zeroizing::new(format!("Basic {}", STANDARD.encode(pair.as_bytes())));
            let mut header = http::HeaderValue::from_str(&value)
                .map_err(|_| AuthError::new(kind::CREDENTIAL))?;
            header.set_sensitive(true);
            return Ok(Some(header));
        }
    }
    Ok(None)
}

/// Sends a token request with `params` and reads the tokens. With DPoP, each attempt carries
/// a fresh proof, and one `use_dpop_nonce` answer is retried with the server's nonce
/// (RFC 9449 §8). `requested_scope` is kept when the answer does not say which scopes were
/// granted.
pub(crate) async fn request(
    call: &TokenCall<'_>,
    mut params: Params,
    requested_scope: Option<&str>,
) -> Result<Tokens, AuthError> {
    let endpoint = super::endpoint(call.server.token_endpoint.as_deref())?;
    let basic = authenticate(call, &mut params)?;
    let pairs: Vec<(&str, &str)> = params.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let body = Zeroizing::new(fetch::form(&pairs));
    for attempt in 0..2 {
        let mut request = call
            .http
            .post(endpoint.as_str())
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body.as_bytes().to_vec());
        if let Some(header) = &basic {
            request = request.header(http::header::AUTHORIZATION, header.clone());
        }
        if let Some(dpop) = call.dpop {
            request = request.header("dpop", dpop.token_proof(endpoint.as_str())?);
        }
        let answer = fetch::exchange::<TokenAnswer>(request, call.limit).await?;
        let nonce_changed = call.dpop.is_some_and(|d| d.take_as_nonce(&answer.headers));
        match answer.body {
            Some(token) if answer.status == 200 => {
                return tokens_from(call, token, requested_scope);
            }
            Some(token)
                if attempt == 0
                    && nonce_changed
                    && token.error.as_deref() == Some("use_dpop_nonce") => {}
            _ => return Err(AuthError::new(kind::TOKEN)),
        }
    }
    Err(AuthError::new(kind::TOKEN))
}

fn tokens_from(
    call: &TokenCall<'_>,
    answer: TokenAnswer,
    requested_scope: Option<&str>,
) -> Result<Tokens, AuthError> {
    let access_token = Zeroizing::new(answer.access_token.ok_or(AuthError::new(kind::TOKEN))?);
    let refresh_token = answer.refresh_token.map(Zeroizing::new);
    let token_type = answer.token_type.unwrap_or_default();
    let dpop = token_type.eq_ignore_ascii_case("dpop");
    // A DPoP-bound token is used only with the key it is bound to (RFC 9449 §7.1).
    if !(token_type.eq_ignore_ascii_case("bearer") || dpop && call.dpop.is_some()) {
        return Err(AuthError::new(kind::TOKEN_TYPE));
    }
    if http::HeaderValue::from_str(&access_token).is_err() || access_token.is_empty() {
        return Err(AuthError::new(kind::BAD_TOKEN));
    }
    let mut tokens = Tokens::new(call.server.issuer.clone(), String::new());
    tokens.access_token = access_token;
    tokens.refresh_token = refresh_token;
    tokens.dpop = dpop;
    tokens.expires_at = answer
        .expires_in
        .and_then(|s| SystemTime::now().checked_add(Duration::from_secs(s)));
    tokens.scope = answer.scope.or_else(|| requested_scope.map(str::to_owned));
    Ok(tokens)
}
