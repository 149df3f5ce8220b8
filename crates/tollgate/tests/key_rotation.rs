//! Request-state key rotation over HTTP, as a deployment of several instances sees it: a
//! multi-round call started on an instance whose ring is `[k1]` is finished on one rotated to
//! `[k2, k1]`; an instance that has retired k1 (`[k2]`) refuses it with the revision's fixed
//! answer, without echoing the state; rings load from the environment's text form.

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
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    context::{InputRequest, InputRequiredResult},
    endpoint::RequestStateKeyRing,
    tool::{
        CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement,
        OperationResult, RequestStateMode,
    },
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;

fn hex(seed: u8) -> String {
    (0u8..32)
        .map(|i| {
            format!(
                "{:02x}",
                i.wrapping_mul(41).wrapping_add(seed.wrapping_mul(89))
            )
        })
        .collect()
}

/// Asks for a name once, then answers with what it was given.
async fn greet(
    ctx: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    if ctx.input_responses().is_none() {
        let schema = from_str(
            r#"{"type":"object","properties":{"name":{"type":"string"}}}"#,
            &JsonLimits::default(),
        )
        .unwrap();
        let ask = InputRequest::elicitation("Name?", schema.as_object().cloned().unwrap());
        return Ok(InputRequiredResult::with_input_request("name", ask)
            .state(JsonValue::from("s1"))
            .into());
    }
    Ok(CompleteResult::from_tool_text(format!("round {}", ctx.input_round())).into())
}

/// One instance of the deployment, its ring from `keys` (the text form).
async fn instance(keys: &str) -> SocketAddr {
    let ring = RequestStateKeyRing::parse(keys).unwrap();
    let tool = ToolRegistration::with_name("greet", [V26])
        .json_object_arguments()
        .handler(greet)
        .input_request_declarations([InputRequestDeclaration::new(
            InputRequestKind::Elicitation,
            InputRequirement::Conditional,
        )])
        .request_state_mode(RequestStateMode::FrameworkProtected)
        .build()
        .unwrap();
    let endpoint = Endpoint::with_path("/mcp", [V26], Implementation::new("rotation", "1"))
        .request_state_keys(ring)
        .add_tool(tool)
        .build()
        .unwrap();
    start(McpService::new(endpoint)).await
}

async fn call(addr: SocketAddr, extra: &str) -> Response {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"greet","arguments":{{}}{extra},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"elicitation":{{}}}}}}}}}}"#
    );
    post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "greet"),
        ],
        body.as_bytes(),
    )
    .await
}

fn retry(state: &str) -> String {
    format!(
        r#","inputResponses":{{"name":{{"action":"accept","content":{{"name":"Ada"}}}}}},"requestState":"{state}""#
    )
}

fn state_of(resp: &Response) -> String {
    resp.result()
        .get("requestState")
        .and_then(JsonValue::as_str)
        .unwrap_or_else(|| panic!("no state: {}", resp.text()))
        .to_owned()
}

#[tokio::test]
async fn a_call_in_flight_survives_rotation_and_retirement_refuses_it() {
    let k1 = format!("k1=hex:{}", hex(1));
    let k2 = format!("k2=hex:{}", hex(2));
    let before = instance(&k1).await;
    let rotated = instance(&format!("{k2},{k1}")).await;
    let retired = instance(&k2).await;

    // Started before the rotation, on an instance with k1 alone.
    let by_k1 = state_of(&call(before, "").await);
    // Finished on a rotated instance: k1 still opens.
    let done = call(rotated, &retry(&by_k1)).await;
    assert_eq!(done.status, 200, "{}", done.text());
    assert!(done.text().contains("round 1"), "{}", done.text());
    // After k1 is retired, its state is refused with the fixed answer, never echoed.
    let refused = call(retired, &retry(&by_k1)).await;
    assert_eq!((refused.status, refused.code()), (400, -32602));
    assert_eq!(refused.message(), "Invalid request state");
    assert!(!refused.text().contains(&by_k1));

    // Started after the rotation (sealed by k2): every rotated or retired instance opens it;
    // one that does not know k2 yet refuses it.
    let by_k2 = state_of(&call(rotated, "").await);
    for addr in [rotated, retired] {
        let done = call(addr, &retry(&by_k2)).await;
        assert_eq!(done.status, 200, "{}", done.text());
    }
    let unknown = call(before, &retry(&by_k2)).await;
    assert_eq!((unknown.status, unknown.code()), (400, -32602));
}
