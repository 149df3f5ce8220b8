//! Admission and rate limits over real HTTP on every revision (and over stdio): refusals with
//! their fixed statuses, codes and headers, the admitted identity in handlers, the order of
//! checks, named tool limiters, and the registration rules.

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

use support::{META, Response, post, start};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tollgate::json::JsonObject;
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext, ToolArguments, ToolRegistration,
    context::ClientCapability,
    policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest, TokenBucket},
    tool::{CompleteResult, OperationResult},
    transport::StdioServer,
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const ALL: [ProtocolVersion; 3] = [V26, V1125, V0618];

async fn whoami(
    ctx: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let who = ctx
        .admission_identity()
        .principal_name()
        .unwrap_or("anonymous");
    Ok(CompleteResult::from_tool_text(format!("you are {who}")).into())
}

/// Bearer tokens: `alice` and `bob` are known; `eve` is known but forbidden; no token is a
/// challenge; `panic` makes the controller panic.
fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
    match request.header("authorization") {
        Some("Bearer alice") => AdmissionDecision::admit(AdmissionIdentity::principal("alice")),
        Some("Bearer bob") => AdmissionDecision::admit(AdmissionIdentity::principal("bob")),
        Some("Bearer eve") => AdmissionDecision::forbidden(),
        Some("Bearer panic") => panic!("a broken controller"),
        _ if !request.is_http() => AdmissionDecision::admit(AdmissionIdentity::principal("local")),
        _ => AdmissionDecision::unauthorized_with_challenge(
            r#"Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource""#,
        ),
    }
}

fn endpoint() -> Endpoint {
    let tool = |name: &str| ToolRegistration::with_name(name, ALL).json_object_arguments();
    Endpoint::with_path("/mcp", ALL, Implementation::new("policy", "1"))
        .legacy_sessions(None)
        .admission(admit)
        .tool_rate_limiter(TokenBucket::with_capacity(3).refill(1, Duration::from_secs(3600)))
        .add_rate_limiter(
            "scarce",
            TokenBucket::with_capacity(1).refill(1, Duration::from_secs(3600)),
        )
        .add_tool(tool("whoami").handler(whoami).build().unwrap())
        .add_tool(
            tool("scarce")
                .handler(whoami)
                .rate_limiter("scarce")
                .build()
                .unwrap(),
        )
        .add_tool(
            tool("needs_sampling")
                .handler(whoami)
                .require_client_capability(ClientCapability::Sampling)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

async fn call(
    addr: SocketAddr,
    revision: ProtocolVersion,
    token: Option<&str>,
    method: &str,
    tool: Option<&str>,
) -> Response {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("MCP-Protocol-Version", revision.as_str())];
    if let Some(b) = &bearer {
        headers.push(("Authorization", b.as_str()));
    }
    let mut params = match tool {
        Some(t) => format!(r#""name":"{t}","arguments":{{}}"#),
        None => String::new(),
    };
    if revision == V26 {
        headers.push(("Mcp-Method", method));
        if let Some(t) = tool {
            headers.push(("Mcp-Name", t));
        }
        let sep = if params.is_empty() { "" } else { "," };
        params = format!("{params}{sep}{META}");
    }
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}}}}}"#);
    post(addr, &headers, body.as_bytes()).await
}

#[tokio::test]
async fn refusals_have_fixed_statuses_codes_and_headers_on_every_revision() {
    let addr = start(McpService::new(endpoint())).await;
    for revision in ALL {
        let anonymous = call(addr, revision, None, "tools/call", Some("whoami")).await;
        assert_eq!(
            (anonymous.status, anonymous.code()),
            (401, -32001),
            "{revision}"
        );
        assert_eq!(anonymous.message(), "Unauthorized");
        assert_eq!(
            anonymous.header("www-authenticate"),
            Some(
                r#"Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource""#
            )
        );
        let forbidden = call(addr, revision, Some("eve"), "tools/call", Some("whoami")).await;
        assert_eq!((forbidden.status, forbidden.code()), (403, -32003));
        assert_eq!(forbidden.message(), "Forbidden");
        // A refused caller receives no catalog either.
        let list = call(addr, revision, None, "tools/list", None).await;
        assert_eq!(list.status, 401);
        assert!(!list.text().contains("whoami"));
        // A panicking controller refuses, as an internal error.
        let broken = call(addr, revision, Some("panic"), "tools/list", None).await;
        assert_eq!(broken.code(), -32603);
        // The admitted identity reaches the handler.
        let bob = call(addr, revision, Some("bob"), "tools/call", Some("whoami")).await;
        assert_eq!(bob.status, 200, "{}", bob.text());
        assert!(bob.text().contains("you are bob"));
    }
    // initialize is admitted too: a refused 2025 client gets no session.
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let refused = post(addr, &[], init.as_bytes()).await;
    assert_eq!(
        (refused.status, refused.header("mcp-session-id")),
        (401, None)
    );
}

#[tokio::test]
async fn admission_comes_before_capability_checks() {
    let addr = start(McpService::new(endpoint())).await;
    // The tool needs sampling: an anonymous caller learns nothing of that (or of the tool)
    // before it is admitted.
    for revision in ALL {
        let resp = call(addr, revision, None, "tools/call", Some("needs_sampling")).await;
        assert_eq!((resp.status, resp.code()), (401, -32001), "{revision}");
    }
    // Admitted, the capability check answers.
    let resp = call(
        addr,
        V26,
        Some("alice"),
        "tools/call",
        Some("needs_sampling"),
    )
    .await;
    assert_eq!((resp.status, resp.code()), (400, -32021));
}

#[tokio::test]
async fn tool_limiters_charge_each_principal_and_name_their_retry() {
    let addr = start(McpService::new(endpoint())).await;
    // The endpoint's tool limiter: three calls per principal, across revisions.
    for revision in [V26, V1125, V0618] {
        let resp = call(addr, revision, Some("alice"), "tools/call", Some("whoami")).await;
        assert_eq!(resp.status, 200, "{}", resp.text());
    }
    for revision in ALL {
        let limited = call(addr, revision, Some("alice"), "tools/call", Some("whoami")).await;
        assert_eq!(
            (limited.status, limited.code()),
            (429, -31999),
            "{revision}"
        );
        assert_eq!(limited.message(), "Rate limit exceeded");
        let retry: u64 = limited.header("retry-after").unwrap().parse().unwrap();
        assert!((1..=3600).contains(&retry), "{retry}");
    }
    // Lists are not tool calls: the tool limiter does not charge them.
    assert_eq!(
        call(addr, V26, Some("alice"), "tools/list", None)
            .await
            .status,
        200
    );
    // Bob has a bucket of his own; the named limiter is separate from the tool limiter.
    assert_eq!(
        call(addr, V26, Some("bob"), "tools/call", Some("scarce"))
            .await
            .status,
        200
    );
    assert_eq!(
        call(addr, V26, Some("bob"), "tools/call", Some("scarce"))
            .await
            .status,
        429
    );
    assert_eq!(
        call(addr, V26, Some("bob"), "tools/call", Some("whoami"))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn a_request_limiter_charges_every_request() {
    let addr = start(McpService::new(
        Endpoint::with_path("/mcp", [V26], Implementation::new("r", "1"))
            .request_rate_limiter(TokenBucket::with_capacity(2).refill(1, Duration::from_secs(60)))
            .build()
            .unwrap(),
    ))
    .await;
    assert_eq!(
        call(addr, V26, None, "server/discover", None).await.status,
        200
    );
    assert_eq!(
        call(addr, V26, None, "server/discover", None).await.status,
        200
    );
    let limited = call(addr, V26, None, "server/discover", None).await;
    assert_eq!((limited.status, limited.code()), (429, -31999));
}

#[tokio::test]
async fn stdio_requests_are_admitted_without_headers() {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server);
    tokio::spawn(StdioServer::new(endpoint()).serve(server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"whoami","arguments":{{}},{META}}}}}"#
    );
    client_write
        .write_all(format!("{line}\n").as_bytes())
        .await
        .unwrap();
    let mut lines = BufReader::new(client_read).lines();
    let answer = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(answer.contains("you are local"), "{answer}");
}

#[test]
fn a_tool_naming_an_unknown_limiter_does_not_build() {
    let err = Endpoint::with_path("/mcp", [V26], Implementation::new("e", "1"))
        .add_tool(
            ToolRegistration::with_name("t", [V26])
                .json_object_arguments()
                .handler(whoami)
                .rate_limiter("missing")
                .build()
                .unwrap(),
        )
        .build()
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.tool()),
        (BuildErrorKind::UnknownRateLimiter, Some("t"))
    );
}

#[tokio::test]
async fn refused_admissions_are_throttled_by_peer_when_asked() {
    let endpoint = |limiter: Option<TokenBucket>| {
        Endpoint::with_path("/mcp", ALL, Implementation::new("throttle", "1"))
            .legacy_sessions(None)
            .admission(admit)
            .refused_admission_limiter(limiter)
            .add_tool(
                ToolRegistration::with_name("whoami", ALL)
                    .json_object_arguments()
                    .handler(whoami)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap()
    };
    // Off by default: refusals stay refusals.
    let open = start(McpService::new(endpoint(None))).await;
    for _ in 0..5 {
        let refused = call(open, V26, Some("eve"), "tools/list", None).await;
        assert_eq!(refused.status, 403);
    }
    // On: two refusals from this address, then 429 before the credentials are looked at,
    // even good ones, on every revision.
    let addr = start(McpService::new(endpoint(Some(
        TokenBucket::with_capacity(2).refill(1, Duration::from_secs(3600)),
    ))))
    .await;
    assert_eq!(
        call(addr, V26, Some("alice"), "tools/list", None)
            .await
            .status,
        200
    );
    assert_eq!(call(addr, V26, None, "tools/list", None).await.status, 401);
    assert_eq!(
        call(addr, V1125, Some("eve"), "tools/list", None)
            .await
            .status,
        403
    );
    for revision in ALL {
        let throttled = call(addr, revision, Some("alice"), "tools/list", None).await;
        assert_eq!(
            (throttled.status, throttled.code()),
            (429, -31999),
            "{revision}"
        );
        let retry: u64 = throttled.header("retry-after").unwrap().parse().unwrap();
        assert!((1..=3600).contains(&retry), "{retry}");
    }
}
