//! Streamable HTTP: one POST per message, answered with JSON or an event stream; 2026-07-28's
//! standard headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`); a 2025
//! session's `Mcp-Session-Id`, its resumption by `GET` with `Last-Event-ID` after the server's
//! `retry`, and its `DELETE` on close; credentials from an [`Authorizer`] with a bounded retry
//! after a challenge. It owns the HTTP exchange; it must not know methods beyond the headers
//! that mirror them, nor how credentials are obtained.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use tollgate_json::{JsonObject, JsonValue};

use super::{BoxFuture, Outgoing, Transport, answer};
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
    headers: HeaderMap,
    authorizer: Option<Arc<dyn Authorizer>>,
    limits: ClientLimits,
    handler: Arc<dyn Handler>,
    state: Mutex<State>,
    next_id: AtomicU64,
}

/// A reqwest client on rustls with the ring provider and the platform's certificate roots.
pub(crate) fn reqwest_client() -> Result<reqwest::Client, Error> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let tls_error = || Error::new(ErrorKind::Connect, "TLS could not be set up");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|_| tls_error())?
        .with_platform_verifier()
        .map_err(|_| tls_error())?
        .with_no_client_auth();
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
            url,
            headers,
            authorizer,
            limits,
            handler,
            state: Mutex::default(),
            next_id: AtomicU64::new(1),
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
        if let Some(revision) = state.revision {
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

    /// Sends with credentials, answering up to [`MAX_CHALLENGES`] challenges.
    async fn send(
        &self,
        method: Method,
        mut headers: HeaderMap,
        body: Option<Vec<u8>>,
    ) -> Result<reqwest::Response, Error> {
        for _ in 0..=MAX_CHALLENGES {
            let mut request = self
                .client
                .request(method.clone(), &self.url)
                .headers(headers.clone());
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
        let outcome = self.read_answer(response, id).await;
        guard.armed = false;
        outcome
    }

    /// The answer to request `id` from a POST's response: JSON, or an event stream (resumed
    /// with `GET` and `Last-Event-ID` when it ends early).
    async fn read_answer(&self, response: reqwest::Response, id: u64) -> Result<JsonValue, Error> {
        let status = response.status();
        if status == StatusCode::NOT_FOUND && self.state().session.is_some() {
            return Err(Error::new(ErrorKind::SessionExpired, "").with_status(404));
        }
        if is_event_stream(response.headers()) && status.is_success() {
            return self.read_stream(response, id).await;
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
        match message::read(&body, &self.limits) {
            Ok(Incoming::Response { outcome, .. }) => {
                outcome.map_err(|e| e.with_status(status.as_u16()))
            }
            Ok(_) => Err(Error::new(
                ErrorKind::Protocol,
                "a request answered by a request",
            )),
            Err(_) if !status.is_success() => Err(Error::status(status.as_u16())),
            Err(e) => Err(e),
        }
    }

    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        id: u64,
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
                    if let Some(result) = self.on_message(&event.data, id).await? {
                        return result;
                    }
                }
            }
            // The stream ended before the answer: resume it when the server numbered it.
            let Some(last) = parser.last_event_id().map(str::to_owned) else {
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
    /// notification goes to the handler.
    async fn on_message(
        &self,
        data: &[u8],
        id: u64,
    ) -> Result<Option<Result<JsonValue, Error>>, Error> {
        match message::read(data, &self.limits)? {
            Incoming::Response { id: got, outcome } => {
                if message::numeric_id(&got) == Some(id) {
                    return Ok(Some(outcome));
                }
            }
            Incoming::Notification { method, params } => {
                self.handler.notification(&method, params.as_ref());
            }
            Incoming::Request { id, method, params } => {
                let reply = answer(&self.handler, &id, &method, params.as_ref()).await?;
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
            .client
            .post(&self.http.url)
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

    fn set_revision(&self, revision: Revision) {
        self.state().revision = Some(revision);
    }

    fn close(&self) -> BoxFuture<'_, Result<(), Error>> {
        Box::pin(async move {
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
