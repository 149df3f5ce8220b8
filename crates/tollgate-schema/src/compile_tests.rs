use tollgate_json::{JsonLimits, JsonValue, from_str};

use crate::keywords::{EXCLUDED, RECOGNISED};
use crate::{CompileErrorKind as K, CompiledSchema, HeaderValueType, SchemaLimits};

fn doc(s: &str) -> JsonValue {
    from_str(s, &JsonLimits::default()).unwrap()
}
fn compile(s: &str) -> Result<CompiledSchema, crate::CompileError> {
    CompiledSchema::compile(&doc(s))
}
fn kind(s: &str) -> K {
    compile(s).unwrap_err().kind()
}

#[test]
fn every_excluded_keyword_fails_with_its_location() {
    for keyword in EXCLUDED {
        let text = format!(r#"{{"properties": {{"a": {{"allOf": [{{"{keyword}": 1}}]}}}}}}"#);
        let err = compile(&text).unwrap_err();
        assert_eq!(err.kind(), K::ExcludedKeyword, "{keyword}");
        assert_eq!(err.location(), "/properties/a/allOf/0", "{keyword}");
        assert_eq!(err.keyword(), Some(keyword));
        assert!(err.to_string().contains(keyword));
    }
}

#[test]
fn unknown_keywords_and_extensions_fail() {
    for keyword in [
        "x-custom",
        "x-mcp-other",
        "foo",
        "Type",
        "$foo",
        "definitions2",
    ] {
        let err = compile(&format!(r#"{{"items": {{"{keyword}": true}}}}"#)).unwrap_err();
        assert_eq!(err.kind(), K::UnknownKeyword, "{keyword}");
        assert_eq!(err.location(), "/items");
    }
}

#[test]
fn every_recognised_keyword_compiles_with_a_valid_value() {
    let values = [
        (
            "$schema",
            r#""https://json-schema.org/draft/2020-12/schema""#,
        ),
        ("$defs", r#"{"a": true}"#),
        ("$anchor", r#""here""#),
        ("$ref", r##""#""##),
        ("$comment", r#""note""#),
        ("properties", r#"{"a": {}}"#),
        ("additionalProperties", "false"),
        ("items", r#"{"type": "string"}"#),
        ("allOf", "[true]"),
        ("anyOf", "[true]"),
        ("if", "true"),
        ("then", "true"),
        ("else", "true"),
        ("type", r#"["string", "null"]"#),
        ("enum", "[1, \"a\"]"),
        ("const", "{\"a\": [1]}"),
        ("required", r#"["a"]"#),
        ("minimum", "1.5"),
        ("maximum", "1e3"),
        ("title", r#""T""#),
        ("description", r#""D""#),
        ("default", "null"),
        ("examples", "[1]"),
        ("deprecated", "true"),
        ("readOnly", "false"),
        ("writeOnly", "false"),
        ("format", r#""email""#),
    ];
    assert_eq!(
        values.len() + 1,
        RECOGNISED.len(),
        "x-mcp-header is tested separately"
    );
    for (keyword, value) in values {
        let text = if keyword == "$ref" {
            // A self-reference at the root would be an in-place cycle; refer to a definition.
            r##"{"$defs": {"d": true}, "$ref": "#/$defs/d"}"##.to_owned()
        } else {
            format!(r#"{{"{keyword}": {value}}}"#)
        };
        assert!(
            compile(&text).is_ok(),
            "{keyword}: {:?}",
            compile(&text).err()
        );
    }
}

#[test]
fn keyword_values_are_type_checked() {
    for (keyword, value) in [
        ("$schema", "1"),
        ("$defs", "[]"),
        ("$anchor", r#""1abc""#),
        ("$anchor", r#""a b""#),
        ("$ref", "1"),
        ("$comment", "1"),
        ("properties", "[]"),
        ("allOf", "[]"),
        ("anyOf", "{}"),
        ("type", r#""int""#),
        ("type", r#"["string", "string"]"#),
        ("type", "[]"),
        ("type", "1"),
        ("enum", "{}"),
        ("required", r#"["a", "a"]"#),
        ("required", "[1]"),
        ("required", r#""a""#),
        ("minimum", r#""1""#),
        ("maximum", "null"),
        ("title", "1"),
        ("examples", "1"),
        ("deprecated", r#""yes""#),
        ("format", "1"),
    ] {
        let err = compile(&format!(r#"{{"{keyword}": {value}}}"#)).unwrap_err();
        assert!(
            matches!(err.kind(), K::InvalidKeywordValue | K::UnsupportedDialect),
            "{keyword}: {value}: {err}"
        );
    }
    for (keyword, value) in [
        ("additionalProperties", "1"),
        ("items", "[true]"),
        ("if", "null"),
        ("allOf", "[1]"),
    ] {
        assert_eq!(
            kind(&format!(r#"{{"{keyword}": {value}}}"#)),
            K::NotASchema,
            "{keyword}"
        );
    }
}

#[test]
fn dialect_must_be_2020_12_at_the_root() {
    assert!(compile(r##"{"$schema": "https://json-schema.org/draft/2020-12/schema#"}"##).is_ok());
    assert_eq!(
        kind(r#"{"$schema": "http://json-schema.org/draft-07/schema#"}"#),
        K::UnsupportedDialect
    );
    assert_eq!(
        kind(r#"{"items": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}"#),
        K::UnsupportedDialect
    );
}

#[test]
fn boolean_schemas_are_allowed_wherever_a_schema_is() {
    assert!(compile("true").is_ok());
    assert!(compile("false").is_ok());
    assert!(
        compile(r#"{"properties": {"a": false}, "items": true, "anyOf": [false, true]}"#).is_ok()
    );
    assert_eq!(kind("1"), K::NotASchema);
    assert_eq!(kind("[]"), K::NotASchema);
}

#[test]
fn references_are_local_only() {
    assert_eq!(
        kind(r#"{"$ref": "http://example.com/s.json"}"#),
        K::RemoteReference
    );
    assert_eq!(kind(r#"{"$ref": "other.json#/a"}"#), K::RemoteReference);
    assert_eq!(
        kind(r##"{"items": {"$ref": "#/$defs/missing"}}"##),
        K::DanglingReference
    );
    assert_eq!(
        kind(r##"{"items": {"$ref": "#nowhere"}}"##),
        K::DanglingReference
    );
    assert_eq!(
        kind(r##"{"items": {"$ref": "#/enum/0"}, "enum": [1]}"##),
        K::DanglingReference
    );
    assert_eq!(
        kind(r##"{"items": {"$ref": "#/a~2"}}"##),
        K::InvalidReference
    );
    assert_eq!(
        kind(r##"{"items": {"$ref": "#/a%2"}}"##),
        K::InvalidReference
    );
    assert_eq!(
        kind(r##"{"items": {"$ref": "#a b"}}"##),
        K::InvalidReference
    );
    // Escapes: ~0, ~1 and percent-encoding all reach the same definitions.
    let ok = r##"{
        "$defs": {"a/b": true, "c~d": true, "e%f": true, "g h": true},
        "properties": {
            "1": {"$ref": "#/$defs/a~1b"},
            "2": {"$ref": "#/$defs/c~0d"},
            "3": {"$ref": "#/$defs/e%25f"},
            "4": {"$ref": "#/%24defs/g%20h"},
            "5": {"$ref": "#"}
        }
    }"##;
    assert!(compile(ok).is_ok(), "{:?}", compile(ok).err());
}

#[test]
fn anchors_are_unique() {
    assert_eq!(
        kind(r#"{"$defs": {"a": {"$anchor": "x"}, "b": {"$anchor": "x"}}}"#),
        K::DuplicateAnchor
    );
}

#[test]
fn in_place_cycles_fail_but_recursion_through_the_instance_compiles() {
    assert_eq!(kind(r##"{"$ref": "#"}"##), K::ReferenceCycle);
    assert_eq!(
        kind(
            r##"{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}}"##
        ),
        K::ReferenceCycle
    );
    assert_eq!(kind(r##"{"anyOf": [{"$ref": "#"}]}"##), K::ReferenceCycle);
    assert!(compile(r##"{"properties": {"next": {"$ref": "#"}}}"##).is_ok());
    assert!(compile(r##"{"items": {"$ref": "#"}}"##).is_ok());
}

fn nested_items(levels: usize) -> String {
    format!(
        "{}true{}",
        r#"{"items":"#.repeat(levels - 1),
        "}".repeat(levels - 1)
    )
}

#[test]
fn depth_64_at_and_past() {
    assert!(compile(&nested_items(64)).is_ok());
    let err = compile(&nested_items(65)).unwrap_err();
    assert_eq!(err.kind(), K::TooDeep);
}

fn many_nodes(count: usize) -> String {
    // The root plus count - 1 properties.
    let props: Vec<String> = (1..count).map(|i| format!(r#""p{i}": true"#)).collect();
    format!(r#"{{"properties": {{{}}}}}"#, props.join(","))
}

#[test]
fn nodes_4096_at_and_past() {
    let at = compile(&many_nodes(4096)).unwrap();
    assert_eq!(at.node_count(), 4096);
    assert_eq!(
        compile(&many_nodes(4097)).unwrap_err().kind(),
        K::TooManyNodes
    );
}

#[test]
fn keyword_bound_at_and_past() {
    let limits = SchemaLimits::default().with_max_keywords(3);
    let at = doc(r#"{"type": "object", "title": "t", "description": "d"}"#);
    assert!(CompiledSchema::compile_with(&at, &limits).is_ok());
    let past = doc(r#"{"type": "object", "title": "t", "description": "d", "format": "f"}"#);
    assert_eq!(
        CompiledSchema::compile_with(&past, &limits)
            .unwrap_err()
            .kind(),
        K::TooManyKeywords
    );
}

#[test]
fn tool_input_root_must_be_an_object_schema() {
    let ok = doc(r#"{"type": "object"}"#);
    assert!(CompiledSchema::compile_tool_input(&ok).is_ok());
    for bad in [
        "true",
        "{}",
        r#"{"type": ["object"]}"#,
        r#"{"type": "array"}"#,
    ] {
        let err = CompiledSchema::compile_tool_input(&doc(bad)).unwrap_err();
        assert_eq!(err.kind(), K::RootNotObject, "{bad}");
    }
    // The general compiler accepts any Profile 1 root.
    assert!(CompiledSchema::compile(&doc(r#"{"type": "array"}"#)).is_ok());
}

#[test]
fn mirrored_headers_are_declared_on_eligible_properties_only() {
    let s = CompiledSchema::compile_tool_input(&doc(r#"{"type": "object", "properties": {
            "tenant": {"type": "string", "x-mcp-header": "Tenant"},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"},
            "outer": {"type": "object", "properties": {
                "n/x": {"type": "integer", "x-mcp-header": "Nested-N"}
            }}
        }}"#))
    .unwrap();
    let h = s.mirrored_headers();
    assert_eq!(h.len(), 3);
    assert_eq!((h[0].suffix(), h[0].pointer()), ("Tenant", "/tenant"));
    assert_eq!(h[1].value_type(), HeaderValueType::Boolean);
    assert_eq!(h[2].pointer(), "/outer/n~1x");
    assert_eq!(h[2].path().len(), 2);
    assert_eq!(h[2].value_type(), HeaderValueType::Integer);

    let ineligible = [
        r#"{"type": "object", "x-mcp-header": "Root"}"#,
        r#"{"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}"#,
        r#"{"type": "object", "properties": {"a": {"type": ["string"], "x-mcp-header": "A"}}}"#,
        r#"{"type": "object", "properties": {"a": {"x-mcp-header": "A"}}}"#,
        r#"{"type": "object", "items": {"type": "string", "x-mcp-header": "A"}}"#,
        r#"{"type": "object", "$defs": {"a": {"type": "string", "x-mcp-header": "A"}}}"#,
        r#"{"type": "object", "allOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}"#,
        r#"{"type": "object", "properties": {"a": {"items": {"type": "string", "x-mcp-header": "A"}}}}"#,
    ];
    for text in ineligible {
        assert_eq!(kind(text), K::IneligibleHeader, "{text}");
    }
    for bad_name in [r#""""#, r#""Has Space""#, r#""Tenant:""#, "1", r#""Ünï""#] {
        let text = format!(
            r#"{{"type": "object", "properties": {{"a": {{"type": "string", "x-mcp-header": {bad_name}}}}}}}"#
        );
        assert_eq!(kind(&text), K::InvalidHeaderName, "{bad_name}");
    }
    assert_eq!(
        kind(
            r#"{"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "Tenant"},
                "b": {"type": "string", "x-mcp-header": "tenant"}}}"#
        ),
        K::DuplicateHeader
    );
}

#[test]
fn the_document_is_published_exactly() {
    let text =
        r#"{"type":"object","title":"T","properties":{"b":{"format":"uri"},"a":{"default":1.50}}}"#;
    let d = doc(text);
    let s = CompiledSchema::compile_tool_input(&d).unwrap();
    let written =
        tollgate_json::to_string(s.document(), &tollgate_json::OutputLimits::default()).unwrap();
    assert_eq!(written, text);
}
