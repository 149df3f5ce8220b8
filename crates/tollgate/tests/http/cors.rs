//! The CORS policy over real HTTP: preflights for an allowed origin get exactly the grant the
//! endpoint needs (every mirrored `Mcp-Param-*` name included); a disallowed origin, method or
//! request header gets none; a preflight never reaches admission or a rate limiter; responses to
//! an allowed origin grant it and expose what a browser client must read; without a policy
//! nothing is granted.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use support::{META, Response, raw, start};
use tollgate::json::{JsonLimits, JsonObject, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest, TokenBucket},
    tool::{CompleteResult, OperationResult},
    transport::CorsPolicy,
};

const APP: &str = "https://app.example.com";

async fn echo(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("ok").into())
}

fn endpoint(admitted: Arc<AtomicUsize>, sessions: bool) -> Endpoint {
    let v = ProtocolVersion::V2026_07_28;
    let schema = from_str(
        r#"{"type":"object","properties":{
            "tenant":{"type":"string","x-mcp-header":"Tenant"},
            "region":{"type":"string","x-mcp-header":"Region"}}}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    let admit = move |request: &AdmissionRequest<'_>| {
        admitted.fetch_add(1, Ordering::SeqCst);
        let _ = request;
        AdmissionDecision::admit(AdmissionIdentity::anonymous())
    };
    let revisions: tollgate::endpoint::ProtocolVersions = if sessions {
        [v, ProtocolVersion::V2025_11_25].into()
    } else {
        [v].into()
    };
    let mut builder = Endpoint::with_path("/mcp", revisions, Implementation::new("cors", "1"))
        .admission(admit)
        .request_rate_limiter(TokenBucket::with_capacity(1).refill(1, Duration::from_secs(3600)))
        .add_tool(
            ToolRegistration::with_name("mirrored", [v])
                .input_schema(&schema)
                .unwrap()
                .handler(echo)
                .build()
                .unwrap(),
        );
    if !sessions {
        builder = builder.legacy_sessions(None);
    }
    builder.build().unwrap()
}

async fn serve(policy: Option<CorsPolicy>, sessions: bool) -> (SocketAddr, Arc<AtomicUsize>) {
    let admitted = Arc::new(AtomicUsize::new(0));
    let mut service = McpService::builder().endpoint(endpoint(Arc::clone(&admitted), sessions));
    if let Some(policy) = policy {
        service = service.cors(policy);
    }
    (start(service.build().unwrap()).await, admitted)
}

fn app_policy() -> CorsPolicy {
    CorsPolicy::allow_origins([APP]).unwrap()
}

async fn preflight(addr: SocketAddr, origin: &str, method: &str, headers: &str) -> Response {
    let mut request = format!(
        "OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: {method}\r\nConnection: close\r\n",
        addr.port()
    );
    if !headers.is_empty() {
        request.push_str(&format!("Access-Control-Request-Headers: {headers}\r\n"));
    }
    request.push_str("\r\n");
    raw(addr, request.as_bytes()).await
}

/// A preflight written out as given (extra header lines end with `\r\n`).
async fn raw_preflight(addr: SocketAddr, path: &str, lines: &str) -> Response {
    let request = format!(
        "OPTIONS {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccess-Control-Request-Method: POST\r\n{lines}Connection: close\r\n\r\n",
        addr.port()
    );
    raw(addr, request.as_bytes()).await
}

async fn call_from(addr: SocketAddr, origin: &str) -> Response {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"mirrored","arguments":{{"tenant":"acme"}},{META}}}}}"#
    );
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nOrigin: {origin}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: mirrored\r\nMcp-Param-Tenant: acme\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        addr.port(),
        body.len()
    );
    raw(addr, request.as_bytes()).await
}

#[tokio::test]
async fn an_allowed_preflight_gets_exactly_the_endpoints_headers() {
    let (addr, admitted) = serve(Some(app_policy()), false).await;
    let r = preflight(
        addr,
        APP,
        "POST",
        "content-type, accept, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id, authorization, mcp-param-tenant, mcp-param-region",
    )
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(r.header("access-control-allow-origin"), Some(APP));
    assert_eq!(r.header("access-control-allow-methods"), Some("POST"));
    assert_eq!(
        r.header("access-control-allow-headers"),
        Some(
            "content-type, accept, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id, authorization, mcp-param-tenant, mcp-param-region"
        )
    );
    assert_eq!(r.header("access-control-max-age"), Some("600"));
    assert_eq!(r.header("access-control-allow-credentials"), None);
    assert!(r.header("vary").is_some_and(|v| v.contains("Origin")));
    assert_eq!(
        admitted.load(Ordering::SeqCst),
        0,
        "a preflight is never admitted"
    );
}

#[tokio::test]
async fn every_mirrored_header_name_is_granted_alone() {
    let (addr, _) = serve(Some(app_policy()), false).await;
    for name in ["Mcp-Param-Tenant", "mcp-param-region"] {
        let r = preflight(addr, APP, "POST", name).await;
        assert_eq!(r.status, 204, "{name}");
        assert_eq!(
            r.header("access-control-allow-headers"),
            Some(name.to_ascii_lowercase().as_str())
        );
    }
}

#[tokio::test]
async fn nothing_is_granted_past_the_policy() {
    let (addr, admitted) = serve(Some(app_policy()), false).await;
    let cases = [
        ("https://evil.example", "POST", "content-type"),
        ("http://localhost:5173", "POST", "content-type"),
        (APP, "PUT", ""),
        (APP, "GET", ""),
        (APP, "POST", "x-unknown"),
        (APP, "POST", "mcp-param-other"),
        (APP, "POST", "content-type, cookie"),
    ];
    for (origin, method, headers) in cases {
        let r = preflight(addr, origin, method, headers).await;
        assert_eq!(r.status, 403, "{origin} {method} {headers}");
        assert_eq!(r.header("access-control-allow-origin"), None);
        assert_eq!(r.header("access-control-allow-headers"), None);
    }
    assert_eq!(admitted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn preflights_are_not_charged_to_the_rate_limiter() {
    // The request limiter admits one request an hour: ten preflights first, then the call.
    let (addr, admitted) = serve(Some(app_policy()), false).await;
    for _ in 0..10 {
        assert_eq!(
            preflight(addr, APP, "POST", "content-type").await.status,
            204
        );
    }
    let r = call_from(addr, APP).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(admitted.load(Ordering::SeqCst), 1);
    // The limiter is real: the next call is refused.
    assert_eq!(call_from(addr, APP).await.status, 429);
}

#[tokio::test]
async fn responses_to_an_allowed_origin_grant_it_and_expose_what_clients_read() {
    let (addr, _) = serve(Some(app_policy()), false).await;
    let r = call_from(addr, APP).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), Some(APP));
    assert_eq!(
        r.header("access-control-expose-headers"),
        Some("Mcp-Session-Id, WWW-Authenticate, Retry-After")
    );
    assert_eq!(r.header("vary"), Some("Origin"));
    // Refusals are granted too, so a browser client can read their headers (429 here).
    let refused = call_from(addr, APP).await;
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("access-control-allow-origin"), Some(APP));
    // A disallowed origin: the existing 403, no grant.
    let evil = call_from(addr, "https://evil.example").await;
    assert_eq!(evil.status, 403);
    assert_eq!(evil.header("access-control-allow-origin"), None);
}

#[tokio::test]
async fn sessions_add_their_methods_and_credentials_are_opt_in() {
    let policy = app_policy()
        .allow_credentials(true)
        .max_age(Duration::from_secs(60));
    let (addr, _) = serve(Some(policy), true).await;
    for method in ["GET", "POST", "DELETE"] {
        let r = preflight(addr, APP, method, "mcp-session-id, last-event-id").await;
        assert_eq!(r.status, 204, "{method}");
        assert_eq!(
            r.header("access-control-allow-methods"),
            Some("GET, POST, DELETE")
        );
        assert_eq!(r.header("access-control-allow-credentials"), Some("true"));
        assert_eq!(r.header("access-control-max-age"), Some("60"));
    }
}

#[tokio::test]
async fn without_a_policy_nothing_is_granted() {
    let (addr, admitted) = serve(None, false).await;
    let r = preflight(addr, "http://localhost:5173", "POST", "content-type").await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("access-control-allow-origin"), None);
    // A loopback page may still call (the DNS-rebinding guard accepts it), but is granted nothing.
    let r = call_from(addr, "http://localhost:5173").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), None);
    assert_eq!(admitted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn preflight_edges() {
    let policy = app_policy().allow_header("x-request-id").unwrap();
    let (addr, _) = serve(Some(policy), false).await;
    // Requested headers split over lines, with tabs and empty items; the trace headers and a
    // header the policy adds are granted.
    let r = raw_preflight(
        addr,
        "/mcp",
        &format!("Origin: {APP}\r\nAccess-Control-Request-Headers: content-type,,\ttraceparent\r\nAccess-Control-Request-Headers: baggage, X-Request-Id\r\n"),
    )
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(
        r.header("access-control-allow-headers"),
        Some("content-type, traceparent, baggage, x-request-id")
    );
    assert_eq!(
        r.header("vary"),
        Some("Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
    );
    // An origin in upper case is granted as configured.
    let r = raw_preflight(addr, "/mcp", "Origin: HTTPS://APP.EXAMPLE.COM\r\n").await;
    assert_eq!(r.status, 204);
    assert_eq!(r.header("access-control-allow-origin"), Some(APP));
    // A repeated Origin, or an unknown path: no grant.
    let r = raw_preflight(addr, "/mcp", &format!("Origin: {APP}\r\nOrigin: {APP}\r\n")).await;
    assert_eq!(
        (r.status, r.header("access-control-allow-origin")),
        (403, None)
    );
    let r = raw_preflight(addr, "/other", &format!("Origin: {APP}\r\n")).await;
    assert_eq!(
        (r.status, r.header("access-control-allow-origin")),
        (404, None)
    );
}

#[tokio::test]
async fn with_a_policy_every_answer_varies_by_origin() {
    let (addr, _) = serve(Some(app_policy()), false).await;
    for origin in ["http://localhost:5173", "https://evil.example"] {
        let r = call_from(addr, origin).await;
        assert_eq!(r.header("access-control-allow-origin"), None, "{origin}");
        assert_eq!(r.header("vary"), Some("Origin"), "{origin}");
    }
}

#[test]
fn star_is_never_a_grant() {
    assert!(app_policy().allow_header("*").is_err());
    assert!(CorsPolicy::allow_origins(["https://app.example.com:443"]).is_err());
    assert!(CorsPolicy::allow_origins(Vec::<&str>::new()).is_err());
}
