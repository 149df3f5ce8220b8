//! JSON Pointer (RFC 6901) escaping and the decoding of `$ref` fragments (RFC 3986 percent
//! encoding, then RFC 6901 tokens).

/// Appends `token` to `out` with `~` → `~0` and `/` → `~1`.
pub(crate) fn escape_into(token: &str, out: &mut String) {
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// Decodes `%XX` sequences; `None` when a sequence is malformed or the result is not UTF-8.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hi = (hex[0] as char).to_digit(16)?;
            let lo = (hex[1] as char).to_digit(16)?;
            out.push(u8::try_from(hi * 16 + lo).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Turns a decoded fragment that starts with `/` into the canonical escaped pointer used as a
/// lookup key; `None` when a `~` escape is malformed.
pub(crate) fn canonical_pointer(fragment: &str) -> Option<String> {
    let mut out = String::with_capacity(fragment.len());
    for token in fragment.split('/').skip(1) {
        let mut decoded = String::with_capacity(token.len());
        let mut chars = token.chars();
        while let Some(c) = chars.next() {
            if c == '~' {
                match chars.next() {
                    Some('0') => decoded.push('~'),
                    Some('1') => decoded.push('/'),
                    _ => return None,
                }
            } else {
                decoded.push(c);
            }
        }
        out.push('/');
        escape_into(&decoded, &mut out);
    }
    Some(out)
}

/// The JSON Pointer a same-document `$ref` names, spelled canonically (RFC 6901 tokens escaped
/// only where they must be: `~0` and `~1`), after the fragment's percent-decoding: `""` for `#`,
/// `/$defs/Point 2D` for `#/$defs/Point%202D`. `None` for anything else (another document, a
/// plain-name anchor, a malformed escape).
///
/// # Examples
///
/// ```
/// use tollgate_schema::reference_pointer;
///
/// assert_eq!(reference_pointer("#").as_deref(), Some(""));
/// assert_eq!(reference_pointer("#/$defs/Gr%C3%B6%C3%9Fe").as_deref(), Some("/$defs/Größe"));
/// assert_eq!(reference_pointer("#/$defs/a~1b").as_deref(), Some("/$defs/a~1b"));
/// assert_eq!(reference_pointer("#anchor"), None);
/// assert_eq!(reference_pointer("other.json#/x"), None);
/// ```
pub fn reference_pointer(reference: &str) -> Option<String> {
    let fragment = percent_decode(reference.strip_prefix('#')?)?;
    if fragment.is_empty() {
        return Some(String::new());
    }
    if !fragment.starts_with('/') {
        return None;
    }
    canonical_pointer(&fragment)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_and_canonicalises() {
        assert_eq!(percent_decode("/a%25b").as_deref(), Some("/a%b"));
        assert_eq!(percent_decode("/%24defs").as_deref(), Some("/$defs"));
        assert_eq!(percent_decode("/a%2"), None);
        assert_eq!(percent_decode("/a%zz"), None);
        assert_eq!(percent_decode("%ff"), None);
        assert_eq!(
            canonical_pointer("/a~1b/c~0d").as_deref(),
            Some("/a~1b/c~0d")
        );
        assert_eq!(canonical_pointer("/a~2"), None);
        assert_eq!(canonical_pointer("/").as_deref(), Some("/"));
        let mut s = String::new();
        escape_into("x/~y", &mut s);
        assert_eq!(s, "x~1~0y");
    }
}
