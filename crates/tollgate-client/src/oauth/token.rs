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
}

impl TokenEndpointAuth {
    /// The method's registered name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        match name {
            "none" => Some(Self::None),
            "client_secret_basic" => Some(Self::ClientSecretBasic),
            "client_secret_post" => Some(Self::ClientSecretPost),
            _ => None,
        }
    }
}

/// A client's identity at one authorization server: pre-registered, registered dynamically, or
/// a client ID metadata document's URL.
#[derive(Clone)]
pub struct ClientCredentials {
    pub(crate) issuer: String,
    pub(crate) client_id: String,
    pub(crate) secret: Option<Zeroizing<String>>,
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
            issuer: issuer.into(),
            client_id: client_id.into(),
            secret: None,
            method: None,
        }
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

    /// The issuer of the authorization server these credentials belong to.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The method used with this server's metadata.
    pub(crate) fn method_for(&self, server: &ServerMetadata) -> TokenEndpointAuth {
        if let Some(method) = self.method {
            return method;
        }
        if self.secret.is_none() {
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
            issuer: issuer.to_owned(),
            client_id: answer.client_id,
            secret: answer.client_secret.map(Zeroizing::new),
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
    access_token: String,
    token_type: String,
    #[serde(default)]
    expires_in: Option<u64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

/// A token request's grant-specific parameters (secrets among them are wiped on drop).
pub(crate) type Params = Vec<(&'static str, Zeroizing<String>)>;

/// Sends a token request with `params`, authenticated as `client`, and reads the tokens.
/// `requested_scope` is kept when the answer does not say which scopes were granted.
pub(crate) async fn request(
    http: &reqwest::Client,
    server: &ServerMetadata,
    client: &ClientCredentials,
    mut params: Params,
    requested_scope: Option<&str>,
    limit: usize,
) -> Result<Tokens, AuthError> {
    let endpoint = super::endpoint(server.token_endpoint.as_deref())?;
    let mut request = http.post(endpoint.as_str());
    match client.method_for(server) {
        TokenEndpointAuth::None => {
            params.push(("client_id", Zeroizing::new(client.client_id.clone())));
        }
        TokenEndpointAuth::ClientSecretPost => {
            params.push(("client_id", Zeroizing::new(client.client_id.clone())));
            let secret = client
                .secret
                .as_ref()
                .ok_or(AuthError::new(kind::CREDENTIAL))?;
            params.push(("client_secret", secret.clone()));
        }
        TokenEndpointAuth::ClientSecretBasic => {
            let secret = client
                .secret
                .as_ref()
                .ok_or(AuthError::new(kind::CREDENTIAL))?;
            // RFC 6749 §2.3.1: both parts form-encoded before Basic encoding.
            let pair = Zeroizing::new(format!(
                "{}:{}",
                url::form_urlencoded::byte_serialize(client.client_id.as_bytes())
                    .collect::<String>(),
                Zeroizing::new(
                    url::form_urlencoded::byte_serialize(secret.as_bytes()).collect::<String>()
                )
                .as_str()
            ));
            let value = Zeroizing::new(format!("Basic {}", STANDARD.encode(pair.as_bytes())));
            let mut header = http::HeaderValue::from_str(&value)
                .map_err(|_| AuthError::new(kind::CREDENTIAL))?;
            header.set_sensitive(true);
            request = request.header(http::header::AUTHORIZATION, header);
        }
    }
    let pairs: Vec<(&str, &str)> = params.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let body = Zeroizing::new(fetch::form(&pairs));
    let request = request
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body.as_bytes().to_vec());
    let answer = fetch::exchange::<TokenAnswer>(request, limit).await?;
    let token = match answer.body {
        Some(token) if answer.status == 200 => token,
        _ => return Err(AuthError::new(kind::TOKEN)),
    };
    tokens_from(server, token, requested_scope)
}

fn tokens_from(
    server: &ServerMetadata,
    answer: TokenAnswer,
    requested_scope: Option<&str>,
) -> Result<Tokens, AuthError> {
    let access_token = Zeroizing::new(answer.access_token);
    let refresh_token = answer.refresh_token.map(Zeroizing::new);
    if !answer.token_type.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::new(kind::TOKEN_TYPE));
    }
    if http::HeaderValue::from_str(&access_token).is_err() || access_token.is_empty() {
        return Err(AuthError::new(kind::BAD_TOKEN));
    }
    let mut tokens = Tokens::new(server.issuer.clone(), String::new());
    tokens.access_token = access_token;
    tokens.refresh_token = refresh_token;
    tokens.expires_at = answer
        .expires_in
        .and_then(|s| SystemTime::now().checked_add(Duration::from_secs(s)));
    tokens.scope = answer.scope.or_else(|| requested_scope.map(str::to_owned));
    Ok(tokens)
}
