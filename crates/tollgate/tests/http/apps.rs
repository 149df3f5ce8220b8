//! MCP Apps (`io.modelcontextprotocol/ui`) over real HTTP on every revision, with and without
//! the extension declared: a declaring client's `tools/list` carries each tool's
//! `_meta.ui.resourceUri` and `visibility`, any other client's the same tools without them (on
//! 2026-07-28 the declaration rides with each request; on the 2025 revisions with the session's
//! `initialize`); the view listed by `resources/list` and read by `resources/read` as
//! `text/html;profile=mcp-app` with its `_meta.ui`; the extension in the capabilities; nothing
//! of it on 2025-03-26; a per-principal view keeping a visible tool's view readable; and a live
//! catalog's view added and removed with its tool.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;

use support::{Response, post, start};
use tollgate::app::{AppCsp, AppPermissions, AppVisibility};
use tollgate::endpoint::{CatalogChange, Registered};
use tollgate::json::{JsonObject, JsonValue, OutputLimits, to_string};
use tollgate::policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest};
use tollgate::{
    AppView, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext, ToolArguments, ToolRegistration,
    tool::{CompleteResult, OperationResult},
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const V0326: ProtocolVersion = ProtocolVersion::V2025_03_26;

const DECLARED: &str =
    r#"{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}"#;
/// The extension without the HTML profile: not a client that renders views.
const OTHER_TYPES: &str =
    r#"{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/x-other"]}}}"#;
const HTML: &str = "<!doctype html><title>Products</title><table id=\"rows\"></table>";
const VIEW_META: &str = concat!(
    r#"{"ui":{"csp":{"connectDomains":["https://api.example.com"],"#,
    r#""resourceDomains":["https://*.cdn.example.com"]},"#,
    r#""permissions":{"clipboardWrite":{}},"prefersBorder":true}}"#
);

async fn products(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("2 products").into())
}

fn view() -> AppView {
    AppView::html("ui://shop/products", HTML)
        .name("products")
        .description("The product table")
        .csp(
            AppCsp::new()
                .connect_domain("https://api.example.com")
                .resource_domain("https://*.cdn.example.com"),
        )
        .permissions(AppPermissions::new().clipboard_write())
        .prefers_border(true)
        .build()
        .unwrap()
}

fn tools() -> [ToolRegistration; 3] {
    let search = ToolRegistration::named("shop.search")
        .json_object_arguments()
        .handler(products)
        .app_view("ui://shop/products")
        .build()
        .unwrap();
    let reserve = ToolRegistration::named("shop.reserve")
        .json_object_arguments()
        .handler(products)
        .app_visibility(AppVisibility::App)
        .build()
        .unwrap();
    let plain = ToolRegistration::named("shop.plain")
        .json_object_arguments()
        .handler(products)
        .build()
        .unwrap();
    [search, reserve, plain]
}

fn endpoint() -> tollgate::endpoint::EndpointBuilder {
    Endpoint::with_path(
        "/mcp",
        [V26, V1125, V0618, V0326],
        Implementation::new("shop", "1"),
    )
}

async fn server() -> SocketAddr {
    let [search, reserve, plain] = tools();
    let endpoint = endpoint()
        .add_tool(search)
        .add_tool(reserve)
        .add_tool(plain)
        .app_view(view())
        .build()
        .unwrap();
    start(McpService::new(endpoint)).await
}

/// A 2026-07-28 request declaring `capabilities`.
async fn modern(
    addr: SocketAddr,
    capabilities: &str,
    method: &str,
    name: Option<&str>,
    params: &str,
    who: &str,
) -> Response {
    let sep = if params.is_empty() { "" } else { "," };
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"{method}","params":{{{params}{sep}"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{capabilities}}}}}}}"#
    );
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
        ("X-User", who),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    post(addr, &headers, body.as_bytes()).await
}

/// A 2025 session on `revision` whose `initialize` declared `capabilities`.
async fn session(addr: SocketAddr, revision: ProtocolVersion, capabilities: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
        revision.as_str()
    );
    let resp = post(addr, &[], body.as_bytes()).await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    let result = resp.result();
    assert_eq!(
        result.get("protocolVersion").and_then(JsonValue::as_str),
        Some(revision.as_str())
    );
    resp.header("mcp-session-id").expect("a session").to_owned()
}

async fn legacy(
    addr: SocketAddr,
    revision: ProtocolVersion,
    session: &str,
    method: &str,
    params: &str,
) -> Response {
    let body = format!(r#"{{"jsonrpc":"2.0","id":4,"method":"{method}","params":{{{params}}}}}"#);
    let headers = [
        ("MCP-Protocol-Version", revision.as_str()),
        ("Mcp-Session-Id", session),
    ];
    post(addr, &headers, body.as_bytes()).await
}

fn text(value: &JsonValue) -> String {
    to_string(value, &OutputLimits::default()).unwrap()
}

/// Each listed tool's `_meta`, by name, as JSON text (`-` when it has none).
fn tool_metas(list: &Response) -> Vec<(String, String)> {
    assert_eq!(list.status, 200, "{}", list.text());
    let result = list.result();
    let tools = result.get("tools").and_then(JsonValue::as_array).unwrap();
    tools
        .iter()
        .map(|t| {
            let name = t
                .get("name")
                .and_then(JsonValue::as_str)
                .unwrap()
                .to_owned();
            let meta = t.get("_meta").map_or_else(|| "-".to_owned(), text);
            (name, meta)
        })
        .collect()
}

fn with_views() -> Vec<(String, String)> {
    vec![
        (
            "shop.search".into(),
            r#"{"ui":{"resourceUri":"ui://shop/products","visibility":["model","app"]}}"#.into(),
        ),
        (
            "shop.reserve".into(),
            r#"{"ui":{"visibility":["app"]}}"#.into(),
        ),
        ("shop.plain".into(), "-".into()),
    ]
}

fn without_views() -> Vec<(String, String)> {
    ["shop.search", "shop.reserve", "shop.plain"]
        .into_iter()
        .map(|n| (n.to_owned(), "-".to_owned()))
        .collect()
}

/// The view's read result: one contents, the HTML as `text/html;profile=mcp-app` with the
/// view's `_meta`.
fn assert_view_read(read: &Response) {
    assert_eq!(read.status, 200, "{}", read.text());
    let result = read.result();
    let contents = result
        .get("contents")
        .and_then(JsonValue::as_array)
        .unwrap();
    assert_eq!(contents.len(), 1);
    let c = &contents[0];
    assert_eq!(
        c.get("uri").and_then(JsonValue::as_str),
        Some("ui://shop/products")
    );
    assert_eq!(
        c.get("mimeType").and_then(JsonValue::as_str),
        Some("text/html;profile=mcp-app")
    );
    assert_eq!(c.get("text").and_then(JsonValue::as_str), Some(HTML));
    assert_eq!(text(c.get("_meta").unwrap()), VIEW_META);
}

/// The view's `resources/list` entry.
fn assert_view_listed(list: &Response) {
    assert_eq!(list.status, 200, "{}", list.text());
    let result = list.result();
    let resources = result
        .get("resources")
        .and_then(JsonValue::as_array)
        .unwrap();
    assert_eq!(resources.len(), 1, "{}", list.text());
    let r = &resources[0];
    assert_eq!(
        r.get("uri").and_then(JsonValue::as_str),
        Some("ui://shop/products")
    );
    assert_eq!(r.get("name").and_then(JsonValue::as_str), Some("products"));
    assert_eq!(
        r.get("mimeType").and_then(JsonValue::as_str),
        Some("text/html;profile=mcp-app")
    );
    assert_eq!(text(r.get("_meta").unwrap()), VIEW_META);
}

fn declares_extension(result: &JsonValue) -> bool {
    result
        .get("capabilities")
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get("io.modelcontextprotocol/ui"))
        .is_some_and(|s| s.as_object().is_some_and(JsonObject::is_empty))
}

#[tokio::test]
async fn modern_requests_carry_view_metadata_when_each_declares_the_extension() {
    let addr = server().await;
    let list = |caps| modern(addr, caps, "tools/list", None, "", "bob");
    assert_eq!(tool_metas(&list(DECLARED).await), with_views());
    for caps in ["{}", OTHER_TYPES] {
        assert_eq!(tool_metas(&list(caps).await), without_views(), "{caps}");
    }
    // The declaration is per request: the next one without it gets the plain list again.
    assert_eq!(tool_metas(&list(DECLARED).await), with_views());
    assert_eq!(tool_metas(&list("{}").await), without_views());
    for caps in [DECLARED, "{}"] {
        let read = modern(
            addr,
            caps,
            "resources/read",
            Some("ui://shop/products"),
            r#""uri":"ui://shop/products""#,
            "bob",
        )
        .await;
        assert_view_read(&read);
        assert_eq!(
            read.result().get("resultType").and_then(JsonValue::as_str),
            Some("complete")
        );
        assert_view_listed(&modern(addr, caps, "resources/list", None, "", "bob").await);
    }
    let discover = modern(addr, "{}", "server/discover", None, "", "bob").await;
    assert!(
        declares_extension(&discover.result()),
        "{}",
        discover.text()
    );
    // A tool with a view still answers its content to every client.
    let call = modern(
        addr,
        "{}",
        "tools/call",
        Some("shop.search"),
        r#""name":"shop.search","arguments":{}"#,
        "bob",
    )
    .await;
    assert_eq!(support::first_text(&call.result()), "2 products");
}

#[tokio::test]
async fn sessions_carry_view_metadata_when_initialize_declared_the_extension() {
    let addr = server().await;
    for revision in [V1125, V0618] {
        let declared = session(addr, revision, DECLARED).await;
        let plain = session(addr, revision, "{}").await;
        let other = session(addr, revision, OTHER_TYPES).await;
        let list = |s| legacy(addr, revision, s, "tools/list", "");
        assert_eq!(
            tool_metas(&list(&declared).await),
            with_views(),
            "{revision:?}"
        );
        assert_eq!(
            tool_metas(&list(&plain).await),
            without_views(),
            "{revision:?}"
        );
        assert_eq!(
            tool_metas(&list(&other).await),
            without_views(),
            "{revision:?}"
        );
        for s in [&declared, &plain] {
            let read = legacy(
                addr,
                revision,
                s,
                "resources/read",
                r#""uri":"ui://shop/products""#,
            )
            .await;
            assert_view_read(&read);
            assert!(read.result().get("resultType").is_none());
            assert_view_listed(&legacy(addr, revision, s, "resources/list", "").await);
        }
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
            revision.as_str()
        );
        let init = post(addr, &[], body.as_bytes()).await;
        assert!(declares_extension(&init.result()), "{}", init.text());
    }
}

#[tokio::test]
async fn a_revision_without_meta_has_no_view() {
    let addr = server().await;
    let s = session(addr, V0326, DECLARED).await;
    assert_eq!(
        tool_metas(&legacy(addr, V0326, &s, "tools/list", "").await),
        without_views()
    );
    // The view is the endpoint's only resource: 2025-03-26 offers no resources at all.
    let read = legacy(
        addr,
        V0326,
        &s,
        "resources/read",
        r#""uri":"ui://shop/products""#,
    )
    .await;
    assert_eq!(read.code(), -32601, "{}", read.text());
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let init = post(addr, &[], body.as_bytes()).await;
    assert!(!declares_extension(&init.result()), "{}", init.text());
}

fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
    let who = request.header("x-user").unwrap_or("anonymous").to_owned();
    AdmissionDecision::admit(AdmissionIdentity::principal(who))
}

/// `bob` sees no view by itself and not `shop.plain`; `eve` sees neither `shop.search` nor any
/// view.
fn sees(who: &AdmissionIdentity, item: Registered<'_>) -> bool {
    let name = who.principal_name().unwrap_or_default();
    match item {
        Registered::AppView(_) => false,
        Registered::Tool(t) if name == "bob" => t.name() != "shop.plain",
        Registered::Tool(t) if name == "eve" => t.name() != "shop.search",
        _ => true,
    }
}

#[tokio::test]
async fn a_visible_tool_keeps_its_view_readable_in_a_per_principal_view() {
    let [search, reserve, plain] = tools();
    let endpoint = endpoint()
        .add_tool(search)
        .add_tool(reserve)
        .add_tool(plain)
        .app_view(view())
        .admission(admit)
        .view(sees)
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let read = |who| {
        modern(
            addr,
            DECLARED,
            "resources/read",
            Some("ui://shop/products"),
            r#""uri":"ui://shop/products""#,
            who,
        )
    };
    assert_view_read(&read("bob").await);
    let names: Vec<String> =
        tool_metas(&modern(addr, DECLARED, "tools/list", None, "", "bob").await)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
    assert_eq!(names, ["shop.search", "shop.reserve"]);
    let hidden = read("eve").await;
    assert_eq!(hidden.code(), -32602, "{}", hidden.text());
    let list = modern(addr, DECLARED, "resources/list", None, "", "eve").await;
    assert!(!list.text().contains("ui://"), "{}", list.text());
}

#[tokio::test]
async fn a_live_view_arrives_and_leaves_with_its_tool() {
    let [search, _, plain] = tools();
    let built = endpoint().add_tool(plain).live_catalogs().build().unwrap();
    let catalogs = built.catalogs().unwrap();
    let addr = start(McpService::new(built)).await;
    let read = || {
        modern(
            addr,
            DECLARED,
            "resources/read",
            Some("ui://shop/products"),
            r#""uri":"ui://shop/products""#,
            "bob",
        )
    };
    assert_eq!(read().await.code(), -32602);
    catalogs
        .apply(CatalogChange::new().add_tool(search).add_app_view(view()))
        .unwrap();
    assert_view_read(&read().await);
    let metas = tool_metas(&modern(addr, DECLARED, "tools/list", None, "", "bob").await);
    assert_eq!(metas[1].1, with_views()[0].1);
    catalogs
        .apply(
            CatalogChange::new()
                .remove_tool("shop.search")
                .remove_app_view("ui://shop/products"),
        )
        .unwrap();
    assert_eq!(read().await.code(), -32602);
}
