//! Typed binding: a serde `Deserializer` over a tree that was already read (and usually validated),
//! with a budget of its own.
//!
//! Integer conversion is charged by the length of the integer's expanded decimal spelling, minus
//! sign counted, before any digit is produced: at most 1,024 characters per integer and 4,194,304
//! per binding (a value converted twice counts twice). `1e9999` for an `i64` fails on the length
//! of its spelling, computed from the exponent, never by building the digits. Every value visited
//! counts against a node bound (100,000). Errors carry a kind and the index of the failing value
//! in document order (0 is the root), never the value or the target type's message.

use std::fmt;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeSeed, EnumAccess, Expected, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use serde::{Deserialize, Deserializer};

use crate::error::{Error, ErrorKind};
use crate::number::JsonNumber;
use crate::value::JsonValue;

#[cfg(test)]
#[path = "bind_tests.rs"]
mod tests;

/// Bounds on one typed binding.
///
/// # Examples
///
/// ```
/// use tollgate_json::BindLimits;
/// let limits = BindLimits::default();
/// assert_eq!(limits.max_integer_chars(), 1_024);
/// assert_eq!(limits.max_total_integer_chars(), 4_194_304);
/// assert_eq!(limits.max_nodes(), 100_000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindLimits {
    max_integer_chars: u64,
    max_total_integer_chars: u64,
    max_nodes: usize,
}

impl BindLimits {
    /// Default characters of one integer's expanded spelling.
    pub const DEFAULT_MAX_INTEGER_CHARS: u64 = 1_024;
    /// Default expanded integer characters in one binding.
    pub const DEFAULT_MAX_TOTAL_INTEGER_CHARS: u64 = 4_194_304;
    /// Default values visited in one binding.
    pub const DEFAULT_MAX_NODES: usize = 100_000;

    /// The production defaults.
    pub const fn new() -> Self {
        Self {
            max_integer_chars: Self::DEFAULT_MAX_INTEGER_CHARS,
            max_total_integer_chars: Self::DEFAULT_MAX_TOTAL_INTEGER_CHARS,
            max_nodes: Self::DEFAULT_MAX_NODES,
        }
    }
    /// The per-integer bound.
    pub const fn max_integer_chars(&self) -> u64 {
        self.max_integer_chars
    }
    /// The per-binding integer bound.
    pub const fn max_total_integer_chars(&self) -> u64 {
        self.max_total_integer_chars
    }
    /// The node bound.
    pub const fn max_nodes(&self) -> usize {
        self.max_nodes
    }
    /// Lowers (or restores) the per-integer bound; larger values are clamped to the default.
    #[must_use]
    pub const fn with_max_integer_chars(mut self, n: u64) -> Self {
        self.max_integer_chars = if n > Self::DEFAULT_MAX_INTEGER_CHARS {
            Self::DEFAULT_MAX_INTEGER_CHARS
        } else {
            n
        };
        self
    }
    /// Lowers (or restores) the per-binding bound; larger values are clamped to the default.
    #[must_use]
    pub const fn with_max_total_integer_chars(mut self, n: u64) -> Self {
        self.max_total_integer_chars = if n > Self::DEFAULT_MAX_TOTAL_INTEGER_CHARS {
            Self::DEFAULT_MAX_TOTAL_INTEGER_CHARS
        } else {
            n
        };
        self
    }
    /// Lowers (or restores) the node bound; larger values are clamped to the default.
    #[must_use]
    pub const fn with_max_nodes(mut self, n: usize) -> Self {
        self.max_nodes = if n > Self::DEFAULT_MAX_NODES {
            Self::DEFAULT_MAX_NODES
        } else {
            n
        };
        self
    }
}

impl Default for BindLimits {
    fn default() -> Self {
        Self::new()
    }
}

/// Binds `value` to `T` under `limits`. Strings are borrowed from the tree where `T` allows.
///
/// # Errors
///
/// A binding [`ErrorKind`] ([`ErrorKind::is_binding`]) or [`ErrorKind::NodeLimit`]; the offset is
/// the index of the failing value in document order.
///
/// # Examples
///
/// ```
/// use serde::Deserialize;
/// use tollgate_json::{from_slice, from_value, BindLimits, ErrorKind, JsonLimits};
///
/// #[derive(Deserialize)]
/// struct Search<'a> { query: &'a str, limit: Option<u8> }
///
/// let v = from_slice(br#"{"query": "mug", "limit": 10.0}"#, &JsonLimits::default()).unwrap();
/// let s: Search<'_> = from_value(&v, &BindLimits::default()).unwrap();
/// assert_eq!((s.query, s.limit), ("mug", Some(10)));
///
/// let big = from_slice(br#"{"query": "mug", "limit": 1e9999}"#, &JsonLimits::default()).unwrap();
/// let err = from_value::<Search<'_>>(&big, &BindLimits::default()).err().unwrap();
/// assert_eq!(err.kind(), ErrorKind::IntegerTooLong);
/// ```
pub fn from_value<'de, T: Deserialize<'de>>(
    value: &'de JsonValue,
    limits: &BindLimits,
) -> Result<T, Error> {
    let mut binder = Binder {
        limits,
        nodes: 0,
        integer_chars: 0,
    };
    T::deserialize(ValueDe {
        value,
        binder: &mut binder,
    })
    .map_err(|e| {
        if e.offset() == UNPLACED {
            Error::new(e.kind(), 0)
        } else {
            e
        }
    })
}

/// The offset of an error not yet tied to a value; the innermost value that sees it claims it.
const UNPLACED: usize = usize::MAX;

struct Binder<'l> {
    limits: &'l BindLimits,
    nodes: usize,
    integer_chars: u64,
}

impl Binder<'_> {
    /// Counts a value and returns its index in document order.
    fn enter(&mut self) -> Result<usize, Error> {
        let index = self.nodes;
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(Error::new(ErrorKind::NodeLimit, index));
        }
        Ok(index)
    }

    /// Charges an integer conversion by the length of its expanded spelling.
    fn charge_integer(&mut self, n: &JsonNumber, index: usize) -> Result<(), Error> {
        let Some(len) = n.integer_spelling_len() else {
            return Err(Error::new(ErrorKind::TypeMismatch, index));
        };
        if len > self.limits.max_integer_chars {
            return Err(Error::new(ErrorKind::IntegerTooLong, index));
        }
        self.integer_chars = self.integer_chars.saturating_add(len);
        if self.integer_chars > self.limits.max_total_integer_chars {
            return Err(Error::new(ErrorKind::IntegerBudget, index));
        }
        Ok(())
    }
}

impl de::Error for Error {
    fn custom<T: fmt::Display>(_message: T) -> Self {
        Error::new(ErrorKind::Refused, UNPLACED)
    }
    fn invalid_type(_unexpected: Unexpected<'_>, _expected: &dyn Expected) -> Self {
        Error::new(ErrorKind::TypeMismatch, UNPLACED)
    }
    fn invalid_value(unexpected: Unexpected<'_>, _expected: &dyn Expected) -> Self {
        let kind = match unexpected {
            Unexpected::Signed(_) | Unexpected::Unsigned(_) | Unexpected::Float(_) => {
                ErrorKind::NumberOutOfRange
            }
            _ => ErrorKind::InvalidValue,
        };
        Error::new(kind, UNPLACED)
    }
    fn invalid_length(_len: usize, _expected: &dyn Expected) -> Self {
        Error::new(ErrorKind::InvalidLength, UNPLACED)
    }
    fn unknown_variant(_variant: &str, _expected: &'static [&'static str]) -> Self {
        Error::new(ErrorKind::UnknownVariant, UNPLACED)
    }
    fn unknown_field(_field: &str, _expected: &'static [&'static str]) -> Self {
        Error::new(ErrorKind::UnknownField, UNPLACED)
    }
    fn missing_field(_field: &'static str) -> Self {
        Error::new(ErrorKind::MissingField, UNPLACED)
    }
    fn duplicate_field(_field: &'static str) -> Self {
        Error::new(ErrorKind::DuplicateField, UNPLACED)
    }
}

struct ValueDe<'de, 'b, 'l> {
    value: &'de JsonValue,
    binder: &'b mut Binder<'l>,
}

/// Ties an unplaced error to the value at `index`.
fn place(e: Error, index: usize) -> Error {
    if e.offset() == UNPLACED {
        Error::new(e.kind(), index)
    } else {
        e
    }
}

macro_rules! integer_method {
    ($method:ident, $convert:ident, $visit:ident) => {
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            let index = self.binder.enter()?;
            let JsonValue::Number(n) = self.value else {
                return Err(Error::new(ErrorKind::TypeMismatch, index));
            };
            self.binder.charge_integer(n, index)?;
            let v = n
                .$convert()
                .ok_or(Error::new(ErrorKind::NumberOutOfRange, index))?;
            visitor.$visit(v).map_err(|e| place(e, index))
        }
    };
}

impl<'de> ValueDe<'de, '_, '_> {
    fn float<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let index = self.binder.enter()?;
        let JsonValue::Number(n) = self.value else {
            return Err(Error::new(ErrorKind::TypeMismatch, index));
        };
        let v = n
            .to_f64()
            .ok_or(Error::new(ErrorKind::NumberOutOfRange, index))?;
        visitor.visit_f64(v).map_err(|e| place(e, index))
    }

    fn string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let index = self.binder.enter()?;
        match self.value {
            JsonValue::String(s) => visitor.visit_borrowed_str(s.as_str()),
            _ => Err(Error::new(ErrorKind::TypeMismatch, index)),
        }
        .map_err(|e| place(e, index))
    }
}

impl<'de> Deserializer<'de> for ValueDe<'de, '_, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let index = self.binder.enter()?;
        let result = match self.value {
            JsonValue::Null => visitor.visit_unit(),
            JsonValue::Bool(b) => visitor.visit_bool(*b),
            JsonValue::Number(n) if n.is_integer() => {
                self.binder.charge_integer(n, index)?;
                if let Some(v) = n.to_i64() {
                    visitor.visit_i64(v)
                } else if let Some(v) = n.to_u64() {
                    visitor.visit_u64(v)
                } else if let Some(v) = n.to_i128() {
                    visitor.visit_i128(v)
                } else if let Some(v) = n.to_u128() {
                    visitor.visit_u128(v)
                } else {
                    return Err(Error::new(ErrorKind::NumberOutOfRange, index));
                }
            }
            JsonValue::Number(n) => match n.to_f64() {
                Some(v) => visitor.visit_f64(v),
                None => return Err(Error::new(ErrorKind::NumberOutOfRange, index)),
            },
            JsonValue::String(s) => visitor.visit_borrowed_str(s.as_str()),
            JsonValue::Array(items) => visitor.visit_seq(SeqDe {
                items: items.iter(),
                binder: self.binder,
            }),
            JsonValue::Object(object) => visitor.visit_map(MapDe {
                members: object.members().iter(),
                pending: None,
                binder: self.binder,
            }),
        };
        result.map_err(|e| place(e, index))
    }

    integer_method!(deserialize_i8, to_i64, visit_i64);
    integer_method!(deserialize_i16, to_i64, visit_i64);
    integer_method!(deserialize_i32, to_i64, visit_i64);
    integer_method!(deserialize_i64, to_i64, visit_i64);
    integer_method!(deserialize_i128, to_i128, visit_i128);
    integer_method!(deserialize_u8, to_u64, visit_u64);
    integer_method!(deserialize_u16, to_u64, visit_u64);
    integer_method!(deserialize_u32, to_u64, visit_u64);
    integer_method!(deserialize_u64, to_u64, visit_u64);
    integer_method!(deserialize_u128, to_u128, visit_u128);

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.float(visitor)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.float(visitor)
    }
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let index = self.binder.enter()?;
        match self.value {
            JsonValue::Bool(b) => visitor.visit_bool(*b).map_err(|e| place(e, index)),
            _ => Err(Error::new(ErrorKind::TypeMismatch, index)),
        }
    }
    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.string(visitor)
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.string(visitor)
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.string(visitor)
    }
    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.string(visitor)
    }
    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }
    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_any(visitor)
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        if self.value.is_null() {
            let index = self.binder.enter()?;
            visitor.visit_none().map_err(|e| place(e, index))
        } else {
            visitor.visit_some(self)
        }
    }
    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let index = self.binder.enter()?;
        match self.value {
            JsonValue::Null => visitor.visit_unit().map_err(|e| place(e, index)),
            _ => Err(Error::new(ErrorKind::TypeMismatch, index)),
        }
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        if name == crate::EXACT_INTEGER {
            // A big integer: charged like any integer conversion before its digits exist.
            let index = self.binder.enter()?;
            let JsonValue::Number(n) = self.value else {
                return Err(Error::new(ErrorKind::TypeMismatch, index));
            };
            self.binder.charge_integer(n, index)?;
            let digits = n
                .integer_digits(self.binder.limits.max_integer_chars)
                .ok_or(Error::new(ErrorKind::IntegerTooLong, index))?;
            return visitor.visit_string(digits).map_err(|e| place(e, index));
        }
        if name == crate::EXACT_NUMBER {
            // An exact number crosses serde as its spelling: no digits are expanded and no
            // precision is lost.
            let index = self.binder.enter()?;
            return match self.value {
                JsonValue::Number(n) => visitor
                    .visit_string(n.to_string())
                    .map_err(|e| place(e, index)),
                _ => Err(Error::new(ErrorKind::TypeMismatch, index)),
            };
        }
        visitor.visit_newtype_struct(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            JsonValue::Array(_) => self.deserialize_any(visitor),
            _ => {
                let index = self.binder.enter()?;
                Err(Error::new(ErrorKind::TypeMismatch, index))
            }
        }
    }
    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }
    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.value {
            JsonValue::Object(_) => self.deserialize_any(visitor),
            _ => {
                let index = self.binder.enter()?;
                Err(Error::new(ErrorKind::TypeMismatch, index))
            }
        }
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let index = self.binder.enter()?;
        let result = match self.value {
            JsonValue::String(s) => visitor.visit_enum(s.as_str().into_deserializer()),
            // An externally tagged variant with content is an object of exactly one member.
            JsonValue::Object(o) => match o.members() {
                [(name, content)] => visitor.visit_enum(EnumDe {
                    name: name.as_str(),
                    content,
                    binder: self.binder,
                }),
                _ => Err(Error::new(ErrorKind::InvalidLength, index)),
            },
            _ => Err(Error::new(ErrorKind::TypeMismatch, index)),
        };
        result.map_err(|e| place(e, index))
    }
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let index = self.binder.enter()?;
        visitor.visit_unit().map_err(|e| place(e, index))
    }
}

struct SeqDe<'de, 'b, 'l> {
    items: std::slice::Iter<'de, JsonValue>,
    binder: &'b mut Binder<'l>,
}

impl<'de> SeqAccess<'de> for SeqDe<'de, '_, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.items.next() {
            Some(value) => seed
                .deserialize(ValueDe {
                    value,
                    binder: self.binder,
                })
                .map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct MapDe<'de, 'b, 'l> {
    members: std::slice::Iter<'de, (crate::JsonString, JsonValue)>,
    pending: Option<&'de JsonValue>,
    binder: &'b mut Binder<'l>,
}

impl<'de> MapAccess<'de> for MapDe<'de, '_, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.members.next() {
            Some((name, value)) => {
                self.pending = Some(value);
                seed.deserialize(BorrowedStrDeserializer::new(name.as_str()))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Some(value) = self.pending.take() else {
            return Err(Error::new(ErrorKind::InvalidLength, UNPLACED));
        };
        seed.deserialize(ValueDe {
            value,
            binder: self.binder,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.members.len())
    }
}

struct EnumDe<'de, 'b, 'l> {
    name: &'de str,
    content: &'de JsonValue,
    binder: &'b mut Binder<'l>,
}

impl<'de, 'b, 'l> EnumAccess<'de> for EnumDe<'de, 'b, 'l> {
    type Error = Error;
    type Variant = ValueDe<'de, 'b, 'l>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), Error> {
        let variant = seed.deserialize(BorrowedStrDeserializer::<Error>::new(self.name))?;
        Ok((
            variant,
            ValueDe {
                value: self.content,
                binder: self.binder,
            },
        ))
    }
}

impl<'de> VariantAccess<'de> for ValueDe<'de, '_, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        Deserialize::deserialize(self)
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_map(visitor)
    }
}
