//! Immutable shared strings and the UTF-16 accounting shared by the reader and the writer.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// An immutable JSON string, cheap to clone (shared storage).
///
/// It is a Rust string, so it is valid Unicode by construction: an unpaired UTF-16 surrogate can
/// never be held, and the reader rejects `\uD800`-style unpaired escapes for that reason.
///
/// # Examples
///
/// ```
/// use tollgate_json::JsonString;
/// let s = JsonString::from("héllo 🚀");
/// assert_eq!(&*s, "héllo 🚀");
/// assert_eq!(s.utf16_len(), 8);
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JsonString(Arc<str>);

impl JsonString {
    /// The string as `&str`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The length in UTF-16 code units, the unit of the specification's string ceilings.
    pub fn utf16_len(&self) -> usize {
        utf16_len(self.0.as_bytes())
    }
}

impl Deref for JsonString {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for JsonString {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for JsonString {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for JsonString {
    fn from(s: &str) -> Self {
        Self(Arc::from(s))
    }
}

impl From<String> for JsonString {
    fn from(s: String) -> Self {
        Self(Arc::from(s))
    }
}

impl From<Arc<str>> for JsonString {
    fn from(s: Arc<str>) -> Self {
        Self(s)
    }
}

impl fmt::Debug for JsonString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for JsonString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for JsonString {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for JsonString {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

/// UTF-16 code units of valid UTF-8: one per character, two per supplementary character.
#[inline]
pub(crate) fn utf16_len(utf8: &[u8]) -> usize {
    utf8.iter()
        .map(|&b| usize::from((b & 0xC0) != 0x80) + usize::from(b >= 0xF0))
        .sum()
}
