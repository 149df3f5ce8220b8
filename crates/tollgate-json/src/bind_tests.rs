use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;

use crate::{BindLimits, ErrorKind, JsonLimits, JsonValue, from_slice, from_value};

fn v(s: &str) -> JsonValue {
    from_slice(s.as_bytes(), &JsonLimits::default()).unwrap()
}
fn bind<'de, T: Deserialize<'de>>(value: &'de JsonValue) -> Result<T, crate::Error> {
    from_value(value, &BindLimits::default())
}
fn search_kind(s: &str) -> ErrorKind {
    let value = v(s);
    bind::<Search<'_>>(&value).unwrap_err().kind()
}
fn kind<T: for<'de> Deserialize<'de> + std::fmt::Debug>(s: &str) -> ErrorKind {
    let value = v(s);
    bind::<T>(&value).unwrap_err().kind()
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Search<'a> {
    query: &'a str,
    limit: Option<u16>,
    #[serde(default)]
    tags: Vec<String>,
    sort: Option<Sort>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Sort {
    Price,
    Name,
}

#[derive(Debug, Deserialize, PartialEq)]
enum Shape {
    Circle { r: f64 },
    Square(u32),
    Empty,
}

#[test]
fn binds_records_options_sequences_maps_and_enums() {
    let value = v(r#"{"query": "mug", "limit": 10.0, "tags": ["a", "b"], "sort": "price"}"#);
    let s: Search<'_> = bind(&value).unwrap();
    assert_eq!(
        s,
        Search {
            query: "mug",
            limit: Some(10),
            tags: vec!["a".into(), "b".into()],
            sort: Some(Sort::Price)
        }
    );
    let value = v(r#"{"query": "x", "limit": null}"#);
    let s: Search<'_> = bind(&value).unwrap();
    assert_eq!((s.limit, s.sort, s.tags.len()), (None, None, 0));

    let m: HashMap<String, i64> = bind(&v(r#"{"a": 1, "b": -2e0}"#)).unwrap();
    assert_eq!(m["b"], -2);
    let m: BTreeMap<String, Vec<bool>> = bind(&v(r#"{"x": [true, false]}"#)).unwrap();
    assert_eq!(m["x"], [true, false]);

    let shapes: Vec<Shape> = bind(&v(
        r#"[{"Circle": {"r": 1.5}}, {"Square": 2}, "Empty", {"Empty": null}]"#,
    ))
    .unwrap();
    assert_eq!(
        shapes,
        [
            Shape::Circle { r: 1.5 },
            Shape::Square(2),
            Shape::Empty,
            Shape::Empty
        ]
    );
    let t: (u8, String, f32) = bind(&v(r#"[1, "two", 3.5]"#)).unwrap();
    assert_eq!(t, (1, "two".to_owned(), 3.5));
    let c: char = bind(&v(r#""é""#)).unwrap();
    assert_eq!(c, 'é');
    let any: JsonValue = bind(&v(r#"{"n": [1, 2.5, null, "s"]}"#)).unwrap();
    assert_eq!(any, v(r#"{"n": [1, 2.5, null, "s"]}"#));
}

#[test]
fn integers_bind_exactly_and_by_value() {
    assert_eq!(bind::<i64>(&v("1.0")).unwrap(), 1);
    assert_eq!(bind::<i64>(&v("1e0")).unwrap(), 1);
    assert_eq!(bind::<i64>(&v("-0")).unwrap(), 0);
    assert_eq!(bind::<u64>(&v("-0")).unwrap(), 0);
    assert_eq!(bind::<i64>(&v("9223372036854775807")).unwrap(), i64::MAX);
    assert_eq!(
        kind::<i64>("9223372036854775808"),
        ErrorKind::NumberOutOfRange
    );
    assert_eq!(bind::<u64>(&v("9223372036854775808")).unwrap(), 1 << 63);
    assert_eq!(kind::<u64>("-1"), ErrorKind::NumberOutOfRange);
    assert_eq!(kind::<u8>("256"), ErrorKind::NumberOutOfRange);
    assert_eq!(kind::<i8>("-129"), ErrorKind::NumberOutOfRange);
    assert_eq!(
        bind::<i128>(&v("-170141183460469231731687303715884105728")).unwrap(),
        i128::MIN
    );
    assert_eq!(
        bind::<u128>(&v("3.40282366920938463463374607431768211455e38")).unwrap(),
        u128::MAX
    );
    assert_eq!(kind::<i64>("1.5"), ErrorKind::TypeMismatch);
    assert_eq!(kind::<i64>("\"1\""), ErrorKind::TypeMismatch);
    assert_eq!(kind::<f64>("1e400"), ErrorKind::NumberOutOfRange);
    assert_eq!(bind::<f64>(&v("1e1")).unwrap(), 10.0);
}

#[test]
fn integer_length_1024_at_and_past() {
    // At the bound the length is accepted and only the range fails; past it the length fails
    // first, by arithmetic on the exponent.
    assert_eq!(kind::<u128>("1e1023"), ErrorKind::NumberOutOfRange);
    assert_eq!(kind::<u128>("1e1024"), ErrorKind::IntegerTooLong);
    assert_eq!(kind::<i128>("-1e1022"), ErrorKind::NumberOutOfRange);
    assert_eq!(kind::<i128>("-1e1023"), ErrorKind::IntegerTooLong);
    assert_eq!(kind::<i64>("1e9999"), ErrorKind::IntegerTooLong);
    assert_eq!(kind::<i64>("1e999999999"), ErrorKind::IntegerTooLong);
    let limits = BindLimits::default().with_max_integer_chars(3);
    assert_eq!(from_value::<i64>(&v("999"), &limits).unwrap(), 999);
    assert_eq!(from_value::<i64>(&v("-99"), &limits).unwrap(), -99);
    assert_eq!(
        from_value::<i64>(&v("-100"), &limits).unwrap_err().kind(),
        ErrorKind::IntegerTooLong
    );
}

#[test]
fn total_integer_characters_at_and_past() {
    // Each integer of a fixed-width target has at most 40 characters, so the default total of
    // 4,194,304 cannot be reached inside the default 100,000-node bound; the same rule is shown
    // with a lowered total. Values count each time they are converted.
    let limits = BindLimits::default().with_max_total_integer_chars(12);
    let fits = v("[1234, -123, 5678]");
    assert_eq!(
        from_value::<Vec<i64>>(&fits, &limits).unwrap(),
        [1234, -123, 5678]
    );
    let past = v("[1234, -123, 56789]");
    let err = from_value::<Vec<i64>>(&past, &limits).unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::IntegerBudget, 3));
    assert_eq!(BindLimits::default().max_total_integer_chars(), 4_194_304);
}

#[test]
fn nodes_at_and_past() {
    let limits = BindLimits::default().with_max_nodes(4);
    assert!(from_value::<Vec<u8>>(&v("[1, 2, 3]"), &limits).is_ok());
    let err = from_value::<Vec<u8>>(&v("[1, 2, 3, 4]"), &limits).unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::NodeLimit, 4));
    let big = v(&format!("[{}]", vec!["0"; 99_999].join(",")));
    assert!(bind::<Vec<u8>>(&big).is_ok());
    let bigger = from_slice(
        format!("[{}]", vec!["0"; 100_000].join(",")).as_bytes(),
        &JsonLimits::default().with_max_nodes(200_000).unwrap(),
    )
    .unwrap();
    assert_eq!(
        bind::<Vec<u8>>(&bigger).unwrap_err().kind(),
        ErrorKind::NodeLimit
    );
}

#[test]
fn structural_failures_have_their_own_kinds() {
    assert_eq!(search_kind(r#"{"limit": 1}"#), ErrorKind::MissingField);
    assert_eq!(
        search_kind(r#"{"query": "q", "extra": 1}"#),
        ErrorKind::UnknownField
    );
    assert_eq!(
        search_kind(r#"{"query": "q", "sort": "size"}"#),
        ErrorKind::UnknownVariant
    );
    assert_eq!(kind::<(u8, u8)>("[1]"), ErrorKind::InvalidLength);
    assert_eq!(kind::<char>(r#""ab""#), ErrorKind::InvalidValue);
    assert_eq!(search_kind("[]"), ErrorKind::TypeMismatch);
    assert_eq!(
        kind::<Shape>(r#"{"Circle": {"r": 1}, "Square": 2}"#),
        ErrorKind::InvalidLength
    );
}

#[test]
fn errors_point_at_the_value_and_never_quote_it() {
    let value = v(r#"{"query": "q", "tags": ["ok", 7]}"#);
    let err = bind::<Search<'_>>(&value).unwrap_err();
    // Values in document order: 0 the object, 1 "q", 2 the array, 3 "ok", 4 the 7.
    assert_eq!((err.kind(), err.offset()), (ErrorKind::TypeMismatch, 4));
    let marker = "MARKER-3f9c";
    let value = v(&format!(r#"{{"query": "q", "sort": "{marker}"}}"#));
    let err = bind::<Search<'_>>(&value).unwrap_err();
    assert!(!err.to_string().contains(marker));
    assert!(!format!("{err:?}").contains(marker));
    #[derive(Debug)]
    struct Picky;
    impl<'de> Deserialize<'de> for Picky {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let s = <&str>::deserialize(d)?;
            Err(serde::de::Error::custom(format!("I refuse {s}")))
        }
    }
    let value = v(&format!(r#""{marker}""#));
    let err = from_value::<Picky>(&value, &BindLimits::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    assert!(!err.to_string().contains(marker));
}
