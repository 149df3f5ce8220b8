//! Endpoints: an exact path, its revisions, its tools, and the catalogs rendered from them.
//!
//! Owns endpoint construction rules (paths, revision containment, unique names) and the
//! immutable, pre-rendered `server/discover` and `tools/list` pages. Knows nothing of HTTP
//! framing; the protocol module reads these pages.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use tollgate_json::{
    BindLimits, JsonArray, JsonLimits, JsonObject, JsonValue, OutputLimits, to_vec,
};
use tollgate_schema::EvaluationGate;

use crate::cache::CachePolicy;
use crate::content::{Icon, render_icons};
use crate::error::{BuildError, BuildErrorKind};
use crate::policy::{AdmissionController, Policy, RateLimiter};
use crate::prompt::PromptRegistration;
use crate::resource::{ResourceRegistration, ResourceTemplateRegistration};
use crate::session::{SessionConfig, SessionStore};
use crate::stream::StreamConfig;
use crate::tool::ToolRegistration;
use crate::version::{ProtocolVersion, ProtocolVersions, is_legacy};
use crate::wire::syntax;

/// The revisions this version of Tollgate serves on the wire.
pub(crate) const IMPLEMENTED: ProtocolVersions = ProtocolVersions::empty()
    .with(ProtocolVersion::V2026_07_28)
    .with(ProtocolVersion::V2025_11_25)
    .with(ProtocolVersion::V2025_06_18);

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
    /// version.
    fn render(&self, revision: ProtocolVersion) -> JsonValue {
        let mut b = JsonObject::builder().insert("name", &*self.name);
        if let Some(t) = &self.title {
            b.push("title", &**t);
        }
        b.push("version", &*self.version);
        if revision != ProtocolVersion::V2025_06_18 {
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
#[derive(Clone, Debug, Default)]
pub struct EndpointLimits {
    pub(crate) json: JsonLimits,
    pub(crate) output: OutputLimits,
    pub(crate) bind: BindLimits,
    pub(crate) gate: Option<Arc<EvaluationGate>>,
}

impl EndpointLimits {
    /// The production defaults: 10 MiB request bodies, depth 128, 100,000 values, 4 MiB
    /// responses, the binding limits of [`BindLimits`], and the process-wide evaluation gate
    /// (128 concurrent evaluations).
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the request JSON limits (the body byte limit is `max_input_bytes`).
    #[must_use]
    pub fn json(mut self, limits: JsonLimits) -> Self {
        self.json = limits;
        self
    }

    /// Replaces the response limits.
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
    pub(crate) path: Arc<str>,
    pub(crate) revisions: ProtocolVersions,
    pub(crate) tools: Vec<ToolRegistration>,
    pub(crate) by_name: HashMap<Arc<str>, usize>,
    pub(crate) prompts: Vec<PromptRegistration>,
    pub(crate) prompt_by_name: HashMap<Arc<str>, usize>,
    pub(crate) resources: Vec<ResourceRegistration>,
    pub(crate) templates: Vec<ResourceTemplateRegistration>,
    /// Per served revision: the one-page `resources/list` and `resources/templates/list`
    /// results.
    pub(crate) resource_pages: [Option<Vec<u8>>; 3],
    pub(crate) template_pages: [Option<Vec<u8>>; 3],
    /// The endpoint's caching hints, for reads whose resource sets none.
    pub(crate) cache: CachePolicy,
    /// Admission and rate limits.
    pub(crate) policy: Policy,
    /// The key `requestState` is sealed with (`None` when the OS gave no randomness for the
    /// default and none was configured: `input_required` results then fail).
    pub(crate) state_key: Option<crate::state::RequestStateKey>,
    /// Per served revision: the one-page `prompts/list` result (prompts are few and their
    /// catalog is immutable; a present cursor is refused).
    pub(crate) prompt_pages: [Option<Vec<u8>>; 3],
    pub(crate) limits: EndpointLimits,
    /// Per served revision (index by `revision_slot`): the `server/discover` result (2026-07-28)
    /// or the `initialize` result (2025 revisions), then the tools/list result pages.
    pub(crate) discover: [Option<Vec<u8>>; 3],
    pub(crate) tool_pages: [Vec<Vec<u8>>; 3],
    pub(crate) fingerprint: u64,
    /// `supported` for the unsupported-version error, pre-rendered.
    pub(crate) supported_json: JsonValue,
    /// Sessions for the 2025 revisions; `None` when those are served statelessly (or not at
    /// all).
    pub(crate) sessions: Option<Arc<SessionStore>>,
    /// Whether handlers may send log messages (the `logging` capability).
    pub(crate) logging: bool,
    /// Keep-alives, replay and resumption of event streams.
    pub(crate) streams: StreamConfig,
    /// The tasks extension (2026-07-28): present when a task store is configured and the
    /// endpoint serves 2026-07-28.
    pub(crate) tasks: Option<Arc<crate::task::runner::Tasks>>,
    /// `subscriptions/listen` streams: the event bus and the shutdown signal.
    pub(crate) listeners: crate::subscription::Listeners,
}

/// An opaque `tools/list` cursor: the page index bound to this catalog's fingerprint, so a
/// cursor from another endpoint or another build of the catalog is refused.
fn cursor_text(fingerprint: u64, page: usize) -> String {
    syntax::base64_encode(format!("tollgate/1/{fingerprint:016x}/{page}").as_bytes())
}

pub(crate) const fn revision_slot(version: ProtocolVersion) -> usize {
    match version {
        ProtocolVersion::V2025_06_18 => 0,
        ProtocolVersion::V2025_11_25 => 1,
        ProtocolVersion::V2026_07_28 => 2,
    }
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("path", &self.inner.path)
            .field("revisions", &self.inner.revisions)
            .field("tools", &self.inner.tools.len())
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// Starts an endpoint at an exact path, serving `revisions`, described by `implementation`.
    pub fn with_path(
        path: impl Into<Arc<str>>,
        revisions: impl Into<ProtocolVersions>,
        implementation: Implementation,
    ) -> EndpointBuilder {
        EndpointBuilder {
            path: path.into(),
            revisions: revisions.into(),
            implementation,
            instructions: None,
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            policy: Policy::default(),
            state_key: None,
            cache: CachePolicy::default(),
            page_size: EndpointBuilder::DEFAULT_PAGE_SIZE,
            limits: EndpointLimits::default(),
            sessions: Some(SessionConfig::default()),
            logging: false,
            streams: StreamConfig::default(),
            task_store: None,
            task_config: crate::task::model::TaskConfig::default(),
        }
    }

    /// The exact path.
    pub fn path(&self) -> &str {
        &self.inner.path
    }

    /// The revisions served.
    pub fn revisions(&self) -> ProtocolVersions {
        self.inner.revisions
    }

    /// The tools, in registration order.
    pub fn tools(&self) -> &[ToolRegistration] {
        &self.inner.tools
    }

    pub(crate) fn prompt(
        &self,
        name: &str,
        revision: ProtocolVersion,
    ) -> Option<&PromptRegistration> {
        let prompt = self
            .inner
            .prompts
            .get(*self.inner.prompt_by_name.get(name)?)?;
        prompt.revisions().contains(revision).then_some(prompt)
    }

    /// Whether `revision` offers prompts here (the `prompts` capability); without them the
    /// prompt methods do not exist on it.
    pub(crate) fn offers_prompts(&self, revision: ProtocolVersion) -> bool {
        self.inner
            .prompts
            .iter()
            .any(|p| p.revisions().contains(revision))
    }

    /// Whether `revision` offers resources here (the `resources` capability).
    pub(crate) fn offers_resources(&self, revision: ProtocolVersion) -> bool {
        self.inner
            .resources
            .iter()
            .any(|r| r.revisions().contains(revision))
            || self
                .inner
                .templates
                .iter()
                .any(|t| t.revisions().contains(revision))
    }

    /// Whether `revision` offers completions here (the `completions` capability).
    pub(crate) fn offers_completions(&self, revision: ProtocolVersion) -> bool {
        self.inner
            .prompts
            .iter()
            .any(|p| p.completes() && p.revisions().contains(revision))
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
            .publish(crate::subscription::Event::ResourceUpdated(uri.into()));
        let Some(store) = &self.inner.sessions else {
            return;
        };
        let notification: JsonValue = JsonObject::builder()
            .insert("jsonrpc", "2.0")
            .insert("method", "notifications/resources/updated")
            .insert("params", JsonObject::builder().insert("uri", uri).build())
            .build()
            .into();
        let Ok(bytes) = to_vec(&notification, &self.inner.limits.output) else {
            return;
        };
        for streams in store.all_streams() {
            streams.resource_updated(uri, &bytes);
        }
    }

    /// The resources at exact URIs, in registration order.
    pub fn resources(&self) -> &[ResourceRegistration] {
        &self.inner.resources
    }

    /// The URI-template resources, in registration order.
    pub fn resource_templates(&self) -> &[ResourceTemplateRegistration] {
        &self.inner.templates
    }

    /// The prompts, in registration order.
    pub fn prompts(&self) -> &[PromptRegistration] {
        &self.inner.prompts
    }

    pub(crate) fn tool(&self, name: &str, revision: ProtocolVersion) -> Option<&ToolRegistration> {
        let tool = self.inner.tools.get(*self.inner.by_name.get(name)?)?;
        tool.revisions().contains(revision).then_some(tool)
    }

    /// The page a cursor names, if this endpoint issued it.
    pub(crate) fn page_of(&self, cursor: &str, pages: usize) -> Option<usize> {
        if cursor.len() > 96 {
            return None;
        }
        let raw = syntax::base64_decode(cursor.as_bytes(), 72)?;
        let text = std::str::from_utf8(&raw).ok()?;
        let rest = text.strip_prefix(&format!("tollgate/1/{:016x}/", self.inner.fingerprint))?;
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
}

/// Builds an [`Endpoint`].
#[must_use = "call build() to finish the endpoint"]
pub struct EndpointBuilder {
    path: Arc<str>,
    revisions: ProtocolVersions,
    implementation: Implementation,
    instructions: Option<Arc<str>>,
    tools: Vec<ToolRegistration>,
    prompts: Vec<PromptRegistration>,
    resources: Vec<ResourceRegistration>,
    templates: Vec<ResourceTemplateRegistration>,
    policy: Policy,
    state_key: Option<crate::state::RequestStateKey>,
    cache: CachePolicy,
    page_size: usize,
    limits: EndpointLimits,
    sessions: Option<SessionConfig>,
    logging: bool,
    streams: StreamConfig,
    task_store: Option<Arc<dyn crate::task::store::TaskStore>>,
    task_config: crate::task::model::TaskConfig,
}

impl EndpointBuilder {
    /// The default `tools/list` page size.
    pub const DEFAULT_PAGE_SIZE: usize = 100;

    /// Enables the tasks extension (`io.modelcontextprotocol/tasks`, on 2026-07-28) with this
    /// store: `server/discover` advertises it, tools with
    /// [`TaskSupport`](crate::TaskSupport) may create tasks, and `tasks/get`, `tasks/update`
    /// and `tasks/cancel` are served. Without a store those methods do not exist here and a
    /// tool supporting tasks refuses to build ([`BuildErrorKind::TasksNotConfigured`]).
    pub fn task_store(mut self, store: impl crate::task::store::TaskStore) -> Self {
        self.task_store = Some(Arc::new(store));
        self
    }

    /// Task lifetimes (default [`TaskConfig::default`](crate::TaskConfig)); out-of-range
    /// values refuse to build ([`BuildErrorKind::TasksNotConfigured`]).
    pub fn task_config(mut self, config: crate::task::model::TaskConfig) -> Self {
        self.task_config = config;
        self
    }

    /// Appends a tool (registration order is list order).
    pub fn add_tool(mut self, tool: ToolRegistration) -> Self {
        self.tools.push(tool);
        self
    }

    /// Appends a prompt (registration order is list order).
    pub fn add_prompt(mut self, prompt: PromptRegistration) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Appends a resource at an exact URI (registration order is list order).
    pub fn add_resource(mut self, resource: ResourceRegistration) -> Self {
        self.resources.push(resource);
        self
    }

    /// Appends a URI-template resource. A read is routed to an exact resource first, then to
    /// the first template (in registration order) that matches.
    pub fn add_resource_template(mut self, template: ResourceTemplateRegistration) -> Self {
        self.templates.push(template);
        self
    }

    /// The key `input_required` request state is sealed with. Every instance serving this
    /// endpoint behind one URL must share it. Default: a random key per process (states then
    /// survive neither a restart nor a hop to another instance).
    pub fn request_state_key(mut self, key: crate::state::RequestStateKey) -> Self {
        self.state_key = Some(key);
        self
    }

    /// Decides who may make each request, and under which identity (default: everyone,
    /// anonymously). Runs before any catalog is rendered or handler runs; see
    /// [`AdmissionController`].
    pub fn admission(mut self, controller: impl AdmissionController) -> Self {
        self.policy.admission = Some(Arc::new(controller));
        self
    }

    /// Throttles refused admissions by peer address (IPv4, or the IPv6 /64), so credentials
    /// cannot be guessed at speed: each refusal takes a token from its peer's bucket, and a peer
    /// with none left is answered 429 (`Retry-After`, -31999) before its credentials are tried
    /// again. Off by default (`None`). Turn it on where clients connect directly, for example
    /// `Some(TokenBucket::with_capacity(30).refill(30, Duration::from_secs(60)))`: behind a
    /// proxy every client shares the proxy's address, so one client's failures would throttle
    /// everyone; there, insert a [`PeerAddr`](crate::PeerAddr) from the proxy's trusted
    /// forwarding header instead. The built-in [`Server`](crate::Server) supplies the socket's
    /// peer; without a `PeerAddr` nothing is throttled.
    pub fn refused_admission_limiter(mut self, limiter: Option<crate::TokenBucket>) -> Self {
        self.policy.refusals = limiter.map(Arc::new);
        self
    }

    /// Charges every request (after admission) to `limiter`.
    pub fn request_rate_limiter(mut self, limiter: impl RateLimiter) -> Self {
        self.policy.request_limiter = Some(Arc::new(limiter));
        self
    }

    /// Charges every tool call to `limiter`, unless the tool names a limiter of its own.
    pub fn tool_rate_limiter(mut self, limiter: impl RateLimiter) -> Self {
        self.policy.tool_limiter = Some(Arc::new(limiter));
        self
    }

    /// Registers a limiter tools can name with
    /// [`ToolBuilder::rate_limiter`](crate::ToolBuilder::rate_limiter) (or
    /// `#[tool(rate_limiter = "...")]`).
    pub fn add_rate_limiter(
        mut self,
        name: impl Into<Arc<str>>,
        limiter: impl RateLimiter,
    ) -> Self {
        self.policy.named.insert(name.into(), Arc::new(limiter));
        self
    }

    /// Natural-language guidance returned by `server/discover`.
    pub fn instructions(mut self, text: impl Into<Arc<str>>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Caching hints for discovery and list results (default: 0 ms, private).
    pub fn cache_policy(mut self, policy: CachePolicy) -> Self {
        self.cache = policy;
        self
    }

    /// Tools per `tools/list` page (1 to 10,000; default 100).
    pub fn tools_page_size(mut self, size: usize) -> Self {
        self.page_size = size;
        self
    }

    /// How the 2025 revisions keep sessions: `Some(config)` (the default,
    /// [`SessionConfig::default`]) issues an `Mcp-Session-Id` at `initialize` and requires it
    /// afterwards; `None` serves them statelessly (every request names its revision in
    /// `MCP-Protocol-Version`, and client capabilities from `initialize` are not remembered).
    /// 2026-07-28 is stateless whatever this says.
    pub fn legacy_sessions(mut self, sessions: Option<SessionConfig>) -> Self {
        self.sessions = sessions;
        self
    }

    /// Lets handlers send log messages through [`RequestLogger`](crate::RequestLogger) and
    /// advertises the `logging` capability (on the 2025 revisions only with sessions, which
    /// remember `logging/setLevel`; on 2026-07-28 each request names its level in `_meta`). Log
    /// messages travel on the request's own response stream, so a logging endpoint answers each
    /// request from a task of its own.
    pub fn logging(mut self, enabled: bool) -> Self {
        self.logging = enabled;
        self
    }

    /// Event streams: keep-alive comments, and for 2025 sessions the replay buffer behind
    /// `GET` with `Last-Event-ID` (default [`StreamConfig::default`]).
    pub fn streams(mut self, config: StreamConfig) -> Self {
        self.streams = config;
        self
    }

    /// Request and response bounds.
    pub fn limits(mut self, limits: EndpointLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Finishes the endpoint, rendering its catalogs once.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidEndpointPath`], [`BuildErrorKind::EmptyEndpointRevisions`],
    /// [`BuildErrorKind::RevisionNotImplemented`], [`BuildErrorKind::RevisionOutsideEndpoint`]
    /// and [`BuildErrorKind::DuplicateToolName`] (naming tool, path and revisions), or
    /// [`BuildErrorKind::InvalidConfiguration`] for a page size out of range, an invalid
    /// website URL, or a catalog page larger than the output limit.
    pub fn build(self) -> Result<Endpoint, BuildError> {
        let path = &*self.path;
        let err = |kind| {
            BuildError::new(kind)
                .at_path(path)
                .with_revisions(self.revisions)
        };
        let path_ok = path.len() > 1
            && path.len() <= 1024
            && path.starts_with('/')
            && path
                .bytes()
                .all(|b| b.is_ascii_graphic() && b != b'?' && b != b'#')
            && !path
                .split('/')
                .skip(1)
                .any(|seg| seg.is_empty() || seg == "." || seg == "..");
        if !path_ok {
            return Err(err(BuildErrorKind::InvalidEndpointPath));
        }
        if self.revisions.is_empty() {
            return Err(err(BuildErrorKind::EmptyEndpointRevisions));
        }
        if !self.revisions.is_subset_of(IMPLEMENTED) {
            return Err(err(BuildErrorKind::RevisionNotImplemented));
        }
        if !(1..=10_000).contains(&self.page_size) {
            return Err(err(BuildErrorKind::InvalidConfiguration));
        }
        if self
            .implementation
            .website_url
            .as_deref()
            .is_some_and(|u| !syntax::is_absolute_uri(u))
        {
            return Err(err(BuildErrorKind::InvalidConfiguration));
        }
        let mut by_name = HashMap::with_capacity(self.tools.len());
        for (i, tool) in self.tools.iter().enumerate() {
            if !tool.revisions().is_subset_of(self.revisions) {
                return Err(BuildError::new(BuildErrorKind::RevisionOutsideEndpoint)
                    .tool_name(tool.name())
                    .at_path(path)
                    .with_revisions(tool.revisions()));
            }
            if let Some(name) = &tool.inner.rate_limiter {
                if !self.policy.named.contains_key(name) {
                    return Err(err(BuildErrorKind::UnknownRateLimiter).tool_name(tool.name()));
                }
            }
            if tool.inner.task_support != crate::task::model::TaskSupport::Forbidden
                && self.task_store.is_none()
            {
                return Err(err(BuildErrorKind::TasksNotConfigured).tool_name(tool.name()));
            }
            if by_name.insert(tool.inner.name.clone(), i).is_some() {
                return Err(err(BuildErrorKind::DuplicateToolName).tool_name(tool.name()));
            }
        }

        let mut prompt_by_name = HashMap::with_capacity(self.prompts.len());
        for (i, prompt) in self.prompts.iter().enumerate() {
            if !prompt.revisions().is_subset_of(self.revisions) {
                return Err(BuildError::new(BuildErrorKind::RevisionOutsideEndpoint)
                    .prompt_name(prompt.name())
                    .at_path(path)
                    .with_revisions(prompt.revisions()));
            }
            if prompt_by_name
                .insert(prompt.inner.name.clone(), i)
                .is_some()
            {
                return Err(err(BuildErrorKind::DuplicatePromptName).prompt_name(prompt.name()));
            }
        }

        for resource in &self.resources {
            if !resource.revisions().is_subset_of(self.revisions) {
                return Err(BuildError::new(BuildErrorKind::RevisionOutsideEndpoint)
                    .resource(resource.uri())
                    .at_path(path)
                    .with_revisions(resource.revisions()));
            }
        }
        for template in &self.templates {
            if !template.revisions().is_subset_of(self.revisions) {
                return Err(BuildError::new(BuildErrorKind::RevisionOutsideEndpoint)
                    .resource(template.uri_template())
                    .at_path(path)
                    .with_revisions(template.revisions()));
            }
        }
        let mut uris = std::collections::HashSet::with_capacity(self.resources.len());
        if let Some(dup) = self.resources.iter().find(|r| !uris.insert(r.uri())) {
            return Err(err(BuildErrorKind::DuplicateResource).resource(dup.uri()));
        }
        let mut sources = std::collections::HashSet::with_capacity(self.templates.len());
        if let Some(dup) = self
            .templates
            .iter()
            .find(|t| !sources.insert(t.uri_template()))
        {
            return Err(err(BuildErrorKind::DuplicateResource).resource(dup.uri_template()));
        }
        if self.templates.len() > crate::resource::MAX_TEMPLATES_PER_ENDPOINT {
            return Err(err(BuildErrorKind::TooManyTemplates));
        }

        let mut discover: [Option<Vec<u8>>; 3] = Default::default();
        let mut tool_pages: [Vec<Vec<u8>>; 3] = Default::default();
        let mut hasher = DefaultHasher::new();
        path.hash(&mut hasher);
        self.page_size.hash(&mut hasher);
        for revision in self.revisions.iter() {
            for tool in self
                .tools
                .iter()
                .filter(|t| t.revisions().contains(revision))
            {
                let descriptor = to_vec(&tool.descriptor(revision), &OutputLimits::default())
                    .map_err(|_| {
                        err(BuildErrorKind::InvalidConfiguration).tool_name(tool.name())
                    })?;
                descriptor.hash(&mut hasher);
            }
        }
        let fingerprint = hasher.finish();
        let supported_json: JsonValue = self
            .revisions
            .iter()
            .map(|v| JsonValue::from(v.as_str()))
            .collect::<JsonArray>()
            .into();

        if self.task_store.is_some() && !self.task_config.is_valid() {
            return Err(err(BuildErrorKind::TasksNotConfigured));
        }
        let listeners = crate::subscription::Listeners::default();
        let tasks = match (
            &self.task_store,
            self.revisions.contains(ProtocolVersion::V2026_07_28),
        ) {
            (Some(store), true) => Some(Arc::new(crate::task::runner::Tasks::new(
                store.clone(),
                self.task_config,
                Some(listeners.sender()),
            ))),
            _ => None,
        };
        let mut endpoint = EndpointInner {
            path: self.path.clone(),
            revisions: self.revisions,
            tools: self.tools,
            by_name,
            prompts: self.prompts,
            prompt_by_name,
            prompt_pages: Default::default(),
            resources: self.resources,
            templates: self.templates,
            resource_pages: Default::default(),
            template_pages: Default::default(),
            cache: self.cache,
            limits: self.limits,
            discover: Default::default(),
            tool_pages: Default::default(),
            fingerprint,
            supported_json,
            sessions: if self.revisions.iter().any(is_legacy) {
                self.sessions
                    .map(|config| Arc::new(SessionStore::new(config)))
            } else {
                None
            },
            logging: self.logging,
            streams: self.streams,
            tasks,
            listeners,
            policy: self.policy,
            state_key: self
                .state_key
                .or_else(crate::state::RequestStateKey::generate),
        };

        for revision in self.revisions.iter() {
            let slot = revision_slot(revision);
            let legacy = is_legacy(revision);
            let mut capabilities = JsonObject::builder();
            if self.logging && (!legacy || endpoint.sessions.is_some()) {
                capabilities.push("logging", JsonObject::new());
            }
            if endpoint
                .tools
                .iter()
                .any(|t| t.revisions().contains(revision))
            {
                let mut tools = JsonObject::builder();
                if legacy {
                    // Tool catalogs are immutable: they never change during a session.
                    tools.push("listChanged", false);
                }
                capabilities.push("tools", tools.build());
            }
            let prompts_here = endpoint
                .prompts
                .iter()
                .filter(|p| p.revisions().contains(revision));
            let mut any_prompt = false;
            let mut any_completion = false;
            for prompt in prompts_here {
                any_prompt = true;
                any_completion |= prompt.completes();
            }
            let resources_here = endpoint
                .resources
                .iter()
                .any(|r| r.revisions().contains(revision))
                || endpoint
                    .templates
                    .iter()
                    .any(|t| t.revisions().contains(revision));
            if resources_here {
                let mut resources = JsonObject::builder();
                if legacy {
                    resources.push("listChanged", false);
                    // Updates travel on a session's standalone stream: no session, no updates.
                    resources.push("subscribe", endpoint.sessions.is_some());
                } else {
                    // `subscriptions/listen` delivers updates on 2026-07-28.
                    resources.push("subscribe", true);
                }
                capabilities.push("resources", resources.build());
            }
            if any_completion {
                capabilities.push("completions", JsonObject::new());
            }
            if !legacy && endpoint.tasks.is_some() {
                capabilities.push(
                    "extensions",
                    JsonObject::builder()
                        .insert(crate::task::model::TASKS_EXTENSION, JsonObject::new())
                        .build(),
                );
            }
            if any_prompt {
                let mut prompts = JsonObject::builder();
                if legacy {
                    // Prompt catalogs are immutable too.
                    prompts.push("listChanged", false);
                }
                capabilities.push("prompts", prompts.build());
            }
            let server_info = self.implementation.render(revision);
            let mut result = JsonObject::builder();
            if legacy {
                result.push("protocolVersion", revision.as_str());
                result.push("capabilities", capabilities.build());
                result.push("serverInfo", server_info);
                if let Some(text) = &self.instructions {
                    result.push("instructions", &**text);
                }
            } else {
                result.push("resultType", "complete");
                result.push("supportedVersions", endpoint.supported_json.clone());
                result.push("capabilities", capabilities.build());
                if let Some(text) = &self.instructions {
                    result.push("instructions", &**text);
                }
                result.push(
                    "_meta",
                    JsonObject::builder()
                        .insert("io.modelcontextprotocol/serverInfo", server_info)
                        .build(),
                );
                self.cache.push_into(&mut result);
            }
            discover[slot] = Some(
                to_vec(&result.build().into(), &endpoint.limits.output)
                    .map_err(|_| err(BuildErrorKind::InvalidConfiguration))?,
            );

            let listed: Vec<&ToolRegistration> = endpoint
                .tools
                .iter()
                .filter(|t| t.revisions().contains(revision))
                .collect();
            let chunks: Vec<&[&ToolRegistration]> = if listed.is_empty() {
                vec![&[][..]]
            } else {
                listed.chunks(self.page_size).collect()
            };
            let pages = chunks.len();
            for (index, chunk) in chunks.into_iter().enumerate() {
                let tools: JsonArray = chunk.iter().map(|t| t.descriptor(revision)).collect();
                let mut page = JsonObject::builder();
                if !legacy {
                    page.push("resultType", "complete");
                }
                page.push("tools", tools);
                if index + 1 < pages {
                    page.push("nextCursor", cursor_text(fingerprint, index + 1));
                }
                if !legacy {
                    self.cache.push_into(&mut page);
                }
                let bytes = to_vec(&page.build().into(), &endpoint.limits.output)
                    .map_err(|_| err(BuildErrorKind::InvalidConfiguration))?;
                tool_pages[slot].push(bytes);
            }
        }
        for revision in self.revisions.iter() {
            let prompts: JsonArray = endpoint
                .prompts
                .iter()
                .filter(|p| p.revisions().contains(revision))
                .map(|p| p.descriptor(revision))
                .collect();
            let mut page = JsonObject::builder();
            if !is_legacy(revision) {
                page.push("resultType", "complete");
            }
            page.push("prompts", prompts);
            if !is_legacy(revision) {
                self.cache.push_into(&mut page);
            }
            endpoint.prompt_pages[revision_slot(revision)] = Some(
                to_vec(&page.build().into(), &endpoint.limits.output)
                    .map_err(|_| err(BuildErrorKind::InvalidConfiguration))?,
            );
        }
        for revision in self.revisions.iter() {
            let slot = revision_slot(revision);
            let render = |key: &str, items: JsonArray| {
                let mut page = JsonObject::builder();
                if !is_legacy(revision) {
                    page.push("resultType", "complete");
                }
                page.push(key, items);
                if !is_legacy(revision) {
                    self.cache.push_into(&mut page);
                }
                to_vec(&page.build().into(), &endpoint.limits.output)
                    .map_err(|_| err(BuildErrorKind::InvalidConfiguration))
            };
            let resources: JsonArray = endpoint
                .resources
                .iter()
                .filter(|r| r.revisions().contains(revision))
                .map(|r| r.descriptor(revision))
                .collect();
            endpoint.resource_pages[slot] = Some(render("resources", resources)?);
            let templates: JsonArray = endpoint
                .templates
                .iter()
                .filter(|t| t.revisions().contains(revision))
                .map(|t| t.descriptor(revision))
                .collect();
            endpoint.template_pages[slot] = Some(render("resourceTemplates", templates)?);
        }
        endpoint.discover = discover;
        endpoint.tool_pages = tool_pages;
        Ok(Endpoint {
            inner: Arc::new(endpoint),
        })
    }
}
