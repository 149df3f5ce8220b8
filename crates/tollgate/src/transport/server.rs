//! The built-in HTTP/1.1 server: accept loop, connection bounds (a cap per peer, the slowest
//! waiting connection shed under pressure (`shed.rs`), a clear refusal past the limit), the
//! head-or-idle timeout and the request body's pace (`idle/`), graceful shutdown (the drain
//! signal in `drain.rs`).
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
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::transport::body::Pace;
use crate::transport::drain::Drain;
use crate::transport::health::{Health, Routed};
use crate::transport::idle::{self, Idle};
use crate::transport::service::McpService;
use crate::transport::shed::Seats;
use crate::wire::log::SHUTDOWN;

/// The address the examples and the CLI bind by default: loopback only.
pub const DEFAULT_ADDR: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
    std::net::Ipv4Addr::LOCALHOST,
    8080,
));

/// Bounds the built-in server enforces below the protocol.
#[derive(Clone, Copy, Debug)]
pub struct ServerLimits {
    max_connections: usize,
    max_connections_per_peer: usize,
    read_buffer_bytes: usize,
    max_headers: usize,
    header_read_timeout: Duration,
    body: Pace,
    shutdown_timeout: Duration,
}

/// [`ServerLimits`]' default body pace: 30 s whole, 256 bytes a second after 5 s.
const DEFAULT_BODY_PACE: Pace = Pace {
    timeout: Duration::from_secs(30),
    grace: Duration::from_secs(5),
    min_rate: 256,
};

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            max_connections: 1024,
            max_connections_per_peer: 256,
            read_buffer_bytes: 512 * 1024,
            max_headers: 100,
            header_read_timeout: Duration::from_secs(30),
            body: DEFAULT_BODY_PACE,
            shutdown_timeout: Duration::from_secs(10),
        }
    }
}

impl ServerLimits {
    /// The defaults: 1,024 open connections, 256 of them from one peer, a 512 KiB read buffer
    /// (and head cap), 100 header fields, 30 s for a connection to deliver a complete request
    /// head once it is ready for one (whether it was idle or sending slowly), 30 s for a request
    /// body and at least 256 bytes a second after 5 s, 10 s for in-flight requests at shutdown.
    pub fn new() -> Self {
        Self::default()
    }

    /// Open connections (at least 1). When every place is taken, a new connection sheds the
    /// slowest connection that is only waiting on its client (a request head or body
    /// half-read at the lowest rate since it began, or nothing sent, the longest waiting first;
    /// never one serving a request or sending an answer or an event stream) and waits up to
    /// 100 ms for its place (or one that closed a moment ago); then it is answered with HTTP
    /// 503, `Retry-After: 1` and the fixed JSON-RPC busy error (-32603 `Server busy`, id
    /// `null`), and closed after its request is drained (up to 16 MiB and 2 s); at most 64
    /// connections wait or are refused at a time, and one past those is closed unanswered.
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Open connections from one peer (at least 1): an IPv4 address, or an IPv6 /64. A
    /// connection past it is answered as one past [`max_connections`](Self::max_connections)
    /// (503 and the busy error). Connections from the service's
    /// [trusted proxies](crate::transport::McpServiceBuilder::trusted_proxy) are not counted:
    /// they carry many clients' requests.
    #[must_use]
    pub fn max_connections_per_peer(mut self, n: usize) -> Self {
        self.max_connections_per_peer = n.max(1);
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

    /// How long a connection may take, from the moment it is ready for a request (just
    /// accepted, or its previous response handed to it whole), to deliver a complete request
    /// head. This one timer is both the header-read timeout (a head sent one byte at a time) and
    /// the idle keep-alive timeout (a connection that sends nothing); past it the connection is
    /// closed without an answer. It does not run while a request is served or its response (an
    /// event stream included) is still being produced; while a response's last bytes still go
    /// out to a client reading slowly, each write the socket accepts starts it again, so a
    /// client that takes in too little of its response for the socket to accept more for this
    /// long is closed (what the socket's buffer holds is still delivered). At most a year (a
    /// longer one is taken as a year).
    #[must_use]
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout.min(idle::MAX_TIMEOUT);
        self
    }

    /// How long a request's body may take to arrive whole, from its head's arrival (at most a
    /// year). Past it the request is answered 408 (`Connection: close`) and the connection
    /// closes (2 s later at the latest, if the client does not read the answer).
    #[must_use]
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body.timeout = timeout.min(idle::MAX_TIMEOUT);
        self
    }

    /// The least average rate, in bytes a second since its head's arrival, at which a request
    /// body must arrive once `grace` has passed (a body that has brought `n` bytes is due
    /// `grace + n / rate` after its head); `0` sets no rate (the body timeout still holds). Past
    /// it the request is answered as past the body timeout. The grace is at most a year.
    #[must_use]
    pub fn body_min_rate(mut self, bytes_per_second: u32, grace: Duration) -> Self {
        self.body.min_rate = bytes_per_second;
        self.body.grace = grace.min(idle::MAX_TIMEOUT);
        self
    }

    /// How long shutdown waits for in-flight requests.
    #[must_use]
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Self {
        self.shutdown_timeout = timeout;
        self
    }
}

/// The most refusals (past the connection limit) written at once.
const MAX_REFUSALS_IN_PROGRESS: usize = 64;
/// How long a connection past the limit waits for a place before it is refused.
const PLACE_WAIT: Duration = Duration::from_millis(100);
/// How long a refused connection is drained so its client reads the refusal (as for a body
/// refused for its size).
const REFUSAL_LINGER: Duration = crate::transport::body::LINGER_TIME;
/// How much of a refused connection's request is read and discarded.
const REFUSAL_LINGER_BYTES: usize = crate::transport::body::LINGER_BYTES;

/// Answers a connection past the limit: 503 with `Retry-After` and the fixed busy error, then a
/// bounded lingering close (the request is read and discarded, up to 16 MiB and 2 s, so a
/// client still writing it reads the answer instead of a reset).
async fn refuse(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let fault = crate::wire::fault::Fault::Busy;
    tracing::warn!(target: crate::wire::log::CONNECTION, "connection refused: at capacity");
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":{},"message":"{}"}}}}"#,
        fault.code(),
        fault.message()
    );
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let linger = async {
        if stream.write_all(head.as_bytes()).await.is_err()
            || stream.write_all(body.as_bytes()).await.is_err()
            || stream.shutdown().await.is_err()
        {
            return;
        }
        let mut buf = [0u8; 4096];
        let mut read = 0;
        while read < REFUSAL_LINGER_BYTES {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => read += n,
            }
        }
    };
    let _ = tokio::time::timeout(REFUSAL_LINGER, linger).await;
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
    health: Health,
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
            health: Health::new(),
        })
    }

    /// Serves on a listener made elsewhere: one handed over by the service manager (socket
    /// activation: set the standard listener non-blocking and convert it with
    /// `TcpListener::from_std` inside the runtime), or one with socket options of its own
    /// (accepted connections take the listener's buffer sizes, and a size set explicitly turns
    /// the kernel's tuning of it off).
    pub fn from_listener(listener: TcpListener, service: McpService) -> Self {
        Self {
            listener,
            service,
            limits: ServerLimits::default(),
            health: Health::new(),
        }
    }

    /// Replaces the server limits.
    #[must_use]
    pub fn limits(mut self, limits: ServerLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Replaces the liveness and readiness paths (default: [`Health::new`], `/healthz` and
    /// `/readyz`; [`Health::disabled`] for none). Keep a clone to mark the server draining.
    #[must_use]
    pub fn health(mut self, health: Health) -> Self {
        self.health = health;
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

    /// Serves until `shutdown` completes, then stops accepting, ends open event streams, lets
    /// in-flight requests finish up to the shutdown timeout, ends the connections still open
    /// after it, and returns.
    ///
    /// # Errors
    ///
    /// Only errors that make the listener unusable; per-connection errors close that
    /// connection and are otherwise ignored.
    pub async fn serve_with_shutdown(self, shutdown: impl Future<Output = ()>) -> io::Result<()> {
        let drain = Drain::default();
        let permits = Arc::new(Semaphore::new(self.limits.max_connections));
        let refusals = Arc::new(Semaphore::new(MAX_REFUSALS_IN_PROGRESS));
        let seats = Seats::new(self.limits.max_connections_per_peer);
        let health = Arc::new(self.health.clone());
        let mut builder = http1::Builder::new();
        // The head-or-idle timeout is `Idle`'s, one timer per connection (hyper's made one per
        // request); hyper is given no timer.
        builder
            .header_read_timeout(None)
            .max_buf_size(self.limits.read_buffer_bytes)
            .max_headers(self.limits.max_headers);
        let builder = Arc::new(builder);
        // Every connection's task, so those still running when shutdown's bound has passed are
        // ended rather than left behind.
        let mut connections = tokio::task::JoinSet::new();
        tokio::pin!(shutdown);
        loop {
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
            while connections.try_join_next().is_some() {}
            let _ = stream.set_nodelay(true);
            let trusted = self.service.trusts_proxy(peer.ip());
            let Some(seat) = seats.take(peer.ip(), trusted) else {
                // The peer holds its share: the same clear, bounded refusal.
                if let Ok(slot) = Arc::clone(&refusals).try_acquire_owned() {
                    connections.spawn(async move {
                        refuse(stream).await;
                        drop(slot);
                    });
                }
                continue;
            };
            let serve = Serve {
                builder: Arc::clone(&builder),
                service: self.service.clone(),
                health: Arc::clone(&health),
                drain: drain.clone(),
                peer,
                idle_timeout: self.limits.header_read_timeout,
                pace: self.limits.body,
                seat,
            };
            match Arc::clone(&permits).try_acquire_owned() {
                Ok(permit) => {
                    connections.spawn(serve.run(stream, permit));
                }
                // Past the limit: the slowest connection waiting on its client is shed, and a
                // connection that closed a moment ago may not have given its place back yet, so
                // wait briefly for one; else a clear, bounded refusal (or, past those, a plain
                // close).
                Err(_) => {
                    let Ok(slot) = Arc::clone(&refusals).try_acquire_owned() else {
                        continue;
                    };
                    seats.shed_slowest();
                    let permits = Arc::clone(&permits);
                    connections.spawn(async move {
                        let wait = tokio::time::timeout(PLACE_WAIT, permits.acquire_owned());
                        match wait.await {
                            Ok(Ok(permit)) => {
                                drop(slot);
                                serve.run(stream, permit).await;
                            }
                            _ => {
                                drop(serve);
                                refuse(stream).await;
                                drop(slot);
                            }
                        }
                    });
                }
            }
        }
        drop(self.listener);
        self.health.mark_draining();
        let open = connections.len();
        tracing::info!(target: SHUTDOWN, connections = open, "shutdown: draining");
        self.service.end_streams();
        drain.stop();
        let drained = async { while connections.join_next().await.is_some() {} };
        if tokio::time::timeout(self.limits.shutdown_timeout, drained)
            .await
            .is_err()
        {
            let ended = connections.len();
            tracing::warn!(target: SHUTDOWN, connections = ended, "shutdown: timeout, ending");
        }
        // Past the bound: whatever still runs is ended (its client sees the connection close).
        connections.abort_all();
        while connections.join_next().await.is_some() {}
        tracing::info!(target: SHUTDOWN, "shutdown: done");
        Ok(())
    }
}

/// What serving one connection needs.
struct Serve {
    builder: Arc<http1::Builder>,
    service: McpService,
    /// The probe paths (one count per connection, as for the service).
    health: Arc<Health>,
    drain: Drain,
    peer: SocketAddr,
    idle_timeout: Duration,
    pace: Pace,
    /// The connection's place among the server's (given back when the connection ends).
    seat: crate::transport::shed::Seat,
}

impl Serve {
    /// Serves the connection until it closes, holding its place (`permit`) meanwhile.
    async fn run(self, stream: tokio::net::TcpStream, permit: tokio::sync::OwnedSemaphorePermit) {
        let Self {
            builder,
            service,
            health,
            drain,
            peer,
            idle_timeout,
            pace,
            seat,
        } = self;
        let connection = builder.serve_connection(
            TokioIo::new(idle::Socket::new(stream)),
            // Policy may key on the peer (the refused-admission throttle). The service's future
            // is the connection's in-flight request, with no block around it; `Answer` marks
            // the request begun, and ended when its response body is dropped, for `Idle`.
            // The probe paths are answered before the service (no Host check, no admission).
            service_fn(move |request: http::Request<hyper::body::Incoming>| {
                idle::Answer::new(match health.route(request.uri().path()) {
                    None => Routed::Mcp {
                        answer: service.serve_from(request, Some(peer)),
                    },
                    Some(probe) => Routed::Probe {
                        answer: health.answer(probe, &service),
                    },
                })
            }),
        );
        let watched = Idle::new(drain.watch(connection), idle_timeout)
            .with_pace(pace)
            .with_seat(seat);
        let _ = watched.await;
        drop(permit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_or_idle_timeout_is_at_most_a_year() {
        let at = ServerLimits::new().header_read_timeout(idle::MAX_TIMEOUT);
        assert_eq!(at.header_read_timeout, idle::MAX_TIMEOUT);
        let past = idle::MAX_TIMEOUT + Duration::from_nanos(1);
        let past = ServerLimits::new().header_read_timeout(past);
        assert_eq!(past.header_read_timeout, idle::MAX_TIMEOUT);
        let zero = ServerLimits::new().header_read_timeout(Duration::ZERO);
        assert_eq!(zero.header_read_timeout, Duration::ZERO);
    }
}
