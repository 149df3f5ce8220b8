//! The staged tool builder: the argument and result model chosen first (typed complete, typed
//! task-required, typed or raw advanced, authored schema), then the handler, then metadata and
//! [`ToolBuilder::build`], which checks everything a registration alone can check.

use std::marker::PhantomData;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tollgate_json::{JsonObject, JsonValue, to_value};
use tollgate_schema::CompiledSchema;

use crate::facts::context::ClientCapability;
use crate::facts::error::{BuildError, BuildErrorKind, ContentError, ContentErrorKind};
use crate::model::app::{AppVisibility, ToolApp};
use crate::model::content::icon::Icon;
use crate::model::handler::Handler;
use crate::model::result::OperationResult;
use crate::model::tool::foreign::{ForeignSchema, is_object_schema};
use crate::model::tool::invoke::{
    ArgumentModel, Invoke, Operation, RawArguments, Structured, TypedArguments, boxed,
};
use crate::model::tool::options::{
    InputRequestDeclaration, RequestStateMode, TaskSupport, ToolAnnotations,
};
use crate::model::tool::{ToolArguments, ToolInner, ToolRegistration};
use crate::policy::authorization::Scopes;
use crate::version::{ProtocolVersion, ProtocolVersions};
use crate::wire::syntax;

/// The first stage: choose the argument and result model.
#[derive(Debug)]
#[must_use = "a tool needs an argument model and a handler"]
pub struct ToolModelStage {
    pub(super) name: Arc<str>,
    pub(super) revisions: ProtocolVersions,
    /// Whether the revisions are the default: every one the tool can be represented on.
    pub(super) every: bool,
}

fn derive_schema<T: JsonSchema>() -> JsonValue {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<T>();
    // A schemars document is plain JSON; a failure here would be a schemars bug, and the empty
    // document it leaves fails the object-root rule below.
    to_value(&schema).unwrap_or(JsonValue::Null)
}

fn compile_derived<T: JsonSchema>(tool: &str, input: bool) -> Result<CompiledSchema, BuildError> {
    let derived = derive_schema::<T>();
    let document = crate::model::derive::normalise(&derived, !input).map_err(|e| {
        use crate::model::derive::DeriveFailure as F;
        let kind = match e.failure {
            F::Unconstrained => BuildErrorKind::UnconstrainedType,
            F::Recursive => BuildErrorKind::RecursiveType,
            F::InexactOneOf => BuildErrorKind::InexactOneOf,
            F::BareStringOutput => BuildErrorKind::BareStringOutput,
        };
        BuildError::new(kind)
            .tool_name(tool)
            .for_type(std::any::type_name::<T>())
            .at_location(e.location)
    })?;
    let compiled = if input {
        CompiledSchema::compile_tool_input(&document)
    } else {
        CompiledSchema::compile(&document)
    };
    compiled.map_err(|e| {
        BuildError::new(BuildErrorKind::DerivedSchema)
            .tool_name(tool)
            .for_type(std::any::type_name::<T>())
            .with_schema_error(e)
    })
}

fn raw_object_schema() -> Result<CompiledSchema, BuildError> {
    let document: JsonValue = JsonObject::builder()
        .insert("type", "object")
        .build()
        .into();
    CompiledSchema::compile_tool_input(&document)
        .map_err(|e| BuildError::new(BuildErrorKind::InputSchema).with_schema_error(e))
}

impl ToolModelStage {
    /// Typed arguments and typed output: the handler returns `R`, always a completed result
    /// with structured content. Both schemas are derived with schemars and compiled through
    /// Profile 1; whatever the profile cannot express fails [`ToolBuilder::build`].
    pub fn argument_and_output_types<A, R>(self) -> TypedCompleteStage<A, R>
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: Serialize + JsonSchema + 'static,
    {
        let schemas = compile_derived::<A>(&self.name, true)
            .and_then(|input| Ok((input, compile_derived::<R>(&self.name, false)?)));
        TypedCompleteStage {
            head: self,
            schemas,
            _types: PhantomData,
        }
    }

    /// Typed arguments and an advanced result ([`OperationResult`]).
    pub fn argument_type<A>(self) -> AdvancedStage<A, TypedArguments>
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
    {
        let input = compile_derived::<A>(&self.name, true);
        AdvancedStage {
            head: self,
            input,
            output: None,
            foreign: Foreign::default(),
            _types: PhantomData,
        }
    }

    /// The raw validated JSON object as arguments, under the fixed `{"type":"object"}` schema.
    pub fn json_object_arguments(self) -> AdvancedStage<JsonObject, RawArguments> {
        let input = raw_object_schema();
        AdvancedStage {
            head: self,
            input,
            output: None,
            foreign: Foreign::default(),
            _types: PhantomData,
        }
    }

    /// An authored Profile 1 input schema (object root), compiled now. Use it when derivation
    /// cannot express a constraint, or to declare `x-mcp-header` mirrored arguments.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InputSchema`] naming the tool, with the compiler's location and
    /// keyword.
    pub fn input_schema(
        self,
        document: &JsonValue,
    ) -> Result<AdvancedStage<JsonObject, RawArguments>, BuildError> {
        let input = CompiledSchema::compile_tool_input(document).map_err(|e| {
            BuildError::new(BuildErrorKind::InputSchema)
                .tool_name(&self.name)
                .with_schema_error(e)
        })?;
        Ok(AdvancedStage {
            head: self,
            input: Ok(input),
            output: None,
            foreign: Foreign::default(),
            _types: PhantomData,
        })
    }
}

/// The typed-complete stage: install the handler.
#[must_use = "a tool needs a handler"]
pub struct TypedCompleteStage<A, R> {
    head: ToolModelStage,
    schemas: Result<(CompiledSchema, CompiledSchema), BuildError>,
    _types: PhantomData<fn() -> (A, R)>,
}

impl<A, R> TypedCompleteStage<A, R>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    R: Serialize + JsonSchema + 'static,
{
    /// Installs the handler, an `async fn(&RequestContext, ToolArguments<A>,
    /// &InvocationFeatures) -> Result<R, E>`.
    pub fn handler<H, E>(self, handler: H) -> ToolBuilder
    where
        H: for<'a> Handler<'a, ToolArguments<A>, R, E>,
        E: 'static,
    {
        self.install(
            boxed::<A, R, E, H, TypedArguments, Structured>(handler),
            true,
        )
    }

    /// Installs an operation handler, an `async fn(&RequestContext, ToolArguments<A>,
    /// &InvocationFeatures) -> Result<OperationResult, E>`, and makes the tool statically
    /// task-required ([`TaskSupport::Required`], so 2026-07-28 only, with a task store on its
    /// endpoint). The handler creates a task through
    /// [`TaskCreation`](crate::task::TaskCreation) (or answers inline with a completed result
    /// or an `input_required` one); `R`'s schema is kept as the tool's output schema and
    /// enforced on every completed result: the call's own, and the task's when `tasks/get`
    /// returns it (a result that fails it is the fixed -32603, the stored task unchanged).
    /// Completed results without content of their own get the text mirror, as typed results
    /// do.
    pub fn operation_handler<H, E>(self, handler: H) -> ToolBuilder
    where
        H: for<'a> Handler<'a, ToolArguments<A>, OperationResult, E>,
        E: 'static,
    {
        let invoker = boxed::<A, OperationResult, E, H, TypedArguments, Operation>(handler);
        let mut builder = self.install(invoker, false);
        builder.task_support = TaskSupport::Required;
        builder
    }

    fn install(self, invoker: Box<dyn Invoke>, completes: bool) -> ToolBuilder {
        let (input, output) = match self.schemas {
            Ok((i, o)) => (Ok(i), Some(o)),
            Err(e) => (Err(e), None),
        };
        ToolBuilder::new(self.head, input, output, invoker, completes)
    }
}

/// The advanced stage (typed or raw arguments, [`OperationResult`] result): install the
/// handler.
#[must_use = "a tool needs a handler"]
pub struct AdvancedStage<A, M> {
    head: ToolModelStage,
    input: Result<CompiledSchema, BuildError>,
    output: Option<CompiledSchema>,
    foreign: Foreign,
    _types: PhantomData<fn() -> (A, M)>,
}

/// A tool's schemas outside Profile 1 (see [`ForeignSchema`]).
#[derive(Clone, Default)]
struct Foreign {
    input: Option<Arc<dyn ForeignSchema>>,
    output: Option<Arc<dyn ForeignSchema>>,
}

#[allow(private_bounds, reason = "the argument model is sealed: Typed or Raw")]
impl<A, M> AdvancedStage<A, M>
where
    A: Send + 'static,
    M: ArgumentModel<A>,
{
    /// Installs the handler, an `async fn(&RequestContext, ToolArguments<A>,
    /// &InvocationFeatures) -> Result<OperationResult, E>`.
    pub fn handler<H, E>(self, handler: H) -> ToolBuilder
    where
        H: for<'a> Handler<'a, ToolArguments<A>, OperationResult, E>,
        E: 'static,
    {
        let invoker = boxed::<A, OperationResult, E, H, M, Operation>(handler);
        let authored = self.output.is_some() || self.foreign.output.is_some();
        let mut builder = ToolBuilder::new(self.head, self.input, self.output, invoker, false);
        builder.authored_output = authored;
        builder.foreign = self.foreign;
        builder
    }

    /// An output schema outside Profile 1 with its own validator (see [`ForeignSchema`]),
    /// published as the tool's `outputSchema` and held to as
    /// [`output_schema`](Self::output_schema) holds: every completed result must carry
    /// structured content it accepts. Replaces an authored Profile 1 output schema.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::OutputSchema`] when the document is not an object with `"type":
    /// "object"`.
    pub fn foreign_output_schema(mut self, schema: impl ForeignSchema) -> Result<Self, BuildError> {
        if !is_object_schema(schema.document()) {
            return Err(BuildError::new(BuildErrorKind::OutputSchema).tool_name(&self.head.name));
        }
        self.output = None;
        self.foreign.output = Some(Arc::new(schema));
        Ok(self)
    }

    /// An authored Profile 1 output schema (object root, as the protocol requires), compiled
    /// now: every completed result must carry `structuredContent` valid against it (else the
    /// fixed -32603), and one without content of its own gets the text mirror, as a typed
    /// tool's does. For tools whose shapes come from elsewhere (a gateway importing another
    /// server's catalog); a Rust tool derives its output schema from its type instead.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::OutputSchema`] naming the tool, with the compiler's location and
    /// keyword when it did not compile.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::json::{JsonLimits, from_str};
    /// use tollgate::tool::{CompleteResult, OperationResult};
    /// use tollgate::{ProtocolVersion, ToolRegistration};
    ///
    /// let output = from_str(r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#, &JsonLimits::default())?;
    /// let tool = ToolRegistration::with_name("count", [ProtocolVersion::V2026_07_28])
    ///     .json_object_arguments()
    ///     .output_schema(&output)?
    ///     .handler(|_: &_, _: _, _: &_| async {
    ///         Ok::<OperationResult, std::convert::Infallible>(
    ///             CompleteResult::from_tool_structured_content(tollgate::json::JsonObject::builder().insert("n", 3).build()).into(),
    ///         )
    ///     })
    ///     .build()?;
    /// assert!(tool.output_schema().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn output_schema(mut self, document: &JsonValue) -> Result<Self, BuildError> {
        let refused = || BuildError::new(BuildErrorKind::OutputSchema).tool_name(&self.head.name);
        let output = CompiledSchema::compile_tool_input(document)
            .map_err(|e| refused().with_schema_error(e))?;
        if !output.mirrored_headers().is_empty() {
            return Err(refused());
        }
        self.output = Some(output);
        Ok(self)
    }
}

impl AdvancedStage<JsonObject, RawArguments> {
    /// An input schema outside Profile 1 with its own validator (see [`ForeignSchema`]),
    /// published as the tool's `inputSchema`: arguments must be a JSON object and pass its
    /// check, else they get the revision's invalid-arguments answer, exactly as under a Profile
    /// 1 schema. For tools whose shapes come from elsewhere (a gateway importing another
    /// server's catalog); a Rust tool's schemas are Profile 1.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InputSchema`] when the document is not an object with `"type":
    /// "object"`.
    pub fn foreign_input_schema(mut self, schema: impl ForeignSchema) -> Result<Self, BuildError> {
        if !is_object_schema(schema.document()) {
            return Err(BuildError::new(BuildErrorKind::InputSchema).tool_name(&self.head.name));
        }
        self.input = raw_object_schema();
        self.foreign.input = Some(Arc::new(schema));
        Ok(self)
    }
}

/// The last stage: metadata, then [`build`](Self::build).
#[must_use = "call build() to finish the registration"]
pub struct ToolBuilder {
    name: Arc<str>,
    revisions: ProtocolVersions,
    every: bool,
    input: Result<CompiledSchema, BuildError>,
    output: Option<CompiledSchema>,
    /// The output schema was authored on an advanced tool (not derived from a typed result).
    authored_output: bool,
    foreign: Foreign,
    invoker: Box<dyn Invoke>,
    title: Option<Arc<str>>,
    description: Option<Arc<str>>,
    annotations: Option<ToolAnnotations>,
    icons: Vec<Icon>,
    meta: Option<Result<JsonObject, ContentError>>,
    text_mirror: bool,
    required_capabilities: Vec<ClientCapability>,
    required_scopes: Vec<String>,
    rate_limiter: Option<Arc<str>>,
    task_support: TaskSupport,
    completes: bool,
    input_declarations: Vec<InputRequestDeclaration>,
    state_mode: RequestStateMode,
    invalid_icon: bool,
    app_view: Option<Arc<str>>,
    app_visibility: Option<AppVisibility>,
}

impl ToolBuilder {
    fn new(
        head: ToolModelStage,
        input: Result<CompiledSchema, BuildError>,
        output: Option<CompiledSchema>,
        invoker: Box<dyn Invoke>,
        completes: bool,
    ) -> Self {
        Self {
            name: head.name,
            revisions: head.revisions,
            every: head.every,
            input,
            output,
            authored_output: false,
            foreign: Foreign::default(),
            invoker,
            title: None,
            description: None,
            annotations: None,
            icons: Vec::new(),
            meta: None,
            text_mirror: true,
            required_capabilities: Vec::new(),
            required_scopes: Vec::new(),
            rate_limiter: None,
            task_support: TaskSupport::Forbidden,
            completes,
            input_declarations: Vec::new(),
            state_mode: RequestStateMode::None,
            invalid_icon: false,
            app_view: None,
            app_visibility: None,
        }
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<Arc<str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// A description for the model.
    pub fn description(mut self, description: impl Into<Arc<str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Appends an icon (omitted from 2025-06-18 catalogs).
    pub fn add_icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Appends an icon from its source URI alone (what `#[tool(icons = [...])]` uses); a
    /// source that is not an absolute URI fails [`build`](Self::build) with
    /// [`BuildErrorKind::InvalidConfiguration`].
    pub fn add_icon_source(mut self, src: &str) -> Self {
        match Icon::with_source(src) {
            Ok(icon) => self.icons.push(icon),
            Err(_) => self.invalid_icon = true,
        }
        self
    }

    /// The descriptor's `_meta` (keys checked at build).
    pub fn meta(mut self, meta: JsonObject) -> Self {
        let checked = if meta.keys().all(syntax::is_meta_key) {
            Ok(meta)
        } else {
            Err(ContentError::new(ContentErrorKind::InvalidMetaKey))
        };
        self.meta = Some(checked);
        self
    }

    /// Whether a typed tool's structured output is also sent as one text block holding its
    /// JSON (on by default, for clients that read only `content`). Advanced handlers choose
    /// their own content and are unaffected.
    pub fn structured_content_text_mirror(mut self, enabled: bool) -> Self {
        self.text_mirror = enabled;
        self
    }

    /// Requires the client to declare `capability` on every call; a call without it gets
    /// HTTP 400 / -32021 listing what is missing, before the handler. The tool stays listed.
    pub fn require_client_capability(mut self, capability: ClientCapability) -> Self {
        if !self.required_capabilities.contains(&capability) {
            self.required_capabilities.push(capability);
        }
        self
    }

    /// Requires the caller's token to grant each of `scopes` (or a scope its endpoint's
    /// [`ProtectedResource`](crate::policy::ProtectedResource) says implies it): a call without
    /// them gets HTTP 403 with an `insufficient_scope` challenge, after the tool is found and
    /// before anything else of it runs. The tool stays listed (catalogs are caller-neutral). The
    /// endpoint must have a protected resource ([`BuildErrorKind::InvalidAuthorization`]
    /// otherwise, and for a scope that is not a scope token). Adds to scopes set before.
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.required_scopes
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Charges this tool's calls to the endpoint's rate limiter registered under `name`
    /// ([`EndpointBuilder::add_rate_limiter`](crate::endpoint::EndpointBuilder::add_rate_limiter)) instead
    /// of the endpoint's tool limiter. An endpoint without a limiter of that name refuses to
    /// build.
    pub fn rate_limiter(mut self, name: impl Into<Arc<str>>) -> Self {
        self.rate_limiter = Some(name.into());
        self
    }

    /// Whether the handler may answer with a task: the tasks extension on 2026-07-28, and the
    /// experimental tasks of 2025-11-25 when the tool names that revision (a tool on every
    /// revision that supports tasks is served on 2026-07-28 alone). With
    /// [`TaskSupport::Optional`](crate::tool::TaskSupport::Optional) the handler finds a
    /// [`TaskCreation`](crate::task::TaskCreation) among its features when the client declared the
    /// extension (2026-07-28) or asked for a task with the call's `task` member (2025-11-25);
    /// with [`TaskSupport::Required`](crate::tool::TaskSupport::Required) a call that cannot
    /// have one is refused before the handler (HTTP 400 / -32021 on 2026-07-28, -32601 on
    /// 2025-11-25). Only advanced handlers can return a task, and a required-task tool may
    /// select only 2026-07-28 and 2025-11-25 ([`BuildErrorKind::InvalidTaskSupport`]); its
    /// endpoint needs a task store.
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// The kinds of input the handler (or its task's work) may ask the client for, replacing
    /// any set before (an empty list clears them). Asking for an undeclared kind is an
    /// application contract failure (the fixed -32603); a
    /// [`Required`](crate::tool::InputRequirement::Required) kind's capability is checked on
    /// every call before the handler. They hold on every revision: on 2026-07-28 for
    /// `input_required` results and a task's
    /// [`request_input`](crate::task::TaskContext::request_input), on the 2025 revisions for
    /// [`ClientRequests::send`](crate::context::ClientRequests::send) (which refuses an
    /// undeclared kind). Not for typed-complete tools, which never ask
    /// ([`BuildErrorKind::InvalidInputDeclarations`]). Declaring a kind twice keeps its last
    /// requirement.
    pub fn input_request_declarations(
        mut self,
        declarations: impl IntoIterator<Item = InputRequestDeclaration>,
    ) -> Self {
        self.input_declarations.clear();
        for declaration in declarations {
            self.input_declarations
                .retain(|d| d.kind() != declaration.kind());
            self.input_declarations.push(declaration);
        }
        self
    }

    /// What the handler may keep in `requestState` across rounds (default
    /// [`RequestStateMode::None`](crate::tool::RequestStateMode::None)). Not for
    /// typed-complete tools, nor for tools selecting a 2025 revision (refused when the
    /// endpoint is built: [`BuildErrorKind::RequestStateOnLegacyRevision`]).
    pub fn request_state_mode(mut self, mode: RequestStateMode) -> Self {
        self.state_mode = mode;
        self
    }

    /// Names the MCP Apps view that renders this tool's results: a `ui://` view its endpoint
    /// serves ([`EndpointBuilder::app_view`](crate::endpoint::EndpointBuilder::app_view); a
    /// missing one fails the endpoint's build with [`BuildErrorKind::UnknownAppView`]).
    /// Published as `_meta.ui.resourceUri` on 2025-06-18 and later, to clients that declare the
    /// `io.modelcontextprotocol/ui` extension; others see the tool without it. The tool should
    /// still answer meaningful `content`; its structured result is what the view reads.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::{tool::{CompleteResult, OperationResult}, app::AppVisibility, AppView,
    ///     Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext,
    ///     ToolArguments, ToolRegistration};
    /// use tollgate_json::JsonObject;
    ///
    /// async fn show(_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures)
    ///     -> Result<OperationResult, std::convert::Infallible> {
    ///     Ok(CompleteResult::from_tool_text("3 products").into())
    /// }
    ///
    /// let tool = ToolRegistration::named("products.show").json_object_arguments().handler(show)
    ///     .app_view("ui://shop/products")
    ///     .app_visibility(AppVisibility::ModelAndApp)
    ///     .build()?;
    /// let view = AppView::html("ui://shop/products", "<!doctype html><p>Products</p>").build()?;
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///         Implementation::new("shop", "1"))
    ///     .add_tool(tool)
    ///     .app_view(view)
    ///     .build()?;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn app_view(mut self, uri: impl Into<Arc<str>>) -> Self {
        self.app_view = Some(uri.into());
        self
    }

    /// Who may see and call the tool (the MCP Apps `_meta.ui.visibility`; default
    /// [`AppVisibility::ModelAndApp`](crate::app::AppVisibility::ModelAndApp)): the host hides
    /// an app-only tool from the model and refuses a view's call of a model-only one. Published
    /// with the view metadata (to clients that declare the extension), also for a tool without
    /// a view of its own (one a view calls).
    pub fn app_visibility(mut self, visibility: AppVisibility) -> Self {
        self.app_visibility = Some(visibility);
        self
    }

    /// Finishes the registration.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::EmptyRevisions`], [`BuildErrorKind::InvalidToolName`], a schema error
    /// ([`BuildErrorKind::InputSchema`], [`BuildErrorKind::DerivedSchema`], ...),
    /// [`BuildErrorKind::InvalidTaskSupport`], [`BuildErrorKind::InvalidInputDeclarations`], or
    /// [`BuildErrorKind::InvalidConfiguration`] for a `_meta` key that breaks the naming rules
    /// (or a `_meta.ui` beside MCP Apps metadata), [`BuildErrorKind::InvalidAppView`] for a view
    /// URI that is not `ui://` and a name. What a 2025 revision cannot serve (mirrored headers, a non-object output, input requests
    /// or request state) is refused when the endpoint is built, naming the endpoint.
    pub fn build(mut self) -> Result<ToolRegistration, BuildError> {
        if self.every && self.modern_only() {
            // What only 2026-07-28 can carry narrows a tool on every revision to it.
            self.revisions = ProtocolVersion::V2026_07_28.into();
        }
        let fail = |kind| {
            Err(BuildError::new(kind)
                .tool_name(&self.name)
                .with_revisions(self.revisions))
        };
        if self.revisions.is_empty() {
            return fail(BuildErrorKind::EmptyRevisions);
        }
        if !is_tool_name(&self.name) {
            return fail(BuildErrorKind::InvalidToolName);
        }
        let input = self.input.map_err(|e| e.tool_name(&self.name))?;
        // Revisions without tasks of any kind (2025-11-25 has its experimental ones).
        let taskless = self
            .revisions
            .iter()
            .any(|r| crate::version::is_legacy(r) && !r.has_requested_tasks());
        // A typed-complete tool always completes; a typed task-required one always requires
        // a task; required tasks exist only where tasks do.
        let typed_operation = self.output.is_some() && !self.completes && !self.authored_output;
        if (self.completes && self.task_support != TaskSupport::Forbidden)
            || (typed_operation && self.task_support != TaskSupport::Required)
            || (self.task_support == TaskSupport::Required && taskless)
        {
            return fail(BuildErrorKind::InvalidTaskSupport);
        }
        if self.completes
            && (!self.input_declarations.is_empty() || self.state_mode != RequestStateMode::None)
        {
            return fail(BuildErrorKind::InvalidInputDeclarations);
        }
        if self.invalid_icon {
            return fail(BuildErrorKind::InvalidConfiguration);
        }
        let Some(required_scopes) = Scopes::parse(&self.required_scopes) else {
            return fail(BuildErrorKind::InvalidAuthorization);
        };
        let app = match (self.app_view, self.app_visibility) {
            (None, None) => None,
            (view, visibility) => {
                if let Some(uri) = &view
                    && let Err(detail) = crate::model::app::check_view_uri(uri)
                {
                    return Err(BuildError::new(BuildErrorKind::InvalidAppView)
                        .tool_name(&self.name)
                        .resource(uri)
                        .with_detail(detail));
                }
                Some(ToolApp {
                    view,
                    visibility: visibility.unwrap_or_default(),
                })
            }
        };
        let meta = match self.meta {
            // The view metadata is the tool's `_meta.ui`: an application's own `ui` key would
            // collide with it.
            Some(Ok(m)) if app.is_some() && m.contains_key("ui") => {
                return Err(BuildError::new(BuildErrorKind::InvalidConfiguration)
                    .tool_name(&self.name)
                    .with_detail("a tool with MCP Apps metadata cannot set its own _meta.ui"));
            }
            Some(Ok(m)) => Some(m),
            Some(Err(_)) => {
                return Err(
                    BuildError::new(BuildErrorKind::InvalidConfiguration).tool_name(&self.name)
                );
            }
            None => None,
        };
        Ok(ToolRegistration {
            inner: Arc::new(ToolInner {
                name: self.name,
                revisions: self.revisions,
                every: self.every,
                title: self.title,
                description: self.description,
                annotations: self.annotations,
                icons: self.icons,
                meta,
                input,
                foreign_input: self.foreign.input,
                foreign_output: self.foreign.output,
                output: self.output,
                completes: self.completes,
                input_declarations: self.input_declarations.into(),
                state_mode: self.state_mode,
                text_mirror: self.text_mirror,
                required_capabilities: self.required_capabilities,
                required_scopes,
                rate_limiter: self.rate_limiter,
                task_support: self.task_support,
                app,
                invoker: self.invoker,
            }),
        })
    }
}

impl ToolBuilder {
    /// Whether the tool uses what only 2026-07-28 carries: mirrored headers, input requests or
    /// request state, tasks, or a structured output that is not an object.
    fn modern_only(&self) -> bool {
        let mirrored = self
            .input
            .as_ref()
            .is_ok_and(|i| !i.mirrored_headers().is_empty());
        let object_output = self
            .output
            .as_ref()
            .is_none_or(|o| o.document().get("type").and_then(JsonValue::as_str) == Some("object"));
        mirrored
            || !object_output
            || !self.input_declarations.is_empty()
            || self.state_mode != RequestStateMode::None
            || self.task_support != TaskSupport::Forbidden
    }
}

/// 1 to 128 characters of `A-Z a-z 0-9 _ - .`, as the protocol recommends; such names are
/// also always header-safe for `Mcp-Name`.
pub(crate) fn is_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}
