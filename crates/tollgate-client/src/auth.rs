//! The seam between the HTTP transport and whatever supplies credentials (static tokens, the
//! OAuth client). It owns only the trait; it must not know how credentials are obtained.

use std::future::Future;
use std::pin::Pin;

/// A boxed future, as the [`Authorizer`] methods return.
pub type AuthFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why credentials could not be supplied. Never carries a token or a secret.
#[derive(Debug)]
pub struct AuthError {
    kind: &'static str,
}

impl AuthError {
    /// An error of the given fixed kind (a short static text such as `"discovery failed"`).
    pub fn new(kind: &'static str) -> Self {
        Self { kind }
    }

    /// The fixed kind of this error.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Whether an authorization or token server could not be reached (or the exchange broke
    /// off): a failure that says nothing of the credentials, so stored tokens are kept.
    #[cfg(feature = "oauth")]
    pub fn is_unreachable(&self) -> bool {
        self.kind == crate::oauth::kind::UNREACHABLE
    }
}

impl std::fmt::Display for AuthError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "authorization failed: {}", self.kind)
    }
}

impl std::error::Error for AuthError {}

/// What the transport should do after a challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Send the request again with fresh credentials from [`Authorizer::headers`].
    Again,
    /// Give up: the challenge cannot be met.
    GiveUp,
}

/// Supplies the headers that authorize an HTTP request to an MCP server, and reacts when the
/// server challenges (401, or 403 `insufficient_scope`).
pub trait Authorizer: Send + Sync {
    /// Headers to add to a request with this method to this URL (for example `Authorization`,
    /// and `DPoP` with a proof bound to the method and URL). Empty when there is nothing yet.
    fn headers<'a>(
        &'a self,
        method: &'a http::Method,
        url: &'a str,
    ) -> AuthFuture<'a, Result<Vec<(http::HeaderName, http::HeaderValue)>, AuthError>>;

    /// The server answered `status` with these response headers (`WWW-Authenticate`,
    /// `DPoP-Nonce`); obtain or refresh credentials and say whether to retry.
    fn challenged<'a>(
        &'a self,
        url: &'a str,
        status: u16,
        headers: &'a http::HeaderMap,
    ) -> AuthFuture<'a, Result<Retry, AuthError>>;
}
