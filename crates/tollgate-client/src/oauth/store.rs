//! Token storage behind a small trait, with the in-memory default. It owns what is kept
//! between requests (the access and refresh tokens, their issuer, scopes and expiry, and the
//! dynamic registration they were issued to); it must not know how tokens are obtained.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use zeroize::Zeroizing;

/// The tokens an authorization server issued for one resource.
#[derive(Clone)]
#[non_exhaustive]
pub struct Tokens {
    /// The access token (wiped from memory on drop).
    pub access_token: Zeroizing<String>,
    /// The refresh token, if one was issued (wiped from memory on drop).
    pub refresh_token: Option<Zeroizing<String>>,
    /// When the access token expires, if the server said.
    pub expires_at: Option<SystemTime>,
    /// The scopes granted (or requested, when the server did not say), space-separated.
    pub scope: Option<String>,
    /// The issuer of the authorization server that issued them.
    pub issuer: String,
    /// Whether the access token is bound to the client's DPoP key (`token_type` `DPoP`): it is
    /// sent with the `DPoP` scheme and a proof, and is useless without the key.
    pub dpop: bool,
    /// The dynamically registered client (RFC 7591) the tokens were issued to, kept so that a
    /// later run refreshes them without registering again; `None` for pre-registered clients
    /// (the application supplies those) and client ID metadata documents. A store that keeps
    /// tokens across runs keeps it too (its secret, when it has one, is as sensitive as the
    /// refresh token).
    pub client: Option<super::ClientCredentials>,
}

impl Tokens {
    /// Tokens issued by `issuer`.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate_client::oauth::Tokens;
    ///
    /// let tokens = Tokens::new("https://as.example", "at-1".to_owned());
    /// assert_eq!(tokens.issuer, "https://as.example");
    /// assert!(!format!("{tokens:?}").contains("at-1"));
    /// ```
    pub fn new(issuer: impl Into<String>, access_token: String) -> Self {
        Self {
            access_token: Zeroizing::new(access_token),
            refresh_token: None,
            expires_at: None,
            scope: None,
            issuer: issuer.into(),
            dpop: false,
            client: None,
        }
    }

    /// Whether the access token has expired by `now`.
    pub fn expired_at(&self, now: SystemTime) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"[redacted]")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "[redacted]"),
            )
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("issuer", &self.issuer)
            .field("dpop", &self.dpop)
            .field("client", &self.client)
            .finish()
    }
}

/// Where tokens are kept, keyed by the resource (the MCP server's canonical URI). Implement
/// it to keep tokens across runs (an OS keychain, an encrypted file).
pub trait TokenStore: Send + Sync {
    /// The tokens kept for `resource`.
    fn load(&self, resource: &str) -> Option<Tokens>;
    /// Keeps `tokens` for `resource`, replacing what was there.
    fn save(&self, resource: &str, tokens: Tokens);
    /// Forgets the tokens of `resource`.
    fn clear(&self, resource: &str);
}

/// Tokens kept in memory for the life of the process (the default).
///
/// # Examples
///
/// ```
/// use tollgate_client::oauth::{MemoryTokenStore, TokenStore, Tokens};
///
/// let store = MemoryTokenStore::default();
/// store.save("https://mcp.example/mcp", Tokens::new("https://as.example", "t".to_owned()));
/// assert!(store.load("https://mcp.example/mcp").is_some());
/// store.clear("https://mcp.example/mcp");
/// assert!(store.load("https://mcp.example/mcp").is_none());
/// ```
#[derive(Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, Tokens>>,
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, resource: &str) -> Option<Tokens> {
        self.tokens.lock().ok()?.get(resource).cloned()
    }

    fn save(&self, resource: &str, tokens: Tokens) {
        if let Ok(mut map) = self.tokens.lock() {
            map.insert(resource.to_owned(), tokens);
        }
    }

    fn clear(&self, resource: &str) {
        if let Ok(mut map) = self.tokens.lock() {
            map.remove(resource);
        }
    }
}
