//! `subscriptions/listen` on 2026-07-28 over real HTTP: the acknowledgement (only what will be
//! honoured), resource updates, task status notifications up to the terminal one, the filter's
//! checks and bounds, and the graceful end at shutdown.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::net::SocketAddr;
use std::time::Duration;

use support::{Open, post, post_request, start};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    content::ResourceContents,
    endpoint::EndpointBuilder,
    resource::{ResourceOutput, ResourceRegistration, ResourceRequest},
    task::{InMemoryTaskStore, TaskConfig, TaskCreation, TaskError},
    tool::{CompleteResult, OperationResult, TaskSupport},
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;

async fn read(
    _: &RequestContext,
    r: ResourceRequest,
    _: &InvocationFeatures,
) -> Result<ResourceOutput, tollgate::content::ContentError> {
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        r.uri(),
        None,
        "x",
    )?))
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
        .spawn(|_| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(CompleteResult::from_tool_text("finished"))
        })
        .await?
        .into())
}

/// An endpoint with a task store and the task-required tool `job`.
fn with_job() -> EndpointBuilder {
    Endpoint::with_path("/mcp", [V26], Implementation::new("listen", "1"))
        .task_store(InMemoryTaskStore::default())
        .task_config(TaskConfig::default().poll_interval(Duration::from_millis(100)))
        .add_tool(
            ToolRegistration::with_name("job", [V26])
                .json_object_arguments()
                .handler(job)
                .task_support(TaskSupport::Required)
                .build()
                .unwrap(),
        )
}

fn endpoint() -> Endpoint {
    with_job()
        .add_resource(
            ResourceRegistration::with_uri("test://watched", "watched", [V26])
                .handler(read)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

/// Calls `job` asking for a task; the created task's id.
async fn create_job(addr: SocketAddr) -> String {
    let created = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "job"),
        ],
        body(1, "tools/call", r#""name":"job","arguments":{}"#, true).as_bytes(),
    )
    .await;
    created
        .result()
        .get("taskId")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned()
}

fn body(id: u64, method: &str, params: &str, extension: bool) -> String {
    let caps = if extension {
        r#"{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#
    } else {
        "{}"
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{caps}}}}}}}"#
    )
}

async fn listen(addr: SocketAddr, id: u64, filter: &str, extension: bool) -> Open {
    let body = body(
        id,
        "subscriptions/listen",
        &format!(r#""notifications":{filter}"#),
        extension,
    );
    Open::send(
        addr,
        post_request(
            addr,
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "subscriptions/listen"),
            ],
            &body,
        ),
    )
    .await
}

async fn refused(addr: SocketAddr, filter: &str, extension: bool) -> (u16, i64) {
    let body = body(
        3,
        "subscriptions/listen",
        &format!(r#""notifications":{filter}"#),
        extension,
    );
    let r = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "subscriptions/listen"),
        ],
        body.as_bytes(),
    )
    .await;
    (r.status, r.code())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_updates_reach_the_streams_that_asked() {
    let endpoint = endpoint();
    let service = McpService::new(endpoint.clone());
    let addr = start(service.clone()).await;
    let mut stream = listen(
        addr,
        41,
        r#"{"toolsListChanged":true,"resourceSubscriptions":["test://watched","test://unknown"]}"#,
        false,
    )
    .await;
    assert_eq!(stream.status, 200);
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    assert!(
        stream
            .until("notifications/subscriptions/acknowledged")
            .await
    );
    // Only what will be honoured: the known URI; immutable catalogs never change.
    assert!(stream.text().contains(
        r#""params":{"_meta":{"io.modelcontextprotocol/subscriptionId":41},"notifications":{"resourceSubscriptions":["test://watched"]}}"#
    ));
    endpoint.notify_resource_updated("test://elsewhere");
    endpoint.notify_resource_updated("test://watched");
    assert!(stream.until("notifications/resources/updated").await);
    assert!(stream.text().contains(
        r#""params":{"_meta":{"io.modelcontextprotocol/subscriptionId":41},"uri":"test://watched"}"#
    ));
    assert!(!stream.text().contains("test://elsewhere"));

    // Shutdown ends the stream gracefully, with the result correlated to the request.
    service.end_streams();
    assert!(stream.finish_reading().await);
    assert!(stream.text().contains(
        r#"{"jsonrpc":"2.0","id":41,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":41}}}"#
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_notifications_follow_a_task_to_its_end() {
    let addr = start(McpService::new(endpoint())).await;
    let id = create_job(addr).await;
    let mut stream = listen(addr, 7, &format!(r#"{{"taskIds":["{id}","0000"]}}"#), true).await;
    assert!(stream.until("acknowledged").await);
    assert!(
        stream
            .text()
            .contains(&format!(r#""notifications":{{"taskIds":["{id}"]}}"#))
    );
    assert!(stream.until(r#""status":"completed""#).await);
    let text = stream.text();
    let line = text
        .lines()
        .find(|l| l.contains("notifications/tasks") && l.contains("completed"))
        .unwrap();
    assert!(line.contains(&format!(r#""taskId":"{id}""#)));
    assert!(line.contains(
        r#""result":{"resultType":"complete","content":[{"type":"text","text":"finished"}]}"#
    ));
    assert!(line.contains(r#""_meta":{"io.modelcontextprotocol/subscriptionId":7}"#));
}

/// Marks a result with the `X-Tenant` header of the request it is written for.
struct TenantMark;

impl tollgate::context::ToolResultSanitizer for TenantMark {
    fn sanitize(
        &self,
        context: &RequestContext,
        _: &str,
        _: &JsonObject,
        _: CompleteResult,
    ) -> Result<CompleteResult, tollgate::context::SanitizeError> {
        let tenant = context.originating_request().header("x-tenant");
        Ok(CompleteResult::from_tool_text(format!(
            "for {}",
            tenant.unwrap_or("nobody")
        )))
    }
}

/// A listen's loop goes on after its request's pipeline has ended (issue 50); with a sanitizer
/// it keeps the request's head, so a task's result relayed long after the acknowledgement is
/// sanitized with the listen's own headers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sanitizer_reads_the_listen_request_for_a_relayed_result() {
    let endpoint = with_job()
        .tool_result_sanitizer(TenantMark)
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let id = create_job(addr).await;
    let listen_body = body(
        9,
        "subscriptions/listen",
        &format!(r#""notifications":{{"taskIds":["{id}"]}}"#),
        true,
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "subscriptions/listen"),
        ("X-Tenant", "acme"),
    ];
    let mut stream = Open::send(addr, post_request(addr, &headers, &listen_body)).await;
    assert!(stream.until("acknowledged").await);
    assert!(stream.until(r#""status":"completed""#).await);
    assert!(
        stream
            .text()
            .contains(r#""content":[{"type":"text","text":"for acme"}]"#),
        "{}",
        stream.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filter_is_checked_and_bounded() {
    let addr = start(McpService::new(endpoint())).await;
    assert_eq!(
        refused(addr, r#"{"taskIds":["abc"]}"#, false).await,
        (400, -32021)
    );
    assert_eq!(
        refused(addr, r#"{"toolsListChanged":"yes"}"#, false).await,
        (400, -32602)
    );
    assert_eq!(refused(addr, r#""everything""#, false).await, (400, -32602));
    assert_eq!(
        refused(addr, r#"{"resourceSubscriptions":[1]}"#, false).await,
        (400, -32602)
    );
    // Task ids: at most MAX_TASK_ID_BYTES; a longer one is refused, one at the bound opens the
    // stream (and is not acknowledged: no such task).
    let id_past = "f".repeat(tollgate::task::MAX_TASK_ID_BYTES + 1);
    assert_eq!(
        refused(addr, &format!(r#"{{"taskIds":["{id_past}"]}}"#), true).await,
        (400, -32602)
    );
    let id_at = "f".repeat(tollgate::task::MAX_TASK_ID_BYTES);
    let mut with_id = listen(addr, 8, &format!(r#"{{"taskIds":["{id_at}"]}}"#), true).await;
    assert_eq!(with_id.status, 200);
    assert!(with_id.until(r#""notifications":{}"#).await);
    let uri_at = format!(
        "test://{}",
        "u".repeat(tollgate::endpoint::MAX_SUBSCRIPTION_URI_BYTES - 7)
    );
    let uri_past = format!("{uri_at}u");
    assert_eq!(
        refused(
            addr,
            &format!(r#"{{"resourceSubscriptions":["{uri_past}"]}}"#),
            false
        )
        .await,
        (400, -32602)
    );
    let entries = |n: usize| {
        (0..n)
            .map(|i| format!(r#""test://r{i}""#))
            .collect::<Vec<_>>()
            .join(",")
    };
    assert_eq!(
        refused(
            addr,
            &format!(
                r#"{{"resourceSubscriptions":[{}]}}"#,
                entries(tollgate::endpoint::MAX_SUBSCRIPTION_ENTRIES + 1)
            ),
            false
        )
        .await,
        (400, -32602)
    );
    // At the limits the stream opens (and acknowledges nothing it does not serve).
    let mut at = listen(
        addr,
        9,
        &format!(
            r#"{{"resourceSubscriptions":[{},"{uri_at}"]}}"#,
            entries(tollgate::endpoint::MAX_SUBSCRIPTION_ENTRIES - 1)
        ),
        false,
    )
    .await;
    assert_eq!(at.status, 200);
    assert!(at.until(r#""notifications":{}"#).await);
}

/// A listen's work goes on in its response body, not a task of its own (issue 50), and keeps
/// every bound and end: at the configured bound of open listens the next is refused, a client
/// that goes away frees its place (its body, and the work in it, dropped with its connection),
/// the others still hear updates, and shutdown ends every open listen with the graceful result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_client_frees_its_listen_and_shutdown_ends_the_rest() {
    let endpoint = Endpoint::with_path("/mcp", [V26], Implementation::new("listen", "1"))
        .limits(tollgate::endpoint::EndpointLimits::new().max_listen_streams(2))
        .add_resource(
            ResourceRegistration::with_uri("test://watched", "watched", [V26])
                .handler(read)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let service = McpService::new(endpoint.clone());
    let addr = start(service.clone()).await;
    let filter = r#"{"resourceSubscriptions":["test://watched"]}"#;
    let mut first = listen(addr, 1, filter, false).await;
    let mut second = listen(addr, 2, filter, false).await;
    for stream in [&mut first, &mut second] {
        assert_eq!(stream.status, 200);
        assert!(
            stream
                .until("notifications/subscriptions/acknowledged")
                .await
        );
    }
    // At the bound: one past it is refused.
    assert_eq!(refused(addr, filter, false).await, (503, -32603));

    // The first client goes away: its place is given back (an update written to its closed
    // connection ends it, if the server has not seen the close yet).
    drop(first);
    let mut third = None;
    for _ in 0..100 {
        endpoint.notify_resource_updated("test://watched");
        let stream = listen(addr, 3, filter, false).await;
        if stream.status == 200 {
            third = Some(stream);
            break;
        }
        assert_eq!(stream.status, 503);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut third = third.expect("the closed client's place was given back");
    assert!(
        third
            .until("notifications/subscriptions/acknowledged")
            .await
    );
    assert!(second.until("notifications/resources/updated").await);

    // Shutdown ends both open listens, each with its own graceful result.
    service.end_streams();
    for (id, stream) in [(2, &mut second), (3, &mut third)] {
        assert!(stream.finish_reading().await, "listen {id} ends");
        assert!(stream.text().contains(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete""#
        )));
    }
}
