//! The CORS policy of the HTTP service (the Fetch standard's CORS protocol): which page origins
//! other than the server's own may call an endpoint from a browser, the preflight answer, and the
//! headers an allowed origin's responses carry.
//!
//! Off by default: without a policy, browsers apply the same-origin rule and no response grants
//! another origin anything. A preflight is answered here, before admission, parsing or any
//! handler, and is never counted by a rate limiter. Knows nothing of JSON-RPC.

use std::time::Duration;

use http::header::{
    ACCESS_CONTROL_ALLOW_CREDENTIALS, ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS,
    ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE,
    ACCESS_CONTROL_REQUEST_HEADERS, ACCESS_CONTROL_REQUEST_METHOD, HeaderMap, HeaderValue, VARY,
};

use crate::facts::error::{BuildError, BuildErrorKind};
use crate::registry::Endpoint;

/// The request headers an MCP client may send, which a preflight grants (besides the
/// endpoint's `Mcp-Param-*` names and any the policy adds).
const REQUEST_HEADERS: &[&str] = &[
    "accept",
    "authorization",
    "baggage",
    "content-type",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
    "traceparent",
    "tracestate",
];

/// What a browser client must be able to read from a response.
const EXPOSED_HEADERS: &str = "Mcp-Session-Id, WWW-Authenticate, Retry-After";

/// The default preflight cache lifetime: 10 minutes.
pub const DEFAULT_CORS_MAX_AGE: Duration = Duration::from_secs(600);

/// Which page origins may call the service's endpoints from a browser, and how.
///
/// Origins are exact and written as a browser sends them: `https://app.example.com` or
/// `http://localhost:5173` (a scheme, a host and an optional port, nothing else: no wildcard, no
/// `null`, no default port such as `:443`, no leading zero in a port; an internationalized host
/// in its `xn--` form). An allowed origin is also accepted by
/// the service's `Origin` check. Credentials (cookies, HTTP authentication) are not allowed unless
/// [`allow_credentials`](Self::allow_credentials) says so; an `Authorization` header is
/// always grantable, since MCP clients send bearer tokens in it.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tollgate::transport::CorsPolicy;
///
/// let cors = CorsPolicy::allow_origins(["https://app.example.com", "http://localhost:5173"])?
///     .max_age(Duration::from_secs(300))
///     .allow_header("x-request-id")?;
/// assert!(CorsPolicy::allow_origins(["https://app.example.com/path"]).is_err());
/// assert!(CorsPolicy::allow_origins(["*"]).is_err());
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct CorsPolicy {
    origins: Vec<String>,
    extra_headers: Vec<String>,
    credentials: bool,
    max_age: Duration,
}

impl CorsPolicy {
    /// A policy granting exactly these origins.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidCorsPolicy`] for an origin that is not `http` or `https`, a host
    /// and an optional port (a path, query, user information, wildcard or `null` is refused), or
    /// for an empty list.
    pub fn allow_origins<I, S>(origins: I) -> Result<Self, BuildError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut list = Vec::new();
        for origin in origins {
            let origin = origin.as_ref().to_ascii_lowercase();
            if !is_origin(&origin) {
                return Err(BuildError::new(BuildErrorKind::InvalidCorsPolicy));
            }
            if !list.contains(&origin) {
                list.push(origin);
            }
        }
        if list.is_empty() {
            return Err(BuildError::new(BuildErrorKind::InvalidCorsPolicy));
        }
        Ok(Self {
            origins: list,
            extra_headers: Vec::new(),
            credentials: false,
            max_age: DEFAULT_CORS_MAX_AGE,
        })
    }

    /// Lets a browser send credentials (cookies, HTTP authentication) with its requests
    /// (`Access-Control-Allow-Credentials: true`). Off by default.
    pub fn allow_credentials(mut self, allow: bool) -> Self {
        self.credentials = allow;
        self
    }

    /// How long a browser may cache a preflight answer (default 10 minutes, at most a day).
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age.min(Duration::from_secs(86_400));
        self
    }

    /// Grants one more request header (an application's own, sent by its page).
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidCorsPolicy`] when `name` is not an HTTP header name (or is `*`:
    /// every grant is explicit).
    pub fn allow_header(mut self, name: &str) -> Result<Self, BuildError> {
        let name = name.to_ascii_lowercase();
        if name == "*" || http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(BuildError::new(BuildErrorKind::InvalidCorsPolicy));
        }
        if !self.extra_headers.contains(&name) {
            self.extra_headers.push(name);
        }
        Ok(self)
    }

    /// The configured origin `origin` names (compared without regard to case), if any.
    pub(crate) fn allowed(&self, origin: &str) -> Option<&str> {
        self.origins
            .iter()
            .find(|o| o.eq_ignore_ascii_case(origin))
            .map(String::as_str)
    }

    pub(crate) fn allows_origin(&self, origin: &str) -> bool {
        self.allowed(origin).is_some()
    }

    /// The answer to a preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`)
    /// for an endpoint offering `methods` and mirroring `params` (lowercase `mcp-param-*`
    /// names): the grant's headers, or `None` when the origin, the method or a requested
    /// header is not allowed.
    pub(crate) fn preflight(
        &self,
        request: &HeaderMap,
        methods: &'static str,
        params: &[String],
    ) -> Option<HeaderMap> {
        let origin = self.allowed(single(request, http::header::ORIGIN)?)?;
        let method = single(request, ACCESS_CONTROL_REQUEST_METHOD)?;
        if !methods.split(", ").any(|m| m == method) {
            return None;
        }
        let mut granted = Vec::new();
        for value in request.get_all(ACCESS_CONTROL_REQUEST_HEADERS) {
            for name in value.to_str().ok()?.split(',') {
                let name = name.trim().to_ascii_lowercase();
                if name.is_empty() {
                    continue;
                }
                let known = REQUEST_HEADERS.contains(&name.as_str())
                    || params.contains(&name)
                    || self.extra_headers.contains(&name);
                if !known {
                    return None;
                }
                if !granted.contains(&name) {
                    granted.push(name);
                }
            }
        }
        let mut headers = self.granted(origin)?;
        headers.insert(
            ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(methods),
        );
        if !granted.is_empty() {
            let value = HeaderValue::from_str(&granted.join(", ")).ok()?;
            headers.insert(ACCESS_CONTROL_ALLOW_HEADERS, value);
        }
        let seconds = HeaderValue::from(self.max_age.as_secs());
        headers.insert(ACCESS_CONTROL_MAX_AGE, seconds);
        headers.insert(
            VARY,
            HeaderValue::from_static(
                "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
            ),
        );
        Some(headers)
    }

    /// The grant an actual request's response carries: its `Origin` (present once) when the
    /// policy allows it.
    pub(crate) fn grant_for(&self, request: &HeaderMap) -> Option<HeaderMap> {
        self.granted(self.allowed(single(request, http::header::ORIGIN)?)?)
    }

    /// The headers an actual response to an allowed `origin` carries.
    pub(crate) fn granted(&self, origin: &str) -> Option<HeaderMap> {
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_str(origin).ok()?,
        );
        headers.insert(
            ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSED_HEADERS),
        );
        if self.credentials {
            headers.insert(
                ACCESS_CONTROL_ALLOW_CREDENTIALS,
                HeaderValue::from_static("true"),
            );
        }
        headers.insert(VARY, HeaderValue::from_static("Origin"));
        Some(headers)
    }
}

/// The `mcp-param-*` header names (lowercase) an endpoint's tools mirror, for CORS preflights.
pub(crate) fn mirrored_header_names(endpoint: &Endpoint) -> Vec<String> {
    let mut names: Vec<String> = endpoint
        .inner
        .catalog
        .tools
        .iter()
        .flat_map(|tool| tool.inner.input.mirrored_headers())
        .map(|h| format!("mcp-param-{}", h.suffix().to_ascii_lowercase()))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The value of a header present exactly once, as text.
fn single(headers: &HeaderMap, name: http::header::HeaderName) -> Option<&str> {
    crate::wire::headers::single(headers, name).ok().flatten()
}

/// Whether `origin` is a serialized `http` or `https` origin: the scheme, `://`, a host (a
/// registered name, an IPv4 address or a bracketed IPv6 address) and an optional port, nothing
/// else.
fn is_origin(origin: &str) -> bool {
    let (authority, default_port) = match origin.strip_prefix("https://") {
        Some(rest) => (rest, "443"),
        None => match origin.strip_prefix("http://") {
            Some(rest) => (rest, "80"),
            None => return false,
        },
    };
    // A host and an optional port (the rebinding guard's reading of an authority), written as a
    // browser serializes an origin: no default port, no leading zero.
    let host = crate::transport::rebinding::host_of(authority);
    let port = &authority[host.len()..];
    let name_ok = host.starts_with('[')
        || host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    crate::transport::rebinding::is_authority(authority)
        && name_ok
        && port.strip_prefix(':').is_none_or(|digits| {
            !digits.starts_with('0') && digits != default_port && digits.parse::<u16>().is_ok()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_exact() {
        for good in [
            "https://app.example.com",
            "http://localhost:5173",
            "http://127.0.0.1:8080",
            "http://[::1]:3000",
            "https://[2001:db8::1]",
            "http://my_host.internal:8080",
            "https://xn--bcher-kva.example",
            "http://app.example.com:443",
        ] {
            assert!(is_origin(good), "{good}");
        }
        for bad in [
            "*",
            "null",
            "app.example.com",
            "ftp://app.example.com",
            "https://app.example.com/",
            "https://app.example.com/path",
            "https://user@app.example.com",
            "https://app.example.com:99999",
            "https://app.example.com:",
            "https://",
            "https://[::1",
            "https://[::1]x",
            "https://app.example.com?x",
            "https://app.example.com:443",
            "http://app.example.com:80",
            "http://localhost:05173",
            "https://bücher.example",
            "https://a,b.example",
            "https://a!b.example",
        ] {
            assert!(!is_origin(bad), "{bad}");
        }
    }

    fn preflight(origin: &str, method: &str, headers: &str) -> Option<HeaderMap> {
        let policy = CorsPolicy::allow_origins(["https://app.example.com"]).ok()?;
        let mut request = HeaderMap::new();
        request.insert(http::header::ORIGIN, HeaderValue::from_str(origin).ok()?);
        request.insert(
            ACCESS_CONTROL_REQUEST_METHOD,
            HeaderValue::from_str(method).ok()?,
        );
        if !headers.is_empty() {
            request.insert(
                ACCESS_CONTROL_REQUEST_HEADERS,
                HeaderValue::from_str(headers).ok()?,
            );
        }
        policy.preflight(&request, "POST", &["mcp-param-tenant".to_owned()])
    }

    #[test]
    fn a_preflight_grants_exactly_what_the_endpoint_takes() {
        let granted = preflight(
            "https://app.example.com",
            "POST",
            "content-type, Mcp-Method,MCP-Protocol-Version, mcp-param-tenant",
        );
        let granted = granted.as_ref();
        let header = |name| {
            granted
                .and_then(|h| h.get(name))
                .and_then(|v| v.to_str().ok())
        };
        assert_eq!(
            header(ACCESS_CONTROL_ALLOW_ORIGIN),
            Some("https://app.example.com")
        );
        assert_eq!(
            header(ACCESS_CONTROL_ALLOW_HEADERS),
            Some("content-type, mcp-method, mcp-protocol-version, mcp-param-tenant")
        );
        assert_eq!(header(ACCESS_CONTROL_ALLOW_METHODS), Some("POST"));
        assert_eq!(header(ACCESS_CONTROL_MAX_AGE), Some("600"));
        assert_eq!(header(ACCESS_CONTROL_ALLOW_CREDENTIALS), None);
        assert!(preflight("https://evil.example", "POST", "").is_none());
        assert!(preflight("https://app.example.com", "PUT", "").is_none());
        assert!(preflight("https://app.example.com", "POST", "x-unknown").is_none());
        assert!(preflight("https://app.example.com", "POST", "mcp-param-other").is_none());
    }
}
