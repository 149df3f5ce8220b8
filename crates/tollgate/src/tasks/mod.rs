//! Tasks: the `io.modelcontextprotocol/tasks` extension on 2026-07-28. Durable task records,
//! the stores that keep them and the in-process runner; the `tasks/get`, `tasks/update` and
//! `tasks/cancel` methods are `methods/tasks.rs`.
//!
//! - `model`: what applications name ([`TaskSupport`](model::TaskSupport), statuses,
//!   [`TaskConfig`](model::TaskConfig), [`TaskError`](model::TaskError)) and timestamps;
//! - `store`: the [`TaskStore`](store::TaskStore) contract (a store is a dumb versioned row
//!   keeper: every transition rule lives in `runner`, so an in-memory map and a SQL table behave
//!   the same) and [`InMemoryTaskStore`](store::InMemoryTaskStore);
//! - `record`: a task's record, its encoding to a row, and the [`TaskCreated`](record::TaskCreated)
//!   handle;
//! - `runner`: the endpoint's tasks, the handler-facing [`TaskCreation`](runner::TaskCreation),
//!   leases and per-principal bounds;
//! - `work`: the work-facing [`TaskContext`](work::TaskContext) (status messages, input);
//! - `decoded`: rows this instance lately wrote or read, with their records, so a row read back
//!   unchanged is not decoded again;
//! - `sql`: SQLite and PostgreSQL stores (features `sqlite`, `postgres`);
//! - `warm`: the PostgreSQL store's connections, kept open between calls (no ping each time).
//!
//! A task record is created (durably, in the store) before its handle is returned; its work
//! runs on this process's runtime; every later read and write goes through the store, so any
//! instance sharing the store answers `tasks/get`, `tasks/update` and `tasks/cancel`, and a
//! worker notices a cancellation made elsewhere on its next poll. Knows nothing of transports,
//! revisions or endpoints.

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod count;
pub(crate) mod decoded;
pub(crate) mod model;
pub(crate) mod record;
pub(crate) mod runner;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod sql;
pub(crate) mod store;
#[cfg(feature = "postgres")]
pub(crate) mod warm;
pub(crate) mod work;

#[cfg(test)]
mod tests {
    use super::model::*;
    use super::record::*;
    use super::runner::*;
    use super::store::*;
    use std::sync::Arc;
    use std::time::Duration;
    use tollgate_json::{JsonObject, JsonValue};

    pub(super) fn record() -> TaskRecord {
        TaskRecord {
            id: "abc".into(),
            version: 3,
            owner: "/mcp\na\n".into(),
            tool: "t".into(),
            typed: true,
            arguments: JsonObject::new(),
            status: TaskStatus::InputRequired,
            message: Some("waiting".into()),
            created_ms: 1_700_000_000_123,
            updated_ms: 1_700_000_001_000,
            ttl_ms: 60_000,
            poll_ms: 1000,
            lease_ms: 1_700_000_011_000,
            requests: JsonObject::builder()
                .insert(
                    "k",
                    JsonObject::builder().insert("method", "roots/list").build(),
                )
                .build(),
            asked: vec![JsonValue::from("k")],
            responses: JsonObject::new(),
            result: Some(r#"{"content":[]}"#.into()),
            error: None,
        }
    }

    #[test]
    fn records_round_trip_through_rows() {
        let r = record();
        let row = r.to_row().expect("encodes");
        assert_eq!(row.expires_at_ms, 1_700_000_060_123);
        assert_eq!(TaskRecord::from_row(&row), Some(r));
        let broken = TaskRow {
            data: "{".into(),
            ..row
        };
        assert_eq!(TaskRecord::from_row(&broken), None);
    }

    #[test]
    fn a_record_is_written_as_compact_json_in_a_fixed_order() {
        let row = record().to_row().expect("encodes");
        assert_eq!(
            row.data,
            concat!(
                r#"{"v":1,"owner":"/mcp\na\n","tool":"t","typed":true,"status":"input_required","#,
                r#""created":1700000000123,"updated":1700000001000,"ttl":60000,"poll":1000,"#,
                r#""lease":1700000011000,"requests":{"k":{"method":"roots/list"}},"asked":["k"],"#,
                r#""responses":{},"message":"waiting","result":"{\"content\":[]}"}"#
            )
        );
        // Every member set, text needing escapes, numbers at their extremes: read back whole.
        let mut full = record();
        full.typed = false;
        full.arguments = JsonObject::builder().insert("q", "\"\u{1}é").build();
        full.message = Some("line\nnext\t\u{7f}🚀".into());
        full.error = Some(r#"{"code":-32603,"message":"x"}"#.into());
        full.created_ms = 0;
        full.updated_ms = u64::MAX;
        full.asked = vec![JsonValue::from("k"), JsonValue::from("l")];
        full.responses = JsonObject::builder().insert("l", JsonValue::Null).build();
        let (row, whole) = full.encode().expect("encodes");
        assert!(whole);
        assert_eq!(TaskRecord::from_row(&row), Some(full));
    }

    #[test]
    fn the_common_fields_are_written_as_the_builder_writes_them() {
        let limits = tollgate_json::OutputLimits::default();
        let mut quiet = record();
        quiet.message = None;
        quiet.status = TaskStatus::Completed;
        let mut escaped = record();
        escaped.message = Some("\"line\"\n\u{1}é".into());
        for r in [record(), quiet, escaped] {
            let mut b = JsonObject::builder().insert("resultType", "complete");
            r.push_common(&mut b);
            let built = tollgate_json::to_string(&b.build().into(), &limits).expect("writes");
            let mut out = br#"{"resultType":"complete""#.to_vec();
            let written = out.len();
            let mut w = MemberWriter::new(&mut out, written, 2, &limits).expect("fits");
            r.write_common(&mut w).expect("writes");
            out.push(b'}');
            assert_eq!(String::from_utf8(out).expect("utf-8"), built);
        }
    }

    #[test]
    fn a_record_nested_as_deep_as_a_row_is_read_is_written_and_one_past_is_not() {
        // Values nest inside the row: `requests` one level in, `asked`'s items two. A row is
        // read back with the writer's own nesting bound, so whatever is written reads back.
        let ceiling = tollgate_json::JsonLimits::MAX_DEPTH_CEILING;
        let nested = |levels: usize| {
            let mut v = JsonValue::Null;
            for _ in 0..levels {
                v = JsonValue::Array(vec![v].into());
            }
            v
        };
        let object = |inner: JsonValue| JsonObject::builder().insert("k", inner).build();
        let mut r = record();
        // `requests` is an object (one level) holding `k`: ceiling − 2 levels below it.
        r.requests = object(nested(ceiling - 2));
        let (row, whole) = r.encode().expect("at the bound");
        assert!(whole);
        assert_eq!(TaskRecord::from_row(&row), Some(r.clone()));
        r.requests = object(nested(ceiling - 1));
        assert!(r.encode().is_none(), "one past");
        let mut r = record();
        r.asked = vec![nested(ceiling - 2)];
        let row = r.to_row().expect("at the bound");
        assert_eq!(TaskRecord::from_row(&row), Some(r.clone()));
        r.asked = vec![nested(ceiling - 1)];
        assert!(r.encode().is_none(), "one past");
    }

    #[test]
    fn a_record_past_the_row_bound_is_not_written() {
        // The row's whole text is bounded, not only each string in it: two strings each under
        // the string ceiling fill it exactly, and one byte more is refused.
        let max = tollgate_json::OutputLimits::MAX_OUTPUT_BYTES_CEILING;
        let mut r = record();
        r.message = Some("".into());
        r.result = Some("".into());
        let base = r.to_row().expect("encodes").data.len();
        let half = (max - base) / 2;
        r.message = Some("a".repeat(half).into());
        r.result = Some("a".repeat(max - base - half).into());
        assert_eq!(r.to_row().expect("fits").data.len(), max);
        r.result = Some("a".repeat(max - base - half + 1).into());
        assert!(r.encode().is_none());
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400_005), "2000-02-29T00:00:00.005Z");
        assert_eq!(iso8601(1_796_256_000_000), "2026-12-03T00:00:00.000Z");
        // Digit by digit, as `format!` would write it: across leap days, centuries, every
        // field's carry, the last four-digit year and past it.
        let reference = |ms: u64| {
            let secs = ms / 1000;
            let text = iso8601(ms);
            let (date, time) = text.split_once('T').expect("a T");
            let time = time.strip_suffix('Z').expect("a Z");
            let hms: Vec<u64> = time
                .split([':', '.'])
                .map(|p| p.parse().expect("digits"))
                .collect();
            assert_eq!(
                hms,
                [secs % 86_400 / 3600, secs % 3600 / 60, secs % 60, ms % 1000]
            );
            date.to_owned()
        };
        for (ms, date) in [
            (0, "1970-01-01"),
            (951_868_799_999, "2000-02-29"),
            (4_107_542_399_999, "2100-02-28"),
            (253_402_300_799_999, "9999-12-31"),
            (253_402_300_800_000, "10000-01-01"),
        ] {
            assert_eq!(reference(ms), date, "{ms}");
        }
        assert_eq!(iso8601(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
        assert_eq!(iso8601(253_402_300_800_000), "10000-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_234_567_890_123), "2009-02-13T23:31:30.123Z");
    }

    #[test]
    fn config_bounds() {
        assert!(TaskConfig::default().is_valid());
        // At each bound, then just past it.
        let (ttl_lo, ttl_hi) = TaskConfig::TTL_RANGE;
        let (poll_lo, poll_hi) = TaskConfig::POLL_INTERVAL_RANGE;
        let at = |ttl, poll| {
            TaskConfig::default()
                .ttl(ttl)
                .poll_interval(poll)
                .is_valid()
        };
        assert!(at(ttl_lo, poll_lo));
        assert!(at(ttl_hi, poll_hi));
        assert!(!at(ttl_lo - Duration::from_millis(1), poll_lo));
        assert!(!at(ttl_hi, poll_hi + Duration::from_millis(1)));
        // The poll interval never exceeds the TTL.
        assert!(at(Duration::from_secs(2), Duration::from_secs(2)));
        assert!(!at(Duration::from_secs(2), Duration::from_millis(2001)));
        assert!(
            !TaskConfig::default()
                .ttl(Duration::from_millis(999))
                .is_valid()
        );
        assert!(
            !TaskConfig::default()
                .poll_interval(Duration::from_millis(49))
                .is_valid()
        );
        assert!(
            TaskConfig::default()
                .ttl(Duration::from_secs(7 * 24 * 3600))
                .is_valid()
        );
        assert!(
            !TaskConfig::default()
                .ttl(Duration::from_secs(7 * 24 * 3600 + 1))
                .is_valid()
        );
    }

    #[test]
    fn application_errors_stay_outside_the_reserved_range() {
        assert!(TaskError::application(-32000, "x").is_none());
        assert!(TaskError::application(-32768, "x").is_none());
        assert!(TaskError::application(-31999, "x").is_some());
        assert!(TaskError::application(1, "x".repeat(1025)).is_none());
    }

    #[tokio::test]
    async fn a_task_whose_worker_is_gone_fails_when_read() {
        let store = Arc::new(InMemoryTaskStore::default());
        let tasks = Tasks::new(store.clone(), TaskConfig::default(), None);
        let now = now_ms();
        let mut r = record();
        r.status = TaskStatus::Working;
        r.requests = JsonObject::new();
        r.result = None;
        r.created_ms = now;
        r.updated_ms = now;
        r.lease_ms = now + 60_000;
        let mut orphan = r.clone();
        orphan.id = "orphan".into();
        orphan.lease_ms = now - 1;
        store
            .insert(r.to_row().expect("encodes"))
            .await
            .expect("stored");
        store
            .insert(orphan.to_row().expect("encodes"))
            .await
            .expect("stored");
        let owner = r.owner.clone();
        match tasks.lookup_for_client("abc", &owner).await {
            Lookup::Found(live) => assert_eq!(live.status, TaskStatus::Working),
            _ => unreachable!("the live task is found"),
        }
        match tasks.lookup_for_client("orphan", &owner).await {
            Lookup::Found(dead) => {
                assert_eq!(dead.status, TaskStatus::Failed);
                assert_eq!(
                    dead.error.as_deref(),
                    Some(r#"{"code":-32603,"message":"Internal error"}"#)
                );
            }
            _ => unreachable!("the orphan is found, failed"),
        }
        // Another owner sees neither.
        assert!(matches!(
            tasks.lookup_for_client("abc", "/mcp\np\nmallory").await,
            Lookup::Absent
        ));
    }

    /// A store that counts its reads.
    #[derive(Default)]
    struct Counted {
        inner: InMemoryTaskStore,
        loads: std::sync::atomic::AtomicUsize,
    }

    impl TaskStore for Counted {
        fn insert<'a>(&'a self, row: TaskRow) -> StoreFuture<'a, ()> {
            self.inner.insert(row)
        }
        fn load<'a>(&'a self, id: &'a str) -> StoreFuture<'a, Option<TaskRow>> {
            self.loads
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.inner.load(id)
        }
        fn replace<'a>(&'a self, row: TaskRow, expected_version: u64) -> StoreFuture<'a, bool> {
            self.inner.replace(row, expected_version)
        }
        fn purge_expired<'a>(&'a self, now_ms: u64) -> StoreFuture<'a, u64> {
            self.inner.purge_expired(now_ms)
        }
    }

    /// An update from a record known to be current writes without reading; from a stale one,
    /// its swap fails and the change is made again on the record as stored; from an expired
    /// one, nothing is written.
    #[tokio::test]
    async fn updates_from_a_known_record_read_only_when_it_is_stale() {
        let store = Arc::new(Counted::default());
        let tasks = Tasks::new(store.clone(), TaskConfig::default(), None);
        let loads = || store.loads.load(std::sync::atomic::Ordering::Relaxed);
        let now = now_ms();
        let mut r = record();
        r.status = TaskStatus::Working;
        r.message = None;
        r.created_ms = now;
        r.updated_ms = now;
        store
            .insert(r.to_row().expect("encodes"))
            .await
            .expect("stored");
        let mark = |r: &mut TaskRecord| {
            r.message = Some(format!("{}x", r.message.as_deref().unwrap_or("")).into());
            true
        };

        let current = tasks.update_from("abc", Some(r.clone()), mark).await;
        let current = current.expect("written").expect("present");
        assert_eq!(
            (current.version, current.message.as_deref()),
            (4, Some("x"))
        );
        assert_eq!(loads(), 0);

        // `r` is version 3 now stale: read once, and the change lands on version 4.
        let fresh = tasks.update_from("abc", Some(r.clone()), mark).await;
        let fresh = fresh.expect("written").expect("present");
        assert_eq!((fresh.version, fresh.message.as_deref()), (5, Some("xx")));
        assert_eq!(loads(), 1);

        let mut expired = fresh.clone();
        expired.created_ms = 0;
        assert_eq!(
            tasks.update_from("abc", Some(expired), mark).await,
            Ok(None)
        );
        assert_eq!(loads(), 1);
        let stored = TaskRecord::from_row(
            &store
                .inner
                .load("abc")
                .await
                .expect("loads")
                .expect("present"),
        );
        assert_eq!(stored, Some(fresh));
    }

    /// A terminal record this instance wrote is read back with no store call, and is still
    /// absent to another owner; a record that may still change (another instance may cancel
    /// it) is loaded on every read; a kept terminal record past its expiry reads as absent.
    #[tokio::test]
    async fn a_terminal_record_known_here_is_read_without_a_load() {
        let store = Arc::new(Counted::default());
        let tasks = Tasks::new(store.clone(), TaskConfig::default(), None);
        let loads = || store.loads.load(std::sync::atomic::Ordering::Relaxed);
        let owner = "/mcp\na\n";
        let now = now_ms();
        let mut r = record();
        r.status = TaskStatus::Working;
        r.requests = JsonObject::new();
        r.asked = Vec::new();
        r.created_ms = now;
        r.lease_ms = now + 60_000;
        store
            .insert(r.to_row().expect("encodes"))
            .await
            .expect("stored");
        for _ in 0..2 {
            assert!(matches!(
                tasks.lookup_for_client("abc", owner).await,
                Lookup::Found(f) if f.status == TaskStatus::Working
            ));
        }
        assert_eq!(loads(), 2, "working: read from the store each time");

        let done = tasks
            .update_from("abc", Some(r.clone()), |r| {
                r.status = TaskStatus::Completed;
                true
            })
            .await
            .expect("written")
            .expect("present");
        for _ in 0..2 {
            match tasks.lookup_for_client("abc", owner).await {
                Lookup::Found(f) => assert_eq!(f, done),
                _ => unreachable!("the completed task is found"),
            }
        }
        assert!(matches!(
            tasks.lookup_for_client("abc", "/mcp\np\nmallory").await,
            Lookup::Absent
        ));
        // Nothing changes a terminal record, so nothing is read to try.
        let cancel = tasks
            .update("abc", |r| {
                if r.status.is_terminal() {
                    return false;
                }
                r.status = TaskStatus::Cancelled;
                true
            })
            .await;
        assert_eq!(cancel, Ok(Some(done)));
        assert_eq!(loads(), 2, "completed here: no read");

        // Read once from the store (expired, so absent), kept, and still absent when kept.
        let mut old = r.clone();
        old.id = "old".into();
        old.status = TaskStatus::Failed;
        old.created_ms = now - 2 * old.ttl_ms;
        store
            .insert(old.to_row().expect("encodes"))
            .await
            .expect("stored");
        for _ in 0..2 {
            assert!(matches!(
                tasks.lookup_for_client("old", owner).await,
                Lookup::Absent
            ));
        }
        assert_eq!(loads(), 3);
    }

    #[tokio::test]
    async fn memory_store_is_bounded_and_versioned() {
        let store = InMemoryTaskStore::with_capacity(1);
        let mut row = record().to_row().expect("encodes");
        row.expires_at_ms = u64::MAX;
        store.insert(row.clone()).await.expect("first fits");
        let mut other = row.clone();
        other.id = "other".into();
        assert_eq!(
            store.insert(other).await.map_err(|e| e.kind()),
            Err(TaskStoreErrorKind::Full)
        );
        assert_eq!(
            store.insert(row.clone()).await.map_err(|e| e.kind()),
            Err(TaskStoreErrorKind::Duplicate)
        );
        let mut next = row.clone();
        next.version = 4;
        assert_eq!(store.replace(next.clone(), 2).await, Ok(false));
        assert_eq!(store.replace(next.clone(), 3).await, Ok(true));
        assert_eq!(store.load("abc").await, Ok(Some(next)));
        assert_eq!(store.purge_expired(u64::MAX).await, Ok(1));
        assert_eq!(store.load("abc").await, Ok(None));
    }
}
