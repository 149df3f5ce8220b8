//! The `auth/*` scenarios: an ordinary application with the OAuth client as its authorizer. It
//! connects, lists the tools and calls each one (a call may need more scope: the step-up
//! scenarios), with the authorization redirect followed non-interactively (the suite's
//! authorization server grants without a user). Credentials the suite hands over in
//! `MCP_CONFORMANCE_CONTEXT` become pre-registered clients, or, in the client-credentials
//! scenarios, the credentials of the client credentials grant (a secret or a private key); the
//! enterprise-managed and workload-identity scenarios use the JWT bearer grant with an ID-JAG
//! from the identity provider's token exchange, or the workload's JWT. It owns only the wiring; the flow
//! is `tollgate_client::oauth`'s.

use std::sync::Arc;

use tollgate_client::json::{JsonObject, JsonValue};
use tollgate_client::oauth::{
    ClientCredentials, FollowRedirect, IdJagExchange, KeyAlgorithm, OAuthClient, WorkloadIdentity,
};
use tollgate_client::{Client, Revision};

/// The redirect URI the client registers; the suite redirects to it and never contacts it.
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// The client ID metadata document URL the suite expects a CIMD-capable client to use.
const METADATA_DOCUMENT: &str = "https://conformance-test.local/client-metadata.json";

/// Runs one `auth/*` scenario against `url` with the suite's context.
pub(crate) async fn run(
    url: &str,
    scenario: &str,
    context: Option<&JsonValue>,
) -> Result<(), Box<dyn std::error::Error>> {
    let text = |name: &str| {
        context
            .and_then(|c| c.get(name))
            .and_then(JsonValue::as_str)
            .map(str::to_owned)
    };
    let mut oauth = OAuthClient::builder()
        .redirect(Arc::new(FollowRedirect::new(REDIRECT_URI)?))
        .client_name("tollgate conformance client")
        .client_metadata_document(METADATA_DOCUMENT);
    let required = |name: &str| text(name).ok_or("the scenario's context lacks a field");
    if scenario == "auth/enterprise-managed-authorization" {
        let exchange = IdJagExchange::new(
            required("idp_token_endpoint")?,
            required("idp_client_id")?,
            required("idp_id_token")?,
        )?;
        let credentials =
            ClientCredentials::unbound(required("client_id")?).secret(required("client_secret")?);
        oauth = oauth.jwt_bearer_grant(credentials, Arc::new(exchange));
    } else if scenario == "auth/wif-jwt-bearer" {
        let jwt = required("valid_jwt")?;
        let identity = WorkloadIdentity::new(move || Ok(jwt.clone()));
        let credentials = ClientCredentials::unbound(required("client_id")?);
        oauth = oauth.jwt_bearer_grant(credentials, Arc::new(identity));
    } else if scenario.starts_with("auth/client-credentials-") {
        let id = text("client_id").ok_or("the scenario's context has no client_id")?;
        let mut credentials = ClientCredentials::unbound(id);
        if let Some(secret) = text("client_secret") {
            credentials = credentials.secret(secret);
        }
        if let Some(pem) = text("private_key_pem") {
            let algorithm = text("signing_algorithm")
                .and_then(|a| KeyAlgorithm::from_name(&a))
                .ok_or("the scenario's signing algorithm is not ES256 or RS256")?;
            credentials = credentials.private_key(pem, algorithm);
        }
        oauth = oauth.client_credentials_grant(credentials);
    } else if let (Some(issuer), Some(id)) = (text("issuer"), text("client_id")) {
        let mut credentials = ClientCredentials::new(issuer, id);
        if let Some(secret) = text("client_secret") {
            credentials = credentials.secret(secret);
        }
        oauth = oauth.pre_registered(credentials);
    }
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let revisions = match Revision::from_wire(&version) {
        Some(revision) => vec![revision],
        None => Revision::ALL.to_vec(),
    };
    let client = Client::builder()
        .revisions(revisions)
        .authorizer(Arc::new(oauth.build()?))
        .connect_http(url)
        .await?;
    let tools = client.list_tools().await?;
    for tool in &tools {
        if let Some(name) = tool.get("name").and_then(JsonValue::as_str) {
            client.call_tool(name, JsonObject::new()).await?;
        }
    }
    client.close().await?;
    eprintln!("{scenario}: authorized, {} tools called", tools.len());
    Ok(())
}
