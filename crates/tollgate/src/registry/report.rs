//! The endpoint builder's settings for handler errors: the application's reporter and the error
//! types whose messages may be logged. What becomes of an error is `facts::report`'s.

use std::error::Error;

use crate::facts::report::ErrorReporter;
use crate::registry::builder::EndpointBuilder;

impl EndpointBuilder {
    /// Sends every handler error (tools, prompts, resources, completions) to `reporter`, once, after the
    /// fixed answer is decided; the reporter cannot change the answer. Default: none (the
    /// `tollgate::handler` event alone). A second call replaces the first.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::endpoint::HandlerErrorReport;
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28], Implementation::new("demo", "1"))
    ///     .error_reporter(|report: &HandlerErrorReport<'_>| eprintln!("{}", report.type_name()))
    ///     .build()?;
    /// # let _ = endpoint;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn error_reporter(mut self, reporter: impl ErrorReporter) -> Self {
        self.failures.set_reporter(reporter);
        self
    }

    /// Declares that a handler error of type `E` may be logged with its message (its `Display`
    /// in the `tollgate::handler` event's `error.message`, and as `dyn Error` to the reporter).
    /// Default: no type; an error's type name alone is logged, because errors such as sqlx's or
    /// reqwest's can carry values, URLs or credentials. Handlers' bounds do not change: the
    /// error type is matched when it occurs.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// #[derive(Debug)]
    /// struct OutOfStock;
    /// impl std::fmt::Display for OutOfStock {
    ///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    ///         f.write_str("out of stock")
    ///     }
    /// }
    /// impl std::error::Error for OutOfStock {}
    ///
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28], Implementation::new("shop", "1"))
    ///     .error_safe_to_log::<OutOfStock>()
    ///     .build()?;
    /// # let _ = endpoint;
    /// # Ok::<(), tollgate::BuildError>(())
    /// ```
    pub fn error_safe_to_log<E: Error + 'static>(mut self) -> Self {
        self.failures.add_loggable::<E>();
        self
    }
}
