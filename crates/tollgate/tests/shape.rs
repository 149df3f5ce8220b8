//! The project's shape, checked from its sources and documents, one test binary: the runtime's
//! rooms, imports and sizes (`architecture`, see `docs/architecture.md`), and `docs/protocol.md`'s
//! validation-order table against the pipeline's order (`protocol_order`), and that every Rust
//! block in `docs/` is compiled or says why not (`doc_blocks`). No server starts here.

mod shape {
    mod architecture;
    mod doc_blocks;
    mod protocol_order;
}
