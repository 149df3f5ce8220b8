//! The gateway's configuration: its `[[upstream]]` tables, read from TOML and checked whole
//! before anything connects. Owns the rules a configuration obeys (unique upstream names, one
//! transport per upstream, a prefix that keeps names valid, bounded sizes); knows nothing of
//! connecting or importing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use tollgate::ProtocolVersion;
use tollgate_client::{ClientLimits, Revision};

use crate::error::{ConfigErrorKind, GatewayError};
use crate::oauth::{OAuthTable, UpstreamOAuth};
use crate::server::{ServerConfig, ServerTable};

/// The largest configuration file read, in bytes.
pub const MAX_CONFIG_BYTES: usize = 256 * 1024;

/// The most upstreams one gateway fronts.
pub const MAX_UPSTREAMS: usize = 64;

/// The longest upstream name or prefix, in bytes.
pub const MAX_UPSTREAM_NAME_BYTES: usize = 64;

/// How long a forwarded call may take by default before it is answered with the fixed internal
/// error (and cancelled upstream).
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The most `max_input_rounds` an upstream may be given: rounds of input requests answered
/// within one forwarded call.
pub const MAX_INPUT_ROUNDS: u32 = 100;

/// A gateway's configuration: the servers it fronts.
///
/// # Examples
///
/// ```
/// use tollgate_gateway::GatewayConfig;
///
/// let config = GatewayConfig::from_toml(r#"
/// [[upstream]]
/// name = "everything"
/// command = "npx"
/// args = ["-y", "@modelcontextprotocol/server-everything"]
/// prefix = "ev"
///
/// [[upstream]]
/// name = "weather"
/// url = "https://weather.example/mcp"
/// headers = { Authorization = "Bearer gateway-own-token" }
/// "#)?;
/// assert_eq!(config.upstreams().len(), 2);
/// assert_eq!(config.upstreams()[0].prefix(), Some("ev"));
/// # Ok::<(), tollgate_gateway::GatewayError>(())
/// ```
#[derive(Clone, Debug)]
pub struct GatewayConfig {
    upstreams: Vec<UpstreamConfig>,
    profile1_only: bool,
    revisions: Vec<ProtocolVersion>,
    server: ServerConfig,
}

/// One upstream server: its name, how it is reached, and the prefix of the names it serves.
#[derive(Clone)]
pub struct UpstreamConfig {
    name: String,
    prefix: Option<String>,
    transport: UpstreamTransport,
    call_timeout: Duration,
    relist: Option<Duration>,
    oauth: Option<UpstreamOAuth>,
    revisions: Option<Vec<Revision>>,
    max_input_rounds: u32,
    sole_call_requests: bool,
}

/// The shortest `relist_ms` taken (a re-list is a `tools/list` to the upstream).
pub const MIN_RELIST: Duration = Duration::from_secs(1);

/// How an upstream is reached.
#[derive(Clone)]
#[non_exhaustive]
pub enum UpstreamTransport {
    /// Streamable HTTP at `url`, with the gateway's own headers (never a client's token: the
    /// MCP authorization specification forbids passing tokens through).
    Http {
        /// The MCP endpoint's URL.
        url: String,
        /// Headers sent on every request (the gateway's own credentials).
        headers: Vec<(String, String)>,
    },
    /// A child process spoken to over stdio.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables set for it (added to the gateway's own).
        env: Vec<(String, String)>,
        /// Its working directory.
        cwd: Option<PathBuf>,
    },
}

impl std::fmt::Debug for UpstreamConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values and environment values are credentials: never printed.
        let transport = match &self.transport {
            UpstreamTransport::Http { .. } => "http",
            UpstreamTransport::Stdio { .. } => "stdio",
        };
        f.debug_struct("UpstreamConfig")
            .field("name", &self.name)
            .field("prefix", &self.prefix)
            .field("transport", &transport)
            .field("oauth", &self.oauth)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    upstream: Vec<Table>,
    #[serde(default)]
    profile1_only: bool,
    revisions: Option<Vec<String>>,
    server: Option<ServerTable>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    name: String,
    prefix: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    timeout_ms: Option<u64>,
    relist_ms: Option<u64>,
    oauth: Option<OAuthTable>,
    revisions: Option<Vec<String>>,
    max_input_rounds: Option<u32>,
    #[serde(default)]
    sole_call_requests: bool,
}

impl GatewayConfig {
    /// Reads a configuration from TOML text and checks it whole.
    ///
    /// # Errors
    ///
    /// [`GatewayError`] of kind `Config` naming the rule broken (and the upstream, by its
    /// index and name) — never a value from the file, which may hold credentials.
    pub fn from_toml(text: &str) -> Result<Self, GatewayError> {
        if text.len() > MAX_CONFIG_BYTES {
            return Err(GatewayError::config(ConfigErrorKind::TooLarge, None));
        }
        let file: File = toml::from_str(text)
            .map_err(|_| GatewayError::config(ConfigErrorKind::Syntax, None))?;
        if file.upstream.is_empty() {
            return Err(GatewayError::config(ConfigErrorKind::NoUpstream, None));
        }
        if file.upstream.len() > MAX_UPSTREAMS {
            return Err(GatewayError::config(
                ConfigErrorKind::TooManyUpstreams,
                None,
            ));
        }
        let mut upstreams: Vec<UpstreamConfig> = Vec::with_capacity(file.upstream.len());
        for table in file.upstream {
            let upstream = UpstreamConfig::from_table(table)?;
            if upstreams.iter().any(|u| u.name == upstream.name) {
                return Err(GatewayError::config(
                    ConfigErrorKind::DuplicateName,
                    Some(&upstream.name),
                ));
            }
            upstreams.push(upstream);
        }
        let revisions = match file.revisions {
            None => ProtocolVersion::ALL.to_vec(),
            Some(names) => {
                let mut revisions = Vec::with_capacity(names.len());
                for name in &names {
                    match ProtocolVersion::from_wire(name) {
                        Some(r) if !revisions.contains(&r) => revisions.push(r),
                        _ => {
                            return Err(GatewayError::config(
                                ConfigErrorKind::InvalidRevisions,
                                None,
                            ));
                        }
                    }
                }
                if revisions.is_empty() {
                    return Err(GatewayError::config(
                        ConfigErrorKind::InvalidRevisions,
                        None,
                    ));
                }
                revisions
            }
        };
        let server = ServerConfig::from_table(file.server.unwrap_or_default())
            .map_err(|kind| GatewayError::config(kind, None))?;
        Ok(Self {
            upstreams,
            profile1_only: file.profile1_only,
            revisions,
            server,
        })
    }

    /// How the gateway's endpoint is served over HTTP (`[server]`: Host, Origin and CORS
    /// allowances, a request rate limit, the OAuth protected resource); the defaults are the
    /// endpoint's own.
    pub fn server(&self) -> &ServerConfig {
        &self.server
    }

    /// Reads and checks the configuration file at `path` (at most [`MAX_CONFIG_BYTES`]).
    ///
    /// # Errors
    ///
    /// As [`from_toml`](Self::from_toml), and kind `Config` (`Unreadable`) when the file cannot
    /// be read.
    pub fn from_file(path: &std::path::Path) -> Result<Self, GatewayError> {
        let unreadable = || GatewayError::config(ConfigErrorKind::Unreadable, None);
        let meta = std::fs::metadata(path).map_err(|_| unreadable())?;
        if meta.len() > MAX_CONFIG_BYTES as u64 {
            return Err(GatewayError::config(ConfigErrorKind::TooLarge, None));
        }
        let text = std::fs::read_to_string(path).map_err(|_| unreadable())?;
        Self::from_toml(&text)
    }

    /// Whether only Tool Schema Profile 1 schemas are taken (`profile1_only = true`; default
    /// `false`: a schema outside Profile 1 is validated by the complete JSON Schema validator
    /// under Profile 1's budgets, and only what neither takes is left out).
    pub fn profile1_only(&self) -> bool {
        self.profile1_only
    }

    /// The revisions the gateway serves (`revisions = ["2026-07-28", ...]`; default every
    /// revision Tollgate serves). An upstream's `input_required` with state is relayed only by
    /// a gateway serving 2026-07-28 alone (only there may its tools keep request state).
    pub fn revisions(&self) -> &[ProtocolVersion] {
        &self.revisions
    }

    /// The upstreams, in file order.
    pub fn upstreams(&self) -> &[UpstreamConfig] {
        &self.upstreams
    }
}

impl UpstreamConfig {
    fn from_table(t: Table) -> Result<Self, GatewayError> {
        let refuse = |kind| Err(GatewayError::config(kind, Some(&t.name)));
        if !is_label(&t.name) {
            return Err(GatewayError::config(ConfigErrorKind::InvalidName, None));
        }
        if let Some(prefix) = &t.prefix
            && !is_label(prefix)
        {
            return refuse(ConfigErrorKind::InvalidPrefix);
        }
        let transport = match (t.url, t.command) {
            (Some(url), None) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return refuse(ConfigErrorKind::InvalidUrl);
                }
                if !t.args.is_empty()
                    || !t.env.is_empty()
                    || t.cwd.is_some()
                    || t.sole_call_requests
                {
                    return refuse(ConfigErrorKind::MixedTransport);
                }
                // Two credentials for one upstream: the grant's token or the header's?
                if t.oauth.is_some()
                    && t.headers
                        .keys()
                        .any(|k| k.eq_ignore_ascii_case("authorization"))
                {
                    return refuse(ConfigErrorKind::InvalidOAuth);
                }
                UpstreamTransport::Http {
                    url,
                    headers: t.headers.into_iter().collect(),
                }
            }
            (None, Some(command)) => {
                if command.is_empty() {
                    return refuse(ConfigErrorKind::InvalidCommand);
                }
                if !t.headers.is_empty() || t.oauth.is_some() {
                    return refuse(ConfigErrorKind::MixedTransport);
                }
                UpstreamTransport::Stdio {
                    command,
                    args: t.args,
                    env: t.env.into_iter().collect(),
                    cwd: t.cwd,
                }
            }
            _ => return refuse(ConfigErrorKind::MixedTransport),
        };
        let call_timeout = match t.timeout_ms {
            None => DEFAULT_CALL_TIMEOUT,
            Some(0) => return refuse(ConfigErrorKind::InvalidTimeout),
            Some(ms) => Duration::from_millis(ms),
        };
        let relist = match t.relist_ms.map(Duration::from_millis) {
            Some(every) if every < MIN_RELIST => return refuse(ConfigErrorKind::InvalidRelist),
            relist => relist,
        };
        let oauth = match t.oauth {
            None => None,
            Some(table) => match UpstreamOAuth::from_table(table) {
                Ok(oauth) => Some(oauth),
                Err(kind) => return refuse(kind),
            },
        };
        let revisions = match t.revisions {
            None => None,
            Some(names) => {
                let mut revisions = Vec::with_capacity(names.len());
                for name in &names {
                    match Revision::from_wire(name) {
                        Some(r) if !revisions.contains(&r) => revisions.push(r),
                        _ => return refuse(ConfigErrorKind::InvalidRevisions),
                    }
                }
                if revisions.is_empty() {
                    return refuse(ConfigErrorKind::InvalidRevisions);
                }
                Some(revisions)
            }
        };
        let max_input_rounds = match t.max_input_rounds {
            None => ClientLimits::DEFAULT_MAX_INPUT_ROUNDS,
            Some(rounds) if rounds > MAX_INPUT_ROUNDS => {
                return refuse(ConfigErrorKind::InvalidInputRounds);
            }
            Some(rounds) => rounds,
        };
        Ok(Self {
            name: t.name,
            prefix: t.prefix,
            transport,
            call_timeout,
            relist,
            oauth,
            revisions,
            max_input_rounds,
            sole_call_requests: t.sole_call_requests,
        })
    }

    /// The upstream's name (in logs and refusals).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The prefix of the names it serves, when it has one: a tool `echo` of an upstream with
    /// prefix `ev` is served as `ev_echo`.
    pub fn prefix(&self) -> Option<&str> {
        self.prefix.as_deref()
    }

    /// How it is reached.
    pub fn transport(&self) -> &UpstreamTransport {
        &self.transport
    }

    /// How long a forwarded call may take (`timeout_ms`; default [`DEFAULT_CALL_TIMEOUT`]).
    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// How often its tools are listed again (`relist_ms`, at least [`MIN_RELIST`]; default
    /// none: the catalog follows the upstream's `notifications/tools/list_changed` only), for
    /// upstreams that change without announcing it.
    pub fn relist(&self) -> Option<Duration> {
        self.relist
    }

    /// The revisions the gateway offers this upstream, in the order given (`revisions` in its
    /// table, e.g. `["2025-11-25"]` to speak a 2025 revision to a server that also speaks
    /// 2026-07-28; default `None`: every revision the client speaks, newest first). The rules
    /// of the gateway's own `revisions` hold: known, distinct, not none.
    pub fn revisions(&self) -> Option<&[Revision]> {
        self.revisions.as_deref()
    }

    /// How many rounds of input requests (a 2026-07-28 upstream's `input_required`: elicitation,
    /// sampling, roots asked of the caller) one forwarded call answers before it fails with the
    /// fixed -32603 (`max_input_rounds`; default 10, the client's
    /// [`DEFAULT_MAX_INPUT_ROUNDS`](ClientLimits::DEFAULT_MAX_INPUT_ROUNDS); at most
    /// [`MAX_INPUT_ROUNDS`]; 0 answers none).
    pub fn max_input_rounds(&self) -> u32 {
        self.max_input_rounds
    }

    /// Whether a request or log message a stdio upstream sends while exactly one forwarded
    /// request to it is outstanding is relayed to that request's caller
    /// (`sole_call_requests`, stdio only; default `false`: nothing on a line names the call it
    /// belongs to, so such messages are refused, -32601, or dropped). On, a request the
    /// upstream sends of its own accord (a `roots/list` outside any call) while one call is
    /// outstanding reaches that call's caller; with two or more outstanding it is refused
    /// either way. See [`ClientBuilder::sole_call_requests`](tollgate_client::ClientBuilder::sole_call_requests).
    pub fn sole_call_requests(&self) -> bool {
        self.sole_call_requests
    }

    /// The gateway's own OAuth client for this upstream (`[upstream.oauth]`, HTTP only), if
    /// configured.
    pub fn oauth(&self) -> Option<&UpstreamOAuth> {
        self.oauth.as_ref()
    }
}

/// 1 to 64 bytes of `A-Z a-z 0-9 _ -`: an upstream's name or prefix (a prefix then keeps every
/// served name within the tool-name alphabet).
fn is_label(text: &str) -> bool {
    (1..=MAX_UPSTREAM_NAME_BYTES).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    fn kind(text: &str) -> ConfigErrorKind {
        match GatewayConfig::from_toml(text) {
            Err(e) => e.config_kind().unwrap(),
            Ok(_) => ConfigErrorKind::Syntax,
        }
    }

    #[test]
    fn an_upstream_has_exactly_one_transport() {
        let both = "[[upstream]]\nname = \"a\"\nurl = \"http://x\"\ncommand = \"y\"\n";
        assert_eq!(kind(both), ConfigErrorKind::MixedTransport);
        let neither = "[[upstream]]\nname = \"a\"\n";
        assert_eq!(kind(neither), ConfigErrorKind::MixedTransport);
        let headers_on_stdio =
            "[[upstream]]\nname = \"a\"\ncommand = \"y\"\nheaders = { A = \"b\" }\n";
        assert_eq!(kind(headers_on_stdio), ConfigErrorKind::MixedTransport);
    }

    #[test]
    fn names_prefixes_and_urls_are_checked() {
        assert_eq!(kind(""), ConfigErrorKind::NoUpstream);
        assert_eq!(
            kind("[[upstream]]\nname = \"a b\"\ncommand = \"y\"\n"),
            ConfigErrorKind::InvalidName
        );
        let dup = "[[upstream]]\nname = \"a\"\ncommand = \"y\"\n[[upstream]]\nname = \"a\"\ncommand = \"z\"\n";
        assert_eq!(kind(dup), ConfigErrorKind::DuplicateName);
        assert_eq!(
            kind("[[upstream]]\nname = \"a\"\ncommand = \"y\"\nprefix = \"a.b\"\n"),
            ConfigErrorKind::InvalidPrefix
        );
        assert_eq!(
            kind("[[upstream]]\nname = \"a\"\nurl = \"ftp://x\"\n"),
            ConfigErrorKind::InvalidUrl
        );
        assert_eq!(
            kind("[[upstream]]\nname = \"a\"\ncommand = \"y\"\ntimeout_ms = 0\n"),
            ConfigErrorKind::InvalidTimeout
        );
        assert_eq!(
            kind("[[upstream]]\nname = \"a\"\ncommand = \"y\"\nunknown = 1\n"),
            ConfigErrorKind::Syntax
        );
    }

    #[test]
    fn revisions_are_known_distinct_and_not_none() {
        let file =
            |r: &str| format!("revisions = {r}\n[[upstream]]\nname = \"a\"\ncommand = \"y\"\n");
        let config = GatewayConfig::from_toml(&file(r#"["2026-07-28"]"#)).unwrap();
        assert_eq!(config.revisions(), [ProtocolVersion::V2026_07_28]);
        let all =
            GatewayConfig::from_toml("[[upstream]]\nname = \"a\"\ncommand = \"y\"\n").unwrap();
        assert_eq!(all.revisions(), ProtocolVersion::ALL);
        for bad in ["[]", r#"["2024-01-01"]"#, r#"["2026-07-28","2026-07-28"]"#] {
            assert_eq!(kind(&file(bad)), ConfigErrorKind::InvalidRevisions, "{bad}");
        }
    }

    #[test]
    fn an_upstream_s_revisions_are_known_distinct_and_not_none() {
        let file =
            |r: &str| format!("[[upstream]]\nname = \"a\"\ncommand = \"y\"\nrevisions = {r}\n");
        let config = GatewayConfig::from_toml(&file(r#"["2025-11-25","2025-06-18"]"#)).unwrap();
        assert_eq!(
            config.upstreams()[0].revisions(),
            Some(&[Revision::V2025_11_25, Revision::V2025_06_18][..])
        );
        let default =
            GatewayConfig::from_toml("[[upstream]]\nname = \"a\"\ncommand = \"y\"\n").unwrap();
        assert_eq!(default.upstreams()[0].revisions(), None);
        for bad in ["[]", r#"["2024-01-01"]"#, r#"["2025-11-25","2025-11-25"]"#] {
            assert_eq!(kind(&file(bad)), ConfigErrorKind::InvalidRevisions, "{bad}");
        }
    }

    #[test]
    fn sole_call_requests_are_off_by_default_and_for_stdio_upstreams_only() {
        let stdio = "[[upstream]]\nname = \"a\"\ncommand = \"y\"\n";
        let off = GatewayConfig::from_toml(stdio).unwrap();
        assert!(!off.upstreams()[0].sole_call_requests());
        let on = GatewayConfig::from_toml(&format!("{stdio}sole_call_requests = true\n")).unwrap();
        assert!(on.upstreams()[0].sole_call_requests());
        let http =
            "[[upstream]]\nname = \"a\"\nurl = \"http://h/mcp\"\nsole_call_requests = true\n";
        assert_eq!(kind(http), ConfigErrorKind::MixedTransport);
    }

    #[test]
    fn input_rounds_default_to_ten_and_are_taken_at_their_bound_and_refused_past_it() {
        let rounds = |n: u32| {
            format!("[[upstream]]\nname = \"a\"\ncommand = \"y\"\nmax_input_rounds = {n}\n")
        };
        let default =
            GatewayConfig::from_toml("[[upstream]]\nname = \"a\"\ncommand = \"y\"\n").unwrap();
        assert_eq!(default.upstreams()[0].max_input_rounds(), 10);
        for n in [0, 3, MAX_INPUT_ROUNDS] {
            let config = GatewayConfig::from_toml(&rounds(n)).unwrap();
            assert_eq!(config.upstreams()[0].max_input_rounds(), n);
        }
        assert_eq!(
            kind(&rounds(MAX_INPUT_ROUNDS + 1)),
            ConfigErrorKind::InvalidInputRounds
        );
    }

    #[test]
    fn relist_is_at_least_a_second() {
        let relist =
            |ms: u64| format!("[[upstream]]\nname = \"a\"\ncommand = \"y\"\nrelist_ms = {ms}\n");
        assert!(GatewayConfig::from_toml(&relist(1000)).is_ok());
        assert_eq!(kind(&relist(999)), ConfigErrorKind::InvalidRelist);
    }

    #[test]
    fn a_name_at_its_bound_is_taken_and_one_past_it_refused() {
        let at = "a".repeat(MAX_UPSTREAM_NAME_BYTES);
        let past = "a".repeat(MAX_UPSTREAM_NAME_BYTES + 1);
        let file = |name: &str| format!("[[upstream]]\nname = \"{name}\"\ncommand = \"y\"\n");
        assert!(GatewayConfig::from_toml(&file(&at)).is_ok());
        assert_eq!(kind(&file(&past)), ConfigErrorKind::InvalidName);
    }

    #[test]
    fn upstreams_at_their_bound_are_taken_and_one_past_refused() {
        let file = |n: usize| {
            (0..n)
                .map(|i| format!("[[upstream]]\nname = \"u{i}\"\ncommand = \"y\"\n"))
                .collect::<String>()
        };
        assert!(GatewayConfig::from_toml(&file(MAX_UPSTREAMS)).is_ok());
        assert_eq!(
            kind(&file(MAX_UPSTREAMS + 1)),
            ConfigErrorKind::TooManyUpstreams
        );
    }

    #[test]
    fn a_file_past_its_bound_is_refused_unread() {
        let mut text = String::from("[[upstream]]\nname = \"a\"\ncommand = \"y\"\n");
        text.push_str(&"#".repeat(MAX_CONFIG_BYTES - text.len()));
        assert!(GatewayConfig::from_toml(&text).is_ok());
        text.push('#');
        assert_eq!(kind(&text), ConfigErrorKind::TooLarge);
    }

    #[test]
    fn an_oauth_table_holds_one_credential_that_fits_its_method() {
        let http = "[[upstream]]\nname = \"a\"\nurl = \"https://x\"\n";
        let with = |oauth: &str| format!("{http}[upstream.oauth]\n{oauth}");
        let secret = "client_id = \"c\"\nclient_secret = \"s\"\n";
        let key = "client_id = \"c\"\nprivate_key_file = \"k.pem\"\nalgorithm = \"ES256\"\n";
        for good in [
            secret.to_owned(),
            key.to_owned(),
            format!("{secret}auth_method = \"client_secret_post\"\nissuer = \"https://as\"\n"),
            format!("{key}auth_method = \"private_key_jwt\"\n"),
        ] {
            let config = GatewayConfig::from_toml(&with(&good)).unwrap();
            assert_eq!(
                config.upstreams()[0].oauth().unwrap().client_id(),
                Some("c")
            );
        }
        for bad in [
            "client_id = \"\"\nclient_secret = \"s\"\n".to_owned(),
            "client_id = \"c\"\n".to_owned(),
            format!("{secret}private_key_file = \"k.pem\"\nalgorithm = \"ES256\"\n"),
            "client_id = \"c\"\nprivate_key_file = \"k.pem\"\n".to_owned(),
            "client_id = \"c\"\nprivate_key_file = \"k.pem\"\nalgorithm = \"HS1\"\n".to_owned(),
            format!("{secret}algorithm = \"ES256\"\n"),
            format!("{secret}auth_method = \"private_key_jwt\"\n"),
            format!("{key}auth_method = \"client_secret_basic\"\n"),
        ] {
            assert_eq!(kind(&with(&bad)), ConfigErrorKind::InvalidOAuth, "{bad}");
        }
        // Beside an Authorization header (two credentials), or on stdio.
        let both = format!(
            "[[upstream]]\nname = \"a\"\nurl = \"https://x\"\nheaders = {{ authorization = \"Bearer t\" }}\n[upstream.oauth]\n{secret}"
        );
        assert_eq!(kind(&both), ConfigErrorKind::InvalidOAuth);
        let stdio =
            format!("[[upstream]]\nname = \"a\"\ncommand = \"y\"\n[upstream.oauth]\n{secret}");
        assert_eq!(kind(&stdio), ConfigErrorKind::MixedTransport);
        // The secret is never printed.
        let config =
            GatewayConfig::from_toml(&with("client_id = \"c\"\nclient_secret = \"SECRET42\"\n"))
                .unwrap();
        assert!(!format!("{config:?}").contains("SECRET42"));
    }

    #[test]
    fn the_guide_s_configuration_is_taken() {
        let guide = include_str!("../../../docs/guide/gateway.md");
        let start = guide.find("```toml\n").unwrap() + "```toml\n".len();
        let end = start + guide[start..].find("```").unwrap();
        let config = GatewayConfig::from_toml(&guide[start..end]).unwrap();
        assert_eq!(config.upstreams().len(), 3);
        let mut revisions = config.revisions().to_vec();
        revisions.reverse();
        assert_eq!(revisions, ProtocolVersion::ALL);
        assert!(config.upstreams()[2].oauth().is_some());
        assert_eq!(config.server().requests_per_minute(), Some(600));
        assert!(
            config
                .server()
                .oauth()
                .is_some_and(|o| o.resource().ends_with("/mcp"))
        );
        assert!(config.upstreams()[0].sole_call_requests());
        // Every other example in the guide is a configuration the gateway takes too.
        let blocks = guide.split("```toml\n").skip(1);
        for (n, block) in blocks.enumerate() {
            let text = &block[..block.find("```").unwrap()];
            assert!(GatewayConfig::from_toml(text).is_ok(), "toml block {n}");
        }
    }

    #[test]
    fn a_secret_in_the_file_is_never_printed() {
        let config = GatewayConfig::from_toml(
            "[[upstream]]\nname = \"a\"\nurl = \"https://x\"\nheaders = { Authorization = \"Bearer SECRET42\" }\n",
        )
        .unwrap();
        assert!(!format!("{config:?}").contains("SECRET42"));
        let broken =
            GatewayConfig::from_toml("[[upstream]]\nname = \"SECRET42\ncommand = 1").unwrap_err();
        assert!(!broken.to_string().contains("SECRET42"));
    }
}
