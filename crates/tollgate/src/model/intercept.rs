//! Interception: application hooks around every application handler call (`tools/call`,
//! `prompts/get`, `resources/read`), and the tool-result sanitizer.
//!
//! An [`Interceptor`] runs after admission, routing, lookup, the limiters and request state,
//! and before complete input validation: it sees the request context, the raw arguments (parsed
//! and bounded, not yet checked against the schema) and the invocation features, and may
//! proceed (after adding request-scoped values to the features), answer with its own output, or
//! fail (the fixed internal error). Interceptors compose in registration order, the first
//! outermost. A [`ToolResultSanitizer`] sees every completed tool result before the output
//! checks and may rewrite it; it cannot turn it into a protocol error or skip those checks.
//!
//! Owns the hooks' shapes and the chain. Knows nothing of the wire: what an output becomes, and
//! which outputs a method accepts, is the methods' business.

use std::future::Future;
use std::sync::Arc;

use tollgate_json::JsonObject;

use crate::facts::context::RequestContext;
use crate::model::features::InvocationFeatures;
use crate::model::guard::{BoxFuture, guarded};
use crate::model::prompt::PromptOutcome;
use crate::model::resource::ResourceOutcome;
use crate::model::result::{CompleteResult, OperationResult};

/// What an application handler call comes to, as an interceptor sees it: a tool's result, a
/// prompt's outcome, or a resource read's outcome.
///
/// An interceptor that answers with an output of another kind than the call's (a prompt's
/// outcome for a tool call, say), or a result the tool cannot give (a task it did not create, an
/// `input_required` result from a typed tool), gets the fixed internal error.
#[derive(Debug)]
#[non_exhaustive]
pub enum HandlerOutput {
    /// A tool's result: complete, `input_required`, or the task this call created.
    Tool(OperationResult),
    /// A prompt's outcome.
    Prompt(PromptOutcome),
    /// A resource read's outcome.
    Resource(ResourceOutcome),
}

/// The call failed: a handler's error or panic, arguments refused with -32602 (a tool's on
/// 2025-06-18, a prompt's missing or unknown arguments), no evaluation slot free (503), or an
/// interceptor's own refusal ([`HandlerFailure::new`], the fixed -32603). Answered with the
/// fixed error of its kind; no text of it is ever sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HandlerFailure {
    pub(crate) kind: FailureKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FailureKind {
    /// The fixed internal error (-32603).
    Internal,
    /// Arguments refused with -32602: a tool's on 2025-06-18, a prompt's.
    InvalidParams,
    /// No evaluation slot was free (-32603 `Server busy`, 503).
    Busy,
}

impl HandlerFailure {
    /// A failure an interceptor answers with: the fixed internal error (-32603).
    pub fn new() -> Self {
        Self {
            kind: FailureKind::Internal,
        }
    }

    pub(crate) fn of(kind: FailureKind) -> Self {
        Self { kind }
    }
}

impl Default for HandlerFailure {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Display for HandlerFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the handler call failed")
    }
}

impl std::error::Error for HandlerFailure {}

/// The rest of the chain: the next interceptor, or input validation and the handler.
type Rest<'a> = Box<
    dyn FnOnce(InvocationFeatures) -> BoxFuture<'a, Result<HandlerOutput, HandlerFailure>>
        + Send
        + 'a,
>;

/// One handler call, as an interceptor receives it.
pub struct Intercepted<'a> {
    context: &'a RequestContext,
    arguments: &'a JsonObject,
    features: InvocationFeatures,
    rest: Rest<'a>,
}

impl<'a> Intercepted<'a> {
    /// The request context (admitted identity, originating request, trace context).
    pub fn context(&self) -> &'a RequestContext {
        self.context
    }

    /// The call's arguments as sent: parsed and bounded, not yet validated against the input
    /// schema (a tool's `arguments`, a prompt's `arguments`; empty for a resource read, whose
    /// URI is the context's operation name).
    pub fn arguments(&self) -> &'a JsonObject {
        self.arguments
    }

    /// The invocation features the handler will receive.
    pub fn features(&self) -> &InvocationFeatures {
        &self.features
    }

    /// The invocation features, to add request-scoped values for the handler
    /// ([`InvocationFeatures::insert`]). Features Tollgate provides cannot be removed.
    pub fn features_mut(&mut self) -> &mut InvocationFeatures {
        &mut self.features
    }

    /// Runs the rest of the call (later interceptors, then input validation and the handler)
    /// and returns its output, for this interceptor to pass on, transform or replace.
    ///
    /// # Errors
    ///
    /// [`HandlerFailure`] when the handler failed or panicked, a later interceptor failed, the
    /// arguments are refused with -32602, or no evaluation slot was free.
    pub async fn proceed(self) -> Result<HandlerOutput, HandlerFailure> {
        (self.rest)(self.features).await
    }
}

impl std::fmt::Debug for Intercepted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Intercepted")
            .field("method", &self.context.json_rpc_method())
            .finish_non_exhaustive()
    }
}

/// An interceptor: any `async fn(Intercepted<'_>) -> Result<HandlerOutput, HandlerFailure>`
/// (or a type implementing the trait), registered with
/// [`EndpointBuilder::interceptor`](crate::endpoint::EndpointBuilder::interceptor).
///
/// # Examples
///
/// An interceptor that refuses one tool when a header says so, and passes every other call on:
///
/// ```
/// use tollgate::context::{HandlerFailure, HandlerOutput, Intercepted};
/// use tollgate::tool::{CompleteResult, OperationResult};
///
/// async fn closed_on_fridays(call: Intercepted<'_>) -> Result<HandlerOutput, HandlerFailure> {
///     let ctx = call.context();
///     let friday = ctx.originating_request().header("x-day") == Some("friday");
///     if friday && ctx.operation_name() == Some("deploy") {
///         let refusal = CompleteResult::from_tool_error_text("Deploys are closed on Fridays.");
///         return Ok(HandlerOutput::Tool(OperationResult::Complete(refusal)));
///     }
///     call.proceed().await
/// }
///
/// let endpoint = tollgate::Endpoint::with_path(
///     "/mcp",
///     [tollgate::ProtocolVersion::V2026_07_28],
///     tollgate::Implementation::new("ops", "1.0.0"),
/// )
/// .interceptor(closed_on_fridays)
/// .build()?;
/// # Ok::<(), tollgate::BuildError>(())
/// ```
pub trait Interceptor<'a>: Send + Sync + 'static {
    /// The interceptor's future.
    type Future: Future<Output = Result<HandlerOutput, HandlerFailure>> + Send + 'a;

    /// Intercepts one handler call.
    fn intercept(&self, call: Intercepted<'a>) -> Self::Future;
}

impl<'a, F, Fut> Interceptor<'a> for F
where
    F: Fn(Intercepted<'a>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<HandlerOutput, HandlerFailure>> + Send + 'a,
{
    type Future = Fut;

    fn intercept(&self, call: Intercepted<'a>) -> Fut {
        self(call)
    }
}

/// An interceptor with its type erased.
pub(crate) trait ErasedInterceptor: Send + Sync {
    fn intercept<'a>(
        &'a self,
        call: Intercepted<'a>,
    ) -> BoxFuture<'a, Result<HandlerOutput, HandlerFailure>>;
}

struct Typed<I>(I);

impl<I> ErasedInterceptor for Typed<I>
where
    I: for<'a> Interceptor<'a>,
{
    fn intercept<'a>(
        &'a self,
        call: Intercepted<'a>,
    ) -> BoxFuture<'a, Result<HandlerOutput, HandlerFailure>> {
        Box::pin(self.0.intercept(call))
    }
}

pub(crate) fn erase_interceptor<I>(interceptor: I) -> Arc<dyn ErasedInterceptor>
where
    I: for<'a> Interceptor<'a>,
{
    Arc::new(Typed(interceptor))
}

/// Runs `chain` around `inner` (input validation and the handler). An interceptor's panic is
/// the fixed internal error.
pub(crate) async fn run_chain<'a>(
    chain: &'a [Arc<dyn ErasedInterceptor>],
    context: &'a RequestContext,
    arguments: &'a JsonObject,
    features: InvocationFeatures,
    inner: Rest<'a>,
) -> Result<HandlerOutput, HandlerFailure> {
    let mut rest = inner;
    for interceptor in chain.iter().rev() {
        let next = rest;
        rest = Box::new(move |features| {
            let call = Intercepted {
                context,
                arguments,
                features,
                rest: next,
            };
            Box::pin(async move {
                guarded(|| interceptor.intercept(call))
                    .await
                    .unwrap_or(Err(HandlerFailure::new()))
            })
        });
    }
    rest(features).await
}

/// Rewrites completed tool results before Tollgate checks and writes them: handler results,
/// interceptor results, the fixed invalid-arguments result, and a completed task's result each
/// time `tasks/get` or a `subscriptions/listen` notification carries it (with that request's
/// context). Not `input_required` results, task-creation results or protocol errors.
///
/// The returned result still passes every output check (content rules, the output schema of a
/// typed tool, the output limits); an `Err` or a panic is the fixed internal error (-32603), with
/// no text of it sent.
///
/// # Examples
///
/// A sanitizer that masks anything shaped like an API key in a tool's text content:
///
/// ```
/// use tollgate::RequestContext;
/// use tollgate::content::{ContentBlock, TextContent};
/// use tollgate::context::{SanitizeError, ToolResultSanitizer};
/// use tollgate::json::JsonObject;
/// use tollgate::tool::{CompleteResult, ToolOutput};
///
/// struct MaskKeys;
///
/// impl ToolResultSanitizer for MaskKeys {
///     fn sanitize(
///         &self,
///         _: &RequestContext,
///         _tool: &str,
///         _arguments: &JsonObject,
///         result: CompleteResult,
///     ) -> Result<CompleteResult, SanitizeError> {
///         let mut output = ToolOutput::builder().error(result.tool_output().is_error());
///         for block in result.tool_output().content() {
///             output = match block {
///                 ContentBlock::Text(t) if t.text().contains("sk-") => {
///                     output.add_content(TextContent::new("[redacted]"))
///                 }
///                 other => output.add_content(other.clone()),
///             };
///         }
///         if let Some(structured) = result.tool_output().structured_content() {
///             output = output.structured_content(structured.clone());
///         }
///         Ok(CompleteResult::with_tool_output(output.build()).build())
///     }
/// }
///
/// let ctx = RequestContext::for_test("tools/call", tollgate::ProtocolVersion::V2026_07_28);
/// let clean = MaskKeys.sanitize(&ctx, "t", &JsonObject::new(), CompleteResult::from_tool_text("sk-123"));
/// let first = clean.unwrap().tool_output().content()[0].clone();
/// assert!(matches!(first, ContentBlock::Text(t) if t.text() == "[redacted]"));
/// ```
pub trait ToolResultSanitizer: Send + Sync + 'static {
    /// Returns the result to check and write in place of `result`, for the tool `tool` called
    /// with `arguments` (as sent) in the request `context`.
    ///
    /// # Errors
    ///
    /// [`SanitizeError`]: the call is answered with the fixed internal error.
    fn sanitize(
        &self,
        context: &RequestContext,
        tool: &str,
        arguments: &JsonObject,
        result: CompleteResult,
    ) -> Result<CompleteResult, SanitizeError>;
}

/// A sanitizer's refusal to let a result out: answered with the fixed internal error (-32603).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SanitizeError;

impl std::fmt::Display for SanitizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the sanitizer refused the result")
    }
}

impl std::error::Error for SanitizeError {}

/// Runs the sanitizer, if any, on a completed result: `None` when it refused or panicked.
pub(crate) fn sanitize(
    sanitizer: Option<&Arc<dyn ToolResultSanitizer>>,
    context: &RequestContext,
    tool: &str,
    arguments: &JsonObject,
    result: CompleteResult,
) -> Option<CompleteResult> {
    let Some(sanitizer) = sanitizer else {
        return Some(result);
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        sanitizer.sanitize(context, tool, arguments, result)
    }))
    .ok()?
    .ok()
}
