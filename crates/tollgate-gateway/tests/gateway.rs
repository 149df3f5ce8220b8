//! The gateway in front of a hostile upstream: a small hand-written 2025-06-18 server on
//! loopback (raw HTTP/1.1, JSON answers) whose catalog holds a good tool, a tool outside
//! Profile 1, a tool whose result breaks its own output schema, one whose content breaks the
//! content rules and one that never answers. The gateway's endpoint is reached through the
//! Tollgate client in process. Checked: what is imported and what is refused (with its JSON
//! Pointer), that a call with bad arguments never reaches the upstream, that bad answers become
//! the fixed internal error, that a hang is bounded, and that two upstreams serving one name
//! without a prefix refuse to start.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

#[path = "gateway/asks.rs"]
mod asks;
#[path = "gateway/credentials.rs"]
mod credentials;
#[path = "gateway/listen.rs"]
mod listen;
#[path = "gateway/prompt_asks.rs"]
mod prompt_asks;
#[path = "gateway/relay.rs"]
mod relay;
#[path = "gateway/skills.rs"]
mod skills;
#[path = "gateway/tasks.rs"]
mod tasks;
#[path = "gateway/upstream.rs"]
mod upstream;
#[path = "gateway/uris.rs"]
mod uris;

use std::sync::atomic::Ordering;

use tokio::net::TcpListener;
use tollgate::ProtocolVersion;
use tollgate::json::{JsonObject, JsonValue};
use tollgate_client::Client;
use tollgate_gateway::{Gateway, GatewayConfig, GatewayErrorKind, RefusalReason};
use upstream::{
    ONE_TOOL, TOOLS, Upstream, V26, config, configured, followed_client, gateway_client, object,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_upstream_is_contained() {
    let upstream = Upstream::default();
    let addr = upstream.start().await;
    let revisions = [
        V26,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
    ];
    let gateway = Gateway::connect(&config(&[("hostile", addr, Some("up"))]), &revisions)
        .await
        .unwrap();

    // Imported: every tool but the one with a remote reference, which neither Profile 1 nor the
    // complete validator takes; it is reported with the validator's place.
    let names: Vec<_> = gateway
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(
        names,
        ["up_echo", "up_patterned", "up_liar", "up_broken", "up_slow"]
    );
    let refusals = gateway.refusals();
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert_eq!(refusals[0].name(), "remote");
    assert_eq!(refusals[0].reason(), RefusalReason::InputSchema);
    assert_eq!(refusals[0].pointer(), Some("/properties/a"));
    assert_eq!(refusals[0].keyword(), Some("$ref"));

    let client = gateway_client(&gateway).await;
    let listed = client.list_tools().await.unwrap();
    assert_eq!(listed.len(), 5);
    // A schema outside Profile 1 is published as the upstream wrote it.
    let patterned = listed
        .iter()
        .find(|t| t.get("name").and_then(JsonValue::as_str) == Some("up_patterned"))
        .unwrap();
    let minimum = patterned
        .get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get("q"))
        .and_then(|q| q.get("minLength"));
    assert!(minimum.is_some(), "the published schema is the upstream's");

    // A good call is forwarded and its result relayed.
    let result = client
        .call_tool("up_echo", object(r#"{"text":"hi"}"#))
        .await
        .unwrap();
    let text = result
        .get("content")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .and_then(|b| b.get("text"))
        .and_then(JsonValue::as_str);
    assert_eq!(text, Some("hi"));
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 1);

    // Bad arguments never reach the upstream.
    let refused = client
        .call_tool("up_echo", object(r#"{"text":5}"#))
        .await
        .unwrap();
    assert_eq!(
        refused.get("isError").and_then(JsonValue::as_bool),
        Some(true)
    );
    assert_eq!(
        upstream.calls.load(Ordering::SeqCst),
        1,
        "the bad call was forwarded"
    );

    // The complete validator checks what Profile 1 leaves out, before forwarding.
    for bad in [r#"{"q":"ab"}"#, r#"{"q":"x"}"#, "{}"] {
        let refused = client.call_tool("up_patterned", object(bad)).await.unwrap();
        assert_eq!(
            refused.get("isError").and_then(JsonValue::as_bool),
            Some(true),
            "{bad}"
        );
    }
    assert_eq!(
        upstream.calls.load(Ordering::SeqCst),
        1,
        "a bad call was forwarded"
    );
    let good = client
        .call_tool("up_patterned", object(r#"{"q":"xy"}"#))
        .await
        .unwrap();
    assert_eq!(good.get("isError").and_then(JsonValue::as_bool), None);
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 2);

    // A result outside its own output schema, content that breaks the content rules and a
    // hang are each the fixed internal error.
    for tool in ["up_liar", "up_broken", "up_slow"] {
        let error = client.call_tool(tool, JsonObject::new()).await.unwrap_err();
        assert_eq!(error.code(), Some(-32603), "{tool}: {error}");
    }
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 5);
    client.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_upstreams_serving_one_name_without_a_prefix_refuse_to_start() {
    let one = Upstream::default().start().await;
    let two = Upstream::default().start().await;
    let clash = Gateway::connect(&config(&[("one", one, None), ("two", two, None)]), &[V26])
        .await
        .unwrap_err();
    assert_eq!(clash.kind(), GatewayErrorKind::NameClash);
    assert_eq!(clash.upstream(), Some("two"));
    // With a prefix each, both are served.
    let both = Gateway::connect(
        &config(&[("one", one, None), ("two", two, Some("b"))]),
        &[V26],
    )
    .await
    .unwrap();
    assert_eq!(both.tools().len(), 10);
    both.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profile1_only_leaves_out_what_profile_1_does_not_take_with_its_place() {
    let addr = Upstream::default().start().await;
    let config = configured("profile1_only = true\n", &[("hostile", addr, None)]);
    let gateway = Gateway::connect(&config, &[V26]).await.unwrap();
    let refused: Vec<_> = gateway
        .refusals()
        .iter()
        .map(|r| {
            (
                r.name().to_owned(),
                r.pointer().unwrap().to_owned(),
                r.keyword().map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(
        refused,
        [
            (
                "patterned".to_owned(),
                String::new(),
                Some("$schema".to_owned())
            ),
            (
                "remote".to_owned(),
                "/properties/a".to_owned(),
                Some("$ref".to_owned())
            ),
        ]
    );
    assert_eq!(gateway.tools().len(), 4);
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_cannot_be_reached_is_a_start_up_error_naming_it() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let error = Gateway::connect(&config(&[("gone", addr, None)]), &[V26])
        .await
        .unwrap_err();
    assert_eq!(error.kind(), GatewayErrorKind::Upstream);
    assert_eq!(error.upstream(), Some("gone"));
}

/// The gateway's names as its client lists them, once they differ from `before` (a bounded
/// wait: the re-list runs every second).
async fn listed_after_change(client: &Client, before: &[String]) -> Vec<String> {
    for _ in 0..100 {
        let names: Vec<String> = client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| {
                t.get("name")
                    .and_then(JsonValue::as_str)
                    .unwrap()
                    .to_owned()
            })
            .collect();
        if names != before {
            return names;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the gateway's catalog did not follow the upstream's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_catalog_change_is_followed_live() {
    let upstream = Upstream::default();
    *upstream.tools.lock().unwrap() = ONE_TOOL.to_owned();
    let addr = upstream.start().await;
    // Re-listed every second (the upstream cannot announce over plain JSON responses).
    let text = "[[upstream]]\nname = \"changing\"\nprefix = \"up\"\nrelist_ms = 1000\n";
    let config = GatewayConfig::from_toml(&format!("{text}url = \"http://{addr}/mcp\"\n")).unwrap();
    let revisions = [V26];
    let gateway = Gateway::connect(&config, &revisions).await.unwrap();
    let client = followed_client(&gateway, revisions).await;
    let one = vec!["up_echo".to_owned()];
    let listed: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| {
            t.get("name")
                .and_then(JsonValue::as_str)
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(listed, one);

    // Added upstream: served (the one outside both validators still left out).
    *upstream.tools.lock().unwrap() = TOOLS.to_owned();
    let grown = listed_after_change(&client, &one).await;
    assert_eq!(
        grown,
        ["up_echo", "up_patterned", "up_liar", "up_broken", "up_slow"]
    );
    let called = client
        .call_tool("up_patterned", object(r#"{"q":"xy"}"#))
        .await
        .unwrap();
    assert_eq!(called.get("isError").and_then(JsonValue::as_bool), None);

    // Removed upstream: gone, and its call answers as an unknown tool does.
    *upstream.tools.lock().unwrap() = ONE_TOOL.to_owned();
    let shrunk = listed_after_change(&client, &grown).await;
    assert_eq!(shrunk, one);
    let gone = client
        .call_tool("up_patterned", object(r#"{"q":"xy"}"#))
        .await
        .unwrap_err();
    let unknown = client
        .call_tool("never_served", object(r#"{"q":"xy"}"#))
        .await
        .unwrap_err();
    assert_eq!(gone.code(), unknown.code());
    assert!(gone.code().is_some());
    client.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_resources_and_templates_are_relayed_with_their_uris_mapped() {
    let addr = Upstream::default().start().await;
    let revisions = [
        V26,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
    ];
    let gateway = Gateway::connect(&config(&[("hostile", addr, Some("up"))]), &revisions)
        .await
        .unwrap();
    let prompts: Vec<_> = gateway
        .prompts()
        .iter()
        .map(|p| p.name().to_owned())
        .collect();
    assert_eq!(prompts, ["up_greet", "up_bad"]);
    let uris: Vec<_> = gateway
        .resources()
        .iter()
        .map(|r| r.uri().to_owned())
        .collect();
    assert_eq!(uris, ["up+file:///a.txt", "up+file:///bad.bin"]);
    assert_eq!(
        gateway.resource_templates()[0].uri_template(),
        "up+file:///items/{id}"
    );
    let client = gateway_client(&gateway).await;

    let greeting = client
        .get_prompt("up_greet", object(r#"{"who":"Ada"}"#))
        .await
        .unwrap();
    let text = greeting
        .get("messages")
        .and_then(|m| m.as_array())
        .and_then(|m| m.first())
        .and_then(|m| m.get("content"))
        .and_then(|c| c.get("text"))
        .and_then(JsonValue::as_str);
    assert_eq!(text, Some("Hello, Ada"));
    // A missing required argument is refused by the gateway (the endpoint's own check).
    assert!(
        client
            .get_prompt("up_greet", JsonObject::new())
            .await
            .is_err()
    );
    // A message the content rules refuse (role "system") is the fixed internal error.
    assert_eq!(
        client
            .get_prompt("up_bad", JsonObject::new())
            .await
            .unwrap_err()
            .code(),
        Some(-32603)
    );

    // Reads go to the upstream's URI and come back under the served one.
    let read = client.read_resource("up+file:///a.txt").await.unwrap();
    let first = read
        .get("contents")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .unwrap();
    assert_eq!(
        first.get("uri").and_then(JsonValue::as_str),
        Some("up+file:///a.txt")
    );
    assert_eq!(
        first.get("text").and_then(JsonValue::as_str),
        Some("read file:///a.txt")
    );
    let item = client.read_resource("up+file:///items/7").await.unwrap();
    let first = item
        .get("contents")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .unwrap();
    assert_eq!(
        first.get("text").and_then(JsonValue::as_str),
        Some("read file:///items/7")
    );
    assert_eq!(
        client
            .read_resource("up+file:///bad.bin")
            .await
            .unwrap_err()
            .code(),
        Some(-32603)
    );
    // The upstream's own URI is not served.
    assert!(client.read_resource("file:///a.txt").await.is_err());
    client.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_dies_answers_the_fixed_error_and_is_connected_again_when_back() {
    let upstream = Upstream::default();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = upstream.serve_on(listener);
    let revisions = [V26];
    let gateway = Gateway::connect(&config(&[("mortal", addr, Some("up"))]), &revisions)
        .await
        .unwrap();
    let client = followed_client(&gateway, revisions).await;
    let hi = object(r#"{"text":"hi"}"#);
    assert!(client.call_tool("up_echo", hi.clone()).await.is_ok());

    // Gone: the fixed internal error, at once (never a hang).
    served.stop();
    let down = client.call_tool("up_echo", hi.clone()).await.unwrap_err();
    assert_eq!(down.code(), Some(-32603));
    // A read through the prefix's fallback (a URI the upstream does not list) likewise.
    let unlisted = client.read_resource("up+file:///unlisted").await;
    assert_eq!(unlisted.unwrap_err().code(), Some(-32603));

    // Back on the same address, knowing none of the old sessions: the old client's session is
    // refused (404), so only connecting again (a new initialize) serves the call. A bounded
    // wait; each try is a real call.
    let listener = TcpListener::bind(addr).await.unwrap();
    let _served = upstream.serve_on(listener);
    let mut back = false;
    for _ in 0..100 {
        if client.call_tool("up_echo", hi.clone()).await.is_ok() {
            back = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(back, "the gateway did not connect to the upstream again");
    // The fallback follows the new connection: the unlisted URI reads again.
    let read = client.read_resource("up+file:///unlisted").await.unwrap();
    let text = read
        .get("contents")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .and_then(|c| c.get("text"))
        .and_then(JsonValue::as_str);
    assert_eq!(text, Some("read file:///unlisted"));
    client.close().await.unwrap();
    gateway.close().await;
}
