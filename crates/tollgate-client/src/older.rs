//! What the revisions before 2025-06-18 (2025-03-26, 2024-11-05) do not define, taken out of
//! what their servers send: `title` on descriptors and prompt arguments, a tool's
//! `outputSchema` and a call's `structuredContent` (and tool `annotations` before 2025-03-26).
//! A caller (a gateway re-serving an upstream on a newer revision) then never acts on a promise
//! the server's revision does not make. It owns those rules; it must not know transports.

use tollgate_json::{JsonArray, JsonObject, JsonValue};

use crate::revision::Revision;

/// A list's items as `revision` defines them.
pub(crate) fn project_items(revision: Revision, items: Vec<JsonValue>) -> Vec<JsonValue> {
    if revision.carries_structure() {
        return items;
    }
    items
        .into_iter()
        .map(|item| match item {
            JsonValue::Object(item) => JsonValue::Object(project_item(revision, &item)),
            other => other,
        })
        .collect()
}

fn project_item(revision: Revision, item: &JsonObject) -> JsonObject {
    let mut out = JsonObject::builder();
    for (name, value) in item.iter() {
        match name.as_str() {
            "title" | "outputSchema" => {}
            "annotations"
                if !revision.carries_annotations() && item.contains_key("inputSchema") => {}
            "arguments" => out.push(name.clone(), untitled_arguments(value)),
            _ => out.push(name.clone(), value.clone()),
        }
    }
    out.build()
}

/// A prompt's arguments without their `title`s.
fn untitled_arguments(arguments: &JsonValue) -> JsonValue {
    let Some(list) = arguments.as_array() else {
        return arguments.clone();
    };
    let list: JsonArray = list
        .iter()
        .map(|a| match a.as_object() {
            Some(a) => JsonValue::Object(without(a, "title")),
            None => a.clone(),
        })
        .collect();
    JsonValue::Array(list)
}

/// A tool result as `revision` defines it: no `structuredContent` before 2025-06-18.
pub(crate) fn project_result(revision: Revision, result: JsonValue) -> JsonValue {
    match result {
        JsonValue::Object(o) if !revision.carries_structure() => {
            JsonValue::Object(without(&o, "structuredContent"))
        }
        other => other,
    }
}

/// The text of a result's only content block, which an older revision's typed result is read
/// from (the serialized JSON later revisions also send beside `structuredContent`).
pub(crate) fn only_text(result: &JsonValue) -> Option<&str> {
    match &**result.get("content")?.as_array()? {
        [block] if block.get("type").and_then(JsonValue::as_str) == Some("text") => {
            block.get("text")?.as_str()
        }
        _ => None,
    }
}

fn without(object: &JsonObject, name: &str) -> JsonObject {
    if !object.contains_key(name) {
        return object.clone();
    }
    let mut out = JsonObject::builder();
    for (k, v) in object.iter().filter(|(k, _)| k.as_str() != name) {
        out.push(k.clone(), v.clone());
    }
    out.build()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use tollgate_json::{JsonLimits, from_str};

    fn json(text: &str) -> JsonValue {
        from_str(text, &JsonLimits::default()).unwrap()
    }

    const TOOL: &str = r#"{"name":"t","title":"T","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}"#;

    #[test]
    fn descriptors_lose_what_the_revision_does_not_define() {
        let tool = json(TOOL);
        let kept = project_items(Revision::V2025_06_18, vec![tool.clone()]);
        assert_eq!(kept, [tool]);
        let march = project_items(Revision::V2025_03_26, vec![json(TOOL)]);
        assert_eq!(
            march,
            [json(
                r#"{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}"#
            )]
        );
        let november = project_items(Revision::V2024_11_05, vec![json(TOOL)]);
        assert_eq!(
            november,
            [json(r#"{"name":"t","inputSchema":{"type":"object"}}"#)]
        );
        let prompt = json(r#"{"name":"p","title":"P","arguments":[{"name":"a","title":"A"}]}"#);
        assert_eq!(
            project_items(Revision::V2025_03_26, vec![prompt]),
            [json(r#"{"name":"p","arguments":[{"name":"a"}]}"#)]
        );
    }

    #[test]
    fn results_lose_structured_content_before_2025_06_18() {
        let result =
            json(r#"{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}"#);
        assert_eq!(
            project_result(Revision::V2025_06_18, result.clone()),
            result
        );
        let old = project_result(Revision::V2025_03_26, result);
        assert!(old.get("structuredContent").is_none());
        assert_eq!(only_text(&old), Some(r#"{"n":1}"#));
        let two = json(r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}"#);
        assert_eq!(only_text(&two), None);
    }
}
