//! [`EndpointBuilder`]: an endpoint's configuration, and the rules it must meet to build (its
//! path, revisions and page size; registrations within its revisions and unique by name; named
//! limiters registered; a task store where tools support tasks). Rendering is `catalog`'s.

use crate::model::intercept::{ErasedInterceptor, ToolResultSanitizer, erase_interceptor};
use std::sync::Arc;

use tollgate_json::{JsonArray, JsonValue};

use crate::facts::error::{BuildError, BuildErrorKind};
use crate::facts::keyring::RequestStateKey;
use crate::model::cache::CachePolicy;
use crate::model::prompt::PromptRegistration;
use crate::model::resource::{ResourceRegistration, ResourceTemplateRegistration};
use crate::model::skill::SkillRegistration;
use crate::model::subscription::Listeners;
use crate::model::tool::ToolRegistration;
use crate::policy::admission::AdmissionController;
use crate::policy::rules::{Policy, RateLimiter};
use crate::registry::catalog::Rules;
use crate::registry::compile::{Registrations, compile};
use crate::registry::live::Live;
use crate::registry::{Endpoint, EndpointInner, EndpointLimits, IMPLEMENTED, Implementation};
use crate::session::store::SessionStore;
use crate::session::{SessionConfig, SessionTable};
use crate::stream::StreamConfig;
use crate::tasks::runner::Tasks;
use crate::version::{ProtocolVersion, ProtocolVersions, is_legacy};
use crate::wire::syntax;

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
            fallbacks: Vec::new(),
            skills: Vec::new(),
            apps: Vec::new(),
            policy: Policy::default(),
            state_key: None,
            single_use: None,
            cache: CachePolicy::default(),
            page_size: EndpointBuilder::DEFAULT_PAGE_SIZE,
            limits: EndpointLimits::default(),
            sessions: Some(SessionConfig::default()),
            session_store: None,
            logging: false,
            streams: StreamConfig::default(),
            task_store: None,
            task_config: crate::tasks::model::TaskConfig::default(),
            interceptors: Vec::new(),
            sanitizer: None,
            failures: Default::default(),
            live: false,
            events: crate::registry::events::EventSettings::default(),
            view: None,
            views_cached: crate::registry::view::DEFAULT_VIEWS_CACHED,
            #[cfg(feature = "oauth")]
            bearer_resource: None,
        }
    }
}

/// Builds an [`Endpoint`].
#[must_use = "call build() to finish the endpoint"]
pub struct EndpointBuilder {
    pub(super) path: Arc<str>,
    pub(super) revisions: ProtocolVersions,
    pub(super) implementation: Implementation,
    pub(super) instructions: Option<Arc<str>>,
    pub(super) tools: Vec<ToolRegistration>,
    pub(super) prompts: Vec<PromptRegistration>,
    pub(super) resources: Vec<ResourceRegistration>,
    pub(super) templates: Vec<ResourceTemplateRegistration>,
    pub(super) fallbacks: Vec<crate::model::resource::fallback::ResourceFallback>,
    pub(super) skills: Vec<SkillRegistration>,
    pub(super) apps: Vec<crate::model::app::AppView>,
    pub(super) policy: Policy,
    pub(super) state_key: Option<crate::facts::keyring::RequestStateKeyRing>,
    pub(super) single_use: Option<Arc<dyn crate::single_use::ReplayStore>>,
    pub(super) cache: CachePolicy,
    pub(super) page_size: usize,
    pub(super) limits: EndpointLimits,
    pub(super) sessions: Option<SessionConfig>,
    pub(super) session_store: Option<Arc<dyn SessionStore>>,
    pub(super) logging: bool,
    pub(super) streams: StreamConfig,
    pub(super) task_store: Option<Arc<dyn crate::tasks::store::TaskStore>>,
    pub(super) task_config: crate::tasks::model::TaskConfig,
    pub(super) interceptors: Vec<Arc<dyn ErasedInterceptor>>,
    pub(super) sanitizer: Option<Arc<dyn ToolResultSanitizer>>,
    pub(super) failures: crate::facts::report::Failures,
    /// Whether the catalog may change while serving.
    pub(super) live: bool,
    /// Catalog event handlers, their payload bound and bus (`events.rs`, `shared.rs`).
    pub(super) events: crate::registry::events::EventSettings,
    pub(super) view: Option<Arc<crate::registry::view::ViewFn>>,
    pub(super) views_cached: usize,
    /// The resource a `BearerAuth` admission checks tokens for, when the controller is one.
    #[cfg(feature = "oauth")]
    pub(super) bearer_resource: Option<crate::policy::authorization::ProtectedResource>,
}

impl EndpointBuilder {
    /// The default `tools/list` page size.
    pub const DEFAULT_PAGE_SIZE: usize = 100;

    /// Enables the tasks extension (`io.modelcontextprotocol/tasks`, on 2026-07-28) with this
    /// store: `server/discover` advertises it, tools with
    /// [`TaskSupport`](crate::tool::TaskSupport) may create tasks, and `tasks/get`, `tasks/update`
    /// and `tasks/cancel` are served. Without a store those methods do not exist here and a
    /// tool supporting tasks refuses to build ([`BuildErrorKind::TasksNotConfigured`]).
    pub fn task_store(mut self, store: impl crate::tasks::store::TaskStore) -> Self {
        self.task_store = Some(Arc::new(store));
        self
    }

    /// Task lifetimes (default [`TaskConfig::default`](crate::task::TaskConfig)); out-of-range
    /// values refuse to build ([`BuildErrorKind::TasksNotConfigured`]).
    pub fn task_config(mut self, config: crate::tasks::model::TaskConfig) -> Self {
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

    /// Serves a skill (the `io.modelcontextprotocol/skills` extension, on 2026-07-28):
    /// `server/discover` then declares the extension (with `directoryRead`) and the `resources`
    /// capability, `skills/list`, `skills/get` and `resources/directory/read` answer, every file
    /// is read through `resources/read`, and each `SKILL.md` is listed by `resources/list`.
    /// Registration order is list order; `skills/list` pages hold at most the page size
    /// ([`EndpointBuilder::tools_page_size`]) entries and what fits the output limit.
    pub fn add_skill(mut self, skill: SkillRegistration) -> Self {
        self.skills.push(skill);
        self
    }

    /// Serves an MCP Apps view (the `io.modelcontextprotocol/ui` extension): on the endpoint's
    /// revisions that carry `_meta` (2025-06-18 on; at least one, else
    /// [`BuildErrorKind::InvalidAppView`](crate::BuildErrorKind::InvalidAppView)) it is listed by
    /// `resources/list` after the resources and read through `resources/read` as
    /// `text/html;profile=mcp-app` with its `_meta.ui`, and the capabilities declare the
    /// extension. Its URI is unique among the endpoint's resources
    /// ([`BuildErrorKind::DuplicateResource`](crate::BuildErrorKind::DuplicateResource)), every
    /// view a tool names must be served here
    /// ([`BuildErrorKind::UnknownAppView`](crate::BuildErrorKind::UnknownAppView)), and its read
    /// must fit the output limits. Registration order is list order.
    pub fn app_view(mut self, view: crate::model::app::AppView) -> Self {
        self.apps.push(view);
        self
    }

    /// Appends a URI-template resource. A read is routed to an exact resource first, then to
    /// the first template (in registration order) that matches.
    pub fn add_resource_template(mut self, template: ResourceTemplateRegistration) -> Self {
        self.templates.push(template);
        self
    }

    /// Appends a read fallback: the handler of the URIs under its prefix that no exact resource
    /// and no template routes (consulted after both, fallbacks in registration order). It is
    /// never listed and cannot be subscribed to; see
    /// [`ResourceFallback`](crate::resource::ResourceFallback). Default: none (an unrouted URI
    /// is "Resource not found"). [`build`](Self::build) refuses a fallback served on a revision
    /// the endpoint does not serve
    /// ([`BuildErrorKind::RevisionOutsideEndpoint`](crate::BuildErrorKind::RevisionOutsideEndpoint)),
    /// two of one prefix
    /// ([`BuildErrorKind::DuplicateResource`](crate::BuildErrorKind::DuplicateResource)) and
    /// scopes on an endpoint without a protected resource
    /// ([`BuildErrorKind::InvalidAuthorization`](crate::BuildErrorKind::InvalidAuthorization)).
    pub fn add_resource_fallback(
        mut self,
        fallback: crate::model::resource::fallback::ResourceFallback,
    ) -> Self {
        self.fallbacks.push(fallback);
        self
    }

    /// The key `input_required` request state is sealed with (a ring of this one key, id
    /// `default`). Every instance serving this endpoint behind one URL must share it. Default: a
    /// random key per process (states then survive neither a restart nor a hop to another
    /// instance). To rotate keys, use [`request_state_keys`](Self::request_state_keys).
    pub fn request_state_key(mut self, key: crate::facts::keyring::RequestStateKey) -> Self {
        self.state_key = Some(key.into());
        self
    }

    /// The key ring `input_required` request state is sealed and opened with: its first key
    /// seals, every key opens what was sealed under its id. Every instance serving this
    /// endpoint behind one URL must share it (load it with
    /// [`RequestStateKeyRing::from_env`](crate::endpoint::RequestStateKeyRing::from_env) or
    /// [`from_file`](crate::endpoint::RequestStateKeyRing::from_file)). Rotation: deploy the new
    /// key as the sealing one with the old one still opening, and retire the old one after
    /// [`REQUEST_STATE_LIFETIME`](crate::endpoint::REQUEST_STATE_LIFETIME).
    pub fn request_state_keys(mut self, keys: crate::facts::keyring::RequestStateKeyRing) -> Self {
        self.state_key = Some(keys);
        self
    }

    /// Makes every request state this endpoint seals single use (default: off, a state opens
    /// on any retry until it expires): the first retry presenting a state consumes the state's
    /// sealed random nonce in `store`, atomically, before the handler runs; any later retry
    /// with the same state, on this instance or another sharing `store`, is answered with the
    /// fixed `Invalid request state` error (-32602), as an expired state is, and its handler
    /// does not run. So a client that lost the answer to its retry and sends it again gets that
    /// error, never a second execution. A store that is full refuses the same way (fail closed);
    /// one that fails or does not answer within 10 s is answered with HTTP 503 `Server busy`
    /// (the handler has not run). Nonces are kept until their state's expiry plus a minute, and
    /// purged about once a minute after.
    ///
    /// For one instance, [`InMemoryReplayStore`](crate::endpoint::InMemoryReplayStore)
    /// (at most [`DEFAULT_REPLAY_STORE_CAPACITY`](crate::endpoint::DEFAULT_REPLAY_STORE_CAPACITY)
    /// nonces); across restarts, `SqliteReplayStore` (feature `sqlite`); across instances
    /// behind one URL, `PostgresReplayStore` (feature `postgres`). Applies to the states
    /// Tollgate seals (framework-protected tools, prompts, resources); an
    /// application-protected state is the application's to make single use.
    pub fn request_state_single_use(mut self, store: impl crate::single_use::ReplayStore) -> Self {
        self.single_use = Some(Arc::new(store));
        self
    }

    /// Adds an interceptor around every application handler call (`tools/call`, `prompts/get`,
    /// `resources/read`): it runs after admission, lookup, the limiters and request state, and
    /// before input validation, and may proceed, answer with its own output, or fail (see
    /// [`Interceptor`](crate::context::Interceptor)). Interceptors run in the order added, the
    /// first outermost. None by default (and then nothing is paid for them).
    pub fn interceptor<I>(mut self, interceptor: I) -> Self
    where
        I: for<'a> crate::context::Interceptor<'a>,
    {
        self.interceptors.push(erase_interceptor(interceptor));
        self
    }

    /// Sets the sanitizer every completed tool result passes through before the output checks
    /// (see [`ToolResultSanitizer`](crate::context::ToolResultSanitizer)). None by default:
    /// results are checked and written as the handler returned them.
    pub fn tool_result_sanitizer(mut self, sanitizer: impl ToolResultSanitizer) -> Self {
        self.sanitizer = Some(Arc::new(sanitizer));
        self
    }

    /// Decides who may make each request, and under which identity (default: everyone,
    /// anonymously). Runs before any catalog is rendered or handler runs; see
    /// [`AdmissionController`]. An `auth::BearerAuth` (feature `oauth`) must be for the
    /// endpoint's [`protected_resource`](Self::protected_resource), or the build is refused:
    /// [`bearer_auth`](Self::bearer_auth) sets both.
    pub fn admission(mut self, controller: impl AdmissionController) -> Self {
        #[cfg(feature = "oauth")]
        {
            let any: &dyn std::any::Any = &controller;
            self.bearer_resource = any
                .downcast_ref::<crate::auth::BearerAuth>()
                .map(|auth| auth.resource().clone());
        }
        self.policy.admission = Some(Arc::new(controller));
        self
    }

    /// Makes the endpoint an OAuth protected resource (MCP authorization): its RFC 9728
    /// metadata is served at `/.well-known/oauth-protected-resource` followed by the endpoint's
    /// path (and at the bare well-known path when it is the service's only protected endpoint),
    /// and operations requiring scopes answer a caller lacking them with 403 and an
    /// `insufficient_scope` challenge pointing there. The resource identifier's path must be
    /// the endpoint's path, so that the metadata URL every challenge names is one the endpoint
    /// serves (the build is refused otherwise). Admission is still the controller's: pair it
    /// with a bearer-token controller (`auth::BearerAuth`, feature `oauth`, for this same
    /// resource) or one of your own.
    pub fn protected_resource(
        mut self,
        resource: crate::policy::authorization::ProtectedResource,
    ) -> Self {
        self.policy.protected = Some(resource);
        self
    }

    /// Makes the endpoint the protected resource `auth` checks tokens for, and `auth` its
    /// admission (feature `oauth`): `protected_resource(auth.resource())` and `admission(auth)`
    /// in one, so the audience tokens are checked against is the resource this endpoint
    /// publishes. Prefer it to setting the two apart.
    #[cfg(feature = "oauth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
    pub fn bearer_auth(self, auth: crate::auth::BearerAuth) -> Self {
        self.protected_resource(auth.resource().clone())
            .admission(auth)
    }

    /// Throttles refused admissions by peer address (IPv4, or the IPv6 /64), so credentials
    /// cannot be guessed at speed: each refusal takes a token from its peer's bucket, and a peer
    /// with none left is answered 429 (`Retry-After`, -31999) before its credentials are tried
    /// again. The token is taken before the controller runs and given back when it admits or
    /// cannot decide (503), so a peer's concurrent requests reach the controller at most as many
    /// at once as it has tokens. Off by default (`None`). Turn it on where clients connect directly, for example
    /// `Some(TokenBucket::with_capacity(30).refill(30, Duration::from_secs(60)))`: behind a
    /// proxy every client shares the proxy's address, so one client's failures would throttle
    /// everyone; there, insert a [`PeerAddr`](crate::transport::PeerAddr) from the proxy's trusted
    /// forwarding header instead. The built-in [`Server`](crate::Server) supplies the socket's
    /// peer; without a `PeerAddr` nothing is throttled.
    pub fn refused_admission_limiter(
        mut self,
        limiter: Option<crate::policy::rules::TokenBucket>,
    ) -> Self {
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
    /// [`ToolBuilder::rate_limiter`](crate::tool::ToolBuilder::rate_limiter) (or
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

    /// Shares this endpoint with every instance behind the same URL through `store`. A 2025
    /// session `initialize` created on one is served, kept alive and ended by any other, the
    /// [`SessionConfig`] bounds and idle timeout hold for all of them together (give every
    /// instance the same config), a client's answer to a server-to-client request and a stream
    /// resumed with `Last-Event-ID` may reach any instance, and resource updates and task changes
    /// published on one reach `subscriptions/listen` streams and 2025 subscriptions on all (also
    /// on an endpoint without 2025 sessions). Without a store (the default) all of it stays in
    /// this endpoint's memory.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tollgate::endpoint::MemorySessionStore;
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let shared = Arc::new(MemorySessionStore::new());
    /// let one = Endpoint::with_path("/mcp", [ProtocolVersion::V2025_11_25],
    ///     Implementation::new("demo", "1.0.0")).session_store(Arc::clone(&shared)).build()?;
    /// let two = Endpoint::with_path("/mcp", [ProtocolVersion::V2025_11_25],
    ///     Implementation::new("demo", "1.0.0")).session_store(shared).build()?;
    /// # let _ = (one, two);
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn session_store(mut self, store: impl SessionStore) -> Self {
        self.session_store = Some(Arc::new(store));
        self
    }

    /// Lets handlers send log messages through [`RequestLogger`](crate::context::RequestLogger) and
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

    /// Lets the catalog change while the endpoint serves (default: off, the catalog is fixed at
    /// build). [`Endpoint::catalogs`] then gives the [`Catalogs`](crate::endpoint::Catalogs)
    /// handle that adds, removes and replaces tools, prompts, resources, templates and skills,
    /// each change checked as `build` checks registrations and refused whole on any failure;
    /// discovery declares the `tools`, `prompts` and `resources` capabilities whatever the
    /// catalog holds, with `listChanged: true` (on the 2025 revisions only with sessions), and
    /// an accepted change is announced with `notifications/{tools,prompts,resources}/list_changed`
    /// on 2025 sessions' standalone streams and to `subscriptions/listen` streams asking for it.
    /// A request runs to its end on the catalog it started on; an endpoint without live catalogs
    /// reads its own catalog without any count kept.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///     Implementation::new("demo", "1.0.0")).live_catalogs().build()?;
    /// assert!(endpoint.catalogs().is_some());
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn live_catalogs(mut self) -> Self {
        self.live = true;
        self
    }

    /// Gives each caller its own view of the catalog (default: none, every caller sees all
    /// of it): `view(identity, registration)` says whether the admitted identity sees a tool,
    /// prompt, resource, resource template or skill. What it does not see is absent from every
    /// list, and calling, getting, reading or completing it answers exactly as an unknown name
    /// does. Works with fixed and [live](Self::live_catalogs) catalogs; on a live one, a
    /// listener (a 2025 session's stream, a `subscriptions/listen` stream) is told of a change
    /// only when its view's lists changed.
    ///
    /// The function is called for every registration on every request that reads the
    /// catalog, so it should be quick (scope and principal checks, not I/O); its answers must
    /// depend on the identity and the registration alone. A caller who sees everything reads the
    /// catalog rendered at build; each other distinct view (the set of registrations seen, not
    /// the principal) is rendered once and cached ([`views_cached`](Self::views_cached)). Lists
    /// that vary by caller must not be cached across callers, so an endpoint with a view and a
    /// public [`cache_policy`](Self::cache_policy) refuses to build.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::endpoint::Registered;
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///     Implementation::new("demo", "1.0.0"))
    ///     // Tools named `admin.*` only for identities granted the `admin` scope.
    ///     .view(|who, item| match item {
    ///         Registered::Tool(tool) => !tool.name().starts_with("admin.") || who.has_scope("admin"),
    ///         _ => true,
    ///     })
    ///     .build()?;
    /// # let _ = endpoint;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn view<F>(mut self, view: F) -> Self
    where
        F: Fn(&crate::policy::AdmissionIdentity, crate::registry::view::Registered<'_>) -> bool
            + Send
            + Sync
            + 'static,
    {
        self.view = Some(Arc::new(view));
        self
    }

    /// How many distinct views' catalogs are kept rendered per published catalog (default
    /// [`DEFAULT_VIEWS_CACHED`](crate::endpoint::DEFAULT_VIEWS_CACHED), 64; from 1 to
    /// [`MAX_VIEWS_CACHED`](crate::endpoint::MAX_VIEWS_CACHED), else the endpoint refuses to
    /// build with [`BuildErrorKind::InvalidConfiguration`]). Past it, the view used least
    /// recently is dropped and rendered again when next used; a live change published drops
    /// them all. Each holds a rendered catalog: raise it when more distinct views are in use at
    /// once than it holds.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///     Implementation::new("demo", "1.0.0"))
    ///     .view(|who, _item| who.has_scope("catalog:read"))
    ///     .views_cached(8)
    ///     .build()?;
    /// # let _ = endpoint;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn views_cached(mut self, views: usize) -> Self {
        self.views_cached = views;
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
    /// and [`BuildErrorKind::DuplicateToolName`] (naming tool, path and revisions),
    /// [`BuildErrorKind::InvalidConfiguration`] for a page size out of range, an invalid
    /// website URL, or a catalog page larger than the output limit, or
    /// [`BuildErrorKind::InvalidAuthorization`] for a protected resource whose identifier's
    /// path is not the endpoint's, a `BearerAuth` admission for another resource than the
    /// endpoint's (or for none), or an operation requiring scopes on an unprotected endpoint.
    pub fn build(self) -> Result<Endpoint, BuildError> {
        self.check_endpoint()?;
        self.check_protection()?;
        let protected = self.policy.protected.is_some();
        crate::model::resource::fallback::check(&self.fallbacks, self.revisions, protected)
            .map_err(|e| e.at_path(&self.path).with_revisions(self.revisions))?;
        if self.task_store.is_some() && !self.task_config.is_valid() {
            return Err(self.error(BuildErrorKind::TasksNotConfigured));
        }
        if (self.events.is_set() && !self.live) || !self.events.is_valid() {
            return Err(self
                .error(BuildErrorKind::InvalidConfiguration)
                .with_detail("catalog events need live catalogs and a payload bound in range"));
        }
        Ok(Endpoint {
            inner: Arc::new(self.assemble()?),
        })
    }

    /// A build error naming this endpoint's path and revisions.
    fn error(&self, kind: BuildErrorKind) -> BuildError {
        BuildError::new(kind)
            .at_path(&self.path)
            .with_revisions(self.revisions)
    }

    /// The protected resource is at this endpoint's path (the metadata URL in every challenge
    /// is then one this endpoint serves), and a bearer-token admission checks tokens for it.
    fn check_protection(&self) -> Result<(), BuildError> {
        let fail = |detail| {
            Err(self
                .error(BuildErrorKind::InvalidAuthorization)
                .with_detail(detail))
        };
        if let Some(resource) = &self.policy.protected
            && resource.path() != &*self.path
        {
            return fail("the protected resource identifier's path must be the endpoint's path");
        }
        #[cfg(feature = "oauth")]
        if let Some(bearer) = &self.bearer_resource {
            match &self.policy.protected {
                None => {
                    return fail(
                        "bearer authentication needs its resource as the endpoint's protected resource: use bearer_auth",
                    );
                }
                Some(published) if !published.same_as(bearer) => {
                    return fail(
                        "bearer authentication checks tokens for another resource than the endpoint publishes",
                    );
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// The endpoint's own rules: its path, revisions, page size and website.
    fn check_endpoint(&self) -> Result<(), BuildError> {
        let path = &*self.path;
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
            return Err(self.error(BuildErrorKind::InvalidEndpointPath));
        }
        if self.revisions.is_empty() {
            return Err(self.error(BuildErrorKind::EmptyEndpointRevisions));
        }
        if !self.revisions.is_subset_of(IMPLEMENTED) {
            return Err(self.error(BuildErrorKind::RevisionNotImplemented));
        }
        if !(1..=10_000).contains(&self.page_size) {
            return Err(self.error(BuildErrorKind::InvalidConfiguration));
        }
        if !self.limits.within_ceilings() {
            return Err(self.error(BuildErrorKind::LimitAboveCeiling));
        }
        if !(1..=crate::registry::view::MAX_VIEWS_CACHED).contains(&self.views_cached) {
            return Err(self.error(BuildErrorKind::InvalidConfiguration));
        }
        if self.view.is_some() && self.cache.is_public() {
            return Err(self
                .error(BuildErrorKind::InvalidConfiguration)
                .with_detail(
                    "lists vary by caller with a view function: the cache policy must be private",
                ));
        }
        if self
            .implementation
            .website_url
            .as_deref()
            .is_some_and(|u| !syntax::is_absolute_uri(u))
        {
            return Err(self.error(BuildErrorKind::InvalidConfiguration));
        }
        Ok(())
    }

    /// The endpoint's state, its catalog checked and rendered.
    fn assemble(self) -> Result<EndpointInner, BuildError> {
        let listeners = Listeners::new(
            self.limits.max_listen_streams,
            self.limits.max_listen_streams_per_principal,
        );
        let modern = self.revisions.contains(ProtocolVersion::V2026_07_28);
        let tasks = match (&self.task_store, modern) {
            (Some(store), true) => Some(Arc::new(Tasks::new(
                store.clone(),
                self.task_config,
                Some(listeners.publisher()),
            ))),
            _ => None,
        };
        let supported_json = supported(self.revisions, |_| true);
        let supported_http_json = supported(self.revisions, ProtocolVersion::on_http);
        let config = self.sessions;
        let table = |config, store| {
            Arc::new(
                SessionTable::new(config, self.streams, self.limits.json, store)
                    .with_output(self.limits.output),
            )
        };
        let sessions = match config {
            Some(config) if self.revisions.iter().any(is_legacy) => {
                Some(table(config, self.session_store.clone()))
            }
            _ => None,
        };
        // With a shared store, the events published here reach every instance (through the
        // session table, or one holding no sessions when the endpoint keeps none).
        let cluster = match (&sessions, self.session_store) {
            (Some(sessions), Some(_)) => Some(Arc::clone(sessions)),
            (None, Some(store)) => Some(table(config.unwrap_or_default(), Some(store))),
            (_, None) => None,
        };
        if let Some(cluster) = &cluster {
            cluster.share_events(&listeners);
        }
        let fallback_revisions = crate::model::resource::fallback::revisions(&self.fallbacks);
        let rules = Rules {
            path: Arc::clone(&self.path),
            revisions: self.revisions,
            page_size: self.page_size,
            cache: self.cache,
            output: self.limits.output,
            limiters: self.policy.named.keys().cloned().collect(),
            task_store: self.task_store.is_some(),
            protected: self.policy.protected.is_some(),
            implementation: self.implementation,
            instructions: self.instructions,
            supported_json: supported_json.clone(),
            logging: self.logging,
            sessions: sessions.is_some(),
            tasks: tasks.is_some(),
            live: self.live,
            fallbacks: fallback_revisions,
        };
        let registrations = Registrations {
            tools: self.tools,
            prompts: self.prompts,
            resources: self.resources,
            templates: self.templates,
            skills: self.skills,
            apps: self.apps,
        };
        // A live endpoint's requests read the published catalog; its own stays as built.
        let live = match self.live {
            true => Some(Arc::new(Live::new(
                compile(registrations.clone(), &rules)?,
                rules.clone(),
                listeners.publisher(),
                sessions.clone(),
                self.view.is_some(),
            ))),
            false => None,
        };
        if let Some(live) = &live {
            self.events.attach(live, &self.path);
        }
        let views = self.view.map(|see| {
            Arc::new(crate::registry::view::Views::new(
                see,
                self.views_cached,
                rules.clone(),
            ))
        });
        let catalog = compile(registrations, &rules)?;
        Ok(EndpointInner {
            path: self.path,
            revisions: self.revisions,
            catalog,
            live,
            views,
            cache: self.cache,
            limits: self.limits,
            supported_json,
            supported_http_json,
            sessions,
            cluster,
            logging: self.logging,
            streams: self.streams,
            tasks,
            listeners,
            policy: self.policy,
            state_key: self
                .state_key
                .or_else(|| RequestStateKey::generate().map(Into::into)),
            single_use: self
                .single_use
                .map(|store| Arc::new(crate::single_use::SingleUse::new(store))),
            interceptors: self.interceptors.into(),
            sanitizer: self.sanitizer,
            failures: self.failures,
            fallbacks: self.fallbacks.into(),
            fallback_revisions,
        })
    }
}

/// The `supported` array of an unsupported-version answer: the revisions `keep` keeps, in the
/// set's order.
fn supported(revisions: ProtocolVersions, keep: impl Fn(ProtocolVersion) -> bool) -> JsonValue {
    revisions
        .iter()
        .filter(|v| keep(*v))
        .map(|v| JsonValue::from(v.as_str()))
        .collect::<JsonArray>()
        .into()
}
