//! The construction checks content values share (media types, absolute URIs, `_meta` keys) and
//! the inline-size bound on image, audio and blob items.

use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::error::{ContentError, ContentErrorKind};
use crate::wire::syntax;

/// The most raw bytes one image, audio or blob item may carry on the wire: its base64 form then
/// fills the 1,048,576-character JSON string ceiling exactly.
pub const MAX_INLINE_BYTES: usize = 786_432;

/// A rendering failure: the value cannot be written within the output contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RenderError;

pub(crate) fn check_meta(meta: &JsonObject) -> Result<(), ContentError> {
    if meta.keys().all(syntax::is_meta_key) {
        Ok(())
    } else {
        Err(ContentError::new(ContentErrorKind::InvalidMetaKey))
    }
}

pub(crate) fn media_type(text: &str) -> Result<Arc<str>, ContentError> {
    if syntax::is_media_type(text) {
        Ok(Arc::from(text))
    } else {
        Err(ContentError::new(ContentErrorKind::InvalidMediaType))
    }
}

pub(crate) fn absolute_uri(text: &str) -> Result<Arc<str>, ContentError> {
    if syntax::is_absolute_uri(text) {
        Ok(Arc::from(text))
    } else {
        Err(ContentError::new(ContentErrorKind::InvalidUri))
    }
}

pub(crate) fn inline(data: &[u8]) -> Result<JsonValue, RenderError> {
    if data.len() > MAX_INLINE_BYTES {
        return Err(RenderError);
    }
    Ok(JsonValue::from(syntax::base64_encode(data)))
}
