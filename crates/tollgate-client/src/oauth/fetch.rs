//! Bounded HTTP exchanges with authorization and resource servers: a GET or a form POST whose
//! JSON answer is read under a byte cap through `tollgate-json` and bound to a serde type. It
//! owns the reading; it must not know which document it fetches or why.

use serde::de::DeserializeOwned;
use tollgate_json::{BindLimits, JsonLimits};

use crate::auth::AuthError;

use super::kind;

/// A response's status and its JSON body (when it had one that parsed).
pub(crate) struct Answer<T> {
    pub(crate) status: u16,
    pub(crate) headers: http::HeaderMap,
    pub(crate) body: Option<T>,
}

/// Reads at most `limit` bytes of a response body; more is an error (never a truncation).
pub(crate) async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, AuthError> {
    if response
        .content_length()
        .is_some_and(|len| len > limit as u64)
    {
        return Err(AuthError::new(kind::TOO_LARGE));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|_| AuthError::new(kind::UNREACHABLE))?
    {
        if body.len() + chunk.len() > limit {
            return Err(AuthError::new(kind::TOO_LARGE));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Parses `bytes` as JSON under `limit` and binds it to `T`.
pub(crate) fn bind<T: DeserializeOwned>(bytes: &[u8], limit: usize) -> Option<T> {
    let limits = JsonLimits::default().with_max_input_bytes(limit).ok()?;
    let tree = tollgate_json::from_slice(bytes, &limits).ok()?;
    tollgate_json::from_value(&tree, &BindLimits::default()).ok()
}

/// Sends `request` and reads its answer: the status, headers and the JSON body bound to `T`
/// (`None` when the body is not such JSON).
pub(crate) async fn exchange<T: DeserializeOwned>(
    request: reqwest::RequestBuilder,
    limit: usize,
) -> Result<Answer<T>, AuthError> {
    let response = request
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|_| AuthError::new(kind::UNREACHABLE))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = read_capped(response, limit).await?;
    Ok(Answer {
        status,
        headers,
        body: bind(&bytes, limit),
    })
}

/// GETs a JSON document; `None` when the server answered anything but a 200 with such JSON.
pub(crate) async fn document<T: DeserializeOwned>(
    client: &reqwest::Client,
    url: &str,
    limit: usize,
) -> Result<Option<T>, AuthError> {
    let answer = exchange::<T>(client.get(url), limit).await?;
    Ok(if answer.status == 200 {
        answer.body
    } else {
        None
    })
}

/// A form body (`application/x-www-form-urlencoded`) from name-value pairs.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    let mut out = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        out.append_pair(name, value);
    }
    out.finish()
}

/// The HTTP client the OAuth client uses by default: rustls on the ring provider with the
/// platform's roots, no redirects followed (metadata, registration and token answers are read
/// where they were asked for), a 30-second timeout per exchange.
pub(crate) fn http_client() -> Result<reqwest::Client, AuthError> {
    let tls_error = || AuthError::new(kind::TLS);
    let tls = crate::transport::http::tls_config().ok_or_else(tls_error)?;
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|_| tls_error())
}
