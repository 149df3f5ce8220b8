//! How a registered handler is invoked: arguments bound by their model (serde or raw), the
//! handler called, and its success value turned into an [`Invocation`] by its result model.
//! Knows nothing of schemas, metadata or the protocol.

use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tollgate_json::{BindLimits, JsonObject, JsonValue, from_value, to_value};

use crate::facts::context::RequestContext;
use crate::facts::report::Failures;
use crate::model::features::InvocationFeatures;
use crate::model::guard::BoxFuture;
use crate::model::handler::Handler;
use crate::model::result::OperationResult;
use crate::model::tool::ToolArguments;

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
        failures: &'a Failures,
    ) -> BoxFuture<'a, Result<Invocation, InvokeFailure>>;
}

/// How arguments are converted: through serde (`Typed`) or handed over as the raw object.
pub(crate) trait ArgumentModel<A>: Send + Sync + 'static {
    fn bind(raw: &JsonObject, limits: &BindLimits) -> Option<A>;
}

/// How a handler's success value becomes an [`Invocation`].
pub(crate) trait ResultModel<T>: Send + Sync + 'static {
    fn finish(value: T) -> Result<Invocation, InvokeFailure>;
}

/// Marks an advanced stage whose arguments are converted through serde.
#[derive(Debug)]
pub struct TypedArguments;
/// Marks an advanced stage whose arguments are the raw validated JSON object.
#[derive(Debug)]
pub struct RawArguments;
pub(crate) struct Structured;
pub(crate) struct Operation;

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
pub(crate) type Models<A, T, E, AM, RM> = PhantomData<fn() -> (A, T, E, AM, RM)>;

struct Invoker<A, T, E, H, AM, RM> {
    handler: H,
    _models: Models<A, T, E, AM, RM>,
}

/// A handler with its argument and result models, boxed for a registration.
pub(crate) fn boxed<A, T, E, H, AM, RM>(handler: H) -> Box<dyn Invoke>
where
    A: Send + 'static,
    T: 'static,
    E: 'static,
    H: for<'a> Handler<'a, ToolArguments<A>, T, E>,
    AM: ArgumentModel<A>,
    RM: ResultModel<T>,
{
    Box::new(Invoker::<A, T, E, H, AM, RM> {
        handler,
        _models: PhantomData,
    })
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
        failures: &'a Failures,
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
                Err(error) => {
                    failures.handler_failed(context, &error);
                    Err(InvokeFailure::Handler)
                }
            }
        })
    }
}
