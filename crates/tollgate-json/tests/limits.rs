//! Every reader limit: one input at the limit that passes and one just past it that fails with
//! the limit's own kind.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the report"
)]

use tollgate_json::{ErrorKind, JsonLimits, from_slice};

fn kind(input: &[u8], limits: &JsonLimits) -> Result<(), ErrorKind> {
    from_slice(input, limits).map(|_| ()).map_err(|e| e.kind())
}

fn quoted(body: &str) -> Vec<u8> {
    format!("\"{body}\"").into_bytes()
}

#[test]
fn input_bytes_default_ten_mebibytes() {
    let limits = JsonLimits::default();
    let at = format!("\"{}\"", "a".repeat(10 * 1024 * 1024 - 2));
    // The string itself would pass its own ceilings only if raised; the byte limit is checked first.
    let raised = limits.with_max_string_units(16 * 1024 * 1024).unwrap();
    assert_eq!(kind(at.as_bytes(), &raised), Ok(()));
    let past = format!("\"{}\"", "a".repeat(10 * 1024 * 1024 - 1));
    assert_eq!(
        kind(past.as_bytes(), &raised),
        Err(ErrorKind::InputTooLarge)
    );
}

/// `from_str` skips the UTF-8 check (its input is already a `str`) but not the size and byte
/// order mark checks before it: the same answers as `from_slice`, at the bound and one past.
#[test]
fn from_str_checks_size_and_byte_order_mark_as_from_slice_does() {
    let limits = JsonLimits::default().with_max_input_bytes(8).unwrap();
    for (text, expected) in [
        ("\"abcdef\"", Ok(())),
        ("\"abcdefg\"", Err(ErrorKind::InputTooLarge)),
        ("\u{feff}1", Err(ErrorKind::ByteOrderMark)),
        ("[\"\u{e9}\"]", Ok(())),
    ] {
        let from_str = tollgate_json::from_str(text, &limits)
            .map(|_| ())
            .map_err(|e| e.kind());
        assert_eq!(from_str, expected, "{text:?}");
        assert_eq!(kind(text.as_bytes(), &limits), expected, "{text:?}");
    }
}

#[test]
fn input_bytes_ceiling_sixteen_mebibytes() {
    let ceiling = JsonLimits::MAX_INPUT_BYTES_CEILING;
    assert_eq!(ceiling, 16 * 1024 * 1024);
    let limits = JsonLimits::default()
        .with_max_input_bytes(ceiling)
        .unwrap()
        .with_max_string_units(16 * 1024 * 1024)
        .unwrap();
    let at = format!("\"{}\"", "a".repeat(ceiling - 2));
    assert_eq!(kind(at.as_bytes(), &limits), Ok(()));
    let past = format!("\"{}\"", "a".repeat(ceiling - 1));
    assert_eq!(
        kind(past.as_bytes(), &limits),
        Err(ErrorKind::InputTooLarge)
    );
    assert_eq!(
        JsonLimits::default()
            .with_max_input_bytes(ceiling + 1)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidConfiguration
    );
    assert!(JsonLimits::default().with_max_input_bytes(0).is_err());
}

#[test]
fn depth_128() {
    let limits = JsonLimits::default();
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert_eq!(kind(nest(128).as_bytes(), &limits), Ok(()));
    assert_eq!(
        kind(nest(129).as_bytes(), &limits),
        Err(ErrorKind::DepthLimit)
    );
    let objects = |n: usize| format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n));
    assert_eq!(kind(objects(128).as_bytes(), &limits), Ok(()));
    assert_eq!(
        kind(objects(129).as_bytes(), &limits),
        Err(ErrorKind::DepthLimit)
    );
}

#[test]
fn nodes_100_000_every_value_counts() {
    let limits = JsonLimits::default();
    // One array plus n - 1 elements is n values.
    let doc = |n: usize| format!("[{}]", vec!["0"; n - 1].join(","));
    assert_eq!(kind(doc(100_000).as_bytes(), &limits), Ok(()));
    assert_eq!(
        kind(doc(100_001).as_bytes(), &limits),
        Err(ErrorKind::NodeLimit)
    );
    // Containers count too.
    let objs = |n: usize| format!("[{}]", vec!["{}"; n - 1].join(","));
    assert_eq!(kind(objs(100_000).as_bytes(), &limits), Ok(()));
    assert_eq!(
        kind(objs(100_001).as_bytes(), &limits),
        Err(ErrorKind::NodeLimit)
    );
}

#[test]
fn escaped_newlines_fit_at_524_288() {
    let limits = JsonLimits::default();
    assert_eq!(kind(&quoted(&"\\n".repeat(524_288)), &limits), Ok(()));
    assert_eq!(
        kind(&quoted(&"\\n".repeat(524_289)), &limits),
        Err(ErrorKind::StringTokenLimit)
    );
}

#[test]
fn plain_string_decoded_and_token_units() {
    let limits = JsonLimits::default();
    assert_eq!(kind(&quoted(&"a".repeat(1_048_576)), &limits), Ok(()));
    assert_eq!(
        kind(&quoted(&"a".repeat(1_048_577)), &limits),
        Err(ErrorKind::StringTokenLimit)
    );
}

#[test]
fn unicode_escapes_cost_six_tokens_per_unit() {
    let limits = JsonLimits::default();
    // 174,762 × 6 = 1,048,572 token units; one more escape is 1,048,578.
    assert_eq!(kind(&quoted(&"\\u0061".repeat(174_762)), &limits), Ok(()));
    assert_eq!(
        kind(&quoted(&"\\u0061".repeat(174_763)), &limits),
        Err(ErrorKind::StringTokenLimit)
    );
    // A surrogate pair escape costs 12 tokens for 2 decoded units.
    assert_eq!(
        kind(&quoted(&"\\uD83D\\uDE80".repeat(87_381)), &limits),
        Ok(())
    );
    assert_eq!(
        kind(&quoted(&"\\uD83D\\uDE80".repeat(87_382)), &limits),
        Err(ErrorKind::StringTokenLimit)
    );
}

#[test]
fn supplementary_characters_cost_two_and_two() {
    let limits = JsonLimits::default();
    assert_eq!(kind(&quoted(&"🚀".repeat(524_288)), &limits), Ok(()));
    assert_eq!(
        kind(&quoted(&"🚀".repeat(524_289)), &limits),
        Err(ErrorKind::StringTokenLimit)
    );
}

#[test]
fn configured_string_ceiling_counts_escape_tokens() {
    // Incoming decoded units never exceed token units, so the token ceiling binds first; escapes
    // cost their spelling, not their decoded length.
    let limits = JsonLimits::default().with_max_string_units(8).unwrap();
    assert_eq!(kind(&quoted("abcdefgh"), &limits), Ok(()));
    assert_eq!(
        kind(&quoted("abcdefghi"), &limits),
        Err(ErrorKind::StringTokenLimit)
    );
    assert_eq!(kind(&quoted("\\n\\n\\n\\n"), &limits), Ok(()));
    assert_eq!(
        kind(&quoted("\\n\\n\\n\\na"), &limits),
        Err(ErrorKind::StringTokenLimit)
    );
}

#[test]
fn member_names_are_bounded_like_strings() {
    let limits = JsonLimits::default();
    let obj = |name: String| format!("{{\"{name}\":1}}").into_bytes();
    assert_eq!(kind(&obj("\\n".repeat(524_288)), &limits), Ok(()));
    assert_eq!(
        kind(&obj("\\n".repeat(524_289)), &limits),
        Err(ErrorKind::StringTokenLimit)
    );
}

#[test]
fn bounds_hold_inside_the_byte_limit() {
    // A tiny document can still exceed depth and nodes when those are configured low.
    let limits = JsonLimits::default()
        .with_max_depth(2)
        .unwrap()
        .with_max_nodes(3)
        .unwrap();
    assert_eq!(kind(b"[[1]]", &limits), Ok(()));
    assert_eq!(kind(b"[[[]]]", &limits), Err(ErrorKind::DepthLimit));
    assert_eq!(kind(b"[1,2,3]", &limits), Err(ErrorKind::NodeLimit));
}

#[test]
fn huge_exponents_are_cheap() {
    let limits = JsonLimits::default();
    let v = from_slice(b"[1e999999999, -1E+999999999999999999]", &limits).unwrap();
    let n = v.as_array().unwrap()[0].as_number().unwrap();
    assert_eq!(n.integer_spelling_len(), Some(1_000_000_000));
    assert_eq!(
        kind(b"1e1000000000000000000", &limits),
        Err(ErrorKind::NumberExponentLimit)
    );
}

#[test]
fn configuration_ceilings_at_and_past() {
    let d = JsonLimits::default();
    assert!(d.with_max_depth(JsonLimits::MAX_DEPTH_CEILING).is_ok());
    assert!(d.with_max_depth(JsonLimits::MAX_DEPTH_CEILING + 1).is_err());
    assert!(d.with_max_nodes(JsonLimits::MAX_NODES_CEILING).is_ok());
    assert!(d.with_max_nodes(JsonLimits::MAX_NODES_CEILING + 1).is_err());
    assert!(
        d.with_max_string_units(JsonLimits::MAX_STRING_UNITS_CEILING)
            .is_ok()
    );
    assert!(
        d.with_max_string_units(JsonLimits::MAX_STRING_UNITS_CEILING + 1)
            .is_err()
    );
    for zero in [
        d.with_max_depth(0),
        d.with_max_nodes(0),
        d.with_max_string_units(0),
    ] {
        assert_eq!(zero.unwrap_err().kind(), ErrorKind::InvalidConfiguration);
    }
    let o = tollgate_json::OutputLimits::default();
    assert!(o.with_max_output_bytes(16 * 1024 * 1024).is_ok());
    assert!(o.with_max_output_bytes(16 * 1024 * 1024 + 1).is_err());
}

#[test]
fn output_depth_512_at_and_past() {
    use tollgate_json::{JsonValue, OutputLimits, to_vec};
    let nest = |levels: usize| {
        let mut v = JsonValue::from(Vec::new());
        for _ in 1..levels {
            v = JsonValue::from(vec![v]);
        }
        v
    };
    let limits = OutputLimits::default();
    assert_eq!(limits.max_depth(), 512);
    assert!(to_vec(&nest(512), &limits).is_ok());
    assert_eq!(
        to_vec(&nest(513), &limits).unwrap_err().kind(),
        ErrorKind::DepthLimit
    );
    // The deepest readable document is also writable and reads back.
    let read_limits = JsonLimits::default().with_max_depth(512).unwrap();
    let written = to_vec(&nest(512), &limits).unwrap();
    assert!(from_slice(&written, &read_limits).is_ok());
}
