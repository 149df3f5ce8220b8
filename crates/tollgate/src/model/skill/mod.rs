//! Skills: the `io.modelcontextprotocol/skills` extension (SEP-2640). A skill is a directory
//! whose `SKILL.md` opens with YAML frontmatter (at least `name` and `description`), served
//! file by file under `skill://<skill-path>/<file-path>`.
//!
//! Owns [`SkillRegistration`] and its builder: the naming, path and URI rules, the frontmatter
//! (`frontmatter`), the walk of a directory on disk (`directory`), each file's media type, digest
//! and size, and the extension's limits, all checked when the registration is built; nested skills
//! (a `SKILL.md` in a subdirectory) are found here too. Knows nothing of methods, catalogs or
//! transports: `registry/skills.rs` renders what a registration holds.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use tollgate_json::JsonObject;

use crate::facts::error::{BuildError, BuildErrorKind};

mod directory;
mod frontmatter;

/// The extension's identifier, the key of its settings under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The most files one skill holds, `SKILL.md` and nested skills' files included (the
/// extension's limit).
///
/// ```
/// assert_eq!(tollgate::skill::MAX_SKILL_FILES, 512);
/// ```
pub const MAX_SKILL_FILES: usize = 512;

/// The most bytes one skill's files hold together (the extension's limit: 16 MiB).
///
/// ```
/// assert_eq!(tollgate::skill::MAX_SKILL_BYTES, 16 * 1024 * 1024);
/// ```
pub const MAX_SKILL_BYTES: u64 = 16_777_216;

/// The most directories below a skill's root.
///
/// ```
/// assert_eq!(tollgate::skill::MAX_SKILL_DIRECTORIES, 512);
/// ```
pub const MAX_SKILL_DIRECTORIES: usize = 512;

/// The deepest a file or directory sits below a skill's root.
///
/// ```
/// assert_eq!(tollgate::skill::MAX_SKILL_DEPTH, 16);
/// ```
pub const MAX_SKILL_DEPTH: usize = 16;

/// The most bytes of a `SKILL.md` frontmatter block.
///
/// ```
/// assert_eq!(tollgate::skill::MAX_FRONTMATTER_BYTES, 65_536);
/// ```
pub const MAX_FRONTMATTER_BYTES: usize = 65_536;

/// The deepest a frontmatter value nests (mappings and sequences).
///
/// ```
/// assert_eq!(tollgate::skill::MAX_FRONTMATTER_DEPTH, 32);
/// ```
pub const MAX_FRONTMATTER_DEPTH: usize = 32;

/// The most bytes of any URI a skill serves.
///
/// ```
/// assert_eq!(tollgate::skill::MAX_SKILL_URI_BYTES, 2_048);
/// ```
pub const MAX_SKILL_URI_BYTES: usize = 2_048;

const MAX_DESCRIPTION_CHARS: usize = 1_024;
const MAX_COMPATIBILITY_CHARS: usize = 500;
const MAX_NAME_CHARS: usize = 64;
const MAX_PATH_SEGMENTS: usize = 16;
const SKILL_MD: &str = "SKILL.md";

/// One file a skill serves.
pub(crate) struct SkillFile {
    /// Relative to the skill's root, `/`-separated, as named (not encoded).
    pub(crate) path: Arc<str>,
    pub(crate) uri: Arc<str>,
    pub(crate) mime_type: Arc<str>,
    pub(crate) body: Body,
    pub(crate) digest: Arc<str>,
}

impl SkillFile {
    pub(crate) fn size(&self) -> u64 {
        match &self.body {
            Body::Text(t) => t.len() as u64,
            Body::Binary(b) => b.len() as u64,
        }
    }
}

/// A file's bytes: served as `text` when they are UTF-8 of a textual media type, else as `blob`.
pub(crate) enum Body {
    Text(Arc<str>),
    Binary(Arc<[u8]>),
}

/// A `SKILL.md` and the skill it opens: the root's, or a nested skill's.
pub(crate) struct SkillEntry {
    /// The directory of its `SKILL.md`, relative to the registration's root (empty for the root).
    pub(crate) directory: Arc<str>,
    pub(crate) uri: Arc<str>,
    pub(crate) name: Arc<str>,
    pub(crate) description: Arc<str>,
    pub(crate) frontmatter: JsonObject,
}

pub(crate) struct SkillInner {
    /// `skill://<skill-path>`: the root directory's URI (no trailing slash).
    pub(crate) root: Arc<str>,
    /// Every file, in path order.
    pub(crate) files: Vec<SkillFile>,
    /// Every directory below the root (relative paths, in order; empty ones too).
    pub(crate) directories: Vec<Arc<str>>,
    /// The root skill first, then nested ones in path order.
    pub(crate) entries: Vec<SkillEntry>,
}

/// An immutable registration of one skill: its `SKILL.md` and every file beside it, checked when
/// built (names, paths, frontmatter, limits) and served unchanged.
///
/// # Examples
///
/// ```
/// use tollgate::skill::SkillRegistration;
///
/// let skill = SkillRegistration::builder("pdf-processing")
///     .file("SKILL.md", "---\nname: pdf-processing\ndescription: Fill PDF forms.\n---\n# PDF\n")
///     .file("references/FORMS.md", "# Forms\n")
///     .build()?;
/// assert_eq!(skill.uri(), "skill://pdf-processing/SKILL.md");
/// assert_eq!(skill.name(), "pdf-processing");
/// assert_eq!(skill.file_count(), 2);
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct SkillRegistration {
    pub(crate) inner: Arc<SkillInner>,
}

impl fmt::Debug for SkillRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillRegistration")
            .field("root", &self.inner.root)
            .field("files", &self.inner.files.len())
            .finish_non_exhaustive()
    }
}

impl SkillRegistration {
    /// Starts a skill at `skill_path`: `/`-separated segments whose last is the skill's name
    /// (`pdf-processing`, or `acme/billing/refunds` under a prefix of the application's choosing).
    pub fn builder(skill_path: impl Into<String>) -> SkillBuilder {
        SkillBuilder {
            skill_path: skill_path.into(),
            files: Vec::new(),
            directories: Vec::new(),
            error: None,
        }
    }

    /// Reads the skill in `dir` (its name is the directory's name): every file and directory
    /// below it, bounded by the extension's limits. Add a prefix with [`SkillBuilder::under`].
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidSkillDirectory`] when the directory or a file in it cannot be
    /// read, a name is not UTF-8, a symbolic link leads out of the skill or to a directory, or a
    /// special file is found; [`BuildErrorKind::SkillLimit`] past a limit. The error's
    /// [`location`](BuildError::location) is the path concerned, relative to `dir`.
    pub fn from_directory(dir: impl AsRef<Path>) -> Result<SkillBuilder, BuildError> {
        let walked = directory::walk(dir.as_ref()).map_err(|e| {
            let kind = if e.limit {
                BuildErrorKind::SkillLimit
            } else {
                BuildErrorKind::InvalidSkillDirectory
            };
            BuildError::new(kind)
                .with_detail(e.detail)
                .at_location(e.path)
        })?;
        let mut builder = Self::builder(walked.name);
        builder.directories = walked.directories;
        for (path, bytes) in walked.files {
            builder = builder.file(path, bytes);
        }
        Ok(builder)
    }

    /// The URI of the skill's `SKILL.md`.
    pub fn uri(&self) -> &str {
        self.inner.entries.first().map_or("", |e| &e.uri)
    }

    /// The skill's name (its frontmatter `name`, equal to the skill path's last segment).
    pub fn name(&self) -> &str {
        self.inner.entries.first().map_or("", |e| &e.name)
    }

    /// Its frontmatter `description`.
    pub fn description(&self) -> &str {
        self.inner.entries.first().map_or("", |e| &e.description)
    }

    /// The URI of the skill's root directory (`skill://<skill-path>`).
    pub fn root_uri(&self) -> &str {
        &self.inner.root
    }

    /// How many files it serves (`SKILL.md` included).
    pub fn file_count(&self) -> usize {
        self.inner.files.len()
    }

    /// The URIs of the skills it holds: its own `SKILL.md` first, then nested skills'.
    pub fn skill_uris(&self) -> impl Iterator<Item = &str> + '_ {
        self.inner.entries.iter().map(|e| &*e.uri)
    }
}

/// A file added to a [`SkillBuilder`].
struct Pending {
    path: String,
    bytes: Vec<u8>,
    mime_type: Option<String>,
}

/// Builds a [`SkillRegistration`]; every check runs in [`SkillBuilder::build`].
#[must_use = "call build() to finish the registration"]
pub struct SkillBuilder {
    skill_path: String,
    files: Vec<Pending>,
    directories: Vec<String>,
    error: Option<BuildError>,
}

impl fmt::Debug for SkillBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillBuilder")
            .field("skill_path", &self.skill_path)
            .field("files", &self.files.len())
            .finish_non_exhaustive()
    }
}

impl SkillBuilder {
    /// Adds a file at `path` (relative to the skill's root, `/`-separated); its media type comes
    /// from its extension.
    pub fn file(self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.add(path.into(), bytes.into(), None)
    }

    /// Adds a file with the media type given (checked when built).
    pub fn file_with_mime_type(
        self,
        path: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
        mime_type: impl Into<String>,
    ) -> Self {
        self.add(path.into(), bytes.into(), Some(mime_type.into()))
    }

    fn add(mut self, path: String, bytes: Vec<u8>, mime_type: Option<String>) -> Self {
        if self.files.len() >= MAX_SKILL_FILES {
            self.error.get_or_insert_with(|| {
                BuildError::new(BuildErrorKind::SkillLimit)
                    .with_detail("more than 512 files")
                    .at_location(path.clone())
            });
            return self;
        }
        self.files.push(Pending {
            path,
            bytes,
            mime_type,
        });
        self
    }

    /// Puts the skill under `prefix` (`/`-separated segments; the first is the URI's authority):
    /// `acme/billing` makes `refunds` `skill://acme/billing/refunds`.
    pub fn under(mut self, prefix: &str) -> Self {
        self.skill_path = format!("{prefix}/{}", self.skill_path);
        self
    }

    /// Finishes the registration.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidSkill`] for a skill path or file path that breaks the rules
    /// (empty, `.` or `..` segments, a name outside `a-z 0-9 -`, a URI over 2,048 bytes, a file
    /// named twice, no `SKILL.md`, a media type that is malformed); [`BuildErrorKind::SkillFrontmatter`]
    /// for a `SKILL.md` that is not UTF-8, has no frontmatter or one that breaks the Agent Skills
    /// rules ([`location`](BuildError::location) names the field); [`BuildErrorKind::SkillLimit`]
    /// past a limit (512 files, 16 MiB, 512 directories, depth 16, 64 KiB of frontmatter), and
    /// whatever [`SkillRegistration::from_directory`] found.
    pub fn build(self) -> Result<SkillRegistration, BuildError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let root = root_uri(&self.skill_path)?;
        let name = self.skill_path.rsplit('/').next().unwrap_or_default();
        let files = skill_files(&root, self.files)?;
        let directories = skill_directories(&root, &files, self.directories)?;
        let entries = skill_entries(&root, name, &files)?;
        Ok(SkillRegistration {
            inner: Arc::new(SkillInner {
                root: Arc::from(root),
                files,
                directories,
                entries,
            }),
        })
    }
}

/// The build error of the skill at `root` about `at`, a path relative to it.
fn refused(kind: BuildErrorKind, detail: &'static str, root: &str, at: &str) -> BuildError {
    BuildError::new(kind)
        .with_detail(detail)
        .resource(root)
        .at_location(at.to_owned())
}

/// The skill's files in path order, each checked (path, URI length, media type) with its digest
/// and body, under the skill's byte limit and named once.
fn skill_files(root: &str, pending: Vec<Pending>) -> Result<Vec<SkillFile>, BuildError> {
    let fail = |kind, detail, at: &str| Err(refused(kind, detail, root, at));
    let mut total: u64 = 0;
    let mut files = Vec::with_capacity(pending.len());
    for pending in pending {
        let Some(encoded) = encode_path(&pending.path) else {
            return fail(
                BuildErrorKind::InvalidSkill,
                "invalid file path",
                &pending.path,
            );
        };
        total += pending.bytes.len() as u64;
        if total > MAX_SKILL_BYTES {
            return fail(
                BuildErrorKind::SkillLimit,
                "the skill's files are over 16 MiB together",
                &pending.path,
            );
        }
        let uri = format!("{root}/{encoded}");
        if uri.len() > MAX_SKILL_URI_BYTES {
            return fail(
                BuildErrorKind::InvalidSkill,
                "a file URI over 2,048 bytes",
                &pending.path,
            );
        }
        let mime_type = match pending.mime_type {
            Some(m) if crate::wire::syntax::is_media_type(&m) => m,
            Some(_) => {
                return fail(
                    BuildErrorKind::InvalidSkill,
                    "malformed media type",
                    &pending.path,
                );
            }
            None => media_type(&pending.path).to_owned(),
        };
        let digest = digest(&pending.bytes);
        let body = if is_textual(&mime_type) {
            match String::from_utf8(pending.bytes) {
                Ok(text) => Body::Text(Arc::from(text)),
                Err(e) => Body::Binary(Arc::from(e.into_bytes())),
            }
        } else {
            Body::Binary(Arc::from(pending.bytes))
        };
        files.push(SkillFile {
            path: Arc::from(pending.path),
            uri: Arc::from(uri),
            mime_type: Arc::from(mime_type),
            body,
            digest: Arc::from(digest),
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    if let Some(twice) = files.windows(2).find(|w| w[0].path == w[1].path) {
        return fail(
            BuildErrorKind::InvalidSkill,
            "a file is named twice",
            &twice[0].path,
        );
    }
    Ok(files)
}

/// Every directory below the skill's root (those of `files` and the `walked` ones, empty ones
/// too), each a resource of its own (`resources/directory/read`): within the directory count,
/// URI length and depth limits.
fn skill_directories(
    root: &str,
    files: &[SkillFile],
    walked: Vec<String>,
) -> Result<Vec<Arc<str>>, BuildError> {
    let fail = |kind, detail, at: &str| Err(refused(kind, detail, root, at));
    let directories = directories(files, walked);
    if directories.len() > MAX_SKILL_DIRECTORIES {
        return fail(BuildErrorKind::SkillLimit, "more than 512 directories", "");
    }
    for directory in &directories {
        match encode_path(directory) {
            Some(encoded) if root.len() + 1 + encoded.len() <= MAX_SKILL_URI_BYTES => {}
            Some(_) => {
                return fail(
                    BuildErrorKind::InvalidSkill,
                    "a directory URI over 2,048 bytes",
                    directory,
                );
            }
            None => {
                return fail(
                    BuildErrorKind::InvalidSkill,
                    "invalid directory path",
                    directory,
                );
            }
        }
    }
    if let Some(deep) = directories
        .iter()
        .find(|d| d.split('/').count() > MAX_SKILL_DEPTH)
    {
        return fail(
            BuildErrorKind::SkillLimit,
            "directories nested deeper than 16 levels",
            deep,
        );
    }
    Ok(directories)
}

/// The skills `files` hold, one per `SKILL.md` (there must be one at the root, `name` its
/// skill's): each named by its directory and its frontmatter read; the root's first, then the
/// nested ones in path order.
fn skill_entries(
    root: &str,
    name: &str,
    files: &[SkillFile],
) -> Result<Vec<SkillEntry>, BuildError> {
    let fail = |kind, detail, at: &str| Err(refused(kind, detail, root, at));
    if !files.iter().any(|f| &*f.path == SKILL_MD) {
        return fail(
            BuildErrorKind::InvalidSkill,
            "a skill needs a SKILL.md at its root",
            SKILL_MD,
        );
    }
    let mut entries = Vec::new();
    for file in files
        .iter()
        .filter(|f| &*f.path == SKILL_MD || f.path.ends_with("/SKILL.md"))
    {
        let directory = file
            .path
            .strip_suffix(SKILL_MD)
            .unwrap_or_default()
            .trim_end_matches('/');
        let own = directory
            .rsplit('/')
            .next()
            .filter(|d| !d.is_empty())
            .unwrap_or(name);
        if !is_skill_name(own) {
            return fail(
                BuildErrorKind::InvalidSkill,
                "a skill name must be 1 to 64 of a-z 0-9 and single hyphens inside",
                &file.path,
            );
        }
        let Body::Text(text) = &file.body else {
            return fail(
                BuildErrorKind::SkillFrontmatter,
                "SKILL.md is not UTF-8",
                &file.path,
            );
        };
        let frontmatter = frontmatter::read(text, own).map_err(|r| {
            let e = BuildError::new(BuildErrorKind::SkillFrontmatter)
                .with_detail(r.detail)
                .resource(&file.uri);
            match r.location {
                Some(at) => e.at_location(at),
                None => e,
            }
        })?;
        let text_of = |key| match frontmatter.get(key) {
            Some(tollgate_json::JsonValue::String(s)) => Arc::from(s.as_str()),
            _ => Arc::from(""),
        };
        entries.push(SkillEntry {
            directory: Arc::from(directory),
            uri: file.uri.clone(),
            name: text_of("name"),
            description: text_of("description"),
            frontmatter,
        });
    }
    // The root's SKILL.md sorts among the files; it leads the entries.
    entries.sort_by(|a, b| {
        (!a.directory.is_empty(), &a.directory).cmp(&(!b.directory.is_empty(), &b.directory))
    });
    Ok(entries)
}

/// `skill://<skill-path>` after checking the path: 1 to 16 segments of URI path characters (the
/// first a registered name, as an authority), the last a skill name.
fn root_uri(skill_path: &str) -> Result<String, BuildError> {
    let fail = |detail| {
        Err(BuildError::new(BuildErrorKind::InvalidSkill)
            .with_detail(detail)
            .at_location(skill_path.chars().take(256).collect()))
    };
    let segments: Vec<&str> = skill_path.split('/').collect();
    if segments.len() > MAX_PATH_SEGMENTS {
        return fail("a skill path has at most 16 segments");
    }
    if segments
        .iter()
        .any(|s| s.is_empty() || *s == "." || *s == ".." || !s.bytes().all(is_segment_byte))
    {
        return fail(
            "a skill path's segments must be nonempty URI path characters (no percent-encoding)",
        );
    }
    if !segments.last().is_some_and(|n| is_skill_name(n)) {
        return fail("a skill name must be 1 to 64 of a-z 0-9 and single hyphens inside");
    }
    let root = format!("skill://{skill_path}");
    if root.len() + 1 + SKILL_MD.len() > MAX_SKILL_URI_BYTES {
        return fail("a skill URI over 2,048 bytes");
    }
    Ok(root)
}

/// Unreserved and sub-delimiter characters: a registered name and a path segment alike.
fn is_segment_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&b)
}

/// The Agent Skills name rule: 1 to 64 of `a-z 0-9 -`, no hyphen first, last or doubled.
pub(crate) fn is_skill_name(name: &str) -> bool {
    (1..=MAX_NAME_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// A file path's URI form: nonempty segments other than `.` and `..`, each percent-encoded
/// outside the URI path characters; `None` when the path is not a plain relative one.
pub(crate) fn encode_path(path: &str) -> Option<String> {
    if path.is_empty() || path.len() > MAX_SKILL_URI_BYTES {
        return None;
    }
    let mut out = String::with_capacity(path.len());
    for (i, segment) in path.split('/').enumerate() {
        if segment.is_empty() || segment == "." || segment == ".." || segment.contains('\0') {
            return None;
        }
        if i > 0 {
            out.push('/');
        }
        for b in segment.bytes() {
            if is_segment_byte(b) || b == b':' || b == b'@' {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    Some(out)
}

/// Every directory the files sit in, and those named besides (empty directories on disk).
fn directories(files: &[SkillFile], named: Vec<String>) -> Vec<Arc<str>> {
    let mut all: Vec<String> = named;
    for file in files {
        let mut at = 0;
        while let Some(found) = file.path[at..].find('/') {
            all.push(file.path[..at + found].to_owned());
            at += found + 1;
        }
    }
    all.sort();
    all.dedup();
    all.into_iter().map(Arc::from).collect()
}

/// `sha256:` and 64 lowercase hexadecimal digits of the raw bytes.
fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    crate::wire::syntax::push_hex(&mut out, &hash);
    out
}

/// The media type a file's extension names (`text/markdown` for `.md`, `text/plain` for none);
/// an unknown extension is `application/octet-stream`, served as a blob.
fn media_type(path: &str) -> &'static str {
    let file = path.rsplit('/').next().unwrap_or(path);
    let extension = match file.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    };
    match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" | "text" | "" => "text/plain",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "js" | "mjs" => "text/javascript",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "rs" => "text/x-rust",
        "ts" => "text/x-typescript",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

/// Whether a media type is text a client reads as `text` (when its bytes are UTF-8).
fn is_textual(mime_type: &str) -> bool {
    let essence = mime_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence.starts_with("text/")
        || matches!(
            essence.as_str(),
            "application/json"
                | "application/yaml"
                | "application/toml"
                | "application/xml"
                | "image/svg+xml"
        )
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
}

#[cfg(test)]
mod tests;
