//! The fan-out server: one resource (`bench://feed`) and a `touch` tool that announces an update
//! of it to every listener, on 2026-07-28 (`subscriptions/listen` streams) and 2025-11-25
//! (sessions kept in this process, their GET streams). Driven by `fanout` (scripts/bench-fanout).
//!
//! The bounds below are raised for this run only, and the page says so: 40,000 connections (all
//! from one peer), 40,000 listen streams and 2025 sessions (anonymous ones too), and each 2025
//! stream reserving 64 KiB for replay instead of 1 MiB (the default 512 MiB in all would hold 512
//! streams; here 40,000 × 64 KiB). Everything else is the default.

#[allow(dead_code, reason = "the filler catalog is the other servers'")]
mod common;

use std::convert::Infallible;
use std::sync::OnceLock;

use tollgate::content::{ContentError, ResourceContents};
use tollgate::endpoint::{EndpointLimits, SessionConfig, StreamConfig};
use tollgate::json::JsonObject;
use tollgate::resource::{ResourceOutput, ResourceRegistration, ResourceRequest};
use tollgate::tool::{CompleteResult, OperationResult};
use tollgate::transport::ServerLimits;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    Server, ToolArguments, ToolRegistration,
};

/// The URI every listener follows.
const FEED: &str = "bench://feed";
/// The raised bound on connections, listen streams and sessions.
const MANY: usize = 40_000;
/// The replay bytes each 2025 stream reserves.
const REPLAY: usize = 64 * 1024;

/// The endpoint, once built: `touch` announces through it.
static ENDPOINT: OnceLock<Endpoint> = OnceLock::new();

async fn touch(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    if let Some(endpoint) = ENDPOINT.get() {
        endpoint.notify_resource_updated(FEED);
    }
    Ok(CompleteResult::from_tool_text("touched").into())
}

async fn feed(
    _: &RequestContext,
    request: ResourceRequest,
    _: &InvocationFeatures,
) -> Result<ResourceOutput, ContentError> {
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        request.uri(),
        Some("text/plain"),
        "feed",
    )?))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let revisions = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];
    let endpoint = Endpoint::with_path(
        "/mcp",
        revisions,
        Implementation::new("tollgate-fanout", "1.0.0"),
    )
    .legacy_sessions(Some(
        SessionConfig::default()
            .max_sessions(MANY)
            .max_sessions_per_principal(MANY)
            .max_anonymous_sessions(MANY)
            .max_replay_bytes(MANY * REPLAY),
    ))
    .streams(StreamConfig::new().replay_bytes(REPLAY))
    .limits(EndpointLimits::new().max_listen_streams(MANY))
    .add_resource(
        ResourceRegistration::with_uri(FEED, "feed", revisions)
            .handler(feed)
            .mime_type("text/plain")
            .build()?,
    )
    .add_tool(
        ToolRegistration::with_name("touch", revisions)
            .json_object_arguments()
            .handler(touch)
            .description("Announces an update of bench://feed")
            .build()?,
    )
    .build()?;
    let _ = ENDPOINT.set(endpoint.clone());
    common::runtime()?.block_on(async {
        let limits = ServerLimits::new()
            .max_connections(MANY)
            .max_connections_per_peer(MANY);
        let server = Server::bind(common::address(), McpService::new(endpoint))
            .await?
            .limits(limits);
        server.serve_with_shutdown(std::future::pending()).await
    })?;
    Ok(())
}
