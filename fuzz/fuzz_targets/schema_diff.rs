//! Differential: the Profile 1 evaluator against the `jsonschema` crate (draft 2020-12). The
//! input is split at the first 0xFF byte into a schema and an instance. For every schema Profile
//! 1 compiles, and every instance, both give the same valid/invalid answer. Not compared: an
//! evaluation that ran out of budget (Tollgate's bound, not an answer), and documents holding a
//! number that no `f64` represents exactly (Tollgate compares numbers exactly, `jsonschema` as
//! `f64`: an intended difference), and schemas `jsonschema` refuses to build. `format` is an
//! annotation in both.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tollgate_json::{JsonLimits, JsonNumber, JsonValue, from_slice};
use tollgate_schema::{CompiledSchema, ValidationErrorKind};

/// The same document as a `serde_json::Value`, or `None` when a number has no exact `f64` (or
/// 64-bit integer) form.
fn to_serde(v: &JsonValue) -> Option<serde_json::Value> {
    Some(match v {
        JsonValue::Null => serde_json::Value::Null,
        JsonValue::Bool(b) => serde_json::Value::Bool(*b),
        JsonValue::Number(n) => serde_json::Value::Number(number(n)?),
        JsonValue::String(s) => serde_json::Value::String(s.as_str().to_owned()),
        JsonValue::Array(a) => {
            serde_json::Value::Array(a.iter().map(to_serde).collect::<Option<_>>()?)
        }
        JsonValue::Object(o) => serde_json::Value::Object(
            o.iter()
                .map(|(k, x)| Some((k.as_str().to_owned(), to_serde(x)?)))
                .collect::<Option<_>>()?,
        ),
    })
}

fn number(n: &JsonNumber) -> Option<serde_json::Number> {
    if let Some(i) = n.to_i64() {
        return Some(i.into());
    }
    if let Some(u) = n.to_u64() {
        return Some(u.into());
    }
    let f = n.to_f64()?;
    // Exactly this value, or not compared.
    (JsonNumber::from_f64(f)? == *n).then_some(())?;
    serde_json::Number::from_f64(f)
}

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
    let Ok(ours) = CompiledSchema::compile(&document) else {
        return;
    };
    let our_answer = match ours.validate(&instance) {
        Ok(()) => true,
        Err(e) if e.kind() == ValidationErrorKind::Invalid => false,
        Err(_) => return,
    };
    let (Some(their_schema), Some(their_instance)) = (to_serde(&document), to_serde(&instance))
    else {
        return;
    };
    // A schema `jsonschema` cannot build (it resolves some reference forms differently) is
    // not compared.
    let Ok(theirs) = jsonschema::draft202012::new(&their_schema) else {
        return;
    };
    assert_eq!(
        our_answer,
        theirs.is_valid(&their_instance),
        "Profile 1 and jsonschema disagree"
    );
});
