//! The JSON-RPC request id, kept exactly as sent.

use std::fmt;

use tollgate_json::{JsonNumber, JsonString, JsonValue};

/// A JSON-RPC request id: a string or an integer, kept exactly.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A string id.
    String(JsonString),
    /// An integer id (any size; compare with [`JsonNumber`]'s accessors).
    Integer(JsonNumber),
}

impl RequestId {
    pub(crate) fn from_json(value: &JsonValue) -> Option<Self> {
        match value {
            JsonValue::String(s) => Some(Self::String(s.clone())),
            JsonValue::Number(n) if n.is_integer() => Some(Self::Integer(n.clone())),
            _ => None,
        }
    }

    pub(crate) fn to_json(&self) -> JsonValue {
        match self {
            Self::String(s) => JsonValue::String(s.clone()),
            Self::Integer(n) => JsonValue::Number(n.clone()),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(s) => write!(f, "{:?}", s.as_str()),
            Self::Integer(n) => write!(f, "{n}"),
        }
    }
}
