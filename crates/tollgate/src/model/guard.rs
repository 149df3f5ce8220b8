//! The handler guard: a handler's future driven with its panics caught, and the
//! invocation features whose cancellation fires when the request is abandoned.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::model::features::{CancelOnDrop, CancellationToken, InvocationFeatures};

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Starts a handler's future and drives it to its end, turning a panic (while starting or while
/// polling) into `None`.
pub(crate) async fn guarded<'a, T>(start: impl FnOnce() -> BoxFuture<'a, T>) -> Option<T> {
    match std::panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(future) => CatchUnwind(future).await,
        Err(_) => None,
    }
}

/// Fresh invocation features for a handler, and the guard that fires their cancellation token
/// if the request is abandoned before the handler finishes (disarm it after).
pub(crate) fn fresh_features() -> (InvocationFeatures, CancelOnDrop) {
    let token = CancellationToken::new();
    let guard = CancelOnDrop::new(token.clone());
    (InvocationFeatures::new(token), guard)
}

/// Polls a boxed future, turning a panic into `None`.
struct CatchUnwind<'a, T>(BoxFuture<'a, T>);

impl<T> Future for CatchUnwind<'_, T> {
    type Output = Option<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Some(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(None),
        }
    }
}
