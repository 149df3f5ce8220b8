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
//! use tollgate::{Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext,
//!     ToolArguments, ToolRegistration};
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
//! produce a completed `isError` result with the fixed text [`INVALID_ARGUMENTS_TEXT`].

/// The README's examples, compiled (and run, unless marked `no_run`) as doc tests so they stay
/// true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;

/// The tasks guide's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/tasks.md")]
struct TasksGuideExamples;

mod cache;
mod client_request;
mod content;
mod context;
mod decimal;
mod derive;
mod endpoint;
mod error;
mod features;
mod guard;
mod input;
mod methods;
mod origin;
mod pipeline;
mod policy;
mod projection;
mod prompt;
mod resource;
mod result;
mod revision;
mod server;
mod service;
mod session;
mod state;
mod stdio;
mod stream;
mod subscription;
mod task;
mod tool;
mod version;
mod wire;

pub use cache::{CachePolicy, CacheScope};
pub use client_request::{ClientRequestError, ClientRequests};
pub use content::checks::MAX_INLINE_BYTES;
pub use content::icon::{Icon, Theme};
pub use content::{
    Annotations, AudioContent, ContentBlock, EmbeddedResource, ImageContent, ResourceContents,
    ResourceLink, Role, TextContent,
};
pub use context::{
    AdmissionIdentity, ClientCapabilities, ClientCapability, ClientInfo, PeerAddr, RequestContext,
};
#[cfg(feature = "num-bigint")]
pub use decimal::BigInteger;
pub use decimal::Decimal;
pub use endpoint::builder::EndpointBuilder;
pub use endpoint::{Endpoint, EndpointLimits, Implementation};
pub use error::{BuildError, BuildErrorKind, ContentError, ContentErrorKind};
pub use features::{
    CancellationToken, InvocationFeatures, MissingFeature, ProgressError, ProgressReporter,
    RequestLogger,
};
pub use input::{InputRequest, InputRequiredResult, MAX_INPUT_REQUESTS};
pub use policy::{
    AdmissionController, AdmissionDecision, AdmissionRequest, RateLimitDecision, RateLimiter,
    TokenBucket,
};
pub use prompt::completion::{Completion, CompletionFn, CompletionRequest, MAX_COMPLETION_VALUES};
pub use prompt::{
    PromptArgument, PromptArguments, PromptBuilder, PromptFn, PromptHandlerStage, PromptMessage,
    PromptOutcome, PromptRegistration, PromptResult,
};
pub use resource::template::{
    MAX_TEMPLATE_BYTES, MAX_TEMPLATE_ROUTED_URI_BYTES, MAX_TEMPLATE_VARIABLES,
    MAX_TEMPLATES_PER_ENDPOINT, MAX_VARIABLE_NAME_BYTES,
};
pub use resource::{
    Exact, ResourceBuilder, ResourceFn, ResourceHandlerStage, ResourceOutcome, ResourceOutput,
    ResourceRegistration, ResourceRequest, ResourceTemplateRegistration, Template,
};
pub use result::{
    CompleteResult, CompleteResultBuilder, OperationResult, TaskCreated, ToolOutput,
    ToolOutputBuilder,
};
pub use server::{DEFAULT_ADDR, Server, ServerLimits};
pub use service::{DEFAULT_MAX_HEADER_BYTES, McpBody, McpService, McpServiceBuilder};
pub use session::SessionConfig;
pub use state::{
    MAX_REQUEST_STATE_BYTES, MAX_REQUEST_STATE_ROUNDS, REQUEST_STATE_LIFETIME, RequestStateKey,
};
pub use stdio::StdioServer;
pub use stream::event::ResponseStream;
pub use stream::{MAX_SUBSCRIPTION_URI_BYTES, StreamConfig};
pub use subscription::{
    MAX_LISTEN_STREAMS, MAX_LISTEN_STREAMS_PER_PRINCIPAL, MAX_SUBSCRIPTION_ENTRIES,
};
pub use task::model::{
    MAX_TASK_ID_BYTES, TASKS_EXTENSION, TaskConfig, TaskError, TaskInputError, TaskStatus,
};
pub use task::runner::{TaskContext, TaskCreation};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use task::sql::DEFAULT_SQL_TASK_CAPACITY;
#[cfg(feature = "postgres")]
pub use task::sql::PostgresTaskStore;
#[cfg(feature = "sqlite")]
pub use task::sql::SqliteTaskStore;
pub use task::store::{
    InMemoryTaskStore, StoreFuture, TaskRow, TaskStore, TaskStoreError, TaskStoreErrorKind,
};
pub use tool::options::{TaskSupport, ToolAnnotations};
pub use tool::{
    AdvancedStage, RawArguments, ToolArguments, ToolBuilder, ToolFn, ToolModelStage,
    ToolRegistration, TypedArguments, TypedCompleteStage,
};
pub use version::{ProtocolVersion, ProtocolVersions};
pub use wire::fault::INVALID_ARGUMENTS_TEXT;
pub use wire::headers::{MAX_MIRRORED_VALUE_BYTES, MAX_SAFE_INTEGER, encode_mirrored_value};
pub use wire::id::RequestId;
pub use wire::level::LogLevel;
pub use wire::method::OperationType;

#[cfg(feature = "macros")]
pub use tollgate_macros::{tool, tools};

/// Re-exports the code `#[tool]` generates refers to; not a public API.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "postgres")]
    pub use crate::task::sql::check_store_contract;
    pub use schemars;
    pub use serde;

    /// The URI-template parser and matcher, for the fuzz target: `None` when `template` is not
    /// a valid Level 1 template, else the variables if `uri` matches.
    #[allow(clippy::type_complexity, reason = "a test hook")]
    pub fn uri_template_match(template: &str, uri: &str) -> Option<Option<Vec<(String, String)>>> {
        crate::resource::template::fuzz_match(template, uri)
    }
}

pub use tollgate_json as json;
pub use tollgate_schema as schema;
