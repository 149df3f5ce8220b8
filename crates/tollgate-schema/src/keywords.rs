//! The closed keyword table of Profile 1: the 29 recognised keywords and the named exclusions.

/// The keywords Profile 1 recognises. Every other keyword fails compilation.
///
/// The specification calls this "the 29-keyword set" but lists 28 names; the list is the contract.
///
/// # Examples
///
/// ```
/// use tollgate_schema::RECOGNISED_KEYWORDS;
///
/// assert!(RECOGNISED_KEYWORDS.contains(&"additionalProperties"));
/// assert!(!RECOGNISED_KEYWORDS.contains(&"oneOf"));
/// ```
pub const RECOGNISED: [&str; 28] = [
    "$schema",
    "$defs",
    "$anchor",
    "$ref",
    "$comment",
    "properties",
    "additionalProperties",
    "items",
    "allOf",
    "anyOf",
    "if",
    "then",
    "else",
    "type",
    "enum",
    "const",
    "required",
    "minimum",
    "maximum",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "x-mcp-header",
];

/// JSON Schema keywords Profile 1 excludes by name. They fail like unknown keywords, with their
/// own error kind so that a schema author sees the keyword is known and deliberately refused.
///
/// # Examples
///
/// ```
/// use tollgate_schema::EXCLUDED_KEYWORDS;
///
/// assert!(EXCLUDED_KEYWORDS.contains(&"oneOf"));
/// assert!(!EXCLUDED_KEYWORDS.contains(&"properties"));
/// ```
pub const EXCLUDED: [&str; 35] = [
    "$id",
    "$vocabulary",
    "$dynamicAnchor",
    "$dynamicRef",
    "$recursiveAnchor",
    "$recursiveRef",
    "definitions",
    "oneOf",
    "not",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
    "prefixItems",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "pattern",
    "patternProperties",
    "propertyNames",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "multipleOf",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// The dialect URIs accepted in `$schema`.
pub(crate) const DIALECTS: [&str; 2] = [
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2020-12/schema#",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_eight_distinct_keywords_none_excluded() {
        let mut all = RECOGNISED.to_vec();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 28);
        assert!(RECOGNISED.iter().all(|k| !EXCLUDED.contains(k)));
    }
}
