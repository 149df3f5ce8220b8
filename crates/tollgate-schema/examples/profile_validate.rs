//! A fixed validation loop for instruction counting, so evaluator changes can be measured without
//! wall-clock noise:
//!
//! ```sh
//! cargo build --release -p tollgate-schema --example profile_validate
//! valgrind --tool=callgrind target/release/examples/profile_validate small tollgate
//! valgrind --tool=callgrind target/release/examples/profile_validate small jsonschema
//! ```
//!
//! Cases: `small`, `catalog`, `array`; engines: `tollgate`, `jsonschema`, `none` (setup only,
//! to subtract).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "profiling driver: a failure is the report"
)]

#[path = "../benches/cases.rs"]
mod cases;

use std::hint::black_box;
use tollgate_json::{JsonLimits, from_str};
use tollgate_schema::CompiledSchema;

fn main() {
    let mut args = std::env::args().skip(1);
    let case = args.next().unwrap_or_else(|| "small".to_owned());
    let engine = args.next().unwrap_or_else(|| "tollgate".to_owned());
    let (schema, instance, rounds) = match case.as_str() {
        "small" => (
            cases::SMALL_SCHEMA.to_owned(),
            cases::SMALL_INSTANCE.to_owned(),
            200_000,
        ),
        "catalog" => (
            cases::CATALOG_SCHEMA.to_owned(),
            cases::catalog_instance(),
            10_000,
        ),
        "array" => (cases::ARRAY_SCHEMA.to_owned(), cases::array_instance(), 50),
        other => panic!("unknown case {other}"),
    };
    let limits = JsonLimits::default();
    let ours = CompiledSchema::compile(&from_str(&schema, &limits).unwrap()).unwrap();
    let ours_instance = from_str(&instance, &limits).unwrap();
    let theirs = jsonschema::validator_for(&serde_json::from_str(&schema).unwrap()).unwrap();
    let theirs_instance: serde_json::Value = serde_json::from_str(&instance).unwrap();
    let mut valid = 0u64;
    for _ in 0..rounds {
        let ok = match engine.as_str() {
            "tollgate" => ours.validate(black_box(&ours_instance)).is_ok(),
            "jsonschema" => theirs.is_valid(black_box(&theirs_instance)),
            "none" => true,
            other => panic!("unknown engine {other}"),
        };
        valid += u64::from(ok);
    }
    println!("{case} {engine}: {valid} of {rounds} valid");
}
