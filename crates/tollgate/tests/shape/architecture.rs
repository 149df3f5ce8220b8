//! The runtime's shape, checked from its sources (see `docs/architecture.md`): every module
//! imports only from its own room or the rooms listed below it (inside a room, the event stream
//! and its session know each other: a recursive data type); no module names the crate root's
//! re-exports; no source file is over 800 lines, and no function of the runtime over 120.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The rooms, top to bottom: a module's room is the first whose prefix names it.
const ROOMS: &[(&str, &[&str])] = &[
    (
        "transport",
        &[
            "lib",
            "server",
            "drain",
            "idle",
            "shed",
            "forwarded",
            "service",
            "stdio",
            "cors",
            "rebinding",
            "body",
            "negotiate",
            "metadata",
        ],
    ),
    ("revision", &["revision"]),
    ("pipeline", &["pipeline"]),
    ("methods", &["methods"]),
    ("registry", &["registry"]),
    ("sessions", &["session", "client_request"]),
    ("single use", &["single_use"]),
    ("tasks", &["tasks"]),
    ("auth", &["auth"]),
    ("model", &["model"]),
    ("streams", &["stream"]),
    ("facts", &["facts"]),
    ("wire", &["wire", "version"]),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `a/b/mod.rs` → `a::b`, `a/c.rs` → `a::c`, `lib.rs` → `lib`.
fn module_of(path: &Path) -> String {
    let rel = path.strip_prefix(src()).unwrap().with_extension("");
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .filter(|p| p != "mod")
        .collect();
    parts.join("::")
}

fn room_of(module: &str) -> usize {
    let first = module.split("::").next().unwrap_or(module);
    ROOMS
        .iter()
        .position(|(_, prefixes)| prefixes.contains(&first))
        .unwrap_or_else(|| panic!("module {module} is in no room: add it to ROOMS"))
}

/// The code of a file without its unit tests.
fn code(text: &str) -> &str {
    let end = ["#[cfg(test)]\nmod tests", "#[cfg(all(test"]
        .iter()
        .filter_map(|m| text.find(m))
        .min()
        .unwrap_or(text.len());
    &text[..end]
}

/// The top-level modules a file's code names through `crate::`.
fn imports(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    // Comments (doc links included) are not imports.
    let code: String = code(text)
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_' || c.is_ascii_digit())
            .collect();
        if !name.is_empty() {
            found.insert(name);
        } else if rest.starts_with('{') {
            let group = &rest[1..rest.find('}').unwrap_or(rest.len())];
            for item in group.split(',') {
                let head: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !head.is_empty() {
                    found.insert(head);
                }
            }
        }
    }
    found
}

#[test]
fn every_import_points_down() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    let mut up = Vec::new();
    for file in &files {
        let module = module_of(file);
        let own = room_of(&module);
        let text = fs::read_to_string(file).unwrap();
        for target in imports(&text) {
            // A name the crate root re-exports (`crate::Endpoint`) is not a module: those are
            // caught by the compiler's paths below, not here.
            let Some(room) = ROOMS.iter().position(|(_, p)| p.contains(&target.as_str())) else {
                continue;
            };
            if room < own {
                up.push(format!(
                    "{module} ({}) imports {target} ({})",
                    ROOMS[own].0, ROOMS[room].0
                ));
            }
        }
    }
    assert!(up.is_empty(), "imports running up:\n{}", up.join("\n"));
}

#[test]
fn no_module_reaches_the_crate_root_re_exports() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    for file in files.iter().filter(|f| !f.ends_with("lib.rs")) {
        let text = fs::read_to_string(file).unwrap();
        for line in code(&text).lines() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            if let Some(at) = line.find("crate::") {
                let next = line[at + "crate::".len()..].chars().next();
                assert!(
                    !next.is_some_and(|c| c.is_ascii_uppercase()),
                    "{}: `{line}` names the crate root's re-export; name the module",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn files_and_functions_are_small() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in [
        "tollgate",
        "tollgate-json",
        "tollgate-schema",
        "tollgate-macros",
        "tollgate-cli",
    ] {
        sources(&root.join(krate).join("src"), &mut files);
    }
    let mut long = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() > 800 {
            long.push(format!("{}: {} lines", file.display(), lines.len()));
        }
        if !file.starts_with(src()) {
            continue;
        }
        // A function runs from its `fn` line to the first closing brace at its indentation.
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            let is_fn = [
                "fn ",
                "pub fn ",
                "pub(crate) fn ",
                "async fn ",
                "pub async fn ",
            ]
            .iter()
            .chain(["pub(crate) async fn ", "const fn ", "pub const fn "].iter())
            .chain(["pub(crate) const fn "].iter())
            .any(|p| trimmed.starts_with(p));
            if !is_fn || trimmed.ends_with(';') {
                continue;
            }
            let close = " ".repeat(indent) + "}";
            if let Some(end) = lines[i + 1..].iter().position(|l| *l == close)
                && end + 1 > 120
            {
                long.push(format!(
                    "{}:{}: a function of {} lines",
                    file.display(),
                    i + 1,
                    end + 1
                ));
            }
        }
    }
    assert!(long.is_empty(), "too long:\n{}", long.join("\n"));
}
