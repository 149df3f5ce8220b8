//! `subscriptions/listen` (2026-07-28): a long-lived stream of the notifications a client opted
//! into — resource updates and, with the tasks extension, task status.
//!
//! Owns the endpoint's event bus ([`Listeners`]: resource updates and task changes published
//! in this process), the filter checks, the acknowledgement, and the loop that turns events
//! into `notifications/resources/updated` and `notifications/tasks` for one stream. Knows
//! nothing of framing: notifications go through the request's [`NotificationSink`] (an SSE
//! stream over HTTP, lines over stdio), and the graceful end is the request's ordinary reply.
//!
//! Catalogs are immutable, so the `*ListChanged` filters are never acknowledged: nothing would
//! ever be sent for them.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::broadcast;
use tollgate_json::{JsonArray, JsonObject, JsonValue};

use crate::context::RequestContext;
use crate::endpoint::Endpoint;
use crate::features::{CancellationToken, NotificationSink};
use crate::pipeline::Transport;
use crate::task::TASKS_EXTENSION;
use crate::wire::fault::Fault;
use crate::wire::reply::{Reply, fail, result_reply_json};

/// The most streams one endpoint keeps open at once (past it: 503 / -32603 `Server busy`).
///
/// ```
/// assert_eq!(tollgate::MAX_LISTEN_STREAMS, 1024);
/// ```
pub const MAX_LISTEN_STREAMS: usize = 1024;
/// The most `subscriptions/listen` streams one admitted principal may hold open on an endpoint
/// (anonymous callers cannot be told apart: they are bounded by [`MAX_LISTEN_STREAMS`] alone).
///
/// ```
/// assert_eq!(tollgate::MAX_LISTEN_STREAMS_PER_PRINCIPAL, 64);
/// ```
pub const MAX_LISTEN_STREAMS_PER_PRINCIPAL: usize = 64;
/// The most resource URIs, and separately task ids, one stream may name.
///
/// ```
/// assert_eq!(tollgate::MAX_SUBSCRIPTION_ENTRIES, 256);
/// ```
pub const MAX_SUBSCRIPTION_ENTRIES: usize = 256;
/// The longest resource URI a stream may name, in bytes.
///
/// ```
/// assert_eq!(tollgate::MAX_SUBSCRIPTION_URI_BYTES, 8192);
/// ```
pub const MAX_SUBSCRIPTION_URI_BYTES: usize = 8192;

/// Something a listening client may want to hear about.
#[derive(Clone, Debug)]
pub(crate) enum Event {
    ResourceUpdated(Arc<str>),
    TaskChanged(Arc<str>),
}

/// The endpoint's event bus and open-stream count, and the signal that ends every stream
/// gracefully (server shutdown).
pub(crate) struct Listeners {
    events: broadcast::Sender<Event>,
    open: AtomicUsize,
    /// Open streams per admitted principal.
    owned: std::sync::Mutex<std::collections::HashMap<Arc<str>, usize>>,
    closing: CancellationToken,
}

impl std::fmt::Debug for Listeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listeners")
            .field("open", &self.open.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Default for Listeners {
    fn default() -> Self {
        Self {
            events: broadcast::channel(1024).0,
            open: AtomicUsize::new(0),
            owned: std::sync::Mutex::default(),
            closing: CancellationToken::new(),
        }
    }
}

impl Listeners {
    /// Publishes an event to every open stream (none open: dropped).
    pub(crate) fn publish(&self, event: Event) {
        let _ = self.events.send(event);
    }

    pub(crate) fn sender(&self) -> broadcast::Sender<Event> {
        self.events.clone()
    }

    /// Ends every open stream with its graceful result.
    pub(crate) fn close_all(&self) {
        self.closing.cancel();
    }
}

impl Listeners {
    fn owned(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<Arc<str>, usize>> {
        // Every update is one count change: a poisoned map is still consistent.
        self.owned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a place for one more stream of `principal`, within the endpoint's bound and the
    /// principal's; `None` past either.
    fn open_for(&self, principal: Option<&str>) -> Option<OpenGuard<'_>> {
        if self.open.fetch_add(1, Ordering::AcqRel) >= MAX_LISTEN_STREAMS {
            self.open.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        let mut guard = OpenGuard {
            listeners: self,
            principal: None,
        };
        if let Some(principal) = principal {
            let mut owned = self.owned();
            let count = owned.entry(Arc::from(principal)).or_insert(0);
            if *count >= MAX_LISTEN_STREAMS_PER_PRINCIPAL {
                return None;
            }
            *count += 1;
            guard.principal = Some(Arc::from(principal));
        }
        Some(guard)
    }
}

/// Gives a stream's place back when the stream ends, however it ends.
struct OpenGuard<'a> {
    listeners: &'a Listeners,
    principal: Option<Arc<str>>,
}

impl Drop for OpenGuard<'_> {
    fn drop(&mut self) {
        self.listeners.open.fetch_sub(1, Ordering::AcqRel);
        if let Some(principal) = &self.principal {
            let mut owned = self.listeners.owned();
            if let Some(n) = owned.get_mut(principal) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    owned.remove(principal);
                }
            }
        }
    }
}

/// A list of distinct strings, each within `max_bytes`, at most `MAX_SUBSCRIPTION_ENTRIES`.
fn strings(value: Option<&JsonValue>, max_bytes: usize) -> Result<Vec<Arc<str>>, ()> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let array = value.as_array().ok_or(())?;
    if array.len() > MAX_SUBSCRIPTION_ENTRIES {
        return Err(());
    }
    let mut out: Vec<Arc<str>> = Vec::with_capacity(array.len());
    for item in array.iter() {
        let text = item.as_str().ok_or(())?;
        if text.is_empty() || text.len() > max_bytes {
            return Err(());
        }
        if !out.iter().any(|t| &**t == text) {
            out.push(text.into());
        }
    }
    Ok(out)
}

/// `subscriptions/listen`: checks the filter, acknowledges what will be honoured, then relays
/// matching events until the client goes away (the request is dropped) or the server shuts
/// down (the graceful result).
pub(crate) async fn listen(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    params: &JsonObject,
    context: &RequestContext,
) -> Reply {
    let revision = context.protocol_version;
    let id = context.request_id.as_ref();
    let invalid = || fail(revision, id, Fault::InvalidParams, None);
    let Some(JsonValue::Object(filter)) = params.get("notifications") else {
        return invalid();
    };
    for flag in [
        "toolsListChanged",
        "promptsListChanged",
        "resourcesListChanged",
    ] {
        if filter.get(flag).is_some_and(|v| v.as_bool().is_none()) {
            return invalid();
        }
    }
    let Ok(uris) = strings(
        filter.get("resourceSubscriptions"),
        MAX_SUBSCRIPTION_URI_BYTES,
    ) else {
        return invalid();
    };
    let Ok(task_ids) = strings(filter.get("taskIds"), crate::task::MAX_TASK_ID_BYTES) else {
        return invalid();
    };
    if !task_ids.is_empty() && !context.client_capabilities.extension(TASKS_EXTENSION) {
        return crate::task::missing_extension(context);
    }
    let (Some(sink), Some(request_id)) = (transport.sink(), id) else {
        return fail(revision, id, Fault::Internal, None);
    };
    let listeners = &endpoint.inner.listeners;
    let Some(_open) = listeners.open_for(context.admission.principal_name()) else {
        return fail(revision, id, Fault::Busy, None);
    };
    // Subscribed before the acknowledgement is computed, so nothing between the two is lost.
    let mut events = listeners.events.subscribe();

    let inner = &endpoint.inner;
    let uris: HashSet<Arc<str>> = uris
        .into_iter()
        .filter(|uri| {
            crate::resource::route(uri, revision, &inner.resources, &inner.templates).is_some()
        })
        .collect();
    let owner = crate::task::owner_of(endpoint, context);
    let mut tasks: HashSet<Arc<str>> = HashSet::new();
    if let Some(store) = inner.tasks.as_deref() {
        for task_id in task_ids {
            if store.visible(&task_id, &owner).await {
                tasks.insert(task_id);
            }
        }
    }
    // Every message on the stream names it: the listen request's id.
    let meta = JsonObject::builder()
        .insert(
            "io.modelcontextprotocol/subscriptionId",
            request_id.to_json(),
        )
        .build();
    let mut acknowledged = JsonObject::builder();
    if !uris.is_empty() {
        acknowledged.push("resourceSubscriptions", sorted(&uris));
    }
    if !tasks.is_empty() {
        acknowledged.push("taskIds", sorted(&tasks));
    }
    sink.notify(
        "notifications/subscriptions/acknowledged",
        JsonObject::builder()
            .insert("_meta", meta.clone())
            .insert("notifications", acknowledged.build())
            .build(),
    );

    // Tasks whose terminal state was sent: nothing more is ever sent for them.
    let mut finished: HashSet<Arc<str>> = HashSet::new();
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            () = listeners.closing.cancelled() => break,
        };
        let relay: Vec<Arc<str>> = match event {
            Ok(Event::ResourceUpdated(uri)) => {
                if uris.contains(&uri) {
                    sink.notify(
                        "notifications/resources/updated",
                        JsonObject::builder()
                            .insert("_meta", meta.clone())
                            .insert("uri", &*uri)
                            .build(),
                    );
                }
                continue;
            }
            Ok(Event::TaskChanged(task_id)) => vec![task_id],
            // Events were lost: send every watched task's current state instead.
            Err(broadcast::error::RecvError::Lagged(_)) => tasks.iter().cloned().collect(),
            Err(broadcast::error::RecvError::Closed) => break,
        };
        for task_id in relay {
            if tasks.contains(&task_id) && !finished.contains(&task_id) {
                relay_task(
                    endpoint,
                    context,
                    sink,
                    &owner,
                    &task_id,
                    &mut finished,
                    &meta,
                )
                .await;
            }
        }
    }
    let result = JsonObject::builder()
        .insert("resultType", "complete")
        .insert("_meta", meta.clone())
        .build();
    result_reply_json(id, &result.into(), revision)
}

/// A set of strings as a sorted JSON array (acknowledgements are deterministic).
fn sorted(set: &HashSet<Arc<str>>) -> JsonArray {
    let mut items: Vec<&Arc<str>> = set.iter().collect();
    items.sort();
    items.into_iter().map(|s| JsonValue::from(&**s)).collect()
}

/// Sends one task's current state as `notifications/tasks`, when the listener may see it and
/// can answer its outstanding requests.
async fn relay_task(
    endpoint: &Endpoint,
    context: &RequestContext,
    sink: &NotificationSink,
    owner: &str,
    task_id: &Arc<str>,
    finished: &mut HashSet<Arc<str>>,
    meta: &JsonObject,
) {
    let Some(tasks) = endpoint.inner.tasks.as_deref() else {
        return;
    };
    let Some((params, terminal)) = tasks
        .notification(
            task_id,
            owner,
            &context.client_capabilities,
            &endpoint.inner.limits.output,
        )
        .await
    else {
        return;
    };
    let mut params = params.to_builder();
    params.push("_meta", meta.clone());
    sink.notify("notifications/tasks", params.build());
    if terminal {
        finished.insert(task_id.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{ClientCapabilities, RequestFacts, RequestId};
    use crate::version::ProtocolVersion;
    use crate::{Endpoint, Implementation};

    fn context(n: u64) -> RequestContext {
        RequestContext::admitted(
            "/mcp".into(),
            &"subscriptions/listen".into(),
            Some(RequestId::Integer(n.into())),
            RequestFacts {
                protocol_version: ProtocolVersion::V2026_07_28,
                client_info: None,
                client_capabilities: ClientCapabilities::default(),
                meta: JsonObject::new(),
                log_level: None,
            },
        )
    }

    /// One principal holds at most `MAX_LISTEN_STREAMS_PER_PRINCIPAL` streams; others, and
    /// anonymous callers, are not held back by it, and a refused stream takes no place.
    #[test]
    fn streams_are_bounded_per_principal() {
        let listeners = Listeners::default();
        let alice: Vec<_> = (0..MAX_LISTEN_STREAMS_PER_PRINCIPAL)
            .map(|_| listeners.open_for(Some("alice")))
            .collect();
        assert!(alice.iter().all(Option::is_some));
        assert!(
            listeners.open_for(Some("alice")).is_none(),
            "one past the bound"
        );
        assert_eq!(
            listeners.open.load(Ordering::Acquire),
            MAX_LISTEN_STREAMS_PER_PRINCIPAL,
            "the refusal gave its place back"
        );
        let bob = listeners.open_for(Some("bob"));
        let anonymous: Vec<_> = (0..MAX_LISTEN_STREAMS_PER_PRINCIPAL + 1)
            .map(|_| listeners.open_for(None))
            .collect();
        assert!(bob.is_some() && anonymous.iter().all(Option::is_some));
        let mut alice = alice;
        alice.pop();
        assert!(
            listeners.open_for(Some("alice")).is_some(),
            "a place came back"
        );
        drop((alice, bob, anonymous));
        assert_eq!(listeners.open.load(Ordering::Acquire), 0);
        assert!(listeners.owned().is_empty());
    }

    /// `MAX_LISTEN_STREAMS` streams stay open; one more is refused (503 / -32603), and a
    /// stream that ends gives its place back.
    #[tokio::test]
    async fn open_streams_are_bounded() {
        let endpoint = Endpoint::with_path(
            "/mcp",
            [ProtocolVersion::V2026_07_28],
            Implementation::new("bound", "1"),
        )
        .build()
        .unwrap_or_else(|_| unreachable!("a valid endpoint"));
        let (tx, mut rx) = tokio::sync::mpsc::channel(4 * MAX_LISTEN_STREAMS);
        let params = JsonObject::builder()
            .insert("notifications", JsonObject::new())
            .build();
        let mut open = Vec::new();
        for n in 0..MAX_LISTEN_STREAMS as u64 {
            let (endpoint, params, tx) = (endpoint.clone(), params.clone(), tx.clone());
            open.push(tokio::spawn(async move {
                let sink = NotificationSink::Lines(tx);
                listen(
                    &endpoint,
                    Transport::stdio(Some(&sink)),
                    &params,
                    &context(n),
                )
                .await
            }));
            // Each stream is open once it has acknowledged.
            assert!(rx.recv().await.is_some());
        }
        assert_eq!(
            endpoint.inner.listeners.open.load(Ordering::Acquire),
            MAX_LISTEN_STREAMS
        );
        let sink = NotificationSink::Lines(tx.clone());
        let past = listen(
            &endpoint,
            Transport::stdio(Some(&sink)),
            &params,
            &context(9999),
        )
        .await;
        assert_eq!(past.status, http::StatusCode::SERVICE_UNAVAILABLE);
        let body = String::from_utf8(past.body.unwrap_or_default()).unwrap_or_default();
        assert!(body.contains("-32603"), "{body}");
        // Ending one stream makes room for another.
        if let Some(first) = open.first() {
            first.abort();
        }
        for _ in 0..100 {
            if endpoint.inner.listeners.open.load(Ordering::Acquire) < MAX_LISTEN_STREAMS {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(
            endpoint.inner.listeners.open.load(Ordering::Acquire),
            MAX_LISTEN_STREAMS - 1
        );
        endpoint.inner.listeners.close_all();
        for stream in open.into_iter().skip(1) {
            let reply = stream
                .await
                .unwrap_or_else(|_| unreachable!("the stream ends"));
            assert_eq!(reply.status, http::StatusCode::OK);
        }
        assert_eq!(endpoint.inner.listeners.open.load(Ordering::Acquire), 0);
    }
}
