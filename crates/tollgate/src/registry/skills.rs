//! The skills an endpoint serves (the `io.modelcontextprotocol/skills` extension, 2026-07-28),
//! indexed and rendered once when it is built: the `skills/list` pages (whole entries only,
//! each page within the output limit), each skill's `skills/get` result, each directory's
//! `resources/directory/read` result, the `SKILL.md` descriptors `resources/list` carries, and
//! every file as a resource registration `resources/read` routes to. Knows nothing of requests.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use tollgate_json::{JsonArray, JsonObject, JsonValue, OutputLimits, to_vec};

use crate::facts::error::{BuildError, BuildErrorKind};
use crate::model::cache::CachePolicy;
use crate::model::content::ResourceContents;
use crate::model::resource::ResourceRegistration;
use crate::model::skill::{Body, SkillEntry, SkillInner, SkillRegistration};
use crate::registry::{NameMap, cursor_text};
use crate::version::ProtocolVersion;

/// The media type of a directory resource.
pub(crate) const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// What an endpoint's skills answer with.
pub(crate) struct Skills {
    /// `skills/list`, page by page.
    pub(crate) pages: Vec<Vec<u8>>,
    /// Binds the list's cursors to this build of it.
    pub(crate) fingerprint: u64,
    /// `skills/get`, by `SKILL.md` URI.
    pub(crate) get: NameMap<Vec<u8>>,
    /// `resources/directory/read`, by directory URI (one page each: a directory holds at most
    /// 512 files and 512 directories).
    pub(crate) directories: NameMap<Vec<u8>>,
    /// Every file, by URI.
    pub(crate) files: NameMap<ResourceRegistration>,
    /// The `SKILL.md` descriptors `resources/list` carries, in skill order.
    pub(crate) listed: Vec<JsonValue>,
}

/// What indexing needs of the endpoint.
pub(crate) struct Setting<'a> {
    pub(crate) cache: CachePolicy,
    pub(crate) output: &'a OutputLimits,
    pub(crate) page_size: usize,
    pub(crate) path: &'a str,
    pub(crate) resources: &'a [ResourceRegistration],
    /// Mixed into the list's fingerprint for a per-principal view (0: the endpoint's own).
    pub(crate) salt: u64,
    /// Index an empty list too (a view that sees none of the endpoint's skills).
    pub(crate) keep_empty: bool,
}

/// Indexes `skills`: `None` when there are none (unless `setting.keep_empty`).
///
/// # Errors
///
/// [`BuildErrorKind::DuplicateResource`] when two skills overlap (one's root inside another's)
/// or a skill's file has a registered resource's URI; [`BuildErrorKind::SkillLimit`] when a file,
/// an entry or a directory listing cannot be answered within the output limits.
pub(crate) fn index(
    skills: &[SkillRegistration],
    setting: &Setting<'_>,
) -> Result<Option<Skills>, BuildError> {
    if skills.is_empty() && !setting.keep_empty {
        return Ok(None);
    }
    check_roots(skills, setting)?;
    let registered: HashSet<&str> = setting
        .resources
        .iter()
        .map(ResourceRegistration::uri)
        .collect();
    let mut index = Skills {
        pages: Vec::new(),
        fingerprint: 0,
        get: NameMap::default(),
        directories: NameMap::default(),
        files: NameMap::default(),
        listed: Vec::new(),
    };
    let mut entries: Vec<(Arc<str>, Vec<u8>)> = Vec::new();
    let mut hasher = DefaultHasher::new();
    setting.path.hash(&mut hasher);
    setting.page_size.hash(&mut hasher);
    // Where pages split depends on the output limit too.
    setting.output.max_output_bytes().hash(&mut hasher);
    if setting.salt != 0 {
        // A view's list: its cursors page through no other view's.
        setting.salt.hash(&mut hasher);
    }
    let mut listed_bytes: usize = 0;
    for skill in skills {
        let inner = &*skill.inner;
        index_files(inner, &registered, setting, &mut index.files)?;
        let listed = index_entries(inner, setting, &mut index, &mut entries, &mut hasher)?;
        listed_bytes = listed_bytes.saturating_add(listed);
        directories(inner, setting, &mut index.directories).map_err(|uri| {
            refused(
                BuildErrorKind::SkillLimit,
                "a directory listing over the output limits",
                &uri,
                setting,
            )
        })?;
    }
    // `resources/list` is one page: the SKILL.md entries must leave room in it.
    if listed_bytes > setting.output.max_output_bytes() / 2 {
        return Err(refused(
            BuildErrorKind::SkillLimit,
            "the SKILL.md entries of resources/list over half the output limit",
            "",
            setting,
        ));
    }
    index.fingerprint = hasher.finish();
    index.pages = pages(&entries, setting, index.fingerprint).map_err(|uri| {
        refused(
            BuildErrorKind::SkillLimit,
            "a skill entry over the output limits",
            &uri,
            setting,
        )
    })?;
    Ok(Some(index))
}

/// The build error about the skill resource `uri` of the endpoint at `setting.path`.
fn refused(
    kind: BuildErrorKind,
    detail: &'static str,
    uri: &str,
    setting: &Setting<'_>,
) -> BuildError {
    BuildError::new(kind)
        .with_detail(detail)
        .resource(uri)
        .at_path(setting.path)
}

/// Refuses skills that overlap: two at one root, or one's root inside another's.
fn check_roots(skills: &[SkillRegistration], setting: &Setting<'_>) -> Result<(), BuildError> {
    let roots: HashSet<&str> = skills.iter().map(|s| &*s.inner.root).collect();
    if roots.len() < skills.len() {
        let twice = skills
            .iter()
            .map(|s| &*s.inner.root)
            .find(|r| skills.iter().filter(|s| &*s.inner.root == *r).count() > 1);
        return Err(refused(
            BuildErrorKind::DuplicateResource,
            "two skills share a path",
            twice.unwrap_or(""),
            setting,
        ));
    }
    for root in &roots {
        let mut at = root.len();
        while let Some(slash) = root[..at].rfind('/') {
            if slash < "skill://".len() {
                break;
            }
            if roots.contains(&root[..slash]) {
                return Err(refused(
                    BuildErrorKind::DuplicateResource,
                    "a skill lies inside another skill",
                    root,
                    setting,
                ));
            }
            at = slash;
        }
    }
    Ok(())
}

/// Adds a skill's files to `files` as resource registrations `resources/read` routes to (a
/// `SKILL.md` named and described by its skill), refusing a file with a `registered` resource's
/// URI or too large for one read.
fn index_files(
    inner: &SkillInner,
    registered: &HashSet<&str>,
    setting: &Setting<'_>,
    files: &mut NameMap<ResourceRegistration>,
) -> Result<(), BuildError> {
    for file in &inner.files {
        if registered.contains(&*file.uri) {
            return Err(refused(
                BuildErrorKind::DuplicateResource,
                "a skill file has a registered resource's URI",
                &file.uri,
                setting,
            ));
        }
        let contents = match &file.body {
            Body::Text(text) => ResourceContents::Text {
                uri: file.uri.clone(),
                mime_type: Some(file.mime_type.clone()),
                text: text.clone(),
            },
            Body::Binary(data) => ResourceContents::Blob {
                uri: file.uri.clone(),
                mime_type: Some(file.mime_type.clone()),
                data: data.clone(),
            },
        };
        if !fits_read(&contents, setting) {
            return Err(refused(
                BuildErrorKind::SkillLimit,
                "a file too large for one resources/read (the output limits)",
                &file.uri,
                setting,
            ));
        }
        let name = file.path.rsplit('/').next().unwrap_or(&file.path);
        let entry = inner.entries.iter().find(|e| e.uri == file.uri);
        let registration = ResourceRegistration::served(
            entry.map_or_else(|| Arc::from(name), |e| e.name.clone()),
            entry.map(|e| e.description.clone()),
            file.size(),
            contents,
        );
        files.insert(file.uri.clone(), registration);
    }
    Ok(())
}

/// Renders a skill's entries (root first, then nested skills: `resources/list` shows each
/// `SKILL.md` in that order) into `index` (`skills/get`, the `resources/list` descriptors) and
/// `entries` (for `skills/list`'s pages), each hashed into the list's fingerprint. Returns the
/// bytes its descriptors add to `resources/list`. Its files must be indexed first.
fn index_entries(
    inner: &SkillInner,
    setting: &Setting<'_>,
    index: &mut Skills,
    entries: &mut Vec<(Arc<str>, Vec<u8>)>,
    hasher: &mut DefaultHasher,
) -> Result<usize, BuildError> {
    let too_large = |uri: &str| {
        refused(
            BuildErrorKind::SkillLimit,
            "a skill entry over the output limits",
            uri,
            setting,
        )
    };
    let mut listed_bytes: usize = 0;
    for entry in &inner.entries {
        if let Some(file) = index.files.get(&entry.uri) {
            let descriptor = file.descriptor(ProtocolVersion::V2026_07_28);
            let bytes = to_vec(&descriptor, setting.output).map_or(usize::MAX, |b| b.len() + 1);
            listed_bytes = listed_bytes.saturating_add(bytes);
            index.listed.push(descriptor);
        }
        let rendered = render_entry(inner, entry);
        let bytes = to_vec(&rendered, setting.output).map_err(|_| too_large(&entry.uri))?;
        bytes.hash(hasher);
        let mut get = JsonObject::builder()
            .insert("resultType", "complete")
            .insert("skill", rendered);
        setting.cache.push_into(&mut get);
        let get = to_vec(&get.build().into(), setting.output).map_err(|_| too_large(&entry.uri))?;
        index.get.insert(entry.uri.clone(), get);
        entries.push((entry.uri.clone(), bytes));
    }
    Ok(listed_bytes)
}

/// Whether a read of these contents fits the output limits (as `resources/read` renders it).
fn fits_read(contents: &ResourceContents, setting: &Setting<'_>) -> bool {
    let Ok(rendered) = contents.render() else {
        return false;
    };
    let mut result = JsonObject::builder()
        .insert("resultType", "complete")
        .insert("contents", JsonValue::from(vec![rendered]));
    setting.cache.push_into(&mut result);
    to_vec(&result.build().into(), setting.output).is_ok()
}

/// A skill's entry: its `SKILL.md` URI, frontmatter and every file below its directory.
fn render_entry(inner: &SkillInner, entry: &SkillEntry) -> JsonValue {
    let resources: JsonArray = inner
        .files
        .iter()
        .filter(|f| {
            entry.directory.is_empty() || f.path.starts_with(&format!("{}/", entry.directory))
        })
        .map(|f| {
            JsonValue::Object(
                JsonObject::builder()
                    .insert("uri", &*f.uri)
                    .insert("digest", &*f.digest)
                    .insert("size", f.size())
                    .build(),
            )
        })
        .collect();
    JsonObject::builder()
        .insert("uri", &*entry.uri)
        .insert("frontmatter", entry.frontmatter.clone())
        .insert("resources", resources)
        .build()
        .into()
}

/// Pages of whole entries: at most `page_size` each, and as many as fit the output limits.
fn pages(
    entries: &[(Arc<str>, Vec<u8>)],
    setting: &Setting<'_>,
    fingerprint: u64,
) -> Result<Vec<Vec<u8>>, Arc<str>> {
    // What a page carries besides its entries: the result type, the cursor and the caching hints.
    const FRAME: usize = 512;
    let budget = setting.output.max_output_bytes().saturating_sub(FRAME);
    let mut chunks: Vec<&[(Arc<str>, Vec<u8>)]> = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, (uri, entry)) in entries.iter().enumerate() {
        if entry.len() + 1 > budget {
            return Err(uri.clone());
        }
        if i > start && (i - start == setting.page_size || bytes + entry.len() + 1 > budget) {
            chunks.push(&entries[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += entry.len() + 1;
    }
    chunks.push(&entries[start..]);
    let count = chunks.len();
    let mut pages = Vec::with_capacity(count);
    for (i, chunk) in chunks.into_iter().enumerate() {
        // The entries were rendered once; the page is spliced around them.
        let mut page = br#"{"resultType":"complete","skills":["#.to_vec();
        for (j, (_, entry)) in chunk.iter().enumerate() {
            if j > 0 {
                page.push(b',');
            }
            page.extend_from_slice(entry);
        }
        page.push(b']');
        let mut tail = JsonObject::builder();
        if i + 1 < count {
            tail.push("nextCursor", cursor_text(fingerprint, i + 1));
        }
        setting.cache.push_into(&mut tail);
        let tail = to_vec(&tail.build().into(), setting.output).map_err(|_| Arc::from(""))?;
        // `tail` is `{...}`: its members, if any, follow the array.
        if tail.len() > 2 {
            page.push(b',');
        }
        page.extend_from_slice(tail.get(1..).unwrap_or(b"}"));
        pages.push(page);
    }
    Ok(pages)
}

/// Every directory's listing: its direct children, files with their metadata and directories
/// with the directory media type.
fn directories(
    inner: &SkillInner,
    setting: &Setting<'_>,
    out: &mut NameMap<Vec<u8>>,
) -> Result<(), Arc<str>> {
    let all = std::iter::once("").chain(inner.directories.iter().map(|d| &**d));
    for directory in all {
        let uri: Arc<str> = if directory.is_empty() {
            inner.root.clone()
        } else {
            Arc::from(format!("{}/{}", inner.root, encoded(directory)))
        };
        let parent_of = |path: &str| path.rsplit_once('/').map_or("", |(p, _)| p).to_owned();
        let mut children: Vec<JsonValue> = Vec::new();
        for sub in inner
            .directories
            .iter()
            .filter(|d| parent_of(d) == directory)
        {
            let name = sub.rsplit('/').next().unwrap_or(sub);
            children.push(
                JsonObject::builder()
                    .insert("uri", format!("{}/{}", inner.root, encoded(sub)))
                    .insert("name", name)
                    .insert("mimeType", DIRECTORY_MIME_TYPE)
                    .build()
                    .into(),
            );
        }
        for file in inner
            .files
            .iter()
            .filter(|f| parent_of(&f.path) == directory)
        {
            let name = file.path.rsplit('/').next().unwrap_or(&file.path);
            children.push(
                JsonObject::builder()
                    .insert("uri", &*file.uri)
                    .insert("name", name)
                    .insert("mimeType", &*file.mime_type)
                    .insert("size", file.size())
                    .build()
                    .into(),
            );
        }
        let result = JsonObject::builder()
            .insert("resultType", "complete")
            .insert("resources", JsonValue::from(children))
            .build();
        let bytes = to_vec(&result.into(), setting.output).map_err(|_| uri.clone())?;
        out.insert(uri, bytes);
    }
    Ok(())
}

/// A directory's path in URI form: the encoding its files' URIs use.
fn encoded(directory: &str) -> String {
    crate::model::skill::encode_path(directory).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate_json::from_slice;

    fn skill(i: usize, padding: usize) -> SkillRegistration {
        let name = format!("skill-{i}");
        let md = format!(
            "---\nname: {name}\ndescription: d\nnotes: {}\n---\n",
            "n".repeat(padding)
        );
        SkillRegistration::builder(name)
            .file("SKILL.md", md)
            .build()
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn indexed(
        skills: &[SkillRegistration],
        max_bytes: usize,
    ) -> Result<Option<Skills>, BuildError> {
        let output = OutputLimits::default()
            .with_max_output_bytes(max_bytes)
            .unwrap_or_default();
        let setting = Setting {
            cache: CachePolicy::default(),
            output: &output,
            page_size: 100,
            path: "/mcp",
            resources: &[],
            salt: 0,
            keep_empty: false,
        };
        index(skills, &setting)
    }

    #[test]
    fn pages_close_before_the_output_limit_and_keep_entries_whole() {
        let skills: Vec<SkillRegistration> = (0..10).map(|i| skill(i, 1000)).collect();
        let Ok(Some(index)) = indexed(&skills, 4096) else {
            panic!("indexed")
        };
        assert!(index.pages.len() >= 4, "{}", index.pages.len());
        let mut seen = 0;
        for (i, page) in index.pages.iter().enumerate() {
            assert!(page.len() <= 4096, "page {i}: {} bytes", page.len());
            let parsed =
                from_slice(page, &Default::default()).unwrap_or_else(|e| panic!("page {i}: {e}"));
            seen += parsed
                .get("skills")
                .and_then(JsonValue::as_array)
                .map_or(0, |a| a.len());
            assert_eq!(
                parsed.get("nextCursor").is_some(),
                i + 1 < index.pages.len()
            );
            assert!(parsed.get("ttlMs").is_some() && parsed.get("cacheScope").is_some());
        }
        assert_eq!(seen, 10);
        // An entry that cannot fit a page alone refuses the build.
        let err = indexed(&[skill(0, 1000)], 1024).err().map(|e| e.kind());
        assert_eq!(err, Some(BuildErrorKind::SkillLimit));
    }

    #[test]
    fn skill_md_entries_leave_room_in_resources_list() {
        let described = |i: usize, n: usize| {
            let name = format!("skill-{i}");
            let md = format!("---\nname: {name}\ndescription: {}\n---\n", "d".repeat(n));
            SkillRegistration::builder(name)
                .file("SKILL.md", md)
                .build()
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let few: Vec<SkillRegistration> = (0..2).map(|i| described(i, 500)).collect();
        assert!(matches!(indexed(&few, 4096), Ok(Some(_))));
        let many: Vec<SkillRegistration> = (0..4).map(|i| described(i, 500)).collect();
        let err = indexed(&many, 4096).err().map(|e| e.kind());
        assert_eq!(err, Some(BuildErrorKind::SkillLimit));
    }
}
