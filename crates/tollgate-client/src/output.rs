//! The output-schema check: a successful tool result's `structuredContent` against the tool's
//! `outputSchema`, compiled through Tool Schema Profile 1. It owns the rule; it must not know
//! transports.

use tollgate_json::JsonValue;

use crate::error::{Error, ErrorKind};
use crate::known::KnownTool;

/// A successful, complete result against the `outputSchema` of `tool` (when it has one). A
/// schema outside Profile 1 is an error: the client cannot vouch for the result.
pub(crate) fn check_output(tool: Option<&KnownTool>, result: &JsonValue) -> Result<(), Error> {
    let Some(tool) = tool.filter(|t| t.definition().get("outputSchema").is_some()) else {
        return Ok(());
    };
    let not_complete = result
        .get("resultType")
        .and_then(JsonValue::as_str)
        .is_some_and(|t| t != "complete");
    if result.get("isError") == Some(&JsonValue::Bool(true)) || not_complete {
        return Ok(());
    }
    let compiled = tool.output().ok_or(Error::new(
        ErrorKind::Schema,
        "the tool's outputSchema is outside Profile 1",
    ))?;
    let structured = result.get("structuredContent").ok_or(Error::new(
        ErrorKind::Schema,
        "no structuredContent for an outputSchema",
    ))?;
    compiled
        .validate(structured)
        .map_err(|_| Error::new(ErrorKind::Schema, "structuredContent does not match"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use tollgate_json::{JsonLimits, from_str};

    fn json(text: &str) -> JsonValue {
        from_str(text, &JsonLimits::default()).unwrap()
    }

    fn known(text: &str) -> KnownTool {
        KnownTool::new(json(text))
    }

    #[test]
    fn structured_results_are_checked() {
        let tool = known(
            r#"{"name":"t","outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}"#,
        );
        assert!(check_output(Some(&tool), &json(r#"{"structuredContent":{"n":1}}"#)).is_ok());
        let wrong = check_output(Some(&tool), &json(r#"{"structuredContent":{"n":"1"}}"#));
        assert_eq!(wrong.unwrap_err().kind(), ErrorKind::Schema);
        let missing = check_output(Some(&tool), &json(r#"{"content":[]}"#));
        assert_eq!(missing.unwrap_err().kind(), ErrorKind::Schema);
        // A tool error is not checked.
        assert!(check_output(Some(&tool), &json(r#"{"isError":true,"content":[]}"#)).is_ok());
    }

    #[test]
    fn an_out_of_profile_schema_is_a_clear_error() {
        let tool =
            known(r#"{"name":"t","outputSchema":{"type":"object","patternProperties":{"a":{}}}}"#);
        let err = check_output(Some(&tool), &json(r#"{"structuredContent":{}}"#)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Schema);
        assert!(err.to_string().contains("outside Profile 1"), "{err}");
    }
}
