//! `#[tool]` misuse is a compile error pointing at the user's code.

#[test]
fn tool_macro_misuse() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
