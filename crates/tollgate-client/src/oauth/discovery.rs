//! Discovery: the protected resource's metadata (RFC 9728; from the challenge's
//! `resource_metadata`, else the path-suffixed then root well-known paths), the resource check,
//! and the authorization server's metadata (RFC 8414, then OpenID Connect discovery, in the MCP
//! specification's order) with the issuer check. It owns finding and checking documents; it must
//! not know about clients, tokens or redirects.

use serde::Deserialize;
use url::Url;

use crate::auth::AuthError;

use super::{fetch, kind};

/// The fields of a protected resource's metadata the client reads.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ResourceMetadata {
    /// The resource identifier (the value sent as RFC 8707 `resource`).
    pub(crate) resource: String,
    /// The authorization servers' issuer identifiers.
    #[serde(default)]
    pub(crate) authorization_servers: Vec<String>,
    /// The scopes the resource knows.
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// The fields of an authorization server's metadata the client reads.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: Option<String>,
    pub(crate) token_endpoint: Option<String>,
    pub(crate) registration_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: bool,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: bool,
    #[serde(default)]
    pub(crate) dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl ServerMetadata {
    /// The default endpoints of a 2025-03-26 server without metadata: `/authorize`, `/token`
    /// and `/register` at `origin`, with PKCE S256 (which that revision requires of both).
    pub(crate) fn defaults(origin: &str) -> Self {
        Self {
            issuer: origin.to_owned(),
            authorization_endpoint: Some(format!("{origin}/authorize")),
            token_endpoint: Some(format!("{origin}/token")),
            registration_endpoint: Some(format!("{origin}/register")),
            scopes_supported: None,
            code_challenge_methods_supported: Some(vec!["S256".to_owned()]),
            token_endpoint_auth_methods_supported: None,
            client_id_metadata_document_supported: false,
            authorization_response_iss_parameter_supported: false,
            dpop_signing_alg_values_supported: None,
        }
    }

    /// Whether the server supports PKCE with S256; the MCP specification requires a client to
    /// refuse a server whose metadata does not say so.
    pub(crate) fn supports_s256(&self) -> bool {
        self.code_challenge_methods_supported
            .as_ref()
            .is_some_and(|methods| methods.iter().any(|m| m == "S256"))
    }

    /// Whether the server binds tokens to DPoP keys signing with ES256 (RFC 9449 §5.1).
    pub(crate) fn supports_dpop_es256(&self) -> bool {
        self.dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|algs| algs.iter().any(|a| a == "ES256"))
    }

    /// Whether the server lists `scope` in `scopes_supported`.
    pub(crate) fn lists_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|scopes| scopes.iter().any(|s| s == scope))
    }

    /// Whether the server lists this token endpoint authentication method (RFC 8414: absent
    /// means `client_secret_basic` only).
    pub(crate) fn supports_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(methods) => methods.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }
}

/// The candidate URLs of a protected resource's metadata for an MCP server URL: the challenge's
/// `resource_metadata` alone when given, else the path-suffixed well-known URL and then the
/// root one (RFC 9728 §3.1).
pub(crate) fn resource_metadata_urls(
    server: &Url,
    from_challenge: Option<&str>,
) -> Result<Vec<Url>, AuthError> {
    if let Some(url) = from_challenge {
        let url = Url::parse(url).map_err(|_| AuthError::new(kind::BAD_METADATA_URL))?;
        if !matches!(url.scheme(), "https" | "http") {
            return Err(AuthError::new(kind::BAD_METADATA_URL));
        }
        return Ok(vec![url]);
    }
    well_known(server, "oauth-protected-resource")
}

/// `{origin}/.well-known/{name}{path}` when the URL has a path, then `{origin}/.well-known/{name}`.
fn well_known(base: &Url, name: &str) -> Result<Vec<Url>, AuthError> {
    let path = base.path().trim_end_matches('/');
    let mut out = Vec::with_capacity(2);
    let mut root = base.clone();
    root.set_query(None);
    root.set_fragment(None);
    if !path.is_empty() {
        let mut with_path = root.clone();
        with_path.set_path(&format!("/.well-known/{name}{path}"));
        out.push(with_path);
    }
    root.set_path(&format!("/.well-known/{name}"));
    out.push(root);
    Ok(out)
}

/// The candidate metadata URLs of an issuer, in the MCP specification's order: for an issuer
/// with a path, RFC 8414 path-inserted, OpenID path-inserted, OpenID path-appended; without a
/// path, RFC 8414 then OpenID at the root.
pub(crate) fn server_metadata_urls(issuer: &str) -> Result<Vec<Url>, AuthError> {
    let base = Url::parse(issuer).map_err(|_| AuthError::new(kind::BAD_ISSUER))?;
    if !matches!(base.scheme(), "https" | "http") || base.query().is_some() {
        return Err(AuthError::new(kind::BAD_ISSUER));
    }
    let path = base.path().trim_end_matches('/');
    let at = |p: String| {
        let mut url = base.clone();
        url.set_fragment(None);
        url.set_path(&p);
        url
    };
    Ok(if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server".into()),
            at("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    })
}

/// Whether the metadata's `resource` names this MCP server: the same scheme, host and port,
/// and the server's path equal to or below the resource's path (segment by segment).
pub(crate) fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.scheme() != server.scheme()
        || resource.host_str() != server.host_str()
        || resource.port_or_known_default() != server.port_or_known_default()
        || resource.query().is_some()
        || resource.fragment().is_some()
    {
        return false;
    }
    let want = resource.path().trim_end_matches('/');
    let have = server.path().trim_end_matches('/');
    have == want
        || have
            .strip_prefix(want)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Fetches the first protected-resource metadata document found at `urls` and checks that it
/// names `server`. A mismatched `resource` is refused before anything is sent to an
/// authorization server.
pub(crate) async fn resource_metadata(
    client: &reqwest::Client,
    urls: &[Url],
    server: &Url,
    limit: usize,
) -> Result<Option<ResourceMetadata>, AuthError> {
    for url in urls {
        if let Some(found) =
            fetch::document::<ResourceMetadata>(client, url.as_str(), limit).await?
        {
            if !resource_matches(&found.resource, server) {
                return Err(AuthError::new(kind::RESOURCE_MISMATCH));
            }
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Fetches the authorization server's metadata from its candidate URLs in order and checks
/// that its `issuer` is exactly the issuer identifier the URLs were built from (RFC 8414 §3.3;
/// no normalization).
pub(crate) async fn server_metadata(
    client: &reqwest::Client,
    issuer: &str,
    limit: usize,
) -> Result<ServerMetadata, AuthError> {
    for url in server_metadata_urls(issuer)? {
        if let Some(found) = fetch::document::<ServerMetadata>(client, url.as_str(), limit).await? {
            if found.issuer != issuer {
                return Err(AuthError::new(kind::ISSUER_MISMATCH));
            }
            return Ok(found);
        }
    }
    Err(AuthError::new(kind::NO_SERVER_METADATA))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    fn strings(urls: &[Url]) -> Vec<&str> {
        urls.iter().map(Url::as_str).collect()
    }

    #[test]
    fn resource_metadata_is_looked_for_path_suffixed_then_at_the_root() {
        let server = Url::parse("https://a.example/tenant/mcp?x=1").unwrap();
        let urls = resource_metadata_urls(&server, None).unwrap();
        assert_eq!(
            strings(&urls),
            [
                "https://a.example/.well-known/oauth-protected-resource/tenant/mcp",
                "https://a.example/.well-known/oauth-protected-resource"
            ]
        );
        let root = Url::parse("https://a.example/").unwrap();
        let urls = resource_metadata_urls(&root, None).unwrap();
        assert_eq!(
            strings(&urls),
            ["https://a.example/.well-known/oauth-protected-resource"]
        );
        let named = resource_metadata_urls(&server, Some("https://m.example/prm")).unwrap();
        assert_eq!(strings(&named), ["https://m.example/prm"]);
        assert!(resource_metadata_urls(&server, Some("file:///etc/passwd")).is_err());
    }

    #[test]
    fn server_metadata_urls_follow_the_specifications_order() {
        let with_path = server_metadata_urls("https://auth.example/tenant1").unwrap();
        assert_eq!(
            strings(&with_path),
            [
                "https://auth.example/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example/.well-known/openid-configuration/tenant1",
                "https://auth.example/tenant1/.well-known/openid-configuration"
            ]
        );
        let root = server_metadata_urls("https://auth.example").unwrap();
        assert_eq!(
            strings(&root),
            [
                "https://auth.example/.well-known/oauth-authorization-server",
                "https://auth.example/.well-known/openid-configuration"
            ]
        );
        assert!(server_metadata_urls("ftp://auth.example").is_err());
    }

    #[test]
    fn the_resource_must_name_this_server() {
        let server = Url::parse("http://localhost:3000/mcp").unwrap();
        assert!(resource_matches("http://localhost:3000/mcp", &server));
        assert!(resource_matches("http://localhost:3000", &server));
        assert!(resource_matches("http://localhost:3000/", &server));
        assert!(!resource_matches("https://evil.example.com/mcp", &server));
        assert!(!resource_matches("http://localhost:3001/mcp", &server));
        assert!(!resource_matches("http://localhost:3000/mc", &server));
        assert!(!resource_matches(
            "http://localhost:3000/mcp/other",
            &server
        ));
        assert!(!resource_matches("not a url", &server));
    }
}
