//! Endpoints: an exact path, its revisions, its registrations, its policy and stores, and the
//! catalogs rendered from them, immutable once built (a live endpoint publishes new catalogs,
//! each immutable too).
//!
//! - this module: [`Endpoint`] and what it holds ([`Implementation`], [`EndpointLimits`], the
//!   registry lookups the methods use);
//! - `builder`: `EndpointBuilder` (with [`Endpoint::with_path`]) and the construction rules (paths, revision containment,
//!   unique names, limiters and task stores named);
//! - `compile`: the rules registrations meet on their endpoint, checked for a catalog as a
//!   whole (at build, and again for every change of a live catalog);
//! - `apps`: the MCP Apps views a catalog serves, checked against its tools and output limits;
//! - `catalog`: the pre-rendered `server/discover`/`initialize` results and list pages;
//! - `snapshot`: one catalog as requests see it, and the handle a request holds on it;
//! - `live`: the [`Catalogs`](live::Catalogs) handle that changes a live endpoint's catalog and
//!   announces the change;
//! - `events`: named catalog events an application registers and publishes, applied here at
//!   once or, through `shared` (PostgreSQL), by every instance; `event_error`: their error.
//! - `view`: per-principal views, the catalogs rendered for them and what a listener's view
//!   changed; `view_cache`: the bounded cache of those renderings each catalog carries.
//!
//! Knows nothing of HTTP framing or revisions' envelopes; the methods read these pages.

pub(crate) mod apps;
pub(crate) mod builder;
pub(crate) mod catalog;
pub(crate) mod compile;
pub(crate) mod event_error;
pub(crate) mod events;
pub(crate) mod live;
pub(crate) mod report;
#[cfg(feature = "postgres")]
pub(crate) mod shared;
pub(crate) mod skills;
pub(crate) mod snapshot;
pub(crate) mod view;
pub(crate) mod view_cache;

use std::collections::HashMap;
use std::sync::Arc;

use tollgate_json::{BindLimits, JsonLimits, JsonObject, JsonValue, OutputLimits};
use tollgate_schema::EvaluationGate;

use crate::model::cache::CachePolicy;
use crate::model::content::icon::{Icon, render_icons};
use crate::model::prompt::PromptRegistration;
use crate::model::resource::{ResourceRegistration, ResourceTemplateRegistration};
use crate::model::tool::ToolRegistration;
use crate::policy::rules::Policy;
use crate::registry::snapshot::{Catalog, Snapshot};
use crate::session::SessionTable;
use crate::stream::StreamConfig;
use crate::version::{ProtocolVersion, ProtocolVersions};
use crate::wire::syntax;

/// A map from registered names (paths, tool and prompt names) to what they name, built once
/// and then only read. Its hasher is foldhash's, seeded per process: a request's lookups cost a
/// fraction of SipHash's, and since only the server puts keys in, a client's names can make a
/// lookup probe no further than the registered keys' own layout does.
pub(crate) type NameMap<V> = HashMap<Arc<str>, V, foldhash::fast::RandomState>;

/// The revisions this version of Tollgate serves on the wire.
pub(crate) const IMPLEMENTED: ProtocolVersions = ProtocolVersions::empty()
    .with(ProtocolVersion::V2026_07_28)
    .with(ProtocolVersion::V2025_11_25)
    .with(ProtocolVersion::V2025_06_18)
    .with(ProtocolVersion::V2025_03_26)
    .with(ProtocolVersion::V2024_11_05);

/// How many revisions there are: the length of the per-revision arrays a catalog keeps.
pub(crate) const REVISIONS: usize = ProtocolVersion::ALL.len();

/// The server's self-description (`io.modelcontextprotocol/serverInfo`).
///
/// # Examples
///
/// ```
/// use tollgate::Implementation;
///
/// let info = Implementation::new("catalog", "1.0.0").title("Catalog");
/// assert_eq!(info.name(), "catalog");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Implementation {
    name: Arc<str>,
    version: Arc<str>,
    title: Option<Arc<str>>,
    description: Option<Arc<str>>,
    website_url: Option<Arc<str>>,
    icons: Vec<Icon>,
}

impl Implementation {
    /// A name and version.
    pub fn new(name: impl Into<Arc<str>>, version: impl Into<Arc<str>>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: Vec::new(),
        }
    }

    /// A display title.
    #[must_use]
    pub fn title(mut self, title: impl Into<Arc<str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// A description.
    #[must_use]
    pub fn description(mut self, description: impl Into<Arc<str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// A website (must be an absolute URI; checked when the endpoint is built).
    #[must_use]
    pub fn website_url(mut self, url: impl Into<Arc<str>>) -> Self {
        self.website_url = Some(url.into());
        self
    }

    /// Appends an icon.
    #[must_use]
    pub fn add_icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The implementation as `revision` describes it: 2025-06-18 knows only name, title and
    /// version, the revisions before it only name and version.
    pub(crate) fn render(&self, revision: ProtocolVersion) -> JsonValue {
        let mut b = JsonObject::builder().insert("name", &*self.name);
        if let Some(t) = self
            .title
            .as_ref()
            .filter(|_| revision.carries_titles_and_structure())
        {
            b.push("title", &**t);
        }
        b.push("version", &*self.version);
        if revision.carries_icons() {
            if let Some(d) = &self.description {
                b.push("description", &**d);
            }
            if let Some(w) = &self.website_url {
                b.push("websiteUrl", &**w);
            }
            if !self.icons.is_empty() {
                b.push("icons", render_icons(&self.icons));
            }
        }
        b.build().into()
    }
}

/// The bounds one endpoint enforces on requests and responses.
#[derive(Clone, Debug)]
pub struct EndpointLimits {
    pub(crate) json: JsonLimits,
    pub(crate) output: OutputLimits,
    pub(crate) bind: BindLimits,
    pub(crate) gate: Option<Arc<EvaluationGate>>,
    pub(crate) max_batch_elements: usize,
    pub(crate) max_listen_streams: usize,
    pub(crate) max_listen_streams_per_principal: usize,
}

impl Default for EndpointLimits {
    fn default() -> Self {
        Self {
            json: JsonLimits::default(),
            output: OutputLimits::default(),
            bind: BindLimits::default(),
            gate: None,
            max_batch_elements: Self::DEFAULT_MAX_BATCH_ELEMENTS,
            max_listen_streams: crate::model::subscription::MAX_LISTEN_STREAMS,
            max_listen_streams_per_principal:
                crate::model::subscription::MAX_LISTEN_STREAMS_PER_PRINCIPAL,
        }
    }
}

impl EndpointLimits {
    /// The fixed ceiling on a response's UTF-8 bytes: 4 MiB. [`output`](Self::output) may
    /// lower it; an endpoint whose output limit is above it refuses to build.
    pub const MAX_OUTPUT_BYTES: usize = 4 * 1024 * 1024;
    /// The fixed ceiling on one JSON string or member name, in UTF-16 units, for its decoded
    /// value and for its escaped spelling, in requests and in responses: 1,048,576. Lower
    /// limits are allowed; an endpoint whose limits are above it refuses to build.
    pub const MAX_STRING_UNITS: usize = 1024 * 1024;
    /// The default bound on a JSON-RPC batch's elements (2025-03-26, the one revision with
    /// batches): 32. A longer batch is refused whole (400, -32600 `Batch too large`) before any
    /// element runs; its bytes are bounded by the body limit like any request's.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::endpoint::EndpointLimits;
    ///
    /// assert_eq!(EndpointLimits::DEFAULT_MAX_BATCH_ELEMENTS, 32);
    /// let limits = EndpointLimits::new().max_batch_elements(8);
    /// assert_eq!(limits.batch_elements(), 8);
    /// ```
    pub const DEFAULT_MAX_BATCH_ELEMENTS: usize = 32;

    /// The production defaults: 10 MiB request bodies, depth 128, 100,000 values, 4 MiB
    /// responses, the binding limits of [`BindLimits`], and the process-wide evaluation gate
    /// (128 concurrent evaluations).
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether every limit is within the fixed MCP ceilings (the request body's 16 MiB
    /// ceiling is [`JsonLimits`]' own).
    pub(crate) fn within_ceilings(&self) -> bool {
        self.output.max_output_bytes() <= Self::MAX_OUTPUT_BYTES
            && self.output.max_string_units() <= Self::MAX_STRING_UNITS
            && self.output.max_string_token_units() <= Self::MAX_STRING_UNITS
            && self.json.max_string_units() <= Self::MAX_STRING_UNITS
            && self.json.max_string_token_units() <= Self::MAX_STRING_UNITS
    }

    /// Replaces the request JSON limits (the body byte limit is `max_input_bytes`). String
    /// limits above [`MAX_STRING_UNITS`](Self::MAX_STRING_UNITS) make the endpoint refuse to
    /// build ([`BuildErrorKind::LimitAboveCeiling`](crate::BuildErrorKind::LimitAboveCeiling)).
    #[must_use]
    pub fn json(mut self, limits: JsonLimits) -> Self {
        self.json = limits;
        self
    }

    /// Replaces the response limits. A byte limit above
    /// [`MAX_OUTPUT_BYTES`](Self::MAX_OUTPUT_BYTES) or string limits above
    /// [`MAX_STRING_UNITS`](Self::MAX_STRING_UNITS) make the endpoint refuse to build
    /// ([`BuildErrorKind::LimitAboveCeiling`](crate::BuildErrorKind::LimitAboveCeiling)).
    #[must_use]
    pub fn output(mut self, limits: OutputLimits) -> Self {
        self.output = limits;
        self
    }

    /// Replaces the typed-binding limits.
    #[must_use]
    pub fn bind(mut self, limits: BindLimits) -> Self {
        self.bind = limits;
        self
    }

    /// Uses a dedicated evaluation gate instead of the process-wide one.
    #[must_use]
    pub fn evaluation_gate(mut self, gate: Arc<EvaluationGate>) -> Self {
        self.gate = Some(gate);
        self
    }

    pub(crate) fn gate(&self) -> &EvaluationGate {
        self.gate
            .as_deref()
            .unwrap_or_else(|| EvaluationGate::global())
    }

    /// The request body byte limit.
    pub fn max_body_bytes(&self) -> usize {
        self.json.max_input_bytes()
    }

    /// Bounds a JSON-RPC batch's elements (default
    /// [`DEFAULT_MAX_BATCH_ELEMENTS`](Self::DEFAULT_MAX_BATCH_ELEMENTS), 32). Every element
    /// runs through admission, the request limiter and its method's budgets as a message of its
    /// own, so this bounds the work one body can ask for; 0 refuses every batch.
    #[must_use]
    pub fn max_batch_elements(mut self, elements: usize) -> Self {
        self.max_batch_elements = elements;
        self
    }

    /// The bound on a JSON-RPC batch's elements.
    pub fn batch_elements(&self) -> usize {
        self.max_batch_elements
    }

    /// Bounds the `subscriptions/listen` streams (2026-07-28) the endpoint keeps open at once
    /// (default [`MAX_LISTEN_STREAMS`](crate::endpoint::MAX_LISTEN_STREAMS), 1,024). One past it
    /// is answered 503 with -32603 `Server busy`; 0 refuses every listen. Each idle stream holds
    /// a connection, so raise [`ServerLimits::max_connections`](crate::transport::ServerLimits::max_connections)
    /// with it (and the process's descriptor limit).
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::endpoint::EndpointLimits;
    ///
    /// let limits = EndpointLimits::new().max_listen_streams(20_000);
    /// assert_eq!(limits.listen_streams(), 20_000);
    /// assert_eq!(EndpointLimits::new().listen_streams(), 1024);
    /// ```
    #[must_use]
    pub fn max_listen_streams(mut self, streams: usize) -> Self {
        self.max_listen_streams = streams;
        self
    }

    /// The bound on open `subscriptions/listen` streams.
    pub fn listen_streams(&self) -> usize {
        self.max_listen_streams
    }

    /// Bounds the `subscriptions/listen` streams one admitted principal holds open at once
    /// (default [`MAX_LISTEN_STREAMS_PER_PRINCIPAL`](crate::endpoint::MAX_LISTEN_STREAMS_PER_PRINCIPAL),
    /// 64); anonymous callers cannot be told apart and are bounded by
    /// [`max_listen_streams`](Self::max_listen_streams) alone.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::endpoint::EndpointLimits;
    ///
    /// let limits = EndpointLimits::new().max_listen_streams_per_principal(4);
    /// assert_eq!(limits.listen_streams_per_principal(), 4);
    /// ```
    #[must_use]
    pub fn max_listen_streams_per_principal(mut self, streams: usize) -> Self {
        self.max_listen_streams_per_principal = streams;
        self
    }

    /// The bound on one principal's open `subscriptions/listen` streams.
    pub fn listen_streams_per_principal(&self) -> usize {
        self.max_listen_streams_per_principal
    }
}

/// One MCP endpoint: an exact path, the revisions it serves, and its registrations.
///
/// # Examples
///
/// ```
/// use tollgate::{Endpoint, Implementation, ProtocolVersion};
///
/// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
///         Implementation::new("demo", "1.0.0"))
///     .instructions("A demo server")
///     .build()?;
/// assert_eq!(endpoint.path(), "/mcp");
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct Endpoint {
    pub(crate) inner: Arc<EndpointInner>,
}

pub(crate) struct EndpointInner {
    /// The read fallbacks, in registration order: consulted after the catalog's resources and
    /// templates, never listed.
    pub(crate) fallbacks: Arc<[crate::model::resource::fallback::ResourceFallback]>,
    /// The revisions any fallback is served on (where resources are offered whatever is
    /// listed).
    pub(crate) fallback_revisions: ProtocolVersions,
    pub(crate) path: Arc<str>,
    pub(crate) revisions: ProtocolVersions,
    /// The catalog as built: the one every request reads when the endpoint is not live.
    pub(crate) catalog: Catalog,
    /// The live catalog and its announcements, when built with
    /// [`live_catalogs`](builder::EndpointBuilder::live_catalogs).
    pub(crate) live: Option<Arc<live::Live>>,
    /// Per-principal views, when built with a [`view`](builder::EndpointBuilder::view)
    /// function (`None`: every caller reads the whole catalog).
    pub(crate) views: Option<Arc<view::Views>>,
    /// The endpoint's caching hints, for reads whose resource sets none.
    pub(crate) cache: CachePolicy,
    /// Admission and rate limits.
    pub(crate) policy: Policy,
    /// The key `requestState` is sealed with (`None` when the OS gave no randomness for the
    /// default and none was configured: `input_required` results then fail).
    pub(crate) state_key: Option<crate::facts::keyring::RequestStateKeyRing>,
    /// Where a single-use endpoint consumes each opened state's nonce (`None`: states open on
    /// any retry until they expire).
    pub(crate) single_use: Option<Arc<crate::single_use::SingleUse>>,
    pub(crate) limits: EndpointLimits,
    /// `supported` for the unsupported-version error, pre-rendered.
    pub(crate) supported_json: JsonValue,
    /// The same over HTTP, where 2024-11-05 is not served.
    pub(crate) supported_http_json: JsonValue,
    /// Sessions for the 2025 revisions; `None` when those are served statelessly (or not at
    /// all).
    pub(crate) sessions: Option<Arc<SessionTable>>,
    /// What carries this endpoint's events to the other instances: the session table when a
    /// session store is shared (without 2025 sessions, one that holds none).
    pub(crate) cluster: Option<Arc<SessionTable>>,
    /// Whether handlers may send log messages (the `logging` capability).
    pub(crate) logging: bool,
    /// Keep-alives, replay and resumption of event streams.
    pub(crate) streams: StreamConfig,
    /// The tasks extension (2026-07-28): present when a task store is configured and the
    /// endpoint serves 2026-07-28.
    pub(crate) tasks: Option<Arc<crate::tasks::runner::Tasks>>,
    /// `subscriptions/listen` streams: the event bus and the shutdown signal.
    pub(crate) listeners: crate::model::subscription::Listeners,
    /// Interceptors around every application handler call, outermost first.
    pub(crate) interceptors: Arc<[Arc<dyn crate::model::intercept::ErasedInterceptor>]>,
    /// The tool-result sanitizer, if configured.
    pub(crate) sanitizer: Option<Arc<dyn crate::model::intercept::ToolResultSanitizer>>,
    /// What becomes of a handler's error: the error types safe to log and the reporter.
    pub(crate) failures: crate::facts::report::Failures,
}

/// An opaque `tools/list` cursor: the page index bound to this catalog's fingerprint, so a
/// cursor from another endpoint or another build of the catalog is refused.
pub(crate) fn cursor_text(fingerprint: u64, page: usize) -> String {
    syntax::base64_encode(format!("tollgate/1/{fingerprint:016x}/{page}").as_bytes())
}

pub(crate) const fn revision_slot(version: ProtocolVersion) -> usize {
    version.rank()
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("path", &self.inner.path)
            .field("revisions", &self.inner.revisions)
            .field("tools", &self.inner.catalog.tools.len())
            .field("live", &self.inner.live.is_some())
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// The exact path.
    pub fn path(&self) -> &str {
        &self.inner.path
    }

    /// The revisions served.
    pub fn revisions(&self) -> ProtocolVersions {
        self.inner.revisions
    }

    /// The tools as built, in registration order (a live endpoint's current ones:
    /// [`Catalogs::tools`](live::Catalogs::tools)).
    pub fn tools(&self) -> &[ToolRegistration] {
        &self.inner.catalog.tools
    }

    /// The catalog a request runs on from its start to its end: the endpoint's own (borrowed,
    /// nothing counted) or the live one as published now (loaded once, lock-free).
    #[inline]
    pub(crate) fn catalog(&self) -> Snapshot<'_> {
        match &self.inner.live {
            None => Snapshot::Fixed(&self.inner.catalog),
            Some(live) => Snapshot::Live(live.current()),
        }
    }

    /// Whether 2025-11-25's `initialize` declares the `tasks` capability here: with a task store,
    /// when the endpoint's catalog (the whole one `initialize` answers from) has a tool on that
    /// revision with task support, or always when the catalog is live (as its other capabilities
    /// are declared whatever it holds now).
    #[cold]
    pub(crate) fn declares_requested_tasks(&self) -> bool {
        self.inner.tasks.is_some()
            && (self.inner.live.is_some() || self.catalog().has_requested_tasks())
    }

    /// The catalog `who` sees, from a request's start to its end: [`catalog`](Self::catalog)
    /// itself without views or when `who` sees all of it, else its view's.
    #[inline]
    pub(crate) fn catalog_for(
        &self,
        who: &crate::facts::identity::AdmissionIdentity,
    ) -> Snapshot<'_> {
        let catalog = self.catalog();
        match &self.inner.views {
            None => catalog,
            Some(views) => match views.narrow(&catalog, who) {
                None => catalog,
                Some(view) => Snapshot::Live(view),
            },
        }
    }

    /// What a listener admitted as `who` sees of the live catalog's changes: `Some` on a live
    /// endpoint with views (a listener is then told only of changes its view saw), `None`
    /// otherwise (every change is told).
    pub(crate) fn list_view(
        &self,
        who: &crate::facts::identity::AdmissionIdentity,
    ) -> Option<Arc<dyn crate::stream::ListView>> {
        let (live, views) = (self.inner.live.as_ref()?, self.inner.views.as_ref()?);
        Some(Arc::new(view::Watch::new(
            who.clone(),
            Arc::clone(views),
            live,
        )))
    }

    /// How many per-principal views of the catalog published now are rendered and cached (0
    /// without a [`view`](builder::EndpointBuilder::view) function, or while every caller has
    /// seen all of it): a gauge for monitoring, never above
    /// [`views_cached`](builder::EndpointBuilder::views_cached).
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///     Implementation::new("demo", "1.0.0"))
    ///     .view(|who, _item| who.principal_name().is_some())
    ///     .build()?;
    /// assert_eq!(endpoint.rendered_views(), 0);
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn rendered_views(&self) -> usize {
        self.catalog().views.len()
    }

    /// The handle that changes this endpoint's catalog while it serves: `Some` when it was
    /// built with [`live_catalogs`](builder::EndpointBuilder::live_catalogs), `None` when its
    /// catalog is fixed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let fixed = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///     Implementation::new("demo", "1.0.0")).build()?;
    /// assert!(fixed.catalogs().is_none());
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn catalogs(&self) -> Option<live::Catalogs> {
        self.inner.live.clone().map(live::Catalogs::new)
    }

    /// How many 2025 sessions are open now (0 when the endpoint serves those revisions
    /// statelessly, or not at all): a gauge for monitoring.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2025_11_25],
    ///     Implementation::new("demo", "1.0.0")).build()?;
    /// assert_eq!(endpoint.open_sessions(), 0);
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn open_sessions(&self) -> usize {
        self.inner.sessions.as_ref().map_or(0, |s| s.len())
    }

    /// Whether `revision` offers prompts here (the `prompts` capability; a live endpoint
    /// declares it whatever its catalog holds); without them the prompt methods do not exist on
    /// it.
    pub(crate) fn offers_prompts(&self, revision: ProtocolVersion) -> bool {
        self.inner.live.is_some() || self.inner.catalog.offers_prompts(revision)
    }

    /// Whether `revision` offers skills here (the skills extension: 2026-07-28, with skills).
    pub(crate) fn offers_skills(&self, revision: ProtocolVersion) -> bool {
        self.catalog().offers_skills(revision)
    }

    /// Whether `revision` offers resources here (the `resources` capability; a live endpoint
    /// declares it whatever its catalog holds, and a read fallback on `revision` whatever is
    /// listed).
    pub(crate) fn offers_resources(&self, revision: ProtocolVersion) -> bool {
        self.inner.live.is_some()
            || self.inner.catalog.offers_resources(revision)
            || self.inner.fallback_revisions.contains(revision)
    }

    /// Whether `revision` offers completions here (the `completions` capability).
    pub(crate) fn offers_completions(&self, revision: ProtocolVersion) -> bool {
        self.catalog().offers_completions(revision)
    }

    /// Tells every 2025 session subscribed to `uri` that the resource changed: a
    /// `notifications/resources/updated` on the session's standalone stream (delivered when the
    /// client has a `GET` stream open, or kept in its bounded replay buffer until it opens one).
    /// 2026-07-28 clients learn of updates through `subscriptions/listen`, which Tollgate does
    /// not serve yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2025_11_25],
    ///     Implementation::new("docs", "1.0.0")).build()?;
    /// // After the application changes the document:
    /// endpoint.notify_resource_updated("file:///docs/guide.md");
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn notify_resource_updated(&self, uri: &str) {
        self.inner
            .listeners
            .publish(crate::model::subscription::Event::ResourceUpdated(
                uri.into(),
            ));
        if let Some(store) = &self.inner.sessions {
            store.resource_updated(uri);
        }
    }

    /// The resources at exact URIs as built, in registration order.
    pub fn resources(&self) -> &[ResourceRegistration] {
        &self.inner.catalog.resources
    }

    /// The URI-template resources as built, in registration order.
    pub fn resource_templates(&self) -> &[ResourceTemplateRegistration] {
        &self.inner.catalog.templates
    }

    /// The prompts as built, in registration order.
    pub fn prompts(&self) -> &[PromptRegistration] {
        &self.inner.catalog.prompts
    }
}

/// The page a cursor names, if it was issued under `fingerprint` for a list of `pages` pages.
pub(crate) fn page_of(fingerprint: u64, cursor: &str, pages: usize) -> Option<usize> {
    if cursor.len() > 96 {
        return None;
    }
    let raw = syntax::base64_decode(cursor.as_bytes(), 72)?;
    let text = std::str::from_utf8(&raw).ok()?;
    let rest = text.strip_prefix(&format!("tollgate/1/{fingerprint:016x}/"))?;
    if rest.is_empty()
        || rest.len() > 10
        || !rest.bytes().all(|b| b.is_ascii_digit())
        || (rest.len() > 1 && rest.starts_with('0'))
    {
        return None;
    }
    let page: usize = rest.parse().ok()?;
    (page >= 1 && page < pages).then_some(page)
}

#[cfg(test)]
mod cluster_tests {
    //! Endpoints sharing a session store, as instances behind one URL do.

    #[tokio::test]
    async fn endpoints_sharing_a_store_hear_each_other_without_2025_sessions() {
        use crate::model::subscription::Event;
        use crate::registry::{Endpoint, Implementation};
        use crate::session::memory::MemorySessionStore;
        use crate::version::ProtocolVersion;
        use std::sync::Arc;
        use std::time::Duration;
        let shared = Arc::new(MemorySessionStore::new());
        let build = || {
            Endpoint::with_path(
                "/mcp",
                [ProtocolVersion::V2026_07_28],
                Implementation::new("t", "1"),
            )
            .session_store(Arc::clone(&shared))
            .build()
        };
        let (Ok(one), Ok(two)) = (build(), build()) else {
            unreachable!("valid endpoints");
        };
        assert!(one.inner.sessions.is_none(), "2026-07-28 keeps no sessions");
        let Some(cluster) = &two.inner.cluster else {
            unreachable!("a shared store makes a cluster");
        };
        cluster.start_receiving();
        let mut heard = two.inner.listeners.events.subscribe();
        one.notify_resource_updated("file:///a.txt");
        let got = tokio::time::timeout(Duration::from_secs(5), heard.recv()).await;
        assert!(matches!(got, Ok(Ok(Event::ResourceUpdated(uri))) if &*uri == "file:///a.txt"));
    }
}
