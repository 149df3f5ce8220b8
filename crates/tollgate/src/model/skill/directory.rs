//! Reading one skill from a directory on disk, bounded: at most
//! [`MAX_SKILL_FILES`](super::MAX_SKILL_FILES) files and
//! [`MAX_SKILL_DIRECTORIES`](super::MAX_SKILL_DIRECTORIES) directories, at most
//! [`MAX_SKILL_BYTES`](super::MAX_SKILL_BYTES) in all (checked before each read, so an oversized
//! file is never read whole), nested at most [`MAX_SKILL_DEPTH`](super::MAX_SKILL_DEPTH) deep.
//!
//! Owns the walk. Names starting with `.` (`.git`, `.env`, editor files) are skipped, and so is a
//! symbolic link whose resolved target has such a name anywhere below the skill's directory
//! (`notes.md -> .env`). A symbolic link is followed only to a regular file inside the skill's
//! own directory; a link that leaves it, a link to a directory, and anything that is neither a
//! file nor a directory refuse the skill. Names must be UTF-8. A hard link is an ordinary file: what it shares is the
//! application's to decide. Knows nothing of URIs, frontmatter or
//! the wire: the builder checks what the walk found.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{MAX_SKILL_BYTES, MAX_SKILL_DEPTH, MAX_SKILL_DIRECTORIES, MAX_SKILL_FILES};

/// Why a directory could not be read as a skill: a fixed text and the relative path concerned.
#[derive(Debug)]
pub(crate) struct WalkError {
    pub(crate) detail: &'static str,
    pub(crate) path: String,
    pub(crate) limit: bool,
}

fn refuse(detail: &'static str, path: &str) -> WalkError {
    WalkError {
        detail,
        path: path.to_owned(),
        limit: false,
    }
}

fn past(detail: &'static str, path: &str) -> WalkError {
    WalkError {
        detail,
        path: path.to_owned(),
        limit: true,
    }
}

/// What the walk found: the directory's own name, every file (relative `/`-separated path and
/// bytes, in name order) and every directory below the root (relative paths, empty ones too).
pub(crate) struct Walked {
    pub(crate) name: String,
    pub(crate) files: Vec<(String, Vec<u8>)>,
    pub(crate) directories: Vec<String>,
}

pub(crate) fn walk(dir: &Path) -> Result<Walked, WalkError> {
    let root =
        fs::canonicalize(dir).map_err(|_| refuse("the skill directory cannot be read", ""))?;
    if !root.is_dir() {
        return Err(refuse("the skill path is not a directory", ""));
    }
    // The name is the directory as the application named it (a symbolic link's own name, not
    // its target's), else the resolved directory's.
    let named = match dir.components().next_back() {
        Some(std::path::Component::Normal(name)) => Some(name),
        _ => root.file_name(),
    };
    let name = named
        .and_then(|n| n.to_str())
        .ok_or_else(|| refuse("the skill directory's name is not UTF-8", ""))?
        .to_owned();
    let mut walked = Walked {
        name,
        files: Vec::new(),
        directories: Vec::new(),
    };
    let mut total: u64 = 0;
    // (absolute directory, relative path, depth)
    let mut pending: Vec<(PathBuf, String, usize)> = vec![(root.clone(), String::new(), 0)];
    while let Some((absolute, relative, depth)) = pending.pop() {
        let mut entries = Vec::new();
        let listing = fs::read_dir(&absolute)
            .map_err(|_| refuse("a directory of the skill cannot be read", &relative))?;
        for entry in listing {
            let entry =
                entry.map_err(|_| refuse("a directory of the skill cannot be read", &relative))?;
            let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else {
                return Err(refuse("a file name in the skill is not UTF-8", &relative));
            };
            // Hidden files and directories (`.git`, `.env`, editor files) are never served.
            if file_name.starts_with('.') {
                continue;
            }
            entries.push((file_name, entry.path()));
            if entries.len() > MAX_SKILL_FILES + MAX_SKILL_DIRECTORIES {
                return Err(past("more than 512 files or directories", &relative));
            }
        }
        entries.sort();
        for (file_name, path) in entries.into_iter().rev() {
            let child = if relative.is_empty() {
                file_name
            } else {
                format!("{relative}/{file_name}")
            };
            let metadata = fs::symlink_metadata(&path)
                .map_err(|_| refuse("a file of the skill cannot be read", &child))?;
            let kind = metadata.file_type();
            if kind.is_dir() {
                if depth + 1 > MAX_SKILL_DEPTH {
                    return Err(past("directories nested deeper than 16 levels", &child));
                }
                walked.directories.push(child.clone());
                if walked.directories.len() > MAX_SKILL_DIRECTORIES {
                    return Err(past("more than 512 directories", &child));
                }
                pending.push((path, child, depth + 1));
                continue;
            }
            let target = if kind.is_symlink() {
                let target = fs::canonicalize(&path)
                    .map_err(|_| refuse("a symbolic link in the skill leads nowhere", &child))?;
                let Ok(inside) = target.strip_prefix(&root) else {
                    return Err(refuse("a symbolic link leads out of the skill", &child));
                };
                // A link is read under the rule for names: one leading to a hidden file, or
                // through a hidden directory (`notes.md -> .env`, `x -> .git/config`), is
                // skipped and never served, as the hidden file itself is.
                if inside
                    .components()
                    .any(|c| c.as_os_str().as_encoded_bytes().starts_with(b"."))
                {
                    continue;
                }
                if !target.is_file() {
                    return Err(refuse(
                        "a symbolic link in the skill leads to a directory or special file",
                        &child,
                    ));
                }
                target
            } else if kind.is_file() {
                path
            } else {
                return Err(refuse(
                    "the skill holds a special file (not a file or directory)",
                    &child,
                ));
            };
            if walked.files.len() == MAX_SKILL_FILES {
                return Err(past("more than 512 files", &child));
            }
            let bytes = read_bounded(&target, MAX_SKILL_BYTES - total).map_err(|e| {
                if e {
                    past("the skill's files are over 16 MiB together", &child)
                } else {
                    refuse("a file of the skill cannot be read", &child)
                }
            })?;
            total += bytes.len() as u64;
            walked.files.push((child, bytes));
        }
    }
    walked.files.sort_by(|a, b| a.0.cmp(&b.0));
    walked.directories.sort();
    Ok(walked)
}

/// The file's bytes if it holds at most `budget`; `Err(true)` past it (nothing more than
/// `budget + 1` bytes is read), `Err(false)` when it cannot be read.
fn read_bounded(path: &Path, budget: u64) -> Result<Vec<u8>, bool> {
    let file = fs::File::open(path).map_err(|_| false)?;
    let announced = file.metadata().map_err(|_| false)?.len();
    if announced > budget {
        return Err(true);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(announced).unwrap_or(0));
    file.take(budget + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| false)?;
    if bytes.len() as u64 > budget {
        return Err(true);
    }
    Ok(bytes)
}
