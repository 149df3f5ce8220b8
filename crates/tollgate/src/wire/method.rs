//! The one table of the methods Tollgate serves, and [`OperationType`], its public face. Each
//! method's wire name, its operation type, the revisions it exists on, the parameter
//! `Mcp-Name` mirrors on 2026-07-28, and where its operation name is read from all live here;
//! dispatch, the header checks, admission and the request context read them from this table and
//! nowhere else.

use tollgate_json::{JsonObject, JsonString, JsonValue};

use crate::version::{ProtocolVersion, is_legacy};

/// The kind of operation a request performs, so application code need not compare method
/// strings. Every method Tollgate serves has a variant of its own; so do the HTTP requests that
/// carry no JSON-RPC method (a stream `GET`, a session `DELETE`, a client's response).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OperationType {
    /// `server/discover`.
    Discover,
    /// `initialize` (the 2025 revisions).
    Initialize,
    /// `ping`.
    Ping,
    /// `logging/setLevel` (the 2025 revisions).
    LoggingSetLevel,
    /// `tools/list`.
    ToolsList,
    /// `tools/call`.
    ToolsCall,
    /// `prompts/list`.
    PromptsList,
    /// `prompts/get`.
    PromptsGet,
    /// `completion/complete`.
    Complete,
    /// `resources/list`.
    ResourcesList,
    /// `resources/templates/list`.
    ResourcesTemplatesList,
    /// `resources/read`.
    ResourcesRead,
    /// `resources/subscribe` (the 2025 revisions).
    ResourcesSubscribe,
    /// `resources/unsubscribe` (the 2025 revisions).
    ResourcesUnsubscribe,
    /// `subscriptions/listen` (2026-07-28).
    SubscriptionsListen,
    /// `tasks/get`.
    TasksGet,
    /// `tasks/update`.
    TasksUpdate,
    /// `tasks/cancel`.
    TasksCancel,
    /// `skills/list` (the skills extension, 2026-07-28).
    SkillsList,
    /// `skills/get` (the skills extension, 2026-07-28).
    SkillsGet,
    /// `resources/directory/read` (the skills extension, 2026-07-28).
    ResourcesDirectoryRead,
    /// A notification (`notifications/...`, no id); the method is in
    /// [`RequestContext::json_rpc_method`](crate::RequestContext::json_rpc_method).
    Notification,
    /// A client's JSON-RPC response to a server-to-client request (2025 sessions); the method
    /// is empty.
    ClientResponse,
    /// An HTTP `GET` opening or resuming a 2025 session's event stream; the method is empty.
    OpenStream,
    /// An HTTP `DELETE` ending a 2025 session; the method is empty.
    EndSession,
    /// Any other method, kept exactly as received.
    Other(JsonString),
}

impl OperationType {
    /// The operation a JSON-RPC method names, from the one method table.
    pub(crate) fn of(method: &JsonString) -> Self {
        match Method::of(method.as_str()) {
            Some(m) => m.operation_type(),
            None if method.as_str().starts_with("notifications/") => Self::Notification,
            None => Self::Other(method.clone()),
        }
    }
}

/// A method Tollgate serves on some revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Method {
    Discover,
    Initialize,
    Ping,
    LoggingSetLevel,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    Complete,
    ResourcesList,
    ResourcesTemplatesList,
    ResourcesRead,
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    SubscriptionsListen,
    TasksGet,
    TasksUpdate,
    TasksCancel,
    SkillsList,
    SkillsGet,
    ResourcesDirectoryRead,
}

/// Where a method exists.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Revisions {
    /// 2026-07-28 only.
    Modern,
    /// The 2025 revisions only.
    Legacy,
    /// Every revision.
    All,
}

/// One row of the table.
struct Row {
    name: &'static str,
    operation: fn() -> OperationType,
    revisions: Revisions,
    /// The parameter `Mcp-Name` mirrors (2026-07-28).
    mcp_name: Option<&'static str>,
}

const fn row(
    name: &'static str,
    operation: fn() -> OperationType,
    revisions: Revisions,
    mcp_name: Option<&'static str>,
) -> Row {
    Row {
        name,
        operation,
        revisions,
        mcp_name,
    }
}

use Revisions::{All, Legacy, Modern};

/// The table, one row per [`Method`], in its order (tested below).
const TABLE: [Row; 21] = [
    row("server/discover", || OperationType::Discover, Modern, None),
    row("initialize", || OperationType::Initialize, Legacy, None),
    row("ping", || OperationType::Ping, Legacy, None),
    row(
        "logging/setLevel",
        || OperationType::LoggingSetLevel,
        Legacy,
        None,
    ),
    row("tools/list", || OperationType::ToolsList, All, None),
    row("tools/call", || OperationType::ToolsCall, All, Some("name")),
    row("prompts/list", || OperationType::PromptsList, All, None),
    row(
        "prompts/get",
        || OperationType::PromptsGet,
        All,
        Some("name"),
    ),
    row("completion/complete", || OperationType::Complete, All, None),
    row("resources/list", || OperationType::ResourcesList, All, None),
    row(
        "resources/templates/list",
        || OperationType::ResourcesTemplatesList,
        All,
        None,
    ),
    row(
        "resources/read",
        || OperationType::ResourcesRead,
        All,
        Some("uri"),
    ),
    row(
        "resources/subscribe",
        || OperationType::ResourcesSubscribe,
        Legacy,
        None,
    ),
    row(
        "resources/unsubscribe",
        || OperationType::ResourcesUnsubscribe,
        Legacy,
        None,
    ),
    row(
        "subscriptions/listen",
        || OperationType::SubscriptionsListen,
        Modern,
        None,
    ),
    row(
        "tasks/get",
        || OperationType::TasksGet,
        Modern,
        Some("taskId"),
    ),
    row(
        "tasks/update",
        || OperationType::TasksUpdate,
        Modern,
        Some("taskId"),
    ),
    row(
        "tasks/cancel",
        || OperationType::TasksCancel,
        Modern,
        Some("taskId"),
    ),
    row("skills/list", || OperationType::SkillsList, Modern, None),
    row("skills/get", || OperationType::SkillsGet, Modern, None),
    row(
        "resources/directory/read",
        || OperationType::ResourcesDirectoryRead,
        Modern,
        None,
    ),
];

impl Method {
    #[inline]
    fn row(self) -> &'static Row {
        // The table has one row per variant, in the enum's order (tested below).
        &TABLE[self as usize]
    }

    /// The method a wire name names, on any revision. A `match` (on the hot path), kept equal
    /// to the table by the test below.
    pub(crate) fn of(name: &str) -> Option<Self> {
        Some(match name {
            "server/discover" => Self::Discover,
            "initialize" => Self::Initialize,
            "ping" => Self::Ping,
            "logging/setLevel" => Self::LoggingSetLevel,
            "tools/list" => Self::ToolsList,
            "tools/call" => Self::ToolsCall,
            "prompts/list" => Self::PromptsList,
            "prompts/get" => Self::PromptsGet,
            "completion/complete" => Self::Complete,
            "resources/list" => Self::ResourcesList,
            "resources/templates/list" => Self::ResourcesTemplatesList,
            "resources/read" => Self::ResourcesRead,
            "resources/subscribe" => Self::ResourcesSubscribe,
            "resources/unsubscribe" => Self::ResourcesUnsubscribe,
            "subscriptions/listen" => Self::SubscriptionsListen,
            "tasks/get" => Self::TasksGet,
            "tasks/update" => Self::TasksUpdate,
            "tasks/cancel" => Self::TasksCancel,
            "skills/list" => Self::SkillsList,
            "skills/get" => Self::SkillsGet,
            "resources/directory/read" => Self::ResourcesDirectoryRead,
            _ => return None,
        })
    }

    /// The method a wire name names when it exists on `revision`.
    pub(crate) fn on(name: &str, revision: ProtocolVersion) -> Option<Self> {
        Self::of(name).filter(|m| m.exists_on(revision))
    }

    /// The wire name.
    pub(crate) fn name(self) -> &'static str {
        self.row().name
    }

    /// The operation type handlers and admission see.
    pub(crate) fn operation_type(self) -> OperationType {
        (self.row().operation)()
    }

    /// Whether the method exists on `revision` (whether an endpoint offers it is the
    /// dispatcher's question).
    pub(crate) fn exists_on(self, revision: ProtocolVersion) -> bool {
        match self.row().revisions {
            Modern => !is_legacy(revision),
            Legacy => is_legacy(revision),
            All => true,
        }
    }

    /// The parameter `Mcp-Name` must mirror on 2026-07-28, if any.
    pub(crate) fn mcp_name_source(self) -> Option<&'static str> {
        self.row().mcp_name
    }

    /// The name of the operation the parameters name, as sent (before any lookup): the tool or
    /// prompt name, the resource, skill or directory URI, the completion reference's name or URI.
    pub(crate) fn operation_name(self, params: &JsonObject) -> Option<JsonString> {
        let from = |object: &JsonObject, key: &str| match object.get(key) {
            Some(JsonValue::String(s)) => Some(s.clone()),
            _ => None,
        };
        match self {
            Self::ToolsCall | Self::PromptsGet => from(params, "name"),
            Self::ResourcesRead
            | Self::ResourcesSubscribe
            | Self::ResourcesUnsubscribe
            | Self::SkillsGet
            | Self::ResourcesDirectoryRead => from(params, "uri"),
            Self::Complete => match params.get("ref") {
                Some(JsonValue::Object(r)) => from(r, "name").or_else(|| from(r, "uri")),
                _ => None,
            },
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_enum_order_and_names_are_unique() {
        for (i, row) in TABLE.iter().enumerate() {
            let method = Method::of(row.name);
            assert_eq!(method.map(|m| m as usize), Some(i), "{}", row.name);
            assert_eq!(method.map(Method::name), Some(row.name));
        }
        assert_eq!(Method::of("tasks/list"), None);
        assert_eq!(Method::of("notifications/cancelled"), None);
    }

    #[test]
    fn each_revision_has_its_methods() {
        let modern = ProtocolVersion::V2026_07_28;
        let legacy = ProtocolVersion::V2025_11_25;
        for name in [
            "server/discover",
            "subscriptions/listen",
            "tasks/get",
            "skills/list",
            "skills/get",
            "resources/directory/read",
        ] {
            assert!(Method::on(name, modern).is_some() && Method::on(name, legacy).is_none());
        }
        for name in [
            "initialize",
            "ping",
            "logging/setLevel",
            "resources/subscribe",
        ] {
            assert!(Method::on(name, legacy).is_some() && Method::on(name, modern).is_none());
        }
        for name in [
            "tools/call",
            "prompts/get",
            "resources/read",
            "completion/complete",
        ] {
            assert!(Method::on(name, legacy).is_some() && Method::on(name, modern).is_some());
        }
    }
}
