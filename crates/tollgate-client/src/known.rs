//! A tool the client saw in `tools/list`, with its schemas compiled once, on first use, and kept
//! with the definition they came from (a new listing replaces both). It owns that caching; the
//! rules that use the schemas live in `mirror` (the `Mcp-Param-*` headers) and `output` (the
//! structured-result check). It must not know transports.

use std::sync::OnceLock;

use tollgate_json::JsonValue;
use tollgate_schema::CompiledSchema;

/// A listed tool: its definition as the server sent it, and its compiled schemas.
pub(crate) struct KnownTool {
    definition: JsonValue,
    /// `inputSchema` compiled as a tool input; `None` when absent or outside Profile 1.
    input: OnceLock<Option<CompiledSchema>>,
    /// `outputSchema` compiled; `None` when absent or outside Profile 1.
    output: OnceLock<Option<CompiledSchema>>,
}

impl KnownTool {
    pub(crate) fn new(definition: JsonValue) -> Self {
        Self {
            definition,
            input: OnceLock::new(),
            output: OnceLock::new(),
        }
    }

    /// The definition as listed.
    pub(crate) fn definition(&self) -> &JsonValue {
        &self.definition
    }

    /// The compiled `inputSchema` (compiled on the first call, then kept).
    pub(crate) fn input(&self) -> Option<&CompiledSchema> {
        self.compiled(&self.input, "inputSchema", |s| {
            CompiledSchema::compile_tool_input(s).ok()
        })
    }

    /// The compiled `outputSchema` (compiled on the first call, then kept).
    pub(crate) fn output(&self) -> Option<&CompiledSchema> {
        self.compiled(&self.output, "outputSchema", |s| {
            CompiledSchema::compile(s).ok()
        })
    }

    fn compiled<'a>(
        &'a self,
        cell: &'a OnceLock<Option<CompiledSchema>>,
        member: &str,
        compile: impl FnOnce(&JsonValue) -> Option<CompiledSchema>,
    ) -> Option<&'a CompiledSchema> {
        cell.get_or_init(|| self.definition.get(member).and_then(compile))
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use tollgate_json::{JsonLimits, from_str};

    #[test]
    fn schemas_compile_once_and_only_when_in_profile() {
        let tool = KnownTool::new(
            from_str(
                r#"{"name":"t","inputSchema":{"type":"object"},"outputSchema":{"type":"object","patternProperties":{"a":{}}}}"#,
                &JsonLimits::default(),
            )
            .unwrap(),
        );
        let first = tool.input().unwrap() as *const CompiledSchema;
        assert_eq!(tool.input().unwrap() as *const CompiledSchema, first);
        assert!(
            tool.output().is_none(),
            "patternProperties is outside Profile 1"
        );
        let bare = KnownTool::new(from_str(r#"{"name":"t"}"#, &JsonLimits::default()).unwrap());
        assert!(bare.input().is_none() && bare.output().is_none());
    }
}
