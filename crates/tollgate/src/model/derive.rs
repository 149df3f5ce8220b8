//! Schema derivation for typed tools: schemars' document, normalised to an exact Profile 1
//! schema or refused.
//!
//! Owns the closed type family's translation. schemars describes integer widths with OpenAPI
//! `format` names and sometimes without bounds (`int32`, `uint64`, ...); this module replaces
//! each such format with the type's exact `minimum`/`maximum` (so validation is as strict as the
//! Rust type, and clients see only standard keywords), rewrites a `oneOf` whose branches are
//! provably exclusive (serde's externally tagged enums) to the equivalent `anyOf`, and refuses
//! what no exact profile schema can say: unconstrained values (`serde_json::Value`), recursive
//! types, any other `oneOf`, and a bare string output. Everything else the profile cannot
//! express (sets, tuples, fixed-length arrays, `char`, maps with non-string keys) is refused by
//! the Profile 1 compiler with its location. Knows nothing of tools or HTTP.

use std::collections::{BTreeMap, BTreeSet};

use tollgate_json::{JsonArray, JsonNumber, JsonObjectBuilder, JsonValue};

/// Why a derived schema was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DeriveFailure {
    Unconstrained,
    Recursive,
    InexactOneOf,
    BareStringOutput,
}

/// A refusal and the JSON Pointer where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeriveError {
    pub(crate) failure: DeriveFailure,
    pub(crate) location: String,
}

fn bounds(format: &str) -> Option<(JsonNumber, JsonNumber)> {
    let n = |v: i128| JsonNumber::from(v);
    Some(match format {
        "int8" => (n(i8::MIN.into()), n(i8::MAX.into())),
        "int16" => (n(i16::MIN.into()), n(i16::MAX.into())),
        "int32" => (n(i32::MIN.into()), n(i32::MAX.into())),
        "int64" => (n(i64::MIN.into()), n(i64::MAX.into())),
        "int" => (n(isize::MIN as i128), n(isize::MAX as i128)),
        "int128" => (JsonNumber::from(i128::MIN), JsonNumber::from(i128::MAX)),
        "uint8" => (n(0), n(u8::MAX.into())),
        "uint16" => (n(0), n(u16::MAX.into())),
        "uint32" => (n(0), n(u32::MAX.into())),
        "uint64" => (n(0), n(u64::MAX.into())),
        "uint" => (n(0), n(usize::MAX as i128)),
        "uint128" => (n(0), JsonNumber::from(u128::MAX)),
        "float" => (
            JsonNumber::from_f64(f64::from(f32::MIN))?,
            JsonNumber::from_f64(f64::from(f32::MAX))?,
        ),
        "double" => (
            JsonNumber::from_f64(f64::MIN)?,
            JsonNumber::from_f64(f64::MAX)?,
        ),
        _ => return None,
    })
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Normalises one derived document (see the module docs). `output` refuses a bare string root.
pub(crate) fn normalise(document: &JsonValue, output: bool) -> Result<JsonValue, DeriveError> {
    if output && document.get("type").and_then(JsonValue::as_str) == Some("string") {
        return Err(DeriveError {
            failure: DeriveFailure::BareStringOutput,
            location: String::new(),
        });
    }
    refuse_recursion(document)?;
    let mut path = String::new();
    visit(document, &mut path)
}

/// Rebuilds `schema`, applying the rules to every subschema.
fn visit(schema: &JsonValue, path: &mut String) -> Result<JsonValue, DeriveError> {
    let fail = |failure, path: &str| {
        Err(DeriveError {
            failure,
            location: path.to_owned(),
        })
    };
    let object = match schema {
        JsonValue::Bool(true) => return fail(DeriveFailure::Unconstrained, path),
        JsonValue::Object(o) => o,
        other => return Ok(other.clone()),
    };
    if object.keys().all(|k| {
        matches!(
            k,
            "title"
                | "description"
                | "$comment"
                | "default"
                | "examples"
                | "deprecated"
                | "readOnly"
                | "writeOnly"
        )
    }) {
        return fail(DeriveFailure::Unconstrained, path);
    }
    let format_bounds = object
        .get("format")
        .and_then(JsonValue::as_str)
        .and_then(bounds);
    let mut out = JsonObjectBuilder::default();
    for (name, value) in object.iter() {
        let mark = path.len();
        path.push('/');
        path.push_str(&escape(name));
        let rebuilt = match (name.as_str(), value) {
            ("format", _) if format_bounds.is_some() => None,
            ("oneOf", JsonValue::Array(branches)) => {
                if !exclusive(branches) {
                    return fail(DeriveFailure::InexactOneOf, path);
                }
                out.push("anyOf", subschemas(branches, path)?);
                None
            }
            ("properties" | "$defs", JsonValue::Object(members)) => {
                let mut b = JsonObjectBuilder::default();
                for (k, v) in members.iter() {
                    let m = path.len();
                    path.push('/');
                    path.push_str(&escape(k));
                    b.push(k.clone(), visit(v, path)?);
                    path.truncate(m);
                }
                Some(JsonValue::Object(b.build()))
            }
            (
                "items" | "additionalProperties" | "if" | "then" | "else",
                v @ (JsonValue::Object(_) | JsonValue::Bool(true)),
            ) => {
                // `additionalProperties: true` is serde's default for maps of anything.
                Some(visit(v, path)?)
            }
            ("allOf" | "anyOf", JsonValue::Array(branches)) => Some(subschemas(branches, path)?),
            _ => Some(value.clone()),
        };
        if let Some(v) = rebuilt {
            out.push(name.clone(), v);
        }
        path.truncate(mark);
    }
    if let Some((min, max)) = format_bounds {
        if !object.contains_key("minimum") {
            out.push("minimum", min);
        }
        if !object.contains_key("maximum") {
            out.push("maximum", max);
        }
    }
    Ok(JsonValue::Object(out.build()))
}

fn subschemas(branches: &JsonArray, path: &mut String) -> Result<JsonValue, DeriveError> {
    let mut out = Vec::with_capacity(branches.len());
    for (i, branch) in branches.iter().enumerate() {
        let mark = path.len();
        path.push('/');
        path.push_str(&i.to_string());
        out.push(visit(branch, path)?);
        path.truncate(mark);
    }
    Ok(JsonValue::Array(JsonArray::from(out)))
}

/// Whether at most one branch can ever match: every branch is an object schema that requires
/// one member, declares only that member, refuses all others, and no two branches require the
/// same member (serde's externally tagged enum). Then `oneOf` and `anyOf` accept exactly the
/// same instances.
fn exclusive(branches: &JsonArray) -> bool {
    let mut tags = BTreeSet::new();
    branches.iter().all(|branch| {
        let Some(o) = branch.as_object() else {
            return false;
        };
        let required: Vec<&str> = o
            .get("required")
            .and_then(JsonValue::as_array)
            .map(|r| r.iter().filter_map(JsonValue::as_str).collect())
            .unwrap_or_default();
        let declared = o.get("properties").and_then(JsonValue::as_object);
        let closed = o.get("additionalProperties") == Some(&JsonValue::Bool(false));
        let object_typed = o.get("type").and_then(JsonValue::as_str) == Some("object");
        match (required.as_slice(), declared) {
            ([tag], Some(props)) => {
                object_typed
                    && closed
                    && props.len() == 1
                    && props.contains_key(tag)
                    && tags.insert(tag.to_string())
            }
            _ => false,
        }
    })
}

/// Refuses recursive types: a cycle among the root and its `$defs` through `$ref`.
fn refuse_recursion(document: &JsonValue) -> Result<(), DeriveError> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    collect_refs(document, "#", &mut edges);
    if let Some(defs) = document.get("$defs").and_then(JsonValue::as_object) {
        for (name, def) in defs.iter() {
            collect_refs(def, &format!("#/$defs/{}", escape(name)), &mut edges);
        }
    }
    // Depth-first search for a back edge.
    fn cycle(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        visiting: &mut BTreeSet<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<String> {
        if done.contains(node) {
            return None;
        }
        if !visiting.insert(node.to_owned()) {
            return Some(node.to_owned());
        }
        for next in edges.get(node).into_iter().flatten() {
            if let Some(found) = cycle(next, edges, visiting, done) {
                return Some(found);
            }
        }
        visiting.remove(node);
        done.insert(node.to_owned());
        None
    }
    let (mut visiting, mut done) = (BTreeSet::new(), BTreeSet::new());
    let nodes: Vec<String> = edges.keys().cloned().collect();
    for node in nodes {
        if let Some(found) = cycle(&node, &edges, &mut visiting, &mut done) {
            let location = found.trim_start_matches('#').to_owned();
            return Err(DeriveError {
                failure: DeriveFailure::Recursive,
                location,
            });
        }
    }
    Ok(())
}

/// Records `$ref` targets reachable from `schema` (not descending into the root's `$defs`,
/// which are nodes of their own), as edges from `from`.
fn collect_refs(schema: &JsonValue, from: &str, edges: &mut BTreeMap<String, BTreeSet<String>>) {
    match schema {
        JsonValue::Object(o) => {
            for (name, value) in o.iter() {
                match (name.as_str(), value) {
                    ("$ref", JsonValue::String(target)) => {
                        let target = if target.as_str() == "#" {
                            "#".to_owned()
                        } else {
                            target.to_string()
                        };
                        edges.entry(from.to_owned()).or_default().insert(target);
                    }
                    ("$defs", _) if from == "#" => {}
                    _ => collect_refs(value, from, edges),
                }
            }
            edges.entry(from.to_owned()).or_default();
        }
        JsonValue::Array(items) => items
            .iter()
            .for_each(|item| collect_refs(item, from, edges)),
        _ => {}
    }
}

#[cfg(test)]
fn doc(text: &str) -> JsonValue {
    tollgate_json::from_str(text, &tollgate_json::JsonLimits::default()).unwrap_or(JsonValue::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: &JsonValue) -> String {
        tollgate_json::to_string(v, &tollgate_json::OutputLimits::default()).unwrap_or_default()
    }

    #[test]
    fn integer_formats_become_exact_bounds() {
        let d = doc(
            r#"{"type":"object","properties":{"a":{"type":"integer","format":"int32"},"b":{"type":["integer","null"],"format":"uint64","minimum":0},"c":{"type":"number","format":"float"}}}"#,
        );
        let n = normalise(&d, false).map(|v| text(&v)).unwrap_or_default();
        assert_eq!(
            n,
            r#"{"type":"object","properties":{"a":{"type":"integer","minimum":-2147483648,"maximum":2147483647},"b":{"type":["integer","null"],"minimum":0,"maximum":18446744073709551615},"c":{"type":"number","minimum":-3.4028234663852886e38,"maximum":3.4028234663852886e38}}}"#
        );
    }

    #[test]
    fn exclusive_one_of_becomes_any_of_and_others_are_refused() {
        let tagged = doc(
            r#"{"oneOf":[{"type":"object","properties":{"A":{"type":"integer"}},"additionalProperties":false,"required":["A"]},{"type":"object","properties":{"B":{"type":"string"}},"additionalProperties":false,"required":["B"]}]}"#,
        );
        let n = normalise(&tagged, false)
            .map(|v| text(&v))
            .unwrap_or_default();
        assert!(n.starts_with(r#"{"anyOf":["#), "{n}");
        let overlapping = doc(r#"{"oneOf":[{"type":"integer"},{"type":"number"}]}"#);
        assert_eq!(
            normalise(&overlapping, false).map_err(|e| (e.failure, e.location)),
            Err((DeriveFailure::InexactOneOf, "/oneOf".into()))
        );
    }

    #[test]
    fn unconstrained_recursive_and_bare_string_are_refused() {
        let any = doc(r#"{"type":"object","properties":{"v":true}}"#);
        assert_eq!(
            normalise(&any, false).map_err(|e| (e.failure, e.location)),
            Err((DeriveFailure::Unconstrained, "/properties/v".into()))
        );
        let annotated = doc(r#"{"type":"object","properties":{"v":{"description":"anything"}}}"#);
        assert_eq!(
            normalise(&annotated, false).map_err(|e| e.failure),
            Err(DeriveFailure::Unconstrained)
        );
        let rec = doc(
            r##"{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#"},{"type":"null"}]}}}"##,
        );
        assert_eq!(
            normalise(&rec, false).map_err(|e| e.failure),
            Err(DeriveFailure::Recursive)
        );
        let rec_defs = doc(
            r##"{"$ref":"#/$defs/A","$defs":{"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"}}},"B":{"type":"array","items":{"$ref":"#/$defs/A"}}}}"##,
        );
        assert_eq!(
            normalise(&rec_defs, false).map_err(|e| e.failure),
            Err(DeriveFailure::Recursive)
        );
        let shared = doc(
            r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/X"},"b":{"$ref":"#/$defs/X"}},"$defs":{"X":{"type":"string"}}}"##,
        );
        assert!(
            normalise(&shared, false).is_ok(),
            "a definition used twice is not recursion"
        );
        assert_eq!(
            normalise(&doc(r#"{"type":"string"}"#), true).map_err(|e| e.failure),
            Err(DeriveFailure::BareStringOutput)
        );
        assert!(normalise(&doc(r#"{"type":"string"}"#), false).is_ok());
    }
}
