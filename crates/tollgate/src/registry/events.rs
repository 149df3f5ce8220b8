//! Catalog events: named, serialisable changes of a live catalog that every instance applies
//! itself (catalogs are code, so what travels is the event, never a catalog).
//!
//! Owns the handlers an application registers with
//! [`EndpointBuilder::catalog_event`](crate::endpoint::EndpointBuilder::catalog_event), the
//! payload bound ([`MAX_CATALOG_EVENT_BYTES`]), [`Catalogs::publish`] and [`Catalogs::sync`],
//! and [`CatalogEventError`]. An event is applied through its handler, which turns the payload
//! into one [`CatalogChange`] applied as any change is (refused whole). Without a bus the
//! publishing endpoint applies it at once; with one (`shared.rs`, PostgreSQL) it is logged and
//! applied by every instance, in log order. Knows nothing of requests, transports or SQL.

use std::collections::HashMap;
use std::sync::Arc;

use tollgate_json::{JsonValue, OutputLimits};

use crate::facts::error::BuildError;
use crate::registry::event_error::{CatalogEventError, CatalogEventErrorKind};
use crate::registry::live::{CatalogChange, Catalogs, Live};

/// The default bound on one catalog event's payload, as compact JSON text (16 KiB); see
/// [`EndpointBuilder::max_catalog_event_bytes`](crate::endpoint::EndpointBuilder::max_catalog_event_bytes).
///
/// ```
/// assert_eq!(tollgate::endpoint::MAX_CATALOG_EVENT_BYTES, 16 * 1024);
/// ```
pub const MAX_CATALOG_EVENT_BYTES: usize = 16 * 1024;

/// The highest payload bound an endpoint may set (1 MiB): events are kept in the log and read
/// by every instance.
///
/// ```
/// assert_eq!(tollgate::endpoint::MAX_CATALOG_EVENT_BYTES_CEILING, 1024 * 1024);
/// ```
pub const MAX_CATALOG_EVENT_BYTES_CEILING: usize = 1024 * 1024;

/// A registered handler: the change an event's payload makes of the catalog published now.
pub(crate) type EventHandler =
    Arc<dyn Fn(&Catalogs, &JsonValue) -> Result<CatalogChange, BuildError> + Send + Sync>;

/// What the builder collects for the events.
pub(crate) struct EventSettings {
    pub(crate) handlers: HashMap<Arc<str>, EventHandler>,
    pub(crate) max_bytes: usize,
    #[cfg(feature = "postgres")]
    pub(crate) bus: Option<crate::registry::shared::PostgresCatalogBus>,
}

impl Default for EventSettings {
    fn default() -> Self {
        Self {
            handlers: HashMap::new(),
            max_bytes: MAX_CATALOG_EVENT_BYTES,
            #[cfg(feature = "postgres")]
            bus: None,
        }
    }
}

impl EventSettings {
    /// Whether anything was asked of the events (they then need live catalogs).
    pub(crate) fn is_set(&self) -> bool {
        #[cfg(feature = "postgres")]
        if self.bus.is_some() {
            return true;
        }
        !self.handlers.is_empty()
    }

    /// Whether the payload bound is in range.
    pub(crate) fn is_valid(&self) -> bool {
        (1..=MAX_CATALOG_EVENT_BYTES_CEILING).contains(&self.max_bytes)
    }

    /// Gives `live` its events; with a bus, starts following the log (inside a runtime; else
    /// at the first publish or sync). `catalog` names the log when the bus names none.
    pub(crate) fn attach(self, live: &Arc<Live>, catalog: &str) {
        #[cfg(not(feature = "postgres"))]
        let _ = catalog;
        let events = Arc::new(Events {
            handlers: self.handlers,
            max_bytes: self.max_bytes,
            local: tokio::sync::Mutex::new(0),
            #[cfg(feature = "postgres")]
            shared: self
                .bus
                .map(|bus| Arc::new(crate::registry::shared::Shared::new(bus, catalog))),
        });
        let slot: Arc<dyn std::any::Any + Send + Sync> = Arc::clone(&events) as _;
        if live.events.set(slot).is_ok() {
            events.follow(live);
        }
    }
}

impl crate::endpoint::EndpointBuilder {
    /// Registers the handler of the catalog event `name` (a later registration of the same name
    /// replaces it): given the catalog published now and the event's payload, it returns the
    /// one change the event makes, applied as [`Catalogs::apply`] applies it. Events are
    /// published with [`Catalogs::publish`]; with a
    /// [`catalog_bus`](Self::catalog_bus) every instance runs this handler itself, so it must
    /// be a function of the catalog and the payload alone, and an event should set state (the
    /// log keeps the latest event of each name for instances that start later). Needs
    /// [`live_catalogs`](Self::live_catalogs) (`build` refuses the endpoint otherwise).
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::endpoint::CatalogChange;
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///     Implementation::new("demo", "1.0.0"))
    ///     .live_catalogs()
    ///     .catalog_event("nothing", |_, _| Ok(CatalogChange::new()))
    ///     .build()?;
    /// # let _ = endpoint;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn catalog_event<F>(mut self, name: impl Into<Arc<str>>, handler: F) -> Self
    where
        F: Fn(&Catalogs, &JsonValue) -> Result<CatalogChange, BuildError> + Send + Sync + 'static,
    {
        self.events.handlers.insert(name.into(), Arc::new(handler));
        self
    }

    /// The bound on one catalog event's payload, as compact JSON text (default
    /// [`MAX_CATALOG_EVENT_BYTES`], 16 KiB; from 1 byte to
    /// [`MAX_CATALOG_EVENT_BYTES_CEILING`], else `build` fails with
    /// [`BuildErrorKind::InvalidConfiguration`](crate::BuildErrorKind::InvalidConfiguration)). A larger payload is refused by
    /// [`Catalogs::publish`] with [`CatalogEventErrorKind::TooLarge`].
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///     Implementation::new("demo", "1.0.0")).live_catalogs().max_catalog_event_bytes(1024)
    ///     .build()?;
    /// # let _ = endpoint;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn max_catalog_event_bytes(mut self, bytes: usize) -> Self {
        self.events.max_bytes = bytes;
        self
    }
}

/// A live endpoint's events.
pub(crate) struct Events {
    handlers: HashMap<Arc<str>, EventHandler>,
    max_bytes: usize,
    /// Without a bus: publishes here take turns; the count of events applied.
    local: tokio::sync::Mutex<u64>,
    #[cfg(feature = "postgres")]
    shared: Option<Arc<crate::registry::shared::Shared>>,
}

impl Events {
    /// With a bus, starts following its log for `live` (once; outside a runtime nothing starts,
    /// and the next publish or sync starts it).
    fn follow(self: &Arc<Self>, live: &Arc<Live>) {
        #[cfg(feature = "postgres")]
        if let Some(shared) = &self.shared {
            let applier: Arc<dyn crate::registry::shared::Applier> = Arc::clone(self) as _;
            shared.follow(live, &applier);
        }
        #[cfg(not(feature = "postgres"))]
        let _ = live;
    }

    /// The payload as the log keeps it: compact JSON of at most the bound.
    fn text(&self, payload: &JsonValue) -> Result<String, CatalogEventError> {
        let too_large = || CatalogEventError::new(CatalogEventErrorKind::TooLarge);
        let limits = OutputLimits::default()
            .with_max_output_bytes(self.max_bytes)
            .map_err(|_| too_large())?;
        let text = tollgate_json::to_string(payload, &limits).map_err(|_| too_large())?;
        if text.len() > self.max_bytes {
            return Err(too_large());
        }
        Ok(text)
    }

    /// The change event `name` makes of the catalog published now, or why there is none.
    fn change(
        &self,
        live: &Arc<Live>,
        name: &str,
        payload: &JsonValue,
    ) -> Result<CatalogChange, CatalogEventError> {
        let handler = self
            .handlers
            .get(name)
            .ok_or(CatalogEventError::new(CatalogEventErrorKind::UnknownEvent))?;
        handler(&Catalogs::new(Arc::clone(live)), payload).map_err(CatalogEventError::refused)
    }

    async fn publish(
        &self,
        live: &Arc<Live>,
        name: &str,
        payload: &JsonValue,
    ) -> Result<u64, CatalogEventError> {
        if !self.handlers.contains_key(name) {
            return Err(CatalogEventError::new(CatalogEventErrorKind::UnknownEvent));
        }
        let text = self.text(payload)?;
        #[cfg(feature = "postgres")]
        if let Some(shared) = &self.shared {
            return shared.publish(live, self, name, payload, &text).await;
        }
        let _ = text;
        let mut applied = self.local.lock().await;
        let change = self.change(live, name, payload)?;
        live.apply(change).map_err(CatalogEventError::refused)?;
        *applied += 1;
        Ok(*applied)
    }
}

/// The bus applies and checks events through the endpoint's handlers.
#[cfg(feature = "postgres")]
impl crate::registry::shared::Applier for Events {
    /// Applies event `name` with the payload `text` as logged (read back under the ceiling).
    fn apply_text(
        &self,
        live: &Arc<Live>,
        name: &str,
        text: &str,
    ) -> Result<(), CatalogEventError> {
        let limits = tollgate_json::JsonLimits::default()
            .with_max_input_bytes(MAX_CATALOG_EVENT_BYTES_CEILING)
            .unwrap_or_default();
        let payload = tollgate_json::from_str(text, &limits)
            .map_err(|_| CatalogEventError::new(CatalogEventErrorKind::TooLarge))?;
        let change = self.change(live, name, &payload)?;
        live.apply(change).map_err(CatalogEventError::refused)?;
        Ok(())
    }

    /// Whether event `name` with `payload` would be accepted by the catalog published now.
    fn check(
        &self,
        live: &Arc<Live>,
        name: &str,
        payload: &JsonValue,
    ) -> Result<(), CatalogEventError> {
        let change = self.change(live, name, payload)?;
        live.check(change).map_err(CatalogEventError::refused)
    }
}

impl Catalogs {
    /// The endpoint's events (set at build on every live endpoint; `live.rs` keeps them opaque).
    fn events(&self) -> Result<Arc<Events>, CatalogEventError> {
        self.live
            .events
            .get()
            .and_then(|slot| Arc::clone(slot).downcast::<Events>().ok())
            .ok_or(CatalogEventError::new(CatalogEventErrorKind::UnknownEvent))
    }

    /// Publishes the catalog event `event` (registered with
    /// [`EndpointBuilder::catalog_event`](crate::endpoint::EndpointBuilder::catalog_event)):
    /// its handler turns `payload` into one change, applied as [`apply`](Self::apply) applies
    /// it. Without a [`catalog_bus`](crate::endpoint::EndpointBuilder::catalog_bus) the change
    /// is applied here at once. With one, the event is checked against this instance's catalog,
    /// logged with the next version of the catalog's log, and applied by every instance (this
    /// one included) in log order; this returns once every instance with a fresh heartbeat has
    /// applied it, so a list or call through any of them answers with the change. Returns the
    /// event's version (without a bus, the count of events applied here).
    ///
    /// # Errors
    ///
    /// [`CatalogEventErrorKind::UnknownEvent`] for a name no handler was registered for,
    /// [`CatalogEventErrorKind::TooLarge`] for a payload over the bound
    /// ([`MAX_CATALOG_EVENT_BYTES`] unless set), [`CatalogEventErrorKind::Refused`] when the
    /// handler or the change's checks refuse it (nothing is then logged or changed anywhere),
    /// and with a bus [`CatalogEventErrorKind::Backend`] when PostgreSQL fails,
    /// [`CatalogEventErrorKind::NotAcknowledged`] when live instances did not apply it within the
    /// bus's acknowledgement timeout and [`CatalogEventErrorKind::RefusedElsewhere`] when some
    /// refused it (the event is logged then: [`CatalogEventError::count`] says how many).
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::endpoint::CatalogChange;
    /// use tollgate::json::JsonValue;
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///     Implementation::new("demo", "1.0.0"))
    ///     .live_catalogs()
    ///     .catalog_event("retire", |_, payload| {
    ///         let name = payload.as_str().unwrap_or_default().to_owned();
    ///         Ok(CatalogChange::new().remove_tool(name))
    ///     })
    ///     .build()?;
    /// let Some(catalogs) = endpoint.catalogs() else { unreachable!("built live") };
    /// // No such tool: the change is refused whole.
    /// assert!(catalogs.publish("retire", &JsonValue::from("missing")).await.is_err());
    /// # Ok::<(), tollgate::BuildError>(())
    /// # }).unwrap();
    /// ```
    pub async fn publish(
        &self,
        event: &str,
        payload: &JsonValue,
    ) -> Result<u64, CatalogEventError> {
        let events = self.events()?;
        events.follow(&self.live);
        events.publish(&self.live, event, payload).await
    }

    /// Applies every logged event this instance has not applied yet, in order, and returns the
    /// version applied (without a bus: the count of events applied here). An instance follows
    /// the log on its own (at start, on every notification and heartbeat); call this before
    /// serving to start with the cluster's catalog.
    ///
    /// # Errors
    ///
    /// [`CatalogEventErrorKind::Backend`] when PostgreSQL fails.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///     Implementation::new("demo", "1.0.0")).live_catalogs().build()?;
    /// let Some(catalogs) = endpoint.catalogs() else { unreachable!("built live") };
    /// assert_eq!(catalogs.sync().await.ok(), Some(0));
    /// # Ok::<(), tollgate::BuildError>(())
    /// # }).unwrap();
    /// ```
    pub async fn sync(&self) -> Result<u64, CatalogEventError> {
        let events = self.events()?;
        events.follow(&self.live);
        #[cfg(feature = "postgres")]
        if let Some(shared) = &events.shared {
            return shared.catch_up(&self.live, &*events).await;
        }
        Ok(*events.local.lock().await)
    }
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
