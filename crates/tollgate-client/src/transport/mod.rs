//! The transports under one internal contract: send a request and await its answer (while
//! serving what the server sends meanwhile to the [`Handler`]), send a notification, close. It
//! owns that contract and the answer to a server request; it must not know methods or the
//! typed API above it.

pub(crate) mod http;
pub(crate) mod lines;
#[cfg(feature = "in-process")]
pub(crate) mod memory;
pub(crate) mod stdio;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue};

use crate::error::Error;
use crate::handler::Handler;
use crate::message;
use crate::revision::Revision;

/// A boxed, sendable future.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One request to send.
#[derive(Debug, Default)]
pub(crate) struct Outgoing {
    pub(crate) method: String,
    pub(crate) params: Option<JsonObject>,
    /// What `Mcp-Name` mirrors (2026-07-28 over HTTP), already encoded.
    pub(crate) name: Option<String>,
    /// `Mcp-Param-*` mirrors, already encoded.
    pub(crate) headers: Vec<(String, String)>,
}

/// What every transport does.
pub(crate) trait Transport: Send + Sync {
    /// Sends a request and returns its result (or the server's error).
    fn request(&self, out: Outgoing) -> BoxFuture<'_, Result<JsonValue, Error>>;
    /// Sends a notification.
    fn notify(&self, method: &str, params: Option<JsonObject>) -> BoxFuture<'_, Result<(), Error>>;
    /// The revision (and, for HTTP, the headers it asks for) from now on; `None` while a 2025
    /// `initialize` is under way (no revision header until the server has chosen one).
    fn set_revision(&self, revision: Option<Revision>);
    /// A 2025 session is open (after `notifications/initialized`): HTTP opens its `GET`
    /// stream for what the server sends outside calls.
    fn session_started(self: Arc<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
    /// Ends the session or the child.
    fn close(&self) -> BoxFuture<'_, Result<(), Error>>;
}

/// The handler's answer to a server request, as bytes to send back.
pub(crate) async fn answer(
    handler: &Arc<dyn Handler>,
    id: &JsonValue,
    method: &str,
    params: Option<&JsonObject>,
) -> Result<Vec<u8>, Error> {
    let outcome = handler
        .request(method, params)
        .await
        .map_err(|r| (r.code, r.message));
    message::response(id, outcome)
}
