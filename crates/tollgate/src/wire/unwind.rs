//! Boxed futures and driving one with its panics caught: the shape every handler, store and
//! admission controller future takes, shared by the rooms above.
//!
//! Knows nothing of what the futures compute.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A boxed, sendable future.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Starts a future and drives it to its end, turning a panic (while starting or while polling)
/// into `None`.
pub(crate) async fn guarded<'a, T>(start: impl FnOnce() -> BoxFuture<'a, T>) -> Option<T> {
    match std::panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(future) => CatchUnwind(future).await,
        Err(_) => {
            crate::wire::log::panicked();
            None
        }
    }
}

/// Polls a boxed future, turning a panic into `None`.
pub(crate) struct CatchUnwind<'a, T>(pub(crate) BoxFuture<'a, T>);

impl<T> Future for CatchUnwind<'_, T> {
    type Output = Option<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Some(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => {
                crate::wire::log::panicked();
                Poll::Ready(None)
            }
        }
    }
}
