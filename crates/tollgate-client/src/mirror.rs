//! What 2026-07-28 mirrors into headers: `Mcp-Name` for the method's named parameter and the
//! `Mcp-Param-*` values a tool's `x-mcp-header` declarations ask for, encoded as the transport
//! specification says (plain visible ASCII, or the `=?base64?...?=` sentinel). It owns the
//! encoding; it must not know HTTP.

use base64::Engine as _;
use tollgate_json::{JsonObject, JsonValue};
use tollgate_schema::CompiledSchema;

use crate::error::{Error, ErrorKind};

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";
/// The largest integer a header mirrors (2^53 - 1).
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// A value as a header carries it; `None` for what cannot be mirrored (objects, arrays, null,
/// integers past 2^53 - 1, fractions).
pub(crate) fn encode(value: &JsonValue) -> Option<String> {
    match value {
        JsonValue::Bool(b) => Some(b.to_string()),
        JsonValue::Number(n) => n
            .to_i64()
            .filter(|v| (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(v))
            .map(|v| v.to_string()),
        JsonValue::String(s) => Some(encode_text(s.as_str())),
        _ => None,
    }
}

pub(crate) fn encode_text(text: &str) -> String {
    let visible = text.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let edge_space = text.starts_with(' ') || text.ends_with(' ');
    let sentinel_like = text.starts_with(SENTINEL_START) && text.ends_with(SENTINEL_END);
    if visible && !edge_space && !sentinel_like {
        text.to_owned()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        format!("{SENTINEL_START}{encoded}{SENTINEL_END}")
    }
}

/// The parameter `Mcp-Name` mirrors for `method`, if any.
pub(crate) fn name_source(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// The `Mcp-Param-*` headers a call with `arguments` carries under a tool's `inputSchema`
/// (`compiled`: that schema compiled as a tool input, `None` when it is outside Profile 1).
///
/// A schema outside Profile 1 (as servers not built on Tollgate publish) needs no header when it
/// declares no `x-mcp-header` anywhere; one that does is an error, since which values to mirror
/// cannot be known for certain.
pub(crate) fn param_headers(
    input_schema: &JsonValue,
    compiled: Option<&CompiledSchema>,
    arguments: &JsonObject,
) -> Result<Vec<(String, String)>, Error> {
    let compiled = match compiled {
        Some(compiled) => compiled,
        None if !declares_mirrors(input_schema) => return Ok(Vec::new()),
        None => {
            return Err(Error::new(
                ErrorKind::Schema,
                "the tool's inputSchema declares x-mcp-header outside Profile 1",
            ));
        }
    };
    let mut headers = Vec::new();
    for declaration in compiled.mirrored_headers() {
        let mut value: Option<&JsonValue> = None;
        let mut object = Some(arguments);
        for segment in declaration.path() {
            value = object.and_then(|o| o.get(segment.as_str()));
            object = value.and_then(JsonValue::as_object);
        }
        if let Some(encoded) = value.filter(|v| !v.is_null()).and_then(encode) {
            headers.push((format!("mcp-param-{}", declaration.suffix()), encoded));
        }
    }
    Ok(headers)
}

/// Whether a schema document has an `x-mcp-header` member anywhere.
fn declares_mirrors(schema: &JsonValue) -> bool {
    match schema {
        JsonValue::Object(o) => o
            .iter()
            .any(|(k, v)| k.as_str() == "x-mcp-header" || declares_mirrors(v)),
        JsonValue::Array(a) => a.iter().any(declares_mirrors),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn plain_text_stays_and_the_rest_is_sentinel_base64() {
        assert_eq!(encode_text("us-west1"), "us-west1");
        assert_eq!(encode_text("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(encode_text(" x"), "=?base64?IHg=?=");
        assert_eq!(encode_text("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
        assert_eq!(encode(&JsonValue::from(true)).as_deref(), Some("true"));
        let big = tollgate_json::JsonNumber::from(MAX_SAFE_INTEGER + 1);
        assert_eq!(encode(&JsonValue::Number(big)), None);
        let at = tollgate_json::JsonNumber::from(MAX_SAFE_INTEGER);
        assert_eq!(
            encode(&JsonValue::Number(at)).as_deref(),
            Some("9007199254740991")
        );
    }

    #[test]
    fn a_schema_outside_profile_1_mirrors_nothing_unless_it_declares_headers() {
        let limits = tollgate_json::JsonLimits::default();
        let arguments = JsonObject::new();
        let foreign = tollgate_json::from_str(
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"q":{"pattern":"^x"}}}"#,
            &limits,
        )
        .unwrap();
        assert!(
            param_headers(&foreign, None, &arguments)
                .unwrap()
                .is_empty()
        );
        let declaring = tollgate_json::from_str(
            r#"{"type":"object","properties":{"q":{"type":"string","pattern":"^x","x-mcp-header":"Q"}}}"#,
            &limits,
        )
        .unwrap();
        assert_eq!(
            param_headers(&declaring, None, &arguments)
                .unwrap_err()
                .kind(),
            ErrorKind::Schema
        );
    }
}
