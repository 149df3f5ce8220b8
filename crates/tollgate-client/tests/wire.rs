//! The client against raw bytes: a loopback server that records each request and answers with
//! the bytes a test writes, so what the client sends and how it reads odd answers are checked
//! without a Tollgate server (a bug both sides share cannot hide).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tollgate_client::{Client, ClientLimits, ErrorKind, Revision};

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

type Answer = Arc<dyn Fn(&Seen) -> (u16, &'static str, String) + Send + Sync>;

/// Serves keep-alive HTTP/1.1 on loopback; `answer` gives status, content type and body.
async fn serve(answer: Answer) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let (answer, log) = (Arc::clone(&answer), Arc::clone(&log));
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    let end = loop {
                        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break end;
                        }
                        let mut chunk = [0u8; 4096];
                        match socket.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                    let mut lines = head.split("\r\n");
                    let method = lines.next().unwrap().split(' ').next().unwrap().to_owned();
                    let headers: Vec<(String, String)> = lines
                        .filter_map(|l| l.split_once(':'))
                        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                        .collect();
                    let length: usize = headers
                        .iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                        .map_or(0, |(_, v)| v.parse().unwrap());
                    while buf.len() < end + 4 + length {
                        let mut chunk = [0u8; 4096];
                        match socket.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let body =
                        String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).into_owned();
                    buf.drain(..end + 4 + length);
                    let request = Seen {
                        method,
                        headers,
                        body,
                    };
                    let (status, kind, body) = answer(&request);
                    log.lock().unwrap().push(request);
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\nmcp-session-id: s-1\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if socket.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, seen)
}

fn id_of(body: &str) -> String {
    body.split("\"id\":")
        .nth(1)
        .map(|r| r.split([',', '}']).next().unwrap_or("null").to_owned())
        .unwrap_or_else(|| "null".to_owned())
}

/// An older server: 400 with no JSON-RPC error for anything but the 2025 lifecycle.
fn older_server(seen: &Seen) -> (u16, &'static str, String) {
    if seen.method == "GET" || seen.method == "DELETE" {
        return (405, "text/plain", String::new());
    }
    let id = id_of(&seen.body);
    if seen.body.contains("\"method\":\"initialize\"") {
        let result = r#"{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"old","version":"1"}}"#;
        return (
            200,
            "application/json",
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
        );
    }
    if seen.body.contains("server/discover") {
        return (400, "text/plain", "Bad Request".to_owned());
    }
    if id == "null" {
        return (202, "text/plain", String::new());
    }
    (
        200,
        "application/json",
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[]}}}}"#),
    )
}

#[tokio::test]
async fn an_older_server_is_initialized_without_a_revision_header() {
    let (url, seen) = serve(Arc::new(older_server)).await;
    let client = Client::builder().connect_http(&url).await.unwrap();
    assert_eq!(client.revision(), Revision::V2025_06_18);
    assert!(client.list_tools().await.unwrap().is_empty());
    let seen = seen.lock().unwrap().clone();
    let posts: Vec<_> = seen.iter().filter(|s| s.method == "POST").collect();
    assert!(posts[0].body.contains("server/discover"));
    assert_eq!(posts[0].header("mcp-protocol-version"), Some("2026-07-28"));
    assert!(posts[1].body.contains("\"protocolVersion\":\"2025-11-25\""));
    assert_eq!(posts[1].header("mcp-protocol-version"), None);
    assert_eq!(posts[1].header("mcp-method"), None);
    // After the server chose 2025-06-18: its header and the session on every message.
    for later in &posts[2..] {
        assert_eq!(later.header("mcp-protocol-version"), Some("2025-06-18"));
        assert_eq!(later.header("mcp-session-id"), Some("s-1"));
    }
}

#[tokio::test]
async fn unsupported_version_retries_with_what_the_server_names() {
    let (url, seen) = serve(Arc::new(|seen: &Seen| {
        if seen.body.contains("server/discover") {
            let id = id_of(&seen.body);
            let error = r#"{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-06-18"],"requested":"2026-07-28"}}"#;
            return (400, "application/json", format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#));
        }
        older_server(seen)
    }))
    .await;
    let client = Client::builder().connect_http(&url).await.unwrap();
    assert_eq!(client.revision(), Revision::V2025_06_18);
    let seen = seen.lock().unwrap().clone();
    // 2025-11-25 is not offered back: the server named only 2025-06-18.
    assert!(
        seen[1].body.contains("\"protocolVersion\":\"2025-06-18\""),
        "{:?}",
        seen[1]
    );
}

#[tokio::test]
async fn an_answer_at_the_message_bound_and_one_past() {
    let (url, _) = serve(Arc::new(|seen: &Seen| {
        let id = id_of(&seen.body);
        if seen.body.contains("server/discover") {
            let result = r#"{"supportedVersions":["2026-07-28"],"capabilities":{}}"#;
            return (
                200,
                "application/json",
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            );
        }
        (
            200,
            "application/json",
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[],"pad":"{}"}}}}"#,
                "x".repeat(200)
            ),
        )
    }))
    .await;
    // The tools/list answer for id 2 is 232 bytes.
    let size = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[],"pad":""}}"#.len() + 200;
    for (bound, ok) in [(size, true), (size - 1, false)] {
        let limits = ClientLimits::default()
            .with_max_message_bytes(bound)
            .unwrap();
        let client = Client::builder()
            .limits(limits)
            .connect_http(&url)
            .await
            .unwrap();
        let outcome = client.list_tools().await;
        match ok {
            true => assert!(outcome.is_ok(), "{outcome:?}"),
            false => assert_eq!(outcome.unwrap_err().kind(), ErrorKind::Limit),
        }
    }
}

/// A server whose `tools/list` stream (id 2) ends after a priming event, as does every resumed
/// stream until GET number `answer_on`, which carries the answer. `retry` is the server's delay.
fn resuming(answer_on: usize, retry: u64) -> Answer {
    let gets = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Arc::new(move |seen: &Seen| {
        let id = id_of(&seen.body);
        if seen.body.contains("server/discover") {
            let result = r#"{"supportedVersions":["2026-07-28"],"capabilities":{}}"#;
            return (
                200,
                "application/json",
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            );
        }
        let n = match seen.method.as_str() {
            "GET" => gets.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1,
            _ => 0,
        };
        let body = if n == answer_on {
            r#"id: e9
data: {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}

"#
            .to_owned()
        } else {
            format!("id: e{n}\nretry: {retry}\ndata:\n\n")
        };
        (200, "text/event-stream", body)
    })
}

#[tokio::test]
async fn stream_resumptions_at_the_bound_and_one_past() {
    // The answer comes on the second resumption: a bound of 2 reads it, a bound of 1 gives up.
    for (bound, ok) in [(2, true), (1, false)] {
        let (url, seen) = serve(resuming(2, 1)).await;
        let limits = ClientLimits::default().with_max_reconnects(bound);
        let client = Client::builder()
            .limits(limits)
            .connect_http(&url)
            .await
            .unwrap();
        let outcome = client.list_tools().await;
        match ok {
            true => assert!(outcome.is_ok(), "{outcome:?}"),
            false => assert_eq!(outcome.unwrap_err().kind(), ErrorKind::Limit),
        }
        let seen = seen.lock().unwrap().clone();
        let gets: Vec<_> = seen.iter().filter(|s| s.method == "GET").collect();
        assert_eq!(gets.len(), bound as usize);
        // Each resumption names the last event id it saw.
        assert_eq!(gets[0].header("last-event-id"), Some("e0"));
    }
}

#[tokio::test(start_paused = true)]
async fn the_servers_retry_is_honoured_up_to_the_cap() {
    // Paused clock: the waits are the client's sleeps, measured in virtual time.
    let cap = ClientLimits::DEFAULT_MAX_RETRY_DELAY;
    for (retry, expected) in [
        (cap.as_millis() as u64, cap),
        (cap.as_millis() as u64 + 1, cap),
        (250, std::time::Duration::from_millis(250)),
    ] {
        let (url, _) = serve(resuming(1, retry)).await;
        let client = Client::builder().connect_http(&url).await.unwrap();
        let started = tokio::time::Instant::now();
        client.list_tools().await.unwrap();
        let waited = started.elapsed();
        // Virtual time moves only by the client's own sleep: exactly the delay it chose.
        assert_eq!(waited, expected, "retry {retry}");
    }
}

/// A 2026-07-28 server whose tool list may be cached for 1 s; `tools/call` answers on an event
/// stream that first says the list changed. Counts the `tools/list` requests.
fn cached_list(lists: Arc<std::sync::atomic::AtomicUsize>) -> Answer {
    Arc::new(move |seen: &Seen| {
        let id = id_of(&seen.body);
        if seen.body.contains("server/discover") {
            let result = r#"{"supportedVersions":["2026-07-28"],"capabilities":{}}"#;
            return (
                200,
                "application/json",
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            );
        }
        if seen.body.contains("tools/list") {
            lists.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let result = r#"{"resultType":"complete","ttlMs":1000,"cacheScope":"private","tools":[{"name":"t","inputSchema":{"type":"object"}}]}"#;
            return (
                200,
                "application/json",
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            );
        }
        let body = format!(
            "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}}\n\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"resultType\":\"complete\",\"content\":[]}}}}\n\n"
        );
        (200, "text/event-stream", body)
    })
}

#[tokio::test(start_paused = true)]
async fn lists_are_cached_for_their_ttl_and_dropped_on_list_changed() {
    let lists = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (url, _) = serve(cached_list(Arc::clone(&lists))).await;
    let client = Client::builder().connect_http(&url).await.unwrap();
    let count = || lists.load(std::sync::atomic::Ordering::SeqCst);
    client.list_tools().await.unwrap();
    assert_eq!(count(), 1);
    // Fresh until 1 s after it was read: at 999 ms from the cache, at 1,000 ms asked again.
    tokio::time::advance(std::time::Duration::from_millis(999)).await;
    client.list_tools().await.unwrap();
    assert_eq!(count(), 1);
    tokio::time::advance(std::time::Duration::from_millis(1)).await;
    client.list_tools().await.unwrap();
    assert_eq!(count(), 2);
    // A call whose stream says the list changed drops the cached one.
    client
        .call_tool("t", tollgate_client::json::JsonObject::new())
        .await
        .unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(count(), 3);
}

/// A server choosing `revision` that answers `tools/list` with a JSON batch (a log message, then
/// the answer) and `tools/call` with an event whose data is a batch (an `elicitation/create`,
/// then the answer), sending what 2025-03-26 does not define (titles, output schemas,
/// structured results).
fn batching(revision: &'static str) -> Answer {
    Arc::new(move |seen: &Seen| {
        let id = id_of(&seen.body);
        let log = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
        if seen.body.contains("\"method\":\"initialize\"") {
            let result = format!(
                r#"{{"protocolVersion":"{revision}","capabilities":{{}},"serverInfo":{{"name":"b","version":"1"}}}}"#
            );
            return (
                200,
                "application/json",
                format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            );
        }
        if seen.body.contains("\"method\":\"tools/list\"") {
            let tools = r#"{"tools":[{"name":"t","title":"T","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}]}"#;
            return (
                200,
                "application/json",
                format!(r#"[{log},{{"jsonrpc":"2.0","id":{id},"result":{tools}}}]"#),
            );
        }
        if seen.body.contains("\"method\":\"tools/call\"") {
            let ask = r#"{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}"#;
            let result = r#"{"content":[{"type":"text","text":"{\"total\":3}"}],"structuredContent":{"total":3}}"#;
            return (
                200,
                "text/event-stream",
                format!(
                    "data: [{ask},{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}]\n\n"
                ),
            );
        }
        older_server(seen)
    })
}

#[derive(Default)]
struct Counting(Arc<std::sync::atomic::AtomicUsize>);

impl tollgate_client::handler::Handler for Counting {
    fn notification(&self, _: &str, _: Option<&tollgate_client::json::JsonObject>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    fn request<'a>(
        &'a self,
        _: &'a str,
        _: Option<&'a tollgate_client::json::JsonObject>,
    ) -> tollgate_client::handler::HandlerFuture<'a> {
        // Would accept anything: a -32601 on the wire is the revision's refusal, not ours.
        Box::pin(async { Ok(tollgate_client::json::JsonObject::new().into()) })
    }
}

#[tokio::test]
async fn a_2025_03_26_server_s_batches_are_read_on_its_rules() {
    let (url, seen) = serve(batching("2025-03-26")).await;
    let notified = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let client = Client::builder()
        .handler(Counting(Arc::clone(&notified)))
        .connect_http(&url)
        .await
        .unwrap();
    assert_eq!(client.revision(), Revision::V2025_03_26);
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert!(tools[0].get("title").is_none() && tools[0].get("outputSchema").is_none());
    assert_eq!(notified.load(std::sync::atomic::Ordering::SeqCst), 1);
    let args = tollgate_client::json::JsonObject::new();
    let result = client.call_tool("t", args).await.unwrap();
    assert!(result.get("structuredContent").is_none());
    let seen = seen.lock().unwrap().clone();
    // The elicitation 2025-03-26 does not define was refused without asking the handler.
    let reply = seen
        .iter()
        .find(|s| s.body.contains("\"id\":\"e1\""))
        .unwrap();
    assert!(reply.body.contains("-32601"), "{}", reply.body);
    // 2025-03-26 has no revision header; the session id rides on every message after it.
    let posts: Vec<_> = seen.iter().filter(|s| s.method == "POST").collect();
    let after = posts
        .iter()
        .skip_while(|s| !s.body.contains("initialize"))
        .skip(1);
    for later in after {
        assert_eq!(later.header("mcp-protocol-version"), None, "{}", later.body);
        assert_eq!(later.header("mcp-session-id"), Some("s-1"));
    }
}

#[tokio::test]
async fn a_batch_is_refused_on_a_revision_without_them() {
    let (url, _) = serve(batching("2025-06-18")).await;
    let client = Client::builder().connect_http(&url).await.unwrap();
    assert_eq!(client.revision(), Revision::V2025_06_18);
    let err = client.list_tools().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
}

#[tokio::test]
async fn the_2024_11_05_sse_endpoint_must_be_on_the_server_s_origin() {
    for data in [
        "http://elsewhere.example/messages",
        "//elsewhere.example/messages",
        "https://127.0.0.1/messages",
    ] {
        let body = format!("event: endpoint\ndata: {data}\n\n");
        let (url, seen) = serve(Arc::new(move |_: &Seen| {
            (200, "text/event-stream", body.clone())
        }))
        .await;
        let err = Client::builder()
            .connect_legacy_sse(&url)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Protocol, "{data}");
        // Nothing was POSTed anywhere.
        assert!(seen.lock().unwrap().iter().all(|s| s.method == "GET"));
    }
    // A stream that ends with no endpoint event, and a URL that answers no stream.
    let (url, _) = serve(Arc::new(|_: &Seen| {
        (200, "text/event-stream", "data: x\n\n".to_owned())
    }))
    .await;
    let err = Client::builder()
        .connect_legacy_sse(&url)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Protocol);
    let (url, _) = serve(Arc::new(|_: &Seen| (404, "text/plain", String::new()))).await;
    let err = Client::builder()
        .connect_legacy_sse(&url)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Status);
}

/// A 2024-11-05 HTTP+SSE server by hand: the `GET` stream stays open, names `/messages` as its
/// endpoint, and answers each POSTed request on the stream.
#[tokio::test]
async fn the_2024_11_05_sse_transport_posts_and_reads_answers_on_the_stream() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let mut stream: Option<tokio::net::TcpStream> = None;
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (mut socket, _) = accepted.unwrap();
                    let mut buf = vec![0u8; 8192];
                    let n = socket.read(&mut buf).await.unwrap();
                    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                    if text.starts_with("GET") {
                        socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nevent: endpoint\ndata: /messages?s=1\n\n").await.unwrap();
                        stream = Some(socket);
                    } else {
                        let body = text.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
                        socket.write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await.unwrap();
                        let _ = tx.send(body);
                    }
                }
                Some(body) = rx.recv() => {
                    let id = id_of(&body);
                    let result = if body.contains("\"initialize\"") {
                        r#"{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"s","version":"1"}}"#
                    } else if body.contains("tools/list") {
                        // Pretty-printed over two data lines: still one message.
                        "{\"tools\":[{\"name\":\"t\",\ndata: \"inputSchema\":{\"type\":\"object\"}}]}"
                    } else {
                        continue;
                    };
                    let event = format!("event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}\n\n");
                    stream.as_mut().unwrap().write_all(event.as_bytes()).await.unwrap();
                }
            }
        }
    });
    let client = Client::builder()
        .connect_legacy_sse(&format!("http://{addr}/sse"))
        .await
        .unwrap();
    assert_eq!(client.revision(), Revision::V2024_11_05);
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    client.close().await.unwrap();
}
