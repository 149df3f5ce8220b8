//! The one table of the methods Tollgate serves, and [`OperationType`], its public face. Each
//! method's wire name, its operation type, the revisions it exists on, the parameter
//! `Mcp-Name` mirrors on 2026-07-28, and where its operation name is read from all live here,
//! written once (`methods!`); the client notifications Tollgate acts on too ([`Notice`]). A
//! message's method is read once, into its envelope; dispatch, the gates, the header checks,
//! admission and the request context read it from there, and no method name is compared as a
//! string anywhere else.

use tollgate_json::{JsonObject, JsonString, JsonValue};

use crate::version::{ProtocolVersion, is_legacy};

/// Declares the method table once: [`OperationType`]'s method variants, [`Method`], the rows
/// (wire name, revisions, the parameter `Mcp-Name` mirrors), the name-to-method `match` and the
/// method-to-operation mapping are all generated from the one list below, so a method is added
/// in one place (and `pipeline::offered`'s exhaustive `match` then asks where it is offered).
macro_rules! methods {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal, $revisions:ident, $mcp_name:expr;
    )*) => {
        /// The kind of operation a request performs, so application code need not compare
        /// method strings. Every method Tollgate serves has a variant of its own; so do the HTTP
        /// requests that carry no JSON-RPC method (a stream `GET`, a session `DELETE`, a
        /// client's response).
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum OperationType {
            $( $(#[doc = $doc])* $variant, )*
            /// A notification (`notifications/...`, no id); the method is in
            /// [`RequestContext::json_rpc_method`](crate::RequestContext::json_rpc_method).
            Notification,
            /// A client's JSON-RPC response to a server-to-client request (2025 sessions); the
            /// method is empty.
            ClientResponse,
            /// An HTTP `GET` opening or resuming a 2025 session's event stream; the method is
            /// empty.
            OpenStream,
            /// An HTTP `DELETE` ending a 2025 session; the method is empty.
            EndSession,
            /// Any other method, kept exactly as received.
            Other(JsonString),
        }

        /// A method Tollgate serves on some revision.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub(crate) enum Method {
            $( $variant, )*
        }

        /// The table, one row per [`Method`], in its order.
        const TABLE: &[Row] = &[
            $( Row { name: $name, revisions: $revisions, mcp_name: $mcp_name }, )*
        ];

        impl Method {
            /// The method a wire name names, on any revision (a `match`: on the hot path).
            pub(crate) fn of(name: &str) -> Option<Self> {
                Some(match name {
                    $( $name => Self::$variant, )*
                    _ => return None,
                })
            }

            /// The operation type handlers and admission see.
            pub(crate) fn operation_type(self) -> OperationType {
                match self {
                    $( Self::$variant => OperationType::$variant, )*
                }
            }
        }
    };
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
    /// 2026-07-28 (the tasks extension) and 2025-11-25 (its experimental tasks).
    Tasks,
    /// 2025-11-25 only (its experimental tasks).
    RequestedTasks,
}

/// One row of the table.
struct Row {
    name: &'static str,
    revisions: Revisions,
    /// The parameter `Mcp-Name` mirrors (2026-07-28).
    mcp_name: Option<&'static str>,
}

use Revisions::{All, Legacy, Modern, RequestedTasks, Tasks};

methods! {
    /// `server/discover`.
    Discover = "server/discover", Modern, None;
    /// `initialize` (the 2025 revisions).
    Initialize = "initialize", Legacy, None;
    /// `ping`.
    Ping = "ping", Legacy, None;
    /// `logging/setLevel` (the 2025 revisions).
    LoggingSetLevel = "logging/setLevel", Legacy, None;
    /// `tools/list`.
    ToolsList = "tools/list", All, None;
    /// `tools/call`.
    ToolsCall = "tools/call", All, Some("name");
    /// `prompts/list`.
    PromptsList = "prompts/list", All, None;
    /// `prompts/get`.
    PromptsGet = "prompts/get", All, Some("name");
    /// `completion/complete`.
    Complete = "completion/complete", All, None;
    /// `resources/list`.
    ResourcesList = "resources/list", All, None;
    /// `resources/templates/list`.
    ResourcesTemplatesList = "resources/templates/list", All, None;
    /// `resources/read`.
    ResourcesRead = "resources/read", All, Some("uri");
    /// `resources/subscribe` (the 2025 revisions).
    ResourcesSubscribe = "resources/subscribe", Legacy, None;
    /// `resources/unsubscribe` (the 2025 revisions).
    ResourcesUnsubscribe = "resources/unsubscribe", Legacy, None;
    /// `subscriptions/listen` (2026-07-28).
    SubscriptionsListen = "subscriptions/listen", Modern, None;
    /// `tasks/get`.
    TasksGet = "tasks/get", Tasks, Some("taskId");
    /// `tasks/update` (2026-07-28).
    TasksUpdate = "tasks/update", Modern, Some("taskId");
    /// `tasks/cancel`.
    TasksCancel = "tasks/cancel", Tasks, Some("taskId");
    /// `tasks/result` (2025-11-25's experimental tasks).
    TasksResult = "tasks/result", RequestedTasks, None;
    /// `skills/list` (the skills extension, 2026-07-28).
    SkillsList = "skills/list", Modern, None;
    /// `skills/get` (the skills extension, 2026-07-28).
    SkillsGet = "skills/get", Modern, None;
    /// `resources/directory/read` (the skills extension, 2026-07-28).
    ResourcesDirectoryRead = "resources/directory/read", Modern, None;
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

/// A notification a client sends that Tollgate acts on (every other is accepted and ignored).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Notice {
    /// `notifications/cancelled`: stop the named request.
    Cancelled,
}

impl Notice {
    /// The notification a wire name names, if Tollgate acts on it.
    pub(crate) fn of(name: &str) -> Option<Self> {
        match name {
            "notifications/cancelled" => Some(Self::Cancelled),
            _ => None,
        }
    }
}

impl Method {
    #[inline]
    fn row(self) -> &'static Row {
        // The table has one row per variant, in the enum's order (both generated from one list).
        &TABLE[self as usize]
    }

    /// The method a wire name names when it exists on `revision`.
    #[cfg(test)]
    fn on(name: &str, revision: ProtocolVersion) -> Option<Self> {
        Self::of(name).filter(|m| m.exists_on(revision))
    }

    /// The wire name.
    pub(crate) fn name(self) -> &'static str {
        self.row().name
    }

    /// Whether `name` is this method's wire name: one comparison, for a caller asking about one
    /// method before the envelope has read the message's.
    #[inline]
    pub(crate) fn is_named(self, name: &str) -> bool {
        self.name() == name
    }

    /// Whether the method exists on `revision` (whether an endpoint offers it is the
    /// dispatcher's question).
    pub(crate) fn exists_on(self, revision: ProtocolVersion) -> bool {
        match self.row().revisions {
            Modern => !is_legacy(revision),
            Legacy => is_legacy(revision),
            All => true,
            Tasks => !is_legacy(revision) || revision.has_requested_tasks(),
            RequestedTasks => revision.has_requested_tasks(),
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
    fn the_notifications_acted_on_are_read_and_no_other() {
        assert_eq!(
            Notice::of("notifications/cancelled"),
            Some(Notice::Cancelled)
        );
        assert_eq!(Notice::of("notifications/initialized"), None);
        assert_eq!(Notice::of("notifications/progress"), None);
        assert_eq!(Notice::of("tools/call"), None);
    }

    #[test]
    fn each_revision_has_its_methods() {
        let modern = ProtocolVersion::V2026_07_28;
        let legacy = ProtocolVersion::V2025_11_25;
        for name in [
            "server/discover",
            "subscriptions/listen",
            "tasks/update",
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
        // 2025-11-25's experimental tasks: `tasks/get` and `tasks/cancel` there and on
        // 2026-07-28, `tasks/result` there alone, none of them on the earlier revisions.
        let older = ProtocolVersion::V2025_06_18;
        for name in ["tasks/get", "tasks/cancel"] {
            assert!(Method::on(name, legacy).is_some() && Method::on(name, modern).is_some());
            assert!(Method::on(name, older).is_none());
        }
        assert!(Method::on("tasks/result", legacy).is_some());
        assert!(Method::on("tasks/result", modern).is_none());
        assert!(Method::on("tasks/result", older).is_none());
    }
}
