//! tollgate-client: a strict MCP client.
//!
//! It owns the client side of the protocol: transports (Streamable HTTP, stdio, in-process),
//! version negotiation, the typed API and the OAuth client. Everything a server sends is read
//! through `tollgate-json` under client-side limits. It must not know the server runtime's
//! internals: the in-process transport talks to an endpoint only through its public service.

pub mod auth;
#[cfg(feature = "oauth")]
pub mod oauth;
