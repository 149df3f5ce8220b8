//! Liveness and readiness on the built-in server, from the outside: both answer before the MCP
//! service (any `Host`, no admission), with fixed bodies that echo nothing of the request;
//! readiness is 503 once the server is marked draining, liveness stays 200; the paths move or
//! go when configured, and then reach the MCP service (404 for a path it does not serve).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::net::SocketAddr;

use support::{Response, raw};
use tollgate::policy::{AdmissionDecision, AdmissionRequest};
use tollgate::transport::Health;
use tollgate::{Endpoint, Implementation, McpService, ProtocolVersion, Server};

const MARKER: &str = "MARKER51c2";

/// A server whose endpoint refuses every caller, with `health`.
async fn serve(health: Health) -> SocketAddr {
    let refuse = |_: &AdmissionRequest<'_>| AdmissionDecision::unauthorized();
    let endpoint = Endpoint::with_path(
        "/mcp",
        [ProtocolVersion::V2026_07_28],
        Implementation::new("probes", "1"),
    )
    .admission(refuse)
    .build()
    .unwrap();
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), McpService::new(endpoint))
        .await
        .unwrap()
        .health(health);
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));
    addr
}

/// A request for `path` from an unknown host, carrying the marker in a header and the body.
async fn probe(addr: SocketAddr, method: &str, path: &str) -> Response {
    let request = format!(
        "{method} {path}?{MARKER} HTTP/1.1\r\nHost: {MARKER}.example\r\nAuthorization: Bearer {MARKER}\r\nContent-Length: 10\r\nConnection: close\r\n\r\n{MARKER}"
    );
    raw(addr, request.as_bytes()).await
}

#[tokio::test]
async fn both_probes_answer_before_the_service_and_echo_nothing() {
    let addr = serve(Health::new()).await;
    for method in ["GET", "POST"] {
        let live = probe(addr, method, "/healthz").await;
        assert_eq!(live.status, 200);
        assert_eq!(live.text(), "ok\n");
        let ready = probe(addr, method, "/readyz").await;
        assert_eq!(ready.status, 200, "in-memory stores are ready");
        assert_eq!(ready.text(), "ok\n");
        for answer in [&live, &ready] {
            assert_eq!(answer.header("cache-control"), Some("no-store"));
            let head: String = answer
                .headers
                .iter()
                .map(|(k, v)| format!("{k}{v}"))
                .collect();
            assert!(!head.contains(MARKER) && !answer.text().contains(MARKER));
        }
    }
}

#[tokio::test]
async fn readiness_is_503_while_draining_and_liveness_stays_200() {
    let health = Health::new();
    let addr = serve(health.clone()).await;
    assert_eq!(probe(addr, "GET", "/readyz").await.status, 200);
    health.mark_draining();
    let ready = probe(addr, "GET", "/readyz").await;
    assert_eq!(ready.status, 503);
    assert_eq!(ready.text(), "unavailable\n");
    assert_eq!(probe(addr, "GET", "/healthz").await.status, 200);
}

#[tokio::test]
async fn moved_or_disabled_paths_go_to_the_service() {
    let addr = serve(
        Health::new()
            .liveness_path(Some("/livez"))
            .readiness_path(None),
    )
    .await;
    assert_eq!(probe(addr, "GET", "/livez").await.status, 200);
    assert_ne!(probe(addr, "GET", "/healthz").await.text(), "ok\n");
    assert_ne!(probe(addr, "GET", "/readyz").await.text(), "ok\n");
    let addr = serve(Health::disabled()).await;
    assert_ne!(probe(addr, "GET", "/healthz").await.status, 200);
}
