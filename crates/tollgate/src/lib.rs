//! Tollgate: a strict, bounded Model Context Protocol server framework.
//!
//! This crate is the runtime: tool registrations, endpoints, the content model, the protocol
//! revisions and their exact errors, and the HTTP transport (a tower [`McpService`] and the
//! built-in [`Server`]). JSON reading and writing live in `tollgate-json`; Tool Schema
//! Profile 1 lives in `tollgate-schema`.
//!
//! # Serving
//!
//! Register tools with [`ToolRegistration`], collect them in an [`Endpoint`], and serve it with
//! [`Server`] (or mount the [`McpService`] in an axum router). Handlers are plain async
//! functions.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use tollgate::{
//!     Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext,
//!     ToolArguments, ToolRegistration,
//! };
//!
//! #[derive(Deserialize, schemars::JsonSchema)]
//! struct Add { a: i64, b: i64 }
//! #[derive(Serialize, schemars::JsonSchema)]
//! struct Sum { sum: i64 }
//!
//! async fn add(_: &RequestContext, args: ToolArguments<Add>, _: &InvocationFeatures)
//!     -> Result<Sum, std::convert::Infallible> {
//!     let Add { a, b } = args.into_converted();
//!     Ok(Sum { sum: a.saturating_add(b) })
//! }
//!
//! let tool = ToolRegistration::with_name("add", [ProtocolVersion::V2026_07_28])
//!     .argument_and_output_types::<Add, Sum>()
//!     .handler(add)
//!     .build()?;
//! let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
//!         Implementation::new("calculator", "1.0.0"))
//!     .add_tool(tool)
//!     .build()?;
//! # Ok::<(), tollgate::BuildError>(())
//! ```
//!
//! # Failure policy
//!
//! Bad input never reaches a handler and never comes back in a response: it gets the fixed
//! error the protocol names (see `docs/protocol.md`). Arguments that fail the input schema
//! produce a completed `isError` result with the fixed text [`tool::INVALID_ARGUMENTS_TEXT`].
//!
//! # Where things are
//!
//! The crate root holds what a first server needs. The rest is grouped by theme:
//!
//! | module | what it holds |
//! |---|---|
//! | [`tool`](mod@tool) | the tool builder and its stages, argument shapes, results, annotations, numbers |
//! | [`prompt`] | prompt registrations, messages, argument completion |
//! | [`resource`] | resources and URI templates, their contents |
//! | [`app`] | MCP Apps: `ui://` views, their CSP and permissions, tool visibility |
//! | [`content`] | content blocks, annotations, icons, cache hints |
//! | [`context`] | what a handler can read and do: client facts, cancellation, progress, logging, client requests, input requests |
//! | [`policy`] | admission, protected-resource metadata, rate limits, operation types |
//! | `auth` | bearer-token admission for an OAuth-protected endpoint (feature `oauth`) |
//! | [`task`] | the tasks extension: configuration, records, stores |
//! | [`endpoint`] | the endpoint builder and its settings: limits, sessions, streams, request state |
//! | [`transport`] | the built-in HTTP server, the tower service, stdio |
//! | [`json`], [`schema`] | the bounded JSON tree and Tool Schema Profile 1 |
//!
//! # Guides
//!
//! Task-oriented pages, each with compiled examples: [tools], [typed tools], [schemas],
//! [content], [prompts], [resources], [skills], [MCP Apps], [revisions and transports], [input
//! and request state], [tasks], [policy], [authorization], [interception], [observability],
//! [deployment];
//! and the [architecture] (how a request travels through the crate).
//!
//! [tools]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/tools.md
//! [typed tools]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/typed-tools.md
//! [schemas]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/schemas.md
//! [content]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/content.md
//! [prompts]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/prompts.md
//! [resources]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/resources.md
//! [skills]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/skills.md
//! [MCP Apps]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/apps.md
//! [revisions and transports]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/revisions.md
//! [input and request state]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/input-and-state.md
//! [tasks]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/tasks.md
//! [policy]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/policy.md
//! [authorization]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/authorization.md
//! [interception]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/interception.md
//! [observability]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/observability.md
//! [deployment]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/guide/deployment.md
//! [architecture]: https://github.com/tollgate-mcp/tollgate/blob/main/docs/architecture.md
//!
//! # Feature flags
//!
//! | flag | default | what it adds |
//! |---|---|---|
//! | `macros` | yes | `#[tool]` and `#[tools]`: an async fn (or each of an impl's) becomes a tool registration |
//! | `request-state` | yes | sealed `requestState` for `input_required` results (AES-256-GCM, HKDF-SHA256) |
//! | `num-bigint` | no | [`tool::BigInteger`]: arbitrary-precision integers as typed fields |
//! | `sqlite` | no | `task::SqliteTaskStore`: durable tasks in embedded SQLite |
//! | `postgres` | no | `task::PostgresTaskStore`: tasks shared by many instances through PostgreSQL |
//! | `oauth` | no | `auth::BearerAuth`: JWT (JWKS) and introspected bearer tokens for an OAuth 2.1 resource server |
//! | `otel` | no | OpenTelemetry: a server span per request (MCP semantic conventions, the caller's trace continued), stage spans, the operation-duration histogram (see `docs/guide/observability.md`) |
#![cfg_attr(docsrs, feature(doc_cfg))]

// The README's and the guides' examples, compiled (and run, unless marked `no_run`) as doc
// tests so they stay true; `tests/shape/docs.rs` checks that every Rust block in `docs/` is.
#[cfg(doctest)]
mod guides;

// The engine: private rooms, top to bottom (see `docs/architecture.md`). The transport room is
// also the public `transport` theme: its folder's `mod.rs` holds the re-exports.
#[cfg(feature = "oauth")]
#[cfg_attr(docsrs, doc(cfg(feature = "oauth")))]
pub mod auth;
mod client_request;
mod facts;
mod methods;
mod model;
mod pipeline;
mod registry;
mod session;
mod single_use;
mod state;
mod stream;
mod tasks;
mod version;
mod wire;

// The root: what a first server names.
pub use facts::context::RequestContext;
pub use facts::error::{BuildError, BuildErrorKind};
pub use model::app::AppView;
pub use model::features::InvocationFeatures;
pub use model::tool::{ToolArguments, ToolRegistration};
pub use registry::{Endpoint, Implementation};
pub use transport::server::Server;
pub use transport::service::McpService;
pub use version::ProtocolVersion;

pub mod tool {
    //! Tools: the staged builder, the argument shapes a handler receives, the results an
    //! advanced handler returns, annotations and task support, and exact numbers for typed
    //! fields.
    #[cfg(feature = "num-bigint")]
    #[cfg_attr(docsrs, doc(cfg(feature = "num-bigint")))]
    pub use crate::model::decimal::BigInteger;
    pub use crate::model::decimal::Decimal;
    pub use crate::model::result::{
        CompleteResult, CompleteResultBuilder, MissingCapabilities, OperationResult, TaskCreated,
        ToolOutput, ToolOutputBuilder,
    };
    pub use crate::model::tool::foreign::{ForeignCheck, ForeignSchema};
    pub use crate::model::tool::options::{
        InputRequestDeclaration, InputRequestKind, InputRequirement, RequestStateMode, TaskSupport,
        ToolAnnotations,
    };
    pub use crate::model::tool::{
        AdvancedStage, RawArguments, ToolArguments, ToolBuilder, ToolModelStage, ToolRegistration,
        TypedArguments, TypedCompleteStage,
    };
    pub use crate::wire::fault::INVALID_ARGUMENTS_TEXT;
    pub use crate::wire::headers::{
        MAX_MIRRORED_VALUE_BYTES, MAX_SAFE_INTEGER, encode_mirrored_value,
    };
}

pub mod app {
    //! MCP Apps (the `io.modelcontextprotocol/ui` extension, SEP-1865): a view
    //! ([`AppView`], a `ui://` HTML resource) with its CSP and permissions, a
    //! tool's visibility, the client's declaration, and the extension's limits. A tool names
    //! its view with [`ToolBuilder::app_view`](crate::tool::ToolBuilder::app_view); an endpoint
    //! serves it with [`EndpointBuilder::app_view`](crate::endpoint::EndpointBuilder::app_view).
    pub use crate::model::app::{
        APP_VIEW_MIME_TYPE, APPS_EXTENSION, AppCsp, AppPermissions, AppView, AppViewBuilder,
        AppVisibility, MAX_APP_CSP_DOMAINS, MAX_APP_HOST_BYTES, MAX_APP_VIEW_URI_BYTES,
        client_renders_views,
    };
}

pub mod prompt {
    //! Prompts: registrations with declared string arguments, the messages they return, and
    //! completion of argument values (for prompts and resource templates).
    pub use crate::model::prompt::completion::{
        Completion, CompletionFn, CompletionRequest, MAX_COMPLETION_VALUES,
    };
    pub use crate::model::prompt::{
        PromptArgument, PromptArguments, PromptBuilder, PromptHandlerStage, PromptMessage,
        PromptOutcome, PromptRegistration, PromptResult,
    };
}

pub mod skill {
    //! Skills (the `io.modelcontextprotocol/skills` extension, SEP-2640, on 2026-07-28): a
    //! registration from a directory on disk or built file by file, its builder and the
    //! extension's limits. Serve one with [`EndpointBuilder::add_skill`](crate::endpoint::EndpointBuilder::add_skill).
    pub use crate::model::skill::{
        MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH, MAX_SKILL_BYTES, MAX_SKILL_DEPTH,
        MAX_SKILL_DIRECTORIES, MAX_SKILL_FILES, MAX_SKILL_URI_BYTES, SKILLS_EXTENSION,
        SkillBuilder, SkillRegistration,
    };
}

pub mod resource {
    //! Resources: exact-URI and URI-template registrations, unlisted read fallbacks, the request a read handler
    //! receives, the contents it returns, and the template bounds.
    pub use crate::model::resource::fallback::{Prefix, ResourceFallback};
    pub use crate::model::resource::template::{
        MAX_TEMPLATE_BYTES, MAX_TEMPLATE_ROUTED_URI_BYTES, MAX_TEMPLATE_VARIABLES,
        MAX_TEMPLATES_PER_ENDPOINT, MAX_VARIABLE_NAME_BYTES,
    };
    pub use crate::model::resource::{
        Exact, ResourceBuilder, ResourceHandlerStage, ResourceOutcome, ResourceOutput,
        ResourceRegistration, ResourceRequest, ResourceTemplateRegistration, Template,
    };
}

pub mod content {
    //! Content: text, image, audio, resource links and embedded resources, their annotations
    //! and icons, the checks each value passes at construction, and caching hints.
    pub use crate::facts::error::{ContentError, ContentErrorKind};
    pub use crate::model::cache::{CachePolicy, CacheScope};
    pub use crate::model::content::checks::MAX_INLINE_BYTES;
    pub use crate::model::content::icon::{Icon, Theme};
    pub use crate::model::content::{
        Annotations, AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceContents,
        ResourceLink, Role, TextContent,
    };
}

pub mod context {
    //! What a handler can read and do: the request context, the HTTP request it arrived in, its
    //! trace context and baggage, the facts the client reported, invocation features (cancellation, progress, logging), requests to the client
    //! (elicitation, sampling, roots) and multi-round-trip input requests.
    pub use crate::client_request::{ClientRequestError, ClientRequests};
    pub use crate::facts::context::{
        ClientCapabilities, ClientCapability, ClientInfo, RequestContext,
    };
    pub use crate::facts::request::OriginatingRequest;
    pub use crate::facts::trace::{
        Baggage, MAX_BAGGAGE_BYTES, MAX_BAGGAGE_MEMBERS, MAX_TRACEPARENT_BYTES,
        MAX_TRACESTATE_BYTES, MAX_TRACESTATE_MEMBERS, TraceContext,
    };
    pub use crate::model::features::{
        CancellationToken, InvocationFeatures, MissingFeature, ProgressError, ProgressReporter,
        RequestLogger,
    };
    pub use crate::model::handler::{Handler, Outcome};
    pub use crate::model::input::{
        InputRequest, InputRequiredResult, MAX_APPLICATION_STATE_BYTES, MAX_INPUT_REQUESTS,
    };
    pub use crate::model::intercept::{
        HandlerFailure, HandlerOutput, Intercepted, Interceptor, SanitizeError, ToolResultSanitizer,
    };
    pub use crate::wire::id::RequestId;
    pub use crate::wire::level::LogLevel;
}

pub mod policy;

pub mod task {
    //! Tasks (the `io.modelcontextprotocol/tasks` extension on 2026-07-28): configuration,
    //! statuses and errors, the context a task body runs with, and the stores that keep task
    //! records.
    pub use crate::tasks::model::{
        MAX_STATUS_MESSAGE_BYTES, MAX_TASK_ID_BYTES, TASKS_EXTENSION, TaskConfig, TaskError,
        TaskInputError, TaskStatus,
    };
    pub use crate::tasks::runner::TaskCreation;
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[cfg_attr(docsrs, doc(cfg(any(feature = "sqlite", feature = "postgres"))))]
    pub use crate::tasks::sql::DEFAULT_SQL_TASK_CAPACITY;
    #[cfg(feature = "sqlite")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
    pub use crate::tasks::sql::SqliteTaskStore;
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub use crate::tasks::sql::{
        POSTGRES_ACQUIRE_TIMEOUT, POSTGRES_CONNECTION_SETUP, PostgresTaskStore,
    };
    pub use crate::tasks::store::{
        InMemoryTaskStore, StoreFuture, TaskRow, TaskStore, TaskStoreError, TaskStoreErrorKind,
    };
    pub use crate::tasks::work::TaskContext;
}

pub mod endpoint {
    //! The endpoint builder and its settings: limits, revisions, 2025 sessions, event streams,
    //! subscriptions, and sealed request state with its key ring and its replay stores (single
    //! use).
    pub use crate::facts::keyring::{
        MAX_REQUEST_STATE_KEY_ID_BYTES, MAX_REQUEST_STATE_KEYS, MAX_REQUEST_STATE_KEYS_TEXT_BYTES,
        RequestStateKey, RequestStateKeyRing,
    };
    pub use crate::facts::report::{ErrorReporter, HandlerErrorReport};
    pub use crate::model::subscription::{
        MAX_LISTEN_STREAMS, MAX_LISTEN_STREAMS_PER_PRINCIPAL, MAX_SUBSCRIPTION_ENTRIES,
    };
    pub use crate::registry::builder::EndpointBuilder;
    pub use crate::registry::event_error::{CatalogEventError, CatalogEventErrorKind};
    pub use crate::registry::events::{MAX_CATALOG_EVENT_BYTES, MAX_CATALOG_EVENT_BYTES_CEILING};
    pub use crate::registry::live::{CatalogChange, Catalogs, LIST_CHANGED_WINDOW};
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub use crate::registry::shared::{
        CATALOG_ACK_TIMEOUT, CATALOG_HEARTBEAT, CATALOG_KEPT_EVENTS, PostgresCatalogBus,
    };
    pub use crate::registry::view::{DEFAULT_VIEWS_CACHED, MAX_VIEWS_CACHED, Registered};
    pub use crate::registry::{Endpoint, EndpointLimits, Implementation};
    pub use crate::session::SessionConfig;
    pub use crate::session::memory::MemorySessionStore;
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub use crate::session::postgres::PostgresSessionStore;
    pub use crate::session::store::{
        MAX_BROADCAST_BYTES, SessionAnswer, SessionEvent, SessionRow, SessionStore,
        SessionStoreError, SessionStoreErrorKind, SessionStoreFuture,
    };
    pub use crate::single_use::memory::{DEFAULT_REPLAY_STORE_CAPACITY, InMemoryReplayStore};
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub use crate::single_use::sql::PostgresReplayStore;
    #[cfg(feature = "sqlite")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
    pub use crate::single_use::sql::SqliteReplayStore;
    pub use crate::single_use::{
        ReplayFuture, ReplayStore, ReplayStoreError, ReplayStoreErrorKind,
        check_replay_store_contract,
    };
    pub use crate::state::seal::{
        MAX_REQUEST_STATE_BYTES, MAX_REQUEST_STATE_ROUNDS, REQUEST_STATE_LIFETIME,
    };
    pub use crate::stream::{MAX_SUBSCRIPTION_URI_BYTES, StreamConfig};
    pub use crate::version::ProtocolVersions;
}

pub mod transport;

#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use tollgate_macros::{tool, tools};

/// Re-exports the code `#[tool]` generates refers to; not a public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub use crate::session::contract::check_session_store_contract;
    #[cfg(feature = "postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
    pub use crate::tasks::sql::check_store_contract;
    pub use schemars;
    pub use serde;

    /// The validation order table `docs/protocol.md` shows, rendered from the pipeline's
    /// order (`pipeline/order.rs`).
    pub fn protocol_order_table() -> String {
        crate::pipeline::order::render()
    }

    /// The URI-template parser and matcher, for the fuzz target: `None` when `template` is not
    /// a valid Level 1 template, else the variables if `uri` matches.
    #[allow(clippy::type_complexity, reason = "a test hook")]
    pub fn uri_template_match(template: &str, uri: &str) -> Option<Option<Vec<(String, String)>>> {
        crate::model::resource::template::fuzz_match(template, uri)
    }
}

pub use tollgate_json as json;
pub use tollgate_schema as schema;
