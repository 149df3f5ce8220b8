//! `tollgate gateway login`'s work: the one-time, interactive authorization of one upstream's
//! authorization-code grant (`[upstream.oauth] grant = "authorization_code"`). The gateway's
//! OAuth client runs the flow with PKCE through a loopback redirect (RFC 8252: a listener on
//! `127.0.0.1` for the one request that brings the code back), and its tokens are kept in the
//! upstream's `token_file`, where the serving gateway reads and refreshes them. Owns the
//! login's order and its outcome; the flow is tollgate-client's, and serving knows nothing of
//! it (a serving gateway never waits for a browser).

use std::sync::Arc;

use tollgate_client::Client;
use tollgate_client::oauth::{FileTokenStore, LoopbackRedirect, TokenStore};

use crate::config::{UpstreamConfig, UpstreamTransport};
use crate::error::{
    CLIENT_SETUP, GatewayError, GatewayErrorKind, NO_CHALLENGE, NOT_AUTHORIZATION_CODE, UNREACHABLE,
};
use crate::oauth::{OAuthGrant, Watched};

/// Shows the authorization URL to the user (prints it, and may open a browser).
pub type ShowUrl = Box<dyn Fn(&str) + Send + Sync>;

/// Authorizes the gateway at `upstream` once, as a user: forgets the tokens kept for it, then
/// connects with the authorization-code flow (PKCE S256; the client pre-registered, its
/// metadata document, or registered dynamically), hands the authorization URL to `show`, waits
/// up to 300 seconds for the browser to come back to the loopback redirect, and keeps the
/// tokens (with a refresh token where the authorization server grants `offline_access`) in the
/// upstream's `token_file`. The serving gateway then uses and refreshes them.
///
/// # Examples
///
/// ```no_run
/// # async fn run() -> Result<(), tollgate_gateway::GatewayError> {
/// use tollgate_gateway::{GatewayConfig, login};
///
/// let config = GatewayConfig::from_file("gateway.toml".as_ref())?;
/// let upstream = config.upstreams().iter().find(|u| u.name() == "tickets").unwrap();
/// login(upstream, Box::new(|url| eprintln!("Open this URL to log in:\n  {url}"))).await?;
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// [`GatewayErrorKind::Login`] naming the upstream, with a fixed [`cause`](GatewayError::cause):
/// the upstream has no authorization-code grant, the OAuth flow was refused (its fixed kind,
/// such as `"authorization redirect timed out"` or `"token request refused"`), the token file
/// could not be written, or the upstream asked for no authorization. Never a token, a code or
/// a URL.
pub async fn login(upstream: &UpstreamConfig, show: ShowUrl) -> Result<(), GatewayError> {
    let refuse = |cause| {
        GatewayError::new(GatewayErrorKind::Login, Some(upstream.name())).because(Some(cause))
    };
    let (UpstreamTransport::Http { url, headers }, Some(oauth)) =
        (upstream.transport(), upstream.oauth())
    else {
        return Err(refuse(NOT_AUTHORIZATION_CODE));
    };
    let Some(path) = oauth
        .token_file()
        .filter(|_| oauth.grant() == OAuthGrant::AuthorizationCode)
    else {
        return Err(refuse(NOT_AUTHORIZATION_CODE));
    };
    let store = Arc::new(FileTokenStore::new(path));
    let resource = url.split('#').next().unwrap_or(url);
    // A login authorizes afresh: tokens kept from before (another account, fewer scopes) go.
    store.try_clear(resource).map_err(|e| refuse(e.kind()))?;
    let redirect = LoopbackRedirect::bind(Box::new(move |url: &str| {
        show(url);
        Ok(())
    }))
    .await
    .map_err(|e| refuse(e.kind()))?;
    let client = oauth
        .client_builder()
        .map_err(|_| refuse(CLIENT_SETUP))?
        .redirect(Arc::new(redirect))
        .token_store(Arc::clone(&store) as Arc<dyn TokenStore>)
        .build()
        .map_err(|_| refuse(CLIENT_SETUP))?;
    let watched = Watched::new(client, upstream.name(), oauth.grant());
    let mut builder = Client::builder().authorizer(Arc::clone(&watched) as _);
    for (name, value) in headers {
        builder = builder
            .header(name, value)
            .map_err(|_| refuse(CLIENT_SETUP))?;
    }
    if let Some(revisions) = upstream.revisions() {
        builder = builder.revisions(revisions.iter().copied());
    }
    let connected = builder.connect_http(url).await;
    let client = connected.map_err(|_| refuse(watched.last_refusal().unwrap_or(UNREACHABLE)))?;
    let _ = client.close().await;
    if let Some(failure) = store.last_failure() {
        return Err(refuse(failure.kind()));
    }
    if store.load(resource).is_none() {
        return Err(refuse(NO_CHALLENGE));
    }
    Ok(())
}
