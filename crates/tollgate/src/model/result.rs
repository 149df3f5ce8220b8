//! Operation results: what an advanced handler returns, and the tool output it carries.
//!
//! Owns the closed result family ([`OperationResult`]) and the tool output value. Rendering to
//! the wire happens in `model/projection.rs`; this module knows no revision rules beyond content
//! rendering.

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::context::{ClientCapability, RequestContext, missing_capabilities};
use crate::facts::error::{ContentError, ContentErrorKind};
use crate::model::content::{ContentBlock, TextContent};
use crate::wire::fault::Fault;
use crate::wire::syntax;

/// A tool's output: ordered content blocks, optional structured JSON, and whether it reports an
/// application-level error.
///
/// An error output is still a successful JSON-RPC exchange (`isError: true`); protocol and
/// framework failures are fixed JSON-RPC errors instead.
///
/// # Examples
///
/// ```
/// use tollgate::{content::TextContent, tool::ToolOutput};
/// use tollgate_json::JsonObject;
///
/// let out = ToolOutput::builder()
///     .add_content(TextContent::new("3 items"))
///     .structured_content(JsonObject::builder().insert("count", 3).build())
///     .build();
/// assert_eq!(out.content().len(), 1);
/// assert!(!out.is_error());
/// ```
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ToolOutput {
    content: Vec<ContentBlock>,
    structured: Option<JsonValue>,
    is_error: bool,
}

impl ToolOutput {
    /// A builder with no content.
    pub fn builder() -> ToolOutputBuilder {
        ToolOutputBuilder::default()
    }

    /// The content blocks, in order.
    pub fn content(&self) -> &[ContentBlock] {
        &self.content
    }

    /// The structured content, if any.
    pub fn structured_content(&self) -> Option<&JsonValue> {
        self.structured.as_ref()
    }

    /// Whether the output reports an application-level error.
    pub fn is_error(&self) -> bool {
        self.is_error
    }
}

/// Builds a [`ToolOutput`].
#[derive(Clone, Debug, Default)]
pub struct ToolOutputBuilder {
    output: ToolOutput,
}

impl ToolOutputBuilder {
    /// Appends a content block.
    #[must_use]
    pub fn add_content(mut self, block: impl Into<ContentBlock>) -> Self {
        self.output.content.push(block.into());
        self
    }

    /// Sets the structured content. Any JSON value is allowed on 2026-07-28; a 2025 revision
    /// accepts only an object.
    #[must_use]
    pub fn structured_content(mut self, value: impl Into<JsonValue>) -> Self {
        self.output.structured = Some(value.into());
        self
    }

    /// Marks the output as an application-level error (or not).
    #[must_use]
    pub fn error(mut self, is_error: bool) -> Self {
        self.output.is_error = is_error;
        self
    }

    /// Finishes the output.
    pub fn build(self) -> ToolOutput {
        self.output
    }
}

/// A completed operation: a tool output plus result `_meta`.
///
/// # Examples
///
/// ```
/// use tollgate::tool::CompleteResult;
///
/// let ok = CompleteResult::from_tool_text("No matching items");
/// let failed = CompleteResult::from_tool_error_text("The catalog is temporarily unavailable");
/// assert!(failed.tool_output().is_error());
/// assert!(!ok.tool_output().is_error());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CompleteResult {
    output: ToolOutput,
    meta: Option<JsonObject>,
}

impl CompleteResult {
    /// One text block.
    pub fn from_tool_text(text: impl Into<std::sync::Arc<str>>) -> Self {
        Self::from_output(
            ToolOutput::builder()
                .add_content(TextContent::new(text))
                .build(),
        )
    }

    /// Structured content only.
    pub fn from_tool_structured_content(value: impl Into<JsonValue>) -> Self {
        Self::from_output(ToolOutput::builder().structured_content(value).build())
    }

    /// One text block reporting an application-level error (`isError: true`). Use it for safe,
    /// actionable business feedback; never put secrets or raw input in it.
    pub fn from_tool_error_text(text: impl Into<std::sync::Arc<str>>) -> Self {
        Self::from_output(
            ToolOutput::builder()
                .add_content(TextContent::new(text))
                .error(true)
                .build(),
        )
    }

    /// A `CallToolResult` read back from its wire form (content blocks, `structuredContent`,
    /// `isError`, `_meta`), every part through the same constructors, and so the same checks,
    /// as an application's: `None` when any part fails one (a gateway relaying another
    /// server's result answers that with the fixed internal error, never with the bytes).
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::json::{JsonLimits, from_str};
    /// use tollgate::tool::CompleteResult;
    ///
    /// let wire = from_str(r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#, &JsonLimits::default()).unwrap();
    /// let result = CompleteResult::from_wire(wire.as_object().unwrap()).unwrap();
    /// assert_eq!(result.tool_output().content().len(), 1);
    /// let bad = from_str(r#"{"content":[{"type":"image","data":"not base64!","mimeType":"image/png"}]}"#, &JsonLimits::default()).unwrap();
    /// assert!(CompleteResult::from_wire(bad.as_object().unwrap()).is_none());
    /// ```
    pub fn from_wire(result: &JsonObject) -> Option<Self> {
        use crate::model::content::parse::block_of;
        let mut output = ToolOutput::builder();
        for block in result.get("content")?.as_array()? {
            output = output.add_content(block_of(block.as_object()?)?);
        }
        if let Some(structured) = result.get("structuredContent") {
            output = output.structured_content(structured.clone());
        }
        if let Some(flag) = result.get("isError") {
            output = output.error(flag.as_bool()?);
        }
        let builder = Self::with_tool_output(output.build());
        let builder = match result.get("_meta") {
            Some(meta) => builder.meta(meta.as_object()?.clone()).ok()?,
            None => builder,
        };
        Some(builder.build())
    }

    /// A builder around `output`, with no `_meta`.
    pub fn with_tool_output(output: ToolOutput) -> CompleteResultBuilder {
        CompleteResultBuilder {
            result: Self::from_output(output),
        }
    }

    fn from_output(output: ToolOutput) -> Self {
        Self { output, meta: None }
    }

    /// A builder holding this result, to replace parts of it.
    pub fn to_builder(&self) -> CompleteResultBuilder {
        CompleteResultBuilder {
            result: self.clone(),
        }
    }

    /// The tool output.
    pub fn tool_output(&self) -> &ToolOutput {
        &self.output
    }

    /// The result `_meta`, if any.
    pub fn meta(&self) -> Option<&JsonObject> {
        self.meta.as_ref()
    }
}

/// Builds a [`CompleteResult`].
#[derive(Clone, Debug)]
pub struct CompleteResultBuilder {
    result: CompleteResult,
}

impl CompleteResultBuilder {
    /// Replaces the tool output.
    #[must_use]
    pub fn tool_output(mut self, output: ToolOutput) -> Self {
        self.result.output = output;
        self
    }

    /// Sets the result `_meta`.
    ///
    /// # Errors
    ///
    /// [`ContentErrorKind::InvalidMetaKey`] when a key breaks the `_meta` naming rules.
    pub fn meta(mut self, meta: JsonObject) -> Result<Self, ContentError> {
        if !meta.keys().all(syntax::is_meta_key) {
            return Err(ContentError::new(ContentErrorKind::InvalidMetaKey));
        }
        self.result.meta = Some(meta);
        Ok(self)
    }

    /// Finishes the result.
    pub fn build(self) -> CompleteResult {
        self.result
    }
}

/// What an advanced handler returns: a closed, framework-owned family.
///
/// [`OperationResult::Complete`], [`OperationResult::InputRequired`] (2026-07-28),
/// [`OperationResult::TaskCreated`] (a task made through this call's
/// [`TaskCreation`](crate::task::TaskCreation); any other fails with the fixed internal error)
/// or [`OperationResult::MissingCapabilities`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum OperationResult {
    /// The operation completed.
    Complete(CompleteResult),
    /// The operation needs input from the client first (2026-07-28 only: on the 2025
    /// revisions, which have no multi-round-trip requests, it fails with the fixed internal
    /// error).
    InputRequired(crate::model::input::InputRequiredResult),
    /// The operation continues as a task (tools on 2026-07-28 with the tasks extension).
    TaskCreated(TaskCreated),
    /// The operation needs client capabilities the caller did not declare, known only once the
    /// handler runs (a gateway relaying an upstream's refusal): answered as the endpoint answers
    /// a registration's own requirement, the fixed -32021 "Missing required client capability"
    /// with `data.requiredCapabilities` naming them (HTTP 400 on 2026-07-28). Naming one the
    /// caller did declare fails with the fixed internal error. A requirement known in advance
    /// belongs on the registration, which refuses the call before the handler runs.
    MissingCapabilities(MissingCapabilities),
}

impl From<MissingCapabilities> for OperationResult {
    fn from(missing: MissingCapabilities) -> Self {
        Self::MissingCapabilities(missing)
    }
}

/// The client capabilities an operation needs and its caller did not declare (see
/// [`OperationResult::MissingCapabilities`] and, for prompts and resources,
/// [`Outcome::MissingCapabilities`](crate::context::Outcome::MissingCapabilities)): at least one and at most
/// [`MissingCapabilities::MAX`], each once, an extension's identifier 1 to
/// [`MissingCapabilities::MAX_EXTENSION_BYTES`] bytes without control characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingCapabilities(Vec<ClientCapability>);

impl MissingCapabilities {
    /// The reply to capabilities a handler found missing as it ran
    /// ([`OperationResult::MissingCapabilities`],
    /// [`Outcome::MissingCapabilities`](crate::context::Outcome::MissingCapabilities)): refused
    /// as a registration's own requirement is, but naming one the caller did declare is the
    /// handler's contract failure, the fixed internal error.
    pub(crate) fn refusal(&self, context: &RequestContext) -> crate::wire::reply::Reply {
        let (revision, id) = (context.protocol_version, context.request_id.as_ref());
        if self
            .0
            .iter()
            .any(|c| context.client_capabilities.declares(c))
        {
            return crate::wire::reply::fail(revision, id, Fault::Internal, None);
        }
        missing_capabilities(revision, id, self.0.iter())
    }
}

impl MissingCapabilities {
    /// The most capabilities one refusal names.
    pub const MAX: usize = 16;
    /// The longest extension identifier named, in bytes.
    pub const MAX_EXTENSION_BYTES: usize = 256;

    /// The capabilities, duplicates dropped; `None` when there are none, more than
    /// [`MAX`](Self::MAX), or an extension identifier is empty, longer than
    /// [`MAX_EXTENSION_BYTES`](Self::MAX_EXTENSION_BYTES) or holds a control character.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::context::ClientCapability;
    /// use tollgate::tool::MissingCapabilities;
    ///
    /// let tasks = ClientCapability::Extension("io.modelcontextprotocol/tasks".into());
    /// let missing = MissingCapabilities::new([tasks.clone(), tasks]).unwrap();
    /// assert_eq!(missing.capabilities().len(), 1);
    /// assert!(MissingCapabilities::new([]).is_none());
    /// ```
    pub fn new(capabilities: impl IntoIterator<Item = ClientCapability>) -> Option<Self> {
        let mut kept: Vec<ClientCapability> = Vec::new();
        for capability in capabilities {
            if let ClientCapability::Extension(name) = &capability
                && (name.is_empty()
                    || name.len() > Self::MAX_EXTENSION_BYTES
                    || name.chars().any(char::is_control))
            {
                return None;
            }
            if !kept.contains(&capability) {
                if kept.len() == Self::MAX {
                    return None;
                }
                kept.push(capability);
            }
        }
        (!kept.is_empty()).then_some(Self(kept))
    }

    /// The capabilities named, in the order given.
    pub fn capabilities(&self) -> &[ClientCapability] {
        &self.0
    }
}

impl From<CompleteResult> for OperationResult {
    fn from(result: CompleteResult) -> Self {
        Self::Complete(result)
    }
}

impl From<crate::model::input::InputRequiredResult> for OperationResult {
    fn from(result: crate::model::input::InputRequiredResult) -> Self {
        Self::InputRequired(result)
    }
}

impl From<TaskCreated> for OperationResult {
    fn from(created: TaskCreated) -> Self {
        Self::TaskCreated(created)
    }
}

/// A created task, returned from a handler as [`OperationResult::TaskCreated`]. It can only
/// come from [`TaskCreation::spawn`](crate::task::TaskCreation::spawn) on the same call.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskCreated {
    pub(crate) id: std::sync::Arc<str>,
    /// The `CreateTaskResult`, rendered when the task was stored.
    pub(crate) result: JsonObject,
    /// The creating call's serial: a handle from another call is refused.
    pub(crate) serial: u64,
}

impl TaskCreated {
    /// The task id.
    pub fn task_id(&self) -> &str {
        &self.id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extension(bytes: usize) -> ClientCapability {
        ClientCapability::Extension("x".repeat(bytes).into())
    }

    #[test]
    fn missing_capabilities_are_bounded() {
        // Count: at the bound and one past it (distinct ones; duplicates are dropped first).
        let at = (0..MissingCapabilities::MAX).map(|n| extension(n + 1));
        assert!(MissingCapabilities::new(at).is_some());
        let past = (0..=MissingCapabilities::MAX).map(|n| extension(n + 1));
        assert!(MissingCapabilities::new(past).is_none());
        let repeated = std::iter::repeat_n(ClientCapability::Roots, 40);
        let once = MissingCapabilities::new(repeated).map(|m| m.capabilities().len());
        assert_eq!(once, Some(1));
        // An extension's identifier: 1 to 256 bytes, no control character.
        let longest = MissingCapabilities::MAX_EXTENSION_BYTES;
        assert!(MissingCapabilities::new([extension(longest)]).is_some());
        assert!(MissingCapabilities::new([extension(longest + 1)]).is_none());
        assert!(MissingCapabilities::new([extension(0)]).is_none());
        let control = ClientCapability::Extension("a\u{7}b".into());
        assert!(MissingCapabilities::new([control]).is_none());
        assert!(MissingCapabilities::new([]).is_none());
    }
}
