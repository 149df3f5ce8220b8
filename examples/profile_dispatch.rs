//! In-process dispatch of MCP requests through the tower service (no socket), for profiling:
//! `valgrind --tool=callgrind target/release/examples/profile_dispatch [small|large|list] N`.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
};

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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let v = ProtocolVersion::V2026_07_28;
    let tool = ToolRegistration::with_name("add", [v])
        .argument_and_output_types::<Add, Sum>()
        .handler(add)
        .build()?;
    let endpoint = Endpoint::with_path("/mcp", [v], Implementation::new("p", "1")).add_tool(tool);
    let service = McpService::new(endpoint.build()?);
    let mut args = std::env::args().skip(1);
    let kind = args.next().unwrap_or_else(|| "small".into());
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let call = |arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"add","arguments":{arguments},{meta}}}}}"#
        )
    };
    let (method, body) = match kind.as_str() {
        "large" => (
            "tools/call",
            call(&format!(
                r#"{{"a":2,"b":3,"pad":"{}"}}"#,
                "x".repeat(100_000)
            )),
        ),
        "list" => (
            "tools/list",
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{meta}}}}}"#),
        ),
        _ => ("tools/call", call(r#"{"a":2,"b":3}"#)),
    };
    let body = Bytes::from(body);
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let mut bytes = 0u64;
    runtime.block_on(async {
        for _ in 0..n {
            let request = http::Request::post("/mcp")
                .header("host", "127.0.0.1:8080")
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", method)
                .header("mcp-name", "add")
                .body(Full::new(body.clone()))
                .unwrap_or_default();
            let response = service.serve(request).await;
            bytes += http_body::Body::size_hint(response.body())
                .exact()
                .unwrap_or(0);
        }
    });
    println!("{n} requests, {bytes} response bytes");
    Ok(())
}
