//! 2025-11-25's experimental tasks over stdio, in a session: a task-augmented call answers its
//! task, a poll of a task waiting for input asks nothing (stdio has no standalone stream), and
//! `tasks/result` asks the work's request as a line naming the task, takes the client's answer
//! line, and answers the call's result with the task in `_meta`.

use std::time::Duration;

use tollgate::context::InputRequest;
use tollgate::json::{JsonObject, JsonValue};
use tollgate::task::{InMemoryTaskStore, TaskConfig, TaskContext, TaskCreation, TaskError};
use tollgate::tool::{
    CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement, OperationResult,
    TaskSupport,
};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext, ToolArguments,
    ToolRegistration,
};

use crate::{Pipe, serve};

/// Asks the client to confirm in a task, then reports the answer's action.
async fn confirm(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, TaskError> {
    let creation = features
        .require::<TaskCreation>()
        .map_err(|_| TaskError::internal())?;
    Ok(creation
        .spawn(|task: TaskContext| async move {
            let ask = InputRequest::elicitation("Sure?", JsonObject::new());
            let answers = task.request_input([("sure", ask)]).await?;
            let action = answers
                .get("sure")
                .and_then(|a| a.get("action"))
                .and_then(JsonValue::as_str)
                .unwrap_or("none")
                .to_owned();
            Ok(CompleteResult::from_tool_text(action))
        })
        .await?
        .into())
}

fn endpoint() -> Endpoint {
    let both = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];
    Endpoint::with_path("/mcp", both, Implementation::new("stdio-tasks", "1"))
        .task_store(InMemoryTaskStore::default())
        .task_config(TaskConfig::default().poll_interval(Duration::from_millis(50)))
        .add_tool(
            ToolRegistration::with_name("confirm", both)
                .json_object_arguments()
                .handler(confirm)
                .task_support(TaskSupport::Required)
                .input_request_declarations([InputRequestDeclaration::new(
                    InputRequestKind::Elicitation,
                    InputRequirement::Conditional,
                )])
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

async fn status(pipe: &mut Pipe, id: &str) -> String {
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{{"taskId":"{id}"}}}}"#
    ))
    .await;
    let line = pipe.receive().await;
    let status = line.get("result").and_then(|r| r.get("status"));
    status.and_then(JsonValue::as_str).unwrap_or("").to_owned()
}

#[tokio::test]
async fn a_task_s_input_is_asked_in_lines_by_tasks_result() {
    let mut pipe = serve(endpoint());
    pipe.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}"#).await;
    let init = pipe.receive().await;
    let tasks = init
        .get("result")
        .and_then(|r| r.get("capabilities"))
        .and_then(|c| c.get("tasks"));
    assert!(tasks.is_some(), "{init:?}");
    pipe.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    pipe.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm","arguments":{},"task":{}}}"#).await;
    let created = pipe.receive().await;
    let id = created
        .get("result")
        .and_then(|r| r.get("task"))
        .and_then(|t| t.get("taskId"))
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned();
    // Polled until it waits: each poll's answer is the next line (nothing is asked between).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while status(&mut pipe, &id).await != "input_required" {
        assert!(tokio::time::Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{{"taskId":"{id}"}}}}"#
    ))
    .await;
    let asked = pipe.receive().await;
    assert_eq!(
        asked.get("method").and_then(JsonValue::as_str),
        Some("elicitation/create")
    );
    let related = asked
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("io.modelcontextprotocol/related-task"))
        .and_then(|r| r.get("taskId"))
        .and_then(JsonValue::as_str);
    assert_eq!(related, Some(id.as_str()));
    let asked_id = asked
        .get("id")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned();
    pipe.send(&format!(
        r#"{{"jsonrpc":"2.0","id":"{asked_id}","result":{{"action":"accept","content":{{}}}}}}"#
    ))
    .await;
    let result = pipe.receive().await;
    let id_of = result
        .get("id")
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_i64());
    assert_eq!(id_of, Some(2), "{result:?}");
    let content = result.get("result").and_then(|r| r.get("content"));
    let text = content
        .and_then(JsonValue::as_array)
        .and_then(|c| c.first())
        .and_then(|b| b.get("text"))
        .and_then(JsonValue::as_str);
    assert_eq!(text, Some("accept"), "{result:?}");
    let meta = result.get("result").and_then(|r| r.get("_meta"));
    assert!(
        meta.and_then(|m| m.get("io.modelcontextprotocol/related-task"))
            .is_some()
    );
}
