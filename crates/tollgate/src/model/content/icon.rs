//! Icons: an absolute source, an optional media type, sizes and theme, checked at construction and
//! rendered per revision.

use std::sync::Arc;

use tollgate_json::{JsonArray, JsonObject, JsonValue};

use crate::facts::error::{ContentError, ContentErrorKind};
use crate::model::content::checks::{absolute_uri, media_type};

/// The background an icon is designed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Theme {
    /// A light background.
    Light,
    /// A dark background.
    Dark,
}

/// An icon: an absolute source URI plus optional MIME type, sizes and theme.
///
/// Tollgate does not fetch icons or inspect their bytes; prefer trusted HTTPS or `data:`
/// sources.
///
/// # Examples
///
/// ```
/// use tollgate::{content::{Icon, Theme}};
///
/// let mut icon = Icon::with_source("https://example.com/icon.png")?.theme(Theme::Dark);
/// icon.set_sizes(["48x48", "any"])?;
/// assert!(icon.set_sizes(["48X48"]).is_err());
/// assert_eq!(icon.sizes(), ["48x48", "any"]); // an invalid replacement keeps the previous value
/// assert!(Icon::with_source("/relative.png").is_err());
/// # Ok::<(), tollgate::content::ContentError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Icon {
    src: Arc<str>,
    mime_type: Option<Arc<str>>,
    sizes: Vec<Arc<str>>,
    theme: Option<Theme>,
}

impl Icon {
    /// An icon from an absolute URI, kept exactly as spelled.
    ///
    /// # Errors
    ///
    /// [`ContentErrorKind::InvalidUri`] for a relative reference or a URI with spaces or
    /// controls.
    pub fn with_source(src: &str) -> Result<Self, ContentError> {
        Ok(Self {
            src: absolute_uri(src)?,
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        })
    }

    /// Sets the MIME type; on error the previous value is kept.
    ///
    /// # Errors
    ///
    /// [`ContentErrorKind::InvalidMediaType`].
    pub fn set_mime_type(&mut self, mime_type: &str) -> Result<(), ContentError> {
        self.mime_type = Some(media_type(mime_type)?);
        Ok(())
    }

    /// Replaces the sizes (`"48x48"` or `"any"`; order and duplicates kept, empty clears); on
    /// error the previous sizes are kept.
    ///
    /// # Errors
    ///
    /// [`ContentErrorKind::InvalidIconSize`].
    pub fn set_sizes<S: AsRef<str>>(
        &mut self,
        sizes: impl IntoIterator<Item = S>,
    ) -> Result<(), ContentError> {
        let mut next = Vec::new();
        for size in sizes {
            let size = size.as_ref();
            let valid = size == "any"
                || size.split_once('x').is_some_and(|(w, h)| {
                    !w.is_empty()
                        && !h.is_empty()
                        && w.bytes().all(|b| b.is_ascii_digit())
                        && h.bytes().all(|b| b.is_ascii_digit())
                });
            if !valid {
                return Err(ContentError::new(ContentErrorKind::InvalidIconSize));
            }
            next.push(Arc::from(size));
        }
        self.sizes = next;
        Ok(())
    }

    /// Sets the theme.
    #[must_use]
    pub fn theme(mut self, theme: Theme) -> Self {
        self.theme = Some(theme);
        self
    }

    /// The source URI as given.
    pub fn src(&self) -> &str {
        &self.src
    }

    /// The sizes, in order.
    pub fn sizes(&self) -> Vec<&str> {
        self.sizes.iter().map(|s| &**s).collect()
    }

    /// The MIME type, when set.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    pub(crate) fn render(&self) -> JsonValue {
        let mut b = JsonObject::builder().insert("src", &*self.src);
        if let Some(m) = &self.mime_type {
            b.push("mimeType", &**m);
        }
        if !self.sizes.is_empty() {
            b.push(
                "sizes",
                self.sizes
                    .iter()
                    .map(|s| JsonValue::from(&**s))
                    .collect::<JsonArray>(),
            );
        }
        if let Some(t) = self.theme {
            b.push("theme", if t == Theme::Light { "light" } else { "dark" });
        }
        b.build().into()
    }
}

pub(crate) fn render_icons(icons: &[Icon]) -> JsonValue {
    icons.iter().map(Icon::render).collect::<JsonArray>().into()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn rendered(icon: &Icon) -> String {
        tollgate_json::to_string(&icon.render(), &tollgate_json::OutputLimits::default())
            .unwrap_or_default()
    }

    #[test]
    fn the_mime_setter_checks_and_keeps_the_previous_value_on_error() {
        let mut icon = Icon::with_source("https://example.com/i.png").unwrap();
        assert_eq!(icon.mime_type(), None);
        assert!(icon.set_mime_type("image/png").is_ok());
        assert_eq!(icon.mime_type(), Some("image/png"));
        for bad in ["png", "image/", "image/png; charset", "image png", ""] {
            assert_eq!(
                icon.set_mime_type(bad).map_err(|e| e.kind()),
                Err(ContentErrorKind::InvalidMediaType),
                "{bad}"
            );
            assert_eq!(
                icon.mime_type(),
                Some("image/png"),
                "{bad} kept the old value"
            );
        }
        assert_eq!(
            rendered(&icon),
            r#"{"src":"https://example.com/i.png","mimeType":"image/png"}"#
        );
    }

    #[test]
    fn empty_sizes_reset_them() {
        let mut icon = Icon::with_source("data:image/png;base64,AAAA").unwrap();
        assert!(icon.set_sizes(["16x16", "any", "16x16"]).is_ok());
        assert_eq!(icon.sizes(), ["16x16", "any", "16x16"]);
        assert!(rendered(&icon).contains(r#""sizes":["16x16","any","16x16"]"#));
        assert!(icon.set_sizes(Vec::<&str>::new()).is_ok());
        assert!(icon.sizes().is_empty());
        assert_eq!(rendered(&icon), r#"{"src":"data:image/png;base64,AAAA"}"#);
        for bad in ["16", "x16", "16x", "16X16", "ANY", "1 6x16", "-1x2"] {
            assert!(icon.set_sizes([bad]).is_err(), "{bad}");
        }
    }
}
