//! Build-time errors: what a registration, endpoint or content value refused, and where.
//!
//! These describe the application's own declarations (tool names, paths, schema locations), so
//! they may name them. They never carry request data: request failures are fixed protocol
//! answers (see the `fault` module), not errors returned to application code.

use std::fmt;

use tollgate_schema::CompileError;

use crate::version::ProtocolVersions;

/// What a [`BuildError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildErrorKind {
    /// A tool was registered with no protocol revision.
    EmptyRevisions,
    /// A tool name is empty, longer than 128 characters, or uses characters outside
    /// `A-Z a-z 0-9 _ - .`.
    InvalidToolName,
    /// The authored input schema does not compile under Profile 1 (see
    /// [`BuildError::schema_error`]).
    InputSchema,
    /// The authored output schema does not compile under Profile 1 with an object root, or
    /// declares `x-mcp-header` (see [`BuildError::schema_error`] for a compile error).
    OutputSchema,
    /// A schema derived from a Rust type does not compile under Profile 1.
    DerivedSchema,
    /// A derived output schema is not object-shaped although the tool selects a 2025 revision.
    LegacyOutputNotObject,
    /// A tool with `x-mcp-header` properties selects a 2025 revision.
    MirroredHeaderOnLegacyRevision,
    /// A tool whose handler keeps request state selects a 2025 revision (only 2026-07-28 has
    /// multi-round-trip requests; on the 2025 revisions a tool asks for input inside the call,
    /// through `ClientRequests`).
    RequestStateOnLegacyRevision,
    /// A typed-complete tool declares input requests or a request-state mode (it always
    /// completes in one invocation).
    InvalidInputDeclarations,
    /// A tool selects a revision its endpoint does not serve.
    RevisionOutsideEndpoint,
    /// Two tools on one endpoint share a name.
    DuplicateToolName,
    /// The endpoint path is not an exact, absolute, non-root path of visible ASCII.
    InvalidEndpointPath,
    /// The endpoint selects no revision.
    EmptyEndpointRevisions,
    /// The endpoint selects a revision this version of Tollgate does not serve yet.
    RevisionNotImplemented,
    /// A configured value is outside its permitted range (page size, server name, ...).
    InvalidConfiguration,
    /// An endpoint's output limit is above the fixed 4 MiB, or a string limit above the fixed
    /// 1,048,576 UTF-16 units (lowering them is allowed).
    LimitAboveCeiling,
    /// Two endpoints on one server share a path.
    DuplicateEndpointPath,
    /// A typed field accepts any JSON value (`serde_json::Value`, an empty schema): use
    /// `json_object_arguments()` or a concrete type.
    UnconstrainedType,
    /// A typed argument or output type is recursive without a base case: no finite value has
    /// it (`struct Endless { next: Box<Endless> }`). Recursion through `Option`, `Vec`, `Box`
    /// inside those, or a map is allowed.
    RecursiveType,
    /// A derived `oneOf` whose branches may overlap (an untagged or internally tagged enum that
    /// Profile 1 cannot express exactly).
    InexactOneOf,
    /// A typed output is a bare string, which would be ambiguous with text content.
    BareStringOutput,
    /// A prompt name breaks the tool-name syntax (1 to 128 of `A-Z a-z 0-9 _ - .`).
    InvalidPromptName,
    /// A prompt argument name is empty, longer than 1,024 bytes, or declared twice.
    InvalidPromptArgument,
    /// Two prompts on one endpoint share a name.
    DuplicatePromptName,
    /// A resource URI is not absolute or too long, its name is empty, or its media type is
    /// malformed.
    InvalidResource,
    /// A URI template is not RFC 6570 Level 1, has two expressions side by side or a repeated
    /// variable, or breaks a template limit.
    InvalidUriTemplate,
    /// Two resources on one endpoint share a URI, or two templates share a template.
    DuplicateResource,
    /// An endpoint registers more than 256 URI templates.
    TooManyTemplates,
    /// A tool names a rate limiter its endpoint does not register.
    UnknownRateLimiter,
    /// A tool that requires tasks selects a 2025 revision (where it could never run), or a
    /// typed complete tool (which always completes inline) declares task support.
    InvalidTaskSupport,
    /// A tool supports tasks but its endpoint has no task store, or the endpoint's task
    /// lifetimes are out of range.
    TasksNotConfigured,
    /// A CORS policy names no origin, an origin that is not an exact `http` or `https` origin,
    /// or a request header that is not a header name.
    InvalidCorsPolicy,
    /// A skill's path, name, file path or media type breaks the rules, it has no `SKILL.md`, or
    /// its endpoint does not serve 2026-07-28 (see [`BuildError::detail`]).
    InvalidSkill,
    /// A `SKILL.md` is not UTF-8, has no frontmatter, or its frontmatter is not the YAML
    /// Tollgate reads or breaks the Agent Skills rules ([`BuildError::location`] names the field).
    SkillFrontmatter,
    /// A skill is past one of its limits: 512 files, 16 MiB, 512 directories, depth 16, 64 KiB
    /// of frontmatter, or a file or listing that cannot be answered within the output limits.
    SkillLimit,
    /// A skill directory on disk cannot be read, or holds a symbolic link leading out of it or
    /// to a directory, a special file, or a name that is not UTF-8 ([`BuildError::location`] is
    /// the path concerned).
    InvalidSkillDirectory,
    /// An authorization setting is invalid (see [`BuildError::detail`]): a protected resource's
    /// identifier, authorization servers, scopes or name; a bearer-token validator's issuer,
    /// algorithms, leeway or claims; or an operation requiring scopes on an endpoint without a
    /// protected resource.
    InvalidAuthorization,
    /// A change to a live catalog replaces or removes a tool, prompt, resource, template or
    /// skill the catalog does not hold.
    UnknownRegistration,
    /// An MCP Apps view is refused (see [`BuildError::detail`]): its URI is not `ui://` and a
    /// name or is too long, a CSP entry is neither an origin nor the wildcard-subdomain form, a
    /// CSP list is too long, its `domain` is malformed, its read does not fit the output limits,
    /// or its endpoint serves no revision that carries views (2025-06-18 on); or a tool's view
    /// URI is malformed.
    InvalidAppView,
    /// A tool names an MCP Apps view its endpoint (or live catalog) does not register.
    UnknownAppView,
}

impl BuildErrorKind {
    const fn description(self) -> &'static str {
        match self {
            Self::EmptyRevisions => "a tool must select at least one protocol revision",
            Self::InvalidToolName => "invalid tool name",
            Self::InvalidPromptName => "invalid prompt name",
            Self::InvalidPromptArgument => "prompt argument names must be nonempty and unique",
            Self::DuplicatePromptName => "duplicate prompt name on one endpoint",
            Self::InvalidResource => "invalid resource registration",
            Self::InvalidUriTemplate => "URI template outside RFC 6570 Level 1 or its limits",
            Self::DuplicateResource => "duplicate resource URI or template on one endpoint",
            Self::TooManyTemplates => "more than 256 URI templates on one endpoint",
            Self::UnknownRateLimiter => {
                "a tool names a rate limiter its endpoint does not register"
            }
            Self::InvalidTaskSupport => {
                "task support needs an advanced handler, and required tasks 2026-07-28 or 2025-11-25"
            }
            Self::TasksNotConfigured => {
                "a tool supports tasks but the endpoint has no valid task store and lifetimes"
            }
            Self::InvalidAuthorization => "invalid authorization configuration",
            Self::UnknownRegistration => {
                "a catalog change replaces or removes a registration the catalog does not hold"
            }
            Self::InvalidCorsPolicy => {
                "a CORS policy needs exact http(s) origins (scheme, host, optional port)"
            }
            Self::InputSchema => "input schema does not compile under Tool Schema Profile 1",
            Self::OutputSchema => {
                "output schema does not compile under Tool Schema Profile 1 as an object schema"
            }
            Self::DerivedSchema => "derived schema does not compile under Tool Schema Profile 1",
            Self::LegacyOutputNotObject => {
                "output schema must be object-shaped for an initialize revision (2025-11-25 to \
                 2024-11-05): make the output an object, or select only 2026-07-28"
            }
            Self::MirroredHeaderOnLegacyRevision => {
                "a tool with x-mcp-header properties may select only 2026-07-28: remove the \
                 other revisions from its revisions (or leave them to the default)"
            }
            Self::RequestStateOnLegacyRevision => {
                "a tool with request state may select only 2026-07-28: remove the other \
                 revisions from its revisions (or leave them to the default)"
            }
            Self::InvalidInputDeclarations => {
                "input declarations and request state need an advanced or task-required handler"
            }
            Self::RevisionOutsideEndpoint => "tool selects a revision its endpoint does not serve",
            Self::DuplicateToolName => "duplicate tool name on one endpoint",
            Self::InvalidEndpointPath => "endpoint path must be exact, absolute and not the root",
            Self::EmptyEndpointRevisions => "an endpoint must select at least one revision",
            Self::RevisionNotImplemented => "revision not served by this version of Tollgate",
            Self::InvalidConfiguration => "configuration value out of range",
            Self::LimitAboveCeiling => {
                "limit above its fixed ceiling (4 MiB output, 1,048,576 string units)"
            }
            Self::DuplicateEndpointPath => "duplicate endpoint path on one server",
            Self::UnconstrainedType => "a typed field accepts any JSON value",
            Self::RecursiveType => "a recursive type without a base case has no finite value",
            Self::InexactOneOf => "an enum whose variants may overlap cannot be expressed exactly",
            Self::BareStringOutput => "a typed output cannot be a bare string",
            Self::InvalidSkill => "invalid skill registration",
            Self::SkillFrontmatter => "invalid SKILL.md frontmatter",
            Self::SkillLimit => "skill over a limit",
            Self::InvalidSkillDirectory => "skill directory refused",
            Self::InvalidAppView => "invalid MCP Apps view",
            Self::UnknownAppView => "a tool names an MCP Apps view that is not registered",
        }
    }
}

/// A registration, endpoint or server declaration that Tollgate refused.
///
/// # Examples
///
/// ```
/// use tollgate::{BuildErrorKind, ProtocolVersion, ToolRegistration};
/// use tollgate_json::{from_str, JsonLimits};
///
/// let schema = from_str(r#"{"type":"object","properties":{"q":{"pattern":"a+"}}}"#,
///     &JsonLimits::default())?;
/// let err = ToolRegistration::with_name("search", [ProtocolVersion::V2026_07_28])
///     .input_schema(&schema)
///     .err()
///     .expect("pattern is outside Profile 1");
/// assert_eq!(err.kind(), BuildErrorKind::InputSchema);
/// assert_eq!(err.tool(), Some("search"));
/// assert_eq!(err.schema_error().map(|e| e.location()), Some("/properties/q"));
/// # Ok::<(), tollgate_json::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct BuildError(Box<BuildErrorInner>);

#[derive(Clone, Debug)]
struct BuildErrorInner {
    kind: BuildErrorKind,
    tool: Option<String>,
    prompt: Option<String>,
    resource: Option<String>,
    path: Option<String>,
    revisions: ProtocolVersions,
    type_name: Option<&'static str>,
    schema: Option<CompileError>,
    location: Option<String>,
    detail: Option<&'static str>,
}

impl BuildError {
    pub(crate) fn new(kind: BuildErrorKind) -> Self {
        Self(Box::new(BuildErrorInner {
            kind,
            tool: None,
            prompt: None,
            resource: None,
            path: None,
            revisions: ProtocolVersions::empty(),
            type_name: None,
            schema: None,
            location: None,
            detail: None,
        }))
    }

    pub(crate) fn tool_name(mut self, tool: &str) -> Self {
        self.0.tool = Some(tool.to_owned());
        self
    }

    pub(crate) fn prompt_name(mut self, prompt: &str) -> Self {
        self.0.prompt = Some(prompt.to_owned());
        self
    }

    pub(crate) fn resource(mut self, uri: &str) -> Self {
        // A URI or template can be long; the error keeps enough to recognise it.
        let kept: String = uri.chars().take(256).collect();
        self.0.resource = Some(kept);
        self
    }

    pub(crate) fn at_path(mut self, path: &str) -> Self {
        self.0.path = Some(path.to_owned());
        self
    }

    pub(crate) fn with_revisions(mut self, revisions: ProtocolVersions) -> Self {
        self.0.revisions = revisions;
        self
    }

    pub(crate) fn for_type(mut self, type_name: &'static str) -> Self {
        self.0.type_name = Some(type_name);
        self
    }

    pub(crate) fn at_location(mut self, location: String) -> Self {
        self.0.location = Some(location);
        self
    }

    pub(crate) fn with_detail(mut self, detail: &'static str) -> Self {
        self.0.detail = Some(detail);
        self
    }

    pub(crate) fn with_schema_error(mut self, error: CompileError) -> Self {
        self.0.schema = Some(error);
        self
    }

    /// What was refused.
    pub fn kind(&self) -> BuildErrorKind {
        self.0.kind
    }

    /// The tool concerned, when one is.
    pub fn tool(&self) -> Option<&str> {
        self.0.tool.as_deref()
    }

    /// The prompt concerned, when one is.
    pub fn prompt(&self) -> Option<&str> {
        self.0.prompt.as_deref()
    }

    /// The resource URI or URI template concerned (its first 256 characters), when one is.
    pub fn resource_uri(&self) -> Option<&str> {
        self.0.resource.as_deref()
    }

    /// The endpoint path concerned, when one is.
    pub fn path(&self) -> Option<&str> {
        self.0.path.as_deref()
    }

    /// The revisions concerned (empty when none are).
    pub fn revisions(&self) -> ProtocolVersions {
        self.0.revisions
    }

    /// The Rust type whose derived schema was refused, when one was.
    pub fn type_name(&self) -> Option<&'static str> {
        self.0.type_name
    }

    /// Where, within what was refused: the JSON Pointer of a schema's or a skill frontmatter's
    /// part, or a skill file's path relative to the skill.
    pub fn location(&self) -> Option<&str> {
        self.0
            .location
            .as_deref()
            .or_else(|| self.0.schema.as_ref().map(CompileError::location))
    }

    /// What exactly was refused, in a fixed text, when the kind has several causes (a skill's
    /// rules and limits).
    pub fn detail(&self) -> Option<&'static str> {
        self.0.detail
    }

    /// The schema compiler's error (kind, JSON Pointer location and keyword), when a schema was
    /// refused.
    pub fn schema_error(&self) -> Option<&CompileError> {
        self.0.schema.as_ref()
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.kind.description())?;
        if let Some(detail) = self.0.detail {
            write!(f, ": {detail}")?;
        }
        if let Some(tool) = &self.0.tool {
            write!(f, "; tool `{tool}`")?;
        }
        if let Some(prompt) = &self.0.prompt {
            write!(f, "; prompt `{prompt}`")?;
        }
        if let Some(resource) = &self.0.resource {
            write!(f, "; resource `{resource}`")?;
        }
        if let Some(type_name) = self.0.type_name {
            write!(f, "; type `{type_name}`")?;
        }
        if let Some(path) = &self.0.path {
            write!(f, "; endpoint `{path}`")?;
        }
        if !self.0.revisions.is_empty() {
            write!(f, "; revisions [{}]", self.0.revisions)?;
        }
        if let Some(location) = &self.0.location {
            write!(f, "; at `{location}`")?;
        }
        if let Some(schema) = &self.0.schema {
            write!(f, "; {schema}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .schema
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// What a [`ContentError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentErrorKind {
    /// Not an ASCII `type/subtype` media type with well-formed, unique parameters.
    InvalidMediaType,
    /// Not an absolute URI (a scheme followed by `:`), or contains spaces or controls.
    InvalidUri,
    /// An icon size is neither `WxH` (ASCII digits, lowercase `x`) nor exactly `any`.
    InvalidIconSize,
    /// A priority outside 0 to 1, or not finite.
    InvalidPriority,
    /// Not an RFC 3339 date-time.
    InvalidTimestamp,
    /// A `_meta` key that breaks the protocol's key naming rules.
    InvalidMetaKey,
    /// A sampling input request without a non-empty `messages` array and a positive
    /// `maxTokens`.
    InvalidInputRequest,
}

/// A content value that Tollgate refused at construction. It names the rule, never the value.
///
/// # Examples
///
/// ```
/// use tollgate::{content::{ContentErrorKind, ImageContent}};
///
/// let err = ImageContent::new(b"\x89PNG", "image").unwrap_err();
/// assert_eq!(err.kind(), ContentErrorKind::InvalidMediaType);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContentError {
    kind: ContentErrorKind,
}

impl ContentError {
    pub(crate) const fn new(kind: ContentErrorKind) -> Self {
        Self { kind }
    }

    /// Which rule was broken.
    pub fn kind(&self) -> ContentErrorKind {
        self.kind
    }
}

impl fmt::Display for ContentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            ContentErrorKind::InvalidMediaType => "invalid media type",
            ContentErrorKind::InvalidUri => "not an absolute URI",
            ContentErrorKind::InvalidIconSize => "icon size must be WxH or any",
            ContentErrorKind::InvalidPriority => "priority must be between 0 and 1",
            ContentErrorKind::InvalidTimestamp => "not an RFC 3339 date-time",
            ContentErrorKind::InvalidMetaKey => "invalid _meta key",
            ContentErrorKind::InvalidInputRequest => {
                "sampling input request needs messages and a positive maxTokens"
            }
        })
    }
}

impl std::error::Error for ContentError {}
