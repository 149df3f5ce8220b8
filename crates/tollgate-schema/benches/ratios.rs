//! Interleaved ratios: Tollgate against its peer on the same work, measured in short alternating
//! blocks so that drift on a shared machine hits both sides alike. Each line reports the median
//! of the per-round ratios (peer time / Tollgate time: above 1.00 means Tollgate is faster) and
//! their spread. Covers JSON reading and writing (against `serde_json::Value`) and validation
//! (against the `jsonschema` crate).
//!
//! Run: `cargo bench -p tollgate-schema --bench ratios` (or `scripts/bench-core`, which pins it to
//! one core).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "bench code: a failure is the report"
)]

#[path = "cases.rs"]
mod cases;
#[path = "../../tollgate-json/benches/docs.rs"]
mod docs;

use std::hint::black_box;
use std::time::{Duration, Instant};

use tollgate_json::{JsonLimits, OutputLimits, from_slice, from_str, to_vec};
use tollgate_schema::CompiledSchema;

const ROUNDS: usize = 21;
const BLOCK: Duration = Duration::from_millis(40);

fn time(iters: u64, f: &mut dyn FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..iters {
        f();
    }
    start.elapsed().as_secs_f64() / iters as f64
}

fn compare(name: &str, ours: &mut dyn FnMut(), peer: &mut dyn FnMut()) {
    // Calibrate so one block of our side takes about BLOCK.
    let mut iters = 1u64;
    while time(iters, ours) * (iters as f64) < BLOCK.as_secs_f64() / 4.0 && iters < 1 << 30 {
        iters *= 2;
    }
    iters = iters.saturating_mul(4);
    let (mut ratios, mut ours_t, mut peer_t) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (a, b) = if round % 2 == 0 {
            let a = time(iters, ours);
            (a, time(iters, peer))
        } else {
            let b = time(iters, peer);
            (time(iters, ours), b)
        };
        ours_t.push(a);
        peer_t.push(b);
        ratios.push(b / a);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|x, y| x.total_cmp(y));
        v[v.len() / 2]
    };
    let fmt = |s: f64| {
        if s >= 1e-3 {
            format!("{:.2} ms", s * 1e3)
        } else if s >= 1e-6 {
            format!("{:.2} us", s * 1e6)
        } else {
            format!("{:.0} ns", s * 1e9)
        }
    };
    let (lo, hi) = {
        let mut r = ratios.clone();
        r.sort_by(|x, y| x.total_cmp(y));
        (r[ROUNDS / 4], r[ROUNDS - 1 - ROUNDS / 4])
    };
    println!(
        "{name:34} {:>11} {:>11} {:>6.2}  (middle half {lo:.2}-{hi:.2})",
        fmt(median(&mut ours_t)),
        fmt(median(&mut peer_t)),
        median(&mut ratios),
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_default();
    println!(
        "{:34} {:>11} {:>11} {:>6}",
        "benchmark", "tollgate", "peer", "ratio"
    );
    let limits = JsonLimits::default().with_max_nodes(2_000_000).unwrap();
    let out = OutputLimits::default()
        .with_max_output_bytes(16 << 20)
        .unwrap();
    let documents = [
        ("tools_call", docs::TOOLS_CALL.to_owned()),
        ("mixed_10mib", docs::mixed(10 * 1024 * 1024 - 1024)),
        ("strings_4mib", docs::string_heavy(4 * 1024 * 1024)),
    ];
    for (name, doc) in &documents {
        let bytes = doc.as_bytes();
        let label = format!("read/{name} vs serde_json");
        if label.contains(&filter) {
            compare(
                &label,
                &mut || drop(black_box(from_slice(black_box(bytes), &limits).unwrap())),
                &mut || {
                    drop(black_box(
                        serde_json::from_slice::<serde_json::Value>(black_box(bytes)).unwrap(),
                    ))
                },
            );
        }
        let ours = from_slice(bytes, &limits).unwrap();
        let theirs: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        let label = format!("write/{name} vs serde_json");
        if label.contains(&filter) {
            compare(
                &label,
                &mut || drop(black_box(to_vec(black_box(&ours), &out).unwrap())),
                &mut || drop(black_box(serde_json::to_vec(black_box(&theirs)).unwrap())),
            );
        }
    }
    let schemas = [
        (
            "small_tool_input",
            cases::SMALL_SCHEMA.to_owned(),
            cases::SMALL_INSTANCE.to_owned(),
        ),
        (
            "catalog_ref_anyof",
            cases::CATALOG_SCHEMA.to_owned(),
            cases::catalog_instance(),
        ),
        (
            "array_10000_objects",
            cases::ARRAY_SCHEMA.to_owned(),
            cases::array_instance(),
        ),
    ];
    for (name, schema, instance) in &schemas {
        let label = format!("validate/{name} vs jsonschema");
        if !label.contains(&filter) {
            continue;
        }
        let ours = CompiledSchema::compile(&from_str(schema, &limits).unwrap()).unwrap();
        let ours_instance = from_str(instance, &limits).unwrap();
        let theirs = jsonschema::validator_for(&serde_json::from_str(schema).unwrap()).unwrap();
        let theirs_instance: serde_json::Value = serde_json::from_str(instance).unwrap();
        compare(
            &label,
            &mut || assert!(ours.validate(black_box(&ours_instance)).is_ok()),
            &mut || assert!(theirs.is_valid(black_box(&theirs_instance))),
        );
    }
}
