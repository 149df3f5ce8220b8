//! Facts about a request that every room above may read: what a handler may know
//! ([`context`]), who may make it and how often ([`policy`]), sealed request state ([`state`]),
//! and build-time errors ([`error`]).
//!
//! Knows nothing of methods, registrations or framing beyond the wire room below it.

pub(crate) mod context;
pub(crate) mod error;
pub(crate) mod policy;
pub(crate) mod state;
