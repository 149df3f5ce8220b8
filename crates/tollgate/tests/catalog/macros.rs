//! `#[tool]`: the registration it generates, and calls through it over real HTTP.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;

use support::{call, first_text, start};
use tollgate::json::JsonValue;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    tool,
    tool::{CompleteResult, OperationResult},
};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

/// Adds two integers.
#[tool(read_only, idempotent)]
async fn add(
    #[arg(description = "The first addend")] a: i64,
    #[arg(name = "second")] b: i64,
) -> Result<Sum, Infallible> {
    Ok(Sum {
        sum: a.saturating_add(b),
    })
}

/// Greets someone in their tenant.
#[tool(name = "greet", title = "Greeting")]
async fn greet_person(
    context: &RequestContext,
    #[header("Tenant")] tenant: String,
    name: Option<String>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let cancelled = features.cancellation().is_cancelled();
    let who = name.unwrap_or_else(|| "stranger".into());
    Ok(CompleteResult::from_tool_text(format!(
        "{} says hello to {who} from {tenant} ({cancelled})",
        context.operation_name().unwrap_or("")
    ))
    .into())
}

#[tokio::test]
async fn generated_registrations_serve_calls() {
    let add = add_tool().unwrap();
    assert_eq!(add.name(), "add");
    let schema = add.input_schema();
    assert_eq!(
        schema
            .get("properties")
            .and_then(|p| p.get("a"))
            .and_then(|a| a.get("description"))
            .and_then(JsonValue::as_str),
        Some("The first addend")
    );
    assert!(
        schema
            .get("properties")
            .and_then(|p| p.get("second"))
            .is_some(),
        "renamed argument"
    );
    assert!(add.output_schema().is_some());

    let greet = greet_tool_or_panic();
    assert_eq!(greet.name(), "greet");
    let tenant = greet
        .input_schema()
        .get("properties")
        .and_then(|p| p.get("tenant"))
        .cloned()
        .unwrap();
    assert_eq!(
        tenant.get("x-mcp-header").and_then(JsonValue::as_str),
        Some("Tenant")
    );

    let v = [ProtocolVersion::V2026_07_28];
    let endpoint = Endpoint::with_path("/mcp", v, Implementation::new("m", "1"))
        .add_tool(add)
        .add_tool(greet)
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let result = call(addr, "add", r#"{"a":2,"second":40}"#, &[])
        .await
        .result();
    assert_eq!(
        result
            .get("structuredContent")
            .and_then(|s| s.get("sum"))
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64()),
        Some(42)
    );
    let resp = call(
        addr,
        "greet",
        r#"{"tenant":"acme","name":"Ada"}"#,
        &[("Mcp-Param-Tenant", "acme")],
    )
    .await;
    assert_eq!(
        first_text(&resp.result()),
        "greet says hello to Ada from acme (false)"
    );
    let resp = call(addr, "greet", r#"{"tenant":"acme"}"#, &[]).await;
    assert_eq!(
        (resp.status, resp.code()),
        (400, -32020),
        "the mirrored header is enforced"
    );

    let list = support::send(addr, "tools/list", "").await.result();
    let tools = list.get("tools").and_then(JsonValue::as_array).unwrap();
    let add = &tools.as_slice()[0];
    assert_eq!(
        add.get("description").and_then(JsonValue::as_str),
        Some("Adds two integers.")
    );
    assert_eq!(
        add.get("annotations").and_then(|a| a.get("readOnlyHint")),
        Some(&JsonValue::Bool(true))
    );
    assert_eq!(
        tools.as_slice()[1].get("title").and_then(JsonValue::as_str),
        Some("Greeting")
    );
}

fn greet_tool_or_panic() -> tollgate::ToolRegistration {
    greet_person_tool().unwrap()
}

/// A mirrored tool lands on 2026-07-28 alone by default (naming a 2025 revision for it is a
/// compile error: `tests/ui/header_on_old_revision.rs`); a plain one on every revision.
#[tool]
async fn legacy_mirror(#[header("Region")] region: String) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text(region).into())
}

#[test]
fn defaults_narrow_to_what_a_tool_can_be_represented_on() {
    let mirrored = legacy_mirror_tool().unwrap();
    assert_eq!(mirrored.revisions(), ProtocolVersion::V2026_07_28.into());
    let plain = add_tool().unwrap();
    assert_eq!(plain.revisions(), ProtocolVersion::ALL.into());
    assert_eq!(
        greet_person_tool().unwrap().revisions(),
        ProtocolVersion::V2026_07_28.into()
    );
    // Both are served by an endpoint serving 2026-07-28 and 2025-11-25, each where it can be.
    let revisions = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];
    let endpoint =
        tollgate::Endpoint::with_path("/mcp", revisions, tollgate::Implementation::new("m", "1"))
            .add_tool(mirrored)
            .add_tool(plain)
            .build();
    assert!(endpoint.is_ok());
    // An endpoint serving none of a default tool's revisions refuses it.
    let err = tollgate::Endpoint::with_path(
        "/mcp",
        [ProtocolVersion::V2025_11_25],
        tollgate::Implementation::new("m", "1"),
    )
    .add_tool(legacy_mirror_tool().unwrap())
    .build()
    .unwrap_err();
    assert_eq!(
        err.kind(),
        tollgate::BuildErrorKind::RevisionOutsideEndpoint
    );
}

/// Shared state without macros: a closure that clones an `Arc` into its future.
#[tokio::test]
async fn closures_carry_shared_state() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    let counter = Arc::new(AtomicU64::new(0));
    let state = Arc::clone(&counter);
    let tool = tollgate::ToolRegistration::with_name("count", [ProtocolVersion::V2026_07_28])
        .json_object_arguments()
        .handler(
            move |_: &RequestContext,
                  _: tollgate::ToolArguments<tollgate::json::JsonObject>,
                  _: &InvocationFeatures| {
                let state = Arc::clone(&state);
                async move {
                    let n = state.fetch_add(1, Ordering::SeqCst) + 1;
                    Ok::<_, Infallible>(OperationResult::from(CompleteResult::from_tool_text(
                        n.to_string(),
                    )))
                }
            },
        )
        .build()
        .unwrap();
    let endpoint = Endpoint::with_path(
        "/mcp",
        [ProtocolVersion::V2026_07_28],
        Implementation::new("s", "1"),
    )
    .add_tool(tool)
    .build()
    .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    assert_eq!(
        first_text(&call(addr, "count", "{}", &[]).await.result()),
        "1"
    );
    assert_eq!(
        first_text(&call(addr, "count", "{}", &[]).await.result()),
        "2"
    );
    assert_eq!(counter.load(Ordering::SeqCst), 2);
}

/// A value whose methods are tools: `#[tools]` on the impl, `#[tool]` on each method.
struct Shelf {
    items: Vec<&'static str>,
    visits: std::sync::atomic::AtomicU64,
}

#[tollgate::tools]
impl Shelf {
    /// Lists the shelf's items.
    #[tool(read_only)]
    async fn list_items(
        &self,
        #[arg(description = "Only items containing this")] filter: Option<String>,
    ) -> Result<Sum, Infallible> {
        self.visits
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let n = self
            .items
            .iter()
            .filter(|i| filter.as_deref().is_none_or(|f| i.contains(f)))
            .count();
        Ok(Sum { sum: n as i64 })
    }

    #[tool(name = "shelf.describe", revisions = [V2026_07_28, V2025_11_25])]
    async fn describe(
        &self,
        context: &RequestContext,
        index: usize,
    ) -> Result<OperationResult, Infallible> {
        let item = self.items.get(index).copied().unwrap_or("nothing");
        Ok(
            CompleteResult::from_tool_text(format!("{item} ({})", context.protocol_version()))
                .into(),
        )
    }

    fn not_a_tool(&self) -> usize {
        self.items.len()
    }
}

#[tokio::test]
async fn impl_blocks_become_tools_over_shared_state() {
    let shelf = std::sync::Arc::new(Shelf {
        items: vec!["teapot", "tea", "mug"],
        visits: 0.into(),
    });
    assert_eq!(shelf.not_a_tool(), 3);
    let tools = shelf.tools().unwrap();
    assert_eq!(
        tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
        ["list_items", "shelf.describe"]
    );
    let all = [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25];
    let mut endpoint = Endpoint::with_path("/mcp", all, Implementation::new("shelf", "1"));
    for tool in tools {
        endpoint = endpoint.add_tool(tool);
    }
    let addr = start(McpService::new(endpoint.build().unwrap())).await;
    let result = call(addr, "list_items", r#"{"filter":"tea"}"#, &[])
        .await
        .result();
    assert_eq!(
        result
            .get("structuredContent")
            .and_then(|s| s.get("sum"))
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64()),
        Some(2)
    );
    assert_eq!(
        first_text(
            &call(addr, "shelf.describe", r#"{"index":2}"#, &[])
                .await
                .result()
        ),
        "mug (2026-07-28)"
    );
    assert_eq!(
        first_text(
            &call(addr, "shelf.describe", r#"{"index":-1}"#, &[])
                .await
                .result()
        ),
        tollgate::tool::INVALID_ARGUMENTS_TEXT
    );
    assert_eq!(shelf.visits.load(std::sync::atomic::Ordering::SeqCst), 1);
}

/// Charged to a named limiter.
#[tool(rate_limiter = "expensive")]
async fn costly(n: i64) -> Result<Sum, Infallible> {
    Ok(Sum { sum: n })
}

#[test]
fn the_rate_limiter_option_names_the_endpoint_limiter() {
    let registration = costly_tool().unwrap();
    assert_eq!(registration.rate_limiter_name(), Some("expensive"));
    // An endpoint without that limiter refuses the tool.
    let err = Endpoint::with_path(
        "/mcp",
        [ProtocolVersion::V2026_07_28],
        Implementation::new("m", "1"),
    )
    .add_tool(costly_tool().unwrap())
    .build()
    .unwrap_err();
    assert_eq!(err.kind(), tollgate::BuildErrorKind::UnknownRateLimiter);
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Tally {
    count: u32,
}

/// Counts as a task whose result is a `Tally`.
#[tool(
    name = "tally",
    task_output = Tally,
    text_mirror = false,
    may_ask = [elicitation, roots(required)],
    request_state = framework,
    icons = ["https://example.com/tally.png"],
    rate_limiter = "slow",
    open_world
)]
async fn tally(count: u32) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_structured_content(
        tollgate::json::JsonObject::builder()
            .insert("count", count)
            .build(),
    )
    .into())
}

/// Keeps its own state.
#[tool(may_ask = [sampling], request_state = application)]
async fn own_state() -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("ok").into())
}

/// Shows products in a view.
#[tool(name = "shop.show", app_view = "ui://shop/products")]
async fn show() -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("3 products").into())
}

/// Called from the view only.
#[tool(name = "shop.reserve", app_visibility = app)]
async fn reserve_from_view() -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("reserved").into())
}

/// A view URI that is not `ui://`.
#[tool(app_view = "https://example.com/view")]
async fn bad_view() -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("never").into())
}

#[tokio::test]
async fn the_mcp_apps_options_reach_the_listing() {
    let show = show_tool().unwrap();
    assert_eq!(show.app_view(), Some("ui://shop/products"));
    assert_eq!(
        bad_view_tool().unwrap_err().kind(),
        tollgate::BuildErrorKind::InvalidAppView
    );
    let view = tollgate::AppView::html("ui://shop/products", "<p>")
        .build()
        .unwrap();
    let endpoint = Endpoint::with_path(
        "/mcp",
        [ProtocolVersion::V2026_07_28],
        Implementation::new("m", "1"),
    )
    .add_tool(show)
    .add_tool(reserve_from_view_tool().unwrap())
    .app_view(view)
    .build()
    .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}}}}"#;
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    let listed = support::post(addr, &headers, body.as_bytes()).await.text();
    assert!(
        listed.contains(
            r#""_meta":{"ui":{"resourceUri":"ui://shop/products","visibility":["model","app"]}}"#
        ),
        "{listed}"
    );
    assert!(
        listed.contains(r#""_meta":{"ui":{"visibility":["app"]}}"#),
        "{listed}"
    );
}

/// An icon that is not an absolute URI.
#[tool(icons = ["relative.png"])]
async fn bad_icon() -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("never").into())
}

#[test]
fn every_tool_option_reaches_the_registration() {
    use tollgate::tool::{
        InputRequestDeclaration as D, InputRequestKind as K, InputRequirement as Q,
        RequestStateMode, TaskSupport,
    };
    let t = tally_tool().unwrap();
    assert_eq!(t.task_support(), TaskSupport::Required);
    assert!(
        t.output_schema().is_some(),
        "the eventual output type is kept"
    );
    assert_eq!(
        t.input_request_declarations(),
        [
            D::new(K::Elicitation, Q::Conditional),
            D::new(K::Roots, Q::Required)
        ]
    );
    assert_eq!(t.request_state_mode(), RequestStateMode::FrameworkProtected);
    assert_eq!(t.rate_limiter_name(), Some("slow"));
    let o = own_state_tool().unwrap();
    assert_eq!(
        o.request_state_mode(),
        RequestStateMode::ApplicationProtected
    );
    assert_eq!(
        o.input_request_declarations(),
        [D::new(K::Sampling, Q::Conditional)]
    );
    assert_eq!(
        bad_icon_tool().unwrap_err().kind(),
        tollgate::BuildErrorKind::InvalidConfiguration
    );
}

/// A `tally` call from a client declaring `capabilities`.
async fn call_with(
    addr: std::net::SocketAddr,
    arguments: &str,
    capabilities: &str,
) -> support::Response {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"tally","arguments":{arguments},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{capabilities}}}}}}}"#
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "tally"),
    ];
    support::post(addr, &headers, body.as_bytes()).await
}

#[tokio::test]
async fn a_typed_task_tool_from_the_macro_checks_its_inline_output() {
    let endpoint = Endpoint::with_path(
        "/mcp",
        [ProtocolVersion::V2026_07_28],
        Implementation::new("m", "1"),
    )
    .task_store(tollgate::task::InMemoryTaskStore::default())
    .add_rate_limiter("slow", tollgate::policy::TokenBucket::with_capacity(100))
    .add_tool(tally_tool().unwrap())
    .build()
    .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let listed = support::send(addr, "tools/list", "").await.text();
    assert!(
        listed.contains(r#""icons":[{"src":"https://example.com/tally.png"}]"#),
        "{listed}"
    );
    // No text mirror; the structured content is checked against `Tally`.
    let caps = r#"{"extensions":{"io.modelcontextprotocol/tasks":{}},"roots":{}}"#;
    let r = call_with(addr, r#"{"count":3}"#, caps).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.text()
            .contains(r#""content":[],"structuredContent":{"count":3}"#),
        "{}",
        r.text()
    );
    // A client without the required roots capability is refused before the handler.
    let caps = r#"{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#;
    let r = call_with(addr, r#"{"count":3}"#, caps).await;
    assert_eq!((r.status, r.code()), (400, -32021));
}
