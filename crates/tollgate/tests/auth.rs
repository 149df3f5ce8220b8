//! Who may call, from the outside, one test binary: admission and rate limits on every revision
//! (`policy`), and the OAuth resource server (`oauth`, feature `oauth`) against a local
//! authorization server fixture (`oauth_support`). Servers start on ephemeral loopback ports
//! through the shared `support` harness. Each module's own doc says what it checks.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "integration tests and their shared harness"
)]

mod support;

mod auth {
    #[cfg(feature = "oauth")]
    mod oauth;
    #[cfg(feature = "oauth")]
    mod oauth_support;
    mod policy;
}
