//! `serde` support for the tree: `Serialize` for every value type and `Deserialize` for
//! [`JsonValue`]. This is interop for trusted, in-process data; wire input goes through
//! [`from_slice`](crate::from_slice) and its limits.

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::array::JsonArray;
use crate::number::JsonNumber;
use crate::object::JsonObject;
use crate::string::JsonString;
use crate::value::JsonValue;

impl Serialize for JsonValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Null => s.serialize_unit(),
            Self::Bool(b) => s.serialize_bool(*b),
            Self::Number(n) => n.serialize(s),
            Self::String(v) => s.serialize_str(v),
            Self::Array(a) => a.serialize(s),
            Self::Object(o) => o.serialize(s),
        }
    }
}

/// Integers go out exactly as `i64`, `u64`, `i128` or `u128`, whichever holds them; other values
/// as the nearest `f64`. A value beyond `f64`'s range is an error rather than a silent infinity.
impl Serialize for JsonNumber {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(v) = self.to_i64() {
            return s.serialize_i64(v);
        }
        if let Some(v) = self.to_u64() {
            return s.serialize_u64(v);
        }
        if let Some(v) = self.to_i128() {
            return s.serialize_i128(v);
        }
        if let Some(v) = self.to_u128() {
            return s.serialize_u128(v);
        }
        match self.to_f64() {
            Some(v) => s.serialize_f64(v),
            None => Err(ser::Error::custom("number not representable as f64")),
        }
    }
}

impl Serialize for JsonString {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
    }
}

impl Serialize for JsonArray {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for item in self {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

impl Serialize for JsonObject {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k.as_str(), v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = JsonValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<JsonValue, E> {
        Ok(JsonValue::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<JsonValue, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<JsonValue, E> {
        Ok(v.into())
    }
    fn visit_i128<E>(self, v: i128) -> Result<JsonValue, E> {
        Ok(v.into())
    }
    fn visit_u128<E>(self, v: u128) -> Result<JsonValue, E> {
        Ok(v.into())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<JsonValue, E> {
        JsonNumber::from_f64(v)
            .map(JsonValue::Number)
            .ok_or_else(|| E::custom("non-finite number"))
    }
    fn visit_str<E>(self, v: &str) -> Result<JsonValue, E> {
        Ok(v.into())
    }
    fn visit_string<E>(self, v: String) -> Result<JsonValue, E> {
        Ok(v.into())
    }
    fn visit_unit<E>(self) -> Result<JsonValue, E> {
        Ok(JsonValue::Null)
    }
    fn visit_none<E>(self) -> Result<JsonValue, E> {
        Ok(JsonValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<JsonValue, D::Error> {
        JsonValue::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonValue, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element::<JsonValue>()? {
            items.push(item);
        }
        Ok(JsonValue::Array(items.into()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonValue, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0).min(4096));
        while let Some((k, v)) = map.next_entry::<String, JsonValue>()? {
            members.push((JsonString::from(k), v));
        }
        JsonObject::from_unique(members)
            .map(JsonValue::Object)
            .ok_or_else(|| de::Error::custom("duplicate member name"))
    }
}

#[cfg(test)]
mod tests {
    use crate::{JsonLimits, JsonValue, from_slice};

    #[test]
    fn serde_json_round_trip() {
        let text = br#"{"a":[1,-2,1.5,true,null,"x"],"b":{"c":18446744073709551615}}"#;
        let v = from_slice(text, &JsonLimits::default()).unwrap();
        let through = serde_json::to_string(&v).unwrap();
        assert_eq!(through.as_bytes(), text);
        let back: JsonValue = serde_json::from_str(&through).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn duplicate_names_fail_in_deserialize() {
        assert!(serde_json::from_str::<JsonValue>(r#"{"a":1,"a":2}"#).is_err());
    }

    #[test]
    fn huge_numbers_do_not_serialize_as_infinity() {
        let v = from_slice(b"1e400", &JsonLimits::default()).unwrap();
        assert!(serde_json::to_string(&v).is_err());
    }
}
