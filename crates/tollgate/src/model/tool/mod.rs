//! Tool registrations: the immutable registration and its published descriptor, over the
//! staged builder (`builder.rs`), handler invocation (`invoke.rs`), declared options
//! (`options.rs`) and the argument check tasks share (`check.rs`).
//!
//! Owns how a tool is declared (name, revisions, argument/result model, schemas, metadata) and
//! how its handler is invoked once arguments are known to be valid. Knows nothing of HTTP or
//! of which endpoint serves the tool; the dispatcher decides when to invoke.

use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue};
use tollgate_schema::CompiledSchema;

use crate::facts::context::ClientCapability;
use crate::facts::error::BuildErrorKind;
use crate::model::content::icon::{Icon, render_icons};
use crate::version::{ProtocolVersion, ProtocolVersions};

mod builder;
pub(crate) mod check;
pub(crate) mod foreign;
mod invoke;
pub(crate) mod options;

pub(crate) use builder::is_tool_name;
pub use builder::{AdvancedStage, ToolBuilder, ToolModelStage, TypedCompleteStage};
use invoke::Invoke;
pub(crate) use invoke::{Invocation, InvokeFailure};
pub use invoke::{RawArguments, TypedArguments};
use options::{
    InputRequestDeclaration, InputRequestKind, InputRequirement, RequestStateMode, TaskSupport,
    ToolAnnotations,
};

/// The arguments a handler receives: the converted value and the immutable validated JSON
/// object it came from.
#[derive(Clone, Debug)]
pub struct ToolArguments<A> {
    converted: A,
    raw: JsonObject,
}

impl<A> ToolArguments<A> {
    /// Arguments for unit-testing a handler.
    pub fn for_test(converted: A, raw: JsonObject) -> Self {
        Self { converted, raw }
    }

    /// The converted arguments.
    pub fn converted(&self) -> &A {
        &self.converted
    }

    /// The converted arguments, by value.
    pub fn into_converted(self) -> A {
        self.converted
    }

    /// The validated JSON object, exactly as received.
    pub fn raw(&self) -> &JsonObject {
        &self.raw
    }
}

/// An immutable tool registration: name, revisions, schemas, metadata and handler.
///
/// # Examples
///
/// ```
/// use tollgate::{
///     tool::{CompleteResult, OperationResult}, InvocationFeatures, ProtocolVersion,
///     RequestContext, ToolArguments, ToolRegistration,
/// };
/// use tollgate_json::JsonObject;
///
/// async fn echo(
///     _: &RequestContext,
///     args: ToolArguments<JsonObject>,
///     _: &InvocationFeatures,
/// ) -> Result<OperationResult, std::convert::Infallible> {
///     Ok(CompleteResult::from_tool_structured_content(args.raw().clone()).into())
/// }
///
/// let tool = ToolRegistration::with_name("echo", [ProtocolVersion::V2026_07_28])
///     .json_object_arguments()
///     .handler(echo)
///     .description("Returns its arguments")
///     .build()?;
/// assert_eq!(tool.name(), "echo");
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct ToolRegistration {
    pub(crate) inner: Arc<ToolInner>,
}

pub(crate) struct ToolInner {
    pub(crate) name: Arc<str>,
    pub(crate) revisions: ProtocolVersions,
    /// Registered on every revision it can be represented on ([`ToolRegistration::named`]):
    /// its endpoint serves it on those of them it serves.
    pub(crate) every: bool,
    pub(crate) title: Option<Arc<str>>,
    pub(crate) description: Option<Arc<str>>,
    pub(crate) annotations: Option<ToolAnnotations>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) meta: Option<JsonObject>,
    pub(crate) input: CompiledSchema,
    /// An input schema outside Profile 1 published instead of `input` (which is then the
    /// permissive object schema) and checked after it.
    pub(crate) foreign_input: Option<Arc<dyn foreign::ForeignSchema>>,
    /// An output schema outside Profile 1, published and checked instead of `output`.
    pub(crate) foreign_output: Option<Arc<dyn foreign::ForeignSchema>>,
    /// The derived output schema of a typed tool: its completed results' structured content,
    /// whether they come from the call or, for a typed task-required tool, from `tasks/get`.
    pub(crate) output: Option<CompiledSchema>,
    /// Whether every call completes in one invocation (the typed-complete shape): no input
    /// requests, request state or tasks.
    pub(crate) completes: bool,
    /// The kinds of input the handler (or its task's work) may ask for.
    pub(crate) input_declarations: Arc<[InputRequestDeclaration]>,
    /// What the handler may keep in `requestState`.
    pub(crate) state_mode: RequestStateMode,
    pub(crate) text_mirror: bool,
    pub(crate) required_capabilities: Vec<ClientCapability>,
    /// The scopes a caller's token must grant.
    pub(crate) required_scopes: crate::policy::authorization::Scopes,
    /// The endpoint rate limiter this tool's calls are charged to, by name.
    pub(crate) rate_limiter: Option<Arc<str>>,
    /// Whether the handler may (or must) answer with a task.
    pub(crate) task_support: TaskSupport,
    /// Its MCP Apps view and visibility (`_meta.ui`), when it declares either.
    pub(crate) app: Option<crate::model::app::ToolApp>,
    pub(crate) invoker: Box<dyn Invoke>,
}

impl std::fmt::Debug for ToolRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistration")
            .field("name", &self.inner.name)
            .field("revisions", &self.inner.revisions)
            .finish_non_exhaustive()
    }
}

impl ToolRegistration {
    /// Starts a registration. `revisions` is the exact, nonempty set of revisions the tool
    /// serves (checked when the registration is built; a revision that cannot carry the tool,
    /// such as a 2025 revision for a tool with mirrored headers, fails its endpoint's build,
    /// naming the revisions and the tool).
    pub fn with_name(
        name: impl Into<Arc<str>>,
        revisions: impl Into<ProtocolVersions>,
    ) -> ToolModelStage {
        ToolModelStage {
            name: name.into(),
            revisions: revisions.into(),
            every: false,
        }
    }

    /// Starts a registration on every revision the tool can be represented on (the default of
    /// `#[tool]`): all five, unless the tool uses what only 2026-07-28 carries (mirrored
    /// headers, input requests or request state, tasks, a structured output that is not an
    /// object), which narrows it to 2026-07-28. Its endpoint serves it on those of them the
    /// endpoint serves (at least one, else the endpoint's build fails).
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::{
    ///     tool::{CompleteResult, OperationResult}, Endpoint, Implementation, InvocationFeatures,
    ///     ProtocolVersion, RequestContext, ToolArguments, ToolRegistration,
    /// };
    /// use tollgate_json::JsonObject;
    ///
    /// async fn ping(_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures)
    ///     -> Result<OperationResult, std::convert::Infallible> {
    ///     Ok(CompleteResult::from_tool_text("pong").into())
    /// }
    ///
    /// let tool = ToolRegistration::named("ping").json_object_arguments().handler(ping).build()?;
    /// assert!(tool.revisions().contains(ProtocolVersion::V2025_03_26));
    /// // An endpoint serving only 2026-07-28 serves it there.
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///         Implementation::new("demo", "1"))
    ///     .add_tool(tool)
    ///     .build()?;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn named(name: impl Into<Arc<str>>) -> ToolModelStage {
        ToolModelStage {
            name: name.into(),
            revisions: ProtocolVersion::ALL.into(),
            every: true,
        }
    }

    /// The tool name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The name as shared by every copy of the registration (telemetry keeps it past the
    /// request without copying it).
    pub(crate) fn shared_name(&self) -> &Arc<str> {
        &self.inner.name
    }

    /// The endpoint rate limiter, by name, this tool's calls are charged to (`None`: the
    /// endpoint's tool limiter).
    pub fn rate_limiter_name(&self) -> Option<&str> {
        self.inner.rate_limiter.as_deref()
    }

    /// The revisions the tool serves (for a tool registered with [`named`](Self::named), every
    /// revision it can be represented on; its endpoint serves it on those it serves).
    pub fn revisions(&self) -> ProtocolVersions {
        self.inner.revisions
    }

    /// The published input schema document.
    pub fn input_schema(&self) -> &JsonValue {
        match &self.inner.foreign_input {
            Some(foreign) => foreign.document(),
            None => self.inner.input.document(),
        }
    }

    /// The published output schema document, for typed tools (for a typed task-required tool,
    /// the schema of the result its task completes with).
    pub fn output_schema(&self) -> Option<&JsonValue> {
        match &self.inner.foreign_output {
            Some(foreign) => Some(foreign.document()),
            None => self.inner.output.as_ref().map(CompiledSchema::document),
        }
    }

    /// Whether completed results must carry structured content valid against an output schema
    /// (derived, authored or foreign).
    pub(crate) fn has_output(&self) -> bool {
        self.inner.output.is_some() || self.inner.foreign_output.is_some()
    }

    /// How the tool takes part in tasks.
    pub fn task_support(&self) -> TaskSupport {
        self.inner.task_support
    }

    /// The kinds of input the tool may ask the client for.
    pub fn input_request_declarations(&self) -> &[InputRequestDeclaration] {
        &self.inner.input_declarations
    }

    /// What the handler may keep in `requestState`.
    pub fn request_state_mode(&self) -> RequestStateMode {
        self.inner.state_mode
    }

    /// Whether the tool may ask for input of `kind`.
    pub(crate) fn declares_input(&self, kind: InputRequestKind) -> bool {
        self.inner
            .input_declarations
            .iter()
            .any(|d| d.kind() == kind)
    }

    /// The capabilities every call needs for the tool's required input declarations.
    pub(crate) fn required_input_capabilities(
        &self,
    ) -> impl Iterator<Item = crate::facts::context::ClientCapability> + '_ {
        self.inner
            .input_declarations
            .iter()
            .filter(|d| d.requirement() == InputRequirement::Required)
            .map(|d| d.kind().capability())
    }

    /// Why the tool cannot be served on a 2025 revision it selects, if it cannot: mirrored
    /// headers, a non-object output schema, or request state (checked when its endpoint is
    /// built, so the error names the endpoint too). Input declarations are fine: there the
    /// handler asks inside the call through `ClientRequests`.
    pub(crate) fn legacy_refusal(&self) -> Option<BuildErrorKind> {
        let t = &self.inner;
        if !t.revisions.iter().any(crate::version::is_legacy) {
            return None;
        }
        if !t.input.mirrored_headers().is_empty() {
            return Some(BuildErrorKind::MirroredHeaderOnLegacyRevision);
        }
        let object = |o: &CompiledSchema| {
            o.document().get("type").and_then(JsonValue::as_str) == Some("object")
        };
        if !t.output.as_ref().is_none_or(object) {
            return Some(BuildErrorKind::LegacyOutputNotObject);
        }
        if t.state_mode != RequestStateMode::None {
            return Some(BuildErrorKind::RequestStateOnLegacyRevision);
        }
        None
    }

    /// The MCP Apps view the tool names, if any.
    pub fn app_view(&self) -> Option<&str> {
        self.inner.app.as_ref()?.view.as_deref()
    }

    /// Whether the tool carries MCP Apps metadata (a view or a visibility) on `revision`.
    pub(crate) fn has_app_meta(&self, revision: ProtocolVersion) -> bool {
        self.inner.app.is_some() && revision.carries_titles_and_structure()
    }

    /// The tool's descriptor as `tools/list` publishes it on `revision`: 2025-03-26 has no
    /// `title`, `outputSchema`, `icons` or `_meta` (the title travels as the annotations'
    /// `title`); 2024-11-05 has no annotations either. With `apps` (the client declared the
    /// MCP Apps extension), the tool's view and visibility are its `_meta.ui`.
    pub(crate) fn descriptor_for(&self, revision: ProtocolVersion, apps: bool) -> JsonValue {
        let t = &self.inner;
        let full = revision.carries_titles_and_structure();
        let mut b = JsonObject::builder().insert("name", &*t.name);
        if let Some(title) = t.title.as_ref().filter(|_| full) {
            b.push("title", &**title);
        }
        if let Some(d) = &t.description {
            b.push("description", &**d);
        }
        b.push("inputSchema", self.input_schema().clone());
        if let Some(o) = self.output_schema().filter(|_| full) {
            b.push("outputSchema", o.clone());
        }
        // 2025-11-25's experimental tasks: which calls may (or must) ask for one.
        if let Some(support) = t.task_support.requested_name()
            && revision.has_requested_tasks()
        {
            let execution = JsonObject::builder().insert("taskSupport", support);
            b.push("execution", execution.build());
        }
        if revision.carries_annotations_and_audio() {
            match (&t.annotations, t.title.as_ref().filter(|_| !full)) {
                (Some(a), title) => b.push("annotations", a.render(title)),
                (None, Some(title)) => {
                    b.push("annotations", ToolAnnotations::new().render(Some(title)))
                }
                (None, None) => {}
            }
        }
        if !t.icons.is_empty() && revision.carries_icons() {
            b.push("icons", render_icons(&t.icons));
        }
        let ui = t.app.as_ref().filter(|_| apps && full);
        match (t.meta.as_ref().filter(|_| full), ui) {
            (Some(m), None) => b.push("_meta", m.clone()),
            (m, Some(app)) => {
                let mut meta = m.map(JsonObject::to_builder).unwrap_or_default();
                meta.push("ui", app.render());
                b.push("_meta", meta.build());
            }
            (None, None) => {}
        }
        b.build().into()
    }
}
