//! A skill built from arbitrary bytes: the first line is a file path, the rest is a `SKILL.md`
//! (frontmatter read as YAML 1.2) and, after a 0xFF byte, that file's bytes. Never a panic or a
//! hang; the same outcome twice; an accepted skill's frontmatter names the skill.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tollgate::skill::SkillRegistration;

fn build(path: &str, skill_md: &[u8], file: &[u8]) -> Result<(String, usize), String> {
    SkillRegistration::builder("fuzz")
        .file("SKILL.md", skill_md)
        .file(path, file)
        .build()
        .map(|s| (s.uri().to_owned(), s.file_count()))
        .map_err(|e| e.to_string())
}

fuzz_target!(|data: &[u8]| {
    let (head, rest) = match data.iter().position(|&b| b == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (&b"references/a.md"[..], data),
    };
    let Ok(path) = std::str::from_utf8(head) else {
        return;
    };
    let (skill_md, file) = match rest.iter().position(|&b| b == 0xFF) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &b""[..]),
    };
    let first = build(path, skill_md, file);
    assert_eq!(first, build(path, skill_md, file));
    if let Ok((uri, count)) = first {
        assert_eq!(uri, "skill://fuzz/SKILL.md");
        assert!(count <= 2);
    }
});
