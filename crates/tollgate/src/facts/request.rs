//! The originating request: the HTTP request (method, target, version, headers, extensions)
//! and peer a JSON-RPC message arrived in, kept immutable and shared with its handler, so a
//! handler can read a header, the peer's address, or a value a tower or axum layer put in the
//! request's extensions (an authenticated user, a tenant). A stdio message has an empty view.
//! Credential header values are marked sensitive, so its `Debug` output never shows them.
//!
//! Knows nothing of JSON-RPC: the transports build it, the request context carries it.

use std::net::SocketAddr;
use std::sync::{Arc, LazyLock};

use http::header::{AUTHORIZATION, COOKIE, HeaderName, HeaderValue, PROXY_AUTHORIZATION};
use http::{Extensions, HeaderMap, Method, Uri, Version};

/// The request a message arrived in, as the transport received it (the body aside, which
/// Tollgate reads and validates itself). Immutable; every handler of the request shares it.
///
/// Over stdio there is no HTTP request: [`is_http`](Self::is_http) is false, the method, target
/// and version are `None`, and the headers and extensions are empty.
///
/// # Examples
///
/// A tower or axum layer puts a value in the request's extensions; the handler reads it back
/// through its [`RequestContext`](crate::RequestContext):
///
/// ```
/// use tollgate::context::OriginatingRequest;
///
/// #[derive(Clone)]
/// struct Tenant(&'static str);
///
/// let mut request = http::Request::post("/mcp").header("x-team", "blue").body(()).unwrap();
/// request.extensions_mut().insert(Tenant("acme"));
/// let (parts, ()) = request.into_parts();
/// let origin = OriginatingRequest::from_parts(parts, None);
/// assert_eq!(origin.header("x-team"), Some("blue"));
/// assert_eq!(origin.extensions().get::<Tenant>().map(|t| t.0), Some("acme"));
/// assert!(origin.is_http());
/// ```
#[derive(Debug)]
pub struct OriginatingRequest {
    http: Option<(Method, Uri, Version)>,
    headers: HeaderMap,
    extensions: Extensions,
    peer: Option<SocketAddr>,
}

/// Header fields carrying credentials: never printed by `Debug`.
const CREDENTIAL_HEADERS: [HeaderName; 3] = [AUTHORIZATION, PROXY_AUTHORIZATION, COOKIE];

static STDIO: LazyLock<Arc<OriginatingRequest>> = LazyLock::new(|| {
    Arc::new(OriginatingRequest {
        http: None,
        headers: HeaderMap::new(),
        extensions: Extensions::new(),
        peer: None,
    })
});

impl OriginatingRequest {
    /// The view of an HTTP request's head, and the peer it came from when the server knows it
    /// (to build a context for tests, or when serving through a custom transport).
    ///
    /// Credential fields (`Authorization`, `Proxy-Authorization`, `Cookie`) are marked
    /// sensitive, so `{:?}` of the request, or of a context holding it, prints `Sensitive`
    /// instead of their values; [`header`](Self::header) and [`headers`](Self::headers) still
    /// read them.
    pub fn from_parts(parts: http::request::Parts, peer: Option<SocketAddr>) -> Self {
        let mut headers = parts.headers;
        for (name, value) in headers.iter_mut() {
            if CREDENTIAL_HEADERS.contains(name) {
                value.set_sensitive(true);
            }
        }
        Self {
            http: Some((parts.method, parts.uri, parts.version)),
            headers,
            extensions: parts.extensions,
            peer,
        }
    }

    /// The same request with its head copied out of the buffers it was parsed from. hyper's
    /// header values and target share the connection's read buffer, so a request kept for as
    /// long as a stream lasts would hold that whole buffer (8 KiB or more) for the stream's life.
    /// A value that cannot be copied (none can: each was valid when received) is kept shared,
    /// and so is a request another holder shares.
    pub(crate) fn detached(self: Arc<Self>) -> Arc<Self> {
        let this = match Arc::try_unwrap(self) {
            Ok(this) => this,
            Err(shared) => return shared,
        };
        let http = this.http.map(|(method, uri, version)| {
            let copied = Uri::try_from(uri.to_string()).unwrap_or(uri);
            (method, copied, version)
        });
        let mut headers = HeaderMap::with_capacity(this.headers.len());
        for (name, value) in &this.headers {
            let name = HeaderName::from_bytes(name.as_str().as_bytes()).unwrap_or(name.clone());
            let mut copy = HeaderValue::from_bytes(value.as_bytes()).unwrap_or(value.clone());
            copy.set_sensitive(value.is_sensitive());
            headers.append(name, copy);
        }
        Arc::new(Self {
            http,
            headers,
            extensions: this.extensions,
            peer: this.peer,
        })
    }

    /// The shared empty view of a message with no HTTP request (stdio).
    pub(crate) fn stdio() -> &'static Arc<Self> {
        &STDIO
    }

    /// Whether the message arrived in an HTTP request.
    pub fn is_http(&self) -> bool {
        self.http.is_some()
    }

    /// The HTTP method (`None` over stdio).
    pub fn method(&self) -> Option<&Method> {
        self.http.as_ref().map(|(m, _, _)| m)
    }

    /// The request target (`None` over stdio).
    pub fn uri(&self) -> Option<&Uri> {
        self.http.as_ref().map(|(_, u, _)| u)
    }

    /// The HTTP version (`None` over stdio).
    pub fn version(&self) -> Option<Version> {
        self.http.as_ref().map(|(_, _, v)| *v)
    }

    /// Every header field as received (empty over stdio). Values are the client's: validate
    /// before trusting one.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The value of the header `name` when it is present exactly once and visible ASCII;
    /// `None` otherwise (absent, repeated, or not text).
    pub fn header(&self, name: &str) -> Option<&str> {
        crate::wire::headers::single(&self.headers, name)
            .ok()
            .flatten()
    }

    /// The request's extensions: values the server or a tower/axum layer attached (empty over
    /// stdio).
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The peer's address, when the server knows it (the built-in server always does; a
    /// service mounted elsewhere does when a [`PeerAddr`](crate::transport::PeerAddr) extension
    /// carries it).
    pub fn peer_addr(&self) -> Option<SocketAddr> {
        self.peer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_not_in_debug_output() {
        let request = http::Request::post("/mcp")
            .header("authorization", "Bearer SECRETMARK-a")
            .header("Proxy-Authorization", "Basic SECRETMARK-b")
            .header("cookie", "sid=SECRETMARK-c")
            .header("cookie", "more=SECRETMARK-d")
            .header("x-team", "blue")
            .body(())
            .unwrap();
        let (parts, ()) = request.into_parts();
        let origin = OriginatingRequest::from_parts(parts, None);
        let printed = format!("{origin:?}");
        assert!(!printed.contains("SECRETMARK"), "{printed}");
        assert!(
            printed.contains("Sensitive") && printed.contains("blue"),
            "{printed}"
        );
        // Still readable by the application.
        assert_eq!(origin.header("authorization"), Some("Bearer SECRETMARK-a"));
        assert_eq!(origin.headers().get_all("cookie").iter().count(), 2);
        // The handler's context prints it the same way.
        let ctx = crate::facts::context::RequestContext::for_test(
            "tools/call",
            crate::version::ProtocolVersion::V2026_07_28,
        )
        .with_origin(Arc::new(origin));
        let printed = format!("{ctx:?}");
        assert!(!printed.contains("SECRETMARK"), "{printed}");
        assert!(printed.contains("Sensitive"), "{printed}");
    }

    /// A detached request reads as the original did (target, repeated fields in order, the
    /// credential marking, peer, extensions), and none of its values points into the buffer
    /// the original's were parsed from.
    #[test]
    fn a_detached_request_reads_the_same_and_shares_no_buffer() {
        let buffer = bytes::Bytes::from_static(b"Bearer SECRETMARK-1 x-one x-two /mcp?x=1");
        let value = |from: usize, to: usize| {
            http::HeaderValue::from_maybe_shared(buffer.slice(from..to))
                .unwrap_or_else(|_| unreachable!("a valid value"))
        };
        let mut request = http::Request::post("/mcp?x=1").body(()).unwrap_or_default();
        request.headers_mut().insert(AUTHORIZATION, value(0, 19));
        request.headers_mut().append("x-many", value(20, 25));
        request.headers_mut().append("x-many", value(26, 31));
        request.extensions_mut().insert(7_u8);
        let (parts, ()) = request.into_parts();
        let peer = Some(SocketAddr::from(([127, 0, 0, 1], 9)));
        let detached = Arc::new(OriginatingRequest::from_parts(parts, peer)).detached();
        assert_eq!(
            detached.uri().map(ToString::to_string).as_deref(),
            Some("/mcp?x=1")
        );
        assert_eq!(detached.method(), Some(&Method::POST));
        assert_eq!(
            detached.header("authorization"),
            Some("Bearer SECRETMARK-1")
        );
        assert!(
            detached
                .headers()
                .get(AUTHORIZATION)
                .is_some_and(|v| v.is_sensitive())
        );
        let many: Vec<_> = detached.headers().get_all("x-many").iter().collect();
        assert_eq!(many, ["x-one", "x-two"]);
        assert_eq!(detached.peer_addr(), peer);
        assert_eq!(detached.extensions().get::<u8>(), Some(&7));
        let range = buffer.as_ptr_range();
        for value in detached.headers().values() {
            assert!(!range.contains(&value.as_bytes().as_ptr()), "copied out");
        }
    }

    /// A request another holder shares is kept as it is (it cannot be taken apart).
    #[test]
    fn a_shared_request_is_kept() {
        let (parts, ()) = http::Request::get("/mcp")
            .body(())
            .unwrap_or_default()
            .into_parts();
        let origin = Arc::new(OriginatingRequest::from_parts(parts, None));
        let other = Arc::clone(&origin);
        assert!(Arc::ptr_eq(&origin.detached(), &other));
    }
}
