//! Conversions to and from `serde_json::Value` (feature `serde_json`). Interop only: Tollgate never
//! reads wire input with serde_json.

use crate::error::{Error, ErrorKind};
use crate::limits::JsonLimits;
use crate::number::JsonNumber;
use crate::object::JsonObject;
use crate::string::JsonString;
use crate::value::JsonValue;

impl JsonValue {
    /// Converts to a `serde_json::Value`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NumberNotRepresentable`] for a number that is neither an `i64`/`u64` integer
    /// nor within `f64` range, and [`ErrorKind::DepthLimit`] past
    /// [`JsonLimits::MAX_DEPTH_CEILING`] levels.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate_json::JsonValue;
    /// let v = JsonValue::from(vec![JsonValue::from(1), JsonValue::from("a")]);
    /// assert_eq!(v.to_serde_json().unwrap(), serde_json::json!([1, "a"]));
    /// ```
    pub fn to_serde_json(&self) -> Result<serde_json::Value, Error> {
        to_serde(self, 0)
    }

    /// Converts from a `serde_json::Value`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::DepthLimit`] past [`JsonLimits::MAX_DEPTH_CEILING`] levels.
    pub fn from_serde_json(value: &serde_json::Value) -> Result<Self, Error> {
        from_serde(value, 0)
    }
}

fn to_serde(v: &JsonValue, depth: usize) -> Result<serde_json::Value, Error> {
    if depth > JsonLimits::MAX_DEPTH_CEILING {
        return Err(Error::new(ErrorKind::DepthLimit, 0));
    }
    Ok(match v {
        JsonValue::Null => serde_json::Value::Null,
        JsonValue::Bool(b) => serde_json::Value::Bool(*b),
        JsonValue::Number(n) => serde_json::Value::Number(to_serde_number(n)?),
        JsonValue::String(s) => serde_json::Value::String(s.to_string()),
        JsonValue::Array(a) => serde_json::Value::Array(
            a.iter()
                .map(|x| to_serde(x, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        JsonValue::Object(o) => serde_json::Value::Object(
            o.iter()
                .map(|(k, x)| Ok((k.to_string(), to_serde(x, depth + 1)?)))
                .collect::<Result<_, Error>>()?,
        ),
    })
}

fn to_serde_number(n: &JsonNumber) -> Result<serde_json::Number, Error> {
    if let Some(v) = n.to_i64() {
        return Ok(v.into());
    }
    if let Some(v) = n.to_u64() {
        return Ok(v.into());
    }
    n.to_f64()
        .and_then(serde_json::Number::from_f64)
        .ok_or(Error::new(ErrorKind::NumberNotRepresentable, 0))
}

fn from_serde(v: &serde_json::Value, depth: usize) -> Result<JsonValue, Error> {
    if depth > JsonLimits::MAX_DEPTH_CEILING {
        return Err(Error::new(ErrorKind::DepthLimit, 0));
    }
    Ok(match v {
        serde_json::Value::Null => JsonValue::Null,
        serde_json::Value::Bool(b) => JsonValue::Bool(*b),
        serde_json::Value::Number(n) => {
            let number = if let Some(i) = n.as_i64() {
                JsonNumber::from(i)
            } else if let Some(u) = n.as_u64() {
                JsonNumber::from(u)
            } else {
                n.as_f64()
                    .and_then(JsonNumber::from_f64)
                    .ok_or(Error::new(ErrorKind::NumberNotRepresentable, 0))?
            };
            JsonValue::Number(number)
        }
        serde_json::Value::String(s) => JsonValue::String(JsonString::from(s.as_str())),
        serde_json::Value::Array(a) => JsonValue::Array(
            a.iter()
                .map(|x| from_serde(x, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        serde_json::Value::Object(o) => {
            let mut b = JsonObject::builder();
            for (k, x) in o {
                b.push(k.as_str(), from_serde(x, depth + 1)?);
            }
            JsonValue::Object(b.build())
        }
    })
}
