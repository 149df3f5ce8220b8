//! The built-in HTTP/1.1 server: accept loop, connection bounds, graceful shutdown.
//!
//! Owns sockets and hyper connections only; every request goes to an [`McpService`]. Binds
//! where it is told (the examples use 127.0.0.1). Knows nothing of MCP.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::service::McpService;

/// The address the examples and the CLI bind by default: loopback only.
pub const DEFAULT_ADDR: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
    std::net::Ipv4Addr::LOCALHOST,
    8080,
));

/// Bounds the built-in server enforces below the protocol.
#[derive(Clone, Copy, Debug)]
pub struct ServerLimits {
    max_connections: usize,
    read_buffer_bytes: usize,
    max_headers: usize,
    header_read_timeout: Duration,
    shutdown_timeout: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            max_connections: 1024,
            read_buffer_bytes: 512 * 1024,
            max_headers: 100,
            header_read_timeout: Duration::from_secs(30),
            shutdown_timeout: Duration::from_secs(10),
        }
    }
}

impl ServerLimits {
    /// The defaults: 1,024 open connections, a 512 KiB read buffer (and head cap), 100 header
    /// fields, 30 s to read a request head, 10 s for in-flight requests at shutdown.
    pub fn new() -> Self {
        Self::default()
    }

    /// Open connections (at least 1). Further connections wait in the listen backlog.
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// hyper's read buffer per connection in bytes (at least 8 KiB): a request head larger
    /// than this closes the connection with 431. Bodies stream through it, so a small buffer
    /// slows large requests; the precise aggregate header ceiling is the service's
    /// ([`McpServiceBuilder::max_header_bytes`](crate::transport::McpServiceBuilder::max_header_bytes)).
    #[must_use]
    pub fn read_buffer_bytes(mut self, n: usize) -> Self {
        self.read_buffer_bytes = n.max(8 * 1024);
        self
    }

    /// The number of header fields per request (at least 16).
    #[must_use]
    pub fn max_headers(mut self, n: usize) -> Self {
        self.max_headers = n.max(16);
        self
    }

    /// How long a client may take to send a request head.
    #[must_use]
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long shutdown waits for in-flight requests.
    #[must_use]
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }
}

/// The built-in server.
///
/// # Examples
///
/// ```no_run
/// use tollgate::{Endpoint, Implementation, McpService, ProtocolVersion, Server};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
///     Implementation::new("demo", "1.0.0")).build()?;
/// let server = Server::bind(tollgate::transport::DEFAULT_ADDR, McpService::new(endpoint)).await?;
/// println!("listening on http://{}/mcp", server.local_addr()?);
/// server.serve_with_shutdown(async { let _ = tokio::signal::ctrl_c().await; }).await?;
/// # Ok(()) }
/// ```
pub struct Server {
    listener: TcpListener,
    service: McpService,
    limits: ServerLimits,
}

impl Server {
    /// Binds `addr` (use a loopback address unless the deployment says otherwise).
    ///
    /// # Errors
    ///
    /// The socket error.
    pub async fn bind(addr: SocketAddr, service: McpService) -> io::Result<Self> {
        Ok(Self {
            listener: TcpListener::bind(addr).await?,
            service,
            limits: ServerLimits::default(),
        })
    }

    /// Replaces the server limits.
    #[must_use]
    pub fn limits(mut self, limits: ServerLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The bound address (useful after binding port 0).
    ///
    /// # Errors
    ///
    /// The socket error.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` completes, then stops accepting, lets in-flight requests finish
    /// (up to the shutdown timeout), and returns.
    ///
    /// # Errors
    ///
    /// Only errors that make the listener unusable; per-connection errors close that
    /// connection and are otherwise ignored.
    pub async fn serve_with_shutdown(self, shutdown: impl Future<Output = ()>) -> io::Result<()> {
        let graceful = GracefulShutdown::new();
        let permits = Arc::new(Semaphore::new(self.limits.max_connections));
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.limits.header_read_timeout)
            .max_buf_size(self.limits.read_buffer_bytes)
            .max_headers(self.limits.max_headers);
        tokio::pin!(shutdown);
        loop {
            let permit = tokio::select! {
                () = &mut shutdown => break,
                permit = Arc::clone(&permits).acquire_owned() => match permit {
                    Ok(p) => p,
                    Err(_) => break,
                },
            };
            let (stream, peer) = tokio::select! {
                () = &mut shutdown => break,
                accepted = self.listener.accept() => match accepted {
                    Ok(a) => a,
                    // Resource exhaustion (EMFILE and friends) is transient: back off briefly.
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            let _ = stream.set_nodelay(true);
            let service = self.service.clone();
            let connection = builder.serve_connection(
                TokioIo::new(stream),
                service_fn(move |request: http::Request<hyper::body::Incoming>| {
                    let service = service.clone();
                    // Policy may key on the peer (the refused-admission throttle).
                    let peer = Some(peer);
                    async move {
                        Ok::<_, std::convert::Infallible>(service.serve_from(request, peer).await)
                    }
                }),
            );
            let watched = graceful.watch(connection);
            tokio::spawn(async move {
                let _ = watched.await;
                drop(permit);
            });
        }
        drop(self.listener);
        self.service.end_streams();
        let _ = tokio::time::timeout(self.limits.shutdown_timeout, graceful.shutdown()).await;
        Ok(())
    }
}
