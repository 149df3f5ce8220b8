//! One upstream tool made a Tollgate tool, or the reason it cannot be: its name (prefixed) and
//! text through the registration's own constructors, its input and output schemas compiled as
//! Tool Schema Profile 1, and a handler that forwards validated arguments and reads the
//! upstream's result back through the content constructors. Knows nothing of configuration
//! files or of how the upstream is reached (it holds a connected client).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tollgate::context::{ClientRequests, Handler};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::task::TaskCreation;
use tollgate::tool::{
    CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement, OperationResult,
    RequestStateMode, TaskSupport, ToolAnnotations,
};
use tollgate::{
    BuildErrorKind, InvocationFeatures, ProtocolVersion, RequestContext, ToolArguments,
    ToolRegistration,
};
use tollgate_schema::CompiledSchema;

use crate::error::ForwardError;
use crate::error::upstream_code::MISSING_CAPABILITY;
use crate::fallback::{Fallback, Unsupported};
use crate::link::Link;
use crate::naming::Naming;
use crate::relay::{InputRelay, asks_input, input_required_of, missing_capabilities_of, relayed};

/// The longest upstream text a refusal repeats (a tool name or a schema keyword), in
/// characters; longer text is cut.
const MAX_REPEATED_CHARS: usize = 128;

/// Why an upstream tool is not served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalReason {
    /// The tools/list entry is not an object with a string `name` and an object
    /// `inputSchema`, or its `title`, `description` or `annotations` have the wrong types.
    Malformed,
    /// The served name or URI (after the prefix) is not valid (a tool or prompt name, a
    /// resource URI or URI template), or another field fails its registration's check.
    InvalidName,
    /// The input schema does not compile under Tool Schema Profile 1.
    InputSchema,
    /// The output schema does not compile under Tool Schema Profile 1 as an object schema.
    OutputSchema,
    /// Another upstream's tool, or another tool of the same upstream, has the served name (a
    /// skill: the same served root).
    NameClash,
    /// A skill fails the skill registration's checks (its name, paths, frontmatter or the
    /// extension's limits), as an application's skill would; a frontmatter field is named by
    /// [`Refusal::pointer`].
    SkillCheck,
    /// A skill file could not be read from the upstream, or its bytes differ from the size or
    /// `sha256:` digest the skill's entry publishes.
    SkillContent,
}

impl RefusalReason {
    const fn description(self) -> &'static str {
        match self {
            Self::Malformed => "the tools/list entry is malformed",
            Self::InvalidName => {
                "the served name or URI, or another field, fails the registration's check"
            }
            Self::InputSchema => "the input schema does not compile under Tool Schema Profile 1",
            Self::OutputSchema => {
                "the output schema does not compile under Tool Schema Profile 1 as an object schema"
            }
            Self::NameClash => "another tool is served under the same name",
            Self::SkillCheck => "the skill fails the skill registration's checks",
            Self::SkillContent => {
                "a skill file cannot be read, or differs from the size or digest of its entry"
            }
        }
    }
}

/// What kind of registration a refusal concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// A tool (by name).
    Tool,
    /// A prompt (by name).
    Prompt,
    /// A resource (by URI).
    Resource,
    /// A resource template (by URI template).
    Template,
    /// A skill (by the URI of its `SKILL.md`).
    Skill,
}

impl Kind {
    const fn word(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Prompt => "prompt",
            Self::Resource => "resource",
            Self::Template => "resource template",
            Self::Skill => "skill",
        }
    }
}

/// An upstream tool, prompt, resource, template or skill left out of the gateway's catalog, and why:
/// with the schema compiler's JSON Pointer and keyword when a schema is the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    upstream: String,
    kind: Kind,
    name: String,
    reason: RefusalReason,
    pointer: Option<String>,
    keyword: Option<String>,
}

impl Refusal {
    pub(crate) fn new(upstream: &str, tool: &str, reason: RefusalReason) -> Self {
        Self::of(Kind::Tool, upstream, tool, reason)
    }

    pub(crate) fn of(kind: Kind, upstream: &str, name: &str, reason: RefusalReason) -> Self {
        Self {
            upstream: upstream.to_owned(),
            kind,
            name: cut(name),
            reason,
            pointer: None,
            keyword: None,
        }
    }

    /// The refusal with `pointer` (a JSON Pointer into a skill's frontmatter) as its place.
    pub(crate) fn at(mut self, pointer: Option<String>) -> Self {
        self.pointer = pointer.map(|p| cut(&p));
        self
    }

    /// The upstream's name.
    pub fn upstream(&self) -> &str {
        &self.upstream
    }

    /// What kind of registration it concerns.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Its name (a tool's or prompt's) or URI (a resource's or template's, a skill's
    /// `SKILL.md`) as the upstream lists it (its first 128 characters).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Why it is left out.
    pub fn reason(&self) -> RefusalReason {
        self.reason
    }

    /// Where in the schema (a JSON Pointer from the schema's root), when a schema is the reason;
    /// the frontmatter field (a JSON Pointer such as `/name`), when a skill's frontmatter is.
    pub fn pointer(&self) -> Option<&str> {
        self.pointer.as_deref()
    }

    /// The schema keyword refused, when the compiler named one (its first 128 characters).
    pub fn keyword(&self) -> Option<&str> {
        self.keyword.as_deref()
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} {:?} left out: {}",
            self.upstream,
            self.kind.word(),
            self.name,
            self.reason.description()
        )?;
        if let Some(pointer) = &self.pointer {
            write!(f, " at {pointer:?}")?;
        }
        if let Some(keyword) = &self.keyword {
            write!(f, " (keyword {keyword:?})")?;
        }
        Ok(())
    }
}

fn cut(text: &str) -> String {
    text.chars().take(MAX_REPEATED_CHARS).collect()
}

/// What the import of one tool needs: the upstream's client and name, its prefix and call
/// bound, and the revisions the gateway serves.
pub(crate) struct Source<'a> {
    pub(crate) upstream: &'a str,
    pub(crate) link: &'a Arc<Link>,
    pub(crate) naming: &'a Naming,
    pub(crate) call_timeout: Duration,
    pub(crate) revisions: &'a [ProtocolVersion],
    pub(crate) profile1_only: bool,
    /// Whether an upstream task may become the gateway's own (a 2026-07-28 upstream, a
    /// gateway serving 2026-07-28).
    pub(crate) tasks: bool,
}

/// The tool `entry` of `tools/list` made a registration, or the reason it cannot be.
pub(crate) fn import_tool(
    source: &Source<'_>,
    entry: &JsonValue,
) -> Result<ToolRegistration, Refusal> {
    let listed = entry.get("name").and_then(JsonValue::as_str);
    let malformed = || {
        Refusal::new(
            source.upstream,
            listed.unwrap_or(""),
            RefusalReason::Malformed,
        )
    };
    let (Some(name), Some(input)) = (listed, entry.get("inputSchema")) else {
        return Err(malformed());
    };
    let refused = |reason, error: &tollgate::BuildError| {
        let mut refusal = Refusal::new(source.upstream, name, reason);
        if let Some(schema) = error.schema_error() {
            refusal.pointer = Some(schema.location().to_owned());
            refusal.keyword = schema.keyword().map(cut);
        }
        refusal
    };
    let served = source.naming.name(name);
    // A tool mirroring arguments into headers exists on 2026-07-28 only.
    let mirrors = mirrors_headers(input);
    let revisions: tollgate::endpoint::ProtocolVersions = source
        .revisions
        .iter()
        .copied()
        .filter(|r| !mirrors || *r == ProtocolVersion::V2026_07_28)
        .collect();
    let keeps_state = revisions.iter().all(|r| r == ProtocolVersion::V2026_07_28);
    let head = ToolRegistration::with_name(served.as_str(), revisions);
    let mut stage = match CompiledSchema::compile_tool_input(input) {
        Ok(_) => head
            .input_schema(input)
            .map_err(|e| refused(RefusalReason::InputSchema, &e))?,
        Err(e) => {
            let refusal = schema_refused(source, name, RefusalReason::InputSchema, &e);
            if source.profile1_only {
                return Err(refusal);
            }
            let fallback = Fallback::compile(input).map_err(|u| unsupported(refusal, u))?;
            head.json_object_arguments()
                .foreign_input_schema(fallback)
                .map_err(|e| refused(RefusalReason::InputSchema, &e))?
        }
    };
    if let Some(output) = entry.get("outputSchema") {
        stage = match CompiledSchema::compile_tool_input(output) {
            Ok(_) => stage
                .output_schema(output)
                .map_err(|e| refused(RefusalReason::OutputSchema, &e))?,
            Err(e) => {
                let refusal = schema_refused(source, name, RefusalReason::OutputSchema, &e);
                if source.profile1_only {
                    return Err(refusal);
                }
                let fallback = Fallback::compile(output).map_err(|u| unsupported(refusal, u))?;
                stage
                    .foreign_output_schema(fallback)
                    .map_err(|e| refused(RefusalReason::OutputSchema, &e))?
            }
        };
    }
    let forward = Forward {
        link: Arc::clone(source.link),
        name: Arc::from(name),
        timeout: source.call_timeout,
        naming: source.naming.clone(),
        keeps_state,
    };
    let mut builder = stage.handler(forward);
    if let Some(title) = text(entry, "title").map_err(|()| malformed())? {
        builder = builder.title(title);
    }
    if let Some(description) = text(entry, "description").map_err(|()| malformed())? {
        builder = builder.description(description);
    }
    if let Some(annotations) = entry.get("annotations") {
        builder = builder.annotations(annotations_of(annotations).ok_or_else(malformed)?);
    }
    // An upstream tool may ask for input on any call (tools do not declare it): every kind is
    // declared conditional (the caller's capability checked when one is relayed). Only a tool
    // served on 2026-07-28 alone may keep state (the runtime's rule), so only there does the
    // upstream's state travel, sealed inside the gateway's.
    let kinds = [
        InputRequestKind::Elicitation,
        InputRequestKind::Sampling,
        InputRequestKind::Roots,
    ];
    builder = builder.input_request_declarations(
        kinds.map(|k| InputRequestDeclaration::new(k, InputRequirement::Conditional)),
    );
    if keeps_state {
        builder = builder.request_state_mode(RequestStateMode::FrameworkProtected);
    }
    // A 2026-07-28 tool does not say whether it creates tasks: any may, so the gateway offers
    // tasks on each (a caller declaring the extension may be given one).
    if source.tasks {
        builder = builder.task_support(TaskSupport::Optional);
    }
    builder.build().map_err(|e| {
        let reason = match e.kind() {
            BuildErrorKind::InvalidToolName => RefusalReason::InvalidName,
            _ => RefusalReason::Malformed,
        };
        refused(reason, &e)
    })
}

/// A refusal for a schema Profile 1 does not take, at the compiler's place.
fn schema_refused(
    source: &Source<'_>,
    name: &str,
    reason: RefusalReason,
    error: &tollgate_schema::CompileError,
) -> Refusal {
    let mut refusal = Refusal::new(source.upstream, name, reason);
    refusal.pointer = Some(error.location().to_owned());
    refusal.keyword = error.keyword().map(cut);
    refusal
}

/// A refusal for a schema the complete validator did not take either.
fn unsupported(mut refusal: Refusal, why: Unsupported) -> Refusal {
    // The validator's place when it names one deeper than the root; Profile 1's otherwise.
    if let Unsupported::Refused(pointer) = why
        && !pointer.is_empty()
    {
        refusal.pointer = Some(cut(&pointer));
        refusal.keyword = None;
    }
    refusal
}

/// Whether an input schema declares `x-mcp-header` anywhere (then the tool is 2026-07-28 only).
fn mirrors_headers(schema: &JsonValue) -> bool {
    match schema {
        JsonValue::Object(o) => o
            .iter()
            .any(|(k, v)| k.as_str() == "x-mcp-header" || mirrors_headers(v)),
        JsonValue::Array(a) => a.iter().any(mirrors_headers),
        _ => false,
    }
}

/// An optional string member: `Ok(None)` when absent, `Err` when not a string.
pub(crate) fn text(entry: &JsonValue, key: &str) -> Result<Option<String>, ()> {
    match entry.get(key) {
        None => Ok(None),
        Some(JsonValue::String(s)) => Ok(Some(s.as_str().to_owned())),
        Some(_) => Err(()),
    }
}

/// The tool annotations the protocol defines (`title` and the four hints); another member is
/// left out, a member of the wrong type refuses the tool.
fn annotations_of(value: &JsonValue) -> Option<ToolAnnotations> {
    let object = value.as_object()?;
    let mut annotations = ToolAnnotations::new();
    let flag = |key: &str| -> Option<Option<bool>> {
        match object.get(key) {
            None => Some(None),
            Some(v) => v.as_bool().map(Some),
        }
    };
    if let Some(title) = object.get("title") {
        annotations = annotations.title(title.as_str()?.to_owned());
    }
    if let Some(v) = flag("readOnlyHint")? {
        annotations = annotations.read_only_hint(v);
    }
    if let Some(v) = flag("destructiveHint")? {
        annotations = annotations.destructive_hint(v);
    }
    if let Some(v) = flag("idempotentHint")? {
        annotations = annotations.idempotent_hint(v);
    }
    if let Some(v) = flag("openWorldHint")? {
        annotations = annotations.open_world_hint(v);
    }
    Some(annotations)
}

/// Forwards one validated call to the upstream and reads its result back.
#[derive(Clone)]
struct Forward {
    link: Arc<Link>,
    name: Arc<str>,
    timeout: Duration,
    /// How the upstream's URIs are served (its results' content).
    naming: Naming,
    /// Whether the registration keeps request state (served on 2026-07-28 alone).
    keeps_state: bool,
}

impl<'a> Handler<'a, ToolArguments<JsonObject>, OperationResult, ForwardError> for Forward {
    type Future = Pin<Box<dyn Future<Output = Result<OperationResult, ForwardError>> + Send + 'a>>;

    fn call(
        &self,
        context: &'a RequestContext,
        arguments: ToolArguments<JsonObject>,
        features: &'a InvocationFeatures,
    ) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            this.forward(context, arguments.raw().clone(), features)
                .await
        })
    }
}

impl Forward {
    /// The call forwarded with the caller's progress, cancellation and (2026-07-28 on both
    /// sides) `input_required` relayed, and its result read back.
    async fn forward(
        self,
        context: &RequestContext,
        arguments: JsonObject,
        features: &InvocationFeatures,
    ) -> Result<OperationResult, ForwardError> {
        let client = self.link.client();
        let asks = features.find::<ClientRequests>().is_some();
        let mut relay = InputRelay::of(context, &client, self.keeps_state, asks);
        let creation = features.find::<TaskCreation>();
        if creation.is_some() {
            relay.declare_tasks();
        }
        let relays_input = relay.relays;
        let options = relay.call_options();
        let result = relayed(&self.link, self.timeout, features, options, |options| {
            client.call_tool_with(&self.name, arguments, options)
        })
        .await;
        let result = match result {
            // The upstream's refusal for capabilities the caller lacks, on any revision: a
            // 2025 caller is refused -32021 as a 2026-07-28 one is.
            Err(failed) if failed.code() == Some(MISSING_CAPABILITY) => {
                let missing = missing_capabilities_of(context.client_capabilities(), failed.data())
                    .ok_or(ForwardError::Upstream)?;
                return Ok(missing.into());
            }
            result => result,
        };
        let result = result?;
        if crate::tasks::is_task(&result) {
            // Only a caller given the means to have a task was offered one.
            return crate::tasks::adopt(&self.link, self.timeout, &self.naming, creation, &result)
                .await;
        }
        if relays_input && asks_input(&result) {
            let relayed =
                input_required_of(&result, self.keeps_state).ok_or(ForwardError::Malformed)?;
            return Ok(relayed.into());
        }
        let object = result.as_object().ok_or(ForwardError::Malformed)?;
        let complete = CompleteResult::from_wire(&self.naming.served_result(object))
            .ok_or(ForwardError::Malformed)?;
        Ok(complete.into())
    }
}
