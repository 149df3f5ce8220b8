//! Content blocks and resource contents read back from their wire form, for the results built
//! from them (`CompleteResult::from_wire`, `PromptResult::from_wire`,
//! `ResourceOutput::from_wire`): a stored task result that must pass the sanitizer again when
//! `tasks/get` returns it, and another server's answers relayed by a gateway. Every value goes
//! through the same constructors, and so the same checks, as an application's; anything that
//! does not is `None`. Knows nothing of the results themselves.

use tollgate_json::{JsonObject, JsonValue};

use super::checks::MAX_INLINE_BYTES;
use super::icon::{Icon, Theme};
use super::{
    Annotations, AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceContents,
    ResourceLink, Role, TextContent,
};
use crate::wire::syntax::base64_decode;

fn text<'o>(o: &'o JsonObject, key: &str) -> Option<&'o str> {
    o.get(key)?.as_str()
}

fn bytes(o: &JsonObject, key: &str) -> Option<Vec<u8>> {
    base64_decode(text(o, key)?.as_bytes(), MAX_INLINE_BYTES)
}

/// A content block, through its constructor's checks.
pub(crate) fn block_of(o: &JsonObject) -> Option<ContentBlock> {
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

/// Resource contents (text or blob), through their constructors' checks.
pub(crate) fn contents(o: &JsonObject) -> Option<ResourceContents> {
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
    use crate::model::result::{CompleteResult, ToolOutput};
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
        let parsed = value
            .ok()
            .and_then(|v| CompleteResult::from_wire(v.as_object()?));
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
                .and_then(|v| CompleteResult::from_wire(v.as_object()?))
                .is_none()
        );
    }
}
