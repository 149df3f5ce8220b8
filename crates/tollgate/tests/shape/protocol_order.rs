//! `docs/protocol.md`'s validation-order table is the pipeline's order (`pipeline/order.rs`),
//! rendered: this test fails when they differ, and rewrites the document with
//! `TOLLGATE_BLESS=1`.

#![allow(clippy::unwrap_used, clippy::panic, reason = "integration tests")]

use std::fs;
use std::path::Path;

const START: &str = "<!-- order table: generated from crates/tollgate/src/pipeline/order.rs -->\n";
const END: &str = "<!-- end of order table -->\n";

#[test]
fn the_documented_order_is_the_pipelines() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/protocol.md");
    let doc = fs::read_to_string(&path).unwrap();
    let (Some(start), Some(end)) = (doc.find(START), doc.find(END)) else {
        panic!("docs/protocol.md lacks the order table's markers");
    };
    let current = &doc[start + START.len()..end];
    let rendered = tollgate::__private::protocol_order_table();
    if current == rendered {
        return;
    }
    if std::env::var_os("TOLLGATE_BLESS").is_some() {
        let updated = format!("{}{START}{rendered}{}", &doc[..start], &doc[end..]);
        fs::write(&path, updated).unwrap();
        return;
    }
    panic!(
        "docs/protocol.md's order table differs from pipeline/order.rs; rerun with TOLLGATE_BLESS=1\n\
         rendered:\n{rendered}"
    );
}
