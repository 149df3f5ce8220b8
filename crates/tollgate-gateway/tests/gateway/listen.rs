//! An upstream's list changes heard without re-listing: on a 2025 HTTP session's stream, and on
//! the `subscriptions/listen` the gateway keeps open on a 2026-07-28 upstream; its tools, prompts
//! and resources followed live.

use std::time::Duration;

use tollgate::endpoint::{CatalogChange, Catalogs};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::prompt::{PromptArguments, PromptMessage, PromptRegistration, PromptResult};
use tollgate::resource::{ResourceOutput, ResourceRegistration, ResourceRequest};
use tollgate::tool::{CompleteResult, OperationResult};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext, ToolArguments,
    ToolRegistration,
};
use tollgate_client::Client;
use tollgate_gateway::{Gateway, GatewayConfig};

use crate::upstream::{V26, followed_client};

async fn done(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, std::convert::Infallible> {
    Ok(CompleteResult::from_tool_structured_content(JsonObject::new()).into())
}

fn tool(name: &str, revision: ProtocolVersion) -> ToolRegistration {
    ToolRegistration::with_name(name, [revision])
        .json_object_arguments()
        .handler(done)
        .build()
        .unwrap()
}

/// A Tollgate upstream on `revision` alone with live catalogs and the tool `first`.
async fn live_upstream(revision: ProtocolVersion) -> (std::net::SocketAddr, Catalogs) {
    let endpoint = Endpoint::with_path("/mcp", [revision], Implementation::new("live", "1"))
        .live_catalogs()
        .add_tool(tool("first", revision))
        .build()
        .unwrap();
    let catalogs = endpoint.catalogs().unwrap();
    let addr = crate::asks::serve(endpoint).await;
    (addr, catalogs)
}

async fn names(client: &Client) -> Vec<String> {
    client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .filter_map(|t| t.get("name").and_then(JsonValue::as_str).map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_s_list_change_is_heard_on_its_stream_or_listen_without_relisting() {
    for revision in [V26, ProtocolVersion::V2025_11_25] {
        let (addr, catalogs) = live_upstream(revision).await;
        // No relist_ms: only the upstream's announcement can change the gateway's catalog.
        let text = format!(
            "[[upstream]]\nname = \"live\"\nprefix = \"up\"\nurl = \"http://{addr}/mcp\"\n"
        );
        let gateway = Gateway::connect(&GatewayConfig::from_toml(&text).unwrap(), &[V26])
            .await
            .unwrap();
        let client = followed_client(&gateway, [V26]).await;
        assert_eq!(names(&client).await, ["up_first"], "{revision:?}");
        // The listen (or the session's stream) is opened in the background: the change is made
        // until the gateway hears one, a bounded number of times.
        let mut heard = false;
        for round in 0..100 {
            if round % 10 == 0 {
                let _ = catalogs.add_tool(tool(&format!("added{round}"), revision));
            }
            if names(&client).await.len() > 1 {
                heard = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(heard, "{revision:?}: the upstream's change was not heard");
        client.close().await.unwrap();
        gateway.close().await;
    }
}

async fn greet(
    _: &RequestContext,
    _: PromptArguments,
    _: &InvocationFeatures,
) -> Result<PromptResult, std::convert::Infallible> {
    let text = tollgate::content::TextContent::new("hello");
    Ok(PromptResult::with_message(PromptMessage::user(text)))
}

async fn read(
    _: &RequestContext,
    _: ResourceRequest,
    _: &InvocationFeatures,
) -> Result<ResourceOutput, std::convert::Infallible> {
    let contents =
        tollgate::content::ResourceContents::text("file:///note.txt", Some("text/plain"), "hello");
    Ok(ResourceOutput::with_contents(contents.unwrap()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_s_prompts_and_resources_are_followed_live() {
    let revision = V26;
    let (addr, catalogs) = live_upstream(revision).await;
    let text =
        format!("[[upstream]]\nname = \"live\"\nprefix = \"up\"\nurl = \"http://{addr}/mcp\"\n");
    let gateway = Gateway::connect(&GatewayConfig::from_toml(&text).unwrap(), &[V26])
        .await
        .unwrap();
    assert!(gateway.prompts().is_empty() && gateway.resources().is_empty());
    let client = followed_client(&gateway, [V26]).await;
    let prompt = PromptRegistration::with_name("greet", [revision])
        .handler(greet)
        .build()
        .unwrap();
    let resource = ResourceRegistration::with_uri("file:///note.txt", "note", [revision])
        .handler(read)
        .build()
        .unwrap();
    catalogs
        .apply(
            CatalogChange::new()
                .add_prompt(prompt)
                .add_resource(resource),
        )
        .unwrap();
    let mut followed = false;
    for _ in 0..100 {
        let prompts = client.list_prompts().await.unwrap_or_default();
        let resources = client.list_resources().await.unwrap_or_default();
        if !prompts.is_empty() && !resources.is_empty() {
            followed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        followed,
        "the upstream's prompt and resource were not followed"
    );
    let got = client
        .get_prompt("up_greet", JsonObject::new())
        .await
        .unwrap();
    assert!(got.get("messages").is_some());
    let read = client.read_resource("up+file:///note.txt").await.unwrap();
    assert!(read.get("contents").is_some());
    // Removed upstream: gone from the gateway too.
    catalogs
        .apply(CatalogChange::new().remove_prompt("greet"))
        .unwrap();
    let mut gone = false;
    for _ in 0..100 {
        if client.list_prompts().await.unwrap_or_default().is_empty() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the upstream's removed prompt is still served");
    client.close().await.unwrap();
    gateway.close().await;
}
