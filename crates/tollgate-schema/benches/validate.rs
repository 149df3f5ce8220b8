//! Validation throughput, side by side with the `jsonschema` crate on the same schemas and
//! instances (each compiled once, validated many times).
//!
//! Run: `cargo bench -p tollgate-schema`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "bench code: a failure is the report"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use tollgate_json::{JsonLimits, JsonValue, from_str};
use tollgate_schema::CompiledSchema;

const SMALL_SCHEMA: &str = r#"{
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "inStock": {"type": "boolean"},
        "priceMax": {"type": "number", "minimum": 0},
        "sort": {"enum": ["price", "name", "relevance"]}
    },
    "required": ["query"],
    "additionalProperties": false
}"#;
const SMALL_INSTANCE: &str =
    r#"{"query": "blue mug", "limit": 10, "inStock": true, "priceMax": 24.99, "sort": "price"}"#;

const CATALOG_SCHEMA: &str = r##"{
    "type": "object",
    "$defs": {
        "money": {"type": "object", "properties": {"amount": {"type": "number", "minimum": 0},
            "currency": {"enum": ["EUR", "USD", "GBP"]}}, "required": ["amount", "currency"],
            "additionalProperties": false},
        "item": {"type": "object", "properties": {
            "sku": {"type": "string"},
            "name": {"type": "string"},
            "price": {"$ref": "#/$defs/money"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "variant": {"anyOf": [
                {"type": "object", "properties": {"size": {"enum": ["S", "M", "L"]}}, "required": ["size"]},
                {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
                {"type": "null"}
            ]}
        }, "required": ["sku", "price"]}
    },
    "properties": {
        "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
        "total": {"$ref": "#/$defs/money"}
    },
    "required": ["items"]
}"##;

fn catalog_instance() -> String {
    let items: Vec<String> = (0..20)
        .map(|i| {
            let variant = match i % 3 {
                0 => r#"{"size": "M"}"#.to_owned(),
                1 => r#"{"color": "blue"}"#.to_owned(),
                _ => "null".to_owned(),
            };
            format!(
                r#"{{"sku": "SKU-{i}", "name": "Item {i}", "price": {{"amount": {i}.5, "currency": "EUR"}},
                    "tags": ["a", "b", "c"], "variant": {variant}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"items": [{}], "total": {{"amount": 210, "currency": "EUR"}}}}"#,
        items.join(",")
    )
}

const ARRAY_SCHEMA: &str = r#"{
    "type": "array",
    "items": {"type": "object", "properties": {
        "id": {"type": "integer", "minimum": 0},
        "name": {"type": "string"},
        "score": {"type": "number", "maximum": 100},
        "active": {"type": "boolean"}
    }, "required": ["id", "name"]}
}"#;

fn array_instance() -> String {
    let items: Vec<String> = (0..10_000)
        .map(|i| {
            format!(
                r#"{{"id": {i}, "name": "n{i}", "score": {}.25, "active": true}}"#,
                i % 100
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

fn bench(c: &mut Criterion) {
    let limits = JsonLimits::default();
    let cases = [
        (
            "small_tool_input",
            SMALL_SCHEMA.to_owned(),
            SMALL_INSTANCE.to_owned(),
        ),
        (
            "catalog_ref_anyof",
            CATALOG_SCHEMA.to_owned(),
            catalog_instance(),
        ),
        (
            "array_10000_objects",
            ARRAY_SCHEMA.to_owned(),
            array_instance(),
        ),
    ];
    for (name, schema_text, instance_text) in &cases {
        let ours = CompiledSchema::compile(&from_str(schema_text, &limits).unwrap()).unwrap();
        let instance: JsonValue = from_str(instance_text, &limits).unwrap();
        assert!(ours.validate(&instance).is_ok(), "{name}");

        let their_schema: serde_json::Value = serde_json::from_str(schema_text).unwrap();
        let theirs = jsonschema::validator_for(&their_schema).unwrap();
        let their_instance: serde_json::Value = serde_json::from_str(instance_text).unwrap();
        assert!(theirs.is_valid(&their_instance), "{name}");

        let mut g = c.benchmark_group(format!("validate/{name}"));
        g.bench_function("tollgate", |b| {
            b.iter(|| ours.validate(black_box(&instance)).is_ok())
        });
        g.bench_function("jsonschema", |b| {
            b.iter(|| theirs.is_valid(black_box(&their_instance)))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
