//! Content blocks, tool results, prompt results and resource reads read back from their wire
//! form: a stored task result that must pass the sanitizer again when `tasks/get` returns it,
//! and another server's answers relayed by a gateway. Every value goes through the same
//! constructors, and so the same checks, as an application's; anything that does not is `None`.

use tollgate_json::{JsonObject, JsonValue};

use super::checks::MAX_INLINE_BYTES;
use super::icon::{Icon, Theme};
use super::{
    Annotations, AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceContents,
    ResourceLink, Role, TextContent,
};
use crate::model::result::{CompleteResult, ToolOutput};
use crate::wire::syntax::base64_decode;

/// A `GetPromptResult` object: its messages (role and content block) and description.
pub(crate) fn prompt_result(o: &JsonObject) -> Option<crate::model::prompt::PromptResult> {
    use crate::model::prompt::{PromptMessage, PromptResult};
    let mut messages = o.get("messages")?.as_array()?.iter();
    let message = |m: &JsonValue| -> Option<PromptMessage> {
        let m = m.as_object()?;
        let block = block_of(m.get("content")?.as_object()?)?;
        match text(m, "role")? {
            "user" => Some(PromptMessage::user(block)),
            "assistant" => Some(PromptMessage::assistant(block)),
            _ => None,
        }
    };
    let mut result = PromptResult::with_message(message(messages.next()?)?);
    for m in messages {
        result = result.add_message(message(m)?);
    }
    if let Some(d) = o.get("description") {
        result = result.description(d.as_str()?);
    }
    Some(result)
}

/// A `ReadResourceResult` object: its contents, at least one.
pub(crate) fn resource_output(o: &JsonObject) -> Option<crate::model::resource::ResourceOutput> {
    use crate::model::resource::ResourceOutput;
    let mut all = o.get("contents")?.as_array()?.iter();
    let mut output = ResourceOutput::with_contents(contents(all.next()?.as_object()?)?);
    for c in all {
        output = output.add_contents(contents(c.as_object()?)?);
    }
    Some(output)
}

/// A `CallToolResult` object as Tollgate writes it.
pub(crate) fn tool_result(o: &JsonObject) -> Option<CompleteResult> {
    let mut output = ToolOutput::builder();
    for block in o.get("content")?.as_array()? {
        output = output.add_content(block_of(block.as_object()?)?);
    }
    if let Some(structured) = o.get("structuredContent") {
        output = output.structured_content(structured.clone());
    }
    if let Some(flag) = o.get("isError") {
        output = output.error(flag.as_bool()?);
    }
    let builder = CompleteResult::with_tool_output(output.build());
    let builder = match o.get("_meta") {
        Some(meta) => builder.meta(meta.as_object()?.clone()).ok()?,
        None => builder,
    };
    Some(builder.build())
}

fn text<'o>(o: &'o JsonObject, key: &str) -> Option<&'o str> {
    o.get(key)?.as_str()
}

fn bytes(o: &JsonObject, key: &str) -> Option<Vec<u8>> {
    base64_decode(text(o, key)?.as_bytes(), MAX_INLINE_BYTES)
}

fn block_of(o: &JsonObject) -> Option<ContentBlock> {
    let block: ContentBlock = match text(o, "type")? {
        "text" => TextContent::new(text(o, "text")?).into(),
        "image" => ImageContent::new(&bytes(o, "data")?, text(o, "mimeType")?)
            .ok()?
            .into(),
        "audio" => AudioContent::new(&bytes(o, "data")?, text(o, "mimeType")?)
            .ok()?
            .into(),
        "resource_link" => link(o)?.into(),
        "resource" => EmbeddedResource::new(contents(o.get("resource")?.as_object()?)?).into(),
        _ => return None,
    };
    extras(block, o)
}

fn link(o: &JsonObject) -> Option<ResourceLink> {
    let mut l = ResourceLink::new(text(o, "uri")?, text(o, "name")?).ok()?;
    if let Some(t) = o.get("title") {
        l = l.title(t.as_str()?);
    }
    if let Some(d) = o.get("description") {
        l = l.description(d.as_str()?);
    }
    if let Some(m) = o.get("mimeType") {
        l = l.mime_type(m.as_str()?).ok()?;
    }
    if let Some(s) = o.get("size") {
        l = l.size(s.as_number()?.to_u64()?);
    }
    if let Some(icons) = o.get("icons") {
        for icon in icons.as_array()? {
            l = l.add_icon(icon_of(icon.as_object()?)?);
        }
    }
    Some(l)
}

fn icon_of(o: &JsonObject) -> Option<Icon> {
    let mut icon = Icon::with_source(text(o, "src")?).ok()?;
    if let Some(m) = o.get("mimeType") {
        icon.set_mime_type(m.as_str()?).ok()?;
    }
    if let Some(sizes) = o.get("sizes") {
        let sizes: Option<Vec<&str>> = sizes.as_array()?.iter().map(JsonValue::as_str).collect();
        icon.set_sizes(sizes?).ok()?;
    }
    match o.get("theme").map(JsonValue::as_str) {
        None => {}
        Some(Some("light")) => icon = icon.theme(Theme::Light),
        Some(Some("dark")) => icon = icon.theme(Theme::Dark),
        Some(_) => return None,
    }
    Some(icon)
}

fn contents(o: &JsonObject) -> Option<ResourceContents> {
    let uri = text(o, "uri")?;
    let mime = match o.get("mimeType") {
        Some(m) => Some(m.as_str()?),
        None => None,
    };
    match (o.get("text"), o.get("blob")) {
        (Some(t), None) => ResourceContents::text(uri, mime, t.as_str()?).ok(),
        (None, Some(_)) => ResourceContents::blob(uri, mime, &bytes(o, "blob")?).ok(),
        _ => None,
    }
}

/// A block's annotations and `_meta`.
fn extras(block: ContentBlock, o: &JsonObject) -> Option<ContentBlock> {
    let annotations = match o.get("annotations") {
        Some(a) => Some(annotations_of(a.as_object()?)?),
        None => None,
    };
    let meta = match o.get("_meta") {
        Some(m) => Some(m.as_object()?.clone()),
        None => None,
    };
    macro_rules! apply {
        ($b:expr) => {{
            let mut b = $b;
            if let Some(a) = annotations {
                b = b.with_annotations(a);
            }
            if let Some(m) = meta {
                b = b.with_meta(m).ok()?;
            }
            b.into()
        }};
    }
    Some(match block {
        ContentBlock::Text(b) => apply!(b),
        ContentBlock::Image(b) => apply!(b),
        ContentBlock::Audio(b) => apply!(b),
        ContentBlock::ResourceLink(b) => apply!(b),
        ContentBlock::Resource(b) => apply!(b),
    })
}

fn annotations_of(o: &JsonObject) -> Option<Annotations> {
    let mut a = Annotations::new();
    if let Some(audience) = o.get("audience") {
        let roles: Option<Vec<Role>> = audience
            .as_array()?
            .iter()
            .map(|r| match r.as_str()? {
                "user" => Some(Role::User),
                "assistant" => Some(Role::Assistant),
                _ => None,
            })
            .collect();
        a = a.audience(roles?);
    }
    if let Some(p) = o.get("priority") {
        a = a.priority(p.as_number()?.to_f64()?).ok()?;
    }
    if let Some(t) = o.get("lastModified") {
        a = a.last_modified(t.as_str()?).ok()?;
    }
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::projection::render_tool_result;
    use crate::version::ProtocolVersion;
    use tollgate_json::{JsonLimits, OutputLimits, from_slice};

    #[test]
    fn every_block_round_trips() -> Result<(), crate::facts::error::ContentError> {
        let mut icon = Icon::with_source("https://example.com/i.png")?;
        icon.set_mime_type("image/png")?;
        icon.set_sizes(["48x48"])?;
        let output = ToolOutput::builder()
            .add_content(
                TextContent::new("hi").with_annotations(
                    Annotations::new()
                        .audience([Role::User])
                        .priority(0.5)?
                        .last_modified("2026-01-01T00:00:00Z")?,
                ),
            )
            .add_content(ImageContent::new(b"\x89PNG", "image/png")?)
            .add_content(AudioContent::new(b"RIFF", "audio/wav")?)
            .add_content(
                ResourceLink::new("file:///a.txt", "a")?
                    .title("A")
                    .size(3)
                    .add_icon(icon.theme(Theme::Dark)),
            )
            .add_content(EmbeddedResource::new(ResourceContents::blob(
                "file:///b.bin",
                Some("application/octet-stream"),
                b"\x00\x01",
            )?))
            .structured_content(JsonValue::from("s"))
            .error(true)
            .build();
        let result = CompleteResult::with_tool_output(output).build();
        let limits = OutputLimits::default();
        let text = render_tool_result(&limits, ProtocolVersion::V2026_07_28, &result);
        let text = text.as_deref().unwrap_or_default();
        let value = from_slice(text.as_bytes(), &JsonLimits::default());
        let parsed = value.ok().and_then(|v| tool_result(v.as_object()?));
        assert_eq!(parsed.as_ref(), Some(&result));
        Ok(())
    }

    #[test]
    fn a_block_that_breaks_a_rule_is_refused() {
        let value = from_slice(
            br#"{"content":[{"type":"image","data":"!!","mimeType":"image/png"}]}"#,
            &JsonLimits::default(),
        );
        assert!(
            value
                .ok()
                .and_then(|v| tool_result(v.as_object()?))
                .is_none()
        );
    }
}
