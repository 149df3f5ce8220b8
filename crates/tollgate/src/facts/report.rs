//! What becomes of a handler's error once its fixed answer is decided: the `tollgate::handler`
//! event (the error's type name always, its message only for types the application declared
//! safe to log) and the application's [`ErrorReporter`], which sees the operation, the name,
//! the principal and the error itself.
//!
//! Owns the endpoint's table of error types safe to log and its reporter. Knows nothing of the
//! handler's shape, of methods or of transports: the invokers below the registrations call
//! [`Failures::handler_failed`] with the error in hand, and drop it after.

use std::any::{Any, TypeId, type_name};
use std::error::Error;
use std::sync::Arc;

use crate::facts::context::RequestContext;
use crate::wire::id::RequestId;
use crate::wire::log::HANDLER;
use crate::wire::method::OperationType;

/// Where an application sends its handlers' errors (Sentry, an error table, its own logs).
///
/// Called once per handler that returned `Err` (tools, prompts and resources), after the fixed
/// answer is decided: the client receives the fixed internal error whatever the reporter does,
/// and the error is dropped when it returns. It runs on the request's task, inside the
/// request's span: keep it short and hand slow work to a channel. A closure
/// `Fn(&HandlerErrorReport<'_>)` is a reporter.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
/// use tollgate::endpoint::HandlerErrorReport;
/// use tollgate::{Endpoint, Implementation, ProtocolVersion};
///
/// let failures = Arc::new(AtomicUsize::new(0));
/// let counted = failures.clone();
/// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28], Implementation::new("demo", "1"))
///     .error_reporter(move |report: &HandlerErrorReport<'_>| {
///         // The error's type is always known; its message only for types declared safe.
///         let _ = (report.operation(), report.name(), report.principal(), report.type_name());
///         counted.fetch_add(1, Ordering::Relaxed);
///     })
///     .build()?;
/// # let _ = endpoint;
/// # Ok::<(), tollgate::BuildError>(())
/// ```
pub trait ErrorReporter: Send + Sync + 'static {
    /// Receives one handler's error.
    fn report(&self, report: &HandlerErrorReport<'_>);
}

impl<F> ErrorReporter for F
where
    F: Fn(&HandlerErrorReport<'_>) + Send + Sync + 'static,
{
    fn report(&self, report: &HandlerErrorReport<'_>) {
        self(report);
    }
}

/// One handler's error, as an [`ErrorReporter`] sees it: the request it failed (operation,
/// registered name, principal, request id) and the error.
///
/// # Examples
///
/// A reporter reads the error as `dyn Error` when its type was declared safe to log
/// ([`EndpointBuilder::error_safe_to_log`](crate::endpoint::EndpointBuilder::error_safe_to_log)),
/// and can always downcast to a type of its own:
///
/// ```
/// use tollgate::endpoint::HandlerErrorReport;
///
/// fn report(report: &HandlerErrorReport<'_>) {
///     if let Some(error) = report.error() {
///         eprintln!("{} failed: {error}", report.name().unwrap_or("?"));
///     } else if let Some(code) = report.downcast_ref::<u16>() {
///         eprintln!("failed with {code}");
///     } else {
///         eprintln!("failed with a {}", report.type_name());
///     }
/// }
/// # let _ = report;
/// ```
pub struct HandlerErrorReport<'a> {
    context: &'a RequestContext,
    type_name: &'static str,
    error: &'a dyn Any,
    loggable: Option<&'a (dyn Error + 'static)>,
}

impl<'a> HandlerErrorReport<'a> {
    /// The operation the failed handler served (`tools/call`, `prompts/get`, `resources/read`).
    pub fn operation(&self) -> &'a OperationType {
        &self.context.operation
    }

    /// The tool, prompt or resource the request named, when it has one.
    pub fn name(&self) -> Option<&'a str> {
        self.context.operation_name.as_ref().map(|n| n.as_str())
    }

    /// The admitted principal, or `None` when anonymous.
    pub fn principal(&self) -> Option<&'a str> {
        self.context.admission.principal_name()
    }

    /// The request's id (`None` for a task's work, which runs after its request answered).
    pub fn request_id(&self) -> Option<&'a RequestId> {
        self.context.request_id.as_ref()
    }

    /// The error's type name (`std::any::type_name`; for diagnostics only, not stable across
    /// compiler versions).
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The error as `dyn Error`, when its type was declared safe to log on the endpoint;
    /// otherwise `None` (its text may carry values, URLs or credentials).
    pub fn error(&self) -> Option<&'a (dyn Error + 'static)> {
        self.loggable
    }

    /// The error as `E`, when it is one (whether or not it was declared safe to log: the
    /// reporter is the application's own code).
    pub fn downcast_ref<E: 'static>(&self) -> Option<&'a E> {
        self.error.downcast_ref()
    }
}

impl std::fmt::Debug for HandlerErrorReport<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerErrorReport")
            .field("operation", self.operation())
            .field("name", &self.name())
            .field("type_name", &self.type_name)
            .finish_non_exhaustive()
    }
}

/// An error type declared safe to log, and how to see one as `dyn Error`.
#[derive(Clone, Copy)]
struct Loggable {
    type_id: TypeId,
    view: fn(&dyn Any) -> Option<&(dyn Error + 'static)>,
}

fn view<E: Error + 'static>(error: &dyn Any) -> Option<&(dyn Error + 'static)> {
    error
        .downcast_ref::<E>()
        .map(|e| e as &(dyn Error + 'static))
}

/// An endpoint's handling of handler errors: the types safe to log and the reporter.
#[derive(Clone, Default)]
pub(crate) struct Failures {
    reporter: Option<Arc<dyn ErrorReporter>>,
    loggable: Vec<Loggable>,
}

impl Failures {
    pub(crate) fn set_reporter(&mut self, reporter: impl ErrorReporter) {
        self.reporter = Some(Arc::new(reporter));
    }

    pub(crate) fn add_loggable<E: Error + 'static>(&mut self) {
        let type_id = TypeId::of::<E>();
        if !self.loggable.iter().any(|l| l.type_id == type_id) {
            self.loggable.push(Loggable {
                type_id,
                view: view::<E>,
            });
        }
    }

    /// A handler returned `error` for the request in `context`: one `warn` event
    /// (`tollgate::handler`, `error.type_name`, and `error.message` for a type safe to log), then
    /// the reporter, once.
    #[cold]
    pub(crate) fn handler_failed<E: 'static>(&self, context: &RequestContext, error: &E) {
        let any: &dyn Any = error;
        let type_name = type_name::<E>();
        let type_id = TypeId::of::<E>();
        let loggable = self
            .loggable
            .iter()
            .find(|l| l.type_id == type_id)
            .and_then(|l| (l.view)(any));
        match loggable {
            Some(message) => tracing::event!(
                target: HANDLER,
                tracing::Level::WARN,
                error.type_name = type_name,
                error.message = %message,
                "handler failed",
            ),
            None => tracing::event!(
                target: HANDLER,
                tracing::Level::WARN,
                error.type_name = type_name,
                "handler failed",
            ),
        }
        if let Some(reporter) = &self.reporter {
            reporter.report(&HandlerErrorReport {
                context,
                type_name,
                error: any,
                loggable,
            });
        }
    }
}
