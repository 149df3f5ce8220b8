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

#[path = "cases.rs"]
mod cases;
use cases::{
    ARRAY_SCHEMA, CATALOG_SCHEMA, SMALL_INSTANCE, SMALL_SCHEMA, array_instance, catalog_instance,
};

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
