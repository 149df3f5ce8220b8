//! Skills (SEP-2640) over real HTTP on 2026-07-28: the capability, `skills/list` pages and
//! cursors, `skills/get`, files through `resources/read` (text and blob, exact bytes),
//! `resources/directory/read`, the `SKILL.md` entries of `resources/list`, the fixed answers
//! (never echoing the URI asked for), the 2025 revisions without the extension, and the build
//! rules of skills read from disk: bad frontmatter, symbolic links out of the tree or to a
//! directory, special files, files past the limits.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use support::{META, Response, post, start};
use tollgate::json::JsonValue;
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, McpService, ProtocolVersion, skill::SkillRegistration,
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;

const PDF_MD: &str = "---\nname: pdf-processing\ndescription: Fill PDF forms.\nversion: 1.0\nmetadata:\n  owner: docs\n---\n# PDF\n\nSee references/FORMS.md.\n";

fn pdf() -> SkillRegistration {
    SkillRegistration::builder("pdf-processing")
        .file("SKILL.md", PDF_MD)
        .file("references/FORMS.md", "# Forms\n")
        .file("assets/logo.png", vec![0x89, b'P', b'N', b'G', 0, 1, 2])
        .build()
        .unwrap()
}

fn skill(name: &str) -> SkillRegistration {
    SkillRegistration::builder(name)
        .file(
            "SKILL.md",
            format!("---\nname: {name}\ndescription: The {name} skill.\n---\n"),
        )
        .build()
        .unwrap()
}

async fn server(skills: Vec<SkillRegistration>, page_size: usize) -> SocketAddr {
    let mut endpoint =
        Endpoint::with_path("/mcp", [V26, V1125], Implementation::new("skills", "1"))
            .tools_page_size(page_size);
    for s in skills {
        endpoint = endpoint.add_skill(s);
    }
    start(McpService::new(endpoint.build().unwrap())).await
}

async fn send(addr: SocketAddr, method: &str, params: &str) -> Response {
    let sep = if params.is_empty() { "" } else { "," };
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{{{params}{sep}{META}}}}}"#
    );
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    let uri;
    if method == "resources/read" {
        uri = params.split('"').nth(3).unwrap_or_default().to_owned();
        headers.push(("Mcp-Name", &uri));
    }
    post(addr, &headers, body.as_bytes()).await
}

fn get<'a>(value: &'a JsonValue, path: &[&str]) -> &'a JsonValue {
    path.iter().fold(value, |v, k| {
        v.get(k).unwrap_or_else(|| panic!("no {k} in {path:?}"))
    })
}

fn text(value: &JsonValue) -> &str {
    value.as_str().unwrap()
}

fn json(value: &JsonValue) -> String {
    tollgate::json::to_string(value, &Default::default()).unwrap()
}

#[tokio::test]
async fn the_extension_is_declared_with_resources_on_2026_only() {
    let addr = server(vec![pdf()], 50).await;
    let r = send(addr, "server/discover", "").await;
    let caps = get(&r.result(), &["capabilities"]).clone();
    let settings = get(&caps, &["extensions", "io.modelcontextprotocol/skills"]);
    assert_eq!(json(settings), r#"{"directoryRead":true}"#);
    assert!(
        caps.get("resources")
            .is_some_and(|r| r.as_object().is_some())
    );
    // The 2025 revisions have no extension: not declared, and the methods are unknown there.
    let endpoint = Endpoint::with_path("/mcp", [V26, V1125], Implementation::new("skills", "1"))
        .legacy_sessions(None)
        .add_skill(pdf())
        .build()
        .unwrap();
    let stateless = start(McpService::new(endpoint)).await;
    let legacy = [("MCP-Protocol-Version", "2025-11-25")];
    let init = post(
        stateless,
        &legacy,
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    )
    .await;
    assert_eq!(init.status, 200, "{}", init.text());
    assert!(
        !init.text().contains("io.modelcontextprotocol/skills"),
        "{}",
        init.text()
    );
    for method in ["skills/list", "skills/get", "resources/directory/read"] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"uri":"skill://pdf-processing/SKILL.md"}}}}"#
        );
        let r = post(stateless, &legacy, body.as_bytes()).await;
        assert_eq!(r.code(), -32601, "{method}: {}", r.text());
    }
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://pdf-processing/SKILL.md"}}"#;
    let r = post(stateless, &legacy, body).await;
    assert!(
        r.text().contains("\"error\""),
        "a skill file is not a 2025 resource: {}",
        r.text()
    );
}

#[tokio::test]
async fn a_nested_skill_has_its_own_entry_and_directory() {
    let suite = SkillRegistration::builder("suite")
        .file("SKILL.md", "---\nname: suite\ndescription: All.\n---\n")
        .file("a.md", "a")
        .file(
            "fmt/SKILL.md",
            "---\nname: fmt\ndescription: Format.\n---\n",
        )
        .file("fmt/rules.md", "r")
        .build()
        .unwrap();
    let addr = server(vec![suite], 50).await;
    let uris = |entry: &JsonValue| -> Vec<String> {
        get(entry, &["resources"])
            .as_array()
            .unwrap()
            .iter()
            .map(|f| text(get(f, &["uri"])).to_owned())
            .collect()
    };
    let list = send(addr, "skills/list", "").await.result();
    let entries = get(&list, &["skills"]).as_array().unwrap().clone();
    assert_eq!(text(get(&entries[0], &["uri"])), "skill://suite/SKILL.md");
    assert_eq!(
        uris(&entries[0]).len(),
        4,
        "the enclosing skill lists the nested files"
    );
    let nested = send(addr, "skills/get", r#""uri":"skill://suite/fmt/SKILL.md""#)
        .await
        .result();
    assert_eq!(
        uris(get(&nested, &["skill"])),
        ["skill://suite/fmt/SKILL.md", "skill://suite/fmt/rules.md"]
    );
    let dir = send(
        addr,
        "resources/directory/read",
        r#""uri":"skill://suite/fmt""#,
    )
    .await
    .result();
    assert_eq!(get(&dir, &["resources"]).as_array().unwrap().len(), 2);
    // resources/list: the root's SKILL.md first, then the nested one.
    let listed = send(addr, "resources/list", "").await.result();
    let listed: Vec<String> = get(&listed, &["resources"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| text(get(r, &["uri"])).to_owned())
        .collect();
    assert_eq!(
        listed,
        ["skill://suite/SKILL.md", "skill://suite/fmt/SKILL.md"]
    );
}

#[tokio::test]
async fn list_and_get_answer_whole_entries_with_digests_and_caching() {
    let addr = server(vec![pdf()], 50).await;
    let r = send(addr, "skills/list", "").await;
    assert_eq!(r.status, 200, "{}", r.text());
    let result = r.result();
    assert_eq!(text(get(&result, &["resultType"])), "complete");
    assert!(result.get("ttlMs").is_some() && result.get("cacheScope").is_some());
    assert!(result.get("nextCursor").is_none());
    let skills = get(&result, &["skills"]).as_array().unwrap();
    assert_eq!(skills.len(), 1);
    let entry = &skills[0];
    assert_eq!(
        text(get(entry, &["uri"])),
        "skill://pdf-processing/SKILL.md"
    );
    assert_eq!(text(get(entry, &["frontmatter", "name"])), "pdf-processing");
    assert_eq!(
        text(get(entry, &["frontmatter", "metadata", "owner"])),
        "docs"
    );
    assert_eq!(json(get(entry, &["frontmatter", "version"])), "1.0");
    let resources = get(entry, &["resources"]).as_array().unwrap();
    let uris: Vec<&str> = resources.iter().map(|f| text(get(f, &["uri"]))).collect();
    assert_eq!(
        uris,
        [
            "skill://pdf-processing/SKILL.md",
            "skill://pdf-processing/assets/logo.png",
            "skill://pdf-processing/references/FORMS.md"
        ]
    );
    let forms = &resources[2];
    assert_eq!(
        text(get(forms, &["digest"])),
        "sha256:111198a69a324efe68bb9dd7e0ca9cb2e50e1c374da3d383a7d3569824965082"
    );
    assert_eq!(json(get(forms, &["size"])), "8");

    let r = send(
        addr,
        "skills/get",
        r#""uri":"skill://pdf-processing/SKILL.md""#,
    )
    .await;
    let result = r.result();
    assert_eq!(text(get(&result, &["resultType"])), "complete");
    assert!(result.get("nextCursor").is_none());
    assert!(result.get("ttlMs").is_some() && result.get("cacheScope").is_some());
    assert_eq!(json(get(&result, &["skill"])), json(entry));
}

#[tokio::test]
async fn unknown_skills_and_directories_are_invalid_params_without_echo() {
    let addr = server(vec![pdf()], 50).await;
    for (method, uri) in [
        ("skills/get", "skill://secret-marker-9f3a/SKILL.md"),
        ("skills/get", "skill://pdf-processing/references/FORMS.md"),
        (
            "resources/directory/read",
            "skill://pdf-processing/SKILL.md",
        ),
        ("resources/directory/read", "skill://secret-marker-9f3a"),
    ] {
        let r = send(addr, method, &format!(r#""uri":"{uri}""#)).await;
        assert_eq!(r.code(), -32602, "{method} {uri}: {}", r.text());
        assert!(
            !r.text().contains("secret-marker") && !r.text().contains("FORMS"),
            "{}",
            r.text()
        );
    }
    for params in [r#""uri":7"#, ""] {
        let r = send(addr, "skills/get", params).await;
        assert_eq!(r.code(), -32602);
        assert_eq!(r.message(), "Invalid params");
    }
    let r = send(
        addr,
        "resources/directory/read",
        r#""uri":"skill://pdf-processing","cursor":"x""#,
    )
    .await;
    assert_eq!(
        (r.code(), r.message()),
        (-32602, "Invalid cursor".to_owned())
    );
}

#[tokio::test]
async fn files_are_read_byte_for_byte() {
    let addr = server(vec![pdf()], 50).await;
    let r = send(
        addr,
        "resources/read",
        r#""uri":"skill://pdf-processing/SKILL.md""#,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let contents = get(&r.result(), &["contents"]).as_array().unwrap().clone();
    assert_eq!(text(get(&contents[0], &["text"])), PDF_MD);
    assert_eq!(text(get(&contents[0], &["mimeType"])), "text/markdown");
    let r = send(
        addr,
        "resources/read",
        r#""uri":"skill://pdf-processing/assets/logo.png""#,
    )
    .await;
    let contents = get(&r.result(), &["contents"]).as_array().unwrap().clone();
    assert_eq!(text(get(&contents[0], &["blob"])), "iVBORwABAg==");
    assert_eq!(text(get(&contents[0], &["mimeType"])), "image/png");
    let r = send(
        addr,
        "resources/read",
        r#""uri":"skill://pdf-processing/nothing.md""#,
    )
    .await;
    assert_eq!(r.code(), -32602);
    // resources/list carries each SKILL.md with its frontmatter's name and description.
    let r = send(addr, "resources/list", "").await;
    let listed = get(&r.result(), &["resources"]).as_array().unwrap().clone();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        text(get(&listed[0], &["uri"])),
        "skill://pdf-processing/SKILL.md"
    );
    assert_eq!(text(get(&listed[0], &["name"])), "pdf-processing");
    assert_eq!(text(get(&listed[0], &["description"])), "Fill PDF forms.");
    assert_eq!(text(get(&listed[0], &["mimeType"])), "text/markdown");
}

#[tokio::test]
async fn directories_list_their_direct_children() {
    let addr = server(vec![pdf()], 50).await;
    let r = send(
        addr,
        "resources/directory/read",
        r#""uri":"skill://pdf-processing""#,
    )
    .await;
    let result = r.result();
    assert_eq!(text(get(&result, &["resultType"])), "complete");
    let children = get(&result, &["resources"]).as_array().unwrap().clone();
    let shown: Vec<(String, String)> = children
        .iter()
        .map(|c| {
            (
                text(get(c, &["uri"])).to_owned(),
                text(get(c, &["mimeType"])).to_owned(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (
                "skill://pdf-processing/assets".to_owned(),
                "inode/directory".to_owned()
            ),
            (
                "skill://pdf-processing/references".to_owned(),
                "inode/directory".to_owned()
            ),
            (
                "skill://pdf-processing/SKILL.md".to_owned(),
                "text/markdown".to_owned()
            ),
        ]
    );
    let r = send(
        addr,
        "resources/directory/read",
        r#""uri":"skill://pdf-processing/references""#,
    )
    .await;
    let children = get(&r.result(), &["resources"]).as_array().unwrap().clone();
    assert_eq!(children.len(), 1);
    assert_eq!(text(get(&children[0], &["name"])), "FORMS.md");
}

#[tokio::test]
async fn pages_hold_whole_entries_and_cursors_are_this_lists() {
    let skills = (0..5).map(|i| skill(&format!("skill-{i}"))).collect();
    let addr = server(skills, 2).await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..5 {
        let params = cursor
            .as_ref()
            .map(|c| format!(r#""cursor":"{c}""#))
            .unwrap_or_default();
        let result = send(addr, "skills/list", &params).await.result();
        for s in get(&result, &["skills"]).as_array().unwrap() {
            seen.push(text(get(s, &["uri"])).to_owned());
        }
        cursor = result.get("nextCursor").map(|c| text(c).to_owned());
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(seen.len(), 5);
    seen.dedup();
    assert_eq!(seen.len(), 5);
    for bad in [r#""cursor":"bm90IG91cnM=""#, r#""cursor":"""#] {
        let r = send(addr, "skills/list", bad).await;
        assert_eq!(
            (r.code(), r.message()),
            (-32602, "Invalid cursor".to_owned())
        );
    }
    let r = send(addr, "skills/list", r#""cursor":1"#).await;
    assert_eq!(r.message(), "Invalid params");
}

#[test]
fn endpoint_rules_for_skills() {
    let build = |skills: Vec<SkillRegistration>, revisions: &[ProtocolVersion]| {
        let mut e = Endpoint::with_path(
            "/mcp",
            revisions
                .iter()
                .copied()
                .collect::<tollgate::endpoint::ProtocolVersions>(),
            Implementation::new("s", "1"),
        );
        for s in skills {
            e = e.add_skill(s);
        }
        e.build().map(|_| ()).map_err(|e| e.kind())
    };
    assert_eq!(
        build(vec![pdf(), pdf()], &[V26]),
        Err(BuildErrorKind::DuplicateResource)
    );
    let inner = SkillRegistration::builder("inner")
        .under("pdf-processing")
        .file("SKILL.md", "---\nname: inner\ndescription: d\n---\n")
        .build()
        .unwrap();
    assert_eq!(
        build(vec![pdf(), inner], &[V26]),
        Err(BuildErrorKind::DuplicateResource)
    );
    assert_eq!(
        build(vec![pdf()], &[V1125]),
        Err(BuildErrorKind::InvalidSkill)
    );
    let too_big = SkillRegistration::builder("big")
        .file("SKILL.md", "---\nname: big\ndescription: d\n---\n")
        .file("a.png", vec![0u8; tollgate::content::MAX_INLINE_BYTES + 1])
        .build()
        .unwrap();
    assert_eq!(
        build(vec![too_big], &[V26]),
        Err(BuildErrorKind::SkillLimit)
    );
    let fits = SkillRegistration::builder("fits")
        .file("SKILL.md", "---\nname: fits\ndescription: d\n---\n")
        .file("a.png", vec![0u8; tollgate::content::MAX_INLINE_BYTES])
        .build()
        .unwrap();
    assert_eq!(build(vec![fits], &[V26]), Ok(()));
}

/// A scratch directory removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("tollgate-skills-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn write(&self, path: &str, bytes: &[u8]) -> PathBuf {
        let at = self.0.join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(&at, bytes).unwrap();
        at
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn from_disk(dir: &Path) -> Result<SkillRegistration, tollgate::BuildError> {
    SkillRegistration::from_directory(dir)?.build()
}

const DISK_MD: &[u8] = b"---\nname: disk\ndescription: From disk.\n---\n";

#[test]
fn a_directory_on_disk_is_a_skill() {
    let scratch = Scratch::new("ok");
    let root = scratch.0.join("disk");
    scratch.write("disk/SKILL.md", DISK_MD);
    scratch.write("disk/references/a.md", b"a");
    std::fs::create_dir_all(root.join("empty")).unwrap();
    std::os::unix::fs::symlink(root.join("references/a.md"), root.join("alias.md")).unwrap();
    scratch.write("disk/.env", b"SECRET=1");
    scratch.write("disk/.git/config", b"x");
    let skill = from_disk(&root).unwrap();
    assert_eq!(skill.uri(), "skill://disk/SKILL.md");
    assert_eq!(skill.file_count(), 3, "hidden files are not served");
    // A symbolic link to the skill is named by the link, as the application wrote it.
    let link = scratch.0.join("link-dir");
    scratch.write(
        "elsewhere-x/SKILL.md",
        b"---\nname: link-dir\ndescription: d\n---\n",
    );
    std::os::unix::fs::symlink(scratch.0.join("elsewhere-x"), &link).unwrap();
    assert_eq!(from_disk(&link).unwrap().uri(), "skill://link-dir/SKILL.md");
}

#[tokio::test]
async fn a_link_to_a_hidden_file_is_not_served() {
    let scratch = Scratch::new("hidden-link");
    let root = scratch.0.join("disk");
    scratch.write("disk/SKILL.md", DISK_MD);
    scratch.write("disk/a.md", b"a");
    scratch.write("disk/.env", b"SECRET=1");
    scratch.write("disk/.git/config", b"x");
    let link = |target: &str, name: &str| {
        std::os::unix::fs::symlink(root.join(target), root.join(name)).unwrap();
    };
    // A visible name leading to a hidden file, or through a hidden directory.
    link(".env", "notes.md");
    link(".git/config", "config.md");
    // A link to an ordinary file inside the tree is still served.
    link("a.md", "alias.md");
    let skill = from_disk(&root).unwrap();
    assert_eq!(skill.file_count(), 3, "only SKILL.md, a.md and alias.md");
    let addr = server(vec![skill], 50).await;
    let dir = send(addr, "resources/directory/read", r#""uri":"skill://disk""#)
        .await
        .result();
    let mut names: Vec<String> = get(&dir, &["resources"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| text(get(r, &["name"])).to_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["SKILL.md", "a.md", "alias.md"]);
}

#[tokio::test]
async fn an_empty_directory_on_disk_is_listed() {
    let scratch = Scratch::new("empty");
    let root = scratch.0.join("disk");
    scratch.write("disk/SKILL.md", DISK_MD);
    std::fs::create_dir_all(root.join("empty")).unwrap();
    let addr = server(vec![from_disk(&root).unwrap()], 50).await;
    let dir = send(addr, "resources/directory/read", r#""uri":"skill://disk""#)
        .await
        .result();
    let names: Vec<String> = get(&dir, &["resources"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| text(get(r, &["name"])).to_owned())
        .collect();
    assert_eq!(names, ["empty", "SKILL.md"]);
    let empty = send(
        addr,
        "resources/directory/read",
        r#""uri":"skill://disk/empty""#,
    )
    .await
    .result();
    assert_eq!(get(&empty, &["resources"]).as_array().unwrap().len(), 0);
}

#[test]
fn a_directory_that_breaks_a_rule_refuses_to_build() {
    let scratch = Scratch::new("bad");
    let outside = scratch.write("secret.txt", b"secret");
    let case = |name: &str, setup: &dyn Fn(&Path)| {
        let root = scratch.0.join(name);
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(
            root.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: d\n---\n"),
        )
        .unwrap();
        setup(&root);
        from_disk(&root)
            .map(|_| ())
            .map_err(|e| (e.kind(), e.location().map(str::to_owned)))
    };
    let escaping = case("escape", &|root| {
        std::os::unix::fs::symlink(&outside, root.join("link.txt")).unwrap();
    });
    assert_eq!(
        escaping,
        Err((
            BuildErrorKind::InvalidSkillDirectory,
            Some("link.txt".to_owned())
        ))
    );
    let to_dir = case("dirlink", &|root| {
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("again")).unwrap();
    });
    assert_eq!(
        to_dir.map_err(|e| e.0),
        Err(BuildErrorKind::InvalidSkillDirectory)
    );
    let special = case("fifo", &|root| {
        let made = std::process::Command::new("mkfifo")
            .arg(root.join("pipe"))
            .status();
        assert!(made.is_ok_and(|s| s.success()));
    });
    assert_eq!(
        special.map_err(|e| e.0),
        Err(BuildErrorKind::InvalidSkillDirectory)
    );
    // A file past 16 MiB is refused from its size, before a byte of it is read.
    let oversized = case("huge", &|root| {
        let file = std::fs::File::create(root.join("huge.bin")).unwrap();
        file.set_len(tollgate::skill::MAX_SKILL_BYTES + 1).unwrap();
    });
    assert_eq!(oversized.map_err(|e| e.0), Err(BuildErrorKind::SkillLimit));
    let bad_frontmatter = case("front", &|root| {
        std::fs::write(
            root.join("SKILL.md"),
            "---\nname: front\ndescription: [unclosed\n---\n",
        )
        .unwrap();
    });
    assert_eq!(
        bad_frontmatter.map_err(|e| e.0),
        Err(BuildErrorKind::SkillFrontmatter)
    );
    let wrong_name = case("named", &|root| {
        std::fs::write(
            root.join("SKILL.md"),
            "---\nname: other\ndescription: d\n---\n",
        )
        .unwrap();
    });
    assert_eq!(
        wrong_name,
        Err((BuildErrorKind::SkillFrontmatter, Some("/name".to_owned())))
    );
    assert_eq!(
        SkillRegistration::from_directory(scratch.0.join("missing"))
            .map(|_| ())
            .map_err(|e| e.kind()),
        Err(BuildErrorKind::InvalidSkillDirectory)
    );
}

#[test]
fn a_directory_is_bounded_at_512_files() {
    let scratch = Scratch::new("many");
    let with = |name: &str, n: usize| {
        let root = scratch.0.join(name);
        std::fs::create_dir_all(root.join("f")).unwrap();
        std::fs::write(
            root.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: d\n---\n"),
        )
        .unwrap();
        for i in 1..n {
            std::fs::write(root.join(format!("f/{i}.txt")), "x").unwrap();
        }
        from_disk(&root)
            .map(|s| s.file_count())
            .map_err(|e| e.kind())
    };
    assert_eq!(with("at", 512), Ok(512));
    assert_eq!(with("past", 513), Err(BuildErrorKind::SkillLimit));
}
