//! Deterministic documents shared by the JSON benchmarks.

#![allow(dead_code, reason = "each includer uses its own subset")]

/// A 300-byte-class MCP tools/call request.
pub(crate) const TOOLS_CALL: &str = r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"catalog.search","arguments":{"query":"blue ceramic mug","limit":10,"inStock":true,"priceMax":24.99,"tags":["kitchen","gift"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p-17"}}}"#;

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
pub(crate) fn mixed(target: usize) -> String {
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
            r.is_multiple_of(2),
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
pub(crate) fn string_heavy(target: usize) -> String {
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
