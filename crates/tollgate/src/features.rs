//! Invocation features: optional, request-scoped behaviour a handler can look up, starting
//! with cooperative cancellation.
//!
//! Owns [`InvocationFeatures`] and [`CancellationToken`]. Knows nothing of the transport: the
//! dispatcher cancels the token when the request is abandoned (client disconnect, shutdown).

use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// A cooperative cancellation signal for one invocation.
///
/// Tollgate cancels it when the request is abandoned: the client disconnects, or the server
/// shuts down. Handlers check it between expensive steps or await [`cancelled`](Self::cancelled)
/// in a `select!`; work that outlives the request should watch it.
///
/// # Examples
///
/// ```
/// use tollgate::CancellationToken;
///
/// let token = CancellationToken::new();
/// assert!(!token.is_cancelled());
/// token.cancel();
/// assert!(token.is_cancelled());
/// ```
#[derive(Clone, Default)]
pub struct CancellationToken {
    inner: Arc<Signal>,
}

#[derive(Default)]
struct Signal {
    cancelled: AtomicBool,
    notify: Notify,
}

impl CancellationToken {
    /// A token not yet cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether cancellation was signalled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// Signals cancellation (idempotent).
    pub fn cancel(&self) {
        if !self.inner.cancelled.swap(true, Ordering::AcqRel) {
            self.inner.notify.notify_waiters();
        }
    }

    /// Completes once cancellation is signalled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

impl fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancellationToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// Cancels the token when dropped unless disarmed: the request future was abandoned.
pub(crate) struct CancelOnDrop(Option<CancellationToken>);

impl CancelOnDrop {
    pub(crate) fn new(token: CancellationToken) -> Self {
        Self(Some(token))
    }

    pub(crate) fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

/// The feature a handler required was not available for this invocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MissingFeature {
    type_name: &'static str,
}

impl MissingFeature {
    /// The Rust type that was required.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl fmt::Display for MissingFeature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invocation feature `{}` is not available for this request",
            self.type_name
        )
    }
}

impl std::error::Error for MissingFeature {}

/// Request-scoped optional behaviour, looked up by type.
///
/// Today every invocation carries a [`CancellationToken`]; progress reporting and task creation
/// join it when those features land.
///
/// # Examples
///
/// ```
/// use tollgate::{CancellationToken, InvocationFeatures};
///
/// let features = InvocationFeatures::for_test();
/// let token: &CancellationToken = features.require::<CancellationToken>()?;
/// assert!(!token.is_cancelled());
/// assert!(features.find::<String>().is_none());
/// # Ok::<(), tollgate::MissingFeature>(())
/// ```
pub struct InvocationFeatures {
    cancellation: CancellationToken,
    others: Vec<Box<dyn Any + Send + Sync>>,
}

impl InvocationFeatures {
    pub(crate) fn new(cancellation: CancellationToken) -> Self {
        Self {
            cancellation,
            others: Vec::new(),
        }
    }

    /// Features for unit-testing application code: a fresh cancellation token and nothing else.
    pub fn for_test() -> Self {
        Self::new(CancellationToken::new())
    }

    /// The feature of type `T`, if this invocation has it.
    pub fn find<T: Any>(&self) -> Option<&T> {
        (&self.cancellation as &dyn Any)
            .downcast_ref::<T>()
            .or_else(|| {
                self.others
                    .iter()
                    .find_map(|f| (&**f as &dyn Any).downcast_ref::<T>())
            })
    }

    /// The feature of type `T`.
    ///
    /// # Errors
    ///
    /// [`MissingFeature`] when this invocation does not have it.
    pub fn require<T: Any>(&self) -> Result<&T, MissingFeature> {
        self.find::<T>().ok_or(MissingFeature {
            type_name: std::any::type_name::<T>(),
        })
    }

    /// The cancellation token (always present).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }
}

impl fmt::Debug for InvocationFeatures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvocationFeatures")
            .field("cancellation", &self.cancellation)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn cancelled_wakes_waiters_and_drop_guard_cancels() {
        let token = CancellationToken::new();
        let waiter = {
            let token = token.clone();
            tokio::spawn(async move { token.cancelled().await })
        };
        drop(CancelOnDrop::new(token.clone()));
        assert!(token.is_cancelled());
        assert!(waiter.await.is_ok());

        let kept = CancellationToken::new();
        CancelOnDrop::new(kept.clone()).disarm();
        assert!(!kept.is_cancelled());
    }
}
