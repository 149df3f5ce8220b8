use tollgate_json::{JsonLimits, JsonValue, from_str};

use crate::{CompiledSchema, EvaluationGate, SchemaLimits, ValidationErrorKind as V};

fn doc(s: &str) -> JsonValue {
    from_str(s, &JsonLimits::default()).unwrap()
}
fn schema(s: &str) -> CompiledSchema {
    CompiledSchema::compile(&doc(s)).unwrap()
}
/// Checks each instance: `true` means valid.
fn check(schema_text: &str, cases: &[(&str, bool)]) {
    let s = schema(schema_text);
    for (instance, expected) in cases {
        let result = s.validate(&doc(instance));
        assert_eq!(
            result.is_ok(),
            *expected,
            "{schema_text} on {instance}: {result:?}"
        );
        if let Err(e) = result {
            assert_eq!(e.kind(), V::Invalid);
        }
    }
}

#[test]
fn type_with_integer_valued_numbers() {
    check(
        r#"{"type": "integer"}"#,
        &[
            ("1", true),
            ("1.0", true),
            ("1e3", true),
            ("-0", true),
            ("1.5", false),
            ("\"1\"", false),
        ],
    );
    check(
        r#"{"type": "number"}"#,
        &[("1", true), ("1.5", true), ("null", false)],
    );
    check(
        r#"{"type": ["string", "null"]}"#,
        &[("\"a\"", true), ("null", true), ("0", false)],
    );
    check(r#"{"type": "object"}"#, &[("{}", true), ("[]", false)]);
    check(r#"{"type": "array"}"#, &[("[]", true), ("{}", false)]);
    check(r#"{"type": "boolean"}"#, &[("false", true), ("0", false)]);
    check(r#"{"type": "null"}"#, &[("null", true), ("false", false)]);
    check(r#"{"type": "string"}"#, &[("\"\"", true), ("1", false)]);
}

#[test]
fn enum_and_const_use_json_equality() {
    check(
        r#"{"enum": [1, "a", {"k": [1.0]}, null]}"#,
        &[
            ("1.0", true),
            ("10e-1", true),
            ("\"a\"", true),
            ("{\"k\": [1]}", true),
            ("null", true),
            ("true", false),
            ("{\"k\": [1], \"x\": 1}", false),
            ("\"1\"", false),
        ],
    );
    check(
        r#"{"const": {"a": 1, "b": [false]}}"#,
        &[
            ("{\"b\": [false], \"a\": 1.00}", true),
            ("{\"a\": 1}", false),
            ("{\"a\": 1, \"b\": [0]}", false),
        ],
    );
    check(r#"{"const": false}"#, &[("false", true), ("0", false)]);
    check(
        r#"{"const": 0}"#,
        &[("-0", true), ("0.0", true), ("false", false)],
    );
    check(r#"{"enum": []}"#, &[("1", false)]);
}

#[test]
fn minimum_and_maximum_are_exact() {
    check(
        r#"{"minimum": 0.1, "maximum": 18446744073709551616}"#,
        &[
            ("0.1", true),
            ("0.09999999999999999999999", false),
            ("18446744073709551616", true),
            ("18446744073709551616.0000000001", false),
            ("1e19", true),
            ("1e20", false),
            ("\"not a number\"", true),
        ],
    );
    check(
        r#"{"minimum": -1e999999999}"#,
        &[("-1e999999998", true), ("-2e999999999", false)],
    );
}

#[test]
fn required_properties_additional_properties() {
    check(
        r#"{"properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["a"], "additionalProperties": {"type": "boolean"}}"#,
        &[
            (r#"{"a": "x"}"#, true),
            (r#"{"a": "x", "b": 2, "c": true}"#, true),
            (r#"{"b": 2}"#, false),
            (r#"{"a": 1}"#, false),
            (r#"{"a": "x", "c": 1}"#, false),
            ("[1]", true),
        ],
    );
    check(
        r#"{"additionalProperties": false}"#,
        &[("{}", true), (r#"{"a": 1}"#, false)],
    );
    check(
        r#"{"properties": {"é": true, "🚀": false}, "additionalProperties": false}"#,
        &[
            (r#"{"é": 1}"#, true),
            (r#"{"🚀": 1}"#, false),
            (r#"{"e": 1}"#, false),
        ],
    );
}

#[test]
fn items_apply_to_every_element() {
    check(
        r#"{"items": {"type": "integer"}}"#,
        &[
            ("[]", true),
            ("[1, 2.0]", true),
            ("[1, \"2\"]", false),
            ("{\"0\": \"x\"}", true),
        ],
    );
    check(r#"{"items": false}"#, &[("[]", true), ("[1]", false)]);
}

#[test]
fn all_of_any_of_if_then_else() {
    check(
        r#"{"allOf": [{"minimum": 1}, {"maximum": 3}]}"#,
        &[("2", true), ("0", false), ("4", false)],
    );
    check(
        r#"{"anyOf": [{"type": "string"}, {"minimum": 10}]}"#,
        &[("\"a\"", true), ("11", true), ("5", false)],
    );
    check(
        r#"{"if": {"type": "integer"}, "then": {"minimum": 0}, "else": {"type": "string"}}"#,
        &[("1", true), ("-1", false), ("\"x\"", true), ("1.5", false)],
    );
    check(r#"{"then": false}"#, &[("1", true)]);
    check(r#"{"else": false}"#, &[("1", true)]);
    check(r#"{"if": false, "then": false}"#, &[("1", true)]);
}

#[test]
fn references_anchors_and_recursion() {
    let tree = r##"{
        "$defs": {"node": {"$anchor": "node", "type": "object",
            "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#node"}}},
            "required": ["value"]}},
        "$ref": "#/$defs/node"
    }"##;
    check(
        tree,
        &[
            (
                r#"{"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}"#,
                true,
            ),
            (
                r#"{"value": 1, "children": [{"value": 2, "children": [{"value": "3"}]}]}"#,
                false,
            ),
            (r#"{"children": []}"#, false),
        ],
    );
    // $ref with siblings: both apply.
    check(
        r##"{"$defs": {"min": {"minimum": 1}}, "$ref": "#/$defs/min", "maximum": 2}"##,
        &[("1", true), ("3", false), ("0", false)],
    );
    check(
        r##"{"$defs": {"no": false}, "$ref": "#/$defs/no"}"##,
        &[("1", false)],
    );
}

#[test]
fn annotations_are_never_asserted() {
    check(
        r#"{"format": "email", "title": "t", "default": 5, "examples": [1], "readOnly": true,
            "deprecated": true, "$comment": "c"}"#,
        &[("\"not an email\"", true), ("1", true)],
    );
}

#[test]
fn diagnostics_name_the_instance_path_and_keyword() {
    let s = schema(r#"{"properties": {"a/b": {"items": {"type": "string"}}}}"#);
    let err = s.validate(&doc(r#"{"a/b": ["x", 1]}"#)).unwrap_err();
    let d = err.diagnostic().unwrap();
    assert_eq!(d.keyword(), "type");
    assert_eq!(d.schema_location(), "/properties/a~1b/items");
    assert_eq!(d.instance_pointer(), "/a~1b/1");
    // A `false` schema reports where it stands.
    let s = schema(r#"{"properties": {"gone": false}}"#);
    let err = s.validate(&doc(r#"{"gone": 1}"#)).unwrap_err();
    assert_eq!(err.diagnostic().unwrap().keyword(), "false");
    assert_eq!(
        err.diagnostic().unwrap().schema_location(),
        "/properties/gone"
    );
    // A failing anyOf reports the anyOf itself, not a suppressed branch.
    let s = schema(r#"{"properties": {"x": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}"#);
    let err = s.validate(&doc(r#"{"x": 1}"#)).unwrap_err();
    assert_eq!(err.diagnostic().unwrap().keyword(), "anyOf");
    assert_eq!(err.diagnostic().unwrap().instance_pointer(), "/x");
}

/// Operations for `{"items": true}` over an array of `n` elements: the root visit, then per
/// element one element visit and one schema visit.
fn items_ops(n: u64) -> u64 {
    1 + 2 * n
}

#[test]
fn budget_at_and_past_the_limit() {
    let n = 1000;
    let instance = doc(&format!("[{}]", vec!["0"; n].join(",")));
    let budget = items_ops(n as u64);
    let at = CompiledSchema::compile_with(
        &doc(r#"{"items": true}"#),
        &SchemaLimits::default().with_max_operations(budget),
    )
    .unwrap();
    assert!(at.validate(&instance).is_ok());
    let past = CompiledSchema::compile_with(
        &doc(r#"{"items": true}"#),
        &SchemaLimits::default().with_max_operations(budget - 1),
    )
    .unwrap();
    assert_eq!(
        past.validate(&instance).unwrap_err().kind(),
        V::BudgetExhausted
    );
}

#[test]
fn one_million_operations_exhaust_even_a_valid_instance() {
    // 99,999 elements; each costs 2 + 10 (allOf of ten `true`s) operations: ~1.2 million.
    let s = schema(&format!(
        r#"{{"items": {{"allOf": [{}]}}}}"#,
        ["true"; 10].join(",")
    ));
    let big = doc(&format!("[{}]", vec!["0"; 99_999].join(",")));
    assert_eq!(s.validate(&big).unwrap_err().kind(), V::BudgetExhausted);
    // The same schema on a smaller instance is valid: the exhaustion is about work, not validity.
    let small = doc(&format!("[{}]", vec!["0"; 50_000].join(",")));
    assert!(s.validate(&small).is_ok());
}

#[test]
fn equality_and_member_ordering_are_charged() {
    // Ten 50-member enum objects that differ only in their last member, and 1,900 instance
    // objects equal to the last entry: each element compares (and orders members) to the end of
    // nine entries before matching the tenth, about 3,000 operations per element and several
    // million in all, inside the 100,000-node bound. The instance is valid; the budget still ends
    // the evaluation.
    let object = |last: usize| {
        let members: Vec<String> = (0..49).map(|i| format!(r#""k{i}": {i}"#)).collect();
        format!("{{{}, \"k49\": {last}}}", members.join(","))
    };
    let entries: Vec<String> = (0..10).map(object).collect();
    let s = schema(&format!(
        r#"{{"items": {{"enum": [{}]}}}}"#,
        entries.join(",")
    ));
    let many = doc(&format!("[{}]", vec![object(9); 1_900].join(",")));
    assert_eq!(s.validate(&many).unwrap_err().kind(), V::BudgetExhausted);
    let few = doc(&format!("[{}]", vec![object(9); 20].join(",")));
    assert!(s.validate(&few).is_ok());
    let wrong = doc(&format!("[{}]", vec![object(10); 20].join(",")));
    assert_eq!(s.validate(&wrong).unwrap_err().kind(), V::Invalid);
}

#[test]
fn recursion_is_bounded() {
    let limits = JsonLimits::default().with_max_depth(512).unwrap();
    let nest =
        |n: usize| from_str(&format!("{}{}", "[".repeat(n), "]".repeat(n)), &limits).unwrap();
    // A reference-only `items` is resolved at compile time: one frame per level, so even the
    // deepest readable instance stays within the evaluation bound.
    let direct = schema(r##"{"items": {"$ref": "#"}}"##);
    assert!(direct.validate(&nest(512)).is_ok());
    // Wrapped in allOf, each level costs two frames: the bound stops evaluation instead of the
    // stack growing, and the outcome is the budget's.
    // The root is visited at depth 0 and each array level adds two frames, so the innermost of
    // 256 levels sits at depth 510 and of 257 levels at 512, the bound.
    let wrapped = schema(r##"{"items": {"allOf": [{"$ref": "#"}]}}"##);
    assert_eq!(SchemaLimits::MAX_EVALUATION_DEPTH, 512);
    assert!(wrapped.validate(&nest(256)).is_ok());
    assert_eq!(
        wrapped.validate(&nest(257)).unwrap_err().kind(),
        V::BudgetExhausted
    );
    assert_eq!(
        wrapped.validate(&nest(512)).unwrap_err().kind(),
        V::BudgetExhausted
    );
}

#[test]
fn concurrency_gate_refuses_immediately() {
    static GATE: EvaluationGate = EvaluationGate::new(2);
    let s = schema("true");
    let one = GATE.try_acquire().unwrap();
    assert!(s.validate_in(&doc("1"), &GATE).is_ok());
    let two = GATE.try_acquire().unwrap();
    assert_eq!(s.validate_in(&doc("1"), &GATE).unwrap_err().kind(), V::Busy);
    assert!(GATE.try_acquire().is_none());
    drop(one);
    assert!(s.validate_in(&doc("1"), &GATE).is_ok());
    drop(two);
    assert_eq!(GATE.active(), 0);
}

#[test]
fn default_gate_is_128() {
    let gate = EvaluationGate::new(EvaluationGate::DEFAULT_MAX_ACTIVE);
    let held: Vec<_> = (0..128).map(|_| gate.try_acquire().unwrap()).collect();
    assert_eq!(
        schema("true")
            .validate_in(&doc("1"), &gate)
            .unwrap_err()
            .kind(),
        V::Busy
    );
    drop(held);
    assert!(schema("true").validate_in(&doc("1"), &gate).is_ok());
    assert_eq!(EvaluationGate::global().max_active(), 128);
}
