//! The built-in server's edge over real loopback sockets, with tokio's paused clock (time
//! advances only when every task waits, so no test sleeps): the head-or-idle timeout at its bound
//! and past it (and not while a call is served, its answer streams or a large answer is read
//! slowly), the connection limit's refusal, and graceful shutdown's bound on in-flight
//! requests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

mod support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tollgate::json::JsonObject;
use tollgate::transport::ServerLimits;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    Server, ToolArguments, ToolRegistration,
    content::TextContent,
    context::ProgressReporter,
    tool::{CompleteResult, OperationResult, ToolOutput},
};

const V: ProtocolVersion = ProtocolVersion::V2026_07_28;

/// Reports progress when asked (so its answer is an event stream, open from then on), sleeps
/// `ms` (virtual time), then answers.
async fn slow(
    _: &RequestContext,
    args: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    if let Some(progress) = features.find::<ProgressReporter>() {
        let _ = progress.report(1.0, Some(2.0), None);
    }
    let ms = args
        .raw()
        .get("ms")
        .and_then(|v| v.as_number())
        .and_then(|n| n.to_u64())
        .unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    // `blocks` text blocks of a million characters each: an answer larger than the sockets'
    // buffers.
    let blocks = args
        .raw()
        .get("blocks")
        .and_then(|v| v.as_number())
        .and_then(|n| n.to_u64())
        .unwrap_or(0);
    let mut output = ToolOutput::builder().add_content(TextContent::new(format!("slept {ms}")));
    for _ in 0..blocks {
        output = output.add_content(TextContent::new("x".repeat(1_000_000)));
    }
    Ok(CompleteResult::with_tool_output(output.build())
        .build()
        .into())
}

fn service() -> McpService {
    let endpoint = Endpoint::with_path("/mcp", [V], Implementation::new("edge", "1"))
        .add_tool(
            ToolRegistration::with_name("slow", [V])
                .json_object_arguments()
                .handler(slow)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    McpService::new(endpoint)
}

/// A server with `limits`, stopped when the returned sender fires; the join handle yields when
/// `serve_with_shutdown` returned.
async fn serve(
    limits: ServerLimits,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), service())
        .await
        .unwrap();
    start(server.limits(limits))
}

/// `serve`, on a listener whose connections have small socket buffers (set, so the kernel does
/// not grow them): a large answer waits in the server, not in the kernel.
async fn serve_small_buffers(
    limits: ServerLimits,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_send_buffer_size(SMALL_BUFFER).unwrap();
    // The kernel may round it up (Linux doubles it), but must not leave it tuned.
    assert!(socket.send_buffer_size().unwrap() <= 4 * SMALL_BUFFER);
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(64).unwrap();
    start(Server::from_listener(listener, service()).limits(limits))
}

const SMALL_BUFFER: u32 = 16 * 1024;

/// A client connection with a small receive buffer.
async fn connect_small(addr: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(SMALL_BUFFER).unwrap();
    assert!(socket.recv_buffer_size().unwrap() <= 4 * SMALL_BUFFER);
    socket.connect(addr).await.unwrap()
}

fn start(
    server: Server,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_with_shutdown(async {
        let _ = stopped.await;
    }));
    (addr, stop, serving)
}

fn call_request(addr: SocketAddr, ms: u64, close: bool) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"slow","arguments":{{"ms":{ms}}},{}}}}}"#,
        support::META
    );
    with_body(addr, &body, close)
}

/// A call whose answer is `blocks` million-character text blocks (about `blocks` MB).
fn large_call_request(addr: SocketAddr, blocks: u64) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"slow","arguments":{{"ms":0,"blocks":{blocks}}},{}}}}}"#,
        support::META
    );
    with_body(addr, &body, false)
}

/// The head and as much of the body as arrives, reading `chunk` bytes at a time with `pause`
/// between reads, until the `Content-Length` body is complete or the connection closes; and
/// whether it was complete.
async fn read_slowly(stream: &mut TcpStream, chunk: usize, pause: Duration) -> (Vec<u8>, bool) {
    let mut got = Vec::new();
    let mut buf = vec![0u8; chunk];
    loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap();
            if got.len() >= end + 4 + length {
                return (got, true);
            }
        }
        match stream.read(&mut buf).await {
            Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => return (got, false),
        }
        tokio::time::sleep(pause).await;
    }
}

/// The call of `call_request` with a progress token: answered as an event stream.
fn streamed_call_request(addr: SocketAddr, ms: u64) -> String {
    let meta = support::META.replacen('{', r#"{"progressToken":"p","#, 1);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"slow","arguments":{{"ms":{ms}}},{meta}}}}}"#
    );
    with_body(addr, &body, false)
}

fn with_body(addr: SocketAddr, body: &str, close: bool) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: slow\r\n{}Content-Length: {}\r\n\r\n{body}",
        addr.port(),
        if close { "Connection: close\r\n" } else { "" },
        body.len()
    )
}

/// Reads one response (head and `Content-Length` body) off a keep-alive connection; `None` at
/// end of stream.
async fn read_response(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => buf.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.ok()?;
    Some(head + &String::from_utf8_lossy(&body))
}

/// `n` connections, each left open (keep-alive) after one answered request.
async fn answered_connections(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut open = Vec::new();
    for _ in 0..n {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(call_request(addr, 0, false).as_bytes())
            .await
            .unwrap();
        assert!(read_response(&mut s).await.is_some());
        open.push(s);
    }
    open
}

/// Whether the peer closed: a read returns end of stream (or an error).
async fn closed(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.read(&mut byte).await, Ok(0) | Err(_))
}

/// Asserts that `stream`, idle from now, is closed `timeout` later (within a second past it).
async fn assert_closed_after(stream: &mut TcpStream, timeout: Duration) {
    let idle = Instant::now();
    assert!(closed(stream).await);
    let waited = idle.elapsed();
    assert!(
        waited >= timeout && waited < timeout + Duration::from_secs(1),
        "{waited:?}"
    );
}

/// On a keep-alive connection just answered, under a 10 s timeout: idle just under the bound,
/// the next request is still served on it; idle past it, it is closed.
async fn served_at_the_bound_then_closed_past_it(stream: &mut TcpStream, addr: SocketAddr) {
    tokio::time::sleep(Duration::from_millis(9_900)).await;
    stream
        .write_all(call_request(addr, 0, false).as_bytes())
        .await
        .unwrap();
    assert!(read_response(stream).await.is_some());
    assert_closed_after(stream, Duration::from_secs(10)).await;
}

#[tokio::test(start_paused = true)]
async fn a_request_head_must_arrive_within_the_timeout() {
    let limits = ServerLimits::new().header_read_timeout(Duration::from_secs(30));
    let (addr, _stop, _serving) = serve(limits).await;
    let request = call_request(addr, 0, false);
    let (first, rest) = request.split_at(20);
    // At the bound: the head's last byte arrives just inside 30 s.
    let mut at = TcpStream::connect(addr).await.unwrap();
    at.write_all(first.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(29_900)).await;
    at.write_all(rest.as_bytes()).await.unwrap();
    let response = read_response(&mut at).await.expect("served");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    // Past it: a head still incomplete at 30 s closes the connection, unanswered.
    let mut past = TcpStream::connect(addr).await.unwrap();
    past.write_all(first.as_bytes()).await.unwrap();
    assert_closed_after(&mut past, Duration::from_secs(30)).await;
}

#[tokio::test(start_paused = true)]
async fn an_idle_keep_alive_connection_is_closed_after_the_same_timeout() {
    let limits = ServerLimits::new().header_read_timeout(Duration::from_secs(10));
    let (addr, _stop, _serving) = serve(limits).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(call_request(addr, 0, false).as_bytes())
        .await
        .unwrap();
    assert!(read_response(&mut stream).await.is_some());
    served_at_the_bound_then_closed_past_it(&mut stream, addr).await;
}

#[tokio::test(start_paused = true)]
async fn the_timeout_does_not_run_while_a_call_is_served_and_restarts_after_its_answer() {
    let limits = ServerLimits::new().header_read_timeout(Duration::from_secs(10));
    let (addr, _stop, _serving) = serve(limits).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // A call served for 25 s, two and a half timeouts: answered on the same connection.
    stream
        .write_all(call_request(addr, 25_000, false).as_bytes())
        .await
        .unwrap();
    let answered = read_response(&mut stream).await.expect("answered");
    assert!(answered.contains("slept 25000"), "{answered}");
    // The timeout starts again from the answer.
    served_at_the_bound_then_closed_past_it(&mut stream, addr).await;
}

#[tokio::test(start_paused = true)]
async fn the_timeout_does_not_run_while_a_response_streams() {
    let limits = ServerLimits::new().header_read_timeout(Duration::from_secs(10));
    let (addr, _stop, _serving) = serve(limits).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // The head and a progress event come at once; the answer ends the stream 25 s later.
    stream
        .write_all(streamed_call_request(addr, 25_000).as_bytes())
        .await
        .unwrap();
    let began = Instant::now();
    let mut text = Vec::new();
    let mut chunk = [0u8; 4096];
    while !text.ends_with(b"\r\n0\r\n\r\n") {
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(
            n > 0,
            "closed mid-stream: {}",
            String::from_utf8_lossy(&text)
        );
        text.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&text);
    assert!(text.contains("text/event-stream"), "{text}");
    assert!(text.contains("notifications/progress") && text.contains("slept 25000"));
    assert!(began.elapsed() >= Duration::from_secs(25));
    // Then the timeout starts again from the answer.
    served_at_the_bound_then_closed_past_it(&mut stream, addr).await;
}

#[tokio::test(start_paused = true)]
async fn a_large_answer_read_slowly_is_sent_whole_and_one_not_read_is_cut_at_the_timeout() {
    let limits = ServerLimits::new().header_read_timeout(Duration::from_secs(10));
    let (addr, _stop, _serving) = serve_small_buffers(limits).await;
    // About 3 MB, read 256 KiB (what the buffers hold) every 2 s: over a minute in all, each
    // pause well within the timeout.
    let mut slow_reader = connect_small(addr).await;
    slow_reader
        .write_all(large_call_request(addr, 3).as_bytes())
        .await
        .unwrap();
    let began = Instant::now();
    let (answer, whole) = read_slowly(&mut slow_reader, 256 * 1024, Duration::from_secs(2)).await;
    assert!(whole, "cut after {} bytes", answer.len());
    assert!(answer.len() > 3_000_000);
    assert!(began.elapsed() > Duration::from_secs(30));
    // A client that reads nothing of its answer: once the sockets' buffers are full, nothing
    // goes out, and the connection is closed one timeout later (what the buffers hold still
    // arrives, then the end).
    let mut non_reader = connect_small(addr).await;
    non_reader
        .write_all(large_call_request(addr, 3).as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(11)).await;
    let (answer, whole) = read_slowly(&mut non_reader, 256 * 1024, Duration::ZERO).await;
    assert!(!whole, "the whole answer ({} bytes) arrived", answer.len());
    assert!(answer.starts_with(b"HTTP/1.1 200"));
}

#[tokio::test(start_paused = true)]
async fn connections_past_the_limit_get_a_clear_refusal() {
    let (addr, _stop, _serving) = serve(ServerLimits::new().max_connections(2)).await;
    // Two connections, held open (keep-alive) after one request each.
    let mut held = answered_connections(addr, 2).await;
    // The third waits 100 ms for a place, then is refused: 503, Retry-After, the fixed busy
    // error, closed.
    let asked = Instant::now();
    let mut third = TcpStream::connect(addr).await.unwrap();
    third
        .write_all(call_request(addr, 0, false).as_bytes())
        .await
        .unwrap();
    let refusal = read_response(&mut third)
        .await
        .expect("an answer, not a reset");
    let waited = asked.elapsed();
    assert!(
        waited >= Duration::from_millis(100) && waited < Duration::from_millis(200),
        "{waited:?}"
    );
    assert!(refusal.starts_with("HTTP/1.1 503 "), "{refusal}");
    assert!(
        refusal.to_ascii_lowercase().contains("retry-after: 1\r\n"),
        "{refusal}"
    );
    assert!(
        refusal.ends_with(
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Server busy"}}"#
        ),
        "{refusal}"
    );
    assert!(closed(&mut third).await);
    // A place frees up when a held connection closes: a connection arriving just as one closes
    // waits for it rather than being refused.
    drop(held.pop());
    let mut fourth = TcpStream::connect(addr).await.unwrap();
    fourth
        .write_all(call_request(addr, 0, true).as_bytes())
        .await
        .unwrap();
    let served = read_response(&mut fourth).await.unwrap();
    assert!(served.starts_with("HTTP/1.1 200"), "{served}");
}

#[tokio::test(start_paused = true)]
async fn shutdown_closes_idle_connections_at_once() {
    let limits = ServerLimits::new().shutdown_timeout(Duration::from_secs(5));
    let (addr, stop, serving) = serve(limits).await;
    // Two keep-alive connections, each idle after an answer, and one never used.
    let mut idle = answered_connections(addr, 2).await;
    let mut unused = TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let began = Instant::now();
    stop.send(()).unwrap();
    // Nothing is in flight: every connection closes and shutdown ends without waiting for
    // its bound.
    for s in &mut idle {
        assert!(closed(s).await);
    }
    assert!(closed(&mut unused).await);
    serving.await.unwrap().unwrap();
    assert!(
        began.elapsed() < Duration::from_secs(1),
        "{:?}",
        began.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn shutdown_lets_in_flight_requests_finish_within_its_bound() {
    let limits = ServerLimits::new().shutdown_timeout(Duration::from_secs(5));
    let (addr, stop, serving) = serve(limits).await;
    // A call that needs 2 s, in flight when shutdown begins: it is answered.
    let mut quick = TcpStream::connect(addr).await.unwrap();
    quick
        .write_all(call_request(addr, 2_000, true).as_bytes())
        .await
        .unwrap();
    // A call that needs a minute: cut at the 5 s bound.
    let mut long = TcpStream::connect(addr).await.unwrap();
    long.write_all(call_request(addr, 60_000, true).as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let began = Instant::now();
    stop.send(()).unwrap();
    // New connections are no longer accepted.
    let answered = read_response(&mut quick)
        .await
        .expect("the in-flight call finished");
    assert!(answered.contains("slept 2000"), "{answered}");
    serving.await.unwrap().unwrap();
    let took = began.elapsed();
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(6),
        "{took:?}"
    );
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
}
