//! Shared by the benchmark servers: the port, the runtime shape, the accept loop of those served
//! through a plain hyper connection, and the filler catalog.

use std::net::SocketAddr;

/// `127.0.0.1:$PORT` (default 18400).
pub fn address() -> SocketAddr {
    let port = std::env::var("PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(18400);
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// One worker thread unless `WORKERS` says otherwise: the pinned headline runs the server on one
/// core.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    match std::env::var("WORKERS")
        .ok()
        .and_then(|w| w.parse::<usize>().ok())
    {
        Some(n) if n > 1 => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build(),
        _ => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    }
}

/// Accepts connections on [`address`] for ever, each served over HTTP/1.1 by a clone of
/// `service`, with Nagle's algorithm off.
#[allow(
    dead_code,
    reason = "the servers with an accept loop of their own do not use it"
)]
pub async fn serve<S>(service: S) -> std::io::Result<()>
where
    S: hyper::service::HttpService<hyper::body::Incoming> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    S::ResBody: Send + 'static,
    <S::ResBody as hyper::body::Body>::Data: Send,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = tokio::net::TcpListener::bind(address()).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

/// How many tools each server lists besides `add`, so `tools/list` returns 200.
pub const FILLER_TOOLS: usize = 199;

pub fn filler_name(i: usize) -> String {
    format!("filler_{i:03}")
}

pub const FILLER_DESCRIPTION: &str = "A catalog entry that makes tools/list realistic in size";

pub const FILLER_SCHEMA: &str = r#"{"type":"object","properties":{"query":{"type":"string","description":"What to look for"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"]}"#;
