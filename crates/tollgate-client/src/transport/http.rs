//! Streamable HTTP: one POST per message, answered with JSON or an event stream; 2026-07-28's
//! standard headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`); a 2025
//! session's `Mcp-Session-Id`, its resumption by `GET` with `Last-Event-ID` after the server's
//! `retry`, and its `DELETE` on close; credentials from an [`Authorizer`] with a bounded retry
//! after a challenge. It owns the HTTP exchange; it must not know methods beyond the headers
//! that mirror them, nor how credentials are obtained.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use tokio::sync::oneshot;
use tollgate_json::{JsonObject, JsonValue};

use super::{BoxFuture, Outgoing, Transport, answer, for_call};
use crate::auth::{Authorizer, Retry};
use crate::error::{Error, ErrorKind};
use crate::handler::Handler;
use crate::limits::ClientLimits;
use crate::message::{self, Incoming};
use crate::revision::Revision;
use crate::sse::SseParser;

/// Challenges answered per request before giving up.
const MAX_CHALLENGES: u32 = 3;
const SESSION: &str = "mcp-session-id";
const VERSION: &str = "mcp-protocol-version";

#[derive(Debug, Default)]
struct State {
    revision: Option<Revision>,
    session: Option<HeaderValue>,
}

pub(crate) struct Http {
    client: reqwest::Client,
    url: String,
    /// `url` parsed once (reqwest would parse the string again for every request); `None` when
    /// it does not parse, so reqwest reports that as it always has.
    target: Option<reqwest::Url>,
    headers: HeaderMap,
    authorizer: Option<Arc<dyn Authorizer>>,
    limits: ClientLimits,
    handler: Arc<dyn Handler>,
    state: Mutex<State>,
    next_id: AtomicU64,
    /// The 2025 session's `GET` stream, ended on close and on drop.
    listener: Mutex<Option<tokio::task::AbortHandle>>,
    /// Requests awaiting an answer that may arrive on another stream (the `GET` stream, a
    /// resumed one), by id.
    waiting: Mutex<HashMap<u64, oneshot::Sender<Result<JsonValue, Error>>>>,
}

impl Drop for Http {
    fn drop(&mut self) {
        if let Some(task) = self.listener.lock().ok().and_then(|mut l| l.take()) {
            task.abort();
        }
    }
}

/// The TLS configuration every client of this crate uses: rustls with the ring provider and the
/// platform's certificate roots (`None` when the platform's verifier cannot be set up).
pub(crate) fn tls_config() -> Option<rustls::ClientConfig> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_platform_verifier()
        .ok()?
        .with_no_client_auth();
    Some(tls)
}

/// A reqwest client on rustls with the ring provider and the platform's certificate roots.
pub(crate) fn reqwest_client() -> Result<reqwest::Client, Error> {
    let tls_error = || Error::new(ErrorKind::Connect, "TLS could not be set up");
    let tls = tls_config().ok_or_else(tls_error)?;
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|_| tls_error())
}

impl Http {
    pub(crate) fn new(
        client: reqwest::Client,
        url: String,
        headers: HeaderMap,
        authorizer: Option<Arc<dyn Authorizer>>,
        limits: ClientLimits,
        handler: Arc<dyn Handler>,
    ) -> Self {
        Self {
            client,
            target: reqwest::Url::parse(&url).ok(),
            url,
            headers,
            authorizer,
            limits,
            handler,
            state: Mutex::default(),
            next_id: AtomicU64::new(1),
            listener: Mutex::default(),
            waiting: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The headers every message of the current revision carries.
    fn base_headers(&self, method: &Method) -> HeaderMap {
        let mut headers = self.headers.clone();
        let state = self.state();
        // 2025-03-26 defines no revision header: the server knows the session's.
        if let Some(revision) = state.revision.filter(|r| r.has_version_header()) {
            headers.insert(VERSION, HeaderValue::from_static(revision.as_str()));
        }
        if let Some(session) = &state.session {
            headers.insert(SESSION, session.clone());
        }
        if method == Method::POST {
            headers.insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            headers.insert(
                http::header::ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            );
        } else if method == Method::GET {
            headers.insert(
                http::header::ACCEPT,
                HeaderValue::from_static("text/event-stream"),
            );
        }
        headers
    }

    /// A request to the server's URL.
    fn request(&self, method: Method) -> reqwest::RequestBuilder {
        match &self.target {
            Some(target) => self.client.request(method, target.clone()),
            None => self.client.request(method, &self.url),
        }
    }

    /// Sends with credentials, answering up to [`MAX_CHALLENGES`] challenges.
    async fn send(
        &self,
        method: Method,
        mut headers: HeaderMap,
        body: Option<Vec<u8>>,
    ) -> Result<reqwest::Response, Error> {
        for _ in 0..=MAX_CHALLENGES {
            let mut request = self.request(method.clone()).headers(headers.clone());
            if let Some(authorizer) = &self.authorizer {
                for (name, value) in authorizer.headers(&method, &self.url).await? {
                    request = request.header(name, value);
                }
            }
            if let Some(body) = &body {
                request = request.body(body.clone());
            }
            let response = request
                .send()
                .await
                .map_err(|_| Error::new(ErrorKind::Connect, "the request could not be sent"))?;
            let status = response.status();
            let challenged = status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN;
            let Some(authorizer) = self.authorizer.as_ref().filter(|_| challenged) else {
                return Ok(response);
            };
            match authorizer
                .challenged(&self.url, status.as_u16(), response.headers())
                .await?
            {
                Retry::Again => {}
                Retry::GiveUp => return Ok(response),
            }
            // The headers of this message stay; fresh credentials come from the authorizer.
            headers.remove(http::header::AUTHORIZATION);
        }
        Err(Error::new(ErrorKind::Auth, "too many challenges"))
    }

    async fn post_message(
        &self,
        bytes: Vec<u8>,
        mcp_method: Option<&str>,
        out: &Outgoing,
    ) -> Result<reqwest::Response, Error> {
        let mut headers = self.base_headers(&Method::POST);
        let stateless = self.state().revision.is_some_and(Revision::is_stateless);
        if stateless {
            let mut add = |name: &str, value: &str| -> Result<(), Error> {
                let name = HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| Error::new(ErrorKind::Argument, "header name"))?;
                let value = HeaderValue::from_str(value)
                    .map_err(|_| Error::new(ErrorKind::Argument, "header value"))?;
                headers.append(name, value);
                Ok(())
            };
            if let Some(method) = mcp_method {
                add("mcp-method", method)?;
            }
            if let Some(name) = &out.name {
                add("mcp-name", name)?;
            }
            for (name, value) in &out.headers {
                add(name, value)?;
            }
        }
        self.send(Method::POST, headers, Some(bytes)).await
    }

    async fn exchange(&self, out: Outgoing) -> Result<JsonValue, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let bytes = message::request(id, &out.method, out.params.clone())?;
        let (tx, rx) = oneshot::channel();
        self.waiting().insert(id, tx);
        let mut guard = CancelOnDrop {
            http: self,
            id,
            armed: !self.state().revision.is_some_and(Revision::is_stateless)
                && out.method != "initialize",
        };
        let response = self.post_message(bytes, Some(&out.method), &out).await?;
        if let Some(session) = response
            .headers()
            .get(SESSION)
            .filter(|_| out.method == "initialize")
        {
            self.state().session = Some(session.clone());
        }
        // The answer comes on this response, or (2025) on another stream of the session.
        let call = out.handler.as_ref();
        let outcome = tokio::select! {
            outcome = self.read_answer(response, id, call) => outcome,
            Ok(outcome) = rx => outcome,
        };
        guard.armed = false;
        outcome
    }

    fn waiting(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<u64, oneshot::Sender<Result<JsonValue, Error>>>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn listening(&self) -> bool {
        self.listener
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some()
    }

    /// The answer to request `id` from a POST's response: JSON, or an event stream (resumed
    /// with `GET` and `Last-Event-ID` when it ends early).
    async fn read_answer(
        &self,
        response: reqwest::Response,
        id: u64,
        call: Option<&Arc<dyn Handler>>,
    ) -> Result<JsonValue, Error> {
        let status = response.status();
        if status == StatusCode::NOT_FOUND && self.state().session.is_some() {
            return Err(Error::new(ErrorKind::SessionExpired, "").with_status(404));
        }
        if is_event_stream(response.headers()) && status.is_success() {
            return self.read_stream(response, id, call).await;
        }
        let json = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if !json {
            return Err(Error::status(status.as_u16()));
        }
        let body = read_body(response, self.limits.max_message_bytes()).await?;
        let batches = self.state().revision.is_some_and(Revision::takes_batches);
        match message::read_all(&body, &self.limits, batches) {
            // One message: the answer, whatever its id (an error may carry none).
            Ok(mut one) if one.len() == 1 => match one.pop() {
                Some(Incoming::Response { outcome, .. }) => {
                    outcome.map_err(|e| e.with_status(status.as_u16()))
                }
                _ => Err(Error::new(
                    ErrorKind::Protocol,
                    "a request answered by a request",
                )),
            },
            // A 2025-03-26 batch: ours among the others, which are served as on a stream.
            Ok(batch) => {
                let mut answer = None;
                for incoming in batch {
                    if let Some(outcome) = self.on_incoming(incoming, id, call).await? {
                        answer = Some(outcome);
                    }
                }
                answer.unwrap_or(Err(Error::new(
                    ErrorKind::Protocol,
                    "a batch without the answer",
                )))
            }
            Err(_) if !status.is_success() => Err(Error::status(status.as_u16())),
            Err(e) => Err(e),
        }
    }

    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        id: u64,
        call: Option<&Arc<dyn Handler>>,
    ) -> Result<JsonValue, Error> {
        let mut parser = SseParser::new(self.limits.max_message_bytes());
        let mut reconnects = 0;
        loop {
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|_| Error::new(ErrorKind::Connect, "the event stream broke"))?
            {
                for event in parser.feed(&chunk)? {
                    if let Some(result) = self.on_message(&event.data, id, call).await? {
                        return result;
                    }
                }
            }
            // The stream ended before the answer: resume it when the server numbered it; else
            // the answer can still come on the session's GET stream, when one is open.
            let Some(last) = parser.last_event_id().map(str::to_owned) else {
                if self.listening() {
                    return std::future::pending().await;
                }
                return Err(Error::new(
                    ErrorKind::Protocol,
                    "the stream ended unanswered",
                ));
            };
            if reconnects >= self.limits.max_reconnects() {
                return Err(Error::new(ErrorKind::Limit, "too many stream resumptions"));
            }
            reconnects += 1;
            let delay = parser
                .retry_ms()
                .map_or(Duration::ZERO, Duration::from_millis)
                .min(self.limits.max_retry_delay());
            tokio::time::sleep(delay).await;
            parser.end_of_stream();
            let mut headers = self.base_headers(&Method::GET);
            let last = HeaderValue::from_str(&last)
                .map_err(|_| Error::new(ErrorKind::Protocol, "event id is not a header value"))?;
            headers.insert("last-event-id", last);
            response = self.send(Method::GET, headers, None).await?;
            if !response.status().is_success() || !is_event_stream(response.headers()) {
                return Err(Error::status(response.status().as_u16()));
            }
        }
    }

    /// One message on a stream: our answer ends the read; a request is answered by POST; a
    /// notification goes to the handler (the call's own, `call`, where [`for_call`] says).
    async fn on_message(
        &self,
        data: &[u8],
        id: u64,
        call: Option<&Arc<dyn Handler>>,
    ) -> Result<Option<Result<JsonValue, Error>>, Error> {
        let batches = self.state().revision.is_some_and(Revision::takes_batches);
        let mut answer = None;
        for incoming in message::read_all(data, &self.limits, batches)? {
            if let Some(outcome) = self.on_incoming(incoming, id, call).await? {
                answer = Some(outcome);
            }
        }
        Ok(answer)
    }

    /// One message from the server: the answer to `id` is returned, the rest served.
    async fn on_incoming(
        &self,
        incoming: Incoming,
        id: u64,
        call: Option<&Arc<dyn Handler>>,
    ) -> Result<Option<Result<JsonValue, Error>>, Error> {
        match incoming {
            Incoming::Response { id: got, outcome } => {
                let got = message::numeric_id(&got);
                if got == Some(id) {
                    return Ok(Some(outcome));
                }
                // Another request's answer, on this stream: hand it over.
                if let Some(waiting) = got.and_then(|got| self.waiting().remove(&got)) {
                    let _ = waiting.send(outcome);
                }
            }
            Incoming::Notification { method, params } => {
                for_call(&self.handler, call, &method, false)
                    .notification(&method, params.as_ref());
            }
            Incoming::Request { id, method, params } => {
                let revision = self.state().revision;
                let handler = for_call(&self.handler, call, &method, true);
                let reply = answer(handler, revision, &id, &method, params.as_ref()).await?;
                let response = self
                    .send(Method::POST, self.base_headers(&Method::POST), Some(reply))
                    .await?;
                if !response.status().is_success() {
                    return Err(Error::status(response.status().as_u16()));
                }
            }
        }
        Ok(None)
    }

    async fn notification(&self, method: &str, params: Option<JsonObject>) -> Result<(), Error> {
        let bytes = message::notification(method, params)?;
        let out = Outgoing::default();
        let response = self.post_message(bytes, Some(method), &out).await?;
        if response.status().is_success() {
            Ok(())
        } else {
            Err(Error::status(response.status().as_u16()))
        }
    }
}

/// A `GET` stream of the session, resuming after `last` when given; `None` when the server
/// offers none.
async fn open_stream(http: &Http, last: Option<&str>) -> Option<reqwest::Response> {
    let mut headers = http.base_headers(&Method::GET);
    if let Some(value) = last.and_then(|l| HeaderValue::from_str(l).ok()) {
        headers.insert("last-event-id", value);
    }
    let response = http.send(Method::GET, headers, None).await.ok()?;
    (response.status().is_success() && is_event_stream(response.headers())).then_some(response)
}

/// The 2025 session's `GET` stream: what the server sends outside any call (requests such as
/// `elicitation/create` and `roots/list`, notifications) goes to the handler. Resumed with
/// `Last-Event-ID` after the server's `retry` when it ends; given up after
/// [`ClientLimits::max_reconnects`] attempts in a row that bring nothing, or when the server
/// offers no stream (405). Holds the transport weakly, so dropping the client ends it.
async fn listen(http: std::sync::Weak<Http>, first: reqwest::Response) {
    let mut last: Option<String> = None;
    let mut retry = Duration::ZERO;
    let mut idle = 0;
    let mut first = Some(first);
    loop {
        let Some(strong) = http.upgrade() else { return };
        let mut response = match first.take() {
            Some(response) => response,
            None => match open_stream(&strong, last.as_deref()).await {
                Some(response) => response,
                None => return,
            },
        };
        let mut parser = SseParser::new(strong.limits.max_message_bytes());
        let max_reconnects = strong.limits.max_reconnects();
        let max_retry = strong.limits.max_retry_delay();
        drop(strong);
        let mut brought = false;
        while let Ok(Some(chunk)) = response.chunk().await {
            let Ok(events) = parser.feed(&chunk) else {
                return;
            };
            for event in events {
                let Some(strong) = http.upgrade() else { return };
                brought = true;
                // Id 0 is never one of ours: every response here is unexpected and ignored.
                if strong.on_message(&event.data, 0, None).await.is_err() {
                    return;
                }
            }
        }
        idle = if brought { 0 } else { idle + 1 };
        if idle > max_reconnects {
            return;
        }
        last = parser.last_event_id().map(str::to_owned).or(last);
        retry = parser
            .retry_ms()
            .map_or(retry, Duration::from_millis)
            .min(max_retry);
        tokio::time::sleep(retry).await;
    }
}

fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// The body, refused past `max` bytes before more is read.
async fn read_body(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, Error> {
    let too_large = || Error::new(ErrorKind::Limit, "response body too large");
    if response.content_length().is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|_| Error::new(ErrorKind::Connect, "the response broke"))?
    {
        if body.len() + chunk.len() > max {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A 2025 request dropped before its answer: tell the server (`notifications/cancelled`).
struct CancelOnDrop<'a> {
    http: &'a Http,
    id: u64,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        self.http.waiting().remove(&self.id);
        if !self.armed {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let params = JsonObject::builder()
            .insert("requestId", tollgate_json::JsonNumber::from(self.id))
            .insert("reason", "the client dropped the request")
            .build();
        let Ok(bytes) = message::notification("notifications/cancelled", Some(params)) else {
            return;
        };
        let request = self
            .http
            .request(Method::POST)
            .headers(self.http.base_headers(&Method::POST))
            .body(bytes);
        runtime.spawn(async move {
            let _ = request.send().await;
        });
    }
}

impl Transport for Http {
    fn request(&self, out: Outgoing) -> BoxFuture<'_, Result<JsonValue, Error>> {
        Box::pin(self.exchange(out))
    }

    fn notify(&self, method: &str, params: Option<JsonObject>) -> BoxFuture<'_, Result<(), Error>> {
        let method = method.to_owned();
        Box::pin(async move { self.notification(&method, params).await })
    }

    fn set_revision(&self, revision: Option<Revision>) {
        self.state().revision = revision;
    }

    fn speaks(&self, revision: Revision) -> bool {
        revision.on_streamable_http()
    }

    fn session_started(self: Arc<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            if self.state().session.is_none() {
                return;
            }
            // Open before the first request, so nothing the server sends there is missed.
            let Some(first) = open_stream(&self, None).await else {
                return;
            };
            let task = tokio::spawn(listen(Arc::downgrade(&self), first));
            let mut listener = self
                .listener
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(old) = listener.replace(task.abort_handle()) {
                old.abort();
            }
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
            if let Some(task) = self
                .listener
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take()
            {
                task.abort();
            }
            if self.state().session.is_none() {
                return Ok(());
            }
            let headers = self.base_headers(&Method::DELETE);
            let response = self.send(Method::DELETE, headers, None).await?;
            self.state().session = None;
            // 405: the server does not let clients end sessions; the session simply lapses.
            match response.status() {
                s if s.is_success() || s == StatusCode::METHOD_NOT_ALLOWED => Ok(()),
                s => Err(Error::status(s.as_u16())),
            }
        })
    }
}
