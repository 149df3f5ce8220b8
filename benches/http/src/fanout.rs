//! The fan-out driver: opens `LISTENERS` idle streams on the fan-out server (`MODE=listen`:
//! 2026-07-28 `subscriptions/listen` streams following `bench://feed`; `MODE=get`: 2025-11-25
//! sessions subscribed to it, each with its standalone GET stream), reads the server's resident
//! memory before and after (`SERVER_PID`), then has `UPDATES` updates announced one after the
//! other and times each from the `touch` call's sending to each stream's receipt of
//! `notifications/resources/updated`. Prints one JSON line: memory per idle stream and, per
//! update, the p50, p99 and last delivery. Driven by scripts/bench-fanout; one connection per
//! stream, opened 256 at a time.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, Response, body::Incoming};
use hyper_util::rt::TokioIo;
use tokio::sync::{Semaphore, mpsc};

type Error = Box<dyn std::error::Error + Send + Sync>;

const PATTERN: &[u8] = b"notifications/resources/updated";
const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn connect(port: u16) -> Result<SendRequest<Full<Bytes>>, Error> {
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

fn post(headers: &[(&str, &str)], body: String) -> Result<Request<Full<Bytes>>, Error> {
    let mut request = Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    Ok(request.body(Full::new(Bytes::from(body)))?)
}

async fn send(
    sender: &mut SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> Result<Response<Incoming>, Error> {
    sender.ready().await?;
    let response = sender.send_request(request).await?;
    if !response.status().is_success() {
        return Err(format!("status {}", response.status()).into());
    }
    Ok(response)
}

/// Sends one request and reads its whole answer.
async fn exchange(
    sender: &mut SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> Result<(hyper::HeaderMap, Bytes), Error> {
    let response = send(sender, request).await?;
    let headers = response.headers().clone();
    Ok((headers, response.into_body().collect().await?.to_bytes()))
}

/// Opens one stream as `mode` says; its answer's body, once the stream is acknowledged (listen)
/// or open (GET).
async fn open(port: u16, mode: &str, n: usize) -> Result<Incoming, Error> {
    let mut sender = connect(port).await?;
    if mode == "listen" {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"subscriptions/listen","params":{{"notifications":{{"resourceSubscriptions":["bench://feed"]}},{MODERN_META}}}}}"#
        );
        let headers = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "subscriptions/listen"),
        ];
        let mut body = send(&mut sender, post(&headers, body)?).await?.into_body();
        // The acknowledgement is the stream's first event.
        body.frame()
            .await
            .ok_or("the listen ended unacknowledged")??;
        return Ok(body);
    }
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fanout","version":"1"}}}"#;
    let (headers, _) = exchange(&mut sender, post(&[], init.to_owned())?).await?;
    let session = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .ok_or("no session id")?
        .to_owned();
    let in_session = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    exchange(&mut sender, post(&in_session, initialized.to_owned())?).await?;
    let subscribe = r#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"bench://feed"}}"#;
    exchange(&mut sender, post(&in_session, subscribe.to_owned())?).await?;
    let mut get = Request::get("/mcp")
        .header("host", "127.0.0.1")
        .header("accept", "text/event-stream");
    for (name, value) in in_session {
        get = get.header(name, value);
    }
    let response = send(&mut sender, get.body(Full::new(Bytes::new()))?).await?;
    Ok(response.into_body())
}

/// Reports the receipt of every announcement on `body` until it ends.
async fn follow(mut body: Incoming, hits: mpsc::UnboundedSender<Instant>) {
    let mut tail: Vec<u8> = Vec::new();
    while let Some(Ok(frame)) = body.frame().await {
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let now = Instant::now();
        tail.extend_from_slice(&data);
        let mut from = 0;
        while let Some(at) = find(&tail[from..]) {
            let _ = hits.send(now);
            from += at + PATTERN.len();
        }
        let keep = tail.len().saturating_sub(PATTERN.len() - 1).max(from);
        tail.drain(..keep);
    }
}

fn find(haystack: &[u8]) -> Option<usize> {
    haystack.windows(PATTERN.len()).position(|w| w == PATTERN)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted
        .get(at)
        .map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
}

async fn touch(sender: &mut SendRequest<Full<Bytes>>, id: usize) -> Result<(), Error> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"touch","arguments":{{}},{MODERN_META}}}}}"#
    );
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "touch"),
    ];
    exchange(sender, post(&headers, body)?).await?;
    Ok(())
}

async fn run() -> Result<(), Error> {
    let port: u16 = env("PORT", 18400);
    let mode: String = env("MODE", "listen".to_owned());
    let listeners: usize = env("LISTENERS", 10_000);
    let updates: usize = env("UPDATES", 20);
    let pid: u32 = env("SERVER_PID", 0);
    let mut control = connect(port).await?;
    touch(&mut control, 0).await?; // warm
    let before = rss_kib(pid);
    let (hits_tx, mut hits) = mpsc::unbounded_channel();
    let (ready_tx, mut ready) = mpsc::unbounded_channel();
    let gate = std::sync::Arc::new(Semaphore::new(256));
    let started = Instant::now();
    for n in 0..listeners {
        let (hits_tx, ready_tx, gate, mode) = (
            hits_tx.clone(),
            ready_tx.clone(),
            gate.clone(),
            mode.clone(),
        );
        tokio::spawn(async move {
            let opened = {
                let _place = gate.acquire().await;
                open(port, &mode, n + 10).await
            };
            let ok = opened.is_ok();
            let _ = ready_tx.send(opened.as_ref().err().map(ToString::to_string));
            if let (true, Ok(body)) = (ok, opened) {
                follow(body, hits_tx).await;
            }
        });
    }
    drop(hits_tx);
    for _ in 0..listeners {
        match tokio::time::timeout(Duration::from_secs(120), ready.recv()).await {
            Ok(Some(None)) => {}
            Ok(Some(Some(error))) => return Err(format!("a stream did not open: {error}").into()),
            _ => return Err("the streams did not all open within 120 s".into()),
        }
    }
    let opening = started.elapsed();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = rss_kib(pid);
    let mut rows = Vec::new();
    for u in 0..updates {
        let sent = Instant::now();
        touch(&mut control, u + 1).await?;
        let mut took = Vec::with_capacity(listeners);
        while took.len() < listeners {
            match tokio::time::timeout(Duration::from_secs(10), hits.recv()).await {
                Ok(Some(at)) => took.push(at.saturating_duration_since(sent)),
                _ => {
                    return Err(
                        format!("update {u}: {} of {listeners} delivered", took.len()).into(),
                    );
                }
            }
        }
        took.sort();
        rows.push(format!(
            "[{:.3},{:.3},{:.3}]",
            percentile(&took, 0.5),
            percentile(&took, 0.99),
            percentile(&took, 1.0)
        ));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let per_stream = (after.saturating_sub(before) as f64 * 1024.0) / listeners as f64;
    println!(
        r#"{{"mode":"{mode}","listeners":{listeners},"opened_s":{:.2},"rss_before_kib":{before},"rss_after_kib":{after},"bytes_per_stream":{per_stream:.0},"updates_ms":[{}]}}"#,
        opening.as_secs_f64(),
        rows.join(",")
    );
    Ok(())
}

fn main() -> Result<(), Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(run())
}
