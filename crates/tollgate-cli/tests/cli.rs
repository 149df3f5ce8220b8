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

/// `tollgate gateway` in front of the demo over stdio, its `[server]` table written out; the
/// server's address once it serves.
fn gateway(name: &str, server: &str, addr: &str) -> (Demo, String) {
    let config = file(
        name,
        &format!(
            "[[upstream]]\nname = \"demo\"\ncommand = \"{BIN}\"\nargs = [\"serve-demo\", \"--stdio\"]\nprefix = \"demo\"\n\n[server]\n{server}"
        ),
    );
    let mut child = Command::new(BIN)
        .args(["gateway", "--config", &config, "--addr", addr])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let served = lines
        .by_ref()
        .map_while(Result::ok)
        .inspect(|l| seen.push(l.clone()))
        .find(|l| l.starts_with("tollgate gateway:") && l.contains("http://"))
        .unwrap_or_else(|| panic!("the gateway did not serve: {seen:?}"));
    // Keep reading its logs so the gateway never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    let url = served.split_whitespace().last().unwrap();
    let host = url.trim_start_matches("http://").trim_end_matches("/mcp");
    (Demo(child), host.to_owned())
}

/// One HTTP/1.1 exchange on loopback: the answer's head and body as text.
fn exchange(host: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> String {
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut stream, &mut answer).unwrap();
    answer
}

const DISCOVER: &str = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

fn discover(host: &str, origin: Option<&str>, token: Option<&str>) -> String {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "server/discover"),
    ];
    if let Some(origin) = origin {
        headers.push(("Origin", origin));
    }
    let bearer = token.map(|t| format!("Bearer {t}"));
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    exchange(host, "POST", "/mcp", &headers, DISCOVER)
}

#[test]
fn the_gateway_serves_as_its_server_table_says() {
    let (server, host) = gateway(
        "edge.toml",
        "allowed_origins = [\"https://app.example\"]\ncors_origins = [\"https://page.example\"]\nrequests_per_minute = 4\n",
        "127.0.0.1:0",
    );
    // Origins: an allowed one is served, any other refused before anything runs.
    assert!(discover(&host, Some("https://app.example"), None).starts_with("HTTP/1.1 200"));
    assert!(discover(&host, Some("https://evil.example"), None).starts_with("HTTP/1.1 403"));
    // CORS: the page origin's preflight is granted.
    let preflight = exchange(
        &host,
        "OPTIONS",
        "/mcp",
        &[
            ("Origin", "https://page.example"),
            ("Access-Control-Request-Method", "POST"),
        ],
        "",
    )
    .to_ascii_lowercase();
    assert!(
        preflight.contains("access-control-allow-origin: https://page.example"),
        "{preflight}"
    );
    // Four requests a minute for the (anonymous) caller, one already made (the refused origin
    // and the preflight are answered before admission): three more, then 429.
    let statuses: Vec<String> = (0..4)
        .map(|_| discover(&host, None, None)[9..12].to_owned())
        .collect();
    assert_eq!(statuses, ["200", "200", "200", "429"]);
    drop(server);

    // The OAuth protected resource: no token, 401 naming its metadata, which names the issuer.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let (server, host) = gateway(
        "protected.toml",
        &format!(
            "[server.oauth]\nissuer = \"http://127.0.0.1:9/issuer\"\nresource = \"{resource}\"\nscopes = [\"mcp:use\"]\n"
        ),
        &format!("127.0.0.1:{port}"),
    );
    let refused = discover(&host, None, None);
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    let metadata = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
    assert!(
        refused.contains(&format!("resource_metadata=\"{metadata}\"")),
        "{refused}"
    );
    let forged = discover(&host, None, Some("not.a.token"));
    assert!(forged.starts_with("HTTP/1.1 401"), "{forged}");
    let published = exchange(
        &host,
        "GET",
        "/.well-known/oauth-protected-resource/mcp",
        &[],
        "",
    );
    assert!(published.starts_with("HTTP/1.1 200"), "{published}");
    assert!(
        published.contains(r#""authorization_servers":["http://127.0.0.1:9/issuer"]"#),
        "{published}"
    );
    drop(server);
    // A [server] table that breaks its rules is refused before anything starts.
    let bad = file(
        "bad-server.toml",
        "[[upstream]]\nname = \"demo\"\ncommand = \"x\"\n[server]\nrequests_per_minute = 0\n",
    );
    let out = Command::new(BIN)
        .args(["gateway", "--config", &bad, "--check"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[server] takes"));
}
