//! The skills extension as a host uses it: list the skills, load one by reading its `SKILL.md`
//! and verifying it against the listed entry (byte size, `sha256:` digest, frontmatter field by
//! field) before anything of it is used, and read its other files only after that, each
//! verified the same way. It owns verification; it must not know transports.

use sha2::{Digest, Sha256};
use tollgate_json::{JsonObject, JsonValue};

use crate::client::Client;
use crate::error::{Error, ErrorKind};

/// A skill whose `SKILL.md` was read and verified against its entry.
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    uri: String,
    text: String,
    others: Vec<String>,
}

impl LoadedSkill {
    /// The `SKILL.md` URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The verified `SKILL.md` text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The entry's other files (read them with [`Client::read_skill_file`] when needed).
    pub fn other_files(&self) -> &[String] {
        &self.others
    }
}

fn unverified(detail: &'static str) -> Error {
    Error::new(ErrorKind::Protocol, detail)
}

impl Client {
    /// Every skill entry (`skills/list`), page by page.
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`].
    pub async fn list_skills(&self) -> Result<Vec<JsonValue>, Error> {
        self.all_of("skills/list", "skills").await
    }

    /// Reads the entry's `SKILL.md` and verifies it: its size and digest against the entry's
    /// `resources` record for it, its frontmatter field by field against the entry's. Nothing
    /// unverified is returned.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Protocol`] on any mismatch, a malformed entry, or frontmatter this client
    /// cannot compare (anything but `key: scalar` lines); otherwise the transport's errors.
    pub async fn load_skill(&self, entry: &JsonValue) -> Result<LoadedSkill, Error> {
        let uri = entry
            .get("uri")
            .and_then(JsonValue::as_str)
            .ok_or(unverified("a skill entry without a uri"))?;
        let text = self.read_skill_file(entry, uri).await?;
        let expected = entry
            .get("frontmatter")
            .and_then(JsonValue::as_object)
            .ok_or(unverified("a skill entry without frontmatter"))?;
        if !frontmatter_matches(&text, expected) {
            return Err(unverified("the skill's frontmatter differs from its entry"));
        }
        let others = records(entry)
            .filter_map(|r| r.get("uri").and_then(JsonValue::as_str))
            .filter(|u| *u != uri)
            .map(str::to_owned)
            .collect();
        Ok(LoadedSkill {
            uri: uri.to_owned(),
            text,
            others,
        })
    }

    /// Reads one file of a skill (`resources/read`) and verifies its size and digest against
    /// the entry's record for it.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Protocol`] when the entry has no record for `uri`, or the content differs
    /// from it; otherwise the transport's errors.
    pub async fn read_skill_file(&self, entry: &JsonValue, uri: &str) -> Result<String, Error> {
        let record = records(entry)
            .find(|r| r.get("uri").and_then(JsonValue::as_str) == Some(uri))
            .ok_or(unverified("the file is not in the skill's entry"))?;
        let result = self.read_resource(uri).await?;
        let text = result
            .get("contents")
            .and_then(JsonValue::as_array)
            .and_then(|c| c.first())
            .and_then(|c| c.get("text"))
            .and_then(JsonValue::as_str)
            .ok_or(unverified("the skill file has no text"))?;
        verify(text.as_bytes(), record)?;
        Ok(text.to_owned())
    }
}

fn records(entry: &JsonValue) -> impl Iterator<Item = &JsonValue> {
    entry
        .get("resources")
        .and_then(JsonValue::as_array)
        .into_iter()
        .flat_map(|r| r.iter())
}

/// The bytes against a `{size, digest}` record: a size mismatch fails before any hashing.
fn verify(bytes: &[u8], record: &JsonValue) -> Result<(), Error> {
    if let Some(size) = record.get("size") {
        let size = size
            .as_number()
            .and_then(|n| n.to_u64())
            .ok_or(unverified("a skill file record with a bad size"))?;
        if size != bytes.len() as u64 {
            return Err(unverified("the skill file's size differs from its entry"));
        }
    }
    let digest = record
        .get("digest")
        .and_then(JsonValue::as_str)
        .ok_or(unverified("a skill file record without a digest"))?;
    let hex = digest
        .strip_prefix("sha256:")
        .ok_or(unverified("a skill file digest that is not sha256"))?;
    let actual = Sha256::digest(bytes);
    let mut spelled = String::with_capacity(64);
    for byte in actual {
        spelled.push_str(&format!("{byte:02x}"));
    }
    if !hex.eq_ignore_ascii_case(&spelled) {
        return Err(unverified("the skill file's digest differs from its entry"));
    }
    Ok(())
}

/// The frontmatter between the leading `---` lines, as `key: scalar` pairs, equal field by
/// field to `expected` (string members only). Anything else cannot be compared: not a match.
fn frontmatter_matches(text: &str, expected: &JsonObject) -> bool {
    let Some(rest) = text.strip_prefix("---\n") else {
        return false;
    };
    let Some(end) = rest.find("\n---") else {
        return false;
    };
    let mut seen = 0;
    for line in rest[..end].lines().filter(|l| !l.trim().is_empty()) {
        let Some((key, value)) = line.split_once(':') else {
            return false;
        };
        if key.starts_with(' ') || key.starts_with('#') {
            return false;
        }
        let value = unquote(value.trim());
        match expected.get(key.trim()).and_then(JsonValue::as_str) {
            Some(want) if Some(want) == value.as_deref() => seen += 1,
            _ => return false,
        }
    }
    seen == expected.len()
}

/// A plain or quoted YAML scalar on one line; `None` for anything this client does not read.
fn unquote(value: &str) -> Option<String> {
    if let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        return (!inner.contains(['\\', '"'])).then(|| inner.to_owned());
    }
    if let Some(inner) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
        return Some(inner.replace("''", "'"));
    }
    let special = value.is_empty()
        || value.starts_with(['[', '{', '&', '*', '!', '|', '>', '%', '@', '`'])
        || value.contains(" #");
    (!special).then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use tollgate_json::{JsonLimits, from_str};

    const SKILL: &str = "---\nname: pdf\ndescription: Fill PDF forms\n---\n\nBody.\n";

    fn entry(description: &str) -> JsonObject {
        JsonObject::builder()
            .insert("name", "pdf")
            .insert("description", description)
            .build()
    }

    #[test]
    fn frontmatter_compared_field_by_field() {
        assert!(frontmatter_matches(SKILL, &entry("Fill PDF forms")));
        assert!(!frontmatter_matches(SKILL, &entry("Exfiltrate")));
        let extra = JsonObject::builder()
            .insert("name", "pdf")
            .insert("description", "Fill PDF forms")
            .insert("license", "MIT")
            .build();
        assert!(!frontmatter_matches(SKILL, &extra));
        let nested = "---\nname: pdf\nmetadata:\n  a: b\n---\n";
        assert!(!frontmatter_matches(nested, &entry("x")));
    }

    #[test]
    fn size_and_digest_checked() {
        let digest = "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
        let record = |size: usize| {
            from_str(
                &format!(r#"{{"size":{size},"digest":"{digest}"}}"#),
                &JsonLimits::default(),
            )
            .unwrap()
        };
        assert!(verify(b"hello", &record(5)).is_ok());
        assert!(verify(b"hello", &record(6)).is_err());
        assert!(verify(b"hellO", &record(5)).is_err());
    }
}
