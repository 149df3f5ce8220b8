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

/// The index of the first byte that ends a run of ordinary string content (`"`, `\` or a C0
/// control character), or `bytes.len()`. Eight bytes at a time.
#[inline]
pub(crate) fn find_stop(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        let found =
            (w.wrapping_sub(ONES * 0x20) | quote.wrapping_sub(ONES) | backslash.wrapping_sub(ONES))
                & !w
                & HIGHS;
        // `!w & HIGHS` drops non-ASCII bytes, which never stop a run; a borrow can set a high bit
        // above a real match, but the lowest set bit is always a real match.
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + words
        .remainder()
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
        .unwrap_or(bytes.len() - i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_stop_agrees_with_a_plain_scan() {
        let plain = |b: &[u8]| {
            b.iter()
                .position(|&c| c < 0x20 || c == b'"' || c == b'\\')
                .unwrap_or(b.len())
        };
        let mut samples: Vec<Vec<u8>> = Vec::new();
        for len in 0..40 {
            for pos in 0..=len {
                for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                    let mut v = "aé🚀x".repeat(len).into_bytes();
                    v.truncate(len);
                    if pos < len {
                        v[pos] = special;
                    }
                    samples.push(v);
                }
            }
        }
        samples.push(vec![0xFF, 0xA2, 0x20, 0x21, 0x5B, 0x5D, 0x7F, 0x80, b'"']);
        samples.push("ü\"".as_bytes().to_vec());
        samples.push(vec![0xE2, 0x80, 0xA2, 0xC2, 0xA2, 0x22, 0, 0]);
        for s in samples {
            assert_eq!(find_stop(&s), plain(&s), "{s:?}");
        }
    }
}
