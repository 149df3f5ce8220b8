//! `input_required` results and sealed request state over real HTTP: the round trip, what the
//! handler sees, refusals of altered, foreign and exhausted state, capability checks, the 2025
//! revisions, and the size bound.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

mod support;

use std::convert::Infallible;
use std::net::SocketAddr;

use support::{Response, post, start};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str, to_string};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    content::ContentErrorKind,
    context::{InputRequest, InputRequiredResult},
    endpoint::RequestStateKey,
    policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest},
    tool::{CompleteResult, OperationResult},
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;

fn object(text: &str) -> JsonObject {
    from_str(text, &JsonLimits::default())
        .unwrap()
        .as_object()
        .cloned()
        .unwrap()
}

fn ask() -> InputRequest {
    InputRequest::elicitation(
        "Name?",
        object(r#"{"type":"object","properties":{"name":{"type":"string"}}}"#),
    )
}

/// Asks for a name (with state "s1"); on a retry reports what it saw.
async fn greet(
    ctx: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    if ctx.input_round() == 0 && ctx.input_responses().is_none() {
        return Ok(InputRequiredResult::with_input_request("name", ask())
            .state(JsonValue::from("s1"))
            .into());
    }
    let seen = JsonObject::builder()
        .insert("round", u64::from(ctx.input_round()))
        .insert(
            "responses",
            ctx.input_responses().cloned().unwrap_or_default(),
        )
        .insert("state", ctx.request_state().cloned())
        .build();
    Ok(CompleteResult::from_tool_structured_content(seen).into())
}

/// Asks again, forever.
async fn forever(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(InputRequiredResult::with_input_request("name", ask()).into())
}

/// Asks for everything at once.
async fn everything(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let sample = InputRequest::sampling(object(
        r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}"#,
    ))
    .unwrap();
    Ok(InputRequiredResult::with_input_request("a", ask())
        .add_input_request("b", sample)
        .add_input_request("c", InputRequest::list_roots())
        .into())
}

/// State past the size bound.
async fn huge(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(InputRequiredResult::with_state(JsonValue::from("x".repeat(70_000))).into())
}

/// Duplicate keys.
async fn duplicate(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(InputRequiredResult::with_input_request("k", ask())
        .add_input_request("k", InputRequest::list_roots())
        .into())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Done {
    done: bool,
}

async fn typed(
    _: &RequestContext,
    _: ToolArguments<Nothing>,
    _: &InvocationFeatures,
) -> Result<Done, Infallible> {
    Ok(Done { done: true })
}

fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
    let who = request.header("x-user").unwrap_or("anon").to_owned();
    AdmissionDecision::admit(AdmissionIdentity::principal(who))
}

fn service() -> McpService {
    let both = [V26, V1125];
    let tool = |name: &str| ToolRegistration::with_name(name, both).json_object_arguments();
    McpService::new(
        Endpoint::with_path("/mcp", both, Implementation::new("input", "1"))
            .legacy_sessions(None)
            .admission(admit)
            .request_state_key(
                RequestStateKey::from_secret(
                    &(0u8..32)
                        .map(|i| i.wrapping_mul(29) ^ 9)
                        .collect::<Vec<u8>>(),
                )
                .unwrap(),
            )
            .add_tool(tool("greet").handler(greet).build().unwrap())
            .add_tool(tool("other").handler(greet).build().unwrap())
            .add_tool(tool("forever").handler(forever).build().unwrap())
            .add_tool(tool("everything").handler(everything).build().unwrap())
            .add_tool(tool("huge").handler(huge).build().unwrap())
            .add_tool(tool("duplicate").handler(duplicate).build().unwrap())
            .add_tool(
                ToolRegistration::with_name("typed", both)
                    .argument_and_output_types::<Nothing, Done>()
                    .handler(typed)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    )
}

/// A 2026-07-28 tools/call with `extra` params (no braces) and client `capabilities`.
async fn call(
    addr: SocketAddr,
    user: &str,
    tool: &str,
    arguments: &str,
    extra: &str,
    capabilities: &str,
) -> Response {
    let sep = if extra.is_empty() { "" } else { "," };
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}{sep}{extra},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{capabilities}}}}}}}"#
    );
    post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
            ("X-User", user),
        ],
        body.as_bytes(),
    )
    .await
}

const ELICIT: &str = r#"{"elicitation":{}}"#;

fn state_of(resp: &Response) -> String {
    resp.result()
        .get("requestState")
        .and_then(JsonValue::as_str)
        .unwrap_or_else(|| panic!("no state: {}", resp.text()))
        .to_owned()
}

#[tokio::test]
async fn a_round_trip_hands_the_handler_what_it_asked_for() {
    let addr = start(service()).await;
    let first = call(addr, "alice", "greet", r#"{"x":1}"#, "", ELICIT).await;
    assert_eq!(first.status, 200, "{}", first.text());
    let result = first.result();
    assert_eq!(
        result.get("resultType").and_then(JsonValue::as_str),
        Some("input_required")
    );
    assert_eq!(
        to_string(result.get("inputRequests").unwrap(), &Default::default()).unwrap(),
        r#"{"name":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}"#
    );
    let state = state_of(&first);
    // The retry: the arguments re-ordered, an extra unrequested key.
    let retry = format!(
        r#""inputResponses":{{"name":{{"action":"accept","content":{{"name":"Ada"}}}},"extra":{{"action":"accept"}}}},"requestState":"{state}""#
    );
    let second = call(addr, "alice", "greet", r#"{"x":1}"#, &retry, ELICIT).await;
    assert_eq!(second.status, 200, "{}", second.text());
    assert_eq!(
        to_string(
            second.result().get("structuredContent").unwrap(),
            &Default::default()
        )
        .unwrap(),
        r#"{"round":1,"responses":{"name":{"action":"accept","content":{"name":"Ada"}}},"state":"s1"}"#
    );
    // A response of the wrong shape for its method is refused.
    let bad =
        format!(r#""inputResponses":{{"name":{{"action":"maybe"}}}},"requestState":"{state}""#);
    let resp = call(addr, "alice", "greet", r#"{"x":1}"#, &bad, ELICIT).await;
    assert_eq!((resp.status, resp.code()), (400, -32602));
    // The ephemeral flow: responses without state are unverified input, all keys visible.
    let ephemeral = r#""inputResponses":{"name":{"action":"decline"},"z":{"a":1}}"#;
    let resp = call(addr, "alice", "greet", r#"{"x":1}"#, ephemeral, ELICIT).await;
    assert!(
        resp.text().contains(
            r#""round":0,"responses":{"name":{"action":"decline"},"z":{"a":1}},"state":null"#
        ),
        "{}",
        resp.text()
    );
    let not_objects = r#""inputResponses":{"name":12345}"#;
    let resp = call(addr, "alice", "greet", r#"{"x":1}"#, not_objects, ELICIT).await;
    assert_eq!((resp.status, resp.code()), (400, -32602));
}

#[tokio::test]
async fn state_opens_only_on_its_own_request() {
    let addr = start(service()).await;
    let state = state_of(&call(addr, "alice", "greet", r#"{"x":1}"#, "", ELICIT).await);
    let with = |s: &str| format!(r#""requestState":"{s}""#);
    let mut tampered = state.clone().into_bytes();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    for (user, tool, arguments, presented, why) in [
        ("alice", "greet", r#"{"x":1}"#, tampered.as_str(), "altered"),
        (
            "alice",
            "greet",
            r#"{"x":2}"#,
            state.as_str(),
            "other arguments",
        ),
        (
            "alice",
            "other",
            r#"{"x":1}"#,
            state.as_str(),
            "another tool",
        ),
        (
            "bob",
            "greet",
            r#"{"x":1}"#,
            state.as_str(),
            "another principal",
        ),
        (
            "alice",
            "typed",
            "{}",
            state.as_str(),
            "a typed tool never issues state",
        ),
        (
            "alice",
            "greet",
            r#"{"x":1}"#,
            "bm90IGEgc3RhdGU=",
            "not a state",
        ),
    ] {
        let resp = call(addr, user, tool, arguments, &with(presented), ELICIT).await;
        assert_eq!((resp.status, resp.code()), (400, -32602), "{why}");
        assert_eq!(resp.message(), "Invalid request state", "{why}");
        assert!(
            !resp.text().contains(presented),
            "{why}: the state is not echoed"
        );
    }
    // The right request still opens it.
    let ok = call(addr, "alice", "greet", r#"{"x":1}"#, &with(&state), ELICIT).await;
    assert_eq!(ok.status, 200, "{}", ok.text());
}

#[tokio::test]
async fn rounds_are_bounded() {
    let addr = start(service()).await;
    let mut state = state_of(&call(addr, "alice", "forever", "{}", "", ELICIT).await);
    for round in 2..=10 {
        let resp = call(
            addr,
            "alice",
            "forever",
            "{}",
            &format!(r#""requestState":"{state}""#),
            ELICIT,
        )
        .await;
        assert_eq!(resp.status, 200, "round {round}: {}", resp.text());
        state = state_of(&resp);
    }
    let eleventh = call(
        addr,
        "alice",
        "forever",
        "{}",
        &format!(r#""requestState":"{state}""#),
        ELICIT,
    )
    .await;
    assert_eq!((eleventh.status, eleventh.code()), (400, -32602));
}

#[tokio::test]
async fn every_missing_capability_is_reported_together() {
    let addr = start(service()).await;
    let resp = call(addr, "alice", "everything", "{}", "", r#"{"sampling":{}}"#).await;
    assert_eq!((resp.status, resp.code()), (400, -32021));
    assert!(
        resp.text()
            .contains(r#""data":{"requiredCapabilities":{"elicitation":{},"roots":{}}}"#),
        "{}",
        resp.text()
    );
    let all = call(
        addr,
        "alice",
        "everything",
        "{}",
        "",
        r#"{"sampling":{},"elicitation":{},"roots":{}}"#,
    )
    .await;
    assert_eq!(all.status, 200, "{}", all.text());
}

#[tokio::test]
async fn contract_failures_and_the_2025_revisions() {
    let addr = start(service()).await;
    for tool in ["huge", "duplicate"] {
        let resp = call(
            addr,
            "alice",
            tool,
            "{}",
            "",
            r#"{"elicitation":{},"roots":{}}"#,
        )
        .await;
        assert_eq!((resp.status, resp.code()), (200, -32603), "{tool}");
    }
    // 2025-11-25 has no multi-round-trip requests: the result cannot be carried there.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{}}}"#;
    let headers = [("MCP-Protocol-Version", "2025-11-25"), ("X-User", "alice")];
    let resp = post(addr, &headers, body.as_bytes()).await;
    assert_eq!((resp.status, resp.code()), (200, -32603));
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{},"requestState":"x"}}"#;
    let resp = post(addr, &headers, body.as_bytes()).await;
    assert_eq!(resp.code(), -32602);
}

#[test]
fn sampling_requests_are_checked_at_construction() {
    for bad in [
        r#"{"messages":[],"maxTokens":5}"#,
        r#"{"messages":[{}],"maxTokens":0}"#,
        r#"{"maxTokens":5}"#,
    ] {
        let err = InputRequest::sampling(object(bad)).unwrap_err();
        assert_eq!(err.kind(), ContentErrorKind::InvalidInputRequest, "{bad}");
    }
}
