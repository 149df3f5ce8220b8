//! The typed family, row by row: each Rust type's derived input schema, a valid call and an
//! invalid call over real HTTP; and every refused type with its registration error.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::convert::Infallible;

use serde::{Deserialize, Serialize};
use support::{call, first_text, start};
use tollgate::json::JsonValue;
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext, ToolArguments, ToolRegistration, tool::INVALID_ARGUMENTS_TEXT,
};

const V: ProtocolVersion = ProtocolVersion::V2026_07_28;

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Args<T> {
    v: T,
}

async fn echo<T: Send + 'static>(
    _: &RequestContext,
    args: ToolArguments<Args<T>>,
    _: &InvocationFeatures,
) -> Result<Args<T>, Infallible> {
    Ok(args.into_converted())
}

fn registration<T>() -> Result<ToolRegistration, tollgate::BuildError>
where
    T: for<'de> Deserialize<'de> + Serialize + schemars::JsonSchema + Send + 'static,
{
    ToolRegistration::with_name("t", [V])
        .argument_and_output_types::<Args<T>, Args<T>>()
        .handler(echo::<T>)
        .build()
}

fn schema_of(tool: &ToolRegistration) -> String {
    let v = tool
        .input_schema()
        .get("properties")
        .and_then(|p| p.get("v"))
        .cloned()
        .unwrap_or(JsonValue::Null);
    tollgate::json::to_string(&v, &Default::default()).unwrap()
}

/// Registers `T`, checks its derived schema, then calls it with each valid and invalid value.
async fn row<T>(schema: &str, valid: &[&str], invalid: &[&str])
where
    T: for<'de> Deserialize<'de> + Serialize + schemars::JsonSchema + Send + 'static,
{
    let tool = registration::<T>().unwrap();
    assert_eq!(schema_of(&tool), schema, "{}", std::any::type_name::<T>());
    let endpoint = Endpoint::with_path("/mcp", [V], Implementation::new("d", "1"))
        .add_tool(tool)
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    for value in valid {
        let resp = call(addr, "t", &format!(r#"{{"v":{value}}}"#), &[]).await;
        let result = resp.result();
        assert!(
            result.get("isError").is_none(),
            "{} accepts {value}: {}",
            std::any::type_name::<T>(),
            resp.text()
        );
        assert!(
            result
                .get("structuredContent")
                .and_then(|s| s.get("v"))
                .is_some()
        );
    }
    for value in invalid {
        let resp = call(addr, "t", &format!(r#"{{"v":{value}}}"#), &[]).await;
        assert_eq!(
            first_text(&resp.result()),
            INVALID_ARGUMENTS_TEXT,
            "{} refuses {value}",
            std::any::type_name::<T>()
        );
    }
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
enum Unit {
    Red,
    Green,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
enum Shape {
    Circle(u8),
    Rect { w: u8, h: u8 },
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Record {
    #[serde(rename = "skuCode")]
    sku: String,
    count: u16,
}

#[tokio::test]
async fn every_row_of_the_family() {
    row::<bool>(r#"{"type":"boolean"}"#, &["true"], &["1", "\"true\""]).await;
    row::<i8>(
        r#"{"type":"integer","maximum":127,"minimum":-128}"#,
        &["-128", "127", "1.0"],
        &["128", "-129", "1.5"],
    )
    .await;
    row::<i16>(
        r#"{"type":"integer","maximum":32767,"minimum":-32768}"#,
        &["32767"],
        &["32768"],
    )
    .await;
    row::<i32>(
        r#"{"type":"integer","minimum":-2147483648,"maximum":2147483647}"#,
        &["-2147483648", "1e0"],
        &["2147483648"],
    )
    .await;
    row::<i64>(
        r#"{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807}"#,
        &["9223372036854775807", "-0"],
        &["9223372036854775808", "1e9999"],
    )
    .await;
    row::<i128>(
        r#"{"type":"integer","minimum":-170141183460469231731687303715884105728,"maximum":170141183460469231731687303715884105727}"#,
        &["170141183460469231731687303715884105727"],
        &["170141183460469231731687303715884105728", "1e9999"],
    )
    .await;
    row::<u8>(
        r#"{"type":"integer","maximum":255,"minimum":0}"#,
        &["0", "255"],
        &["-1", "256"],
    )
    .await;
    row::<u16>(
        r#"{"type":"integer","maximum":65535,"minimum":0}"#,
        &["65535"],
        &["65536"],
    )
    .await;
    row::<u32>(
        r#"{"type":"integer","minimum":0,"maximum":4294967295}"#,
        &["4294967295"],
        &["4294967296"],
    )
    .await;
    row::<u64>(
        r#"{"type":"integer","minimum":0,"maximum":18446744073709551615}"#,
        &["18446744073709551615"],
        &["18446744073709551616", "-1"],
    )
    .await;
    row::<u128>(
        r#"{"type":"integer","minimum":0,"maximum":340282366920938463463374607431768211455}"#,
        &["340282366920938463463374607431768211455"],
        &["340282366920938463463374607431768211456"],
    )
    .await;
    row::<usize>(
        r#"{"type":"integer","minimum":0,"maximum":18446744073709551615}"#,
        &["7"],
        &["-7"],
    )
    .await;
    row::<f64>(
        r#"{"type":"number","minimum":-1.7976931348623157e308,"maximum":1.7976931348623157e308}"#,
        &["1.5", "-2", "1e300"],
        &["1e400", "\"1\""],
    )
    .await;
    row::<f32>(
        r#"{"type":"number","minimum":-3.4028234663852886e38,"maximum":3.4028234663852886e38}"#,
        &["0.5"],
        &["1e39"],
    )
    .await;
    row::<String>(r#"{"type":"string"}"#, &["\"\"", "\"é🚀\""], &["null", "5"]).await;
    row::<Option<u8>>(
        r#"{"type":["integer","null"],"maximum":255,"minimum":0}"#,
        &["null", "3"],
        &["300"],
    )
    .await;
    row::<Vec<u8>>(
        r#"{"type":"array","items":{"type":"integer","maximum":255,"minimum":0}}"#,
        &["[]", "[1,2,2]"],
        &["[256]", "{}"],
    )
    .await;
    row::<HashMap<String, u8>>(
        r#"{"type":"object","additionalProperties":{"type":"integer","maximum":255,"minimum":0}}"#,
        &[r#"{"a":1}"#],
        &[r#"{"a":-1}"#],
    )
    .await;
    row::<BTreeMap<String, bool>>(
        r#"{"type":"object","additionalProperties":{"type":"boolean"}}"#,
        &[r#"{"x":true}"#],
        &["[]"],
    )
    .await;
    row::<Unit>(
        r##"{"$ref":"#/$defs/Unit"}"##,
        &["\"Red\""],
        &["\"Blue\"", "0"],
    )
    .await;
    row::<Shape>(
        r##"{"$ref":"#/$defs/Shape"}"##,
        &[r#"{"Circle":3}"#, r#"{"Rect":{"w":1,"h":2}}"#],
        &[r#"{"Circle":3,"Rect":{"w":1,"h":2}}"#, r#""Circle""#],
    )
    .await;
    row::<Record>(
        r##"{"$ref":"#/$defs/Record"}"##,
        &[r#"{"skuCode":"A","count":2}"#],
        &[r#"{"sku":"A","count":2}"#],
    )
    .await;
}

#[test]
fn data_carrying_enums_are_published_as_exclusive_any_of() {
    let tool = registration::<Shape>().unwrap();
    let defs = tool
        .input_schema()
        .get("$defs")
        .and_then(|d| d.get("Shape"))
        .cloned()
        .unwrap();
    assert!(defs.get("anyOf").is_some() && defs.get("oneOf").is_none());
}

/// Recursion without a base case: no finite value is an `Endless`.
#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Endless {
    next: Box<Endless>,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Ping {
    pong: Box<Pong>,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Pong {
    ping: Vec<Ping>,
    again: Box<Ping>,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind")]
enum Internally {
    A { x: u8 },
    B { y: u8 },
}

fn refused<T>() -> (BuildErrorKind, Option<String>)
where
    T: for<'de> Deserialize<'de> + Serialize + schemars::JsonSchema + Send + 'static,
{
    let err = registration::<T>().expect_err("refused");
    assert_eq!(err.tool(), Some("t"));
    assert!(err.type_name().is_some_and(|t| t.contains("Args")));
    assert!(err.to_string().contains("tool `t`"));
    (err.kind(), err.location().map(str::to_owned))
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename = "Point 2D")]
struct Point {
    x: i32,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
#[allow(
    non_camel_case_types,
    reason = "a definition name schemars percent-encodes"
)]
struct Größe {
    cm: u32,
}

#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Named {
    p: Point,
    g: Größe,
}

#[test]
fn definition_names_that_need_encoding_are_not_recursion() {
    let tool = registration::<Named>().unwrap();
    let schema = tollgate::json::to_string(tool.input_schema(), &Default::default()).unwrap();
    assert!(schema.contains("Point%202D"), "{schema}");
}

#[test]
fn refused_types_name_the_tool_the_type_and_the_location() {
    assert_eq!(
        refused::<HashSet<u8>>().0,
        BuildErrorKind::DerivedSchema,
        "sets"
    );
    assert_eq!(
        refused::<HashMap<u8, u8>>().0,
        BuildErrorKind::DerivedSchema,
        "non-string keys"
    );
    assert_eq!(
        refused::<(u8, String)>().0,
        BuildErrorKind::DerivedSchema,
        "tuples"
    );
    assert_eq!(
        refused::<[u8; 2]>().0,
        BuildErrorKind::DerivedSchema,
        "fixed-length arrays"
    );
    assert_eq!(
        refused::<char>().0,
        BuildErrorKind::DerivedSchema,
        "char needs a length constraint"
    );
    assert_eq!(
        refused::<serde_json::Value>(),
        (
            BuildErrorKind::UnconstrainedType,
            Some("/properties/v".into())
        )
    );
    assert_eq!(
        refused::<Vec<serde_json::Value>>(),
        (
            BuildErrorKind::UnconstrainedType,
            Some("/properties/v/items".into())
        )
    );
    assert_eq!(refused::<Endless>().0, BuildErrorKind::RecursiveType);
    assert_eq!(refused::<Ping>().0, BuildErrorKind::RecursiveType);
    assert_eq!(refused::<Internally>().0, BuildErrorKind::InexactOneOf);
    let (kind, location) = refused::<HashSet<u8>>();
    assert_eq!(
        (kind, location.as_deref()),
        (BuildErrorKind::DerivedSchema, Some("/properties/v"))
    );
}

#[test]
fn outputs_and_roots() {
    #[derive(Deserialize, schemars::JsonSchema)]
    struct In {}
    async fn text(
        _: &RequestContext,
        _: ToolArguments<In>,
        _: &InvocationFeatures,
    ) -> Result<String, Infallible> {
        Ok(String::new())
    }
    let err = ToolRegistration::with_name("s", [V])
        .argument_and_output_types::<In, String>()
        .handler(text)
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::BareStringOutput);
    async fn list(
        _: &RequestContext,
        _: ToolArguments<Vec<u8>>,
        _: &InvocationFeatures,
    ) -> Result<Args<u8>, Infallible> {
        Ok(Args { v: 0 })
    }
    let err = ToolRegistration::with_name("r", [V])
        .argument_and_output_types::<Vec<u8>, Args<u8>>()
        .handler(list)
        .build()
        .unwrap_err();
    assert_eq!(
        err.kind(),
        BuildErrorKind::DerivedSchema,
        "an input root must be an object"
    );
    async fn map(
        _: &RequestContext,
        _: ToolArguments<HashMap<String, u8>>,
        _: &InvocationFeatures,
    ) -> Result<Args<u8>, Infallible> {
        Ok(Args { v: 0 })
    }
    assert!(
        ToolRegistration::with_name("m", [V])
            .argument_and_output_types::<HashMap<String, u8>, Args<u8>>()
            .handler(map)
            .build()
            .is_ok()
    );
}

#[tokio::test]
async fn decimals_travel_exactly() {
    row::<tollgate::tool::Decimal>(
        r#"{"type":"number"}"#,
        &["1", "-0.5", "1e400"],
        &["\"1\"", "null"],
    )
    .await;
    let tool = registration::<tollgate::tool::Decimal>().unwrap();
    let endpoint = Endpoint::with_path("/mcp", [V], Implementation::new("d", "1"))
        .add_tool(tool)
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    for spelling in [
        "0.1000000000000000000000000001",
        "1e400",
        "-12345678901234567890123456789.5",
        "1.50",
    ] {
        let resp = call(addr, "t", &format!(r#"{{"v":{spelling}}}"#), &[]).await;
        assert!(
            resp.text()
                .contains(&format!(r#""structuredContent":{{"v":{spelling}}}"#)),
            "{spelling}: {}",
            resp.text()
        );
    }
}

#[cfg(feature = "num-bigint")]
#[tokio::test]
async fn big_integers_within_the_binding_limits() {
    let huge = format!("1{}", "0".repeat(1023)); // 1,024 characters: at the per-integer bound
    row::<tollgate::tool::BigInteger>(
        r#"{"type":"integer"}"#,
        &[
            "0",
            "-170141183460469231731687303715884105729",
            "1e1023",
            &huge,
            "12.0",
        ],
        &["1e1024", "1e9999", "1.5", "\"1\""],
    )
    .await;
    let tool = registration::<tollgate::tool::BigInteger>().unwrap();
    let endpoint = Endpoint::with_path("/mcp", [V], Implementation::new("d", "1"))
        .add_tool(tool)
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let resp = call(addr, "t", r#"{"v":-123456789012345678901234567890}"#, &[]).await;
    assert!(
        resp.text()
            .contains(r#""structuredContent":{"v":-123456789012345678901234567890}"#),
        "{}",
        resp.text()
    );
}

/// The per-call total of expanded integer characters, at 4,194,304 and one past, spelled
/// compactly: 4,096 × `1e1023` expand to 1,024 characters each.
#[cfg(feature = "num-bigint")]
#[tokio::test]
async fn the_integer_budget_at_and_past_4_194_304() {
    async fn count(
        _: &RequestContext,
        args: ToolArguments<Args<Vec<tollgate::tool::BigInteger>>>,
        _: &InvocationFeatures,
    ) -> Result<Args<usize>, Infallible> {
        Ok(Args {
            v: args.converted().v.len(),
        })
    }
    let tool = ToolRegistration::with_name("t", [V])
        .argument_and_output_types::<Args<Vec<tollgate::tool::BigInteger>>, Args<usize>>()
        .handler(count)
        .build()
        .unwrap();
    let endpoint = Endpoint::with_path("/mcp", [V], Implementation::new("d", "1"))
        .add_tool(tool)
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint)).await;
    let at = vec!["1e1023"; 4096].join(",");
    let resp = call(addr, "t", &format!(r#"{{"v":[{at}]}}"#), &[]).await;
    let result = resp.result();
    assert!(result.get("isError").is_none(), "4,194,304 characters bind");
    let count = result.get("structuredContent").and_then(|s| s.get("v"));
    assert_eq!(
        count
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_u64()),
        Some(4096)
    );
    let resp = call(addr, "t", &format!(r#"{{"v":[{at},1]}}"#), &[]).await;
    assert_eq!(
        first_text(&resp.result()),
        INVALID_ARGUMENTS_TEXT,
        "4,194,305 characters do not"
    );
}
