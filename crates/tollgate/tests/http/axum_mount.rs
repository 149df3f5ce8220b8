//! The endpoint mounted in an axum router answers over real HTTP like the built-in server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;

use support::{call, raw, send};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    tool::{CompleteResult, OperationResult},
};

async fn echo(
    _: &RequestContext,
    a: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_structured_content(a.raw().clone()).into())
}

#[derive(Clone)]
struct User(&'static str);

async fn whoami(
    context: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let request = context.originating_request();
    let user = request.extensions().get::<User>().map_or("nobody", |u| u.0);
    let text = format!("{user} {}", request.header("x-team").unwrap_or("-"));
    Ok(CompleteResult::from_tool_text(text).into())
}

/// A value an axum middleware puts in the request's extensions reaches the handler, with the
/// request's headers.
#[tokio::test]
async fn a_handler_reads_an_axum_extension_and_a_header() {
    let v = ProtocolVersion::V2026_07_28;
    let tool = ToolRegistration::with_name("whoami", [v])
        .json_object_arguments()
        .handler(whoami)
        .build()
        .unwrap();
    let endpoint = Endpoint::with_path("/mcp", [v], Implementation::new("axum-test", "1.0.0"))
        .add_tool(tool)
        .build()
        .unwrap();
    let app = axum::Router::new()
        .route_service("/mcp", McpService::new(endpoint))
        .layer(axum::middleware::from_fn(
            |mut request: axum::extract::Request, next: axum::middleware::Next| async move {
                request.extensions_mut().insert(User("ada"));
                next.run(request).await
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let result = call(addr, "whoami", "{}", &[("X-Team", "blue")])
        .await
        .result();
    assert_eq!(support::first_text(&result), "ada blue");
}

#[tokio::test]
async fn mounted_beside_other_routes() {
    let v = ProtocolVersion::V2026_07_28;
    let tool = ToolRegistration::with_name("echo", [v])
        .json_object_arguments()
        .handler(echo)
        .build()
        .unwrap();
    let endpoint = Endpoint::with_path("/mcp", [v], Implementation::new("axum-test", "1.0.0"))
        .add_tool(tool)
        .build()
        .unwrap();
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .route_service("/mcp", McpService::new(endpoint));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let result = call(addr, "echo", r#"{"x":1}"#, &[]).await.result();
    assert_eq!(
        result
            .get("structuredContent")
            .and_then(|s| s.get("x"))
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64()),
        Some(1)
    );
    assert_eq!(send(addr, "ping", "").await.status, 404);
    let health = raw(
        addr,
        "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".as_bytes(),
    )
    .await;
    assert_eq!((health.status, health.text()), (200, "ok".to_owned()));
}
