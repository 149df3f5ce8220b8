//! The `tollgate` binary end to end: schema commands on files and stdin, and list/call against
//! its own demo server on loopback.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_tollgate");

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("tollgate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn schema_check_reports_pointer_line_and_column() {
    let bad = file(
        "bad.json",
        "{\n  \"type\": \"object\",\n  \"properties\": {\"q\": {\"minLength\": 1}}\n}\n",
    );
    let (code, out) = run(&["schema", "check", &bad]);
    assert_eq!(code, 1);
    assert!(out.contains("bad.json:3:"), "{out}");
    assert!(
        out.contains("(keyword `minLength`) at \"/properties/q\""),
        "{out}"
    );
    let (code, out) = run(&["schema", "check", &bad, "--json"]);
    assert_eq!(code, 1);
    assert!(
        out.contains(r#""pointer":"/properties/q""#) && out.contains(r#""line":3"#),
        "{out}"
    );
    let not_json = file("broken.json", "{\"type\": }");
    let (code, out) = run(&["schema", "check", &not_json]);
    assert_eq!(
        (code, out.contains("broken.json:1:10: not JSON")),
        (1, true),
        "{out}"
    );
    let array_root = file("root.json", r#"{"type":"array"}"#);
    assert_eq!(run(&["schema", "check", &array_root]).0, 1);
    assert_eq!(run(&["schema", "check", &array_root, "--any-root"]).0, 0);
}

#[test]
fn schema_validate_and_batch() {
    let schema = file(
        "s.json",
        r#"{"type":"object","properties":{"n":{"type":"integer","maximum":3}}}"#,
    );
    let ok = file("ok.json", r#"{"n":3}"#);
    let no = file("no.json", r#"{"n":4}"#);
    assert_eq!(
        run(&["schema", "validate", &schema, &ok]),
        (0, "valid\n".to_owned())
    );
    let (code, out) = run(&["schema", "validate", &schema, &no]);
    assert_eq!(code, 1);
    assert!(out.starts_with("invalid: `maximum`"), "{out}");
    let mut child = Command::new(BIN)
        .args(["schema", "batch", "--any-root"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"{\"schema\":{\"type\":\"integer\"},\"instance\":3}\n{\"schema\":{\"type\":\"integer\"},\"instance\":\"x\"}\n{\"schema\":{\"not\":{}},\"instance\":1}\nnope\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"valid\":true}\n{\"valid\":false}\n{\"compile_error\":\"ExcludedKeyword\"}\n{\"error\":\"not JSON: invalid literal\"}\n"
    );
}

/// The demo server, stopped when the test ends, failed assertions included (a server left
/// running would hold the test's output open).
struct Demo(std::process::Child);

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn list_and_call_the_demo_on_both_revisions() {
    let mut server = Demo(
        Command::new(BIN)
            .args(["serve-demo", "--addr", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(server.0.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_owned();
    let (code, out) = run(&["list", &url]);
    assert_eq!(code, 0);
    assert!(out.starts_with("catalog.search\t"), "{out}");
    // Seven tools and `catalog.seasonal`, which adds or removes `catalog.gift_wrap`.
    assert_eq!(out.lines().count(), 8, "{out}");
    assert!(out.contains("catalog.seasonal\t"), "{out}");
    let (code, out) = run(&["list", &url, "--revision", "2025-11-25"]);
    assert_eq!((code, out.lines().count()), (0, 7), "{out}");
    // The mirrored tenant header is taken from the tool's schema.
    let (code, out) = run(&[
        "call",
        &url,
        "catalog.stock",
        r#"{"tenant":"globex","sku":"POT-001"}"#,
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(r#""inStock":9"#), "{out}");
    let (code, out) = run(&[
        "call",
        &url,
        "catalog.search",
        r#"{"query":5}"#,
        "--revision",
        "2025-11-25",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("(tool error)\nArguments do not match the tool's inputSchema."),
        "{out}"
    );
    assert_eq!(run(&["call", &url, "nope"]).0, 2);
    drop(server);
}

#[test]
fn the_remote_commands_over_stdio() {
    let server = ["--stdio", "--", BIN, "serve-demo", "--stdio"];
    let with = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&server);
        run(&all)
    };
    let (code, out) = with(&["list"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("catalog.search\t"), "{out}");
    let (code, out) = with(&["list", "--kind", "prompts"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("catalog.pairing"), "{out}");
    let (code, out) = with(&["call", "catalog.search", r#"{"query":"pot"}"#]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("POT-001"), "{out}");
    let (code, out) = with(&[
        "call",
        "catalog.search",
        r#"{"query":"pot"}"#,
        "--revision",
        "2025-06-18",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("POT-001"), "{out}");
    assert_eq!(with(&["call"]).0, 2);
}

/// The `Authorization` header of the first request `tollgate list URL ARGS` sends to a
/// one-shot server on `listener`, with `TOLLGATE_TOKEN_FILE` set to `token_file`. The server
/// answers 400 (the command then fails, which is not what is checked).
fn authorization_sent(
    listener: std::net::TcpListener,
    args: &[&str],
    token_file: &str,
) -> Option<String> {
    use std::io::Read;
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap() == 1 {
            head.push(byte[0]);
        }
        let answer = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
        let _ = stream.write_all(answer);
        String::from_utf8_lossy(&head)
            .lines()
            .find_map(|l| l.strip_prefix("authorization: ").map(str::to_owned))
    });
    let mut full = vec!["list", url.as_str(), "--revision", "2026-07-28"];
    full.extend_from_slice(args);
    let _ = Command::new(BIN)
        .args(&full)
        .env("TOLLGATE_TOKEN_FILE", token_file)
        .output()
        .unwrap();
    server.join().unwrap()
}

#[test]
fn stored_tokens_are_sent_and_token_overrides_them() {
    use tollgate_client::oauth::{FileTokenStore, Tokens};
    let dir = std::env::temp_dir().join(format!("tollgate-cli-tokens-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("tokens.json");
    let file = path.to_string_lossy().into_owned();
    let listener = || std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    // No tokens kept: nothing is sent.
    assert_eq!(authorization_sent(listener(), &[], &file), None);
    // Tokens kept for this server's URL (as `tollgate login` keeps them) are sent.
    let server = listener();
    let url = format!("http://{}/mcp", server.local_addr().unwrap());
    let kept = Tokens::new("https://as.example", "kept-token".to_owned());
    FileTokenStore::new(&path).try_save(&url, kept).unwrap();
    assert_eq!(
        authorization_sent(server, &[], &file).as_deref(),
        Some("Bearer kept-token")
    );
    // Another server's URL gets none of them.
    assert_eq!(authorization_sent(listener(), &[], &file), None);
    // --token still wins.
    let server = listener();
    let url = format!("http://{}/mcp", server.local_addr().unwrap());
    let kept = Tokens::new("https://as.example", "kept-token".to_owned());
    FileTokenStore::new(&path).try_save(&url, kept).unwrap();
    assert_eq!(
        authorization_sent(server, &["--token", "given-token"], &file).as_deref(),
        Some("Bearer given-token")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The demo's MCP Apps view: listed among its resources and read back byte for byte as the
/// committed bundle (`examples/catalog/view/search.bundle.html`), which `catalog.search` names.
#[test]
fn the_demo_serves_its_view() {
    let server = ["--stdio", "--", BIN, "serve-demo", "--stdio"];
    let with = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(&server);
        run(&all)
    };
    let (code, out) = with(&["list", "--kind", "resources"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.lines().any(|l| l.starts_with("Catalog search\t")),
        "{out}"
    );
    let (code, out) = with(&["read", "ui://catalog/search"]);
    assert_eq!(code, 0);
    let bundle = include_str!("../examples/catalog/view/search.bundle.html");
    assert_eq!(out.strip_suffix('\n').unwrap_or(&out), bundle);
    assert!(bundle.contains(r#"<script type="module">"#) && !bundle.contains(" src="));
}
