//! MCP authorization's resource-server facts: the protected resource an endpoint is
//! ([`ProtectedResource`]: its identifier, authorization servers and scopes, rendered once as its
//! RFC 9728 metadata document), the `WWW-Authenticate` challenges that point clients at it, the
//! scopes an operation requires ([`Scopes`]) and whether an identity holds them.
//!
//! Knows nothing of tokens: how a bearer token becomes an identity is the admission
//! controller's (`auth/`, feature `oauth`). Knows nothing of routes: the transport serves the
//! document.

use std::collections::BTreeSet;
use std::sync::Arc;

use http::HeaderValue;
use tollgate_json::{JsonObject, JsonValue, OutputLimits};

use crate::facts::error::{BuildError, BuildErrorKind};
use crate::facts::identity::AdmissionIdentity;

/// The most scopes one list may hold (an operation's required scopes, `scopes_supported`).
pub const MAX_SCOPES: usize = 64;
/// The longest scope token, in bytes.
pub const MAX_SCOPE_BYTES: usize = 128;
/// The most authorization servers one protected resource lists.
pub const MAX_AUTHORIZATION_SERVERS: usize = 16;
/// The longest resource identifier or authorization-server URL, in bytes.
pub const MAX_AUTHORIZATION_URL_BYTES: usize = 2_048;
/// The most scope implications (`scope_implies`) one protected resource declares.
pub const MAX_SCOPE_IMPLICATIONS: usize = 64;

/// The well-known path prefix of RFC 9728 protected-resource metadata.
pub(crate) const METADATA_PREFIX: &str = "/.well-known/oauth-protected-resource";
/// The 403 challenge when the full one cannot be a header value: still a refusal (fail closed),
/// without the pointer and scopes.
const INSUFFICIENT_SCOPE_FIXED: &str = "Bearer error=\"insufficient_scope\"";

/// A scope token (RFC 6749 §3.3): 1 to 128 bytes of `%x21 / %x23-5B / %x5D-7E`, so it never
/// needs quoting inside a challenge.
pub(crate) fn is_scope_token(scope: &str) -> bool {
    (1..=MAX_SCOPE_BYTES).contains(&scope.len())
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b))
}

/// A checked list of scopes: at most 64 scope tokens, each kept once, in the order given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scopes(Arc<[Arc<str>]>);

impl Scopes {
    /// The scopes, or `None` when one is not a scope token or there are more than 64.
    pub(crate) fn parse<S: AsRef<str>>(scopes: impl IntoIterator<Item = S>) -> Option<Self> {
        let mut list: Vec<Arc<str>> = Vec::new();
        for scope in scopes {
            let scope = scope.as_ref();
            if !is_scope_token(scope) {
                return None;
            }
            if !list.iter().any(|s| &**s == scope) {
                list.push(Arc::from(scope));
            }
            if list.len() > MAX_SCOPES {
                return None;
            }
        }
        Some(Self(list.into()))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.iter().map(|s| &**s)
    }
}

/// A checked `http` or `https` URL without user information, query or fragment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Url {
    pub(crate) scheme: &'static str,
    /// The host as written (a name, an IPv4 address or a bracketed IPv6 literal).
    pub(crate) host: String,
    pub(crate) port: Option<u16>,
    /// `""` or a path starting with `/`.
    pub(crate) path: String,
}

impl Url {
    /// Parses `text` as an absolute `http(s)` URL of visible ASCII, at most 2,048 bytes, with a
    /// host, an optional port and path, and no user information, query or fragment.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        if text.len() > MAX_AUTHORIZATION_URL_BYTES || !text.bytes().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        let (scheme, rest) = text.split_once("://")?;
        let scheme = if scheme.eq_ignore_ascii_case("https") {
            "https"
        } else if scheme.eq_ignore_ascii_case("http") {
            "http"
        } else {
            return None;
        };
        if rest.contains(['?', '#', '@', '\\', '"']) {
            return None;
        }
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        let (host, port) = split_host_port(authority)?;
        let path_ok = path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/%".contains(&b));
        if !path_ok || path.contains("//") {
            return None;
        }
        Some(Self {
            scheme,
            host: host.to_owned(),
            port,
            path: path.to_owned(),
        })
    }

    /// Whether the host is a loopback one (`localhost`, `127.0.0.0/8`, `[::1]`).
    pub(crate) fn is_loopback(&self) -> bool {
        let host = self.host.to_ascii_lowercase();
        host == "localhost"
            || host == "[::1]"
            || host
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// `scheme://host[:port]` as written (the scheme lowercased).
    pub(crate) fn origin(&self) -> String {
        match self.port {
            Some(port) => format!("{}://{}:{port}", self.scheme, self.host),
            None => format!("{}://{}", self.scheme, self.host),
        }
    }

    /// The form two identifiers are compared in (RFC 3986 §6.2.2 and §6.2.3, as MCP's canonical
    /// server URI asks): scheme and host lowercased, the scheme's default port dropped, one
    /// trailing `/` dropped.
    pub(crate) fn canonical(&self) -> String {
        let default = match self.scheme {
            "https" => 443,
            _ => 80,
        };
        let mut out = format!("{}://{}", self.scheme, self.host.to_ascii_lowercase());
        if let Some(port) = self.port.filter(|p| *p != default) {
            out.push(':');
            out.push_str(&port.to_string());
        }
        out.push_str(self.path.strip_suffix('/').unwrap_or(&self.path));
        out
    }
}

fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let end = rest.find(']')?;
        let literal = &rest[..end];
        literal.parse::<std::net::Ipv6Addr>().ok()?;
        let after = &rest[end + 1..];
        let host = &authority[..end + 2];
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return None,
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let name_ok = host.starts_with('[')
        || (!host.is_empty()
            && host.len() <= 253
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.')));
    if !name_ok {
        return None;
    }
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p.parse::<u16>().ok().filter(|p| *p != 0)?)
        }
        Some(_) => return None,
    };
    Some((host, port))
}

/// The protected resource an endpoint is, under MCP authorization (an OAuth 2.1 resource
/// server): its resource identifier (the endpoint's public URL, the audience its tokens must
/// name), the authorization servers that issue them, and the scopes it knows. The endpoint serves
/// its RFC 9728 metadata at `/.well-known/oauth-protected-resource` followed by the endpoint's
/// path, and at `/.well-known/oauth-protected-resource` itself when it is the service's only
/// protected endpoint; every challenge points there.
///
/// # Examples
///
/// ```
/// use tollgate::policy::ProtectedResource;
///
/// let resource = ProtectedResource::builder("https://mcp.example.com/mcp")
///     .authorization_server("https://auth.example.com")
///     .scopes_supported(["catalog:read", "catalog:write"])
///     .scope_implies("catalog:admin", ["catalog:read", "catalog:write"])
///     .build()?;
/// assert_eq!(
///     resource.metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// assert_eq!(
///     resource.unauthorized_challenge(false),
///     r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="catalog:read catalog:write""#
/// );
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ProtectedResource {
    inner: Arc<ResourceInner>,
}

#[derive(Debug)]
struct ResourceInner {
    resource: String,
    canonical: String,
    /// The identifier's path, as written.
    path: String,
    metadata_url: String,
    authorization_servers: Vec<String>,
    scopes_supported: Scopes,
    /// Each scope with every scope it implies (itself included), transitively.
    implied: Vec<(Arc<str>, BTreeSet<Arc<str>>)>,
    document: Arc<[u8]>,
}

/// Builds a [`ProtectedResource`].
#[derive(Debug)]
#[must_use = "call build() to finish the protected resource"]
pub struct ProtectedResourceBuilder {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    implications: Vec<(String, Vec<String>)>,
    resource_name: Option<String>,
}

impl ProtectedResource {
    /// Starts a protected resource whose identifier is `resource`: the endpoint's absolute
    /// public URL (`https`; `http` only on a loopback host), without query or fragment.
    pub fn builder(resource: impl Into<String>) -> ProtectedResourceBuilder {
        ProtectedResourceBuilder {
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            implications: Vec::new(),
            resource_name: None,
        }
    }

    /// The resource identifier, as configured.
    pub fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// Whether `audience` names this resource (compared in canonical form: scheme and host
    /// case, default port and one trailing `/` do not matter).
    pub fn is_audience(&self, audience: &str) -> bool {
        Url::parse(audience).is_some_and(|u| u.canonical() == self.inner.canonical)
    }

    /// Where the metadata document is published (the path-inserted well-known URL).
    pub fn metadata_url(&self) -> &str {
        &self.inner.metadata_url
    }

    /// The authorization servers, as configured.
    pub fn authorization_servers(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.inner.authorization_servers.iter().map(String::as_str)
    }

    /// The scopes it publishes as `scopes_supported`.
    pub fn scopes_supported(&self) -> impl Iterator<Item = &str> + '_ {
        self.inner.scopes_supported.iter()
    }

    /// The metadata document (JSON), rendered when the resource was built.
    pub fn metadata_document(&self) -> &[u8] {
        &self.inner.document
    }

    /// The `WWW-Authenticate` value of a 401: the metadata pointer and the scopes a client
    /// should ask for (`scopes_supported`, when any), with `error="invalid_token"` when a token
    /// was presented and refused. It never carries anything of the request.
    pub fn unauthorized_challenge(&self, invalid_token: bool) -> String {
        self.unauthorized_challenge_with(invalid_token, self.inner.scopes_supported.iter())
    }

    /// [`unauthorized_challenge`](Self::unauthorized_challenge) naming `scopes` instead of
    /// `scopes_supported`: what a client should ask for first (for example the scopes every
    /// request needs, so a token starts with the least it can do and steps up on a 403).
    pub(crate) fn unauthorized_challenge_with<'a>(
        &self,
        invalid_token: bool,
        scopes: impl Iterator<Item = &'a str>,
    ) -> String {
        let mut out = String::from("Bearer ");
        if invalid_token {
            out.push_str("error=\"invalid_token\", ");
        }
        self.push_pointer_and_scopes(&mut out, scopes);
        out
    }

    /// The `WWW-Authenticate` value of a 400 for a malformed `Authorization` (RFC 6750's
    /// `invalid_request`).
    pub fn invalid_request_challenge(&self) -> String {
        format!(
            "Bearer error=\"invalid_request\", resource_metadata=\"{}\"",
            self.inner.metadata_url
        )
    }

    /// The `WWW-Authenticate` value of a 403 for a token lacking scopes: `insufficient_scope`,
    /// the metadata pointer, and `scopes` (what the client should ask for, in one challenge).
    pub fn insufficient_scope_challenge<'a>(
        &self,
        scopes: impl IntoIterator<Item = &'a str>,
    ) -> String {
        let mut out = String::from("Bearer error=\"insufficient_scope\", ");
        self.push_pointer_and_scopes(&mut out, scopes.into_iter());
        out
    }

    fn push_pointer_and_scopes<'a>(&self, out: &mut String, scopes: impl Iterator<Item = &'a str>) {
        out.push_str("resource_metadata=\"");
        out.push_str(&self.inner.metadata_url);
        out.push('"');
        let mut first = true;
        for scope in scopes.filter(|s| is_scope_token(s)) {
            out.push_str(if first { ", scope=\"" } else { " " });
            out.push_str(scope);
            first = false;
        }
        if !first {
            out.push('"');
        }
    }

    /// Whether `granted` satisfies `required`: it was granted, or a granted scope implies it.
    fn satisfies(&self, identity: &AdmissionIdentity, required: &str) -> bool {
        identity.scopes().any(|granted| {
            granted == required
                || self
                    .inner
                    .implied
                    .iter()
                    .any(|(broad, narrower)| &**broad == granted && narrower.contains(required))
        })
    }

    /// The 403 challenge for an identity missing some of `required`, or `None` when it holds
    /// them all. The challenge asks for the required scopes with those already granted that
    /// this resource publishes, so a client that replaces its scopes (rather than adding to
    /// them) keeps what it had.
    pub(crate) fn missing(
        &self,
        identity: &AdmissionIdentity,
        required: &Scopes,
    ) -> Option<HeaderValue> {
        if required.iter().all(|s| self.satisfies(identity, s)) {
            return None;
        }
        let mut ask: Vec<&str> = identity
            .scopes()
            .filter(|g| self.inner.scopes_supported.iter().any(|s| s == *g))
            .collect();
        for scope in required.iter() {
            if !ask.contains(&scope) {
                ask.push(scope);
            }
        }
        Some(challenge_value(&self.insufficient_scope_challenge(ask)))
    }

    /// The path of the resource identifier (`""` or starting with `/`): the metadata URL of
    /// every challenge is the well-known prefix followed by it, so an endpoint serving the
    /// document must be at this path.
    pub(crate) fn path(&self) -> &str {
        &self.inner.path
    }

    /// Whether `other` is the same protected resource: the same identifier, authorization
    /// servers, scopes, implications and document.
    #[cfg(any(feature = "oauth", test))]
    pub(crate) fn same_as(&self, other: &Self) -> bool {
        let (a, b) = (&*self.inner, &*other.inner);
        Arc::ptr_eq(&self.inner, &other.inner)
            || (a.resource == b.resource
                && a.authorization_servers == b.authorization_servers
                && a.scopes_supported == b.scopes_supported
                && a.implied == b.implied
                && a.document == b.document)
    }
}

/// `challenge` as a header value, or the fixed `insufficient_scope` challenge when it cannot be
/// one: a missing scope is never taken for a held one.
fn challenge_value(challenge: &str) -> HeaderValue {
    HeaderValue::from_str(challenge)
        .unwrap_or_else(|_| HeaderValue::from_static(INSUFFICIENT_SCOPE_FIXED))
}

impl ProtectedResourceBuilder {
    /// Adds an authorization server (its issuer identifier: `https`, or `http` on a loopback
    /// host; at least one, at most 16).
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// The scopes published as `scopes_supported` and asked for in 401 challenges: the minimal
    /// set for basic use. `offline_access` is refused (MCP: a refresh token is not a resource
    /// requirement).
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Declares that a token granted `broader` holds each of `narrower` too (MCP 2026-07-28:
    /// a server accounts for scope hierarchies); implications compose.
    pub fn scope_implies<S: Into<String>>(
        mut self,
        broader: impl Into<String>,
        narrower: impl IntoIterator<Item = S>,
    ) -> Self {
        self.implications.push((
            broader.into(),
            narrower.into_iter().map(Into::into).collect(),
        ));
        self
    }

    /// A human-readable name published as `resource_name` (1 to 256 bytes, no control
    /// characters).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// Finishes the protected resource and renders its metadata document.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidAuthorization`] (with [`BuildError::detail`]) for a resource or
    /// issuer that is not an `https` URL (or `http` on loopback) without query or fragment, no
    /// authorization server or more than 16, a scope that is not a scope token, more than 64
    /// scopes or implications, `offline_access` among the scopes, or a bad resource name.
    pub fn build(self) -> Result<ProtectedResource, BuildError> {
        let fail =
            |detail| Err(BuildError::new(BuildErrorKind::InvalidAuthorization).with_detail(detail));
        let Some(url) = Url::parse(&self.resource).filter(secure) else {
            return fail(
                "the resource must be an https URL (http on loopback) without query or fragment",
            );
        };
        if self.authorization_servers.is_empty()
            || self.authorization_servers.len() > MAX_AUTHORIZATION_SERVERS
        {
            return fail("a protected resource lists 1 to 16 authorization servers");
        }
        if !self
            .authorization_servers
            .iter()
            .all(|s| Url::parse(s).is_some_and(|u| secure(&u)))
        {
            return fail(
                "an authorization server must be an https URL (http on loopback) without query or fragment",
            );
        }
        let Some(scopes_supported) = Scopes::parse(&self.scopes_supported) else {
            return fail("scopes are 1 to 64 scope tokens of at most 128 bytes");
        };
        if scopes_supported.iter().any(|s| s == "offline_access") {
            return fail("offline_access is not a resource scope");
        }
        if self.implications.len() > MAX_SCOPE_IMPLICATIONS {
            return fail("at most 64 scope implications");
        }
        let mut direct: Vec<(Arc<str>, Scopes)> = Vec::new();
        for (broad, narrower) in &self.implications {
            let (Some(broad), Some(narrower)) = (Scopes::parse([broad]), Scopes::parse(narrower))
            else {
                return fail("scopes are 1 to 64 scope tokens of at most 128 bytes");
            };
            let Some(broad) = broad.0.first().cloned() else {
                return fail("scopes are 1 to 64 scope tokens of at most 128 bytes");
            };
            direct.push((broad, narrower));
        }
        let implied = closure(&direct);
        let name_ok = self
            .resource_name
            .as_deref()
            .is_none_or(|n| (1..=256).contains(&n.len()) && !n.chars().any(char::is_control));
        if !name_ok {
            return fail("a resource name is 1 to 256 bytes without control characters");
        }
        let metadata_url = format!(
            "{}{METADATA_PREFIX}{}",
            url.origin(),
            if url.path == "/" { "" } else { &url.path }
        );
        let document = render_document(&self, &scopes_supported)?;
        Ok(ProtectedResource {
            inner: Arc::new(ResourceInner {
                canonical: url.canonical(),
                path: url.path,
                resource: self.resource,
                metadata_url,
                authorization_servers: self.authorization_servers,
                scopes_supported,
                implied,
                document,
            }),
        })
    }
}

/// `https`, or `http` on a loopback host (OAuth 2.1 requires TLS off the machine).
fn secure(url: &Url) -> bool {
    url.scheme == "https" || url.is_loopback()
}

/// Every scope an implication names, with all it implies, transitively (at most 64 rounds of
/// 64 implications: the closure is reached in fewer).
fn closure(direct: &[(Arc<str>, Scopes)]) -> Vec<(Arc<str>, BTreeSet<Arc<str>>)> {
    let mut out: Vec<(Arc<str>, BTreeSet<Arc<str>>)> = direct
        .iter()
        .map(|(broad, narrower)| {
            let mut set: BTreeSet<Arc<str>> = narrower.0.iter().cloned().collect();
            set.insert(broad.clone());
            (broad.clone(), set)
        })
        .collect();
    for _ in 0..=MAX_SCOPE_IMPLICATIONS {
        let mut changed = false;
        for i in 0..out.len() {
            let mut add = Vec::new();
            for scope in &out[i].1 {
                for (broad, set) in &out {
                    if broad == scope {
                        add.extend(set.iter().filter(|s| !out[i].1.contains(*s)).cloned());
                    }
                }
            }
            if !add.is_empty() {
                changed = true;
                out[i].1.extend(add);
            }
        }
        if !changed {
            break;
        }
    }
    out
}

fn render_document(
    builder: &ProtectedResourceBuilder,
    scopes: &Scopes,
) -> Result<Arc<[u8]>, BuildError> {
    let strings = |items: &mut dyn Iterator<Item = &str>| {
        JsonValue::from(items.map(JsonValue::from).collect::<Vec<_>>())
    };
    let mut doc = JsonObject::builder()
        .insert("resource", builder.resource.as_str())
        .insert(
            "authorization_servers",
            strings(&mut builder.authorization_servers.iter().map(String::as_str)),
        );
    if !scopes.is_empty() {
        doc = doc.insert("scopes_supported", strings(&mut scopes.iter()));
    }
    doc = doc.insert(
        "bearer_methods_supported",
        strings(&mut ["header"].into_iter()),
    );
    if let Some(name) = &builder.resource_name {
        doc = doc.insert("resource_name", name.as_str());
    }
    tollgate_json::to_vec(&JsonValue::Object(doc.build()), &OutputLimits::new())
        .map(Arc::from)
        .map_err(|_| BuildError::new(BuildErrorKind::InvalidAuthorization))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_compared_canonically() {
        for bad in [
            "ftp://x/y",
            "https://",
            "https://a@b/",
            "https://h/p?q",
            "https://h/p#f",
            "https://h:0/",
            "https://h:65536/",
            "https://h/a b",
            "https://h//x",
            "https://[::1/x",
            "https://h:/x",
        ] {
            assert!(Url::parse(bad).is_none(), "{bad}");
        }
        let a = Url::parse("HTTPS://MCP.Example.com:443/mcp/").unwrap();
        assert_eq!(a.canonical(), "https://mcp.example.com/mcp");
        let b = Url::parse("http://127.0.0.1:8080/mcp").unwrap();
        assert!(b.is_loopback());
        assert_eq!(b.canonical(), "http://127.0.0.1:8080/mcp");
        assert!(Url::parse("http://[::1]:9/").unwrap().is_loopback());
        let long = format!("https://h/{}", "a".repeat(MAX_AUTHORIZATION_URL_BYTES - 10));
        assert_eq!(long.len(), MAX_AUTHORIZATION_URL_BYTES);
        assert!(Url::parse(&long).is_some());
        assert!(Url::parse(&format!("{long}a")).is_none());
    }

    #[test]
    fn scope_tokens_and_their_bounds() {
        assert!(is_scope_token("a:b/c!"));
        assert!(!is_scope_token("a b"));
        assert!(!is_scope_token("a\"b"));
        assert!(!is_scope_token("a\\b"));
        assert!(!is_scope_token(""));
        assert!(is_scope_token(&"s".repeat(MAX_SCOPE_BYTES)));
        assert!(!is_scope_token(&"s".repeat(MAX_SCOPE_BYTES + 1)));
        let many: Vec<String> = (0..MAX_SCOPES).map(|i| format!("s{i}")).collect();
        assert!(Scopes::parse(&many).is_some());
        let too_many: Vec<String> = (0..=MAX_SCOPES).map(|i| format!("s{i}")).collect();
        assert!(Scopes::parse(&too_many).is_none());
    }

    fn resource() -> ProtectedResource {
        ProtectedResource::builder("http://127.0.0.1:8080/mcp")
            .authorization_server("http://127.0.0.1:9000")
            .scopes_supported(["read", "write"])
            .scope_implies("admin", ["write"])
            .scope_implies("write", ["read"])
            .build()
            .unwrap()
    }

    #[test]
    fn metadata_and_challenges() {
        let r = resource();
        assert_eq!(
            r.metadata_url(),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
        );
        let doc = std::str::from_utf8(r.metadata_document()).unwrap();
        assert_eq!(
            doc,
            r#"{"resource":"http://127.0.0.1:8080/mcp","authorization_servers":["http://127.0.0.1:9000"],"scopes_supported":["read","write"],"bearer_methods_supported":["header"]}"#
        );
        assert!(
            r.unauthorized_challenge(true)
                .starts_with("Bearer error=\"invalid_token\", resource_metadata=")
        );
        assert!(r.is_audience("HTTP://127.0.0.1:8080/mcp/"));
        assert!(!r.is_audience("http://127.0.0.1:8081/mcp"));
    }

    #[test]
    fn hierarchies_are_honoured_and_challenges_keep_granted_scopes() {
        let r = resource();
        let need = |s: &[&str]| Scopes::parse(s).unwrap();
        let admin = AdmissionIdentity::principal("a").with_scopes(["admin"]);
        assert!(r.missing(&admin, &need(&["read", "write"])).is_none());
        let reader = AdmissionIdentity::principal("r").with_scopes(["read", "openid"]);
        assert!(r.missing(&reader, &need(&["read"])).is_none());
        let challenge = r.missing(&reader, &need(&["write"])).unwrap();
        assert_eq!(
            challenge.to_str().unwrap(),
            "Bearer error=\"insufficient_scope\", resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp\", scope=\"read write\""
        );
        let nobody = AdmissionIdentity::anonymous();
        assert!(r.missing(&nobody, &need(&["read"])).is_some());
        assert!(r.missing(&nobody, &need(&[])).is_none());
    }

    #[test]
    fn a_challenge_that_cannot_be_a_header_value_still_refuses() {
        let fine = "Bearer error=\"insufficient_scope\", scope=\"read\"";
        assert_eq!(challenge_value(fine), fine);
        assert_eq!(
            challenge_value("Bearer error=\"insufficient_scope\"\r\nX-Injected: 1"),
            INSUFFICIENT_SCOPE_FIXED
        );
    }

    #[test]
    fn resources_compare_by_what_they_publish_and_imply() {
        let base =
            || ProtectedResource::builder("https://h/mcp").authorization_server("https://as");
        let a = base().build().unwrap();
        assert!(a.same_as(&a.clone()));
        assert!(a.same_as(&base().build().unwrap()));
        assert_eq!(a.path(), "/mcp");
        let other = ProtectedResource::builder("https://h/other")
            .authorization_server("https://as")
            .build()
            .unwrap();
        assert!(!a.same_as(&other));
        assert!(!a.same_as(&base().scopes_supported(["read"]).build().unwrap()));
        assert!(!a.same_as(&base().scope_implies("a", ["b"]).build().unwrap()));
    }

    #[test]
    fn refused_configurations() {
        let base =
            || ProtectedResource::builder("https://h/mcp").authorization_server("https://as");
        assert!(base().build().is_ok());
        assert!(
            ProtectedResource::builder("http://example.com/mcp")
                .authorization_server("https://as")
                .build()
                .is_err()
        );
        assert!(ProtectedResource::builder("https://h/mcp").build().is_err());
        assert!(
            base()
                .authorization_server("http://as.example")
                .build()
                .is_err()
        );
        assert!(base().scopes_supported(["offline_access"]).build().is_err());
        assert!(base().scopes_supported(["a b"]).build().is_err());
        assert!(base().resource_name("").build().is_err());
        let mut b = base();
        for i in 0..=MAX_SCOPE_IMPLICATIONS {
            b = b.scope_implies(format!("s{i}"), ["x"]);
        }
        assert!(b.build().is_err());
        let mut b = base();
        for i in 0..MAX_AUTHORIZATION_SERVERS - 1 {
            b = b.authorization_server(format!("https://as{i}"));
        }
        assert!(b.build().is_ok());
    }
}
