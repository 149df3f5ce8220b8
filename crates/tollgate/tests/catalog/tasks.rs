//! The tasks extension over real HTTP: creation, polling, completion and failure shapes,
//! cancellation, input rounds (partial and malformed answers), the capability gate, owner
//! isolation, expiry, the store bound, two instances sharing one store, and the build rules.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use support::{Response, post, start};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext, ToolArguments, ToolRegistration,
    context::InputRequest,
    policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest},
    task::{InMemoryTaskStore, TaskConfig, TaskContext, TaskCreation, TaskError},
    tool::{
        CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement,
        OperationResult, TaskCreated, TaskSupport,
    },
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const EXT: &str = r#""extensions":{"io.modelcontextprotocol/tasks":{}}"#;

type Args = ToolArguments<JsonObject>;
type Outcome = Result<OperationResult, TaskError>;

fn object(text: &str) -> JsonObject {
    from_str(text, &JsonLimits::default())
        .unwrap()
        .as_object()
        .cloned()
        .unwrap()
}

fn millis(args: &Args) -> u64 {
    args.raw()
        .get("ms")
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_u64())
        .unwrap_or(0)
}

fn creation(features: &InvocationFeatures) -> Result<&TaskCreation, TaskError> {
    features
        .require::<TaskCreation>()
        .map_err(|_| TaskError::internal())
}

/// The labels of `sleepy` calls whose work ran to its end (tests run in parallel: each uses
/// its own label).
static FINISHED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn finished(label: &str) -> bool {
    FINISHED.lock().unwrap().iter().any(|l| l == label)
}

static PANIC: AtomicBool = AtomicBool::new(true);

/// Sleeps `ms`, then records its `label` and completes.
async fn sleepy(_: &RequestContext, args: Args, features: &InvocationFeatures) -> Outcome {
    let ms = millis(&args);
    let label = args
        .raw()
        .get("label")
        .and_then(JsonValue::as_str)
        .unwrap_or("")
        .to_owned();
    let Some(tasks) = features.find::<TaskCreation>() else {
        return Ok(CompleteResult::from_tool_text("inline").into());
    };
    Ok(tasks
        .spawn(move |task: TaskContext| async move {
            task.set_status_message("sleeping").await?;
            tokio::time::sleep(Duration::from_millis(ms)).await;
            FINISHED.lock().unwrap().push(label);
            Ok(CompleteResult::from_tool_text(format!("slept {ms}")))
        })
        .await?
        .into())
}

async fn app_error(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    Ok(creation(features)?
        .spawn(|_| async { Err(TaskError::application(-31903, "Operation failed").unwrap()) })
        .await?
        .into())
}

async fn panics(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    Ok(creation(features)?
        .spawn(|_| async {
            if PANIC.load(Ordering::SeqCst) {
                panic!("worker bug with a secret inside");
            }
            Ok(CompleteResult::from_tool_text("never"))
        })
        .await?
        .into())
}

async fn tool_error(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    Ok(creation(features)?
        .spawn(|_| async { Ok(CompleteResult::from_tool_error_text("no luck")) })
        .await?
        .into())
}

fn confirm() -> InputRequest {
    InputRequest::elicitation(
        "Sure?",
        object(r#"{"type":"object","properties":{"ok":{"type":"boolean"}}}"#),
    )
}

/// Asks two questions, then reports the answers' actions in key order.
async fn asks(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    Ok(creation(features)?
        .spawn(|task: TaskContext| async move {
            let answers = task
                .request_input([("a", confirm()), ("b", InputRequest::list_roots())])
                .await?;
            // A key already used in this task is refused.
            let reused = task.request_input([("a", confirm())]).await;
            assert!(reused.is_err());
            let a = answers.get("a").and_then(|v| v.get("action")).cloned();
            let b = answers.get("b").and_then(|v| v.get("roots")).is_some();
            Ok(CompleteResult::from_tool_text(format!(
                "a={} b={b}",
                a.as_ref().and_then(JsonValue::as_str).unwrap_or("?")
            )))
        })
        .await?
        .into())
}

/// Checks the work-side limits at and past each bound, then parks with 32 requests (the most)
/// outstanding until cancelled.
async fn limits(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    Ok(creation(features)?
        .spawn(|task: TaskContext| async move {
            let mut report = Vec::new();
            report.push(task.set_status_message(&"m".repeat(1024)).await.is_ok());
            report.push(task.set_status_message(&"m".repeat(1025)).await.is_err());
            let many = |n: usize| (0..n).map(|i| (format!("k{i}"), InputRequest::list_roots()));
            report.push(task.request_input(many(33)).await.is_err());
            report.push(
                task.request_input([("k".repeat(257), InputRequest::list_roots())])
                    .await
                    .is_err(),
            );
            report.push(
                task.request_input([("", InputRequest::list_roots())])
                    .await
                    .is_err(),
            );
            // A kind the tool did not declare.
            report.push(task.request_input([("e", confirm())]).await.is_err());
            report.push(
                task.request_input([
                    ("d", InputRequest::list_roots()),
                    ("d", InputRequest::list_roots()),
                ])
                .await
                .is_err(),
            );
            let all_refused_correctly = report.iter().all(|ok| *ok);
            task.set_status_message(if all_refused_correctly {
                "limits ok"
            } else {
                "limits broken"
            })
            .await?;
            let mut at_limit: Vec<(String, InputRequest)> = many(31).collect();
            at_limit.push(("k".repeat(256), InputRequest::list_roots()));
            task.request_input(at_limit).await?;
            Ok(CompleteResult::from_tool_text("answered"))
        })
        .await?
        .into())
}

static KEPT: Mutex<Option<TaskCreated>> = Mutex::new(None);

/// Returns a task created by an earlier call (an application contract failure).
async fn foreign(_: &RequestContext, _: Args, features: &InvocationFeatures) -> Outcome {
    let kept = KEPT.lock().unwrap().clone();
    if let Some(created) = kept {
        return Ok(created.into());
    }
    let created = creation(features)?
        .spawn(|_| async { Ok(CompleteResult::from_tool_text("first")) })
        .await?;
    *KEPT.lock().unwrap() = Some(created.clone());
    Ok(created.into())
}

fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
    let who = request.header("x-user").unwrap_or("alice").to_owned();
    AdmissionDecision::admit(AdmissionIdentity::principal(who))
}

fn declared(kind: InputRequestKind) -> InputRequestDeclaration {
    InputRequestDeclaration::new(kind, InputRequirement::Conditional)
}

fn endpoint(store: impl tollgate::task::TaskStore, config: TaskConfig) -> Endpoint {
    let tool = |name: &str, support| {
        ToolRegistration::with_name(name, [V26])
            .json_object_arguments()
            .handler(sleepy)
            .task_support(support)
    };
    let task = |name: &str| ToolRegistration::with_name(name, [V26]).json_object_arguments();
    Endpoint::with_path("/mcp", [V26, V1125], Implementation::new("tasks", "1"))
        .legacy_sessions(None)
        .admission(admit)
        .task_store(store)
        .task_config(config)
        .add_tool(tool("sleepy", TaskSupport::Optional).build().unwrap())
        .add_tool(tool("must", TaskSupport::Required).build().unwrap())
        .add_tool(tool("never", TaskSupport::Forbidden).build().unwrap())
        .add_tool(
            task("app_error")
                .handler(app_error)
                .task_support(TaskSupport::Required)
                .build()
                .unwrap(),
        )
        .add_tool(
            task("panics")
                .handler(panics)
                .task_support(TaskSupport::Required)
                .build()
                .unwrap(),
        )
        .add_tool(
            task("tool_error")
                .handler(tool_error)
                .task_support(TaskSupport::Required)
                .build()
                .unwrap(),
        )
        .add_tool(
            task("asks")
                .handler(asks)
                .task_support(TaskSupport::Required)
                .input_request_declarations([
                    declared(InputRequestKind::Elicitation),
                    declared(InputRequestKind::Roots),
                ])
                .build()
                .unwrap(),
        )
        .add_tool(
            task("limits")
                .handler(limits)
                .task_support(TaskSupport::Required)
                .input_request_declarations([declared(InputRequestKind::Roots)])
                .build()
                .unwrap(),
        )
        .add_tool(
            task("foreign")
                .handler(foreign)
                .task_support(TaskSupport::Required)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

async fn server() -> SocketAddr {
    start(McpService::new(endpoint(
        InMemoryTaskStore::default(),
        TaskConfig::default().poll_interval(Duration::from_millis(100)),
    )))
    .await
}

/// A 2026-07-28 request with `capabilities` as the client's, sent as `user`.
async fn send(
    addr: SocketAddr,
    method: &str,
    params: &str,
    capabilities: &str,
    name: Option<&str>,
    user: &str,
) -> Response {
    let sep = if params.is_empty() { "" } else { "," };
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"{method}","params":{{{params}{sep}"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{{capabilities}}}}}}}}}"#
    );
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
        ("x-user", user),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    post(addr, &headers, body.as_bytes()).await
}

async fn call(addr: SocketAddr, tool: &str, arguments: &str, capabilities: &str) -> Response {
    send(
        addr,
        "tools/call",
        &format!(r#""name":"{tool}","arguments":{arguments}"#),
        capabilities,
        Some(tool),
        "alice",
    )
    .await
}

async fn task(addr: SocketAddr, method: &str, id: &str, extra: &str, user: &str) -> Response {
    let params = format!(r#""taskId":"{id}"{extra}"#);
    let caps = format!(r#""elicitation":{{}},"roots":{{}},{EXT}"#);
    send(addr, method, &params, &caps, Some(id), user).await
}

async fn create(addr: SocketAddr, tool: &str, arguments: &str) -> String {
    let r = call(addr, tool, arguments, EXT).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let result = r.result();
    assert_eq!(
        result.get("resultType").and_then(JsonValue::as_str),
        Some("task")
    );
    result
        .get("taskId")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned()
}

fn status(r: &Response) -> String {
    r.result()
        .get("status")
        .and_then(JsonValue::as_str)
        .unwrap_or("")
        .to_owned()
}

/// Polls until the status is `want` (or 5 s pass).
async fn until(addr: SocketAddr, id: &str, want: &str) -> Response {
    for _ in 0..100 {
        let r = task(addr, "tasks/get", id, "", "alice").await;
        if status(&r) == want {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task never reached {want}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_created_polled_and_completed() {
    let addr = server().await;
    let discover = send(addr, "server/discover", "", "", None, "alice").await;
    assert!(
        discover
            .result()
            .get("capabilities")
            .and_then(|c| c.get("extensions"))
            .and_then(|e| e.get("io.modelcontextprotocol/tasks"))
            .is_some()
    );

    let r = call(addr, "sleepy", r#"{"ms":600,"label":"lifecycle"}"#, EXT).await;
    let created = r.result();
    let id = created
        .get("taskId")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned();
    assert_eq!(id.len(), 32);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(
        created.get("status").and_then(JsonValue::as_str),
        Some("working")
    );
    assert_eq!(
        created
            .get("ttlMs")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_u64()),
        Some(3_600_000)
    );
    assert_eq!(
        created
            .get("pollIntervalMs")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_u64()),
        Some(100)
    );
    for absent in ["result", "error", "inputRequests", "requestState", "task"] {
        assert!(created.get(absent).is_none(), "{absent}");
    }
    let stamp = created
        .get("createdAt")
        .and_then(JsonValue::as_str)
        .unwrap();
    assert_eq!(stamp.len(), 24);
    assert!(stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T');

    // Stored before the handle was sent: an immediate poll finds it.
    let working = task(addr, "tasks/get", &id, "", "alice").await;
    assert_eq!(working.status, 200);
    assert_eq!(
        working
            .result()
            .get("resultType")
            .and_then(JsonValue::as_str),
        Some("complete")
    );
    assert!(working.result().get("result").is_none());

    // The work's status message shows while it runs, and is cleared when it ends.
    let mut message = None;
    for _ in 0..40 {
        let r = task(addr, "tasks/get", &id, "", "alice").await;
        if let Some(m) = r.result().get("statusMessage").and_then(JsonValue::as_str) {
            message = Some(m.to_owned());
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(message.as_deref(), Some("sleeping"));

    let done = until(addr, &id, "completed").await;
    let result = done.result();
    assert!(result.get("statusMessage").is_none());
    assert_eq!(
        support::first_text(result.get("result").unwrap()),
        "slept 600"
    );
    assert!(result.get("error").is_none());
    assert!(finished("lifecycle"));

    // Cancelling a terminal task is acknowledged and changes nothing.
    let ack = task(addr, "tasks/cancel", &id, "", "alice").await;
    assert_eq!(
        ack.text(),
        r#"{"jsonrpc":"2.0","id":5,"result":{"resultType":"complete"}}"#
    );
    assert_eq!(
        status(&task(addr, "tasks/get", &id, "", "alice").await),
        "completed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_complete_or_fail_as_the_extension_says() {
    let addr = server().await;
    let id = create(addr, "tool_error", "{}").await;
    let done = until(addr, &id, "completed").await;
    assert_eq!(
        done.result()
            .get("result")
            .and_then(|r| r.get("isError"))
            .and_then(JsonValue::as_bool),
        Some(true)
    );

    let id = create(addr, "app_error", "{}").await;
    let failed = until(addr, &id, "failed").await;
    assert!(failed.result().get("result").is_none());
    assert_eq!(
        failed.text().split(r#""error":"#).nth(1).unwrap(),
        r#"{"code":-31903,"message":"Operation failed"}}}"#
    );

    let id = create(addr, "panics", "{}").await;
    let failed = until(addr, &id, "failed").await;
    assert!(
        failed
            .text()
            .contains(r#""error":{"code":-32603,"message":"Internal error"}"#)
    );
    assert!(!failed.text().contains("secret"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_stops_the_work() {
    let addr = server().await;
    let id = create(addr, "sleepy", r#"{"ms":800,"label":"cancel-here"}"#).await;
    let ack = task(addr, "tasks/cancel", &id, "", "alice").await;
    assert_eq!(ack.status, 200);
    assert_eq!(
        status(&task(addr, "tasks/get", &id, "", "alice").await),
        "cancelled"
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert!(!finished("cancel-here"), "the cancelled work kept running");
    assert_eq!(
        status(&task(addr, "tasks/get", &id, "", "alice").await),
        "cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_rounds_take_partial_answers_and_ignore_bad_ones() {
    let addr = server().await;
    let id = create(addr, "asks", "{}").await;
    let waiting = until(addr, &id, "input_required").await;
    let requests = waiting.result().get("inputRequests").cloned().unwrap();
    assert_eq!(
        requests
            .get("a")
            .and_then(|r| r.get("method"))
            .and_then(JsonValue::as_str),
        Some("elicitation/create")
    );
    assert_eq!(
        requests
            .get("b")
            .and_then(|r| r.get("method"))
            .and_then(JsonValue::as_str),
        Some("roots/list")
    );

    // A poll from a client that cannot answer elicitation: -32021 naming it, no snapshot.
    let body = format!(r#""taskId":"{id}""#);
    let r = send(
        addr,
        "tasks/get",
        &body,
        &format!(r#""roots":{{}},{EXT}"#),
        Some(&id),
        "alice",
    )
    .await;
    assert_eq!((r.status, r.code()), (400, -32021));
    assert!(
        r.text()
            .contains(r#""requiredCapabilities":{"elicitation":{}}"#)
    );
    assert!(!r.text().contains("Sure?"));

    // inputResponses must be an object.
    let r = task(
        addr,
        "tasks/update",
        &id,
        r#","inputResponses":[]"#,
        "alice",
    )
    .await;
    assert_eq!((r.status, r.code()), (400, -32602));
    // A malformed answer, an unknown key: acknowledged, ignored.
    let r = task(
        addr,
        "tasks/update",
        &id,
        r#","inputResponses":{"a":{"action":"maybe"},"zz":{"action":"accept"}}"#,
        "alice",
    )
    .await;
    assert_eq!(
        r.result().get("resultType").and_then(JsonValue::as_str),
        Some("complete")
    );
    // One of two answers: still waiting, only the other key outstanding.
    let r = task(
        addr,
        "tasks/update",
        &id,
        r#","inputResponses":{"a":{"action":"accept","content":{"ok":true}}}"#,
        "alice",
    )
    .await;
    assert_eq!(r.status, 200);
    let still = task(addr, "tasks/get", &id, "", "alice").await;
    assert_eq!(status(&still), "input_required");
    let keys: Vec<String> = still
        .result()
        .get("inputRequests")
        .and_then(JsonValue::as_object)
        .unwrap()
        .keys()
        .map(str::to_owned)
        .collect();
    assert_eq!(keys, ["b"]);
    // Answering "a" again changes nothing; answering "b" resumes the work.
    task(
        addr,
        "tasks/update",
        &id,
        r#","inputResponses":{"a":{"action":"decline"}}"#,
        "alice",
    )
    .await;
    task(
        addr,
        "tasks/update",
        &id,
        r#","inputResponses":{"b":{"roots":[]}}"#,
        "alice",
    )
    .await;
    let done = until(addr, &id, "completed").await;
    assert_eq!(
        support::first_text(done.result().get("result").unwrap()),
        "a=accept b=true"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extension_gates_methods_and_required_tools() {
    let addr = server().await;
    let id = create(addr, "sleepy", r#"{"ms":10}"#).await;
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let params = format!(r#""taskId":"{id}","inputResponses":{{}}"#);
        let r = send(addr, method, &params, "", Some(&id), "alice").await;
        assert_eq!((r.status, r.code()), (400, -32021), "{method}");
        assert!(r.text().contains(
            r#""requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#
        ));
    }
    // A required-task tool refuses a client without the extension, before its handler.
    let r = call(addr, "must", "{}", "").await;
    assert_eq!((r.status, r.code()), (400, -32021));
    // An optional one completes inline; a forbidden one never sees a task creation.
    let r = call(addr, "sleepy", "{}", "").await;
    assert_eq!(support::first_text(&r.result()), "inline");
    let r = call(addr, "never", "{}", EXT).await;
    assert_eq!(support::first_text(&r.result()), "inline");
    // The removed methods do not exist.
    for method in ["tasks/list", "tasks/result"] {
        let r = task(addr, method, &id, "", "alice").await;
        assert_eq!(r.code(), -32601, "{method}");
    }
    // Mcp-Name must be the task id.
    let params = format!(r#""taskId":"{id}""#);
    let caps = EXT.to_owned();
    let r = send(
        addr,
        "tasks/get",
        &params,
        &caps,
        Some("someone-else"),
        "alice",
    )
    .await;
    assert_eq!((r.status, r.code()), (400, -32020));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_belong_to_their_principal_and_unknown_ids_are_not_found() {
    let addr = server().await;
    let id = create(addr, "sleepy", r#"{"ms":2000}"#).await;
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let r = task(addr, method, &id, r#","inputResponses":{}"#, "mallory").await;
        assert_eq!((r.status, r.code()), (400, -32602), "{method}");
        assert_eq!(r.message(), "Task not found");
        assert!(!r.text().contains(&id));
    }
    assert_eq!(
        status(&task(addr, "tasks/get", &id, "", "alice").await),
        "working"
    );
    let longest = "f".repeat(tollgate::task::MAX_TASK_ID_BYTES);
    let longer = "f".repeat(tollgate::task::MAX_TASK_ID_BYTES + 1);
    for unknown in [longest.as_str(), longer.as_str(), "nope"] {
        let r = task(addr, "tasks/get", unknown, "", "alice").await;
        assert_eq!((r.status, r.code()), (400, -32602));
        assert!(!r.text().contains(unknown));
    }
    task(addr, "tasks/cancel", &id, "", "alice").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_tasks_are_gone_and_a_full_store_refuses_new_ones() {
    let config = TaskConfig::default()
        .ttl(Duration::from_secs(1))
        .poll_interval(Duration::from_millis(100));
    let addr = start(McpService::new(endpoint(
        InMemoryTaskStore::with_capacity(1),
        config,
    )))
    .await;
    let id = create(addr, "sleepy", r#"{"ms":10}"#).await;
    // The store holds one task: a second is refused with the fixed internal error.
    let r = call(addr, "sleepy", r#"{"ms":10}"#, EXT).await;
    assert_eq!(r.code(), -32603);
    assert_eq!(status(&until(addr, &id, "completed").await), "completed");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let r = task(addr, "tasks/get", &id, "", "alice").await;
    assert_eq!((r.status, r.code()), (400, -32602));
    // The expired row made room.
    create(addr, "sleepy", r#"{"ms":10}"#).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_sharing_a_store_serve_each_others_tasks() {
    let store = Arc::new(InMemoryTaskStore::default());
    let config = TaskConfig::default().poll_interval(Duration::from_millis(100));
    let a = start(McpService::new(endpoint(store.clone(), config))).await;
    let b = start(McpService::new(endpoint(store, config))).await;

    // Created on A, answered and observed on B: A's worker picks the answers up by polling.
    let id = create(a, "asks", "{}").await;
    until(b, &id, "input_required").await;
    task(
        b,
        "tasks/update",
        &id,
        r#","inputResponses":{"a":{"action":"cancel"},"b":{"roots":[]}}"#,
        "alice",
    )
    .await;
    let done = until(b, &id, "completed").await;
    assert_eq!(
        support::first_text(done.result().get("result").unwrap()),
        "a=cancel b=true"
    );

    // Cancelled on B: A's worker stops within a poll interval.
    let id = create(a, "sleepy", r#"{"ms":1000,"label":"cancel-elsewhere"}"#).await;
    task(b, "tasks/cancel", &id, "", "alice").await;
    tokio::time::sleep(Duration::from_millis(1300)).await;
    assert!(!finished("cancel-elsewhere"));
    assert_eq!(
        status(&task(a, "tasks/get", &id, "", "alice").await),
        "cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_side_limits_hold_at_and_past_each_bound() {
    let addr = server().await;
    let id = create(addr, "limits", "{}").await;
    let parked = until(addr, &id, "input_required").await;
    let result = parked.result();
    assert_eq!(
        result.get("statusMessage").and_then(JsonValue::as_str),
        Some("limits ok")
    );
    let requests = result
        .get("inputRequests")
        .and_then(JsonValue::as_object)
        .unwrap();
    assert_eq!(requests.len(), 32);
    assert!(requests.contains_key(&"k".repeat(256)));
    task(addr, "tasks/cancel", &id, "", "alice").await;
    assert_eq!(
        status(&task(addr, "tasks/get", &id, "", "alice").await),
        "cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_handle_from_another_call_is_refused() {
    let addr = server().await;
    let first = call(addr, "foreign", "{}", EXT).await;
    assert_eq!(
        first.result().get("resultType").and_then(JsonValue::as_str),
        Some("task")
    );
    let second = call(addr, "foreign", "{}", EXT).await;
    assert_eq!((second.status, second.code()), (200, -32603));
}

#[test]
fn build_rules() {
    let sleepy_tool = |revisions: &[ProtocolVersion], support| {
        ToolRegistration::with_name(
            "t",
            revisions
                .iter()
                .copied()
                .collect::<tollgate::endpoint::ProtocolVersions>(),
        )
        .json_object_arguments()
        .handler(sleepy)
        .task_support(support)
        .build()
    };
    // Required tasks cannot be served on a revision without tasks (2025-11-25 has its
    // experimental ones).
    let v0618 = ProtocolVersion::V2025_06_18;
    let err = sleepy_tool(&[V26, v0618], TaskSupport::Required).unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidTaskSupport);
    assert!(sleepy_tool(&[V26, V1125], TaskSupport::Required).is_ok());
    assert!(sleepy_tool(&[V26, V1125, v0618], TaskSupport::Optional).is_ok());

    // A typed complete tool always completes inline.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct In {}
    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Out {
        ok: bool,
    }
    async fn typed(
        _: &RequestContext,
        _: ToolArguments<In>,
        _: &InvocationFeatures,
    ) -> Result<Out, TaskError> {
        Ok(Out { ok: true })
    }
    let err = ToolRegistration::with_name("typed", [V26])
        .argument_and_output_types::<In, Out>()
        .handler(typed)
        .task_support(TaskSupport::Optional)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidTaskSupport);

    // Task support needs a store; lifetimes must be in range.
    let tool = sleepy_tool(&[V26], TaskSupport::Optional).unwrap();
    let err = Endpoint::with_path("/mcp", [V26], Implementation::new("x", "1"))
        .add_tool(tool.clone())
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::TasksNotConfigured);
    assert_eq!(err.tool(), Some("t"));
    let err = Endpoint::with_path("/mcp", [V26], Implementation::new("x", "1"))
        .task_store(InMemoryTaskStore::default())
        .task_config(TaskConfig::default().ttl(Duration::from_millis(10)))
        .add_tool(tool)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::TasksNotConfigured);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_store_the_methods_do_not_exist() {
    let addr = start(McpService::new(
        Endpoint::with_path("/mcp", [V26], Implementation::new("x", "1"))
            .build()
            .unwrap(),
    ))
    .await;
    let discover = send(addr, "server/discover", "", "", None, "alice").await;
    assert!(
        discover
            .result()
            .get("capabilities")
            .and_then(|c| c.get("extensions"))
            .is_none()
    );
    let r = task(addr, "tasks/get", "abc", "", "alice").await;
    assert_eq!((r.status, r.code()), (404, -32601));
}

/// The whole flow once more with the embedded SQLite store behind two instances.
#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_store_serves_the_same_flow() {
    let dir = std::env::temp_dir().join(format!("tollgate-tasks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tasks.sqlite3");
    let _ = std::fs::remove_file(&path);
    let config = TaskConfig::default().poll_interval(Duration::from_millis(100));
    let store = Arc::new(tollgate::task::SqliteTaskStore::open(&path).await.unwrap());
    let a = start(McpService::new(endpoint(store.clone(), config))).await;
    let b = start(McpService::new(endpoint(store, config))).await;
    let id = create(a, "asks", "{}").await;
    until(b, &id, "input_required").await;
    task(
        b,
        "tasks/update",
        &id,
        r#","inputResponses":{"a":{"action":"accept","content":{"ok":true}},"b":{"roots":[]}}"#,
        "alice",
    )
    .await;
    let done = until(a, &id, "completed").await;
    assert_eq!(
        support::first_text(done.result().get("result").unwrap()),
        "a=accept b=true"
    );
    let r = task(b, "tasks/get", &id, "", "mallory").await;
    assert_eq!(r.code(), -32602);
    let _ = std::fs::remove_dir_all(&dir);
}

/// One admitted principal runs at most `max_running_per_principal` tasks here; the next
/// creation fails (-32603), others are not held back, and a task that ends gives its place back.
#[tokio::test]
async fn running_tasks_are_bounded_per_principal() {
    let addr = start(McpService::new(endpoint(
        InMemoryTaskStore::default(),
        TaskConfig::default()
            .poll_interval(Duration::from_millis(100))
            .max_running_per_principal(2),
    )))
    .await;
    let create_as = |user: &'static str, ms: u64| async move {
        let params =
            format!(r#""name":"sleepy","arguments":{{"ms":{ms},"label":"quota-{user}-{ms}"}}"#);
        send(addr, "tools/call", &params, EXT, Some("sleepy"), user).await
    };
    let first = create_as("carol", 300).await;
    assert_eq!(
        first.result().get("resultType").and_then(JsonValue::as_str),
        Some("task")
    );
    let second = create_as("carol", 60_000).await;
    assert_eq!(
        second
            .result()
            .get("resultType")
            .and_then(JsonValue::as_str),
        Some("task")
    );
    let past = create_as("carol", 60_001).await;
    assert_eq!(past.code(), -32603, "{}", past.text());
    // Another principal has places of its own.
    let dave = create_as("dave", 60_000).await;
    assert_eq!(
        dave.result().get("resultType").and_then(JsonValue::as_str),
        Some("task")
    );
    // The first task ends (after 300 ms): its place comes back.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let again = create_as("carol", 60_002).await;
        let kind = again
            .json()
            .get("result")
            .and_then(|r| r.get("resultType"))
            .cloned();
        if kind.as_ref().and_then(JsonValue::as_str) == Some("task") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{}", again.text());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
