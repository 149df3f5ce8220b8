//! The bottom room: what goes on the wire, and nothing else. Fixed faults (every code, message
//! and status), replies and the writers that render them under output limits, the standard and
//! mirrored headers (and the head's fields, read in one pass), syntax helpers, and the one
//! table of the methods Tollgate serves.
//!
//! Knows no endpoint, registry, handler or transport: every room above may use it, and it uses
//! none of them (only the request id and capability names from the request model).

pub(crate) mod fault;
pub(crate) mod head;
pub(crate) mod headers;
pub(crate) mod id;
pub(crate) mod level;
pub(crate) mod log;
pub(crate) mod method;
pub(crate) mod reply;
pub(crate) mod stage;
pub(crate) mod syntax;
pub(crate) mod unwind;
