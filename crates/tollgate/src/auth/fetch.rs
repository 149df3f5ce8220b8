//! Bounded HTTP fetches from an authorization server: metadata and key sets by `GET`,
//! introspection by `POST`, each within a time bound and a body bound, no redirects followed, and
//! the answer read as strict JSON by `tollgate-json` (never serde_json).
//!
//! Knows nothing of what the documents mean.

use std::time::Duration;

use tollgate_json::{JsonLimits, JsonObject, JsonValue};

/// Why a fetch gave nothing usable. Never carries the server's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FetchError {
    /// No answer within the bound: connection refused, reset, timed out.
    Unreachable,
    /// An answer that is not a 200 JSON object within the body bound.
    Unusable,
}

/// An HTTP client for one validator: its time bound for a whole exchange and its body bound.
#[derive(Clone, Debug)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
    max_body: usize,
    timeout: Duration,
}

impl Fetcher {
    /// A client with no redirects, `timeout` for the whole exchange and `max_body` bytes of
    /// answer at most. `None` when no TLS configuration can be made.
    pub(crate) fn new(timeout: Duration, max_body: usize) -> Option<Self> {
        use rustls_platform_verifier::BuilderVerifierExt;
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .ok()?
            .with_platform_verifier()
            .ok()?
            .with_no_client_auth();
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("tollgate/", env!("CARGO_PKG_VERSION")))
            .build()
            .ok()?;
        Some(Self {
            client,
            max_body,
            timeout,
        })
    }

    /// `lookup`, however many exchanges it makes (discovery through up to three metadata URLs,
    /// then the document they name), within this client's time bound altogether: past it,
    /// `Unreachable`.
    pub(crate) async fn bounded<T>(
        &self,
        lookup: impl Future<Output = Result<T, FetchError>>,
    ) -> Result<T, FetchError> {
        tokio::time::timeout(self.timeout, lookup)
            .await
            .unwrap_or(Err(FetchError::Unreachable))
    }

    /// `GET url` for a JSON object.
    pub(crate) async fn get(&self, url: &str) -> Result<JsonObject, FetchError> {
        let request = self
            .client
            .get(url)
            .header(http::header::ACCEPT, "application/json");
        self.exchange(request).await
    }

    /// `POST url` of a form with HTTP Basic client authentication, for a JSON object.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        basic: Option<&str>,
        form: String,
    ) -> Result<JsonObject, FetchError> {
        let mut request = self
            .client
            .post(url)
            .header(http::header::ACCEPT, "application/json")
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(form);
        if let Some(basic) = basic {
            request = request.header(http::header::AUTHORIZATION, basic);
        }
        self.exchange(request).await
    }

    async fn exchange(&self, request: reqwest::RequestBuilder) -> Result<JsonObject, FetchError> {
        let mut response = request.send().await.map_err(|_| FetchError::Unreachable)?;
        if response.status() != reqwest::StatusCode::OK {
            return Err(FetchError::Unusable);
        }
        let json = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|essence| {
                let essence = essence.trim().to_ascii_lowercase();
                essence == "application/json" || essence.ends_with("+json")
            });
        if !json {
            return Err(FetchError::Unusable);
        }
        if response
            .content_length()
            .is_some_and(|n| n > self.max_body as u64)
        {
            return Err(FetchError::Unusable);
        }
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > self.max_body {
                        return Err(FetchError::Unusable);
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(_) => return Err(FetchError::Unreachable),
            }
        }
        parse_object(&body, self.max_body)
    }
}

/// `bytes` as a strict JSON object within `max` bytes, depth 16 and 10,000 values.
pub(crate) fn parse_object(bytes: &[u8], max: usize) -> Result<JsonObject, FetchError> {
    let limits = JsonLimits::new()
        .with_max_input_bytes(max.max(1))
        .and_then(|l| l.with_max_depth(16))
        .and_then(|l| l.with_max_nodes(10_000))
        .map_err(|_| FetchError::Unusable)?;
    match tollgate_json::from_slice(bytes, &limits) {
        Ok(JsonValue::Object(object)) => Ok(object),
        _ => Err(FetchError::Unusable),
    }
}
