//! The gateway's own OAuth client for one HTTP upstream (`[upstream.oauth]`): the table's rules
//! for each grant (client credentials; the authorization code with its token file), and the
//! authorizer a connection to the upstream uses. For the authorization-code grant that
//! authorizer only ever uses the tokens stored by `tollgate gateway login` (refreshing them):
//! it has no redirect, so a connection that needs a user fails at once instead of waiting for a
//! browser, and its refusal is logged once, naming the login command. Knows nothing of tools,
//! catalogs or serving; the OAuth flow itself is tollgate-client's.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use tollgate_client::auth::{AuthError, AuthFuture, Authorizer, Retry};
use tollgate_client::oauth::{
    ClientCredentials, FileTokenStore, KeyAlgorithm, OAuthClient, OAuthClientBuilder,
    TokenEndpointAuth, is_scope_token,
};
use zeroize::Zeroizing;

use crate::error::ConfigErrorKind;
use crate::shared::{UPSTREAM, lock};

/// The `client_name` the gateway registers under (dynamic registration) by default.
pub const DEFAULT_CLIENT_NAME: &str = "tollgate-gateway";

/// How the gateway obtains its tokens for an upstream (`grant` in `[upstream.oauth]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthGrant {
    /// `grant = "client_credentials"` (the default): no user; a client secret or a private key.
    ClientCredentials,
    /// `grant = "authorization_code"`: a user authorizes the gateway once
    /// (`tollgate gateway login`), and the gateway keeps and refreshes the tokens in its
    /// `token_file`.
    AuthorizationCode,
}

/// The gateway's own OAuth client for one HTTP upstream (`[upstream.oauth]`).
///
/// With `grant = "client_credentials"` (the default): the client credentials grant,
/// authenticated with a client secret (`client_secret_basic` or `_post`) or a private key
/// (`private_key_jwt`). With `grant = "authorization_code"`: the tokens a user granted once
/// through `tollgate gateway login` ([`login`](crate::login)), kept in `token_file` and refreshed
/// there; the client is pre-registered (`client_id`, with an optional `client_secret`), a client
/// ID metadata document (`client_metadata_url`), or registered dynamically at login. Either way
/// the gateway discovers the upstream's authorization server on its first 401, as the MCP
/// authorization specification says; a caller's token is never what reaches the upstream.
///
/// # Examples
///
/// ```
/// use tollgate_gateway::{GatewayConfig, OAuthGrant};
///
/// let config = GatewayConfig::from_toml(r#"
/// [[upstream]]
/// name = "weather"
/// url = "https://weather.example/mcp"
///
/// [upstream.oauth]
/// client_id = "tollgate-gateway"
/// client_secret = "s3cret"
///
/// [[upstream]]
/// name = "tickets"
/// url = "https://tickets.example/mcp"
///
/// [upstream.oauth]
/// grant = "authorization_code"
/// token_file = "/var/lib/tollgate/tickets-tokens.json"
/// "#)?;
/// let weather = config.upstreams()[0].oauth().unwrap();
/// assert_eq!(weather.client_id(), Some("tollgate-gateway"));
/// assert_eq!(weather.grant(), OAuthGrant::ClientCredentials);
/// let tickets = config.upstreams()[1].oauth().unwrap();
/// assert_eq!(tickets.grant(), OAuthGrant::AuthorizationCode);
/// assert_eq!(tickets.client_id(), None); // registered dynamically at login
/// assert!(!format!("{config:?}").contains("s3cret"));
/// # Ok::<(), tollgate_gateway::GatewayError>(())
/// ```
#[derive(Clone)]
pub struct UpstreamOAuth {
    grant: OAuthGrant,
    client_id: Option<String>,
    issuer: Option<String>,
    secret: Option<Zeroizing<String>>,
    private_key_file: Option<PathBuf>,
    algorithm: Option<KeyAlgorithm>,
    method: Option<TokenEndpointAuth>,
    token_file: Option<PathBuf>,
    metadata_url: Option<String>,
    client_name: Option<String>,
    scopes: Vec<String>,
}

impl std::fmt::Debug for UpstreamOAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret is a credential: never printed.
        f.debug_struct("UpstreamOAuth")
            .field("grant", &self.grant)
            .field("client_id", &self.client_id)
            .field("issuer", &self.issuer)
            .field("private_key_file", &self.private_key_file)
            .field("token_file", &self.token_file)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// The `[upstream.oauth]` table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OAuthTable {
    grant: Option<String>,
    client_id: Option<String>,
    issuer: Option<String>,
    #[serde(rename = "client_secret")]
    secret: Option<String>,
    private_key_file: Option<PathBuf>,
    algorithm: Option<String>,
    auth_method: Option<String>,
    token_file: Option<PathBuf>,
    client_metadata_url: Option<String>,
    client_name: Option<String>,
    scopes: Option<Vec<String>>,
}

impl UpstreamOAuth {
    /// How the gateway obtains its tokens (`grant`; default `"client_credentials"`).
    pub fn grant(&self) -> OAuthGrant {
        self.grant
    }

    /// The client ID registered at the upstream's authorization server (required for the
    /// client credentials grant; for the authorization-code grant, `None` means a client ID
    /// metadata document or dynamic registration at login).
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The authorization server the credentials belong to (`issuer`); without one they are
    /// bound to the first authorization server the upstream names, and never presented to
    /// another.
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// Where the authorization-code grant's tokens are kept (`token_file`, required with that
    /// grant): a JSON file created owner-only (`0600`, its directory `0700` on Unix), rewritten
    /// whole through a temporary file and a rename on each change.
    pub fn token_file(&self) -> Option<&Path> {
        self.token_file.as_deref()
    }

    /// The HTTPS URL of the gateway's client ID metadata document (`client_metadata_url`,
    /// authorization-code grant only), used as its `client_id` where the authorization server
    /// supports such documents.
    pub fn client_metadata_url(&self) -> Option<&str> {
        self.metadata_url.as_deref()
    }

    /// Scopes the gateway asks for beside the ones the upstream names (`scopes`, either grant;
    /// default none): for the authorization-code grant, the wider scopes a user grants once at
    /// `tollgate gateway login`, so a step-up the upstream asks later needs no new login. Each
    /// an RFC 6749 scope token ([`is_scope_token`](tollgate_client::oauth::is_scope_token)), at
    /// most [`OAuthClient::MAX_SCOPES`](tollgate_client::oauth::OAuthClient::MAX_SCOPES).
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The credentials for the client's OAuth module; the private key read from its file.
    fn credentials(&self) -> std::io::Result<Option<ClientCredentials>> {
        let Some(client_id) = &self.client_id else {
            return Ok(None);
        };
        let mut credentials = match &self.issuer {
            Some(issuer) => ClientCredentials::new(issuer.as_str(), client_id.as_str()),
            None => ClientCredentials::unbound(client_id.as_str()),
        };
        if let Some(secret) = &self.secret {
            credentials = credentials.secret(String::clone(secret));
        }
        if let (Some(path), Some(algorithm)) = (&self.private_key_file, self.algorithm) {
            let pem = std::fs::read_to_string(path)?;
            credentials = credentials.private_key(pem, algorithm);
        }
        if let Some(method) = self.method {
            credentials = credentials.method(method);
        }
        Ok(Some(credentials))
    }

    /// The OAuth client for this upstream, before its redirect (the login's) is set: the
    /// credentials, and for the authorization-code grant the token file, no DPoP (a DPoP key
    /// lives and dies with its process, so tokens bound to it could not be kept) and a refresh
    /// token asked for.
    pub(crate) fn client_builder(&self) -> std::io::Result<OAuthClientBuilder> {
        let credentials = self.credentials()?;
        let mut builder = OAuthClient::builder().scopes(self.scopes.iter().cloned());
        match self.grant {
            OAuthGrant::ClientCredentials => {
                if let Some(credentials) = credentials {
                    builder = builder.client_credentials_grant(credentials);
                }
            }
            OAuthGrant::AuthorizationCode => {
                if let Some(credentials) = credentials {
                    builder = builder.pre_registered(credentials);
                }
                if let Some(url) = &self.metadata_url {
                    builder = builder.client_metadata_document(url.as_str());
                }
                if let Some(path) = &self.token_file {
                    builder = builder.token_store(Arc::new(FileTokenStore::new(path.clone())));
                }
                let name = self.client_name.as_deref().unwrap_or(DEFAULT_CLIENT_NAME);
                builder = builder.client_name(name).offline_access(true).dpop(false);
            }
        }
        Ok(builder)
    }

    /// The table's rules, per grant; the broken rule's kind when they fail.
    pub(crate) fn from_table(t: OAuthTable) -> Result<Self, ConfigErrorKind> {
        let grant = match t.grant.as_deref() {
            None | Some("client_credentials") => OAuthGrant::ClientCredentials,
            Some("authorization_code") => OAuthGrant::AuthorizationCode,
            Some(_) => return Err(ConfigErrorKind::InvalidGrant),
        };
        if t.client_id.as_deref() == Some("") {
            return Err(ConfigErrorKind::InvalidOAuth);
        }
        match grant {
            OAuthGrant::ClientCredentials => {
                // The authorization-code grant's keys have no meaning here.
                if t.token_file.is_some()
                    || t.client_metadata_url.is_some()
                    || t.client_name.is_some()
                {
                    return Err(ConfigErrorKind::InvalidGrant);
                }
                if t.client_id.is_none() || t.secret.is_some() == t.private_key_file.is_some() {
                    return Err(ConfigErrorKind::InvalidOAuth);
                }
            }
            OAuthGrant::AuthorizationCode => {
                if t.private_key_file.is_some() || t.algorithm.is_some() {
                    return Err(ConfigErrorKind::InvalidGrant);
                }
                if t.token_file
                    .as_ref()
                    .is_none_or(|p| p.as_os_str().is_empty())
                {
                    return Err(ConfigErrorKind::NoTokenFile);
                }
                let https = |u: &String| u.starts_with("https://") && u.len() > "https://".len();
                if (t.secret.is_some() && t.client_id.is_none())
                    || t.client_metadata_url.as_ref().is_some_and(|u| !https(u))
                    || t.client_name.as_ref().is_some_and(String::is_empty)
                {
                    return Err(ConfigErrorKind::InvalidOAuth);
                }
            }
        }
        let scopes = t.scopes.unwrap_or_default();
        if scopes.len() > OAuthClient::MAX_SCOPES || !scopes.iter().all(|s| is_scope_token(s)) {
            return Err(ConfigErrorKind::InvalidScopes);
        }
        let algorithm = match (&t.private_key_file, &t.algorithm) {
            (Some(_), Some(name)) => {
                Some(KeyAlgorithm::from_name(name).ok_or(ConfigErrorKind::InvalidOAuth)?)
            }
            (None, None) => None,
            _ => return Err(ConfigErrorKind::InvalidOAuth),
        };
        let method = match t.auth_method.as_deref() {
            None => None,
            Some("client_secret_basic") if t.secret.is_some() => {
                Some(TokenEndpointAuth::ClientSecretBasic)
            }
            Some("client_secret_post") if t.secret.is_some() => {
                Some(TokenEndpointAuth::ClientSecretPost)
            }
            Some("private_key_jwt") if algorithm.is_some() => {
                Some(TokenEndpointAuth::PrivateKeyJwt)
            }
            Some(_) => return Err(ConfigErrorKind::InvalidOAuth),
        };
        Ok(Self {
            grant,
            client_id: t.client_id,
            issuer: t.issuer,
            secret: t.secret.map(Zeroizing::new),
            private_key_file: t.private_key_file,
            algorithm,
            method,
            token_file: t.token_file,
            metadata_url: t.client_metadata_url,
            client_name: t.client_name,
            scopes,
        })
    }
}

/// The OAuth client of one upstream, watched: the fixed kind of its last refusal is kept (for
/// the login's and the connection's errors), and a refusal of the authorization-code grant's
/// stored tokens is logged once per run of refusals, naming the login command.
pub(crate) struct Watched {
    inner: OAuthClient,
    upstream: Arc<str>,
    grant: OAuthGrant,
    refused: AtomicBool,
    unreachable: AtomicBool,
    last: Mutex<Option<&'static str>>,
}

impl Watched {
    pub(crate) fn new(inner: OAuthClient, upstream: &str, grant: OAuthGrant) -> Arc<Self> {
        Arc::new(Self {
            inner,
            upstream: Arc::from(upstream),
            grant,
            refused: AtomicBool::new(false),
            unreachable: AtomicBool::new(false),
            last: Mutex::new(None),
        })
    }

    /// The fixed kind of the last refusal (`None` after a challenge was met).
    pub(crate) fn last_refusal(&self) -> Option<&'static str> {
        *lock(&self.last)
    }

    /// Whether the last refusal was the authorization server not reached (the stored tokens
    /// kept: no login is called for).
    pub(crate) fn last_unreachable(&self) -> bool {
        self.unreachable.load(Ordering::Relaxed)
    }

    fn record(&self, outcome: &Result<Retry, AuthError>) {
        let refusal = outcome.as_ref().err().map(AuthError::kind);
        *lock(&self.last) = refusal;
        let unreachable = outcome.as_ref().is_err_and(AuthError::is_unreachable);
        self.unreachable.store(unreachable, Ordering::Relaxed);
        let Some(kind) = refusal else {
            self.refused.store(false, Ordering::Relaxed);
            return;
        };
        // The authorization server was not reached: the stored tokens are kept (the client
        // tries the refresh again at the next 401), so no login is called for.
        if unreachable {
            tracing::warn!(
                target: UPSTREAM,
                upstream = &*self.upstream,
                "the upstream's authorization server could not be reached: its stored tokens are kept"
            );
            return;
        }
        if self.grant == OAuthGrant::AuthorizationCode
            && !self.refused.swap(true, Ordering::Relaxed)
        {
            tracing::error!(
                target: UPSTREAM,
                upstream = &*self.upstream,
                refusal = kind,
                "no usable tokens for the upstream (none stored, or the refresh was refused): it is unavailable until `tollgate gateway login --config FILE --upstream {}` is run",
                self.upstream
            );
        }
    }
}

impl Authorizer for Watched {
    fn headers<'a>(
        &'a self,
        method: &'a http::Method,
        url: &'a str,
    ) -> AuthFuture<'a, Result<Vec<(http::HeaderName, http::HeaderValue)>, AuthError>> {
        self.inner.headers(method, url)
    }

    fn challenged<'a>(
        &'a self,
        url: &'a str,
        status: u16,
        headers: &'a http::HeaderMap,
    ) -> AuthFuture<'a, Result<Retry, AuthError>> {
        Box::pin(async move {
            let outcome = self.inner.challenged(url, status, headers).await;
            self.record(&outcome);
            outcome
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;
    use crate::config::GatewayConfig;

    const HTTP: &str = "[[upstream]]\nname = \"up\"\nurl = \"https://x.example/mcp\"\n";

    fn parse(oauth: &str) -> Result<UpstreamOAuth, crate::GatewayError> {
        let config = GatewayConfig::from_toml(&format!("{HTTP}[upstream.oauth]\n{oauth}"))?;
        Ok(config.upstreams()[0].oauth().unwrap().clone())
    }

    fn kind(oauth: &str) -> ConfigErrorKind {
        let error = parse(oauth).err().unwrap();
        let kind = error.config_kind().unwrap();
        // A rule broken names its upstream (a file that does not parse names none).
        let named = if kind == ConfigErrorKind::Syntax {
            None
        } else {
            Some("up")
        };
        assert_eq!(error.upstream(), named);
        kind
    }

    #[test]
    fn scopes_are_scope_tokens_within_their_bounds() {
        let code = "grant = \"authorization_code\"\ntoken_file = \"/t/tokens.json\"\n";
        let list = |items: &[String]| {
            let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
            format!("{code}scopes = [{}]\n", quoted.join(", "))
        };
        assert!(parse(code).unwrap().scopes().is_empty());
        let wide = parse(&list(&["mcp:read".into(), "mcp:write".into()])).unwrap();
        assert_eq!(wide.scopes(), ["mcp:read", "mcp:write"]);
        let many = |n: usize| (0..n).map(|i| format!("s{i}")).collect::<Vec<_>>();
        assert!(parse(&list(&many(OAuthClient::MAX_SCOPES))).is_ok());
        assert_eq!(
            kind(&list(&many(OAuthClient::MAX_SCOPES + 1))),
            ConfigErrorKind::InvalidScopes
        );
        let long = "s".repeat(OAuthClient::MAX_SCOPE_BYTES);
        assert!(parse(&list(std::slice::from_ref(&long))).is_ok());
        assert_eq!(
            kind(&list(&[format!("{long}s")])),
            ConfigErrorKind::InvalidScopes
        );
        for bad in ["", "a b", "a\\b"] {
            assert_eq!(kind(&list(&[bad.into()])), ConfigErrorKind::InvalidScopes);
        }
        // The client credentials grant takes them too.
        let cc = "client_id = \"gw\"\nclient_secret = \"s\"\nscopes = [\"mcp\"]\n";
        assert_eq!(parse(cc).unwrap().scopes(), ["mcp"]);
    }

    #[test]
    fn the_authorization_code_grant_takes_a_token_file_and_a_client_if_given() {
        let code = "grant = \"authorization_code\"\ntoken_file = \"/t/tokens.json\"\n";
        let dynamic = parse(code).unwrap();
        assert_eq!(dynamic.grant(), OAuthGrant::AuthorizationCode);
        assert_eq!(dynamic.token_file(), Some(Path::new("/t/tokens.json")));
        assert_eq!(
            (dynamic.client_id(), dynamic.client_metadata_url()),
            (None, None)
        );
        let pre = parse(&format!(
            "{code}client_id = \"gw\"\nclient_secret = \"s\"\nauth_method = \"client_secret_post\"\nissuer = \"https://as\"\nclient_name = \"my gateway\"\n"
        ))
        .unwrap();
        assert_eq!(
            (pre.client_id(), pre.issuer()),
            (Some("gw"), Some("https://as"))
        );
        let document = parse(&format!(
            "{code}client_metadata_url = \"https://gw.example/client.json\"\n"
        ))
        .unwrap();
        assert_eq!(
            document.client_metadata_url(),
            Some("https://gw.example/client.json")
        );
        // Without `grant`: the client credentials grant, as before the key existed.
        let credentials = parse("client_id = \"c\"\nclient_secret = \"s\"\n").unwrap();
        assert_eq!(credentials.grant(), OAuthGrant::ClientCredentials);
        assert_eq!(credentials.token_file(), None);
    }

    #[test]
    fn each_grant_refuses_the_other_s_keys_with_a_typed_error() {
        let code = "grant = \"authorization_code\"\ntoken_file = \"/t/tokens.json\"\n";
        let secret = "client_id = \"c\"\nclient_secret = \"s\"\n";
        for (bad, expected) in [
            (
                "grant = \"password\"\n".to_owned(),
                ConfigErrorKind::InvalidGrant,
            ),
            (
                "grant = \"implicit\"\ntoken_file = \"t\"\n".to_owned(),
                ConfigErrorKind::InvalidGrant,
            ),
            (
                format!("{secret}token_file = \"t\"\n"),
                ConfigErrorKind::InvalidGrant,
            ),
            (
                format!("{secret}client_metadata_url = \"https://c\"\n"),
                ConfigErrorKind::InvalidGrant,
            ),
            (
                format!("{secret}client_name = \"n\"\n"),
                ConfigErrorKind::InvalidGrant,
            ),
            (
                format!("{code}private_key_file = \"k.pem\"\nalgorithm = \"ES256\"\n"),
                ConfigErrorKind::InvalidGrant,
            ),
            (
                format!("{code}algorithm = \"ES256\"\n"),
                ConfigErrorKind::InvalidGrant,
            ),
            (
                "grant = \"authorization_code\"\n".to_owned(),
                ConfigErrorKind::NoTokenFile,
            ),
            (
                "grant = \"authorization_code\"\ntoken_file = \"\"\n".to_owned(),
                ConfigErrorKind::NoTokenFile,
            ),
            (
                format!("{code}client_secret = \"s\"\n"),
                ConfigErrorKind::InvalidOAuth,
            ),
            (
                format!("{code}client_id = \"\"\n"),
                ConfigErrorKind::InvalidOAuth,
            ),
            (
                format!("{code}client_name = \"\"\n"),
                ConfigErrorKind::InvalidOAuth,
            ),
            (
                format!("{code}client_metadata_url = \"http://c.example/m.json\"\n"),
                ConfigErrorKind::InvalidOAuth,
            ),
            (
                format!("{code}client_metadata_url = \"https://\"\n"),
                ConfigErrorKind::InvalidOAuth,
            ),
            (
                format!("{code}client_id = \"c\"\nauth_method = \"client_secret_basic\"\n"),
                ConfigErrorKind::InvalidOAuth,
            ),
            (format!("{code}scope = \"a\"\n"), ConfigErrorKind::Syntax),
        ] {
            assert_eq!(kind(&bad), expected, "{bad}");
        }
    }

    #[test]
    fn a_refused_table_echoes_none_of_its_values() {
        let bad = "grant = \"SECRET-GRANT-42\"\nclient_id = \"c\"\nclient_secret = \"SECRET42\"\n";
        let error = parse(bad).err().unwrap();
        let text = format!("{error} {error:?}");
        assert!(!text.contains("SECRET"), "{text}");
        let good = parse(
            "grant = \"authorization_code\"\ntoken_file = \"t\"\nclient_id = \"c\"\nclient_secret = \"SECRET42\"\n",
        )
        .unwrap();
        assert!(!format!("{good:?}").contains("SECRET42"));
    }

    #[test]
    fn the_guide_s_authorization_code_table_is_taken() {
        let guide = include_str!("../../../docs/guide/gateway.md");
        let block = guide
            .split("```toml\n")
            .skip(1)
            .map(|b| &b[..b.find("```").unwrap()])
            .find(|b| b.contains("grant = \"authorization_code\""))
            .unwrap();
        let config = GatewayConfig::from_toml(block).unwrap();
        let oauth = config.upstreams()[0].oauth().unwrap();
        assert_eq!(oauth.grant(), OAuthGrant::AuthorizationCode);
        assert!(oauth.token_file().is_some());
    }
}
