//! Shared by the three benchmark servers: the port, the runtime shape, and the filler catalog.

use std::net::SocketAddr;

/// `127.0.0.1:$PORT` (default 18400).
pub fn address() -> SocketAddr {
    let port = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(18400);
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// One worker thread unless `WORKERS` says otherwise: the pinned headline runs the server on one
/// core.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    match std::env::var("WORKERS").ok().and_then(|w| w.parse::<usize>().ok()) {
        Some(n) if n > 1 => tokio::runtime::Builder::new_multi_thread().worker_threads(n).enable_all().build(),
        _ => tokio::runtime::Builder::new_current_thread().enable_all().build(),
    }
}

/// How many tools each server lists besides `add`, so `tools/list` returns 200.
pub const FILLER_TOOLS: usize = 199;

pub fn filler_name(i: usize) -> String {
    format!("filler_{i:03}")
}

pub const FILLER_DESCRIPTION: &str = "A catalog entry that makes tools/list realistic in size";

pub const FILLER_SCHEMA: &str = r#"{"type":"object","properties":{"query":{"type":"string","description":"What to look for"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"]}"#;
