//! The limited writer: compact JSON out, or a typed error, never a truncated document.
//!
//! Ordinary characters, non-ASCII included, are written as they are. Escapes follow the
//! specification's token table: `\"` `\\` `\n` `\t` `\r` `\b` `\f` cost two token units; any other
//! C0 control character is written `\u00XX` for six.

use crate::error::{Error, ErrorKind};
use crate::limits::OutputLimits;
use crate::string::{find_stop, utf16_len};
use crate::value::JsonValue;

/// Writes `value` as compact JSON into a new buffer.
///
/// # Errors
///
/// [`ErrorKind::OutputTooLarge`], [`ErrorKind::StringLengthLimit`],
/// [`ErrorKind::StringTokenLimit`] or [`ErrorKind::DepthLimit`], with the output offset where the
/// offending value began. No partial document is returned.
///
/// # Examples
///
/// ```
/// use tollgate_json::{to_vec, JsonObject, JsonValue, OutputLimits};
///
/// let v: JsonValue = JsonObject::builder().insert("text", "é\n").build().into();
/// assert_eq!(to_vec(&v, &OutputLimits::default()).unwrap(), "{\"text\":\"é\\n\"}".as_bytes());
/// ```
pub fn to_vec(value: &JsonValue, limits: &OutputLimits) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(128);
    write_into(value, &mut out, limits)?;
    Ok(out)
}

/// Writes `value` as compact JSON into a new `String`.
///
/// # Errors
///
/// As [`to_vec`].
pub fn to_string(value: &JsonValue, limits: &OutputLimits) -> Result<String, Error> {
    let bytes = to_vec(value, limits)?;
    // The writer only emits valid UTF-8: string contents come from `str` and the rest is ASCII.
    String::from_utf8(bytes)
        .map_err(|e| Error::new(ErrorKind::InvalidUtf8, e.utf8_error().valid_up_to()))
}

/// Appends `value` as compact JSON to `out`. The byte limit counts only what this call appends.
/// On error `out` is restored to its length before the call.
///
/// # Errors
///
/// As [`to_vec`].
pub fn write_into(
    value: &JsonValue,
    out: &mut Vec<u8>,
    limits: &OutputLimits,
) -> Result<(), Error> {
    append(out, limits, |w| w.value(value, 0))
}

/// Appends `text` as a JSON string to `out`, exactly as [`write_into`] appends a string value,
/// without making one first. The byte limit counts only what this call appends. On error `out`
/// is restored to its length before the call.
///
/// # Errors
///
/// [`ErrorKind::OutputTooLarge`], [`ErrorKind::StringLengthLimit`] or
/// [`ErrorKind::StringTokenLimit`], at offset 0.
///
/// # Examples
///
/// ```
/// use tollgate_json::{write_str_into, OutputLimits};
///
/// let mut out = b"[".to_vec();
/// write_str_into("a\"b", &mut out, &OutputLimits::default()).unwrap();
/// assert_eq!(out, br#"["a\"b""#);
/// ```
pub fn write_str_into(text: &str, out: &mut Vec<u8>, limits: &OutputLimits) -> Result<(), Error> {
    append(out, limits, |w| w.string(text))
}

/// Runs `step` with a writer appending to `out` under `limits`, restoring `out` on error.
fn append(
    out: &mut Vec<u8>,
    limits: &OutputLimits,
    step: impl FnOnce(&mut Writer<'_>) -> Result<(), Halt>,
) -> Result<(), Error> {
    let base = out.len();
    let mut w = Writer {
        out,
        base,
        end: base.saturating_add(limits.max_output_bytes()),
        // Decoded units never exceed the byte length, and each byte costs at most six token
        // units, so strings up to this length need no counting.
        uncounted: limits
            .max_string_units()
            .min(limits.max_string_token_units() / 6),
        max_depth: limits.max_depth(),
        limits,
        failure: Error::new(ErrorKind::OutputTooLarge, 0),
    };
    match step(&mut w) {
        Ok(()) => Ok(()),
        Err(Halt) => {
            let error = w.failure;
            out.truncate(base);
            Err(error)
        }
    }
}

/// The writer's internal failure signal: one byte through the recursion, with the details kept
/// in [`Writer::failure`], so the hot path returns in a register.
struct Halt;

/// The escape letter of each byte `find_stop` stops at, or `u` for `\u00XX`.
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0A] = b'n';
    t[0x0C] = b'f';
    t[0x0D] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

struct Writer<'a> {
    out: &'a mut Vec<u8>,
    base: usize,
    /// `base` plus the byte limit: the output length that must not be exceeded.
    end: usize,
    /// Strings of at most this many bytes cannot exceed either string ceiling.
    uncounted: usize,
    max_depth: usize,
    limits: &'a OutputLimits,
    /// Set when a step returns `Halt`.
    failure: Error,
}

impl Writer<'_> {
    #[cold]
    #[inline(never)]
    fn halt(&mut self, kind: ErrorKind, at: usize) -> Result<(), Halt> {
        self.failure = Error::new(kind, at);
        Err(Halt)
    }

    fn offset(&self) -> usize {
        self.out.len() - self.base
    }

    #[inline]
    fn check_size(&mut self, at: usize) -> Result<(), Halt> {
        if self.out.len() > self.end {
            self.halt(ErrorKind::OutputTooLarge, at)
        } else {
            Ok(())
        }
    }

    fn value(&mut self, value: &JsonValue, depth: usize) -> Result<(), Halt> {
        let at = self.offset();
        match value {
            JsonValue::Null => self.out.extend_from_slice(b"null"),
            JsonValue::Bool(true) => self.out.extend_from_slice(b"true"),
            JsonValue::Bool(false) => self.out.extend_from_slice(b"false"),
            JsonValue::Number(n) => n.write_spelling(self.out),
            JsonValue::String(s) => self.string(s)?,
            JsonValue::Array(items) => {
                if depth >= self.max_depth {
                    return self.halt(ErrorKind::DepthLimit, at);
                }
                self.out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.value(item, depth + 1)?;
                }
                self.out.push(b']');
            }
            JsonValue::Object(object) => {
                if depth >= self.max_depth {
                    return self.halt(ErrorKind::DepthLimit, at);
                }
                self.out.push(b'{');
                for (i, (name, item)) in object.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    self.string(name)?;
                    self.out.push(b':');
                    self.value(item, depth + 1)?;
                }
                self.out.push(b'}');
            }
        }
        self.check_size(at)
    }

    fn string(&mut self, s: &str) -> Result<(), Halt> {
        let at = self.offset();
        let bytes = s.as_bytes();
        let limits = self.limits;
        let counted = bytes.len() > self.uncounted;
        if counted && bytes.len() > limits.max_output_bytes() {
            return self.halt(ErrorKind::OutputTooLarge, at);
        }
        // Counted once, for long strings only; short ones cannot reach either ceiling.
        let units = if counted { utf16_len(bytes) } else { 0 };
        if units > limits.max_string_units() {
            return self.halt(ErrorKind::StringLengthLimit, at);
        }
        self.out.push(b'"');
        let mut extra = 0usize;
        let mut start = 0;
        loop {
            let stop = start + find_stop(&bytes[start..]);
            self.out.extend_from_slice(&bytes[start..stop]);
            let Some(&b) = bytes.get(stop) else { break };
            let esc = ESCAPE[usize::from(b)];
            if esc == b'u' {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                self.out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xF)],
                ]);
                extra += 5;
            } else {
                self.out.extend_from_slice(&[b'\\', esc]);
                extra += 1;
            }
            start = stop + 1;
        }
        self.out.push(b'"');
        if counted && units + extra > limits.max_string_token_units() {
            return self.halt(ErrorKind::StringTokenLimit, at);
        }
        self.check_size(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JsonLimits, from_slice};

    fn write(v: &JsonValue) -> String {
        to_string(v, &OutputLimits::default()).unwrap()
    }

    #[test]
    fn escapes_per_the_token_table() {
        let v = JsonValue::from("\"\\\n\t\r\u{8}\u{c}\u{1}\u{1f}\u{7f}é🚀/");
        assert_eq!(
            write(&v),
            r#""\"\\\n\t\r\b\f\u0001\u001f"#.to_owned() + "\u{7f}é🚀/\""
        );
    }

    #[test]
    fn compact_and_ordered() {
        let v = from_slice(
            br#" { "b" : [ 1 , 2.50 ] , "a" : { } } "#,
            &JsonLimits::default(),
        )
        .unwrap();
        assert_eq!(write(&v), r#"{"b":[1,2.50],"a":{}}"#);
    }

    #[test]
    fn string_ceilings_at_and_past_the_limit() {
        let limits = OutputLimits::default();
        let fits = JsonValue::from("\n".repeat(524_288));
        assert!(to_vec(&fits, &limits).is_ok());
        let over = JsonValue::from("\n".repeat(524_289));
        assert_eq!(
            to_vec(&over, &limits).unwrap_err().kind(),
            ErrorKind::StringTokenLimit
        );
        let controls = JsonValue::from("\u{1}".repeat(174_762));
        assert!(to_vec(&controls, &limits).is_ok());
        let controls = JsonValue::from("\u{1}".repeat(174_763));
        assert_eq!(
            to_vec(&controls, &limits).unwrap_err().kind(),
            ErrorKind::StringTokenLimit
        );
        let rockets = JsonValue::from("🚀".repeat(524_288));
        assert!(to_vec(&rockets, &limits).is_ok());
        let rockets = JsonValue::from("🚀".repeat(524_289));
        assert_eq!(
            to_vec(&rockets, &limits).unwrap_err().kind(),
            ErrorKind::StringLengthLimit
        );
    }

    #[test]
    fn what_is_written_under_a_depth_reads_back_under_it() {
        let nested = |levels: usize| {
            let mut v = JsonValue::Null;
            for _ in 0..levels {
                v = JsonValue::Array(vec![v].into());
            }
            v
        };
        for depth in [1, 3, 64] {
            let limits = OutputLimits::default().with_max_depth(depth).unwrap();
            let read = JsonLimits::default().with_max_depth(depth).unwrap();
            let text = to_vec(&nested(depth), &limits).unwrap();
            assert_eq!(from_slice(&text, &read).unwrap(), nested(depth));
            assert_eq!(
                to_vec(&nested(depth + 1), &limits).unwrap_err().kind(),
                ErrorKind::DepthLimit
            );
        }
        assert!(OutputLimits::default().with_max_depth(0).is_err());
        assert!(
            OutputLimits::default()
                .with_max_depth(JsonLimits::MAX_DEPTH_CEILING + 1)
                .is_err()
        );
    }

    #[test]
    fn a_str_is_written_as_its_string_value_is() {
        let limits = OutputLimits::default().with_max_output_bytes(10).unwrap();
        for text in [
            "",
            "é\n\u{1}",
            "12345678",
            "123456789",
            "\n\n\n\n",
            "\n\n\n\n\n",
        ] {
            let mut alone = b"x".to_vec();
            let mut valued = b"x".to_vec();
            let a = write_str_into(text, &mut alone, &limits).map_err(|e| e.kind());
            let b = write_into(&JsonValue::from(text), &mut valued, &limits).map_err(|e| e.kind());
            assert_eq!(a, b, "{text:?}");
            assert_eq!(alone, valued, "{text:?}");
        }
        // On error nothing is left appended.
        let mut out = b"x".to_vec();
        assert!(write_str_into("123456789", &mut out, &limits).is_err());
        assert_eq!(out, b"x");
        // The string ceilings, at and one past.
        let limits = OutputLimits::default();
        assert!(write_str_into(&"\n".repeat(524_288), &mut Vec::new(), &limits).is_ok());
        assert_eq!(
            write_str_into(&"\n".repeat(524_289), &mut Vec::new(), &limits)
                .unwrap_err()
                .kind(),
            ErrorKind::StringTokenLimit
        );
    }

    #[test]
    fn output_limit_at_and_past() {
        let limits = OutputLimits::default().with_max_output_bytes(10).unwrap();
        assert!(to_vec(&JsonValue::from("12345678"), &limits).is_ok());
        assert_eq!(
            to_vec(&JsonValue::from("123456789"), &limits)
                .unwrap_err()
                .kind(),
            ErrorKind::OutputTooLarge
        );
        let mut out = b"prefix".to_vec();
        assert!(write_into(&JsonValue::from("123456789"), &mut out, &limits).is_err());
        assert_eq!(out, b"prefix");
    }

    #[test]
    fn default_output_limit_is_four_mebibytes() {
        let limits = OutputLimits::default();
        let s = |n: usize| JsonValue::from(vec![JsonValue::from("a".repeat(n))]);
        // `["…"]` adds four bytes around the string.
        assert!(
            to_vec(
                &s(4 * 1024 * 1024 - 4),
                &limits.with_max_string_units(16 << 20).unwrap()
            )
            .is_ok()
        );
        assert_eq!(
            to_vec(
                &s(4 * 1024 * 1024 - 3),
                &limits.with_max_string_units(16 << 20).unwrap()
            )
            .unwrap_err()
            .kind(),
            ErrorKind::OutputTooLarge
        );
    }
}
