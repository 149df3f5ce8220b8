//! A skill's `SKILL.md` frontmatter: the leading `---` block found exactly as hosts find it, read
//! as YAML 1.2 (the core schema) into a JSON object, bounded and failing closed.
//!
//! Owns the extraction, the scalar resolution (null, booleans, integers in decimal, octal and
//! hexadecimal, floats; everything else a string) and the Agent Skills field rules. The YAML
//! grammar itself is `saphyr-parser`'s. Refused rather than guessed: anchors and aliases, explicit
//! tags, keys that are not strings, repeated keys, `.inf` and `.nan` (not JSON), more than one
//! document, nesting past [`MAX_FRONTMATTER_DEPTH`](super::MAX_FRONTMATTER_DEPTH). Knows nothing
//! of files, URIs or the wire.

use std::collections::HashSet;

use saphyr_parser::{Event, Parser, ScalarStyle};
use tollgate_json::{JsonNumber, JsonObject, JsonValue};

use super::{
    MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH,
};

/// Why a frontmatter was refused: a fixed text (the application's own file, but no value of it
/// is repeated) and the JSON Pointer of the field concerned, when one is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) detail: &'static str,
    pub(crate) location: Option<String>,
}

impl Refusal {
    fn new(detail: &'static str) -> Self {
        Self {
            detail,
            location: None,
        }
    }

    fn at(detail: &'static str, location: &str) -> Self {
        Self {
            detail,
            location: Some(location.to_owned()),
        }
    }
}

/// The YAML between a leading `---` line and the next `---` line (one byte-order mark may come
/// first; lines may end in CRLF): the same block hosts compare an entry's frontmatter with.
pub(crate) fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    // The closing line: a newline, `---`, optional spaces or tabs, then a line end or the end.
    let mut from = 0;
    while let Some(found) = rest[from..].find("\n---") {
        let newline = from + found;
        let after = &rest[newline + 4..];
        let trimmed = after.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() || trimmed.starts_with('\n') || trimmed.starts_with("\r\n") {
            let end = if newline > 0 && rest.as_bytes()[newline - 1] == b'\r' {
                newline - 1
            } else {
                newline
            };
            return Some(&rest[..end]);
        }
        from = newline + 1;
    }
    // An empty block: `---` directly followed by the closing line.
    None
}

/// The frontmatter of `text` as a JSON object, checked against the Agent Skills rules for a skill
/// whose directory is called `name`: `name` equal to it, `description` of 1 to 1,024 characters,
/// optional `license` (a string), `compatibility` (at most 500 characters), `metadata` (string
/// values, no `io.modelcontextprotocol/` keys) and `allowed-tools` (a string). Other fields pass
/// through unchanged.
pub(crate) fn read(text: &str, name: &str) -> Result<JsonObject, Refusal> {
    let Some(yaml) = block(text) else {
        return Err(Refusal::new(
            "SKILL.md must begin with a `---` frontmatter block",
        ));
    };
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(Refusal::new("frontmatter over 65,536 bytes"));
    }
    let object = parse(yaml)?;
    check(&object, name)?;
    Ok(object)
}

fn check(object: &JsonObject, name: &str) -> Result<(), Refusal> {
    match object.get("name") {
        Some(JsonValue::String(s)) if s.as_str() == name => {}
        Some(JsonValue::String(_)) => {
            return Err(Refusal::at(
                "frontmatter `name` must equal the skill's directory (the URI's last segment)",
                "/name",
            ));
        }
        _ => return Err(Refusal::at("frontmatter `name` must be a string", "/name")),
    }
    // An empty optional field (`license:`) reads as null: absent, as hosts take it.
    let chars = |key: &str| match object.get(key) {
        None | Some(JsonValue::Null) => Ok(None),
        Some(JsonValue::String(s)) => Ok(Some(s.as_str().chars().count())),
        Some(_) => Err(Refusal::at(
            "frontmatter field must be a string",
            &format!("/{key}"),
        )),
    };
    match chars("description")? {
        Some(n) if (1..=MAX_DESCRIPTION_CHARS).contains(&n) => {}
        _ => {
            return Err(Refusal::at(
                "frontmatter `description` must be 1 to 1,024 characters",
                "/description",
            ));
        }
    }
    if chars("compatibility")?.is_some_and(|n| n > MAX_COMPATIBILITY_CHARS) {
        return Err(Refusal::at(
            "frontmatter `compatibility` over 500 characters",
            "/compatibility",
        ));
    }
    chars("license")?;
    chars("allowed-tools")?;
    match object.get("metadata") {
        None | Some(JsonValue::Null) => {}
        Some(JsonValue::Object(metadata)) => {
            for (key, value) in metadata.iter() {
                if !matches!(value, JsonValue::String(_)) {
                    return Err(Refusal::at(
                        "frontmatter `metadata` values must be strings",
                        "/metadata",
                    ));
                }
                if key.as_str().starts_with("io.modelcontextprotocol/") {
                    return Err(Refusal::at(
                        "frontmatter `metadata` keys under io.modelcontextprotocol/ are reserved",
                        "/metadata",
                    ));
                }
            }
        }
        Some(_) => {
            return Err(Refusal::at(
                "frontmatter `metadata` must be a mapping",
                "/metadata",
            ));
        }
    }
    Ok(())
}

/// A container being filled.
enum Frame {
    Mapping {
        members: Vec<(String, JsonValue)>,
        keys: HashSet<String>,
        key: Option<String>,
    },
    Sequence(Vec<JsonValue>),
}

/// The YAML of one frontmatter block as a JSON object.
pub(crate) fn parse(yaml: &str) -> Result<JsonObject, Refusal> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<JsonValue> = None;
    let mut documents = 0;
    for event in Parser::new_from_str(yaml) {
        let Ok((event, _)) = event else {
            return Err(Refusal::new("frontmatter is not valid YAML"));
        };
        let value = match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {
                continue;
            }
            // An explicit `---` inside the block (which directives such as `%YAML 1.1` need, and
            // which would change how hosts read the scalars) is refused.
            Event::DocumentStart(true) => {
                return Err(Refusal::new(
                    "frontmatter directives and document markers are not allowed",
                ));
            }
            Event::DocumentStart(false) => {
                documents += 1;
                if documents > 1 {
                    return Err(Refusal::new(
                        "frontmatter holds more than one YAML document",
                    ));
                }
                continue;
            }
            Event::Alias(_) => return Err(Refusal::new("frontmatter aliases are not allowed")),
            Event::MappingStart(anchor, tag) | Event::SequenceStart(anchor, tag)
                if anchor != 0 || tag.is_some() =>
            {
                return Err(Refusal::new("frontmatter anchors and tags are not allowed"));
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if matches!(stack.last(), Some(Frame::Mapping { key: None, .. })) {
                    return Err(Refusal::new("frontmatter keys must be strings"));
                }
                if stack.len() >= MAX_FRONTMATTER_DEPTH {
                    return Err(Refusal::new("frontmatter nested deeper than 32 levels"));
                }
                stack.push(if matches!(event, Event::MappingStart(..)) {
                    Frame::Mapping {
                        members: Vec::new(),
                        keys: HashSet::new(),
                        key: None,
                    }
                } else {
                    Frame::Sequence(Vec::new())
                });
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => match stack.pop() {
                Some(Frame::Mapping { members, .. }) => {
                    let mut object = JsonObject::builder();
                    for (key, value) in members {
                        object.push(key, value);
                    }
                    JsonValue::Object(object.build())
                }
                Some(Frame::Sequence(items)) => JsonValue::from(items),
                None => return Err(Refusal::new("frontmatter is not valid YAML")),
            },
            Event::Scalar(text, style, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return Err(Refusal::new("frontmatter anchors and tags are not allowed"));
                }
                if let Some(Frame::Mapping { keys, key, .. }) = stack.last_mut()
                    && key.is_none()
                {
                    if style == ScalarStyle::Plain && !matches!(resolve(&text)?, Plain::String) {
                        return Err(Refusal::new("frontmatter keys must be strings"));
                    }
                    if !keys.insert(text.to_string()) {
                        return Err(Refusal::new("frontmatter repeats a key"));
                    }
                    *key = Some(text.to_string());
                    continue;
                }
                if style == ScalarStyle::Plain {
                    match resolve(&text)? {
                        Plain::Null => JsonValue::Null,
                        Plain::Bool(b) => JsonValue::from(b),
                        Plain::Number(n) => JsonValue::Number(n),
                        Plain::String => JsonValue::from(text.to_string()),
                    }
                } else {
                    JsonValue::from(text.to_string())
                }
            }
        };
        match stack.last_mut() {
            Some(Frame::Mapping { members, key, .. }) => match key.take() {
                Some(k) => members.push((k, value)),
                None => return Err(Refusal::new("frontmatter keys must be strings")),
            },
            Some(Frame::Sequence(items)) => items.push(value),
            None => root = Some(value),
        }
    }
    match root {
        Some(JsonValue::Object(object)) => Ok(object),
        _ => Err(Refusal::new("frontmatter must be a YAML mapping")),
    }
}

/// What a plain scalar is under the YAML 1.2 core schema.
enum Plain {
    Null,
    Bool(bool),
    Number(JsonNumber),
    String,
}

fn resolve(text: &str) -> Result<Plain, Refusal> {
    Ok(match text {
        "" | "~" | "null" | "Null" | "NULL" => Plain::Null,
        "true" | "True" | "TRUE" => Plain::Bool(true),
        "false" | "False" | "FALSE" => Plain::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => {
            return Err(Refusal::new(
                "frontmatter infinities and NaN have no JSON form",
            ));
        }
        _ => match number(text) {
            Some(Some(n)) => Plain::Number(n),
            Some(None) => {
                return Err(Refusal::new("frontmatter number has no exact JSON form"));
            }
            None => Plain::String,
        },
    })
}

/// `None` when `text` is not a core-schema number; `Some(None)` when it is one with no JSON
/// spelling Tollgate can write exactly (an octal or hexadecimal integer past 128 bits).
fn number(text: &str) -> Option<Option<JsonNumber>> {
    if let Some(digits) = text.strip_prefix("0o") {
        return radix(digits, 8);
    }
    if let Some(digits) = text.strip_prefix("0x") {
        return radix(digits, 16);
    }
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let (int, frac) = match mantissa.find('.') {
        Some(at) => (&mantissa[..at], Some(&mantissa[at + 1..])),
        None => (mantissa, None),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let valid_mantissa = match frac {
        // `[0-9]+` or `[0-9]+.[0-9]*` or `.[0-9]+`
        None => !int.is_empty() && digits(int),
        Some(f) => digits(int) && digits(f) && !(int.is_empty() && f.is_empty()),
    };
    let exponent_digits = exponent.map(|e| e.strip_prefix(['-', '+']).unwrap_or(e));
    if !valid_mantissa || exponent_digits.is_some_and(|e| e.is_empty() || !digits(e)) {
        return None;
    }
    let int = int.trim_start_matches('0');
    let mut spelled = String::with_capacity(text.len() + 2);
    if negative {
        spelled.push('-');
    }
    spelled.push_str(if int.is_empty() { "0" } else { int });
    if let Some(f) = frac.filter(|f| !f.is_empty()) {
        spelled.push('.');
        spelled.push_str(f);
    }
    if let Some(e) = exponent {
        spelled.push('e');
        spelled.push_str(e);
    }
    // Past `f64`'s range hosts read ±Infinity, and many JSON readers refuse the number.
    if !spelled.parse::<f64>().is_ok_and(f64::is_finite) {
        return Some(None);
    }
    Some(JsonNumber::parse(&spelled).ok())
}

fn radix(digits: &str, radix: u32) -> Option<Option<JsonNumber>> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    Some(
        u128::from_str_radix(digits, radix)
            .ok()
            .map(JsonNumber::from),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate_json::{OutputLimits, to_string};

    fn json(yaml: &str) -> Result<String, &'static str> {
        parse(yaml)
            .map(|o| to_string(&o.into(), &OutputLimits::default()).unwrap_or_default())
            .map_err(|r| r.detail)
    }

    #[test]
    fn the_block_is_found_as_hosts_find_it() {
        assert_eq!(block("---\nname: a\n---\nbody"), Some("name: a"));
        assert_eq!(
            block("\u{feff}---\r\nname: a\r\n---  \r\nbody"),
            Some("name: a")
        );
        assert_eq!(block("---\nname: a\n---"), Some("name: a"));
        assert_eq!(
            block("---\nname: a\n----\nx: 1\n---\n"),
            Some("name: a\n----\nx: 1")
        );
        assert_eq!(block("name: a\n---\n"), None);
        assert_eq!(block("---\nname: a\n"), None);
        assert_eq!(block(" ---\nname: a\n---\n"), None);
    }

    #[test]
    fn scalars_resolve_by_the_core_schema() {
        assert_eq!(
            json("a: 1.0\nb: yes\nc: ~\nd:\ne: 0x1F\nf: 0o17\ng: +12\nh: -0\ni: 1e3\nj: .5\nk: 5.\nl: 007\nm: '1'\nn: TRUE\no: 2026-12-03"),
            Ok(r#"{"a":1.0,"b":"yes","c":null,"d":null,"e":31,"f":15,"g":12,"h":-0,"i":1e3,"j":0.5,"k":5,"l":7,"m":"1","n":true,"o":"2026-12-03"}"#.to_owned())
        );
        assert_eq!(
            json("list: [a, 'b', 3]\nmap: {x: \"y\"}\nblock: |\n  two\n  lines\n"),
            Ok(r#"{"list":["a","b",3],"map":{"x":"y"},"block":"two\nlines\n"}"#.to_owned())
        );
    }

    #[test]
    fn what_has_no_json_form_or_is_ambiguous_is_refused() {
        for yaml in [
            "a: .inf",
            "a: .nan",
            "a: &x 1\nb: *x",
            "a: !!str 1",
            "1: a",
            "true: a",
            "? [a]\n: b",
            "a: 1\na: 2",
            "- a",
            "just text",
            "a: [",
            "a: 0x1FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
            "a: 1e400",
            "a: -1e999",
            "%YAML 1.1\n--- \nflag: yes",
            "--- \nflag: yes",
        ] {
            assert!(json(yaml).is_err(), "{yaml}");
        }
    }

    #[test]
    fn nesting_is_bounded_at_32() {
        let nested = |n: usize| format!("a: {}1{}", "[".repeat(n - 1), "]".repeat(n - 1));
        assert!(json(&nested(MAX_FRONTMATTER_DEPTH)).is_ok());
        assert_eq!(
            json(&nested(MAX_FRONTMATTER_DEPTH + 1)),
            Err("frontmatter nested deeper than 32 levels")
        );
    }

    #[test]
    fn the_agent_skills_fields_are_checked() {
        let ok = "---\nname: pdf\ndescription: Reads PDFs.\nmetadata:\n  owner: docs\n---\n# PDF";
        assert!(read(ok, "pdf").is_ok());
        assert_eq!(
            read(ok, "other").map_err(|r| r.location),
            Err(Some("/name".to_owned()))
        );
        for (text, location) in [
            ("---\ndescription: d\n---\n", "/name"),
            ("---\nname: pdf\n---\n", "/description"),
            ("---\nname: pdf\ndescription: ''\n---\n", "/description"),
            ("---\nname: pdf\ndescription: 3\n---\n", "/description"),
            (
                "---\nname: pdf\ndescription: d\nmetadata: [a]\n---\n",
                "/metadata",
            ),
            (
                "---\nname: pdf\ndescription: d\nmetadata: {n: 1}\n---\n",
                "/metadata",
            ),
            (
                "---\nname: pdf\ndescription: d\nmetadata: {io.modelcontextprotocol/x: y}\n---\n",
                "/metadata",
            ),
            (
                "---\nname: pdf\ndescription: d\nlicense: [a]\n---\n",
                "/license",
            ),
        ] {
            assert_eq!(
                read(text, "pdf").map_err(|r| r.location),
                Err(Some(location.to_owned())),
                "{text}"
            );
        }
        let empty = "---\nname: pdf\ndescription: d\nlicense:\nmetadata:\ncompatibility:\n---\n";
        assert!(
            read(empty, "pdf").is_ok(),
            "empty optional fields are absent"
        );
        let wide = format!("---\nname: pdf\ndescription: {}\n---\n", "é".repeat(1024));
        assert!(read(&wide, "pdf").is_ok(), "1,024 characters, not bytes");
        let at = format!("---\nname: pdf\ndescription: {}\n---\n", "d".repeat(1024));
        assert!(read(&at, "pdf").is_ok());
        let past = format!("---\nname: pdf\ndescription: {}\n---\n", "d".repeat(1025));
        assert!(read(&past, "pdf").is_err());
        let compat = |n| {
            format!(
                "---\nname: pdf\ndescription: d\ncompatibility: {}\n---\n",
                "c".repeat(n)
            )
        };
        assert!(read(&compat(500), "pdf").is_ok());
        assert!(read(&compat(501), "pdf").is_err());
    }

    #[test]
    fn the_block_size_is_bounded() {
        let padding = |n: usize| {
            let filler = n - "name: pdf\ndescription: d\nx: ".len();
            format!(
                "---\nname: pdf\ndescription: d\nx: {}\n---\n",
                "p".repeat(filler)
            )
        };
        assert!(read(&padding(MAX_FRONTMATTER_BYTES), "pdf").is_ok());
        assert_eq!(
            read(&padding(MAX_FRONTMATTER_BYTES + 1), "pdf").map_err(|r| r.detail),
            Err("frontmatter over 65,536 bytes")
        );
    }
}
