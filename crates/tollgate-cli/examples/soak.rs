//! A soak of the catalog demo on loopback: one million mixed requests by default — valid and
//! invalid calls, `tools/list`, `input_required` rounds with sealed state, 2025-11-25 sessions
//! (initialize, a call, `DELETE`), durable tasks answered through `tasks/update` and followed on
//! a `subscriptions/listen` stream, malformed and oversized bodies, abrupt disconnects — while
//! RSS, open descriptors, stored tasks and open sessions are sampled every two seconds. Fails if
//! any answer is wrong, or if RSS, descriptors or sessions grow past a stated bound after
//! warm-up; writes an SVG plot of RSS over time. Run by `scripts/soak [REQUESTS] [PLOT]` (not by
//! `scripts/test`); the figures go in `docs/reliability.md`.

#[path = "catalog/endpoint.rs"]
mod endpoint;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tollgate::task::InMemoryTaskStore;
use tollgate::{McpService, Server};

const MIX_CLIENTS: u64 = 14;
const TASK_CLIENTS: u64 = 2;
const RSS_GROWTH_BOUND_KIB: u64 = 64 * 1024;
const FD_GROWTH_BOUND: u64 = 64;
/// Each mix client holds at most one session at a time.
const SESSION_BOUND: usize = 2 * MIX_CLIENTS as usize;
const MAX_SECONDS: u64 = 3600;
const MODERN: &str = "MCP-Protocol-Version: 2026-07-28\r\n";
const TASKS: &str = r#""extensions":{"io.modelcontextprotocol/tasks":{}}"#;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn open_fds() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count() as u64)
        .unwrap_or(0)
}

/// One request on its own connection; the whole response (head and body) as text.
async fn exchange(
    addr: SocketAddr,
    method: &str,
    headers: &str,
    body: &[u8],
) -> Result<String, String> {
    let mut stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream
        .write_all(head.as_bytes())
        .await
        .map_err(|e| format!("write: {e}"))?;
    // The server may answer (and close) before the whole body is sent, e.g. for a declared
    // length over the limit: the answer is still there to read.
    let _ = stream.write_all(body).await;
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out).await;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// A 2026-07-28 request of `method` whose client declares `caps` (the inside of the object).
fn modern(n: u64, method: &str, name: Option<&str>, params: &str, caps: &str) -> (String, String) {
    let mut headers = format!("{MODERN}Mcp-Method: {method}\r\n");
    if let Some(name) = name {
        headers.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    let sep = if params.is_empty() { "" } else { "," };
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{n},"method":"{method}","params":{{{params}{sep}"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{{caps}}}}}}}}}"#
    );
    (headers, body)
}

fn expect(out: &str, needle: &str, what: &str) -> Result<(), String> {
    if out.contains(needle) {
        Ok(())
    } else {
        Err(format!("{what}: {}", &out[..out.len().min(300)]))
    }
}

/// The JSON string member `name` of a response (a plain token: no escapes).
fn member<'a>(out: &'a str, name: &str) -> Option<&'a str> {
    let marker = format!(r#""{name}":""#);
    let start = out.find(&marker)? + marker.len();
    let end = out[start..].find('"')?;
    Some(&out[start..start + end])
}

fn header<'a>(out: &'a str, name: &str) -> Option<&'a str> {
    let head = out.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// One turn of a mix client; returns how many requests it made.
async fn mix(addr: SocketAddr, n: u64) -> Result<u64, String> {
    let post = |h: String, b: String| async move { exchange(addr, "POST", &h, b.as_bytes()).await };
    let search = r#""name":"catalog.search","arguments":{"query":"tea"}"#;
    match n % 20 {
        0..=5 => {
            let (h, b) = modern(n, "tools/call", Some("catalog.search"), search, "");
            let out = post(h, b).await?;
            expect(
                &out,
                r#""structuredContent":{"items":[{"sku":"TEA-001""#,
                "a valid call",
            )?;
            Ok(1)
        }
        6 | 7 => {
            let (h, b) = modern(n, "tools/list", None, "", "");
            expect(
                &post(h, b).await?,
                r#""name":"catalog.search""#,
                "tools/list",
            )?;
            Ok(1)
        }
        8 | 9 => {
            let args = r#""name":"catalog.search","arguments":{"query":5}"#;
            let (h, b) = modern(n, "tools/call", Some("catalog.search"), args, "");
            let out = post(h, b).await?;
            expect(
                &out,
                "Arguments do not match the tool's inputSchema.",
                "invalid arguments",
            )?;
            Ok(1)
        }
        10 | 11 => {
            // An input_required round: asked, then answered with the sealed state.
            let ask = r#""name":"catalog.reserve","arguments":{"sku":"POT-001"}"#;
            let caps = r#""elicitation":{}"#;
            let (h, b) = modern(n, "tools/call", Some("catalog.reserve"), ask, caps);
            let out = post(h, b).await?;
            expect(&out, r#""resultType":"input_required""#, "an input request")?;
            let state = member(&out, "requestState").ok_or("no requestState")?;
            let retry = format!(
                r#"{ask},"inputResponses":{{"quantity":{{"action":"accept","content":{{"quantity":2}}}}}},"requestState":"{state}""#
            );
            let (h, b) = modern(n, "tools/call", Some("catalog.reserve"), &retry, caps);
            expect(
                &post(h, b).await?,
                "Reserved 2 × Cast iron teapot.",
                "the answered round",
            )?;
            Ok(2)
        }
        12..=14 => {
            // A 2025-11-25 session: initialize, one call, DELETE.
            let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}"#;
            let out = exchange(addr, "POST", "", init.as_bytes()).await?;
            let session = header(&out, "mcp-session-id")
                .ok_or_else(|| format!("no session: {}", &out[..out.len().min(300)]))?
                .to_owned();
            let h = format!("MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {session}\r\n");
            let call = format!(
                r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{{search}}}}}"#
            );
            let out = exchange(addr, "POST", &h, call.as_bytes()).await?;
            expect(&out, r#"\"sku\":\"TEA-001\""#, "a session call")
                .or_else(|_| expect(&out, r#""sku":"TEA-001""#, "a session call"))?;
            let out = exchange(addr, "DELETE", &h, b"").await?;
            expect(&out, "HTTP/1.1 2", "ending the session")?;
            Ok(3)
        }
        15 => {
            let big = vec![b' '; 10 * 1024 * 1024 + 1];
            let h = format!("{MODERN}Mcp-Method: tools/list\r\n");
            expect(
                &exchange(addr, "POST", &h, &big).await?,
                "-32700",
                "an oversized body",
            )?;
            Ok(1)
        }
        16 | 17 => {
            let out = exchange(addr, "POST", MODERN, b"{\"jsonrpc\":").await?;
            expect(&out, "-32700", "malformed JSON")?;
            Ok(1)
        }
        _ => {
            // An abrupt disconnect halfway through a body.
            let mut stream = TcpStream::connect(addr)
                .await
                .map_err(|e| format!("connect: {e}"))?;
            let _ = stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"")
                .await;
            Ok(1)
        }
    }
}

/// Follows a task on a `subscriptions/listen` stream until it reports `completed`.
async fn listen_until_completed(addr: SocketAddr, id: String) -> Result<(), String> {
    let params = format!(r#""notifications":{{"taskIds":["{id}"]}}"#);
    let (h, b) = modern(1, "subscriptions/listen", None, &params, TASKS);
    let mut stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{h}Content-Length: {}\r\n\r\n{b}",
        b.len()
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("write: {e}"))?;
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let read = tokio::time::timeout(Duration::from_secs(1), stream.read(&mut buf)).await;
        match read {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => {
                seen.extend_from_slice(&buf[..n]);
                if String::from_utf8_lossy(&seen).contains(r#""status":"completed""#) {
                    return Ok(());
                }
            }
            Err(_) => {}
        }
    }
    Err(format!(
        "the listen stream never reported completion: {}",
        String::from_utf8_lossy(&seen)
            .chars()
            .take(300)
            .collect::<String>()
    ))
}

/// One durable task from start to end; returns how many requests it made.
async fn task(addr: SocketAddr, n: u64) -> Result<u64, String> {
    let caps = format!(r#""elicitation":{{}},{TASKS}"#);
    let create = r#""name":"catalog.restock","arguments":{"sku":"MUG-001","quantity":2}"#;
    let (h, b) = modern(n, "tools/call", Some("catalog.restock"), create, &caps);
    let out = exchange(addr, "POST", &h, b.as_bytes()).await?;
    expect(&out, r#""resultType":"task""#, "a task")?;
    let id = member(&out, "taskId").ok_or("no taskId")?.to_owned();
    let listening = tokio::spawn(listen_until_completed(addr, id.clone()));
    let mut requests = 2;
    let get = |n: u64| {
        modern(
            n,
            "tasks/get",
            Some(&id),
            &format!(r#""taskId":"{id}""#),
            &caps,
        )
    };
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let (h, b) = get(n);
        let out = exchange(addr, "POST", &h, b.as_bytes()).await?;
        requests += 1;
        if out.contains(r#""status":"input_required""#) {
            break;
        }
        expect(&out, r#""status":"working""#, "a working task")?;
    }
    let answer = format!(
        r#""taskId":"{id}","inputResponses":{{"approve":{{"action":"accept","content":{{"approve":true}}}}}}"#
    );
    let (h, b) = modern(n, "tasks/update", Some(&id), &answer, &caps);
    expect(
        &exchange(addr, "POST", &h, b.as_bytes()).await?,
        r#""resultType":"complete""#,
        "tasks/update",
    )?;
    requests += 1;
    listening.await.map_err(|e| format!("listener: {e}"))??;
    let (h, b) = get(n);
    let out = exchange(addr, "POST", &h, b.as_bytes()).await?;
    expect(
        &out,
        r#""structuredContent":{"sku":"MUG-001","ordered":2"#,
        "the task's result",
    )?;
    Ok(requests + 1)
}

/// RSS (MiB) over time as an SVG polyline, with the bound drawn as a dashed line.
fn plot(samples: &[(u64, u64, u64, usize, usize)], bound_kib: Option<u64>) -> String {
    let (w, h, pad) = (800.0, 320.0, 50.0);
    let t_max = samples.last().map_or(1, |s| s.0.max(1)) as f64;
    let peak = samples.iter().map(|s| s.1).max().unwrap_or(1);
    let top = bound_kib.unwrap_or(peak).max(peak) as f64 * 1.1 / 1024.0;
    let x = |t: u64| pad + (t as f64 / t_max) * (w - 2.0 * pad);
    let y = |kib: u64| h - pad - (kib as f64 / 1024.0 / top) * (h - 2.0 * pad);
    let points: Vec<String> = samples
        .iter()
        .map(|s| format!("{:.1},{:.1}", x(s.0), y(s.1)))
        .collect();
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<line x1="{pad}" y1="{b}" x2="{r}" y2="{b}" stroke="black"/>
<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{b}" stroke="black"/>
<text x="{r}" y="{t}" text-anchor="end">seconds (0 to {t_max:.0})</text>
<text x="10" y="{pad}" >RSS MiB</text>
<text x="{l}" y="{b}" text-anchor="end">0</text>
<text x="{l}" y="{top_y}" text-anchor="end">{top:.0}</text>
<polyline fill="none" stroke="steelblue" stroke-width="1.5" points="{p}"/>
"#,
        b = h - pad,
        r = w - pad,
        t = h - pad + 30.0,
        l = pad - 5.0,
        top_y = pad + 4.0,
        p = points.join(" ")
    );
    if let Some(bound) = bound_kib {
        svg.push_str(&format!(
            r#"<line x1="{pad}" y1="{by:.1}" x2="{r}" y2="{by:.1}" stroke="firebrick" stroke-dasharray="6 4"/>
<text x="{r}" y="{ty:.1}" text-anchor="end" fill="firebrick">bound: baseline + {m} MiB</text>
"#,
            by = y(bound),
            ty = y(bound) - 4.0,
            r = w - pad,
            m = RSS_GROWTH_BOUND_KIB / 1024
        ));
    }
    svg.push_str("</svg>\n");
    svg
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let target: u64 = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let plot_path = args.next();
    let store = Arc::new(InMemoryTaskStore::with_capacity(50_000));
    // Request state that opens on every retry: the soak measures memory without a replay store.
    let endpoint = endpoint::endpoint(Arc::clone(&store), None)?;
    let server = Server::bind("127.0.0.1:0".parse()?, McpService::new(endpoint.clone())).await?;
    let addr = server.local_addr()?;
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let tasks_done = Arc::new(AtomicU64::new(0));
    let mut clients = Vec::new();
    for c in 0..MIX_CLIENTS + TASK_CLIENTS {
        let (stop, done, tasks_done) = (stop.clone(), done.clone(), tasks_done.clone());
        clients.push(tokio::spawn(async move {
            let mut n = c;
            while !stop.load(Ordering::Relaxed) {
                let made = if c < MIX_CLIENTS {
                    mix(addr, n).await?
                } else {
                    let made = task(addr, n).await?;
                    tasks_done.fetch_add(1, Ordering::Relaxed);
                    made
                };
                done.fetch_add(made, Ordering::Relaxed);
                n += MIX_CLIENTS + TASK_CLIENTS;
            }
            Ok::<(), String>(())
        }));
    }
    let start = Instant::now();
    let warm_up = Duration::from_secs(20);
    let mut baseline = None;
    let mut samples = Vec::new();
    while start.elapsed() < Duration::from_secs(MAX_SECONDS) {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let sample = (
            start.elapsed().as_secs(),
            rss_kib(),
            open_fds(),
            store.len(),
            endpoint.open_sessions(),
        );
        println!(
            "t={:>4}s requests={:>9} tasks-finished={:>5} rss={} KiB fds={} stored-tasks={} sessions={}",
            sample.0,
            done.load(Ordering::Relaxed),
            tasks_done.load(Ordering::Relaxed),
            sample.1,
            sample.2,
            sample.3,
            sample.4
        );
        if start.elapsed() >= warm_up && baseline.is_none() {
            baseline = Some((sample.1, sample.2));
        }
        samples.push(sample);
        if done.load(Ordering::Relaxed) >= target || clients.iter().any(|c| c.is_finished()) {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await??;
    }
    let (base_rss, base_fds) = baseline.unwrap_or((samples[0].1, samples[0].2));
    let peak_rss = samples.iter().map(|s| s.1).max().unwrap_or(0);
    let peak_fds = samples.iter().map(|s| s.2).max().unwrap_or(0);
    let peak_sessions = samples.iter().map(|s| s.4).max().unwrap_or(0);
    let peak_tasks = samples.iter().map(|s| s.3).max().unwrap_or(0);
    if let Some(path) = plot_path {
        std::fs::write(&path, plot(&samples, Some(base_rss + RSS_GROWTH_BOUND_KIB)))?;
        println!("soak: plot written to {path}");
    }
    println!(
        "soak: {} requests ({} tasks) in {}s; RSS {:.1} -> peak {:.1} MiB (bound +{} MiB), fds {base_fds} -> peak {peak_fds} (bound +{FD_GROWTH_BOUND}), stored tasks peak {peak_tasks}, sessions peak {peak_sessions} (bound {SESSION_BOUND})",
        done.load(Ordering::Relaxed),
        tasks_done.load(Ordering::Relaxed),
        start.elapsed().as_secs(),
        base_rss as f64 / 1024.0,
        peak_rss as f64 / 1024.0,
        RSS_GROWTH_BOUND_KIB / 1024,
    );
    if done.load(Ordering::Relaxed) < target {
        return Err("the soak ended before its requests were done".into());
    }
    if peak_rss > base_rss + RSS_GROWTH_BOUND_KIB
        || peak_fds > base_fds + FD_GROWTH_BOUND
        || peak_sessions > SESSION_BOUND
    {
        return Err("resource growth past the bound".into());
    }
    Ok(())
}
