//! The schemas and instances shared by the validation benchmark and the profiling example.

#![allow(dead_code, reason = "each includer uses its own subset")]

/// A five-property tool input.
pub(crate) const SMALL_SCHEMA: &str = r#"{
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "inStock": {"type": "boolean"},
        "priceMax": {"type": "number", "minimum": 0},
        "sort": {"enum": ["price", "name", "relevance"]}
    },
    "required": ["query"],
    "additionalProperties": false
}"#;
/// A valid instance of the small schema.
pub(crate) const SMALL_INSTANCE: &str =
    r#"{"query": "blue mug", "limit": 10, "inStock": true, "priceMax": 24.99, "sort": "price"}"#;

/// A catalog-like schema with $ref and anyOf.
pub(crate) const CATALOG_SCHEMA: &str = r##"{
    "type": "object",
    "$defs": {
        "money": {"type": "object", "properties": {"amount": {"type": "number", "minimum": 0},
            "currency": {"enum": ["EUR", "USD", "GBP"]}}, "required": ["amount", "currency"],
            "additionalProperties": false},
        "item": {"type": "object", "properties": {
            "sku": {"type": "string"},
            "name": {"type": "string"},
            "price": {"$ref": "#/$defs/money"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "variant": {"anyOf": [
                {"type": "object", "properties": {"size": {"enum": ["S", "M", "L"]}}, "required": ["size"]},
                {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
                {"type": "null"}
            ]}
        }, "required": ["sku", "price"]}
    },
    "properties": {
        "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
        "total": {"$ref": "#/$defs/money"}
    },
    "required": ["items"]
}"##;

/// A valid 20-item catalog instance.
pub(crate) fn catalog_instance() -> String {
    let items: Vec<String> = (0..20)
        .map(|i| {
            let variant = match i % 3 {
                0 => r#"{"size": "M"}"#.to_owned(),
                1 => r#"{"color": "blue"}"#.to_owned(),
                _ => "null".to_owned(),
            };
            format!(
                r#"{{"sku": "SKU-{i}", "name": "Item {i}", "price": {{"amount": {i}.5, "currency": "EUR"}},
                    "tags": ["a", "b", "c"], "variant": {variant}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"items": [{}], "total": {{"amount": 210, "currency": "EUR"}}}}"#,
        items.join(",")
    )
}

/// An array of objects.
pub(crate) const ARRAY_SCHEMA: &str = r#"{
    "type": "array",
    "items": {"type": "object", "properties": {
        "id": {"type": "integer", "minimum": 0},
        "name": {"type": "string"},
        "score": {"type": "number", "maximum": 100},
        "active": {"type": "boolean"}
    }, "required": ["id", "name"]}
}"#;

/// 10,000 valid objects.
pub(crate) fn array_instance() -> String {
    let items: Vec<String> = (0..10_000)
        .map(|i| {
            format!(
                r#"{{"id": {i}, "name": "n{i}", "score": {}.25, "active": true}}"#,
                i % 100
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}
