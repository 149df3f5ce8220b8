//! Differential: `tollgate-json` against `serde_json` on arbitrary bytes. Within Tollgate's
//! limits (depth lowered to 100, inside serde_json's recursion limit) both accept or both
//! reject, and an accepted document is the same tree: member order and names, strings exactly,
//! integers exactly, other numbers equal as correctly rounded `f64` (serde_json with
//! `float_roundtrip`). Intended differences, checked rather than skipped: Tollgate refuses a
//! duplicate member name (serde_json's parse must then show one), and keeps numbers exactly where
//! serde_json refuses them as out of `f64` range. Tollgate's own limit errors are not compared.

#![no_main]

use std::fmt;

use libfuzzer_sys::fuzz_target;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use tollgate_json::{ErrorKind, JsonLimits, JsonNumber, JsonValue, from_slice};

/// serde_json's view of a document, objects kept as every member in order (duplicates too).
enum Raw {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(String),
    Arr(Vec<Raw>),
    Obj(Vec<(String, Raw)>),
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw::U64(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::I64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Raw, E> {
        Ok(Raw::F64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Raw, E> {
        Ok(Raw::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Raw>()? {
            items.push(item);
        }
        Ok(Raw::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut members = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Raw>()? {
            members.push((k, v));
        }
        Ok(Raw::Obj(members))
    }
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Raw, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

fn has_duplicate(raw: &Raw) -> bool {
    match raw {
        Raw::Arr(items) => items.iter().any(has_duplicate),
        Raw::Obj(members) => {
            let mut names: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
            names.sort_unstable();
            names.windows(2).any(|w| w[0] == w[1]) || members.iter().any(|(_, v)| has_duplicate(v))
        }
        _ => false,
    }
}

fn same(ours: &JsonValue, theirs: &Raw) -> bool {
    match (ours, theirs) {
        (JsonValue::Null, Raw::Null) => true,
        (JsonValue::Bool(a), Raw::Bool(b)) => a == b,
        (JsonValue::Number(n), Raw::U64(v)) => *n == JsonNumber::from(*v),
        (JsonValue::Number(n), Raw::I64(v)) => *n == JsonNumber::from(*v),
        (JsonValue::Number(n), Raw::F64(v)) => n.to_f64() == Some(*v),
        (JsonValue::String(a), Raw::Str(b)) => a.as_str() == b,
        (JsonValue::Array(a), Raw::Arr(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (JsonValue::Object(a), Raw::Obj(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka.as_str() == kb && same(va, vb))
        }
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let limits = JsonLimits::default()
        .with_max_depth(100)
        .expect("a valid depth");
    let ours = from_slice(data, &limits);
    let theirs = serde_json::from_slice::<Raw>(data);
    match (ours, theirs) {
        (Ok(ours), Ok(theirs)) => assert!(same(&ours, &theirs), "the trees differ"),
        (Ok(_), Err(e)) => {
            // serde_json keeps numbers as f64 and refuses those past its range; Tollgate's are
            // exact. Anything else is a disagreement.
            assert!(
                e.to_string().contains("number out of range"),
                "serde_json refused what Tollgate accepted: {e}"
            );
        }
        (Err(e), Ok(theirs)) => match e.kind() {
            ErrorKind::DuplicateMemberName => {
                assert!(has_duplicate(&theirs), "a duplicate Tollgate saw and serde_json did not")
            }
            ErrorKind::InputTooLarge
            | ErrorKind::DepthLimit
            | ErrorKind::NodeLimit
            | ErrorKind::StringLengthLimit
            | ErrorKind::StringTokenLimit
            | ErrorKind::NumberExponentLimit => {}
            other => panic!("Tollgate refused ({other:?}) what serde_json accepted"),
        },
        (Err(_), Err(_)) => {}
    }
});
