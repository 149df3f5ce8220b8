//! The PostgreSQL task store against a real server: the store contract, and two instances
//! sharing one database. Needs `TOLLGATE_TEST_POSTGRES_URL`; `scripts/test` starts a
//! throwaway PostgreSQL and runs these with `--ignored`.

#![cfg(feature = "postgres")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::time::Duration;

use support::{post, task_server};
use tollgate::json::JsonValue;
use tollgate::task::PostgresTaskStore;

fn url() -> String {
    std::env::var("TOLLGATE_TEST_POSTGRES_URL")
        .expect("TOLLGATE_TEST_POSTGRES_URL names the test database (scripts/test sets it)")
}

/// A schema of the test's own, `name`: an admin pool outside it (two connections, so one can
/// watch while the other holds a lock), and the options of connections inside it, which carry
/// `name` as their application name.
async fn own_schema(name: &str) -> (sqlx::PgPool, sqlx::postgres::PgConnectOptions) {
    let admin = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(&url())
        .await
        .unwrap();
    sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {name}"))
        .execute(&admin)
        .await
        .unwrap();
    let options: sqlx::postgres::PgConnectOptions = url().parse().unwrap();
    (
        admin,
        options
            .application_name(name)
            .options([("search_path", name)]),
    )
}

/// Drops the schema `own_schema` made, with everything in it.
async fn drop_schema(admin: &sqlx::PgPool, name: &str) {
    sqlx::query(&format!("DROP SCHEMA {name} CASCADE"))
        .execute(admin)
        .await
        .unwrap();
}

/// The backends whose application name is `name`, and the last statement each ran.
async fn backends(admin: &sqlx::PgPool, name: &str) -> Vec<(i32, String)> {
    sqlx::query_as::<_, (i32, String)>(
        "SELECT pid, query FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid",
    )
    .bind(name)
    .fetch_all(admin)
    .await
    .unwrap()
}

/// Waits (at most 10 s) until backend `pid` has ended.
async fn gone(admin: &sqlx::PgPool, name: &str, pid: i32) {
    for _ in 0..200 {
        if !backends(admin, name).await.iter().any(|(p, _)| *p == pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("backend {pid} still there after 10 s");
}

#[tokio::test]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn postgres_keeps_the_store_contract() {
    let store = PostgresTaskStore::connect(&url()).await.unwrap();
    let prefix = format!("contract-{}-", std::process::id());
    assert_eq!(
        tollgate::__private::check_store_contract(&store, &prefix).await,
        Ok(())
    );
}

/// The count the capacity check reads, in a schema of its own: rows a counterless table held
/// are counted when the store opens it, a refused duplicate does not count, a purge gives its
/// rows back.
#[tokio::test]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn postgres_counts_rows_for_the_bound() {
    use tollgate::task::{TaskRow, TaskStore, TaskStoreErrorKind};
    let schema = format!("counted_{}", std::process::id());
    let (admin, options) = own_schema(&schema).await;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .unwrap();
    // An earlier Tollgate's table, two rows in it.
    for statement in [
        "CREATE TABLE tollgate_tasks (id TEXT PRIMARY KEY NOT NULL, version BIGINT NOT NULL, \
         expires_at_ms BIGINT NOT NULL, data TEXT NOT NULL)",
        "INSERT INTO tollgate_tasks VALUES ('x', 1, 9223372036854775807, '{}'), \
         ('y', 1, 5, '{}')",
    ] {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    let store = PostgresTaskStore::from_pool(pool)
        .await
        .unwrap()
        .with_capacity(3);
    let row = |id: &str, expires| TaskRow {
        id: id.into(),
        version: 1,
        expires_at_ms: expires,
        data: "{}".into(),
    };
    let kind = |r: Result<(), tollgate::task::TaskStoreError>| r.map_err(|e| e.kind());
    assert_eq!(store.insert(row("a", u64::MAX / 4)).await, Ok(()));
    assert_eq!(
        kind(store.insert(row("a", u64::MAX / 4)).await),
        Err(TaskStoreErrorKind::Duplicate)
    );
    // Full at three; `y` has expired, so the retry after the purge finds room, once.
    assert_eq!(store.insert(row("b", u64::MAX / 4)).await, Ok(()));
    assert_eq!(
        kind(store.insert(row("c", u64::MAX / 4)).await),
        Err(TaskStoreErrorKind::Full)
    );
    drop_schema(&admin, &schema).await;
}

/// The store's connections stay open between calls, and one the server ended is replaced: at
/// once when it sat unused long enough to be checked first, else after the one call that finds
/// it gone. A call dropped in the middle of a statement closes its connection. Backends are
/// told apart by an application name of the test's own, in a schema of its own.
#[tokio::test]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn postgres_keeps_connections_open_and_replaces_ended_ones() {
    use tollgate::task::{TaskStore, TaskStoreErrorKind};
    let name = format!("warm_{}", std::process::id());
    let (admin, options) = own_schema(&name).await;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .unwrap();
    let store = PostgresTaskStore::from_pool(pool.clone()).await.unwrap();
    let backends = || backends(&admin, &name);
    let gone = |pid: i32| gone(&admin, &name, pid);
    let serving = || async {
        let found: Vec<i32> = backends()
            .await
            .into_iter()
            .filter(|(_, query)| query.starts_with("SELECT id, version"))
            .map(|(pid, _)| pid)
            .collect();
        assert_eq!(found.len(), 1, "one backend ran the store's load");
        found[0]
    };

    // Call after call on one backend.
    assert_eq!(store.load("missing").await, Ok(None));
    let first = serving().await;
    for _ in 0..20 {
        assert_eq!(store.load("missing").await, Ok(None));
    }
    assert_eq!(serving().await, first);
    let opened = backends().await.len();
    assert!(opened <= 2, "at most the pool's two connections: {opened}");

    // Ended by the server while unused for longer than the check interval: the check finds it
    // gone, and the call runs on a new connection.
    sqlx::query("SELECT pg_terminate_backend($1)")
        .bind(first)
        .execute(&admin)
        .await
        .unwrap();
    gone(first).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(store.load("missing").await, Ok(None));
    let second = serving().await;
    assert_ne!(second, first);

    // Ended right after a call: at most the next call fails (fixed `Backend`), and the one
    // after runs on a new connection.
    assert_eq!(store.load("missing").await, Ok(None));
    sqlx::query("SELECT pg_terminate_backend($1)")
        .bind(second)
        .execute(&admin)
        .await
        .unwrap();
    gone(second).await;
    match store.load("missing").await {
        Ok(None) => {}
        other => assert_eq!(
            other.map_err(|e| e.kind()),
            Err(TaskStoreErrorKind::Backend)
        ),
    }
    assert_eq!(store.load("missing").await, Ok(None));
    let third = serving().await;
    assert_ne!(third, second);

    // Dropped while their statements wait on a lock: each connection keeps its place until its
    // statement ends, so no more backends than the pool's two ever wait beside each other, and
    // is then closed, not kept.
    let mut locker = admin.begin().await.unwrap();
    sqlx::query(&format!(
        "LOCK TABLE {name}.tollgate_tasks IN ACCESS EXCLUSIVE MODE"
    ))
    .execute(&mut *locker)
    .await
    .unwrap();
    for _ in 0..4 {
        let waited = tokio::time::timeout(Duration::from_secs(1), store.load("missing")).await;
        assert!(
            waited.is_err(),
            "the load waits on the lock, or for a place"
        );
    }
    let waiting = backends().await;
    assert!(waiting.len() <= 2, "{waiting:?} for a pool of two");
    locker.rollback().await.unwrap();
    for (pid, _) in &waiting {
        gone(*pid).await;
    }
    assert_eq!(store.load("missing").await, Ok(None));
    let now_serving = serving().await;
    assert!(!waiting.iter().any(|(pid, _)| *pid == now_serving));

    drop(store);
    pool.close().await;
    drop_schema(&admin, &name).await;
}

/// A kept connection left unused past the pool's idle timeout is closed by the store's sweep,
/// though no call comes to find it; the kept connections close with their pool.
#[tokio::test]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn postgres_closes_connections_unused_past_the_idle_timeout() {
    use tollgate::task::TaskStore;
    let name = format!("idle_{}", std::process::id());
    let (admin, options) = own_schema(&name).await;
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .idle_timeout(Duration::from_secs(1))
        .connect_with(options)
        .await
        .unwrap();
    let store = PostgresTaskStore::from_pool(pool.clone()).await.unwrap();
    assert_eq!(store.load("missing").await, Ok(None));
    let kept: Vec<i32> = backends(&admin, &name)
        .await
        .into_iter()
        .filter(|(_, query)| query.starts_with("SELECT id, version"))
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(kept.len(), 1, "one backend ran the store's load");
    gone(&admin, &name, kept[0]).await;
    assert_eq!(store.load("missing").await, Ok(None));
    // Its owner closes the pool: the next call fails with the fixed `Backend`, and the
    // connection kept from the pool is closed with it.
    let kept = backends(&admin, &name).await;
    pool.close().await;
    assert_eq!(
        store.load("missing").await.map_err(|e| e.kind()),
        Err(tollgate::task::TaskStoreErrorKind::Backend)
    );
    for (pid, _) in kept {
        gone(&admin, &name, pid).await;
    }
    drop(store);
    drop_schema(&admin, &name).await;
}

/// Sequential scans of the schema's task table counted so far, once the backends of
/// `name` have ended (a backend reports its counters as it ends).
async fn task_table_scans(admin: &sqlx::PgPool, name: &str) -> i64 {
    for (pid, _) in backends(admin, name).await {
        gone(admin, name, pid).await;
    }
    sqlx::query_scalar::<_, i64>(
        "SELECT seq_scan FROM pg_stat_user_tables WHERE schemaname = $1 \
         AND relname = 'tollgate_tasks'",
    )
    .bind(name)
    .fetch_one(admin)
    .await
    .unwrap()
}

/// Tasks are found through the index however small the table was when PostgreSQL settled on a
/// plan for the lookup: a plan made while the table held a few rows (once it has been vacuumed,
/// so PostgreSQL knows it is small) would read the whole table on every later call until the
/// table is next analyzed. Needs PostgreSQL 15 or later (a backend reports its counters as it
/// ends).
#[tokio::test]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn postgres_finds_tasks_through_the_index_once_the_table_has_grown() {
    use tollgate::task::{TaskRow, TaskStore};
    let name = format!("scans_{}", std::process::id());
    let (admin, options) = own_schema(&name).await;
    let store = |options: sqlx::postgres::PgConnectOptions| async move {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .unwrap();
        PostgresTaskStore::from_pool(pool).await.unwrap()
    };
    let row = |i: usize| TaskRow {
        id: format!("task-{i}"),
        version: 1,
        expires_at_ms: u64::MAX / 4,
        data: "{}".into(),
    };
    // The table made, a few rows in it, vacuumed while small (as autovacuum would), and the
    // scans so far counted once its maker's backend has ended.
    let maker = store(options.clone()).await;
    for i in 0..5 {
        assert_eq!(maker.insert(row(i)).await, Ok(()));
    }
    drop(maker);
    sqlx::query(&format!("VACUUM ANALYZE {name}.tollgate_tasks"))
        .execute(&admin)
        .await
        .unwrap();
    let before = task_table_scans(&admin, &name).await;
    // On a connection of its own: more lookups than PostgreSQL needs to keep one plan for
    // them; then the table grows, and every lookup still reads one row through the index.
    let tasks = store(options).await;
    for _ in 0..20 {
        assert!(tasks.load("task-0").await.unwrap().is_some());
    }
    for i in 5..500 {
        assert_eq!(tasks.insert(row(i)).await, Ok(()));
    }
    for i in 0..50 {
        assert!(tasks.load(&format!("task-{i}")).await.unwrap().is_some());
    }
    drop(tasks);
    assert_eq!(task_table_scans(&admin, &name).await, before);
    drop_schema(&admin, &name).await;
}

async fn instance(store: PostgresTaskStore) -> std::net::SocketAddr {
    task_server(store, 300, "done").await
}

async fn send(addr: std::net::SocketAddr, method: &str, params: &str, name: &str) -> JsonValue {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"extensions":{{"io.modelcontextprotocol/tasks":{{}}}}}}}}}}}}"#
    );
    let r = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", name),
        ],
        body.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.result()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs TOLLGATE_TEST_POSTGRES_URL; scripts/test starts PostgreSQL and runs it"]
async fn two_instances_share_tasks_through_postgres() {
    let a = instance(PostgresTaskStore::connect(&url()).await.unwrap()).await;
    let b = instance(PostgresTaskStore::connect(&url()).await.unwrap()).await;
    let created = send(a, "tools/call", r#""name":"job","arguments":{}"#, "job").await;
    let id = created
        .get("taskId")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned();
    let params = format!(r#""taskId":"{id}""#);
    // Visible on B at once, completed by A's worker, read on B.
    let seen = send(b, "tasks/get", &params, &id).await;
    assert_eq!(
        seen.get("status").and_then(JsonValue::as_str),
        Some("working")
    );
    let mut status = String::new();
    for _ in 0..50 {
        let r = send(b, "tasks/get", &params, &id).await;
        status = r
            .get("status")
            .and_then(JsonValue::as_str)
            .unwrap()
            .to_owned();
        if status == "completed" {
            assert_eq!(support::first_text(r.get("result").unwrap()), "done");
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, "completed");
}
