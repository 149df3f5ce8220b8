//! `Decimal` (and, with the `num-bigint` feature, `BigInteger`): exact JSON numbers as typed
//! argument or output fields.
//!
//! Owns the bridge between serde and `tollgate_json::JsonNumber` for typed tools: the value is
//! bound from the tree by its spelling (no digit is expanded, nothing is rounded) and written
//! back the same way; its derived schema is `{"type":"number"}`.

use std::fmt;

use tollgate_json::{EXACT_NUMBER, JsonNumber};

/// An exact decimal number for typed tools: `0.1000000000000000000001` and `1e400` arrive and
/// leave exactly as sent, with no `f64` in between and no integer expansion.
///
/// # Examples
///
/// ```
/// use tollgate::tool::Decimal;
/// use tollgate::json::JsonNumber;
///
/// let price = Decimal::from(JsonNumber::parse("19.990")?);
/// assert_eq!(price.to_string(), "19.990");
/// assert_eq!(price.number(), &JsonNumber::parse("19.99")?); // equal by value
/// # Ok::<(), tollgate::json::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Decimal(JsonNumber);

impl Decimal {
    /// The exact number.
    pub fn number(&self) -> &JsonNumber {
        &self.0
    }

    /// The exact number, by value.
    pub fn into_number(self) -> JsonNumber {
        self.0
    }
}

impl From<JsonNumber> for Decimal {
    fn from(number: JsonNumber) -> Self {
        Self(number)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl serde::Serialize for Decimal {
    /// Through Tollgate's writer this is the number itself; other serde formats see a newtype
    /// around its spelling.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct(EXACT_NUMBER, &self.0.to_string())
    }
}

struct DecimalVisitor;

impl<'de> serde::de::Visitor<'de> for DecimalVisitor {
    type Value = Decimal;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }

    fn visit_str<E: serde::de::Error>(self, spelling: &str) -> Result<Decimal, E> {
        JsonNumber::parse(spelling)
            .map(Decimal)
            .map_err(|_| E::custom("not a JSON number"))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Decimal, E> {
        Ok(Decimal(JsonNumber::from(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Decimal, E> {
        Ok(Decimal(JsonNumber::from(v)))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Decimal, E> {
        JsonNumber::from_f64(v)
            .map(Decimal)
            .ok_or_else(|| E::custom("not a finite number"))
    }

    fn visit_newtype_struct<D: serde::Deserializer<'de>>(self, d: D) -> Result<Decimal, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::Deserialize<'de> for Decimal {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_newtype_struct(EXACT_NUMBER, DecimalVisitor)
    }
}

impl schemars::JsonSchema for Decimal {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Decimal".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "number" })
    }
}

/// An arbitrary-precision integer for typed tools (feature `num-bigint`). Binding charges it like
/// any integer — at most 1,024 characters expanded, 4,194,304 per call — before a digit is
/// produced, so `1e9999` fails by arithmetic; its derived schema is `{"type":"integer"}` with no
/// bounds.
///
/// # Examples
///
/// ```
/// use tollgate::tool::BigInteger;
///
/// let n: BigInteger = "123456789012345678901234567890".parse::<num_bigint::BigInt>()?.into();
/// assert_eq!(n.to_string(), "123456789012345678901234567890");
/// # Ok::<(), num_bigint::ParseBigIntError>(())
/// ```
#[cfg(feature = "num-bigint")]
#[cfg_attr(docsrs, doc(cfg(feature = "num-bigint")))]
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BigInteger(pub num_bigint::BigInt);

#[cfg(feature = "num-bigint")]
impl From<num_bigint::BigInt> for BigInteger {
    fn from(v: num_bigint::BigInt) -> Self {
        Self(v)
    }
}

#[cfg(feature = "num-bigint")]
impl fmt::Display for BigInteger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

#[cfg(feature = "num-bigint")]
impl serde::Serialize for BigInteger {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct(EXACT_NUMBER, &self.0.to_string())
    }
}

#[cfg(feature = "num-bigint")]
struct BigIntegerVisitor;

#[cfg(feature = "num-bigint")]
impl<'de> serde::de::Visitor<'de> for BigIntegerVisitor {
    type Value = BigInteger;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer")
    }

    fn visit_str<E: serde::de::Error>(self, digits: &str) -> Result<BigInteger, E> {
        digits
            .parse()
            .map(BigInteger)
            .map_err(|_| E::custom("not an integer"))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<BigInteger, E> {
        Ok(BigInteger(v.into()))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<BigInteger, E> {
        Ok(BigInteger(v.into()))
    }

    fn visit_newtype_struct<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> Result<BigInteger, D::Error> {
        d.deserialize_any(self)
    }
}

#[cfg(feature = "num-bigint")]
impl<'de> serde::Deserialize<'de> for BigInteger {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_newtype_struct(tollgate_json::EXACT_INTEGER, BigIntegerVisitor)
    }
}

#[cfg(feature = "num-bigint")]
impl schemars::JsonSchema for BigInteger {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "BigInteger".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "integer" })
    }
}
