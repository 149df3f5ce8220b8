//! The flow's order after a challenge: discovery, then a refresh where one can help, else the
//! authorization-code flow with PKCE (the request, the redirect's `state` and `iss` checks, the
//! code's exchange); the step-up count. It owns the sequence; the documents, the registration,
//! the redirect and the token endpoint are the sibling modules'.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};
use url::Url;
use zeroize::Zeroizing;

use crate::auth::{AuthError, Retry};

use super::assertion::JWT_BEARER;
use super::challenge::Challenge;
use super::discovery::{self, ResourceMetadata, ServerMetadata};
use super::pkce::{Pkce, random_text};
use super::store::Tokens;
use super::token::ClientCredentials;
use super::{Grant, OAuthClient, kind, scope_set, store_key, token};

/// What the client remembers between challenges.
#[derive(Default)]
pub(crate) struct FlowState {
    /// The scopes last requested (the union a step-up starts from).
    requested: BTreeSet<String>,
    /// The scopes of the last step-up and how many times in a row they were asked for.
    step_up: Option<(BTreeSet<String>, u32)>,
    /// The digest of the access token the last refresh produced.
    refreshed: Option<[u8; 32]>,
}

/// The documents discovery found for one server.
struct Discovered {
    resource: ResourceMetadata,
    server: ServerMetadata,
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl OAuthClient {
    /// A 401: refresh where a refresh token from the same issuer may help, else authorize
    /// (once for challenges that overlap).
    pub(super) async fn unauthorized(
        &self,
        url: &str,
        challenge: &Challenge,
    ) -> Result<Retry, AuthError> {
        let key = store_key(url);
        // The token the refused request most likely carried; if another challenge renewed it
        // while this one waited for the flow, retry with the new one instead of a second flow.
        let carried = self.store.load(&key).map(|t| digest(&t.access_token));
        let mut flow = self.flow.lock().await;
        let current = self.store.load(&key).map(|t| digest(&t.access_token));
        if current.is_some() && current != carried {
            return Ok(Retry::Again);
        }
        let found = self.discover(url, challenge).await?;
        if let Some(tokens) = self.store.load(&key) {
            let fresh_from_refresh = flow.refreshed == Some(digest(&tokens.access_token))
                && !tokens.expired_at(std::time::SystemTime::now());
            if tokens.issuer == found.server.issuer
                && tokens.refresh_token.is_some()
                && !fresh_from_refresh
            {
                match self.refresh(&found, &tokens).await {
                    Ok(renewed) => {
                        flow.refreshed = Some(digest(&renewed.access_token));
                        self.store.save(&key, renewed);
                        return Ok(Retry::Again);
                    }
                    // The token endpoint was not reached: nothing says the refresh token is
                    // bad, so it is kept for the next attempt (an outage must not force a new
                    // authorization).
                    Err(e) if e.is_unreachable() => return Err(e),
                    // Refused (`invalid_grant` and the like): authorize again.
                    Err(_) => {}
                }
            }
            self.store.clear(&key);
        }
        let scopes = match &challenge.scope {
            Some(scope) => scope_set(Some(scope)),
            None => found
                .resource
                .scopes_supported
                .iter()
                .flatten()
                .cloned()
                .collect(),
        };
        flow.step_up = None;
        self.obtain(&mut flow, url, &found, scopes).await?;
        Ok(Retry::Again)
    }

    /// A 403 `insufficient_scope`: re-authorize for the union of the scopes requested so far
    /// and the challenged ones, at most `step_up_limit` times in a row for the same set.
    pub(super) async fn step_up(
        &self,
        url: &str,
        challenge: &Challenge,
    ) -> Result<Retry, AuthError> {
        let mut flow = self.flow.lock().await;
        let mut scopes = flow.requested.clone();
        scopes.extend(scope_set(challenge.scope.as_deref()));
        let count = match &flow.step_up {
            Some((last, count)) if *last == scopes => count.saturating_add(1),
            _ => 1,
        };
        if count > self.step_up_limit {
            return Ok(Retry::GiveUp);
        }
        flow.step_up = Some((scopes.clone(), count));
        let found = self.discover(url, challenge).await?;
        self.obtain(&mut flow, url, &found, scopes).await?;
        Ok(Retry::Again)
    }

    /// The protected resource's metadata (checked against `url`) and its first authorization
    /// server's metadata (checked against its issuer).
    async fn discover(&self, url: &str, challenge: &Challenge) -> Result<Discovered, AuthError> {
        let limit = self.max_document_bytes;
        let server_url = Url::parse(url).map_err(|_| AuthError::new(kind::BAD_ENDPOINT))?;
        let candidates =
            discovery::resource_metadata_urls(&server_url, challenge.resource_metadata.as_deref())?;
        for candidate in &candidates {
            super::endpoint(Some(candidate.as_str()))?;
        }
        let found =
            discovery::resource_metadata(&self.http, &candidates, &server_url, limit).await?;
        let resource = match found {
            Some(resource) => resource,
            None if self.legacy_discovery && challenge.resource_metadata.is_none() => {
                return self.discover_legacy(&server_url).await;
            }
            None => return Err(AuthError::new(kind::NO_RESOURCE_METADATA)),
        };
        let issuer = resource
            .authorization_servers
            .first()
            .ok_or(AuthError::new(kind::NO_AUTHORIZATION_SERVER))?;
        super::endpoint(Some(issuer)).map_err(|_| AuthError::new(kind::BAD_ISSUER))?;
        let server = discovery::server_metadata(&self.http, issuer, limit).await?;
        Ok(Discovered { resource, server })
    }

    /// The 2025-03-26 discovery, for a server without protected-resource metadata: its origin
    /// is the authorization server, with RFC 8414 metadata at the root, or else the default
    /// endpoints `/authorize`, `/token` and `/register` there. The resource is the server's URL.
    async fn discover_legacy(&self, server_url: &Url) -> Result<Discovered, AuthError> {
        let origin = server_url.origin().ascii_serialization();
        super::endpoint(Some(&origin)).map_err(|_| AuthError::new(kind::BAD_ISSUER))?;
        let server =
            match discovery::server_metadata(&self.http, &origin, self.max_document_bytes).await {
                Ok(server) => server,
                Err(e) if e.kind() == kind::NO_SERVER_METADATA => ServerMetadata::defaults(&origin),
                Err(e) => return Err(e),
            };
        let mut resource = server_url.clone();
        resource.set_fragment(None);
        let resource = ResourceMetadata {
            resource: resource.into(),
            authorization_servers: vec![origin],
            scopes_supported: None,
        };
        Ok(Discovered { resource, server })
    }

    /// The refresh grant (RFC 6749 §6) with the resource indicator.
    async fn refresh(&self, found: &Discovered, tokens: &Tokens) -> Result<Tokens, AuthError> {
        let refresh_token = tokens
            .refresh_token
            .clone()
            .ok_or(AuthError::new(kind::TOKEN))?;
        // A registration saved with the tokens (an earlier run) is used again, at its issuer.
        if let Some(saved) = tokens
            .client
            .as_ref()
            .filter(|c| c.issuer.as_deref() == Some(found.server.issuer.as_str()))
        {
            self.registrations.remember(saved);
        }
        let client = self
            .registrations
            .credentials(
                &self.http,
                &found.server,
                self.redirect.as_ref().map(|r| r.redirect_uri()),
                self.max_document_bytes,
            )
            .await?;
        let params = vec![
            ("grant_type", Zeroizing::new("refresh_token".to_owned())),
            ("refresh_token", refresh_token.clone()),
            ("resource", Zeroizing::new(found.resource.resource.clone())),
        ];
        let call = self.token_call(&found.server, &client);
        let mut renewed = token::request(&call, params, tokens.scope.as_deref()).await?;
        // RFC 6749 §6: the old refresh token stays valid when no new one is issued.
        if renewed.refresh_token.is_none() {
            renewed.refresh_token = Some(refresh_token);
        }
        renewed.client = self.saved_registration(&found.server.issuer, &client);
        Ok(renewed)
    }

    /// What tokens issued to `client` keep of it: the client itself when it is the dynamic
    /// registration at `issuer`.
    fn saved_registration(
        &self,
        issuer: &str,
        client: &super::ClientCredentials,
    ) -> Option<super::ClientCredentials> {
        self.registrations
            .dynamic(issuer)
            .filter(|d| d.client_id == client.client_id)
    }

    /// The authorization-code flow with PKCE S256 for `scopes`; the tokens are stored.
    async fn authorize(
        &self,
        flow: &mut FlowState,
        url: &str,
        found: &Discovered,
        mut scopes: BTreeSet<String>,
    ) -> Result<(), AuthError> {
        let server = &found.server;
        if !server.supports_s256() {
            return Err(AuthError::new(kind::NO_PKCE));
        }
        let mut authorization = super::endpoint(server.authorization_endpoint.as_deref())?;
        let redirect = self
            .redirect
            .as_ref()
            .ok_or(AuthError::new(kind::NO_REDIRECT_SET))?;
        let redirect_uri = redirect.redirect_uri();
        let client = self
            .registrations
            .credentials(
                &self.http,
                server,
                Some(redirect_uri),
                self.max_document_bytes,
            )
            .await?;
        flow.requested = scopes.clone();
        let offline = self.offline_access && server.lists_scope("offline_access");
        if offline {
            scopes.insert("offline_access".to_owned());
        }
        let scope = (!scopes.is_empty()).then(|| scopes.into_iter().collect::<Vec<_>>().join(" "));
        let pkce = Pkce::new()?;
        let state = random_text(16)?;
        {
            let mut query = authorization.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &client.client_id)
                .append_pair("redirect_uri", redirect_uri)
                .append_pair("state", &state)
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("resource", &found.resource.resource);
            if let Some(scope) = &scope {
                query.append_pair("scope", scope);
            }
            // OpenID Connect Core §11: `offline_access` is granted only with `prompt=consent`
            // (servers such as oidc-provider drop it otherwise, and issue no refresh token).
            if offline {
                query.append_pair("prompt", "consent");
            }
        }
        let answer = redirect.authorize(authorization.as_str()).await?;
        let code = check_response(&answer, &state, server)?;
        let params = vec![
            (
                "grant_type",
                Zeroizing::new("authorization_code".to_owned()),
            ),
            ("code", code),
            ("redirect_uri", Zeroizing::new(redirect_uri.to_owned())),
            ("code_verifier", pkce.verifier),
            ("resource", Zeroizing::new(found.resource.resource.clone())),
        ];
        let call = self.token_call(server, &client);
        let mut tokens = token::request(&call, params, scope.as_deref()).await?;
        tokens.client = self.saved_registration(&server.issuer, &client);
        flow.refreshed = None;
        self.store.save(&store_key(url), tokens);
        Ok(())
    }
}

impl OAuthClient {
    /// A token request's context: DPoP where the server supports ES256 proofs.
    fn token_call<'a>(
        &'a self,
        server: &'a ServerMetadata,
        client: &'a ClientCredentials,
    ) -> token::TokenCall<'a> {
        token::TokenCall {
            http: &self.http,
            server,
            client,
            limit: self.max_document_bytes,
            dpop: self.dpop.as_ref().filter(|_| server.supports_dpop_es256()),
        }
    }

    /// Tokens for `scopes` and the configured ones (every authorization and grant, a step-up's
    /// too, asks for those) by the configured grant.
    async fn obtain(
        &self,
        flow: &mut FlowState,
        url: &str,
        found: &Discovered,
        mut scopes: BTreeSet<String>,
    ) -> Result<(), AuthError> {
        scopes.extend(self.scopes.iter().cloned());
        match &self.grant {
            Grant::AuthorizationCode => self.authorize(flow, url, found, scopes).await,
            Grant::ClientCredentials => {
                let grant = Zeroizing::new("client_credentials".to_owned());
                self.without_user(flow, url, found, scopes, vec![("grant_type", grant)])
                    .await
            }
            Grant::JwtBearer(assertion) => {
                let jwt = assertion
                    .assertion(&found.server.issuer, &found.resource.resource)
                    .await?;
                let grant = Zeroizing::new(JWT_BEARER.to_owned());
                let params = vec![("grant_type", grant), ("assertion", jwt)];
                self.without_user(flow, url, found, scopes, params).await
            }
        }
    }

    /// A grant without a user (client credentials, RFC 6749 §4.4; JWT bearer, RFC 7523 §2.1)
    /// with the resource indicator, authenticated with the pre-registered credentials.
    async fn without_user(
        &self,
        flow: &mut FlowState,
        url: &str,
        found: &Discovered,
        scopes: BTreeSet<String>,
        mut params: token::Params,
    ) -> Result<(), AuthError> {
        let client = self
            .registrations
            .pre_registered(&found.server.issuer)
            .ok_or(AuthError::new(kind::NO_CLIENT))?;
        flow.requested = scopes.clone();
        let scope = (!scopes.is_empty()).then(|| scopes.into_iter().collect::<Vec<_>>().join(" "));
        params.push(("resource", Zeroizing::new(found.resource.resource.clone())));
        if let Some(scope) = &scope {
            params.push(("scope", Zeroizing::new(scope.clone())));
        }
        let call = self.token_call(&found.server, &client);
        let tokens = token::request(&call, params, scope.as_deref()).await?;
        flow.refreshed = None;
        self.store.save(&store_key(url), tokens);
        Ok(())
    }
}

/// Checks the redirect's query: the `state` sent, the issuer (RFC 9207: an `iss` present must
/// equal the issuer exactly; one absent is refused where the server advertised it), then no
/// `error`, and returns the code.
pub(crate) fn check_response(
    answer: &[(String, String)],
    state: &str,
    server: &ServerMetadata,
) -> Result<Zeroizing<String>, AuthError> {
    let get = |name: &str| {
        answer
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    if get("state") != Some(state) {
        return Err(AuthError::new(kind::STATE_MISMATCH));
    }
    match get("iss") {
        Some(iss) if iss != server.issuer => return Err(AuthError::new(kind::ISS_MISMATCH)),
        None if server.authorization_response_iss_parameter_supported => {
            return Err(AuthError::new(kind::ISS_MISSING));
        }
        _ => {}
    }
    // Only now, with the state and issuer checked, is an error answer acted on (RFC 9207;
    // the 2026-07-28 revision: never on a mismatched one). Its text is not kept.
    if get("error").is_some() {
        return Err(AuthError::new(kind::DENIED));
    }
    get("code")
        .filter(|c| !c.is_empty())
        .map(|c| Zeroizing::new(c.to_owned()))
        .ok_or(AuthError::new(kind::NO_CODE))
}
