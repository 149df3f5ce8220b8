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

/// A 300-byte-class MCP tools/call request.
const TOOLS_CALL: &str = r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"catalog.search","arguments":{"query":"blue ceramic mug","limit":10,"inStock":true,"priceMax":24.99,"tags":["kitchen","gift"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p-17"}}}"#;

/// A deterministic pseudo-random generator (xorshift), so runs compare like with like.
struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// About `target` bytes of mixed records: nested objects, arrays, numbers, short strings.
fn mixed(target: usize) -> String {
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let mut s = String::from("[");
    let mut i = 0u64;
    while s.len() < target {
        if i > 0 {
            s.push(',');
        }
        let r = g.next();
        s.push_str(&format!(
            r#"{{"id":{i},"sku":"SKU-{:08x}","name":"Item {} ünïcode","price":{}.{:02},"ratio":{:.6e},"active":{},"tags":["t{}","t{}"],"dims":{{"w":{},"h":{},"d":null}},"note":"line\nbreak \"quoted\""}}"#,
            r as u32,
            r % 1000,
            r % 500,
            r % 100,
            (r % 10_000) as f64 / 7.0,
            r % 2 == 0,
            r % 17,
            r % 31,
            r % 300,
            r % 200,
        ));
        i += 1;
    }
    s.push(']');
    s
}

/// About `target` bytes of long strings, a third of them with escapes.
fn string_heavy(target: usize) -> String {
    let mut s = String::from("[");
    let mut i = 0;
    while s.len() < target {
        if i > 0 {
            s.push(',');
        }
        let body = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(16);
        if i % 3 == 0 {
            s.push_str(&format!("\"{}\\n\\t\\u00e9\\\"end\"", body));
        } else {
            s.push('"');
            s.push_str(&body);
            s.push('"');
        }
        i += 1;
    }
    s.push(']');
    s
}

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
