//! Tool registrations: the staged builder, handler shapes, metadata and the published
//! descriptor.
//!
//! Owns how a tool is declared (name, revisions, argument/result model, schemas, metadata) and
//! how its handler is invoked once arguments are known to be valid. Knows nothing of HTTP or
//! of which endpoint serves the tool; the dispatcher decides when to invoke.

use std::marker::PhantomData;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tollgate_json::{BindLimits, JsonObject, JsonValue, from_value, to_value};
use tollgate_schema::CompiledSchema;

use crate::facts::context::{ClientCapability, RequestContext};
use crate::facts::error::{BuildError, BuildErrorKind, ContentError, ContentErrorKind};
use crate::model::content::icon::{Icon, render_icons};
use crate::model::features::InvocationFeatures;
use crate::model::guard::BoxFuture;
use crate::model::handler::Handler;
use crate::model::result::OperationResult;
use crate::version::{ProtocolVersion, ProtocolVersions};
use crate::wire::syntax;

pub(crate) mod check;
pub(crate) mod options;

use options::{TaskSupport, ToolAnnotations};

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

/// The outcome of one invocation, before rendering.
pub(crate) enum Invocation {
    /// A typed complete handler's output, converted to JSON (validated later).
    Structured(JsonValue),
    /// An advanced handler's result.
    Operation(OperationResult),
}

/// Why an invocation produced no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InvokeFailure {
    /// Typed binding refused the (schema-valid) arguments.
    InvalidArguments,
    /// The handler returned an error, or its output has no JSON form.
    Handler,
}

pub(crate) trait Invoke: Send + Sync {
    fn invoke<'a>(
        &'a self,
        context: &'a RequestContext,
        raw: JsonObject,
        features: &'a InvocationFeatures,
        limits: &BindLimits,
    ) -> BoxFuture<'a, Result<Invocation, InvokeFailure>>;
}

/// How arguments are converted: through serde (`Typed`) or handed over as the raw object.
trait ArgumentModel<A>: Send + Sync + 'static {
    fn bind(raw: &JsonObject, limits: &BindLimits) -> Option<A>;
}

/// How a handler's success value becomes an [`Invocation`].
trait ResultModel<T>: Send + Sync + 'static {
    fn finish(value: T) -> Result<Invocation, InvokeFailure>;
}

/// Marks an advanced stage whose arguments are converted through serde.
#[derive(Debug)]
pub struct TypedArguments;
/// Marks an advanced stage whose arguments are the raw validated JSON object.
#[derive(Debug)]
pub struct RawArguments;
struct Structured;
struct Operation;

impl<A: DeserializeOwned> ArgumentModel<A> for TypedArguments {
    fn bind(raw: &JsonObject, limits: &BindLimits) -> Option<A> {
        from_value(&JsonValue::Object(raw.clone()), limits).ok()
    }
}

impl ArgumentModel<JsonObject> for RawArguments {
    fn bind(raw: &JsonObject, _limits: &BindLimits) -> Option<JsonObject> {
        Some(raw.clone())
    }
}

impl<R: Serialize> ResultModel<R> for Structured {
    fn finish(value: R) -> Result<Invocation, InvokeFailure> {
        to_value(&value)
            .map(Invocation::Structured)
            .map_err(|_| InvokeFailure::Handler)
    }
}

impl ResultModel<OperationResult> for Operation {
    fn finish(value: OperationResult) -> Result<Invocation, InvokeFailure> {
        Ok(Invocation::Operation(value))
    }
}

/// The handler's argument, output and error types plus the two models, as one marker.
type Models<A, T, E, AM, RM> = PhantomData<fn() -> (A, T, E, AM, RM)>;

struct Invoker<A, T, E, H, AM, RM> {
    handler: H,
    _models: Models<A, T, E, AM, RM>,
}

impl<A, T, E, H, AM, RM> Invoke for Invoker<A, T, E, H, AM, RM>
where
    A: Send + 'static,
    T: 'static,
    E: 'static,
    H: for<'a> Handler<'a, ToolArguments<A>, T, E>,
    AM: ArgumentModel<A>,
    RM: ResultModel<T>,
{
    fn invoke<'a>(
        &'a self,
        context: &'a RequestContext,
        raw: JsonObject,
        features: &'a InvocationFeatures,
        limits: &BindLimits,
    ) -> BoxFuture<'a, Result<Invocation, InvokeFailure>> {
        let Some(converted) = AM::bind(&raw, limits) else {
            return Box::pin(std::future::ready(Err(InvokeFailure::InvalidArguments)));
        };
        let future = self
            .handler
            .call(context, ToolArguments { converted, raw }, features);
        Box::pin(async move {
            match future.await {
                Ok(value) => RM::finish(value),
                Err(_) => Err(InvokeFailure::Handler),
            }
        })
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
    pub(crate) title: Option<Arc<str>>,
    pub(crate) description: Option<Arc<str>>,
    pub(crate) annotations: Option<ToolAnnotations>,
    pub(crate) icons: Vec<Icon>,
    pub(crate) meta: Option<JsonObject>,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) text_mirror: bool,
    pub(crate) required_capabilities: Vec<ClientCapability>,
    /// The endpoint rate limiter this tool's calls are charged to, by name.
    pub(crate) rate_limiter: Option<Arc<str>>,
    /// Whether the handler may (or must) answer with a task.
    pub(crate) task_support: TaskSupport,
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
    /// serves (checked when the registration is built).
    pub fn with_name(
        name: impl Into<Arc<str>>,
        revisions: impl Into<ProtocolVersions>,
    ) -> ToolModelStage {
        ToolModelStage {
            name: name.into(),
            revisions: revisions.into(),
        }
    }

    /// The tool name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The endpoint rate limiter, by name, this tool's calls are charged to (`None`: the
    /// endpoint's tool limiter).
    pub fn rate_limiter_name(&self) -> Option<&str> {
        self.inner.rate_limiter.as_deref()
    }

    /// The revisions the tool serves.
    pub fn revisions(&self) -> ProtocolVersions {
        self.inner.revisions
    }

    /// The published input schema document.
    pub fn input_schema(&self) -> &JsonValue {
        self.inner.input.document()
    }

    /// The published output schema document, for typed complete tools.
    pub fn output_schema(&self) -> Option<&JsonValue> {
        self.inner.output.as_ref().map(CompiledSchema::document)
    }

    /// The tool's descriptor as `tools/list` publishes it on `revision`.
    pub(crate) fn descriptor(&self, revision: ProtocolVersion) -> JsonValue {
        let t = &self.inner;
        let mut b = JsonObject::builder().insert("name", &*t.name);
        if let Some(title) = &t.title {
            b.push("title", &**title);
        }
        if let Some(d) = &t.description {
            b.push("description", &**d);
        }
        b.push("inputSchema", t.input.document().clone());
        if let Some(o) = &t.output {
            b.push("outputSchema", o.document().clone());
        }
        if let Some(a) = &t.annotations {
            b.push("annotations", a.render());
        }
        if !t.icons.is_empty() && revision != ProtocolVersion::V2025_06_18 {
            b.push("icons", render_icons(&t.icons));
        }
        if let Some(m) = &t.meta {
            b.push("_meta", m.clone());
        }
        b.build().into()
    }
}

/// The first stage: choose the argument and result model.
#[derive(Debug)]
#[must_use = "a tool needs an argument model and a handler"]
pub struct ToolModelStage {
    name: Arc<str>,
    revisions: ProtocolVersions,
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
            _types: PhantomData,
        }
    }

    /// The raw validated JSON object as arguments, under the fixed `{"type":"object"}` schema.
    pub fn json_object_arguments(self) -> AdvancedStage<JsonObject, RawArguments> {
        let input = raw_object_schema();
        AdvancedStage {
            head: self,
            input,
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
        let invoker: Box<dyn Invoke> =
            Box::new(Invoker::<A, R, E, H, TypedArguments, Structured> {
                handler,
                _models: PhantomData,
            });
        let (input, output) = match self.schemas {
            Ok((i, o)) => (Ok(i), Some(o)),
            Err(e) => (Err(e), None),
        };
        ToolBuilder::new(self.head, input, output, invoker)
    }
}

/// The advanced stage (typed or raw arguments, [`OperationResult`] result): install the
/// handler.
#[must_use = "a tool needs a handler"]
pub struct AdvancedStage<A, M> {
    head: ToolModelStage,
    input: Result<CompiledSchema, BuildError>,
    _types: PhantomData<fn() -> (A, M)>,
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
        let invoker: Box<dyn Invoke> =
            Box::new(Invoker::<A, OperationResult, E, H, M, Operation> {
                handler,
                _models: PhantomData,
            });
        ToolBuilder::new(self.head, self.input, None, invoker)
    }
}

/// The last stage: metadata, then [`build`](Self::build).
#[must_use = "call build() to finish the registration"]
pub struct ToolBuilder {
    name: Arc<str>,
    revisions: ProtocolVersions,
    input: Result<CompiledSchema, BuildError>,
    output: Option<CompiledSchema>,
    invoker: Box<dyn Invoke>,
    title: Option<Arc<str>>,
    description: Option<Arc<str>>,
    annotations: Option<ToolAnnotations>,
    icons: Vec<Icon>,
    meta: Option<Result<JsonObject, ContentError>>,
    text_mirror: bool,
    required_capabilities: Vec<ClientCapability>,
    rate_limiter: Option<Arc<str>>,
    task_support: TaskSupport,
}

impl ToolBuilder {
    fn new(
        head: ToolModelStage,
        input: Result<CompiledSchema, BuildError>,
        output: Option<CompiledSchema>,
        invoker: Box<dyn Invoke>,
    ) -> Self {
        Self {
            name: head.name,
            revisions: head.revisions,
            input,
            output,
            invoker,
            title: None,
            description: None,
            annotations: None,
            icons: Vec::new(),
            meta: None,
            text_mirror: true,
            required_capabilities: Vec::new(),
            rate_limiter: None,
            task_support: TaskSupport::Forbidden,
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

    /// Charges this tool's calls to the endpoint's rate limiter registered under `name`
    /// ([`EndpointBuilder::add_rate_limiter`](crate::endpoint::EndpointBuilder::add_rate_limiter)) instead
    /// of the endpoint's tool limiter. An endpoint without a limiter of that name refuses to
    /// build.
    pub fn rate_limiter(mut self, name: impl Into<Arc<str>>) -> Self {
        self.rate_limiter = Some(name.into());
        self
    }

    /// Whether the handler may answer with a task (the tasks extension, 2026-07-28). With
    /// [`TaskSupport::Optional`](crate::tool::TaskSupport::Optional) the handler finds a
    /// [`TaskCreation`](crate::task::TaskCreation) among its features when the client declared the
    /// extension; with [`TaskSupport::Required`](crate::tool::TaskSupport::Required) a call from a
    /// client that did not is refused (HTTP 400 / -32021) before the handler. Only advanced
    /// handlers can return a task, and a required-task tool may select only 2026-07-28
    /// ([`BuildErrorKind::InvalidTaskSupport`]); its endpoint needs a task store.
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// Finishes the registration.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::EmptyRevisions`], [`BuildErrorKind::InvalidToolName`], a schema error
    /// ([`BuildErrorKind::InputSchema`], [`BuildErrorKind::DerivedSchema`]),
    /// [`BuildErrorKind::MirroredHeaderOnLegacyRevision`],
    /// [`BuildErrorKind::LegacyOutputNotObject`], or [`BuildErrorKind::InvalidConfiguration`]
    /// for a `_meta` key that breaks the naming rules.
    pub fn build(self) -> Result<ToolRegistration, BuildError> {
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
        let legacy = self.revisions.contains(ProtocolVersion::V2025_06_18)
            || self.revisions.contains(ProtocolVersion::V2025_11_25);
        if legacy && !input.mirrored_headers().is_empty() {
            return Err(
                BuildError::new(BuildErrorKind::MirroredHeaderOnLegacyRevision)
                    .tool_name(&self.name)
                    .with_revisions(self.revisions),
            );
        }
        let output_is_object = self
            .output
            .as_ref()
            .is_none_or(|o| o.document().get("type").and_then(JsonValue::as_str) == Some("object"));
        if legacy && !output_is_object {
            return Err(BuildError::new(BuildErrorKind::LegacyOutputNotObject)
                .tool_name(&self.name)
                .with_revisions(self.revisions));
        }
        if self.task_support != TaskSupport::Forbidden
            && (self.output.is_some() || (self.task_support == TaskSupport::Required && legacy))
        {
            return fail(BuildErrorKind::InvalidTaskSupport);
        }
        let meta = match self.meta {
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
                title: self.title,
                description: self.description,
                annotations: self.annotations,
                icons: self.icons,
                meta,
                input,
                output: self.output,
                text_mirror: self.text_mirror,
                required_capabilities: self.required_capabilities,
                rate_limiter: self.rate_limiter,
                task_support: self.task_support,
                invoker: self.invoker,
            }),
        })
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
