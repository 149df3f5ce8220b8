//! URIs inside an upstream's answers served as the gateway serves its resources: a prefixed
//! upstream's resource links and embedded resources (in tool results and prompt messages) get
//! `PREFIX+uri`, listed or not, so a caller reads them back through the gateway (an unlisted
//! one through the prefix's read fallback; one the upstream does not serve is not found); structured
//! content is left as the upstream wrote it; an upstream without a prefix passes them unchanged.
//! And a served template's variables completed by the upstream's template, its URI template
//! mapped back.

use std::convert::Infallible;

use tollgate::json::{JsonObject, JsonValue};
use tollgate::prompt::{
    Completion, CompletionRequest, PromptArguments, PromptOutcome, PromptRegistration, PromptResult,
};
use tollgate::resource::{
    ResourceFallback, ResourceOutcome, ResourceOutput, ResourceRegistration, ResourceRequest,
    ResourceTemplateRegistration,
};
use tollgate::tool::{CompleteResult, OperationResult};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext, ToolArguments,
    ToolRegistration,
};
use tollgate_gateway::Gateway;

use crate::upstream::{V26, config, gateway_client, object};

/// The content blocks both the tool and the prompt answer with.
const LINK: &str = r#"{"type":"resource_link","uri":"file:///readme","name":"readme"}"#;
const UNLISTED: &str = r#"{"type":"resource_link","uri":"file:///elsewhere","name":"elsewhere"}"#;
const EMBEDDED: &str = r#"{"type":"resource","resource":{"uri":"file:///readme","text":"hello"}}"#;

/// A Tollgate upstream: the resource `file:///readme` (and `file:///elsewhere`, read but not
/// listed); the tool `links` (a listed and an
/// unlisted link, an embedded resource, and structured content holding a URI); the prompt
/// `cite` (a link, then an embedded resource); the template `file:///notes/{folder}/{name}`,
/// completing `name` with what it was asked (the variable, the value, the folder chosen).
async fn linking_upstream() -> std::net::SocketAddr {
    let revisions = [V26, ProtocolVersion::V2025_11_25];
    let links = |_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures| async {
        let result = object(&format!(
            r#"{{"content":[{LINK},{UNLISTED},{EMBEDDED}],"structuredContent":{{"uri":"file:///readme"}}}}"#
        ));
        Ok::<OperationResult, Infallible>(CompleteResult::from_wire(&result).unwrap().into())
    };
    let tool = ToolRegistration::with_name("links", revisions)
        .json_object_arguments()
        .output_schema(
            &object(
                r#"{"type":"object","properties":{"uri":{"type":"string"}},"required":["uri"]}"#,
            )
            .into(),
        )
        .unwrap()
        .handler(links)
        .build()
        .unwrap();
    let cite = |_: &RequestContext, _: PromptArguments, _: &InvocationFeatures| async {
        let result = object(&format!(
            r#"{{"messages":[{{"role":"user","content":{LINK}}},{{"role":"assistant","content":{EMBEDDED}}}]}}"#
        ));
        Ok::<PromptOutcome, Infallible>(PromptResult::from_wire(&result).unwrap().into())
    };
    let prompt = PromptRegistration::with_name("cite", revisions)
        .handler(cite)
        .build()
        .unwrap();
    let read = |_: &RequestContext, request: ResourceRequest, _: &InvocationFeatures| {
        let uri = request.uri().to_owned();
        async move {
            let contents = JsonObject::builder()
                .insert("uri", uri.as_str())
                .insert("text", "hello")
                .build();
            let output = JsonObject::builder()
                .insert(
                    "contents",
                    tollgate::json::JsonArray::from(vec![contents.into()]),
                )
                .build();
            Ok::<ResourceOutcome, Infallible>(ResourceOutput::from_wire(&output).unwrap().into())
        }
    };
    let resource = ResourceRegistration::with_uri("file:///readme", "readme", revisions)
        .handler(read)
        .build()
        .unwrap();
    let complete = |_: &RequestContext, request: CompletionRequest| async move {
        let folder = request.context("folder").unwrap_or("-");
        let seen = format!("{}={}@{folder}", request.argument(), request.value());
        Ok::<_, Infallible>(Completion::from_values([seen]).with_more(Some(7)))
    };
    let notes = ResourceTemplateRegistration::with_uri_template(
        "file:///notes/{folder}/{name}",
        "notes",
        revisions,
    )
    .handler(read)
    .completion(complete)
    .build()
    .unwrap();
    let endpoint = Endpoint::with_path("/mcp", revisions, Implementation::new("links", "1"))
        .add_resource_template(notes)
        .add_tool(tool)
        .add_prompt(prompt)
        .add_resource(resource)
        // Read but never listed: the link the tool sends to `file:///elsewhere`.
        .add_resource_fallback(
            ResourceFallback::with_prefix("file:///elsewhere", "elsewhere", revisions)
                .handler(read)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    crate::asks::serve(endpoint).await
}

/// The URIs of `blocks` (a link's `uri`, an embedded resource's `resource.uri`), in order.
fn uris(blocks: &[&JsonValue]) -> Vec<String> {
    blocks
        .iter()
        .filter_map(|b| b.get("uri").or_else(|| b.get("resource")?.get("uri")))
        .filter_map(JsonValue::as_str)
        .map(str::to_owned)
        .collect()
}

fn content(result: &JsonValue) -> Vec<&JsonValue> {
    result
        .get("content")
        .and_then(JsonValue::as_array)
        .unwrap()
        .iter()
        .collect()
}

fn messages(prompt: &JsonValue) -> Vec<&JsonValue> {
    prompt
        .get("messages")
        .and_then(JsonValue::as_array)
        .unwrap()
        .iter()
        .filter_map(|m| m.get("content"))
        .collect()
}

/// An in-process client of a gateway serving 2026-07-28 and 2025-11-25, on `revision`.
async fn client_on(
    gateway: &Gateway,
    revision: tollgate_client::Revision,
) -> tollgate_client::Client {
    let endpoint = gateway
        .install(Endpoint::with_path(
            "/mcp",
            [V26, ProtocolVersion::V2025_11_25],
            Implementation::new("gateway", "1"),
        ))
        .build()
        .unwrap();
    tollgate_client::Client::builder()
        .revisions([revision])
        .connect_in_process(endpoint)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefixed_upstream_s_links_are_served_and_read_back_through_the_gateway() {
    let addr = linking_upstream().await;
    let gateway = Gateway::connect(
        &config(&[("links", addr, Some("up"))]),
        &[V26, ProtocolVersion::V2025_11_25],
    )
    .await
    .unwrap();
    // Each revision the in-process client speaks (the gateway's tool and prompt answers are
    // projected per revision; the mapping is the same).
    for revision in [
        tollgate_client::Revision::V2026_07_28,
        tollgate_client::Revision::V2025_11_25,
    ] {
        let client = client_on(&gateway, revision).await;
        let result = client
            .call_tool("up_links", JsonObject::new())
            .await
            .unwrap();
        assert_eq!(
            uris(&content(&result)),
            [
                "up+file:///readme",
                "up+file:///elsewhere",
                "up+file:///readme"
            ],
            "{revision:?}"
        );
        // Structured content is the upstream's, held to its output schema as written.
        assert_eq!(
            result
                .get("structuredContent")
                .and_then(|s| s.get("uri"))
                .and_then(JsonValue::as_str),
            Some("file:///readme")
        );
        let prompt = client
            .get_prompt("up_cite", JsonObject::new())
            .await
            .unwrap();
        assert_eq!(
            uris(&messages(&prompt)),
            ["up+file:///readme", "up+file:///readme"]
        );
        // The link reads back through the gateway, its URI served again.
        let read = client.read_resource("up+file:///readme").await.unwrap();
        let contents = read.get("contents").and_then(JsonValue::as_array).unwrap();
        assert_eq!(
            uris(&contents.iter().collect::<Vec<_>>()),
            ["up+file:///readme"]
        );
        // A URI the upstream sent but neither lists nor templates reads back through the
        // gateway's fallback for its prefix, its URI served again.
        let read = client.read_resource("up+file:///elsewhere").await.unwrap();
        let contents = read.get("contents").and_then(JsonValue::as_array).unwrap();
        assert_eq!(
            uris(&contents.iter().collect::<Vec<_>>()),
            ["up+file:///elsewhere"]
        );
        // One the upstream does not serve either is the revision's "Resource not found".
        let missing = client
            .read_resource("up+file:///nowhere")
            .await
            .unwrap_err();
        let code = match revision {
            tollgate_client::Revision::V2026_07_28 => -32602,
            _ => -32002,
        };
        assert_eq!(missing.code(), Some(code), "{revision:?}");
        client.close().await.unwrap();
    }
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_without_a_prefix_passes_its_uris_unchanged() {
    let addr = linking_upstream().await;
    let gateway = Gateway::connect(&config(&[("links", addr, None)]), &[V26])
        .await
        .unwrap();
    let client = gateway_client(&gateway).await;
    let result = client.call_tool("links", JsonObject::new()).await.unwrap();
    assert_eq!(
        uris(&content(&result)),
        ["file:///readme", "file:///elsewhere", "file:///readme"]
    );
    let prompt = client.get_prompt("cite", JsonObject::new()).await.unwrap();
    assert_eq!(
        uris(&messages(&prompt)),
        ["file:///readme", "file:///readme"]
    );
    // Without a prefix its URIs cannot be told from another upstream's: no fallback, so an
    // unlisted one is not found (a listed one still reads).
    assert!(client.read_resource("file:///readme").await.is_ok());
    let missing = client.read_resource("file:///elsewhere").await.unwrap_err();
    assert_eq!(missing.code(), Some(-32602));
    client.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_template_completes_through_the_upstream_s_template() {
    let addr = linking_upstream().await;
    let gateway = Gateway::connect(&config(&[("links", addr, Some("up"))]), &[V26])
        .await
        .unwrap();
    let client = gateway_client(&gateway).await;
    let reference = object(r#"{"type":"ref/resource","uri":"up+file:///notes/{folder}/{name}"}"#);
    let params = object(
        r#"{"ref":{"type":"ref/resource","uri":"up+file:///notes/{folder}/{name}"},
            "argument":{"name":"name","value":"re"},"context":{"arguments":{"folder":"work"}}}"#,
    );
    let answer = client
        .request("completion/complete", Some(params))
        .await
        .unwrap();
    let completion = answer.get("completion").unwrap();
    let values: Vec<&str> = completion
        .get("values")
        .and_then(JsonValue::as_array)
        .unwrap()
        .iter()
        .filter_map(JsonValue::as_str)
        .collect();
    // The upstream was asked about its own template: the variable, the value, the context.
    assert_eq!(values, ["name=re@work"]);
    assert_eq!(completion.get("hasMore"), Some(&JsonValue::Bool(true)));
    // The gateway's own checks run first: a name that is not one of the template's variables,
    // and the upstream's template under its own (unserved) URI, are refused.
    assert!(client.complete(reference, "colour", "x").await.is_err());
    let unserved = object(r#"{"type":"ref/resource","uri":"file:///notes/{folder}/{name}"}"#);
    assert!(client.complete(unserved, "name", "x").await.is_err());
    client.close().await.unwrap();
    gateway.close().await;
}

/// A Tollgate upstream on 2026-07-28 with one tool and no resources at all.
async fn tools_only_upstream() -> std::net::SocketAddr {
    let echo = |_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures| async {
        Ok::<OperationResult, Infallible>(CompleteResult::from_tool_text("ok").into())
    };
    let tool = ToolRegistration::with_name("echo", [V26])
        .json_object_arguments()
        .handler(echo)
        .build()
        .unwrap();
    let endpoint = Endpoint::with_path("/mcp", [V26], Implementation::new("tools", "1"))
        .add_tool(tool)
        .build()
        .unwrap();
    crate::asks::serve(endpoint).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefixed_upstream_without_resources_reads_as_not_found() {
    let addr = tools_only_upstream().await;
    let gateway = Gateway::connect(&config(&[("tools", addr, Some("up"))]), &[V26])
        .await
        .unwrap();
    let client = crate::upstream::followed_client(&gateway, [V26]).await;
    // Its read fallback makes the gateway declare resources; nothing is listed, and a URI under
    // its prefix is "Resource not found" (the upstream has no resources: -32601 there), never
    // the internal error.
    let capabilities = client.server().get("capabilities").unwrap();
    assert!(capabilities.get("resources").is_some(), "{capabilities:?}");
    assert!(client.list_resources().await.unwrap().is_empty());
    let missing = client.read_resource("up+test://marker").await.unwrap_err();
    assert_eq!(missing.code(), Some(-32602));
    assert_eq!(missing.message(), Some("Resource not found"));
    client.close().await.unwrap();
    gateway.close().await;
}
