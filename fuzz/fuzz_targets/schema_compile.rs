//! The Profile 1 compiler on arbitrary documents: it either compiles or fails with a typed error,
//! never panics, and a compiled schema can evaluate any instance (here, its own document and the
//! members of it) without panicking.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tollgate_json::{JsonLimits, JsonValue, from_slice};
use tollgate_schema::CompiledSchema;

fuzz_target!(|data: &[u8]| {
    let Ok(document) = from_slice(data, &JsonLimits::default()) else {
        return;
    };
    let Ok(schema) = CompiledSchema::compile(&document) else {
        let _ = CompiledSchema::compile_tool_input(&document);
        return;
    };
    let _ = schema.validate(&document);
    if let JsonValue::Object(members) = &document {
        for (_, value) in members.iter() {
            let _ = schema.validate(value);
        }
    }
    let _ = CompiledSchema::compile_tool_input(&document);
});
