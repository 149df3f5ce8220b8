//! The duration histogram's cells (feature `otel`): one handle per attribute set and thread,
//! bound once, so recording a request's duration is a lookup by a few words and a bucket
//! update, instead of the SDK hashing and comparing the attribute strings on every record.
//!
//! A cell is keyed by the identity of its parts: fixed strings by address and length, a
//! registered name by its shared allocation (which the cell keeps alive, so the address is never
//! reused while the cell exists), the outcome, and the histogram (a `'static` one: Tollgate's is
//! process-wide). Two cells with equal attributes are bound to the same series by
//! the SDK, so identity only decides how many handles there are, never what is counted. A thread
//! keeps at most [`MAX_CELLS`]; past that, and while a thread is exiting, a duration is recorded
//! through the unbound instrument. At its first record after [`REBIND_AFTER`], or after
//! [`REBIND_EVERY`] records, a thread lets its handles go and binds afresh, so series that went
//! quiet are not held bound for good (the SDK keeps a bound series in its cardinality count,
//! and with delta temporality never evicts it). A thread that records nothing keeps its
//! handles until its next record.
//!
//! Bound handles are an experimental part of the OpenTelemetry API: with the `otel` feature
//! Tollgate enables it in both the API and the SDK, so an SDK in the same build implements
//! it. A meter provider of another kind that does not would drop what is bound.
//!
//! Knows the OpenTelemetry metrics API; nothing of requests beyond a cell's parts.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use opentelemetry::metrics::{BoundHistogram, Histogram};
use opentelemetry::{KeyValue, Value};

use super::current::Owned;

/// The most cells one thread keeps.
pub(super) const MAX_CELLS: usize = 1024;

/// How many durations a thread records before it lets its handles go.
pub(super) const REBIND_EVERY: u32 = 1 << 16;

/// How long a thread keeps its handles before it lets them go (the SDK's default export
/// interval).
pub(super) const REBIND_AFTER: Duration = Duration::from_secs(60);

/// How a request ended, as its `error.type` records it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Outcome {
    Ok,
    Cancelled,
    ToolError,
    /// A JSON-RPC error reply, by its code.
    Code(i64),
}

impl Outcome {
    /// The `error.type` the outcome records, if it is one.
    pub(super) fn error_type(&self) -> Option<Value> {
        match self {
            Self::Ok => None,
            Self::Cancelled => Some(Value::from("cancelled")),
            Self::ToolError => Some(Value::from("tool_error")),
            Self::Code(code) => Some(Value::from(code.to_string())),
        }
    }
}

/// The attributes of one duration.
pub(super) struct Cell<'a> {
    pub(super) method: &'static str,
    pub(super) transport: &'static str,
    pub(super) revision: Option<&'static str>,
    pub(super) target: Option<&'a Owned>,
    pub(super) outcome: Outcome,
}

/// A cell's identity: the addresses (and lengths) of its parts, its outcome and its histogram.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    histogram: usize,
    method: (usize, usize),
    transport: (usize, usize),
    revision: (usize, usize),
    target: (usize, bool),
    outcome: Outcome,
}

/// A fixed string's identity.
fn at(s: &'static str) -> (usize, usize) {
    (s.as_ptr() as usize, s.len())
}

impl Cell<'_> {
    fn key(&self, histogram: &Histogram<f64>) -> Key {
        Key {
            histogram: std::ptr::from_ref(histogram) as usize,
            method: at(self.method),
            transport: at(self.transport),
            revision: self.revision.map_or((0, 0), at),
            target: self.target.map_or((0, false), |t| match t {
                Owned::Tool(name) => (Arc::as_ptr(name).cast::<u8>() as usize, false),
                Owned::Prompt(name) => (Arc::as_ptr(name).cast::<u8>() as usize, true),
            }),
            outcome: self.outcome,
        }
    }

    /// The cell's attributes, by the MCP semantic conventions.
    fn attributes(&self) -> Vec<KeyValue> {
        let mut attributes = Vec::with_capacity(5);
        attributes.push(KeyValue::new("mcp.method.name", self.method));
        attributes.push(KeyValue::new("network.transport", self.transport));
        if let Some(revision) = self.revision {
            attributes.push(KeyValue::new("mcp.protocol.version", revision));
        }
        match self.target {
            Some(Owned::Tool(name)) => {
                attributes.push(KeyValue::new("gen_ai.tool.name", name.to_string()));
            }
            Some(Owned::Prompt(name)) => {
                attributes.push(KeyValue::new("gen_ai.prompt.name", name.to_string()));
            }
            None => {}
        }
        if let Some(error) = self.outcome.error_type() {
            attributes.push(KeyValue::new("error.type", error));
        }
        attributes
    }

    /// The name the cell's key points at, kept alive with the cell.
    fn keep(&self) -> Option<Arc<str>> {
        self.target.map(|t| match t {
            Owned::Tool(name) | Owned::Prompt(name) => Arc::clone(name),
        })
    }
}

/// A bound handle and the name its key's address belongs to.
struct Bound {
    handle: BoundHistogram<f64>,
    _name: Option<Arc<str>>,
}

/// Mixes a key's words (they are addresses and small numbers, not chosen by a client).
#[derive(Default)]
struct Mix(u64);

impl Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    fn write_i64(&mut self, word: i64) {
        self.write_u64(word as u64);
    }

    fn write_isize(&mut self, word: isize) {
        self.write_u64(word as u64);
    }
}

/// A thread's cells, and the durations recorded since it last let them go.
#[derive(Default)]
struct Cells {
    bound: HashMap<Key, Bound, BuildHasherDefault<Mix>>,
    records: u32,
    /// When they are next let go: [`REBIND_AFTER`] after they were last let go (or first
    /// bound); `None` before the first record (or when that time is past what `Instant` holds).
    until: Option<Instant>,
    /// The cell the thread recorded in last, also in `bound` (which keeps its name alive): a
    /// server answering one call over and over finds it by one comparison, without hashing.
    last: Option<(Key, BoundHistogram<f64>)>,
}

thread_local! {
    static CELLS: RefCell<Cells> = RefCell::new(Cells::default());
}

/// Records `seconds` in `histogram` under `cell`'s attributes.
pub(super) fn record(
    histogram: &'static Histogram<f64>,
    cell: &Cell<'_>,
    seconds: f64,
    now: Instant,
) {
    let bound = CELLS
        .try_with(|cells| {
            let mut cells = cells.try_borrow_mut().ok()?;
            cells.records += 1;
            if cells.until.is_none() {
                cells.until = now.checked_add(REBIND_AFTER);
            }
            // A comparison of two instants, not a duration computed on every record.
            if cells.records >= REBIND_EVERY || cells.until.is_some_and(|until| now >= until) {
                cells.records = 0;
                cells.until = now.checked_add(REBIND_AFTER);
                cells.bound.clear();
                cells.last = None;
            }
            let key = cell.key(histogram);
            if let Some((_, handle)) = cells.last.as_ref().filter(|(last, _)| *last == key) {
                handle.record(seconds);
                return Some(());
            }
            if let Some(bound) = cells.bound.get(&key) {
                bound.handle.record(seconds);
                let handle = bound.handle.clone();
                cells.last = Some((key, handle));
                return Some(());
            }
            if cells.bound.len() >= MAX_CELLS {
                return None;
            }
            let handle = histogram.bind(&cell.attributes());
            handle.record(seconds);
            cells.last = Some((key, handle.clone()));
            cells.bound.insert(
                key,
                Bound {
                    handle,
                    _name: cell.keep(),
                },
            );
            Some(())
        })
        .ok()
        .flatten();
    if bound.is_none() {
        histogram.record(seconds, &cell.attributes());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

    use super::*;
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
    use opentelemetry_sdk::metrics::{
        InMemoryMetricExporter, InMemoryMetricExporterBuilder, PeriodicReader, SdkMeterProvider,
        Temporality,
    };

    /// A meter provider exporting to memory with `temporality`, and a histogram of it.
    fn meter(
        temporality: Temporality,
    ) -> (
        SdkMeterProvider,
        InMemoryMetricExporter,
        &'static Histogram<f64>,
    ) {
        let exporter = InMemoryMetricExporterBuilder::new()
            .with_temporality(temporality)
            .build();
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter.clone()).build())
            .build();
        let histogram = Box::leak(Box::new(provider.meter("t").f64_histogram("d").build()));
        (provider, exporter, histogram)
    }

    /// A `ping` over stdio with `outcome`.
    fn ping(outcome: Outcome) -> Cell<'static> {
        Cell {
            method: "ping",
            transport: "pipe",
            revision: None,
            target: None,
            outcome,
        }
    }

    /// Each data point's attributes (sorted `key=value` lines) and count.
    fn points(
        provider: &SdkMeterProvider,
        exporter: &InMemoryMetricExporter,
    ) -> Vec<(String, u64)> {
        provider.force_flush().unwrap();
        exported(exporter)
    }

    /// What the exporter was given so far, one entry per data point of each export.
    fn exported(exporter: &InMemoryMetricExporter) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for resource in exporter.get_finished_metrics().unwrap() {
            for scope in resource.scope_metrics() {
                for metric in scope.metrics() {
                    let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
                        continue;
                    };
                    for point in h.data_points() {
                        let mut kv: Vec<String> = point
                            .attributes()
                            .map(|kv| format!("{}={}", kv.key, kv.value))
                            .collect();
                        kv.sort();
                        out.push((kv.join(","), point.count()));
                    }
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn bound_cells_count_like_the_unbound_instrument() {
        let (provider, exporter, histogram) = meter(Temporality::Cumulative);
        let tool: Arc<str> = Arc::from("add");
        // The same name in another allocation: another cell, the same series.
        let copy: Arc<str> = Arc::from("add");
        let (a, b) = (Owned::Tool(Arc::clone(&tool)), Owned::Tool(copy));
        let cell = |target, outcome| Cell {
            method: "tools/call",
            transport: "tcp",
            revision: Some("2026-07-28"),
            target,
            outcome,
        };
        for _ in 0..3 {
            record(
                histogram,
                &cell(Some(&a), Outcome::Ok),
                0.001,
                Instant::now(),
            );
        }
        record(
            histogram,
            &cell(Some(&b), Outcome::Ok),
            0.001,
            Instant::now(),
        );
        record(
            histogram,
            &cell(Some(&a), Outcome::Code(-32602)),
            0.001,
            Instant::now(),
        );
        record(
            histogram,
            &cell(None, Outcome::Cancelled),
            0.001,
            Instant::now(),
        );
        drop(a);
        let points = points(&provider, &exporter);
        let base =
            "mcp.method.name=tools/call,mcp.protocol.version=2026-07-28,network.transport=tcp";
        assert_eq!(
            points,
            vec![
                (format!("error.type=-32602,gen_ai.tool.name=add,{base}"), 1),
                (format!("error.type=cancelled,{base}"), 1),
                (format!("gen_ai.tool.name=add,{base}"), 4),
            ]
        );
        // The cells keep the names their keys point at.
        assert!(Arc::strong_count(&tool) >= 2);
    }

    #[test]
    fn alternating_cells_each_count_their_own() {
        let (provider, exporter, histogram) = meter(Temporality::Cumulative);
        let (ok, failed) = (ping(Outcome::Ok), ping(Outcome::Code(-32602)));
        let last = std::thread::spawn(move || {
            // The last cell, then another, then back: found by comparison, then in the map.
            for cell in [&ok, &ok, &failed, &ok, &failed, &failed, &ok] {
                record(histogram, cell, 0.001, Instant::now());
            }
            CELLS.with(|c| {
                let c = c.borrow();
                (c.bound.len(), c.last.as_ref().map(|(key, _)| *key))
            })
        })
        .join()
        .unwrap();
        assert!(last == (2, Some(ping(Outcome::Ok).key(histogram))));
        let base = "mcp.method.name=ping,network.transport=pipe";
        assert_eq!(
            points(&provider, &exporter),
            vec![
                (format!("error.type=-32602,{base}"), 3),
                (base.to_owned(), 4),
            ]
        );
    }

    #[test]
    fn past_the_bound_durations_are_still_recorded() {
        let (provider, exporter, histogram) = meter(Temporality::Cumulative);
        // Fill this thread's cells to the bound with distinct codes, then one more.
        std::thread::spawn(move || {
            for code in 0..=(MAX_CELLS as i64) {
                let cell = ping(Outcome::Code(code));
                record(histogram, &cell, 0.001, Instant::now());
                record(histogram, &cell, 0.001, Instant::now());
            }
            assert_eq!(CELLS.with(|c| c.borrow().bound.len()), MAX_CELLS);
        })
        .join()
        .unwrap();
        let points = points(&provider, &exporter);
        assert_eq!(points.len(), MAX_CELLS + 1);
        assert!(points.iter().all(|(_, count)| *count == 2));
    }

    #[test]
    fn with_delta_temporality_each_export_counts_its_own_durations() {
        let (provider, exporter, histogram) = meter(Temporality::Delta);
        let cell = ping(Outcome::Ok);
        std::thread::spawn(move || {
            record(histogram, &cell, 0.001, Instant::now());
            record(histogram, &cell, 0.001, Instant::now());
            provider.force_flush().unwrap();
            provider.force_flush().unwrap();
            record(histogram, &cell, 0.001, Instant::now());
            provider.force_flush().unwrap();
        })
        .join()
        .unwrap();
        let base = "mcp.method.name=ping,network.transport=pipe".to_owned();
        // Two, then nothing (a quiet series exports no point), then one.
        assert_eq!(exported(&exporter), vec![(base.clone(), 1), (base, 2)]);
    }

    #[test]
    fn a_thread_lets_its_handles_go_and_binds_afresh() {
        let (provider, exporter, histogram) = meter(Temporality::Cumulative);
        let cell = ping(Outcome::Ok);
        let count = u64::from(REBIND_EVERY) + 2;
        let (since, bound) = std::thread::spawn(move || {
            for _ in 0..count {
                record(histogram, &cell, 0.001, Instant::now());
            }
            CELLS.with(|c| {
                let c = c.borrow();
                assert!(c.last.is_some(), "the cell bound again is the last one");
                (c.records, c.bound.len())
            })
        })
        .join()
        .unwrap();
        // Let go at the bound's record, bound again by it: two records since, one handle.
        assert_eq!((since, bound), (2, 1));
        // Nothing was lost meanwhile.
        let points = points(&provider, &exporter);
        assert_eq!(
            points,
            vec![(
                "mcp.method.name=ping,network.transport=pipe".to_owned(),
                count
            )]
        );
    }

    #[test]
    fn a_thread_lets_its_handles_go_after_a_while() {
        let (provider, exporter, histogram) = meter(Temporality::Cumulative);
        let cell = ping(Outcome::Ok);
        let state = std::thread::spawn(move || {
            let start = Instant::now();
            let later = start + REBIND_AFTER;
            record(histogram, &cell, 0.001, start);
            record(histogram, &cell, 0.001, later - Duration::from_secs(1));
            let before = CELLS.with(|c| c.borrow().records);
            record(histogram, &cell, 0.001, later);
            let after = CELLS.with(|c| {
                let c = c.borrow();
                (
                    c.records,
                    c.until == later.checked_add(REBIND_AFTER),
                    c.bound.len(),
                )
            });
            (before, after)
        })
        .join()
        .unwrap();
        // Kept until the bound's age, then let go and bound again by the record that found it.
        assert_eq!(state, (2, (0, true, 1)));
        let points = points(&provider, &exporter);
        let ping = "mcp.method.name=ping,network.transport=pipe".to_owned();
        assert_eq!(points, vec![(ping, 3)]);
    }
}
