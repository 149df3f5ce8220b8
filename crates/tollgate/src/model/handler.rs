//! The one handler shape tools, prompts and resources share: a plain async function
//! `(&RequestContext, Input, &InvocationFeatures) -> Result<T, E>` ([`Handler`]); what a prompt
//! or resource handler answers ([`Outcome`]: its value, or a request for input first); and the
//! type-erased form a registration keeps ([`Erased`]).
//!
//! Owns the shape only. What the input is (tool arguments, prompt arguments, a resource
//! request) belongs to each registration; what an outcome becomes on the wire belongs to the
//! methods above.

use std::future::Future;
use std::marker::PhantomData;

use crate::facts::context::RequestContext;
use crate::facts::report::Failures;
use crate::model::features::InvocationFeatures;
use crate::model::guard::BoxFuture;
use crate::model::input::InputRequiredResult;
use crate::model::result::MissingCapabilities;

/// A handler: any `async fn(&RequestContext, In, &InvocationFeatures) -> Result<T, E>` (or a
/// closure of that shape whose future is `Send`). `In` is what the registration hands over:
/// [`ToolArguments`](crate::tool::ToolArguments) for a tool,
/// [`PromptArguments`](crate::prompt::PromptArguments) for a prompt,
/// [`ResourceRequest`](crate::resource::ResourceRequest) for a resource.
///
/// The error type is yours; Tollgate never shows it to the client, who receives the fixed
/// internal error.
///
/// # Examples
///
/// A plain async function is a handler; so is a type that implements the trait itself (a
/// handler holding shared state, say):
///
/// ```
/// use std::convert::Infallible;
/// use std::future::{Ready, ready};
/// use tollgate::context::Handler;
/// use tollgate::prompt::{PromptArguments, PromptMessage, PromptResult};
/// use tollgate::{InvocationFeatures, RequestContext};
///
/// struct Greeting(&'static str);
///
/// impl<'a> Handler<'a, PromptArguments, PromptResult, Infallible> for Greeting {
///     type Future = Ready<Result<PromptResult, Infallible>>;
///
///     fn call(
///         &self,
///         _: &'a RequestContext,
///         _: PromptArguments,
///         _: &'a InvocationFeatures,
///     ) -> Self::Future {
///         let text = tollgate::content::TextContent::new(self.0);
///         ready(Ok(PromptResult::with_message(PromptMessage::user(text))))
///     }
/// }
///
/// let prompt = tollgate::prompt::PromptRegistration::with_name(
///     "greet",
///     [tollgate::ProtocolVersion::V2026_07_28],
/// )
/// .handler(Greeting("Hello!"))
/// .build()?;
/// assert_eq!(prompt.name(), "greet");
/// # Ok::<(), tollgate::BuildError>(())
/// ```
pub trait Handler<'a, In, T, E>: Send + Sync + 'static {
    /// The handler's future.
    type Future: Future<Output = Result<T, E>> + Send + 'a;

    /// Calls the handler.
    fn call(
        &self,
        context: &'a RequestContext,
        input: In,
        features: &'a InvocationFeatures,
    ) -> Self::Future;
}

impl<'a, F, Fut, In, T, E> Handler<'a, In, T, E> for F
where
    F: Fn(&'a RequestContext, In, &'a InvocationFeatures) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, E>> + Send + 'a,
{
    type Future = Fut;

    fn call(
        &self,
        context: &'a RequestContext,
        input: In,
        features: &'a InvocationFeatures,
    ) -> Fut {
        self(context, input, features)
    }
}

/// What a prompt or resource handler answers: its value, or (2026-07-28) a request for input
/// the client must provide first. A handler returns either type directly; both convert.
///
/// # Examples
///
/// ```
/// use tollgate::context::{InputRequest, InputRequiredResult, Outcome};
/// use tollgate::prompt::{PromptMessage, PromptOutcome, PromptResult};
///
/// let text = tollgate::content::TextContent::new("Hello");
/// let rendered: PromptOutcome = PromptResult::with_message(PromptMessage::user(text)).into();
/// assert!(matches!(rendered, Outcome::Complete(_)));
///
/// let ask = InputRequiredResult::with_input_request("roots", InputRequest::list_roots());
/// let first: PromptOutcome = ask.into();
/// assert!(matches!(first, Outcome::InputRequired(_)));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Outcome<T> {
    /// The handler's value.
    Complete(T),
    /// Input the client must provide before the value can be produced.
    InputRequired(InputRequiredResult),
    /// Client capabilities the caller did not declare, found missing as the handler ran (a
    /// gateway relaying an upstream's refusal): answered as a tool's
    /// [`OperationResult::MissingCapabilities`](crate::tool::OperationResult::MissingCapabilities)
    /// is, the fixed -32021 "Missing required client capability" naming them (naming one the
    /// caller did declare fails with the fixed internal error).
    MissingCapabilities(MissingCapabilities),
}

impl<T> From<MissingCapabilities> for Outcome<T> {
    fn from(missing: MissingCapabilities) -> Self {
        Self::MissingCapabilities(missing)
    }
}

impl<T> From<InputRequiredResult> for Outcome<T> {
    fn from(required: InputRequiredResult) -> Self {
        Self::InputRequired(required)
    }
}

/// A handler with its types erased, as a registration keeps it: `None` when the handler
/// returned its error (the error is handed to `failures` while in hand, then dropped, never
/// shown to the client).
pub(crate) trait Erased<In, Out>: Send + Sync {
    fn invoke<'a>(
        &'a self,
        context: &'a RequestContext,
        input: In,
        features: &'a InvocationFeatures,
        failures: &'a Failures,
    ) -> BoxFuture<'a, Option<Out>>;
}

struct Typed<H, T, E> {
    handler: H,
    _types: PhantomData<fn() -> (T, E)>,
}

impl<H, In, T, E, Out> Erased<In, Out> for Typed<H, T, E>
where
    H: for<'a> Handler<'a, In, T, E>,
    T: Into<Out> + 'static,
    E: 'static,
{
    fn invoke<'a>(
        &'a self,
        context: &'a RequestContext,
        input: In,
        features: &'a InvocationFeatures,
        failures: &'a Failures,
    ) -> BoxFuture<'a, Option<Out>> {
        let future = self.handler.call(context, input, features);
        Box::pin(async move {
            match future.await {
                Ok(value) => Some(value.into()),
                Err(error) => {
                    failures.handler_failed(context, &error);
                    None
                }
            }
        })
    }
}

/// Erases `handler`'s types.
pub(crate) fn erase<H, In, T, E, Out>(handler: H) -> Box<dyn Erased<In, Out>>
where
    H: for<'a> Handler<'a, In, T, E>,
    T: Into<Out> + 'static,
    E: 'static,
    In: 'static,
    Out: 'static,
{
    Box::new(Typed {
        handler,
        _types: PhantomData,
    })
}
