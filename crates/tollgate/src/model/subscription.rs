//! The endpoint's event bus for `subscriptions/listen` (2026-07-28): [`Listeners`] (resource
//! updates and task changes published in this process, the open-stream count and its bounds, the
//! signal that ends every stream at shutdown). The method itself, its filter, acknowledgement and
//! relay loop, is `methods/listen.rs`. Knows nothing of requests or framing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::broadcast;

use crate::model::features::CancellationToken;
use crate::version::ProtocolVersion;

/// The default bound on the streams one endpoint keeps open at once (past it: 503 / -32603
/// `Server busy`); [`EndpointLimits::max_listen_streams`](crate::endpoint::EndpointLimits::max_listen_streams)
/// sets another.
///
/// ```
/// assert_eq!(tollgate::endpoint::MAX_LISTEN_STREAMS, 1024);
/// ```
pub const MAX_LISTEN_STREAMS: usize = 1024;
/// The default bound on the `subscriptions/listen` streams one admitted principal may hold open
/// on an endpoint (anonymous callers cannot be told apart: they are bounded by the endpoint's
/// bound alone);
/// [`EndpointLimits::max_listen_streams_per_principal`](crate::endpoint::EndpointLimits::max_listen_streams_per_principal)
/// sets another.
///
/// ```
/// assert_eq!(tollgate::endpoint::MAX_LISTEN_STREAMS_PER_PRINCIPAL, 64);
/// ```
pub const MAX_LISTEN_STREAMS_PER_PRINCIPAL: usize = 64;
/// The most resource URIs, and separately task ids, one stream may name.
///
/// ```
/// assert_eq!(tollgate::endpoint::MAX_SUBSCRIPTION_ENTRIES, 256);
/// ```
pub const MAX_SUBSCRIPTION_ENTRIES: usize = 256;

/// Something a listening client may want to hear about.
#[derive(Clone, Debug)]
pub(crate) enum Event {
    ResourceUpdated(Arc<str>),
    TaskChanged(Arc<str>),
    /// A live catalog's lists changed: a set of [`list_bit`]s (heard on this instance only:
    /// each instance announces its own catalog's changes).
    ListsChanged(u16),
}

/// The lists a live catalog announces changes of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListKind {
    Tools = 0,
    Prompts = 1,
    Resources = 2,
}

impl ListKind {
    /// Every list, in a fixed order.
    pub(crate) const ALL: [Self; 3] = [Self::Tools, Self::Prompts, Self::Resources];

    /// The notification announcing a change of this list.
    pub(crate) const fn notification(self) -> &'static str {
        match self {
            Self::Tools => "notifications/tools/list_changed",
            Self::Prompts => "notifications/prompts/list_changed",
            Self::Resources => "notifications/resources/list_changed",
        }
    }

    /// The `subscriptions/listen` filter flag asking for it.
    pub(crate) const fn filter(self) -> &'static str {
        match self {
            Self::Tools => "toolsListChanged",
            Self::Prompts => "promptsListChanged",
            Self::Resources => "resourcesListChanged",
        }
    }
}

/// The bit of `list` on `revision` in an [`Event::ListsChanged`] set.
pub(crate) const fn list_bit(revision: ProtocolVersion, list: ListKind) -> u16 {
    1 << (revision.rank() * 3 + list as usize)
}

/// Where an event published here also goes (the other instances, through `session/`).
pub(crate) type Hook = Arc<dyn Fn(&Event) + Send + Sync>;

/// Publishes the endpoint's events: to this instance's streams, and through the hook (when the
/// endpoint shares its sessions) to every other instance's.
#[derive(Clone)]
pub(crate) struct Publisher {
    events: broadcast::Sender<Event>,
    hook: Arc<std::sync::OnceLock<Hook>>,
}

impl Publisher {
    /// Publishes an event of this instance, here and to the others.
    pub(crate) fn publish(&self, event: Event) {
        if let Some(hook) = self.hook.get() {
            hook(&event);
        }
        let _ = self.events.send(event);
    }

    /// Publishes an event another instance sent, here only.
    pub(crate) fn publish_here(&self, event: Event) {
        let _ = self.events.send(event);
    }
}

/// The endpoint's event bus and open-stream count, and the signal that ends every stream
/// gracefully (server shutdown).
pub(crate) struct Listeners {
    pub(crate) events: broadcast::Sender<Event>,
    /// Where events also go (set once, when the endpoint shares its sessions).
    hook: Arc<std::sync::OnceLock<Hook>>,
    /// The places open streams hold (shared with their guards, which outlive a borrow of the
    /// endpoint when a listen's loop is handed to its response body).
    pub(crate) places: Arc<Places>,
    pub(crate) closing: CancellationToken,
    /// The bound on open streams, and on one principal's.
    max_open: usize,
    max_per_principal: usize,
}

impl std::fmt::Debug for Listeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listeners")
            .field("open", &self.places.open.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Default for Listeners {
    fn default() -> Self {
        Self::new(MAX_LISTEN_STREAMS, MAX_LISTEN_STREAMS_PER_PRINCIPAL)
    }
}

impl Listeners {
    /// No stream open yet; at most `max_open` at once, `max_per_principal` of one principal.
    pub(crate) fn new(max_open: usize, max_per_principal: usize) -> Self {
        Self {
            events: broadcast::channel(1024).0,
            hook: Arc::default(),
            places: Arc::default(),
            closing: CancellationToken::new(),
            max_open,
            max_per_principal,
        }
    }

    /// Publishes an event to every open stream (none open: dropped), and to the other
    /// instances when the endpoint shares its sessions.
    pub(crate) fn publish(&self, event: Event) {
        self.publisher().publish(event);
    }

    pub(crate) fn publisher(&self) -> Publisher {
        Publisher {
            events: self.events.clone(),
            hook: Arc::clone(&self.hook),
        }
    }

    /// Sends every event published here to `hook` too (once; later calls change nothing).
    pub(crate) fn set_hook(&self, hook: Hook) {
        let _ = self.hook.set(hook);
    }

    /// Ends every open stream with its graceful result.
    pub(crate) fn close_all(&self) {
        self.closing.cancel();
    }
}

/// Open streams, in all and per admitted principal.
#[derive(Default)]
pub(crate) struct Places {
    pub(crate) open: AtomicUsize,
    owned: std::sync::Mutex<std::collections::HashMap<Arc<str>, usize>>,
}

impl Places {
    fn owned(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<Arc<str>, usize>> {
        // Every update is one count change: a poisoned map is still consistent.
        self.owned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Listeners {
    /// Takes a place for one more stream of `principal`, within the endpoint's bound and the
    /// principal's; `None` past either.
    pub(crate) fn open_for(&self, principal: Option<&str>) -> Option<OpenGuard> {
        let places = &self.places;
        if places.open.fetch_add(1, Ordering::AcqRel) >= self.max_open {
            places.open.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        let mut guard = OpenGuard {
            places: Arc::clone(places),
            principal: None,
        };
        if let Some(principal) = principal {
            let mut owned = places.owned();
            let count = owned.entry(Arc::from(principal)).or_insert(0);
            if *count >= self.max_per_principal {
                return None;
            }
            *count += 1;
            guard.principal = Some(Arc::from(principal));
        }
        Some(guard)
    }
}

/// Gives a stream's place back when the stream ends, however it ends.
pub(crate) struct OpenGuard {
    places: Arc<Places>,
    principal: Option<Arc<str>>,
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.places.open.fetch_sub(1, Ordering::AcqRel);
        if let Some(principal) = &self.principal {
            let mut owned = self.places.owned();
            if let Some(n) = owned.get_mut(principal) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    owned.remove(principal);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            listeners.places.open.load(Ordering::Acquire),
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
        assert_eq!(listeners.places.open.load(Ordering::Acquire), 0);
        assert!(listeners.places.owned().is_empty());
    }

    /// Bounds set lower than the defaults hold at the bound and one past it, for the endpoint
    /// and for one principal.
    #[test]
    fn configured_bounds_hold_at_the_bound_and_one_past() {
        let listeners = Listeners::new(3, 2);
        let alice: Vec<_> = (0..2).map(|_| listeners.open_for(Some("alice"))).collect();
        assert!(
            alice.iter().all(Option::is_some),
            "at the principal's bound"
        );
        assert!(listeners.open_for(Some("alice")).is_none(), "one past it");
        let anonymous = listeners.open_for(None);
        assert!(anonymous.is_some(), "at the endpoint's bound");
        assert!(listeners.open_for(None).is_none(), "one past it");
        assert!(
            listeners.open_for(Some("bob")).is_none(),
            "full for everyone"
        );
        assert_eq!(listeners.places.open.load(Ordering::Acquire), 3);
        drop(anonymous);
        assert!(
            listeners.open_for(Some("bob")).is_some(),
            "a place given back"
        );
    }
}
