//! Request metadata headers of the Streamable HTTP transport: `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and the mirrored `Mcp-Param-*` arguments.
//!
//! Owns reading one header strictly (exactly one occurrence, visible ASCII), the base64
//! sentinel form, and comparing mirrored values with the JSON arguments. Every failure is the
//! same fixed header mismatch; nothing here reports what was received.

use http::HeaderMap;
use http::header::{AsHeaderName, HeaderName};
use tollgate_json::{JsonNumber, JsonObject, JsonValue};
use tollgate_schema::{HeaderValueType, MirroredHeader};

use crate::wire::head::Field;
use crate::wire::syntax;

pub(crate) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(crate) const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const PARAM_PREFIX: &str = "mcp-param-";

/// The decoded size limit of one mirrored value, in UTF-8 bytes.
pub const MAX_MIRRORED_VALUE_BYTES: usize = 16 * 1024;
/// The largest magnitude a mirrored integer may have (JavaScript's safe range).
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// The header's single value as text, `None` when absent, `Err` when repeated or not visible
/// ASCII (with spaces and tabs).
pub(crate) fn single(headers: &HeaderMap, name: impl AsHeaderName) -> Result<Option<&str>, ()> {
    Field::of(headers.get_all(name)).single()
}

/// A header value in its plain or base64-sentinel form, decoded to text of at most `max`
/// UTF-8 bytes.
pub(crate) fn decode(value: &str, max: usize) -> Option<std::borrow::Cow<'_, str>> {
    if let Some(inner) = value
        .strip_prefix(SENTINEL_START)
        .and_then(|v| v.strip_suffix(SENTINEL_END))
    {
        let bytes = syntax::base64_decode(inner.as_bytes(), max)?;
        return String::from_utf8(bytes).ok().map(std::borrow::Cow::Owned);
    }
    (value.len() <= max).then_some(std::borrow::Cow::Borrowed(value))
}

/// Whether a header value agrees with `expected`, after decoding.
pub(crate) fn agrees(value: &str, expected: &str, max: usize) -> bool {
    decode(value, max).is_some_and(|v| v == expected)
}

/// The `Mcp-Param-*` (or `Mcp-Name`) header value a client sends for `value`: strings as they
/// are when they are plain visible ASCII without edge whitespace and do not look like the
/// sentinel, otherwise `=?base64?…?=`; booleans as `true`/`false`; integers in canonical decimal
/// within ±9,007,199,254,740,991. `None` for anything else (which cannot be mirrored).
///
/// # Examples
///
/// ```
/// use tollgate::tool::encode_mirrored_value;
/// use tollgate::json::JsonValue;
///
/// assert_eq!(encode_mirrored_value(&JsonValue::from("us-west1")).as_deref(), Some("us-west1"));
/// assert_eq!(encode_mirrored_value(&JsonValue::from("Hello, 世界")).as_deref(), Some("=?base64?SGVsbG8sIOS4lueVjA==?="));
/// assert_eq!(encode_mirrored_value(&JsonValue::from(42)).as_deref(), Some("42"));
/// ```
pub fn encode_mirrored_value(value: &JsonValue) -> Option<String> {
    match value {
        JsonValue::Bool(b) => Some(if *b { "true" } else { "false" }.to_owned()),
        JsonValue::Number(n) => {
            let v = n
                .to_i64()
                .filter(|v| (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(v))?;
            Some(v.to_string())
        }
        JsonValue::String(s) => {
            let text = s.as_str();
            let visible = text.bytes().all(|b| (0x20..=0x7e).contains(&b));
            let edge_space = text.starts_with(' ') || text.ends_with(' ');
            let sentinel_like = text.starts_with(SENTINEL_START) && text.ends_with(SENTINEL_END);
            let plain = visible && !edge_space && !sentinel_like;
            Some(if plain {
                text.to_owned()
            } else {
                format!(
                    "{SENTINEL_START}{}{SENTINEL_END}",
                    syntax::base64_encode(text.as_bytes())
                )
            })
        }
        _ => None,
    }
}

fn canonical_integer(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let canonical = !digits.is_empty()
        && digits.len() <= 16
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && text != "-0";
    if !canonical {
        return None;
    }
    let v: i64 = text.parse().ok()?;
    (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER)
        .contains(&v)
        .then_some(v)
}

fn lookup<'a>(
    arguments: &'a JsonObject,
    path: &[tollgate_json::JsonString],
) -> Option<&'a JsonValue> {
    let (last, parents) = path.split_last()?;
    let mut object = arguments;
    for name in parents {
        object = object.get(name)?.as_object()?;
    }
    object.get(last)
}

/// Checks every mirrored argument of a tool against its `Mcp-Param-*` header: a present,
/// non-null argument needs exactly one agreeing header; an absent or null argument needs no
/// header (and a header for it cannot supply it, so one is refused).
pub(crate) fn mirrored_arguments_agree(
    headers: &HeaderMap,
    declarations: &[MirroredHeader],
    arguments: &JsonObject,
) -> bool {
    if declarations.is_empty() {
        return true;
    }
    let mut name = String::with_capacity(PARAM_PREFIX.len() + 32);
    declarations.iter().all(|declaration| {
        name.clear();
        name.push_str(PARAM_PREFIX);
        name.extend(declaration.suffix().chars().map(|c| c.to_ascii_lowercase()));
        let Ok(header) = single(headers, name.as_str()) else {
            return false;
        };
        match (lookup(arguments, declaration.path()), header) {
            (None | Some(JsonValue::Null), None) => true,
            (None | Some(JsonValue::Null), Some(_)) | (Some(_), None) => false,
            (Some(value), Some(header)) => {
                let Some(text) = decode(header, MAX_MIRRORED_VALUE_BYTES) else {
                    return false;
                };
                match (declaration.value_type(), value) {
                    (HeaderValueType::String, JsonValue::String(s)) => s.as_str() == text,
                    (HeaderValueType::Boolean, JsonValue::Bool(b)) => {
                        text == if *b { "true" } else { "false" }
                    }
                    (HeaderValueType::Integer, JsonValue::Number(n)) => canonical_integer(&text)
                        .is_some_and(|h| {
                            n.cmp_value(&JsonNumber::from(h)) == std::cmp::Ordering::Equal
                        }),
                    _ => false,
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_spellings() {
        for (text, v) in [
            ("0", 0),
            ("1", 1),
            ("-7", -7),
            ("9007199254740991", MAX_SAFE_INTEGER),
            ("-9007199254740991", -MAX_SAFE_INTEGER),
        ] {
            assert_eq!(canonical_integer(text), Some(v), "{text}");
        }
        for bad in [
            "+1",
            "01",
            "-0",
            "",
            "-",
            "1.0",
            "1e0",
            " 1",
            "9007199254740992",
            "-9007199254740992",
            "00",
        ] {
            assert_eq!(canonical_integer(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn sentinel_decoding() {
        assert_eq!(
            decode("=?base64?SGVsbG8sIOS4lueVjA==?=", 64).as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(decode("us-west1", 64).as_deref(), Some("us-west1"));
        assert_eq!(decode("=?base64?not base64?=", 64), None);
        assert_eq!(decode("=?base64?/w==?=", 64), None); // not UTF-8
        assert_eq!(decode(&"a".repeat(65), 64), None);
        assert!(agrees(
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
            "=?base64?literal?=",
            64
        ));
    }
}
