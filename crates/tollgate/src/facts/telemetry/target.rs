//! What a request names that telemetry may record: a registered tool or prompt, by the
//! registration's own shared name (kept past the request without a copy). Used with and
//! without the `otel` feature; knows nothing of spans or registries.

/// An operation's registered target, for the span name and attributes.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(
    not(feature = "otel"),
    allow(dead_code, reason = "read only with the feature")
)]
pub(crate) enum Target<'a> {
    Tool(&'a std::sync::Arc<str>),
    Prompt(&'a std::sync::Arc<str>),
}
