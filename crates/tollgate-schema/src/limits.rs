//! Compile and evaluation bounds, with the specification's production defaults.

/// Bounds on compiling and evaluating a schema. Each is independent of the JSON limits that
/// bounded the schema document and the instance when they were read.
///
/// # Examples
///
/// ```
/// use tollgate_schema::SchemaLimits;
/// let limits = SchemaLimits::default();
/// assert_eq!(limits.max_nodes(), 4_096);
/// assert_eq!(limits.max_depth(), 64);
/// assert_eq!(limits.max_operations(), 1_000_000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemaLimits {
    max_nodes: usize,
    max_depth: usize,
    max_keywords: usize,
    max_operations: u64,
}

impl SchemaLimits {
    /// Default compiled schema nodes (every object or boolean schema counts).
    pub const DEFAULT_MAX_NODES: usize = 4_096;
    /// Default schema nesting depth (the root schema is at depth 1).
    pub const DEFAULT_MAX_DEPTH: usize = 64;
    /// Default keyword count across the document.
    pub const DEFAULT_MAX_KEYWORDS: usize = 32_768;
    /// Default evaluation operations per validation call.
    pub const DEFAULT_MAX_OPERATIONS: u64 = 1_000_000;
    /// Evaluation recursion bound. Each level is one applicator frame; the bound keeps a
    /// recursive evaluator far from any thread's stack size whatever the schema's `$ref` graph.
    pub const MAX_EVALUATION_DEPTH: usize = 512;

    /// The production defaults.
    pub const fn new() -> Self {
        Self {
            max_nodes: Self::DEFAULT_MAX_NODES,
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_keywords: Self::DEFAULT_MAX_KEYWORDS,
            max_operations: Self::DEFAULT_MAX_OPERATIONS,
        }
    }

    /// Compiled schema node bound.
    pub const fn max_nodes(&self) -> usize {
        self.max_nodes
    }
    /// Schema nesting bound.
    pub const fn max_depth(&self) -> usize {
        self.max_depth
    }
    /// Keyword count bound.
    pub const fn max_keywords(&self) -> usize {
        self.max_keywords
    }
    /// Evaluation operation budget per call.
    pub const fn max_operations(&self) -> u64 {
        self.max_operations
    }

    /// Lowers (or restores) the node bound; values above the default are clamped to it.
    #[must_use]
    pub const fn with_max_nodes(mut self, n: usize) -> Self {
        self.max_nodes = clamp(n, Self::DEFAULT_MAX_NODES);
        self
    }
    /// Lowers (or restores) the depth bound; values above the default are clamped to it.
    #[must_use]
    pub const fn with_max_depth(mut self, n: usize) -> Self {
        self.max_depth = clamp(n, Self::DEFAULT_MAX_DEPTH);
        self
    }
    /// Lowers (or restores) the keyword bound; values above the default are clamped to it.
    #[must_use]
    pub const fn with_max_keywords(mut self, n: usize) -> Self {
        self.max_keywords = clamp(n, Self::DEFAULT_MAX_KEYWORDS);
        self
    }
    /// Lowers (or restores) the operation budget; values above the default are clamped to it.
    #[must_use]
    pub const fn with_max_operations(mut self, n: u64) -> Self {
        self.max_operations = if n > Self::DEFAULT_MAX_OPERATIONS {
            Self::DEFAULT_MAX_OPERATIONS
        } else {
            n
        };
        self
    }
}

const fn clamp(n: usize, ceiling: usize) -> usize {
    if n > ceiling { ceiling } else { n }
}

impl Default for SchemaLimits {
    fn default() -> Self {
        Self::new()
    }
}
