//! Schema derivation for typed tools: schemars' document, normalised to an exact Profile 1
//! schema or refused.
//!
//! Owns the closed type family's translation. schemars describes integer widths with OpenAPI
//! `format` names and sometimes without bounds (`int32`, `uint64`, ...); this module replaces
//! each such format with the type's exact `minimum`/`maximum` (so validation is as strict as the
//! Rust type, and clients see only standard keywords), rewrites a `oneOf` whose branches are
//! provably exclusive (serde's externally tagged enums) to the equivalent `anyOf`, and refuses
//! what no exact profile schema can say: unconstrained values (`serde_json::Value`), types that
//! can only be infinite (recursion without a base case; recursion through `Option`, `Vec` or a
//! map derives `$defs`/`$ref` and is kept), any other `oneOf`, and a bare string output. Everything else the profile cannot
//! express (sets, tuples, fixed-length arrays, `char`, maps with non-string keys) is refused by
//! the Profile 1 compiler with its location. Knows nothing of tools or HTTP.

use std::collections::BTreeSet;

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

/// Refuses types that can only be infinite: a schema (the root or one of its `$defs`) that no
/// finite JSON value satisfies because every way to satisfy it goes back through a `$ref` to
/// itself (`struct Endless { next: Box<Endless> }`). Recursion with a base case (through
/// `Option`, `Vec`, a map, or an enum with a leaf variant) is fine: the JSON reader's depth and
/// value bounds keep each instance finite and bounded.
fn refuse_recursion(document: &JsonValue) -> Result<(), DeriveError> {
    let defs = document.get("$defs").and_then(JsonValue::as_object);
    let mut nodes: Vec<(String, &JsonValue)> = vec![("#".to_owned(), document)];
    if let Some(defs) = defs {
        for (name, def) in defs.iter() {
            nodes.push((format!("#/$defs/{}", escape(name)), def));
        }
    }
    // The least fixed point: a node is finite once some finite value satisfies it given the
    // nodes already known to be finite.
    let mut finite: BTreeSet<String> = BTreeSet::new();
    loop {
        let before = finite.len();
        for (name, schema) in &nodes {
            if !finite.contains(name) && satisfiable(schema, &finite) {
                finite.insert(name.clone());
            }
        }
        if finite.len() == before {
            break;
        }
    }
    match nodes.iter().find(|(name, _)| !finite.contains(name)) {
        None => Ok(()),
        Some((name, _)) => Err(DeriveError {
            failure: DeriveFailure::Recursive,
            location: name.trim_start_matches('#').to_owned(),
        }),
    }
}

/// Whether some finite value satisfies `schema`, given which `$ref` targets are known to have
/// one. Each keyword is one conjunct; a conjunct that cannot be met makes the schema unmet. (An
/// over-approximation for everything else: contradictions between keywords are the compiler's
/// and the evaluator's business, not recursion.)
fn satisfiable(schema: &JsonValue, finite: &BTreeSet<String>) -> bool {
    let o = match schema {
        JsonValue::Bool(b) => return *b,
        JsonValue::Object(o) => o,
        _ => return true,
    };
    if let Some(JsonValue::String(target)) = o.get("$ref") {
        // Anchors and other local forms are not emitted by derivation; only `#` and
        // `#/$defs/...` (percent-encoded as schemars writes them) can close a cycle.
        if let Some(pointer) = tollgate_schema::reference_pointer(target.as_str()) {
            let node = format!("#{pointer}");
            if (pointer.is_empty() || pointer.starts_with("/$defs/")) && !finite.contains(&node) {
                return false;
            }
        }
    }
    let branches = |key: &str| o.get(key).and_then(JsonValue::as_array);
    if let Some(all) = branches("allOf")
        && !all.iter().all(|b| satisfiable(b, finite))
    {
        return false;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(any) = branches(key)
            && !any.iter().any(|b| satisfiable(b, finite))
        {
            return false;
        }
    }
    if o.contains_key("const") || o.get("enum").and_then(JsonValue::as_array).is_some() {
        // Literal values are finite by construction.
        return true;
    }
    let types: Vec<&str> = match o.get("type") {
        Some(JsonValue::String(t)) => vec![t.as_str()],
        Some(JsonValue::Array(ts)) => ts.iter().filter_map(JsonValue::as_str).collect(),
        _ => return true,
    };
    // Any scalar, or an empty array, is finite; an object needs each required member finite.
    if types.iter().any(|t| *t != "object") {
        return true;
    }
    let properties = o.get("properties").and_then(JsonValue::as_object);
    let additional = o.get("additionalProperties");
    o.get("required")
        .and_then(JsonValue::as_array)
        .into_iter()
        .flatten()
        .filter_map(JsonValue::as_str)
        .all(
            |name| match properties.and_then(|p| p.get(name)).or(additional) {
                Some(member) => satisfiable(member, finite),
                None => true,
            },
        )
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
        // Recursion with a base case (null, an empty array, an optional member) is kept.
        for safe in [
            r##"{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},"required":["next"]}"##,
            r##"{"$ref":"#/$defs/A","$defs":{"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"}},"required":["b"]},"B":{"type":"array","items":{"$ref":"#/$defs/A"}}}}"##,
            r##"{"type":"object","properties":{"next":{"$ref":"#"}}}"##,
        ] {
            assert!(normalise(&doc(safe), false).is_ok(), "{safe}");
        }
        // Definition names schemars percent-encodes in references (a space, non-ASCII) are
        // matched to their definitions: a plain type is not taken for a recursive one.
        let encoded = doc(
            r##"{"type":"object","properties":{"p":{"$ref":"#/$defs/Point%202D"},"g":{"$ref":"#/$defs/Gr%C3%B6%C3%9Fe"}},"required":["p","g"],"$defs":{"Point 2D":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]},"Größe":{"type":"string"}}}"##,
        );
        assert!(normalise(&encoded, false).is_ok());
        let encoded_loop = doc(
            r##"{"$ref":"#/$defs/Gr%C3%B6%C3%9Fe","$defs":{"Größe":{"type":"object","properties":{"n":{"$ref":"#/$defs/Gr%C3%B6%C3%9Fe"}},"required":["n"]}}}"##,
        );
        assert_eq!(
            normalise(&encoded_loop, false).map_err(|e| e.failure),
            Err(DeriveFailure::Recursive)
        );
        // Recursion that can only be infinite is refused, where it is.
        let endless =
            doc(r##"{"type":"object","properties":{"next":{"$ref":"#"}},"required":["next"]}"##);
        assert_eq!(
            normalise(&endless, false).map_err(|e| (e.failure, e.location)),
            Err((DeriveFailure::Recursive, String::new()))
        );
        let mutual = doc(
            r##"{"$ref":"#/$defs/A","$defs":{"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"}},"required":["b"]},"B":{"allOf":[{"$ref":"#/$defs/A"}]}}}"##,
        );
        assert_eq!(
            normalise(&mutual, false).map_err(|e| e.failure),
            Err(DeriveFailure::Recursive)
        );
        let no_leaf = doc(
            r##"{"anyOf":[{"type":"object","properties":{"l":{"$ref":"#"}},"required":["l"]},{"type":"object","properties":{"r":{"$ref":"#"}},"required":["r"]}]}"##,
        );
        assert_eq!(
            normalise(&no_leaf, false).map_err(|e| e.failure),
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
