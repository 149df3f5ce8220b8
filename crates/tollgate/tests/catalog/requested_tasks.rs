//! 2025-11-25's experimental tasks over real HTTP, inside sessions: the `tasks` capability and
//! `execution.taskSupport`, a task-augmented call's `CreateTaskResult`, `tasks/get`'s `Task`,
//! `tasks/result` waiting for the end and answering as the call would have (result with the
//! task in `_meta`, the work's error, a tool error shown `failed`), the work's input asked on
//! the `tasks/result` stream or, for a client that polls, on the session's standalone stream,
//! cancellation, the tool-level refusals, and owner isolation.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::net::SocketAddr;
use std::time::Duration;

use support::{Open, Response, post, post_request, start};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    context::InputRequest,
    policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest},
    task::{InMemoryTaskStore, TaskConfig, TaskContext, TaskCreation, TaskError},
    tool::{
        CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement,
        OperationResult, TaskSupport,
    },
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const RELATED: &str = "io.modelcontextprotocol/related-task";

type Args = ToolArguments<JsonObject>;
type Outcome = Result<OperationResult, TaskError>;

fn creation(features: &InvocationFeatures) -> Result<&TaskCreation, TaskError> {
    features
        .require::<TaskCreation>()
        .map_err(|_| TaskError::internal())
}

/// Sleeps `ms` in a task (inline without one), then completes.
async fn sleepy(_: &RequestContext, args: Args, features: &InvocationFeatures) -> Outcome {
    let ms = args
        .raw()
        .get("ms")
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_u64())
        .unwrap_or(0);
    let Some(tasks) = features.find::<TaskCreation>() else {
        return Ok(CompleteResult::from_tool_text("inline").into());
    };
    Ok(tasks
        .spawn(move |task: TaskContext| async move {
            task.set_status_message("sleeping").await?;
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(CompleteResult::from_tool_text(format!("slept {ms}")))
        })
        .await?
        .into())
}

/// Never creates a task, whatever it is offered.
async fn inline(_: &RequestContext, _: Args, _: &InvocationFeatures) -> Outcome {
    Ok(CompleteResult::from_tool_text("answered inline").into())
}

async fn fails(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    Ok(creation(features)?
        .spawn(|_| async { Err(TaskError::application(-31903, "Operation failed").unwrap()) })
        .await?
        .into())
}

async fn tool_error(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    Ok(creation(features)?
        .spawn(|_| async { Ok(CompleteResult::from_tool_error_text("no luck")) })
        .await?
        .into())
}

/// Asks the client to confirm, then reports the answer's action.
async fn asks(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    Ok(creation(features)?
        .spawn(|task: TaskContext| async move {
            let schema = from_str(
                r#"{"type":"object","properties":{"ok":{"type":"boolean"}}}"#,
                &JsonLimits::default(),
            )
            .unwrap();
            let confirm = InputRequest::elicitation("Sure?", schema.as_object().unwrap().clone());
            let answers = task.request_input([("a", confirm)]).await?;
            let action = answers
                .get("a")
                .and_then(|v| v.get("action"))
                .and_then(JsonValue::as_str)
                .unwrap_or("?")
                .to_owned();
            Ok(CompleteResult::from_tool_text(format!("a={action}")))
        })
        .await?
        .into())
}

fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
    let who = request.header("x-user").unwrap_or("alice").to_owned();
    AdmissionDecision::admit(AdmissionIdentity::principal(who))
}

async fn server() -> SocketAddr {
    let both = [V26, V1125];
    let tool = |name: &str| ToolRegistration::with_name(name, both).json_object_arguments();
    let asks = ToolRegistration::with_name("asks", both)
        .json_object_arguments()
        .handler(asks)
        .task_support(TaskSupport::Required)
        .input_request_declarations([InputRequestDeclaration::new(
            InputRequestKind::Elicitation,
            InputRequirement::Conditional,
        )])
        .build()
        .unwrap();
    let schema = from_str(
        r#"{"type":"object","properties":{"ms":{"type":"integer"}}}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    let strict = ToolRegistration::with_name("strict", both)
        .input_schema(&schema)
        .unwrap()
        .handler(sleepy)
        .task_support(TaskSupport::Optional)
        .build()
        .unwrap();
    let never = ToolRegistration::with_name("never", [V26, V1125, V0618])
        .json_object_arguments()
        .handler(sleepy)
        .build()
        .unwrap();
    start(McpService::new(
        Endpoint::with_path("/mcp", [V26, V1125, V0618], Implementation::new("t", "1"))
            .admission(admit)
            .task_store(InMemoryTaskStore::default())
            .task_config(TaskConfig::default().poll_interval(Duration::from_millis(100)))
            .add_tool(
                tool("sleepy")
                    .handler(sleepy)
                    .task_support(TaskSupport::Optional)
                    .build()
                    .unwrap(),
            )
            .add_tool(
                tool("must")
                    .handler(sleepy)
                    .task_support(TaskSupport::Required)
                    .build()
                    .unwrap(),
            )
            .add_tool(
                tool("inline")
                    .handler(inline)
                    .task_support(TaskSupport::Optional)
                    .build()
                    .unwrap(),
            )
            .add_tool(
                tool("fails")
                    .handler(fails)
                    .task_support(TaskSupport::Required)
                    .build()
                    .unwrap(),
            )
            .add_tool(
                tool("tool_error")
                    .handler(tool_error)
                    .task_support(TaskSupport::Required)
                    .build()
                    .unwrap(),
            )
            .add_tool(asks)
            .add_tool(never)
            .add_tool(strict)
            .build()
            .unwrap(),
    ))
    .await
}

/// A session on `revision`, declaring `capabilities`; its id and the initialize result.
async fn session(
    addr: SocketAddr,
    revision: ProtocolVersion,
    capabilities: &str,
) -> (String, JsonValue) {
    session_as(addr, revision, capabilities, "alice").await
}

/// [`session`], opened by `user`.
async fn session_as(
    addr: SocketAddr,
    revision: ProtocolVersion,
    capabilities: &str,
    user: &str,
) -> (String, JsonValue) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
        revision.as_str()
    );
    let resp = post(addr, &[("x-user", user)], body.as_bytes()).await;
    (
        resp.header("mcp-session-id").unwrap().to_owned(),
        resp.result(),
    )
}

/// A request in the session, as `user`.
async fn rpc(addr: SocketAddr, session: &str, method: &str, params: &str, user: &str) -> Response {
    let body = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"{method}","params":{params}}}"#);
    let h = [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
        ("x-user", user),
    ];
    post(addr, &h, body.as_bytes()).await
}

async fn call(
    addr: SocketAddr,
    session: &str,
    tool: &str,
    arguments: &str,
    task: &str,
) -> Response {
    let params = format!(r#"{{"name":"{tool}","arguments":{arguments}{task}}}"#);
    rpc(addr, session, "tools/call", &params, "alice").await
}

/// Creates a task of `tool` and returns its id, checking the `CreateTaskResult`'s shape.
async fn create(addr: SocketAddr, session: &str, tool: &str, arguments: &str) -> String {
    let r = call(addr, session, tool, arguments, r#","task":{"ttl":60000}"#).await;
    let task = r.result().get("task").cloned().unwrap_or(JsonValue::Null);
    assert_eq!(
        task.get("status").and_then(JsonValue::as_str),
        Some("working"),
        "{}",
        r.text()
    );
    for key in ["createdAt", "lastUpdatedAt", "ttl", "pollInterval"] {
        assert!(task.get(key).is_some(), "{key}: {}", r.text());
    }
    assert!(task.get("ttlMs").is_none() && r.result().get("resultType").is_none());
    task.get("taskId")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned()
}

fn by_id(id: &str) -> String {
    format!(r#"{{"taskId":"{id}"}}"#)
}

async fn get(addr: SocketAddr, session: &str, id: &str) -> Response {
    rpc(addr, session, "tasks/get", &by_id(id), "alice").await
}

async fn status_of(addr: SocketAddr, session: &str, id: &str) -> String {
    let r = get(addr, session, id).await;
    r.result()
        .get("status")
        .and_then(JsonValue::as_str)
        .unwrap_or("")
        .to_owned()
}

async fn until(addr: SocketAddr, session: &str, id: &str, status: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while status_of(addr, session, id).await != status {
        assert!(tokio::time::Instant::now() < deadline, "never {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn the_capability_and_each_tools_task_support_are_published_on_2025_11_25_only() {
    let addr = server().await;
    let (_, init) = session(addr, V1125, "{}").await;
    let tasks = init
        .get("capabilities")
        .and_then(|c| c.get("tasks"))
        .cloned();
    let tasks = tasks.expect("tasks capability");
    assert!(tasks.get("cancel").is_some() && tasks.get("list").is_none());
    assert!(
        tasks
            .get("requests")
            .and_then(|r| r.get("tools"))
            .and_then(|t| t.get("call"))
            .is_some()
    );
    let (s, _) = session(addr, V1125, "{}").await;
    let list = rpc(addr, &s, "tools/list", "{}", "alice").await.result();
    let support = |name: &str| {
        list.get("tools")
            .and_then(JsonValue::as_array)
            .and_then(|t| {
                t.iter()
                    .find(|t| t.get("name").and_then(JsonValue::as_str) == Some(name))
            })
            .and_then(|t| t.get("execution"))
            .and_then(|e| e.get("taskSupport"))
            .and_then(JsonValue::as_str)
            .map(str::to_owned)
    };
    assert_eq!(support("sleepy").as_deref(), Some("optional"));
    assert_eq!(support("must").as_deref(), Some("required"));
    assert_eq!(support("never"), None);
    // 2025-06-18 has no tasks: no capability, no execution, no task methods.
    let (old, init) = session(addr, V0618, "{}").await;
    assert!(
        init.get("capabilities")
            .and_then(|c| c.get("tasks"))
            .is_none()
    );
    let h = [
        ("Mcp-Session-Id", old.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let list = post(
        addr,
        &h,
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    )
    .await;
    assert!(!list.text().contains("execution"), "{}", list.text());
    let get = post(
        addr,
        &h,
        br#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"x"}}"#,
    )
    .await;
    assert_eq!(get.code(), -32601);
}

#[tokio::test]
async fn a_task_is_created_polled_and_its_result_retrieved() {
    let addr = server().await;
    let (s, _) = session(addr, V1125, "{}").await;
    let id = create(addr, &s, "sleepy", r#"{"ms":300}"#).await;
    let first = get(addr, &s, &id).await.result();
    assert_eq!(
        first.get("taskId").and_then(JsonValue::as_str),
        Some(id.as_str())
    );
    assert!(first.get("pollInterval").is_some() && first.get("result").is_none());
    // `tasks/result` waits for the end, then answers as the call would have.
    let result = rpc(addr, &s, "tasks/result", &by_id(&id), "alice").await;
    assert_eq!(
        support::first_text(&result.result()),
        "slept 300",
        "{}",
        result.text()
    );
    let related = result
        .result()
        .get("_meta")
        .and_then(|m| m.get(RELATED))
        .cloned();
    assert_eq!(
        related
            .and_then(|r| r.get("taskId").cloned())
            .as_ref()
            .and_then(JsonValue::as_str),
        Some(id.as_str())
    );
    assert!(
        result.result().get("resultType").is_none(),
        "{}",
        result.text()
    );
    assert_eq!(status_of(addr, &s, &id).await, "completed");
    // Another principal sees nothing of it; an unknown id is not found (-32602).
    let (theirs, _) = session_as(addr, V1125, "{}", "mallory").await;
    let other = rpc(addr, &theirs, "tasks/get", &by_id(&id), "mallory").await;
    assert_eq!(
        (other.code(), other.message()),
        (-32602, "Task not found".to_owned())
    );
    let other = rpc(addr, &theirs, "tasks/result", &by_id(&id), "mallory").await;
    assert_eq!(other.code(), -32602);
    let other = rpc(addr, &theirs, "tasks/cancel", &by_id(&id), "mallory").await;
    assert_eq!(other.code(), -32602);
    assert_eq!(get(addr, &s, "nope").await.code(), -32602);
    // No `tasks/list` is offered.
    assert_eq!(
        rpc(addr, &s, "tasks/list", "{}", "alice").await.code(),
        -32601
    );
}

#[tokio::test]
async fn the_tool_level_rules_and_malformed_task_members() {
    let addr = server().await;
    let (s, _) = session(addr, V1125, "{}").await;
    // Required without a task, or a task for a tool that takes none: -32601.
    assert_eq!(call(addr, &s, "must", "{}", "").await.code(), -32601);
    assert_eq!(
        call(addr, &s, "never", "{}", r#","task":{}"#).await.code(),
        -32601
    );
    // Optional without a task answers inline; the never-task tool answers inline too.
    assert_eq!(
        support::first_text(&call(addr, &s, "sleepy", "{}", "").await.result()),
        "inline"
    );
    assert_eq!(
        support::first_text(&call(addr, &s, "never", "{}", "").await.result()),
        "inline"
    );
    // `task` is an object with an optional non-negative integer `ttl`: at its bounds (0 and
    // 2^64 - 1) it is taken, one past them (-1, 2^64) refused.
    for ok in [
        r#","task":{"ttl":0}"#,
        r#","task":{"ttl":18446744073709551615}"#,
    ] {
        let r = call(addr, &s, "sleepy", "{}", ok).await;
        assert!(r.result().get("task").is_some(), "{ok}: {}", r.text());
    }
    let past = r#","task":{"ttl":18446744073709551616}"#;
    assert_eq!(call(addr, &s, "sleepy", "{}", past).await.code(), -32602);
    for bad in [
        r#","task":5"#,
        r#","task":{"ttl":-1}"#,
        r#","task":{"ttl":1.5}"#,
        r#","task":{"ttl":"1"}"#,
    ] {
        assert_eq!(
            call(addr, &s, "sleepy", "{}", bad).await.code(),
            -32602,
            "{bad}"
        );
    }
    // Arguments that fail the schema: refused before a task exists (-32602) when one was
    // asked for, the fixed `isError` result otherwise.
    let bad = r#"{"ms":"soon"}"#;
    assert_eq!(
        call(addr, &s, "strict", bad, r#","task":{}"#).await.code(),
        -32602
    );
    let plain = call(addr, &s, "strict", bad, "").await.result();
    assert_eq!(
        plain.get("isError").and_then(JsonValue::as_bool),
        Some(true)
    );
    // A handler that answers inline although a task was asked for: the answer is a task's.
    let id = create(addr, &s, "inline", "{}").await;
    let result = rpc(addr, &s, "tasks/result", &by_id(&id), "alice").await;
    assert_eq!(
        support::first_text(&result.result()),
        "answered inline",
        "{}",
        result.text()
    );
}

#[tokio::test]
async fn failures_answer_as_the_call_would_have() {
    let addr = server().await;
    let (s, _) = session(addr, V1125, "{}").await;
    // The work's error: the task failed, `tasks/result` is that JSON-RPC error.
    let id = create(addr, &s, "fails", "{}").await;
    let result = rpc(addr, &s, "tasks/result", &by_id(&id), "alice").await;
    assert_eq!(
        (result.code(), result.message()),
        (-31903, "Operation failed".to_owned())
    );
    assert_eq!(status_of(addr, &s, &id).await, "failed");
    // A tool error result: `failed` on this revision, and the result itself from `tasks/result`.
    let id = create(addr, &s, "tool_error", "{}").await;
    let result = rpc(addr, &s, "tasks/result", &by_id(&id), "alice").await;
    assert_eq!(
        result.result().get("isError").and_then(JsonValue::as_bool),
        Some(true)
    );
    assert_eq!(support::first_text(&result.result()), "no luck");
    assert_eq!(status_of(addr, &s, &id).await, "failed");
}

#[tokio::test]
async fn cancellation_answers_the_task_and_refuses_an_ended_one() {
    let addr = server().await;
    let (s, _) = session(addr, V1125, "{}").await;
    let id = create(addr, &s, "sleepy", r#"{"ms":60000}"#).await;
    // A waiting `tasks/result` ends with the cancellation.
    let waiting = {
        let (s, params) = (s.clone(), by_id(&id));
        tokio::spawn(async move { rpc(addr, &s, "tasks/result", &params, "alice").await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancelled = rpc(addr, &s, "tasks/cancel", &by_id(&id), "alice").await;
    assert_eq!(
        cancelled.result().get("status").and_then(JsonValue::as_str),
        Some("cancelled")
    );
    assert_eq!(
        cancelled.result().get("taskId").and_then(JsonValue::as_str),
        Some(id.as_str())
    );
    let ended = waiting.await.unwrap();
    assert_eq!(
        (ended.code(), ended.message()),
        (-32603, "Task cancelled".to_owned())
    );
    let again = rpc(addr, &s, "tasks/cancel", &by_id(&id), "alice").await;
    assert_eq!(
        (again.code(), again.message()),
        (-32602, "Task already ended".to_owned())
    );
    let result = rpc(addr, &s, "tasks/result", &by_id(&id), "alice").await;
    assert_eq!(result.code(), -32603);
    // A completed task cannot be cancelled either.
    let id = create(addr, &s, "sleepy", r#"{"ms":0}"#).await;
    until(addr, &s, &id, "completed").await;
    assert_eq!(
        rpc(addr, &s, "tasks/cancel", &by_id(&id), "alice")
            .await
            .code(),
        -32602
    );
}

#[tokio::test]
async fn the_works_input_is_asked_on_the_result_stream() {
    let addr = server().await;
    let (s, _) = session(addr, V1125, r#"{"elicitation":{}}"#).await;
    let id = create(addr, &s, "asks", "{}").await;
    // The revision's own flow: a poll shows the wait, then `tasks/result` (no standalone
    // `GET` is open, so nothing was asked there).
    until(addr, &s, &id, "input_required").await;
    let h = [
        ("Mcp-Session-Id", s.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tasks/result","params":{}}}"#,
        by_id(&id)
    );
    let mut result = Open::send(addr, post_request(addr, &h, &body)).await;
    assert_eq!(result.header("content-type"), Some("text/event-stream"));
    assert!(
        result.until(r#""method":"elicitation/create""#).await,
        "{}",
        result.text()
    );
    // The request names its task.
    let related = format!(r#""{RELATED}":{{"taskId":"{id}"}}"#);
    assert!(result.text().contains(&related), "{}", result.text());
    let answer =
        r#"{"jsonrpc":"2.0","id":"tollgate-1","result":{"action":"accept","content":{"ok":true}}}"#;
    assert_eq!(post(addr, &h, answer.as_bytes()).await.status, 202);
    assert!(result.until(r#""id":9"#).await, "{}", result.text());
    assert!(result.text().contains("a=accept"), "{}", result.text());
    assert_eq!(status_of(addr, &s, &id).await, "completed");
    // Without the capability the client is not asked: -32021, the task still waiting.
    let (plain, _) = session(addr, V1125, "{}").await;
    let id = create(addr, &plain, "asks", "{}").await;
    until(addr, &plain, &id, "input_required").await;
    let refused = rpc(addr, &plain, "tasks/result", &by_id(&id), "alice").await;
    assert_eq!(refused.code(), -32021, "{}", refused.text());
    assert_eq!(status_of(addr, &plain, &id).await, "input_required");
}

/// A client that only polls (as the official Tasks package does on this revision) gets the
/// work's requests on its session's standalone stream once `tasks/get` shows the wait; its
/// answer is kept for the work, and further polls do not ask again while one is asked.
#[tokio::test]
async fn a_polling_client_is_asked_on_its_standalone_stream() {
    let addr = server().await;
    let (s, _) = session(addr, V1125, r#"{"elicitation":{}}"#).await;
    let h = [
        ("Mcp-Session-Id", s.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Accept", "text/event-stream"),
    ];
    let open = format!(
        "GET /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\nAccept: text/event-stream\r\n\r\n"
    );
    let mut standalone = Open::send(addr, open).await;
    assert_eq!(standalone.status, 200);
    let id = create(addr, &s, "asks", "{}").await;
    until(addr, &s, &id, "input_required").await;
    // Polled twice more while the request waits for its answer: asked once.
    get(addr, &s, &id).await;
    get(addr, &s, &id).await;
    assert!(
        standalone.until(r#""method":"elicitation/create""#).await,
        "{}",
        standalone.text()
    );
    let related = format!(r#""{RELATED}":{{"taskId":"{id}"}}"#);
    assert!(
        standalone.text().contains(&related),
        "{}",
        standalone.text()
    );
    standalone.read_for(Duration::from_millis(300)).await;
    assert_eq!(
        standalone.text().matches("elicitation/create").count(),
        1,
        "{}",
        standalone.text()
    );
    let answer =
        r#"{"jsonrpc":"2.0","id":"tollgate-1","result":{"action":"accept","content":{"ok":true}}}"#;
    assert_eq!(post(addr, &h[..2], answer.as_bytes()).await.status, 202);
    until(addr, &s, &id, "completed").await;
    let result = rpc(addr, &s, "tasks/result", &by_id(&id), "alice").await;
    assert_eq!(
        support::first_text(&result.result()),
        "a=accept",
        "{}",
        result.text()
    );
}

/// 2026-07-28 keeps its own shapes: no `tasks` capability, no `execution` in its tool list; an
/// endpoint without a task store, or with one but no tool taking tasks on 2025-11-25, declares
/// no capability there and ignores `task`, malformed or not.
#[tokio::test]
async fn other_revisions_and_storeless_endpoints_are_unchanged() {
    let addr = server().await;
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let modern = |method: &'static str| {
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{meta}}}}}"#);
        async move {
            let h = [
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", method),
            ];
            post(addr, &h, body.as_bytes()).await
        }
    };
    let discover = modern("server/discover").await.result();
    assert!(
        discover
            .get("capabilities")
            .and_then(|c| c.get("tasks"))
            .is_none()
    );
    let list = modern("tools/list").await;
    let tools = list
        .result()
        .get("tools")
        .and_then(JsonValue::as_array)
        .map(|t| t.len());
    assert!(tools.is_some_and(|n| n > 0), "{}", list.text());
    assert!(!list.text().contains("execution"), "{}", list.text());

    let plain = start(McpService::new(
        Endpoint::with_path("/mcp", [V1125], Implementation::new("plain", "1"))
            .add_tool(
                ToolRegistration::with_name("echo", [V1125])
                    .json_object_arguments()
                    .handler(inline)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    ))
    .await;
    let (s, init) = session(plain, V1125, "{}").await;
    assert!(
        init.get("capabilities")
            .and_then(|c| c.get("tasks"))
            .is_none()
    );
    for task in [r#","task":{}"#, r#","task":5"#] {
        let r = call(plain, &s, "echo", "{}", task).await;
        assert_eq!(
            support::first_text(&r.result()),
            "answered inline",
            "{}",
            r.text()
        );
    }
    assert_eq!(
        rpc(plain, &s, "tasks/get", &by_id("x"), "alice")
            .await
            .code(),
        -32601
    );

    // A store, but tasks only on 2026-07-28: nothing declared on 2025-11-25, `task` ignored
    // (invalid arguments keep their `isError` result).
    let schema = from_str(
        r#"{"type":"object","properties":{"ms":{"type":"integer"}}}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    let stored = start(McpService::new(
        Endpoint::with_path("/mcp", [V26, V1125], Implementation::new("stored", "1"))
            .task_store(InMemoryTaskStore::default())
            .add_tool(
                ToolRegistration::with_name("modern", [V26])
                    .json_object_arguments()
                    .handler(sleepy)
                    .task_support(TaskSupport::Optional)
                    .build()
                    .unwrap(),
            )
            .add_tool(
                ToolRegistration::with_name("echo", [V26, V1125])
                    .input_schema(&schema)
                    .unwrap()
                    .handler(inline)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    ))
    .await;
    let (s, init) = session(stored, V1125, "{}").await;
    assert!(
        init.get("capabilities")
            .and_then(|c| c.get("tasks"))
            .is_none(),
        "{init:?}"
    );
    for task in [r#","task":{}"#, r#","task":5"#] {
        let r = call(stored, &s, "echo", "{}", task).await;
        assert_eq!(
            support::first_text(&r.result()),
            "answered inline",
            "{}",
            r.text()
        );
        let r = call(stored, &s, "echo", r#"{"ms":"soon"}"#, task).await;
        assert_eq!(
            r.result().get("isError").and_then(JsonValue::as_bool),
            Some(true),
            "{}",
            r.text()
        );
    }
}
