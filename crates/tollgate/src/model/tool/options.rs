//! What a tool registration declares about itself beyond its schemas: advisory
//! [`ToolAnnotations`], its [`TaskSupport`], the kinds of input it may ask for
//! ([`InputRequestDeclaration`]) and how its handler keeps state across rounds
//! ([`RequestStateMode`]).

use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::context::ClientCapability;

/// How a tool takes part in tasks.
///
/// # Examples
///
/// ```
/// use tollgate::tool::TaskSupport;
///
/// assert_eq!(TaskSupport::default(), TaskSupport::Forbidden);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskSupport {
    /// The tool always completes inline; its handler never sees a [`TaskCreation`](crate::task::TaskCreation).
    #[default]
    Forbidden,
    /// The handler may create a task when the client declared the extension on the call
    /// (2026-07-28) or asked for one with the call's `task` member (2025-11-25)
    /// ([`TaskCreation`](crate::task::TaskCreation) is then among its features), and completes
    /// inline otherwise.
    Optional,
    /// The tool cannot complete inline: a call whose client did not declare the extension is
    /// refused with HTTP 400 / -32021 before the handler runs (2026-07-28); one without a
    /// `task` member is refused with -32601 (2025-11-25).
    Required,
}

impl TaskSupport {
    /// The `execution.taskSupport` value 2025-11-25 lists (absent for `Forbidden`).
    pub(crate) fn requested_name(self) -> Option<&'static str> {
        match self {
            Self::Forbidden => None,
            Self::Optional => Some("optional"),
            Self::Required => Some("required"),
        }
    }
}

/// Advisory hints about a tool's behaviour. Clients must not trust them from an untrusted
/// server; Tollgate publishes them as given.
///
/// # Examples
///
/// ```
/// use tollgate::tool::ToolAnnotations;
///
/// let hints = ToolAnnotations::new().read_only_hint(true).idempotent_hint(true);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolAnnotations {
    title: Option<Arc<str>>,
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub fn new() -> Self {
        Self::default()
    }
    /// A display title (the tool's own title takes precedence in clients).
    #[must_use]
    pub fn title(mut self, title: impl Into<Arc<str>>) -> Self {
        self.title = Some(title.into());
        self
    }
    /// The tool does not modify its environment.
    #[must_use]
    pub fn read_only_hint(mut self, value: bool) -> Self {
        self.read_only = Some(value);
        self
    }
    /// The tool may perform destructive updates.
    #[must_use]
    pub fn destructive_hint(mut self, value: bool) -> Self {
        self.destructive = Some(value);
        self
    }
    /// Repeated calls with the same arguments have no further effect.
    #[must_use]
    pub fn idempotent_hint(mut self, value: bool) -> Self {
        self.idempotent = Some(value);
        self
    }
    /// The tool interacts with an open world of external entities.
    #[must_use]
    pub fn open_world_hint(mut self, value: bool) -> Self {
        self.open_world = Some(value);
        self
    }

    /// The hints as a `Tool`'s `annotations`; `title` replaces the hints' own title (2025-03-26
    /// carries a tool's title there, having no `title` field on the tool).
    pub(crate) fn render(&self, title: Option<&Arc<str>>) -> JsonValue {
        let mut b = JsonObject::builder();
        if let Some(t) = title.or(self.title.as_ref()) {
            b.push("title", &**t);
        }
        for (name, value) in [
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        ] {
            if let Some(v) = value {
                b.push(name, v);
            }
        }
        b.build().into()
    }
}

/// How a tool's handler keeps state across the rounds of a multi-round-trip call (2026-07-28).
///
/// Tollgate always seals its own bookkeeping (the inputs asked for, the round, the expiry,
/// the binding to endpoint, tool, arguments and principal) into the `requestState` it issues
/// with an `input_required` result, whatever the mode; the mode says what the *handler* may
/// add.
///
/// # Examples
///
/// ```
/// use tollgate::tool::RequestStateMode;
///
/// assert_eq!(RequestStateMode::default(), RequestStateMode::None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestStateMode {
    /// The handler keeps no state: an `input_required` result carrying state of either kind
    /// is an application contract failure (the fixed -32603).
    #[default]
    None,
    /// The handler's JSON state ([`InputRequiredResult::state`](crate::context::InputRequiredResult::state))
    /// is sealed with Tollgate's (AES-256-GCM, at most 64 KiB on the wire) and handed back,
    /// verified, on the retry ([`RequestContext::request_state`](crate::RequestContext::request_state)).
    FrameworkProtected,
    /// The handler protects its own state: an opaque string
    /// ([`InputRequiredResult::application_state`](crate::context::InputRequiredResult::application_state),
    /// 1 to 65,536 bytes) sent as the `requestState` exactly as given, and handed back
    /// exactly as the client returns it
    /// ([`RequestContext::application_request_state`](crate::RequestContext::application_request_state)).
    /// Tollgate neither opens, expires nor counts it, so a retry's input responses are not
    /// bound to the inputs asked for ([`RequestContext::input_verified`](crate::RequestContext::input_verified)
    /// is `false`).
    ApplicationProtected,
}

/// Which kind of input a tool may ask the client for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputRequestKind {
    /// `elicitation/create` (the `elicitation` client capability).
    Elicitation,
    /// `sampling/createMessage` (the `sampling` client capability).
    Sampling,
    /// `roots/list` (the `roots` client capability).
    Roots,
}

impl InputRequestKind {
    /// The JSON-RPC method the client performs.
    pub fn method(self) -> &'static str {
        match self {
            Self::Elicitation => "elicitation/create",
            Self::Sampling => "sampling/createMessage",
            Self::Roots => "roots/list",
        }
    }

    /// The client capability it needs.
    pub fn capability(self) -> ClientCapability {
        match self {
            Self::Elicitation => ClientCapability::Elicitation,
            Self::Sampling => ClientCapability::Sampling,
            Self::Roots => ClientCapability::Roots,
        }
    }

    pub(crate) fn of_method(method: &str) -> Option<Self> {
        match method {
            "elicitation/create" => Some(Self::Elicitation),
            "sampling/createMessage" => Some(Self::Sampling),
            "roots/list" => Some(Self::Roots),
            _ => None,
        }
    }
}

/// When a declared kind of input is needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputRequirement {
    /// Every call needs it: a call whose client does not declare the capability is refused
    /// with HTTP 400 / -32021 before the handler runs (the tool stays listed).
    Required,
    /// Some calls need it: the capability is checked when the handler asks (HTTP 400 /
    /// -32021 then).
    Conditional,
}

/// One kind of input a tool's handler (or its task's work) may ask the client for. A handler
/// asking for a kind its tool did not declare fails with the fixed -32603 (a task's work gets
/// [`TaskInputError::InvalidRequests`](crate::task::TaskInputError::InvalidRequests)).
///
/// # Examples
///
/// ```
/// use tollgate::tool::{InputRequestDeclaration, InputRequestKind, InputRequirement};
///
/// let approval = InputRequestDeclaration::new(InputRequestKind::Elicitation, InputRequirement::Conditional);
/// assert_eq!(approval.kind().method(), "elicitation/create");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InputRequestDeclaration {
    kind: InputRequestKind,
    requirement: InputRequirement,
}

impl InputRequestDeclaration {
    /// A declaration of `kind`, needed as `requirement` says.
    pub fn new(kind: InputRequestKind, requirement: InputRequirement) -> Self {
        Self { kind, requirement }
    }

    /// The kind of input.
    pub fn kind(&self) -> InputRequestKind {
        self.kind
    }

    /// When it is needed.
    pub fn requirement(&self) -> InputRequirement {
        self.requirement
    }
}
