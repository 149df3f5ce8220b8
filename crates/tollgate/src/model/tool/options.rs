//! What a tool registration declares about itself beyond its schemas: advisory
//! [`ToolAnnotations`] and its [`TaskSupport`].

use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue};

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
    /// ([`TaskCreation`](crate::task::TaskCreation) is then among its features), and completes inline otherwise.
    Optional,
    /// The tool cannot complete inline: a call whose client did not declare the extension is
    /// refused with HTTP 400 / -32021 before the handler runs.
    Required,
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

    pub(crate) fn render(&self) -> JsonValue {
        let mut b = JsonObject::builder();
        if let Some(t) = &self.title {
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
