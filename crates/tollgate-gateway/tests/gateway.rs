//! The gateway in front of a hostile upstream: a small hand-written 2025-06-18 server on
//! loopback (raw HTTP/1.1, JSON answers) whose catalog holds a good tool, a tool outside
//! Profile 1, a tool whose result breaks its own output schema, one whose content breaks the
//! content rules and one that never answers. The gateway's endpoint is reached through the
//! Tollgate client in process. Checked: what is imported and what is refused (with its JSON
//! Pointer), that a call with bad arguments never reaches the upstream, that bad answers become
//! the fixed internal error, that a hang is bounded, and that two upstreams serving one name
//! without a prefix refuse to start.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::{Endpoint, Implementation, ProtocolVersion};
use tollgate_client::Client;
use tollgate_gateway::{Gateway, GatewayConfig, GatewayErrorKind, RefusalReason};

const TOOLS: &str = r#"{"tools":[
 {"name":"echo","description":"Echoes","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"annotations":{"readOnlyHint":true}},
 {"name":"patterned","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"q":{"type":"string","pattern":"^x","minLength":2}},"required":["q"]}},
 {"name":"remote","inputSchema":{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}},
 {"name":"liar","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}},
 {"name":"broken","inputSchema":{"type":"object"}},
 {"name":"slow","inputSchema":{"type":"object"}}
]}"#;

/// The upstream: counts the `tools/call` requests it receives.
#[derive(Clone)]
struct Upstream {
    calls: Arc<AtomicUsize>,
    /// The `tools/list` result it answers now.
    tools: Arc<std::sync::Mutex<String>>,
    /// The 2025 session id it gives and accepts: a new one each time it (re)starts, so a
    /// restarted upstream does not know the sessions of the one before.
    session: Arc<std::sync::Mutex<String>>,
}

impl Default for Upstream {
    fn default() -> Self {
        Self {
            calls: Arc::default(),
            tools: Arc::new(std::sync::Mutex::new(TOOLS.to_owned())),
            session: Arc::default(),
        }
    }
}

impl Upstream {
    async fn start(&self) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        self.serve_on(listener);
        addr
    }

    /// Serves on `listener` until the returned handle stops it (its listener and every
    /// connection closed, as a crashed server's would be).
    fn serve_on(&self, listener: TcpListener) -> Served {
        static STARTS: AtomicUsize = AtomicUsize::new(0);
        *self.session.lock().unwrap() = format!("s{}", STARTS.fetch_add(1, Ordering::SeqCst));
        let served = Served::default();
        let tasks = Arc::clone(&served.0);
        let this = self.clone();
        let accept = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let task = tokio::spawn(this.clone().serve(tcp));
                tasks.lock().unwrap().push(task.abort_handle());
            }
        });
        served.0.lock().unwrap().push(accept.abort_handle());
        served
    }

    /// Answers the requests of one connection in turn.
    async fn serve(self, mut tcp: TcpStream) {
        let mut buffer = Vec::new();
        loop {
            let Some((method, body, session)) = read_request(&mut tcp, &mut buffer).await else {
                return;
            };
            let current = self.session.lock().unwrap().clone();
            if session.is_some_and(|s| s != current) {
                let gone = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
                if tcp.write_all(gone.as_bytes()).await.is_err() {
                    return;
                }
                continue;
            }
            let Some((status, answer)) = self.answer(&method, &body) else {
                // `slow`: never answers (the connection stays open).
                std::future::pending::<()>().await;
                return;
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nMcp-Session-Id: {current}\r\nContent-Length: {}\r\n\r\n",
                answer.len()
            );
            if tcp.write_all(head.as_bytes()).await.is_err()
                || tcp.write_all(answer.as_bytes()).await.is_err()
            {
                return;
            }
        }
    }

    fn answer(&self, http_method: &str, body: &str) -> Option<(&'static str, String)> {
        if http_method != "POST" {
            return Some(("405 Method Not Allowed", String::new()));
        }
        let request = from_str(body, &JsonLimits::default()).unwrap();
        let id = request
            .get("id")
            .map(|id| tollgate::json::to_string(id, &Default::default()).unwrap());
        let method = request
            .get("method")
            .and_then(JsonValue::as_str)
            .unwrap_or("");
        let result = match method {
            "initialize" => r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"prompts":{},"resources":{}},"serverInfo":{"name":"hostile","version":"1"}}"#.to_owned(),
            "notifications/initialized" => return Some(("202 Accepted", String::new())),
            "tools/list" => self.tools.lock().unwrap().clone(),
            "prompts/list" => r#"{"prompts":[{"name":"greet","arguments":[{"name":"who","required":true}]},{"name":"bad"}]}"#.to_owned(),
            "prompts/get" => {
                let params = request.get("params").unwrap();
                match params.get("name").and_then(JsonValue::as_str).unwrap() {
                    "greet" => {
                        let who = params.get("arguments").and_then(|a| a.get("who")).and_then(JsonValue::as_str).unwrap();
                        format!(r#"{{"messages":[{{"role":"user","content":{{"type":"text","text":"Hello, {who}"}}}}]}}"#)
                    }
                    _ => r#"{"messages":[{"role":"system","content":{"type":"text","text":"x"}}]}"#.to_owned(),
                }
            }
            "resources/list" => r#"{"resources":[{"uri":"file:///a.txt","name":"a","mimeType":"text/plain"},{"uri":"file:///bad.bin","name":"bad"}]}"#.to_owned(),
            "resources/templates/list" => r#"{"resourceTemplates":[{"uriTemplate":"file:///items/{id}","name":"item"}]}"#.to_owned(),
            "resources/read" => {
                let uri = request.get("params").and_then(|p| p.get("uri")).and_then(JsonValue::as_str).unwrap().to_owned();
                match uri.as_str() {
                    "file:///bad.bin" => r#"{"contents":[{"uri":"file:///bad.bin","blob":"not base64!"}]}"#.to_owned(),
                    _ => format!(r#"{{"contents":[{{"uri":"{uri}","mimeType":"text/plain","text":"read {uri}"}}]}}"#),
                }
            }
            "tools/call" => {
                self.calls.fetch_add(1, Ordering::SeqCst);
                let params = request.get("params").unwrap();
                let arguments = params.get("arguments").unwrap();
                match params.get("name").and_then(JsonValue::as_str).unwrap() {
                    "echo" => {
                        let text = arguments.get("text").and_then(JsonValue::as_str).unwrap();
                        format!(r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#)
                    }
                    "patterned" => r#"{"content":[{"type":"text","text":"ok"}]}"#.to_owned(),
                    "liar" => r#"{"content":[{"type":"text","text":"n"}],"structuredContent":{"n":"not a number"}}"#.to_owned(),
                    "broken" => r#"{"content":[{"type":"image","data":"not base64!","mimeType":"image/png"}]}"#.to_owned(),
                    _ => return None,
                }
            }
            // Not a 2026-07-28 server: the probe gets a plain 400.
            _ => return Some(("400 Bad Request", r#"{"error":"unknown"}"#.to_owned())),
        };
        let id = id.unwrap_or_else(|| "null".to_owned());
        Some((
            "200 OK",
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
        ))
    }
}

/// A running upstream's tasks.
#[derive(Default)]
struct Served(Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>);

impl Served {
    fn stop(&self) {
        for task in self.0.lock().unwrap().drain(..) {
            task.abort();
        }
    }
}

/// Reads one HTTP/1.1 request (head and `Content-Length` body): its method, body and
/// `Mcp-Session-Id`.
async fn read_request(
    tcp: &mut TcpStream,
    buffer: &mut Vec<u8>,
) -> Option<(String, String, Option<String>)> {
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
            let length: usize = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse().ok())
                .unwrap_or(0);
            while buffer.len() < end + 4 + length {
                let mut chunk = [0u8; 8192];
                let n = tcp.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buffer.extend_from_slice(&chunk[..n]);
            }
            let body = String::from_utf8_lossy(&buffer[end + 4..end + 4 + length]).into_owned();
            buffer.drain(..end + 4 + length);
            let method = head.split(' ').next().unwrap_or("").to_owned();
            let session = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("mcp-session-id"))
                .map(|(_, v)| v.trim().to_owned());
            return Some((method, body, session));
        }
        let mut chunk = [0u8; 8192];
        let n = tcp.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
}

/// Only `echo`.
const ONE_TOOL: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}"#;

fn config(upstreams: &[(&str, SocketAddr, Option<&str>)]) -> GatewayConfig {
    configured("", upstreams)
}

fn configured(head: &str, upstreams: &[(&str, SocketAddr, Option<&str>)]) -> GatewayConfig {
    let tables: String = upstreams
        .iter()
        .map(|(name, addr, prefix)| {
            let prefix = prefix.map(|p| format!("prefix = \"{p}\"\n")).unwrap_or_default();
            format!("[[upstream]]\nname = \"{name}\"\nurl = \"http://{addr}/mcp\"\ntimeout_ms = 300\n{prefix}")
        })
        .collect();
    GatewayConfig::from_toml(&format!("{head}{tables}")).unwrap()
}

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;

async fn gateway_client(gateway: &Gateway) -> Client {
    let revisions = [
        V26,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
    ];
    let endpoint = gateway
        .install(Endpoint::with_path(
            "/mcp",
            revisions,
            Implementation::new("gateway", "1"),
        ))
        .build()
        .unwrap();
    Client::builder()
        .connect_in_process(endpoint)
        .await
        .unwrap()
}

fn object(text: &str) -> JsonObject {
    from_str(text, &JsonLimits::default())
        .unwrap()
        .as_object()
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_upstream_is_contained() {
    let upstream = Upstream::default();
    let addr = upstream.start().await;
    let revisions = [
        V26,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
    ];
    let gateway = Gateway::connect(&config(&[("hostile", addr, Some("up"))]), &revisions)
        .await
        .unwrap();

    // Imported: every tool but the one with a remote reference, which neither Profile 1 nor the
    // complete validator takes; it is reported with the validator's place.
    let names: Vec<_> = gateway
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(
        names,
        ["up_echo", "up_patterned", "up_liar", "up_broken", "up_slow"]
    );
    let refusals = gateway.refusals();
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert_eq!(refusals[0].name(), "remote");
    assert_eq!(refusals[0].reason(), RefusalReason::InputSchema);
    assert_eq!(refusals[0].pointer(), Some("/properties/a"));
    assert_eq!(refusals[0].keyword(), Some("$ref"));

    let client = gateway_client(&gateway).await;
    let listed = client.list_tools().await.unwrap();
    assert_eq!(listed.len(), 5);
    // A schema outside Profile 1 is published as the upstream wrote it.
    let patterned = listed
        .iter()
        .find(|t| t.get("name").and_then(JsonValue::as_str) == Some("up_patterned"))
        .unwrap();
    let minimum = patterned
        .get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(|p| p.get("q"))
        .and_then(|q| q.get("minLength"));
    assert!(minimum.is_some(), "the published schema is the upstream's");

    // A good call is forwarded and its result relayed.
    let result = client
        .call_tool("up_echo", object(r#"{"text":"hi"}"#))
        .await
        .unwrap();
    let text = result
        .get("content")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .and_then(|b| b.get("text"))
        .and_then(JsonValue::as_str);
    assert_eq!(text, Some("hi"));
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 1);

    // Bad arguments never reach the upstream.
    let refused = client
        .call_tool("up_echo", object(r#"{"text":5}"#))
        .await
        .unwrap();
    assert_eq!(
        refused.get("isError").and_then(JsonValue::as_bool),
        Some(true)
    );
    assert_eq!(
        upstream.calls.load(Ordering::SeqCst),
        1,
        "the bad call was forwarded"
    );

    // The complete validator checks what Profile 1 leaves out, before forwarding.
    for bad in [r#"{"q":"ab"}"#, r#"{"q":"x"}"#, "{}"] {
        let refused = client.call_tool("up_patterned", object(bad)).await.unwrap();
        assert_eq!(
            refused.get("isError").and_then(JsonValue::as_bool),
            Some(true),
            "{bad}"
        );
    }
    assert_eq!(
        upstream.calls.load(Ordering::SeqCst),
        1,
        "a bad call was forwarded"
    );
    let good = client
        .call_tool("up_patterned", object(r#"{"q":"xy"}"#))
        .await
        .unwrap();
    assert_eq!(good.get("isError").and_then(JsonValue::as_bool), None);
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 2);

    // A result outside its own output schema, content that breaks the content rules and a
    // hang are each the fixed internal error.
    for tool in ["up_liar", "up_broken", "up_slow"] {
        let error = client.call_tool(tool, JsonObject::new()).await.unwrap_err();
        assert_eq!(error.code(), Some(-32603), "{tool}: {error}");
    }
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 5);
    client.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_upstreams_serving_one_name_without_a_prefix_refuse_to_start() {
    let one = Upstream::default().start().await;
    let two = Upstream::default().start().await;
    let clash = Gateway::connect(&config(&[("one", one, None), ("two", two, None)]), &[V26])
        .await
        .unwrap_err();
    assert_eq!(clash.kind(), GatewayErrorKind::NameClash);
    assert_eq!(clash.upstream(), Some("two"));
    // With a prefix each, both are served.
    let both = Gateway::connect(
        &config(&[("one", one, None), ("two", two, Some("b"))]),
        &[V26],
    )
    .await
    .unwrap();
    assert_eq!(both.tools().len(), 10);
    both.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profile1_only_leaves_out_what_profile_1_does_not_take_with_its_place() {
    let addr = Upstream::default().start().await;
    let config = configured("profile1_only = true\n", &[("hostile", addr, None)]);
    let gateway = Gateway::connect(&config, &[V26]).await.unwrap();
    let refused: Vec<_> = gateway
        .refusals()
        .iter()
        .map(|r| {
            (
                r.name().to_owned(),
                r.pointer().unwrap().to_owned(),
                r.keyword().map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(
        refused,
        [
            (
                "patterned".to_owned(),
                String::new(),
                Some("$schema".to_owned())
            ),
            (
                "remote".to_owned(),
                "/properties/a".to_owned(),
                Some("$ref".to_owned())
            ),
        ]
    );
    assert_eq!(gateway.tools().len(), 4);
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_cannot_be_reached_is_a_start_up_error_naming_it() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let error = Gateway::connect(&config(&[("gone", addr, None)]), &[V26])
        .await
        .unwrap_err();
    assert_eq!(error.kind(), GatewayErrorKind::Upstream);
    assert_eq!(error.upstream(), Some("gone"));
}

/// The gateway's names as its client lists them, once they differ from `before` (a bounded
/// wait: the re-list runs every second).
async fn listed_after_change(client: &Client, before: &[String]) -> Vec<String> {
    for _ in 0..100 {
        let names: Vec<String> = client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| {
                t.get("name")
                    .and_then(JsonValue::as_str)
                    .unwrap()
                    .to_owned()
            })
            .collect();
        if names != before {
            return names;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the gateway's catalog did not follow the upstream's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_catalog_change_is_followed_live() {
    let upstream = Upstream::default();
    *upstream.tools.lock().unwrap() = ONE_TOOL.to_owned();
    let addr = upstream.start().await;
    // Re-listed every second (the upstream cannot announce over plain JSON responses).
    let text = "[[upstream]]\nname = \"changing\"\nprefix = \"up\"\nrelist_ms = 1000\n";
    let config = GatewayConfig::from_toml(&format!("{text}url = \"http://{addr}/mcp\"\n")).unwrap();
    let revisions = [V26];
    let gateway = Gateway::connect(&config, &revisions).await.unwrap();
    let endpoint = gateway
        .install(Endpoint::with_path(
            "/mcp",
            revisions,
            Implementation::new("gateway", "1"),
        ))
        .build()
        .unwrap();
    gateway.follow(&endpoint).unwrap();
    let client = Client::builder()
        .connect_in_process(endpoint)
        .await
        .unwrap();
    let one = vec!["up_echo".to_owned()];
    let listed: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| {
            t.get("name")
                .and_then(JsonValue::as_str)
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(listed, one);

    // Added upstream: served (the one outside both validators still left out).
    *upstream.tools.lock().unwrap() = TOOLS.to_owned();
    let grown = listed_after_change(&client, &one).await;
    assert_eq!(
        grown,
        ["up_echo", "up_patterned", "up_liar", "up_broken", "up_slow"]
    );
    let called = client
        .call_tool("up_patterned", object(r#"{"q":"xy"}"#))
        .await
        .unwrap();
    assert_eq!(called.get("isError").and_then(JsonValue::as_bool), None);

    // Removed upstream: gone, and its call answers as an unknown tool does.
    *upstream.tools.lock().unwrap() = ONE_TOOL.to_owned();
    let shrunk = listed_after_change(&client, &grown).await;
    assert_eq!(shrunk, one);
    let gone = client
        .call_tool("up_patterned", object(r#"{"q":"xy"}"#))
        .await
        .unwrap_err();
    let unknown = client
        .call_tool("never_served", object(r#"{"q":"xy"}"#))
        .await
        .unwrap_err();
    assert_eq!(gone.code(), unknown.code());
    assert!(gone.code().is_some());
    client.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_resources_and_templates_are_relayed_with_their_uris_mapped() {
    let addr = Upstream::default().start().await;
    let revisions = [
        V26,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
    ];
    let gateway = Gateway::connect(&config(&[("hostile", addr, Some("up"))]), &revisions)
        .await
        .unwrap();
    let prompts: Vec<_> = gateway
        .prompts()
        .iter()
        .map(|p| p.name().to_owned())
        .collect();
    assert_eq!(prompts, ["up_greet", "up_bad"]);
    let uris: Vec<_> = gateway
        .resources()
        .iter()
        .map(|r| r.uri().to_owned())
        .collect();
    assert_eq!(uris, ["up+file:///a.txt", "up+file:///bad.bin"]);
    assert_eq!(
        gateway.resource_templates()[0].uri_template(),
        "up+file:///items/{id}"
    );
    let client = gateway_client(&gateway).await;

    let greeting = client
        .get_prompt("up_greet", object(r#"{"who":"Ada"}"#))
        .await
        .unwrap();
    let text = greeting
        .get("messages")
        .and_then(|m| m.as_array())
        .and_then(|m| m.first())
        .and_then(|m| m.get("content"))
        .and_then(|c| c.get("text"))
        .and_then(JsonValue::as_str);
    assert_eq!(text, Some("Hello, Ada"));
    // A missing required argument is refused by the gateway (the endpoint's own check).
    assert!(
        client
            .get_prompt("up_greet", JsonObject::new())
            .await
            .is_err()
    );
    // A message the content rules refuse (role "system") is the fixed internal error.
    assert_eq!(
        client
            .get_prompt("up_bad", JsonObject::new())
            .await
            .unwrap_err()
            .code(),
        Some(-32603)
    );

    // Reads go to the upstream's URI and come back under the served one.
    let read = client.read_resource("up+file:///a.txt").await.unwrap();
    let first = read
        .get("contents")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .unwrap();
    assert_eq!(
        first.get("uri").and_then(JsonValue::as_str),
        Some("up+file:///a.txt")
    );
    assert_eq!(
        first.get("text").and_then(JsonValue::as_str),
        Some("read file:///a.txt")
    );
    let item = client.read_resource("up+file:///items/7").await.unwrap();
    let first = item
        .get("contents")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .unwrap();
    assert_eq!(
        first.get("text").and_then(JsonValue::as_str),
        Some("read file:///items/7")
    );
    assert_eq!(
        client
            .read_resource("up+file:///bad.bin")
            .await
            .unwrap_err()
            .code(),
        Some(-32603)
    );
    // The upstream's own URI is not served.
    assert!(client.read_resource("file:///a.txt").await.is_err());
    client.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_dies_answers_the_fixed_error_and_is_connected_again_when_back() {
    let upstream = Upstream::default();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = upstream.serve_on(listener);
    let revisions = [V26];
    let gateway = Gateway::connect(&config(&[("mortal", addr, None)]), &revisions)
        .await
        .unwrap();
    let endpoint = gateway
        .install(Endpoint::with_path(
            "/mcp",
            revisions,
            Implementation::new("gateway", "1"),
        ))
        .build()
        .unwrap();
    gateway.follow(&endpoint).unwrap();
    let client = Client::builder()
        .connect_in_process(endpoint)
        .await
        .unwrap();
    let hi = object(r#"{"text":"hi"}"#);
    assert!(client.call_tool("echo", hi.clone()).await.is_ok());

    // Gone: the fixed internal error, at once (never a hang).
    served.stop();
    let down = client.call_tool("echo", hi.clone()).await.unwrap_err();
    assert_eq!(down.code(), Some(-32603));

    // Back on the same address, knowing none of the old sessions: the old client's session is
    // refused (404), so only connecting again (a new initialize) serves the call. A bounded
    // wait; each try is a real call.
    let listener = TcpListener::bind(addr).await.unwrap();
    let _served = upstream.serve_on(listener);
    let mut back = false;
    for _ in 0..100 {
        if client.call_tool("echo", hi.clone()).await.is_ok() {
            back = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(back, "the gateway did not connect to the upstream again");
    client.close().await.unwrap();
    gateway.close().await;
}
