//! Typed binding on arbitrary trees: binding to a type that exercises every deserializer path
//! (integers of each width, floats, strings borrowed and owned, options, sequences, maps, tuples,
//! enums) never panics, always ends within its budget, and gives the same outcome twice.

#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use tollgate_json::{BindLimits, JsonLimits, JsonValue, from_slice, from_value};

#[derive(Debug, Deserialize, PartialEq)]
#[allow(dead_code, reason = "fields exist to be bound")]
struct Everything<'a> {
    a: Option<i8>,
    b: Option<u16>,
    c: Option<i64>,
    d: Option<u128>,
    e: Option<f32>,
    f: Option<&'a str>,
    g: Option<String>,
    h: Option<Vec<Option<bool>>>,
    i: Option<BTreeMap<String, i32>>,
    j: Option<(u8, char)>,
    k: Option<Kind>,
    #[serde(default)]
    l: Vec<Everything<'a>>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[allow(dead_code, reason = "variants exist to be bound")]
enum Kind {
    Unit,
    Newtype(i64),
    Tuple(u8, u8),
    Struct { x: f64 },
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = from_slice(data, &JsonLimits::default()) else {
        return;
    };
    let limits = BindLimits::default();
    let first = from_value::<Everything<'_>>(&value, &limits).map_err(|e| (e.kind(), e.offset()));
    let second = from_value::<Everything<'_>>(&value, &limits).map_err(|e| (e.kind(), e.offset()));
    assert_eq!(first, second, "binding is not deterministic");
    let _ = from_value::<JsonValue>(&value, &limits);
    let _ = from_value::<Vec<Kind>>(&value, &limits);
});
