//! Recursive typed arguments and outputs over real HTTP: a tree type derives a Profile 1 schema
//! with `$defs`/`$ref`, binds and echoes a tree as deep as the JSON depth bound allows, and a
//! tree one level deeper is the fixed parse error, never a crash.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

mod support;

use std::collections::BTreeMap;
use std::convert::Infallible;

use support::{call, start};
use tollgate::json::JsonValue;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
};

const V: ProtocolVersion = ProtocolVersion::V2026_07_28;

/// An ordinary tree: recursion through `Vec` (and an optional map of named subtrees).
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Node {
    name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    children: Vec<Node>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    named: Option<BTreeMap<String, Node>>,
}

async fn echo(
    _: &RequestContext,
    args: ToolArguments<Node>,
    _: &InvocationFeatures,
) -> Result<Node, Infallible> {
    Ok(args.into_converted())
}

async fn server() -> std::net::SocketAddr {
    let tool = ToolRegistration::with_name("tree", [V])
        .argument_and_output_types::<Node, Node>()
        .handler(echo)
        .structured_content_text_mirror(false)
        .build()
        .unwrap();
    let schema = tollgate::json::to_string(tool.input_schema(), &Default::default()).unwrap();
    assert!(schema.contains(r##""$ref":"#""##), "{schema}");
    let endpoint = Endpoint::with_path("/mcp", [V], Implementation::new("tree", "1"))
        .add_tool(tool)
        .build()
        .unwrap();
    start(McpService::new(endpoint)).await
}

/// A chain of `levels` nodes; the last one has an empty `children` array when `empty_leaf`.
fn chain(levels: usize, empty_leaf: bool) -> String {
    let mut text = String::new();
    for i in 0..levels {
        text.push_str(&format!(r#"{{"name":"n{i}","children":["#));
    }
    text.truncate(text.len() - r#","children":["#.len());
    if empty_leaf {
        text.push_str(r#","children":[]"#);
    }
    text.push('}');
    text.push_str(&"]}".repeat(levels - 1));
    text
}

/// The nesting depth of a JSON text (no brackets inside its strings).
fn depth(text: &str) -> usize {
    let (mut now, mut max) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'{' | b'[' => {
                now += 1;
                max = max.max(now);
            }
            b'}' | b']' => now -= 1,
            _ => {}
        }
    }
    max
}

/// The whole request body `support::call` sends for `arguments`.
fn body_depth(arguments: &str) -> usize {
    // {"jsonrpc":..,"params":{"name":..,"arguments":ARGS,"_meta":{..}}}: arguments at depth 3.
    depth(arguments) + 2
}

#[tokio::test]
async fn a_tree_as_deep_as_the_bound_round_trips_and_one_level_more_is_refused() {
    let addr = server().await;
    let small =
        r#"{"name":"root","children":[{"name":"a"},{"name":"b","named":{"x":{"name":"c"}}}]}"#;
    let r = call(addr, "tree", small, &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.text()
            .contains(&format!(r#""structuredContent":{small}"#)),
        "{}",
        r.text()
    );
    // At the JSON depth bound (128): bound, validated and echoed.
    let at = chain(63, true);
    assert_eq!(body_depth(&at), 128);
    let r = call(addr, "tree", &at, &[]).await;
    assert_eq!(r.status, 200, "{}", &r.text()[..r.text().len().min(400)]);
    // (An empty `children` is not written back.)
    assert!(
        r.text().contains(r#"{"name":"n62"}"#),
        "the deepest node came back"
    );
    assert!(!r.text().contains(r#""isError":true"#), "{}", r.text());
    // One past it: the fixed parse error before anything is bound.
    let past = chain(64, false);
    assert_eq!(body_depth(&past), 129);
    let r = call(addr, "tree", &past, &[]).await;
    assert_eq!((r.status, r.code()), (400, -32700));
    // A node that breaks the type deep inside is the ordinary invalid-arguments result.
    let bad = chain(40, false).replacen(r#""name":"n30""#, r#""name":30"#, 1);
    let r = call(addr, "tree", &bad, &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.result().get("isError"), Some(&JsonValue::Bool(true)));
}
