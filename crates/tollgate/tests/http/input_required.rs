//! `input_required` results and sealed request state over real HTTP: the round trip, what the
//! handler sees, refusals of altered, foreign and exhausted state, capability checks, the 2025
//! revisions, and the size bound.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;

use support::{Response, post, start};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str, to_string};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    content::ContentErrorKind,
    context::{ClientCapability, InputRequest, InputRequiredResult},
    endpoint::{RequestStateKey, RequestStateKeyRing},
    policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest},
    tool::{
        CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement,
        MissingCapabilities, OperationResult, RequestStateMode,
    },
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

/// Finds, as it runs, that it needs an extension and elicitation.
async fn needs(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let missing = MissingCapabilities::new([
        ClientCapability::Extension("com.example/feeds".into()),
        ClientCapability::Elicitation,
    ]);
    Ok(missing.map_or_else(|| CompleteResult::from_tool_text("?").into(), Into::into))
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

/// Elicitation (conditional), sampling and roots, as `everything` asks for them.
fn declarations() -> Vec<InputRequestDeclaration> {
    [
        InputRequestKind::Elicitation,
        InputRequestKind::Sampling,
        InputRequestKind::Roots,
    ]
    .into_iter()
    .map(|k| InputRequestDeclaration::new(k, InputRequirement::Conditional))
    .collect()
}

fn service() -> McpService {
    let both = [V26, V1125];
    let tool = |name: &str| ToolRegistration::with_name(name, [V26]).json_object_arguments();
    let asking = |builder: tollgate::tool::ToolBuilder| {
        builder
            .input_request_declarations(declarations())
            .request_state_mode(RequestStateMode::FrameworkProtected)
            .build()
            .unwrap()
    };
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
            .add_tool(asking(tool("greet").handler(greet)))
            .add_tool(asking(tool("other").handler(greet)))
            .add_tool(asking(tool("forever").handler(forever)))
            .add_tool(asking(tool("everything").handler(everything)))
            .add_tool(asking(tool("huge").handler(huge)))
            .add_tool(asking(tool("duplicate").handler(duplicate)))
            .add_tool(
                ToolRegistration::with_name("needs", both)
                    .json_object_arguments()
                    .handler(needs)
                    .build()
                    .unwrap(),
            )
            // Asks without declaring, on both revisions.
            .add_tool(
                ToolRegistration::with_name("undeclared", both)
                    .json_object_arguments()
                    .handler(forever)
                    .build()
                    .unwrap(),
            )
            // Declares only roots, and asks for elicitation too.
            .add_tool(
                tool("roots_only")
                    .handler(everything)
                    .input_request_declarations([InputRequestDeclaration::new(
                        InputRequestKind::Roots,
                        InputRequirement::Conditional,
                    )])
                    .build()
                    .unwrap(),
            )
            // Needs elicitation on every call; keeps no state.
            .add_tool(
                tool("must_elicit")
                    .handler(forever)
                    .input_request_declarations([InputRequestDeclaration::new(
                        InputRequestKind::Elicitation,
                        InputRequirement::Required,
                    )])
                    .build()
                    .unwrap(),
            )
            // Declares elicitation but keeps state without a state mode.
            .add_tool(
                tool("stateless")
                    .handler(greet)
                    .input_request_declarations(declarations())
                    .build()
                    .unwrap(),
            )
            .add_tool(
                tool("app_state")
                    .handler(app_state)
                    .input_request_declarations(declarations())
                    .request_state_mode(RequestStateMode::ApplicationProtected)
                    .build()
                    .unwrap(),
            )
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

/// One instance of a deployment whose `greet` seals its state with the ring `keys` (text form).
fn instance(keys: &str) -> McpService {
    McpService::new(
        Endpoint::with_path("/mcp", [V26], Implementation::new("input", "1"))
            .admission(admit)
            .request_state_keys(RequestStateKeyRing::parse(keys).unwrap())
            .add_tool(
                ToolRegistration::with_name("greet", [V26])
                    .json_object_arguments()
                    .handler(greet)
                    .input_request_declarations(declarations())
                    .request_state_mode(RequestStateMode::FrameworkProtected)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    )
}

/// Application-protected state: `{"size":n}` asks with a state of n bytes; a retry reports
/// what it saw.
async fn app_state(
    ctx: &RequestContext,
    args: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    if ctx.input_responses().is_none() && ctx.application_request_state().is_none() {
        let size = args
            .raw()
            .get("size")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_u64())
            .unwrap_or(8);
        let state = "s".repeat(usize::try_from(size).unwrap());
        return Ok(InputRequiredResult::with_input_request("name", ask())
            .application_state(state)
            .into());
    }
    let seen = JsonObject::builder()
        .insert("state", ctx.application_request_state())
        .insert("verified", ctx.input_verified())
        .insert("framework", ctx.request_state().cloned())
        .insert(
            "responses",
            ctx.input_responses().cloned().unwrap_or_default(),
        )
        .build();
    Ok(CompleteResult::from_tool_structured_content(seen).into())
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
    // A tool asks only for what it declared: nothing at all, or roots but not elicitation.
    for tool in ["undeclared", "roots_only"] {
        let caps = r#"{"elicitation":{},"roots":{},"sampling":{}}"#;
        let resp = call(addr, "alice", tool, "{}", "", caps).await;
        assert_eq!((resp.status, resp.code()), (200, -32603), "{tool}");
        assert!(!resp.text().contains("inputRequests"), "{tool}");
    }
    // 2025-11-25 has no multi-round-trip requests: a tool that may ask cannot select it, and
    // one that asks anyway fails there too.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"undeclared","arguments":{}}}"#;
    let headers = [("MCP-Protocol-Version", "2025-11-25"), ("X-User", "alice")];
    let resp = post(addr, &headers, body.as_bytes()).await;
    assert_eq!((resp.status, resp.code()), (200, -32603));
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"undeclared","arguments":{},"requestState":"x"}}"#;
    let resp = post(addr, &headers, body.as_bytes()).await;
    assert_eq!(resp.code(), -32602);
}

#[tokio::test]
async fn declared_requirements_are_checked_before_the_handler() {
    let addr = start(service()).await;
    // Required: refused before the handler when the client lacks the capability.
    let resp = call(addr, "alice", "must_elicit", "{}", "", "{}").await;
    assert_eq!((resp.status, resp.code()), (400, -32021));
    assert!(
        resp.text()
            .contains(r#""data":{"requiredCapabilities":{"elicitation":{}}}"#),
        "{}",
        resp.text()
    );
    let resp = call(addr, "alice", "must_elicit", "{}", "", ELICIT).await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    // Conditional: checked when the handler asks (`greet` asks for elicitation).
    let resp = call(addr, "alice", "greet", "{}", "", "{}").await;
    assert_eq!((resp.status, resp.code()), (400, -32021));
}

#[tokio::test]
async fn state_modes_are_enforced() {
    let addr = start(service()).await;
    // No state mode: a result carrying state is a contract failure.
    let resp = call(addr, "alice", "stateless", "{}", "", ELICIT).await;
    assert_eq!((resp.status, resp.code()), (200, -32603));
    // Application-protected: the state goes out and comes back exactly as given, unopened;
    // the responses are unverified input.
    let first = call(addr, "alice", "app_state", r#"{"size":12}"#, "", ELICIT).await;
    assert_eq!(state_of(&first), "ssssssssssss");
    let retry = r#""inputResponses":{"name":{"action":"decline"}},"requestState":"opaque-token""#;
    let second = call(addr, "alice", "app_state", r#"{"size":12}"#, retry, ELICIT).await;
    assert_eq!(
        to_string(
            second.result().get("structuredContent").unwrap(),
            &Default::default()
        )
        .unwrap(),
        r#"{"state":"opaque-token","verified":false,"framework":null,"responses":{"name":{"action":"decline"}}}"#
    );
    // Its bounds: 1 to 65,536 bytes out and back; an empty one, or one more byte, is refused
    // either way, never echoed.
    let empty = call(addr, "alice", "app_state", r#"{"size":0}"#, "", ELICIT).await;
    assert_eq!((empty.status, empty.code()), (200, -32603));
    let resp = call(
        addr,
        "alice",
        "app_state",
        "{}",
        r#""requestState":"""#,
        ELICIT,
    )
    .await;
    assert_eq!((resp.status, resp.code()), (400, -32602));
    let one = call(addr, "alice", "app_state", r#"{"size":1}"#, "", ELICIT).await;
    assert_eq!(state_of(&one), "s");
    let max = tollgate::context::MAX_APPLICATION_STATE_BYTES;
    let at = call(
        addr,
        "alice",
        "app_state",
        &format!(r#"{{"size":{max}}}"#),
        "",
        ELICIT,
    )
    .await;
    assert_eq!(state_of(&at).len(), max);
    let past = format!(r#"{{"size":{}}}"#, max + 1);
    let resp = call(addr, "alice", "app_state", &past, "", ELICIT).await;
    assert_eq!((resp.status, resp.code()), (200, -32603));
    let back = format!(r#""requestState":"{}""#, "t".repeat(max));
    let resp = call(addr, "alice", "app_state", "{}", &back, ELICIT).await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    let back = format!(r#""requestState":"{}""#, "t".repeat(max + 1));
    let resp = call(addr, "alice", "app_state", "{}", &back, ELICIT).await;
    assert_eq!((resp.status, resp.code()), (400, -32602));
    assert!(!resp.text().contains("tttt"));
}

#[test]
fn declarations_need_a_handler_that_can_ask() {
    let err = ToolRegistration::with_name("typed", [V26])
        .argument_and_output_types::<Nothing, Done>()
        .handler(typed)
        .request_state_mode(RequestStateMode::FrameworkProtected)
        .build()
        .unwrap_err();
    assert_eq!(
        err.kind(),
        tollgate::BuildErrorKind::InvalidInputDeclarations
    );
    let err = ToolRegistration::with_name("typed", [V26])
        .argument_and_output_types::<Nothing, Done>()
        .handler(typed)
        .input_request_declarations(declarations())
        .build()
        .unwrap_err();
    assert_eq!(
        err.kind(),
        tollgate::BuildErrorKind::InvalidInputDeclarations
    );
    // Declaring a kind twice keeps the last requirement; an empty list clears them.
    let tool = ToolRegistration::with_name("t", [V26])
        .json_object_arguments()
        .handler(forever)
        .input_request_declarations([
            InputRequestDeclaration::new(InputRequestKind::Roots, InputRequirement::Required),
            InputRequestDeclaration::new(InputRequestKind::Roots, InputRequirement::Conditional),
        ])
        .build()
        .unwrap();
    assert_eq!(
        tool.input_request_declarations(),
        [InputRequestDeclaration::new(
            InputRequestKind::Roots,
            InputRequirement::Conditional
        )]
    );
    let cleared = ToolRegistration::with_name("t", [V26])
        .json_object_arguments()
        .handler(forever)
        .input_request_declarations(declarations())
        .input_request_declarations([])
        .build()
        .unwrap();
    assert!(cleared.input_request_declarations().is_empty());
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

/// Key rotation as a deployment of several instances sees it: a call started on an instance
/// whose ring is `[k1]` finishes on one rotated to `[k2, k1]`; one that retired k1 (`[k2]`)
/// refuses it with the fixed answer, without echoing the state.
#[tokio::test]
async fn a_call_in_flight_survives_key_rotation_and_retirement_refuses_it() {
    let hex = |seed: u8| -> String {
        (0u8..32)
            .map(|i| {
                format!(
                    "{:02x}",
                    i.wrapping_mul(41).wrapping_add(seed.wrapping_mul(89))
                )
            })
            .collect()
    };
    let k1 = format!("k1=hex:{}", hex(1));
    let k2 = format!("k2=hex:{}", hex(2));
    let before = start(instance(&k1)).await;
    let rotated = start(instance(&format!("{k2},{k1}"))).await;
    let retired = start(instance(&k2)).await;
    let retry = |state: &str| {
        format!(
            r#""inputResponses":{{"name":{{"action":"accept","content":{{"name":"Ada"}}}}}},"requestState":"{state}""#
        )
    };
    let greet = |addr, extra: String| async move {
        call(addr, "alice", "greet", r#"{"x":1}"#, &extra, ELICIT).await
    };

    // Started before the rotation; finished on a rotated instance: k1 still opens.
    let by_k1 = state_of(&greet(before, String::new()).await);
    let done = greet(rotated, retry(&by_k1)).await;
    assert_eq!(done.status, 200, "{}", done.text());
    assert!(done.text().contains(r#""round":1"#), "{}", done.text());
    // After k1 is retired, its state is refused with the fixed answer, never echoed.
    let refused = greet(retired, retry(&by_k1)).await;
    assert_eq!((refused.status, refused.code()), (400, -32602));
    assert_eq!(refused.message(), "Invalid request state");
    assert!(!refused.text().contains(&by_k1));
    // Sealed by k2: rotated and retired instances open it; one that does not know k2 refuses.
    let by_k2 = state_of(&greet(rotated, String::new()).await);
    for addr in [rotated, retired] {
        let done = greet(addr, retry(&by_k2)).await;
        assert_eq!(done.status, 200, "{}", done.text());
    }
    let unknown = greet(before, retry(&by_k2)).await;
    assert_eq!((unknown.status, unknown.code()), (400, -32602));
}

#[tokio::test]
async fn a_handler_names_capabilities_it_finds_missing() {
    let addr = start(service()).await;
    // Neither declared: the endpoint's own -32021, both named.
    let resp = call(addr, "alice", "needs", "{}", "", "{}").await;
    assert_eq!((resp.status, resp.code()), (400, -32021));
    assert!(
        resp.text().contains(
            r#""data":{"requiredCapabilities":{"elicitation":{},"extensions":{"com.example/feeds":{}}}}"#
        ),
        "{}",
        resp.text()
    );
    // Naming one the caller declared is the handler's contract failure.
    let declared = r#"{"extensions":{"com.example/feeds":{}}}"#;
    let resp = call(addr, "alice", "needs", "{}", "", declared).await;
    assert_eq!((resp.status, resp.code()), (200, -32603));
    // 2025-11-25: the same refusal, in a 200 answer.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"needs","arguments":{}}}"#;
    let headers = [("MCP-Protocol-Version", "2025-11-25"), ("X-User", "alice")];
    let resp = post(addr, &headers, body.as_bytes()).await;
    assert_eq!((resp.status, resp.code()), (200, -32021));
}
