//! Prompts: named message templates with string arguments, the messages they return, and
//! completion of their argument values.
//!
//! Owns [`PromptRegistration`] (name, metadata, declared arguments, handler, optional completion
//! handler), the argument check that runs before any handler (missing, unknown and non-string
//! arguments are refused), [`PromptResult`] and [`Completion`]. Knows nothing of transports; the
//! catalog (`registry/catalog.rs`) and the method (`methods/prompts.rs`) render descriptors and
//! results per revision.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use tollgate_json::{JsonArray, JsonObject, JsonValue};

use crate::facts::error::{BuildError, BuildErrorKind};
use crate::model::content::icon::{Icon, render_icons};
use crate::model::content::{ContentBlock, Role};
use crate::model::handler::{Erased, Handler, Outcome, erase};
use crate::policy::authorization::Scopes;
use crate::version::{ProtocolVersion, ProtocolVersions};

pub(crate) mod completion;

use completion::{CompletionFn, InvokeCompletion, boxed_completion};

/// One argument a prompt declares. Prompt arguments are strings.
///
/// # Examples
///
/// ```
/// use tollgate::prompt::PromptArgument;
///
/// let language = PromptArgument::required("language").description("The code's language");
/// assert!(language.is_required());
/// assert_eq!(language.name(), "language");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptArgument {
    name: Arc<str>,
    title: Option<Arc<str>>,
    description: Option<Arc<str>>,
    required: bool,
}

impl PromptArgument {
    /// An argument every `prompts/get` must supply.
    pub fn required(name: impl Into<Arc<str>>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            required: true,
        }
    }

    /// An argument a `prompts/get` may leave out.
    pub fn optional(name: impl Into<Arc<str>>) -> Self {
        Self {
            required: false,
            ..Self::required(name)
        }
    }

    /// A human-readable title.
    #[must_use]
    pub fn title(mut self, title: impl Into<Arc<str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the argument means.
    #[must_use]
    pub fn description(mut self, description: impl Into<Arc<str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The argument's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether it must be supplied.
    pub fn is_required(&self) -> bool {
        self.required
    }

    fn render(&self, revision: ProtocolVersion) -> JsonValue {
        let mut b = JsonObject::builder().insert("name", &*self.name);
        if let Some(t) = self
            .title
            .as_ref()
            .filter(|_| revision.carries_titles_and_structure())
        {
            b.push("title", &**t);
        }
        if let Some(d) = &self.description {
            b.push("description", &**d);
        }
        if self.required {
            b.push("required", true);
        }
        b.build().into()
    }
}

/// The arguments of one `prompts/get`, checked against the prompt's declarations: every
/// required argument is present, none is unknown, and every value is a string.
///
/// # Examples
///
/// ```
/// use tollgate::prompt::PromptArguments;
///
/// let args = PromptArguments::for_test([("language", "rust")]);
/// assert_eq!(args.get("language"), Some("rust"));
/// assert_eq!(args.get("style"), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptArguments {
    values: Vec<(Arc<str>, Arc<str>)>,
}

impl PromptArguments {
    /// Arguments for unit-testing a handler.
    pub fn for_test<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self {
            values: pairs
                .into_iter()
                .map(|(k, v)| (Arc::from(k), Arc::from(v)))
                .collect(),
        }
    }

    /// The value supplied for `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| &**k == name)
            .map(|(_, v)| &**v)
    }

    /// Every supplied argument, in the order the prompt declares them.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (&**k, &**v))
    }

    /// Checks `raw` (the request's `arguments`, absent or an object) against `declared`.
    pub(crate) fn check(raw: Option<&JsonValue>, declared: &[PromptArgument]) -> Option<Self> {
        let object = match raw {
            None => None,
            Some(JsonValue::Object(o)) => Some(o),
            Some(_) => return None,
        };
        if let Some(object) = object {
            // Every supplied name must be declared, and every value a string.
            for (name, value) in object.iter() {
                if !declared.iter().any(|d| *d.name == *name.as_str()) || value.as_str().is_none() {
                    return None;
                }
            }
        }
        let mut values = Vec::with_capacity(declared.len());
        for d in declared {
            match object
                .and_then(|o| o.get(&d.name))
                .and_then(JsonValue::as_str)
            {
                Some(v) => values.push((d.name.clone(), Arc::from(v))),
                None if d.required => return None,
                None => {}
            }
        }
        Some(Self { values })
    }
}

/// One message of a prompt: a role and one content block.
///
/// # Examples
///
/// ```
/// use tollgate::{prompt::PromptMessage, content::{Role, TextContent}};
///
/// let m = PromptMessage::user(TextContent::new("Review this function."));
/// assert_eq!(m.role(), Role::User);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PromptMessage {
    role: Role,
    content: ContentBlock,
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<ContentBlock>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<ContentBlock>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }

    /// Who speaks.
    pub fn role(&self) -> Role {
        self.role
    }

    /// What is said.
    pub fn content(&self) -> &ContentBlock {
        &self.content
    }
}

/// What `prompts/get` returns: an optional description and the messages, in order.
///
/// # Examples
///
/// ```
/// use tollgate::{prompt::{PromptMessage, PromptResult}, content::TextContent};
///
/// let result = PromptResult::with_message(PromptMessage::user(TextContent::new("Hello")))
///     .add_message(PromptMessage::assistant(TextContent::new("Hi! What shall we review?")))
///     .description("A greeting");
/// assert_eq!(result.messages().len(), 2);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PromptResult {
    description: Option<Arc<str>>,
    messages: Vec<PromptMessage>,
}

impl PromptResult {
    /// A result starting with `message`.
    pub fn with_message(message: PromptMessage) -> Self {
        Self {
            description: None,
            messages: vec![message],
        }
    }

    /// Appends a message.
    #[must_use]
    pub fn add_message(mut self, message: PromptMessage) -> Self {
        self.messages.push(message);
        self
    }

    /// A description of the rendered prompt.
    #[must_use]
    pub fn description(mut self, description: impl Into<Arc<str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// A `GetPromptResult` read back from its wire form (messages with their role and content
    /// block, description), every part through the same constructors, and so the same checks,
    /// as an application's: `None` when any part fails one, or there is no message (a gateway
    /// relaying another server's prompt answers that with the fixed internal error).
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::json::{JsonLimits, from_str};
    /// use tollgate::prompt::PromptResult;
    ///
    /// let wire = from_str(r#"{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}"#, &JsonLimits::default()).unwrap();
    /// assert_eq!(PromptResult::from_wire(wire.as_object().unwrap()).unwrap().messages().len(), 1);
    /// let bad = from_str(r#"{"messages":[{"role":"system","content":{"type":"text","text":"hi"}}]}"#, &JsonLimits::default()).unwrap();
    /// assert!(PromptResult::from_wire(bad.as_object().unwrap()).is_none());
    /// ```
    pub fn from_wire(result: &tollgate_json::JsonObject) -> Option<Self> {
        let message = |m: &tollgate_json::JsonValue| -> Option<PromptMessage> {
            let m = m.as_object()?;
            let block = crate::model::content::parse::block_of(m.get("content")?.as_object()?)?;
            match m.get("role")?.as_str()? {
                "user" => Some(PromptMessage::user(block)),
                "assistant" => Some(PromptMessage::assistant(block)),
                _ => None,
            }
        };
        let mut messages = result.get("messages")?.as_array()?.iter();
        let mut prompt = Self::with_message(message(messages.next()?)?);
        for m in messages {
            prompt = prompt.add_message(message(m)?);
        }
        if let Some(d) = result.get("description") {
            prompt = prompt.description(d.as_str()?);
        }
        Some(prompt)
    }

    /// The messages.
    pub fn messages(&self) -> &[PromptMessage] {
        &self.messages
    }

    /// The description, if any.
    pub fn get_description(&self) -> Option<&str> {
        self.description.as_deref()
    }
}

/// What a prompt handler answers: the rendered prompt, or (2026-07-28) a request for input
/// first. Handlers return either type directly; both convert.
pub type PromptOutcome = Outcome<PromptResult>;

impl From<PromptResult> for PromptOutcome {
    fn from(result: PromptResult) -> Self {
        Self::Complete(result)
    }
}

/// An immutable prompt registration.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use tollgate::{
///     InvocationFeatures, ProtocolVersion, RequestContext,
///     prompt::{PromptArgument, PromptArguments, PromptMessage, PromptRegistration, PromptResult},
///     content::TextContent,
/// };
///
/// async fn review(
///     _: &RequestContext,
///     args: PromptArguments,
///     _: &InvocationFeatures,
/// ) -> Result<PromptResult, Infallible> {
///     let language = args.get("language").unwrap_or("code");
///     Ok(PromptResult::with_message(PromptMessage::user(TextContent::new(format!(
///         "Review this {language} for correctness first, style second."
///     )))))
/// }
///
/// let prompt = PromptRegistration::with_name("code_review", [ProtocolVersion::V2026_07_28])
///     .handler(review)
///     .description("Asks for a careful code review")
///     .add_argument(PromptArgument::required("language"))
///     .build()?;
/// assert_eq!(prompt.name(), "code_review");
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct PromptRegistration {
    pub(crate) inner: Arc<PromptInner>,
}

pub(crate) struct PromptInner {
    pub(crate) name: Arc<str>,
    title: Option<Arc<str>>,
    description: Option<Arc<str>>,
    icons: Vec<Icon>,
    pub(crate) arguments: Vec<PromptArgument>,
    revisions: ProtocolVersions,
    pub(crate) handler: Box<dyn Erased<PromptArguments, PromptOutcome>>,
    pub(crate) completion: Option<Box<dyn InvokeCompletion>>,
    /// The scopes a caller's token must grant (for `prompts/get` and its completions).
    pub(crate) required_scopes: Scopes,
}

impl fmt::Debug for PromptRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptRegistration")
            .field("name", &self.inner.name)
            .field("revisions", &self.inner.revisions)
            .finish_non_exhaustive()
    }
}

impl PromptRegistration {
    /// Starts a registration for the prompt `name`, served on `revisions`.
    pub fn with_name(
        name: impl Into<Arc<str>>,
        revisions: impl Into<ProtocolVersions>,
    ) -> PromptHandlerStage {
        PromptHandlerStage {
            name: name.into(),
            revisions: revisions.into(),
        }
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The name as shared by every copy of the registration (telemetry keeps it past the
    /// request without copying it).
    pub(crate) fn shared_name(&self) -> &Arc<str> {
        &self.inner.name
    }

    /// The revisions it is served on.
    pub fn revisions(&self) -> ProtocolVersions {
        self.inner.revisions
    }

    /// The declared arguments.
    pub fn arguments(&self) -> &[PromptArgument] {
        &self.inner.arguments
    }

    /// Whether it completes argument values.
    pub fn completes(&self) -> bool {
        self.inner.completion.is_some()
    }

    /// Its `prompts/list` entry on `revision`.
    pub(crate) fn descriptor(&self, revision: ProtocolVersion) -> JsonValue {
        let inner = &self.inner;
        let mut b = JsonObject::builder().insert("name", &*inner.name);
        if let Some(t) = inner
            .title
            .as_ref()
            .filter(|_| revision.carries_titles_and_structure())
        {
            b.push("title", &**t);
        }
        if let Some(d) = &inner.description {
            b.push("description", &**d);
        }
        if !inner.arguments.is_empty() {
            let args: JsonArray = inner.arguments.iter().map(|a| a.render(revision)).collect();
            b.push("arguments", args);
        }
        if !inner.icons.is_empty() && revision.carries_icons() {
            b.push("icons", render_icons(&inner.icons));
        }
        b.build().into()
    }
}

/// The first stage of a [`PromptRegistration`]: the handler.
#[must_use = "install a handler, then build()"]
#[derive(Debug)]
pub struct PromptHandlerStage {
    name: Arc<str>,
    revisions: ProtocolVersions,
}

impl PromptHandlerStage {
    /// Installs the handler that renders the prompt.
    pub fn handler<H, T, E>(self, handler: H) -> PromptBuilder
    where
        H: for<'a> Handler<'a, PromptArguments, T, E>,
        T: Into<PromptOutcome> + 'static,
        E: 'static,
    {
        PromptBuilder {
            name: self.name,
            revisions: self.revisions,
            title: None,
            description: None,
            icons: Vec::new(),
            arguments: Vec::new(),
            handler: erase(handler),
            completion: None,
            required_scopes: Vec::new(),
        }
    }
}

/// Builds a [`PromptRegistration`] once its handler is installed.
#[must_use = "call build() to finish the registration"]
pub struct PromptBuilder {
    name: Arc<str>,
    revisions: ProtocolVersions,
    title: Option<Arc<str>>,
    description: Option<Arc<str>>,
    icons: Vec<Icon>,
    arguments: Vec<PromptArgument>,
    handler: Box<dyn Erased<PromptArguments, PromptOutcome>>,
    completion: Option<Box<dyn InvokeCompletion>>,
    required_scopes: Vec<String>,
}

impl fmt::Debug for PromptBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptBuilder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PromptBuilder {
    /// A human-readable title.
    pub fn title(mut self, title: impl Into<Arc<str>>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the prompt is for.
    pub fn description(mut self, description: impl Into<Arc<str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Appends an icon (omitted on 2025-06-18, which has none).
    pub fn add_icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Requires the caller's token to grant each of `scopes` for `prompts/get` and
    /// `completion/complete` on this prompt (see
    /// [`ToolBuilder::required_scopes`](crate::tool::ToolBuilder::required_scopes)). Adds to
    /// scopes set before.
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.required_scopes
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Declares an argument (declaration order is list order).
    pub fn add_argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// Completes argument values for `completion/complete` (and advertises the `completions`
    /// capability).
    pub fn completion<H, E>(mut self, handler: H) -> Self
    where
        H: for<'a> CompletionFn<'a, E>,
        E: 'static,
    {
        self.completion = Some(boxed_completion(handler));
        self
    }

    /// Finishes the registration.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::EmptyRevisions`], [`BuildErrorKind::InvalidPromptName`] (the tool-name
    /// syntax applies), or [`BuildErrorKind::InvalidPromptArgument`] for an empty or repeated
    /// argument name.
    pub fn build(self) -> Result<PromptRegistration, BuildError> {
        let fail = |kind| Err(BuildError::new(kind).prompt_name(&self.name));
        if self.revisions.is_empty() {
            return fail(BuildErrorKind::EmptyRevisions);
        }
        if !crate::model::tool::is_tool_name(&self.name) {
            return fail(BuildErrorKind::InvalidPromptName);
        }
        let mut seen = HashSet::with_capacity(self.arguments.len());
        for argument in &self.arguments {
            if argument.name.is_empty()
                || argument.name.len() > 1024
                || !seen.insert(&argument.name)
            {
                return Err(BuildError::new(BuildErrorKind::InvalidPromptArgument)
                    .prompt_name(&self.name)
                    .at_location(format!("/arguments/{}", seen.len())));
            }
        }
        let Some(required_scopes) = Scopes::parse(&self.required_scopes) else {
            return fail(BuildErrorKind::InvalidAuthorization);
        };
        Ok(PromptRegistration {
            inner: Arc::new(PromptInner {
                name: self.name,
                title: self.title,
                description: self.description,
                icons: self.icons,
                arguments: self.arguments,
                revisions: self.revisions,
                handler: self.handler,
                completion: self.completion,
                required_scopes,
            }),
        })
    }
}

/// Renders `messages` for `revision`: each a role and one content block.
pub(crate) fn render_messages(
    messages: &[PromptMessage],
    revision: ProtocolVersion,
) -> Option<JsonValue> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        // 2025-06-18 has no icons: a resource link carrying some cannot be shown faithfully
        // there, so the prompt fails rather than silently losing them (the revisions before it
        // have no resource links at all: their rendering fails below).
        if !revision.carries_icons()
            && let ContentBlock::ResourceLink(link) = &m.content
            && link.has_icons()
        {
            return None;
        }
        let content = m.content.render(revision).ok()?;
        out.push(JsonValue::from(
            JsonObject::builder()
                .insert("role", m.role.as_str())
                .insert("content", content)
                .build(),
        ));
    }
    Some(JsonValue::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate_json::{JsonLimits, from_str};

    fn declared() -> Vec<PromptArgument> {
        vec![PromptArgument::required("a"), PromptArgument::optional("b")]
    }

    fn check(json: &str) -> Option<PromptArguments> {
        let value = from_str(json, &JsonLimits::default()).ok();
        PromptArguments::check(value.as_ref(), &declared())
    }

    #[test]
    fn arguments_are_checked_before_any_handler() {
        assert_eq!(
            check(r#"{"a":"x"}"#).and_then(|a| a.get("a").map(str::to_owned)),
            Some("x".into())
        );
        assert!(check(r#"{"a":"x","b":"y"}"#).is_some());
        assert!(check(r#"{}"#).is_none(), "missing required");
        assert!(check(r#"{"b":"y"}"#).is_none(), "missing required");
        assert!(check(r#"{"a":"x","c":"z"}"#).is_none(), "unknown");
        assert!(check(r#"{"a":1}"#).is_none(), "not a string");
        assert!(check(r#"{"a":"x","b":null}"#).is_none(), "not a string");
        assert!(check(r#"[]"#).is_none(), "not an object");
        assert!(PromptArguments::check(None, &[PromptArgument::optional("b")]).is_some());
        assert!(PromptArguments::check(None, &declared()).is_none());
    }
}
