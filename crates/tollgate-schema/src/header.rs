//! Mirrored arguments: the `x-mcp-header` declarations a compiled schema publishes.

use tollgate_json::JsonString;

/// The direct JSON type of a mirrored property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeaderValueType {
    /// `"type": "string"`.
    String,
    /// `"type": "boolean"`.
    Boolean,
    /// `"type": "integer"`.
    Integer,
}

/// One `x-mcp-header` declaration: the argument it mirrors and the header suffix
/// (`Mcp-Param-<suffix>`).
///
/// # Examples
///
/// ```
/// use tollgate_json::{from_str, JsonLimits};
/// use tollgate_schema::{CompiledSchema, HeaderValueType};
///
/// let doc = from_str(
///     r#"{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"}}}"#,
///     &JsonLimits::default(),
/// ).unwrap();
/// let schema = CompiledSchema::compile_tool_input(&doc).unwrap();
/// let header = &schema.mirrored_headers()[0];
/// assert_eq!(header.suffix(), "Tenant");
/// assert_eq!(header.pointer(), "/tenant");
/// assert_eq!(header.value_type(), HeaderValueType::String);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirroredHeader {
    pub(crate) path: Box<[JsonString]>,
    pub(crate) pointer: String,
    pub(crate) suffix: JsonString,
    pub(crate) value_type: HeaderValueType,
}

impl MirroredHeader {
    /// The property names from the arguments object down to the mirrored value.
    pub fn path(&self) -> &[JsonString] {
        &self.path
    }
    /// The same path as a JSON Pointer into the arguments object.
    pub fn pointer(&self) -> &str {
        &self.pointer
    }
    /// The header suffix as authored (`Tenant` for `Mcp-Param-Tenant`).
    pub fn suffix(&self) -> &str {
        &self.suffix
    }
    /// The property's direct type.
    pub fn value_type(&self) -> HeaderValueType {
        self.value_type
    }
}

/// Whether `s` is a nonempty RFC 9110 token (`1*tchar`).
pub(crate) fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}
