//! The built-in server's edge over real loopback sockets, with tokio's paused clock (time
//! advances only when every task waits, so no test sleeps): the head-or-idle timeout at its bound
//! and past it (and not while a call is served, its answer streams or a large answer is read
//! slowly), the request body's pace (its timeout and least rate) at the bound and past it, the
//! connection limit's refusal and its shedding of the slowest waiting connection, the per-peer
//! cap (distinct peers from distinct loopback addresses such as 127.0.0.2), trusted proxies, and
//! graceful shutdown's bound on in-flight requests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

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

/// Answers with the request's peer address, as the service took it.
async fn whoami(
    context: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let peer = context.originating_request().peer_addr();
    let output = ToolOutput::builder()
        .add_content(TextContent::new(format!("peer {peer:?}")))
        .build();
    Ok(CompleteResult::with_tool_output(output).build().into())
}

fn endpoint() -> Endpoint {
    Endpoint::with_path("/mcp", [V], Implementation::new("edge", "1"))
        .add_tool(
            ToolRegistration::with_name("slow", [V])
                .json_object_arguments()
                .handler(slow)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("whoami", [V])
                .json_object_arguments()
                .handler(whoami)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

fn service() -> McpService {
    McpService::new(endpoint())
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
    serve_service(limits, service()).await
}

/// `serve` with a service of one's own.
async fn serve_service(
    limits: ServerLimits,
    service: McpService,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), service)
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
    // Two connections, each serving a call of a second: busy, so neither can be shed.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(call_request(addr, 1_000, false).as_bytes())
            .await
            .unwrap();
        held.push(s);
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
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
    // The calls answered, their connections are idle keep-alive; a place frees up when one
    // closes: a connection arriving just as one closes waits for it rather than being refused.
    for s in &mut held {
        assert!(read_response(s).await.unwrap().contains("slept 1000"));
    }
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

/// A connection from the loopback address `from` (127.0.0.2 is another peer than 127.0.0.1).
async fn connect_from(from: [u8; 4], addr: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::from((from, 0))).unwrap();
    socket.connect(addr).await.unwrap()
}

/// A call whose body is padded with spaces to `length` bytes, as its head (with the first
/// `first` body bytes) and the rest.
fn padded_call(addr: SocketAddr, length: usize, first: usize) -> (String, String) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"slow","arguments":{{"ms":0}},{}}}}}"#,
        support::META
    );
    assert!(body.len() <= length);
    let body = format!("{body}{}", " ".repeat(length - body.len()));
    let request = with_body(addr, &body, false);
    let split = request.find("\r\n\r\n").unwrap() + 4 + first;
    let (head, rest) = request.split_at(split);
    (head.to_owned(), rest.to_owned())
}

/// Writes `rest` in chunks of `chunk` bytes, one every `every`, stopping quietly if the server
/// closed; then reads the answer (`None` when the connection closed unanswered).
async fn trickle(
    stream: &mut TcpStream,
    rest: &str,
    chunk: usize,
    every: Duration,
) -> Option<String> {
    for piece in rest.as_bytes().chunks(chunk) {
        // Waits `every`, or less when the server has answered (or closed) first.
        if tokio::time::timeout(every, stream.readable()).await.is_ok()
            || stream.write_all(piece).await.is_err()
        {
            break;
        }
    }
    read_response(stream).await
}

/// A body paced at `chunk` bytes every `every` under a 10 s body timeout and at least 100 bytes a
/// second after 2 s: the answer, and when it came.
async fn paced(length: usize, chunk: usize, every: Duration) -> (Option<String>, Duration) {
    let limits = ServerLimits::new()
        .body_timeout(Duration::from_secs(10))
        .body_min_rate(100, Duration::from_secs(2));
    let (addr, _stop, _serving) = serve(limits).await;
    let (head, rest) = padded_call(addr, length, 0);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let began = Instant::now();
    let answer = trickle(&mut stream, &rest, chunk, every).await;
    let answered = began.elapsed();
    if answer
        .as_deref()
        .is_some_and(|a| a.starts_with("HTTP/1.1 408"))
    {
        assert!(closed(&mut stream).await, "closed after the 408");
    }
    (answer, answered)
}

#[tokio::test(start_paused = true)]
async fn a_trickled_body_is_answered_408_at_its_least_rate_and_closed() {
    // One byte every 2 s (the attack): cut when the grace is over, 408, `Connection: close`.
    let (answer, at) = paced(600, 1, Duration::from_secs(2)).await;
    let answer = answer.expect("a 408, not a reset");
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    assert!(
        at >= Duration::from_secs(2) && at < Duration::from_secs(3),
        "{at:?}"
    );
    // At the bound: 150 bytes a second, above the least rate throughout: served.
    let (answer, _) = paced(900, 150, Duration::from_secs(1)).await;
    assert!(answer.unwrap().starts_with("HTTP/1.1 200"));
    // Past it: 50 bytes a second falls behind 2 s + n / 100 at 4 s.
    let (answer, at) = paced(900, 50, Duration::from_secs(1)).await;
    assert!(answer.unwrap().starts_with("HTTP/1.1 408"));
    assert!(
        at >= Duration::from_secs(3) && at <= Duration::from_secs(5),
        "{at:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_body_must_arrive_whole_within_its_timeout() {
    // 300 bytes a second keeps ahead of the rate; the 10 s timeout still holds. At the bound:
    // the last chunk at 9 s, served.
    let (answer, _) = paced(2_700, 300, Duration::from_secs(1)).await;
    assert!(answer.unwrap().starts_with("HTTP/1.1 200"));
    // Past it: a body that needs 12 s is cut at 10 s.
    let (answer, at) = paced(3_600, 300, Duration::from_secs(1)).await;
    assert!(answer.unwrap().starts_with("HTTP/1.1 408"));
    assert!(
        at >= Duration::from_secs(10) && at < Duration::from_secs(11),
        "{at:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_flood_of_slow_bodies_does_not_lock_a_fresh_peer_out() {
    // Eight places, every one held by a connection from 127.0.0.1 that sent its head and one
    // body byte (no least rate, a minute's body timeout: held as long as the old server held
    // them).
    let limits = ServerLimits::new()
        .max_connections(8)
        .body_timeout(Duration::from_secs(60))
        .body_min_rate(0, Duration::ZERO);
    let (addr, _stop, _serving) = serve(limits).await;
    let mut flood = Vec::new();
    for _ in 0..8 {
        let (head, _) = padded_call(addr, 400, 1);
        let mut s = connect_from([127, 0, 0, 1], addr).await;
        s.write_all(head.as_bytes()).await.unwrap();
        flood.push(s);
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    // A fresh client from another peer is served at once: the slowest is shed for it.
    let asked = Instant::now();
    let mut fresh = connect_from([127, 0, 0, 2], addr).await;
    fresh
        .write_all(call_request(addr, 0, true).as_bytes())
        .await
        .unwrap();
    let answer = read_response(&mut fresh).await.expect("served");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        asked.elapsed() < Duration::from_millis(200),
        "{:?}",
        asked.elapsed()
    );
    // Exactly one flood connection was closed for it.
    let mut shed = 0;
    for s in &mut flood {
        let mut byte = [0u8; 1];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(10), s.read(&mut byte)).await
        {
            assert_eq!(n, 0);
            shed += 1;
        }
    }
    assert_eq!(shed, 1);
}

#[tokio::test(start_paused = true)]
async fn a_waiting_connection_is_shed_before_a_busy_one_and_the_slowest_first() {
    let (addr, _stop, _serving) = serve(ServerLimits::new().max_connections(3)).await;
    // A connection serving a 10 s call, one idle after an answer, one with a body half-read.
    let mut busy = TcpStream::connect(addr).await.unwrap();
    busy.write_all(call_request(addr, 10_000, false).as_bytes())
        .await
        .unwrap();
    let mut idle = answered_connections(addr, 1).await.remove(0);
    let (head, _) = padded_call(addr, 400, 1);
    let mut half = TcpStream::connect(addr).await.unwrap();
    half.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    // The next sheds the half-read one; the one after, the idle one; the busy one never.
    for shed in [&mut half, &mut idle] {
        let mut next = connect_from([127, 0, 0, 2], addr).await;
        next.write_all(call_request(addr, 0, true).as_bytes())
            .await
            .unwrap();
        assert!(
            read_response(&mut next)
                .await
                .unwrap()
                .starts_with("HTTP/1.1 200")
        );
        assert!(closed(shed).await);
    }
    assert!(
        read_response(&mut busy)
            .await
            .unwrap()
            .contains("slept 10000")
    );
}

#[tokio::test(start_paused = true)]
async fn a_peer_holds_at_most_its_cap_of_connections() {
    let limits = ServerLimits::new().max_connections_per_peer(2);
    let (addr, _stop, _serving) = serve(limits).await;
    // At the cap: two from 127.0.0.1, both served and held.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut s = connect_from([127, 0, 0, 1], addr).await;
        s.write_all(call_request(addr, 0, false).as_bytes())
            .await
            .unwrap();
        assert!(
            read_response(&mut s)
                .await
                .unwrap()
                .starts_with("HTTP/1.1 200")
        );
        held.push(s);
    }
    // One past it from the same peer: the busy refusal.
    let mut past = connect_from([127, 0, 0, 1], addr).await;
    past.write_all(call_request(addr, 0, false).as_bytes())
        .await
        .unwrap();
    let refusal = read_response(&mut past)
        .await
        .expect("an answer, not a reset");
    assert!(refusal.starts_with("HTTP/1.1 503 "), "{refusal}");
    assert!(
        refusal.ends_with(r#""message":"Server busy"}}"#),
        "{refusal}"
    );
    // Another peer is served.
    let mut other = connect_from([127, 0, 0, 2], addr).await;
    other
        .write_all(call_request(addr, 0, true).as_bytes())
        .await
        .unwrap();
    assert!(
        read_response(&mut other)
            .await
            .unwrap()
            .starts_with("HTTP/1.1 200")
    );
    // A place given back is the peer's again.
    drop(held.pop());
    tokio::time::sleep(Duration::from_millis(10)).await;
    let mut again = connect_from([127, 0, 0, 1], addr).await;
    again
        .write_all(call_request(addr, 0, true).as_bytes())
        .await
        .unwrap();
    assert!(
        read_response(&mut again)
            .await
            .unwrap()
            .starts_with("HTTP/1.1 200")
    );
}

/// A `whoami` call with `X-Forwarded-For: 203.0.113.9` from `from`: the peer it saw.
async fn whoami_from(from: [u8; 4], addr: SocketAddr, stream: Option<&mut TcpStream>) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"whoami","arguments":{{}},{}}}}}"#,
        support::META
    );
    let request = with_body(addr, &body, false)
        .replacen("Mcp-Name: slow", "Mcp-Name: whoami", 1)
        .replacen(
            "\r\n\r\n",
            "\r\nX-Forwarded-For: 198.51.100.1, 203.0.113.9\r\n\r\n",
            1,
        );
    let mut own = None;
    let stream = match stream {
        Some(s) => s,
        None => own.insert(connect_from(from, addr).await),
    };
    stream.write_all(request.as_bytes()).await.unwrap();
    let answer = read_response(stream).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let at = answer.find("peer ").unwrap();
    answer[at..].split('"').next().unwrap().to_owned()
}

#[tokio::test(start_paused = true)]
async fn a_trusted_proxy_names_the_client_and_is_not_held_to_the_per_peer_cap() {
    let service = McpService::builder()
        .endpoint(endpoint())
        .trusted_proxy("127.0.0.1")
        .build()
        .unwrap();
    let limits = ServerLimits::new().max_connections_per_peer(1);
    let (addr, _stop, _serving) = serve_service(limits, service).await;
    // From the proxy: the client it forwarded for (the rightmost untrusted hop), on as many
    // connections as the proxy opens.
    let mut proxied = Vec::new();
    for _ in 0..3 {
        let mut s = connect_from([127, 0, 0, 1], addr).await;
        let peer = whoami_from([127, 0, 0, 1], addr, Some(&mut s)).await;
        assert_eq!(peer, "peer Some(203.0.113.9:0)");
        proxied.push(s);
    }
    // From anyone else the header is not believed, and the cap holds.
    let mut direct = connect_from([127, 0, 0, 2], addr).await;
    let peer = whoami_from([127, 0, 0, 2], addr, Some(&mut direct)).await;
    assert!(peer.starts_with("peer Some(127.0.0.2:"), "{peer}");
    let mut past = connect_from([127, 0, 0, 2], addr).await;
    past.write_all(call_request(addr, 0, false).as_bytes())
        .await
        .unwrap();
    assert!(
        read_response(&mut past)
            .await
            .unwrap()
            .starts_with("HTTP/1.1 503")
    );
    // A proxy that is not an address or network fails the build.
    let invalid = McpService::builder()
        .endpoint(endpoint())
        .trusted_proxy("10.0.0.0/33")
        .build();
    assert!(invalid.is_err());
}

#[tokio::test(start_paused = true)]
async fn a_peer_holds_at_most_its_budget_of_body_bytes_in_unanswered_requests() {
    const KIB: usize = 1024;
    let service = McpService::builder()
        .endpoint(endpoint())
        .max_body_bytes_per_peer(256 * KIB)
        .build()
        .unwrap();
    let limits = ServerLimits::new().body_min_rate(0, Duration::ZERO);
    let (addr, _stop, _serving) = serve_service(limits, service).await;
    // One request holds 150 KiB of a 300 KiB body, the rest not yet sent.
    let (head, _) = padded_call(addr, 300 * KIB, 150 * KIB);
    let mut holding = connect_from([127, 0, 0, 1], addr).await;
    holding.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let call = |length: usize, from: [u8; 4]| async move {
        let (head, rest) = padded_call(addr, length, 0);
        let mut s = connect_from(from, addr).await;
        s.write_all(format!("{head}{rest}").as_bytes())
            .await
            .unwrap();
        read_response(&mut s).await.unwrap()
    };
    // At the bound: 100 KiB more from the same peer fits (250 of 256 KiB).
    assert!(
        call(100 * KIB, [127, 0, 0, 1])
            .await
            .starts_with("HTTP/1.1 200")
    );
    // Past it: 120 KiB more does not: the busy refusal, retryable.
    let refused = call(120 * KIB, [127, 0, 0, 1]).await;
    assert!(refused.starts_with("HTTP/1.1 503 "), "{refused}");
    assert!(refused.to_ascii_lowercase().contains("retry-after: 1\r\n"));
    assert!(refused.contains(r#""message":"Server busy""#), "{refused}");
    // Another peer has a budget of its own; 64 KiB bodies are not counted at all.
    assert!(
        call(120 * KIB, [127, 0, 0, 2])
            .await
            .starts_with("HTTP/1.1 200")
    );
    assert!(
        call(64 * KIB, [127, 0, 0, 1])
            .await
            .starts_with("HTTP/1.1 200")
    );
    // Answered, the held request gives its bytes back.
    drop(holding);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        call(120 * KIB, [127, 0, 0, 1])
            .await
            .starts_with("HTTP/1.1 200")
    );
}
