//! Durable tasks per second: create → complete → `tasks/get` cycles through a Tollgate endpoint,
//! beside the store's own limit (the same SQL statements run straight through sqlx).
//!
//! ```text
//! tasks-bench tollgate <memory|sqlite:PATH|postgres:URL> [--seconds S] [--concurrency C]
//! tasks-bench bare <sqlite:PATH|postgres:URL> [--seconds S] [--concurrency C] [--loads L]
//! tasks-bench prepare <sqlite:PATH|postgres:URL>
//! ```
//! Common options: `--warmup W` (seconds run before the measured window, default 1) and
//! `--workers N` (tokio worker threads, default: the machine's cores). `bare` also takes
//! `--ping`, a diagnostic: its SQLite pool runs sqlx's `test_before_acquire` ping (sqlx's
//! default; off in `SqliteTaskStore`'s pool, so off here by default), which costs one more
//! round trip to the connection's thread before every statement.
//!
//! `tollgate`: one endpoint (2026-07-28, the tasks extension, the named store wrapped in a
//! counter of store calls) with one tool, `job`, task support required, whose work completes at
//! once. It is served in process through `McpService::serve` (no socket; requests and responses
//! are the HTTP ones). C loops each repeat one cycle: `tools/call` creating a task, `tasks/get`
//! until the task reads `completed` (the loop yields to the runtime after each `working` answer),
//! then one more `tasks/get` of the completed task. Only cycles ending inside the measured window
//! count.
//!
//! `bare`: the store's limit. C loops each run the statements one such cycle costs the store,
//! with the very statement texts of `crates/tollgate/src/tasks/sql.rs` and record texts of the
//! same shape and size: SQLite through a pool opened as `SqliteTaskStore` opens its own (WAL,
//! busy timeout 5 s, 4 connections, no ping before each statement), PostgreSQL each loop on a connection of its own that is
//! never checked (`PostgresTaskStore` keeps its connections open between calls and checks one
//! only after 500 ms unused: `crates/tollgate/src/tasks/warm.rs`) and is set up as the store
//! sets up its own (`tollgate::task::POSTGRES_CONNECTION_SETUP`):
//!
//! 1. `INSERT INTO tollgate_tasks … SELECT … WHERE (SELECT n FROM tollgate_task_count …) < cap`
//!    (the row count a trigger keeps, so the insert also updates `tollgate_task_count`)
//!    — `TaskCreation::spawn` (tasks/runner.rs) → `TaskStore::insert`, version 1, `working`;
//! 2. `UPDATE tollgate_tasks SET version, expires_at_ms, data WHERE id = ? AND version = 1` —
//!    the worker's end, `run` → `Tasks::update_from` the record it inserted →
//!    `TaskStore::replace` (version 2, `completed`, with the result; no read first, unless the
//!    swap fails);
//! 3. L × `SELECT id, version, expires_at_ms, data FROM tollgate_tasks WHERE id = ?` — the
//!    `tasks/get`s that read the store (`methods/tasks.rs` `get` → `own_task` →
//!    `Tasks::lookup_for_client` → `lookup` → `load`): a poll that overtakes the work. A
//!    `tasks/get` of a task this instance saw end (its worker wrote `completed`, or an earlier
//!    read found it) reads no row: a terminal record never changes (`tasks/decoded.rs`), so
//!    the final `tasks/get`, and a poll after the worker's write, cost no statement.
//!
//! So a cycle is 1 INSERT + 1 UPDATE + L SELECTs. L is how many loads the Tollgate run made
//! per cycle (it reports them in `statements_per_cycle`, beside `polls_per_cycle`); pass it
//! with `--loads` (a fraction runs one more SELECT with that probability).
//! `Tasks::maybe_purge` adds one `DELETE … WHERE expires_at_ms <= ?` per endpoint per minute:
//! it falls in the warm-up here and the bare loop leaves it out. The Tollgate run reports the
//! store calls it really made per cycle (`statements_per_cycle`), so the mix can be checked.
//!
//! `prepare`: creates the schema through the store itself (`from_pool`: table, index, count and
//! its triggers) and empties the table, for `pgbench`. Both other modes do the same first, so
//! every run starts from an empty table with the count at zero.
//!
//! Each run prints one JSON line: `{"mode", "store", "cycles_per_s", "cycles", ...}`.

mod tasks_client;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use tollgate::json::JsonObject;
use tollgate::task::{
    DEFAULT_SQL_TASK_CAPACITY, InMemoryTaskStore, PostgresTaskStore, SqliteTaskStore, StoreFuture,
    TaskCreation, TaskError, TaskRow, TaskStore,
};
use tollgate::tool::{CompleteResult, OperationResult, TaskSupport};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The longest one cycle may take before the run fails (a stuck task, a dead database).
const CYCLE_BOUND: Duration = Duration::from_secs(30);

// The statements of crates/tollgate/src/tasks/sql.rs, character for character.
const SQLITE_INSERT: &str = "INSERT INTO tollgate_tasks (id, version, expires_at_ms, data) \
     SELECT ?1, ?2, ?3, ?4 WHERE (SELECT n FROM tollgate_task_count WHERE one = 1) < ?5";
const SQLITE_LOAD: &str =
    "SELECT id, version, expires_at_ms, data FROM tollgate_tasks WHERE id = ?1";
const SQLITE_REPLACE: &str = "UPDATE tollgate_tasks SET version = ?1, expires_at_ms = ?2, data = ?3 \
     WHERE id = ?4 AND version = ?5";
const PG_INSERT: &str = "INSERT INTO tollgate_tasks (id, version, expires_at_ms, data) \
     SELECT $1, $2, $3, $4 WHERE (SELECT n FROM tollgate_task_count WHERE one = 1) < $5";
const PG_LOAD: &str = "SELECT id, version, expires_at_ms, data FROM tollgate_tasks WHERE id = $1";
const PG_REPLACE: &str = "UPDATE tollgate_tasks SET version = $1, expires_at_ms = $2, data = $3 \
     WHERE id = $4 AND version = $5";

/// Runs `$body` with `$query` made from the connection's own statement text (SQLite or
/// PostgreSQL placeholders) and `$on` what it runs on: sqlx's query types differ per database.
macro_rules! per_conn {
    ($self:expr, $sqlite:expr, $pg:expr, |$query:ident, $on:ident| $body:expr) => {
        match $self {
            Self::Sqlite(pool) => {
                let $query = sqlx::query($sqlite);
                let $on = &*pool;
                $body
            }
            Self::Postgres(conn) => {
                let $query = sqlx::query($pg);
                let $on = &mut *conn;
                $body
            }
        }
    };
}

/// Which store a run uses.
#[derive(Clone, Debug)]
enum Store {
    Memory,
    Sqlite(String),
    Postgres(String),
}

impl Store {
    fn parse(text: &str) -> Result<Self, Error> {
        if text == "memory" {
            Ok(Self::Memory)
        } else if let Some(path) = text.strip_prefix("sqlite:") {
            Ok(Self::Sqlite(path.to_owned()))
        } else if text.starts_with("postgres:") || text.starts_with("postgresql:") {
            // `postgres://user@host:port/db` as it is, or prefixed: `postgres:postgres://...`.
            let url = text
                .strip_prefix("postgres:")
                .filter(|u| u.starts_with("postgres"))
                .unwrap_or(text);
            Ok(Self::Postgres(url.to_owned()))
        } else {
            Err(format!("unknown store {text:?}: memory, sqlite:PATH or postgres://...").into())
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Sqlite(_) => "sqlite",
            Self::Postgres(_) => "postgres",
        }
    }
}

struct Options {
    mode: String,
    store: Store,
    seconds: f64,
    warmup: f64,
    concurrency: usize,
    loads: f64,
    workers: usize,
    /// sqlx's ping before each acquire (sqlx's default; off in Tollgate's SQLite pool).
    ping: bool,
}

fn options() -> Result<Options, Error> {
    let usage = "usage: tasks-bench <tollgate|bare|prepare> <memory|sqlite:PATH|postgres://URL> \
                 [--seconds S] [--concurrency C] [--loads L] [--warmup W] [--workers N] [--ping]";
    let mut args = std::env::args().skip(1);
    let mode = args.next().ok_or(usage)?;
    let store = Store::parse(&args.next().ok_or(usage)?)?;
    let mut o = Options {
        mode,
        store,
        seconds: 5.0,
        warmup: 1.0,
        concurrency: 8,
        loads: 1.0,
        ping: false,
        workers: std::thread::available_parallelism().map_or(2, usize::from),
    };
    while let Some(flag) = args.next() {
        if flag == "--ping" {
            o.ping = true;
            continue;
        }
        let value = args.next().ok_or(usage)?;
        match flag.as_str() {
            "--seconds" => o.seconds = value.parse()?,
            "--warmup" => o.warmup = value.parse()?,
            "--concurrency" => o.concurrency = value.parse()?,
            "--loads" => o.loads = value.parse()?,
            "--workers" => o.workers = value.parse()?,
            _ => return Err(usage.into()),
        }
    }
    let seconds_ok = o.seconds > 0.0 && o.seconds <= 600.0;
    if !seconds_ok || !(0.0..=60.0).contains(&o.warmup) {
        return Err("--seconds must lie in (0, 600], --warmup in [0, 60]".into());
    }
    if o.concurrency == 0 || o.workers == 0 || !(0.0..=100.0).contains(&o.loads) {
        return Err("--concurrency and --workers must be at least 1, --loads in [0, 100]".into());
    }
    Ok(o)
}

/// Store calls made through the endpoint, by kind.
#[derive(Default)]
struct Calls {
    insert: AtomicU64,
    load: AtomicU64,
    replace: AtomicU64,
    purge: AtomicU64,
    /// The first row inserted and the first written by a replace (`TASKS_BENCH_SHOW_ROWS=1`
    /// prints them, to check the bare loop's record texts against them).
    first_insert: Mutex<Option<String>>,
    first_replace: Mutex<Option<String>>,
}

impl Calls {
    fn snapshot(&self) -> [u64; 4] {
        [&self.insert, &self.load, &self.replace, &self.purge].map(|c| c.load(Ordering::Relaxed))
    }
}

fn keep_first(slot: &Mutex<Option<String>>, data: &str) {
    if let Ok(mut slot) = slot.lock()
        && slot.is_none()
    {
        *slot = Some(data.to_owned());
    }
}

/// A store that counts the calls it passes on.
struct Counting<S> {
    inner: S,
    calls: Arc<Calls>,
}

impl<S: TaskStore> TaskStore for Counting<S> {
    fn insert<'a>(&'a self, row: TaskRow) -> StoreFuture<'a, ()> {
        if self.calls.insert.fetch_add(1, Ordering::Relaxed) == 0 {
            keep_first(&self.calls.first_insert, &row.data);
        }
        self.inner.insert(row)
    }

    fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRow>> {
        self.calls.load.fetch_add(1, Ordering::Relaxed);
        self.inner.load(id)
    }

    fn replace<'a>(&'a self, row: TaskRow, expected_version: u64) -> StoreFuture<'a, bool> {
        if self.calls.replace.fetch_add(1, Ordering::Relaxed) == 0 {
            keep_first(&self.calls.first_replace, &row.data);
        }
        self.inner.replace(row, expected_version)
    }

    fn purge_expired<'a>(&'a self, now_ms: u64) -> StoreFuture<'a, u64> {
        self.calls.purge.fetch_add(1, Ordering::Relaxed);
        self.inner.purge_expired(now_ms)
    }
}

/// The task's work completes at once with a one-line result.
async fn job(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, TaskError> {
    let tasks = features
        .require::<TaskCreation>()
        .map_err(|_| TaskError::internal())?;
    Ok(tasks
        .spawn(|_| async { Ok(CompleteResult::from_tool_text("5")) })
        .await?
        .into())
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;

/// What the measured window saw; loops count only while `measuring` is set.
#[derive(Default)]
struct Tally {
    stop: AtomicBool,
    measuring: AtomicBool,
    cycles: AtomicU64,
    polls: AtomicU64,
}

async fn tollgate_loop(service: Arc<McpService>, tally: Arc<Tally>) -> Result<(), Error> {
    let client = tasks_client::Client::new();
    let create = Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"job","arguments":{{}},{META}}}}}"#
    ));
    while !tally.stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let created = client
            .serve(&service, "tools/call", "job", create.clone())
            .await?;
        let id = tasks_client::Client::after(&client.task_id, &created)
            .and_then(|id| std::str::from_utf8(id).ok())
            .ok_or_else(|| {
                format!(
                    "tools/call created no task: {}",
                    String::from_utf8_lossy(&created)
                )
            })?
            .to_owned();
        let get = Bytes::from(format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{{"taskId":"{id}",{META}}}}}"#
        ));
        let mut polls = 0u64;
        loop {
            let text = client
                .serve(&service, "tasks/get", &id, get.clone())
                .await?;
            polls += 1;
            match tasks_client::Client::after(&client.status, &text) {
                Some(b"completed") => break,
                Some(b"working") if started.elapsed() < CYCLE_BOUND => {
                    tokio::task::yield_now().await;
                }
                _ => return Err(format!("tasks/get: {}", String::from_utf8_lossy(&text)).into()),
            }
        }
        let text = client.serve(&service, "tasks/get", &id, get).await?;
        if tasks_client::Client::after(&client.status, &text) != Some(b"completed")
            || client.result.find(&text).is_none()
        {
            return Err(format!("final tasks/get: {}", String::from_utf8_lossy(&text)).into());
        }
        if tally.measuring.load(Ordering::Relaxed) {
            tally.cycles.fetch_add(1, Ordering::Relaxed);
            tally.polls.fetch_add(polls, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// A sqlx pool opened as the Tollgate store opens its own.
#[derive(Clone)]
enum Pool {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

impl Pool {
    async fn open(store: &Store, ping: bool) -> Result<Self, Error> {
        match store {
            Store::Memory => Err("the in-memory store has no SQL limit".into()),
            // SqliteTaskStore::open.
            Store::Sqlite(path) => {
                use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
                let options = SqliteConnectOptions::new()
                    .filename(path)
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .busy_timeout(Duration::from_secs(5));
                let pool = SqlitePoolOptions::new()
                    .max_connections(4)
                    .test_before_acquire(ping)
                    .connect_with(options)
                    .await?;
                Ok(Self::Sqlite(pool))
            }
            // PostgresTaskStore::connect (tasks/sql.rs postgres_pool), each connection set up
            // as the store sets up its own (POSTGRES_CONNECTION_SETUP: no table scans).
            Store::Postgres(url) => {
                let pool = sqlx::postgres::PgPoolOptions::new()
                    .max_connections(8)
                    .acquire_timeout(Duration::from_secs(5))
                    .test_before_acquire(ping)
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            sqlx::query(tollgate::task::POSTGRES_CONNECTION_SETUP)
                                .persistent(false)
                                .execute(conn)
                                .await
                                .map(drop)
                        })
                    })
                    .connect(url)
                    .await?;
                Ok(Self::Postgres(pool))
            }
        }
    }

    /// Creates the schema through the store itself, and empties the table (its triggers bring
    /// the count to zero with it).
    async fn prepare(&self) -> Result<(), Error> {
        match self {
            Self::Sqlite(p) => {
                SqliteTaskStore::from_pool(p.clone()).await?;
                sqlx::query("DELETE FROM tollgate_tasks").execute(p).await?;
            }
            Self::Postgres(p) => {
                PostgresTaskStore::from_pool(p.clone()).await?;
                sqlx::query("TRUNCATE tollgate_tasks").execute(p).await?;
                sqlx::query("VACUUM ANALYZE tollgate_tasks")
                    .execute(p)
                    .await?;
            }
        }
        Ok(())
    }

    async fn close(&self) {
        match self {
            Self::Sqlite(p) => p.close().await,
            Self::Postgres(p) => p.close().await,
        }
    }

    /// What one bare loop runs its statements on.
    async fn conn(&self) -> Result<Conn, Error> {
        Ok(match self {
            Self::Sqlite(p) => Conn::Sqlite(p.clone()),
            Self::Postgres(p) => Conn::Postgres(p.acquire().await?.detach()),
        })
    }
}

/// One bare loop's statements: SQLite through the pool, as `SqliteTaskStore` runs them;
/// PostgreSQL on a connection of the loop's own, never pinged (`PostgresTaskStore` keeps its
/// connections between calls and pings one only after 500 ms unused, which a busy loop never
/// is), so the limit is sqlx's and the database's, not a pool's checks.
enum Conn {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgConnection),
}

impl Conn {
    async fn insert(
        &mut self,
        id: &str,
        version: i64,
        expires: i64,
        data: &str,
        capacity: i64,
    ) -> Result<u64, sqlx::Error> {
        Ok(per_conn!(self, SQLITE_INSERT, PG_INSERT, |query, on| query
            .bind(id)
            .bind(version)
            .bind(expires)
            .bind(data)
            .bind(capacity)
            .execute(on)
            .await?
            .rows_affected()))
    }

    async fn load(&mut self, id: &str) -> Result<Option<(String, i64, i64, String)>, sqlx::Error> {
        match self {
            Self::Sqlite(p) => {
                sqlx::query_as(SQLITE_LOAD)
                    .bind(id)
                    .fetch_optional(&*p)
                    .await
            }
            Self::Postgres(c) => sqlx::query_as(PG_LOAD).bind(id).fetch_optional(c).await,
        }
    }

    async fn replace(
        &mut self,
        version: i64,
        expires: i64,
        data: &str,
        id: &str,
        expected: i64,
    ) -> Result<u64, sqlx::Error> {
        Ok(per_conn!(self, SQLITE_REPLACE, PG_REPLACE, |query, on| {
            query
                .bind(version)
                .bind(expires)
                .bind(data)
                .bind(id)
                .bind(expected)
                .execute(on)
                .await?
                .rows_affected()
        }))
    }
}

/// splitmix64: task ids as random as Tollgate's (128 bits, 32 lowercase hex digits) without a
/// dependency.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

const TTL_MS: u64 = 3_600_000;

/// The record text of a working task as `TaskRecord::to_row` writes it (anonymous caller on
/// `/mcp`, tool `job`, default TTL and poll interval).
fn working_record(now: u64, lease: u64) -> String {
    format!(
        r#"{{"v":1,"owner":"/mcp\na\n","tool":"job","typed":false,"status":"working","created":{now},"updated":{now},"ttl":{TTL_MS},"poll":1000,"lease":{lease},"requests":{{}},"asked":[],"responses":{{}}}}"#
    )
}

/// The same task completed with the one-line result.
fn completed_record(created: u64, now: u64, lease: u64) -> String {
    format!(
        r#"{{"v":1,"owner":"/mcp\na\n","tool":"job","typed":false,"status":"completed","created":{created},"updated":{now},"ttl":{TTL_MS},"poll":1000,"lease":{lease},"requests":{{}},"asked":[],"responses":{{}},"result":"{{\"resultType\":\"complete\",\"content\":[{{\"type\":\"text\",\"text\":\"5\"}}]}}"}}"#
    )
}

async fn bare_loop(pool: Pool, loads: f64, seed: u64, tally: Arc<Tally>) -> Result<(), Error> {
    let mut conn = pool.conn().await?;
    let mut random = Random(seed);
    let whole = loads.floor();
    let fraction = loads - whole;
    let capacity = i64::try_from(DEFAULT_SQL_TASK_CAPACITY)?;
    while !tally.stop.load(Ordering::Relaxed) {
        let id = format!("{:016x}{:016x}", random.next(), random.next());
        let created = now_ms();
        let lease = created + 10_000;
        let expires = i64::try_from(created + TTL_MS)?;
        // 1. The insert (version 1, working).
        if conn
            .insert(&id, 1, expires, &working_record(created, lease), capacity)
            .await?
            != 1
        {
            return Err("insert refused (store full?)".into());
        }
        // 2. The worker's end: a compare-and-swap from the version it inserted to 2, completed.
        let done = completed_record(created, now_ms(), lease);
        if conn.replace(2, expires, &done, &id, 1).await? != 1 {
            return Err("replace missed".into());
        }
        // 3. The reads.
        let mut n = whole as u64;
        if fraction > 0.0 && random.unit() < fraction {
            n += 1;
        }
        for _ in 0..n {
            let (_, _, _, data) = conn.load(&id).await?.ok_or("row missing")?;
            if !data.contains(r#""status":"completed""#) {
                return Err("row not completed".into());
            }
        }
        if tally.measuring.load(Ordering::Relaxed) {
            tally.cycles.fetch_add(1, Ordering::Relaxed);
            // The bare loop's reads, in the field the Tollgate loop counts its polls in.
            tally.polls.fetch_add(n, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// Runs the loops: warm-up, then the measured window; returns its length.
async fn window(o: &Options, tally: &Tally, before: impl Fn()) -> Duration {
    tokio::time::sleep(Duration::from_secs_f64(o.warmup)).await;
    before();
    tally.measuring.store(true, Ordering::Relaxed);
    let start = Instant::now();
    tokio::time::sleep(Duration::from_secs_f64(o.seconds)).await;
    tally.measuring.store(false, Ordering::Relaxed);
    let elapsed = start.elapsed();
    tally.stop.store(true, Ordering::Relaxed);
    elapsed
}

async fn join(handles: Vec<tokio::task::JoinHandle<Result<(), Error>>>) -> Result<(), Error> {
    for handle in handles {
        tokio::time::timeout(CYCLE_BOUND, handle)
            .await
            .map_err(|_| "a loop did not stop")???;
    }
    Ok(())
}

fn report(
    o: &Options,
    tally: &Tally,
    elapsed: Duration,
    statements: serde_json::Value,
    extra: serde_json::Value,
) {
    let cycles = tally.cycles.load(Ordering::Relaxed);
    let per_cycle = |n: u64| {
        if cycles == 0 {
            0.0
        } else {
            n as f64 / cycles as f64
        }
    };
    let mut line = serde_json::json!({
        "mode": o.mode,
        "store": o.store.name(),
        "cycles_per_s": (cycles as f64 / elapsed.as_secs_f64() * 10.0).round() / 10.0,
        "cycles": cycles,
        "seconds": (elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
        "concurrency": o.concurrency,
        "workers": o.workers,
        "polls_per_cycle": (per_cycle(tally.polls.load(Ordering::Relaxed)) * 1000.0).round() / 1000.0,
        "statements_per_cycle": statements,
    });
    if let (Some(line), serde_json::Value::Object(extra)) = (line.as_object_mut(), extra) {
        line.extend(extra);
    }
    println!("{line}");
}

async fn run_tollgate(o: &Options) -> Result<(), Error> {
    let calls = Arc::new(Calls::default());
    let v = ProtocolVersion::V2026_07_28;
    let tool = ToolRegistration::with_name("job", [v])
        .json_object_arguments()
        .handler(job)
        .task_support(TaskSupport::Required)
        .build()?;
    let endpoint =
        Endpoint::with_path("/mcp", [v], Implementation::new("tasks-bench", "1")).add_tool(tool);
    if !matches!(o.store, Store::Memory) {
        let pool = Pool::open(&o.store, o.ping).await?;
        pool.prepare().await?;
        pool.close().await;
    }
    let endpoint = match &o.store {
        // Room for every task a run creates (each lives an hour): the default 10,000 would fill
        // within a second.
        Store::Memory => endpoint.task_store(Counting {
            inner: InMemoryTaskStore::with_capacity(4_000_000),
            calls: calls.clone(),
        }),
        Store::Sqlite(path) => endpoint.task_store(Counting {
            inner: SqliteTaskStore::open(path).await?,
            calls: calls.clone(),
        }),
        Store::Postgres(url) => endpoint.task_store(Counting {
            inner: PostgresTaskStore::connect(url).await?,
            calls: calls.clone(),
        }),
    };
    let service = Arc::new(McpService::new(endpoint.build()?));
    let tally = Arc::new(Tally::default());
    let handles = (0..o.concurrency)
        .map(|_| tokio::spawn(tollgate_loop(service.clone(), tally.clone())))
        .collect();
    let start = Mutex::new([0u64; 4]);
    let elapsed = window(o, &tally, || {
        if let Ok(mut start) = start.lock() {
            *start = calls.snapshot();
        }
    })
    .await;
    let end = calls.snapshot();
    join(handles).await?;
    let start = start.lock().map(|s| *s).unwrap_or_default();
    let cycles = tally.cycles.load(Ordering::Relaxed).max(1) as f64;
    let per = |i: usize| ((end[i] - start[i]) as f64 / cycles * 1000.0).round() / 1000.0;
    let statements =
        serde_json::json!({"insert": per(0), "load": per(1), "replace": per(2), "purge": per(3)});
    if std::env::var_os("TASKS_BENCH_SHOW_ROWS").is_some() {
        for (what, slot) in [
            ("insert", &calls.first_insert),
            ("replace", &calls.first_replace),
        ] {
            if let Ok(slot) = slot.lock() {
                eprintln!(
                    "first {what} row data ({} bytes): {}",
                    slot.as_deref().map_or(0, str::len),
                    slot.as_deref().unwrap_or("")
                );
            }
        }
    }
    report(o, &tally, elapsed, statements, serde_json::json!({}));
    Ok(())
}

async fn run_bare(o: &Options) -> Result<(), Error> {
    let pool = Pool::open(&o.store, o.ping).await?;
    pool.prepare().await?;
    let tally = Arc::new(Tally::default());
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let handles = (0..o.concurrency)
        .map(|i| {
            let seed = seed ^ (i as u64 + 1).wrapping_mul(0xd1b5_4a32_d192_ed03);
            tokio::spawn(bare_loop(pool.clone(), o.loads, seed, tally.clone()))
        })
        .collect();
    let elapsed = window(o, &tally, || {}).await;
    join(handles).await?;
    pool.close().await;
    let cycles = tally.cycles.load(Ordering::Relaxed).max(1) as f64;
    let load = (tally.polls.load(Ordering::Relaxed) as f64 / cycles * 1000.0).round() / 1000.0;
    let statements = serde_json::json!({"insert": 1.0, "load": load, "replace": 1.0, "purge": 0.0});
    report(
        o,
        &tally,
        elapsed,
        statements,
        serde_json::json!({"loads_asked": o.loads, "ping": o.ping}),
    );
    Ok(())
}

fn main() -> Result<(), Error> {
    let o = options()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(o.workers)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        match o.mode.as_str() {
            "tollgate" => run_tollgate(&o).await,
            "bare" => run_bare(&o).await,
            "prepare" => {
                let pool = Pool::open(&o.store, o.ping).await?;
                pool.prepare().await?;
                pool.close().await;
                Ok(())
            }
            other => Err(format!("unknown mode {other:?}: tollgate, bare or prepare").into()),
        }
    })
}
