//! Upstream schemas outside Tool Schema Profile 1, validated by a complete JSON Schema validator
//! (the `jsonschema` crate, the differential oracle of Tollgate's own fuzz targets) under
//! Profile 1's structural budgets: at most 4,096 schema objects, nesting depth 64 and 32,768
//! keywords; `pattern` through the linear-time `regex` engine with bounded compiled size; no
//! reference resolved outside the document; `format` an annotation, as in Profile 1. Instances
//! are already bounded by the endpoint's input and output limits. What the validator cannot
//! take (a remote reference, an unknown dialect, a pattern `regex` refuses) is reported.
//!
//! Owns the conversion to the validator's value type (serde_json, for interop only: the
//! instance was read by tollgate-json) and the [`ForeignSchema`] it yields. Knows nothing of
//! tools, upstreams or configuration.

use tollgate::json::JsonValue;
use tollgate::tool::{ForeignCheck, ForeignSchema};
use tollgate_schema::SchemaLimits;

/// The compiled size bound of one `pattern`, in bytes (the `regex` crate's size limit).
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// Why a schema is not taken by the fallback either.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unsupported {
    /// Past one of Profile 1's structural budgets (objects, depth or keywords).
    TooLarge,
    /// The validator refused it (a remote reference, an unknown dialect, an invalid or
    /// oversized pattern, a malformed keyword): with the JSON Pointer it names.
    Refused(String),
}

/// An upstream schema and its validator.
pub(crate) struct Fallback {
    document: JsonValue,
    validator: jsonschema::Validator,
}

impl Fallback {
    /// Compiles `document` under the budgets above.
    pub(crate) fn compile(document: &JsonValue) -> Result<Self, Unsupported> {
        let mut counts = Counts::default();
        counts.walk(document, 1);
        if counts.objects > SchemaLimits::DEFAULT_MAX_NODES
            || counts.depth > SchemaLimits::DEFAULT_MAX_DEPTH
            || counts.keywords > SchemaLimits::DEFAULT_MAX_KEYWORDS
        {
            return Err(Unsupported::TooLarge);
        }
        let schema = interop(document).ok_or(Unsupported::TooLarge)?;
        let validator = jsonschema::options()
            .should_validate_formats(false)
            .with_pattern_options(
                jsonschema::PatternOptions::regex()
                    .size_limit(PATTERN_SIZE_LIMIT)
                    .dfa_size_limit(PATTERN_SIZE_LIMIT),
            )
            .build(&schema)
            .map_err(|e| Unsupported::Refused(e.schema_path().to_string()))?;
        Ok(Self {
            document: document.clone(),
            validator,
        })
    }
}

impl ForeignSchema for Fallback {
    fn document(&self) -> &JsonValue {
        &self.document
    }

    fn check(&self, instance: &JsonValue) -> ForeignCheck {
        match interop(instance) {
            Some(value) if self.validator.is_valid(&value) => ForeignCheck::Valid,
            Some(_) => ForeignCheck::Invalid,
            // Not representable for the validator (cannot happen for a tree tollgate-json
            // read; refused rather than guessed).
            None => ForeignCheck::Invalid,
        }
    }
}

/// A tollgate-json tree as the validator's value (numbers past `f64` keep their nearest value,
/// as the validator's own parser would).
fn interop(value: &JsonValue) -> Option<serde_json::Value> {
    serde_json::to_value(value).ok()
}

/// Counts schema objects, nesting depth and keywords the way Profile 1's budgets do (every
/// object in the document counts, whether or not it is a subschema: a safe overestimate).
#[derive(Default)]
struct Counts {
    objects: usize,
    depth: usize,
    keywords: usize,
}

impl Counts {
    fn walk(&mut self, value: &JsonValue, depth: usize) {
        // Stop descending once past a bound: the answer is already "too large".
        if depth > SchemaLimits::DEFAULT_MAX_DEPTH + 1
            || self.objects > SchemaLimits::DEFAULT_MAX_NODES
        {
            self.depth = self.depth.max(depth);
            return;
        }
        match value {
            JsonValue::Object(o) => {
                self.objects += 1;
                self.keywords += o.len();
                self.depth = self.depth.max(depth);
                for (_, v) in o.iter() {
                    self.walk(v, depth + 1);
                }
            }
            JsonValue::Array(a) => {
                for v in a.iter() {
                    self.walk(v, depth + 1);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;
    use tollgate::json::{JsonLimits, from_str};

    fn json(text: &str) -> JsonValue {
        from_str(text, &JsonLimits::default()).unwrap()
    }

    #[test]
    fn what_profile_1_leaves_out_is_validated_here() {
        let schema = Fallback::compile(&json(
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"q":{"type":"string","pattern":"^x","minLength":2},"n":{"oneOf":[{"type":"integer","multipleOf":3},{"type":"null"}]}},"required":["q"]}"#,
        ))
        .unwrap();
        assert_eq!(
            schema.check(&json(r#"{"q":"xy","n":9}"#)),
            ForeignCheck::Valid
        );
        assert_eq!(schema.check(&json(r#"{"q":"ab"}"#)), ForeignCheck::Invalid);
        assert_eq!(schema.check(&json(r#"{"q":"x"}"#)), ForeignCheck::Invalid);
        assert_eq!(
            schema.check(&json(r#"{"q":"xy","n":4}"#)),
            ForeignCheck::Invalid
        );
    }

    #[test]
    fn a_remote_reference_is_refused_with_its_place() {
        let refused = Fallback::compile(&json(
            r#"{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}"#,
        ));
        assert!(
            matches!(refused, Err(Unsupported::Refused(_))),
            "{:?}",
            refused.err()
        );
    }

    #[test]
    fn a_pattern_only_a_backtracking_engine_takes_is_refused() {
        let refused = Fallback::compile(&json(
            r#"{"type":"object","properties":{"a":{"pattern":"(a)\\1"}}}"#,
        ));
        assert!(matches!(refused, Err(Unsupported::Refused(_))));
    }

    #[test]
    fn the_depth_budget_is_profile_1s_at_the_bound_and_one_past() {
        // `depth` objects nested in each other (an unknown keyword each: annotations).
        let nested = |depth: usize| {
            let mut text = String::from(r#"{"type":"object"}"#);
            for _ in 1..depth {
                text = format!(r#"{{"type":"object","x-inner":{text}}}"#);
            }
            json(&text)
        };
        assert!(Fallback::compile(&nested(SchemaLimits::DEFAULT_MAX_DEPTH)).is_ok());
        let past = nested(SchemaLimits::DEFAULT_MAX_DEPTH + 1);
        assert!(matches!(
            Fallback::compile(&past),
            Err(Unsupported::TooLarge)
        ));
    }
}
