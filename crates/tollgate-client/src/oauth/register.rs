//! Who the client is at an authorization server, in the MCP specification's order:
//! pre-registered credentials for that issuer, else a client ID metadata document's URL where
//! the server supports them, else dynamic client registration (RFC 7591). Credentials are kept
//! per issuer and never presented to another server. It must not know about tokens.

use std::sync::Mutex;

use serde::Serialize;
use tollgate_json::OutputLimits;

use crate::auth::AuthError;

use super::discovery::ServerMetadata;
use super::token::{ClientCredentials, RegistrationAnswer};
use super::{fetch, kind};

/// What the client says about itself when it registers (RFC 7591 §2).
#[derive(Serialize)]
struct RegistrationRequest<'a> {
    client_name: &'a str,
    redirect_uris: [&'a str; 1],
    grant_types: &'a [&'a str],
    response_types: [&'a str; 1],
    token_endpoint_auth_method: &'a str,
    application_type: &'a str,
}

/// The most issuers whose registrations are remembered; the oldest is forgotten past it.
const MAX_ISSUERS: usize = 16;

/// The client's identities: the pre-registered ones, the metadata document URL, and the
/// registrations made so far (per issuer).
pub(crate) struct Registrations {
    pub(crate) pre_registered: Vec<ClientCredentials>,
    pub(crate) metadata_document: Option<String>,
    pub(crate) client_name: String,
    pub(crate) registered: Mutex<Vec<ClientCredentials>>,
    /// The issuer unbound pre-registered credentials were first used at.
    pub(crate) unbound_at: Mutex<Option<String>>,
}

impl Registrations {
    /// The pre-registered credentials for `issuer`: those made for it, else unbound ones, which
    /// are bound to it here (and so never presented to another server).
    pub(crate) fn pre_registered(&self, issuer: &str) -> Option<ClientCredentials> {
        if let Some(found) = self
            .pre_registered
            .iter()
            .find(|c| c.issuer.as_deref() == Some(issuer))
        {
            return Some(found.clone());
        }
        let unbound = self.pre_registered.iter().find(|c| c.issuer.is_none())?;
        let mut bound = self.unbound_at.lock().ok()?;
        match bound.as_deref() {
            Some(at) if at != issuer => None,
            _ => {
                *bound = Some(issuer.to_owned());
                let mut credentials = unbound.clone();
                credentials.issuer = Some(issuer.to_owned());
                Some(credentials)
            }
        }
    }

    /// The registration made at `issuer` in this process or remembered from a saved one.
    pub(crate) fn dynamic(&self, issuer: &str) -> Option<ClientCredentials> {
        let list = self.registered.lock().ok()?;
        list.iter()
            .find(|c| c.issuer.as_deref() == Some(issuer))
            .cloned()
    }

    /// Takes a registration saved with tokens (a later run), unless one is already known for
    /// its issuer.
    pub(crate) fn remember(&self, saved: &ClientCredentials) {
        let Some(issuer) = saved.issuer.as_deref() else {
            return;
        };
        if self.dynamic(issuer).is_some() {
            return;
        }
        if let Ok(mut list) = self.registered.lock() {
            if list.len() >= MAX_ISSUERS {
                list.remove(0);
            }
            list.push(saved.clone());
        }
    }

    /// The credentials to use at this server, registering when needed.
    pub(crate) async fn credentials(
        &self,
        http: &reqwest::Client,
        server: &ServerMetadata,
        redirect_uri: Option<&str>,
        limit: usize,
    ) -> Result<ClientCredentials, AuthError> {
        let issuer = server.issuer.as_str();
        if let Some(found) = self.pre_registered(issuer) {
            return Ok(found);
        }
        if let (true, Some(url)) = (
            server.client_id_metadata_document_supported,
            &self.metadata_document,
        ) {
            return Ok(ClientCredentials::new(issuer, url.clone()));
        }
        if let Some(found) = self.registered.lock().ok().and_then(|r| {
            r.iter()
                .find(|c| c.issuer.as_deref() == Some(issuer))
                .cloned()
        }) {
            return Ok(found);
        }
        let (Some(endpoint), Some(redirect_uri)) =
            (server.registration_endpoint.as_deref(), redirect_uri)
        else {
            return Err(AuthError::new(kind::NO_CLIENT));
        };
        let endpoint = super::endpoint(Some(endpoint))?;
        let method = ["none", "client_secret_basic", "client_secret_post"]
            .into_iter()
            .find(|m| server.supports_auth_method(m))
            .unwrap_or("client_secret_basic");
        let loopback = url::Url::parse(redirect_uri).is_ok_and(|u| super::is_loopback(&u));
        let body = RegistrationRequest {
            client_name: &self.client_name,
            redirect_uris: [redirect_uri],
            grant_types: &["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: method,
            application_type: if loopback { "native" } else { "web" },
        };
        let bytes = tollgate_json::to_value(&body)
            .and_then(|v| tollgate_json::to_vec(&v, &OutputLimits::default()))
            .map_err(|_| AuthError::new(kind::REGISTRATION))?;
        let request = http
            .post(endpoint.as_str())
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(bytes);
        let answer = fetch::exchange::<RegistrationAnswer>(request, limit).await?;
        let registered = match answer.body {
            Some(body) if matches!(answer.status, 200 | 201) => {
                ClientCredentials::registered(issuer, body)
            }
            _ => return Err(AuthError::new(kind::REGISTRATION)),
        };
        if let Ok(mut list) = self.registered.lock() {
            if list.len() >= MAX_ISSUERS {
                list.remove(0);
            }
            list.push(registered.clone());
        }
        Ok(registered)
    }
}
