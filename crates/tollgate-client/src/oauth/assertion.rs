//! Grants that present a JWT instead of a user (RFC 7523 §2.1, the JWT bearer grant): the
//! [`Assertion`] trait that supplies the JWT, a workload identity's token
//! ([`WorkloadIdentity`]), and enterprise-managed authorization's identity assertion
//! authorization grant obtained from the enterprise's identity provider by token exchange
//! ([`IdJagExchange`], RFC 8693). It owns obtaining the assertion; it must not know the token
//! endpoint it is presented at.

use serde::Deserialize;
use zeroize::Zeroizing;

use crate::auth::{AuthError, AuthFuture};

use super::{fetch, kind};

/// The JWT bearer grant's type (RFC 7523 §2.1).
pub(crate) const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Supplies the JWT the client presents to an authorization server in the JWT bearer grant.
pub trait Assertion: Send + Sync {
    /// The assertion to present to the authorization server `issuer` for `resource`.
    ///
    /// # Errors
    ///
    /// An [`AuthError`] when no assertion can be had.
    fn assertion<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
    ) -> AuthFuture<'a, Result<Zeroizing<String>, AuthError>>;
}

/// A workload's identity token (a JWT its platform issued, such as a Kubernetes service account
/// token or a cloud provider's identity token), read afresh for every grant.
///
/// # Examples
///
/// ```
/// use tollgate_client::oauth::WorkloadIdentity;
///
/// let identity = WorkloadIdentity::new(|| {
///     std::fs::read_to_string("/var/run/secrets/tokens/mcp")
///         .map(|t| t.trim().to_owned())
///         .map_err(|_| tollgate_client::auth::AuthError::new("workload token unreadable"))
/// });
/// # let _ = identity;
/// ```
pub struct WorkloadIdentity {
    read: Box<dyn Fn() -> Result<String, AuthError> + Send + Sync>,
}

impl WorkloadIdentity {
    /// A workload identity whose token `read` returns.
    pub fn new(read: impl Fn() -> Result<String, AuthError> + Send + Sync + 'static) -> Self {
        Self {
            read: Box::new(read),
        }
    }
}

impl Assertion for WorkloadIdentity {
    fn assertion<'a>(
        &'a self,
        _issuer: &'a str,
        _resource: &'a str,
    ) -> AuthFuture<'a, Result<Zeroizing<String>, AuthError>> {
        Box::pin(async move { (self.read)().map(Zeroizing::new) })
    }
}

/// Enterprise-managed authorization: exchanges the user's ID token at the enterprise identity
/// provider's token endpoint for an identity assertion authorization grant (ID-JAG) addressed
/// to the authorization server and resource (RFC 8693 token exchange), which is then the
/// assertion of the JWT bearer grant.
pub struct IdJagExchange {
    token_endpoint: String,
    client_id: String,
    client_secret: Option<Zeroizing<String>>,
    id_token: Zeroizing<String>,
    http: reqwest::Client,
    limit: usize,
}

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

impl IdJagExchange {
    /// An exchange at the identity provider's `token_endpoint` as the client `client_id` (the
    /// client registered at the identity provider), with the user's `id_token`.
    ///
    /// # Errors
    ///
    /// When the endpoint is not HTTPS (plain HTTP is allowed on loopback only) or the HTTP
    /// client cannot be built.
    pub fn new(
        token_endpoint: impl Into<String>,
        client_id: impl Into<String>,
        id_token: String,
    ) -> Result<Self, AuthError> {
        let token_endpoint = token_endpoint.into();
        super::endpoint(Some(&token_endpoint))?;
        Ok(Self {
            token_endpoint,
            client_id: client_id.into(),
            client_secret: None,
            id_token: Zeroizing::new(id_token),
            http: fetch::http_client()?,
            limit: super::OAuthClient::DEFAULT_MAX_DOCUMENT_BYTES,
        })
    }

    /// The client's secret at the identity provider (sent with `client_secret_post`; default
    /// none).
    #[must_use]
    pub fn client_secret(mut self, secret: String) -> Self {
        self.client_secret = Some(Zeroizing::new(secret));
        self
    }

    async fn exchange(&self, issuer: &str, resource: &str) -> Result<Zeroizing<String>, AuthError> {
        #[derive(Deserialize)]
        struct Exchanged {
            access_token: String,
            issued_token_type: String,
        }
        let mut pairs = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("subject_token", self.id_token.as_str()),
            ("subject_token_type", ID_TOKEN),
            ("audience", issuer),
            ("resource", resource),
            ("client_id", self.client_id.as_str()),
        ];
        if let Some(secret) = &self.client_secret {
            pairs.push(("client_secret", secret.as_str()));
        }
        let body = Zeroizing::new(fetch::form(&pairs));
        let request = self
            .http
            .post(&self.token_endpoint)
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body.as_bytes().to_vec());
        let answer = fetch::exchange::<Exchanged>(request, self.limit).await?;
        match answer.body {
            Some(found) if answer.status == 200 && found.issued_token_type == ID_JAG => {
                Ok(Zeroizing::new(found.access_token))
            }
            _ => Err(AuthError::new(kind::EXCHANGE)),
        }
    }
}

impl Assertion for IdJagExchange {
    fn assertion<'a>(
        &'a self,
        issuer: &'a str,
        resource: &'a str,
    ) -> AuthFuture<'a, Result<Zeroizing<String>, AuthError>> {
        Box::pin(self.exchange(issuer, resource))
    }
}
