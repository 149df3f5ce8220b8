//! The gateway's errors: what kind of thing failed and which upstream, never a value from the
//! configuration (it holds credentials) or from an upstream's answer; and the fixed refusals the
//! gateway sends an upstream for a request it cannot relay to the caller.

use std::fmt;

use tollgate_client::handler::Refusal;

/// The refusal sent upstream when the caller cannot be asked: it did not declare the
/// capability, its revision or transport carries no such request (2026-07-28, stdio), or the
/// request is one the gateway does not relay (a URL elicitation, a malformed one).
pub(crate) const CANNOT_ASK: Refusal = Refusal::METHOD_NOT_FOUND;

/// The refusal sent upstream when the caller was asked and gave no usable answer (an error, a
/// malformed result, no answer in time, or the call ended first).
pub(crate) const NOT_ANSWERED: Refusal = Refusal {
    code: -32603,
    message: "the caller did not answer the request",
};

/// The JSON-RPC codes the gateway reads in an upstream's error answers (the MCP
/// specification's; the gateway's own answers are the endpoint's fixed ones).
pub(crate) mod upstream_code {
    /// "Method not found": for a read, an upstream that serves no resources.
    pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
    /// "Resource not found" on the 2025 revisions.
    pub(crate) const RESOURCE_NOT_FOUND_2025: i64 = -32002;
    /// "Resource not found" on 2026-07-28 (invalid params: a read's only parameter is its URI).
    pub(crate) const RESOURCE_NOT_FOUND_2026: i64 = -32602;
    /// A refusal for client capabilities a request lacks (2026-07-28).
    pub(crate) const MISSING_CAPABILITY: i64 = -32021;
}

/// A broken rule of the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// The file could not be read.
    Unreadable,
    /// The file is larger than [`MAX_CONFIG_BYTES`](crate::config::MAX_CONFIG_BYTES).
    TooLarge,
    /// Not TOML, or a key the configuration does not have, or a value of the wrong type.
    Syntax,
    /// No `[[upstream]]` table.
    NoUpstream,
    /// More than [`MAX_UPSTREAMS`](crate::config::MAX_UPSTREAMS) upstreams.
    TooManyUpstreams,
    /// An upstream name that is not 1 to 64 bytes of `A-Z a-z 0-9 _ -`.
    InvalidName,
    /// Two upstreams share a name.
    DuplicateName,
    /// A prefix that is not 1 to 64 bytes of `A-Z a-z 0-9 _ -`.
    InvalidPrefix,
    /// An upstream with both or neither of `url` and `command`, or with settings of the other
    /// transport (`headers` on stdio; `args`, `env` or `cwd` on HTTP).
    MixedTransport,
    /// A `url` that is not `http://` or `https://`.
    InvalidUrl,
    /// An empty `command`.
    InvalidCommand,
    /// A `timeout_ms` of 0.
    InvalidTimeout,
    /// A `relist_ms` under 1,000.
    InvalidRelist,
    /// An `[upstream.oauth]` table without a `client_id` (client credentials), without exactly
    /// one of `client_secret` and `private_key_file` (client credentials), with `algorithm`
    /// missing beside a key file (or given without one, or unknown), an `auth_method` that does
    /// not fit the credentials, an empty `client_id` or `client_name`, a `client_secret`
    /// without a `client_id`, a `client_metadata_url` that is not `https://`, or beside an
    /// `Authorization` header.
    InvalidOAuth,
    /// An `[upstream.oauth]` `grant` that is neither `client_credentials` nor
    /// `authorization_code`, or a key of the other grant (`token_file`, `client_metadata_url`
    /// or `client_name` with client credentials; `private_key_file` or `algorithm` with the
    /// authorization code).
    InvalidGrant,
    /// `grant = "authorization_code"` without a `token_file` (where its tokens are kept).
    NoTokenFile,
    /// `[upstream.oauth]` `scopes` with more than 32 entries, or one that is not an RFC 6749
    /// scope token (1 to 256 bytes of printable ASCII other than space, `"` and `\`).
    InvalidScopes,
    /// A `max_input_rounds` over [`MAX_INPUT_ROUNDS`](crate::config::MAX_INPUT_ROUNDS).
    InvalidInputRounds,
    /// A `[server]` table with a Host that is not a DNS name, IPv4 or bracketed IPv6 address
    /// without a port, an origin the runtime's `CorsPolicy` refuses, more than 64 names in a
    /// list, a `requests_per_minute` of 0 or over a million, a `[server.oauth]` the runtime's
    /// `ProtectedResource` refuses (its URL, issuer or scopes) or whose `resource` path is not
    /// `/mcp`, or a `postgres` that is not a `postgres://` URL.
    InvalidServer,
    /// `revisions` (the gateway's, or an upstream's) empty, naming a revision Tollgate does not
    /// serve (or, for an upstream, its client does not speak), or naming one twice.
    InvalidRevisions,
}

impl ConfigErrorKind {
    const fn description(self) -> &'static str {
        match self {
            Self::Unreadable => "the configuration file cannot be read",
            Self::TooLarge => "the configuration file is larger than 256 KiB",
            Self::Syntax => "the configuration is not valid TOML of the gateway's shape",
            Self::NoUpstream => "the configuration has no [[upstream]] table",
            Self::TooManyUpstreams => "the configuration has more than 64 upstreams",
            Self::InvalidName => "an upstream name must be 1 to 64 bytes of A-Z a-z 0-9 _ -",
            Self::DuplicateName => "two upstreams share a name",
            Self::InvalidPrefix => "a prefix must be 1 to 64 bytes of A-Z a-z 0-9 _ -",
            Self::MixedTransport => {
                "an upstream needs exactly one of url (with headers) or command (with args, env, cwd, sole_call_requests)"
            }
            Self::InvalidUrl => "an upstream url must start with http:// or https://",
            Self::InvalidCommand => "an upstream command must not be empty",
            Self::InvalidTimeout => "timeout_ms must be at least 1",
            Self::InvalidRelist => "relist_ms must be at least 1000",
            Self::InvalidScopes => {
                "[upstream.oauth] scopes must be at most 32 scope tokens of 1 to 256 printable ASCII bytes, without space, quote or backslash"
            }
            Self::InvalidInputRounds => "max_input_rounds must be at most 100",
            Self::InvalidServer => {
                "[server] takes host names without a port, scheme://host[:port] origins (at most 64 each), requests_per_minute from 1 to 1000000, an [server.oauth] whose resource ends in /mcp with an issuer and at most 32 scopes the protected resource takes, and a postgres:// URL"
            }
            Self::InvalidRevisions => {
                "revisions must name one or more distinct revisions Tollgate serves"
            }
            Self::InvalidOAuth => {
                "an [upstream.oauth] table needs client_id and exactly one of client_secret or private_key_file (with algorithm) for client credentials, a client_id beside a client_secret, an https client_metadata_url, an auth_method that fits them, and no Authorization header beside it"
            }
            Self::InvalidGrant => {
                "an [upstream.oauth] grant is client_credentials or authorization_code, with only that grant's keys"
            }
            Self::NoTokenFile => {
                "an [upstream.oauth] table with grant = \"authorization_code\" needs a token_file"
            }
        }
    }
}

/// What failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GatewayErrorKind {
    /// The configuration broke a rule.
    Config(ConfigErrorKind),
    /// An upstream could not be started or connected to, or did not answer `tools/list`.
    Upstream,
    /// Two upstreams serve the same name (give one a prefix).
    NameClash,
    /// The gateway's endpoint could not be built from what was imported.
    Build,
    /// An upstream's authorization-code grant has no usable tokens (none stored, or the
    /// refresh was refused): the upstream is unavailable until `tollgate gateway login` is run
    /// for it ([`login`](crate::login)); a serving gateway notices the new tokens and lets it
    /// join ([`Gateway::follow`](crate::Gateway::follow)).
    LoginNeeded,
    /// An upstream's authorization-code grant has stored tokens, but its authorization server
    /// could not be reached to refresh them: the tokens are kept, and the upstream joins the
    /// serving gateway once the server answers (tried again with backoff).
    AuthorizationUnreachable,
    /// `tollgate gateway login` failed ([`GatewayError::cause`] says why, in a fixed text).
    Login,
}

/// A gateway error: its kind and, where one is concerned, the upstream's name.
#[derive(Clone, Debug)]
pub struct GatewayError {
    kind: GatewayErrorKind,
    upstream: Option<String>,
    cause: Option<&'static str>,
}

impl GatewayError {
    pub(crate) fn config(kind: ConfigErrorKind, upstream: Option<&str>) -> Self {
        Self::new(GatewayErrorKind::Config(kind), upstream)
    }

    pub(crate) fn new(kind: GatewayErrorKind, upstream: Option<&str>) -> Self {
        Self {
            kind,
            upstream: upstream.map(str::to_owned),
            cause: None,
        }
    }

    /// This error with the fixed text of what caused it (an OAuth refusal's kind, such as
    /// `"token request refused"`: never a token, code or URL).
    pub(crate) fn because(mut self, cause: Option<&'static str>) -> Self {
        self.cause = cause;
        self
    }

    /// The fixed text of what caused it, where one is known (an OAuth refusal's kind, such as
    /// `"token request refused"`, for [`GatewayErrorKind::LoginNeeded`] and
    /// [`GatewayErrorKind::Login`]).
    pub fn cause(&self) -> Option<&'static str> {
        self.cause
    }

    /// What failed.
    pub fn kind(&self) -> GatewayErrorKind {
        self.kind
    }

    /// The configuration rule broken, when the configuration is what failed.
    pub fn config_kind(&self) -> Option<ConfigErrorKind> {
        match self.kind {
            GatewayErrorKind::Config(kind) => Some(kind),
            _ => None,
        }
    }

    /// The upstream concerned, when one is.
    pub fn upstream(&self) -> Option<&str> {
        self.upstream.as_deref()
    }
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self.kind {
            GatewayErrorKind::Config(kind) => kind.description(),
            GatewayErrorKind::Upstream => "the upstream could not be connected to or listed",
            GatewayErrorKind::NameClash => "two upstreams serve the same name: give one a prefix",
            GatewayErrorKind::Build => "the gateway's endpoint could not be built",
            GatewayErrorKind::LoginNeeded => {
                "no usable OAuth tokens for the upstream (none stored, or the refresh was refused): run tollgate gateway login --config FILE --upstream NAME"
            }
            GatewayErrorKind::AuthorizationUnreachable => {
                "the upstream's authorization server could not be reached: its tokens are kept, and it joins once the server answers"
            }
            GatewayErrorKind::Login => "the login to the upstream failed",
        };
        f.write_str(text)?;
        if let Some(cause) = self.cause {
            write!(f, ": {cause}")?;
        }
        if let Some(upstream) = &self.upstream {
            write!(f, " (upstream {upstream})")?;
        }
        Ok(())
    }
}

impl std::error::Error for GatewayError {}

/// Why a forwarded call failed (the client gets the fixed internal error; this is what the
/// gateway's `tollgate::handler` event and error reporter see). Carries no data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ForwardError {
    /// The upstream did not answer within its `timeout_ms`.
    Timeout,
    /// The upstream answered with a JSON-RPC error, broke the protocol or the connection.
    Upstream,
    /// The upstream's result did not pass the content constructors' checks.
    Malformed,
    /// The caller's request was cancelled (or its caller went away) first; the upstream call
    /// was cancelled with it.
    Cancelled,
}

impl fmt::Display for ForwardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Timeout => "the upstream did not answer in time",
            Self::Upstream => "the upstream failed the call",
            Self::Malformed => "the upstream's result failed the content checks",
            Self::Cancelled => "the caller's request was cancelled",
        })
    }
}

impl std::error::Error for ForwardError {}

/// A forwarded request's failure as the gateway's handlers read it: its [`ForwardError`], and,
/// when the upstream answered with a JSON-RPC error, that error's code and `data` (what the
/// gateway answers in its place, such as -32021's `requiredCapabilities` or a read's "Resource
/// not found", is read from them; they never reach the caller as sent).
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) error: ForwardError,
    answered: Option<(i64, Option<tollgate::json::JsonValue>)>,
}

impl Failed {
    /// The upstream's error answer `error`, when it is one (else a broken exchange).
    pub(crate) fn upstream(error: &tollgate_client::Error) -> Self {
        Self {
            error: ForwardError::Upstream,
            answered: error.code().map(|code| (code, error.data().cloned())),
        }
    }

    /// The code of the upstream's error answer.
    pub(crate) fn code(&self) -> Option<i64> {
        self.answered.as_ref().map(|(code, _)| *code)
    }

    /// The `data` of the upstream's error answer.
    pub(crate) fn data(&self) -> Option<&tollgate::json::JsonValue> {
        self.answered.as_ref().and_then(|(_, data)| data.as_ref())
    }
}

impl From<ForwardError> for Failed {
    fn from(error: ForwardError) -> Self {
        Self {
            error,
            answered: None,
        }
    }
}

impl From<Failed> for ForwardError {
    fn from(failed: Failed) -> Self {
        failed.error
    }
}

/// The login's cause when the upstream has no `[upstream.oauth]` table with
/// `grant = "authorization_code"` (or is not reached over HTTP).
pub(crate) const NOT_AUTHORIZATION_CODE: &str =
    "the upstream has no [upstream.oauth] table with grant = \"authorization_code\"";

/// The login's cause when the upstream could not be connected to, without an OAuth refusal.
pub(crate) const UNREACHABLE: &str = "the upstream could not be connected to";

/// The login's cause when the upstream answered without asking for authorization.
pub(crate) const NO_CHALLENGE: &str = "the upstream asked for no authorization; nothing was kept";

/// The cause when the OAuth client could not be set up (its HTTP client, or a key file).
pub(crate) const CLIENT_SETUP: &str = "the OAuth client could not be set up";
