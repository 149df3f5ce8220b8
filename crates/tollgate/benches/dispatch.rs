//! In-process dispatch of `tools/call`, `tools/list`, `server/discover` and a `tasks/get` poll
//! (of a completed task in the in-memory store) through the tower
//! service (no socket), so regressions show without HTTP noise; and allocations per call,
//! counted by a wrapping global allocator around `McpService::serve` only (the request the
//! harness builds is not counted). `cargo bench -p tollgate --bench dispatch`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark harness")]

use std::convert::Infallible;

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::Full;
use tollgate::json::JsonObject;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    task::{InMemoryTaskStore, TaskCreation, TaskError},
    tool::{CompleteResult, OperationResult, TaskSupport},
};

/// Counts allocations (stats_alloc wraps the system allocator; no unsafe code here).
#[global_allocator]
static GLOBAL: &stats_alloc::StatsAlloc<std::alloc::System> = &stats_alloc::INSTRUMENTED_SYSTEM;

fn allocations() -> u64 {
    let stats = GLOBAL.stats();
    (stats.allocations + stats.reallocations) as u64
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

async fn add(
    _: &RequestContext,
    args: ToolArguments<Add>,
    _: &InvocationFeatures,
) -> Result<Sum, Infallible> {
    let Add { a, b } = args.into_converted();
    Ok(Sum {
        sum: a.wrapping_add(b),
    })
}

/// A task that completes at once with a one-line result.
async fn job(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, TaskError> {
    let tasks = features
        .require::<TaskCreation>()
        .map_err(|_| TaskError::internal())?;
    Ok(tasks
        .spawn(|_| async { Ok(CompleteResult::from_tool_text("5")) })
        .await?
        .into())
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn request(method: &str, name: &str, body: &Bytes) -> http::Request<Full<Bytes>> {
    http::Request::post("/mcp")
        .header("host", "127.0.0.1:8080")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .body(Full::new(body.clone()))
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let v = ProtocolVersion::V2026_07_28;
    let tool = ToolRegistration::with_name("add", [v])
        .argument_and_output_types::<Add, Sum>()
        .handler(add)
        .build()
        .unwrap();
    let job = ToolRegistration::with_name("job", [v])
        .json_object_arguments()
        .handler(job)
        .task_support(TaskSupport::Required)
        .build()
        .unwrap();
    let service = McpService::new(
        Endpoint::with_path("/mcp", [v], Implementation::new("b", "1"))
            .add_tool(tool)
            .add_tool(job)
            .task_store(InMemoryTaskStore::default())
            .build()
            .unwrap(),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    // One completed task to poll.
    let ext = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;
    let create = Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"job","arguments":{{}},{ext}}}}}"#
    ));
    let created = runtime.block_on(async {
        let response = service.serve(request("tools/call", "job", &create)).await;
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        // Let the work finish.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        body
    });
    let text = String::from_utf8(created.to_vec()).unwrap();
    let task_id = text
        .split(r#""taskId":""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_owned();
    let cases = [
        (
            "tools/call",
            Bytes::from(format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}},{META}}}}}"#
            )),
        ),
        (
            "tools/list",
            Bytes::from(format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#
            )),
        ),
        (
            "server/discover",
            Bytes::from(format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#
            )),
        ),
        (
            "tasks/get",
            Bytes::from(format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{{"taskId":"{task_id}",{ext}}}}}"#
            )),
        ),
    ];
    for (method, body) in &cases {
        let name = if *method == "tasks/get" {
            task_id.as_str()
        } else {
            "add"
        };
        // Allocations of serve() alone, averaged over 1,000 calls after a warm-up.
        for _ in 0..100 {
            runtime.block_on(service.serve(request(method, name, body)));
        }
        let mut counted = 0;
        for _ in 0..1000 {
            let r = request(method, name, body);
            let before = allocations();
            let response = runtime.block_on(service.serve(r));
            counted += allocations() - before;
            drop(response);
        }
        eprintln!(
            "{method}: {:.1} allocations per call (serve only)",
            counted as f64 / 1000.0
        );
        c.bench_function(&format!("dispatch {method}"), |b| {
            b.iter(|| runtime.block_on(service.serve(request(method, name, body))));
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
