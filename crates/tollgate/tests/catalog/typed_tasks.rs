//! Typed task-required tools over real HTTP: the output type's schema kept with the tool and
//! enforced on the call's own completed result and on the task's result when `tasks/get`
//! returns it, after the sanitizer (the fixed -32603, nothing of the value echoed, the stored
//! task unchanged).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use support::{Response, post, start};
use tollgate::context::{SanitizeError, ToolResultSanitizer};
use tollgate::json::JsonValue;
use tollgate::task::{InMemoryTaskStore, TaskConfig, TaskCreation};
use tollgate::tool::{CompleteResult, OperationResult, TaskSupport};
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext, ToolArguments, ToolRegistration,
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const EXT: &str = r#""extensions":{"io.modelcontextprotocol/tasks":{}}"#;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Count {
    /// What the work reports.
    units: i64,
    /// Report a string instead of a number (breaking the output type).
    #[serde(default)]
    wrong: bool,
    /// Complete inline instead of creating a task.
    #[serde(default)]
    inline: bool,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Report {
    units: u32,
}

fn report(args: &Count) -> JsonValue {
    let value = if args.wrong {
        JsonValue::from("a secret-looking string")
    } else {
        JsonValue::from(args.units)
    };
    tollgate::json::JsonObject::builder()
        .insert("units", value)
        .build()
        .into()
}

async fn count(
    _: &RequestContext,
    args: ToolArguments<Count>,
    features: &InvocationFeatures,
) -> Result<OperationResult, tollgate::task::TaskError> {
    let args = args.into_converted();
    let structured = report(&args);
    if args.inline {
        return Ok(CompleteResult::from_tool_structured_content(structured).into());
    }
    let tasks = features
        .require::<TaskCreation>()
        .map_err(|_| tollgate::task::TaskError::internal())?;
    let created = tasks
        .spawn(move |_| async move { Ok(CompleteResult::from_tool_structured_content(structured)) })
        .await?;
    Ok(created.into())
}

/// Rewrites the structured content as the request's `x-rewrite` header says: `valid` to
/// another `Report`, `invalid` to something that is not one.
struct Rewrite;

impl ToolResultSanitizer for Rewrite {
    fn sanitize(
        &self,
        context: &RequestContext,
        _tool: &str,
        _arguments: &tollgate::json::JsonObject,
        result: CompleteResult,
    ) -> Result<CompleteResult, SanitizeError> {
        let units = match context.originating_request().header("x-rewrite") {
            Some("valid") => JsonValue::from(7u32),
            Some("invalid") => JsonValue::from("seven"),
            _ => return Ok(result),
        };
        let value = tollgate::json::JsonObject::builder()
            .insert("units", units)
            .build();
        Ok(CompleteResult::from_tool_structured_content(value))
    }
}

async fn server() -> SocketAddr {
    let tool = ToolRegistration::with_name("count", [V26])
        .argument_and_output_types::<Count, Report>()
        .operation_handler(count)
        .build()
        .unwrap();
    assert_eq!(tool.task_support(), TaskSupport::Required);
    assert!(tool.output_schema().is_some());
    let endpoint = Endpoint::with_path("/mcp", [V26], Implementation::new("typed", "1"))
        .task_store(InMemoryTaskStore::default())
        .task_config(TaskConfig::default().poll_interval(Duration::from_millis(50)))
        .add_tool(tool)
        .tool_result_sanitizer(Rewrite)
        .build()
        .unwrap();
    start(McpService::new(endpoint)).await
}

async fn send(addr: SocketAddr, method: &str, params: &str, caps: &str, name: &str) -> Response {
    send_with(addr, method, params, caps, name, "as-is").await
}

async fn send_with(
    addr: SocketAddr,
    method: &str,
    params: &str,
    caps: &str,
    name: &str,
    rewrite: &str,
) -> Response {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"{method}","params":{{{params},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{{caps}}}}}}}}}"#
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
        ("Mcp-Name", name),
        ("x-rewrite", rewrite),
    ];
    post(addr, &headers, body.as_bytes()).await
}

async fn call(addr: SocketAddr, arguments: &str, caps: &str) -> Response {
    let params = format!(r#""name":"count","arguments":{arguments}"#);
    send(addr, "tools/call", &params, caps, "count").await
}

async fn get(addr: SocketAddr, id: &str) -> Response {
    send(addr, "tasks/get", &format!(r#""taskId":"{id}""#), EXT, id).await
}

/// Creates a task and polls `tasks/get` until it is no longer working.
async fn finished(addr: SocketAddr, arguments: &str) -> (String, Response) {
    let created = call(addr, arguments, EXT).await;
    assert_eq!(created.status, 200, "{}", created.text());
    let id = created
        .result()
        .get("taskId")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned();
    for _ in 0..100 {
        let r = get(addr, &id).await;
        if !r.text().contains(r#""status":"working""#) {
            return (id, r);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the task never finished");
}

#[tokio::test]
async fn a_valid_task_result_is_returned_with_its_text_mirror() {
    let addr = server().await;
    let (_, r) = finished(addr, r#"{"units":3}"#).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains(r#""status":"completed""#), "{}", r.text());
    assert!(
        r.text().contains(
            r#""result":{"resultType":"complete","content":[{"type":"text","text":"{\"units\":3}"}],"structuredContent":{"units":3}"#
        ),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn a_task_result_that_breaks_the_output_type_is_the_fixed_internal_error() {
    let addr = server().await;
    // Valid JSON, but not a `Report` (and out of u32's range, for the number case).
    for arguments in [r#"{"units":1,"wrong":true}"#, r#"{"units":-1}"#] {
        let (id, r) = finished(addr, arguments).await;
        assert_eq!((r.status, r.code()), (200, -32603), "{}", r.text());
        assert!(!r.text().contains("secret"), "{}", r.text());
        assert!(!r.text().contains("structuredContent"), "{}", r.text());
        // The stored task is unchanged: a later read answers the same.
        let again = get(addr, &id).await;
        assert_eq!((again.status, again.code()), (200, -32603));
    }
}

#[tokio::test]
async fn the_sanitized_task_result_is_what_is_checked() {
    let addr = server().await;
    let (id, r) = finished(addr, r#"{"units":3}"#).await;
    assert!(r.text().contains(r#""structuredContent":{"units":3}"#));
    let get_with = |rewrite| {
        let params = format!(r#""taskId":"{id}""#);
        let id = id.clone();
        async move { send_with(addr, "tasks/get", &params, EXT, &id, rewrite).await }
    };
    // The sanitizer's rewrite is checked (and mirrored) like the stored result.
    let valid = get_with("valid").await;
    assert!(
        valid.text().contains(
            r#""content":[{"type":"text","text":"{\"units\":7}"}],"structuredContent":{"units":7}"#
        ),
        "{}",
        valid.text()
    );
    let invalid = get_with("invalid").await;
    assert_eq!((invalid.status, invalid.code()), (200, -32603));
    assert!(!invalid.text().contains("seven"));
    // The stored result is untouched by either.
    let plain = get(addr, &id).await;
    assert!(plain.text().contains(r#""structuredContent":{"units":3}"#));
}

#[tokio::test]
async fn an_inline_result_is_checked_too_and_a_client_without_tasks_is_refused() {
    let addr = server().await;
    let ok = call(addr, r#"{"units":2,"inline":true}"#, EXT).await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert!(
        ok.text().contains(r#""structuredContent":{"units":2}"#),
        "{}",
        ok.text()
    );
    let bad = call(addr, r#"{"units":2,"inline":true,"wrong":true}"#, EXT).await;
    assert_eq!((bad.status, bad.code()), (200, -32603), "{}", bad.text());
    assert!(!bad.text().contains("secret"));
    // Statically task-required: a client that does not declare the extension is refused
    // before the handler.
    let refused = call(addr, r#"{"units":2}"#, "").await;
    assert_eq!((refused.status, refused.code()), (400, -32021));
}

#[test]
fn a_typed_task_required_tool_cannot_loosen_its_task_support() {
    for support in [TaskSupport::Optional, TaskSupport::Forbidden] {
        let err = ToolRegistration::with_name("count", [V26])
            .argument_and_output_types::<Count, Report>()
            .operation_handler(count)
            .task_support(support)
            .build()
            .unwrap_err();
        assert_eq!(
            err.kind(),
            BuildErrorKind::InvalidTaskSupport,
            "{support:?}"
        );
    }
    // Required tasks exist on 2026-07-28 and (experimental) 2025-11-25, not before.
    let err = ToolRegistration::with_name("count", [V26, ProtocolVersion::V2025_06_18])
        .argument_and_output_types::<Count, Report>()
        .operation_handler(count)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidTaskSupport);
    assert!(
        ToolRegistration::with_name("count", [V26, ProtocolVersion::V2025_11_25])
            .argument_and_output_types::<Count, Report>()
            .operation_handler(count)
            .build()
            .is_ok()
    );
    // A typed-complete tool still cannot take tasks.
    async fn complete(
        _: &RequestContext,
        _: ToolArguments<Count>,
        _: &InvocationFeatures,
    ) -> Result<Report, Infallible> {
        Ok(Report { units: 1 })
    }
    let err = ToolRegistration::with_name("complete", [V26])
        .argument_and_output_types::<Count, Report>()
        .handler(complete)
        .task_support(TaskSupport::Optional)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidTaskSupport);
}
