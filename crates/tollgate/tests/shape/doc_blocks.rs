//! Every Rust block in `docs/` and the README is compiled: its file is included as doc tests by
//! one of the crates (`#[doc = include_str!(...)]`), and a block that cannot be (it needs a
//! database, another crate, or is a fragment of a larger example) is marked `ignore` with its
//! reason on the line above (`<!-- ignore: why -->`).

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .to_path_buf()
}

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// The Markdown files the crates include as doc tests, relative to the repository root.
fn doc_tested() -> Vec<String> {
    let mut sources = Vec::new();
    files(&root().join("crates"), "rs", &mut sources);
    let mut tested = Vec::new();
    for source in sources {
        let text = fs::read_to_string(&source).unwrap();
        for (i, _) in text.match_indices("include_str!(\"") {
            let rest = &text[i + "include_str!(\"".len()..];
            let Some(end) = rest.find('"') else { continue };
            let target = source.parent().unwrap().join(&rest[..end]);
            if let Ok(target) = target.canonicalize()
                && let Ok(relative) = target.strip_prefix(root().canonicalize().unwrap())
            {
                tested.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    tested
}

/// The Rust blocks of `markdown` that break the rule, by line: a block in a file no crate
/// compiles that is not marked `ignore`, or an `ignore` block without its reason.
fn unchecked(markdown: &str, compiled: bool) -> Vec<usize> {
    let mut bad = Vec::new();
    let mut in_block = false;
    let mut previous = "";
    for (number, line) in markdown.lines().enumerate() {
        if line.starts_with("```") {
            if !in_block && line.trim_start_matches('`').starts_with("rust") {
                let ignored = line.contains("ignore");
                let reason = previous
                    .strip_prefix("<!-- ignore:")
                    .and_then(|r| r.strip_suffix("-->"))
                    .is_some_and(|r| !r.trim().is_empty());
                if (ignored && !reason) || (!ignored && !compiled) {
                    bad.push(number + 1);
                }
            }
            in_block = !in_block;
        }
        if !line.trim().is_empty() {
            previous = line;
        }
    }
    bad
}

#[test]
fn every_rust_block_in_the_docs_is_compiled_or_says_why_not() {
    let tested = doc_tested();
    let mut markdown = vec![root().join("README.md")];
    files(&root().join("docs"), "md", &mut markdown);
    let mut failures = Vec::new();
    for file in markdown {
        let relative = file
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = fs::read_to_string(&file).unwrap();
        let compiled = tested.contains(&relative);
        for line in unchecked(&text, compiled) {
            failures.push(format!("{relative}:{line}"));
        }
    }
    assert!(
        failures.is_empty(),
        "Rust blocks neither compiled (include the file as doc tests) nor marked \
         `ignore` after a `<!-- ignore: why -->` line: {failures:?}"
    );
}

#[test]
fn a_planted_block_is_caught_and_a_marked_one_is_not() {
    let block = "text\n\n```rust\nlet x = 1;\n```\n";
    assert_eq!(unchecked(block, false), [3]);
    assert!(unchecked(block, true).is_empty());
    let no_reason = "```rust,ignore\nlet x = y;\n```\n";
    assert_eq!(unchecked(no_reason, true), [1]);
    let marked = "<!-- ignore: needs a database -->\n```rust,ignore\nlet x = y;\n```\n";
    assert!(unchecked(marked, false).is_empty());
    let text_block = "```text\nnot rust\n```\n";
    assert!(unchecked(text_block, false).is_empty());
}
