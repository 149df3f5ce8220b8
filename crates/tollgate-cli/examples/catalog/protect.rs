//! The demo's opt-in protected mode (MCP authorization): with `TOLLGATE_CATALOG_OAUTH_ISSUER`
//! set to an OAuth 2.1 authorization server's issuer URL, the HTTP endpoint becomes an OAuth
//! protected resource. It publishes its RFC 9728 metadata, admits only JWT access tokens that
//! issuer signed for this endpoint (`aud` = the resource identifier), requires `catalog:read`
//! of every request and `catalog:write` of `catalog.restock`.
//!
//! The resource identifier is `TOLLGATE_CATALOG_OAUTH_RESOURCE`, else `http://ADDR/mcp` for the
//! address served (which must then name its port). Over stdio the demo is never protected: the
//! MCP authorization spec leaves a local process to its environment.

use std::net::SocketAddr;

use tollgate::auth::{BearerAuth, JwtValidation};
use tollgate::policy::ProtectedResource;

/// The scope every request needs.
pub(crate) const READ: &str = "catalog:read";
/// The scope `catalog.restock` needs besides.
pub(crate) const WRITE: &str = "catalog:write";

/// A protected endpoint's resource and its bearer-token admission.
pub(crate) struct Protection {
    pub(crate) resource: ProtectedResource,
    pub(crate) auth: BearerAuth,
}

/// The protection the environment asks for, if any.
pub(crate) fn from_env(addr: SocketAddr) -> Result<Option<Protection>, Box<dyn std::error::Error>> {
    let Ok(issuer) = std::env::var("TOLLGATE_CATALOG_OAUTH_ISSUER") else {
        return Ok(None);
    };
    let resource = match std::env::var("TOLLGATE_CATALOG_OAUTH_RESOURCE") {
        Ok(resource) => resource,
        Err(_) if addr.port() != 0 => format!("http://{addr}/mcp"),
        Err(_) => {
            return Err("protected mode needs a port (--addr HOST:PORT) or \
                        TOLLGATE_CATALOG_OAUTH_RESOURCE"
                .into());
        }
    };
    let resource = ProtectedResource::builder(resource)
        .authorization_server(&issuer)
        .scopes_supported([READ, WRITE])
        .resource_name("Tollgate catalog demo")
        .build()?;
    let auth = BearerAuth::builder(&resource)
        .jwt(JwtValidation::new(&issuer))
        .required_scopes([READ])
        .keep_claims(["client_id"])
        .build()?;
    Ok(Some(Protection { resource, auth }))
}
