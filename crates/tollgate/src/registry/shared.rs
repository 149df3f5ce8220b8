//! Catalog events heard on every instance through PostgreSQL (feature `postgres`): the
//! [`PostgresCatalogBus`] an endpoint is given with
//! [`EndpointBuilder::catalog_bus`](crate::endpoint::EndpointBuilder::catalog_bus).
//!
//! Owns two tables: `tollgate_catalog_events (catalog, version, name, payload, created)`, the
//! log (one version sequence per catalog, appended under a transaction-scoped advisory lock),
//! and `tollgate_catalog_instances (catalog, instance, applied, refused, seen)`, where every
//! instance records the version it applied, the last it refused and its heartbeat. A publish
//! catches up, checks the event against this instance's catalog, appends it and notifies
//! `tollgate_catalog_events`, applies it here, then waits (bounded) until every instance with a
//! fresh heartbeat has applied it. Each instance follows the log from a task of its own: at
//! start, on every notification, on every heartbeat and after its `LISTEN` connection is lost
//! and opened again, it applies what it has not applied, in order, so a missed notification
//! costs at most one heartbeat. The log keeps the latest event of each name (an instance
//! starting later replays those, in order: events set state) and the newest
//! [`CATALOG_KEPT_EVENTS`]; an older event superseded by a later one of its name is pruned once
//! every live instance applied it. Knows nothing of requests or transports; database errors
//! become [`CatalogEventErrorKind::Backend`] without their text.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tollgate_json::JsonValue;

use crate::registry::event_error::{CatalogEventError, CatalogEventErrorKind};
use crate::registry::live::Live;
use crate::tasks::warm::Warm;

const CREATE_EVENTS: &str = "CREATE TABLE IF NOT EXISTS tollgate_catalog_events (\
     catalog TEXT NOT NULL, \
     version BIGINT NOT NULL, \
     name TEXT NOT NULL, \
     payload TEXT NOT NULL, \
     created TIMESTAMPTZ NOT NULL, \
     PRIMARY KEY (catalog, version))";
const CREATE_INSTANCES: &str = "CREATE TABLE IF NOT EXISTS tollgate_catalog_instances (\
     catalog TEXT NOT NULL, \
     instance TEXT NOT NULL, \
     applied BIGINT NOT NULL, \
     refused BIGINT NOT NULL, \
     seen TIMESTAMPTZ NOT NULL, \
     PRIMARY KEY (catalog, instance))";
/// Serialises schema creation across instances (beside the other stores' locks).
const SCHEMA_LOCK: i64 = 7_367_617_420;
/// The advisory lock class appends to one catalog's log take turns under.
const APPEND_LOCK: i32 = 736_761_742;
/// The channel instances are woken on (the payload names the catalog).
const CHANNEL: &str = "tollgate_catalog_events";
/// Events read per query while catching up.
const PAGE: i64 = 256;
const LOCK: &str = "SELECT pg_advisory_xact_lock($1, hashtext($2))";
const PENDING: &str = "SELECT version, name, payload FROM tollgate_catalog_events \
     WHERE catalog = $1 AND version > $2 ORDER BY version LIMIT $3";
const APPEND: &str = "INSERT INTO tollgate_catalog_events \
     (catalog, version, name, payload, created) \
     SELECT $1, COALESCE(MAX(version), 0) + 1, $2, $3, now() FROM tollgate_catalog_events \
     WHERE catalog = $1 RETURNING version";
const NOTIFY: &str = "SELECT pg_notify('tollgate_catalog_events', $1)";
const RECORD: &str = "INSERT INTO tollgate_catalog_instances \
     (catalog, instance, applied, refused, seen) VALUES ($1, $2, $3, $4, now()) \
     ON CONFLICT (catalog, instance) DO UPDATE SET applied = $3, refused = $4, seen = now()";
/// "Fresh": a heartbeat within `$n` seconds.
macro_rules! fresh {
    ($n:literal) => {
        concat!("seen > now() - make_interval(secs => $", $n, ")")
    };
}
const WAITING: &str = concat!(
    "SELECT count(*) FILTER (WHERE applied < $2), count(*) FILTER (WHERE refused >= $2) \
     FROM tollgate_catalog_instances WHERE catalog = $1 AND ",
    fresh!(3)
);
const PRUNE_EVENTS: &str = concat!(
    "DELETE FROM tollgate_catalog_events e WHERE e.catalog = $1 AND EXISTS (SELECT 1 \
     FROM tollgate_catalog_events n WHERE n.catalog = e.catalog AND n.name = e.name \
     AND n.version > e.version) AND (e.version <= (SELECT COALESCE(MIN(applied), \
     9223372036854775807) FROM tollgate_catalog_instances WHERE catalog = $1 AND ",
    fresh!(2),
    ") OR e.version <= (SELECT MAX(version) FROM tollgate_catalog_events \
     WHERE catalog = $1) - $3)"
);
/// Instances silent for an hour are forgotten.
const PRUNE_INSTANCES: &str = "DELETE FROM tollgate_catalog_instances \
     WHERE catalog = $1 AND seen <= now() - make_interval(secs => 3600)";
const LEAVE: &str = "DELETE FROM tollgate_catalog_instances WHERE catalog = $1 AND instance = $2";
/// How often a publish asks whether the live instances applied its event.
const ACK_POLL: Duration = Duration::from_millis(20);
/// The longest one round of following (catching up and the heartbeat) may take.
const ROUND_BOUND: Duration = Duration::from_secs(10);

/// How long [`Catalogs::publish`](crate::endpoint::Catalogs::publish) waits by default for the
/// live instances to apply an event (10 s); see [`PostgresCatalogBus::ack_timeout`].
///
/// ```
/// assert_eq!(tollgate::endpoint::CATALOG_ACK_TIMEOUT.as_secs(), 10);
/// ```
pub const CATALOG_ACK_TIMEOUT: Duration = Duration::from_secs(10);

/// How often an instance records its heartbeat and looks for events it missed, by default
/// (1 s); an instance is live while its last heartbeat is under five of these old. See
/// [`PostgresCatalogBus::heartbeat`].
///
/// ```
/// assert_eq!(tollgate::endpoint::CATALOG_HEARTBEAT.as_secs(), 1);
/// ```
pub const CATALOG_HEARTBEAT: Duration = Duration::from_secs(1);

/// How many of the newest events a catalog's log keeps by default (1,000), besides the latest
/// of each name; see [`PostgresCatalogBus::max_kept_events`].
///
/// ```
/// assert_eq!(tollgate::endpoint::CATALOG_KEPT_EVENTS, 1_000);
/// ```
pub const CATALOG_KEPT_EVENTS: u32 = 1_000;

fn backend<E>(_: E) -> CatalogEventError {
    CatalogEventError::new(CatalogEventErrorKind::Backend)
}

fn wide(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The catalog event log in PostgreSQL, shared by every instance behind one URL: an event
/// [published](crate::endpoint::Catalogs::publish) on one is applied by all, and an instance that
/// starts later or missed notifications catches up from the log.
///
/// # Examples
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use tollgate::endpoint::PostgresCatalogBus;
///
/// let bus = PostgresCatalogBus::connect("postgres://tollgate@db.internal/tollgate")
///     .await?
///     .ack_timeout(Duration::from_secs(5));
/// # let _ = bus;
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct PostgresCatalogBus {
    warm: Arc<Warm>,
    catalog: Option<Arc<str>>,
    ack_timeout: Duration,
    heartbeat: Duration,
    max_kept: u32,
}

impl PostgresCatalogBus {
    /// Connects to `url` (a pool as
    /// [`PostgresSessionStore::connect`](crate::endpoint::PostgresSessionStore::connect)
    /// makes) and creates the tables if they are missing.
    ///
    /// # Errors
    ///
    /// [`CatalogEventErrorKind::Backend`] when the database is unreachable or refuses.
    pub async fn connect(url: &str) -> Result<Self, CatalogEventError> {
        let pool = crate::tasks::sql::postgres_pool(url)
            .await
            .map_err(backend)?;
        Self::from_pool(pool).await
    }

    /// Uses an existing pool (the session or task store's, say), creating the tables if they
    /// are missing.
    ///
    /// # Errors
    ///
    /// [`CatalogEventErrorKind::Backend`] when the tables cannot be created.
    pub async fn from_pool(pool: sqlx::PgPool) -> Result<Self, CatalogEventError> {
        crate::tasks::sql::create_schema(&pool, SCHEMA_LOCK, &[CREATE_EVENTS, CREATE_INSTANCES])
            .await
            .map_err(backend)?;
        Ok(Self {
            warm: Arc::new(Warm::new(pool, None)),
            catalog: None,
            ack_timeout: CATALOG_ACK_TIMEOUT,
            heartbeat: CATALOG_HEARTBEAT,
            max_kept: CATALOG_KEPT_EVENTS,
        })
    }

    /// Names the log the endpoint's events go to (default: the endpoint's path): endpoints
    /// sharing a database share a log only when they name the same catalog.
    #[must_use]
    pub fn catalog(mut self, name: impl Into<Arc<str>>) -> Self {
        self.catalog = Some(name.into());
        self
    }

    /// How long a publish waits for every live instance to apply its event (default
    /// [`CATALOG_ACK_TIMEOUT`], at least 1 ms); past it the publish returns
    /// [`CatalogEventErrorKind::NotAcknowledged`].
    #[must_use]
    pub fn ack_timeout(mut self, timeout: Duration) -> Self {
        self.ack_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How often this instance records its heartbeat and looks for missed events (default
    /// [`CATALOG_HEARTBEAT`], from 10 ms to 1 min); an instance whose last heartbeat is five of
    /// its own intervals old is no longer waited for. Give every instance the same value.
    #[must_use]
    pub fn heartbeat(mut self, every: Duration) -> Self {
        self.heartbeat = every.clamp(Duration::from_millis(10), Duration::from_secs(60));
        self
    }

    /// How many of the newest events the log keeps whoever applied them (default
    /// [`CATALOG_KEPT_EVENTS`], at least 1); older ones are pruned once a later event of the
    /// same name supersedes them and every live instance applied them, or once they fall out of
    /// this window. The latest event of each name is always kept.
    #[must_use]
    pub fn max_kept_events(mut self, events: u32) -> Self {
        self.max_kept = events.max(1);
        self
    }

    /// A heartbeat is fresh within five intervals, in seconds for `make_interval`.
    fn fresh(&self) -> f64 {
        (self.heartbeat * 5).as_secs_f64()
    }
}

impl crate::endpoint::EndpointBuilder {
    /// Shares the endpoint's catalog events with every instance through `bus` (default: none,
    /// an event is applied on the instance that publishes it only): a
    /// [published](crate::endpoint::Catalogs::publish) event is logged in PostgreSQL, applied
    /// by every instance following the same catalog (each through its own handler, announcing
    /// its own `list_changed`), and acknowledged before the publish returns. Needs
    /// [`live_catalogs`](Self::live_catalogs).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use tollgate::endpoint::PostgresCatalogBus;
    /// use tollgate::{Endpoint, Implementation, ProtocolVersion};
    ///
    /// let bus = PostgresCatalogBus::connect("postgres://tollgate@db.internal/tollgate").await?;
    /// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
    ///     Implementation::new("demo", "1.0.0")).live_catalogs().catalog_bus(bus).build()?;
    /// # let _ = endpoint;
    /// # Ok(()) }
    /// ```
    pub fn catalog_bus(mut self, bus: PostgresCatalogBus) -> Self {
        self.events.bus = Some(bus);
        self
    }
}

/// How the bus applies an event's logged payload and checks one before it is logged
/// (`events.rs` implements it with the endpoint's handlers).
pub(crate) trait Applier: Send + Sync {
    /// Applies event `name` with the logged payload `text` to `live`'s catalog.
    fn apply_text(&self, live: &Arc<Live>, name: &str, text: &str)
    -> Result<(), CatalogEventError>;

    /// Whether event `name` with `payload` would be accepted by `live`'s catalog now.
    fn check(
        &self,
        live: &Arc<Live>,
        name: &str,
        payload: &JsonValue,
    ) -> Result<(), CatalogEventError>;
}

/// What this instance applied of the log.
#[derive(Default)]
struct Applied {
    version: u64,
    refused: u64,
}

/// One endpoint's share of the bus.
pub(crate) struct Shared {
    bus: PostgresCatalogBus,
    catalog: Arc<str>,
    instance: Arc<str>,
    /// Held while applying: the log is applied here in order, one event at a time.
    applied: tokio::sync::Mutex<Applied>,
    following: AtomicBool,
}

impl Shared {
    pub(crate) fn new(bus: PostgresCatalogBus, catalog: &str) -> Self {
        let mut bytes = [0u8; 8];
        let instance = match getrandom::fill(&mut bytes) {
            Ok(()) => crate::wire::syntax::hex(&bytes),
            Err(_) => format!("{:x}-{:p}", std::process::id(), &bytes),
        };
        Self {
            catalog: bus.catalog.clone().unwrap_or_else(|| Arc::from(catalog)),
            bus,
            instance: Arc::from(instance),
            applied: tokio::sync::Mutex::default(),
            following: AtomicBool::new(false),
        }
    }

    /// Starts following the log for `live`, once (inside a runtime; else at the next call).
    pub(crate) fn follow(self: &Arc<Self>, live: &Arc<Live>, applier: &Arc<dyn Applier>) {
        let (live, shared, applier) = (
            Arc::downgrade(live),
            Arc::downgrade(self),
            Arc::downgrade(applier),
        );
        crate::session::spawn_once(&self.following, || follow_log(live, shared, applier));
    }

    /// Applies `rows` in order; a refused one is recorded as refused here and passed.
    fn apply_rows(
        live: &Arc<Live>,
        events: &dyn Applier,
        rows: Vec<(i64, String, String)>,
        applied: &mut Applied,
    ) {
        for (version, name, payload) in rows {
            let version = u64::try_from(version).unwrap_or(0);
            if version <= applied.version {
                continue;
            }
            if events.apply_text(live, &name, &payload).is_err() {
                applied.refused = version;
            }
            applied.version = version;
        }
    }

    /// Applies what the log holds past `applied`, through `conn`.
    async fn catch_up_on(
        &self,
        conn: &mut sqlx::PgConnection,
        live: &Arc<Live>,
        events: &dyn Applier,
        applied: &mut Applied,
    ) -> Result<(), sqlx::Error> {
        loop {
            let rows: Vec<(i64, String, String)> = sqlx::query_as(PENDING)
                .bind(&*self.catalog)
                .bind(wide(applied.version))
                .bind(PAGE)
                .fetch_all(&mut *conn)
                .await?;
            let full = rows.len() == usize::try_from(PAGE).unwrap_or(usize::MAX);
            Self::apply_rows(live, events, rows, applied);
            if !full {
                return Ok(());
            }
        }
    }

    /// Records what this instance applied, and its heartbeat.
    async fn record(&self, applied: &Applied) -> Result<(), sqlx::Error> {
        self.bus
            .warm
            .execute(
                sqlx::query(RECORD)
                    .bind(&*self.catalog)
                    .bind(&*self.instance)
                    .bind(wide(applied.version))
                    .bind(wide(applied.refused)),
            )
            .await
            .map(drop)
    }

    /// Applies every event not applied here yet, records it (the heartbeat), and returns the
    /// version applied.
    pub(crate) async fn catch_up(
        &self,
        live: &Arc<Live>,
        events: &dyn Applier,
    ) -> Result<u64, CatalogEventError> {
        let mut applied = self.applied.lock().await;
        let mut lent = self.bus.warm.lend().await.map_err(backend)?;
        let done = match lent.conn() {
            Ok(conn) => self.catch_up_on(conn, live, events, &mut applied).await,
            Err(e) => Err(e),
        };
        lent.finish(done).map_err(backend)?;
        self.record(&applied).await.map_err(backend)?;
        Ok(applied.version)
    }

    /// Publishes one event: checked here, appended, applied here, acknowledged by the live
    /// instances.
    pub(crate) async fn publish(
        &self,
        live: &Arc<Live>,
        events: &dyn Applier,
        name: &str,
        payload: &JsonValue,
        text: &str,
    ) -> Result<u64, CatalogEventError> {
        let version = {
            let mut applied = self.applied.lock().await;
            let mut lent = self.bus.warm.lend().await.map_err(backend)?;
            let appended = async {
                use sqlx::Connection as _;
                let mut tx = lent.conn()?.begin().await?;
                sqlx::query(LOCK)
                    .bind(APPEND_LOCK)
                    .bind(&*self.catalog)
                    .execute(&mut *tx)
                    .await?;
                self.catch_up_on(&mut tx, live, events, &mut applied)
                    .await?;
                if let Err(refused) = events.check(live, name, payload) {
                    tx.rollback().await?;
                    return Ok(Err(refused));
                }
                let (version,): (i64,) = sqlx::query_as(APPEND)
                    .bind(&*self.catalog)
                    .bind(name)
                    .bind(text)
                    .fetch_one(&mut *tx)
                    .await?;
                sqlx::query(NOTIFY)
                    .bind(&*self.catalog)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(Ok(u64::try_from(version).unwrap_or(0)))
            }
            .await;
            let version = lent.finish_transaction(appended).map_err(backend)??;
            // This instance applies it as every other does: from the log, in order.
            let mut lent = self.bus.warm.lend().await.map_err(backend)?;
            let done = match lent.conn() {
                Ok(conn) => self.catch_up_on(conn, live, events, &mut applied).await,
                Err(e) => Err(e),
            };
            lent.finish(done).map_err(backend)?;
            self.record(&applied).await.map_err(backend)?;
            version
        };
        let acknowledged = self.acknowledged(version).await;
        let _ = self.prune().await;
        acknowledged.map(|()| version)
    }

    /// Waits, within the acknowledgement timeout, until every live instance applied `version`.
    async fn acknowledged(&self, version: u64) -> Result<(), CatalogEventError> {
        let deadline = tokio::time::Instant::now() + self.bus.ack_timeout;
        loop {
            let counts: Result<Option<(i64, i64)>, _> = self
                .bus
                .warm
                .fetch_optional(
                    sqlx::query_as(WAITING)
                        .bind(&*self.catalog)
                        .bind(wide(version))
                        .bind(self.bus.fresh()),
                )
                .await;
            let last = match counts {
                Ok(Some((0, 0)) | None) => return Ok(()),
                Ok(Some((0, refused))) => {
                    return Err(
                        CatalogEventError::new(CatalogEventErrorKind::RefusedElsewhere)
                            .with_count(u64::try_from(refused).unwrap_or(0)),
                    );
                }
                Ok(Some((waiting, _))) => {
                    CatalogEventError::new(CatalogEventErrorKind::NotAcknowledged)
                        .with_count(u64::try_from(waiting).unwrap_or(0))
                }
                Err(_) => CatalogEventError::new(CatalogEventErrorKind::Backend),
            };
            if tokio::time::Instant::now() >= deadline {
                return Err(last);
            }
            tokio::time::sleep_until(deadline.min(tokio::time::Instant::now() + ACK_POLL)).await;
        }
    }

    /// Prunes superseded events every live instance applied (or out of the kept window), and
    /// instances long silent.
    async fn prune(&self) -> Result<(), sqlx::Error> {
        self.bus
            .warm
            .execute(
                sqlx::query(PRUNE_EVENTS)
                    .bind(&*self.catalog)
                    .bind(self.bus.fresh())
                    .bind(i64::from(self.bus.max_kept)),
            )
            .await?;
        self.bus
            .warm
            .execute(sqlx::query(PRUNE_INSTANCES).bind(&*self.catalog))
            .await
            .map(drop)
    }
}

/// Follows the log while the endpoint lives: a `LISTEN` connection (named
/// `tollgate-catalog-<instance>` in `pg_stat_activity`), a round at start, on every
/// notification and every heartbeat; a lost connection is opened again and caught up from.
/// When the endpoint is gone, its instance row is removed.
async fn follow_log(live: Weak<Live>, shared: Weak<Shared>, applier: Weak<dyn Applier>) {
    loop {
        let Some((pool, catalog, instance, beat)) = shared.upgrade().map(|shared| {
            (
                shared.bus.warm.pool().clone(),
                Arc::clone(&shared.catalog),
                Arc::clone(&shared.instance),
                shared.bus.heartbeat,
            )
        }) else {
            return;
        };
        if let Ok(mut listener) = sqlx::postgres::PgListener::connect_with(&pool).await
            && sqlx::query("SELECT set_config('application_name', $1, false)")
                .bind(format!("tollgate-catalog-{instance}"))
                .execute(&mut listener)
                .await
                .is_ok()
            && listener.listen(CHANNEL).await.is_ok()
        {
            loop {
                let (Some(live), Some(shared), Some(applier)) =
                    (live.upgrade(), shared.upgrade(), applier.upgrade())
                else {
                    let _ = sqlx::query(LEAVE)
                        .bind(&*catalog)
                        .bind(&*instance)
                        .execute(&pool)
                        .await;
                    return;
                };
                let _ = tokio::time::timeout(ROUND_BOUND, shared.catch_up(&live, &*applier)).await;
                drop((live, shared, applier));
                // A notification or the heartbeat: another round. Lost: open a new connection
                // and catch up from it.
                if let Ok(Ok(None) | Err(_)) = tokio::time::timeout(beat, listener.try_recv()).await
                {
                    break;
                }
            }
        }
        if live.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(beat).await;
    }
}
