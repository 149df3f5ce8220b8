//! Mounting a Tollgate endpoint in an axum router, beside ordinary routes.
//!
//! `cargo run --example axum` serves `/health` from axum and `/mcp` from Tollgate on
//! 127.0.0.1:8081. The MCP service is a plain tower `Service`, so `route_service` takes it as is;
//! axum's own layers (timeouts, tracing, auth) wrap it like any other route. A value a layer
//! puts in the request's extensions (here the user an authentication middleware resolved)
//! reaches every handler through `RequestContext::originating_request`.

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

/// The user an authentication layer resolved (a stand-in: it trusts a header; a real one
/// checks a token).
#[derive(Clone)]
struct User(String);

async fn authenticate(
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let user = request
        .headers()
        .get("x-demo-user")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("guest")
        .to_owned();
    request.extensions_mut().insert(User(user));
    next.run(request).await
}

async fn whoami(
    context: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let extensions = context.originating_request().extensions();
    let user = extensions.get::<User>().map_or("nobody", |u| u.0.as_str());
    Ok(CompleteResult::from_tool_text(format!("you are {user}")).into())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let v = ProtocolVersion::V2026_07_28;
    let tool = ToolRegistration::with_name("echo", [v])
        .json_object_arguments()
        .handler(echo)
        .build()?;
    let who = ToolRegistration::with_name("whoami", [v])
        .json_object_arguments()
        .handler(whoami)
        .build()?;
    let endpoint = Endpoint::with_path("/mcp", [v], Implementation::new("axum-demo", "1.0.0"))
        .add_tool(tool)
        .add_tool(who)
        .build()?;
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service("/mcp", McpService::new(endpoint))
        .layer(axum::middleware::from_fn(authenticate));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8081").await?;
    println!("axum with Tollgate: http://{}/mcp", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
