//! Property tests: write → read is the identity, equal numbers hash equal, UTF-8 is judged as
//! the standard library judges it, and no input panics.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the report"
)]

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use proptest::prelude::*;
use tollgate_json::{
    ErrorKind, JsonArray, JsonLimits, JsonNumber, JsonObject, JsonValue, OutputLimits, from_slice,
    to_vec,
};

fn number() -> impl Strategy<Value = JsonNumber> {
    prop_oneof![
        any::<i64>().prop_map(JsonNumber::from),
        any::<u128>().prop_map(JsonNumber::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| JsonNumber::from_f64(f).unwrap()),
        ("-?(0|[1-9][0-9]{0,30})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,6})?")
            .prop_map(|s| JsonNumber::parse(&s).unwrap()),
    ]
}

fn value() -> impl Strategy<Value = JsonValue> {
    let leaf = prop_oneof![
        Just(JsonValue::Null),
        any::<bool>().prop_map(JsonValue::Bool),
        number().prop_map(JsonValue::Number),
        any::<String>().prop_map(JsonValue::from),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8)
                .prop_map(|v| JsonValue::Array(JsonArray::from(v))),
            prop::collection::vec((any::<String>(), inner), 0..20)
                .prop_map(|m| JsonValue::Object(m.into_iter().collect::<JsonObject>())),
        ]
    })
}

fn hash<T: Hash>(t: &T) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn write_then_read_is_identity(v in value()) {
        let bytes = to_vec(&v, &OutputLimits::default()).unwrap();
        let back = from_slice(&bytes, &JsonLimits::default()).unwrap();
        prop_assert!(v.is_identical(&back));
        prop_assert_eq!(&v, &back);
        prop_assert_eq!(hash(&v), hash(&back));
    }

    #[test]
    fn equal_numbers_hash_equal(
        negative in any::<bool>(),
        digits in "[1-9][0-9]{0,25}",
        exponent in -1000i64..1000,
        shift in 0usize..30,
    ) {
        // The same value spelled two ways: d × 10^e and (d followed by `shift` zeros) × 10^(e-shift),
        // the second as a fraction when that is possible.
        let sign = if negative { "-" } else { "" };
        let a = JsonNumber::parse(&format!("{sign}{digits}e{exponent}")).unwrap();
        let padded = format!("{digits}{}", "0".repeat(shift));
        let b = JsonNumber::parse(&format!("{sign}{padded}E{:+}", exponent - shift as i64)).unwrap();
        let split = 1.min(padded.len() - 1);
        let c = JsonNumber::parse(&format!(
            "{sign}{}.{}e{}",
            &padded[..split.max(1)],
            &padded[split.max(1)..].to_owned().chars().chain(std::iter::once('0')).collect::<String>(),
            exponent - shift as i64 + (padded.len() - split.max(1)) as i64
        ))
        .unwrap();
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(hash(&a), hash(&b));
        prop_assert_eq!(&a, &c);
        prop_assert_eq!(hash(&a), hash(&c));
        prop_assert_eq!(a.cmp(&b), std::cmp::Ordering::Equal);
    }

    #[test]
    fn ordering_agrees_with_f64_where_exact(x in any::<i32>(), y in any::<i32>()) {
        let (a, b) = (JsonNumber::from(x), JsonNumber::parse(&format!("{y}.0")).unwrap());
        prop_assert_eq!(a.cmp(&b), x.cmp(&y));
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = from_slice(&bytes, &JsonLimits::default());
    }

    /// UTF-8 is validated with vector code: a string of valid UTF-8 text, in half the cases with
    /// one stray byte, surrogate, overlong form or sequence cut short put somewhere in it,
    /// sometimes with its closing quote and even its last bytes cut off, past its 64-byte blocks,
    /// reads exactly when the standard library accepts it and is refused at the byte it names.
    #[test]
    fn utf8_is_judged_as_the_standard_library_judges_it(
        mut pieces in prop::collection::vec(
            prop::sample::select(vec!["a", "\u{e9}", "\u{20ac}", "\u{1f680}", "\u{7ff}", "\u{10ffff}"])
                .prop_map(|s| s.as_bytes().to_vec()),
            0..160,
        ),
        bad in prop::option::of((
            any::<prop::sample::Index>(),
            prop_oneof![
                prop::collection::vec(0x80u8..=0xFF, 1..4),
                prop::sample::select(vec![
                    b"\xED\xA0\x80".to_vec(),
                    b"\xC0\xAF".to_vec(),
                    b"\xF4\x90\x80\x80".to_vec(),
                    b"\xE2\x82".to_vec(),
                ]),
            ],
        )),
        pad in 0usize..130,
        cut in 0usize..4,
    ) {
        if let Some((at, piece)) = bad {
            let at = at.index(pieces.len() + 1);
            pieces.insert(at, piece);
        }
        let mut doc = b"\"".to_vec();
        doc.extend(std::iter::repeat_n(b'x', pad));
        for piece in &pieces {
            doc.extend_from_slice(piece);
        }
        // 0: closed; 1: unclosed; 2, 3: unclosed and the last one or two bytes cut off.
        if cut == 0 {
            doc.push(b'"');
        } else {
            doc.truncate(doc.len().saturating_sub(cut - 1).max(1));
        }
        let read = from_slice(&doc, &JsonLimits::default());
        match std::str::from_utf8(&doc) {
            Ok(text) if cut == 0 => {
                let value = read.unwrap();
                prop_assert_eq!(value.as_str(), Some(&text[1..text.len() - 1]));
            }
            Ok(_) => prop_assert_eq!(read.unwrap_err().kind(), ErrorKind::UnexpectedEnd),
            Err(e) => {
                let err = read.unwrap_err();
                prop_assert_eq!(err.kind(), ErrorKind::InvalidUtf8);
                prop_assert_eq!(err.offset(), e.valid_up_to());
            }
        }
    }

    #[test]
    fn json_like_bytes_never_panic(s in "[\\[\\]{}\":,0-9eE+\\-.\\\\u tfrnal]{0,200}") {
        let _ = from_slice(s.as_bytes(), &JsonLimits::default());
    }
}
