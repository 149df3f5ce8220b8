//! The project's shape, checked from its sources and documents, one test binary: the runtime's
//! rooms, imports and sizes (`architecture`, see `docs/architecture.md`), and `docs/protocol.md`'s
//! validation-order table against the pipeline's order (`protocol_order`). No server starts here.

mod shape {
    mod architecture;
    mod protocol_order;
}
