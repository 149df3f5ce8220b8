//! Policy: who may make a request (admission), how often (rate limits), and the operation
//! types a decision can depend on.
//!
//! The policy room (below the model, above the request's facts): the admission contract
//! (`admission.rs`: request, decision, controller), the protected resource with its metadata,
//! challenges and scope checks (`authorization.rs`), and the rules that run them (`rules.rs`:
//! admission with the refused-admission throttle, the request and tool limiters, scope checks,
//! and how a refusal is answered). Knows nothing of methods, registrations or framing.

pub(crate) mod admission;
pub(crate) mod authorization;
pub(crate) mod rules;

pub use self::admission::{Admission, AdmissionController, AdmissionDecision, AdmissionRequest};
pub use self::authorization::{
    MAX_AUTHORIZATION_SERVERS, MAX_AUTHORIZATION_URL_BYTES, MAX_SCOPE_BYTES,
    MAX_SCOPE_IMPLICATIONS, MAX_SCOPES, ProtectedResource, ProtectedResourceBuilder,
};
pub use self::rules::{RateLimitDecision, RateLimiter, TokenBucket};
pub use crate::facts::identity::AdmissionIdentity;
pub use crate::wire::method::OperationType;
