//! The official JSON Schema Test Suite (draft 2020-12) against Profile 1.
//!
//! `scripts/test` extracts the suite from the `jsonschema` sdist on PyPI (which vendors it) and
//! exports `TOLLGATE_JSON_SCHEMA_TEST_SUITE`, the path of its `tests/draft2020-12` folder. Nothing
//! of the suite is copied into this repository.
//!
//! The rules:
//! - every schema that compiles must give the suite's answer on every one of its tests;
//! - a schema that does not compile must fail for a reason that puts it outside Profile 1 (an
//!   unknown or excluded keyword, or a remote reference), or be listed in `REFUSED_BY_DESIGN`
//!   with the reason Profile 1 refuses it. A listed group that compiles fails the run, so the
//!   list stays true.
//!
//! `optional/format` is skipped: it asserts formats, which Profile 1 keeps as annotations.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the report"
)]

use std::path::Path;

use tollgate_json::{JsonLimits, JsonValue, from_slice};
use tollgate_schema::{CompileErrorKind, CompiledSchema};

/// Groups (file / description) that stay within Profile 1's keywords but that Profile 1 refuses
/// on purpose, with the reason.
const REFUSED_BY_DESIGN: &[(&str, &str, &str)] = &[(
    "vocabulary.json",
    "ignore unrecognized optional vocabulary",
    "`$schema` names a custom meta-schema; Profile 1 accepts only the 2020-12 dialect and never \
     fetches a meta-schema",
)];

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "format") {
                continue;
            }
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

#[test]
fn json_schema_test_suite_draft2020_12() {
    let Ok(root) = std::env::var("TOLLGATE_JSON_SCHEMA_TEST_SUITE") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "TOLLGATE_JSON_SCHEMA_TEST_SUITE must be set under CI (scripts/test sets it)"
        );
        eprintln!(
            "json_schema_test_suite: TOLLGATE_JSON_SCHEMA_TEST_SUITE unset; run scripts/test"
        );
        return;
    };
    let root = Path::new(&root);
    let mut paths = Vec::new();
    files(root, &mut paths);
    let limits = JsonLimits::default();
    let (mut compiled, mut outside, mut by_design, mut passed) = (0, 0, 0, 0);
    let mut outside_by_keyword = std::collections::BTreeMap::<String, usize>::new();
    let mut wrong_answers = Vec::new();
    let mut unexplained_refusals = Vec::new();
    let mut listed_but_compiled = Vec::new();
    for path in &paths {
        let file = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let groups = from_slice(&std::fs::read(path).unwrap(), &limits).unwrap();
        for group in groups.as_array().unwrap().iter() {
            let description = group
                .get("description")
                .and_then(JsonValue::as_str)
                .unwrap();
            let schema = group.get("schema").unwrap();
            let listed = REFUSED_BY_DESIGN
                .iter()
                .any(|(f, d, _)| *f == file && *d == description);
            match CompiledSchema::compile(schema) {
                Ok(s) => {
                    compiled += 1;
                    if listed {
                        listed_but_compiled.push(format!("{file}: {description}"));
                    }
                    for test in group
                        .get("tests")
                        .and_then(JsonValue::as_array)
                        .unwrap()
                        .iter()
                    {
                        let expected = test.get("valid").and_then(JsonValue::as_bool).unwrap();
                        let result = s.validate(test.get("data").unwrap());
                        if result.is_ok() == expected {
                            passed += 1;
                        } else {
                            let name = test.get("description").and_then(JsonValue::as_str).unwrap();
                            wrong_answers
                                .push(format!("{file}: {description}: {name}: {result:?}"));
                        }
                    }
                }
                Err(e) => match e.kind() {
                    CompileErrorKind::UnknownKeyword
                    | CompileErrorKind::ExcludedKeyword
                    | CompileErrorKind::RemoteReference => {
                        outside += 1;
                        *outside_by_keyword
                            .entry(e.keyword().unwrap_or("?").to_owned())
                            .or_default() += 1;
                    }
                    _ if listed => by_design += 1,
                    _ => unexplained_refusals.push(format!("{file}: {description}: {e}")),
                },
            }
        }
    }
    eprintln!(
        "json_schema_test_suite: {compiled} groups compiled ({passed} tests passed), \
         {outside} outside Profile 1, {by_design} refused by design"
    );
    eprintln!("json_schema_test_suite: outside Profile 1 by keyword: {outside_by_keyword:?}");
    assert!(compiled >= 120, "the suite looks incomplete");
    assert!(
        wrong_answers.is_empty(),
        "wrong answers:\n{}",
        wrong_answers.join("\n")
    );
    assert!(
        unexplained_refusals.is_empty(),
        "refused without a listed reason:\n{}",
        unexplained_refusals.join("\n")
    );
    assert!(
        listed_but_compiled.is_empty(),
        "listed as refused but compiled:\n{}",
        listed_but_compiled.join("\n")
    );
}
