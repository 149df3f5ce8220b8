//! Schema and instance pairs: the input is split at the first 0xFF byte (which never occurs in
//! valid UTF-8) into a schema document and an instance. Evaluation never panics, always ends
//! (the budget bounds it), and gives the same outcome twice.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tollgate_json::{JsonLimits, from_slice};
use tollgate_schema::CompiledSchema;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0xFF).unwrap_or(data.len());
    let (schema_bytes, rest) = data.split_at(split);
    let instance_bytes = rest.get(1..).unwrap_or(&[]);
    let limits = JsonLimits::default();
    let (Ok(document), Ok(instance)) = (
        from_slice(schema_bytes, &limits),
        from_slice(instance_bytes, &limits),
    ) else {
        return;
    };
    let Ok(schema) = CompiledSchema::compile(&document) else {
        return;
    };
    let first = schema.validate(&instance).map_err(|e| e.kind());
    let second = schema.validate(&instance).map_err(|e| e.kind());
    assert_eq!(first, second, "evaluation is not deterministic");
});
