//! Small ASCII grammars shared by content, icons and headers: media types, absolute URIs,
//! RFC 3339 timestamps, `_meta` keys, RFC 9110 tokens, base64 and lowercase hexadecimal.
//!
//! Pure functions over strings; they know no protocol types.

/// RFC 9110 `tchar`.
pub(crate) const fn is_tchar(b: u8) -> bool {
    matches!(b,
        b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`'
        | b'|' | b'~' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
}

fn token_len(s: &[u8]) -> usize {
    s.iter().take_while(|b| is_tchar(**b)).count()
}

fn skip_ows(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
        i += 1;
    }
    i
}

/// `type "/" subtype *( OWS ";" OWS name "=" ( token / quoted-string ) )`, ASCII only, no
/// controls outside OWS and quoted text, parameter names unique case-insensitively.
pub(crate) fn is_media_type(text: &str) -> bool {
    let s = text.as_bytes();
    let t = token_len(s);
    if t == 0 || s.get(t) != Some(&b'/') {
        return false;
    }
    let mut i = t + 1;
    let st = token_len(&s[i..]);
    if st == 0 {
        return false;
    }
    i += st;
    let mut names: Vec<&[u8]> = Vec::new();
    loop {
        let j = skip_ows(s, i);
        if j == s.len() {
            // Trailing whitespace after the last parameter is not part of the grammar.
            return j == i;
        }
        if s[j] != b';' {
            return false;
        }
        i = skip_ows(s, j + 1);
        let n = token_len(&s[i..]);
        if n == 0 || s.get(i + n) != Some(&b'=') {
            return false;
        }
        let name = &s[i..i + n];
        if names.iter().any(|seen| seen.eq_ignore_ascii_case(name)) {
            return false;
        }
        names.push(name);
        i += n + 1;
        if s.get(i) == Some(&b'"') {
            i += 1;
            loop {
                match s.get(i) {
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') => match s.get(i + 1) {
                        Some(&c) if c == b'\t' || (0x20..=0x7e).contains(&c) => i += 2,
                        _ => return false,
                    },
                    Some(&c)
                        if c == b'\t' || c == b' ' || c == 0x21 || (0x23..=0x7e).contains(&c) =>
                    {
                        i += 1;
                    }
                    _ => return false,
                }
            }
        } else {
            let v = token_len(&s[i..]);
            if v == 0 {
                return false;
            }
            i += v;
        }
    }
}

/// An absolute URI: `scheme ":" rest`, where the scheme follows RFC 3986 and the rest holds no
/// space, control or character that RFC 3986 never allows (`<>"{}|\^` and backtick). The
/// spelling is not normalised.
pub(crate) fn is_absolute_uri(text: &str) -> bool {
    let Some(colon) = text.find(':') else {
        return false;
    };
    is_scheme(&text[..colon])
        && text[colon + 1..].chars().all(|c| {
            !c.is_control()
                && !matches!(
                    c,
                    ' ' | '<' | '>' | '"' | '{' | '}' | '|' | '\\' | '^' | '`'
                )
        })
}

/// An RFC 3986 scheme: a letter, then letters, digits, `+`, `-` or `.`.
pub(crate) fn is_scheme(scheme: &str) -> bool {
    let s = scheme.as_bytes();
    s.first().is_some_and(u8::is_ascii_alphabetic)
        && s.iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

fn digits(s: &[u8], at: usize, n: usize) -> Option<u32> {
    let part = s.get(at..at + n)?;
    part.iter().try_fold(0u32, |acc, b| {
        b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
    })
}

/// RFC 3339 `date-time`, e.g. `2025-01-12T15:00:58Z` or `2025-01-12t15:00:58.5+01:00`.
pub(crate) fn is_rfc3339(text: &str) -> bool {
    let s = text.as_bytes();
    let (Some(year), Some(month), Some(day)) = (digits(s, 0, 4), digits(s, 5, 2), digits(s, 8, 2))
    else {
        return false;
    };
    if s.get(4) != Some(&b'-') || s.get(7) != Some(&b'-') || !matches!(s.get(10), Some(b'T' | b't'))
    {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days {
        return false;
    }
    let (Some(h), Some(m), Some(sec)) = (digits(s, 11, 2), digits(s, 14, 2), digits(s, 17, 2))
    else {
        return false;
    };
    if s.get(13) != Some(&b':') || s.get(16) != Some(&b':') || h > 23 || m > 59 || sec > 60 {
        return false;
    }
    let mut i = 19;
    if s.get(i) == Some(&b'.') {
        let frac = s[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if frac == 0 {
            return false;
        }
        i += 1 + frac;
    }
    match s.get(i) {
        Some(b'Z' | b'z') => i + 1 == s.len(),
        Some(b'+' | b'-') => {
            matches!((digits(s, i + 1, 2), digits(s, i + 4, 2)), (Some(oh), Some(om)) if oh <= 23 && om <= 59)
                && s.get(i + 3) == Some(&b':')
                && i + 6 == s.len()
        }
        _ => false,
    }
}

/// A `_meta` key: an optional prefix of dot-separated labels followed by `/`, then a name that,
/// unless empty, starts and ends with an alphanumeric and holds only alphanumerics, `-`, `_`
/// and `.`.
pub(crate) fn is_meta_key(key: &str) -> bool {
    let (prefix, name) = match key.rfind('/') {
        Some(i) => (Some(&key[..i]), &key[i + 1..]),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        let labels_ok = prefix.split('.').all(|label| {
            let b = label.as_bytes();
            b.first().is_some_and(u8::is_ascii_alphabetic)
                && b.last().is_some_and(u8::is_ascii_alphanumeric)
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        });
        if !labels_ok {
            return false;
        }
    }
    let b = name.as_bytes();
    b.is_empty()
        || (b.first().is_some_and(u8::is_ascii_alphanumeric)
            && b.last().is_some_and(u8::is_ascii_alphanumeric)
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')))
}

/// Appends two lowercase hexadecimal digits per byte of `data` (random identifiers, digests).
pub(crate) fn push_hex(out: &mut String, data: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(data.len() * 2);
    for &b in data {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
}

/// `data` as lowercase hexadecimal, two digits per byte.
pub(crate) fn hex(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len() * 2);
    push_hex(&mut out, data);
    out
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The padded standard base64 length of `n` bytes.
pub(crate) const fn base64_len(n: usize) -> usize {
    n.div_ceil(3) * 4
}

/// Standard base64 with padding.
pub(crate) fn base64_encode(data: &[u8]) -> String {
    let mut out = Vec::with_capacity(base64_len(data.len()));
    let mut chunks = data.chunks_exact(3);
    for c in &mut chunks {
        let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        out.extend_from_slice(&[
            BASE64[(n >> 18) as usize & 63],
            BASE64[(n >> 12) as usize & 63],
            BASE64[(n >> 6) as usize & 63],
            BASE64[n as usize & 63],
        ]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.extend_from_slice(&[
                BASE64[(n >> 18) as usize & 63],
                BASE64[(n >> 12) as usize & 63],
                b'=',
                b'=',
            ]);
        }
        [a, b] => {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8);
            out.extend_from_slice(&[
                BASE64[(n >> 18) as usize & 63],
                BASE64[(n >> 12) as usize & 63],
                BASE64[(n >> 6) as usize & 63],
                b'=',
            ]);
        }
        _ => {}
    }
    // Only ASCII was pushed.
    String::from_utf8(out).unwrap_or_default()
}

fn base64_value(b: u8) -> Option<u32> {
    Some(match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

/// Strict standard base64 with padding: the length is a multiple of four, padding only at the
/// end, and unused bits zero (so each byte string has exactly one accepted spelling). Refuses
/// to produce more than `max_out` bytes.
pub(crate) fn base64_decode(text: &[u8], max_out: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    base64_decode_into(text, max_out, &mut out)?;
    Some(out)
}

/// [`base64_decode`] into `out` (emptied first), whose room is made once before the first byte
/// is written: a secret decoded into a buffer that wipes itself (`zeroize::Zeroizing`) leaves
/// no copy behind in a grown allocation, whether decoding succeeds or fails part way. The
/// working values holding decoded bits are wiped as well.
pub(crate) fn base64_decode_into(text: &[u8], max_out: usize, out: &mut Vec<u8>) -> Option<()> {
    use zeroize::Zeroize as _;
    out.zeroize();
    if !text.len().is_multiple_of(4) || text.len() / 4 * 3 > max_out.saturating_add(2) {
        return None;
    }
    out.reserve_exact(text.len() / 4 * 3);
    let quads = text.len() / 4;
    for (qi, q) in text.chunks_exact(4).enumerate() {
        let last = qi + 1 == quads;
        let pad = if last {
            q.iter().rev().take_while(|b| **b == b'=').count()
        } else {
            0
        };
        if pad > 2 {
            return None;
        }
        let mut n = 0u32;
        for &b in &q[..4 - pad] {
            n = (n << 6) | base64_value(b)?;
        }
        n <<= 6 * pad as u32;
        let mut bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        n.zeroize();
        let fits = match pad {
            0 => {
                out.extend_from_slice(&bytes);
                true
            }
            1 if bytes[2] == 0 => {
                out.extend_from_slice(&bytes[..2]);
                true
            }
            2 if bytes[1] == 0 && bytes[2] == 0 => {
                out.push(bytes[0]);
                true
            }
            _ => false,
        };
        bytes.zeroize();
        if !fits {
            return None;
        }
    }
    (out.len() <= max_out).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_two_lowercase_digits_per_byte() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0x00, 0x0f, 0xa0, 0xff, 0x5c]), "000fa0ff5c");
        let all: Vec<u8> = (0..=255).collect();
        let expected: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex(&all), expected);
        let mut out = String::from("sha256:");
        push_hex(&mut out, &[0xde, 0xad]);
        assert_eq!(out, "sha256:dead");
    }

    #[test]
    fn media_types() {
        for ok in [
            "image/png",
            "text/plain; charset=utf-8",
            "text/plain;charset=\"utf-8\"",
            "application/vnd.api+json ; a=1;b=\"x\\\"y\"",
        ] {
            assert!(is_media_type(ok), "{ok}");
        }
        for bad in [
            "",
            "image",
            "image/",
            "/png",
            "image/png;",
            "image/png; a",
            "image/png; a=",
            "image/png; a=1; A=2",
            "image/png ",
            "ima ge/png",
            "image/pñg",
            "image/png; a=\"\u{1}\"",
            "image/png; a=\"open",
            "image/png\n",
        ] {
            assert!(!is_media_type(bad), "{bad:?}");
        }
    }

    #[test]
    fn absolute_uris() {
        for ok in [
            "https://example.com/a.png",
            "data:image/png;base64,AAAA",
            "urn:x:y",
            "x:",
        ] {
            assert!(is_absolute_uri(ok), "{ok}");
        }
        for bad in [
            "/icon.png",
            "icon.png",
            "://x",
            "1http://x",
            "https://a b",
            "https://x\n",
            "a:<b>",
        ] {
            assert!(!is_absolute_uri(bad), "{bad:?}");
        }
    }

    #[test]
    fn timestamps() {
        for ok in [
            "2025-01-12T15:00:58Z",
            "2024-02-29t23:59:60.123+05:30",
            "2025-12-31T00:00:00-00:00",
        ] {
            assert!(is_rfc3339(ok), "{ok}");
        }
        for bad in [
            "2025-01-12",
            "2025-02-29T00:00:00Z",
            "2025-13-01T00:00:00Z",
            "2025-01-12T24:00:00Z",
            "2025-01-12T15:00:58",
            "2025-01-12T15:00:58.Z",
            "2025-01-12T15:00:58+0100",
            "2025-01-12T15:00:58Zx",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }

    #[test]
    fn meta_keys() {
        for ok in [
            "progressToken",
            "io.modelcontextprotocol/protocolVersion",
            "com.example/a-b_c.d",
            "x/",
        ] {
            assert!(is_meta_key(ok), "{ok}");
        }
        for bad in [
            "-a",
            "a-",
            "1com/x",
            "com./x",
            "com.ex ample/x",
            "/x",
            "a b",
        ] {
            assert!(!is_meta_key(bad), "{bad}");
        }
    }

    #[test]
    fn base64_round_trips_and_is_strict() {
        for data in [
            &b""[..],
            b"f",
            b"fo",
            b"foo",
            b"foob",
            b"Hello, \xe4\xb8\x96\xe7\x95\x8c",
        ] {
            let text = base64_encode(data);
            assert_eq!(text.len(), base64_len(data.len()));
            assert_eq!(base64_decode(text.as_bytes(), 64).as_deref(), Some(data));
        }
        assert_eq!(
            base64_encode(b"Hello, \xe4\xb8\x96\xe7\x95\x8c"),
            "SGVsbG8sIOS4lueVjA=="
        );
        for bad in [
            &b"Zg"[..],
            b"Zh==",
            b"Zm9=v",
            b"Z===",
            b"Zm9v\n",
            b"Zm-v",
            b"=Zm9",
        ] {
            assert_eq!(base64_decode(bad, 64), None, "{bad:?}");
        }
        assert_eq!(base64_decode(b"Zm9v", 2), None);
    }

    #[test]
    fn decoding_into_a_buffer_never_moves_what_it_wrote() {
        // 48 bytes of secret: the buffer given room for them is the one that holds them, so
        // wiping it wipes every copy, whether the decoding ends well or not.
        let text = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2";
        let mut out = Vec::with_capacity(48);
        let at = out.as_ptr();
        assert_eq!(base64_decode_into(text.as_bytes(), 64, &mut out), Some(()));
        assert_eq!((out.len(), out.as_ptr()), (48, at));
        // A spelling that fails in its last quad, after 45 bytes were written, into the same
        // room; the buffer is emptied before a new decoding starts.
        let bad = format!("{}Zm9=", &text[..60]);
        assert_eq!(base64_decode_into(bad.as_bytes(), 64, &mut out), None);
        assert_eq!((out.len(), out.as_ptr()), (45, at));
        // An empty buffer is given its room once, before the first byte.
        let mut fresh = Vec::new();
        assert_eq!(
            base64_decode_into(text.as_bytes(), 64, &mut fresh),
            Some(())
        );
        assert_eq!(fresh.capacity(), 48);
    }
}
