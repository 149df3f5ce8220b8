//! The immutable JSON tree.

use std::fmt;

use crate::array::JsonArray;
use crate::number::JsonNumber;
use crate::object::JsonObject;
use crate::string::JsonString;

/// An immutable JSON value, cheap to clone: containers and strings share their storage.
///
/// Equality is JSON equality: numbers compare by value regardless of scale, objects regardless of
/// member order. Hashing agrees with equality.
///
/// # Examples
///
/// ```
/// use tollgate_json::{from_slice, JsonLimits, JsonValue};
///
/// let v = from_slice(br#"{"n": 1.0, "tags": ["a"]}"#, &JsonLimits::default()).unwrap();
/// assert_eq!(v.get("n"), Some(&JsonValue::from(1)));
/// assert_eq!(v.get("tags").and_then(|t| t.as_array()).map(|a| a.len()), Some(1));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub enum JsonValue {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, exact.
    Number(JsonNumber),
    /// A string.
    String(JsonString),
    /// An array.
    Array(JsonArray),
    /// An object.
    Object(JsonObject),
}

/// The six JSON types, as JSON Schema names them (with no separate `integer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonValue {
    /// The value's type.
    pub fn json_type(&self) -> JsonType {
        match self {
            Self::Null => JsonType::Null,
            Self::Bool(_) => JsonType::Boolean,
            Self::Number(_) => JsonType::Number,
            Self::String(_) => JsonType::String,
            Self::Array(_) => JsonType::Array,
            Self::Object(_) => JsonType::Object,
        }
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }
    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Self::Bool(b) => Some(*b),
            _ => None,
        }
    }
    /// The number, if this is one.
    pub fn as_number(&self) -> Option<&JsonNumber> {
        match self {
            Self::Number(n) => Some(n),
            _ => None,
        }
    }
    /// The string slice, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }
    /// The shared string, if this is a string.
    pub fn as_string(&self) -> Option<&JsonString> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }
    /// The array, if this is one.
    pub fn as_array(&self) -> Option<&JsonArray> {
        match self {
            Self::Array(a) => Some(a),
            _ => None,
        }
    }
    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&JsonObject> {
        match self {
            Self::Object(o) => Some(o),
            _ => None,
        }
    }
    /// Whether `other` is the same tree spelled the same way: equal (as `==`), and also with the
    /// same member order and the same number spellings (`1.0` is not identical to `1`). This is
    /// what a write → read round trip preserves.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate_json::{from_str, JsonLimits};
    /// let limits = JsonLimits::default();
    /// let a = from_str(r#"{"x": 1.0, "y": 2}"#, &limits).unwrap();
    /// let b = from_str(r#"{"y": 2, "x": 1}"#, &limits).unwrap();
    /// assert!(a == b && !a.is_identical(&b));
    /// assert!(a.is_identical(&a.clone()));
    /// ```
    pub fn is_identical(&self, other: &JsonValue) -> bool {
        match (self, other) {
            (Self::Number(x), Self::Number(y)) => x == y && x.to_string() == y.to_string(),
            (Self::Array(x), Self::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| p.is_identical(q))
            }
            (Self::Object(x), Self::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y.iter())
                        .all(|((k1, v1), (k2, v2))| k1 == k2 && v1.is_identical(v2))
            }
            _ => self == other,
        }
    }

    /// The member `name` of an object; `None` for other values or a missing member.
    pub fn get(&self, name: &str) -> Option<&JsonValue> {
        self.as_object().and_then(|o| o.get(name))
    }
}

impl fmt::Debug for JsonValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Bool(b) => write!(f, "{b}"),
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => fmt::Debug::fmt(s, f),
            Self::Array(a) => fmt::Debug::fmt(a, f),
            Self::Object(o) => fmt::Debug::fmt(o, f),
        }
    }
}

impl From<bool> for JsonValue {
    fn from(v: bool) -> Self {
        Self::Bool(v)
    }
}
impl From<JsonNumber> for JsonValue {
    fn from(v: JsonNumber) -> Self {
        Self::Number(v)
    }
}
impl From<JsonString> for JsonValue {
    fn from(v: JsonString) -> Self {
        Self::String(v)
    }
}
impl From<&str> for JsonValue {
    fn from(v: &str) -> Self {
        Self::String(v.into())
    }
}
impl From<String> for JsonValue {
    fn from(v: String) -> Self {
        Self::String(v.into())
    }
}
impl From<JsonArray> for JsonValue {
    fn from(v: JsonArray) -> Self {
        Self::Array(v)
    }
}
impl From<JsonObject> for JsonValue {
    fn from(v: JsonObject) -> Self {
        Self::Object(v)
    }
}
impl From<Vec<JsonValue>> for JsonValue {
    fn from(v: Vec<JsonValue>) -> Self {
        Self::Array(v.into())
    }
}
impl<T: Into<JsonValue>> From<Option<T>> for JsonValue {
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::Null, Into::into)
    }
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for JsonValue {
            fn from(v: $t) -> Self {
                Self::Number(JsonNumber::from(v))
            }
        }
    )*};
}
from_int!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);
