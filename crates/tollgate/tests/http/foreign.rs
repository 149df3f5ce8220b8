//! Tools whose schemas are outside Profile 1 (`ForeignSchema`, what a gateway imports), over
//! real HTTP on each revision: the document is published as written, arguments its validator
//! refuses get the revision's invalid-arguments answer exactly as under a Profile 1 schema (and
//! the handler never runs), a structured result it refuses is the fixed -32603, and a document
//! that is not an object schema is refused at build; a task's result is held to it at `tasks/get`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use support::{post, start};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::task::{InMemoryTaskStore, TaskCreation};
use tollgate::tool::{CompleteResult, ForeignCheck, ForeignSchema, INVALID_ARGUMENTS_TEXT};
use tollgate::tool::{OperationResult, TaskSupport, ToolOutput};
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext, ToolArguments, ToolRegistration,
};

const ALL: [ProtocolVersion; 3] = [
    ProtocolVersion::V2026_07_28,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2025_06_18,
];

/// Accepts objects whose `n` is an integer of at most 10 (as `{"maximum": 10}` would say).
struct AtMostTen(JsonValue);

impl ForeignSchema for AtMostTen {
    fn document(&self) -> &JsonValue {
        &self.0
    }
    fn check(&self, instance: &JsonValue) -> ForeignCheck {
        match instance
            .get("n")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64())
        {
            Some(n) if n <= 10 => ForeignCheck::Valid,
            _ => ForeignCheck::Invalid,
        }
    }
}

fn schema() -> AtMostTen {
    AtMostTen(
        from_str(
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer","maximum":10}},"required":["n"]}"#,
            &JsonLimits::default(),
        )
        .unwrap(),
    )
}

fn endpoint(calls: &Arc<AtomicUsize>) -> Endpoint {
    let counted = Arc::clone(calls);
    let echo = move |_: &RequestContext, a: ToolArguments<JsonObject>, _: &InvocationFeatures| {
        counted.fetch_add(1, Ordering::SeqCst);
        let n = a.raw().get("n").cloned().unwrap_or(JsonValue::Null);
        async move {
            let structured = JsonObject::builder().insert("n", n).build();
            let output = ToolOutput::builder()
                .add_content(tollgate::content::TextContent::new("n"))
                .structured_content(structured)
                .build();
            Ok::<OperationResult, std::convert::Infallible>(
                CompleteResult::with_tool_output(output).build().into(),
            )
        }
    };
    Endpoint::with_path("/mcp", ALL, Implementation::new("foreign", "1"))
        .legacy_sessions(None)
        .add_tool(
            ToolRegistration::with_name("bounded", ALL)
                .json_object_arguments()
                .foreign_input_schema(schema())
                .unwrap()
                .foreign_output_schema(schema())
                .unwrap()
                .handler(echo)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

async fn call(addr: std::net::SocketAddr, revision: ProtocolVersion, n: i64) -> support::Response {
    let meta = if revision == ProtocolVersion::V2026_07_28 {
        r#","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
    } else {
        ""
    };
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"bounded","arguments":{{"n":{n}}}{meta}}}}}"#
    );
    let headers = [
        ("MCP-Protocol-Version", revision.as_str()),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "bounded"),
    ];
    let headers = if revision == ProtocolVersion::V2026_07_28 {
        &headers[..]
    } else {
        &headers[..1]
    };
    post(addr, headers, body.as_bytes()).await
}

#[tokio::test]
async fn a_foreign_schema_is_published_as_written_and_checked_like_profile_1() {
    let calls = Arc::new(AtomicUsize::new(0));
    let endpoint = endpoint(&calls);
    let listed = endpoint.tools()[0].input_schema().clone();
    assert_eq!(listed, *schema().document(), "published as written");
    let addr = start(McpService::new(endpoint)).await;
    for revision in ALL {
        // Valid arguments: the handler runs and its structured result passes the output check.
        let ok = call(addr, revision, 3).await;
        assert_eq!(ok.status, 200, "{revision}: {}", ok.text());
        assert_eq!(
            ok.result()
                .get("structuredContent")
                .and_then(|s| s.get("n"))
                .and_then(JsonValue::as_number)
                .and_then(|n| n.to_i64()),
            Some(3)
        );
        // Refused by the foreign check: the revision's own answer, the handler not run.
        let before = calls.load(Ordering::SeqCst);
        let refused = call(addr, revision, 11).await;
        assert_eq!(
            calls.load(Ordering::SeqCst),
            before,
            "{revision}: the handler ran"
        );
        if revision == ProtocolVersion::V2025_06_18 {
            assert_eq!(refused.code(), -32602, "{revision}");
        } else {
            let result = refused.result();
            assert_eq!(
                result.get("isError").and_then(JsonValue::as_bool),
                Some(true)
            );
            assert!(
                refused.text().contains(INVALID_ARGUMENTS_TEXT),
                "{revision}"
            );
        }
    }
}

#[tokio::test]
async fn a_structured_result_the_foreign_output_schema_refuses_is_the_internal_error() {
    // The input schema lets any integer through; the output schema holds n to at most 10.
    let lenient = from_str(r#"{"type":"object"}"#, &JsonLimits::default()).unwrap();
    let echo = |_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures| async {
        let structured = JsonObject::builder().insert("n", 99).build();
        Ok::<OperationResult, std::convert::Infallible>(
            CompleteResult::from_tool_structured_content(structured).into(),
        )
    };
    let endpoint = Endpoint::with_path("/mcp", ALL, Implementation::new("foreign", "1"))
        .legacy_sessions(None)
        .add_tool(
            ToolRegistration::with_name("bounded", ALL)
                .input_schema(&lenient)
                .unwrap()
                .foreign_output_schema(schema())
                .unwrap()
                .handler(echo)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    for revision in ALL {
        assert_eq!(call(addr, revision, 1).await.code(), -32603, "{revision}");
    }
}

#[test]
fn a_foreign_document_that_is_not_an_object_schema_is_refused_at_build() {
    let array = AtMostTen(from_str(r#"{"type":"array"}"#, &JsonLimits::default()).unwrap());
    let input = ToolRegistration::with_name("t", ALL)
        .json_object_arguments()
        .foreign_input_schema(array)
        .err()
        .unwrap();
    assert_eq!(input.kind(), BuildErrorKind::InputSchema);
    let array = AtMostTen(from_str(r#"{"type":"array"}"#, &JsonLimits::default()).unwrap());
    let output = ToolRegistration::with_name("t", ALL)
        .json_object_arguments()
        .foreign_output_schema(array)
        .err()
        .unwrap();
    assert_eq!(output.kind(), BuildErrorKind::OutputSchema);
}

/// `tasks/get` holds a task's result to the tool's foreign output schema as the call does: a
/// result the schema accepts is shown, one it refuses is the fixed -32603 (it was -32603 for
/// every result of such a tool, the check asking for a Profile 1 schema).
#[tokio::test]
async fn a_task_s_result_is_held_to_the_foreign_output_schema_at_tasks_get() {
    let lenient = from_str(r#"{"type":"object"}"#, &JsonLimits::default()).unwrap();
    let later = |_: &RequestContext, a: ToolArguments<JsonObject>, f: &InvocationFeatures| {
        let n = a.raw().get("n").cloned().unwrap_or(JsonValue::Null);
        let tasks = f.find::<TaskCreation>().cloned().expect("a task store");
        async move {
            let structured = JsonObject::builder().insert("n", n).build();
            let created = tasks
                .spawn(move |_| async move {
                    Ok(CompleteResult::from_tool_structured_content(structured))
                })
                .await
                .expect("the task is created");
            Ok::<OperationResult, std::convert::Infallible>(OperationResult::TaskCreated(created))
        }
    };
    let modern = [ProtocolVersion::V2026_07_28];
    let endpoint = Endpoint::with_path("/mcp", modern, Implementation::new("foreign", "1"))
        .task_store(InMemoryTaskStore::default())
        .add_tool(
            ToolRegistration::with_name("later", modern)
                .input_schema(&lenient)
                .unwrap()
                .foreign_output_schema(schema())
                .unwrap()
                .handler(later)
                .task_support(TaskSupport::Optional)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;
    let send = |method: &'static str, name: String, params: String| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params},{meta}}}}}"#
        );
        async move {
            let headers = [
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", method),
                ("Mcp-Name", name.as_str()),
            ];
            post(addr, &headers, body.as_bytes()).await
        }
    };
    for (n, shown) in [(3, true), (12, false)] {
        let params = format!(r#""name":"later","arguments":{{"n":{n}}}"#);
        let created = send("tools/call", "later".to_owned(), params)
            .await
            .result();
        let id = created
            .get("taskId")
            .and_then(JsonValue::as_str)
            .expect("a task")
            .to_owned();
        let mut seen = None;
        for _ in 0..200 {
            let got = send("tasks/get", id.clone(), format!(r#""taskId":"{id}""#)).await;
            if got.text().contains("\"error\"") {
                seen = Some(Err(got.code()));
                break;
            }
            let result = got.result();
            if result.get("status").and_then(JsonValue::as_str) == Some("completed") {
                seen = Some(Ok(result
                    .get("result")
                    .and_then(|r| r.get("structuredContent"))
                    .and_then(|s| s.get("n"))
                    .and_then(JsonValue::as_number)
                    .and_then(|n| n.to_i64())));
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        if shown {
            assert_eq!(seen, Some(Ok(Some(n))), "n = {n}");
        } else {
            assert_eq!(seen, Some(Err(-32603)), "n = {n}");
        }
    }
}
