//! What a server offers, from the outside, one test binary: prompts and completions
//! (`prompts`), resources (`resources`, and read fallbacks: `fallback`), skills (`skills`), tasks (`tasks`, `typed_tasks`, and 2025-11-25's: `requested_tasks`), the
//! typed family's derived schemas and bindings (`derivation`, `recursive_types`), and the
//! `#[tool]` macro (`macros`, and `compile_fail`: its misuse pinned by trybuild against
//! `tests/ui`; both need the `macros` feature). Servers start on ephemeral loopback ports through
//! the shared `support` harness. Each module's own doc says what it checks.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests and their shared harness"
)]

mod support;

mod catalog {
    #[cfg(feature = "macros")]
    mod compile_fail;
    mod derivation;
    mod fallback;
    #[cfg(feature = "macros")]
    mod macros;
    mod prompts;
    mod recursive_types;
    mod requested_tasks;
    mod resources;
    mod skills;
    mod tasks;
    mod typed_tasks;
}
