//! The URI-template parser and matcher: an arbitrary template and URI (split at the first NUL)
//! never panic, matching stays within its budget, and a match yields non-empty variables that
//! reappear, percent-encoded, in the URI.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|b| *b == 0).unwrap_or(data.len());
    let (Ok(template), Ok(uri)) = (
        std::str::from_utf8(&data[..split]),
        std::str::from_utf8(data.get(split + 1..).unwrap_or(&[])),
    ) else {
        return;
    };
    if let Some(Some(variables)) = tollgate::__private::uri_template_match(template, uri) {
        for (name, value) in variables {
            assert!(!value.is_empty(), "variable {name} matched nothing");
            assert!(template.contains(&format!("{{{name}}}")), "variable {name} is not in the template");
        }
    }
});
