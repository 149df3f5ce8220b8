//! A bounded soak of the catalog demo on loopback: many clients mixing valid calls, invalid
//! arguments, oversized bodies, malformed JSON and abrupt disconnects, while RSS and open file
//! descriptors are sampled. Fails if a valid call gets a wrong answer, or if RSS or descriptors
//! grow past a stated bound after warm-up. Run by `scripts/soak [SECONDS]` (not by scripts/test).

#[path = "catalog/endpoint.rs"]
mod endpoint;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tollgate::{McpService, Server};

const CLIENTS: usize = 16;
const RSS_GROWTH_BOUND_KIB: u64 = 64 * 1024;
const FD_GROWTH_BOUND: u64 = 64;
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

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

async fn exchange(addr: SocketAddr, headers: &str, body: &[u8]) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    // The server may answer (and close) before the whole body is sent, e.g. for a declared
    // length over the limit: the answer is still there to read.
    let _ = stream.write_all(body).await;
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out).await;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// One request of the mix; `Err` names a wrong answer.
async fn step(addr: SocketAddr, n: u64) -> Result<(), String> {
    let call = |tool: &str, args: &str| {
        (
            format!(
                "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\n"
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"{tool}","arguments":{args},{META}}}}}"#
            ),
        )
    };
    let io = |e: std::io::Error| format!("i/o: {e}");
    match n % 6 {
        0 | 1 => {
            let (h, b) = call("catalog.search", r#"{"query":"tea"}"#);
            let out = exchange(addr, &h, b.as_bytes()).await.map_err(io)?;
            if !out.contains(r#""structuredContent":{"items":[{"sku":"TEA-001""#) {
                return Err(format!(
                    "wrong answer to a valid call: {}",
                    &out[..out.len().min(200)]
                ));
            }
        }
        2 => {
            let (h, b) = call("catalog.search", r#"{"query":5}"#);
            let out = exchange(addr, &h, b.as_bytes()).await.map_err(io)?;
            if !out.contains("Arguments do not match the tool's inputSchema.") {
                return Err("invalid arguments not answered with the fixed text".into());
            }
        }
        3 => {
            let big = vec![b' '; 10 * 1024 * 1024 + 1];
            let out = exchange(
                addr,
                "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n",
                &big,
            )
            .await
            .map_err(io)?;
            if !out.contains("-32700") {
                return Err("an oversized body was not a parse error".into());
            }
        }
        4 => {
            let out = exchange(
                addr,
                "MCP-Protocol-Version: 2026-07-28\r\n",
                b"{\"jsonrpc\":",
            )
            .await
            .map_err(io)?;
            if !out.contains("-32700") {
                return Err("malformed JSON was not a parse error".into());
            }
        }
        _ => {
            // An abrupt disconnect halfway through the body.
            let mut stream = TcpStream::connect(addr).await.map_err(io)?;
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"")
                .await
                .map_err(io)?;
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let server = Server::bind(
        "127.0.0.1:0".parse()?,
        McpService::new(endpoint::endpoint(
            tollgate::task::InMemoryTaskStore::default(),
        )?),
    )
    .await?;
    let addr = server.local_addr()?;
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let mut clients = Vec::new();
    for c in 0..CLIENTS as u64 {
        let (stop, done) = (Arc::clone(&stop), Arc::clone(&done));
        clients.push(tokio::spawn(async move {
            let mut n = c;
            while !stop.load(Ordering::Relaxed) {
                step(addr, n).await?;
                done.fetch_add(1, Ordering::Relaxed);
                n += CLIENTS as u64;
            }
            Ok::<(), String>(())
        }));
    }
    let start = Instant::now();
    let warm_up = Duration::from_secs(seconds.min(60) / 6 + 1);
    let (mut baseline, mut peak) = (None, (0u64, 0u64));
    while start.elapsed() < Duration::from_secs(seconds) {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (rss, fds) = (rss_kib(), open_fds());
        println!(
            "t={:>4}s requests={:>9} rss={rss} KiB fds={fds}",
            start.elapsed().as_secs(),
            done.load(Ordering::Relaxed)
        );
        if start.elapsed() >= warm_up && baseline.is_none() {
            baseline = Some((rss, fds));
        }
        peak = (peak.0.max(rss), peak.1.max(fds));
        if clients.iter().any(|c| c.is_finished()) {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await??;
    }
    let (base_rss, base_fds) = baseline.unwrap_or((peak.0, peak.1));
    println!(
        "soak: {} requests in {}s; RSS {base_rss} -> peak {} KiB (bound +{RSS_GROWTH_BOUND_KIB}), fds {base_fds} -> peak {} (bound +{FD_GROWTH_BOUND})",
        done.load(Ordering::Relaxed),
        start.elapsed().as_secs(),
        peak.0,
        peak.1
    );
    if peak.0 > base_rss + RSS_GROWTH_BOUND_KIB || peak.1 > base_fds + FD_GROWTH_BOUND {
        return Err("resource growth past the bound".into());
    }
    Ok(())
}
