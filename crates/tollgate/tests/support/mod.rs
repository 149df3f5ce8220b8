//! A loopback HTTP/1.1 client for the integration tests: real sockets, no client library, so
//! every byte on the wire is the test's own.

#![allow(dead_code, unreachable_pub, reason = "each test file uses a subset")]

use std::net::SocketAddr;

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tollgate::json::{JsonLimits, JsonValue, from_slice};
use tollgate::{McpService, Server};

pub const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> JsonValue {
        from_slice(&self.body, &JsonLimits::default()).expect("response body is JSON")
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        self.json()
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64())
            .expect("an error code")
    }

    pub fn message(&self) -> String {
        self.json()
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(JsonValue::as_str)
            .unwrap_or_default()
            .to_owned()
    }

    pub fn result(&self) -> JsonValue {
        self.json().get("result").cloned().expect("a result")
    }
}

pub async fn start(service: McpService) -> SocketAddr {
    let server = Server::bind("127.0.0.1:0".parse().expect("address"), service)
        .await
        .expect("bind");
    let addr = server.local_addr().expect("local address");
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));
    addr
}

/// Sends one raw request and reads the whole response (the connection is closed after it).
pub async fn raw(addr: SocketAddr, request: &[u8]) -> Response {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    // The server may answer and close before the whole request is written (a declared length
    // past the limit): its answer is still there to read.
    let _ = stream.write_all(request).await;
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes).await;
    parse(&bytes)
}

fn parse(bytes: &[u8]) -> Response {
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Response {
        status,
        headers,
        body: bytes[end + 4..].to_vec(),
    }
}

/// POSTs `body` to `/mcp` with exactly the given extra headers (plus Host, Content-Type,
/// Accept and Content-Length unless overridden by `raw_head`).
pub async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        addr.port(),
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body);
    raw(addr, &bytes).await
}

/// A request body with the standard `_meta` merged into `params` (given without braces).
pub fn request(id: &str, method: &str, params: &str) -> String {
    let sep = if params.is_empty() { "" } else { "," };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{sep}{META}}}}}"#)
}

/// Calls a tool with the standard headers plus `extra`.
pub async fn call(
    addr: SocketAddr,
    tool: &str,
    arguments: &str,
    extra: &[(&str, &str)],
) -> Response {
    let body = request(
        "1",
        "tools/call",
        &format!(r#""name":"{tool}","arguments":{arguments}"#),
    );
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ];
    headers.extend_from_slice(extra);
    post(addr, &headers, body.as_bytes()).await
}

/// Sends `method` with the standard headers.
pub async fn send(addr: SocketAddr, method: &str, params: &str) -> Response {
    let body = request("7", method, params);
    post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ],
        body.as_bytes(),
    )
    .await
}

/// The text of the first content block of a tool result.
pub fn first_text(result: &JsonValue) -> String {
    result
        .get("content")
        .and_then(JsonValue::as_array)
        .and_then(|c| c.as_slice().first().cloned())
        .and_then(|b| b.get("text").and_then(JsonValue::as_str).map(str::to_owned))
        .unwrap_or_default()
}

/// An open HTTP/1.1 response read as it arrives, its chunked body decoded.
pub struct Open {
    tcp: TcpStream,
    raw: Vec<u8>,
    pub status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    ended: bool,
}

impl Open {
    pub async fn send(addr: SocketAddr, request: String) -> Self {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut open = Self {
            tcp,
            raw: Vec::new(),
            status: 0,
            headers: Vec::new(),
            body: Vec::new(),
            ended: false,
        };
        while open.status == 0 {
            assert!(open.fill(Duration::from_secs(5)).await, "no response head");
            if let Some(end) = open.raw.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&open.raw[..end]).into_owned();
                let mut lines = head.split("\r\n");
                open.status = lines
                    .next()
                    .and_then(|l| l.split(' ').nth(1))
                    .and_then(|s| s.parse().ok())
                    .unwrap();
                open.headers = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
                    .collect();
                open.raw.drain(..end + 4);
            }
        }
        open.decode();
        open
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Reads more bytes; false at end of stream or after `wait`.
    async fn fill(&mut self, wait: Duration) -> bool {
        let mut buf = [0u8; 8192];
        match tokio::time::timeout(wait, self.tcp.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {
                self.raw.extend_from_slice(&buf[..n]);
                true
            }
            _ => false,
        }
    }

    /// Moves every complete chunk from `raw` to `body`.
    fn decode(&mut self) {
        if self.status == 0 {
            return;
        }
        loop {
            let Some(line) = self.raw.windows(2).position(|w| w == b"\r\n") else {
                return;
            };
            let size =
                usize::from_str_radix(std::str::from_utf8(&self.raw[..line]).unwrap().trim(), 16)
                    .unwrap();
            if size == 0 {
                self.ended = true;
                self.raw.clear();
                return;
            }
            if self.raw.len() < line + 2 + size + 2 {
                return;
            }
            self.body
                .extend_from_slice(&self.raw[line + 2..line + 2 + size]);
            self.raw.drain(..line + 2 + size + 2);
        }
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// Reads until the body contains `needle`; false if the stream ends or 5 s pass first.
    pub async fn until(&mut self, needle: &str) -> bool {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !self.text().contains(needle) {
            if self.ended {
                return false;
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() || !self.fill(left).await {
                // A closed connection after a complete body is the end as well.
                self.decode();
                return self.text().contains(needle);
            }
            self.decode();
        }
        true
    }

    /// Reads whatever arrives within `wait` (or until the stream ends).
    pub async fn read_for(&mut self, wait: Duration) {
        let deadline = tokio::time::Instant::now() + wait;
        while !self.ended {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() || !self.fill(left).await {
                break;
            }
            self.decode();
        }
        self.decode();
    }

    /// Reads to the end of the body (at most 5 s); whether it ended.
    pub async fn finish_reading(&mut self) -> bool {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !self.ended {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() || !self.fill(left).await {
                self.decode();
                return self.ended;
            }
            self.decode();
        }
        true
    }

    /// The ids of the events received so far.
    pub fn event_ids(&self) -> Vec<String> {
        self.text()
            .lines()
            .filter_map(|l| l.strip_prefix("id: "))
            .map(str::to_owned)
            .collect()
    }
}

/// A raw POST to `/mcp` with `headers` and `body`, for [`Open::send`] (the connection stays
/// open).
pub fn post_request(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> String {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        addr.port(),
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    request
}

/// The value of an environment variable a wrapper script (`scripts/with-postgres`,
/// `scripts/with-small-fs`) sets.
pub fn env_var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is set by the wrapper script"))
}

/// Runs the control script the environment variable `var` names with `action` (`kill`,
/// `start`, `ro`, `rw`).
pub fn control(var: &str, action: &str) {
    let status = std::process::Command::new(env_var(var))
        .arg(action)
        .status()
        .expect("the control script runs");
    assert!(status.success(), "{var} {action}");
}

/// A 2026-07-28 endpoint on loopback with one task-required tool, `job`, whose work sleeps `ms`
/// and completes with `text`; its tasks in `store`, polled every 100 ms.
pub async fn task_server(
    store: impl tollgate::task::TaskStore,
    ms: u64,
    text: &'static str,
) -> SocketAddr {
    use tollgate::task::{TaskConfig, TaskCreation, TaskError};
    use tollgate::tool::{CompleteResult, OperationResult, TaskSupport};
    use tollgate::{
        Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext,
        ToolArguments, ToolRegistration,
    };
    let job = move |_: &RequestContext,
                    _: ToolArguments<tollgate::json::JsonObject>,
                    features: &InvocationFeatures| {
        let tasks = features.find::<TaskCreation>().cloned();
        async move {
            let tasks = tasks.ok_or_else(TaskError::internal)?;
            let created = tasks
                .spawn(move |_| async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(CompleteResult::from_tool_text(text))
                })
                .await?;
            Ok::<_, TaskError>(OperationResult::from(created))
        }
    };
    let v26 = ProtocolVersion::V2026_07_28;
    let endpoint = Endpoint::with_path("/mcp", [v26], Implementation::new("tasks", "1"))
        .task_store(store)
        .task_config(TaskConfig::default().poll_interval(Duration::from_millis(100)))
        .add_tool(
            ToolRegistration::with_name("job", [v26])
                .json_object_arguments()
                .handler(job)
                .task_support(TaskSupport::Required)
                .build()
                .expect("a valid tool"),
        )
        .build()
        .expect("a valid endpoint");
    start(McpService::new(endpoint)).await
}
