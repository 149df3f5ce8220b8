//! The HTTP face of a set of endpoints, as a tower `Service`: routing, Host and Origin checks,
//! method and media-type negotiation, and the bounded body read.
//!
//! Owns every check that happens before JSON is parsed, and the response headers. Mounts in any
//! tower-compatible server (the built-in one, or an axum router via `route_service`). Knows
//! nothing of JSON-RPC beyond handing the body to the protocol module.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{ACCEPT, ALLOW, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};

use crate::endpoint::Endpoint;
use crate::error::{BuildError, BuildErrorKind};
use crate::fault::Fault;
use crate::protocol::{self, Reply};
use crate::tool::BoxFuture;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The tower service serving one or more [`Endpoint`]s.
///
/// # Examples
///
/// ```
/// use tollgate::{Endpoint, Implementation, McpService, ProtocolVersion};
///
/// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
///     Implementation::new("demo", "1.0.0")).build()?;
/// let service = McpService::builder()
///     .endpoint(endpoint)
///     .allowed_host("mcp.example.com")
///     .build()?;
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct McpService {
    inner: Arc<ServiceInner>,
}

struct ServiceInner {
    endpoints: HashMap<Arc<str>, Endpoint>,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    max_header_bytes: usize,
}

/// The default aggregate request-header ceiling: 64 KiB.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 64 * 1024;

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("endpoints", &self.inner.endpoints.len())
            .finish_non_exhaustive()
    }
}

/// Builds an [`McpService`].
#[must_use = "call build() to finish the service"]
pub struct McpServiceBuilder {
    endpoints: Vec<Endpoint>,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    max_header_bytes: usize,
}

impl Default for McpServiceBuilder {
    fn default() -> Self {
        Self {
            endpoints: Vec::new(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
        }
    }
}

impl McpServiceBuilder {
    /// Adds an endpoint.
    pub fn endpoint(mut self, endpoint: Endpoint) -> Self {
        self.endpoints.push(endpoint);
        self
    }

    /// Accepts requests whose `Host` names `host` (any port). `localhost`, `127.0.0.1` and
    /// `[::1]` are always accepted; add the names a deployment is reached by. Any other Host is
    /// refused with 403, which stops DNS-rebinding attacks on a local server.
    pub fn allowed_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into().to_ascii_lowercase());
        self
    }

    /// Accepts requests carrying this exact `Origin` (e.g. `https://app.example.com`). A request
    /// without `Origin`, or whose Origin is a loopback page (`http(s)://localhost`, `127.0.0.1`
    /// or `[::1]`, any port), is accepted; any other Origin is refused with 403.
    pub fn allowed_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins
            .push(origin.into().to_ascii_lowercase());
        self
    }

    /// The aggregate request-header ceiling: the bytes of every header name and value, plus
    /// four per field for its `: ` and line end (default 64 KiB, at least 8 KiB). A request
    /// over it is refused with 431 before anything else is read.
    pub fn max_header_bytes(mut self, bytes: usize) -> Self {
        self.max_header_bytes = bytes.max(8 * 1024);
        self
    }

    /// Finishes the service.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::DuplicateEndpointPath`] when two endpoints share a path.
    pub fn build(self) -> Result<McpService, BuildError> {
        let mut endpoints = HashMap::with_capacity(self.endpoints.len());
        for endpoint in self.endpoints {
            let path = endpoint.inner.path.clone();
            if endpoints.insert(path.clone(), endpoint).is_some() {
                return Err(BuildError::new(BuildErrorKind::DuplicateEndpointPath).at_path(&path));
            }
        }
        Ok(McpService {
            inner: Arc::new(ServiceInner {
                endpoints,
                allowed_hosts: self.allowed_hosts,
                allowed_origins: self.allowed_origins,
                max_header_bytes: self.max_header_bytes,
            }),
        })
    }
}

impl McpService {
    /// A builder with no endpoints.
    pub fn builder() -> McpServiceBuilder {
        McpServiceBuilder::default()
    }

    /// A service for one endpoint with the default Host and Origin policy.
    pub fn new(endpoint: Endpoint) -> Self {
        let mut endpoints = HashMap::with_capacity(1);
        endpoints.insert(endpoint.inner.path.clone(), endpoint);
        Self {
            inner: Arc::new(ServiceInner {
                endpoints,
                allowed_hosts: Vec::new(),
                allowed_origins: Vec::new(),
                max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            }),
        }
    }

    /// Serves one request.
    pub async fn serve<B>(&self, request: Request<B>) -> Response<McpBody>
    where
        B: Body,
        B::Error: Into<BoxError>,
    {
        match self.reply(request).await {
            Outcome::Reply(reply) => respond(reply),
            Outcome::Stream(body) => {
                let mut response = Response::new(body);
                let headers = response.headers_mut();
                headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
                headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
                headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
                response
            }
        }
    }

    async fn reply<B>(&self, request: Request<B>) -> Outcome
    where
        B: Body,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = request.into_parts();
        let Some(endpoint) = self.inner.endpoints.get(parts.uri.path()) else {
            return Outcome::Reply(Reply::empty(StatusCode::NOT_FOUND));
        };
        let header_bytes = parts.headers.iter().fold(0usize, |sum, (name, value)| {
            sum.saturating_add(name.as_str().len() + value.len() + 4)
        });
        if header_bytes > self.inner.max_header_bytes {
            return Outcome::Reply(Reply::empty(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE));
        }
        if !self.host_allowed(&parts) {
            return Outcome::Reply(Reply::empty(StatusCode::FORBIDDEN));
        }
        if let Some(origin) = parts.headers.get(ORIGIN) {
            let allowed = origin.to_str().is_ok_and(|o| {
                is_loopback_origin(o)
                    || self
                        .inner
                        .allowed_origins
                        .iter()
                        .any(|a| a.eq_ignore_ascii_case(o))
            });
            if !allowed {
                return Outcome::Reply(Reply::empty(StatusCode::FORBIDDEN));
            }
        }
        if parts.method == Method::DELETE {
            return Outcome::Reply(crate::legacy::end_session(endpoint, &parts.headers));
        }
        if parts.method != Method::POST {
            return Outcome::Reply(Reply::empty(StatusCode::METHOD_NOT_ALLOWED));
        }
        if !is_json(parts.headers.get(CONTENT_TYPE)) {
            return Outcome::Reply(Reply::empty(StatusCode::UNSUPPORTED_MEDIA_TYPE));
        }
        if !accepts_json_and_sse(&parts.headers) {
            return Outcome::Reply(Reply::empty(StatusCode::NOT_ACCEPTABLE));
        }
        let max = endpoint.inner.limits.max_body_bytes();
        let declared = parts
            .headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > max as u64) {
            return Outcome::Reply(protocol::fault_reply(None, Fault::Parse, None));
        }
        let bytes = match Limited::new(body, max).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return Outcome::Reply(protocol::fault_reply(None, Fault::Parse, None));
            }
            Err(_) => return Outcome::Reply(Reply::empty(StatusCode::BAD_REQUEST)),
        };
        let value = match protocol::parse(endpoint, &bytes) {
            Ok(value) => value,
            Err(reply) => return Outcome::Reply(reply),
        };
        // A request that asks for progress (or may log) runs in its own task so its
        // notifications can stream while it works; every other request is answered in place.
        if !endpoint.inner.logging && !protocol::asks_for_progress(&value) {
            return Outcome::Reply(
                protocol::handle_value(endpoint, &parts.headers, &value, None).await,
            );
        }
        stream_if_notified(endpoint.clone(), parts.headers, value).await
    }

    fn host_allowed(&self, parts: &http::request::Parts) -> bool {
        let authority = match parts.headers.get(HOST) {
            Some(h) => match h.to_str() {
                Ok(h) => h,
                Err(_) => return false,
            },
            None => match parts.uri.authority() {
                Some(a) => a.as_str(),
                None => return false,
            },
        };
        let host = host_of(authority).to_ascii_lowercase();
        is_loopback_host(&host) || self.inner.allowed_hosts.contains(&host)
    }
}

fn is_loopback_host(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// `http://` or `https://` followed by a loopback host and an optional port, nothing else: a page
/// served from this machine. A rebinding page's Origin names the attacker's host instead.
fn is_loopback_origin(origin: &str) -> bool {
    let Some(authority) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = host_of(authority);
    let port_ok = authority[host.len()..]
        .strip_prefix(':')
        .is_none_or(|port| {
            !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit())
        });
    (authority.len() == host.len() || port_ok) && is_loopback_host(&host.to_ascii_lowercase())
}

/// The host part of `host[:port]`, keeping IPv6 brackets.
fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority.find(']').map_or(authority, |i| &authority[..=i]);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

/// What the service answers with: one reply, or a stream of notifications then the reply.
enum Outcome {
    Reply(Reply),
    Stream(McpBody),
}

/// Runs the request in its own task. If it finishes before notifying, the answer is the usual
/// JSON reply; once it sends a notification, the answer becomes an SSE stream carrying the
/// notifications and then the final response. Dropping the response (a client that goes away)
/// aborts the task, which cancels the invocation.
async fn stream_if_notified(
    endpoint: Endpoint,
    headers: http::HeaderMap,
    value: tollgate_json::JsonValue,
) -> Outcome {
    let (note_tx, mut notes) = tokio::sync::mpsc::channel::<Vec<u8>>(64);
    let (done_tx, mut done) = tokio::sync::oneshot::channel::<Reply>();
    let task = tokio::spawn(async move {
        let sink = crate::features::NotificationSink(note_tx);
        let reply = protocol::handle_value(&endpoint, &headers, &value, Some(&sink)).await;
        // Close the notification queue before the reply, so the stream ends in order.
        drop(sink);
        let _ = done_tx.send(reply);
    });
    let guard = AbortOnDrop(task.abort_handle());
    tokio::select! {
        biased;
        Some(first) = notes.recv() => Outcome::Stream(McpBody::stream(first, notes, done, guard)),
        reply = &mut done => Outcome::Reply(reply.unwrap_or_else(|_| protocol::fault_reply(None, Fault::Internal, None))),
    }
}

/// Aborts the request's task when the response is dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The body of every response the service writes: one JSON document, or an SSE stream of
/// notifications ended by the response (`event: message` frames).
pub struct McpBody {
    inner: BodyInner,
}

enum BodyInner {
    Full(Option<Bytes>),
    Stream {
        pending: Option<Bytes>,
        notes: tokio::sync::mpsc::Receiver<Vec<u8>>,
        done: tokio::sync::oneshot::Receiver<Reply>,
        finished: bool,
        _guard: AbortOnDrop,
    },
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.inner {
            BodyInner::Full(_) => "McpBody::Full",
            BodyInner::Stream { .. } => "McpBody::Stream",
        })
    }
}

fn sse_event(json: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(json.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(json);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

impl McpBody {
    fn empty() -> Self {
        Self {
            inner: BodyInner::Full(None),
        }
    }

    fn full(bytes: Bytes) -> Self {
        Self {
            inner: BodyInner::Full(Some(bytes)),
        }
    }

    fn stream(
        first: Vec<u8>,
        notes: tokio::sync::mpsc::Receiver<Vec<u8>>,
        done: tokio::sync::oneshot::Receiver<Reply>,
        guard: AbortOnDrop,
    ) -> Self {
        Self {
            inner: BodyInner::Stream {
                pending: Some(sse_event(&first)),
                notes,
                done,
                finished: false,
                _guard: guard,
            },
        }
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        match &mut self.inner {
            BodyInner::Full(bytes) => Poll::Ready(
                bytes
                    .take()
                    .filter(|b| !b.is_empty())
                    .map(|b| Ok(http_body::Frame::data(b))),
            ),
            BodyInner::Stream {
                pending,
                notes,
                done,
                finished,
                ..
            } => {
                if let Some(event) = pending.take() {
                    return Poll::Ready(Some(Ok(http_body::Frame::data(event))));
                }
                if *finished {
                    return Poll::Ready(None);
                }
                match notes.poll_recv(cx) {
                    Poll::Ready(Some(note)) => {
                        return Poll::Ready(Some(Ok(http_body::Frame::data(sse_event(&note)))));
                    }
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(None) => {}
                }
                match std::pin::Pin::new(done).poll(cx) {
                    Poll::Pending => Poll::Pending,
                    Poll::Ready(reply) => {
                        *finished = true;
                        let body = reply.ok().and_then(|r| r.body);
                        Poll::Ready(body.map(|b| Ok(http_body::Frame::data(sse_event(&b)))))
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.inner {
            BodyInner::Full(bytes) => bytes.as_ref().is_none_or(Bytes::is_empty),
            BodyInner::Stream {
                finished, pending, ..
            } => *finished && pending.is_none(),
        }
    }

    fn size_hint(&self) -> http_body::SizeHint {
        match &self.inner {
            BodyInner::Full(bytes) => {
                http_body::SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            BodyInner::Stream { .. } => http_body::SizeHint::default(),
        }
    }
}

fn is_json(value: Option<&HeaderValue>) -> bool {
    value.and_then(|v| v.to_str().ok()).is_some_and(|v| {
        let essence = v.split(';').next().unwrap_or_default().trim();
        essence.eq_ignore_ascii_case("application/json")
    })
}

/// Whether `Accept` permits both `application/json` and `text/event-stream`. An absent header
/// permits everything (RFC 9110); a range with `q=0` permits nothing.
fn accepts_json_and_sse(headers: &http::HeaderMap) -> bool {
    let mut values = headers.get_all(ACCEPT).iter().peekable();
    if values.peek().is_none() {
        return true;
    }
    let (mut json, mut sse) = (false, false);
    for value in values {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for range in value.split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                let p = p.trim();
                p.eq_ignore_ascii_case("q=0")
                    || p.eq_ignore_ascii_case("q=0.0")
                    || p.eq_ignore_ascii_case("q=0.00")
                    || p.eq_ignore_ascii_case("q=0.000")
            });
            if media.is_empty() || refused {
                continue;
            }
            let (ty, sub) = media.split_once('/').unwrap_or((media, ""));
            let any = sub == "*";
            if ty == "*" && any {
                return true;
            }
            json |=
                ty.eq_ignore_ascii_case("application") && (any || sub.eq_ignore_ascii_case("json"));
            sse |= ty.eq_ignore_ascii_case("text")
                && (any || sub.eq_ignore_ascii_case("event-stream"));
        }
    }
    json && sse
}

fn respond(reply: Reply) -> Response<McpBody> {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = reply.status;
    let headers = response.headers_mut();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if reply.status == StatusCode::METHOD_NOT_ALLOWED {
        headers.insert(ALLOW, HeaderValue::from_static("POST"));
    }
    if let Some(session) = reply
        .session
        .as_deref()
        .and_then(|s| HeaderValue::from_str(s).ok())
    {
        headers.insert(crate::legacy::SESSION_ID, session);
    }
    if let Some(body) = reply.body {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        *response.body_mut() = McpBody::full(Bytes::from(body));
    }
    response
}

impl<B> tower::Service<Request<B>> for McpService
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let service = self.clone();
        Box::pin(async move { Ok(service.serve(request).await) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_negotiation() {
        let with = |v: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(
                ACCEPT,
                HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("")),
            );
            accepts_json_and_sse(&h)
        };
        assert!(accepts_json_and_sse(&http::HeaderMap::new()));
        assert!(with("application/json, text/event-stream"));
        assert!(with("*/*"));
        assert!(with("application/*;q=0.5, text/*"));
        assert!(!with("application/json"));
        assert!(!with("text/event-stream"));
        assert!(!with("application/json, text/event-stream;q=0"));
    }

    #[test]
    fn loopback_origins() {
        for ok in [
            "http://localhost",
            "http://127.0.0.1:6274",
            "https://[::1]:8443",
            "http://LOCALHOST:1",
        ] {
            assert!(is_loopback_origin(ok), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil",
            "null",
            "file://localhost",
            "http://localhost:",
            "http://localhost/x",
            "http://localhost:80x",
        ] {
            assert!(!is_loopback_origin(bad), "{bad}");
        }
    }

    #[test]
    fn hosts() {
        assert_eq!(host_of("localhost:8080"), "localhost");
        assert_eq!(host_of("[::1]:8080"), "[::1]");
        assert_eq!(host_of("example.com"), "example.com");
    }
}
