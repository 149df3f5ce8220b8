//! The configuration's `[server]` table: how the gateway's own endpoint is served over HTTP —
//! the Host and Origin names it accepts beside loopback's, the page origins its CORS policy
//! grants, a request rate limit per caller, the OAuth 2.1 protected resource it may be (bearer
//! tokens an authorization server signed for it), and what many instances behind one URL share
//! (a PostgreSQL database for 2025 sessions and tasks, a request-state key ring). Owns reading
//! and checking them, never
//! applying them (the `tollgate gateway` command does, on the endpoint and service it builds; a
//! library user applies them as it likes). Knows nothing of upstreams.

use serde::Deserialize;

use crate::error::ConfigErrorKind;

/// The most names in one of `allowed_hosts`, `allowed_origins` and `cors_origins`.
pub const MAX_SERVER_NAMES: usize = 64;
/// The highest `requests_per_minute`.
pub const MAX_REQUESTS_PER_MINUTE: u32 = 1_000_000;
/// The most `scopes` the protected resource requires.
pub const MAX_REQUIRED_SCOPES: usize = 32;

/// How the gateway's endpoint is served over HTTP (`[server]`; every key optional, and the
/// default is the endpoint's own: loopback Host and Origin names only, no CORS grant, no rate
/// limit, no token required). Over stdio none of it applies (the MCP authorization
/// specification leaves a local process to its environment).
#[derive(Clone, Default)]
pub struct ServerConfig {
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    cors_origins: Vec<String>,
    requests_per_minute: Option<u32>,
    oauth: Option<ServerOAuth>,
    postgres: Option<String>,
    request_state_keys_file: Option<std::path::PathBuf>,
}

/// The database URL holds a password: never shown.
impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("cors_origins", &self.cors_origins)
            .field("requests_per_minute", &self.requests_per_minute)
            .field("oauth", &self.oauth)
            .field("postgres", &self.postgres.as_ref().map(|_| "(set)"))
            .field("request_state_keys_file", &self.request_state_keys_file)
            .finish()
    }
}

/// The OAuth 2.1 protected resource the gateway's endpoint is (`[server.oauth]`): its RFC 9728
/// metadata names `issuer` as its authorization server, and only JWT access tokens that issuer
/// signed for `resource` (the `aud`), carrying every scope of `scopes`, are admitted.
#[derive(Clone, Debug)]
pub struct ServerOAuth {
    issuer: String,
    resource: String,
    scopes: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerTable {
    #[serde(default)]
    allowed_hosts: Vec<String>,
    #[serde(default)]
    allowed_origins: Vec<String>,
    #[serde(default)]
    cors_origins: Vec<String>,
    requests_per_minute: Option<u32>,
    oauth: Option<OAuthTable>,
    postgres: Option<String>,
    request_state_keys_file: Option<std::path::PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OAuthTable {
    issuer: String,
    resource: String,
    #[serde(default)]
    scopes: Vec<String>,
}

impl ServerConfig {
    /// Checks a `[server]` table whole.
    pub(crate) fn from_table(table: ServerTable) -> Result<Self, ConfigErrorKind> {
        let refuse = Err(ConfigErrorKind::InvalidServer);
        let names = [
            &table.allowed_hosts,
            &table.allowed_origins,
            &table.cors_origins,
        ];
        // Origins by the runtime's own rule (`CorsPolicy`'s), so a value taken here is one the
        // service takes, and matches what browsers send (no default port).
        let origins_ok = |list: &[String]| {
            list.is_empty() || tollgate::transport::CorsPolicy::allow_origins(list).is_ok()
        };
        if names.iter().any(|n| n.len() > MAX_SERVER_NAMES)
            || !table.allowed_hosts.iter().all(|h| is_host(h))
            || !origins_ok(&table.allowed_origins)
            || !origins_ok(&table.cors_origins)
        {
            return refuse;
        }
        if table
            .requests_per_minute
            .is_some_and(|n| n == 0 || n > MAX_REQUESTS_PER_MINUTE)
        {
            return refuse;
        }
        if table
            .postgres
            .as_deref()
            .is_some_and(|url| !is_postgres_url(url))
        {
            return refuse;
        }
        let oauth = match table.oauth {
            None => None,
            Some(t) => {
                // The protected resource as the runtime builds it (its URL, issuer and scope
                // rules), and the endpoint's path, so a table taken here is one that serves.
                let resource = tollgate::policy::ProtectedResource::builder(&t.resource)
                    .authorization_server(&t.issuer)
                    .scopes_supported(t.scopes.iter())
                    .build();
                if resource.is_err()
                    || path_of(&t.resource) != Some("/mcp")
                    || t.scopes.len() > MAX_REQUIRED_SCOPES
                {
                    return refuse;
                }
                Some(ServerOAuth {
                    issuer: t.issuer,
                    resource: t.resource,
                    scopes: t.scopes,
                })
            }
        };
        Ok(Self {
            allowed_hosts: table.allowed_hosts,
            allowed_origins: table.allowed_origins,
            cors_origins: table.cors_origins,
            requests_per_minute: table.requests_per_minute,
            oauth,
            postgres: table.postgres,
            request_state_keys_file: table.request_state_keys_file,
        })
    }

    /// The PostgreSQL database many instances of the gateway behind one URL share
    /// (`postgres = "postgres://..."`; default none, each instance on its own): 2025 sessions
    /// (any instance serves a session's requests) and tasks (any instance answers `tasks/get`;
    /// a task's work runs where it was created). Give every instance the same
    /// [`request_state_keys_file`](Self::request_state_keys_file) too. A stateful 2025
    /// upstream's session stays with the instance that opened it (see the deployment guide).
    pub fn postgres(&self) -> Option<&str> {
        self.postgres.as_deref()
    }

    /// The request-state key ring, in its text form (`ID=hex:SECRET,...`, the sealing key
    /// first), read from this file at start (`request_state_keys_file`; default: a key of the
    /// process's own, so state sealed by one instance opens on no other).
    pub fn request_state_keys_file(&self) -> Option<&std::path::Path> {
        self.request_state_keys_file.as_deref()
    }

    /// Host names accepted beside loopback's (`allowed_hosts`; without a port: the port a
    /// request names is not compared).
    pub fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// `Origin`s accepted beside loopback's (`allowed_origins`, each `scheme://host[:port]`).
    pub fn allowed_origins(&self) -> &[String] {
        &self.allowed_origins
    }

    /// The page origins the CORS policy grants (`cors_origins`; default none, no CORS).
    pub fn cors_origins(&self) -> &[String] {
        &self.cors_origins
    }

    /// Requests one caller (its principal, or anonymous callers together: without
    /// `[server.oauth]`, one bucket for the whole gateway) may make per minute, as a bucket of
    /// that many refilled continuously (`requests_per_minute`, 1 to
    /// [`MAX_REQUESTS_PER_MINUTE`]; default none). Past it: 429 with `Retry-After`.
    pub fn requests_per_minute(&self) -> Option<u32> {
        self.requests_per_minute
    }

    /// The protected resource, when `[server.oauth]` is given.
    pub fn oauth(&self) -> Option<&ServerOAuth> {
        self.oauth.as_ref()
    }
}

impl ServerOAuth {
    /// The authorization server's issuer URL (`issuer`).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The resource identifier tokens are checked against (`resource`; its path is the
    /// endpoint's, `/mcp`).
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The scopes every request's token must carry (`scopes`, at most
    /// [`MAX_REQUIRED_SCOPES`] scope tokens of at most 128 bytes, not `offline_access`;
    /// default none).
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }
}

/// A Host name the service can match (the runtime's rule: no port), of at most 253 bytes.
fn is_host(host: &str) -> bool {
    host.len() <= 253 && tollgate::transport::is_allowed_host(host)
}

/// A `postgres://` or `postgresql://` URL of at most 2,048 bytes of visible ASCII.
fn is_postgres_url(url: &str) -> bool {
    url.len() <= 2048
        && (url.starts_with("postgres://") || url.starts_with("postgresql://"))
        && url.bytes().all(|b| b.is_ascii_graphic())
}

/// The path of an `http(s)://` URL (`None` for another scheme, or with a query or fragment).
fn path_of(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    if rest.contains(['?', '#']) {
        return None;
    }
    rest.find('/').map(|at| &rest[at..])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn table(text: &str) -> Result<ServerConfig, ConfigErrorKind> {
        let table: ServerTable = toml::from_str(text).map_err(|_| ConfigErrorKind::Syntax)?;
        ServerConfig::from_table(table)
    }

    #[test]
    fn every_key_is_checked_and_the_defaults_are_the_endpoint_s_own() {
        let default = table("").unwrap();
        assert!(default.allowed_hosts().is_empty() && default.cors_origins().is_empty());
        assert_eq!(
            (default.requests_per_minute(), default.oauth().is_none()),
            (None, true)
        );
        let full = table(
            r#"
allowed_hosts = ["mcp.example.com", "[2001:db8::1]"]
allowed_origins = ["https://app.example"]
cors_origins = ["http://localhost:5173"]
requests_per_minute = 600
[oauth]
issuer = "https://auth.example"
resource = "https://mcp.example.com/mcp"
scopes = ["mcp:use"]
"#,
        )
        .unwrap();
        assert_eq!(full.allowed_hosts().len(), 2);
        assert_eq!(full.requests_per_minute(), Some(600));
        assert_eq!(
            full.oauth().map(ServerOAuth::scopes),
            Some(&["mcp:use".to_owned()][..])
        );
        for bad in [
            r#"allowed_hosts = ["a/b"]"#,
            r#"allowed_hosts = [""]"#,
            r#"allowed_hosts = ["mcp.example.com:8443"]"#,
            r#"allowed_origins = ["https://app.example:443"]"#,
            "[oauth]\nissuer = \"https://a\"\nresource = \"https://r/other\"",
            r#"allowed_origins = ["app.example"]"#,
            r#"cors_origins = ["https://app.example/path"]"#,
            "requests_per_minute = 0",
            "requests_per_minute = 1000001",
            "postgres = \"mysql://db\"",
            "[oauth]\nissuer = \"ftp://a\"\nresource = \"https://r/mcp\"",
            "[oauth]\nissuer = \"https://a\"\nresource = \"https://r/mcp\"\nscopes = [\"a b\"]",
        ] {
            assert_eq!(
                table(bad).unwrap_err(),
                ConfigErrorKind::InvalidServer,
                "{bad}"
            );
        }
        assert_eq!(table("unknown = 1").unwrap_err(), ConfigErrorKind::Syntax);
        // The database URL's password is never shown.
        let shared = table("postgres = \"postgres://gw:SECRET42@db/gw\"").unwrap();
        assert_eq!(shared.postgres(), Some("postgres://gw:SECRET42@db/gw"));
        assert!(!format!("{shared:?}").contains("SECRET42"));
    }

    #[test]
    fn names_and_limits_at_their_bounds_and_one_past() {
        let names = |n: usize| {
            let list: Vec<String> = (0..n).map(|i| format!("\"h{i}.example\"")).collect();
            format!("allowed_hosts = [{}]", list.join(","))
        };
        assert!(table(&names(MAX_SERVER_NAMES)).is_ok());
        assert!(table(&names(MAX_SERVER_NAMES + 1)).is_err());
        assert!(table(&format!("requests_per_minute = {MAX_REQUESTS_PER_MINUTE}")).is_ok());
        let host = |n: usize| format!("allowed_hosts = [\"{}\"]", "h".repeat(n));
        assert!(table(&host(253)).is_ok());
        assert!(table(&host(254)).is_err());
        let scopes = |n: usize| {
            let list: Vec<String> = (0..n).map(|i| format!("\"s{i}\"")).collect();
            format!(
                "[oauth]\nissuer = \"https://a\"\nresource = \"https://r/mcp\"\nscopes = [{}]",
                list.join(",")
            )
        };
        assert!(table(&scopes(MAX_REQUIRED_SCOPES)).is_ok());
        assert!(table(&scopes(MAX_REQUIRED_SCOPES + 1)).is_err());
    }
}
