//! Per-principal views over real HTTP, on every revision: an unseen tool, prompt and resource
//! absent from the lists and answering byte for byte as unknown names do, the caller who sees
//! everything served the catalog rendered at build (the same bytes as without views), one
//! rendering shared by principals with the same view, the cache of views at its bound and one
//! past it, cursors bound to their view, `cacheScope: "private"`, a public cache policy refused
//! at build, and a listener not told of a change outside its view (also a 2025 session adopted
//! from a shared session store).

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

use support::{Open, Response, post, post_request, start};
use tollgate::content::{CachePolicy, CacheScope, ResourceContents, TextContent};
use tollgate::endpoint::{
    EndpointBuilder, LIST_CHANGED_WINDOW, MAX_VIEWS_CACHED, MemorySessionStore, Registered,
};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest};
use tollgate::prompt::{
    Completion, CompletionRequest, PromptArgument, PromptArguments, PromptMessage,
    PromptRegistration, PromptResult,
};
use tollgate::resource::{ResourceOutput, ResourceRegistration, ResourceRequest};
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext, ToolArguments, ToolRegistration,
    tool::{CompleteResult, OperationResult},
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const ALL: [ProtocolVersion; 3] = [V26, V1125, V0618];

/// `x-user` names the principal, `x-scopes` (comma-separated) its scopes.
fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
    let who = request.header("x-user").unwrap_or("anonymous").to_owned();
    let scopes = request.header("x-scopes").unwrap_or_default();
    let scopes: Vec<String> = scopes
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    AdmissionDecision::admit(AdmissionIdentity::principal(who).with_scopes(scopes))
}

/// Names containing `admin` need the `admin` scope, names starting `ops.` the `ops` scope,
/// names starting `docs.` the `docs` scope.
fn view(who: &AdmissionIdentity, item: Registered<'_>) -> bool {
    let key = item.key();
    (!key.contains("admin") || who.has_scope("admin"))
        && (!key.starts_with("ops.") || who.has_scope("ops"))
        && (!key.starts_with("docs.") || who.has_scope("docs"))
}

async fn ran(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("ran").into())
}

async fn greet(
    _: &RequestContext,
    _: PromptArguments,
    _: &InvocationFeatures,
) -> Result<PromptResult, std::fmt::Error> {
    Ok(PromptResult::with_message(PromptMessage::user(
        TextContent::new("hi"),
    )))
}

async fn complete(_: &RequestContext, _: CompletionRequest) -> Result<Completion, std::fmt::Error> {
    Ok(Completion::from_values(["ada".to_owned()]))
}

async fn read(
    _: &RequestContext,
    request: ResourceRequest,
    _: &InvocationFeatures,
) -> Result<ResourceOutput, tollgate::content::ContentError> {
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        request.uri(),
        None,
        "r",
    )?))
}

fn tool(name: &str) -> ToolRegistration {
    ToolRegistration::with_name(name, ALL)
        .json_object_arguments()
        .handler(ran)
        .build()
        .unwrap()
}

fn prompt(name: &str) -> PromptRegistration {
    PromptRegistration::with_name(name, ALL)
        .handler(greet)
        .add_argument(PromptArgument::optional("name"))
        .completion(complete)
        .build()
        .unwrap()
}

fn resource(uri: &str) -> ResourceRegistration {
    ResourceRegistration::with_uri(uri, "r", ALL)
        .handler(read)
        .build()
        .unwrap()
}

/// The catalog every test serves, admitted by `x-user`/`x-scopes`, without a view yet.
fn catalog(page_size: usize) -> EndpointBuilder {
    Endpoint::with_path("/mcp", ALL, Implementation::new("views", "1"))
        .admission(admit)
        .tools_page_size(page_size)
        .add_tool(tool("open"))
        .add_tool(tool("open2"))
        .add_tool(tool("admin.reset"))
        .add_tool(tool("ops.deploy"))
        .add_prompt(prompt("greet"))
        .add_prompt(prompt("admin.greet"))
        .add_prompt(prompt("docs.summary"))
        .add_resource(resource("test://open"))
        .add_resource(resource("test://admin"))
}

/// One request as `user` with `scopes`: on 2026-07-28 with `_meta`, `Mcp-Method` and (when
/// given) `Mcp-Name`; in a 2025 `session` when given.
#[allow(
    clippy::too_many_arguments,
    reason = "a test helper spelling out one request"
)]
async fn ask(
    addr: SocketAddr,
    revision: ProtocolVersion,
    session: Option<&str>,
    (user, scopes): (&str, &str),
    method: &str,
    name: Option<&str>,
    params: &str,
) -> Response {
    let mut headers = vec![
        ("MCP-Protocol-Version", revision.as_str()),
        ("X-User", user),
        ("X-Scopes", scopes),
    ];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    let mut params = params.to_owned();
    if revision == V26 {
        headers.push(("Mcp-Method", method));
        if let Some(name) = name {
            headers.push(("Mcp-Name", name));
        }
        let sep = if params.is_empty() { "" } else { "," };
        params = format!("{params}{sep}{}", support::META);
    }
    let body = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"{method}","params":{{{params}}}}}"#);
    post(addr, &headers, body.as_bytes()).await
}

const BOB: (&str, &str) = ("bob", "");
const ROOT: (&str, &str) = ("root", "admin,ops,docs");
/// Sees the tools bob sees, and a prompt more.
const ERIN: (&str, &str) = ("erin", "docs");

fn names(list: &Response, key: &str, field: &str) -> Vec<String> {
    list.result()
        .get(key)
        .and_then(JsonValue::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|t| t.get(field).and_then(JsonValue::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Every page of `tools/list` as `who` sees it, following the cursors.
async fn all_tools(addr: SocketAddr, revision: ProtocolVersion, who: (&str, &str)) -> Vec<String> {
    let mut page = ask(addr, revision, None, who, "tools/list", None, "").await;
    let mut all = names(&page, "tools", "name");
    while let Some(cursor) = page.result().get("nextCursor").and_then(JsonValue::as_str) {
        let params = format!(r#""cursor":"{cursor}""#);
        page = ask(addr, revision, None, who, "tools/list", None, &params).await;
        all.extend(names(&page, "tools", "name"));
    }
    all
}

#[tokio::test]
async fn an_unseen_registration_is_absent_and_answers_as_an_unknown_name_on_every_revision() {
    let endpoint = catalog(100)
        .legacy_sessions(None)
        .view(view)
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint.clone())).await;
    let plain = catalog(100).legacy_sessions(None).build().unwrap();
    let plain = start(McpService::new(plain)).await;
    for revision in ALL {
        let req = |who, method: &'static str, name: Option<&'static str>, params: &'static str| {
            ask(addr, revision, None, who, method, name, params)
        };
        assert_eq!(all_tools(addr, revision, BOB).await, ["open", "open2"]);
        let prompts = req(BOB, "prompts/list", None, "").await;
        assert_eq!(names(&prompts, "prompts", "name"), ["greet"], "{revision}");
        let resources = req(BOB, "resources/list", None, "").await;
        assert_eq!(names(&resources, "resources", "uri"), ["test://open"]);
        // Each unseen name answers exactly, byte for byte, as a name never registered.
        let pairs = [
            (
                ("tools/call", "admin.reset"),
                r#""name":"admin.reset","arguments":{}"#,
                ("nope", r#""name":"nope","arguments":{}"#),
            ),
            (
                ("prompts/get", "admin.greet"),
                r#""name":"admin.greet""#,
                ("nope", r#""name":"nope""#),
            ),
            (
                ("resources/read", "test://admin"),
                r#""uri":"test://admin""#,
                ("test://nope", r#""uri":"test://nope""#),
            ),
            (
                ("completion/complete", "admin.greet"),
                r#""ref":{"type":"ref/prompt","name":"admin.greet"},"argument":{"name":"name","value":"a"}"#,
                (
                    "nope",
                    r#""ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"name","value":"a"}"#,
                ),
            ),
        ];
        for ((method, name), params, (unknown, unknown_params)) in pairs {
            let name = (method != "completion/complete").then_some(name);
            let unknown = (method != "completion/complete").then_some(unknown);
            let unseen = req(BOB, method, name, params).await;
            let never = req(BOB, method, unknown, unknown_params).await;
            assert!(unseen.json().get("error").is_some(), "{revision} {method}");
            assert_eq!(unseen.status, never.status, "{revision} {method}");
            assert_eq!(unseen.body, never.body, "{revision} {method}");
            // Who sees it is answered.
            let seen = req(ROOT, method, name, params).await;
            assert!(
                seen.json().get("result").is_some(),
                "{revision} {method}: {}",
                seen.text()
            );
        }
        // Who sees everything is served the catalog rendered at build: the same bytes as an
        // endpoint without views.
        for method in ["tools/list", "prompts/list", "resources/list"] {
            let viewed = req(ROOT, method, None, "").await;
            let without = support::post(
                plain,
                &[
                    ("MCP-Protocol-Version", revision.as_str()),
                    ("Mcp-Method", method),
                ],
                viewed_body(revision, method).as_bytes(),
            )
            .await;
            assert_eq!(viewed.body, without.body, "{revision} {method}");
        }
        // Lists that vary by caller may not be cached across callers.
        if revision == V26 {
            for method in ["tools/list", "prompts/list", "resources/list"] {
                let list = req(BOB, method, None, "").await;
                assert!(
                    list.text().contains(r#""cacheScope":"private""#),
                    "{method}"
                );
            }
        }
    }
    // Only bob's view was rendered: root read the catalog rendered at build.
    assert_eq!(endpoint.rendered_views(), 1);
}

/// The body `ask` sends for a parameterless `method`.
fn viewed_body(revision: ProtocolVersion, method: &str) -> String {
    let params = if revision == V26 { support::META } else { "" };
    format!(r#"{{"jsonrpc":"2.0","id":5,"method":"{method}","params":{{{params}}}}}"#)
}

#[tokio::test]
async fn one_rendering_per_distinct_view_within_the_bound() {
    let endpoint = catalog(100).view(view).views_cached(2).build().unwrap();
    let addr = start(McpService::new(endpoint.clone())).await;
    let list = |who| async move {
        let list = ask(addr, V26, None, who, "tools/list", None, "").await;
        names(&list, "tools", "name")
    };
    assert_eq!(list(("alice", "")).await, ["open", "open2"]);
    assert_eq!(list(BOB).await, ["open", "open2"]);
    assert_eq!(
        endpoint.rendered_views(),
        1,
        "two principals with one view share one rendering"
    );
    assert_eq!(list(ROOT).await.len(), 4);
    assert_eq!(endpoint.rendered_views(), 1, "who sees all renders nothing");
    assert_eq!(
        list(("carol", "ops")).await,
        ["open", "open2", "ops.deploy"]
    );
    assert_eq!(endpoint.rendered_views(), 2, "at the bound");
    assert_eq!(
        list(("dave", "admin")).await,
        ["open", "open2", "admin.reset"]
    );
    assert_eq!(
        endpoint.rendered_views(),
        2,
        "one past the bound evicts one"
    );
    // An evicted view is rendered again, and answers as before.
    assert_eq!(list(BOB).await, ["open", "open2"]);
    assert_eq!(endpoint.rendered_views(), 2);
}

#[tokio::test]
async fn a_cursor_pages_only_through_its_own_view() {
    let endpoint = catalog(1).legacy_sessions(None).view(view).build().unwrap();
    let addr = start(McpService::new(endpoint)).await;
    for revision in ALL {
        assert_eq!(all_tools(addr, revision, BOB).await, ["open", "open2"]);
        assert_eq!(all_tools(addr, revision, ("carol", "ops")).await.len(), 3);
        let first = ask(addr, revision, None, BOB, "tools/list", None, "").await;
        let cursor = first
            .result()
            .get("nextCursor")
            .and_then(JsonValue::as_str)
            .unwrap()
            .to_owned();
        let params = format!(r#""cursor":"{cursor}""#);
        // Another view's cursor (of a page that exists there too, even of the very same tools
        // list) is refused.
        for other in [("carol", "ops"), ROOT, ERIN] {
            let page = ask(addr, revision, None, other, "tools/list", None, &params).await;
            assert_eq!(page.code(), -32602, "{revision}: {}", page.text());
            assert_eq!(page.message(), "Invalid cursor");
        }
        let own = ask(
            addr,
            revision,
            None,
            ("alice", ""),
            "tools/list",
            None,
            &params,
        )
        .await;
        assert_eq!(names(&own, "tools", "name"), ["open2"], "the same view");
    }
}

#[test]
fn a_public_cache_policy_with_views_and_a_cache_out_of_range_are_refused_at_build() {
    let public = CachePolicy::new(60_000, CacheScope::Public);
    let err = catalog(100)
        .cache_policy(public)
        .view(view)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidConfiguration);
    assert!(
        err.to_string().contains("cache policy must be private"),
        "{err}"
    );
    assert!(catalog(100).cache_policy(public).build().is_ok());
    let private = CachePolicy::new(60_000, CacheScope::Private);
    assert!(
        catalog(100)
            .cache_policy(private)
            .view(view)
            .build()
            .is_ok()
    );
    for (size, ok) in [
        (0, false),
        (1, true),
        (MAX_VIEWS_CACHED, true),
        (MAX_VIEWS_CACHED + 1, false),
    ] {
        let built = catalog(100).view(view).views_cached(size).build();
        assert_eq!(built.is_ok(), ok, "{size}");
        if let Err(err) = built {
            assert_eq!(err.kind(), BuildErrorKind::InvalidConfiguration);
        }
    }
}

async fn session_for(addr: SocketAddr, revision: ProtocolVersion, who: (&str, &str)) -> String {
    let params = format!(
        r#""protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}"#,
        revision.as_str()
    );
    let resp = ask(addr, revision, None, who, "initialize", None, &params).await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.header("mcp-session-id").expect("a session").to_owned()
}

async fn standalone(
    addr: SocketAddr,
    revision: ProtocolVersion,
    session: &str,
    (user, scopes): (&str, &str),
) -> Open {
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: {}\r\nX-User: {user}\r\nX-Scopes: {scopes}\r\n\r\n",
        addr.port(),
        revision.as_str()
    );
    let stream = Open::send(addr, request).await;
    assert_eq!(stream.status, 200);
    stream
}

async fn listen(addr: SocketAddr, (user, scopes): (&str, &str)) -> Open {
    let body = support::request(
        "41",
        "subscriptions/listen",
        r#""notifications":{"toolsListChanged":true}"#,
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "subscriptions/listen"),
        ("X-User", user),
        ("X-Scopes", scopes),
    ];
    let mut stream = Open::send(addr, post_request(addr, &headers, &body)).await;
    assert!(stream.until("acknowledged").await);
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_is_not_told_of_a_change_outside_its_view() {
    let endpoint = catalog(100).view(view).live_catalogs().build().unwrap();
    let catalogs = endpoint.catalogs().unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let mut bob = Vec::new();
    for revision in [V1125, V0618] {
        let session = session_for(addr, revision, BOB).await;
        bob.push(standalone(addr, revision, &session, BOB).await);
    }
    bob.push(listen(addr, BOB).await);
    let mut root = listen(addr, ROOT).await;
    // A change only root can see: root hears of it, bob's streams do not.
    catalogs.add_tool(tool("admin.audit")).unwrap();
    assert!(root.until("notifications/tools/list_changed").await);
    for stream in &mut bob {
        stream.read_for(LIST_CHANGED_WINDOW * 4).await;
        assert!(!stream.text().contains("list_changed"), "{}", stream.text());
    }
    // A change bob sees reaches every one of his streams.
    catalogs.add_tool(tool("open3")).unwrap();
    for stream in &mut bob {
        assert!(
            stream.until("notifications/tools/list_changed").await,
            "{}",
            stream.text()
        );
    }
    assert!(
        all_tools(addr, V26, BOB)
            .await
            .contains(&"open3".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_adopted_from_a_shared_store_is_told_only_of_its_views_changes() {
    let shared = Arc::new(MemorySessionStore::new());
    let build = || {
        catalog(100)
            .view(view)
            .session_store(Arc::clone(&shared))
            .live_catalogs()
            .build()
            .unwrap()
    };
    let (one, two) = (build(), build());
    let catalogs = two.catalogs().unwrap();
    let first = start(McpService::new(one)).await;
    let second = start(McpService::new(two)).await;
    let session = session_for(first, V1125, BOB).await;
    // Its first request on the second instance adopts it there.
    let list = ask(second, V1125, Some(&session), BOB, "tools/list", None, "").await;
    assert_eq!(
        names(&list, "tools", "name"),
        ["open", "open2"],
        "{}",
        list.text()
    );
    let mut stream = standalone(second, V1125, &session, BOB).await;
    let mut root = listen(second, ROOT).await;
    // Outside bob's view: announced (root hears it), but not on bob's stream.
    catalogs.add_tool(tool("admin.audit")).unwrap();
    assert!(root.until("notifications/tools/list_changed").await);
    catalogs.add_tool(tool("open3")).unwrap();
    assert!(stream.until("notifications/tools/list_changed").await);
    stream.read_for(LIST_CHANGED_WINDOW * 4).await;
    let heard = stream
        .text()
        .matches("notifications/tools/list_changed")
        .count();
    assert_eq!(heard, 1, "{}", stream.text());
}
