//! Caching hints on discovery, list and read results (`ttlMs`, `cacheScope`): what an endpoint
//! and its resources may declare. Knows nothing of HTTP caching (responses stay `no-store`).

/// Who may cache a cacheable result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CacheScope {
    /// Only within the same authorization context (the default).
    #[default]
    Private,
    /// Any client or shared cache, across callers.
    Public,
}

/// The caching hints (`ttlMs`, `cacheScope`) on discovery and list results. The default is
/// conservative: immediately stale and private. HTTP responses stay `Cache-Control: no-store`
/// whatever this says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CachePolicy {
    ttl_ms: u64,
    scope: CacheScope,
}

impl CachePolicy {
    /// A time to live in milliseconds and a scope.
    pub const fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        Self { ttl_ms, scope }
    }

    /// Whether results under it may be cached across callers.
    pub(crate) fn is_public(self) -> bool {
        self.scope == CacheScope::Public
    }

    pub(crate) fn push_into(self, b: &mut tollgate_json::JsonObjectBuilder) {
        b.push("ttlMs", self.ttl_ms);
        b.push(
            "cacheScope",
            if self.scope == CacheScope::Public {
                "public"
            } else {
                "private"
            },
        );
    }
}
