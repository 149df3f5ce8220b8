//! Catalog events across instances through PostgreSQL: two endpoints on one database (a publish
//! on one is applied on the other before it returns, and the other's listener hears
//! `list_changed`); an instance started after the events catches up; a `LISTEN` connection
//! killed is opened again and what it missed applied; a refused event changes no catalog and
//! logs nothing; an instance with a fresh heartbeat that never acknowledges ends the publish
//! with a typed error after the (short) acknowledgement timeout, one with a stale heartbeat is
//! not waited for; the log's kept window at and one past its bound; an MCP Apps view published
//! with its tool served (and withdrawn) on every instance. Needs
//! `TOLLGATE_TEST_POSTGRES_URL` (`scripts/with-postgres`); each test keeps its tables in a
//! schema of its own.

#![cfg(feature = "postgres")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use support::{Open, env_var, post_request, send, start};
use tollgate::endpoint::{CatalogChange, CatalogEventErrorKind, Catalogs, PostgresCatalogBus};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::tool::{CompleteResult, OperationResult};
use tollgate::transport::McpService;
use tollgate::{
    AppView, BuildErrorKind, Endpoint, Implementation, InvocationFeatures, ProtocolVersion,
    RequestContext, ToolArguments, ToolRegistration,
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;

/// A pool whose tables live in `schema` (created if missing).
async fn pool_in(schema: &str) -> sqlx::PgPool {
    use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
    let url = env_var("TOLLGATE_TEST_POSTGRES_URL");
    let admin = PgPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .unwrap();
    sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
        .execute(&admin)
        .await
        .unwrap();
    let options: PgConnectOptions = url.parse().unwrap();
    PgPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options.options([("search_path", schema)]))
        .await
        .unwrap()
}

async fn bus_in(schema: &str) -> PostgresCatalogBus {
    PostgresCatalogBus::from_pool(pool_in(schema).await)
        .await
        .unwrap()
}

async fn answer(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("wrapped").into())
}

fn tool(name: &str) -> Result<ToolRegistration, tollgate::BuildError> {
    ToolRegistration::with_name(name, [V26])
        .json_object_arguments()
        .handler(answer)
        .build()
}

/// `offer` sets whether `gift` is offered (`{"enabled": bool}`); `add` adds the tool its
/// payload names (refused when it is there).
fn endpoint(bus: PostgresCatalogBus) -> Endpoint {
    Endpoint::with_path("/mcp", [V26], Implementation::new("cluster", "1"))
        .add_tool(tool("first").unwrap())
        .live_catalogs()
        .catalog_event("offer", |catalogs: &Catalogs, payload: &JsonValue| {
            let enabled = payload.get("enabled").and_then(JsonValue::as_bool);
            let offered = catalogs.tool_names().iter().any(|t| t == "gift");
            Ok(match (enabled, offered) {
                (Some(true), false) => CatalogChange::new().add_tool(tool("gift")?),
                (Some(false), true) => CatalogChange::new().remove_tool("gift"),
                _ => CatalogChange::new(),
            })
        })
        .catalog_event("add", |_, payload| {
            let name = payload.as_str().unwrap_or("unnamed").to_owned();
            Ok(CatalogChange::new().add_tool(tool(&name)?))
        })
        .catalog_bus(bus)
        .build()
        .unwrap()
}

fn offer(enabled: bool) -> JsonValue {
    JsonObject::builder()
        .insert("enabled", enabled)
        .build()
        .into()
}

fn handle(endpoint: &Endpoint) -> Catalogs {
    endpoint.catalogs().unwrap()
}

async fn rows(pool: &sqlx::PgPool, sql: &str) -> i64 {
    let (n,): (i64,) = sqlx::query_as(sql).fetch_one(pool).await.unwrap();
    n
}

async fn listen(addr: SocketAddr) -> Open {
    let body = support::request(
        "41",
        "subscriptions/listen",
        r#""notifications":{"toolsListChanged":true}"#,
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "subscriptions/listen"),
    ];
    let mut stream = Open::send(addr, post_request(addr, &headers, &body)).await;
    assert!(stream.until("acknowledged").await);
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (scripts/with-postgres)"]
async fn a_publish_is_applied_on_every_instance_before_it_returns() {
    let a = endpoint(bus_in("catalog_ack").await);
    let b = endpoint(bus_in("catalog_ack").await);
    // Both follow the log (as an instance does before it serves).
    handle(&a).sync().await.unwrap();
    handle(&b).sync().await.unwrap();
    let addr = start(McpService::new(b.clone())).await;
    let mut heard = listen(addr).await;

    let version = handle(&a).publish("offer", &offer(true)).await.unwrap();
    assert!(version >= 1);
    // Acknowledged: B has applied it, and answers with it.
    assert!(handle(&b).tool_names().contains(&"gift".to_owned()));
    let list = send(addr, "tools/list", "").await;
    assert!(list.text().contains(r#""name":"gift""#), "{}", list.text());
    assert!(heard.until("notifications/tools/list_changed").await);

    let version_off = handle(&b).publish("offer", &offer(false)).await.unwrap();
    assert_eq!(version_off, version + 1);
    assert_eq!(handle(&a).tool_names(), ["first"]);
    assert_eq!(handle(&b).tool_names(), ["first"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (scripts/with-postgres)"]
async fn an_instance_started_later_catches_up() {
    let pool = pool_in("catalog_late").await;
    let a = endpoint(bus_in("catalog_late").await);
    for enabled in [true, false, true] {
        handle(&a).publish("offer", &offer(enabled)).await.unwrap();
    }
    handle(&a)
        .publish("add", &JsonValue::from("second"))
        .await
        .unwrap();
    // Superseded events every live instance applied are pruned; the latest of each name stays.
    let kept = "SELECT count(*) FROM tollgate_catalog_events WHERE catalog = '/mcp'";
    assert_eq!(rows(&pool, kept).await, 2);

    let c = endpoint(bus_in("catalog_late").await);
    assert_eq!(handle(&c).tool_names(), ["first"]);
    let applied = handle(&c).sync().await.unwrap();
    assert_eq!(applied, handle(&a).sync().await.unwrap());
    assert_eq!(handle(&c).tool_names(), handle(&a).tool_names());
    assert!(handle(&c).tool_names().contains(&"gift".to_owned()));
    assert!(handle(&c).tool_names().contains(&"second".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (scripts/with-postgres)"]
async fn a_killed_listen_connection_is_opened_again_and_caught_up() {
    let pool = pool_in("catalog_reconnect").await;
    let a = endpoint(bus_in("catalog_reconnect").await);
    let b = endpoint(bus_in("catalog_reconnect").await);
    handle(&a).sync().await.unwrap();
    handle(&b).sync().await.unwrap();
    let listeners = "SELECT count(*) FROM pg_stat_activity \
                     WHERE application_name LIKE 'tollgate-catalog-%'";
    // Both listeners are up (each starts with its endpoint's follower).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while rows(&pool, listeners).await < 2 {
        assert!(tokio::time::Instant::now() < deadline, "listeners never up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let killed = "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                  WHERE application_name LIKE 'tollgate-catalog-%') k";
    assert!(rows(&pool, killed).await >= 2);

    // Published while the listeners are down or coming back: still applied everywhere.
    handle(&a).publish("offer", &offer(true)).await.unwrap();
    assert!(handle(&b).tool_names().contains(&"gift".to_owned()));
    // And the listeners are back.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while rows(&pool, listeners).await < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "listeners never back"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    handle(&b).publish("offer", &offer(false)).await.unwrap();
    assert_eq!(handle(&a).tool_names(), ["first"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (scripts/with-postgres)"]
async fn a_refused_event_changes_no_catalog_and_logs_nothing() {
    let pool = pool_in("catalog_refused").await;
    let a = endpoint(bus_in("catalog_refused").await);
    let b = endpoint(bus_in("catalog_refused").await);
    handle(&a).sync().await.unwrap();
    handle(&b).sync().await.unwrap();
    let error = handle(&a)
        .publish("add", &JsonValue::from("first"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CatalogEventErrorKind::Refused);
    assert_eq!(
        error.build_error_kind(),
        Some(BuildErrorKind::DuplicateToolName)
    );
    assert_eq!(handle(&a).tool_names(), ["first"]);
    assert_eq!(handle(&b).tool_names(), ["first"]);
    assert_eq!(handle(&a).version(), 0);
    assert_eq!(handle(&b).version(), 0);
    let logged = "SELECT count(*) FROM tollgate_catalog_events";
    assert_eq!(rows(&pool, logged).await, 0);
    let error = handle(&b)
        .publish("nobody", &JsonValue::from("x"))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CatalogEventErrorKind::UnknownEvent);
    assert_eq!(rows(&pool, logged).await, 0);
}

/// A made-up instance of the catalog `/mcp`, with a fresh heartbeat, that applied (and refused)
/// the versions given.
async fn silent_instance(pool: &sqlx::PgPool, applied: i64, refused: i64) {
    sqlx::query(
        "INSERT INTO tollgate_catalog_instances (catalog, instance, applied, refused, seen) \
         VALUES ('/mcp', 'silent', $1, $2, now()) ON CONFLICT (catalog, instance) \
         DO UPDATE SET applied = $1, refused = $2, seen = now()",
    )
    .bind(applied)
    .bind(refused)
    .execute(pool)
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (scripts/with-postgres)"]
async fn an_instance_that_never_acknowledges_ends_the_wait_with_a_typed_error() {
    let pool = pool_in("catalog_silent").await;
    let bus = bus_in("catalog_silent")
        .await
        .ack_timeout(Duration::from_millis(200));
    let a = endpoint(bus);
    handle(&a).sync().await.unwrap();
    silent_instance(&pool, 0, 0).await;
    let error = handle(&a).publish("offer", &offer(true)).await.unwrap_err();
    assert_eq!(error.kind(), CatalogEventErrorKind::NotAcknowledged);
    assert_eq!(error.count(), 1);
    assert!(!error.to_string().contains("enabled"));
    // Logged and applied here all the same: the silent one catches up when it can.
    assert!(handle(&a).tool_names().contains(&"gift".to_owned()));
    let logged = "SELECT count(*) FROM tollgate_catalog_events";
    assert_eq!(rows(&pool, logged).await, 1);

    // One that applied the next event but refused it.
    silent_instance(&pool, 2, 2).await;
    let error = handle(&a)
        .publish("offer", &offer(false))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), CatalogEventErrorKind::RefusedElsewhere);
    assert_eq!(error.count(), 1);

    // A silent one whose heartbeat is stale (a minute old, past five heartbeats) is not waited
    // for.
    silent_instance(&pool, 0, 0).await;
    sqlx::query(
        "UPDATE tollgate_catalog_instances SET seen = now() - interval '1 minute' \
         WHERE instance = 'silent'",
    )
    .execute(&pool)
    .await
    .unwrap();
    handle(&a).publish("offer", &offer(true)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (scripts/with-postgres)"]
async fn the_log_keeps_its_window_at_and_one_past_the_bound() {
    let pool = pool_in("catalog_window").await;
    let bus = bus_in("catalog_window")
        .await
        .ack_timeout(Duration::from_millis(20))
        .max_kept_events(3);
    let a = endpoint(bus);
    handle(&a).sync().await.unwrap();
    let logged = "SELECT count(*) FROM tollgate_catalog_events";
    // A lagging live instance keeps superseded events: at most the newest three.
    for (n, enabled) in [true, false, true].into_iter().enumerate() {
        silent_instance(&pool, 0, 0).await;
        let error = handle(&a).publish("offer", &offer(enabled)).await;
        assert_eq!(
            error.unwrap_err().kind(),
            CatalogEventErrorKind::NotAcknowledged
        );
        assert_eq!(rows(&pool, logged).await, i64::try_from(n).unwrap() + 1);
    }
    silent_instance(&pool, 0, 0).await;
    let _ = handle(&a).publish("offer", &offer(false)).await;
    assert_eq!(rows(&pool, logged).await, 3);
    let oldest = "SELECT min(version) FROM tollgate_catalog_events";
    assert_eq!(rows(&pool, oldest).await, 2);
}

/// `view` adds (`true`) or removes (`false`) the tool `shop.search` with its view.
fn apps_endpoint(bus: PostgresCatalogBus) -> Endpoint {
    Endpoint::with_path("/mcp", [V26], Implementation::new("cluster", "1"))
        .live_catalogs()
        .catalog_event("view", |_: &Catalogs, payload: &JsonValue| {
            Ok(match payload.as_bool() {
                Some(true) => {
                    let tool = ToolRegistration::with_name("shop.search", [V26])
                        .json_object_arguments()
                        .handler(answer)
                        .app_view("ui://shop/products")
                        .build()?;
                    let view = AppView::html("ui://shop/products", "<!doctype html><p>rows</p>")
                        .prefers_border(true)
                        .build()?;
                    CatalogChange::new().add_tool(tool).add_app_view(view)
                }
                _ => CatalogChange::new()
                    .remove_tool("shop.search")
                    .remove_app_view("ui://shop/products"),
            })
        })
        .catalog_bus(bus)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL (scripts/with-postgres)"]
async fn a_view_published_with_its_tool_is_served_on_every_instance() {
    let a = apps_endpoint(bus_in("catalog_apps").await);
    let b = apps_endpoint(bus_in("catalog_apps").await);
    handle(&a).sync().await.unwrap();
    handle(&b).sync().await.unwrap();
    let addr = start(McpService::new(b.clone())).await;
    let read = || {
        let body = support::request("9", "resources/read", r#""uri":"ui://shop/products""#);
        let headers = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "resources/read"),
            ("Mcp-Name", "ui://shop/products"),
        ];
        async move { support::post(addr, &headers, body.as_bytes()).await }
    };
    assert_eq!(read().await.code(), -32602);

    handle(&a)
        .publish("view", &JsonValue::from(true))
        .await
        .unwrap();
    let served = read().await;
    assert_eq!(served.status, 200, "{}", served.text());
    assert!(
        served.text().contains(r#""mimeType":"text/html;profile=mcp-app","text":"<!doctype html><p>rows</p>","_meta":{"ui":{"prefersBorder":true}}"#),
        "{}",
        served.text()
    );

    handle(&b)
        .publish("view", &JsonValue::from(false))
        .await
        .unwrap();
    assert_eq!(read().await.code(), -32602);
    assert!(handle(&a).tool_names().is_empty());
}
