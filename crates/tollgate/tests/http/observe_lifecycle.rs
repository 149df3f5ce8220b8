//! The store, session and task events an operator sees (issue 45), from the outside, with the
//! capturing subscriber of `observe`: a 2025 session created and deleted, a task's status
//! changes, and a task store that fails (the `tollgate::store` event, then the retryable busy
//! answer), none of them carrying the session id, the task id or the arguments.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use super::observe::{MARKER, captured};
use crate::support::{self, post, raw, start};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tollgate::json::{JsonObject, JsonValue};
use tollgate::task::{
    InMemoryTaskStore, StoreFuture, TaskConfig, TaskCreation, TaskError, TaskRow, TaskStore,
    TaskStoreError, TaskStoreErrorKind,
};
use tollgate::tool::{CompleteResult, OperationResult, TaskSupport};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
};

const V25: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;

#[tokio::test]
async fn a_session_created_and_deleted_is_two_events_without_its_id() {
    let mut session = String::new();
    let capture = captured(|_| async {
        let endpoint = Endpoint::with_path("/mcp", [V25], Implementation::new("sessions", "1"))
            .build()
            .unwrap();
        let addr = start(McpService::new(endpoint)).await;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"{MARKER}","version":"1"}}}}}}"#
        );
        let opened = post(addr, &[], body.as_bytes()).await;
        assert_eq!(opened.status, 200, "{}", opened.text());
        session = opened.header("mcp-session-id").unwrap().to_owned();
        let delete = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(raw(addr, delete.as_bytes()).await.status, 200);
    })
    .await;
    let events = capture.of("tollgate::session");
    let messages: Vec<_> = events.iter().map(|e| e.field("message").unwrap()).collect();
    assert_eq!(messages, ["session created", "session ended: deleted"]);
    assert!(events.iter().all(|e| e.level == tracing::Level::DEBUG));
    for event in &events {
        assert!(
            !format!("{event:?}").contains(&session),
            "the session id is a credential: {event:?}"
        );
    }
    capture.assert_no_marker();
}

/// A task store that fails every call while `down` is set, and is the in-memory store otherwise.
#[derive(Clone, Default)]
struct Flaky {
    down: Arc<AtomicBool>,
    rows: Arc<InMemoryTaskStore>,
}

impl Flaky {
    fn failing<T: Send + 'static>(&self) -> Option<StoreFuture<'_, T>> {
        self.down
            .load(Ordering::SeqCst)
            .then(|| -> StoreFuture<'_, T> {
                Box::pin(async { Err(TaskStoreError::new(TaskStoreErrorKind::Backend)) })
            })
    }
}

impl TaskStore for Flaky {
    fn insert<'a>(&'a self, row: TaskRow) -> StoreFuture<'a, ()> {
        self.failing().unwrap_or_else(|| self.rows.insert(row))
    }
    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRow>> {
        self.failing().unwrap_or_else(|| self.rows.load(id))
    }
    fn replace<'a>(&'a self, row: TaskRow, expected_version: u64) -> StoreFuture<'a, bool> {
        self.failing()
            .unwrap_or_else(|| self.rows.replace(row, expected_version))
    }
    fn purge_expired<'a>(&'a self, now_ms: u64) -> StoreFuture<'a, u64> {
        self.failing()
            .unwrap_or_else(|| self.rows.purge_expired(now_ms))
    }
}

async fn job(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, TaskError> {
    let tasks = features
        .require::<TaskCreation>()
        .map_err(|_| TaskError::internal())?;
    Ok(tasks
        .spawn(|_| async { Ok(CompleteResult::from_tool_text("finished")) })
        .await?
        .into())
}

/// Calls the task tool `job` with the tasks extension declared.
async fn call_job(addr: std::net::SocketAddr) -> support::Response {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"job","arguments":{{"n":"{MARKER}"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"extensions":{{"io.modelcontextprotocol/tasks":{{}}}}}}}}}}}}"#
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "job"),
    ];
    post(addr, &headers, body.as_bytes()).await
}

#[tokio::test]
async fn a_failing_task_store_is_a_store_event_and_a_task_reports_its_statuses() {
    let store = Flaky::default();
    let down = Arc::clone(&store.down);
    let capture = captured(|capture| async move {
        let endpoint = Endpoint::with_path("/mcp", [V26], Implementation::new("tasks", "1"))
            .task_store(store)
            .task_config(TaskConfig::default().poll_interval(Duration::from_millis(50)))
            .add_tool(
                ToolRegistration::with_name("job", [V26])
                    .json_object_arguments()
                    .handler(job)
                    .task_support(TaskSupport::Required)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap();
        let addr = start(McpService::new(endpoint)).await;
        // The store is down: the call is the retryable busy answer, and the store says why.
        down.store(true, Ordering::SeqCst);
        let refused = call_job(addr).await;
        assert_eq!((refused.status, refused.code()), (503, -32603));
        let failed = capture.of("tollgate::store");
        assert!(!failed.is_empty(), "no store event");
        for event in &failed {
            assert_eq!(event.level, tracing::Level::WARN);
            assert_eq!(event.field("store"), Some("task"));
            assert_eq!(event.field("outcome"), Some("error"));
            assert!(event.field("operation").is_some(), "{event:?}");
        }
        // Up again: the task is created and runs to completion.
        down.store(false, Ordering::SeqCst);
        let created = call_job(addr).await;
        assert_eq!(created.status, 200, "{}", created.text());
        let id = created
            .result()
            .get("taskId")
            .and_then(JsonValue::as_str)
            .map(str::to_owned);
        assert!(id.is_some(), "{}", created.text());
        // The work is spawned: wait (bounded) for its last status.
        for _ in 0..200 {
            let done = capture
                .of("tollgate::task")
                .iter()
                .any(|e| e.field("status") == Some("completed"));
            if done {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let statuses: Vec<_> = capture
        .of("tollgate::task")
        .iter()
        .map(|e| e.field("status").unwrap().to_owned())
        .collect();
    // Created `working` (no change yet), then one change: to `completed`.
    assert_eq!(statuses, ["completed"]);
    capture.assert_no_marker();
}
