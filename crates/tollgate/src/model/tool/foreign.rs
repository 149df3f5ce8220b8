//! Schemas that are not Tool Schema Profile 1, for tools whose shapes come from elsewhere (a
//! gateway importing another server's catalog): the document published as it is, and the
//! check run exactly where Profile 1's evaluation would run, with the same answers (invalid
//! arguments, the fixed internal error for an output, busy past a budget).
//!
//! Owns the contract such a validator keeps. Knows nothing of which validator implements it;
//! Tollgate's own tools never use it (their schemas are Profile 1, compiled at build).

use tollgate_json::JsonValue;

/// What a [`ForeignSchema`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ForeignCheck {
    /// The instance is valid.
    Valid,
    /// The instance is not valid (arguments: the revision's invalid-arguments answer; an
    /// output: the fixed -32603).
    Invalid,
    /// The check could not finish within its budget: the retryable busy answer.
    Busy,
}

/// A tool schema outside Profile 1 with its own validator. The validator must be bounded:
/// a linear-time regular expression engine, a bound on the work one check may do, no remote
/// references fetched.
///
/// # Examples
///
/// ```
/// use tollgate::json::{JsonLimits, JsonValue, from_str};
/// use tollgate::tool::{ForeignCheck, ForeignSchema};
///
/// /// Accepts objects with at most three members.
/// struct Small(JsonValue);
///
/// impl ForeignSchema for Small {
///     fn document(&self) -> &JsonValue {
///         &self.0
///     }
///     fn check(&self, instance: &JsonValue) -> ForeignCheck {
///         match instance.as_object() {
///             Some(o) if o.len() <= 3 => ForeignCheck::Valid,
///             _ => ForeignCheck::Invalid,
///         }
///     }
/// }
///
/// let document = from_str(r#"{"type":"object","maxProperties":3}"#, &JsonLimits::default()).unwrap();
/// let schema = Small(document);
/// assert_eq!(schema.check(&from_str("{}", &JsonLimits::default()).unwrap()), ForeignCheck::Valid);
/// ```
pub trait ForeignSchema: Send + Sync + 'static {
    /// The document published as the tool's schema.
    fn document(&self) -> &JsonValue;

    /// Checks `instance` against the schema.
    fn check(&self, instance: &JsonValue) -> ForeignCheck;
}

/// Whether a foreign schema document may stand for a tool's input or output: an object whose
/// `type` is `"object"`, as the protocol requires of both.
pub(crate) fn is_object_schema(document: &JsonValue) -> bool {
    document.get("type").and_then(JsonValue::as_str) == Some("object")
}
