//! The HTTP transport from the outside, one test binary: every module starts real servers on
//! ephemeral loopback ports through the shared `support` harness and writes raw bytes to them.
//!
//! It gathers the 2026-07-28 endpoint (`v2026`), the 2025 revisions beside it (`legacy`), the
//! older revisions (`older`) and their batches (`batches`), the
//! built-in server's edge (`edge`), the 2025 event streams (`sse_streams`), `subscriptions/listen`
//! (`subscriptions`), live catalogs and their announcements (`live_catalogs`), server-to-client requests (`client_requests`), `input_required` and sealed
//! request state (`input_required`, `single_use_state`), interception (`interception`), admission
//! before everything (`admission_order`), session ownership (`session_security`), CORS (`cors`),
//! MCP Apps views and their metadata per revision (`apps`), the axum mount (`axum_mount`), the limits matrix (`limits_matrix`), no-echo (`no_echo`),
//! schemas outside Profile 1 (`foreign`) and
//! what an operator sees through `tracing` (`observe`, `observe_lifecycle`).
//! Each module's own doc says what it checks. The ignored PostgreSQL test of `single_use_state`
//! runs beside a throwaway server: `scripts/with-postgres cargo test -p tollgate --all-features
//! --test http -- --ignored http::single_use_state::`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests and their shared harness"
)]

mod support;

mod http {
    mod admission_order;
    mod apps;
    mod axum_mount;
    mod batches;
    mod client_requests;
    mod cors;
    mod edge;
    mod foreign;
    mod health;
    #[cfg(feature = "request-state")]
    mod input_required;
    mod interception;
    mod legacy;
    mod limits_matrix;
    mod live_catalogs;
    mod no_echo;
    mod observe;
    mod observe_lifecycle;
    mod older;
    mod session_security;
    mod single_use_state;
    mod sse_streams;
    mod subscriptions;
    mod v2026;
    mod views;
}
