//! JSON-RPC batches over real HTTP: taken on 2025-03-26 only, each element through the whole
//! pipeline, answered as one array; the empty batch, the element bound (at it and one past it),
//! `initialize` inside a batch, a notification-only batch, and the later revisions' unchanged
//! refusal of an array.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use support::{post, start};
use tollgate::json::JsonObject;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    endpoint::{EndpointLimits, SessionConfig},
    tool::{CompleteResult, OperationResult},
};

const BOUND: usize = 4;

/// A server whose `count` tool counts its calls.
async fn server(
    revisions: &[ProtocolVersion],
    sessions: Option<SessionConfig>,
) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let count = move |_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures| {
        let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            Ok::<OperationResult, Infallible>(CompleteResult::from_tool_text(n.to_string()).into())
        }
    };
    let revisions: tollgate::endpoint::ProtocolVersions = revisions.iter().copied().collect();
    let endpoint = Endpoint::with_path("/mcp", revisions, Implementation::new("batches", "1"))
        .legacy_sessions(sessions)
        .limits(EndpointLimits::new().max_batch_elements(BOUND))
        .add_tool(
            ToolRegistration::with_name("count", revisions)
                .json_object_arguments()
                .handler(count)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    (start(McpService::new(endpoint)).await, calls)
}

fn call(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"count","arguments":{{}}}}}}"#
    )
}

fn batch(elements: &[String]) -> String {
    format!("[{}]", elements.join(","))
}

const MARCH: [ProtocolVersion; 2] = [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18];

#[tokio::test]
async fn a_batch_of_two_with_one_bad_element() {
    let (addr, calls) = server(&MARCH, None).await;
    let body = batch(&[
        call(1),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":5}"#.to_owned(),
    ]);
    let resp = post(addr, &[], body.as_bytes()).await;
    assert_eq!(resp.status, 200);
    assert_eq!(
        resp.text(),
        concat!(
            r#"[{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"1"}]}},"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request"}}]"#
        )
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // The header may name 2025-03-26 too.
    let named = post(
        addr,
        &[("MCP-Protocol-Version", "2025-03-26")],
        batch(&[call(3)]).as_bytes(),
    )
    .await;
    assert_eq!(named.status, 200);
    assert!(
        named
            .text()
            .starts_with(r#"[{"jsonrpc":"2.0","id":3,"result""#)
    );
}

#[tokio::test]
async fn a_batch_at_its_bound_runs_and_one_past_it_is_refused_whole() {
    let (addr, calls) = server(&MARCH, None).await;
    let at: Vec<String> = (1..=BOUND).map(call).collect();
    let resp = post(addr, &[], batch(&at).as_bytes()).await;
    assert_eq!(resp.status, 200);
    let answers = resp.json();
    assert_eq!(answers.as_array().map(|a| a.as_slice().len()), Some(BOUND));
    assert_eq!(calls.load(Ordering::SeqCst), BOUND);
    let past: Vec<String> = (1..=BOUND + 1).map(call).collect();
    let resp = post(addr, &[], batch(&past).as_bytes()).await;
    assert_eq!(
        (resp.status, resp.text()),
        (
            400,
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Batch too large"}}"#.to_owned()
        )
    );
    assert_eq!(calls.load(Ordering::SeqCst), BOUND, "no element of it ran");
}

#[tokio::test]
async fn empty_notification_only_and_initialize_batches() {
    let (addr, calls) = server(&MARCH, None).await;
    let empty = post(addr, &[], b"[]").await;
    assert_eq!(
        (empty.status, empty.text()),
        (
            400,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}"#
                .to_owned()
        )
    );
    let notes = batch(&[
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#.to_owned(),
    ]);
    let accepted = post(addr, &[], notes.as_bytes()).await;
    assert_eq!((accepted.status, accepted.body.len()), (202, 0));
    let with_initialize = batch(&[
        r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#.to_owned(),
        call(2),
    ]);
    let resp = post(addr, &[], with_initialize.as_bytes()).await;
    assert_eq!(resp.status, 200);
    assert_eq!(
        resp.text(),
        concat!(
            r#"[{"jsonrpc":"2.0","id":"i","error":{"code":-32600,"message":"Invalid Request"}},"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"1"}]}}]"#
        )
    );
    assert!(resp.header("mcp-session-id").is_none());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// With sessions, each element meets the session stage: a batch in a 2025-03-26 session runs,
/// one without a session gets the per-element refusal.
#[tokio::test]
async fn batch_elements_are_bound_to_the_session() {
    let (addr, calls) = server(&MARCH, Some(SessionConfig::default())).await;
    let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let opened = post(addr, &[], init).await;
    let session = opened.header("mcp-session-id").unwrap().to_owned();
    let body = batch(&[call(1), call(2)]);
    let ok = post(addr, &[("Mcp-Session-Id", &session)], body.as_bytes()).await;
    assert_eq!(ok.status, 200);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let without = post(addr, &[], body.as_bytes()).await;
    assert_eq!(
        without.text(),
        concat!(
            r#"[{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Session required"}},"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Session required"}}]"#
        )
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// Every element is admitted: a caller admission refuses gets its 401 for the whole batch, and
/// nothing runs.
#[tokio::test]
async fn an_unadmitted_caller_gets_the_refusal_for_the_whole_batch() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let count = move |_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures| {
        counted.fetch_add(1, Ordering::SeqCst);
        async { Ok::<OperationResult, Infallible>(CompleteResult::from_tool_text("ran").into()) }
    };
    let admit = |request: &tollgate::policy::AdmissionRequest<'_>| match request.header("x-api-key")
    {
        Some("k") => tollgate::policy::AdmissionDecision::admit(
            tollgate::policy::AdmissionIdentity::principal("team"),
        ),
        _ => tollgate::policy::AdmissionDecision::unauthorized(),
    };
    let endpoint = Endpoint::with_path("/mcp", MARCH, Implementation::new("batches", "1"))
        .legacy_sessions(None)
        .admission(admit)
        .refused_admission_limiter(None)
        .add_tool(
            ToolRegistration::with_name("count", MARCH)
                .json_object_arguments()
                .handler(count)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let body = batch(&[call(1), call(2)]);
    let refused = post(addr, &[], body.as_bytes()).await;
    assert_eq!(refused.status, 401);
    assert!(!refused.text().starts_with('['));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let admitted = post(addr, &[("x-api-key", "k")], body.as_bytes()).await;
    assert_eq!(admitted.status, 200);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// Where 2025-03-26 is not the revision, an array is refused exactly as before batches existed.
#[tokio::test]
async fn later_revisions_refuse_an_array_as_before() {
    let refused = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}"#;
    let (june_only, calls) = server(&[ProtocolVersion::V2025_06_18], None).await;
    let (march, _) = server(&MARCH, None).await;
    let body = batch(&[call(1)]);
    for (addr, header) in [(june_only, None), (march, Some("2025-06-18"))] {
        let headers: Vec<(&str, &str)> = header
            .map(|h| ("MCP-Protocol-Version", h))
            .into_iter()
            .collect();
        for body in [body.as_bytes(), b"[]".as_slice()] {
            let resp = post(addr, &headers, body).await;
            assert_eq!(
                (resp.status, resp.text()),
                (400, refused.to_owned()),
                "{header:?}"
            );
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}
