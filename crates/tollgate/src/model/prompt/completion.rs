//! Completions for prompt arguments (`completion/complete`): the request a completion handler
//! receives, the [`Completion`] it returns (at most 100 values, saying when there are more), and
//! the handler shape. Knows nothing of registrations or revisions.

use std::future::Future;
use std::sync::Arc;

use tollgate_json::{JsonArray, JsonObject, JsonValue};

use crate::facts::context::RequestContext;
use crate::facts::report::Failures;
use crate::model::guard::BoxFuture;

/// The most values one completion carries (the protocol's limit).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// The argument a `completion/complete` asks about, with the values already chosen for the
/// prompt's other arguments.
///
/// # Examples
///
/// ```
/// use tollgate::prompt::CompletionRequest;
///
/// let request = CompletionRequest::for_test("language", "ru", [("style", "terse")]);
/// assert_eq!((request.argument(), request.value()), ("language", "ru"));
/// assert_eq!(request.context("style"), Some("terse"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionRequest {
    argument: Arc<str>,
    value: Arc<str>,
    context: Vec<(Arc<str>, Arc<str>)>,
}

impl CompletionRequest {
    /// A request for unit-testing a completion handler.
    pub fn for_test<'a>(
        argument: &str,
        value: &str,
        context: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        Self {
            argument: Arc::from(argument),
            value: Arc::from(value),
            context: context
                .into_iter()
                .map(|(k, v)| (Arc::from(k), Arc::from(v)))
                .collect(),
        }
    }

    pub(crate) fn new(argument: &str, value: &str, context: Vec<(Arc<str>, Arc<str>)>) -> Self {
        Self {
            argument: Arc::from(argument),
            value: Arc::from(value),
            context,
        }
    }

    /// The argument being completed (one the prompt declares).
    pub fn argument(&self) -> &str {
        &self.argument
    }

    /// What the user has typed so far.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// A value already chosen for another argument of the prompt.
    pub fn context(&self, name: &str) -> Option<&str> {
        self.context
            .iter()
            .find(|(k, _)| &**k == name)
            .map(|(_, v)| &**v)
    }
}

/// Suggested values for an argument, at most [`MAX_COMPLETION_VALUES`].
///
/// # Examples
///
/// ```
/// use tollgate::prompt::Completion;
///
/// let c = Completion::from_values((0..150).map(|i| format!("v{i}")));
/// assert_eq!(c.values().len(), 100);
/// assert!(c.has_more(), "the values past the limit are announced, not silently dropped");
/// assert_eq!(c.total(), Some(150));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    values: Vec<String>,
    total: Option<u64>,
    has_more: bool,
}

impl Completion {
    /// The first [`MAX_COMPLETION_VALUES`] of `values`; past them, `hasMore` is set and `total`
    /// counts them all.
    pub fn from_values<S: Into<String>>(values: impl IntoIterator<Item = S>) -> Self {
        let mut kept = Vec::new();
        let mut count: u64 = 0;
        for v in values {
            count += 1;
            if kept.len() < MAX_COMPLETION_VALUES {
                kept.push(v.into());
            }
        }
        let has_more = count > kept.len() as u64;
        Self {
            values: kept,
            total: has_more.then_some(count),
            has_more,
        }
    }

    /// No suggestion.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Announces that more values exist than were sent (`total` when known).
    #[must_use]
    pub fn with_more(mut self, total: Option<u64>) -> Self {
        self.has_more = true;
        self.total = total.map(|t| t.max(self.values.len() as u64));
        self
    }

    /// The values sent.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// How many values exist in all, when known.
    pub fn total(&self) -> Option<u64> {
        self.total
    }

    /// Whether more values exist than were sent.
    pub fn has_more(&self) -> bool {
        self.has_more
    }

    pub(crate) fn render(&self) -> JsonValue {
        let values: JsonArray = self
            .values
            .iter()
            .map(|v| JsonValue::from(v.as_str()))
            .collect();
        let mut b = JsonObject::builder().insert("values", values);
        if let Some(total) = self.total {
            b.push("total", total);
        }
        b.push("hasMore", self.has_more);
        b.build().into()
    }
}

/// A completion handler: any `async fn(&RequestContext, CompletionRequest) -> Result<Completion,
/// E>`.
pub trait CompletionFn<'a, E>: Send + Sync + 'static {
    /// The handler's future.
    type Future: Future<Output = Result<Completion, E>> + Send + 'a;

    /// Calls the handler.
    fn call(&self, context: &'a RequestContext, request: CompletionRequest) -> Self::Future;
}

impl<'a, F, Fut, E> CompletionFn<'a, E> for F
where
    F: Fn(&'a RequestContext, CompletionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Completion, E>> + Send + 'a,
{
    type Future = Fut;

    fn call(&self, context: &'a RequestContext, request: CompletionRequest) -> Fut {
        self(context, request)
    }
}

pub(crate) trait InvokeCompletion: Send + Sync {
    /// Runs the handler: its completion, or `None` when it returned an error (logged and
    /// reported through `failures`, as a tool's or prompt's is).
    fn invoke<'a>(
        &'a self,
        context: &'a RequestContext,
        request: CompletionRequest,
        failures: &'a Failures,
    ) -> BoxFuture<'a, Option<Completion>>;
}

struct CompletionHandler<H, E> {
    handler: H,
    _error: std::marker::PhantomData<fn() -> E>,
}

impl<H, E> InvokeCompletion for CompletionHandler<H, E>
where
    H: for<'a> CompletionFn<'a, E>,
    E: 'static,
{
    fn invoke<'a>(
        &'a self,
        context: &'a RequestContext,
        request: CompletionRequest,
        failures: &'a Failures,
    ) -> BoxFuture<'a, Option<Completion>> {
        let future = self.handler.call(context, request);
        Box::pin(async move {
            match future.await {
                Ok(completion) => Some(completion),
                Err(error) => {
                    failures.handler_failed(context, &error);
                    None
                }
            }
        })
    }
}

/// A completion handler, boxed for a registration.
pub(crate) fn boxed_completion<H, E>(handler: H) -> Box<dyn InvokeCompletion>
where
    H: for<'a> CompletionFn<'a, E>,
    E: 'static,
{
    Box::new(CompletionHandler {
        handler,
        _error: std::marker::PhantomData,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_keep_at_most_one_hundred_values_and_say_so() {
        let exact = Completion::from_values((0..100).map(|i| i.to_string()));
        assert_eq!(
            (exact.values().len(), exact.has_more(), exact.total()),
            (100, false, None)
        );
        let over = Completion::from_values((0..101).map(|i| i.to_string()));
        assert_eq!(
            (over.values().len(), over.has_more(), over.total()),
            (100, true, Some(101))
        );
    }
}
