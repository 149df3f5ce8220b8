//! Facts about a request that every room above may read: what a handler may know
//! ([`context`]), the HTTP request it arrived in ([`request`]), its trace context ([`trace`]), who
//! may make it and how often ([`policy`]), sealed request state ([`state`]) and the keys it is
//! sealed with ([`keyring`]), what becomes of a handler's error ([`report`]), and build-time errors
//! ([`error`]).
//!
//! Knows nothing of methods, registrations or framing beyond the wire room below it.

pub(crate) mod admission;
pub(crate) mod authorization;
pub(crate) mod context;
pub(crate) mod error;
pub(crate) mod identity;
pub(crate) mod keyring;
pub(crate) mod policy;
pub(crate) mod report;
pub(crate) mod request;
pub(crate) mod state;
pub(crate) mod telemetry;
pub(crate) mod trace;
