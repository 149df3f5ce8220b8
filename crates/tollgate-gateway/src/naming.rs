//! How one upstream's names and URIs are served: tool and prompt names as `PREFIX_name`,
//! resource URIs and URI templates as `PREFIX+uri` (so two upstreams' URIs cannot collide), the
//! served URI mapped back before a read is forwarded, and the URIs an upstream's answers carry
//! (a tool's or task's result content, a prompt's messages, a read's contents) mapped to the
//! served form on the way up, so a caller can read them back through the gateway. Every URI an
//! upstream sends is that upstream's, listed or not, so each is mapped. Structured content is
//! never touched (it is held to the output schema as the upstream wrote it). Knows nothing of
//! calls, links or registrations: it rewrites JSON values before the content constructors read
//! them.

use std::sync::Arc;

use tollgate::json::{JsonArray, JsonObject, JsonValue};

/// How an upstream's names and URIs are served: its prefix, if any.
#[derive(Clone)]
pub(crate) struct Naming {
    prefix: Option<Arc<str>>,
}

impl Naming {
    pub(crate) fn new(prefix: Option<&str>) -> Self {
        Self {
            prefix: prefix.map(Arc::from),
        }
    }

    /// The served name of a prompt (or tool): `PREFIX_name`.
    pub(crate) fn name(&self, name: &str) -> String {
        match &self.prefix {
            Some(prefix) => format!("{prefix}_{name}"),
            None => name.to_owned(),
        }
    }

    /// The served URI (or URI template) of an upstream one: `PREFIX+uri`.
    pub(crate) fn uri(&self, uri: &str) -> String {
        match &self.prefix {
            Some(prefix) => format!("{prefix}+{uri}"),
            None => uri.to_owned(),
        }
    }

    /// The upstream's URI of a served one; `None` when it does not carry the prefix.
    pub(crate) fn upstream_uri<'u>(&self, served: &'u str) -> Option<&'u str> {
        match &self.prefix {
            Some(prefix) => served.strip_prefix(&**prefix)?.strip_prefix('+'),
            None => Some(served),
        }
    }

    /// A tool's result (a `tools/call` answer, a task's result) with the URIs of its `content`
    /// blocks served: a `resource_link`'s `uri`, an embedded `resource`'s `resource.uri`.
    /// Every other member (`structuredContent` among them) is kept as it is.
    pub(crate) fn served_result(&self, result: &JsonObject) -> JsonObject {
        if self.prefix.is_none() {
            return result.clone();
        }
        with_member(result, "content", |content| match content {
            JsonValue::Array(blocks) => self.served_blocks(blocks).into(),
            other => other.clone(),
        })
    }

    /// A `prompts/get` answer with the URIs of its messages' content served (as
    /// [`served_result`](Self::served_result) does for a tool's content).
    pub(crate) fn served_prompt(&self, result: &JsonObject) -> JsonObject {
        if self.prefix.is_none() {
            return result.clone();
        }
        with_member(result, "messages", |messages| match messages {
            JsonValue::Array(messages) => messages
                .iter()
                .map(|message| match message {
                    JsonValue::Object(message) => {
                        with_member(message, "content", |block| self.served_block(block)).into()
                    }
                    other => other.clone(),
                })
                .collect::<JsonArray>()
                .into(),
            other => other.clone(),
        })
    }

    /// A `resources/read` answer's `contents`, each one's `uri` served.
    pub(crate) fn served_contents(&self, contents: &JsonArray) -> JsonArray {
        contents.iter().map(|c| self.served_uri_in(c)).collect()
    }

    fn served_blocks(&self, blocks: &JsonArray) -> JsonArray {
        blocks.iter().map(|b| self.served_block(b)).collect()
    }

    /// One content block with its URI served (`resource_link`, `resource`); any other block,
    /// or one of the wrong shape (the content constructors refuse it next), as it is.
    fn served_block(&self, block: &JsonValue) -> JsonValue {
        let JsonValue::Object(object) = block else {
            return block.clone();
        };
        match object.get("type").and_then(JsonValue::as_str) {
            Some("resource_link") => self.served_uri_in(block),
            Some("resource") => {
                with_member(object, "resource", |resource| self.served_uri_in(resource)).into()
            }
            _ => block.clone(),
        }
    }

    /// `value` (an object with a string `uri`) with that URI served; anything else as it is.
    fn served_uri_in(&self, value: &JsonValue) -> JsonValue {
        let JsonValue::Object(object) = value else {
            return value.clone();
        };
        with_member(object, "uri", |uri| match uri.as_str() {
            Some(uri) => JsonValue::from(self.uri(uri).as_str()),
            None => uri.clone(),
        })
        .into()
    }
}

/// `object` with the member `key` (when present) replaced by `map` of it, in its place.
fn with_member(
    object: &JsonObject,
    key: &str,
    map: impl FnOnce(&JsonValue) -> JsonValue,
) -> JsonObject {
    let mut map = Some(map);
    let mut out = JsonObject::builder();
    for (name, member) in object.iter() {
        let value = match map.take_if(|_| name.as_str() == key) {
            Some(map) => map(member),
            None => member.clone(),
        };
        out.push(name.clone(), value);
    }
    out.build()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn json(text: &str) -> JsonObject {
        tollgate::json::from_str(text, &tollgate::json::JsonLimits::default())
            .unwrap()
            .as_object()
            .unwrap()
            .clone()
    }

    const RESULT: &str = r#"{"content":[
        {"type":"text","text":"file:///t"},
        {"type":"resource_link","uri":"file:///a","name":"a"},
        {"type":"resource","resource":{"uri":"file:///b","text":"b"}}
    ],"structuredContent":{"uri":"file:///c","type":"resource_link"}}"#;

    #[test]
    fn links_and_embedded_resources_are_served_and_nothing_else() {
        let served = Naming::new(Some("up")).served_result(&json(RESULT));
        let expected = json(
            r#"{"content":[
            {"type":"text","text":"file:///t"},
            {"type":"resource_link","uri":"up+file:///a","name":"a"},
            {"type":"resource","resource":{"uri":"up+file:///b","text":"b"}}
        ],"structuredContent":{"uri":"file:///c","type":"resource_link"}}"#,
        );
        assert_eq!(served, expected);
    }

    #[test]
    fn without_a_prefix_everything_passes_unchanged() {
        let naming = Naming::new(None);
        assert_eq!(naming.served_result(&json(RESULT)), json(RESULT));
        let prompt = json(
            r#"{"messages":[{"role":"user","content":{"type":"resource_link","uri":"x:a","name":"a"}}]}"#,
        );
        assert_eq!(naming.served_prompt(&prompt), prompt);
    }

    #[test]
    fn prompt_messages_are_served() {
        let prompt = json(
            r#"{"description":"d","messages":[
            {"role":"user","content":{"type":"resource","resource":{"uri":"x:a","blob":"AA=="}}},
            {"role":"assistant","content":{"type":"resource_link","uri":"x:b","name":"b"}},
            {"role":"user","content":{"type":"text","text":"x:c"}}
        ]}"#,
        );
        let expected = json(
            r#"{"description":"d","messages":[
            {"role":"user","content":{"type":"resource","resource":{"uri":"p+x:a","blob":"AA=="}}},
            {"role":"assistant","content":{"type":"resource_link","uri":"p+x:b","name":"b"}},
            {"role":"user","content":{"type":"text","text":"x:c"}}
        ]}"#,
        );
        assert_eq!(Naming::new(Some("p")).served_prompt(&prompt), expected);
    }

    #[test]
    fn shapes_the_constructors_refuse_are_left_to_them() {
        let odd = json(
            r#"{"content":[5,{"type":"resource_link","uri":7},{"type":"resource","resource":"x"}]}"#,
        );
        assert_eq!(Naming::new(Some("up")).served_result(&odd), odd);
        let not_array = json(r#"{"content":{"type":"resource_link","uri":"x:a"}}"#);
        assert_eq!(Naming::new(Some("up")).served_result(&not_array), not_array);
    }
}
