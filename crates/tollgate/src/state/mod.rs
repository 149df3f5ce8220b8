//! Request state (2026-07-28 `input_required` round trips): the state room, between the methods
//! that use it and the registry below. `seal.rs` is the envelope (sealed and opened under the
//! endpoint's key ring, bound to the method, name, arguments and principal, with a use nonce for
//! single use); `request.rs` is what a retry brings back opened and verified against its request
//! (and consumed, on a single-use endpoint) and an `input_required` result checked and sealed.
//! Knows nothing of framing or of revisions beyond the context.

pub(crate) mod request;
pub(crate) mod seal;
