//! What one instance hears that the others must act on, when sessions are shared: a resource
//! updated (for `subscriptions/listen` streams and 2025 subscriptions everywhere), a task changed
//! (for `subscriptions/listen`), and `notifications/cancelled` for a request running elsewhere.
//!
//! Owns the broadcast messages (`<instance> <kind> <text>`, at most
//! [`MAX_BROADCAST_BYTES`](crate::endpoint::MAX_BROADCAST_BYTES); a resource URI too long for one
//! is updated on its own instance only), the hook on the endpoint's event bus that sends them,
//! and the task that acts on the others'. Knows nothing of HTTP or of how a store carries them.

use std::sync::{Arc, Weak};

use tollgate_json::{JsonObject, JsonValue, OutputLimits};

use crate::model::subscription::{Event, ListKind, Listeners, list_bit};
use crate::session::{SessionTable, bounded, spawn_once};
use crate::stream::session::SessionStreams;
use crate::wire::id::RequestId;

/// The most messages waiting to be broadcast; past it a message reaches this instance only.
pub(crate) const MAX_QUEUED_BROADCASTS: usize = 1_024;

/// Messages on their way to the other instances, sent in order by one task.
pub(crate) struct Outgoing {
    queue: std::sync::Mutex<std::collections::VecDeque<String>>,
    wake: tokio::sync::Notify,
    sending: std::sync::atomic::AtomicBool,
    store: Arc<dyn crate::session::store::SessionStore>,
}

impl Outgoing {
    pub(crate) fn new(store: Arc<dyn crate::session::store::SessionStore>) -> Self {
        Self {
            queue: std::sync::Mutex::default(),
            wake: tokio::sync::Notify::new(),
            sending: std::sync::atomic::AtomicBool::new(false),
            store,
        }
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, std::collections::VecDeque<String>> {
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues `message` (dropped past [`MAX_QUEUED_BROADCASTS`]) and starts the sender.
    pub(crate) fn send(self: &Arc<Self>, message: String) {
        {
            let mut queue = self.queue();
            if queue.len() >= MAX_QUEUED_BROADCASTS {
                return;
            }
            queue.push_back(message);
        }
        self.wake.notify_one();
        let outgoing = Arc::downgrade(self);
        spawn_once(&self.sending, || async move {
            loop {
                let Some(outgoing) = outgoing.upgrade() else {
                    return;
                };
                let next = outgoing.queue().pop_front();
                match next {
                    Some(message) => {
                        let _ = bounded(outgoing.store.broadcast(&message)).await;
                    }
                    None => {
                        let woken = outgoing.wake.notified();
                        let _ =
                            tokio::time::timeout(std::time::Duration::from_secs(60), woken).await;
                    }
                }
            }
        });
    }

    /// How many messages wait.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.queue().len()
    }
}

const RESOURCE: &str = "r";
const TASK: &str = "t";
const CANCEL: &str = "c";

impl SessionTable {
    /// Makes the endpoint's events travel to the other instances, and theirs arrive here.
    pub(crate) fn share_events(self: &Arc<Self>, listeners: &Listeners) {
        if self.shared.is_none() || self.relay.is_none() {
            return;
        }
        let _ = self.publisher.set(listeners.publisher());
        let table: Weak<Self> = Arc::downgrade(self);
        listeners.set_hook(Arc::new(move |event: &Event| {
            if let Some(table) = table.upgrade() {
                let (kind, text) = match event {
                    Event::ResourceUpdated(uri) => (RESOURCE, uri),
                    Event::TaskChanged(id) => (TASK, id),
                    // Each instance announces its own catalog's changes.
                    Event::ListsChanged(_) => return,
                };
                table.broadcast(kind, text);
            }
        }));
    }

    /// Sends one message to the other instances (in the background; a message too long, or a
    /// store that fails, reaches this instance only).
    fn broadcast(self: &Arc<Self>, kind: &str, text: &str) {
        let Some(relay) = &self.relay else {
            return;
        };
        self.start_receiving();
        let message = format!("{} {kind} {text}", relay.instance());
        relay.outgoing.send(message);
    }

    /// Starts acting on the other instances' messages, once (inside a runtime).
    pub(crate) fn start_receiving(self: &Arc<Self>) {
        let (Some(store), Some(relay)) = (&self.shared, &self.relay) else {
            return;
        };
        let table = Arc::downgrade(self);
        spawn_once(&relay.receiving, || {
            let heard = store.subscribe();
            async move {
                let Some(mut heard) = heard else {
                    return;
                };
                loop {
                    let message = match heard.recv().await {
                        Ok(message) => message,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                    };
                    let Some(table) = table.upgrade() else {
                        return;
                    };
                    table.heard(&message);
                }
            }
        });
    }

    /// Acts on another instance's message (this instance's own are skipped).
    fn heard(&self, message: &str) {
        let mut parts = message.splitn(3, ' ');
        let (Some(from), Some(kind), Some(text)) = (parts.next(), parts.next(), parts.next())
        else {
            return;
        };
        if self.relay.as_ref().is_some_and(|r| r.instance() == from) {
            return;
        }
        match kind {
            RESOURCE => {
                if let Some(publisher) = self.publisher.get() {
                    publisher.publish_here(Event::ResourceUpdated(Arc::from(text)));
                }
                self.resource_updated(text);
            }
            TASK => {
                if let Some(publisher) = self.publisher.get() {
                    publisher.publish_here(Event::TaskChanged(Arc::from(text)));
                }
            }
            CANCEL => {
                let Some((session, request)) = text.split_once(' ') else {
                    return;
                };
                let request = tollgate_json::from_str(request, &self.limits)
                    .ok()
                    .as_ref()
                    .and_then(RequestId::from_json);
                if let (Some(streams), Some(request)) = (self.streams_of(session), request) {
                    streams.cancel(&request);
                }
            }
            _ => {}
        }
    }

    /// `notifications/resources/updated` for `uri` to the 2025 sessions here that subscribed.
    pub(crate) fn resource_updated(&self, uri: &str) {
        let notification: JsonValue = JsonObject::builder()
            .insert("jsonrpc", "2.0")
            .insert("method", "notifications/resources/updated")
            .insert("params", JsonObject::builder().insert("uri", uri).build())
            .build()
            .into();
        let Ok(bytes) = tollgate_json::to_vec(&notification, &self.output) else {
            return;
        };
        for streams in self.all_streams() {
            streams.resource_updated(uri, &bytes);
        }
    }

    /// `notifications/{tools,prompts,resources}/list_changed` for the lists in `lists`
    /// (`list_bit`s) to every 2025 session here whose revision they changed on, on its
    /// standalone stream (waiting in its replay buffer until a `GET` takes it).
    pub(crate) fn lists_changed(&self, lists: u16) {
        let mut rendered: Vec<(ListKind, Vec<u8>)> = Vec::new();
        for list in ListKind::ALL {
            let notification: JsonValue = JsonObject::builder()
                .insert("jsonrpc", "2.0")
                .insert("method", list.notification())
                .build()
                .into();
            if let Ok(bytes) = tollgate_json::to_vec(&notification, &self.output) {
                rendered.push((list, bytes));
            }
        }
        for streams in self.all_streams() {
            // With per-principal views, only the lists the session's view changed.
            let lists = streams.view.get().map_or(lists, |view| view.changed(lists));
            let due = rendered
                .iter()
                .filter(|(list, _)| lists & list_bit(streams.revision, *list) != 0);
            let mut stream = None;
            for (_, bytes) in due {
                if stream.is_none() {
                    stream = streams.standalone_stream();
                }
                if let Some(stream) = &stream {
                    stream.push_notification(bytes);
                }
            }
        }
    }

    /// `notifications/cancelled` in session `id`: stops the request here, or (not running here)
    /// wherever it runs.
    pub(crate) fn cancel(
        self: &Arc<Self>,
        id: &str,
        streams: &SessionStreams,
        request: &RequestId,
    ) {
        if streams.cancel(request) || self.shared.is_none() {
            return;
        }
        let Ok(text) = tollgate_json::to_string(&request.to_json(), &OutputLimits::default())
        else {
            return;
        };
        self.broadcast(CANCEL, &format!("{id} {text}"));
    }
}
