//! The bounded reader: bytes in, an immutable [`JsonValue`] out.
//!
//! The reader is iterative (an explicit container stack, never the call stack), so nesting costs
//! heap proportional to the depth limit and nothing more. UTF-8 is validated once, up front; after
//! that every slice handed to the tree is already a valid `&str` borrowed from the input, and only
//! strings with escapes pass through a scratch buffer.

use crate::array::JsonArray;
use crate::error::{Error, ErrorKind};
use crate::limits::JsonLimits;
use crate::number::{from_valid_spelling, scan};
use crate::object::JsonObject;
use crate::string::{JsonString, find_stop, utf16_len};
use crate::value::JsonValue;

/// Reads one JSON document from `input`, enforcing every bound of `limits`.
///
/// # Errors
///
/// Any [`ErrorKind`] of the syntax or limit categories, with the byte offset where it was found.
/// The error never contains input data.
///
/// # Examples
///
/// ```
/// use tollgate_json::{from_slice, ErrorKind, JsonLimits};
///
/// let limits = JsonLimits::default();
/// assert!(from_slice(br#"{"a": [1, 2.5e3, "\u00e9"]}"#, &limits).is_ok());
/// assert_eq!(from_slice(br#"{"a":1,"a":2}"#, &limits).unwrap_err().kind(), ErrorKind::DuplicateMemberName);
/// assert_eq!(from_slice(br#"["\uD800"]"#, &limits).unwrap_err().kind(), ErrorKind::LoneSurrogate);
/// ```
pub fn from_slice(input: &[u8], limits: &JsonLimits) -> Result<JsonValue, Error> {
    check_input(input, limits)?;
    // Validated with the CPU's vector units; only input found invalid is read again by the
    // standard library, for the position of its first invalid byte.
    let text = match simdutf8::basic::from_utf8(input) {
        Ok(text) => text,
        Err(_) => std::str::from_utf8(input)
            .map_err(|e| Error::new(ErrorKind::InvalidUtf8, e.valid_up_to()))?,
    };
    read_text(text, limits)
}

/// Reads one JSON document from a string, enforcing every bound of `limits`. The string is
/// already UTF-8, so it is not validated again.
///
/// # Errors
///
/// As [`from_slice`] (never [`ErrorKind::InvalidUtf8`]).
pub fn from_str(input: &str, limits: &JsonLimits) -> Result<JsonValue, Error> {
    check_input(input.as_bytes(), limits)?;
    read_text(input, limits)
}

/// The checks before any byte is read: the input's size, then no byte order mark.
fn check_input(input: &[u8], limits: &JsonLimits) -> Result<(), Error> {
    if input.len() > limits.max_input_bytes() {
        return Err(Error::new(
            ErrorKind::InputTooLarge,
            limits.max_input_bytes(),
        ));
    }
    if input.starts_with(b"\xEF\xBB\xBF") {
        return Err(Error::new(ErrorKind::ByteOrderMark, 0));
    }
    Ok(())
}

/// Reads a document whose size, byte order mark and encoding were checked.
fn read_text(text: &str, limits: &JsonLimits) -> Result<JsonValue, Error> {
    SCRATCH.with(|cell| {
        // A reentrant call (none exists today) would find the scratch taken and use a fresh one.
        let mut scratch = cell.take();
        let result = Reader::new(text, limits, &mut scratch).read();
        scratch.reset();
        cell.set(scratch);
        result
    })
}

thread_local! {
    /// Working storage reused across reads on one thread, so a read allocates only the tree.
    static SCRATCH: std::cell::Cell<Scratch> = std::cell::Cell::new(Scratch::default());
}

/// Member names up to this many bytes are shared through the name cache.
const CACHED_NAME_BYTES: usize = 64;
const NAME_CACHE_SLOTS: usize = 256;

/// The reader's reusable working storage.
#[derive(Default)]
struct Scratch {
    stack: Vec<Frame>,
    elements: Vec<JsonValue>,
    members: Vec<(JsonString, JsonValue)>,
    names: Vec<JsonString>,
    unescaped: String,
    /// A direct-mapped cache of short member names: a hit shares one allocation instead of
    /// making another. Collisions only cost a miss; equality is always checked in full.
    name_cache: Vec<Option<JsonString>>,
}

impl Scratch {
    /// Drops anything a failed read left behind and bounds what is kept for the next read.
    fn reset(&mut self) {
        const KEEP: usize = 4096;
        self.stack.clear();
        self.elements.clear();
        self.members.clear();
        self.names.clear();
        self.unescaped.clear();
        self.stack.shrink_to(KEEP);
        self.elements.shrink_to(KEEP);
        self.members.shrink_to(KEEP);
        self.names.shrink_to(KEEP);
        self.unescaped.shrink_to(KEEP);
    }

    fn cached_name(&mut self, name: &str) -> JsonString {
        if name.len() > CACHED_NAME_BYTES {
            return JsonString::from(name);
        }
        if self.name_cache.is_empty() {
            self.name_cache.resize(NAME_CACHE_SLOTS, None);
        }
        let slot = &mut self.name_cache[name_slot(name.as_bytes())];
        match slot {
            Some(cached) if cached.as_str() == name => cached.clone(),
            _ => {
                let fresh = JsonString::from(name);
                *slot = Some(fresh.clone());
                fresh
            }
        }
    }
}

/// The name cache's slot for `name` (at most [`CACHED_NAME_BYTES`] long): its length and its
/// first and last eight bytes, mixed. A constant cost whatever the length; names that differ only
/// in between share a slot, which costs a miss, never a wrong answer (hits compare in full).
fn name_slot(name: &[u8]) -> usize {
    let word = |bytes: &[u8]| bytes.iter().fold(0u64, |w, &b| (w << 8) | u64::from(b));
    let (head, tail) = if name.len() >= 8 {
        (
            name.first_chunk::<8>()
                .map_or(0, |c| u64::from_le_bytes(*c)),
            name.last_chunk::<8>().map_or(0, |c| u64::from_le_bytes(*c)),
        )
    } else {
        (word(name), 0)
    };
    let mixed =
        (head ^ tail.rotate_left(29) ^ (name.len() as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 56) as usize % NAME_CACHE_SLOTS
}

// `name_slot` takes its slot from the top eight bits of the mix.
const _: () = assert!(NAME_CACHE_SLOTS == 256);

enum Frame {
    Array { start: usize },
    Object { start: usize, offset: usize },
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    limits: &'a JsonLimits,
    nodes: usize,
    scratch: &'a mut Scratch,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str, limits: &'a JsonLimits, scratch: &'a mut Scratch) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            limits,
            nodes: 0,
            scratch,
        }
    }

    fn err<T>(&self, kind: ErrorKind, offset: usize) -> Result<T, Error> {
        Err(Error::new(kind, offset))
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    #[inline]
    fn count_node(&mut self, at: usize) -> Result<(), Error> {
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes() {
            return self.err(ErrorKind::NodeLimit, at);
        }
        Ok(())
    }

    fn end_or<T>(&self, kind: ErrorKind) -> Result<T, Error> {
        if self.pos >= self.bytes.len() {
            self.err(ErrorKind::UnexpectedEnd, self.pos)
        } else {
            self.err(kind, self.pos)
        }
    }

    /// Reads `"name"` and the `:` after it, leaving the position at the value.
    fn member_name(&mut self) -> Result<JsonString, Error> {
        if self.peek() != Some(b'"') {
            return self.end_or(ErrorKind::ExpectedMemberName);
        }
        let name = self.string(true)?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return self.end_or(ErrorKind::ExpectedColon);
        }
        self.pos += 1;
        Ok(name)
    }

    fn read(mut self) -> Result<JsonValue, Error> {
        let mut stack = std::mem::take(&mut self.scratch.stack);
        let mut elements = std::mem::take(&mut self.scratch.elements);
        let mut members = std::mem::take(&mut self.scratch.members);
        let mut names = std::mem::take(&mut self.scratch.names);
        let result = self.read_with(&mut stack, &mut elements, &mut members, &mut names);
        self.scratch.stack = stack;
        self.scratch.elements = elements;
        self.scratch.members = members;
        self.scratch.names = names;
        result
    }

    fn read_with(
        &mut self,
        stack: &mut Vec<Frame>,
        elements: &mut Vec<JsonValue>,
        members: &mut Vec<(JsonString, JsonValue)>,
        names: &mut Vec<JsonString>,
    ) -> Result<JsonValue, Error> {
        'value: loop {
            self.skip_ws();
            let at = self.pos;
            let mut value = match self.peek() {
                None => return self.err(ErrorKind::UnexpectedEnd, at),
                Some(open @ (b'[' | b'{')) => {
                    self.count_node(at)?;
                    if stack.len() >= self.limits.max_depth() {
                        return self.err(ErrorKind::DepthLimit, at);
                    }
                    self.pos += 1;
                    self.skip_ws();
                    if open == b'[' {
                        if self.peek() == Some(b']') {
                            self.pos += 1;
                            JsonValue::Array(JsonArray::new())
                        } else {
                            stack.push(Frame::Array {
                                start: elements.len(),
                            });
                            continue 'value;
                        }
                    } else if self.peek() == Some(b'}') {
                        self.pos += 1;
                        JsonValue::Object(JsonObject::new())
                    } else {
                        names.push(self.member_name()?);
                        stack.push(Frame::Object {
                            start: members.len(),
                            offset: at,
                        });
                        continue 'value;
                    }
                }
                Some(first) => self.scalar(first, at)?,
            };
            // Attach the finished value to its container, closing containers as they end.
            loop {
                match stack.last() {
                    None => {
                        self.skip_ws();
                        if self.pos != self.bytes.len() {
                            return self.err(ErrorKind::TrailingCharacters, self.pos);
                        }
                        return Ok(value);
                    }
                    Some(&Frame::Array { start }) => {
                        elements.push(value);
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                stack.pop();
                                value = JsonValue::Array(JsonArray::from_arc(
                                    elements.drain(start..).collect(),
                                ));
                            }
                            _ => return self.end_or(ErrorKind::ExpectedCommaOrEnd),
                        }
                    }
                    Some(&Frame::Object { start, offset }) => {
                        let Some(name) = names.pop() else {
                            return self.err(ErrorKind::ExpectedMemberName, self.pos);
                        };
                        members.push((name, value));
                        self.skip_ws();
                        match self.peek() {
                            Some(b',') => {
                                self.pos += 1;
                                self.skip_ws();
                                names.push(self.member_name()?);
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                stack.pop();
                                let Some(object) = JsonObject::from_unique_tail(members, start)
                                else {
                                    return self.err(ErrorKind::DuplicateMemberName, offset);
                                };
                                value = JsonValue::Object(object);
                            }
                            _ => return self.end_or(ErrorKind::ExpectedCommaOrEnd),
                        }
                    }
                }
            }
        }
    }

    /// Reads the value at `at` that is not a container (a string, number or literal, its first
    /// byte `first`), counted as a node.
    #[inline]
    fn scalar(&mut self, first: u8, at: usize) -> Result<JsonValue, Error> {
        Ok(match first {
            b'"' => {
                self.count_node(at)?;
                JsonValue::String(self.string(false)?)
            }
            b'-' | b'0'..=b'9' => {
                self.count_node(at)?;
                let end = scan(self.bytes, at)?;
                self.pos = end;
                JsonValue::Number(from_valid_spelling(&self.text[at..end], at)?)
            }
            b't' => {
                self.count_node(at)?;
                self.literal(b"true")?;
                JsonValue::Bool(true)
            }
            b'f' => {
                self.count_node(at)?;
                self.literal(b"false")?;
                JsonValue::Bool(false)
            }
            b'n' => {
                self.count_node(at)?;
                self.literal(b"null")?;
                JsonValue::Null
            }
            _ => return self.err(ErrorKind::ExpectedValue, at),
        })
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), Error> {
        let end = self.pos + word.len();
        match self.bytes.get(self.pos..end) {
            Some(found) if found == word => {
                self.pos = end;
                Ok(())
            }
            Some(_) => self.err(ErrorKind::InvalidLiteral, self.pos),
            None if word.starts_with(&self.bytes[self.pos..]) => {
                self.err(ErrorKind::UnexpectedEnd, self.bytes.len())
            }
            None => self.err(ErrorKind::InvalidLiteral, self.pos),
        }
    }

    /// Reads a string whose opening quote is at the current position.
    ///
    /// Both string ceilings are UTF-16 counts bounded above by the spelling's byte length (token
    /// units are the UTF-16 units of the spelling; decoded units never exceed them), so exact
    /// counting is needed only for spellings longer than the smaller ceiling.
    fn string(&mut self, member_name: bool) -> Result<JsonString, Error> {
        let open = self.pos;
        let content = open + 1;
        self.pos = content;
        let mut escaped = false;
        loop {
            let run_start = self.pos;
            self.pos = run_start + find_stop(&self.bytes[run_start..]);
            if escaped {
                self.scratch
                    .unescaped
                    .push_str(&self.text[run_start..self.pos]);
            }
            match self.peek() {
                Some(b'"') => break,
                Some(b'\\') => {
                    if !escaped {
                        escaped = true;
                        self.scratch.unescaped.clear();
                        self.scratch
                            .unescaped
                            .push_str(&self.text[content..self.pos]);
                    }
                    self.escape()?;
                }
                Some(_) => return self.err(ErrorKind::ControlCharacter, self.pos),
                None => return self.err(ErrorKind::UnexpectedEnd, self.pos),
            }
        }
        let spelling = &self.text[content..self.pos];
        let decoded = if escaped {
            self.scratch.unescaped.as_str()
        } else {
            spelling
        };
        let limits = self.limits;
        if spelling.len()
            > limits
                .max_string_token_units()
                .min(limits.max_string_units())
        {
            let tokens = utf16_len(spelling.as_bytes());
            if tokens > limits.max_string_token_units() {
                return self.err(ErrorKind::StringTokenLimit, open);
            }
            // Without escapes the decoded text is the spelling: same count.
            let units = if escaped {
                utf16_len(decoded.as_bytes())
            } else {
                tokens
            };
            if units > limits.max_string_units() {
                return self.err(ErrorKind::StringLengthLimit, open);
            }
        }
        let s = if member_name && !escaped {
            self.scratch.cached_name(spelling)
        } else {
            JsonString::from(decoded)
        };
        self.pos += 1;
        Ok(s)
    }

    /// Decodes one escape at the current backslash into the scratch buffer, returning its token
    /// and decoded UTF-16 units.
    fn escape(&mut self) -> Result<(), Error> {
        let at = self.pos;
        let c = match self.bytes.get(at + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => return self.unicode_escape(),
            Some(_) => return self.err(ErrorKind::InvalidEscape, at),
            None => return self.err(ErrorKind::UnexpectedEnd, self.bytes.len()),
        };
        self.scratch.unescaped.push(c);
        self.pos = at + 2;
        Ok(())
    }

    fn hex4(&self, at: usize) -> Result<u32, Error> {
        let mut v = 0u32;
        for i in at..at + 4 {
            let Some(&d) = self.bytes.get(i) else {
                return self.err(ErrorKind::UnexpectedEnd, self.bytes.len());
            };
            let x = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return self.err(ErrorKind::InvalidEscape, at - 2),
            };
            v = v * 16 + u32::from(x);
        }
        Ok(v)
    }

    fn unicode_escape(&mut self) -> Result<(), Error> {
        let at = self.pos;
        let first = self.hex4(at + 2)?;
        let (code, len) = match first {
            0xD800..=0xDBFF => {
                if self.bytes.get(at + 6..at + 8) != Some(b"\\u") {
                    return self.err(ErrorKind::LoneSurrogate, at);
                }
                let second = self.hex4(at + 8)?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return self.err(ErrorKind::LoneSurrogate, at);
                }
                (0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00), 12)
            }
            0xDC00..=0xDFFF => return self.err(ErrorKind::LoneSurrogate, at),
            _ => (first, 6),
        };
        let Some(c) = char::from_u32(code) else {
            return self.err(ErrorKind::InvalidEscape, at);
        };
        self.scratch.unescaped.push(c);
        self.pos = at + len;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(s: &str) -> Result<JsonValue, Error> {
        from_slice(s.as_bytes(), &JsonLimits::default())
    }
    fn kind(s: &str) -> ErrorKind {
        read(s).unwrap_err().kind()
    }

    #[test]
    fn accepts_the_grammar() {
        for ok in [
            "0",
            "-0",
            "1.5e-3",
            "\"\"",
            "true",
            "false",
            "null",
            "[]",
            "{}",
            " [ 1 , 2 ] ",
            "{\"a\":{\"b\":[null]}}",
            "\"\\u00e9\\n\\/\"",
            "\"\\uD83D\\uDE80\"",
            "\"\u{7f}\"",
        ] {
            assert!(read(ok).is_ok(), "{ok:?}");
        }
    }

    #[test]
    fn rejects_with_a_kind_and_offset() {
        assert_eq!(kind(""), ErrorKind::UnexpectedEnd);
        assert_eq!(kind("[1,]"), ErrorKind::ExpectedValue);
        assert_eq!(kind("[1 2]"), ErrorKind::ExpectedCommaOrEnd);
        assert_eq!(kind("{\"a\" 1}"), ErrorKind::ExpectedColon);
        assert_eq!(kind("{1:2}"), ErrorKind::ExpectedMemberName);
        assert_eq!(kind("{\"a\":1,}"), ErrorKind::ExpectedMemberName);
        assert_eq!(kind("01"), ErrorKind::TrailingCharacters);
        assert_eq!(kind("-"), ErrorKind::InvalidNumber);
        assert_eq!(kind("NaN"), ErrorKind::ExpectedValue);
        assert_eq!(kind("Infinity"), ErrorKind::ExpectedValue);
        assert_eq!(kind("tru"), ErrorKind::UnexpectedEnd);
        assert_eq!(kind("trux"), ErrorKind::InvalidLiteral);
        assert_eq!(kind("\"\\x\""), ErrorKind::InvalidEscape);
        assert_eq!(kind("\"\\u12\""), ErrorKind::InvalidEscape);
        assert_eq!(kind("\"\\uDC00\""), ErrorKind::LoneSurrogate);
        assert_eq!(kind("\"\\uD800\\u0041\""), ErrorKind::LoneSurrogate);
        assert_eq!(kind("\"a\u{1}\""), ErrorKind::ControlCharacter);
        assert_eq!(kind("\"abc"), ErrorKind::UnexpectedEnd);
        assert_eq!(kind("\u{feff}1"), ErrorKind::ByteOrderMark);
        assert_eq!(kind("[1] x"), ErrorKind::TrailingCharacters);
        assert_eq!(kind("{\"a\":1,\"a\":1}"), ErrorKind::DuplicateMemberName);
        assert_eq!(
            from_slice(b"[\"\xff\"]", &JsonLimits::default()).unwrap_err(),
            Error::new(ErrorKind::InvalidUtf8, 2)
        );
        assert_eq!(read("[1,]").unwrap_err().offset(), 3);
    }

    #[test]
    fn rejects_raw_invalid_utf8() {
        let cases: [&[u8]; 7] = [
            b"[\"\xC0\xAF\"]",         // overlong '/'
            b"[\"\xED\xA0\x80\"]",     // UTF-8 encoded surrogate U+D800
            b"[\"\xE6\x97\"]",         // truncated sequence
            b"[\"\x80\"]",             // lone continuation byte
            b"[\"\xE9\"]",             // ISO-8859-1 e-acute
            b"[\"\xF4\xBF\xBF\xBF\"]", // beyond U+10FFFF
            b"[1e1\xFF]",
        ];
        for case in cases {
            let err = from_slice(case, &JsonLimits::default()).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidUtf8, "{case:?}");
        }
    }

    #[test]
    fn decodes_escapes() {
        let v = read(r#""a\"\\\/\b\f\n\r\t\u0041\uD83D\uDE80""#).unwrap();
        assert_eq!(v.as_str(), Some("a\"\\/\u{8}\u{c}\n\r\tA🚀"));
    }

    #[test]
    fn keeps_order_and_numbers() {
        let v = read(r#"{"z":1,"a":2.50,"m":-0}"#).unwrap();
        let obj = v.as_object().unwrap();
        assert_eq!(obj.keys().collect::<Vec<_>>(), ["z", "a", "m"]);
        assert_eq!(
            obj.get("a").unwrap().as_number().unwrap().to_string(),
            "2.50"
        );
        assert_eq!(obj.get("m").unwrap().as_number().unwrap().to_string(), "-0");
    }

    #[test]
    fn member_names_that_share_a_cache_slot_stay_themselves() {
        // Same length, same first and last eight bytes: the same slot, so each read of one
        // evicts the other; every read still gets its own name. Short names, names at the
        // cached bound and one past it too.
        let a = format!("{}a{}", "p".repeat(8), "s".repeat(8));
        let b = format!("{}b{}", "p".repeat(8), "s".repeat(8));
        assert_eq!(name_slot(a.as_bytes()), name_slot(b.as_bytes()));
        let at = "n".repeat(CACHED_NAME_BYTES);
        let past = "n".repeat(CACHED_NAME_BYTES + 1);
        for _ in 0..3 {
            for name in [a.as_str(), b.as_str(), "x", "xy", &at, &past] {
                let v = read(&format!(r#"{{"{name}":1}}"#)).unwrap();
                let keys: Vec<_> = v.as_object().unwrap().keys().collect();
                assert_eq!(keys, [name]);
            }
        }
        assert_ne!(name_slot(b"x"), name_slot(b"xy"));
    }

    #[test]
    fn deep_input_fails_fast_without_recursion() {
        let deep = "[".repeat(16 * 1024 * 1024 - 1);
        let limits = JsonLimits::default()
            .with_max_input_bytes(JsonLimits::MAX_INPUT_BYTES_CEILING)
            .unwrap();
        let err = from_slice(deep.as_bytes(), &limits).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::DepthLimit);
        assert_eq!(err.offset(), 128);
    }
}
