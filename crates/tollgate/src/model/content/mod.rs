//! The content model: text, image, audio, resource links, embedded resources, annotations and
//! icons, with their construction checks and their wire rendering per revision.
//!
//! Owns the rules each value must follow at construction (media types, absolute URIs, icon
//! sizes, priorities, timestamps, `_meta` keys) and how each renders. Construction never
//! prevalidates the eventual response size: that is checked when the response is written.
//! Knows nothing of tools, dispatch or transports.

use std::sync::Arc;

use tollgate_json::{JsonArray, JsonNumber, JsonObject, JsonObjectBuilder, JsonValue};

use crate::facts::error::{ContentError, ContentErrorKind};
use crate::version::ProtocolVersion;
use crate::wire::syntax;

pub(crate) mod checks;
pub(crate) mod icon;
pub(crate) mod parse;

use checks::{RenderError, absolute_uri, check_meta, inline, media_type};
use icon::{Icon, render_icons};

/// Who a content item is meant for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The human user.
    User,
    /// The model.
    Assistant,
}

impl Role {
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

/// Optional hints on a content item: audience, priority and last-modified time.
///
/// # Examples
///
/// ```
/// use tollgate::{content::{Annotations, Role}};
///
/// let a = Annotations::new()
///     .audience([Role::User])
///     .priority(0.5)?
///     .last_modified("2025-01-12T15:00:58Z")?;
/// assert_eq!(a.get_priority(), Some(0.5));
/// assert!(Annotations::new().priority(1.5).is_err());
/// # Ok::<(), tollgate::content::ContentError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Annotations {
    audience: Option<Vec<Role>>,
    priority: Option<f64>,
    last_modified: Option<Arc<str>>,
}

impl Annotations {
    /// No hints.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the audience (order and duplicates kept).
    #[must_use]
    pub fn audience(mut self, roles: impl IntoIterator<Item = Role>) -> Self {
        self.audience = Some(roles.into_iter().collect());
        self
    }

    /// Sets the priority, from 0 (least important) to 1 (most).
    ///
    /// # Errors
    ///
    /// [`ContentErrorKind::InvalidPriority`] outside 0 to 1 or when not finite.
    pub fn priority(mut self, priority: f64) -> Result<Self, ContentError> {
        if !(0.0..=1.0).contains(&priority) {
            return Err(ContentError::new(ContentErrorKind::InvalidPriority));
        }
        self.priority = Some(priority);
        Ok(self)
    }

    /// Sets the last-modified time, an RFC 3339 date-time kept as spelled.
    ///
    /// # Errors
    ///
    /// [`ContentErrorKind::InvalidTimestamp`] when not an RFC 3339 date-time.
    pub fn last_modified(mut self, timestamp: &str) -> Result<Self, ContentError> {
        if !syntax::is_rfc3339(timestamp) {
            return Err(ContentError::new(ContentErrorKind::InvalidTimestamp));
        }
        self.last_modified = Some(Arc::from(timestamp));
        Ok(self)
    }

    /// The priority, if set.
    pub fn get_priority(&self) -> Option<f64> {
        self.priority
    }

    fn render(&self, revision: ProtocolVersion) -> JsonValue {
        let mut b = JsonObject::builder();
        if let Some(audience) = &self.audience {
            b.push(
                "audience",
                audience
                    .iter()
                    .map(|r| JsonValue::from(r.as_str()))
                    .collect::<JsonArray>(),
            );
        }
        if let Some(p) = self.priority.and_then(JsonNumber::from_f64) {
            b.push("priority", p);
        }
        if let Some(t) = self
            .last_modified
            .as_ref()
            .filter(|_| revision.carries_titles_and_structure())
        {
            b.push("lastModified", &**t);
        }
        b.build().into()
    }
}

/// Fields shared by every content block: annotations and `_meta`.
#[derive(Clone, Debug, Default, PartialEq)]
struct Extras {
    annotations: Option<Annotations>,
    meta: Option<JsonObject>,
}

impl Extras {
    /// The annotations and `_meta` as `revision` carries them (`lastModified` and `_meta` from
    /// 2025-06-18 on).
    fn render_into(&self, b: &mut JsonObjectBuilder, revision: ProtocolVersion) {
        if let Some(a) = &self.annotations {
            b.push("annotations", a.render(revision));
        }
        if let Some(m) = self
            .meta
            .as_ref()
            .filter(|_| revision.carries_titles_and_structure())
        {
            b.push("_meta", m.clone());
        }
    }
}

macro_rules! extras_methods {
    ($t:ty) => {
        impl $t {
            /// Sets the annotations.
            #[must_use]
            pub fn with_annotations(mut self, annotations: Annotations) -> Self {
                self.extras.annotations = Some(annotations);
                self
            }

            /// Sets the `_meta` object.
            ///
            /// # Errors
            ///
            /// [`ContentErrorKind::InvalidMetaKey`] when a key breaks the `_meta` naming rules.
            pub fn with_meta(mut self, meta: JsonObject) -> Result<Self, ContentError> {
                check_meta(&meta)?;
                self.extras.meta = Some(meta);
                Ok(self)
            }
        }
    };
}

/// Text for the model or the user. Any Rust string is well-formed Unicode, so it is kept
/// exactly: empty strings, controls and every normalisation form included.
///
/// # Examples
///
/// ```
/// use tollgate::content::TextContent;
///
/// let t = TextContent::new("No matching items");
/// assert_eq!(t.text(), "No matching items");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TextContent {
    text: Arc<str>,
    extras: Extras,
}

impl TextContent {
    /// Text content.
    pub fn new(text: impl Into<Arc<str>>) -> Self {
        Self {
            text: text.into(),
            extras: Extras::default(),
        }
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.text
    }
}
extras_methods!(TextContent);

/// Binary content (image or audio): a defensive copy of the bytes plus a media type.
#[derive(Clone, Debug, PartialEq)]
struct Binary {
    data: Arc<[u8]>,
    mime_type: Arc<str>,
}

impl Binary {
    fn new(data: &[u8], mime_type: &str) -> Result<Self, ContentError> {
        Ok(Self {
            mime_type: media_type(mime_type)?,
            data: Arc::from(data),
        })
    }
}

macro_rules! binary_methods {
    ($t:ty, $doc:literal) => {
        impl $t {
            #[doc = $doc]
            ///
            /// # Errors
            ///
            /// [`ContentErrorKind::InvalidMediaType`].
            pub fn new(data: &[u8], mime_type: &str) -> Result<Self, ContentError> {
                Ok(Self {
                    binary: Binary::new(data, mime_type)?,
                    extras: Extras::default(),
                })
            }

            /// The media type as given.
            pub fn mime_type(&self) -> &str {
                &self.binary.mime_type
            }

            /// The bytes.
            pub fn data(&self) -> &[u8] {
                &self.binary.data
            }
        }
    };
}

/// An image: bytes (copied) and a media type checked by the ASCII media-type grammar. The bytes
/// are not inspected; at most [`MAX_INLINE_BYTES`](crate::content::MAX_INLINE_BYTES) can be sent.
///
/// # Examples
///
/// ```
/// use tollgate::content::ImageContent;
///
/// let png = ImageContent::new(&[0x89, b'P', b'N', b'G'], "image/png")?;
/// assert_eq!(png.mime_type(), "image/png");
/// # Ok::<(), tollgate::content::ContentError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ImageContent {
    binary: Binary,
    extras: Extras,
}

binary_methods!(ImageContent, "An image.");
extras_methods!(ImageContent);

/// Audio: bytes (copied) and a media type, as [`ImageContent`].
#[derive(Clone, Debug, PartialEq)]
pub struct AudioContent {
    binary: Binary,
    extras: Extras,
}

binary_methods!(AudioContent, "Audio.");
extras_methods!(AudioContent);

/// A link to a resource the client may read or fetch: a URI, a name and optional descriptor
/// fields. Use it for anything larger than an inline item may be.
///
/// # Examples
///
/// ```
/// use tollgate::content::ResourceLink;
///
/// let link = ResourceLink::new("https://example.com/items/A-1", "A-1")?
///     .title("Item A-1")
///     .mime_type("application/json")?
///     .size(512);
/// assert_eq!(link.uri(), "https://example.com/items/A-1");
/// # Ok::<(), tollgate::content::ContentError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceLink {
    uri: Arc<str>,
    name: Arc<str>,
    title: Option<Arc<str>>,
    description: Option<Arc<str>>,
    mime_type: Option<Arc<str>>,
    size: Option<u64>,
    icons: Vec<Icon>,
    extras: Extras,
}

impl ResourceLink {
    pub(crate) fn has_icons(&self) -> bool {
        !self.icons.is_empty()
    }

    /// A link.
    ///
    /// # Errors
    ///
    /// [`ContentErrorKind::InvalidUri`] unless `uri` is absolute.
    pub fn new(uri: &str, name: impl Into<Arc<str>>) -> Result<Self, ContentError> {
        Ok(Self {
            uri: absolute_uri(uri)?,
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            icons: Vec::new(),
            extras: Extras::default(),
        })
    }

    /// Sets the display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<Arc<str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the description.
    #[must_use]
    pub fn description(mut self, description: impl Into<Arc<str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the media type.
    ///
    /// # Errors
    ///
    /// [`ContentErrorKind::InvalidMediaType`].
    pub fn mime_type(mut self, mime_type: &str) -> Result<Self, ContentError> {
        self.mime_type = Some(media_type(mime_type)?);
        Ok(self)
    }

    /// Sets the size in raw bytes.
    #[must_use]
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }

    /// Appends an icon. Icons are omitted on 2025-06-18, which cannot carry them.
    #[must_use]
    pub fn add_icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// The URI as given.
    pub fn uri(&self) -> &str {
        &self.uri
    }
}
extras_methods!(ResourceLink);

/// The contents of an embedded resource: text or a blob.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The resource URI.
        uri: Arc<str>,
        /// The media type, if known.
        mime_type: Option<Arc<str>>,
        /// The text.
        text: Arc<str>,
    },
    /// Binary contents (base64 on the wire, at most [`MAX_INLINE_BYTES`](crate::content::MAX_INLINE_BYTES) raw bytes).
    Blob {
        /// The resource URI.
        uri: Arc<str>,
        /// The media type, if known.
        mime_type: Option<Arc<str>>,
        /// The bytes.
        data: Arc<[u8]>,
    },
}

impl ResourceContents {
    /// Text contents.
    ///
    /// # Errors
    ///
    /// [`ContentErrorKind::InvalidUri`], or [`ContentErrorKind::InvalidMediaType`] for a given
    /// but malformed media type.
    pub fn text(
        uri: &str,
        mime_type: Option<&str>,
        text: impl Into<Arc<str>>,
    ) -> Result<Self, ContentError> {
        Ok(Self::Text {
            uri: absolute_uri(uri)?,
            mime_type: mime_type.map(media_type).transpose()?,
            text: text.into(),
        })
    }

    /// Blob contents (the bytes are copied).
    ///
    /// # Errors
    ///
    /// As [`ResourceContents::text`].
    pub fn blob(uri: &str, mime_type: Option<&str>, data: &[u8]) -> Result<Self, ContentError> {
        Ok(Self::Blob {
            uri: absolute_uri(uri)?,
            mime_type: mime_type.map(media_type).transpose()?,
            data: Arc::from(data),
        })
    }

    pub(crate) fn render(&self) -> Result<JsonValue, RenderError> {
        let (uri, mime_type) = match self {
            Self::Text { uri, mime_type, .. } | Self::Blob { uri, mime_type, .. } => {
                (uri, mime_type)
            }
        };
        let mut b = JsonObject::builder().insert("uri", &**uri);
        if let Some(m) = mime_type {
            b.push("mimeType", &**m);
        }
        match self {
            Self::Text { text, .. } => b.push("text", &**text),
            Self::Blob { data, .. } => b.push("blob", inline(data)?),
        }
        Ok(b.build().into())
    }
}

/// A resource embedded in a result.
///
/// # Examples
///
/// ```
/// use tollgate::{content::{EmbeddedResource, ResourceContents}};
///
/// let r = EmbeddedResource::new(ResourceContents::text("file:///notes.txt", Some("text/plain"), "hi")?);
/// # Ok::<(), tollgate::content::ContentError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct EmbeddedResource {
    contents: ResourceContents,
    extras: Extras,
}

impl EmbeddedResource {
    /// An embedded resource.
    pub fn new(contents: ResourceContents) -> Self {
        Self {
            contents,
            extras: Extras::default(),
        }
    }

    /// The contents.
    pub fn contents(&self) -> &ResourceContents {
        &self.contents
    }
}
extras_methods!(EmbeddedResource);

/// One block of tool (or prompt) content.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text.
    Text(TextContent),
    /// An image.
    Image(ImageContent),
    /// Audio.
    Audio(AudioContent),
    /// A resource link.
    ResourceLink(ResourceLink),
    /// An embedded resource.
    Resource(EmbeddedResource),
}

impl ContentBlock {
    /// Appends the block's JSON to `out` (plain text without extras is written directly; other
    /// blocks go through the tree).
    pub(crate) fn write_into(
        &self,
        revision: ProtocolVersion,
        out: &mut Vec<u8>,
        limits: &tollgate_json::OutputLimits,
    ) -> Result<(), RenderError> {
        if let Self::Text(t) = self
            && t.extras.annotations.is_none()
            && t.extras.meta.is_none()
        {
            out.extend_from_slice(br#"{"type":"text","text":"#);
            tollgate_json::write_str_into(&t.text, out, limits).map_err(|_| RenderError)?;
            out.push(b'}');
            return Ok(());
        }
        let value = self.render(revision)?;
        tollgate_json::write_into(&value, out, limits).map_err(|_| RenderError)
    }

    /// Whether `revision` has a type for the block (audio from 2025-03-26 on, resource links
    /// from 2025-06-18 on). A tool result leaves out the blocks its revision cannot carry, as it
    /// leaves out icons; a prompt message, which has exactly one block, fails instead.
    pub(crate) fn representable(&self, revision: ProtocolVersion) -> bool {
        match self {
            Self::Audio(_) => revision.carries_annotations_and_audio(),
            Self::ResourceLink(_) => revision.carries_titles_and_structure(),
            _ => true,
        }
    }

    /// The block as `revision` carries it; a block the revision has no type for fails the
    /// rendering (see [`Self::representable`]).
    pub(crate) fn render(&self, revision: ProtocolVersion) -> Result<JsonValue, RenderError> {
        if !self.representable(revision) {
            return Err(RenderError);
        }
        let mut b = JsonObject::builder();
        let extras = match self {
            Self::Text(t) => {
                b.push("type", "text");
                b.push("text", &*t.text);
                &t.extras
            }
            Self::Image(i) => {
                b.push("type", "image");
                b.push("data", inline(&i.binary.data)?);
                b.push("mimeType", &*i.binary.mime_type);
                &i.extras
            }
            Self::Audio(a) => {
                b.push("type", "audio");
                b.push("data", inline(&a.binary.data)?);
                b.push("mimeType", &*a.binary.mime_type);
                &a.extras
            }
            Self::ResourceLink(l) => {
                b.push("type", "resource_link");
                b.push("uri", &*l.uri);
                b.push("name", &*l.name);
                if let Some(t) = &l.title {
                    b.push("title", &**t);
                }
                if let Some(d) = &l.description {
                    b.push("description", &**d);
                }
                if let Some(m) = &l.mime_type {
                    b.push("mimeType", &**m);
                }
                if let Some(s) = l.size {
                    b.push("size", s);
                }
                if !l.icons.is_empty() && revision.carries_icons() {
                    b.push("icons", render_icons(&l.icons));
                }
                &l.extras
            }
            Self::Resource(r) => {
                b.push("type", "resource");
                b.push("resource", r.contents.render()?);
                &r.extras
            }
        };
        extras.render_into(&mut b, revision);
        Ok(b.build().into())
    }
}

macro_rules! block_from {
    ($($t:ident => $v:ident),*) => {$(
        impl From<$t> for ContentBlock {
            fn from(value: $t) -> Self {
                Self::$v(value)
            }
        }
    )*};
}
block_from!(TextContent => Text, ImageContent => Image, AudioContent => Audio,
    ResourceLink => ResourceLink, EmbeddedResource => Resource);

#[cfg(test)]
mod tests {
    use super::checks::MAX_INLINE_BYTES;
    use super::*;
    use tollgate_json::{OutputLimits, to_string};

    fn wire(block: impl Into<ContentBlock>, revision: ProtocolVersion) -> String {
        let v = block.into().render(revision).unwrap_or(JsonValue::Null);
        to_string(&v, &OutputLimits::default()).unwrap_or_default()
    }

    #[test]
    fn the_older_revisions_carry_what_their_schemas_have() -> Result<(), ContentError> {
        let (nov, march, june) = (
            ProtocolVersion::V2024_11_05,
            ProtocolVersion::V2025_03_26,
            ProtocolVersion::V2025_06_18,
        );
        let audio = AudioContent::new(b"foo", "audio/wav")?;
        assert_eq!(wire(audio.clone(), nov), "null");
        assert_eq!(
            wire(audio, march),
            r#"{"type":"audio","data":"Zm9v","mimeType":"audio/wav"}"#
        );
        let link = ResourceLink::new("https://example.com/a", "a")?;
        assert!(!ContentBlock::from(link.clone()).representable(march));
        assert!(ContentBlock::from(link).representable(june));
        let text = TextContent::new("x")
            .with_annotations(
                Annotations::new()
                    .priority(0.5)?
                    .last_modified("2025-01-01T00:00:00Z")?,
            )
            .with_meta(JsonObject::builder().insert("k", 1).build())?;
        assert_eq!(
            wire(text.clone(), march),
            r#"{"type":"text","text":"x","annotations":{"priority":0.5}}"#
        );
        assert_eq!(
            wire(text, june),
            r#"{"type":"text","text":"x","annotations":{"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"},"_meta":{"k":1}}"#
        );
        Ok(())
    }

    #[test]
    fn blocks_render_per_schema() -> Result<(), ContentError> {
        let v = ProtocolVersion::V2026_07_28;
        assert_eq!(
            wire(TextContent::new("hi"), v),
            r#"{"type":"text","text":"hi"}"#
        );
        assert_eq!(
            wire(ImageContent::new(b"foo", "image/png")?, v),
            r#"{"type":"image","data":"Zm9v","mimeType":"image/png"}"#
        );
        let annotated = TextContent::new("x").with_annotations(
            Annotations::new()
                .audience([Role::User, Role::Assistant])
                .priority(0.25)?,
        );
        assert_eq!(
            wire(annotated, v),
            r#"{"type":"text","text":"x","annotations":{"audience":["user","assistant"],"priority":0.25}}"#
        );
        let blob = EmbeddedResource::new(ResourceContents::blob("test://b", None, b"fo")?);
        assert_eq!(
            wire(blob, v),
            r#"{"type":"resource","resource":{"uri":"test://b","blob":"Zm8="}}"#
        );
        Ok(())
    }

    #[test]
    fn resource_link_icons_are_dropped_only_on_june() -> Result<(), ContentError> {
        let link =
            ResourceLink::new("test://x", "x")?.add_icon(Icon::with_source("https://e.com/i.png")?);
        assert!(wire(link.clone(), ProtocolVersion::V2025_11_25).contains("icons"));
        assert!(wire(link.clone(), ProtocolVersion::V2026_07_28).contains("icons"));
        assert!(!wire(link, ProtocolVersion::V2025_06_18).contains("icons"));
        Ok(())
    }

    #[test]
    fn inline_limit_at_and_past() -> Result<(), ContentError> {
        let at = ImageContent::new(&vec![0u8; MAX_INLINE_BYTES], "image/png")?;
        let rendered = ContentBlock::from(at).render(ProtocolVersion::V2026_07_28);
        let data_len = rendered
            .ok()
            .and_then(|v| v.get("data").and_then(|d| d.as_str().map(str::len)));
        assert_eq!(data_len, Some(1_048_576));
        let past = AudioContent::new(&vec![0u8; MAX_INLINE_BYTES + 1], "audio/wav")?;
        assert_eq!(
            ContentBlock::from(past).render(ProtocolVersion::V2026_07_28),
            Err(RenderError)
        );
        Ok(())
    }

    #[test]
    fn meta_keys_are_checked() {
        let bad = JsonObject::builder().insert("-x", 1).build();
        assert_eq!(
            TextContent::new("x").with_meta(bad).map(|_| ()),
            Err(ContentError::new(ContentErrorKind::InvalidMetaKey))
        );
    }
}
