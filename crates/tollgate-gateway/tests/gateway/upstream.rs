//! The hostile upstream the gateway's tests run against: a small hand-written 2025-06-18 server
//! on loopback (raw HTTP/1.1, JSON answers, an event stream where a call asks for progress)
//! whose catalog holds a good tool, a tool outside Profile 1, a tool whose result breaks its own
//! output schema, one whose content breaks the content rules and one that never answers; it
//! counts the calls and cancellations it receives and records the `Authorization` headers it
//! sees.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::{Endpoint, Implementation, ProtocolVersion};
use tollgate_client::Client;
use tollgate_gateway::{Gateway, GatewayConfig};

pub(crate) const TOOLS: &str = r#"{"tools":[
 {"name":"echo","description":"Echoes","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},"annotations":{"readOnlyHint":true}},
 {"name":"patterned","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"q":{"type":"string","pattern":"^x","minLength":2}},"required":["q"]}},
 {"name":"remote","inputSchema":{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}},
 {"name":"liar","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}},
 {"name":"broken","inputSchema":{"type":"object"}},
 {"name":"slow","inputSchema":{"type":"object"}}
]}"#;

/// The upstream: counts the `tools/call` requests it receives.
#[derive(Clone)]
pub(crate) struct Upstream {
    pub(crate) calls: Arc<AtomicUsize>,
    /// The `notifications/cancelled` it received.
    pub(crate) cancelled: Arc<AtomicUsize>,
    /// The `Authorization` header of every request it received (empty when none).
    pub(crate) authorizations: Arc<std::sync::Mutex<Vec<String>>>,
    /// When set (its base URL), it is also its own OAuth authorization server and answers MCP
    /// requests only with the token it issues.
    oauth: Arc<std::sync::Mutex<Option<String>>>,
    /// The form bodies its token endpoint received.
    pub(crate) token_requests: Arc<std::sync::Mutex<Vec<String>>>,
    /// When set, its token endpoint closes the connection unanswered (an authorization server
    /// that cannot be reached).
    pub(crate) token_down: Arc<std::sync::atomic::AtomicBool>,
    /// The `tools/list` result it answers now.
    pub(crate) tools: Arc<std::sync::Mutex<String>>,
    /// The 2025 session id it gives and accepts: a new one each time it (re)starts, so a
    /// restarted upstream does not know the sessions of the one before.
    session: Arc<std::sync::Mutex<String>>,
}

impl Default for Upstream {
    fn default() -> Self {
        Self {
            calls: Arc::default(),
            cancelled: Arc::default(),
            authorizations: Arc::default(),
            oauth: Arc::default(),
            token_requests: Arc::default(),
            token_down: Arc::default(),
            tools: Arc::new(std::sync::Mutex::new(TOOLS.to_owned())),
            session: Arc::default(),
        }
    }
}

impl Upstream {
    pub(crate) async fn start(&self) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        self.serve_on(listener);
        addr
    }

    /// Serves on `listener` until the returned handle stops it (its listener and every
    /// connection closed, as a crashed server's would be).
    pub(crate) fn serve_on(&self, listener: TcpListener) -> Served {
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
            let Some(received) = read_request(&mut tcp, &mut buffer).await else {
                return;
            };
            let Received {
                method,
                path,
                body,
                session,
                authorization,
            } = received;
            self.authorizations
                .lock()
                .unwrap()
                .push(authorization.clone().unwrap_or_default());
            if path == "/token" && self.token_down.load(Ordering::SeqCst) {
                return;
            }
            if let Some(answer) = self.authorize(&method, &path, &body, authorization.as_deref()) {
                if tcp.write_all(answer.as_bytes()).await.is_err() {
                    return;
                }
                continue;
            }
            let current = self.session.lock().unwrap().clone();
            if session.is_some_and(|s| s != current) {
                let gone = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
                if tcp.write_all(gone.as_bytes()).await.is_err() {
                    return;
                }
                continue;
            }
            let Some((status, kind, answer)) = self.answer(&method, &body) else {
                // `slow`: never answers (the connection stays open).
                std::future::pending::<()>().await;
                return;
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nMcp-Session-Id: {current}\r\nContent-Length: {}\r\n\r\n",
                answer.len()
            );
            if tcp.write_all(head.as_bytes()).await.is_err()
                || tcp.write_all(answer.as_bytes()).await.is_err()
            {
                return;
            }
        }
    }

    /// Serves on a fresh port as its own OAuth authorization server too: MCP requests need
    /// the token its token endpoint issues. Its URL's host is `localhost`.
    pub(crate) async fn start_with_oauth(&self) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://localhost:{}", listener.local_addr().unwrap().port());
        *self.oauth.lock().unwrap() = Some(base.clone());
        self.serve_on(listener);
        format!("{base}/mcp")
    }

    /// In OAuth mode, the whole answer to the authorization server's requests and to an MCP
    /// request without the issued token (401 with its challenge); `None` otherwise.
    fn authorize(
        &self,
        method: &str,
        path: &str,
        body: &str,
        authorization: Option<&str>,
    ) -> Option<String> {
        let base = self.oauth.lock().unwrap().clone()?;
        let json = |body: String| {
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        match (method, path) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => Some(json(format!(
                r#"{{"resource":"{base}/mcp","authorization_servers":["{base}"]}}"#
            ))),
            ("GET", "/.well-known/oauth-authorization-server") => Some(json(format!(
                r#"{{"issuer":"{base}","token_endpoint":"{base}/token","token_endpoint_auth_methods_supported":["client_secret_post","private_key_jwt"],"grant_types_supported":["client_credentials"]}}"#
            ))),
            ("POST", "/token") => {
                self.token_requests.lock().unwrap().push(body.to_owned());
                Some(json(
                    r#"{"access_token":"upstream-token","token_type":"Bearer","expires_in":3600}"#
                        .to_owned(),
                ))
            }
            (_, "/mcp") if authorization != Some("Bearer upstream-token") => Some(format!(
                "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"\r\nContent-Length: 0\r\n\r\n"
            )),
            _ => None,
        }
    }

    /// The status, media type and body answering one request; `None` for one never answered.
    fn answer(
        &self,
        http_method: &str,
        body: &str,
    ) -> Option<(&'static str, &'static str, String)> {
        const JSON: &str = "application/json";
        if http_method != "POST" {
            return Some(("405 Method Not Allowed", JSON, String::new()));
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
            "initialize" => r#"{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"prompts":{},"resources":{},"completions":{}},"serverInfo":{"name":"hostile","version":"1"}}"#.to_owned(),
            "notifications/initialized" => return Some(("202 Accepted", JSON, String::new())),
            "notifications/cancelled" => {
                self.cancelled.fetch_add(1, Ordering::SeqCst);
                return Some(("202 Accepted", JSON, String::new()));
            }
            "completion/complete" => {
                // The reference and argument as the upstream received them, so a test sees
                // the names mapped back; one value past those sent announced.
                let params = request.get("params").unwrap();
                let name = params.get("ref").and_then(|r| r.get("name")).and_then(JsonValue::as_str).unwrap();
                let argument = params.get("argument").unwrap();
                let typed = argument.get("value").and_then(JsonValue::as_str).unwrap();
                let field = argument.get("name").and_then(JsonValue::as_str).unwrap();
                format!(r#"{{"completion":{{"values":["{name}/{field}/{typed}"],"total":2,"hasMore":true}}}}"#)
            }
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
                    "progressive" => return Some(progressive(params, id.as_deref())),
                    _ => return None,
                }
            }
            // Not a 2026-07-28 server: the probe gets a plain 400.
            _ => return Some(("400 Bad Request", JSON, r#"{"error":"unknown"}"#.to_owned())),
        };
        let id = id.unwrap_or_else(|| "null".to_owned());
        Some((
            "200 OK",
            JSON,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
        ))
    }
}

/// `progressive`: an event stream with two progress reports under the call's token (when it
/// sent one) and then the result.
fn progressive(params: &JsonValue, id: Option<&str>) -> (&'static str, &'static str, String) {
    let token = params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        .map(|t| tollgate::json::to_string(t, &Default::default()).unwrap());
    let mut events = String::new();
    if let Some(token) = token {
        for (progress, message) in [(1, "half"), (2, "done")] {
            events.push_str(&format!(
                "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":{token},\"progress\":{progress},\"total\":2,\"message\":\"{message}\"}}}}\n\n"
            ));
        }
    }
    let id = id.unwrap_or("null");
    events.push_str(&format!(
        "data: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"progressed\"}}]}}}}\n\n"
    ));
    ("200 OK", "text/event-stream", events)
}

/// A running upstream's tasks.
#[derive(Default)]
pub(crate) struct Served(Arc<std::sync::Mutex<Vec<tokio::task::AbortHandle>>>);

impl Served {
    pub(crate) fn stop(&self) {
        for task in self.0.lock().unwrap().drain(..) {
            task.abort();
        }
    }
}

/// One HTTP/1.1 request as the upstream read it.
struct Received {
    method: String,
    path: String,
    body: String,
    session: Option<String>,
    authorization: Option<String>,
}

/// Reads one HTTP/1.1 request (head and `Content-Length` body).
async fn read_request(tcp: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Received> {
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
            let mut line = head.split(' ');
            let method = line.next().unwrap_or("").to_owned();
            let path = line.next().unwrap_or("").to_owned();
            let field = |name: &str| {
                head.lines()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.trim().to_owned())
            };
            return Some(Received {
                method,
                path,
                body,
                session: field("mcp-session-id"),
                authorization: field("authorization"),
            });
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
pub(crate) const ONE_TOOL: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}"#;

pub(crate) fn config(upstreams: &[(&str, SocketAddr, Option<&str>)]) -> GatewayConfig {
    configured("", upstreams)
}

pub(crate) fn configured(
    head: &str,
    upstreams: &[(&str, SocketAddr, Option<&str>)],
) -> GatewayConfig {
    let tables: String = upstreams
        .iter()
        .map(|(name, addr, prefix)| {
            let prefix = prefix.map(|p| format!("prefix = \"{p}\"\n")).unwrap_or_default();
            format!("[[upstream]]\nname = \"{name}\"\nurl = \"http://{addr}/mcp\"\ntimeout_ms = 300\n{prefix}")
        })
        .collect();
    GatewayConfig::from_toml(&format!("{head}{tables}")).unwrap()
}

pub(crate) const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;

pub(crate) async fn gateway_client(gateway: &Gateway) -> Client {
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

/// The gateway's endpoint on `revisions`, followed (its catalog kept current, pending
/// upstreams joined), and a client of it in process.
pub(crate) async fn followed_client(
    gateway: &Gateway,
    revisions: impl IntoIterator<Item = ProtocolVersion>,
) -> Client {
    let versions: tollgate::endpoint::ProtocolVersions = revisions.into_iter().collect();
    let endpoint = gateway
        .install(Endpoint::with_path(
            "/mcp",
            versions,
            Implementation::new("gateway", "1"),
        ))
        .build()
        .unwrap();
    gateway.follow(&endpoint).unwrap();
    Client::builder()
        .connect_in_process(endpoint)
        .await
        .unwrap()
}

pub(crate) fn object(text: &str) -> JsonObject {
    from_str(text, &JsonLimits::default())
        .unwrap()
        .as_object()
        .unwrap()
        .clone()
}
