//! Serving an endpoint: the built-in HTTP server, the tower service (for axum or any hyper stack)
//! and its CORS policy, the stdio server, and the response stream type.
//!
//! The transport room (the engine's top; private modules below): accepting connections
//! (`server.rs`; liveness and readiness probes in `health.rs`; the drain signal for graceful shutdown in `drain.rs`; one timer per connection
//! for the head, idleness and the body's pace in `idle/`; the per-peer connection cap and
//! shedding in `shed.rs`; the client's address behind trusted proxies in `forwarded.rs`), the
//! HTTP checks before JSON (`service/`: path, header size, `Host`, `Origin` read strictly in
//! `rebinding.rs`, CORS in `cors.rs`, the protected-resource metadata routes in `metadata.rs`,
//! method and media types in `negotiate.rs`, the body's size, pace and per-peer budget in
//! `body.rs`), and stdio line framing (`stdio.rs`). Every message is then handed to
//! `pipeline::handle`. Knows nothing of JSON-RPC beyond handing the parsed body on.

pub(crate) mod body;
pub(crate) mod cors;
pub(crate) mod drain;
pub(crate) mod forwarded;
pub(crate) mod health;
pub(crate) mod idle;
pub(crate) mod metadata;
pub(crate) mod negotiate;
pub(crate) mod rebinding;
pub(crate) mod server;
pub(crate) mod service;
pub(crate) mod shed;
#[cfg(test)]
mod stage_trace;
pub(crate) mod stdio;

pub use self::cors::{CorsPolicy, DEFAULT_CORS_MAX_AGE};
pub use self::health::{
    DEFAULT_LIVENESS_PATH, DEFAULT_PROBE_TIMEOUT, DEFAULT_READINESS_INTERVAL,
    DEFAULT_READINESS_PATH, DEFAULT_TOLERATED_PROBE_FAILURES, Health, MAX_PROBE_DURATION,
    MAX_TOLERATED_PROBE_FAILURES,
};
pub use self::rebinding::is_allowed_host;
pub use self::server::{DEFAULT_ADDR, Server, ServerLimits};
pub use self::service::{
    DEFAULT_MAX_BODY_BYTES_PER_PEER, DEFAULT_MAX_HEADER_BYTES, McpBody, McpService,
    McpServiceBuilder,
};
pub use self::stdio::StdioServer;
pub use crate::facts::context::PeerAddr;
pub use crate::stream::event::ResponseStream;
