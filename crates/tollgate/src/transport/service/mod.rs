//! The HTTP face of a set of endpoints, as a tower `Service`: routing, Host and Origin checks,
//! method and media-type negotiation, and the bounded body read.
//!
//! Owns every check that happens before JSON is parsed, and the response headers. Mounts in any
//! tower-compatible server (the built-in one, or an axum router via `route_service`). Knows
//! nothing of JSON-RPC beyond handing the body to `pipeline::receive`.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{ACCESS_CONTROL_REQUEST_METHOD, ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use http::uri::{Authority, Uri};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;

use crate::facts::request::OriginatingRequest;
use crate::model::guard::BoxFuture;
use crate::pipeline::envelope::{parse, unreadable};
use crate::pipeline::receive;
use crate::policy::rules::Caller;
use crate::registry::{Endpoint, NameMap};
use crate::stream::event::Connection;
use crate::transport::body::{BodyBudget, BodyError, linger, read_body};
use crate::transport::cors::CorsPolicy;
use crate::transport::forwarded::TrustedProxies;
use crate::transport::negotiate::{Wanted, accepts, is_json};
use crate::transport::rebinding::{host_of, is_authority, is_loopback_host, is_loopback_origin};
use crate::wire::head::Head;
use crate::wire::reply::Reply;
use crate::wire::stage::stage;

mod answer;
mod builder;

use answer::{AbortOnDrop, Answering, Work, answer_in_task, answering};

pub use builder::McpServiceBuilder;

pub(crate) use crate::transport::body::BoxError;

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
    endpoints: NameMap<Endpoint>,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    max_header_bytes: usize,
    /// The reverse proxies whose forwarding headers name the client.
    trusted_proxies: TrustedProxies,
    /// Each peer's budget of body bytes in requests not yet answered.
    body_budget: BodyBudget,
    /// The CORS policy, with each endpoint's `mcp-param-*` header names (for preflights).
    cors: Option<(CorsPolicy, MirroredNames)>,
    /// Protected-resource metadata, by well-known path.
    metadata: crate::transport::metadata::Routes,
}

/// Each endpoint's `mcp-param-*` header names, by path.
type MirroredNames = NameMap<Vec<String>>;

/// The default aggregate request-header ceiling: 64 KiB.
pub const DEFAULT_MAX_HEADER_BYTES: usize = 64 * 1024;

/// The default budget of request-body bytes one peer may have in requests not yet answered
/// (bodies of 64 KiB or less not counted): 64 MiB.
pub const DEFAULT_MAX_BODY_BYTES_PER_PEER: usize = 64 * 1024 * 1024;

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("endpoints", &self.inner.endpoints.len())
            .finish_non_exhaustive()
    }
}

impl McpService {
    /// A builder with no endpoints.
    pub fn builder() -> McpServiceBuilder {
        McpServiceBuilder::default()
    }

    /// A service for one endpoint with the default Host and Origin policy.
    pub fn new(endpoint: Endpoint) -> Self {
        let metadata = crate::transport::metadata::routes(std::iter::once(&endpoint));
        let mut endpoints = NameMap::with_capacity_and_hasher(1, Default::default());
        endpoints.insert(endpoint.inner.path.clone(), endpoint);
        Self {
            inner: Arc::new(ServiceInner {
                metadata,
                endpoints,
                allowed_hosts: Vec::new(),
                allowed_origins: Vec::new(),
                max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
                trusted_proxies: TrustedProxies::default(),
                body_budget: BodyBudget::new(DEFAULT_MAX_BODY_BYTES_PER_PEER),
                cors: None,
            }),
        }
    }

    /// The endpoints served (for the built-in server's readiness probe).
    pub(crate) fn endpoints(&self) -> impl Iterator<Item = &Endpoint> {
        self.inner.endpoints.values()
    }

    /// Whether `ip` is one of the service's trusted proxies.
    pub(crate) fn trusts_proxy(&self, ip: std::net::IpAddr) -> bool {
        self.inner.trusted_proxies.trusts(ip)
    }

    /// Ends every open event-stream connection, for a graceful shutdown: a long-lived `GET`
    /// stream would otherwise hold its connection open until the shutdown timeout. The streams
    /// stay resumable. The built-in [`Server`](crate::Server) calls it when it stops; call it
    /// from the shutdown hook of any other server this service is mounted in.
    pub fn end_streams(&self) {
        for endpoint in self.inner.endpoints.values() {
            endpoint.inner.listeners.close_all();
            if let Some(store) = &endpoint.inner.sessions {
                store.detach_all();
            }
        }
    }

    /// Serves one request. Its peer, for policy, is the request's [`PeerAddr`] extension when
    /// it has one. The future owns what it needs (it does not borrow the service).
    ///
    /// [`PeerAddr`]: crate::transport::PeerAddr
    pub fn serve<B>(&self, request: Request<B>) -> impl Future<Output = Response<McpBody>> + use<B>
    where
        B: Body,
        B::Error: Into<BoxError>,
    {
        let peer = request
            .extensions()
            .get::<crate::facts::context::PeerAddr>()
            .map(|p| p.0);
        Answered {
            inner: self.serve_from(request, peer),
        }
    }

    /// Serves one request from a peer the server knows (the built-in server passes its
    /// connection's, with no request extension to allocate), as the `Result` a hyper or tower
    /// service answers with.
    ///
    /// The request's future is the one `async` block of [`Self::respond_to`]: the request is
    /// split before it, and no layer awaits another's future, so the head and body are held
    /// once (an `async fn` per layer, or a block awaiting a future it captured, would hold each
    /// a second time).
    pub(crate) fn serve_from<B>(
        &self,
        request: Request<B>,
        peer: Option<std::net::SocketAddr>,
    ) -> impl Future<Output = Result<Response<McpBody>, Infallible>> + use<B>
    where
        B: Body,
        B::Error: Into<BoxError>,
    {
        // With a CORS policy, an actual request from an allowed origin gets the grant on whatever
        // its answer is (a preflight carries its own, or none when refused), and every answer
        // varies by `Origin`.
        let cors = self.inner.cors.as_ref().map(|(policy, _)| {
            let preflight = request.method() == Method::OPTIONS
                && request
                    .headers()
                    .contains_key(ACCESS_CONTROL_REQUEST_METHOD);
            let grant = (!preflight)
                .then(|| policy.grant_for(request.headers()))
                .flatten();
            (preflight, grant)
        });
        let (parts, body) = request.into_parts();
        // Behind a trusted proxy, the client it forwarded for.
        let peer = peer.map(|p| self.inner.trusted_proxies.client(p, &parts.headers));
        // The request's head, kept for its handlers (moved, not copied), made before the
        // request's future so that the future holds a pointer to it, not the head itself.
        let origin = Arc::new(OriginatingRequest::from_parts(parts, peer));
        self.clone().respond_to(origin, body, peer, cors)
    }

    /// The response to a request, from its head and body, with the CORS grant `cors` (whether
    /// it is a preflight, and the grant) when the service has a policy. One `async` block over
    /// its arguments: an `async fn` would also keep a copy of each argument in the future.
    #[allow(
        clippy::manual_async_fn,
        reason = "an async fn would hold its arguments twice in the request's future"
    )]
    fn respond_to<B>(
        self,
        origin: Arc<OriginatingRequest>,
        body: B,
        peer: Option<std::net::SocketAddr>,
        cors: Option<(bool, Option<http::HeaderMap>)>,
    ) -> impl Future<Output = Result<Response<McpBody>, Infallible>> + use<B>
    where
        B: Body,
        B::Error: Into<BoxError>,
    {
        // A CORS preflight (`OPTIONS` with `Access-Control-Request-Method`), as `serve_from`
        // found it when the service has a policy.
        let preflight = matches!(cors, Some((true, _)));
        stage!(Transport);
        async move {
            let outcome = 'outcome: {
                let path = origin.uri().map_or("", Uri::path);
                let endpoint = self.inner.endpoints.get(path);
                let metadata = match endpoint {
                    Some(_) => None,
                    None => match self.inner.metadata.get(path) {
                        Some(resource) => Some(resource),
                        None => break 'outcome Outcome::Reply(Reply::empty(StatusCode::NOT_FOUND)),
                    },
                };
                // (A head made from a request always has its method.)
                let Some(method) = origin.method() else {
                    break 'outcome Outcome::Reply(Reply::empty(StatusCode::BAD_REQUEST));
                };
                // The head's fields, read once for every check and gate below.
                let head = Head::read(origin.headers());
                let target = origin.uri();
                if let Err(refused) = self.check_head(target.and_then(Uri::authority), &head) {
                    break 'outcome Outcome::Reply(Reply::empty(refused));
                }
                let Some(endpoint) = endpoint else {
                    break 'outcome self.metadata(method, origin.headers(), metadata, preflight);
                };
                let caller = Caller {
                    headers: Some(origin.headers()),
                    peer: peer.map(|p| p.ip()),
                };
                // Only an endpoint keeping 2025 sessions has streams to open and sessions to end.
                let allow = if endpoint.inner.sessions.is_some() {
                    "GET, POST, DELETE"
                } else {
                    "POST"
                };
                // A CORS preflight: answered here, before admission, parsing or any handler.
                if preflight && let Some((policy, params)) = &self.inner.cors {
                    let names = params.get(target.map_or("", Uri::path));
                    let names = names.map_or(&[][..], Vec::as_slice);
                    break 'outcome policy.preflight(origin.headers(), allow, names).map_or(
                        Outcome::Reply(Reply::empty(StatusCode::FORBIDDEN)),
                        Outcome::Preflight,
                    );
                }
                if method == Method::GET && endpoint.inner.sessions.is_some() {
                    if !accepts(origin.headers(), head.accept, Wanted::Sse) {
                        break 'outcome Outcome::Reply(Reply::empty(StatusCode::NOT_ACCEPTABLE));
                    }
                    break 'outcome match crate::pipeline::bare::open_stream(endpoint, caller).await
                    {
                        Ok(connection) => {
                            Outcome::Stream(McpBody::events(connection, AbortOnDrop(None)))
                        }
                        Err(reply) if reply.status == StatusCode::METHOD_NOT_ALLOWED => {
                            Outcome::MethodNotAllowed(allow)
                        }
                        Err(reply) => Outcome::Reply(reply),
                    };
                }
                if method == Method::DELETE && endpoint.inner.sessions.is_some() {
                    break 'outcome Outcome::Reply(
                        crate::pipeline::bare::end_session(endpoint, caller).await,
                    );
                }
                if method != Method::POST {
                    break 'outcome Outcome::MethodNotAllowed(allow);
                }
                if let Err(refused) = check_media(origin.headers(), &head) {
                    break 'outcome Outcome::Reply(Reply::empty(refused));
                }
                let max = endpoint.inner.limits.max_body_bytes();
                let body = std::pin::pin!(body);
                if declared_length(&head).is_some_and(|n| n > max as u64) {
                    linger(body).await;
                    break 'outcome Outcome::Reply(unreadable());
                }
                let budget = peer.map(|p| (&self.inner.body_budget, p.ip()));
                // What the body holds of its peer's budget, given back once answered.
                let (bytes, _held) = match read_body(body, max, budget).await {
                    Ok(read) => read,
                    Err(error) => break 'outcome Outcome::Reply(body_refusal(error)),
                };
                let value = match parse(endpoint, &bytes) {
                    Ok(value) => value,
                    Err(reply) => break 'outcome Outcome::Reply(reply),
                };
                let (origin, in_body) =
                    match answering(endpoint, head.session_id.is_present(), &value) {
                        Answering::Inline => {
                            break 'outcome Outcome::Reply(
                                receive(endpoint, &origin, &head, &value, None).await,
                            );
                        }
                        Answering::InTask => (origin, false),
                        // A listen's loop goes on in its response body (`answer.rs`).
                        Answering::Listen => (listen_head(endpoint, origin), true),
                    };
                answer_in_task(endpoint.clone(), origin, value, in_body).await
            };
            Ok(finish(outcome, cors))
        }
    }

    /// The head's checks that need no endpoint: its size, one `Host` that is a well-formed
    /// authority this service allows, and at most one `Origin`, allowed. The status refusing it.
    fn check_head(&self, target: Option<&Authority>, head: &Head<'_>) -> Result<(), StatusCode> {
        if head.bytes > self.inner.max_header_bytes {
            return Err(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
        }
        // One Host and at most one Origin: a repeated field could make two checks see two
        // different values (RFC 9112 §3.2 answers a repeated Host with 400).
        if head.host.is_repeated() {
            return Err(StatusCode::BAD_REQUEST);
        }
        if head.origin.is_repeated() {
            return Err(StatusCode::FORBIDDEN);
        }
        let (host, origin) = (head.host.first(), head.origin.first());
        // RFC 9112 §3.2: no Host (nor an absolute target's authority), or one that is not a
        // host and an optional port, is 400; a well-formed host that is not allowed is 403.
        let authority = match host {
            Some(h) => h.to_str().ok(),
            None => target.map(Authority::as_str),
        };
        let Some(authority) = authority.filter(|a| is_authority(a)) else {
            return Err(StatusCode::BAD_REQUEST);
        };
        if !self.host_allowed(authority) {
            return Err(StatusCode::FORBIDDEN);
        }
        if let Some(origin) = origin {
            let allowed = origin.to_str().is_ok_and(|o| {
                is_loopback_origin(o)
                    || self
                        .inner
                        .allowed_origins
                        .iter()
                        .any(|a| a.eq_ignore_ascii_case(o))
                    || self
                        .inner
                        .cors
                        .as_ref()
                        .is_some_and(|(policy, _)| policy.allows_origin(o))
            });
            if !allowed {
                return Err(StatusCode::FORBIDDEN);
            }
        }
        Ok(())
    }

    /// A protected-resource metadata route, past the Host and Origin checks: a CORS preflight
    /// for `GET` (`preflight`: the request is one and the service has a policy), or the
    /// document.
    fn metadata(
        &self,
        method: &Method,
        headers: &http::HeaderMap,
        resource: Option<&crate::policy::authorization::ProtectedResource>,
        preflight: bool,
    ) -> Outcome {
        let Some(resource) = resource else {
            return Outcome::Reply(Reply::empty(StatusCode::NOT_FOUND));
        };
        if preflight && let Some((policy, _)) = &self.inner.cors {
            return match policy.preflight(headers, crate::transport::metadata::ALLOW, &[]) {
                Some(grant) => Outcome::Preflight(grant),
                None => Outcome::Reply(Reply::empty(StatusCode::FORBIDDEN)),
            };
        }
        match crate::transport::metadata::answer(method, resource) {
            Ok(reply) => Outcome::Reply(reply),
            Err(()) => Outcome::MethodNotAllowed(crate::transport::metadata::ALLOW),
        }
    }

    fn host_allowed(&self, authority: &str) -> bool {
        // Compared without case and without a lowered copy (allowed hosts are stored lowered).
        let host = host_of(authority);
        is_loopback_host(host)
            || self
                .inner
                .allowed_hosts
                .iter()
                .any(|allowed| allowed.eq_ignore_ascii_case(host))
    }
}

/// The head a listen's work holds. Its loop, handed over once acknowledged, keeps no head;
/// with a sanitizer (which may read it) the head is kept for as long as the stream lasts,
/// copied out of the connection's read buffer, which it would otherwise keep.
fn listen_head(endpoint: &Endpoint, origin: Arc<OriginatingRequest>) -> Arc<OriginatingRequest> {
    match endpoint.inner.sanitizer {
        Some(_) => origin.detached(),
        None => origin,
    }
}

/// What the service answers with: one reply, an event stream, or 405 with its `Allow`.
enum Outcome {
    Reply(Reply),
    /// A CORS preflight's grant.
    Preflight(http::HeaderMap),
    Stream(McpBody),
    MethodNotAllowed(&'static str),
}

/// A POST's media types: a JSON `Content-Type` (else 415), and an `Accept` permitting JSON and
/// an event stream (else 406).
fn check_media(headers: &http::HeaderMap, head: &Head<'_>) -> Result<(), StatusCode> {
    if !is_json(head.content_type.first()) {
        return Err(StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }
    if !accepts(headers, head.accept, Wanted::JsonAndSse) {
        return Err(StatusCode::NOT_ACCEPTABLE);
    }
    Ok(())
}

/// The answer to a body that could not be read: over the size bound (the unreadable-body
/// reply), over its peer's budget of body bytes (busy, retry after a second), past its pace (the
/// built-in server's timer: 408, and the connection closes), or broken (400).
fn body_refusal(error: BodyError) -> Reply {
    match error {
        BodyError::TooLarge => unreadable(),
        BodyError::OverBudget => {
            crate::wire::log::budget_reached(crate::wire::log::Budget::PeerBodyBytes);
            let mut reply =
                crate::wire::reply::fault_reply(None, crate::wire::fault::Fault::Busy, None);
            reply.extra = Some((http::header::RETRY_AFTER, HeaderValue::from_static("1")));
            reply
        }
        BodyError::TooSlow => {
            let mut reply = Reply::empty(StatusCode::REQUEST_TIMEOUT);
            reply.extra = Some((http::header::CONNECTION, HeaderValue::from_static("close")));
            reply
        }
        BodyError::Broken => Reply::empty(StatusCode::BAD_REQUEST),
    }
}

/// The body's length as `Content-Length` declares it, when it is a number.
fn declared_length(head: &Head<'_>) -> Option<u64> {
    head.content_length
        .first()
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

pin_project_lite::pin_project! {
    /// [`McpService::serve`]'s future: the service's own, without the `Result` a hyper or tower
    /// service answers with (a block awaiting it would hold the request's future twice).
    struct Answered<F> {
        #[pin]
        inner: F,
    }
}

impl<F> Future for Answered<F>
where
    F: Future<Output = Result<Response<McpBody>, Infallible>>,
{
    type Output = Response<McpBody>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().inner.poll(cx).map(|answer| match answer {
            Ok(response) => response,
            Err(never) => match never {},
        })
    }
}

/// The HTTP response for an outcome.
fn outcome_response(outcome: Outcome) -> Response<McpBody> {
    match outcome {
        Outcome::Reply(reply) => respond(reply),
        Outcome::Preflight(grant) => {
            let mut response = respond(Reply::empty(StatusCode::NO_CONTENT));
            response.headers_mut().extend(grant);
            response
        }
        Outcome::MethodNotAllowed(allow) => {
            let mut response = respond(Reply::empty(StatusCode::METHOD_NOT_ALLOWED));
            response
                .headers_mut()
                .insert(ALLOW, HeaderValue::from_static(allow));
            response
        }
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

/// The HTTP response for an outcome, with the CORS grant when the service has a policy: every
/// answer varies by `Origin`, and an allowed origin's actual request gets the grant.
fn finish(outcome: Outcome, cors: Option<(bool, Option<http::HeaderMap>)>) -> Response<McpBody> {
    let mut response = outcome_response(outcome);
    let Some((preflight, grant)) = cors else {
        return response;
    };
    let headers = response.headers_mut();
    if !preflight {
        headers.append(http::header::VARY, HeaderValue::from_static("Origin"));
    }
    if let Some(grant) = grant {
        for (name, value) in &grant {
            if name != http::header::VARY {
                headers.insert(name, value.clone());
            }
        }
    }
    response
}

/// The body of every response the service writes: one JSON document, or an event stream
/// (`event: message` frames, with ids inside 2025 sessions, and keep-alive comments).
pub struct McpBody {
    inner: BodyInner,
}

enum BodyInner {
    Full(Option<Bytes>),
    Events {
        connection: Connection,
        /// A listen's work, polled here before its frames are read (`answer::poll_work`).
        work: Option<answer::InBody>,
        _guard: AbortOnDrop,
    },
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.inner {
            BodyInner::Full(_) => "McpBody::Full",
            BodyInner::Events { .. } => "McpBody::Events",
        })
    }
}

impl McpBody {
    fn empty() -> Self {
        Self {
            inner: BodyInner::Full(None),
        }
    }

    pub(crate) fn full(bytes: Bytes) -> Self {
        Self {
            inner: BodyInner::Full(Some(bytes)),
        }
    }

    fn events(connection: Connection, guard: AbortOnDrop) -> Self {
        Self {
            inner: BodyInner::Events {
                connection,
                work: None,
                _guard: guard,
            },
        }
    }

    /// An event stream whose request's work (a listen's) goes on in the body: dropping the body
    /// drops the work.
    fn events_with_work(connection: Connection, work: Option<Work>) -> Self {
        Self {
            inner: BodyInner::Events {
                connection,
                work: work.map(answer::InBody::new),
                _guard: AbortOnDrop(None),
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
            BodyInner::Events {
                connection, work, ..
            } => {
                answer::poll_work(connection, work, cx);
                let polled = connection.poll_frame(cx);
                if polled.is_pending() {
                    answer::drop_if_cancelled(connection, work);
                }
                polled.map(|frame| frame.map(|f| Ok(http_body::Frame::data(f))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.inner {
            BodyInner::Full(bytes) => bytes.as_ref().is_none_or(Bytes::is_empty),
            BodyInner::Events { connection, .. } => connection.is_ended(),
        }
    }

    fn size_hint(&self) -> http_body::SizeHint {
        match &self.inner {
            BodyInner::Full(bytes) => {
                http_body::SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            BodyInner::Events { .. } => http_body::SizeHint::default(),
        }
    }
}

fn respond(reply: Reply) -> Response<McpBody> {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = reply.status;
    let headers = response.headers_mut();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(session) = reply
        .session
        .as_deref()
        .and_then(|s| HeaderValue::from_str(s).ok())
    {
        headers.insert(crate::wire::headers::SESSION_ID, session);
    }
    if let Some((name, value)) = reply.extra {
        headers.insert(name, value);
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
        let peer = request
            .extensions()
            .get::<crate::facts::context::PeerAddr>()
            .map(|p| p.0);
        Box::pin(self.serve_from(request, peer))
    }
}
