//! Every 2025 session path is admitted, and a session belongs to the principal that opened it:
//! over real HTTP on 2025-11-25 and 2025-06-18, with an admission controller that knows two keys
//! (`alice`, `bob`), forbids one (`eve`) and challenges everyone else. For each path (a request,
//! a notification, a client's response, a stream `GET`, a resumed `GET` with `Last-Event-ID`, a
//! `DELETE`): no key is 401 and another principal's key is 404, neither touches the session, and
//! its owner carries on afterwards.

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

use support::{Open, Response, post, raw, start};
use tollgate::json::{JsonObject, to_string};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    content::ResourceContents,
    context::{ClientRequests, InputRequest},
    policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest},
    resource::{ResourceOutput, ResourceRequest, ResourceTemplateRegistration},
    tool::{CompleteResult, OperationResult},
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const LEGACY: [ProtocolVersion; 2] = [V1125, V0618];

fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
    match request.header("authorization") {
        Some("Bearer alice") => AdmissionDecision::admit(AdmissionIdentity::principal("alice")),
        Some("Bearer bob") => AdmissionDecision::admit(AdmissionIdentity::principal("bob")),
        Some("Bearer eve") => AdmissionDecision::forbidden(),
        _ => AdmissionDecision::unauthorized(),
    }
}

/// Asks the client for its roots and reports the answer.
async fn roots(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let Some(client) = features.find::<ClientRequests>() else {
        return Ok(CompleteResult::from_tool_text("no client requests here").into());
    };
    let text = match client.send(InputRequest::list_roots()).await {
        Ok(answer) => format!(
            "roots: {}",
            to_string(&answer, &Default::default()).unwrap()
        ),
        Err(e) => format!("unavailable: {e}"),
    };
    Ok(CompleteResult::from_tool_text(text).into())
}

struct Server {
    addr: SocketAddr,
    /// How often a handler was entered.
    entered: Arc<AtomicUsize>,
}

async fn server() -> Server {
    let all = [V26, V1125, V0618];
    let entered = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&entered);
    let whoami =
        move |ctx: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures| {
            counter.fetch_add(1, Ordering::SeqCst);
            let who = ctx
                .admission_identity()
                .principal_name()
                .unwrap_or("anonymous")
                .to_owned();
            async move {
                Ok::<OperationResult, Infallible>(
                    CompleteResult::from_tool_text(format!("you are {who}")).into(),
                )
            }
        };
    let endpoint = Endpoint::with_path("/mcp", all, Implementation::new("sessions", "1"))
        .admission(admit)
        // These tests refuse on purpose, many times, from one address.
        .refused_admission_limiter(None)
        .add_tool(
            ToolRegistration::with_name("whoami", all)
                .json_object_arguments()
                .handler(whoami)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("roots", all)
                .json_object_arguments()
                .handler(roots)
                .input_request_declarations([tollgate::tool::InputRequestDeclaration::new(
                    tollgate::tool::InputRequestKind::Roots,
                    tollgate::tool::InputRequirement::Conditional,
                )])
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    Server {
        addr: start(McpService::new(endpoint)).await,
        entered,
    }
}

fn bearer(key: Option<&str>) -> Option<String> {
    key.map(|k| format!("Bearer {k}"))
}

/// The headers of a session request: revision, session, and the key's bearer token.
fn headers<'a>(
    revision: ProtocolVersion,
    session: &'a str,
    token: &'a Option<String>,
) -> Vec<(&'a str, &'a str)> {
    let mut h = vec![
        ("MCP-Protocol-Version", revision.as_str()),
        ("Mcp-Session-Id", session),
    ];
    if let Some(t) = token {
        h.push(("Authorization", t.as_str()));
    }
    h
}

async fn initialize(addr: SocketAddr, revision: ProtocolVersion, key: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{"roots":{{}}}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
        revision.as_str()
    );
    let token = format!("Bearer {key}");
    let resp = post(addr, &[("Authorization", &token)], body.as_bytes()).await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.header("mcp-session-id").unwrap().to_owned()
}

async fn call(
    addr: SocketAddr,
    revision: ProtocolVersion,
    session: &str,
    key: Option<&str>,
) -> Response {
    let token = bearer(key);
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#;
    post(addr, &headers(revision, session, &token), body.as_bytes()).await
}

async fn notify(
    addr: SocketAddr,
    revision: ProtocolVersion,
    session: &str,
    key: Option<&str>,
) -> Response {
    let token = bearer(key);
    let body = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#;
    post(addr, &headers(revision, session, &token), body.as_bytes()).await
}

async fn respond(
    addr: SocketAddr,
    revision: ProtocolVersion,
    session: &str,
    key: Option<&str>,
) -> Response {
    let token = bearer(key);
    let body = r#"{"jsonrpc":"2.0","id":"tollgate-1","result":{"roots":[{"uri":"file:///w"}]}}"#;
    post(addr, &headers(revision, session, &token), body.as_bytes()).await
}

/// A `GET` or `DELETE` with the session's headers (and `Last-Event-ID` when given), read whole
/// unless the answer is a stream (then only its head: the stream stays open).
async fn bare(
    addr: SocketAddr,
    method: &str,
    revision: ProtocolVersion,
    session: &str,
    key: Option<&str>,
    last_event_id: Option<&str>,
) -> u16 {
    let token = bearer(key);
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\n",
        addr.port()
    );
    for (k, v) in headers(revision, session, &token) {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(id) = last_event_id {
        request.push_str(&format!("Last-Event-ID: {id}\r\n"));
    }
    if method == "DELETE" {
        request.push_str("Connection: close\r\n\r\n");
        return raw(addr, request.as_bytes()).await.status;
    }
    request.push_str("\r\n");
    Open::send(addr, request).await.status
}

#[tokio::test]
async fn requests_and_notifications_are_admitted_and_bound_to_the_owner() {
    let s = server().await;
    for revision in LEGACY {
        let session = initialize(s.addr, revision, "alice").await;
        let before = s.entered.load(Ordering::SeqCst);
        // No key: 401, with the fixed code; a forbidden key: 403.
        let anonymous = call(s.addr, revision, &session, None).await;
        assert_eq!(
            (anonymous.status, anonymous.code()),
            (401, -32001),
            "{revision}"
        );
        let eve = call(s.addr, revision, &session, Some("eve")).await;
        assert_eq!((eve.status, eve.code()), (403, -32003), "{revision}");
        // Another principal: the session does not exist for it.
        let bob = call(s.addr, revision, &session, Some("bob")).await;
        assert_eq!(bob.status, 404, "{revision}: {}", bob.text());
        assert!(!bob.text().contains("alice"));
        assert_eq!(s.entered.load(Ordering::SeqCst), before, "no handler ran");
        // Notifications: the status alone.
        assert_eq!(notify(s.addr, revision, &session, None).await.status, 401);
        assert_eq!(
            notify(s.addr, revision, &session, Some("eve")).await.status,
            403
        );
        assert_eq!(
            notify(s.addr, revision, &session, Some("bob")).await.status,
            404
        );
        assert_eq!(
            notify(s.addr, revision, &session, Some("alice"))
                .await
                .status,
            202
        );
        // The owner carries on, as itself.
        let alice = call(s.addr, revision, &session, Some("alice")).await;
        assert_eq!(alice.status, 200, "{}", alice.text());
        assert!(alice.text().contains("you are alice"));
        // A second principal cannot open a session that answers to the first.
        let bobs = initialize(s.addr, revision, "bob").await;
        assert_ne!(bobs, session);
        assert_eq!(
            call(s.addr, revision, &bobs, Some("alice")).await.status,
            404
        );
        assert!(
            call(s.addr, revision, &bobs, Some("bob"))
                .await
                .text()
                .contains("you are bob")
        );
    }
}

#[tokio::test]
async fn delete_is_admitted_and_ends_only_the_owners_session() {
    let s = server().await;
    for revision in LEGACY {
        let session = initialize(s.addr, revision, "alice").await;
        assert_eq!(
            bare(s.addr, "DELETE", revision, &session, None, None).await,
            401
        );
        assert_eq!(
            bare(s.addr, "DELETE", revision, &session, Some("eve"), None).await,
            403
        );
        assert_eq!(
            bare(s.addr, "DELETE", revision, &session, Some("bob"), None).await,
            404
        );
        // Untouched: the owner still has it, and ends it.
        assert_eq!(
            call(s.addr, revision, &session, Some("alice")).await.status,
            200
        );
        assert_eq!(
            bare(s.addr, "DELETE", revision, &session, Some("alice"), None).await,
            200
        );
        assert_eq!(
            call(s.addr, revision, &session, Some("alice")).await.status,
            404
        );
    }
}

#[tokio::test]
async fn streams_and_responses_are_admitted_and_bound_to_the_owner() {
    let s = server().await;
    for revision in LEGACY {
        let session = initialize(s.addr, revision, "alice").await;
        // The standalone stream.
        assert_eq!(
            bare(s.addr, "GET", revision, &session, None, None).await,
            401
        );
        assert_eq!(
            bare(s.addr, "GET", revision, &session, Some("eve"), None).await,
            403
        );
        assert_eq!(
            bare(s.addr, "GET", revision, &session, Some("bob"), None).await,
            404
        );
        assert_eq!(
            bare(s.addr, "GET", revision, &session, Some("alice"), None).await,
            200
        );
        // A call that asks the client for its roots, on a stream with event ids.
        let token = bearer(Some("alice"));
        let h = headers(revision, &session, &token);
        let body = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"roots","arguments":{}}}"#;
        let mut stream = Open::send(s.addr, support::post_request(s.addr, &h, body)).await;
        assert!(
            stream.until(r#""method":"roots/list""#).await,
            "{}",
            stream.text()
        );
        let event = stream.event_ids().last().cloned().expect("an event id");
        // Resuming after that event.
        for (key, status) in [(None, 401), (Some("eve"), 403), (Some("bob"), 404)] {
            assert_eq!(
                bare(s.addr, "GET", revision, &session, key, Some(&event)).await,
                status,
                "{revision} {key:?}"
            );
        }
        // The waiting request cannot be answered by anyone but the owner.
        for (key, status) in [(None, 401), (Some("eve"), 403), (Some("bob"), 404)] {
            let resp = respond(s.addr, revision, &session, key).await;
            assert_eq!(resp.status, status, "{revision} {key:?}");
        }
        let answered = respond(s.addr, revision, &session, Some("alice")).await;
        assert_eq!(answered.status, 202, "{revision}");
        assert!(stream.until(r#""id":5"#).await, "{}", stream.text());
        assert!(stream.text().contains("file:///w"), "{}", stream.text());
        // The owner may still resume after the event.
        assert_eq!(
            bare(
                s.addr,
                "GET",
                revision,
                &session,
                Some("alice"),
                Some(&event)
            )
            .await,
            200
        );
    }
}

async fn item(_: &RequestContext, r: ResourceRequest, _: &InvocationFeatures) -> Outcome {
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        r.uri(),
        None,
        "item",
    )?))
}

type Outcome = Result<ResourceOutput, tollgate::content::ContentError>;

#[tokio::test]
async fn subscriptions_are_bounded_per_uri_and_per_session() {
    let endpoint = Endpoint::with_path("/mcp", [V1125], Implementation::new("subs", "1"))
        .add_resource_template(
            ResourceTemplateRegistration::with_uri_template("test://items/{id}", "Item", [V1125])
                .handler(item)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let session = post(addr, &[], init.as_bytes())
        .await
        .header("mcp-session-id")
        .unwrap()
        .to_owned();
    let subscribe = |uri: String| {
        let session = session.clone();
        async move {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{{"uri":"{uri}"}}}}"#
            );
            let h = [
                ("MCP-Protocol-Version", V1125.as_str()),
                ("Mcp-Session-Id", session.as_str()),
            ];
            post(addr, &h, body.as_bytes()).await
        }
    };
    // A URI of exactly the largest length (8,192 bytes), with a distinct tail for each.
    let uri_of = |n: usize, len: usize| {
        let head = format!("test://items/{n:04}-");
        format!("{head}{}", "x".repeat(len - head.len()))
    };
    let at = subscribe(uri_of(0, tollgate::endpoint::MAX_SUBSCRIPTION_URI_BYTES)).await;
    assert_eq!(at.status, 200, "{}", at.text());
    assert!(at.json().get("error").is_none(), "{}", at.text());
    let past = subscribe(uri_of(
        1,
        tollgate::endpoint::MAX_SUBSCRIPTION_URI_BYTES + 1,
    ))
    .await;
    assert_eq!(past.code(), -32602);
    assert!(!past.text().contains("xxxx"), "never echoed");
    // 256 KiB of URIs per session: 32 of the largest fit, the 33rd does not.
    for n in 1..32 {
        let resp = subscribe(uri_of(n, tollgate::endpoint::MAX_SUBSCRIPTION_URI_BYTES)).await;
        assert!(resp.json().get("error").is_none(), "{n}: {}", resp.text());
    }
    let full = subscribe(uri_of(32, tollgate::endpoint::MAX_SUBSCRIPTION_URI_BYTES)).await;
    assert_eq!(full.code(), -32603, "{}", full.text());
    // Unsubscribing gives the bytes back; subscribing again to a held URI costs nothing.
    let again = subscribe(uri_of(0, tollgate::endpoint::MAX_SUBSCRIPTION_URI_BYTES)).await;
    assert!(again.json().get("error").is_none());
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"resources/unsubscribe","params":{{"uri":"{}"}}}}"#,
        uri_of(0, tollgate::endpoint::MAX_SUBSCRIPTION_URI_BYTES)
    );
    let h = [
        ("MCP-Protocol-Version", V1125.as_str()),
        ("Mcp-Session-Id", session.as_str()),
    ];
    assert!(
        post(addr, &h, body.as_bytes())
            .await
            .json()
            .get("error")
            .is_none()
    );
    let room = subscribe(uri_of(32, tollgate::endpoint::MAX_SUBSCRIPTION_URI_BYTES)).await;
    assert!(room.json().get("error").is_none(), "{}", room.text());
}
