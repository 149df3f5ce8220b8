//! The PostgreSQL task store against a real server: the store contract, and two instances
//! sharing one database. Needs `TOLLGATE_TEST_POSTGRES_URL`; `scripts/test` starts a
//! throwaway PostgreSQL and runs these with `--ignored`.

#![cfg(feature = "postgres")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

mod support;

use std::time::Duration;

use support::{post, start};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    task::{PostgresTaskStore, TaskConfig, TaskCreation},
    tool::{CompleteResult, OperationResult, TaskSupport},
};

fn url() -> String {
    std::env::var("TOLLGATE_TEST_POSTGRES_URL")
        .expect("TOLLGATE_TEST_POSTGRES_URL names the test database (scripts/test sets it)")
}

#[tokio::test]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn postgres_keeps_the_store_contract() {
    let store = PostgresTaskStore::connect(&url()).await.unwrap();
    let prefix = format!("contract-{}-", std::process::id());
    assert_eq!(
        tollgate::__private::check_store_contract(&store, &prefix).await,
        Ok(())
    );
}

async fn slow(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, tollgate::task::TaskError> {
    let tasks = features
        .require::<TaskCreation>()
        .map_err(|_| tollgate::task::TaskError::internal())?;
    Ok(tasks
        .spawn(|_| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(CompleteResult::from_tool_text("done"))
        })
        .await?
        .into())
}

async fn instance(store: PostgresTaskStore) -> std::net::SocketAddr {
    let v26 = ProtocolVersion::V2026_07_28;
    start(McpService::new(
        Endpoint::with_path("/mcp", [v26], Implementation::new("pg", "1"))
            .task_store(store)
            .task_config(TaskConfig::default().poll_interval(Duration::from_millis(100)))
            .add_tool(
                ToolRegistration::with_name("slow", [v26])
                    .json_object_arguments()
                    .handler(slow)
                    .task_support(TaskSupport::Required)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    ))
    .await
}

async fn send(addr: std::net::SocketAddr, method: &str, params: &str, name: &str) -> JsonValue {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"extensions":{{"io.modelcontextprotocol/tasks":{{}}}}}}}}}}}}"#
    );
    let r = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", name),
        ],
        body.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.result()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn two_instances_share_tasks_through_postgres() {
    let a = instance(PostgresTaskStore::connect(&url()).await.unwrap()).await;
    let b = instance(PostgresTaskStore::connect(&url()).await.unwrap()).await;
    let created = send(a, "tools/call", r#""name":"slow","arguments":{}"#, "slow").await;
    let id = created
        .get("taskId")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned();
    let params = format!(r#""taskId":"{id}""#);
    // Visible on B at once, completed by A's worker, read on B.
    let seen = send(b, "tasks/get", &params, &id).await;
    assert_eq!(
        seen.get("status").and_then(JsonValue::as_str),
        Some("working")
    );
    let mut status = String::new();
    for _ in 0..50 {
        let r = send(b, "tasks/get", &params, &id).await;
        status = r
            .get("status")
            .and_then(JsonValue::as_str)
            .unwrap()
            .to_owned();
        if status == "completed" {
            assert_eq!(support::first_text(r.get("result").unwrap()), "done");
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, "completed");
}
