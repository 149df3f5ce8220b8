//! Readiness follows PostgreSQL: the built-in server's `/readyz` answers 200 while the task
//! store's database answers, 503 once it is killed (after the one tolerated failed probe), and
//! 200 again after it is back; `/healthz` answers 200 throughout. Needs
//! `TOLLGATE_TEST_POSTGRES_URL` and `TOLLGATE_TEST_POSTGRES_CTL` (`scripts/with-postgres`).

#![cfg(feature = "postgres")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::net::SocketAddr;
use std::time::Duration;

use support::{control, env_var, raw};
use tollgate::task::PostgresTaskStore;
use tollgate::transport::Health;
use tollgate::{Endpoint, Implementation, McpService, ProtocolVersion, Server};

async fn get(addr: SocketAddr, path: &str) -> u16 {
    let request = format!("GET {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n");
    raw(addr, request.as_bytes()).await.status
}

#[tokio::test]
#[ignore = "needs PostgreSQL: scripts/with-postgres"]
async fn readiness_is_503_while_postgres_is_down_and_200_after_it_returns() {
    let store = PostgresTaskStore::connect(&env_var("TOLLGATE_TEST_POSTGRES_URL"))
        .await
        .unwrap();
    let endpoint = Endpoint::with_path(
        "/mcp",
        [ProtocolVersion::V2026_07_28],
        Implementation::new("ready", "1"),
    )
    .task_store(store)
    .build()
    .unwrap();
    // Every request probes, so the answers follow the database without waiting.
    let health = Health::new().readiness_interval(Duration::ZERO);
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), McpService::new(endpoint))
        .await
        .unwrap()
        .health(health);
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));

    assert_eq!(get(addr, "/readyz").await, 200);
    control("TOLLGATE_TEST_POSTGRES_CTL", "kill");
    assert_eq!(
        get(addr, "/readyz").await,
        200,
        "one failed probe is tolerated"
    );
    assert_eq!(get(addr, "/readyz").await, 503, "the second is not");
    assert_eq!(get(addr, "/healthz").await, 200, "the process is alive");
    control("TOLLGATE_TEST_POSTGRES_CTL", "start");
    // The store's kept connections are opened again as the database accepts them.
    let mut status = 0;
    for _ in 0..60 {
        status = get(addr, "/readyz").await;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(status, 200, "ready again once PostgreSQL is back");
}
