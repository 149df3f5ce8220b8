//! The registration rules: names, paths, digests, media types, nested skills and every limit at
//! the bound and one past it.

use super::*;

const MD: &str = "---\nname: pdf\ndescription: Fill PDF forms.\n---\n# PDF\n";

fn kind(result: Result<SkillRegistration, BuildError>) -> BuildErrorKind {
    result
        .map(|_| ())
        .err()
        .map_or(BuildErrorKind::InvalidConfiguration, |e| e.kind())
}

#[test]
fn a_skill_has_uris_digests_sizes_and_media_types() {
    let skill = SkillRegistration::builder("pdf")
        .file("SKILL.md", MD)
        .file("references/FORMS.md", "# Forms\n")
        .file("assets/logo.png", vec![0x89, b'P', b'N', b'G'])
        .file("assets/empty.txt", "")
        .file("my notes.txt", "x")
        .build()
        .unwrap();
    assert_eq!(skill.uri(), "skill://pdf/SKILL.md");
    assert_eq!(skill.root_uri(), "skill://pdf");
    assert_eq!(skill.description(), "Fill PDF forms.");
    let files = &skill.inner.files;
    let forms = files
        .iter()
        .find(|f| &*f.path == "references/FORMS.md")
        .unwrap();
    assert_eq!(&*forms.uri, "skill://pdf/references/FORMS.md");
    assert_eq!(
        &*forms.digest,
        "sha256:111198a69a324efe68bb9dd7e0ca9cb2e50e1c374da3d383a7d3569824965082"
    );
    assert_eq!(forms.size(), 8);
    assert_eq!(&*forms.mime_type, "text/markdown");
    let empty = files
        .iter()
        .find(|f| &*f.path == "assets/empty.txt")
        .unwrap();
    assert_eq!(
        &*empty.digest,
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    let logo = files
        .iter()
        .find(|f| &*f.path == "assets/logo.png")
        .unwrap();
    assert!(matches!(logo.body, Body::Binary(_)));
    assert_eq!(&*logo.mime_type, "image/png");
    let spaced = files.iter().find(|f| &*f.path == "my notes.txt").unwrap();
    assert_eq!(&*spaced.uri, "skill://pdf/my%20notes.txt");
    let dirs: Vec<&str> = skill.inner.directories.iter().map(|d| &**d).collect();
    assert_eq!(dirs, ["assets", "references"]);
}

#[test]
fn names_follow_the_agent_skills_rule() {
    for good in ["a", "pdf", "pdf-processing", "a1-b2", &"a".repeat(64)] {
        assert!(is_skill_name(good), "{good}");
    }
    for bad in [
        "",
        "-a",
        "a-",
        "a--b",
        "A",
        "a_b",
        "a.b",
        "é",
        &"a".repeat(65),
    ] {
        assert!(!is_skill_name(bad), "{bad}");
    }
    let md = |name: &str| format!("---\nname: {name}\ndescription: d\n---\n");
    assert_eq!(
        kind(
            SkillRegistration::builder("Bad_Name")
                .file("SKILL.md", md("Bad_Name"))
                .build()
        ),
        BuildErrorKind::InvalidSkill
    );
    let under = SkillRegistration::builder("refunds")
        .under("acme/billing")
        .file("SKILL.md", md("refunds"))
        .build()
        .unwrap();
    assert_eq!(under.uri(), "skill://acme/billing/refunds/SKILL.md");
    for prefix in ["", "a//b", "..", "a b", "50%"] {
        let built = SkillRegistration::builder("refunds")
            .under(prefix)
            .file("SKILL.md", md("refunds"))
            .build();
        assert_eq!(kind(built), BuildErrorKind::InvalidSkill, "{prefix}");
    }
}

#[test]
fn paths_stay_inside_the_skill() {
    for path in [
        "../x",
        "a/../../x",
        "/etc/passwd",
        "a//b",
        "./a",
        "a/",
        "",
        "a\0b",
    ] {
        let built = SkillRegistration::builder("pdf")
            .file("SKILL.md", MD)
            .file(path, "x")
            .build();
        assert_eq!(kind(built), BuildErrorKind::InvalidSkill, "{path:?}");
    }
    let twice = SkillRegistration::builder("pdf")
        .file("SKILL.md", MD)
        .file("SKILL.md", MD)
        .build();
    assert_eq!(kind(twice), BuildErrorKind::InvalidSkill);
    let none = SkillRegistration::builder("pdf")
        .file("README.md", "x")
        .build();
    assert_eq!(kind(none), BuildErrorKind::InvalidSkill);
    let binary_md = SkillRegistration::builder("pdf")
        .file("SKILL.md", vec![0xff, 0xfe])
        .build();
    assert_eq!(kind(binary_md), BuildErrorKind::SkillFrontmatter);
}

#[test]
fn frontmatter_refusals_name_the_file_and_field() {
    let err = SkillRegistration::builder("pdf")
        .file("SKILL.md", "---\nname: other\ndescription: d\n---\n")
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::SkillFrontmatter);
    assert_eq!(err.location(), Some("/name"));
    assert_eq!(err.resource_uri(), Some("skill://pdf/SKILL.md"));
    assert!(
        err.to_string().contains("frontmatter `name` must equal"),
        "{err}"
    );
    let none = SkillRegistration::builder("pdf")
        .file("SKILL.md", "# no frontmatter")
        .build();
    assert_eq!(kind(none), BuildErrorKind::SkillFrontmatter);
}

#[test]
fn nested_skills_have_entries_of_their_own() {
    let skill = SkillRegistration::builder("suite")
        .file("SKILL.md", "---\nname: suite\ndescription: All.\n---\n")
        .file(
            "tools/fmt/SKILL.md",
            "---\nname: fmt\ndescription: Format.\n---\n",
        )
        .file("tools/fmt/rules.md", "r")
        .build()
        .unwrap();
    let nested = &skill.inner.entries[1];
    assert_eq!(&*nested.directory, "tools/fmt");
    assert_eq!(&*nested.name, "fmt");
    let uris: Vec<&str> = skill.skill_uris().collect();
    assert_eq!(
        uris,
        ["skill://suite/SKILL.md", "skill://suite/tools/fmt/SKILL.md"]
    );
    let wrong = SkillRegistration::builder("suite")
        .file("SKILL.md", "---\nname: suite\ndescription: All.\n---\n")
        .file(
            "tools/fmt/SKILL.md",
            "---\nname: other\ndescription: d\n---\n",
        )
        .build();
    assert_eq!(kind(wrong), BuildErrorKind::SkillFrontmatter);
}

#[test]
fn file_count_is_bounded_at_512() {
    let with = |n: usize| {
        let mut b = SkillRegistration::builder("pdf").file("SKILL.md", MD);
        for i in 1..n {
            b = b.file(format!("f/{i}.txt"), "x");
        }
        b.build()
    };
    assert_eq!(with(MAX_SKILL_FILES).unwrap().file_count(), 512);
    assert_eq!(kind(with(MAX_SKILL_FILES + 1)), BuildErrorKind::SkillLimit);
}

#[test]
fn total_bytes_are_bounded_at_16_mib() {
    let with = |total: u64| {
        let rest = usize::try_from(total).unwrap() - MD.len();
        SkillRegistration::builder("pdf")
            .file("SKILL.md", MD)
            .file("big.bin", vec![0u8; rest])
            .build()
    };
    assert!(with(MAX_SKILL_BYTES).is_ok());
    assert_eq!(kind(with(MAX_SKILL_BYTES + 1)), BuildErrorKind::SkillLimit);
}

#[test]
fn directories_are_bounded_in_depth_and_count() {
    let deep = |n: usize| {
        let path = format!("{}f.txt", "d/".repeat(n));
        SkillRegistration::builder("pdf")
            .file("SKILL.md", MD)
            .file(path, "x")
            .build()
    };
    assert!(deep(MAX_SKILL_DEPTH).is_ok());
    assert_eq!(kind(deep(MAX_SKILL_DEPTH + 1)), BuildErrorKind::SkillLimit);
    let many = |n: usize| {
        let mut b = SkillRegistration::builder("pdf").file("SKILL.md", MD);
        for i in 0..n {
            b = b.file(format!("d{i}/f.txt"), "x");
        }
        b.build()
    };
    assert!(many(MAX_SKILL_FILES - 1).is_ok());
    // Directories count apart from files: 512 of them (one file each, in pairs) fit, 513 do not.
    let dirs = |n: usize| {
        let mut b = SkillRegistration::builder("pdf").file("SKILL.md", MD);
        for i in 0..n.div_ceil(2) {
            let path = if 2 * i + 1 < n {
                format!("x{i}/y/f.txt")
            } else {
                format!("x{i}/f.txt")
            };
            b = b.file(path, "x");
        }
        b.build()
    };
    assert!(dirs(MAX_SKILL_DIRECTORIES).is_ok());
    assert_eq!(
        kind(dirs(MAX_SKILL_DIRECTORIES + 1)),
        BuildErrorKind::SkillLimit
    );
}

#[test]
fn uris_are_bounded() {
    let at = MAX_SKILL_URI_BYTES - "skill://pdf/".len();
    let path = |n: usize| format!("{}.txt", "a".repeat(n - 4));
    assert!(
        SkillRegistration::builder("pdf")
            .file("SKILL.md", MD)
            .file(path(at), "x")
            .build()
            .is_ok()
    );
    let past = SkillRegistration::builder("pdf")
        .file("SKILL.md", MD)
        .file(path(at + 1), "x")
        .build();
    assert_eq!(kind(past), BuildErrorKind::InvalidSkill);
}

#[test]
fn media_types_come_from_extensions_or_are_given() {
    assert_eq!(media_type("a/b/SKILL.md"), "text/markdown");
    assert_eq!(media_type("run.PY"), "text/x-python");
    assert_eq!(media_type("data.json"), "application/json");
    assert_eq!(media_type("blob.xyz"), "application/octet-stream");
    assert_eq!(media_type(".hidden"), "text/plain");
    let given = SkillRegistration::builder("pdf")
        .file("SKILL.md", MD)
        .file_with_mime_type("data", "{}", "application/json")
        .build()
        .unwrap();
    assert!(
        given
            .inner
            .files
            .iter()
            .any(|f| &*f.mime_type == "application/json")
    );
    let bad = SkillRegistration::builder("pdf")
        .file("SKILL.md", MD)
        .file_with_mime_type("d", "x", "not a type")
        .build();
    assert_eq!(kind(bad), BuildErrorKind::InvalidSkill);
}
