//! Facts a request carries, which every room above may read: what a handler may know
//! ([`context`]), the identity admission gave it ([`identity`]), the HTTP request it arrived in
//! ([`request`]), its trace context ([`trace`]) and telemetry, the keys request state is sealed
//! with ([`keyring`]), what becomes of a handler's error ([`report`]), and build-time errors
//! ([`error`]). Who may make a request and how often is
//! the policy room's (`policy/`); sealing and opening request state the state room's (`state/`).
//!
//! Knows nothing of methods, registrations or framing beyond the wire room below it.

pub(crate) mod context;
pub(crate) mod error;
pub(crate) mod identity;
pub(crate) mod keyring;
pub(crate) mod report;
pub(crate) mod request;
pub(crate) mod telemetry;
pub(crate) mod trace;
