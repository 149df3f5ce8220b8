//! An upstream's skills (the `io.modelcontextprotocol/skills` extension) imported: each listed
//! skill's files read once through the upstream's `resources/read`, each held to the size and
//! `sha256:` digest its entry publishes, and the skill rebuilt from those bytes by the runtime's
//! own [`SkillRegistration`] builder (names, paths, frontmatter and the extension's limits
//! checked exactly as an application's skills are), under the upstream's prefix:
//! `skill://<path>` is served as `skill://PREFIX/<path>`. The gateway then serves exactly the
//! bytes it checked, with the digests hosts verify. A skill that fails is left out and reported
//! as a [`Refusal`] (its URI and reason, never its content). Knows nothing of catalogs, owners
//! or live changes.

use std::sync::Mutex;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tollgate::json::{JsonArray, JsonValue};
use tollgate::resource::ResourceOutput;
use tollgate::skill::{MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILLS_EXTENSION, SkillRegistration};
use tollgate::{BuildErrorKind, content::ResourceContents};
use tollgate_client::Client;

use crate::error::upstream_code::METHOD_NOT_FOUND;
use crate::import::{Kind, Refusal, RefusalReason};
use crate::shared::lock;

const SCHEME: &str = "skill://";
const SKILL_MD: &str = "/SKILL.md";

/// A skill imported before, kept so a re-list whose entry is unchanged (the same files with the
/// same digests) is not read again.
#[derive(Clone)]
pub(crate) struct Imported {
    /// The upstream's `SKILL.md` URI.
    uri: String,
    /// The entry's `resources` records, as listed.
    records: JsonArray,
    skill: SkillRegistration,
}

/// The skills an upstream served last, by its own URIs.
pub(crate) type SkillCache = Mutex<Vec<Imported>>;

/// Whether `client`'s upstream serves skills: it declares the extension, on 2026-07-28 (the
/// revision the extension is specified against).
pub(crate) fn offers_skills(client: &Client) -> bool {
    client.revision().is_stateless()
        && client
            .server()
            .get("capabilities")
            .and_then(|c| c.get("extensions"))
            .and_then(|e| e.get(SKILLS_EXTENSION))
            .is_some()
}

/// What importing one upstream's skills needs.
pub(crate) struct SkillSource<'a> {
    pub(crate) upstream: &'a str,
    pub(crate) client: &'a Client,
    pub(crate) prefix: Option<&'a str>,
    pub(crate) timeout: Duration,
    pub(crate) cache: &'a SkillCache,
}

/// Lists and imports the upstream's skills; `Err` when the list fails. A nested skill (its root
/// inside another listed skill's) comes with the skill enclosing it, as the extension says.
pub(crate) async fn import_skills(
    source: &SkillSource<'_>,
) -> Result<(Vec<SkillRegistration>, Vec<Refusal>), ()> {
    let listed = match tokio::time::timeout(source.timeout, source.client.list_skills()).await {
        Ok(Ok(listed)) => listed,
        // Its last skill removed, a live upstream no longer offers the methods: it has none.
        Ok(Err(error)) if error.code() == Some(METHOD_NOT_FOUND) => Vec::new(),
        _ => return Err(()),
    };
    let roots: Vec<&str> = listed.iter().filter_map(|e| root_of(e)).collect();
    let before = lock(source.cache).clone();
    let mut skills: Vec<SkillRegistration> = Vec::new();
    let mut kept = Vec::new();
    let mut refusals = Vec::new();
    for entry in &listed {
        let uri = entry.get("uri").and_then(JsonValue::as_str).unwrap_or("");
        let refuse = |reason| Refusal::of(Kind::Skill, source.upstream, uri, reason);
        let Some(root) = root_of(entry) else {
            refusals.push(refuse(RefusalReason::Malformed));
            continue;
        };
        if roots.iter().any(|r| inside(root, r)) {
            continue;
        }
        let records = entry.get("resources").and_then(JsonValue::as_array);
        let Some(records) = records else {
            refusals.push(refuse(RefusalReason::Malformed));
            continue;
        };
        let reused = before
            .iter()
            .find(|i| i.uri == uri && &i.records == records);
        let imported = match reused {
            Some(imported) => Ok(imported.skill.clone()),
            None => import_skill(source, root, records).await,
        };
        match imported {
            Ok(skill) if skills.iter().any(|s| s.root_uri() == skill.root_uri()) => {
                refusals.push(refuse(RefusalReason::NameClash));
            }
            Ok(skill) => {
                kept.push(Imported {
                    uri: uri.to_owned(),
                    records: records.clone(),
                    skill: skill.clone(),
                });
                skills.push(skill);
            }
            Err((reason, pointer)) => refusals.push(refuse(reason).at(pointer)),
        }
    }
    *lock(source.cache) = kept;
    Ok((skills, refusals))
}

/// The skill path of an entry (`skill://<path>/SKILL.md`); `None` for any other shape.
fn root_of(entry: &JsonValue) -> Option<&str> {
    let uri = entry.get("uri")?.as_str()?;
    let path = uri.strip_prefix(SCHEME)?.strip_suffix(SKILL_MD)?;
    (!path.is_empty()).then_some(path)
}

/// Whether the skill path `root` lies strictly inside the skill path `outer`.
fn inside(root: &str, outer: &str) -> bool {
    root.strip_prefix(outer)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// Why one skill is left out: the reason, and a JSON Pointer into its frontmatter when a field
/// is the reason.
type Refused = (RefusalReason, Option<String>);

/// One skill's files read, held to their records, and the skill built from them.
async fn import_skill(
    source: &SkillSource<'_>,
    root: &str,
    records: &JsonArray,
) -> Result<SkillRegistration, Refused> {
    let malformed = (RefusalReason::Malformed, None);
    let limit = (RefusalReason::SkillCheck, None);
    declared_within_limits(records)?;
    let base = format!("{SCHEME}{root}/");
    let mut builder = SkillRegistration::builder(root);
    if let Some(prefix) = source.prefix {
        builder = builder.under(prefix);
    }
    let mut read_bytes: u64 = 0;
    for record in records.iter() {
        let uri = record.get("uri").and_then(JsonValue::as_str);
        let uri = uri.ok_or(malformed.clone())?;
        let path = uri
            .strip_prefix(&base)
            .and_then(decode)
            .ok_or(malformed.clone())?;
        let (bytes, mime) = read(source, uri).await?;
        read_bytes = read_bytes.saturating_add(bytes.len() as u64);
        if read_bytes > MAX_SKILL_BYTES {
            return Err(limit);
        }
        if !matches(&bytes, record) {
            return Err((RefusalReason::SkillContent, None));
        }
        builder = match mime {
            Some(mime) => builder.file_with_mime_type(path, bytes, mime),
            None => builder.file(path, bytes),
        };
    }
    builder.build().map_err(|e| check_refused(&e))
}

/// A skill the builder refused: [`RefusalReason::SkillCheck`], with the frontmatter field's
/// JSON Pointer when a field is the cause (never the field's value).
fn check_refused(error: &tollgate::BuildError) -> Refused {
    // Only a JSON Pointer: the location of an unreadable SKILL.md is its path, the upstream's.
    let pointer = (error.kind() == BuildErrorKind::SkillFrontmatter)
        .then(|| {
            error
                .location()
                .filter(|l| l.starts_with('/'))
                .map(str::to_owned)
        })
        .flatten();
    (RefusalReason::SkillCheck, pointer)
}

/// The extension's limits (512 files, 16 MiB together), checked on the entry's records before
/// anything is read: a skill that declares more is refused unread.
fn declared_within_limits(records: &JsonArray) -> Result<(), Refused> {
    let limit = (RefusalReason::SkillCheck, None);
    if records.len() > MAX_SKILL_FILES {
        return Err(limit);
    }
    let mut declared: u64 = 0;
    for record in records.iter() {
        if let Some(size) = record.get("size") {
            let size = size.as_number().and_then(|n| n.to_u64());
            declared = declared.saturating_add(size.ok_or((RefusalReason::Malformed, None))?);
        }
    }
    if declared > MAX_SKILL_BYTES {
        return Err(limit);
    }
    Ok(())
}

/// One file of a skill read: its bytes and media type, from exactly one contents at its URI.
async fn read(source: &SkillSource<'_>, uri: &str) -> Result<(Vec<u8>, Option<String>), Refused> {
    let unread = (RefusalReason::SkillContent, None);
    let call = source.client.read_resource(uri);
    let result = match tokio::time::timeout(source.timeout, call).await {
        Ok(Ok(result)) => result,
        _ => return Err(unread),
    };
    let output = result
        .as_object()
        .and_then(ResourceOutput::from_wire)
        .ok_or(unread.clone())?;
    let [contents] = output.contents() else {
        return Err(unread);
    };
    let (at, mime, bytes) = match contents {
        ResourceContents::Text {
            uri,
            mime_type,
            text,
        } => (uri, mime_type, text.as_bytes().to_vec()),
        ResourceContents::Blob {
            uri,
            mime_type,
            data,
        } => (uri, mime_type, data.to_vec()),
        _ => return Err(unread),
    };
    if &**at != uri {
        return Err(unread);
    }
    Ok((bytes, mime.as_deref().map(str::to_owned)))
}

/// Whether `bytes` are the record's: its `size` where given, its `sha256:` digest always.
fn matches(bytes: &[u8], record: &JsonValue) -> bool {
    if let Some(size) = record.get("size")
        && size.as_number().and_then(|n| n.to_u64()) != Some(bytes.len() as u64)
    {
        return false;
    }
    let Some(hex) = record
        .get("digest")
        .and_then(JsonValue::as_str)
        .and_then(|d| d.strip_prefix("sha256:"))
    else {
        return false;
    };
    let digest = Sha256::digest(bytes);
    hex.len() == 64
        && digest
            .iter()
            .zip(hex.as_bytes().chunks(2))
            .all(|(byte, pair)| {
                std::str::from_utf8(pair)
                    .ok()
                    .and_then(|p| u8::from_str_radix(p, 16).ok())
                    == Some(*byte)
            })
}

/// A file path from its URI's percent-encoded form; `None` when it does not decode to UTF-8.
fn decode(encoded: &str) -> Option<String> {
    percent_encoding::percent_decode_str(encoded)
        .decode_utf8()
        .ok()
        .map(|p| p.into_owned())
}

/// Whether two served skill roots overlap (one is the other, or lies inside it).
pub(crate) fn overlap(a: &str, b: &str) -> bool {
    a == b || inside(a, b) || inside(b, a)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn record(text: &str) -> JsonValue {
        tollgate::json::from_str(text, &tollgate::json::JsonLimits::default()).unwrap()
    }

    const HELLO: &str = "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";

    #[test]
    fn a_file_matches_its_record_by_size_and_digest() {
        let at = |size: &str| record(&format!(r#"{{"size":{size},"digest":"{HELLO}"}}"#));
        assert!(matches(b"hello", &at("5")));
        assert!(!matches(b"hello", &at("6")));
        assert!(!matches(b"hellO", &at("5")));
        assert!(matches(
            b"hello",
            &record(&format!(r#"{{"digest":"{HELLO}"}}"#))
        ));
        assert!(!matches(b"hello", &record(r#"{"size":5}"#)));
        assert!(!matches(
            b"hello",
            &record(r#"{"size":5,"digest":"md5:x"}"#)
        ));
        let upper = HELLO.to_uppercase().replace("SHA256:", "sha256:");
        assert!(matches(
            b"hello",
            &record(&format!(r#"{{"digest":"{upper}"}}"#))
        ));
    }

    #[test]
    fn declared_files_and_bytes_are_bounded_before_any_read() {
        let records = |count: usize, size: u64| -> JsonArray {
            let text = format!(
                "[{}]",
                vec![format!(r#"{{"uri":"skill://a/f","size":{size}}}"#); count].join(",")
            );
            record(&text).as_array().unwrap().clone()
        };
        let reason = |r: Result<(), Refused>| r.err().map(|(reason, _)| reason);
        assert_eq!(reason(declared_within_limits(&records(512, 1))), None);
        assert_eq!(
            reason(declared_within_limits(&records(513, 1))),
            Some(RefusalReason::SkillCheck)
        );
        let bytes = MAX_SKILL_BYTES / 2;
        assert_eq!(reason(declared_within_limits(&records(2, bytes))), None);
        let past: JsonArray = records(2, bytes)
            .iter()
            .cloned()
            .chain([record(r#"{"uri":"skill://a/g","size":1}"#)])
            .collect();
        assert_eq!(
            reason(declared_within_limits(&past)),
            Some(RefusalReason::SkillCheck)
        );
        assert_eq!(
            reason(declared_within_limits(&records(1, u64::MAX))),
            Some(RefusalReason::SkillCheck)
        );
        let sizeless = record(r#"[{"uri":"skill://a/f","size":"big"}]"#);
        assert_eq!(
            reason(declared_within_limits(sizeless.as_array().unwrap())),
            Some(RefusalReason::Malformed)
        );
    }

    #[test]
    fn a_frontmatter_field_is_named_and_its_value_never() {
        let skill = |md: &str| SkillRegistration::builder("pdf").file("SKILL.md", md.to_owned());
        let wrong_name = skill("---\nname: secret-value\ndescription: d\n---\n")
            .build()
            .unwrap_err();
        let (reason, pointer) = check_refused(&wrong_name);
        assert_eq!(reason, RefusalReason::SkillCheck);
        assert_eq!(pointer.as_deref(), Some("/name"));
        let refusal = Refusal::of(Kind::Skill, "up", "skill://pdf/SKILL.md", reason).at(pointer);
        let text = refusal.to_string();
        assert!(
            text.contains("\"/name\"") && !text.contains("secret-value"),
            "{text}"
        );
        // A path broken, not a field: no pointer.
        let escape = skill("---\nname: pdf\ndescription: d\n---\n")
            .file("../x", "x")
            .build()
            .unwrap_err();
        assert_eq!(check_refused(&escape), (RefusalReason::SkillCheck, None));
        // A nested SKILL.md that is not UTF-8: its location is its path (names the upstream
        // chose), never reported as a pointer.
        let unreadable = skill("---\nname: pdf\ndescription: d\n---\n")
            .file("secret-dir/SKILL.md", vec![0xff_u8, 0xfe])
            .build()
            .unwrap_err();
        assert_eq!(unreadable.kind(), BuildErrorKind::SkillFrontmatter);
        assert_eq!(
            check_refused(&unreadable),
            (RefusalReason::SkillCheck, None)
        );
    }

    #[test]
    fn roots_nest_by_whole_segments() {
        assert!(inside("a/pdf/forms", "a/pdf"));
        assert!(!inside("a/pdfx", "a/pdf"));
        assert!(!inside("a/pdf", "a/pdf"));
        assert!(overlap("skill://a/pdf", "skill://a/pdf"));
        assert!(overlap("skill://a", "skill://a/pdf"));
        assert!(!overlap("skill://a/pdf", "skill://b/pdf"));
        let entry = |uri: &str| record(&format!(r#"{{"uri":"{uri}"}}"#));
        assert_eq!(root_of(&entry("skill://a/pdf/SKILL.md")), Some("a/pdf"));
        assert_eq!(root_of(&entry("skill:///SKILL.md")), None);
        assert_eq!(root_of(&entry("file:///pdf/SKILL.md")), None);
        assert_eq!(decode("a%20b/c.md").as_deref(), Some("a b/c.md"));
        assert_eq!(decode("%FF"), None);
    }
}
