//! The model: what an application builds and a handler returns. Tool, prompt, resource and
//! skill registrations, content, results and input requests, schema derivation for typed tools, the
//! projection of a completed tool result, and the handler guard.
//!
//! Knows nothing of the wire framing, sessions or revisions' envelopes: the rooms above read
//! these values; nothing here imports from them.

pub(crate) mod app;
pub(crate) mod cache;
pub(crate) mod content;
pub(crate) mod decimal;
pub(crate) mod derive;
pub(crate) mod features;
pub(crate) mod guard;
pub(crate) mod handler;
pub(crate) mod input;
pub(crate) mod intercept;
pub(crate) mod origin;
pub(crate) mod projection;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod result;
pub(crate) mod skill;
pub(crate) mod subscription;
pub(crate) mod tool;
