//! What the application supplies to answer the server: notifications (progress, log messages,
//! list changes) and server-to-client requests (elicitation, sampling, roots), whether they
//! arrive as 2025 requests on a stream or as 2026-07-28 `input_required` results. It owns the
//! trait and the elicitation defaults rule; it must not know transports.

use std::future::Future;
use std::pin::Pin;

use tollgate_json::{JsonObject, JsonValue};

/// The future [`Handler::request`] returns.
pub type HandlerFuture<'a> = Pin<Box<dyn Future<Output = Result<JsonValue, Refusal>> + Send + 'a>>;

/// A handler's refusal of a server request: a JSON-RPC code and a fixed message (never data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// The JSON-RPC error code.
    pub code: i64,
    /// A fixed message.
    pub message: &'static str,
}

impl Refusal {
    /// -32601: this client does not answer the method.
    pub const METHOD_NOT_FOUND: Refusal = Refusal {
        code: -32601,
        message: "Method not found",
    };
    /// -32602: the request's parameters could not be used.
    pub const INVALID_PARAMS: Refusal = Refusal {
        code: -32602,
        message: "Invalid params",
    };
}

/// Answers what the server sends on its own: notifications and server-to-client requests.
///
/// Both methods have defaults (notifications ignored, requests refused with -32601), so an
/// application implements only what it offers. Advertise what you answer with
/// [`ClientBuilder::capabilities`](crate::ClientBuilder::capabilities).
///
/// # Examples
///
/// ```
/// use tollgate_client::handler::{Handler, HandlerFuture, Refusal, apply_elicitation_defaults};
/// use tollgate_client::json::{JsonObject, JsonValue};
///
/// struct AlwaysAccept;
///
/// impl Handler for AlwaysAccept {
///     fn request<'a>(&'a self, method: &'a str, params: Option<&'a JsonObject>) -> HandlerFuture<'a> {
///         Box::pin(async move {
///             if method != "elicitation/create" {
///                 return Err(Refusal::METHOD_NOT_FOUND);
///             }
///             let content = apply_elicitation_defaults(params, JsonObject::new());
///             Ok(JsonObject::builder()
///                 .insert("action", "accept")
///                 .insert("content", content)
///                 .build()
///                 .into())
///         })
///     }
/// }
/// ```
pub trait Handler: Send + Sync + 'static {
    /// A notification from the server (`notifications/progress`, `notifications/message`,
    /// `notifications/*/list_changed`, `notifications/resources/updated`, ...).
    fn notification(&self, method: &str, params: Option<&JsonObject>) {
        let _ = (method, params);
    }

    /// A request from the server (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`, `ping`); answer its result.
    fn request<'a>(&'a self, method: &'a str, params: Option<&'a JsonObject>) -> HandlerFuture<'a> {
        let _ = params;
        Box::pin(async move {
            if method == "ping" {
                Ok(JsonObject::new().into())
            } else {
                Err(Refusal::METHOD_NOT_FOUND)
            }
        })
    }
}

/// The handler used when the application supplies none.
#[derive(Debug, Default)]
pub struct NoHandler;

impl Handler for NoHandler {}

/// `content` with every property of an `elicitation/create` request's `requestedSchema` that
/// has a `default` and is missing from `content` filled with that default (SEP-1034).
pub fn apply_elicitation_defaults(params: Option<&JsonObject>, content: JsonObject) -> JsonObject {
    let properties = params
        .and_then(|p| p.get("requestedSchema"))
        .and_then(|s| s.get("properties"))
        .and_then(JsonValue::as_object);
    let Some(properties) = properties else {
        return content;
    };
    let mut out = content.to_builder();
    for (name, schema) in properties.iter() {
        if content.contains_key(name.as_str()) {
            continue;
        }
        if let Some(default) = schema.get("default") {
            out.push(name.clone(), default.clone());
        }
    }
    out.build()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use tollgate_json::{JsonLimits, from_str};

    #[test]
    fn defaults_fill_only_missing_properties() {
        let params = from_str(
            r#"{"requestedSchema":{"type":"object","properties":{"a":{"type":"string","default":"x"},"b":{"type":"integer","default":3},"c":{"type":"boolean"}}}}"#,
            &JsonLimits::default(),
        )
        .unwrap();
        let given = JsonObject::builder().insert("b", true).build();
        let out = apply_elicitation_defaults(params.as_object(), given);
        assert_eq!(out.get("a").and_then(JsonValue::as_str), Some("x"));
        assert_eq!(out.get("b"), Some(&JsonValue::Bool(true)));
        assert!(out.get("c").is_none());
    }
}
