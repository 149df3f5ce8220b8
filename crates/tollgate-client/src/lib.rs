//! tollgate-client: a strict MCP client.
//!
//! It owns the client side of the protocol: transports (Streamable HTTP, stdio, in-process),
//! version negotiation, the typed API and the OAuth client. Everything a server sends is read
//! through `tollgate-json` under client-side limits ([`ClientLimits`]). It must not know the
//! server runtime's internals: the in-process transport talks to an endpoint only through its
//! public stdio server.
//!
//! # When to use it
//!
//! To call MCP servers from Rust: an agent or host, a gateway's upstream, a test of your own
//! tools (the `in-process` feature serves a `tollgate::Endpoint` with no sockets).
//!
//! # Themes
//!
//! - **Every revision**: 2026-07-28 (stateless: `_meta` on each request, `Mcp-Method`,
//!   `Mcp-Name`, `Mcp-Param-*`), 2025-11-25, 2025-06-18 and 2025-03-26 (sessions), and
//!   2024-11-05 over stdio, in process and its HTTP+SSE transport
//!   ([`ClientBuilder::connect_legacy_sse`]). [`ClientBuilder`] negotiates: `server/discover`
//!   first, a revision from an unsupported-version answer's `data.supported` next,
//!   `initialize` for an older server, which may choose any older revision offered.
//! - **Bounded reading**: messages, event-stream lines and events, pages, stream resumptions and
//!   `input_required` rounds all have limits ([`ClientLimits`]).
//! - **Errors carry a kind, never what you sent** ([`Error`]).
//! - **Handlers** answer what the server sends ([`handler::Handler`]): progress and log
//!   notifications, elicitation, sampling, roots. A call can take its own progress
//!   ([`CallOptions`]); [`Client::listen`] is a stream of notifications ([`Listen`]).
//! - **Every request bounded in time** ([`ClientLimits::request_timeout`], 60 s), a timed-out
//!   call cancelled as its revision says.
//!
//! # Features
//!
//! - `in-process`: [`ClientBuilder::connect_in_process`], serving a `tollgate::Endpoint` over an
//!   in-memory pipe (pulls in the server runtime).
//! - `oauth`: the OAuth 2.1 client of the MCP authorization specification
//!   (`oauth::OAuthClient`, an [`auth::Authorizer`]); see `docs/guide/client-oauth.md`.
//!
//! # Example
//!
//! ```no_run
//! use tollgate_client::{Client, json::JsonObject};
//!
//! # async fn run() -> Result<(), tollgate_client::Error> {
//! let client = Client::builder().connect_http("http://127.0.0.1:8080/mcp").await?;
//! for tool in client.list_tools().await? {
//!     println!("{:?}", tool.get("name"));
//! }
//! let result = client.call_tool("add", JsonObject::builder().insert("a", 2).build()).await?;
//! # let _ = result;
//! client.close().await?;
//! # Ok(()) }
//! ```

/// The client guide's examples, compiled (and run, unless marked `no_run`) as doc tests.
#[cfg(all(doctest, feature = "in-process"))]
#[doc = include_str!("../../../docs/guide/client.md")]
struct ClientGuideExamples;

pub mod auth;
mod cache;
mod call;
mod client;
mod error;
pub mod handler;
mod known;
mod limits;
mod message;
mod mirror;
mod notify;
#[cfg(feature = "oauth")]
pub mod oauth;
mod older;

/// The client OAuth guide's examples, compiled as doc tests (the guide lives in the repository,
/// not in the package).
#[cfg(all(doctest, feature = "oauth"))]
#[doc = include_str!("../../../docs/guide/client-oauth.md")]
struct ClientOAuthGuideExamples;
mod output;
mod revision;
mod skills;
pub mod sse;
mod tasks;
mod transport;

pub use call::CallOptions;
pub use client::{Client, ClientBuilder, Page};
pub use error::{Error, ErrorKind};
pub use limits::ClientLimits;
pub use notify::{Listen, Notification, Progress};
pub use revision::{ClientInfo, Revision};
pub use skills::LoadedSkill;

/// The JSON tree the client reads and writes (re-exported from `tollgate-json`).
pub mod json {
    pub use tollgate_json::{
        JsonArray, JsonLimits, JsonNumber, JsonObject, JsonString, JsonValue, from_slice, from_str,
    };
}

/// Entry points for the fuzz targets (not part of the API; may change without notice).
#[doc(hidden)]
pub mod __private {
    /// Reads one message a server sent, under the default [`ClientLimits`](crate::ClientLimits),
    /// as every transport does: `Ok` when it is a JSON-RPC request, notification or response,
    /// or a batch of them (as 2025-03-26 allows).
    pub fn read_message(bytes: &[u8]) -> Result<(), crate::Error> {
        crate::message::read_all(bytes, &crate::ClientLimits::default(), true).map(|_| ())
    }
}
