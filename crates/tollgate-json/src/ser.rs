//! `to_value`: any `serde::Serialize` value into the immutable tree, without text in between.
//!
//! This is the output half of typed binding: an application's typed result becomes a
//! [`JsonValue`] that can be validated against a schema and then written under the output
//! limits. The writer enforces the output limits; this module refuses what JSON cannot say
//! (non-finite floats, map keys that are not strings, integers, booleans or chars) and bounds its
//! own recursion, so a deep recursive value is refused, never a stack overflow.

use serde::ser::{self, Impossible, Serialize};

use crate::array::JsonArray;
use crate::error::{Error, ErrorKind};
use crate::number::JsonNumber;
use crate::object::JsonObject;
use crate::string::JsonString;
use crate::value::JsonValue;

/// Converts `value` into a [`JsonValue`] through its `serde::Serialize` implementation.
///
/// Structs and maps keep their serialization order; unit enum variants become strings and
/// data-carrying variants become externally tagged objects, as serde's defaults describe.
///
/// # Errors
///
/// [`ErrorKind::Unserializable`] for a non-finite float, a map key that is not a string (or an
/// integer, boolean or char, which are written as strings), a duplicate member name, a value
/// nested deeper than [`MAX_SERIALIZE_NESTING`] serializer calls (a recursive type's value too
/// deep to write), or an error raised by the value's own `Serialize` implementation (its message
/// is not kept).
///
/// # Examples
///
/// ```
/// use tollgate_json::{to_value, JsonValue};
///
/// #[derive(serde::Serialize)]
/// struct Item { sku: &'static str, stock: u32 }
///
/// let v = to_value(&Item { sku: "A-1", stock: 3 })?;
/// assert_eq!(v.get("stock").and_then(JsonValue::as_number).and_then(|n| n.to_u64()), Some(3));
/// # Ok::<(), tollgate_json::Error>(())
/// ```
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<JsonValue, Error> {
    value.serialize(ValueSerializer { depth: 0 })
}

/// The most nested serializer calls one conversion makes: each container and each transparent
/// wrapper (`Some`, a newtype) is one. Twice the writer's depth ceiling, so every value the
/// writer could write converts (an `Option<Box<Self>>` chain costs two per level), while a
/// recursive value too deep to write is refused long before it could exhaust a thread's stack.
pub const MAX_SERIALIZE_NESTING: usize = 2 * crate::JsonLimits::MAX_DEPTH_CEILING;

fn refused() -> Error {
    Error::new(ErrorKind::Unserializable, 0)
}

impl ser::Error for Error {
    fn custom<M: std::fmt::Display>(_message: M) -> Self {
        // The message may quote application data; only the kind is kept.
        refused()
    }
}

#[derive(Clone, Copy)]
struct ValueSerializer {
    depth: usize,
}

impl ValueSerializer {
    /// The serializer for a value one level further in.
    fn nested(self) -> Result<Self, Error> {
        if self.depth >= MAX_SERIALIZE_NESTING {
            return Err(refused());
        }
        Ok(Self {
            depth: self.depth + 1,
        })
    }
}

fn float(v: f64) -> Result<JsonValue, Error> {
    JsonNumber::from_f64(v)
        .map(JsonValue::Number)
        .ok_or_else(refused)
}

impl ser::Serializer for ValueSerializer {
    type Ok = JsonValue;
    type Error = Error;
    type SerializeSeq = SeqBuilder;
    type SerializeTuple = SeqBuilder;
    type SerializeTupleStruct = SeqBuilder;
    type SerializeTupleVariant = VariantSeq;
    type SerializeMap = MapBuilder;
    type SerializeStruct = MapBuilder;
    type SerializeStructVariant = VariantMap;

    fn serialize_bool(self, v: bool) -> Result<JsonValue, Error> {
        Ok(JsonValue::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<JsonValue, Error> {
        Ok(JsonValue::from(i64::from(v)))
    }
    fn serialize_i16(self, v: i16) -> Result<JsonValue, Error> {
        Ok(JsonValue::from(i64::from(v)))
    }
    fn serialize_i32(self, v: i32) -> Result<JsonValue, Error> {
        Ok(JsonValue::from(i64::from(v)))
    }
    fn serialize_i64(self, v: i64) -> Result<JsonValue, Error> {
        Ok(JsonValue::from(v))
    }
    fn serialize_i128(self, v: i128) -> Result<JsonValue, Error> {
        Ok(JsonValue::Number(JsonNumber::from(v)))
    }
    fn serialize_u8(self, v: u8) -> Result<JsonValue, Error> {
        Ok(JsonValue::from(i64::from(v)))
    }
    fn serialize_u16(self, v: u16) -> Result<JsonValue, Error> {
        Ok(JsonValue::from(i64::from(v)))
    }
    fn serialize_u32(self, v: u32) -> Result<JsonValue, Error> {
        Ok(JsonValue::from(i64::from(v)))
    }
    fn serialize_u64(self, v: u64) -> Result<JsonValue, Error> {
        Ok(JsonValue::Number(JsonNumber::from(v)))
    }
    fn serialize_u128(self, v: u128) -> Result<JsonValue, Error> {
        Ok(JsonValue::Number(JsonNumber::from(v)))
    }
    fn serialize_f32(self, v: f32) -> Result<JsonValue, Error> {
        // Through the shortest decimal of the f32 itself, so 0.1f32 stays 0.1.
        if !v.is_finite() {
            return Err(refused());
        }
        JsonNumber::parse(&format!("{v:?}"))
            .map(JsonValue::Number)
            .map_err(|_| refused())
    }
    fn serialize_f64(self, v: f64) -> Result<JsonValue, Error> {
        float(v)
    }
    fn serialize_char(self, v: char) -> Result<JsonValue, Error> {
        Ok(JsonValue::String(JsonString::from(
            v.encode_utf8(&mut [0; 4]) as &str,
        )))
    }
    fn serialize_str(self, v: &str) -> Result<JsonValue, Error> {
        Ok(JsonValue::from(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<JsonValue, Error> {
        Ok(JsonValue::Array(
            v.iter().map(|b| JsonValue::from(i64::from(*b))).collect(),
        ))
    }
    fn serialize_none(self) -> Result<JsonValue, Error> {
        Ok(JsonValue::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<JsonValue, Error> {
        value.serialize(self.nested()?)
    }
    fn serialize_unit(self) -> Result<JsonValue, Error> {
        Ok(JsonValue::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<JsonValue, Error> {
        Ok(JsonValue::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<JsonValue, Error> {
        Ok(JsonValue::from(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<JsonValue, Error> {
        if name == crate::EXACT_NUMBER {
            // The spelling of an exact number becomes the number itself.
            return match value.serialize(self.nested()?)? {
                JsonValue::String(s) => JsonNumber::parse(&s)
                    .map(JsonValue::Number)
                    .map_err(|_| refused()),
                _ => Err(refused()),
            };
        }
        value.serialize(self.nested()?)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<JsonValue, Error> {
        let inner = value.serialize(self.nested()?)?;
        Ok(JsonObject::builder().insert(variant, inner).build().into())
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqBuilder, Error> {
        Ok(SeqBuilder {
            items: Vec::with_capacity(len.unwrap_or(0).min(4096)),
            inner: self.nested()?,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqBuilder, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqBuilder, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantSeq, Error> {
        Ok(VariantSeq {
            variant,
            items: SeqBuilder {
                items: Vec::with_capacity(len.min(4096)),
                inner: self.nested()?,
            },
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapBuilder, Error> {
        MapBuilder::new(self)
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<MapBuilder, Error> {
        MapBuilder::new(self)
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<VariantMap, Error> {
        Ok(VariantMap {
            variant,
            members: MapBuilder::new(self)?,
        })
    }
}

struct SeqBuilder {
    items: Vec<JsonValue>,
    /// The serializer for the elements.
    inner: ValueSerializer,
}

impl SeqBuilder {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.items.push(value.serialize(self.inner)?);
        Ok(())
    }
    fn finish(self) -> JsonValue {
        JsonValue::Array(JsonArray::from(self.items))
    }
}

impl ser::SerializeSeq for SeqBuilder {
    type Ok = JsonValue;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<JsonValue, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeTuple for SeqBuilder {
    type Ok = JsonValue;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<JsonValue, Error> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleStruct for SeqBuilder {
    type Ok = JsonValue;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Result<JsonValue, Error> {
        Ok(self.finish())
    }
}

struct VariantSeq {
    variant: &'static str,
    items: SeqBuilder,
}

impl ser::SerializeTupleVariant for VariantSeq {
    type Ok = JsonValue;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.items.push(value)
    }
    fn end(self) -> Result<JsonValue, Error> {
        Ok(JsonObject::builder()
            .insert(self.variant, self.items.finish())
            .build()
            .into())
    }
}

struct MapBuilder {
    members: Vec<(JsonString, JsonValue)>,
    pending_key: Option<JsonString>,
    /// The serializer for the member values.
    inner: ValueSerializer,
}

impl MapBuilder {
    fn new(outer: ValueSerializer) -> Result<Self, Error> {
        Ok(Self {
            members: Vec::new(),
            pending_key: None,
            inner: outer.nested()?,
        })
    }
    fn member(&mut self, key: JsonString, value: JsonValue) {
        self.members.push((key, value));
    }
    fn finish(self) -> Result<JsonValue, Error> {
        JsonObject::from_unique(self.members)
            .map(JsonValue::Object)
            .ok_or_else(refused)
    }
}

impl ser::SerializeMap for MapBuilder {
    type Ok = JsonValue;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.pending_key = Some(key.serialize(KeySerializer)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self.pending_key.take().ok_or_else(refused)?;
        let value = value.serialize(self.inner)?;
        self.member(key, value);
        Ok(())
    }
    fn end(self) -> Result<JsonValue, Error> {
        self.finish()
    }
}

impl ser::SerializeStruct for MapBuilder {
    type Ok = JsonValue;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let value = value.serialize(self.inner)?;
        self.member(JsonString::from(key), value);
        Ok(())
    }
    fn end(self) -> Result<JsonValue, Error> {
        self.finish()
    }
}

struct VariantMap {
    variant: &'static str,
    members: MapBuilder,
}

impl ser::SerializeStructVariant for VariantMap {
    type Ok = JsonValue;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        ser::SerializeStruct::serialize_field(&mut self.members, key, value)
    }
    fn end(self) -> Result<JsonValue, Error> {
        let inner = self.members.finish()?;
        Ok(JsonObject::builder()
            .insert(self.variant, inner)
            .build()
            .into())
    }
}

/// Map keys: strings as they are; integers, booleans and chars as their decimal or literal text,
/// as serde_json writes them; anything else is refused.
struct KeySerializer;

macro_rules! key_via_display {
    ($($method:ident: $t:ty),*) => {$(
        fn $method(self, v: $t) -> Result<JsonString, Error> {
            Ok(JsonString::from(v.to_string()))
        }
    )*};
}

impl ser::Serializer for KeySerializer {
    type Ok = JsonString;
    type Error = Error;
    type SerializeSeq = Impossible<JsonString, Error>;
    type SerializeTuple = Impossible<JsonString, Error>;
    type SerializeTupleStruct = Impossible<JsonString, Error>;
    type SerializeTupleVariant = Impossible<JsonString, Error>;
    type SerializeMap = Impossible<JsonString, Error>;
    type SerializeStruct = Impossible<JsonString, Error>;
    type SerializeStructVariant = Impossible<JsonString, Error>;

    key_via_display!(
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128, serialize_char: char
    );

    fn serialize_str(self, v: &str) -> Result<JsonString, Error> {
        Ok(JsonString::from(v))
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<JsonString, Error> {
        Ok(JsonString::from(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<JsonString, Error> {
        value.serialize(self)
    }
    fn serialize_f32(self, _v: f32) -> Result<JsonString, Error> {
        Err(refused())
    }
    fn serialize_f64(self, _v: f64) -> Result<JsonString, Error> {
        Err(refused())
    }
    fn serialize_bytes(self, _v: &[u8]) -> Result<JsonString, Error> {
        Err(refused())
    }
    fn serialize_none(self) -> Result<JsonString, Error> {
        Err(refused())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<JsonString, Error> {
        Err(refused())
    }
    fn serialize_unit(self) -> Result<JsonString, Error> {
        Err(refused())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<JsonString, Error> {
        Err(refused())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<JsonString, Error> {
        Err(refused())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(refused())
    }
    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(refused())
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(refused())
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(refused())
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(refused())
    }
    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(refused())
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(refused())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A linked list: each level costs two nested calls (the struct and the `Some`).
    #[derive(serde::Serialize)]
    struct Link {
        next: Option<Box<Link>>,
    }

    fn chain(levels: usize) -> Link {
        let mut link = Link { next: None };
        for _ in 1..levels {
            link = Link {
                next: Some(Box::new(link)),
            };
        }
        link
    }

    #[test]
    fn nesting_is_bounded_at_and_past_the_bound() -> Result<(), Error> {
        // 512 levels: 1,023 nested calls, and exactly the writer's depth ceiling.
        let at = to_value(&chain(512))?;
        let limits = crate::OutputLimits::default();
        assert!(crate::to_string(&at, &limits).is_ok());
        // 513 levels: 1,025 nested calls.
        assert_eq!(
            to_value(&chain(513)).map(|_| ()).map_err(|e| e.kind()),
            Err(ErrorKind::Unserializable)
        );
        // Far past it: refused without exhausting the stack.
        let deep = chain(200_000);
        assert!(to_value(&deep).is_err());
        // Dropping the list is the test's own business: unlink it iteratively.
        let mut next = deep.next;
        while let Some(mut link) = next {
            next = link.next.take();
        }
        Ok(())
    }

    #[derive(serde::Serialize)]
    enum Shape {
        Dot,
        Circle(u8),
        Rect { w: u16, h: u16 },
    }

    #[derive(serde::Serialize)]
    struct Record {
        name: String,
        tags: Vec<&'static str>,
        limit: Option<i32>,
        big: u128,
        ratio: f32,
        shape: Shape,
        dot: Shape,
        rect: Shape,
    }

    #[test]
    fn records_keep_field_order_and_exact_numbers() -> Result<(), Error> {
        let v = to_value(&Record {
            name: "a".into(),
            tags: vec!["x"],
            limit: None,
            big: u128::MAX,
            ratio: 0.1,
            shape: Shape::Circle(2),
            dot: Shape::Dot,
            rect: Shape::Rect { w: 1, h: 2 },
        })?;
        let text = crate::to_string(&v, &crate::OutputLimits::default())?;
        assert_eq!(
            text,
            format!(
                "{{\"name\":\"a\",\"tags\":[\"x\"],\"limit\":null,\"big\":{},\"ratio\":0.1,\
                 \"shape\":{{\"Circle\":2}},\"dot\":\"Dot\",\"rect\":{{\"Rect\":{{\"w\":1,\"h\":2}}}}}}",
                u128::MAX
            )
        );
        Ok(())
    }

    #[test]
    fn integer_map_keys_become_strings() -> Result<(), Error> {
        let map: BTreeMap<u8, bool> = [(1, true)].into_iter().collect();
        let v = to_value(&map)?;
        assert_eq!(v.get("1"), Some(&JsonValue::Bool(true)));
        Ok(())
    }

    #[test]
    fn unrepresentable_values_are_refused_without_data() {
        assert_eq!(
            to_value(&f64::NAN).map_err(|e| e.kind()),
            Err(ErrorKind::Unserializable)
        );
        assert_eq!(
            to_value(&f32::INFINITY).map_err(|e| e.kind()),
            Err(ErrorKind::Unserializable)
        );
        let float_keys: BTreeMap<String, f64> = [("a".into(), f64::NEG_INFINITY)].into();
        assert!(to_value(&float_keys).is_err());
        let tuple_keys: Vec<((u8, u8), u8)> = vec![((1, 2), 3)];
        let map: std::collections::HashMap<(u8, u8), u8> = tuple_keys.into_iter().collect();
        assert_eq!(
            to_value(&map).map_err(|e| e.kind()),
            Err(ErrorKind::Unserializable)
        );
    }
}
