//! The whole in-process request pipeline: arbitrary headers and body through the tower service
//! of an endpoint serving all three revisions. Every answer must be a status the transport
//! defines and, when there is a body, JSON whose error code (if any) is one Tollgate emits.
//! Input: header lines `Name: value`, an empty line, then the body; a first line `@GET` or
//! `@DELETE` changes the method (a `GET` that opens an event stream is not read to its end).
//! The endpoint's admission controller admits callers without `Authorization` anonymously,
//! `Bearer <name>` as that principal, refuses `Bearer eve` (403) and any other `Authorization`
//! (401), so the session paths (requests, notifications, responses, `GET`, `DELETE`) run with
//! refused, foreign and owning principals.
#![no_main]

use std::convert::Infallible;
use std::sync::OnceLock;

use bytes::Bytes;
use http_body_util::Full;
use libfuzzer_sys::fuzz_target;
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_slice, from_str};
use tollgate::{
    policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest},
    tool::{CompleteResult, OperationResult},
    prompt::{Completion, CompletionRequest, PromptArgument, PromptArguments, PromptMessage, PromptRegistration, PromptResult},
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration, content::{ResourceContents, TextContent},
    resource::{ResourceOutput, ResourceRequest, ResourceTemplateRegistration},
};

fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
    match request.header("authorization").map(|h| h.strip_prefix("Bearer ")) {
        None => AdmissionDecision::admit(AdmissionIdentity::anonymous()),
        Some(Some("eve")) => AdmissionDecision::forbidden(),
        Some(Some(name)) if !name.is_empty() && name.len() <= 16 => AdmissionDecision::admit(AdmissionIdentity::principal(name)),
        Some(_) => AdmissionDecision::unauthorized(),
    }
}

async fn echo(_: &RequestContext, a: ToolArguments<JsonObject>, _: &InvocationFeatures) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_structured_content(a.raw().clone()).into())
}

/// A task when the client takes one (finishing at once), inline otherwise.
async fn job(_: &RequestContext, a: ToolArguments<JsonObject>, f: &InvocationFeatures) -> Result<OperationResult, tollgate::task::TaskError> {
    let Some(tasks) = f.find::<tollgate::task::TaskCreation>() else {
        return Ok(CompleteResult::from_tool_structured_content(a.raw().clone()).into());
    };
    let raw = a.raw().clone();
    Ok(tasks.spawn(move |_| async move { Ok(CompleteResult::from_tool_structured_content(raw)) }).await?.into())
}

async fn prompt(_: &RequestContext, a: PromptArguments, _: &InvocationFeatures) -> Result<PromptResult, Infallible> {
    Ok(PromptResult::with_message(PromptMessage::user(TextContent::new(a.get("a").unwrap_or_default()))))
}

async fn complete(_: &RequestContext, r: CompletionRequest) -> Result<Completion, Infallible> {
    Ok(Completion::from_values([r.value().to_owned()]))
}

async fn read(_: &RequestContext, r: ResourceRequest, _: &InvocationFeatures) -> Result<ResourceOutput, tollgate::content::ContentError> {
    Ok(ResourceOutput::with_contents(ResourceContents::text(r.uri(), None, r.variable("id").unwrap_or_default())?))
}

fn service() -> &'static (McpService, tokio::runtime::Runtime) {
    static SERVICE: OnceLock<(McpService, tokio::runtime::Runtime)> = OnceLock::new();
    SERVICE.get_or_init(|| {
        let all = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18];
        let modern = [ProtocolVersion::V2026_07_28];
        let limits = JsonLimits::default();
        let typed = from_str(r#"{"type":"object","properties":{"n":{"type":"integer","minimum":0},"s":{"type":"string"}},"required":["n"],"additionalProperties":false}"#, &limits).unwrap_or(JsonValue::Null);
        let mirrored = from_str(r#"{"type":"object","properties":{"t":{"type":"string","x-mcp-header":"T"},"c":{"type":"integer","x-mcp-header":"C"},"b":{"type":"boolean","x-mcp-header":"B"}}}"#, &limits).unwrap_or(JsonValue::Null);
        let mut endpoint = Endpoint::with_path("/mcp", all, Implementation::new("fuzz", "1"))
            .admission(admit)
            .tools_page_size(1)
            .task_store(tollgate::task::InMemoryTaskStore::with_capacity(64));
        if let Ok(t) = ToolRegistration::with_name("job", all).json_object_arguments().handler(job).task_support(tollgate::tool::TaskSupport::Optional).build() {
            endpoint = endpoint.add_tool(t);
        }
        if let Ok(t) = ToolRegistration::with_name("echo", all).json_object_arguments().handler(echo).build() {
            endpoint = endpoint.add_tool(t);
        }
        if let Ok(stage) = ToolRegistration::with_name("typed", all).input_schema(&typed) {
            if let Ok(t) = stage.handler(echo).build() {
                endpoint = endpoint.add_tool(t);
            }
        }
        if let Ok(stage) = ToolRegistration::with_name("mirrored", modern).input_schema(&mirrored) {
            if let Ok(t) = stage.handler(echo).build() {
                endpoint = endpoint.add_tool(t);
            }
        }
        if let Ok(p) = PromptRegistration::with_name("p", all).handler(prompt).add_argument(PromptArgument::required("a")).completion(complete).build() {
            endpoint = endpoint.add_prompt(p);
        }
        if let Ok(r) = ResourceTemplateRegistration::with_uri_template("test://items/{id}", "item", all).handler(read).build() {
            endpoint = endpoint.add_resource_template(r);
        }
        if let Ok(skill) = tollgate::skill::SkillRegistration::builder("fuzz-skill")
            .file("SKILL.md", "---\nname: fuzz-skill\ndescription: A skill to fuzz.\n---\n# Skill\n")
            .file("references/A.md", "a")
            .build()
        {
            endpoint = endpoint.add_skill(skill);
        }
        let endpoint = endpoint.build().unwrap_or_else(|e| panic!("fixture endpoint: {e}"));
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap_or_else(|e| panic!("{e}"));
        (McpService::new(endpoint), runtime)
    })
}

const ALLOWED_STATUSES: [u16; 12] = [200, 202, 400, 401, 403, 404, 405, 406, 415, 429, 431, 503];
const ALLOWED_CODES: [i64; 12] = [-32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022, -32002, -32001, -32003, -31999];

fuzz_target!(|data: &[u8]| {
    let split = data.windows(2).position(|w| w == b"\n\n").unwrap_or(data.len());
    let (head, body) = (&data[..split], data.get(split + 2..).unwrap_or(&[]));
    let method = match head.split(|b| *b == b'\n').next() {
        Some(b"@GET") => http::Method::GET,
        Some(b"@DELETE") => http::Method::DELETE,
        _ => http::Method::POST,
    };
    let mut request = http::Request::builder().method(method).uri("/mcp").header("host", "127.0.0.1:8080").header("content-type", "application/json");
    for line in head.split(|b| *b == b'\n') {
        if let Some(colon) = line.iter().position(|b| *b == b':') {
            let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
            if let (Ok(name), Ok(value)) = (http::HeaderName::from_bytes(name), http::HeaderValue::from_bytes(value)) {
                request = request.header(name, value);
            }
        }
    }
    let Ok(request) = request.body(Full::new(Bytes::copy_from_slice(body))) else {
        return;
    };
    let (service, runtime) = service();
    let response = runtime.block_on(service.serve(request));
    let status = response.status().as_u16();
    assert!(ALLOWED_STATUSES.contains(&status), "status {status}");
    let streaming = response.headers().get("content-type").is_some_and(|v| v.as_bytes() == b"text/event-stream");
    if streaming && status == 200 {
        // An event stream: notifications, then the response; a GET stream never ends by itself.
        return;
    }
    let bytes = runtime.block_on(http_body_util::BodyExt::collect(response.into_body())).map(|b| b.to_bytes()).unwrap_or_default();
    if bytes.is_empty() {
        return;
    }
    let value = from_slice(&bytes, &JsonLimits::default()).unwrap_or_else(|e| panic!("response is not JSON: {e}"));
    if let Some(code) = value.get("error").and_then(|e| e.get("code")).and_then(JsonValue::as_number) {
        let code = code.to_i64().unwrap_or(0);
        assert!(ALLOWED_CODES.contains(&code), "code {code}");
    }
});
