//! Mounting a Tollgate endpoint in an axum router, beside ordinary routes.
//!
//! `cargo run --example axum` serves `/health` from axum and `/mcp` from Tollgate on
//! 127.0.0.1:8081. The MCP service is a plain tower `Service`, so `route_service` takes it as is;
//! axum's own layers (timeouts, tracing, auth) wrap it like any other route.

use std::convert::Infallible;

use tollgate::json::JsonObject;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    tool::{CompleteResult, OperationResult},
};

async fn echo(
    _: &RequestContext,
    arguments: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_structured_content(arguments.raw().clone()).into())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let v = ProtocolVersion::V2026_07_28;
    let tool = ToolRegistration::with_name("echo", [v])
        .json_object_arguments()
        .handler(echo)
        .build()?;
    let endpoint = Endpoint::with_path("/mcp", [v], Implementation::new("axum-demo", "1.0.0"))
        .add_tool(tool)
        .build()?;
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service("/mcp", McpService::new(endpoint));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8081").await?;
    println!("axum with Tollgate: http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
