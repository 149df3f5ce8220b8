//! What a handler may know about the request it serves: [`RequestContext`] and its parts.
//!
//! Every value here was validated before the handler runs. Client-reported values (client
//! implementation, capabilities, `_meta`) are informational and never identity; the accepted
//! [`AdmissionIdentity`] is the only identity.

use std::sync::{Arc, OnceLock};

use tollgate_json::{JsonObject, JsonString, JsonValue};

pub(crate) use crate::facts::identity::AdmissionIdentity;
use crate::facts::request::OriginatingRequest;
use crate::facts::trace::{self, Baggage, TraceContext};
use crate::version::ProtocolVersion;
use crate::wire::fault::Fault;
use crate::wire::id::RequestId;
use crate::wire::method::OperationType;
use crate::wire::reply::{Reply, fail};

/// The address of the peer a request came from, as an HTTP request extension. The built-in
/// [`Server`](crate::Server) hands its connection's peer to the service directly; a service
/// mounted in another server reads it from this extension, which that server can insert from
/// that server's connection information (in axum, from `ConnectInfo`) so that policy can use
/// it (see [`EndpointBuilder::refused_admission_limiter`](crate::endpoint::EndpointBuilder::refused_admission_limiter)).
///
/// # Examples
///
/// ```
/// use tollgate::transport::PeerAddr;
///
/// let mut request = http::Request::new(());
/// request.extensions_mut().insert(PeerAddr(([127, 0, 0, 1], 40_000).into()));
/// assert!(request.extensions().get::<PeerAddr>().is_some());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PeerAddr(pub std::net::SocketAddr);

/// The client's self-reported implementation (`io.modelcontextprotocol/clientInfo`).
/// Informational only: never use it for identity or authorization.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientInfo {
    raw: JsonObject,
}

impl ClientInfo {
    pub(crate) fn from_object(raw: JsonObject) -> Option<Self> {
        let name_ok = raw.get("name").is_some_and(|v| v.as_str().is_some());
        let version_ok = raw.get("version").is_some_and(|v| v.as_str().is_some());
        let title_ok = raw.get("title").is_none_or(|v| v.as_str().is_some());
        (name_ok && version_ok && title_ok).then_some(Self { raw })
    }

    /// The reported name.
    pub fn name(&self) -> &str {
        self.raw
            .get("name")
            .and_then(JsonValue::as_str)
            .unwrap_or_default()
    }

    /// The reported version.
    pub fn version(&self) -> &str {
        self.raw
            .get("version")
            .and_then(JsonValue::as_str)
            .unwrap_or_default()
    }

    /// The whole object as received.
    pub fn raw(&self) -> &JsonObject {
        &self.raw
    }
}

/// The capabilities the client declared for this request
/// (`io.modelcontextprotocol/clientCapabilities`). Informational: a server must not rely on a
/// capability that was not declared, and a declaration proves nothing about the caller.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ClientCapabilities {
    raw: JsonObject,
}

impl ClientCapabilities {
    /// Capabilities from a JSON object, e.g. to test application code without a server.
    pub fn from_json(raw: JsonObject) -> Self {
        Self { raw }
    }

    /// Whether the client declared elicitation (form mode is implied by a bare declaration).
    pub fn elicitation(&self) -> bool {
        self.raw
            .get("elicitation")
            .is_some_and(|v| v.as_object().is_some())
    }

    /// Whether the client declared sampling.
    pub fn sampling(&self) -> bool {
        self.raw
            .get("sampling")
            .is_some_and(|v| v.as_object().is_some())
    }

    /// Whether the client declared roots.
    pub fn roots(&self) -> bool {
        self.raw
            .get("roots")
            .is_some_and(|v| v.as_object().is_some())
    }

    /// Whether the client declared the named extension.
    pub fn extension(&self, name: &str) -> bool {
        self.raw
            .get("extensions")
            .and_then(|e| e.get(name))
            .is_some_and(|v| v.as_object().is_some())
    }

    /// The whole object as received.
    pub fn raw(&self) -> &JsonObject {
        &self.raw
    }
}

/// A client capability a tool requires on every call.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ClientCapability {
    /// `elicitation`.
    Elicitation,
    /// `sampling`.
    Sampling,
    /// `roots`.
    Roots,
    /// An extension, by identifier (e.g. `io.modelcontextprotocol/tasks`).
    Extension(Arc<str>),
}

impl ClientCapabilities {
    /// Whether the client declared `capability`.
    pub fn declares(&self, capability: &ClientCapability) -> bool {
        match capability {
            ClientCapability::Elicitation => self.elicitation(),
            ClientCapability::Sampling => self.sampling(),
            ClientCapability::Roots => self.roots(),
            ClientCapability::Extension(name) => self.extension(name),
        }
    }
}

/// `requiredCapabilities` for the missing-capability error: each missing capability with an
/// empty settings object.
pub(crate) fn required_capabilities<'a>(
    missing: impl Iterator<Item = &'a ClientCapability>,
) -> JsonObject {
    let mut b = JsonObject::builder();
    let mut extensions = JsonObject::builder();
    for capability in missing {
        match capability {
            ClientCapability::Elicitation => b.push("elicitation", JsonObject::new()),
            ClientCapability::Sampling => b.push("sampling", JsonObject::new()),
            ClientCapability::Roots => b.push("roots", JsonObject::new()),
            ClientCapability::Extension(name) => extensions.push(&**name, JsonObject::new()),
        }
    }
    if !extensions.is_empty() {
        b.push("extensions", extensions.build());
    }
    b.build()
}

/// Everything validated about the request a handler serves.
///
/// # Examples
///
/// Handlers receive a context from Tollgate; tests can build one:
///
/// ```
/// use tollgate::{policy::OperationType, ProtocolVersion, RequestContext};
///
/// let ctx = RequestContext::for_test("tools/call", ProtocolVersion::V2026_07_28);
/// assert_eq!(ctx.operation_type(), &OperationType::ToolsCall);
/// assert_eq!(ctx.json_rpc_method(), "tools/call");
/// ```
#[derive(Clone, Debug)]
pub struct RequestContext {
    pub(crate) endpoint_path: Arc<str>,
    pub(crate) operation: OperationType,
    pub(crate) method: JsonString,
    pub(crate) request_id: Option<RequestId>,
    pub(crate) protocol_version: ProtocolVersion,
    pub(crate) operation_name: Option<JsonString>,
    pub(crate) client_info: Option<ClientInfo>,
    pub(crate) client_capabilities: ClientCapabilities,
    pub(crate) meta: JsonObject,
    pub(crate) admission: AdmissionIdentity,
    /// The least severe log level the client asked for, if any.
    pub(crate) log_level: Option<crate::wire::level::LogLevel>,
    /// A retry's input responses and opened request state (2026-07-28).
    pub(crate) input: Option<Arc<InputContext>>,
    /// The HTTP request the message arrived in (the shared empty view over stdio).
    pub(crate) origin: Arc<OriginatingRequest>,
    /// Validated trace context and baggage (`_meta` keys, else headers), read on first use.
    pub(crate) trace: OnceLock<(Option<TraceContext>, Option<Baggage>)>,
}

impl RequestContext {
    /// The same context without its HTTP head (the shared empty view in its place), for work
    /// that outlives the request's pipeline and does not read it (a listen's loop): it does not
    /// keep the head, nor what the head keeps, for as long as it runs.
    pub(crate) fn without_head(&self) -> Self {
        let mut kept = self.clone();
        kept.origin = Arc::clone(OriginatingRequest::stdio());
        kept
    }
}

/// What a retry of an `input_required` result brought back.
#[derive(Debug)]
pub(crate) struct InputContext {
    pub(crate) responses: JsonObject,
    pub(crate) state: JsonValue,
    pub(crate) round: u8,
    /// Whether a sealed state came back (and so the responses are exactly the ones asked for).
    pub(crate) verified: bool,
    /// An application-protected tool's state, exactly as the client returned it.
    pub(crate) application_state: Option<std::sync::Arc<str>>,
}

/// What a validated request says about itself, gathered by the protocol paths.
pub(crate) struct RequestFacts {
    pub(crate) protocol_version: ProtocolVersion,
    pub(crate) client_info: Option<ClientInfo>,
    pub(crate) client_capabilities: ClientCapabilities,
    pub(crate) meta: JsonObject,
    pub(crate) log_level: Option<crate::wire::level::LogLevel>,
}

impl RequestFacts {
    /// A request that says nothing about its client (notifications, method-less HTTP requests,
    /// a 2025 request before its session is found).
    pub(crate) fn bare(protocol_version: ProtocolVersion) -> Self {
        Self {
            protocol_version,
            client_info: None,
            client_capabilities: ClientCapabilities::default(),
            meta: JsonObject::new(),
            log_level: None,
        }
    }
}

impl RequestContext {
    /// The context of a validated request to `endpoint_path`. Admission admits every caller
    /// anonymously until a controller is configured.
    pub(crate) fn admitted(
        endpoint_path: Arc<str>,
        method: &JsonString,
        request_id: Option<RequestId>,
        facts: RequestFacts,
        origin: &Arc<OriginatingRequest>,
    ) -> Self {
        Self::for_operation(
            endpoint_path,
            OperationType::of(method),
            method,
            request_id,
            facts,
            origin,
        )
    }

    /// As [`admitted`](Self::admitted), with the operation already known from the method table.
    pub(crate) fn for_operation(
        endpoint_path: Arc<str>,
        operation: OperationType,
        method: &JsonString,
        request_id: Option<RequestId>,
        facts: RequestFacts,
        origin: &Arc<OriginatingRequest>,
    ) -> Self {
        Self {
            endpoint_path,
            operation,
            method: method.clone(),
            request_id,
            protocol_version: facts.protocol_version,
            operation_name: None,
            client_info: facts.client_info,
            client_capabilities: facts.client_capabilities,
            meta: facts.meta,
            admission: AdmissionIdentity::anonymous(),
            log_level: facts.log_level,
            input: None,
            origin: Arc::clone(origin),
            trace: OnceLock::new(),
        }
    }

    /// The context of an HTTP request that carries no JSON-RPC method (a stream `GET`, a session
    /// `DELETE`, a client's response): only what admission needs.
    pub(crate) fn without_method(
        endpoint_path: Arc<str>,
        operation: OperationType,
        protocol_version: ProtocolVersion,
    ) -> Self {
        let mut context = Self::for_test("", protocol_version);
        context.endpoint_path = endpoint_path;
        context.operation = operation;
        context
    }

    /// A context for unit-testing application code: the given method and revision, no id, no
    /// client information, empty capabilities and `_meta`, anonymous admission.
    pub fn for_test(method: &str, protocol_version: ProtocolVersion) -> Self {
        let method = JsonString::from(method);
        Self {
            endpoint_path: Arc::from("/mcp"),
            operation: OperationType::of(&method),
            method,
            request_id: None,
            protocol_version,
            operation_name: None,
            client_info: None,
            client_capabilities: ClientCapabilities::default(),
            meta: JsonObject::new(),
            admission: AdmissionIdentity::anonymous(),
            log_level: None,
            input: None,
            origin: Arc::clone(OriginatingRequest::stdio()),
            trace: OnceLock::new(),
        }
    }

    /// The context with `origin` as its originating request, and the trace context and baggage
    /// read from its `_meta` and `origin`'s headers (for tests of application code, and for
    /// the transports).
    #[must_use]
    pub fn with_origin(mut self, origin: Arc<OriginatingRequest>) -> Self {
        self.origin = origin;
        self.trace = OnceLock::new();
        self
    }

    fn traced(&self) -> &(Option<TraceContext>, Option<Baggage>) {
        self.trace.get_or_init(|| {
            let headers = self.origin.is_http().then(|| self.origin.headers());
            trace::read(&self.meta, headers)
        })
    }

    /// The request the message arrived in: its HTTP method, target, headers, extensions and
    /// peer (an empty view over stdio). Header values are the client's: validate before
    /// trusting one; identity comes from [`admission_identity`](Self::admission_identity).
    pub fn originating_request(&self) -> &OriginatingRequest {
        &self.origin
    }

    /// The caller's W3C trace context (`traceparent`, `tracestate`), from the request's `_meta`
    /// keys or else its HTTP headers, when valid; a malformed value is dropped.
    pub fn trace_context(&self) -> Option<&TraceContext> {
        self.traced().0.as_ref()
    }

    /// The caller's W3C baggage, from the request's `_meta` key or else its HTTP header, when
    /// valid; a malformed value is dropped.
    pub fn baggage(&self) -> Option<&Baggage> {
        self.traced().1.as_ref()
    }

    /// The exact path of the endpoint that received the request.
    pub fn endpoint_path(&self) -> &str {
        &self.endpoint_path
    }

    /// The operation type.
    pub fn operation_type(&self) -> &OperationType {
        &self.operation
    }

    /// The exact JSON-RPC method.
    pub fn json_rpc_method(&self) -> &str {
        &self.method
    }

    /// The request id (absent only for notifications).
    pub fn request_id(&self) -> Option<&RequestId> {
        self.request_id.as_ref()
    }

    /// The protocol revision of this request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.protocol_version
    }

    /// The selected operation's name (the tool name for `tools/call`).
    pub fn operation_name(&self) -> Option<&str> {
        self.operation_name.as_deref()
    }

    /// The client's self-reported implementation, if sent. Never identity.
    pub fn client_info(&self) -> Option<&ClientInfo> {
        self.client_info.as_ref()
    }

    /// The client's declared capabilities for this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.client_capabilities
    }

    /// The request's `_meta` object, as received.
    pub fn meta(&self) -> &JsonObject {
        &self.meta
    }

    /// The accepted admission identity.
    pub fn admission_identity(&self) -> &AdmissionIdentity {
        &self.admission
    }

    /// On a retry after an `input_required` result: the client's response to the input
    /// requested under `key` (exactly as sent), or `None` when it sent none. When the retry
    /// echoes Tollgate's `requestState`, only keys the result asked for are visible and each is
    /// shape-checked for its method; a retry without state (the protocol's ephemeral flow)
    /// carries unverified client input, like the arguments.
    pub fn input_response(&self, key: &str) -> Option<&JsonValue> {
        self.input.as_ref()?.responses.get(key)
    }

    /// On a retry: every response to an input the previous result asked for.
    pub fn input_responses(&self) -> Option<&JsonObject> {
        self.input.as_ref().map(|i| &i.responses)
    }

    /// On a retry echoing Tollgate's `requestState`: the state the previous `input_required`
    /// result carried (opened and verified by Tollgate; `null` when it carried none).
    pub fn request_state(&self) -> Option<&JsonValue> {
        self.input.as_ref().filter(|i| i.verified).map(|i| &i.state)
    }

    /// On a retry to a tool whose state is
    /// [`ApplicationProtected`](crate::tool::RequestStateMode::ApplicationProtected): the
    /// `requestState` exactly as the client returned it. Tollgate has not checked it: the
    /// application opens and verifies it as it sealed it.
    pub fn application_request_state(&self) -> Option<&str> {
        self.input.as_ref()?.application_state.as_deref()
    }

    /// Whether this retry's input responses were bound by Tollgate's sealed state to the
    /// inputs the previous result asked for (`false` on a first call, on the protocol's
    /// ephemeral flow, and for application-protected state).
    pub fn input_verified(&self) -> bool {
        self.input.as_ref().is_some_and(|i| i.verified)
    }

    /// How many `input_required` results this request has answered so far (0 on a first call;
    /// at most [`MAX_REQUEST_STATE_ROUNDS`](crate::endpoint::MAX_REQUEST_STATE_ROUNDS)).
    pub fn input_round(&self) -> u8 {
        self.input.as_ref().map_or(0, |i| i.round)
    }
}

/// HTTP 400 (200 on the 2025 revisions) / -32021 with `data.requiredCapabilities` listing
/// `missing`, each with an empty settings object.
pub(crate) fn missing_capabilities<'a>(
    revision: ProtocolVersion,
    id: Option<&RequestId>,
    missing: impl Iterator<Item = &'a ClientCapability>,
) -> Reply {
    let data = JsonObject::builder()
        .insert("requiredCapabilities", required_capabilities(missing))
        .build();
    fail(revision, id, Fault::MissingCapability, Some(data.into()))
}
