//! Reader and writer throughput, side by side with `serde_json::Value` on the same documents.
//!
//! Run: `cargo bench -p tollgate-json`. Documents are generated deterministically.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the report"
)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tollgate_json::{JsonLimits, OutputLimits, from_slice, to_vec};

#[path = "docs.rs"]
mod docs;
use docs::{TOOLS_CALL, mixed, string_heavy};

fn bench(c: &mut Criterion) {
    // Every limit stays on; only the value count is raised so the 10 MiB document (about 1.1
    // million values) is readable at all. serde_json has no such bound.
    let limits = JsonLimits::default().with_max_nodes(2_000_000).unwrap();
    let out_limits = OutputLimits::default()
        .with_max_output_bytes(16 << 20)
        .unwrap();
    let docs = [
        ("tools_call", TOOLS_CALL.to_owned()),
        ("mixed_10mib", mixed(10 * 1024 * 1024 - 1024)),
        ("strings_4mib", string_heavy(4 * 1024 * 1024)),
    ];
    for (name, doc) in &docs {
        let bytes = doc.as_bytes();
        let mut g = c.benchmark_group(format!("read/{name}"));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        if bytes.len() > 1 << 20 {
            g.sample_size(20);
        }
        g.bench_function("tollgate", |b| {
            b.iter(|| from_slice(black_box(bytes), &limits).unwrap())
        });
        g.bench_function("serde_json", |b| {
            b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(bytes)).unwrap())
        });
        g.finish();

        let ours = from_slice(bytes, &limits).unwrap();
        let theirs: serde_json::Value = serde_json::from_slice(bytes).unwrap();
        let mut g = c.benchmark_group(format!("write/{name}"));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        if bytes.len() > 1 << 20 {
            g.sample_size(20);
        }
        g.bench_function("tollgate", |b| {
            b.iter(|| to_vec(black_box(&ours), &out_limits).unwrap())
        });
        g.bench_function("serde_json", |b| {
            b.iter(|| serde_json::to_vec(black_box(&theirs)).unwrap())
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
