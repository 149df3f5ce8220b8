//! `subscriptions/listen` (2026-07-28): the filter checked and bounded, the acknowledgement of
//! what will be honoured, then list changes (a live endpoint's, for the lists asked for),
//! resource updates and task status notifications relayed from the
//! endpoint's event bus (`model/subscription.rs`) until the client goes away, the server shuts
//! down or the admitted credential expires (the last two with the graceful completion result,
//! so a client listens again, with a fresh token after an expiry).
//!
//! Over HTTP the loop is handed to the response body once the acknowledgement is queued
//! ([`EventStream::hand_off`](crate::stream::event::EventStream::hand_off)): the request's
//! pipeline then ends, and an idle stream holds only the loop ([`Relay`]), not the pipeline's
//! state nor the request's head. On stdio the loop runs in the request's own future.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::task::Poll;

use tokio::sync::broadcast;
use tollgate_json::{JsonArray, JsonObject, JsonValue};

use crate::facts::context::RequestContext;
use crate::model::features::NotificationSink;
use crate::model::origin::Transport;
use crate::model::subscription::{Event, ListKind, MAX_SUBSCRIPTION_ENTRIES, OpenGuard, list_bit};
use crate::registry::Endpoint;
use crate::stream::MAX_SUBSCRIPTION_URI_BYTES;
use crate::stream::event::FinishOnDrop;
use crate::tasks::model::{MAX_TASK_ID_BYTES, TASKS_EXTENSION};
use crate::version::ProtocolVersion;
use crate::wire::fault::Fault;
use crate::wire::reply::{Reply, fail, result_reply_json};
use crate::wire::stage::stage;

/// The `_meta` key naming the stream every message on it belongs to.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

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

/// A filter's resource URIs and task ids, as sent (checked, not yet routed or looked up), and
/// the lists whose changes it asks for.
type Filter = (Vec<Arc<str>>, Vec<Arc<str>>, Vec<ListKind>);

/// The filter: the `*ListChanged` flags booleans when present, resource URIs and task ids
/// bounded lists of distinct strings, and task ids only from a client declaring the extension.
fn read_filter(params: &JsonObject, context: &RequestContext) -> Result<Filter, Reply> {
    let invalid = || {
        fail(
            context.protocol_version,
            context.request_id.as_ref(),
            Fault::InvalidParams,
            None,
        )
    };
    let Some(JsonValue::Object(filter)) = params.get("notifications") else {
        return Err(invalid());
    };
    let mut lists = Vec::new();
    for list in ListKind::ALL {
        match filter.get(list.filter()) {
            None | Some(JsonValue::Bool(false)) => {}
            Some(JsonValue::Bool(true)) => lists.push(list),
            Some(_) => return Err(invalid()),
        }
    }
    let uris = filter.get("resourceSubscriptions");
    let Ok(uris) = strings(uris, MAX_SUBSCRIPTION_URI_BYTES) else {
        return Err(invalid());
    };
    let Ok(task_ids) = strings(filter.get("taskIds"), MAX_TASK_ID_BYTES) else {
        return Err(invalid());
    };
    if !task_ids.is_empty() && !context.client_capabilities.extension(TASKS_EXTENSION) {
        return Err(crate::methods::tasks::missing_extension(context));
    }
    Ok((uris, task_ids, lists))
}

/// `subscriptions/listen`: checks the filter, acknowledges what will be honoured, then relays
/// matching events until the client goes away (the request is dropped), the server shuts down
/// or the admitted credential expires (both: the graceful result).
pub(crate) async fn listen(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    params: &JsonObject,
    context: &RequestContext,
) -> Reply {
    stage!(Lookup);
    let revision = context.protocol_version;
    let id = context.request_id.as_ref();
    let (uris, task_ids, lists) = match read_filter(params, context) {
        Ok(filter) => filter,
        Err(reply) => return reply,
    };
    let (Some(sink), Some(request_id)) = (transport.sink(), id) else {
        return fail(revision, id, Fault::Internal, None);
    };
    let listeners = &endpoint.inner.listeners;
    let Some(open) = listeners.open_for(context.admission.principal_name()) else {
        crate::wire::log::budget_reached(crate::wire::log::Budget::Listeners);
        return fail(revision, id, Fault::Busy, None);
    };
    // Subscribed before the acknowledgement is computed, so nothing between the two is lost.
    let events = listeners.events.subscribe();
    if let Some(cluster) = &endpoint.inner.cluster {
        // The other instances' events arrive here from now on.
        cluster.start_receiving();
    }

    let inner = &endpoint.inner;
    let uris: HashSet<Arc<str>> = uris
        .into_iter()
        .filter(|uri| readable(endpoint, context, uri))
        .collect();
    let owner = crate::tasks::runner::owner_of(&endpoint.inner.path, context);
    let mut tasks: HashSet<Arc<str>> = HashSet::new();
    if let Some(store) = inner.tasks.as_deref() {
        for task_id in task_ids {
            // Boxed, as the relay below: a state passed once does not size an open stream.
            if Box::pin(store.visible(&task_id, &owner)).await {
                tasks.insert(task_id);
            }
        }
    }
    // Every message on the stream names it: the listen request's id.
    let meta = JsonObject::builder().insert(SUBSCRIPTION_ID, request_id.to_json());
    let meta = meta.build();
    // List changes are honoured where the catalog can change (with views, those of the
    // caller's view: its identity is this listen's).
    let lists: Vec<ListKind> = match endpoint.inner.live {
        Some(_) => lists,
        None => Vec::new(),
    };
    // The principal's view of the catalog as it is now, taken before the acknowledgement: a
    // change published after it is one the view reports.
    let view = endpoint.list_view(&context.admission);
    sink.notify(
        "notifications/subscriptions/acknowledged",
        JsonObject::builder()
            .insert("_meta", meta.clone())
            .insert("notifications", acknowledgement(&lists, &uris, &tasks))
            .build(),
    );
    let relay = Relay {
        endpoint: endpoint.clone(),
        // The request's HTTP head stays only for a sanitizer (which may read it): an open
        // stream does not otherwise hold it.
        context: match endpoint.inner.sanitizer {
            Some(_) => context.clone(),
            None => context.without_head(),
        },
        sink: sink.clone(),
        uris,
        tasks,
        lists,
        meta,
        owner,
        events,
        view,
        open,
        ends: None,
    };
    // Over HTTP the loop is handed to the response body, and this request's pipeline ends
    // (what it held is freed for the stream's life); elsewhere (stdio) it runs here.
    if let NotificationSink::Stream(stream) = sink
        && stream.takes_rest()
    {
        let relay = Relay {
            ends: Some(FinishOnDrop::new(Arc::clone(stream))),
            ..relay
        };
        // In the request's `tracing` span, which it keeps open for as long as the stream lasts.
        let rest = tracing::Instrument::in_current_span(Ended { run: relay.run() });
        let rest = crate::facts::telemetry::carry(rest);
        // Refused only once the stream has ended: nothing is left to relay to.
        let _ = stream.hand_off(Box::pin(rest));
        return Reply::empty(http::StatusCode::OK);
    }
    relay.run().await
}

pin_project_lite::pin_project! {
    /// A listen's loop handed to its stream, which it ends itself: its reply is dropped.
    /// (A struct, not an `async` block awaiting the loop: that would hold the loop's state
    /// twice.)
    struct Ended<F> {
        #[pin]
        run: F,
    }
}

impl<F: Future<Output = Reply>> Future for Ended<F> {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        self.project().run.poll(cx).map(drop)
    }
}

/// An acknowledged listen: what it relays, to whom, and its place among the open streams.
struct Relay {
    endpoint: Endpoint,
    context: RequestContext,
    sink: NotificationSink,
    uris: HashSet<Arc<str>>,
    tasks: HashSet<Arc<str>>,
    lists: Vec<ListKind>,
    meta: JsonObject,
    owner: Arc<str>,
    events: broadcast::Receiver<Event>,
    /// The principal's view of the catalog (a per-principal view over a live one), by which a
    /// list change is told only where what the principal sees changed.
    view: Option<Arc<dyn crate::stream::ListView>>,
    /// Its place among the open streams, given back when the stream ends.
    open: OpenGuard,
    /// The stream it was handed to, which it ends with its reply.
    ends: Option<FinishOnDrop>,
}

impl Relay {
    /// Relays the endpoint's events until the client goes away, the server shuts down or the
    /// admitted credential expires (the last two: the graceful completion result).
    ///
    /// One `async` block over `self`, whose fields it uses in place (a destructured copy would
    /// be a second place for each in the stream's future).
    #[allow(
        clippy::manual_async_fn,
        reason = "an async fn would hold its receiver twice in the stream's future"
    )]
    fn run(mut self) -> impl Future<Output = Reply> + Send {
        async move {
            // Named so the block holds the stream's place to its end (a field the block did
            // not name would be dropped as `run` returns).
            let _open = &self.open;
            let revision = self.context.protocol_version;
            let listeners = &self.endpoint.inner.listeners;
            let view = &self.view;
            let seen = |announced: u16| view.as_ref().map_or(announced, |v| v.changed(announced));
            // Encoded at the first update heard: an idle stream holds none of it.
            let mut updated: Option<Updated> = None;
            // Tasks whose terminal state was sent: nothing more is ever sent for them.
            let mut finished: HashSet<Arc<str>> = HashSet::new();
            // A listen outlives no credential: it ends, gracefully, when the admitted one
            // expires.
            let expires_in = self.context.admission.expires_in();
            let mut expired = std::pin::pin!(credential_expiry(expires_in));
            // Made once: one made per event would join and leave the shutdown signal's waiters
            // each time.
            let mut closing = std::pin::pin!(listeners.closing.cancelled());
            loop {
                let event = tokio::select! {
                    event = self.events.recv() => event,
                    () = closing.as_mut() => break,
                    () = expired.as_mut() => break,
                };
                let relay: Vec<Arc<str>> = match event {
                    Ok(Event::ResourceUpdated(uri)) => {
                        if self.uris.contains(&uri) {
                            send_updated(&self.sink, &mut updated, &self.meta, &uri);
                        }
                        continue;
                    }
                    Ok(Event::TaskChanged(task_id)) => vec![task_id],
                    Ok(Event::ListsChanged(changed)) => {
                        lists_changed(&self.sink, &self.lists, revision, seen(changed), &self.meta);
                        continue;
                    }
                    // Events were lost: every list asked for may have changed, and every
                    // watched task's current state is sent instead.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let all = seen(u16::MAX);
                        lists_changed(&self.sink, &self.lists, revision, all, &self.meta);
                        self.tasks.iter().cloned().collect()
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                };
                for task_id in relay {
                    if self.tasks.contains(&task_id) && !finished.contains(&task_id) {
                        // Boxed: a store's lookup is far larger than the loop's wait (issue 50).
                        Box::pin(relay_task(
                            &self.endpoint,
                            &self.context,
                            &self.sink,
                            &self.owner,
                            &task_id,
                            &mut finished,
                            &self.meta,
                        ))
                        .await;
                    }
                }
            }
            let result = JsonObject::builder()
                .insert("resultType", "complete")
                .insert("_meta", self.meta.clone())
                .build();
            let reply =
                result_reply_json(self.context.request_id.as_ref(), &result.into(), revision);
            match self.ends.take() {
                Some(ends) => {
                    ends.finish(reply);
                    Reply::empty(http::StatusCode::OK)
                }
                None => reply,
            }
        }
    }
}

/// Sends `notifications/resources/updated` for `uri`, encoded around it (its fixed part made at
/// the stream's first update and kept in `updated`).
fn send_updated(
    sink: &NotificationSink,
    updated: &mut Option<Updated>,
    meta: &JsonObject,
    uri: &str,
) {
    match updated
        .get_or_insert_with(|| Updated::new(meta))
        .encode(uri)
    {
        Some(json) => sink.notify_encoded(json),
        None => sink.notify("notifications/resources/updated", updated_params(meta, uri)),
    }
}

/// `notifications/resources/updated`'s parameters on a stream.
fn updated_params(meta: &JsonObject, uri: &str) -> JsonObject {
    JsonObject::builder()
        .insert("_meta", meta.clone())
        .insert("uri", uri)
        .build()
}

/// A stream's `notifications/resources/updated`, encoded around its URI: the envelope and the
/// stream's `_meta` are encoded once, at the first update the stream hears, so an update costs
/// each stream one buffer rather than an object tree built and written (issue 50: one update,
/// every stream).
struct Updated {
    /// The message up to the URI's value (the encoding of the whole, with an empty URI, less
    /// its last four bytes `""}}`); empty when that could not be encoded.
    head: Vec<u8>,
}

impl Updated {
    /// The last bytes of the message with an empty URI: the URI's value and two closings.
    const EMPTY_TAIL: &'static [u8] = b"\"\"}}";

    fn new(meta: &JsonObject) -> Self {
        let message: JsonValue = JsonObject::builder()
            .insert("jsonrpc", "2.0")
            .insert("method", "notifications/resources/updated")
            .insert("params", updated_params(meta, ""))
            .build()
            .into();
        let limits = tollgate_json::OutputLimits::default();
        let mut head = tollgate_json::to_vec(&message, &limits).unwrap_or_default();
        if head.ends_with(Self::EMPTY_TAIL) {
            head.truncate(head.len() - Self::EMPTY_TAIL.len());
        } else {
            head.clear();
        }
        Self { head }
    }

    /// The message for `uri`, as `NotificationSink::notify` would write it; `None` when it
    /// cannot be encoded this way (the caller builds it the usual way).
    fn encode(&self, uri: &str) -> Option<Vec<u8>> {
        if self.head.is_empty() {
            return None;
        }
        let limits = tollgate_json::OutputLimits::default();
        let mut json = Vec::with_capacity(self.head.len() + uri.len() + 4);
        json.extend_from_slice(&self.head);
        tollgate_json::write_str_into(uri, &mut json, &limits).ok()?;
        json.extend_from_slice(b"}}");
        (json.len() <= limits.max_output_bytes()).then_some(json)
    }
}

/// What a stream will honour: the list changes asked for (on a live endpoint), the readable
/// resources and the visible tasks.
fn acknowledgement(
    lists: &[ListKind],
    uris: &HashSet<Arc<str>>,
    tasks: &HashSet<Arc<str>>,
) -> JsonObject {
    let mut acknowledged = JsonObject::builder();
    for list in lists {
        acknowledged.push(list.filter(), true);
    }
    if !uris.is_empty() {
        acknowledged.push("resourceSubscriptions", sorted(uris));
    }
    if !tasks.is_empty() {
        acknowledged.push("taskIds", sorted(tasks));
    }
    acknowledged.build()
}

/// `notifications/{tools,prompts,resources}/list_changed` for the lists asked for that
/// `changed` (a set of `list_bit`s) names on `revision`.
fn lists_changed(
    sink: &NotificationSink,
    lists: &[ListKind],
    revision: ProtocolVersion,
    changed: u16,
    meta: &JsonObject,
) {
    for list in lists
        .iter()
        .filter(|list| changed & list_bit(revision, **list) != 0)
    {
        let params = JsonObject::builder().insert("_meta", meta.clone());
        sink.notify(list.notification(), params.build());
    }
}

/// Whether this caller may read `uri`: routed, and its scopes held (as `resources/read` and 2025
/// subscriptions require).
fn readable(endpoint: &Endpoint, context: &RequestContext, uri: &str) -> bool {
    match endpoint
        .catalog_for(&context.admission)
        .route_resource(uri, context.protocol_version)
    {
        None => false,
        Some(crate::model::resource::Route::Exact(r)) => {
            crate::methods::require_scopes(endpoint, context, &r.inner.required_scopes).is_ok()
        }
        Some(crate::model::resource::Route::Template(t, _)) => {
            crate::methods::require_scopes(endpoint, context, &t.inner.required_scopes).is_ok()
        }
    }
}

/// Resolves once `left` has passed (never without it): when the admitted credential expires.
async fn credential_expiry(left: Option<std::time::Duration>) {
    match left {
        Some(left) => tokio::time::sleep(left).await,
        None => std::future::pending().await,
    }
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
            context,
            &|record| crate::methods::tasks::visible_result(endpoint, record, context).ok(),
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
    use std::sync::atomic::Ordering;

    use crate::facts::context::{ClientCapabilities, RequestFacts};
    use crate::model::subscription::MAX_LISTEN_STREAMS;
    use crate::version::ProtocolVersion;
    use crate::wire::id::RequestId;
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
            crate::facts::request::OriginatingRequest::stdio(),
        )
    }

    /// Opens `count` streams with `params`, each acknowledged (so open) before the next.
    async fn open_streams(
        endpoint: &Endpoint,
        params: &JsonObject,
        tx: &tokio::sync::mpsc::Sender<Vec<u8>>,
        rx: &mut tokio::sync::mpsc::Receiver<Vec<u8>>,
        count: u64,
    ) -> Vec<tokio::task::JoinHandle<Reply>> {
        let mut open = Vec::new();
        for n in 0..count {
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
            assert!(rx.recv().await.is_some(), "acknowledged");
        }
        open
    }

    /// A resource update encoded around its URI is byte for byte the message the sink builds
    /// and writes, for plain URIs, URIs that need escaping, and either kind of stream id.
    #[test]
    fn an_encoded_update_is_the_built_one() {
        for id in [
            RequestId::Integer(7.into()),
            RequestId::String("a\"b".into()),
        ] {
            let meta = JsonObject::builder()
                .insert(SUBSCRIPTION_ID, id.to_json())
                .build();
            let updated = Updated::new(&meta);
            for uri in ["bench://feed", "file:///a \"b\"\\c\u{1}é", ""] {
                let (tx, mut rx) = tokio::sync::mpsc::channel(2);
                let sink = NotificationSink::Lines(tx);
                sink.notify(
                    "notifications/resources/updated",
                    updated_params(&meta, uri),
                );
                let built = rx.try_recv().unwrap_or_default();
                assert!(!built.is_empty());
                assert_eq!(updated.encode(uri), Some(built), "{uri}");
            }
        }
    }

    /// A stream that has heard events (and waited again after each) still ends at shutdown,
    /// with the graceful result: its one wait for the signal outlives the events.
    #[tokio::test(start_paused = true)]
    async fn a_stream_that_heard_events_ends_at_shutdown() {
        let endpoint = Endpoint::with_path(
            "/mcp",
            [ProtocolVersion::V2026_07_28],
            Implementation::new("shutdown", "1"),
        )
        .build()
        .unwrap_or_else(|_| unreachable!("a valid endpoint"));
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        let params = JsonObject::builder()
            .insert("notifications", JsonObject::new())
            .build();
        let mut open = open_streams(&endpoint, &params, &tx, &mut rx, 1).await;
        let listeners = &endpoint.inner.listeners;
        for _ in 0..3 {
            listeners.publish(Event::TaskChanged("unwatched".into()));
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
        }
        assert_eq!(listeners.events.len(), 0, "every event was heard");
        listeners.close_all();
        let stream = open.pop().unwrap_or_else(|| unreachable!("one stream"));
        let reply = tokio::time::timeout(std::time::Duration::from_secs(5), stream)
            .await
            .unwrap_or_else(|_| unreachable!("the stream ends at shutdown"))
            .unwrap_or_else(|_| unreachable!("the stream's task ends"));
        assert_eq!(reply.status, http::StatusCode::OK);
        assert_eq!(listeners.places.open.load(Ordering::Acquire), 0);
    }

    /// A listen ends when the admitted credential expires, with the graceful completion result
    /// naming the subscription (so the client listens again with a fresh token), and not
    /// before.
    #[tokio::test(start_paused = true)]
    async fn a_listen_ends_gracefully_when_its_credential_expires() {
        let endpoint = Endpoint::with_path(
            "/mcp",
            [ProtocolVersion::V2026_07_28],
            Implementation::new("expiry", "1"),
        )
        .build()
        .unwrap_or_else(|_| unreachable!("a valid endpoint"));
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        let params = JsonObject::builder()
            .insert("notifications", JsonObject::new())
            .build();
        let mut admitted = context(7);
        admitted.admission = crate::facts::identity::AdmissionIdentity::principal("p")
            .with_expiry(std::time::SystemTime::now() + std::time::Duration::from_secs(30));
        let listening = tokio::spawn({
            let endpoint = endpoint.clone();
            async move {
                let sink = NotificationSink::Lines(tx);
                listen(&endpoint, Transport::stdio(Some(&sink)), &params, &admitted).await
            }
        });
        assert!(rx.recv().await.is_some(), "acknowledged");
        tokio::time::sleep(std::time::Duration::from_secs(29)).await;
        assert!(
            !listening.is_finished(),
            "not before the credential expires"
        );
        let reply = listening
            .await
            .unwrap_or_else(|_| unreachable!("the listen ends"));
        assert_eq!(reply.status, http::StatusCode::OK);
        let body = String::from_utf8(reply.body.unwrap_or_default()).unwrap_or_default();
        assert!(body.contains(r#""resultType":"complete""#), "{body}");
        assert!(
            body.contains(r#""io.modelcontextprotocol/subscriptionId":7"#),
            "{body}"
        );
        assert_eq!(
            endpoint.inner.listeners.places.open.load(Ordering::Acquire),
            0
        );
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
        let open = open_streams(&endpoint, &params, &tx, &mut rx, MAX_LISTEN_STREAMS as u64).await;
        assert_eq!(
            endpoint.inner.listeners.places.open.load(Ordering::Acquire),
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
            if endpoint.inner.listeners.places.open.load(Ordering::Acquire) < MAX_LISTEN_STREAMS {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(
            endpoint.inner.listeners.places.open.load(Ordering::Acquire),
            MAX_LISTEN_STREAMS - 1
        );
        endpoint.inner.listeners.close_all();
        for stream in open.into_iter().skip(1) {
            let reply = stream
                .await
                .unwrap_or_else(|_| unreachable!("the stream ends"));
            assert_eq!(reply.status, http::StatusCode::OK);
        }
        assert_eq!(
            endpoint.inner.listeners.places.open.load(Ordering::Acquire),
            0
        );
    }

    /// A bound set on the endpoint's limits is the one a listen meets: two streams open, the
    /// third is refused (503 / -32603).
    #[tokio::test]
    async fn the_configured_bound_is_enforced() {
        let endpoint = Endpoint::with_path(
            "/mcp",
            [ProtocolVersion::V2026_07_28],
            Implementation::new("bound", "1"),
        )
        .limits(crate::endpoint::EndpointLimits::new().max_listen_streams(2))
        .build()
        .unwrap_or_else(|_| unreachable!("a valid endpoint"));
        let (tx, mut rx) = tokio::sync::mpsc::channel(16);
        let params = JsonObject::builder()
            .insert("notifications", JsonObject::new())
            .build();
        let open = open_streams(&endpoint, &params, &tx, &mut rx, 2).await;
        let sink = NotificationSink::Lines(tx.clone());
        let past = listen(
            &endpoint,
            Transport::stdio(Some(&sink)),
            &params,
            &context(3),
        )
        .await;
        assert_eq!(past.status, http::StatusCode::SERVICE_UNAVAILABLE);
        endpoint.inner.listeners.close_all();
        for stream in open {
            let reply = stream
                .await
                .unwrap_or_else(|_| unreachable!("the stream ends"));
            assert_eq!(reply.status, http::StatusCode::OK);
        }
    }
}
