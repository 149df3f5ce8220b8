//! Durable stores against real services, one test binary whose tests are all ignored: each needs
//! a service that a wrapper script provides, and `scripts/test` runs each module on its own with
//! a name filter, e.g. `scripts/with-postgres cargo test -p tollgate --all-features --test stores
//! -- --ignored stores::postgres_store::`:
//!
//! - `postgres_store`: the PostgreSQL task store's contract, two instances sharing it
//!   (`scripts/with-postgres`);
//! - `postgres_sessions`: 2025 sessions shared through PostgreSQL (`scripts/with-postgres`, with
//!   `--test-threads=1`, since one test kills the database);
//! - `postgres_catalogs`: catalog events heard on every instance through PostgreSQL
//!   (`scripts/with-postgres`);
//! - `postgres_faults`: PostgreSQL killed under load (`scripts/with-postgres`);
//! - `postgres_readiness`: the built-in server's `/readyz` while PostgreSQL is killed and
//!   restarted (`scripts/with-postgres`);
//! - `sqlite_faults`: SQLite on a full and a read-only filesystem (`scripts/with-small-fs`, as
//!   root).
//!
//! Run one module at a time: each needs its own wrapper, and some kill the service they use.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests and their shared harness"
)]

mod support;

mod stores {
    mod postgres_catalogs;
    mod postgres_faults;
    mod postgres_readiness;
    mod postgres_sessions;
    mod postgres_store;
    mod sqlite_faults;
}
