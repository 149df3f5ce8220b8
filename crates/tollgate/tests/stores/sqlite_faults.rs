//! The SQLite task store when its filesystem fails: full (a 4 MiB tmpfs filled to the last
//! byte) and read-only (the database opened through a read-only mount). Callers get the fixed, retryable 503 `Server busy` at once,
//! never a hang or a panic; the database passes `PRAGMA integrity_check` afterwards; and the same
//! store serves again as soon as space or write access returns. Needs `TOLLGATE_TEST_SMALL_FS`
//! and `TOLLGATE_TEST_SMALL_FS_CTL` (`scripts/with-small-fs`, as root).

#![cfg(feature = "sqlite")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::{Response, control, env_var, post, task_server};
use tollgate::json::JsonValue;
use tollgate::task::{SqliteTaskStore, TaskStoreErrorKind};

fn ctl(action: &str) {
    control("TOLLGATE_TEST_SMALL_FS_CTL", action);
}

async fn instance(path: &Path) -> std::net::SocketAddr {
    instance_with(SqliteTaskStore::open(path).await.unwrap()).await
}

async fn instance_with(store: SqliteTaskStore) -> std::net::SocketAddr {
    task_server(store, 0, "done").await
}

/// A task-creating call; it must end within 8 s whatever the filesystem does.
async fn create(addr: std::net::SocketAddr) -> Response {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}"#;
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "job"),
    ];
    let started = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(8),
        post(addr, &headers, body.as_bytes()),
    )
    .await
    .expect("no hang");
    assert!(started.elapsed() < Duration::from_secs(8));
    r
}

fn created(r: &Response) -> bool {
    r.status == 200 && r.result().get("resultType").and_then(JsonValue::as_str) == Some("task")
}

fn busy(r: &Response) -> bool {
    r.status == 503 && r.code() == -32603 && r.message() == "Server busy"
}

/// `PRAGMA integrity_check` on a connection of its own.
async fn integrity(path: &Path) -> String {
    use sqlx::Connection;
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path);
    let mut conn = sqlx::SqliteConnection::connect_with(&options)
        .await
        .unwrap();
    let (verdict,): (String,) = sqlx::query_as("PRAGMA integrity_check")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    verdict
}

/// Fills the filesystem to its last byte with one file.
fn fill(dir: &Path) -> PathBuf {
    let filler = dir.join("filler");
    let mut file = std::fs::File::create(&filler).unwrap();
    let chunk = vec![0u8; 4096];
    while file.write_all(&chunk).is_ok() {}
    while file.write_all(&[0u8]).is_ok() {}
    let _ = file.flush();
    filler
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs scripts/with-small-fs (root)"]
async fn a_full_or_read_only_filesystem_gives_a_clear_error_and_recovers() {
    let dir = PathBuf::from(env_var("TOLLGATE_TEST_SMALL_FS"));
    let path = dir.join("tasks.sqlite3");
    let addr = instance(&path).await;
    assert!(created(&create(addr).await));

    // Full: calls are refused with 503 until space returns; none hangs or panics.
    let filler = fill(&dir);
    let mut refusals = 0;
    for _ in 0..400 {
        let r = create(addr).await;
        if busy(&r) {
            refusals += 1;
            if refusals == 5 {
                break;
            }
        } else {
            assert!(created(&r), "{}", r.text());
        }
    }
    assert_eq!(refusals, 5, "a full filesystem was refused");
    std::fs::remove_file(&filler).unwrap();
    assert_eq!(integrity(&path).await, "ok");
    assert!(
        created(&create(addr).await),
        "served again once space returned"
    );

    // Read-only: the same database through a read-only mount. Opening it either fails with a
    // typed backend error, or gives a store whose writes are refused with 503 and whose reads
    // still answer, and whose readiness ping fails; the file is left intact either way.
    ctl("ro");
    let ro_path = PathBuf::from(env_var("TOLLGATE_TEST_SMALL_FS_RO")).join("tasks.sqlite3");
    match SqliteTaskStore::open(&ro_path).await {
        Err(e) => {
            assert_eq!(e.kind(), TaskStoreErrorKind::Backend);
            println!("read-only: the store refused to open ({e})");
        }
        Ok(store) => {
            println!("read-only: the store opened; its writes are refused");
            let pinged = tollgate::task::TaskStore::ping(&store).await;
            assert!(
                pinged.is_err(),
                "readiness: a read-only SQLite store is not ready"
            );
            let ro = instance_with(store).await;
            let r = create(ro).await;
            assert!(busy(&r), "{} {}", r.status, r.text());
        }
    }
    ctl("rw");
    let recovered = created(&create(addr).await);
    assert!(recovered, "served again once writable");
    assert_eq!(integrity(&path).await, "ok");
}
