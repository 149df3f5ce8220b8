//! Server-to-client requests on the 2025 revisions over real HTTP: the request on the call's
//! (or the prompt's, or the read's) SSE stream, the client's POSTed response resuming the
//! handler, cancellation, and every refusal.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;

use support::{Open, post, post_request, start};
use tollgate::json::{JsonObject, to_string};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    content::{ContentError, ResourceContents, TextContent},
    context::{ClientRequestError, ClientRequests, InputRequest, ProgressReporter},
    prompt::{PromptArguments, PromptMessage, PromptRegistration, PromptResult},
    resource::{ResourceOutput, ResourceRegistration, ResourceRequest},
    tool::{
        CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement,
        OperationResult,
    },
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;

/// Asks the client for its roots and reports the answer (or why there was none).
async fn ask_roots(features: &InvocationFeatures) -> String {
    let Some(client) = features.find::<ClientRequests>() else {
        return "no client requests here".to_owned();
    };
    match client.send(InputRequest::list_roots()).await {
        Ok(answer) => format!(
            "roots: {}",
            to_string(&answer, &Default::default()).unwrap()
        ),
        Err(ClientRequestError::MissingCapability) => "missing capability".to_owned(),
        Err(ClientRequestError::Rejected) => "rejected".to_owned(),
        Err(ClientRequestError::Undeclared) => "undeclared".to_owned(),
        Err(e) => format!("unavailable: {e}"),
    }
}

async fn roots(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text(ask_roots(features).await).into())
}

/// A prompt that declares nothing and asks for roots all the same (prompts declare no kinds).
async fn prompt(
    _: &RequestContext,
    _: PromptArguments,
    features: &InvocationFeatures,
) -> Result<PromptResult, Infallible> {
    let text = ask_roots(features).await;
    Ok(PromptResult::with_message(PromptMessage::user(
        TextContent::new(text),
    )))
}

/// A prompt that reports progress when it was asked for (through the features a tool call
/// gets), and says whether it could.
async fn counting(
    _: &RequestContext,
    _: PromptArguments,
    features: &InvocationFeatures,
) -> Result<PromptResult, Infallible> {
    let text = match features.find::<ProgressReporter>() {
        Some(reporter) if reporter.report(1.0, Some(2.0), None).is_ok() => "reported",
        Some(_) => "refused",
        None => "no progress",
    };
    Ok(PromptResult::with_message(PromptMessage::user(
        TextContent::new(text),
    )))
}

/// A resource whose read asks for roots and serves the answer.
async fn read(
    _: &RequestContext,
    request: ResourceRequest,
    features: &InvocationFeatures,
) -> Result<ResourceOutput, ContentError> {
    let text = ask_roots(features).await;
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        request.uri(),
        None,
        text,
    )?))
}

async fn server() -> SocketAddr {
    let all = [V26, V1125, V0618];
    start(McpService::new(
        Endpoint::with_path("/mcp", all, Implementation::new("client", "1"))
            .add_tool(
                ToolRegistration::with_name("roots", all)
                    .json_object_arguments()
                    .handler(roots)
                    .input_request_declarations([InputRequestDeclaration::new(
                        InputRequestKind::Roots,
                        InputRequirement::Conditional,
                    )])
                    .build()
                    .unwrap(),
            )
            .add_tool(
                ToolRegistration::with_name("undeclared", all)
                    .json_object_arguments()
                    .handler(roots)
                    .build()
                    .unwrap(),
            )
            .add_prompt(
                PromptRegistration::with_name("roots", all)
                    .handler(prompt)
                    .build()
                    .unwrap(),
            )
            .add_prompt(
                PromptRegistration::with_name("counting", all)
                    .handler(counting)
                    .build()
                    .unwrap(),
            )
            .add_resource(
                ResourceRegistration::with_uri("test://roots", "roots", all)
                    .handler(read)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    ))
    .await
}

async fn session(addr: SocketAddr, revision: ProtocolVersion, capabilities: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
        revision.as_str()
    );
    let resp = post(addr, &[], body.as_bytes()).await;
    resp.header("mcp-session-id").unwrap().to_owned()
}

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"roots","arguments":{}}}"#;
const PROMPT: &str = r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"roots"}}"#;
const READ: &str =
    r#"{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"test://roots"}}"#;

/// Starts the call, reads the server's request off the stream, answers it with `answer` (a
/// JSON-RPC member: `"result":...` or `"error":...`), and returns the answer's HTTP status and
/// the call's final text.
async fn round_trip(
    addr: SocketAddr,
    revision: ProtocolVersion,
    session: &str,
    answer: &str,
) -> (u16, String) {
    asked(addr, revision, session, CALL, answer).await
}

/// As [`round_trip`], for any request whose handler asks for roots (`body`, id 5).
async fn asked(
    addr: SocketAddr,
    revision: ProtocolVersion,
    session: &str,
    body: &str,
    answer: &str,
) -> (u16, String) {
    let h = [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", revision.as_str()),
    ];
    let mut call = Open::send(addr, post_request(addr, &h, body)).await;
    assert_eq!(call.header("content-type"), Some("text/event-stream"));
    assert!(
        call.until(r#""method":"roots/list""#).await,
        "{}",
        call.text()
    );
    assert!(
        call.text()
            .contains(r#"{"jsonrpc":"2.0","id":"tollgate-1","method":"roots/list","params":{}}"#)
    );
    let response = format!(r#"{{"jsonrpc":"2.0","id":"tollgate-1",{answer}}}"#);
    let status = post(addr, &h, response.as_bytes()).await.status;
    assert!(call.until(r#""id":5"#).await, "{}", call.text());
    (status, call.text())
}

#[tokio::test]
async fn a_request_on_the_stream_is_answered_by_a_post() {
    let addr = server().await;
    for revision in [V1125, V0618] {
        let s = session(addr, revision, r#"{"roots":{}}"#).await;
        let (status, text) = round_trip(
            addr,
            revision,
            &s,
            r#""result":{"roots":[{"uri":"file:///w"}]}"#,
        )
        .await;
        assert_eq!(status, 202, "{revision}");
        assert!(
            text.contains(r#"roots: {\"roots\":[{\"uri\":\"file:///w\"}]}"#),
            "{text}"
        );
        // An error answer, or a result of the wrong shape, is a rejection.
        let s = session(addr, revision, r#"{"roots":{}}"#).await;
        let (_, text) =
            round_trip(addr, revision, &s, r#""error":{"code":-1,"message":"no"}"#).await;
        assert!(text.contains("rejected"), "{text}");
        let s = session(addr, revision, r#"{"roots":{}}"#).await;
        let (_, text) = round_trip(addr, revision, &s, r#""result":{"roots":7}"#).await;
        assert!(text.contains("rejected"), "{text}");
    }
}

#[tokio::test]
async fn refusals() {
    let addr = server().await;
    // Without the capability nothing is sent.
    let s = session(addr, V1125, "{}").await;
    let h = [
        ("Mcp-Session-Id", s.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let resp = post(addr, &h, CALL.as_bytes()).await;
    assert!(
        resp.text().contains("missing capability"),
        "{}",
        resp.text()
    );
    // A tool that did not declare roots cannot ask for them, whatever the client declared.
    let s = session(addr, V1125, r#"{"roots":{}}"#).await;
    let h2 = [
        ("Mcp-Session-Id", s.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let undeclared = CALL.replace(r#""name":"roots""#, r#""name":"undeclared""#);
    let resp = post(addr, &h2, undeclared.as_bytes()).await;
    assert!(resp.text().contains("undeclared"), "{}", resp.text());
    assert!(!resp.text().contains("roots/list"), "{}", resp.text());
    // A response nobody waits for, or outside a session, is refused.
    let stray = r#"{"jsonrpc":"2.0","id":"tollgate-9","result":{"roots":[]}}"#;
    assert_eq!(post(addr, &h, stray.as_bytes()).await.status, 400);
    assert_eq!(
        post(
            addr,
            &[("MCP-Protocol-Version", "2025-11-25")],
            stray.as_bytes()
        )
        .await
        .status,
        400
    );
    // 2026-07-28 has no server-to-client requests (it uses input_required results).
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"roots","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}}"#;
    let resp = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "roots"),
        ],
        body.as_bytes(),
    )
    .await;
    assert!(
        resp.text().contains("no client requests here"),
        "{}",
        resp.text()
    );
}

/// A prompt and a resource read ask the client on their own stream as a tool call does, on
/// both 2025 revisions with sessions, and get the answer (or its rejection) back.
#[tokio::test]
async fn a_prompt_and_a_read_ask_on_their_own_stream() {
    let addr = server().await;
    for revision in [V1125, V0618] {
        for body in [PROMPT, READ] {
            let s = session(addr, revision, r#"{"roots":{}}"#).await;
            let answer = r#""result":{"roots":[{"uri":"file:///w"}]}"#;
            let (status, text) = asked(addr, revision, &s, body, answer).await;
            assert_eq!(status, 202, "{revision} {body}");
            assert!(
                text.contains(r#"roots: {\"roots\":[{\"uri\":\"file:///w\"}]}"#),
                "{revision} {body}: {text}"
            );
            let s = session(addr, revision, r#"{"roots":{}}"#).await;
            let answer = r#""error":{"code":-1,"message":"no"}"#;
            let (_, text) = asked(addr, revision, &s, body, answer).await;
            assert!(text.contains("rejected"), "{revision} {body}: {text}");
        }
    }
}

/// A prompt or a read whose caller declared no roots capability sends nothing and answers as
/// JSON (its handler told `MissingCapability`); on 2026-07-28 neither has the channel.
#[tokio::test]
async fn a_prompt_or_read_for_a_caller_without_the_capability_sends_nothing() {
    let addr = server().await;
    for body in [PROMPT, READ] {
        let s = session(addr, V1125, "{}").await;
        let h = [
            ("Mcp-Session-Id", s.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let resp = post(addr, &h, body.as_bytes()).await;
        assert_eq!(resp.header("content-type"), Some("application/json"));
        assert!(
            resp.text().contains("missing capability"),
            "{}",
            resp.text()
        );
        assert!(!resp.text().contains("roots/list"), "{}", resp.text());
    }
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}"#;
    for (method, name, params) in [
        (
            "prompts/get",
            "roots",
            format!(r#"{{"name":"roots",{meta}}}"#),
        ),
        (
            "resources/read",
            "test://roots",
            format!(r#"{{"uri":"test://roots",{meta}}}"#),
        ),
    ] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"{method}","params":{params}}}"#);
        let h = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", name),
        ];
        let resp = post(addr, &h, body.as_bytes()).await;
        assert!(
            resp.text().contains("no client requests here"),
            "{}",
            resp.text()
        );
    }
}

/// A prompt or a read cancelled while it waits for the client's answer ends without a
/// response, and its waiting request is forgotten: the late answer finds nobody.
#[tokio::test]
async fn a_cancelled_prompt_or_read_forgets_its_request() {
    let addr = server().await;
    for body in [PROMPT, READ] {
        let s = session(addr, V1125, r#"{"roots":{}}"#).await;
        let h = [
            ("Mcp-Session-Id", s.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let mut open = Open::send(addr, post_request(addr, &h, body)).await;
        assert!(
            open.until(r#""method":"roots/list""#).await,
            "{}",
            open.text()
        );
        let cancel =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#;
        assert_eq!(post(addr, &h, cancel.as_bytes()).await.status, 202);
        assert!(open.finish_reading().await, "the stream ends");
        assert!(!open.text().contains(r#""id":5"#), "{}", open.text());
        let late = r#"{"jsonrpc":"2.0","id":"tollgate-1","result":{"roots":[]}}"#;
        assert_eq!(post(addr, &h, late.as_bytes()).await.status, 400);
    }
}

/// A prompt that asked for progress reports it on its own stream, as a tool call does (in a
/// 2025 session and on 2026-07-28); one that did not ask gets no reporter.
#[tokio::test]
async fn a_prompt_reports_progress_on_its_own_stream() {
    let addr = server().await;
    let s = session(addr, V1125, "{}").await;
    let h = [
        ("Mcp-Session-Id", s.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"counting","_meta":{"progressToken":"p"}}}"#;
    let mut open = Open::send(addr, post_request(addr, &h, body)).await;
    assert!(open.until(r#""id":5"#).await, "{}", open.text());
    let text = open.text();
    assert!(
        text.contains(
            r#""method":"notifications/progress","params":{"progressToken":"p","progress":1"#
        ),
        "{text}"
    );
    assert!(text.contains("reported"), "{text}");
    let plain = r#"{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"counting"}}"#;
    let resp = post(addr, &h, plain.as_bytes()).await;
    assert!(resp.text().contains("no progress"), "{}", resp.text());
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"counting","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let h = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "prompts/get"),
        ("Mcp-Name", "counting"),
    ];
    let mut open = Open::send(addr, post_request(addr, &h, body)).await;
    assert!(open.until(r#""id":5"#).await, "{}", open.text());
    assert!(
        open.text().contains(r#""progressToken":"p""#),
        "{}",
        open.text()
    );
    assert!(open.text().contains("reported"), "{}", open.text());
}
