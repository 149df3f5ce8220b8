//! The handler guard: a handler's future driven with its panics caught, and the
//! invocation features whose cancellation fires when the request is abandoned.

use crate::model::features::{CancelOnDrop, CancellationToken, InvocationFeatures};

pub(crate) use crate::wire::unwind::{BoxFuture, guarded};

/// Fresh invocation features for a handler, and the guard that fires their cancellation token
/// if the request is abandoned before the handler finishes (disarm it after).
pub(crate) fn fresh_features() -> (InvocationFeatures, CancelOnDrop) {
    let token = CancellationToken::new();
    let guard = CancelOnDrop::new(token.clone());
    (InvocationFeatures::new(token), guard)
}
