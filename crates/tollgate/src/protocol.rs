//! The 2026-07-28 request path: from a parsed POST body and its headers to one JSON reply.
//!
//! Owns the validation order (JSON and limits, envelope, method, headers, revision, `_meta`,
//! parameters, admission, tool lookup, mirrored arguments, input validation, handler, output
//! validation, output limits) and the result projection. Knows nothing of sockets: the HTTP
//! service hands it headers and a body that already passed the transport checks.

use std::future::Future;
use std::net::IpAddr;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{HeaderMap, StatusCode};
use tollgate_json::{
    JsonObject, JsonObjectBuilder, JsonString, JsonValue, OutputLimits, from_slice, to_vec,
    write_into,
};
use tollgate_schema::ValidationErrorKind;

use crate::content::TextContent;
use crate::context::{
    ClientCapabilities, ClientCapability, ClientInfo, RequestContext, RequestFacts, RequestId,
    required_capabilities,
};
use crate::endpoint::{Endpoint, is_legacy, revision_slot};
use crate::fault::{Fault, INVALID_ARGUMENTS_TEXT};
use crate::features::{
    CancelOnDrop, CancellationToken, InvocationFeatures, NotificationSink, ProgressReporter,
};
use crate::headers;
use crate::policy::{Caller, Refusal};
use crate::prompt::{Completion, CompletionRequest, PromptArguments, PromptOutcome};
use crate::resource::{ResourceOutcome, ResourceRequest, Route};
use crate::result::{CompleteResult, OperationResult, ToolOutput};
use crate::tool::{BoxFuture, Invocation, InvokeFailure, ToolRegistration};
use crate::version::ProtocolVersion;

const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// One reply: a status and, unless empty, a JSON body.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) body: Option<Vec<u8>>,
    /// An `Mcp-Session-Id` to send (a 2025-revision `initialize` only).
    pub(crate) session: Option<std::sync::Arc<str>>,
    /// One more response header: `WWW-Authenticate` or `Retry-After` for a policy refusal.
    pub(crate) extra: Option<(http::HeaderName, http::HeaderValue)>,
}

impl Reply {
    pub(crate) fn empty(status: StatusCode) -> Self {
        Self {
            status,
            body: None,
            session: None,
            extra: None,
        }
    }

    /// HTTP 200 with a rendered JSON-RPC response.
    pub(crate) fn ok(body: Vec<u8>) -> Self {
        Self::json(StatusCode::OK, body)
    }

    fn json(status: StatusCode, body: Vec<u8>) -> Self {
        Self {
            status,
            body: Some(body),
            session: None,
            extra: None,
        }
    }
}

/// The admission stage for a well-formed request (see `policy.rs`): the refusal throttle,
/// admission and the request limiter. A refusal becomes its fixed reply.
pub(crate) fn admit(
    endpoint: &Endpoint,
    caller: Caller<'_>,
    context: &mut RequestContext,
) -> Result<(), Reply> {
    crate::policy::admit(&endpoint.inner.policy, caller, context)
        .map_err(|refusal| refusal_reply(context, refusal))
}

/// The operation limiter of a tool call: the tool's named limiter, else the endpoint's.
fn charge_tool(
    endpoint: &Endpoint,
    context: &RequestContext,
    named: Option<&str>,
) -> Result<(), Reply> {
    crate::policy::charge_tool(&endpoint.inner.policy, context, named)
        .map_err(|refusal| refusal_reply(context, refusal))
}

/// A policy refusal as its fixed reply, with `WWW-Authenticate` or `Retry-After` where it has
/// one. A notification gets the status and header alone.
pub(crate) fn refusal_reply(context: &RequestContext, refusal: Refusal) -> Reply {
    let (revision, id) = (context.protocol_version, context.request_id.as_ref());
    let (fault, extra) = match refusal {
        Refusal::Unauthorized(challenge) => (
            Fault::Unauthorized,
            challenge.map(|c| (http::header::WWW_AUTHENTICATE, c)),
        ),
        Refusal::Forbidden => (Fault::Forbidden, None),
        Refusal::RateLimited(retry_after) => {
            let seconds = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
            (
                Fault::RateLimited,
                Some((http::header::RETRY_AFTER, http::HeaderValue::from(seconds))),
            )
        }
        Refusal::Failed => (Fault::Internal, None),
    };
    let mut reply = match id {
        Some(_) => fail(revision, id, fault, None),
        // Notifications, stream `GET`s, session `DELETE`s and client responses have no id to
        // answer: the status alone.
        None => Reply::empty(match fault {
            // A broken controller is a server error, never a success status.
            Fault::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            _ => fault.status(),
        }),
    };
    reply.extra = extra;
    reply
}

/// A fault, with the status the request's revision gives it.
pub(crate) fn fail(
    revision: ProtocolVersion,
    id: Option<&RequestId>,
    fault: Fault,
    data: Option<JsonValue>,
) -> Reply {
    let mut reply = fault_reply(id, fault, data);
    if is_legacy(revision) {
        reply.status = fault.legacy_status();
    }
    reply
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

/// A fault as a JSON-RPC error response. `data` is only ever framework-built.
pub(crate) fn fault_reply(id: Option<&RequestId>, fault: Fault, data: Option<JsonValue>) -> Reply {
    let mut error = JsonObject::builder()
        .insert("code", fault.code())
        .insert("message", fault.message());
    if let Some(data) = data {
        error.push("data", data);
    }
    let mut envelope = JsonObject::builder().insert("jsonrpc", "2.0");
    if let Some(id) = id {
        envelope.push("id", id.to_json());
    }
    envelope.push("error", error.build());
    // Framework-built and small: within any output limit.
    let body = to_vec(
        &envelope.build().into(),
        &tollgate_json::OutputLimits::default(),
    )
    .unwrap_or_default();
    Reply::json(fault.status(), body)
}

/// A successful result whose `result` member is already rendered.
pub(crate) fn result_reply(id: &RequestId, result: &[u8]) -> Reply {
    let mut body = Vec::with_capacity(result.len() + 48);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // An id read from a bounded request always fits.
    if write_into(
        &id.to_json(),
        &mut body,
        &tollgate_json::OutputLimits::default(),
    )
    .is_err()
    {
        return fault_reply(None, Fault::Internal, None);
    }
    body.extend_from_slice(br#","result":"#);
    body.extend_from_slice(result);
    body.push(b'}');
    Reply::json(StatusCode::OK, body)
}

/// A successful result built from a tree (small framework results such as `ping`).
pub(crate) fn result_reply_json(
    id: Option<&RequestId>,
    result: &JsonValue,
    revision: ProtocolVersion,
) -> Reply {
    let Some(id) = id else {
        return fail(revision, None, Fault::Internal, None);
    };
    match to_vec(result, &tollgate_json::OutputLimits::default()) {
        Ok(bytes) => result_reply(id, &bytes),
        Err(_) => fail(revision, Some(id), Fault::Internal, None),
    }
}

/// The readable parts of a JSON-RPC message.
pub(crate) struct Envelope {
    pub(crate) id: Option<RequestId>,
    pub(crate) method: JsonString,
    pub(crate) params: Option<JsonObject>,
}

/// Classifies the body. `Err` carries the id when it was readable.
pub(crate) fn envelope(value: &JsonValue) -> Result<Envelope, Option<RequestId>> {
    let Some(object) = value.as_object() else {
        return Err(None);
    };
    let id = match object.get("id") {
        None => None,
        Some(raw) => Some(RequestId::from_json(raw).ok_or(None)?),
    };
    let fail = || Err(id.clone());
    if object.get("jsonrpc").and_then(JsonValue::as_str) != Some("2.0") {
        return fail();
    }
    if object
        .keys()
        .any(|k| !matches!(k, "jsonrpc" | "id" | "method" | "params"))
    {
        return fail();
    }
    let Some(JsonValue::String(method)) = object.get("method") else {
        return fail();
    };
    let params = match object.get("params") {
        None => None,
        Some(JsonValue::Object(p)) => Some(p.clone()),
        Some(_) => return fail(),
    };
    Ok(Envelope {
        id,
        method: method.clone(),
        params,
    })
}

/// The methods an endpoint serves on 2026-07-28.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Method {
    Discover,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    Complete,
    ResourcesList,
    ResourcesTemplatesList,
    ResourcesRead,
    SubscriptionsListen,
    TasksGet,
    TasksUpdate,
    TasksCancel,
}

impl Method {
    fn of(method: &str) -> Option<Self> {
        match method {
            "server/discover" => Some(Self::Discover),
            "tools/list" => Some(Self::ToolsList),
            "tools/call" => Some(Self::ToolsCall),
            "prompts/list" => Some(Self::PromptsList),
            "prompts/get" => Some(Self::PromptsGet),
            "completion/complete" => Some(Self::Complete),
            "resources/list" => Some(Self::ResourcesList),
            "resources/templates/list" => Some(Self::ResourcesTemplatesList),
            "resources/read" => Some(Self::ResourcesRead),
            "subscriptions/listen" => Some(Self::SubscriptionsListen),
            "tasks/get" => Some(Self::TasksGet),
            "tasks/update" => Some(Self::TasksUpdate),
            "tasks/cancel" => Some(Self::TasksCancel),
            _ => None,
        }
    }
}

/// `requested` for the unsupported-version error: the header value when it is a short,
/// plain token, otherwise empty (the field is required by the schema; an arbitrary value is
/// never echoed).
fn requested_version(value: &str) -> &str {
    let plain = value.len() <= 32
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    if plain { value } else { "" }
}

fn unsupported_version(endpoint: &Endpoint, id: Option<&RequestId>, requested: &str) -> Reply {
    let data = JsonObject::builder()
        .insert("supported", endpoint.inner.supported_json.clone())
        .insert("requested", requested_version(requested))
        .build();
    fault_reply(id, Fault::UnsupportedVersion, Some(data.into()))
}

/// Where a message came from: an HTTP POST (its headers and peer) or a stdio line, and where
/// its notifications go.
#[derive(Clone, Copy)]
pub(crate) struct Transport<'a> {
    caller: Caller<'a>,
    sink: Option<&'a NotificationSink>,
}

impl<'a> Transport<'a> {
    pub(crate) fn http(
        headers: &'a HeaderMap,
        peer: Option<IpAddr>,
        sink: Option<&'a NotificationSink>,
    ) -> Self {
        Self {
            caller: Caller {
                headers: Some(headers),
                peer,
            },
            sink,
        }
    }

    pub(crate) fn stdio(sink: Option<&'a NotificationSink>) -> Self {
        Self {
            caller: Caller::default(),
            sink,
        }
    }

    pub(crate) fn headers(self) -> Option<&'a HeaderMap> {
        self.caller.headers
    }

    pub(crate) fn caller(self) -> Caller<'a> {
        self.caller
    }

    pub(crate) fn sink(self) -> Option<&'a NotificationSink> {
        self.sink
    }
}

/// 1. Strict JSON under every input limit.
pub(crate) fn parse(endpoint: &Endpoint, body: &[u8]) -> Result<JsonValue, Reply> {
    from_slice(body, &endpoint.inner.limits.json).map_err(|_| fault_reply(None, Fault::Parse, None))
}

/// Whether a parsed request asks for progress (`params._meta.progressToken`).
pub(crate) fn asks_for_progress(value: &JsonValue) -> bool {
    value
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("progressToken"))
        .is_some()
}

/// Handles a parsed body.
pub(crate) async fn handle_value(
    endpoint: &Endpoint,
    headers: &HeaderMap,
    peer: Option<IpAddr>,
    value: &JsonValue,
    sink: Option<&NotificationSink>,
) -> Reply {
    let transport = Transport::http(headers, peer, sink);
    // A client's response to a server-to-client request (2025 sessions only; elsewhere a
    // response is an invalid request).
    if let (Some(object), true) = (
        value.as_object(),
        endpoint.inner.sessions.is_some() && headers.contains_key(crate::legacy::SESSION_ID),
    ) {
        if !object.contains_key("method")
            && object.contains_key("id")
            && (object.contains_key("result") || object.contains_key("error"))
        {
            return crate::legacy::client_response(endpoint, transport.caller(), object);
        }
    }
    // 2. Envelope.
    let message = match envelope(value) {
        Ok(m) => m,
        Err(id) => return fault_reply(id.as_ref(), Fault::InvalidRequest, None),
    };
    // The 2025 revisions, when served: `initialize`, or a request naming one of them (in its
    // header, or through its session).
    if let Some(revision) = crate::legacy::selects(endpoint, headers, &message) {
        return crate::legacy::handle(endpoint, transport, message, revision).await;
    }
    if message.id.is_none() {
        return notification(endpoint, transport, &message);
    }
    modern(endpoint, transport, message).await
}

/// A 2026-07-28 request (it has an id). Over HTTP its headers are checked against the body; over
/// stdio the body's `_meta` alone names the revision.
pub(crate) async fn modern(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    message: Envelope,
) -> Reply {
    let limits = &endpoint.inner.limits;
    let id = message.id.clone();
    let id = id.as_ref();
    // 3. A revision header naming a revision not served here is answered first, with the list
    //    to retry from, whatever the method.
    if let Some(headers) = transport.headers() {
        if let Ok(Some(version)) = headers::single(headers, headers::PROTOCOL_VERSION) {
            let served = ProtocolVersion::from_wire(version)
                .is_some_and(|v| endpoint.inner.revisions.contains(v));
            if !served {
                return unsupported_version(endpoint, id, version);
            }
        }
    }
    // 4. Method: removed and unknown methods are 404 / -32601.
    let Some(method) = Method::of(&message.method) else {
        return fault_reply(id, Fault::MethodNotFound, None);
    };
    // 5. Standard headers agree with the body (HTTP only).
    let version_header = match transport.headers() {
        Some(headers) => match standard_headers(headers, &message, method, limits) {
            Ok(version) => Some(version),
            Err(()) => return fault_reply(id, Fault::HeaderMismatch, None),
        },
        None => None,
    };
    // 6. Required `_meta`.
    let Some(params) = &message.params else {
        return fault_reply(id, Fault::InvalidParams, None);
    };
    let Some(JsonValue::Object(meta)) = params.get("_meta") else {
        return fault_reply(id, Fault::InvalidParams, None);
    };
    let (Some(JsonValue::String(body_version)), Some(JsonValue::Object(capabilities))) = (
        meta.get(META_PROTOCOL_VERSION),
        meta.get(META_CLIENT_CAPABILITIES),
    ) else {
        return fault_reply(id, Fault::InvalidParams, None);
    };
    let client_info = match meta.get(META_CLIENT_INFO) {
        None => None,
        Some(JsonValue::Object(info)) => match ClientInfo::from_object(info.clone()) {
            Some(info) => Some(info),
            None => return fault_reply(id, Fault::InvalidParams, None),
        },
        Some(_) => return fault_reply(id, Fault::InvalidParams, None),
    };
    let log_level = match meta.get("io.modelcontextprotocol/logLevel") {
        None => None,
        Some(v) => match v.as_str().and_then(crate::features::LogLevel::from_wire) {
            Some(level) => Some(level),
            None => return fault_reply(id, Fault::InvalidParams, None),
        },
    };
    // 7. Revision selection: the header's (which the body must repeat), or the body's on stdio.
    let requested = match version_header {
        Some(header) if body_version.as_str() != header => {
            return fault_reply(id, Fault::HeaderMismatch, None);
        }
        Some(header) => header,
        None => body_version.as_str(),
    };
    let revision = match ProtocolVersion::from_wire(requested) {
        Some(v) if endpoint.inner.revisions.contains(v) && !is_legacy(v) => v,
        _ => return unsupported_version(endpoint, id, requested),
    };
    let facts = RequestFacts {
        protocol_version: revision,
        client_info,
        client_capabilities: ClientCapabilities::from_json(capabilities.clone()),
        meta: meta.clone(),
        log_level,
    };
    let mut context = RequestContext::admitted(
        endpoint.inner.path.clone(),
        &message.method,
        message.id.clone(),
        facts,
    );
    // 8. Admission and the request limiter, for every method, seeing the operation's name, and
    //    before anything below answers from the endpoint's state.
    context.operation_name = operation_name(&message.method, params);
    if let Err(reply) = admit(endpoint, transport.caller(), &mut context) {
        return reply;
    }
    // 9. A method whose capability this endpoint does not advertise on this revision does not
    //    exist here.
    let offered = match method {
        Method::PromptsList | Method::PromptsGet => endpoint.offers_prompts(revision),
        Method::Complete => endpoint.offers_completions(revision),
        Method::ResourcesList | Method::ResourcesTemplatesList | Method::ResourcesRead => {
            endpoint.offers_resources(revision)
        }
        Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
            endpoint.inner.tasks.is_some()
        }
        _ => true,
    };
    if !offered {
        return fault_reply(id, Fault::MethodNotFound, None);
    }
    // 10. The method's handler: lookup, operation checks and limiter, validation, invocation.
    match method {
        Method::Discover => discover(endpoint, revision, id),
        Method::ToolsList => tools_list(endpoint, revision, params, id),
        Method::ToolsCall => tools_call(endpoint, transport, params, context).await,
        Method::PromptsList => prompts_list(endpoint, revision, params, id),
        Method::PromptsGet => prompts_get(endpoint, transport, params, context).await,
        Method::Complete => completion_complete(endpoint, params, context).await,
        Method::ResourcesList => one_page(revision, params, id, &endpoint.inner.resource_pages),
        Method::ResourcesTemplatesList => {
            one_page(revision, params, id, &endpoint.inner.template_pages)
        }
        Method::ResourcesRead => resources_read(endpoint, params, context).await,
        Method::SubscriptionsListen => {
            crate::subscription::listen(endpoint, transport, params, &context).await
        }
        Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
            let Some(tasks) = endpoint.inner.tasks.as_deref() else {
                return fault_reply(id, Fault::MethodNotFound, None);
            };
            match method {
                Method::TasksGet => crate::task::get(endpoint, tasks, params, &context).await,
                Method::TasksUpdate => crate::task::update(endpoint, tasks, params, &context).await,
                _ => crate::task::cancel(endpoint, tasks, params, &context).await,
            }
        }
    }
}

/// `MCP-Protocol-Version` and `Mcp-Method` once each, `Mcp-Method` equal to the body's method,
/// and for `tools/call` `Mcp-Name` equal to `params.name` (after base64-sentinel decoding).
/// Returns the revision header's value.
fn standard_headers<'h>(
    headers: &'h HeaderMap,
    message: &Envelope,
    method: Method,
    limits: &crate::endpoint::EndpointLimits,
) -> Result<&'h str, ()> {
    let version = headers::single(headers, headers::PROTOCOL_VERSION)?.ok_or(())?;
    let method_header = headers::single(headers, headers::METHOD)?.ok_or(())?;
    if method_header != message.method.as_str() {
        return Err(());
    }
    let name_source = match method {
        Method::ToolsCall | Method::PromptsGet => Some("name"),
        Method::ResourcesRead => Some("uri"),
        Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => Some("taskId"),
        _ => None,
    };
    if let Some(source) = name_source {
        // `Mcp-Name` mirrors `params.name`, `params.uri` for a resource read, `params.taskId`
        // for the tasks methods.
        let body_name = message
            .params
            .as_ref()
            .and_then(|p| p.get(source))
            .and_then(JsonValue::as_str)
            .ok_or(())?;
        let header = headers::single(headers, headers::NAME)?.ok_or(())?;
        if !headers::agrees(header, body_name, limits.json.max_input_bytes()) {
            return Err(());
        }
    }
    Ok(version)
}

/// A notification: this revision defines none over HTTP, so an accepted one is a bare 202.
/// Its protocol version header must still name a served revision, and it is admitted like any
/// request (a refusal is the status alone).
fn notification(endpoint: &Endpoint, transport: Transport<'_>, message: &Envelope) -> Reply {
    let served = transport
        .headers()
        .and_then(|h| headers::single(h, headers::PROTOCOL_VERSION).ok().flatten())
        .and_then(ProtocolVersion::from_wire)
        .filter(|v| endpoint.inner.revisions.contains(*v));
    let Some(revision) = served else {
        return Reply::empty(StatusCode::BAD_REQUEST);
    };
    let mut context = RequestContext::admitted(
        endpoint.inner.path.clone(),
        &message.method,
        None,
        RequestFacts::bare(revision),
    );
    match admit(endpoint, transport.caller(), &mut context) {
        Ok(()) => Reply::empty(StatusCode::ACCEPTED),
        Err(reply) => reply,
    }
}

/// The name of the operation a request names in its parameters, as sent (before any lookup):
/// the tool or prompt name, the resource URI, the completion reference's name or URI.
pub(crate) fn operation_name(method: &JsonString, params: &JsonObject) -> Option<JsonString> {
    let from = |object: &JsonObject, key: &str| match object.get(key) {
        Some(JsonValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    match method.as_str() {
        "tools/call" | "prompts/get" => from(params, "name"),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => from(params, "uri"),
        "completion/complete" => match params.get("ref") {
            Some(JsonValue::Object(r)) => from(r, "name").or_else(|| from(r, "uri")),
            _ => None,
        },
        _ => None,
    }
}

pub(crate) fn discover(
    endpoint: &Endpoint,
    revision: ProtocolVersion,
    id: Option<&RequestId>,
) -> Reply {
    match (&endpoint.inner.discover[revision_slot(revision)], id) {
        (Some(result), Some(id)) => result_reply(id, result),
        _ => fault_reply(id, Fault::Internal, None),
    }
}

pub(crate) fn tools_list(
    endpoint: &Endpoint,
    revision: ProtocolVersion,
    params: &JsonObject,
    id: Option<&RequestId>,
) -> Reply {
    let pages = &endpoint.inner.tool_pages[revision_slot(revision)];
    let page = match params.get("cursor") {
        None => 0,
        Some(JsonValue::String(cursor)) => match endpoint.page_of(cursor, pages.len()) {
            Some(page) => page,
            None => return fail(revision, id, Fault::InvalidCursor, None),
        },
        Some(_) => return fail(revision, id, Fault::InvalidParams, None),
    };
    match (pages.get(page), id) {
        (Some(result), Some(id)) => result_reply(id, result),
        _ => fault_reply(id, Fault::Internal, None),
    }
}

/// `prompts/list`: one page per revision, rendered when the endpoint was built. Prompt
/// catalogs are not paginated, so any cursor is one this endpoint did not issue.
pub(crate) fn prompts_list(
    endpoint: &Endpoint,
    revision: ProtocolVersion,
    params: &JsonObject,
    id: Option<&RequestId>,
) -> Reply {
    one_page(revision, params, id, &endpoint.inner.prompt_pages)
}

/// A catalog rendered as one page per revision when the endpoint was built: any cursor is one
/// this endpoint did not issue.
pub(crate) fn one_page(
    revision: ProtocolVersion,
    params: &JsonObject,
    id: Option<&RequestId>,
    pages: &[Option<Vec<u8>>; 3],
) -> Reply {
    match params.get("cursor") {
        None => {}
        Some(JsonValue::String(_)) => return fail(revision, id, Fault::InvalidCursor, None),
        Some(_) => return fail(revision, id, Fault::InvalidParams, None),
    }
    match (&pages[revision_slot(revision)], id) {
        (Some(result), Some(id)) => result_reply(id, result),
        _ => fault_reply(id, Fault::Internal, None),
    }
}

/// `resources/read`: an exact resource, else the first matching template; its handler; the
/// contents (never empty). An unknown URI is "Resource not found" in each revision's code, and
/// the URI is not echoed.
pub(crate) async fn resources_read(
    endpoint: &Endpoint,
    params: &JsonObject,
    mut context: RequestContext,
) -> Reply {
    let id = context.request_id.clone();
    let id = id.as_ref();
    let revision = context.protocol_version;
    let Some(JsonValue::String(uri)) = params.get("uri") else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    let retry = match retry_params(params, revision) {
        Ok(retry) => retry,
        Err(fault) => return fail(revision, id, fault, None),
    };
    let not_found = if is_legacy(revision) {
        Fault::ResourceNotFound2025
    } else {
        Fault::ResourceNotFound
    };
    let inner = &endpoint.inner;
    let (registration, request) =
        match crate::resource::route(uri, revision, &inner.resources, &inner.templates) {
            Some(Route::Exact(r)) => (&r.inner, ResourceRequest::for_test(uri, [])),
            Some(Route::Template(t, variables)) => {
                (&t.inner, ResourceRequest::routed(uri, variables))
            }
            None => return fail(revision, id, not_found, None),
        };
    context.operation_name = Some(uri.clone());
    // Request state for a read is bound to its URI (it has no other arguments).
    let bound = JsonObject::new();
    if let Some((responses, state)) = retry {
        match open_input(
            endpoint,
            &context,
            "resources/read",
            uri,
            &bound,
            responses,
            state,
        ) {
            Ok(input) => context.input = Some(Arc::new(input)),
            Err(fault) => return fail(revision, id, fault, None),
        }
    }
    let (features, guard) = fresh_features();
    let invocation = guarded(|| registration.handler.invoke(&context, request, &features))
        .await
        .flatten();
    guard.disarm();
    let output = match invocation {
        Some(ResourceOutcome::Complete(output)) => output,
        Some(ResourceOutcome::InputRequired(required)) => {
            return input_required(endpoint, &context, "resources/read", uri, &bound, &required);
        }
        None => return fail(revision, id, Fault::Internal, None),
    };
    if output.is_not_found() {
        return fail(revision, id, not_found, None);
    }
    let mut contents = Vec::with_capacity(output.contents().len());
    for c in output.contents() {
        match c.render() {
            Ok(value) => contents.push(value),
            Err(_) => return fail(revision, id, Fault::Internal, None),
        }
    }
    let mut out = JsonObject::builder();
    if !is_legacy(revision) {
        out.push("resultType", "complete");
    }
    out.push("contents", JsonValue::from(contents));
    if !is_legacy(revision) {
        registration
            .cache()
            .unwrap_or(inner.cache)
            .push_into(&mut out);
    }
    tree_reply(endpoint, revision, id, out)
}

/// Writes a result built as a tree under the endpoint's output limits (`-32603` past them).
fn tree_reply(
    endpoint: &Endpoint,
    revision: ProtocolVersion,
    id: Option<&RequestId>,
    result: JsonObjectBuilder,
) -> Reply {
    let Some(id) = id else {
        return fault_reply(None, Fault::Internal, None);
    };
    let mut body = Vec::with_capacity(256);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    let limits = &endpoint.inner.limits.output;
    let written = put(&id.to_json(), &mut body, limits).and_then(|()| {
        body.extend_from_slice(br#","result":"#);
        put(&result.build().into(), &mut body, limits)
    });
    match written {
        Ok(()) => {
            body.push(b'}');
            Reply::json(StatusCode::OK, body)
        }
        Err(Overflow) => fail(revision, Some(id), Fault::Internal, None),
    }
}

/// `prompts/get`: the prompt, its arguments checked against its declarations (missing,
/// unknown and non-string ones are -32602 before any handler runs), the handler, the messages.
pub(crate) async fn prompts_get(
    endpoint: &Endpoint,
    _transport: Transport<'_>,
    params: &JsonObject,
    mut context: RequestContext,
) -> Reply {
    let id = context.request_id.clone();
    let id = id.as_ref();
    let revision = context.protocol_version;
    let Some(JsonValue::String(name)) = params.get("name") else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    let retry = match retry_params(params, revision) {
        Ok(retry) => retry,
        Err(fault) => return fail(revision, id, fault, None),
    };
    let Some(prompt) = endpoint.prompt(name, revision) else {
        return fail(revision, id, Fault::UnknownPrompt, None);
    };
    context.operation_name = Some(name.clone());
    let Some(arguments) = PromptArguments::check(params.get("arguments"), prompt.arguments())
    else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    // The arguments as sent, for binding request state.
    let raw_arguments = match params.get("arguments") {
        Some(JsonValue::Object(a)) => a.clone(),
        _ => JsonObject::new(),
    };
    if let Some((responses, state)) = retry {
        match open_input(
            endpoint,
            &context,
            "prompts/get",
            name,
            &raw_arguments,
            responses,
            state,
        ) {
            Ok(input) => context.input = Some(Arc::new(input)),
            Err(fault) => return fail(revision, id, fault, None),
        }
    }
    let (features, guard) = fresh_features();
    let invocation = guarded(|| prompt.inner.handler.invoke(&context, arguments, &features))
        .await
        .flatten();
    guard.disarm();
    let result = match invocation {
        Some(PromptOutcome::Complete(result)) => result,
        Some(PromptOutcome::InputRequired(required)) => {
            return input_required(
                endpoint,
                &context,
                "prompts/get",
                name,
                &raw_arguments,
                &required,
            );
        }
        None => return fail(revision, id, Fault::Internal, None),
    };
    let Some(messages) = crate::prompt::render_messages(result.messages(), revision) else {
        return fail(revision, id, Fault::Internal, None);
    };
    let mut out = JsonObject::builder();
    if !is_legacy(revision) {
        out.push("resultType", "complete");
    }
    if let Some(description) = result.get_description() {
        out.push("description", description);
    }
    out.push("messages", messages);
    tree_reply(endpoint, revision, id, out)
}

/// `completion/complete` for a prompt argument: the prompt's completion handler, or no values
/// when it has none. Resource-template references are refused (Tollgate serves no resources).
pub(crate) async fn completion_complete(
    endpoint: &Endpoint,
    params: &JsonObject,
    mut context: RequestContext,
) -> Reply {
    let id = context.request_id.clone();
    let id = id.as_ref();
    let revision = context.protocol_version;
    let (Some(JsonValue::Object(reference)), Some(JsonValue::Object(argument))) =
        (params.get("ref"), params.get("argument"))
    else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    let (Some(JsonValue::String(argument_name)), Some(JsonValue::String(value))) =
        (argument.get("name"), argument.get("value"))
    else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    let (Some("ref/prompt"), Some(JsonValue::String(name))) = (
        reference.get("type").and_then(JsonValue::as_str),
        reference.get("name"),
    ) else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    let Some(prompt) = endpoint.prompt(name, revision) else {
        return fail(revision, id, Fault::UnknownPrompt, None);
    };
    if !prompt
        .arguments()
        .iter()
        .any(|a| a.name() == argument_name.as_str())
    {
        return fail(revision, id, Fault::InvalidParams, None);
    }
    // Context: already-chosen values of the prompt's other declared arguments, all strings.
    let mut chosen = Vec::new();
    match params.get("context").map(|c| c.get("arguments")) {
        None | Some(None) => {}
        Some(Some(JsonValue::Object(given))) => {
            for (k, v) in given.iter() {
                let declared = prompt.arguments().iter().any(|a| a.name() == k.as_str());
                match v.as_str() {
                    Some(v) if declared => chosen.push((Arc::from(k.as_str()), Arc::from(v))),
                    _ => return fail(revision, id, Fault::InvalidParams, None),
                }
            }
        }
        Some(Some(_)) => return fail(revision, id, Fault::InvalidParams, None),
    }
    context.operation_name = Some(name.clone());
    let completion = match &prompt.inner.completion {
        None => Some(Completion::empty()),
        Some(handler) => {
            let request = CompletionRequest::new(argument_name, value, chosen);
            guarded(|| handler.invoke(&context, request))
                .await
                .flatten()
        }
    };
    let Some(completion) = completion else {
        return fail(revision, id, Fault::Internal, None);
    };
    let mut out = JsonObject::builder();
    if !is_legacy(revision) {
        out.push("resultType", "complete");
    }
    out.push("completion", completion.render());
    tree_reply(endpoint, revision, id, out)
}

/// Starts a handler's future and drives it to its end, turning a panic (while starting or while
/// polling) into `None`.
pub(crate) async fn guarded<'a, T>(start: impl FnOnce() -> BoxFuture<'a, T>) -> Option<T> {
    match std::panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(future) => CatchUnwind(future).await,
        Err(_) => None,
    }
}

/// Fresh invocation features for a handler, and the guard that fires their cancellation token
/// if the request is abandoned before the handler finishes (disarm it after).
fn fresh_features() -> (InvocationFeatures, CancelOnDrop) {
    let token = CancellationToken::new();
    let guard = CancelOnDrop::new(token.clone());
    (InvocationFeatures::new(token), guard)
}

/// Polls a boxed future, turning a panic into `None`.
struct CatchUnwind<'a, T>(BoxFuture<'a, T>);

impl<T> Future for CatchUnwind<'_, T> {
    type Output = Option<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Some(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(None),
        }
    }
}

/// Arguments that fail the schema, its budget or binding: the fixed `isError` result, except on
/// 2025-06-18, which keeps its JSON-RPC -32602.
fn invalid_arguments(
    endpoint: &Endpoint,
    revision: ProtocolVersion,
    id: Option<&RequestId>,
) -> Reply {
    if revision == ProtocolVersion::V2025_06_18 {
        return fail(revision, id, Fault::InvalidParams, None);
    }
    complete(
        endpoint,
        revision,
        id,
        &CompleteResult::from_tool_error_text(INVALID_ARGUMENTS_TEXT),
    )
}

pub(crate) async fn tools_call(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    params: &JsonObject,
    mut context: RequestContext,
) -> Reply {
    let limits = &endpoint.inner.limits;
    let id = context.request_id.clone();
    let id = id.as_ref();
    let revision = context.protocol_version;
    // Parameters.
    let Some(JsonValue::String(name)) = params.get("name") else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    let arguments = match params.get("arguments") {
        None => JsonObject::new(),
        Some(JsonValue::Object(a)) => a.clone(),
        Some(_) => return fail(revision, id, Fault::InvalidParams, None),
    };
    let retry = match retry_params(params, revision) {
        Ok(retry) => retry,
        Err(fault) => return fail(revision, id, fault, None),
    };
    // Tool lookup (admission already ran, seeing the name as sent).
    let Some(tool) = endpoint.tool(name, revision) else {
        return fail(revision, id, Fault::UnknownTool, None);
    };
    context.operation_name = Some(name.clone());
    // Required client capabilities, all missing ones reported together.
    let caps = &context.client_capabilities;
    // Tasks: offered on 2026-07-28, by an endpoint with a store, to a client declaring the
    // extension on this call; a tool that requires them refuses a call that cannot have one.
    let tasks_here = match &endpoint.inner.tasks {
        Some(tasks)
            if !is_legacy(revision)
                && tool.inner.task_support != crate::task::TaskSupport::Forbidden
                && caps.extension(crate::task::TASKS_EXTENSION) =>
        {
            Some(tasks.clone())
        }
        _ => None,
    };
    let tasks_missing =
        tool.inner.task_support == crate::task::TaskSupport::Required && tasks_here.is_none();
    if tasks_missing
        || tool
            .inner
            .required_capabilities
            .iter()
            .any(|c| !caps.declares(c))
    {
        let extension = ClientCapability::Extension(crate::task::TASKS_EXTENSION.into());
        return missing_capabilities(
            revision,
            id,
            tool.inner
                .required_capabilities
                .iter()
                .filter(|c| !caps.declares(c))
                .chain(tasks_missing.then_some(&extension)),
        );
    }
    // Mirrored arguments agree with their headers (HTTP only: other transports have none).
    if let Some(headers) = transport.headers() {
        if !headers::mirrored_arguments_agree(
            headers,
            tool.inner.input.mirrored_headers(),
            &arguments,
        ) {
            return fail(revision, id, Fault::HeaderMismatch, None);
        }
    }
    // The tool's limiter.
    if let Err(reply) = charge_tool(endpoint, &context, tool.inner.rate_limiter.as_deref()) {
        return reply;
    }
    // Request state: opened and verified against this request before anything else uses it.
    if let Some((responses, state)) = retry {
        // A typed tool always completes: it never issued state to come back to.
        if tool.inner.output.is_some() {
            return fail(revision, id, Fault::InvalidRequestState, None);
        }
        match open_input(
            endpoint,
            &context,
            "tools/call",
            name,
            &arguments,
            responses,
            state,
        ) {
            Ok(input) => context.input = Some(Arc::new(input)),
            Err(fault) => return fail(revision, id, fault, None),
        }
    }
    // Input validation.
    let arguments_value = JsonValue::Object(arguments.clone());
    match tool
        .inner
        .input
        .validate_in(&arguments_value, limits.gate())
    {
        Ok(()) => {}
        Err(e) if e.kind() == ValidationErrorKind::Busy => {
            return fail(revision, id, Fault::Busy, None);
        }
        Err(_) => return invalid_arguments(endpoint, revision, id),
    }
    let JsonValue::Object(validated) = arguments_value else {
        return fail(revision, id, Fault::Internal, None);
    };
    // Handler.
    let (mut features, guard) = fresh_features();
    let progress_token = context.meta.get("progressToken").filter(|t| {
        matches!(t, JsonValue::String(_))
            || t.as_number()
                .is_some_and(tollgate_json::JsonNumber::is_integer)
    });
    if let (Some(token), Some(sink)) = (progress_token, transport.sink()) {
        features = features.with(ProgressReporter::new(token.clone(), sink.clone()));
    }
    if let (true, Some(level), Some(sink)) =
        (endpoint.inner.logging, context.log_level, transport.sink())
    {
        features = features.with(crate::features::RequestLogger::new(level, sink.clone()));
    }
    if let Some(NotificationSink::Stream(stream)) = transport.sink() {
        if stream.may_close_connection() {
            features = features.with(crate::stream::ResponseStream::new(stream.clone()));
        }
        // A 2025 session can carry server-to-client requests on this call's stream.
        if let (true, Some(session)) = (is_legacy(revision), stream.session()) {
            features = features.with(crate::client_request::ClientRequests::new(
                stream.clone(),
                session,
                context.client_capabilities.clone(),
            ));
        }
    }
    let mut task_serial = None;
    if let Some(tasks) = tasks_here {
        let creation = crate::task::TaskCreation::new(
            tasks,
            endpoint.clone(),
            crate::task::owner_of(endpoint, &context),
            tool.inner.name.clone(),
        );
        task_serial = Some(creation.serial());
        features = features.with(creation);
    }
    let invocation = guarded(|| {
        tool.inner
            .invoker
            .invoke(&context, validated, &features, &limits.bind)
    })
    .await;
    guard.disarm();
    let result = match invocation {
        Some(Ok(Invocation::Structured(value))) => match structured(tool, value, limits) {
            Ok(result) => result,
            Err(fault) => return fail(revision, id, fault, None),
        },
        Some(Ok(Invocation::Operation(OperationResult::Complete(result)))) => result,
        Some(Ok(Invocation::Operation(OperationResult::InputRequired(required)))) => {
            return input_required(
                endpoint,
                &context,
                "tools/call",
                name,
                &arguments,
                &required,
            );
        }
        Some(Ok(Invocation::Operation(OperationResult::TaskCreated(created)))) => {
            // Only a task this very call created: a handle kept from another call, or made
            // where tasks were not offered, is an application contract failure.
            if task_serial != Some(created.serial) {
                return fail(revision, id, Fault::Internal, None);
            }
            return tree_reply(
                endpoint,
                revision,
                id,
                crate::task::created_result(&created).to_builder(),
            );
        }
        Some(Err(InvokeFailure::InvalidArguments)) => {
            return invalid_arguments(endpoint, revision, id);
        }
        Some(Err(InvokeFailure::Handler)) | None => {
            return fail(revision, id, Fault::Internal, None);
        }
    };
    complete(endpoint, revision, id, &result)
}

/// A retry's fields: `inputResponses` an object, `requestState` a string, and only where
/// multi-round-trip requests exist (2026-07-28). Responses without state are the protocol's
/// ephemeral flow: client input like the arguments, unbound to any request Tollgate issued.
#[allow(
    clippy::type_complexity,
    reason = "a private pair of optional borrowed fields"
)]
fn retry_params(
    params: &JsonObject,
    revision: ProtocolVersion,
) -> Result<Option<(Option<&JsonObject>, Option<&JsonString>)>, Fault> {
    match (params.get("inputResponses"), params.get("requestState")) {
        (None, None) => Ok(None),
        _ if is_legacy(revision) => Err(Fault::InvalidParams),
        (Some(JsonValue::Object(responses)), Some(JsonValue::String(state))) => {
            Ok(Some((Some(responses), Some(state))))
        }
        (None, Some(JsonValue::String(state))) => Ok(Some((None, Some(state)))),
        (Some(JsonValue::Object(responses)), None) => Ok(Some((Some(responses), None))),
        _ => Err(Fault::InvalidParams),
    }
}

/// Opens a retry's `requestState` for this tool call and keeps the responses to the inputs it
/// asked for (shape-checked; other keys are ignored, as the protocol asks).
fn open_input(
    endpoint: &Endpoint,
    context: &RequestContext,
    method: &str,
    name: &str,
    arguments: &JsonObject,
    responses: Option<&JsonObject>,
    state: Option<&JsonString>,
) -> Result<crate::context::InputContext, Fault> {
    let Some(state) = state else {
        // No state: every response must at least be an object; the handler reads what it
        // recognises and ignores the rest.
        let responses = responses.cloned().unwrap_or_default();
        if responses.iter().any(|(_, v)| v.as_object().is_none()) {
            return Err(Fault::InvalidParams);
        }
        return Ok(crate::context::InputContext {
            responses,
            state: JsonValue::Null,
            round: 0,
            verified: false,
        });
    };
    let key = endpoint
        .inner
        .state_key
        .as_ref()
        .ok_or(Fault::InvalidRequestState)?;
    let binding = crate::state::Binding {
        endpoint: &endpoint.inner.path,
        method,
        name,
        arguments,
        principal: context.admission.principal_name(),
    };
    let opened = crate::state::open(key, &binding, state, std::time::SystemTime::now())
        .map_err(|_| Fault::InvalidRequestState)?;
    let mut kept = JsonObject::builder();
    if let Some(responses) = responses {
        for (key, method) in &opened.asked {
            let Some(response) = responses.get(key) else {
                continue;
            };
            if !input_response_shape(method, response) {
                return Err(Fault::InvalidParams);
            }
            kept.push(key.as_str(), response.clone());
        }
    }
    Ok(crate::context::InputContext {
        responses: kept.build(),
        state: opened.state,
        round: opened.round,
        verified: true,
    })
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

/// Renders an `input_required` result: 2026-07-28 only; every input's client capability
/// declared (all missing ones reported together, -32021); a sealed `requestState` always, one
/// round further, within the round limit.
fn input_required(
    endpoint: &Endpoint,
    context: &RequestContext,
    method: &str,
    name: &str,
    arguments: &JsonObject,
    required: &crate::input::InputRequiredResult,
) -> Reply {
    let revision = context.protocol_version;
    let id = context.request_id.as_ref();
    if is_legacy(revision) || !required.is_well_formed() {
        return fail(revision, id, Fault::Internal, None);
    }
    let caps = &context.client_capabilities;
    let mut missing: Vec<&crate::context::ClientCapability> = Vec::new();
    for (_, request) in required.input_requests() {
        if !caps.declares(request.capability()) && !missing.contains(&request.capability()) {
            missing.push(request.capability());
        }
    }
    if !missing.is_empty() {
        return missing_capabilities(revision, id, missing.into_iter());
    }
    let round = context.input_round().saturating_add(1);
    if round > crate::state::MAX_REQUEST_STATE_ROUNDS {
        return fail(revision, id, Fault::InvalidRequestState, None);
    }
    let Some(key) = endpoint.inner.state_key.as_ref() else {
        return fail(revision, id, Fault::Internal, None);
    };
    let binding = crate::state::Binding {
        endpoint: &endpoint.inner.path,
        method,
        name,
        arguments,
        principal: context.admission.principal_name(),
    };
    let opened = crate::state::Opened {
        round,
        asked: required
            .input_requests()
            .map(|(k, r)| (k.to_owned(), r.method().to_owned()))
            .collect(),
        state: required.state.clone().unwrap_or(JsonValue::Null),
    };
    let Some(sealed) = crate::state::seal(key, &binding, &opened, std::time::SystemTime::now())
    else {
        return fail(revision, id, Fault::Internal, None);
    };
    let mut out = JsonObject::builder().insert("resultType", "input_required");
    if required.input_requests().next().is_some() {
        let mut requests = JsonObject::builder();
        for (key, request) in required.input_requests() {
            requests.push(key, request.render());
        }
        out.push("inputRequests", requests.build());
    }
    out.push("requestState", sealed);
    tree_reply(endpoint, revision, id, out)
}

/// A typed tool's output: validated against the derived output schema, then wrapped with its
/// optional text mirror.
fn structured(
    tool: &ToolRegistration,
    value: JsonValue,
    limits: &crate::endpoint::EndpointLimits,
) -> Result<CompleteResult, Fault> {
    if let Some(schema) = &tool.inner.output {
        match schema.validate_in(&value, limits.gate()) {
            Ok(()) => {}
            Err(e) if e.kind() == ValidationErrorKind::Busy => return Err(Fault::Busy),
            Err(_) => return Err(Fault::Internal),
        }
    }
    let mut output = ToolOutput::builder();
    if tool.inner.text_mirror {
        let text = tollgate_json::to_string(&value, &limits.output).map_err(|_| Fault::Internal)?;
        output = output.add_content(TextContent::new(text));
    }
    Ok(CompleteResult::with_tool_output(output.structured_content(value).build()).build())
}

/// Renders a completed `tools/call` result under the output limits.
fn complete(
    endpoint: &Endpoint,
    revision: ProtocolVersion,
    id: Option<&RequestId>,
    result: &CompleteResult,
) -> Reply {
    let Some(id) = id else {
        return fault_reply(None, Fault::Internal, None);
    };
    let mut body = Vec::with_capacity(256);
    match write_complete(
        &mut body,
        &endpoint.inner.limits.output,
        revision,
        id,
        result,
    ) {
        Ok(()) => Reply::json(StatusCode::OK, body),
        Err(Overflow) => fail(revision, Some(id), Fault::Internal, None),
    }
}

/// The response cannot be written within the output contract (size, string or depth limits, an
/// oversized inline item, or a value the revision cannot carry).
struct Overflow;

/// Appends `value`, keeping the whole response within the byte limit (each write is bounded by
/// it too, so the buffer never grows past twice the limit).
fn put(value: &JsonValue, out: &mut Vec<u8>, limits: &OutputLimits) -> Result<(), Overflow> {
    write_into(value, out, limits).map_err(|_| Overflow)?;
    if out.len() > limits.max_output_bytes() {
        Err(Overflow)
    } else {
        Ok(())
    }
}

/// Writes a completed `tools/call` response straight into `out`, without building a tree for
/// the envelope.
fn write_complete(
    out: &mut Vec<u8>,
    limits: &OutputLimits,
    revision: ProtocolVersion,
    id: &RequestId,
    result: &CompleteResult,
) -> Result<(), Overflow> {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    put(&id.to_json(), out, limits)?;
    out.extend_from_slice(br#","result":"#);
    write_result_object(out, limits, revision, result)?;
    out.push(b'}');
    if out.len() > limits.max_output_bytes() {
        Err(Overflow)
    } else {
        Ok(())
    }
}

/// A completed tool result rendered alone (a task's stored result), under `limits`.
pub(crate) fn render_tool_result(
    limits: &OutputLimits,
    revision: ProtocolVersion,
    result: &CompleteResult,
) -> Option<Arc<str>> {
    let mut out = Vec::with_capacity(256);
    write_result_object(&mut out, limits, revision, result).ok()?;
    String::from_utf8(out).ok().map(Arc::from)
}

/// Writes a `CallToolResult` object into `out`.
fn write_result_object(
    out: &mut Vec<u8>,
    limits: &OutputLimits,
    revision: ProtocolVersion,
    result: &CompleteResult,
) -> Result<(), Overflow> {
    let legacy = is_legacy(revision);
    let output = result.tool_output();
    out.extend_from_slice(if legacy {
        br#"{"content":["#
    } else {
        br#"{"resultType":"complete","content":["#
    });
    for (i, block) in output.content().iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        block
            .write_into(revision, out, limits)
            .map_err(|_| Overflow)?;
        if out.len() > limits.max_output_bytes() {
            return Err(Overflow);
        }
    }
    out.push(b']');
    if let Some(structured) = output.structured_content() {
        // The 2025 revisions can only carry an object: anything else fails the projection,
        // never wrapped or dropped.
        if legacy && structured.as_object().is_none() {
            return Err(Overflow);
        }
        out.extend_from_slice(br#","structuredContent":"#);
        put(structured, out, limits)?;
    }
    if output.is_error() {
        out.extend_from_slice(br#","isError":true"#);
    }
    if let Some(meta) = result.meta() {
        out.extend_from_slice(br#","_meta":"#);
        put(&JsonValue::Object(meta.clone()), out, limits)?;
    }
    out.push(b'}');
    if out.len() > limits.max_output_bytes() {
        Err(Overflow)
    } else {
        Ok(())
    }
}
