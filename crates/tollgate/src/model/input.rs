//! Multi-round-trip input (2026-07-28): the client requests a handler embeds in an
//! `input_required` result, and the result itself.
//!
//! Owns [`InputRequest`] (elicitation, sampling, roots, each with the client capability it
//! needs) and [`InputRequiredResult`]. Knows nothing of sealing or transports: the protocol
//! module checks capabilities, seals the state (`state/seal.rs`) and renders the result; on a retry
//! it opens the state and hands the handler the responses it asked for through the
//! [`RequestContext`](crate::RequestContext).

use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::context::ClientCapability;
use crate::facts::error::{ContentError, ContentErrorKind};

/// The most input requests one result may carry.
pub const MAX_INPUT_REQUESTS: usize = 32;
/// The largest application-protected request state, in bytes.
pub const MAX_APPLICATION_STATE_BYTES: usize = 64 * 1024;

/// One request for the client to fulfil before it retries: `elicitation/create`,
/// `sampling/createMessage` or `roots/list`.
///
/// # Examples
///
/// ```
/// use tollgate::context::InputRequest;
/// use tollgate::json::{from_str, JsonLimits, JsonObject};
///
/// let schema: JsonObject = from_str(
///     r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#,
///     &JsonLimits::default(),
/// )?.as_object().cloned().unwrap_or_default();
/// let ask = InputRequest::elicitation("What is your name?", schema);
/// assert_eq!(ask.method(), "elicitation/create");
/// # Ok::<(), tollgate::json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct InputRequest {
    method: &'static str,
    params: JsonObject,
    capability: ClientCapability,
}

impl InputRequest {
    /// A form elicitation: a message for the user and the flat object schema of the answer.
    pub fn elicitation(message: impl Into<Arc<str>>, requested_schema: JsonObject) -> Self {
        let message: Arc<str> = message.into();
        Self {
            method: "elicitation/create",
            params: JsonObject::builder()
                .insert("message", &*message)
                .insert("requestedSchema", requested_schema)
                .build(),
            capability: ClientCapability::Elicitation,
        }
    }

    /// A sampling request: `params` is a `CreateMessageRequest`'s parameters.
    ///
    /// # Errors
    ///
    /// [`ContentErrorKind::InvalidInputRequest`] unless `messages` is a non-empty array and
    /// `maxTokens` a positive integer.
    pub fn sampling(params: JsonObject) -> Result<Self, ContentError> {
        let messages_ok = params
            .get("messages")
            .and_then(JsonValue::as_array)
            .is_some_and(|m| !m.is_empty());
        let max_ok = params
            .get("maxTokens")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_u64())
            .is_some_and(|n| n > 0);
        if !(messages_ok && max_ok) {
            return Err(ContentError::new(ContentErrorKind::InvalidInputRequest));
        }
        Ok(Self {
            method: "sampling/createMessage",
            params,
            capability: ClientCapability::Sampling,
        })
    }

    /// A request for the client's roots.
    pub fn list_roots() -> Self {
        Self {
            method: "roots/list",
            params: JsonObject::new(),
            capability: ClientCapability::Roots,
        }
    }

    /// The JSON-RPC method the client performs.
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The client capability it needs.
    pub fn capability(&self) -> &ClientCapability {
        &self.capability
    }

    /// Its kind, as a tool declares it.
    pub fn kind(&self) -> crate::model::tool::options::InputRequestKind {
        use crate::model::tool::options::InputRequestKind as K;
        match self.capability {
            ClientCapability::Sampling => K::Sampling,
            ClientCapability::Roots => K::Roots,
            _ => K::Elicitation,
        }
    }

    /// A request as [`InputRequest::render`] wrote it into a task's record, read back with
    /// `meta` added to its `_meta` (2025-11-25 names the task a request belongs to there);
    /// `None` for a method Tollgate never asks or parameters that are not an object.
    pub(crate) fn from_stored(stored: &JsonValue, meta: (&str, &JsonObject)) -> Option<Self> {
        let kind = crate::model::tool::options::InputRequestKind::of_method(
            stored.get("method")?.as_str()?,
        )?;
        let (method, capability) = (kind.method(), kind.capability());
        let params = match stored.get("params") {
            None => JsonObject::new(),
            Some(JsonValue::Object(p)) => p.clone(),
            Some(_) => return None,
        };
        let mut extra = match params.get("_meta") {
            Some(JsonValue::Object(m)) => m.to_builder(),
            _ => JsonObject::builder(),
        };
        extra.push(meta.0, meta.1.clone());
        let mut with_meta = params.to_builder();
        with_meta.push("_meta", extra.build());
        Some(Self {
            method,
            params: with_meta.build(),
            capability,
        })
    }

    pub(crate) fn render(&self) -> JsonValue {
        JsonObject::builder()
            .insert("method", self.method)
            .insert("params", self.params.clone())
            .build()
            .into()
    }
}

/// An `input_required` result (2026-07-28): requests for the client to fulfil, and state the
/// handler wants back on the retry. Tollgate always seals a `requestState` (binding it to the
/// endpoint, tool, arguments and principal, with an expiry and a round count) and hands the
/// retry's responses to the handler through
/// [`RequestContext::input_response`](crate::RequestContext::input_response).
///
/// # Examples
///
/// ```
/// use tollgate::{context::{InputRequest, InputRequiredResult}, tool::OperationResult};
///
/// let result: OperationResult = InputRequiredResult::with_input_request(
///     "client_roots",
///     InputRequest::list_roots(),
/// )
/// .state(tollgate::json::JsonValue::from("step-1"))
/// .into();
/// # let _ = result;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct InputRequiredResult {
    pub(crate) requests: Vec<(Arc<str>, InputRequest)>,
    pub(crate) state: Option<JsonValue>,
    pub(crate) application_state: Option<Arc<str>>,
}

impl InputRequiredResult {
    /// A result asking for one input, under `key` (the retry's response carries the same key).
    pub fn with_input_request(key: impl Into<Arc<str>>, request: InputRequest) -> Self {
        Self {
            requests: vec![(key.into(), request)],
            state: None,
            application_state: None,
        }
    }

    /// A result asking for nothing, only carrying state (for example to shed load: the client
    /// retries at once).
    pub fn with_state(state: JsonValue) -> Self {
        Self {
            requests: Vec::new(),
            state: Some(state),
            application_state: None,
        }
    }

    /// Asks for one more input. Keys must be unique, nonempty and at most 256 bytes; at most 32
    /// requests. A result breaking these fails with the fixed internal error.
    #[must_use]
    pub fn add_input_request(mut self, key: impl Into<Arc<str>>, request: InputRequest) -> Self {
        self.requests.push((key.into(), request));
        self
    }

    /// State the handler receives back on the retry
    /// ([`RequestContext::request_state`](crate::RequestContext::request_state)); sealed, at
    /// most 64 KiB with Tollgate's envelope. Only for a tool whose
    /// [`RequestStateMode`](crate::tool::RequestStateMode) is `FrameworkProtected` (prompts and
    /// resources always may): anywhere else the result fails with the fixed internal error.
    #[must_use]
    pub fn state(mut self, state: JsonValue) -> Self {
        self.state = Some(state);
        self
    }

    /// A result asking for nothing, only carrying application-protected state.
    pub fn with_application_state(state: impl Into<Arc<str>>) -> Self {
        Self {
            requests: Vec::new(),
            state: None,
            application_state: Some(state.into()),
        }
    }

    /// State the application protects itself (encrypted, signed or a reference to its own
    /// store: Tollgate does not look inside), sent as the `requestState` exactly as given and
    /// handed back on the retry through
    /// [`RequestContext::application_request_state`](crate::RequestContext::application_request_state).
    /// 1 to [`MAX_APPLICATION_STATE_BYTES`] bytes, and only for a tool whose
    /// [`RequestStateMode`](crate::tool::RequestStateMode) is `ApplicationProtected`: anywhere
    /// else, or out of bounds, the result fails with the fixed internal error.
    #[must_use]
    pub fn application_state(mut self, state: impl Into<Arc<str>>) -> Self {
        self.application_state = Some(state.into());
        self
    }

    /// The input requests.
    pub fn input_requests(&self) -> impl Iterator<Item = (&str, &InputRequest)> {
        self.requests.iter().map(|(k, r)| (&**k, r))
    }

    /// Whether the keys are well-formed and unique and the count within bounds.
    pub(crate) fn is_well_formed(&self) -> bool {
        if self.requests.len() > MAX_INPUT_REQUESTS {
            return false;
        }
        let mut keys: Vec<&str> = self.requests.iter().map(|(k, _)| &**k).collect();
        if keys.iter().any(|k| k.is_empty() || k.len() > 256) {
            return false;
        }
        keys.sort_unstable();
        keys.windows(2).all(|w| w[0] != w[1])
    }
}

/// The minimal shape of each kind of input response: an elicitation result's `action` (with
/// `content` an object when accepted), a sampling result's `role` and `content`, a roots
/// result's `roots` array.
pub(crate) fn input_response_shape(method: &str, response: &JsonValue) -> bool {
    let Some(object) = response.as_object() else {
        return false;
    };
    match method {
        "elicitation/create" => match object.get("action").and_then(JsonValue::as_str) {
            Some("accept") => object
                .get("content")
                .is_none_or(|c| c.as_object().is_some()),
            Some("decline" | "cancel") => true,
            _ => false,
        },
        "sampling/createMessage" => {
            matches!(
                object.get("role").and_then(JsonValue::as_str),
                Some("user" | "assistant")
            ) && object.get("content").is_some()
        }
        "roots/list" => object.get("roots").and_then(JsonValue::as_array).is_some(),
        _ => false,
    }
}
