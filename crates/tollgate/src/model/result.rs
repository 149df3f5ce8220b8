//! Operation results: what an advanced handler returns, and the tool output it carries.
//!
//! Owns the closed result family ([`OperationResult`]) and the tool output value. Rendering to
//! the wire happens in `model/projection.rs`; this module knows no revision rules beyond content
//! rendering.

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::error::{ContentError, ContentErrorKind};
use crate::model::content::{ContentBlock, TextContent};
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
/// [`OperationResult::Complete`], [`OperationResult::InputRequired`] (2026-07-28) or
/// [`OperationResult::TaskCreated`] (a task made through this call's
/// [`TaskCreation`](crate::task::TaskCreation); any other fails with the fixed internal error).
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
