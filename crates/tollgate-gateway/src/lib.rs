//! Tollgate's checks in front of any MCP server.
//!
//! A [`Gateway`] connects to the upstream servers of a [`GatewayConfig`] (Streamable HTTP or
//! stdio, through `tollgate-client`), imports each one's tools through the rules a Tollgate
//! application's tools obey, and adds them to an [`EndpointBuilder`](tollgate::endpoint::EndpointBuilder)
//! the application serves like any other:
//!
//! - names (with the upstream's prefix) and text through the registration's constructors;
//! - input and output schemas compiled as Tool Schema Profile 1; a tool whose schema does not
//!   compile is left out and reported as a [`Refusal`] with its JSON Pointer;
//! - arguments validated by the endpoint before anything is forwarded, so a bad call never
//!   reaches the upstream;
//! - the upstream's result read back through the content constructors and checked against the
//!   output schema and the endpoint's output limits, so a bad answer becomes the fixed -32603
//!   and never reaches the client;
//! - a client's credentials are never passed upstream: each upstream gets the gateway's own
//!   (`headers` in the configuration, or its own OAuth client-credentials or authorization-code
//!   grant, the latter authorized once by [`login`] and kept in a token file);
//! - progress, cancellation, prompt and template completions, `input_required` (2026-07-28 on
//!   both sides, or a 2026-07-28 upstream's to a 2025 caller of a tool), URIs inside answers
//!   served as the upstream's resources are, and a 2025 upstream's requests (elicitation,
//!   sampling, roots) and log messages on a call's own stream relayed between the caller and the
//!   upstream; an upstream's task made a task of the gateway's own, followed to its end;
//! - an upstream's skills (`io.modelcontextprotocol/skills`, 2026-07-28) read once, held to
//!   the digests their entries publish and rebuilt through the runtime's skill builder under
//!   the prefix (`skill://PREFIX/<path>`), so the gateway serves exactly the bytes it checked;
//! - each upstream's catalog followed live (its `list_changed`, or a periodic re-list).
//!
//! This crate owns the configuration, the import and the forwarding; it knows nothing of HTTP
//! serving (the endpoint does that) or of command lines (`tollgate gateway` in `tollgate-cli`).
//!
//! # Examples
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use tollgate::{Endpoint, Implementation, ProtocolVersion, Server};
//! use tollgate_gateway::{Gateway, GatewayConfig};
//!
//! let config = GatewayConfig::from_file("gateway.toml".as_ref())?;
//! let revisions = ProtocolVersion::ALL;
//! let gateway = Gateway::connect(&config, &revisions).await?;
//! for refusal in gateway.refusals() {
//!     eprintln!("{refusal}");
//! }
//! let endpoint = gateway
//!     .install(Endpoint::with_path("/mcp", revisions, Implementation::new("gateway", "1")))
//!     .build()?;
//! // Keep the catalog current with the upstreams' (their list_changed, or relist_ms).
//! gateway.follow(&endpoint)?;
//! # let _ = endpoint;
//! # Ok(()) }
//! ```

/// The gateway guide (`docs/guide/gateway.md`), its examples compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/gateway.md")]
pub struct GatewayGuide;

mod asks;
mod catalog;
mod config;
mod error;
mod fallback;
mod gateway;
mod import;
mod inputs;
mod link;
mod live;
mod login;
mod naming;
mod oauth;
mod pending;
mod relay;
mod server;
mod shared;
mod skills;
mod tasks;
mod upstream;

pub use config::{
    DEFAULT_CALL_TIMEOUT, GatewayConfig, MAX_CONFIG_BYTES, MAX_INPUT_ROUNDS,
    MAX_UPSTREAM_NAME_BYTES, MAX_UPSTREAMS, MIN_RELIST, UpstreamConfig, UpstreamTransport,
};
pub use error::{ConfigErrorKind, ForwardError, GatewayError, GatewayErrorKind};
pub use gateway::Gateway;
pub use import::{Kind, Refusal, RefusalReason};
pub use login::{ShowUrl, login};
pub use oauth::{DEFAULT_CLIENT_NAME, OAuthGrant, UpstreamOAuth};
pub use pending::LOGIN_POLL;
pub use server::{
    MAX_REQUESTS_PER_MINUTE, MAX_REQUIRED_SCOPES, MAX_SERVER_NAMES, ServerConfig, ServerOAuth,
};
pub use upstream::{FIRST_REVIVE_BACKOFF, MAX_REVIVE_BACKOFF};
