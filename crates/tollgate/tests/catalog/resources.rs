//! Resources over real HTTP on every revision, side by side: catalogs, reads through exact URIs
//! and templates, each revision's not-found code, `Mcp-Name` agreement on 2026-07-28, 2025
//! subscriptions with updates on the standalone stream, and the registration rules.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::net::SocketAddr;
use std::time::Duration;

use support::{META, Response, post, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tollgate::json::{JsonValue, to_string};
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext,
    content::{CachePolicy, CacheScope, Icon, ResourceContents},
    endpoint::SessionConfig,
    resource::{
        ResourceOutput, ResourceRegistration, ResourceRequest, ResourceTemplateRegistration,
    },
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const ALL: [ProtocolVersion; 3] = [V26, V1125, V0618];

type Outcome = Result<ResourceOutput, tollgate::content::ContentError>;

async fn text(_: &RequestContext, r: ResourceRequest, _: &InvocationFeatures) -> Outcome {
    if r.variable("id") == Some("gone") {
        return Ok(ResourceOutput::not_found());
    }
    let body = match r.variable("id") {
        Some(id) => format!("item {id}"),
        None => "static".to_owned(),
    };
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        r.uri(),
        Some("text/plain"),
        body,
    )?))
}

async fn big(_: &RequestContext, r: ResourceRequest, _: &InvocationFeatures) -> Outcome {
    let data = vec![0u8; tollgate::content::MAX_INLINE_BYTES + 1];
    Ok(ResourceOutput::with_contents(ResourceContents::blob(
        r.uri(),
        None,
        &data,
    )?))
}

async fn failing(
    _: &RequestContext,
    _: ResourceRequest,
    _: &InvocationFeatures,
) -> Result<ResourceOutput, std::fmt::Error> {
    Err(std::fmt::Error)
}

fn endpoint(sessions: Option<SessionConfig>) -> Endpoint {
    let exact = |uri: &str| ResourceRegistration::with_uri(uri, "r", ALL);
    Endpoint::with_path("/mcp", ALL, Implementation::new("resources", "1"))
        .legacy_sessions(sessions)
        .add_resource(
            exact("test://static")
                .handler(text)
                .title("Static")
                .mime_type("text/plain")
                .add_icon(Icon::with_source("https://example.com/i.png").unwrap())
                .cache_policy(CachePolicy::new(60_000, CacheScope::Public))
                .build()
                .unwrap(),
        )
        .add_resource(exact("test://big").handler(big).build().unwrap())
        .add_resource(exact("test://failing").handler(failing).build().unwrap())
        // A valid URI that is not header-safe (non-ASCII): Mcp-Name carries it in base64.
        .add_resource(exact("test://caf%C3%A9/é").handler(text).build().unwrap())
        .add_resource_template(
            ResourceTemplateRegistration::with_uri_template("test://items/{id}", "Item", ALL)
                .handler(text)
                .description("One item")
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

/// Sends `method` with `params` (no braces) on `revision`; on 2026-07-28 with its headers,
/// `_meta`, and `name` as `Mcp-Name`.
async fn send(
    addr: SocketAddr,
    revision: ProtocolVersion,
    session: Option<&str>,
    method: &str,
    params: &str,
    name: Option<&str>,
) -> Response {
    let mut headers = vec![("MCP-Protocol-Version", revision.as_str())];
    if let Some(s) = session {
        headers.push(("Mcp-Session-Id", s));
    }
    let params = if revision == V26 {
        headers.push(("Mcp-Method", method));
        if let Some(name) = name {
            headers.push(("Mcp-Name", name));
        }
        let sep = if params.is_empty() { "" } else { "," };
        format!("{params}{sep}{META}")
    } else {
        params.to_owned()
    };
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}}}}}"#);
    post(addr, &headers, body.as_bytes()).await
}

async fn read(addr: SocketAddr, revision: ProtocolVersion, uri: &str) -> Response {
    send(
        addr,
        revision,
        None,
        "resources/read",
        &format!(r#""uri":"{uri}""#),
        Some(uri),
    )
    .await
}

#[tokio::test]
async fn catalogs_and_capabilities_per_revision() {
    let addr = start(McpService::new(endpoint(None))).await;
    let discover = send(addr, V26, None, "server/discover", "", None).await;
    let caps = discover.result().get("capabilities").cloned().unwrap();
    assert_eq!(
        to_string(&caps, &Default::default()).unwrap(),
        r#"{"resources":{"subscribe":true}}"#,
        "subscriptions/listen delivers updates on 2026-07-28"
    );
    for revision in ALL {
        let list = send(addr, revision, None, "resources/list", "", None).await;
        assert_eq!(list.status, 200, "{}", list.text());
        let result = list.result();
        let first = result
            .get("resources")
            .and_then(|r| r.as_array())
            .unwrap()
            .as_slice()[0]
            .clone();
        let icons = if revision == V0618 {
            ""
        } else {
            r#","icons":[{"src":"https://example.com/i.png"}]"#
        };
        assert_eq!(
            to_string(&first, &Default::default()).unwrap(),
            format!(
                r#"{{"uri":"test://static","name":"r","title":"Static","mimeType":"text/plain"{icons}}}"#
            )
        );
        assert_eq!(result.get("ttlMs").is_some(), revision == V26);
        let templates = send(addr, revision, None, "resources/templates/list", "", None).await;
        assert!(
            templates.text().contains(r#""resourceTemplates":[{"uriTemplate":"test://items/{id}","name":"Item","description":"One item"}]"#),
            "{}",
            templates.text()
        );
        let cursor = send(
            addr,
            revision,
            None,
            "resources/list",
            r#""cursor":"c""#,
            None,
        )
        .await;
        assert_eq!(cursor.message(), "Invalid cursor");
    }
}

#[tokio::test]
async fn reads_per_revision() {
    let addr = start(McpService::new(endpoint(None))).await;
    for revision in ALL {
        let exact = read(addr, revision, "test://static").await;
        assert_eq!(exact.status, 200, "{}", exact.text());
        let result = exact.result();
        assert_eq!(
            to_string(result.get("contents").unwrap(), &Default::default()).unwrap(),
            r#"[{"uri":"test://static","mimeType":"text/plain","text":"static"}]"#
        );
        if revision == V26 {
            // The resource's own caching hints.
            assert_eq!(
                result
                    .get("ttlMs")
                    .and_then(JsonValue::as_number)
                    .and_then(|n| n.to_u64()),
                Some(60_000)
            );
            assert_eq!(
                result.get("cacheScope").and_then(JsonValue::as_str),
                Some("public")
            );
            assert_eq!(
                result.get("resultType").and_then(JsonValue::as_str),
                Some("complete")
            );
        } else {
            assert!(result.get("ttlMs").is_none() && result.get("resultType").is_none());
        }
        let templated = read(addr, revision, "test://items/caf%C3%A9").await;
        assert!(
            templated.text().contains(r#""text":"item café""#),
            "{}",
            templated.text()
        );
        // Not found: -32602 on 2026-07-28 (HTTP 400), -32002 on the 2025 revisions (HTTP 200);
        // the URI is not echoed.
        for uri in [
            "test://nope-marker",
            "test://items/",
            "test://items/a/b",
            // The template matches; the handler says there is no such item.
            "test://items/gone",
        ] {
            let missing = read(addr, revision, uri).await;
            let (status, code) = if revision == V26 {
                (400, -32602)
            } else {
                (200, -32002)
            };
            assert_eq!((missing.status, missing.code()), (status, code), "{uri}");
            assert_eq!(missing.message(), "Resource not found");
            assert!(!missing.text().contains("nope-marker"));
        }
        let failed = read(addr, revision, "test://failing").await;
        assert_eq!((failed.status, failed.code()), (200, -32603));
        // A blob past the inline limit is refused at write time, not truncated.
        let big = read(addr, revision, "test://big").await;
        assert_eq!((big.status, big.code()), (200, -32603));
        let bad = send(
            addr,
            revision,
            None,
            "resources/read",
            r#""uri":7"#,
            Some("7"),
        )
        .await;
        // On 2026-07-28 the header check (row 12) comes first: `Mcp-Name` has no string to mirror.
        let expected = if revision == V26 { -32020 } else { -32602 };
        assert_eq!(bad.code(), expected);
    }
}

#[tokio::test]
async fn mcp_name_carries_the_uri_on_2026() {
    let addr = start(McpService::new(endpoint(None))).await;
    let params = r#""uri":"test://static""#;
    for name in [None, Some("test://other")] {
        let resp = send(addr, V26, None, "resources/read", params, name).await;
        assert_eq!((resp.status, resp.code()), (400, -32020), "{name:?}");
    }
    // A URI that is not header-safe travels base64-encoded.
    let uri = "test://caf%C3%A9/é";
    let encoded = format!("=?base64?{}?=", base64("test://caf%C3%A9/é"));
    let resp = send(
        addr,
        V26,
        None,
        "resources/read",
        &format!(r#""uri":"{uri}""#),
        Some(&encoded),
    )
    .await;
    assert_eq!(resp.status, 200, "{}", resp.text());
}

fn base64(text: &str) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = text.as_bytes();
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

async fn session(addr: SocketAddr, revision: ProtocolVersion) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
        revision.as_str()
    );
    let resp = post(addr, &[], body.as_bytes()).await;
    resp.header("mcp-session-id").unwrap().to_owned()
}

#[tokio::test]
async fn subscriptions_deliver_updates_on_the_standalone_stream() {
    let endpoint = endpoint(Some(SessionConfig::default()));
    let addr = start(McpService::new(endpoint.clone())).await;
    for revision in [V1125, V0618] {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
            revision.as_str()
        );
        let caps = post(addr, &[], init.as_bytes())
            .await
            .result()
            .get("capabilities")
            .cloned()
            .unwrap();
        assert_eq!(
            to_string(&caps, &Default::default()).unwrap(),
            r#"{"resources":{"listChanged":false,"subscribe":true}}"#
        );
        let s = session(addr, revision).await;
        let s = s.as_str();
        let sub = |uri: &'static str, method: &'static str| async move {
            let params = format!(r#""uri":"{uri}""#);
            send(addr, revision, Some(s), method, &params, None).await
        };
        assert_eq!(
            sub("test://static", "resources/subscribe").await.text(),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
        );
        assert_eq!(
            sub("test://items/7", "resources/subscribe").await.status,
            200
        );
        let unknown = sub("test://nope", "resources/subscribe").await;
        assert_eq!(unknown.code(), -32002);
        // An update before the client listens waits in the standalone stream's buffer.
        endpoint.notify_resource_updated("test://static");
        endpoint.notify_resource_updated("test://unsubscribed-elsewhere");
        let request = format!(
            "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {s}\r\nMCP-Protocol-Version: {}\r\n\r\n",
            revision.as_str()
        );
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut seen = String::new();
        let mut buf = [0u8; 4096];
        let want = r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://static"}}"#;
        while !seen.contains(want) {
            let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf))
                .await
                .unwrap()
                .unwrap();
            assert!(n > 0, "stream ended: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        assert!(!seen.contains("unsubscribed-elsewhere"));
        // Live updates arrive on the open stream; after unsubscribing they stop.
        endpoint.notify_resource_updated("test://items/7");
        let want = r#""params":{"uri":"test://items/7"}"#;
        while !seen.contains(want) {
            let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf))
                .await
                .unwrap()
                .unwrap();
            assert!(n > 0);
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        assert_eq!(
            sub("test://static", "resources/unsubscribe").await.status,
            200
        );
        endpoint.notify_resource_updated("test://static");
        endpoint.notify_resource_updated("test://items/7");
        let want = r#""params":{"uri":"test://items/7"}"#;
        let before = seen.matches(want).count();
        while seen.matches(want).count() == before {
            let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf))
                .await
                .unwrap()
                .unwrap();
            assert!(n > 0);
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        assert_eq!(
            seen.matches(r#""uri":"test://static""#).count(),
            1,
            "{seen}"
        );
    }
    // Without sessions there are no subscriptions: the capability says so and the method does
    // not exist.
    let stateless = start(McpService::new(endpoint_stateless())).await;
    let resp = send(
        stateless,
        V1125,
        None,
        "resources/subscribe",
        r#""uri":"test://static""#,
        None,
    )
    .await;
    assert_eq!(resp.code(), -32601);
}

fn endpoint_stateless() -> Endpoint {
    endpoint(None)
}

#[tokio::test]
async fn an_endpoint_without_resources_has_no_resource_methods() {
    let addr = start(McpService::new(
        Endpoint::with_path("/mcp", ALL, Implementation::new("bare", "1"))
            .legacy_sessions(None)
            .build()
            .unwrap(),
    ))
    .await;
    for revision in ALL {
        for method in ["resources/list", "resources/templates/list"] {
            let resp = send(addr, revision, None, method, "", None).await;
            assert_eq!(resp.code(), -32601, "{method}");
        }
        assert_eq!(read(addr, revision, "test://x").await.code(), -32601);
    }
}

#[test]
fn registration_rules() {
    let exact = |uri: &str| {
        ResourceRegistration::with_uri(uri, "r", [V26])
            .handler(text)
            .build()
    };
    for bad in ["relative/path", "", "test://a b", "1test://x"] {
        let err = exact(bad).unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::InvalidResource, "{bad}");
    }
    let err = ResourceRegistration::with_uri("test://x", "", [V26])
        .handler(text)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidResource);
    let err = ResourceRegistration::with_uri("test://x", "r", [V26])
        .handler(text)
        .mime_type("not a type")
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidResource);
    let template = |t: &str| {
        ResourceTemplateRegistration::with_uri_template(t, "t", [V26])
            .handler(text)
            .build()
    };
    for bad in [
        "test://{+x}",
        "test://{a}{b}",
        "items/{id}",
        "test://{a}/{a}",
    ] {
        let err = template(bad).unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::InvalidUriTemplate, "{bad}");
        assert_eq!(err.resource_uri(), Some(bad));
    }
    let build = |b: tollgate::endpoint::EndpointBuilder| b.build().unwrap_err().kind();
    let base = || Endpoint::with_path("/mcp", [V26], Implementation::new("e", "1"));
    assert_eq!(
        build(
            base()
                .add_resource(exact("test://x").unwrap())
                .add_resource(exact("test://x").unwrap())
        ),
        BuildErrorKind::DuplicateResource
    );
    assert_eq!(
        build(
            base()
                .add_resource_template(template("test://{a}").unwrap())
                .add_resource_template(template("test://{a}").unwrap())
        ),
        BuildErrorKind::DuplicateResource
    );
    let mut many = base();
    for i in 0..=tollgate::resource::MAX_TEMPLATES_PER_ENDPOINT {
        many = many.add_resource_template(template(&format!("test://t{i}/{{x}}")).unwrap());
    }
    assert_eq!(build(many), BuildErrorKind::TooManyTemplates);
    let mut at_limit = base();
    for i in 0..tollgate::resource::MAX_TEMPLATES_PER_ENDPOINT {
        at_limit = at_limit.add_resource_template(template(&format!("test://t{i}/{{x}}")).unwrap());
    }
    assert!(at_limit.build().is_ok());
    let err = Endpoint::with_path("/mcp", [V1125], Implementation::new("e", "1"))
        .add_resource(exact("test://x").unwrap())
        .build()
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.resource_uri()),
        (BuildErrorKind::RevisionOutsideEndpoint, Some("test://x"))
    );
}

async fn gated(
    ctx: &RequestContext,
    r: ResourceRequest,
    _: &InvocationFeatures,
) -> Result<tollgate::resource::ResourceOutcome, tollgate::content::ContentError> {
    if ctx.input_response("ok").is_some() {
        return Ok(
            ResourceOutput::with_contents(ResourceContents::text(r.uri(), None, "opened")?).into(),
        );
    }
    Ok(tollgate::context::InputRequiredResult::with_input_request(
        "ok",
        tollgate::context::InputRequest::elicitation("Open it?", tollgate::json::JsonObject::new()),
    )
    .into())
}

#[tokio::test]
async fn a_read_may_ask_for_input_on_2026() {
    let addr = start(McpService::new(
        Endpoint::with_path("/mcp", [V26, V1125], Implementation::new("r", "1"))
            .legacy_sessions(None)
            .add_resource(
                ResourceRegistration::with_uri("test://gated", "g", [V26, V1125])
                    .handler(gated)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    ))
    .await;
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "resources/read"),
        ("Mcp-Name", "test://gated"),
    ];
    let body = |extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{"uri":"test://gated"{extra},{meta}}}}}"#
        )
    };
    let first = post(addr, &headers, body("").as_bytes()).await;
    let state = first
        .result()
        .get("requestState")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned();
    let retry = format!(
        r#","inputResponses":{{"ok":{{"action":"accept","content":{{}}}}}},"requestState":"{state}""#
    );
    let second = post(addr, &headers, body(&retry).as_bytes()).await;
    assert!(
        second.text().contains(r#""text":"opened""#),
        "{}",
        second.text()
    );
    let legacy =
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://gated"}}"#;
    let resp = post(
        addr,
        &[("MCP-Protocol-Version", "2025-11-25")],
        legacy.as_bytes(),
    )
    .await;
    assert_eq!((resp.status, resp.code()), (200, -32603));
}

/// Finds, as it runs, that the read needs sampling and an extension the caller lacks.
async fn needs_feeds(
    _: &RequestContext,
    _: ResourceRequest,
    _: &InvocationFeatures,
) -> Result<tollgate::resource::ResourceOutcome, tollgate::content::ContentError> {
    use tollgate::context::ClientCapability;
    let missing = tollgate::tool::MissingCapabilities::new([
        ClientCapability::Sampling,
        ClientCapability::Extension("com.example/feeds".into()),
    ]);
    Ok(missing.unwrap().into())
}

#[tokio::test]
async fn a_read_names_capabilities_it_finds_missing() {
    let addr = start(McpService::new(
        Endpoint::with_path("/mcp", [V26, V1125], Implementation::new("r", "1"))
            .legacy_sessions(None)
            .add_resource(
                ResourceRegistration::with_uri("test://feeds", "f", [V26, V1125])
                    .handler(needs_feeds)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    ))
    .await;
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "resources/read"),
        ("Mcp-Name", "test://feeds"),
    ];
    let body = |capabilities: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{"uri":"test://feeds","_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{capabilities}}}}}}}"#
        )
    };
    let resp = post(addr, &headers, body("{}").as_bytes()).await;
    assert_eq!((resp.status, resp.code()), (400, -32021));
    assert!(
        resp.text().contains(
            r#""requiredCapabilities":{"sampling":{},"extensions":{"com.example/feeds":{}}}"#
        ),
        "{}",
        resp.text()
    );
    // Naming one the caller declared is the handler's contract failure.
    let resp = post(addr, &headers, body(r#"{"sampling":{}}"#).as_bytes()).await;
    assert_eq!((resp.status, resp.code()), (200, -32603));
    let legacy =
        r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://feeds"}}"#;
    let resp = post(
        addr,
        &[("MCP-Protocol-Version", "2025-11-25")],
        legacy.as_bytes(),
    )
    .await;
    assert_eq!((resp.status, resp.code()), (200, -32021));
}

/// A template completing its variables: `item` from a fixed list filtered by what is typed and
/// by the `shelf` already chosen.
fn completing_endpoint() -> Endpoint {
    use std::convert::Infallible;
    use tollgate::prompt::{Completion, CompletionRequest};
    let complete = |_: &RequestContext, request: CompletionRequest| async move {
        let shelf = request.context("shelf").unwrap_or("any");
        let items = ["apple", "apricot", "banana"]
            .into_iter()
            .filter(|i| i.starts_with(request.value()))
            .map(|i| format!("{shelf}/{}/{i}", request.argument()));
        Ok::<_, Infallible>(Completion::from_values(items))
    };
    Endpoint::with_path("/mcp", ALL, Implementation::new("completing", "1"))
        .legacy_sessions(None)
        .add_resource_template(
            ResourceTemplateRegistration::with_uri_template(
                "test://shelves/{shelf}/{item}",
                "Shelf item",
                ALL,
            )
            .handler(text)
            .completion(complete)
            .build()
            .unwrap(),
        )
        .add_resource_template(
            ResourceTemplateRegistration::with_uri_template("test://items/{id}", "Item", ALL)
                .handler(text)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

#[tokio::test]
async fn templates_complete_their_variables_per_revision() {
    let addr = start(McpService::new(completing_endpoint())).await;
    let discover = send(addr, V26, None, "server/discover", "", None).await;
    let caps = discover.result().get("capabilities").cloned().unwrap();
    assert!(
        caps.get("completions").is_some(),
        "a completing template offers completions"
    );
    let ask = |template: &str, argument: &str, value: &str, context: &str| {
        format!(
            r#""ref":{{"type":"ref/resource","uri":"{template}"}},"argument":{{"name":"{argument}","value":"{value}"}}{context}"#
        )
    };
    let shelves = "test://shelves/{shelf}/{item}";
    for revision in ALL {
        let complete = |params: String| async move {
            send(
                addr,
                revision,
                None,
                "completion/complete",
                &params,
                Some(shelves),
            )
            .await
        };
        let resp = complete(ask(
            shelves,
            "item",
            "ap",
            r#","context":{"arguments":{"shelf":"fruit"}}"#,
        ))
        .await;
        assert_eq!(resp.status, 200, "{}", resp.text());
        let completion = resp.result().get("completion").cloned().unwrap();
        assert_eq!(
            to_string(&completion, &Default::default()).unwrap(),
            r#"{"values":["fruit/item/apple","fruit/item/apricot"],"hasMore":false}"#
        );
        // A template without a completion handler offers nothing.
        let items = "test://items/{id}";
        let resp = send(
            addr,
            revision,
            None,
            "completion/complete",
            &ask(items, "id", "", ""),
            Some(items),
        )
        .await;
        assert!(resp.text().contains(r#""values":[]"#), "{}", resp.text());
        let status = if revision == V26 { 400 } else { 200 };
        for (params, why) in [
            (ask(shelves, "colour", "", ""), "not one of its variables"),
            (
                ask(
                    shelves,
                    "item",
                    "",
                    r#","context":{"arguments":{"colour":"x"}}"#,
                ),
                "context not a variable",
            ),
            (
                ask(
                    shelves,
                    "item",
                    "",
                    r#","context":{"arguments":{"shelf":1}}"#,
                ),
                "non-string context",
            ),
        ] {
            let resp = complete(params).await;
            assert_eq!((resp.status, resp.code()), (status, -32602), "{why}");
        }
        // A URI, not a template served here.
        let other = "test://shelves/fruit/apple";
        let params = ask(other, "item", "", "");
        let resp = send(
            addr,
            revision,
            None,
            "completion/complete",
            &params,
            Some(other),
        )
        .await;
        assert_eq!((resp.status, resp.code()), (status, -32602));
    }
}
