//! The tasks bench's in-process client: one loop's requests, built from a header map made once,
//! and the markers it looks for in answers, found with `memchr`'s finders. The harness shares the
//! cores with the server (and the database), so it does not parse header names or set up a
//! string search per request: those cost about a tenth of a cycle's instructions.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tollgate::McpService;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// What one loop sends and looks for, made once.
pub(crate) struct Client {
    uri: hyper::Uri,
    headers: hyper::HeaderMap,
    pub(crate) status: memchr::memmem::Finder<'static>,
    pub(crate) task_id: memchr::memmem::Finder<'static>,
    pub(crate) result: memchr::memmem::Finder<'static>,
}

impl Client {
    pub(crate) fn new() -> Self {
        use hyper::header::{ACCEPT, CONTENT_TYPE, HOST, HeaderName, HeaderValue};
        let mut headers = hyper::HeaderMap::with_capacity(8);
        headers.insert(HOST, HeaderValue::from_static("127.0.0.1:8080"));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        headers.insert(
            HeaderName::from_static("mcp-protocol-version"),
            HeaderValue::from_static("2026-07-28"),
        );
        Self {
            uri: hyper::Uri::from_static("/mcp"),
            headers,
            status: memchr::memmem::Finder::new(br#""status":""#),
            task_id: memchr::memmem::Finder::new(br#""taskId":""#),
            result: memchr::memmem::Finder::new(br#""result":{"#),
        }
    }

    /// One request through the service as HTTP: the answer's body, which must be a 200.
    pub(crate) async fn serve(
        &self,
        service: &McpService,
        method: &'static str,
        name: &str,
        body: Bytes,
    ) -> Result<Bytes, Error> {
        use hyper::header::{HeaderName, HeaderValue};
        let mut request = hyper::Request::new(Full::new(body));
        *request.method_mut() = hyper::Method::POST;
        *request.uri_mut() = self.uri.clone();
        let headers = request.headers_mut();
        *headers = self.headers.clone();
        headers.insert(
            HeaderName::from_static("mcp-method"),
            HeaderValue::from_static(method),
        );
        headers.insert(
            HeaderName::from_static("mcp-name"),
            HeaderValue::from_str(name)?,
        );
        let response = service.serve(request).await;
        let status = response.status();
        let bytes = response.into_body().collect().await?.to_bytes();
        if status != 200 {
            return Err(format!(
                "{method}: HTTP {status}: {}",
                String::from_utf8_lossy(&bytes)
            )
            .into());
        }
        Ok(bytes)
    }

    /// The string value after `finder`'s marker (`"status":"`…`"`), if any.
    pub(crate) fn after<'t>(
        finder: &memchr::memmem::Finder<'_>,
        text: &'t [u8],
    ) -> Option<&'t [u8]> {
        let rest = &text[finder.find(text)? + finder.needle().len()..];
        Some(&rest[..memchr::memchr(b'"', rest)?])
    }
}
