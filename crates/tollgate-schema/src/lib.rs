//! Tool Schema Profile 1: a closed subset of JSON Schema 2020-12, compiled failing closed and
//! evaluated under a budget.
//!
//! This crate owns schema compilation and evaluation. It depends only on `tollgate-json` and
//! knows nothing of MCP transports, tools or error codes: a runtime maps its outcomes to the
//! protocol's fixed answers.
//!
//! # When to use it
//!
//! Compile every tool input schema once, before an endpoint starts, with
//! [`CompiledSchema::compile_tool_input`]; validate every call's arguments with
//! [`CompiledSchema::validate`] before the handler runs. [`CompiledSchema::compile`] accepts any
//! Profile 1 schema (no object-root rule), for output schemas and tooling.
//!
//! # The profile
//!
//! Exactly these keywords are recognised: `$schema $defs $anchor $ref $comment properties
//! additionalProperties items allOf anyOf if then else type enum const required minimum maximum
//! title description default examples deprecated readOnly writeOnly format x-mcp-header`. Every
//! other keyword, `x-*` extensions included, fails compilation with its location. `$ref` reaches
//! only same-document JSON Pointer fragments and plain-name `$anchor`s. `format` and the
//! annotation keywords are kept in the published document and never asserted.
//!
//! # Bounds
//!
//! Compilation: 4,096 schema nodes, depth 64, 32,768 keywords ([`SchemaLimits`]). Evaluation:
//! one million operations per call (applicator visits, reference hops, member and element
//! visits, equality comparisons, member ordering), a recursion bound, and at most 128
//! concurrent calls per process ([`EvaluationGate`]). Exhausting the budget is its own outcome,
//! distinct from an invalid instance.
//!
//! # Example
//!
//! ```
//! use tollgate_json::{from_str, JsonLimits};
//! use tollgate_schema::{CompiledSchema, ValidationErrorKind};
//!
//! let limits = JsonLimits::default();
//! let schema = CompiledSchema::compile_tool_input(&from_str(r##"{
//!     "type": "object",
//!     "$defs": {"sku": {"$anchor": "sku", "type": "string"}},
//!     "properties": {"items": {"type": "array", "items": {"$ref": "#sku"}}},
//!     "required": ["items"]
//! }"##, &limits)?)?;
//!
//! assert!(schema.validate(&from_str(r#"{"items": ["A-1", "B-2"]}"#, &limits)?).is_ok());
//! let err = schema.validate(&from_str(r#"{"items": ["A-1", 2]}"#, &limits)?).unwrap_err();
//! assert_eq!(err.kind(), ValidationErrorKind::Invalid);
//! // Diagnostics are internal: for logs, never for clients.
//! assert_eq!(err.diagnostic().unwrap().instance_pointer(), "/items/1");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod compile;
mod error;
mod eval;
mod header;
mod keywords;
mod limits;
mod node;
mod pointer;

pub use compile::CompiledSchema;
pub use error::{CompileError, CompileErrorKind, Diagnostic, ValidationError, ValidationErrorKind};
pub use eval::{EvaluationGate, EvaluationPermit};
pub use header::{HeaderValueType, MirroredHeader};
pub use keywords::{EXCLUDED as EXCLUDED_KEYWORDS, RECOGNISED as RECOGNISED_KEYWORDS};
pub use limits::SchemaLimits;
pub use pointer::reference_pointer;
