//! The protocol revisions this client speaks and what each asks of a request. It owns the
//! revision names and the 2026-07-28 `_meta` block; it must not know transports.

use tollgate_json::{JsonObject, JsonValue};

/// A protocol revision the client speaks.
///
/// # Examples
///
/// ```
/// use tollgate_client::Revision;
///
/// assert_eq!(Revision::from_wire("2025-11-25"), Some(Revision::V2025_11_25));
/// assert!(Revision::V2026_07_28.is_stateless());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Revision {
    /// 2024-11-05 (`initialize`; stdio, in process, and its own HTTP+SSE transport through
    /// [`ClientBuilder::connect_legacy_sse`](crate::ClientBuilder::connect_legacy_sse), never
    /// Streamable HTTP).
    V2024_11_05,
    /// 2025-03-26 (`initialize`, the first Streamable HTTP; JSON-RPC batches may be received).
    V2025_03_26,
    /// 2025-06-18 (sessions, `initialize`).
    V2025_06_18,
    /// 2025-11-25 (sessions, `initialize`, tasks).
    V2025_11_25,
    /// 2026-07-28 (stateless: `_meta` on every request, standard headers).
    V2026_07_28,
}

impl Revision {
    /// Every revision, newest first (the order the client offers them).
    pub const ALL: [Revision; 5] = [
        Self::V2026_07_28,
        Self::V2025_11_25,
        Self::V2025_06_18,
        Self::V2025_03_26,
        Self::V2024_11_05,
    ];

    /// The revision's wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// The revision with this exact wire name.
    pub fn from_wire(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// Whether the revision is stateless (2026-07-28): no `initialize`, `_meta` on each request.
    pub const fn is_stateless(self) -> bool {
        matches!(self, Self::V2026_07_28)
    }

    /// Whether the revision defines titles, output schemas, structured tool results and
    /// elicitation (2025-06-18 on).
    pub(crate) fn carries_structure(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Whether the revision defines tool annotations and audio content (2025-03-26 on).
    pub(crate) fn carries_annotations(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// Whether a server may send JSON-RPC batches (2025-03-26 only).
    pub(crate) fn takes_batches(self) -> bool {
        self == Self::V2025_03_26
    }

    /// Whether HTTP messages carry `MCP-Protocol-Version` (2025-06-18 on).
    pub(crate) fn has_version_header(self) -> bool {
        self >= Self::V2025_06_18
    }

    /// Whether the revision is spoken over Streamable HTTP (all but 2024-11-05, which has its
    /// own HTTP+SSE transport).
    pub(crate) fn on_streamable_http(self) -> bool {
        self >= Self::V2025_03_26
    }

    /// Whether the server may send `method` as a request on this revision: `elicitation/create`
    /// came with 2025-06-18.
    pub(crate) fn allows_server_request(self, method: &str) -> bool {
        method != "elicitation/create" || self.carries_structure()
    }
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The client's name and version, as `clientInfo` carries them.
#[derive(Debug, Clone)]
pub struct ClientInfo {
    name: String,
    version: String,
}

impl ClientInfo {
    /// A client named `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
        }
    }

    pub(crate) fn to_json(&self) -> JsonValue {
        JsonObject::builder()
            .insert("name", self.name.as_str())
            .insert("version", self.version.as_str())
            .build()
            .into()
    }
}

impl Default for ClientInfo {
    fn default() -> Self {
        Self::new("tollgate-client", env!("CARGO_PKG_VERSION"))
    }
}

/// `params` with the 2026-07-28 `_meta` members added (revision, client information and
/// capabilities), keeping any `_meta` members the caller set.
pub(crate) fn with_meta(
    params: Option<JsonObject>,
    revision: Revision,
    info: &ClientInfo,
    capabilities: &JsonObject,
) -> JsonObject {
    const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    let params = params.unwrap_or_default();
    // A call may declare its own capabilities (`CallOptions::client_capabilities`).
    let (mut meta, declared) = match params.get("_meta") {
        Some(JsonValue::Object(m)) => (m.to_builder(), m.contains_key(CAPABILITIES)),
        _ => (JsonObject::builder(), false),
    };
    meta.push("io.modelcontextprotocol/protocolVersion", revision.as_str());
    meta.push("io.modelcontextprotocol/clientInfo", info.to_json());
    if !declared {
        meta.push(CAPABILITIES, capabilities.clone());
    }
    let mut out = JsonObject::builder();
    for (k, v) in params.iter() {
        if k.as_str() != "_meta" {
            out.push(k.clone(), v.clone());
        }
    }
    out.push("_meta", meta.build());
    out.build()
}
