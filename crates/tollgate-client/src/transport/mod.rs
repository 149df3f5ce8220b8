//! The transports under one internal contract: send a request and await its answer (while
//! serving what the server sends meanwhile to the [`Handler`]), send a notification, close. It
//! owns that contract and the answer to a server request; it must not know methods or the
//! typed API above it.

pub(crate) mod http;
pub(crate) mod legacy_sse;
pub(crate) mod lines;
#[cfg(feature = "in-process")]
pub(crate) mod memory;
pub(crate) mod stdio;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tollgate_json::{JsonObject, JsonValue};

use crate::error::Error;
use crate::handler::{Handler, Refusal};
use crate::message;
use crate::revision::Revision;

/// A boxed, sendable future.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One request to send.
#[derive(Default)]
pub(crate) struct Outgoing {
    pub(crate) method: String,
    pub(crate) params: Option<JsonObject>,
    /// What `Mcp-Name` mirrors (2026-07-28 over HTTP), already encoded.
    pub(crate) name: Option<String>,
    /// `Mcp-Param-*` mirrors, already encoded.
    pub(crate) headers: Vec<(String, String)>,
    /// The call's own handler: the server's requests and log messages on the request's own
    /// response stream go to it (Streamable HTTP), or, over lines (whose wire names no call),
    /// those that arrive while it is the only request outstanding, when the client was built
    /// with [`sole_call_requests`](crate::ClientBuilder::sole_call_requests); otherwise (or
    /// `None`) to the client's.
    pub(crate) handler: Option<Arc<dyn Handler>>,
}

/// Where a server message that arrived on a call's own stream goes: its requests and log
/// messages to the call's handler when it has one; progress, list changes and resource updates
/// (the session's, or routed by token) to the client's.
pub(crate) fn for_call<'a>(
    client: &'a Arc<dyn Handler>,
    call: Option<&'a Arc<dyn Handler>>,
    method: &str,
    request: bool,
) -> &'a Arc<dyn Handler> {
    match call {
        Some(call) if request || method == "notifications/message" => call,
        _ => client,
    }
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
    /// Whether the transport speaks `revision` (Streamable HTTP: not 2024-11-05).
    fn speaks(&self, revision: Revision) -> bool {
        let _ = revision;
        true
    }
    /// A 2025 session is open (after `notifications/initialized`): HTTP opens its `GET`
    /// stream for what the server sends outside calls.
    fn session_started(self: Arc<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async {})
    }
    /// Ends the session or the child.
    fn close(&self) -> BoxFuture<'_, Result<(), Error>>;
}

/// The revision in use, shared by a transport and its reading task (none before the server
/// has chosen one).
#[derive(Debug, Default)]
pub(crate) struct RevisionCell(AtomicUsize);

impl RevisionCell {
    pub(crate) fn set(&self, revision: Option<Revision>) {
        let index = revision.and_then(|r| Revision::ALL.iter().position(|a| *a == r));
        self.0.store(index.map_or(0, |i| i + 1), Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> Option<Revision> {
        let index = self.0.load(Ordering::Relaxed).checked_sub(1)?;
        Revision::ALL.get(index).copied()
    }

    /// Whether the server may send batches now (2025-03-26).
    pub(crate) fn takes_batches(&self) -> bool {
        self.get().is_some_and(Revision::takes_batches)
    }
}

/// The handler's answer to a server request, as bytes to send back. A request the revision in
/// use does not define (`elicitation/create` before 2025-06-18) is refused with -32601 without
/// asking the handler.
pub(crate) async fn answer(
    handler: &Arc<dyn Handler>,
    revision: Option<Revision>,
    id: &JsonValue,
    method: &str,
    params: Option<&JsonObject>,
) -> Result<Vec<u8>, Error> {
    let defined = revision.is_none_or(|r| r.allows_server_request(method));
    let outcome = if defined {
        handler.request(method, params).await
    } else {
        Err(Refusal::METHOD_NOT_FOUND)
    };
    message::response(id, outcome.map_err(|r| (r.code, r.message)))
}
