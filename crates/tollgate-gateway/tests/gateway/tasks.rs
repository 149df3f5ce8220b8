//! Tasks relayed (2026-07-28 on both sides): an upstream Tollgate server whose tools create
//! tasks, behind the gateway served over HTTP with an admission that names two principals. The
//! caller gets a task of the gateway's own (never the upstream's id), followed through
//! `tasks/get` (status message, input requests answered with `tasks/update`, result checked
//! against the output schema, its resource links served as `PREFIX+uri`), `tasks/cancel` reaching the upstream task, and another
//! principal never finding the task. And a 2025-11-25 caller asking for a task of the same
//! tools (that revision's experimental tasks), answered from the gateway's own task.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tollgate::context::InputRequest;
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest};
use tollgate::task::{InMemoryTaskStore, TaskConfig, TaskCreation, TaskError};
use tollgate::tool::{
    CompleteResult, ForeignCheck, ForeignSchema, InputRequestDeclaration, InputRequestKind,
    InputRequirement, OperationResult, TaskSupport,
};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, RequestContext, Server,
    ToolArguments, ToolRegistration,
};
use tollgate_client::{Client, Revision};
use tollgate_gateway::Gateway;

use crate::upstream::{V26, config, object};

/// What the upstream saw: task works dropped before they ended (cancelled), and the ids of the
/// tasks it created.
#[derive(Clone, Default)]
struct Seen {
    cancelled: Arc<AtomicUsize>,
    ids: Arc<std::sync::Mutex<Vec<String>>>,
}

/// Counts a task's work dropped before it ended.
struct Unfinished(Arc<AtomicUsize>, bool);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Publishes `{"n": integer, multipleOf 2}` (outside Profile 1) and accepts anything: a lying
/// upstream as far as the gateway is concerned.
struct Even(JsonValue);

impl ForeignSchema for Even {
    fn document(&self) -> &JsonValue {
        &self.0
    }
    fn check(&self, _: &JsonValue) -> ForeignCheck {
        ForeignCheck::Valid
    }
}

type Outcome = Result<OperationResult, TaskError>;

/// The upstream's tools, each creating a task when it can: `slow` (a status message, then
/// `done` after `ms`), `ask` (an elicitation, then the answer), `fail` (a failed task), `even`
/// (structured `{"n": n}` under a schema the gateway holds it to).
async fn tasks_upstream(seen: &Seen) -> std::net::SocketAddr {
    let s = seen.clone();
    let slow = move |_: &RequestContext, a: ToolArguments<JsonObject>, f: &InvocationFeatures| {
        let ms = a
            .raw()
            .get("ms")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_u64())
            .unwrap_or(0);
        let creation = f.find::<TaskCreation>().cloned();
        let s = s.clone();
        async move {
            let created = creation
                .ok_or_else(TaskError::internal)?
                .spawn(move |task| async move {
                    s.ids.lock().unwrap().push(task.id().to_owned());
                    let mut guard = Unfinished(s.cancelled, false);
                    task.set_status_message("halfway").await.ok();
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    guard.1 = true;
                    // A link in the result: served as `PREFIX+uri` through the gateway.
                    let result = object(
                        r#"{"content":[{"type":"text","text":"done"},{"type":"resource_link","uri":"file:///done","name":"done"}]}"#,
                    );
                    CompleteResult::from_wire(&result).ok_or_else(TaskError::internal)
                })
                .await?;
            Ok::<OperationResult, TaskError>(created.into())
        }
    };
    let ask = |_: &RequestContext, _: ToolArguments<JsonObject>, f: &InvocationFeatures| {
        let creation = f.find::<TaskCreation>().cloned();
        async move {
            let created = creation
                .ok_or_else(TaskError::internal)?
                .spawn(|task| async move {
                    let ask = InputRequest::elicitation("Proceed?", JsonObject::new());
                    let answers = task
                        .request_input([("go", ask)])
                        .await
                        .map_err(|_| TaskError::internal())?;
                    let action = answers
                        .get("go")
                        .and_then(|a| a.get("action"))
                        .and_then(JsonValue::as_str)
                        .unwrap_or("none")
                        .to_owned();
                    Ok(CompleteResult::from_tool_text(action))
                })
                .await?;
            Outcome::Ok(created.into())
        }
    };
    let fail = |_: &RequestContext, _: ToolArguments<JsonObject>, f: &InvocationFeatures| {
        let creation = f.find::<TaskCreation>().cloned();
        async move {
            let created = creation
                .ok_or_else(TaskError::internal)?
                .spawn(|_| async {
                    Err(TaskError::application(-31000, "upstream detail").unwrap())
                })
                .await?;
            Outcome::Ok(created.into())
        }
    };
    let even = |_: &RequestContext, a: ToolArguments<JsonObject>, f: &InvocationFeatures| {
        let n = a.raw().get("n").cloned().unwrap_or(JsonValue::Null);
        let creation = f.find::<TaskCreation>().cloned();
        async move {
            let created = creation
                .ok_or_else(TaskError::internal)?
                .spawn(move |_| async move {
                    let structured = JsonObject::builder().insert("n", n).build();
                    Ok(CompleteResult::from_tool_structured_content(structured))
                })
                .await?;
            Outcome::Ok(created.into())
        }
    };
    let tool = |name: &str| ToolRegistration::with_name(name, [V26]).json_object_arguments();
    let even_schema = Even(
        from_str(
            r#"{"type":"object","properties":{"n":{"type":"integer","multipleOf":2}},"required":["n"]}"#,
            &JsonLimits::default(),
        )
        .unwrap(),
    );
    let endpoint = Endpoint::with_path("/mcp", [V26], Implementation::new("tasks", "1"))
        .task_store(InMemoryTaskStore::default())
        .task_config(TaskConfig::default().poll_interval(Duration::from_millis(50)))
        .add_tool(
            tool("slow")
                .handler(slow)
                .task_support(TaskSupport::Required)
                .build()
                .unwrap(),
        )
        .add_tool(
            tool("ask")
                .handler(ask)
                .task_support(TaskSupport::Required)
                .input_request_declarations([InputRequestDeclaration::new(
                    InputRequestKind::Elicitation,
                    InputRequirement::Conditional,
                )])
                .build()
                .unwrap(),
        )
        .add_tool(
            tool("fail")
                .handler(fail)
                .task_support(TaskSupport::Required)
                .build()
                .unwrap(),
        )
        .add_tool(
            tool("even")
                .foreign_output_schema(even_schema)
                .unwrap()
                .handler(even)
                .task_support(TaskSupport::Required)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), McpService::new(endpoint))
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));
    addr
}

/// Admits `Bearer alice` and `Bearer bob` as those principals.
fn two_principals(request: &AdmissionRequest<'_>) -> AdmissionDecision {
    match request.header("authorization") {
        Some("Bearer alice") => AdmissionDecision::admit(AdmissionIdentity::principal("alice")),
        Some("Bearer bob") => AdmissionDecision::admit(AdmissionIdentity::principal("bob")),
        _ => AdmissionDecision::unauthorized(),
    }
}

/// The gateway in front of `upstream`, served over HTTP; its URL.
async fn served_gateway(upstream: std::net::SocketAddr) -> (Gateway, String) {
    served_gateway_on(upstream, &[V26]).await
}

/// [`served_gateway`], serving `revisions`.
async fn served_gateway_on(
    upstream: std::net::SocketAddr,
    revisions: &[tollgate::ProtocolVersion],
) -> (Gateway, String) {
    let gateway = Gateway::connect(&config(&[("up", upstream, Some("up"))]), revisions)
        .await
        .unwrap();
    let endpoint = gateway
        .install(Endpoint::with_path(
            "/mcp",
            revisions
                .iter()
                .copied()
                .collect::<tollgate::endpoint::ProtocolVersions>(),
            Implementation::new("gateway", "1"),
        ))
        .admission(two_principals)
        .build()
        .unwrap();
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), McpService::new(endpoint))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", server.local_addr().unwrap());
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));
    (gateway, url)
}

/// A caller declaring the tasks extension (and elicitation) as `who`.
async fn caller(url: &str, who: &str) -> Client {
    Client::builder()
        .bearer_token(who)
        .unwrap()
        .capabilities(object(
            r#"{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}"#,
        ))
        .revisions([Revision::V2026_07_28])
        .connect_http(url)
        .await
        .unwrap()
}

fn text(result: &JsonValue) -> Option<&str> {
    result
        .get("content")?
        .as_array()?
        .first()?
        .get("text")?
        .as_str()
}

fn status(task: &JsonValue) -> Option<&str> {
    task.get("status").and_then(JsonValue::as_str)
}

/// Polls the gateway's task until `done` says so (bounded: 200 polls).
async fn until(client: &Client, id: &str, done: impl Fn(&JsonValue) -> bool) -> JsonValue {
    for _ in 0..200 {
        let task = client.get_task(id).await.unwrap();
        if done(&task) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the task never reached the state looked for");
}

/// Creates a task through the gateway: its id.
async fn created(client: &Client, tool: &str, arguments: &str) -> String {
    let result = client.call_tool(tool, object(arguments)).await.unwrap();
    assert_eq!(
        result.get("resultType").and_then(JsonValue::as_str),
        Some("task"),
        "{tool}: {result:?}"
    );
    result
        .get("taskId")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_task_becomes_the_caller_s_own_and_is_followed_to_its_result() {
    let seen = Seen::default();
    let (gateway, url) = served_gateway(tasks_upstream(&seen).await).await;
    let alice = caller(&url, "alice").await;
    let bob = caller(&url, "bob").await;

    let id = created(&alice, "up_slow", r#"{"ms":300}"#).await;
    // The upstream's status message is followed.
    let working = until(&alice, &id, |t| {
        t.get("statusMessage").and_then(JsonValue::as_str) == Some("halfway")
    })
    .await;
    assert_eq!(status(&working), Some("working"));
    // The gateway's own id: never the upstream's.
    let upstream_ids = seen.ids.lock().unwrap().clone();
    assert_eq!(upstream_ids.len(), 1);
    assert_ne!(id, upstream_ids[0]);
    // Another principal finds neither the gateway's task nor, by the upstream's id, any.
    for probe in [&id, &upstream_ids[0]] {
        let refused = bob.get_task(probe).await.unwrap_err();
        assert_eq!(refused.code(), Some(-32602), "{probe}");
        assert_eq!(
            bob.cancel_task(probe).await.unwrap_err().code(),
            Some(-32602)
        );
    }
    assert_eq!(
        alice.get_task(&upstream_ids[0]).await.unwrap_err().code(),
        Some(-32602)
    );
    let done = until(&alice, &id, |t| status(t) == Some("completed")).await;
    assert_eq!(done.get("result").and_then(text), Some("done"));
    // The result's resource link is served as the gateway serves the upstream's URIs.
    let link = done
        .get("result")
        .and_then(|r| r.get("content"))
        .and_then(|c| c.as_array())
        .and_then(|c| c.get(1))
        .and_then(|b| b.get("uri"))
        .and_then(JsonValue::as_str);
    assert_eq!(link, Some("up+file:///done"));
    assert!(done.get("statusMessage").is_none());

    // A caller that did not declare the extension is not given a task: the upstream's
    // task-required tool refuses the call with -32021 naming the extension, and the caller
    // gets the endpoint's own -32021 naming it (never the internal error).
    let plain = Client::builder()
        .bearer_token("alice")
        .unwrap()
        .revisions([Revision::V2026_07_28])
        .connect_http(&url)
        .await
        .unwrap();
    let refused = plain
        .call_tool("up_slow", object(r#"{"ms":0}"#))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some(-32021));
    let named = refused
        .data()
        .and_then(|d| d.get("requiredCapabilities"))
        .and_then(|r| r.get("extensions"))
        .and_then(|e| e.get("io.modelcontextprotocol/tasks"));
    assert!(named.is_some(), "{:?}", refused.data());
    assert_eq!(seen.ids.lock().unwrap().len(), 1, "no upstream task for it");

    for client in [alice, bob, plain] {
        client.close().await.unwrap();
    }
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_failure_cancellation_and_the_output_schema_go_through_the_gateway_s_task() {
    let seen = Seen::default();
    let (gateway, url) = served_gateway(tasks_upstream(&seen).await).await;
    let alice = caller(&url, "alice").await;

    // input_required: the upstream's request asked through the gateway's task, the answer
    // sent back with tasks/update, the upstream's result shown.
    let id = created(&alice, "up_ask", "{}").await;
    let waiting = until(&alice, &id, |t| status(t) == Some("input_required")).await;
    let request = waiting
        .get("inputRequests")
        .and_then(|r| r.get("go"))
        .unwrap();
    assert_eq!(
        request.get("method").and_then(JsonValue::as_str),
        Some("elicitation/create")
    );
    let answer = object(r#"{"go":{"action":"accept","content":{}}}"#);
    alice.update_task(&id, answer).await.unwrap();
    let done = until(&alice, &id, |t| status(t) == Some("completed")).await;
    assert_eq!(done.get("result").and_then(text), Some("accept"));

    // A failed upstream task fails the gateway's with the fixed -32603 (the upstream's own
    // error text is not passed on).
    let id = created(&alice, "up_fail", "{}").await;
    let failed = until(&alice, &id, |t| status(t) == Some("failed")).await;
    let error = failed.get("error").unwrap();
    assert_eq!(
        error
            .get("code")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64()),
        Some(-32603)
    );
    assert!(!format!("{failed:?}").contains("upstream detail"));

    // The result held to the tool's output schema (outside Profile 1: the gateway's complete
    // validator): an even n is shown, an odd one is the fixed -32603 on tasks/get.
    let id = created(&alice, "up_even", r#"{"n":4}"#).await;
    let done = until(&alice, &id, |t| status(t) == Some("completed")).await;
    let n = done
        .get("result")
        .and_then(|r| r.get("structuredContent"))
        .and_then(|s| s.get("n"));
    assert_eq!(
        n.and_then(JsonValue::as_number).and_then(|n| n.to_i64()),
        Some(4)
    );
    let id = created(&alice, "up_even", r#"{"n":3}"#).await;
    let mut refused = None;
    for _ in 0..200 {
        match alice.get_task(&id).await {
            Ok(task) if status(&task) == Some("completed") => panic!("shown: {task:?}"),
            Ok(_) => tokio::time::sleep(Duration::from_millis(25)).await,
            Err(error) => {
                refused = error.code();
                break;
            }
        }
    }
    assert_eq!(refused, Some(-32603));

    // Cancelling the gateway's task cancels the upstream's.
    let before = seen.cancelled.load(Ordering::SeqCst);
    let id = created(&alice, "up_slow", r#"{"ms":600000}"#).await;
    until(&alice, &id, |t| t.get("statusMessage").is_some()).await;
    alice.cancel_task(&id).await.unwrap();
    let cancelled = until(&alice, &id, |t| status(t) == Some("cancelled")).await;
    assert!(cancelled.get("result").is_none());
    let mut relayed = false;
    for _ in 0..200 {
        if seen.cancelled.load(Ordering::SeqCst) > before {
            relayed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(relayed, "the upstream task was not cancelled");

    alice.close().await.unwrap();
    gateway.close().await;
}

/// A 2025-11-25 caller asks the gateway for a task (`params.task`) of a tool whose upstream
/// serves the 2026-07-28 extension: the gateway's own task follows the upstream's, and
/// `tasks/result` answers as the call would have (its result with the task named in `_meta`,
/// or the fixed error of a failed one), in that revision's shapes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_caller_asks_for_a_task_and_gets_the_gateway_s() {
    use tollgate::ProtocolVersion;
    let seen = Seen::default();
    let upstream = tasks_upstream(&seen).await;
    let (_gateway, url) = served_gateway_on(upstream, &[V26, ProtocolVersion::V2025_11_25]).await;
    let alice = Client::builder()
        .bearer_token("alice")
        .unwrap()
        .revisions([Revision::V2025_11_25])
        .connect_http(&url)
        .await
        .unwrap();
    // The capability and each tool's task support, as that revision publishes them.
    let tasks = alice
        .server()
        .get("capabilities")
        .and_then(|c| c.get("tasks"));
    assert!(
        tasks.and_then(|t| t.get("requests")).is_some(),
        "{:?}",
        alice.server()
    );
    let listed = alice.request("tools/list", None).await.unwrap();
    let slow = listed
        .get("tools")
        .and_then(JsonValue::as_array)
        .and_then(|t| {
            t.iter()
                .find(|t| t.get("name").and_then(JsonValue::as_str) == Some("up_slow"))
        })
        .cloned()
        .unwrap();
    assert_eq!(
        slow.get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(JsonValue::as_str),
        Some("optional")
    );
    let ask = |tool: &str| {
        object(&format!(
            r#"{{"name":"{tool}","arguments":{{"ms":100}},"task":{{}}}}"#
        ))
    };
    let created = alice
        .request("tools/call", Some(ask("up_slow")))
        .await
        .unwrap();
    let task = created.get("task").unwrap();
    assert_eq!(
        task.get("status").and_then(JsonValue::as_str),
        Some("working")
    );
    let id = task
        .get("taskId")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned();
    let by_id = object(&format!(r#"{{"taskId":"{id}"}}"#));
    let result = alice
        .request("tasks/result", Some(by_id.clone()))
        .await
        .unwrap();
    assert_eq!(text(&result), Some("done"), "{result:?}");
    let related = result
        .get("_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/related-task"))
        .and_then(|r| r.get("taskId"))
        .and_then(JsonValue::as_str);
    assert_eq!(related, Some(id.as_str()));
    // The gateway's own id, never the upstream's.
    assert!(!seen.ids.lock().unwrap().contains(&id));
    let got = alice.request("tasks/get", Some(by_id)).await.unwrap();
    assert_eq!(status(&got), Some("completed"));
    // A failed upstream task: `tasks/result` is the fixed error, no upstream detail.
    let created = alice
        .request("tools/call", Some(ask("up_fail")))
        .await
        .unwrap();
    let id = created
        .get("task")
        .and_then(|t| t.get("taskId"))
        .and_then(JsonValue::as_str)
        .unwrap();
    let by_id = object(&format!(r#"{{"taskId":"{id}"}}"#));
    let error = alice
        .request("tasks/result", Some(by_id))
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(-32603));
    assert!(!format!("{error:?}").contains("upstream detail"));
}
