//! The workspace's shape, checked from its sources (see `docs/architecture.md`): every runtime
//! module imports only from its own room or the rooms listed below it; the runtime's import
//! circles are the few listed in [`CIRCLES`] and no other; no module names the crate root's
//! re-exports; no source file of any crate is over 800 lines, and no function over 120.
//!
//! Each check is a function over source text, and the tests at the end plant a violation in a
//! string and see it reported (and, for the bounds, see the bound itself pass): a check that
//! cannot fail would let what it guards drift unnoticed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The longest a source file may be, in lines.
const MAX_FILE_LINES: usize = 800;

/// The longest a function may be, in lines from its `fn` line to its closing brace's.
const MAX_FN_LINES: usize = 120;

/// The workspace's crates, each measured over its `src/`.
const CRATES: &[&str] = &[
    "tollgate",
    "tollgate-json",
    "tollgate-schema",
    "tollgate-macros",
    "tollgate-cli",
];

/// The rooms, top to bottom: a module's room is the first whose prefix names it.
const ROOMS: &[(&str, &[&str])] = &[
    ("transport", &["lib", "guides", "transport"]),
    ("pipeline", &["pipeline"]),
    ("methods", &["methods"]),
    ("state", &["state"]),
    ("registry", &["registry"]),
    ("sessions", &["session", "client_request"]),
    ("single use", &["single_use"]),
    ("tasks", &["tasks"]),
    ("auth", &["auth"]),
    ("model", &["model"]),
    ("streams", &["stream"]),
    ("policy", &["policy"]),
    ("facts", &["facts"]),
    ("wire", &["wire", "version"]),
];

/// The runtime's import circles kept on purpose, each inside one room (`docs/architecture.md`).
/// A circle not listed fails the check, and so does a listed one that no longer exists (the
/// list then shrinks).
const CIRCLES: &[&[&str]] = &[
    // The transport's body reader is paced by the connection's one timer (`idle/`), and the
    // timer lingers as long as the body reader says.
    &["transport::body", "transport::idle"],
    // A recursive data type: an event stream knows the session that numbers it, and the
    // session knows its streams.
    &["stream::event", "stream::session"],
    // The runner hands a task's work its `TaskContext`, which reports back through the runner.
    &["tasks::runner", "tasks::work"],
];

fn crates() -> PathBuf {
    // The manifest's parent, not `..` joined: a path with `..` in it never `starts_with` the
    // same path written without it.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

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

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where the block comment opening at `at` ends (comments nest).
fn block_comment_end(chars: &[char], at: usize) -> usize {
    let (mut depth, mut i) = (0usize, at);
    while i < chars.len() {
        match (chars[i], chars.get(i + 1).copied()) {
            ('/', Some('*')) => (depth, i) = (depth + 1, i + 2),
            ('*', Some('/')) => {
                (depth, i) = (depth - 1, i + 2);
                if depth == 0 {
                    return i;
                }
            }
            _ => i += 1,
        }
    }
    chars.len()
}

/// Where the string whose opening quote is at `at` ends.
fn string_end(chars: &[char], at: usize) -> usize {
    let mut i = at + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    chars.len()
}

/// Where the raw string starting with the `r` at `at` ends, if one starts there.
fn raw_string_end(chars: &[char], at: usize) -> Option<usize> {
    let token_start = |i: usize| i == 0 || !is_ident(chars[i - 1]);
    let starts = token_start(at) || (matches!(chars[at - 1], 'b' | 'c') && token_start(at - 1));
    if chars[at] != 'r' || !starts {
        return None;
    }
    let hashes = chars[at + 1..].iter().take_while(|&&c| c == '#').count();
    let open = at + 1 + hashes;
    if chars.get(open) != Some(&'"') {
        return None;
    }
    let closes = |i: usize| {
        chars[i] == '"' && chars[i + 1..].iter().take_while(|&&c| c == '#').count() >= hashes
    };
    Some(
        (open + 1..chars.len())
            .find(|&i| closes(i))
            .map_or(chars.len(), |i| i + 1 + hashes),
    )
}

/// Where the character literal whose quote is at `at` ends; `None` for a lifetime or a label.
fn char_end(chars: &[char], at: usize) -> Option<usize> {
    if chars.get(at + 1) == Some(&'\\') {
        let close = (at + 3..chars.len()).find(|&i| chars[i] == '\'');
        return Some(close.map_or(chars.len(), |i| i + 1));
    }
    (chars.get(at + 2) == Some(&'\'')).then_some(at + 3)
}

/// The source with every comment, string and character literal blanked to spaces (line breaks
/// kept), so that braces, `fn` and paths inside them count for nothing.
fn blank(text: &str) -> Vec<char> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let end = match (chars[i], chars.get(i + 1).copied()) {
            ('/', Some('/')) => (i..chars.len())
                .find(|&j| chars[j] == '\n')
                .unwrap_or(chars.len()),
            ('/', Some('*')) => block_comment_end(&chars, i),
            ('"', _) => string_end(&chars, i),
            ('\'', _) => char_end(&chars, i).unwrap_or(i),
            ('r', _) => raw_string_end(&chars, i).unwrap_or(i),
            _ => i,
        };
        if end > i {
            out.extend(
                chars[i..end]
                    .iter()
                    .map(|&c| if c == '\n' { c } else { ' ' }),
            );
            i = end;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Where the item whose head starts at `from` opens its body (`{`), or `None` when it ends
/// first (`;`: a declaration without a body). Brackets and parentheses are skipped, so a
/// `[u8; 4]` parameter is not an end.
fn body_start(code: &[char], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in code.iter().enumerate().skip(from) {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            '{' if depth == 0 => return Some(i),
            ';' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The closing brace of the block opening at `open` (the end of the text if it never closes).
fn block_end(code: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, &c) in code.iter().enumerate().skip(open) {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    code.len().saturating_sub(1)
}

/// Where the word `word` next stands alone in `code`, at `from` or after.
fn find_word(code: &[char], from: usize, word: &str) -> Option<usize> {
    let word: Vec<char> = word.chars().collect();
    (from..code.len().saturating_sub(word.len() - 1)).find(|&i| {
        code[i..].starts_with(&word)
            && (i == 0 || !is_ident(code[i - 1]))
            && code.get(i + word.len()).is_none_or(|&c| !is_ident(c))
    })
}

/// The identifier at `at` (after any whitespace) and where it ends; empty if none is there.
fn ident_at(code: &[char], at: usize) -> (String, usize) {
    let start = (at..code.len())
        .find(|&i| !code[i].is_whitespace())
        .unwrap_or(code.len());
    let name: String = code[start..].iter().take_while(|&&c| is_ident(c)).collect();
    let end = start + name.chars().count();
    (name, end)
}

/// A function longer than allowed: the line of its `fn`, its name and its length in lines.
#[derive(Debug, PartialEq)]
struct LongFn {
    line: usize,
    name: String,
    lines: usize,
}

/// Every function in `text` (free, method, trait method with a body, nested; any visibility
/// or qualifiers) whose lines, from the `fn` keyword's to its closing brace's, number more than
/// `max`. A function ends at the brace closing its body, so a `}` in a string, a character or
/// a comment, or a signature spanning lines, does not move its end.
fn long_functions(text: &str, max: usize) -> Vec<LongFn> {
    let code = blank(text);
    let mut line_of = Vec::with_capacity(code.len());
    let mut line = 1;
    for &c in &code {
        line_of.push(line);
        line += usize::from(c == '\n');
    }
    let mut long = Vec::new();
    let mut at = 0;
    while let Some(fn_at) = find_word(&code, at, "fn") {
        at = fn_at + 2;
        let (name, after) = ident_at(&code, at);
        // `fn(u8) -> u8` is a pointer type, `fn $name` and `fn #name` are macro templates.
        if name.is_empty() {
            continue;
        }
        let Some(open) = body_start(&code, after) else {
            continue;
        };
        let lines = line_of[block_end(&code, open)] - line_of[fn_at] + 1;
        if lines > max {
            long.push(LongFn {
                line: line_of[fn_at],
                name,
                lines,
            });
        }
    }
    long
}

/// The code without the items compiled only for tests (`#[cfg(test)]`, `#[cfg(all(test, …))]`):
/// a unit test may reach anywhere.
fn without_tests(mut code: Vec<char>) -> Vec<char> {
    for marker in ["#[cfg(test)]", "#[cfg(all(test"] {
        let marker: Vec<char> = marker.chars().collect();
        let mut from = 0;
        while let Some(at) = (from..code.len()).find(|&i| code[i..].starts_with(&marker)) {
            let end = body_start(&code, at + 1).map_or_else(
                || {
                    (at..code.len())
                        .find(|&i| code[i] == ';')
                        .unwrap_or(code.len())
                },
                |open| block_end(&code, open) + 1,
            );
            for c in &mut code[at..end] {
                if *c != '\n' {
                    *c = ' ';
                }
            }
            from = end;
        }
    }
    code
}

/// Reads the rest of a path at `at` (its head already in `prefix`) and pushes every full path it
/// names, one per branch of a `{…}` group, to `out`. Returns where the path ends.
fn read_path(
    code: &[char],
    at: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut at = at;
    loop {
        let sep = (at..code.len())
            .find(|&i| !code[i].is_whitespace())
            .unwrap_or(code.len());
        if !code[sep..].starts_with(&[':', ':']) {
            out.push(prefix);
            return at;
        }
        let next = (sep + 2..code.len())
            .find(|&i| !code[i].is_whitespace())
            .unwrap_or(code.len());
        if code.get(next) == Some(&'{') {
            let mut i = next + 1;
            while i < code.len() && code[i] != '}' {
                let (name, after) = ident_at(code, i);
                if name.is_empty() {
                    i = after.max(i + 1);
                    continue;
                }
                let mut branch = prefix.clone();
                if name != "self" {
                    branch.push(name);
                }
                i = read_path(code, after, branch, out).max(after);
            }
            return i + 1;
        }
        let (name, after) = ident_at(code, next);
        if name.is_empty() {
            out.push(prefix);
            return next;
        }
        prefix.push(name);
        at = after;
    }
}

/// The runtime modules `text`, the source of `module`, names through `crate::`, `self::` or
/// `super::` paths outside its tests: each path's longest prefix that is one of `modules`
/// (`crate::stream::event::Event` names `stream::event`; `crate::Endpoint` names the root, `[]`).
fn references(
    module: &[String],
    text: &str,
    modules: &BTreeSet<Vec<String>>,
) -> BTreeSet<Vec<String>> {
    let code = without_tests(blank(text));
    let mut paths = Vec::new();
    for head in ["crate", "self", "super"] {
        let mut at = 0;
        while let Some(word) = find_word(&code, at, head) {
            at = word + head.len();
            let start = match head {
                "crate" => Vec::new(),
                "self" => module.to_vec(),
                _ => module[..module.len().saturating_sub(1)].to_vec(),
            };
            let mut found = Vec::new();
            read_path(&code, at, Vec::new(), &mut found);
            // A head with nothing after it (`pub(crate)`, `self.x`) names no module.
            for path in found.into_iter().filter(|p| !p.is_empty()) {
                let mut resolved = start.clone();
                for segment in &path {
                    if segment == "super" {
                        resolved.pop();
                    } else {
                        resolved.push(segment.clone());
                    }
                }
                paths.push(resolved);
            }
        }
    }
    paths
        .into_iter()
        .filter_map(|path| {
            (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|prefix| modules.contains(prefix))
        })
        .filter(|target| target != module)
        .collect()
}

fn name(module: &[String]) -> String {
    if module.is_empty() {
        String::from("lib")
    } else {
        module.join("::")
    }
}

fn room_of(module: &[String]) -> usize {
    let first = module.first().map_or("lib", String::as_str);
    ROOMS
        .iter()
        .position(|(_, prefixes)| prefixes.contains(&first))
        .unwrap_or_else(|| panic!("module {} is in no room: add it to ROOMS", name(module)))
}

/// The imports of `module` (its `targets`) that run up: to a room listed above its own. The
/// crate root is not a room's module (its re-exports are refused by their own check).
fn upward(module: &[String], targets: &BTreeSet<Vec<String>>) -> Vec<String> {
    let own = room_of(module);
    targets
        .iter()
        .filter(|target| !target.is_empty() && room_of(target) < own)
        .map(|target| {
            format!(
                "{} ({}) imports {} ({})",
                name(module),
                ROOMS[own].0,
                name(target),
                ROOMS[room_of(target)].0
            )
        })
        .collect()
}

/// The strongly connected sets of more than one node in `graph` (Tarjan): its circles.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<BTreeSet<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, (usize, usize)>,
        stack: Vec<&'g str>,
        found: BTreeSet<BTreeSet<String>>,
    }
    fn visit<'g>(walk: &mut Walk<'g>, node: &'g str) {
        let graph = walk.graph;
        let order = walk.index.len();
        walk.index.insert(node, (order, order));
        walk.stack.push(node);
        for next in graph.get(node).into_iter().flatten() {
            let low = match walk.index.get(next.as_str()) {
                None => {
                    visit(walk, next);
                    walk.index[next.as_str()].1
                }
                Some(&(order, _)) if walk.stack.contains(&next.as_str()) => order,
                Some(_) => continue,
            };
            let entry = walk.index.get_mut(node).unwrap();
            entry.1 = entry.1.min(low);
        }
        if walk.index[node].0 == walk.index[node].1 {
            let at = walk.stack.iter().rposition(|&n| n == node).unwrap();
            let set: BTreeSet<String> = walk.stack.drain(at..).map(String::from).collect();
            if set.len() > 1 {
                walk.found.insert(set);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        stack: Vec::new(),
        found: BTreeSet::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            visit(&mut walk, node);
        }
    }
    walk.found
}

/// The circles among `references` (each module's targets) on two scales: the top-level
/// modules, and the modules themselves where one does not contain the other (a folder's
/// `mod.rs` declares its children and they use its items: that is not a circle).
fn import_circles(
    references: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
) -> BTreeSet<BTreeSet<String>> {
    let mut tops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, targets) in references {
        for target in targets
            .iter()
            .filter(|t| !t.is_empty() && !module.is_empty())
        {
            if module[0] != target[0] {
                tops.entry(module[0].clone())
                    .or_default()
                    .insert(target[0].clone());
            }
            if !module.starts_with(target) && !target.starts_with(module) {
                modules
                    .entry(name(module))
                    .or_default()
                    .insert(name(target));
            }
        }
    }
    circles(&tops)
        .into_iter()
        .chain(circles(&modules))
        .collect()
}

/// Every runtime module with the modules it references.
fn runtime_references() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    let module_of = |file: &Path| -> Vec<String> {
        let rel = file.strip_prefix(src()).unwrap().with_extension("");
        let mut path: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if path.last().is_some_and(|p| p == "mod") || path == ["lib"] {
            path.pop();
        }
        path
    };
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    files
        .iter()
        .map(|file| {
            let module = module_of(file);
            let text = fs::read_to_string(file).unwrap();
            let targets = references(&module, &text, &modules);
            (module, targets)
        })
        .collect()
}

#[test]
fn every_import_points_down() {
    let up: Vec<String> = runtime_references()
        .iter()
        .flat_map(|(module, targets)| upward(module, targets))
        .collect();
    assert!(up.is_empty(), "imports running up:\n{}", up.join("\n"));
}

#[test]
fn the_only_import_circles_are_the_listed_ones() {
    let found = import_circles(&runtime_references());
    let listed: BTreeSet<BTreeSet<String>> = CIRCLES
        .iter()
        .map(|c| c.iter().map(|m| String::from(*m)).collect())
        .collect();
    let new: Vec<_> = found.difference(&listed).collect();
    assert!(new.is_empty(), "import circles not in CIRCLES: {new:?}");
    let gone: Vec<_> = listed.difference(&found).collect();
    assert!(
        gone.is_empty(),
        "listed circles that are gone (remove them): {gone:?}"
    );
}

#[test]
fn no_module_reaches_the_crate_root_re_exports() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    for file in files.iter().filter(|f| !f.ends_with("lib.rs")) {
        let text = fs::read_to_string(file).unwrap();
        let code: String = without_tests(blank(&text)).into_iter().collect();
        for line in code.lines() {
            if let Some(at) = line.find("crate::") {
                let next = line[at + "crate::".len()..].chars().next();
                assert!(
                    !next.is_some_and(|c| c.is_ascii_uppercase()),
                    "{}: `{}` names the crate root's re-export; name the module",
                    file.display(),
                    line.trim()
                );
            }
        }
    }
}

#[test]
fn files_and_functions_are_small() {
    let mut files = Vec::new();
    for krate in CRATES {
        // A check over no file passes whatever the code: each crate must be found.
        let before = files.len();
        sources(&crates().join(krate).join("src"), &mut files);
        assert!(files.len() > before, "no source file found for {krate}");
    }
    let mut long = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            long.push(format!("{}: {lines} lines", file.display()));
        }
        // Unit-test files are long lists of cases (as the project's before-stop count has it).
        if file
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with("tests.rs"))
        {
            continue;
        }
        for f in long_functions(&text, MAX_FN_LINES) {
            long.push(format!(
                "{}:{}: fn {} of {} lines",
                file.display(),
                f.line,
                f.name,
                f.lines
            ));
        }
    }
    assert!(long.is_empty(), "too long:\n{}", long.join("\n"));
}

/// A function `head` … `}` of exactly `lines` lines, its body holding `}` in a string, a
/// character and a comment.
fn planted(head: &str, lines: usize) -> String {
    let mut text = format!("{head}\n");
    text.push_str("    let _ = \"}\"; let _ = '}'; // }\n");
    for _ in 0..lines - 3 {
        text.push_str("    step();\n");
    }
    text.push_str("}\n");
    text
}

#[test]
fn a_function_one_line_past_the_bound_is_reported_and_one_at_it_is_not() {
    for head in [
        "fn planted() {",
        "pub(super) async fn planted() {",
        "pub(in crate::wire) const unsafe fn planted() {",
        "    pub(crate) fn planted<T>(x: [u8; 4], t: T) -> Result<(), ()>\n    where\n        T: Fn(u8) -> u8,\n    {",
    ] {
        let signature = head.lines().count() - 1;
        let over = planted(head, MAX_FN_LINES + 1 - signature);
        assert_eq!(
            long_functions(&over, MAX_FN_LINES),
            [LongFn {
                line: 1,
                name: String::from("planted"),
                lines: MAX_FN_LINES + 1,
            }],
            "{head}"
        );
        let at = planted(head, MAX_FN_LINES - signature);
        assert_eq!(long_functions(&at, MAX_FN_LINES), [], "{head}");
    }
}

#[test]
fn trait_methods_nested_functions_and_raw_strings_are_measured() {
    let body = planted("    fn provided(&self) {", MAX_FN_LINES + 1);
    let text = format!(
        "trait T {{\n    fn required(&self);\n    const F: fn(u8) -> u8;\n{body}}}\n\
         fn outer() {{\n    let _ = r#\"}}\"#;\n{}}}\n",
        planted("    fn inner() {", MAX_FN_LINES + 1)
    );
    let found: Vec<(String, usize)> = long_functions(&text, MAX_FN_LINES)
        .into_iter()
        .map(|f| (f.name, f.line))
        .collect();
    let inner_line = MAX_FN_LINES + 8;
    assert_eq!(
        found,
        [
            (String::from("provided"), 4),
            (String::from("outer"), inner_line - 2),
            (String::from("inner"), inner_line),
        ]
    );
}

fn modules(names: &[&str]) -> BTreeSet<Vec<String>> {
    names
        .iter()
        .map(|n| {
            n.split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        })
        .collect()
}

fn path(module: &str) -> Vec<String> {
    module.split("::").map(String::from).collect()
}

#[test]
fn an_import_running_up_is_reported_in_every_spelling() {
    let known = modules(&[
        "",
        "transport",
        "wire",
        "wire::fault",
        "facts",
        "facts::context",
    ]);
    for text in [
        "use crate::transport::Server;",
        "use crate::{wire::Id, transport};",
        "use crate::{\n    wire,\n    transport::{self, Server},\n};",
        "fn f() { crate::transport::start(); }",
    ] {
        let targets = references(&path("wire::fault"), text, &known);
        assert_eq!(
            upward(&path("wire::fault"), &targets),
            ["wire::fault (wire) imports transport (transport)"],
            "{text}"
        );
    }
    let deep = references(
        &path("facts::context"),
        "use super::super::transport::Server;",
        &known,
    );
    assert_eq!(
        upward(&path("facts::context"), &deep),
        ["facts::context (facts) imports transport (transport)"]
    );
    for text in [
        "use crate::wire::fault::Fault;",
        "// use crate::transport::Server;",
        "const S: &str = \"crate::transport::Server\";",
        "#[cfg(test)]\nmod tests {\n    use crate::transport::Server;\n}",
        "use crate::Endpoint;",
    ] {
        let targets = references(&path("facts::context"), text, &known);
        assert_eq!(
            upward(&path("facts::context"), &targets),
            Vec::<String>::new(),
            "{text}"
        );
    }
}

#[test]
fn a_new_import_circle_is_found_and_a_parent_and_child_are_not_one() {
    let known = modules(&[
        "", "tasks", "tasks::a", "tasks::b", "tasks::c", "wire", "facts",
    ]);
    let of = |files: &[(&str, &str)]| {
        import_circles(
            &files
                .iter()
                .map(|(m, text)| (path(m), references(&path(m), text, &known)))
                .collect(),
        )
    };
    let set = |names: &[&str]| {
        names
            .iter()
            .map(|n| String::from(*n))
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(
        of(&[
            ("tasks::a", "use super::b::B;"),
            ("tasks::b", "use crate::tasks::c::C;"),
            ("tasks::c", "use crate::tasks::{a::A, b};"),
        ]),
        BTreeSet::from([set(&["tasks::a", "tasks::b", "tasks::c"])])
    );
    assert_eq!(
        of(&[
            ("wire", "use crate::facts::F;"),
            ("facts", "use crate::wire::W;")
        ]),
        BTreeSet::from([set(&["facts", "wire"])])
    );
    assert_eq!(
        of(&[
            ("tasks", "mod a; use self::a::A;"),
            ("tasks::a", "use super::Shared;"),
            ("tasks::b", "use crate::tasks::a::A;"),
        ]),
        BTreeSet::new()
    );
}
