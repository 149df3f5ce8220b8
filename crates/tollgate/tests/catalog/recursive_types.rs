//! Recursive typed arguments and outputs over real HTTP: a tree type derives a Profile 1 schema
//! with `$defs`/`$ref`, binds and echoes a tree as deep as the JSON depth bound allows, and a
//! tree one level deeper is the fixed parse error, never a crash.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

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

/// A list through `Option<Box<_>>`.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Link {
    n: u32,
    next: Option<Box<Link>>,
}

/// A recursive enum with data: an expression.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
enum Expr {
    Num(i64),
    Neg(Box<Expr>),
    Add { left: Box<Expr>, right: Box<Expr> },
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct Formula {
    expr: Expr,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Length {
    levels: u32,
}

async fn echo_link(
    _: &RequestContext,
    args: ToolArguments<Link>,
    _: &InvocationFeatures,
) -> Result<Link, Infallible> {
    Ok(args.into_converted())
}

async fn echo_formula(
    _: &RequestContext,
    args: ToolArguments<Formula>,
    _: &InvocationFeatures,
) -> Result<Formula, Infallible> {
    Ok(args.into_converted())
}

/// Builds a list `levels` long: as deep an output as the handler likes.
async fn build_list(
    _: &RequestContext,
    args: ToolArguments<Length>,
    _: &InvocationFeatures,
) -> Result<Link, Infallible> {
    let mut link = Link { n: 0, next: None };
    for n in 1..args.converted().levels {
        link = Link {
            n,
            next: Some(Box::new(link)),
        };
    }
    Ok(link)
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
    let typed = |name: &str| ToolRegistration::with_name(name.to_owned(), [V]);
    let endpoint = Endpoint::with_path("/mcp", [V], Implementation::new("tree", "1"))
        .add_tool(tool)
        .add_tool(
            typed("link")
                .argument_and_output_types::<Link, Link>()
                .handler(echo_link)
                .structured_content_text_mirror(false)
                .build()
                .unwrap(),
        )
        .add_tool(
            typed("formula")
                .argument_and_output_types::<Formula, Formula>()
                .handler(echo_formula)
                .structured_content_text_mirror(false)
                .build()
                .unwrap(),
        )
        .add_tool(
            typed("build_list")
                .argument_and_output_types::<Length, Link>()
                .handler(build_list)
                .structured_content_text_mirror(false)
                .build()
                .unwrap(),
        )
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

/// `{"n":0,"next":{"n":1,"next":...null}}`, `levels` objects deep.
fn link_chain(levels: usize) -> String {
    let mut text = String::new();
    for i in 0..levels {
        text.push_str(&format!(r#"{{"n":{i},"next":"#));
    }
    text.push_str("null");
    text.push_str(&"}".repeat(levels));
    text
}

/// `{"Neg":{"Neg":...{"Num":1}}}` inside `{"expr":...}`, `levels` objects deep in all.
fn negations(levels: usize) -> String {
    let mut text = String::from(r#"{"expr":"#);
    for _ in 0..levels - 2 {
        text.push_str(r#"{"Neg":"#);
    }
    text.push_str(r#"{"Num":1}"#);
    text.push_str(&"}".repeat(levels - 1));
    text
}

#[tokio::test]
async fn optional_links_and_recursive_enums_bind_at_the_depth_bound() {
    let addr = server().await;
    // `Option<Box<_>>` (about three evaluation frames per level): 126 objects in the arguments
    // make the body 128 deep.
    let at = link_chain(126);
    assert_eq!(body_depth(&at), 128);
    let r = call(addr, "link", &at, &[]).await;
    assert_eq!(r.status, 200);
    assert!(!r.text().contains(r#""isError":true"#));
    assert!(r.text().contains(r#"{"n":125,"next":null}"#));
    let r = call(addr, "link", &link_chain(127), &[]).await;
    assert_eq!((r.status, r.code()), (400, -32700));
    // A recursive enum with data, at the bound and past it.
    let at = negations(126);
    assert_eq!(body_depth(&at), 128);
    let r = call(addr, "formula", &at, &[]).await;
    assert_eq!(r.status, 200);
    assert!(
        !r.text().contains(r#""isError":true"#),
        "{}",
        &r.text()[..200]
    );
    assert!(r.text().contains(r#"{"Num":1}"#));
    let r = call(addr, "formula", &negations(127), &[]).await;
    assert_eq!((r.status, r.code()), (400, -32700));
    let add = r#"{"expr":{"Add":{"left":{"Num":1},"right":{"Neg":{"Num":2}}}}}"#;
    let r = call(addr, "formula", add, &[]).await;
    assert!(
        r.text().contains(&format!(r#""structuredContent":{add}"#)),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn an_output_too_deep_to_write_is_the_fixed_internal_error() {
    let addr = server().await;
    let r = call(addr, "build_list", r#"{"levels":100}"#, &[]).await;
    assert_eq!(r.status, 200);
    assert!(r.text().contains(r#""n":99"#));
    // (Far deeper lists would overflow the stack in their own recursive `Drop`, the
    // application's type, not in Tollgate: the conversion stops at its nesting bound.)
    for levels in [513, 600, 10_000] {
        let r = call(
            addr,
            "build_list",
            &format!(r#"{{"levels":{levels}}}"#),
            &[],
        )
        .await;
        assert_eq!((r.status, r.code()), (200, -32603), "{levels}");
    }
}
