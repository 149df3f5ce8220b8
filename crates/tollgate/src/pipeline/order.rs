//! The validation order of a 2026-07-28 HTTP request, as data: every check, the stage that runs
//! it, and its fixed answer, top to bottom as the pipeline runs them. The first failure wins.
//!
//! `docs/protocol.md`'s order table is rendered from [`ORDER`] ([`render`]); the HTTP and
//! JSON-RPC columns of a row that fails with a [`Fault`] come from `wire/fault.rs`, so the
//! document cannot disagree with the answers. `tests/shape/protocol_order.rs` keeps the document in
//! step (`TOLLGATE_BLESS=1` rewrites it). Knows nothing of requests: it is a table.

use std::fmt::Write as _;

use crate::wire::fault::Fault;
use crate::wire::stage::Stage;

/// A check's answer when it fails.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Answer {
    /// A fixed fault, with a note for the JSON-RPC column (data, id handling).
    Fault(Fault, &'static str),
    /// An answer that is not one fault: the HTTP and JSON-RPC columns as written.
    Other(&'static str, &'static str),
}

/// One row of the order table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Check {
    pub(crate) id: &'static str,
    pub(crate) stage: Stage,
    pub(crate) check: &'static str,
    pub(crate) failure: &'static str,
    pub(crate) answer: Answer,
}

const fn row(
    id: &'static str,
    stage: Stage,
    check: &'static str,
    failure: &'static str,
    answer: Answer,
) -> Check {
    Check {
        id,
        stage,
        check,
        failure,
        answer,
    }
}

use Answer::{Fault as F, Other as O};
use Stage::*;

/// Every check of a 2026-07-28 HTTP request (and the session stage of a 2025 one), in the order
/// they run.
pub(crate) const ORDER: &[Check] = &[
    row(
        "0",
        Transport,
        "The built-in server: the connection has a place (its peer within `ServerLimits::max_connections_per_peer`; with every place taken, the slowest connection only waiting on its client is shed for it, else it waits up to 100 ms)",
        "none",
        O(
            "503, `Retry-After: 1`, `Connection: close`",
            "-32603 `Server busy`, id `null`",
        ),
    ),
    row(
        "1",
        Transport,
        "Path is an endpoint's exact path",
        "unknown path",
        O("404", "(empty body)"),
    ),
    row(
        "1b",
        Transport,
        "The request's header fields fit the header limit (`McpServiceBuilder::max_header_bytes`)",
        "too large",
        O("431", "(empty)"),
    ),
    row(
        "2",
        Transport,
        "`Host` (else the request target's authority) present once and a host with an optional port (RFC 9112 §3.2); then `localhost`, `127.0.0.1`, `[::1]` or an allowed host (DNS-rebinding guard)",
        "absent, repeated or malformed / other host",
        O("400 / 403", "(empty)"),
    ),
    row(
        "3",
        Transport,
        "`Origin`, when present, is present once and an allowed origin",
        "repeated or other origin",
        O("403", "(empty)"),
    ),
    row(
        "3b",
        Transport,
        "With a CORS policy, an `OPTIONS` preflight (`Access-Control-Request-Method`): the origin, the method and every requested header granted (the endpoint's `Mcp-Param-*` names included). Answered here: never admitted, parsed or rate-limited",
        "granted / not",
        O("204 with the grant / 403", "(empty)"),
    ),
    row(
        "3c",
        Transport,
        "A protected endpoint's RFC 9728 metadata path (`/.well-known/oauth-protected-resource` followed by the endpoint's path; the bare well-known path when one endpoint is protected): `GET`/`HEAD` answered with the document here, never admitted, parsed or rate-limited",
        "other method",
        O(
            "200 with the document / 405, `Allow: GET, HEAD`",
            "(not JSON-RPC)",
        ),
    ),
    row(
        "4",
        Transport,
        "Method is POST (`GET` and `DELETE` belong to 2025 sessions: see below)",
        "anything else",
        O(
            "405, `Allow: POST` (`GET, POST, DELETE` on an endpoint keeping 2025 sessions)",
            "(empty)",
        ),
    ),
    row(
        "5",
        Transport,
        "`Content-Type` is `application/json` (parameters allowed)",
        "other",
        O("415", "(empty)"),
    ),
    row(
        "6",
        Transport,
        "`Accept`, when present, permits `application/json` and `text/event-stream`",
        "other",
        O("406", "(empty)"),
    ),
    row(
        "7",
        Transport,
        "Body within the byte limit (checked from `Content-Length` before reading, and while reading); the rest of a refused body is still read and discarded, up to 16 MiB and 2 s, so a client that writes it all before reading gets the answer, not a reset",
        "too large",
        F(Fault::Parse, ""),
    ),
    row(
        "7b",
        Transport,
        "The built-in server: the body arrives whole within `ServerLimits::body_timeout` of the head, and after the grace at `body_min_rate` (timed by the connection's one timer)",
        "too slow",
        O("408, `Connection: close`, the connection closed", "(empty)"),
    ),
    row(
        "7c",
        Transport,
        "A body over 64 KiB fits its peer's budget of body bytes in unanswered requests (`McpServiceBuilder::max_body_bytes_per_peer`), counted as it arrives; the rest of a refused body is drained as for one too large",
        "over",
        F(Fault::Busy, "(no id), `Retry-After: 1`"),
    ),
    row(
        "8",
        Envelope,
        "Strict JSON within every input limit (depth, values, string units, duplicate names, UTF-8, BOM)",
        "any",
        F(Fault::Parse, "(no id)"),
    ),
    row(
        "9",
        Envelope,
        "JSON-RPC envelope: an object with `\"jsonrpc\":\"2.0\"`, a string `method`, a string or integer `id`, an object `params`, nothing else",
        "any",
        F(Fault::InvalidRequest, "(id when readable)"),
    ),
    row(
        "9a",
        Envelope,
        "A JSON array is a batch only on 2025-03-26 (served over HTTP, and no revision header or one naming it; on stdio, in a 2025-03-26 session), else row 9 refuses it: not empty (400, -32600 with `id: null`), at most `EndpointLimits::max_batch_elements` elements (default 32); then `initialize` inside it is -32600 with its id, and every other element runs this table as a message of its own; the answers are one array (202, empty, when no element answers; an element's admission or rate-limit refusal answers the whole batch)",
        "too many",
        F(Fault::BatchTooLarge, "(no id)"),
    ),
    row(
        "9b",
        Revision,
        "On an endpoint serving a 2025 revision: `initialize`, a header naming a served 2025 revision, or `Mcp-Session-Id` without a revision header, takes the 2025 path (below)",
        "",
        O("", ""),
    ),
    row(
        "9c",
        Revision,
        "A header naming a served 2025 revision agrees with the body's `_meta` revision (`io.modelcontextprotocol/protocolVersion`), when the body names one",
        "another revision",
        F(Fault::HeaderMismatch, "(a notification: the status alone)"),
    ),
    row(
        "10",
        Revision,
        "A notification (no `id`)",
        "accepted (its `MCP-Protocol-Version` names a served revision) / not",
        O("202 / 400", "(empty)"),
    ),
    row(
        "10b",
        Revision,
        "An `MCP-Protocol-Version` header, when present, names a served revision (checked before the method, so the client learns what to retry with)",
        "other",
        F(Fault::UnsupportedVersion, "(as row 13)"),
    ),
    row(
        "11",
        Revision,
        "The method is one Tollgate serves on 2026-07-28: `server/discover`, `tools/*`, `prompts/*`, `completion/complete`, `resources/list`, `resources/templates/list`, `resources/read`, `subscriptions/listen`, `tasks/get`, `tasks/update`, `tasks/cancel`, `skills/list`, `skills/get`, `resources/directory/read`",
        "`initialize`, `ping`, `logging/setLevel`, `tasks/list`, `tasks/result`, anything else",
        F(Fault::MethodNotFound, ""),
    ),
    row(
        "12",
        Revision,
        "`MCP-Protocol-Version` and `Mcp-Method` present once each, visible ASCII; `Mcp-Method` equals `method`; `Mcp-Name` present once and equal (after base64-sentinel decoding) to `params.name` (`tools/call`, `prompts/get`), `params.uri` (`resources/read`) or `params.taskId` (`tasks/*`)",
        "any",
        F(Fault::HeaderMismatch, ""),
    ),
    row(
        "13",
        Revision,
        "The header's revision is served here",
        "other",
        F(Fault::UnsupportedVersion, "`data: {supported, requested}`"),
    ),
    row(
        "14",
        Revision,
        "`params._meta` with string `io.modelcontextprotocol/protocolVersion` and object `io.modelcontextprotocol/clientCapabilities`; `clientInfo`, if sent, an object with string `name` and `version`",
        "any",
        F(Fault::InvalidParams, ""),
    ),
    row(
        "15",
        Revision,
        "`_meta` revision equals the header's",
        "other",
        F(Fault::HeaderMismatch, ""),
    ),
    row(
        "15b",
        Admission,
        "**Admission**, then the endpoint's request limiter, for every method. The controller sees the operation's name as sent (tool or prompt name, resource URI, completion reference): nothing below has looked anything up yet",
        "refused: no or a refused credential / forbidden / a malformed credential / throttled / the controller cannot decide (an authorization server unreachable)",
        O(
            "401 / 403 / 400 / 429 / 503 (with `WWW-Authenticate` or `Retry-After` where the controller gives one)",
            "-32001 / -32003 / -32600 / -31999 / -32603 (see below)",
        ),
    ),
    row(
        "15s",
        Session,
        "2025 only, after `initialize`: the session `Mcp-Session-Id` names exists and is the admitted principal's (another's is not found), the request names the session's revision, and the session's and its principal's running-request bounds hold; `initialize` starts the session here (over stdio, the connection's own), `logging/setLevel` is answered and a notification ends",
        "unknown or another's (another revision: 400 -32600; over a bound: 503 busy)",
        F(Fault::SessionNotFound, "(a notification: the status alone)"),
    ),
    row(
        "15c",
        Routing,
        "The endpoint offers the method on this revision (`prompts/*`, `completion/complete` and `resources/*` where it registers them; `tasks/*` with a task store; `skills/*` and `resources/directory/read` with skills)",
        "not offered",
        F(Fault::MethodNotFound, ""),
    ),
    row(
        "16",
        Lookup,
        "Method parameters (`tools/list`: optional string `cursor`; `tools/call`: string `name`, optional object `arguments`, optional object `inputResponses` and string `requestState` (see `input_required` below); the obsolete `task` member is ignored and never creates a task)",
        "any",
        F(Fault::InvalidParams, ""),
    ),
    row(
        "17",
        Lookup,
        "`tools/list` cursor was issued by this catalog",
        "other",
        F(Fault::InvalidCursor, ""),
    ),
    row(
        "19",
        Lookup,
        "The tool exists on this endpoint and revision",
        "unknown",
        F(Fault::UnknownTool, "(the name is not echoed)"),
    ),
    row(
        "19a",
        Lookup,
        "The admitted identity holds the scopes the operation requires (`required_scopes` of a tool, prompt, resource or template; a scope implied by a granted one counts). Checked after lookup, so an unknown name is still row 19's answer",
        "missing",
        O(
            "403, `WWW-Authenticate: Bearer error=\"insufficient_scope\"` with the metadata pointer and the granted and required scopes",
            "-32003 `Forbidden`",
        ),
    ),
    row(
        "19b",
        Lookup,
        "`skills/get`: `uri` names a served skill's `SKILL.md` (`skills/list`'s cursor: as row 17, issued by this list)",
        "unknown",
        F(Fault::SkillNotFound, "(the URI is not echoed)"),
    ),
    row(
        "19c",
        Lookup,
        "`resources/directory/read`: `uri` names a served skill directory (the skill's root or a directory below it); no cursor (one page)",
        "a file, unknown",
        F(Fault::NotADirectory, "(the URI is not echoed)"),
    ),
    row(
        "20",
        Lookup,
        "Capabilities the tool requires were declared: its own, the tasks extension for a task-required tool, and those of its `Required` input declarations",
        "missing",
        F(Fault::MissingCapability, "`data.requiredCapabilities`"),
    ),
    row(
        "21",
        Lookup,
        "Mirrored arguments agree with their `Mcp-Param-*` headers (below)",
        "any",
        F(Fault::HeaderMismatch, ""),
    ),
    row(
        "21b",
        Limiter,
        "The tool's limiter (its named limiter, else the endpoint's tool limiter)",
        "denied",
        F(Fault::RateLimited, ""),
    ),
    row(
        "21r",
        RequestState,
        "A retry's `requestState` (with `inputResponses`) opens under the endpoint's keys, is unexpired, and is bound to this tool, its arguments and the admitted principal; on a single-use endpoint it has not been used before (consumed here); a typed-complete tool never issued one",
        "any",
        F(Fault::InvalidRequestState, "(the state is not echoed)"),
    ),
    row(
        "21c",
        Interception,
        "Interceptors, when configured, outermost first: each sees the context and the arguments as sent (not yet validated) and may proceed, answer itself (a task it creates has its arguments validated as in row 22), or fail",
        "a failure, a panic, or an output of another kind",
        F(Fault::Internal, "(no text of it is sent)"),
    ),
    row(
        "22",
        Validation,
        "Arguments satisfy the input schema (budget included), then typed binding",
        "invalid",
        O(
            "200",
            "completed result, `isError: true`, text `Arguments do not match the tool's inputSchema.`; the handler is not called",
        ),
    ),
    row(
        "22b",
        Validation,
        "A concurrent-evaluation slot is free",
        "busy",
        F(Fault::Busy, ""),
    ),
    row(
        "23",
        Handler,
        "The handler succeeds (errors and panics are caught)",
        "error, panic",
        F(Fault::Internal, "(the error's text is never sent)"),
    ),
    row(
        "23b",
        Sanitizing,
        "The tool-result sanitizer, when configured, on every completed result (a handler's, an interceptor's, the fixed invalid-arguments result, a task's result at `tasks/get` and in `subscriptions/listen`)",
        "a refusal, a panic",
        F(Fault::Internal, ""),
    ),
    row(
        "23c",
        InputRequired,
        "An `input_required` result asks only for kinds the tool declared, carries only the state its request-state mode allows (an application-protected state 1 to 65,536 bytes), and is well formed (at most 32 unique keys of 1 to 256 bytes); a typed-complete tool never returns one",
        "any",
        F(Fault::Internal, "(nothing of the result is sent)"),
    ),
    row(
        "24",
        Output,
        "Typed output converts to JSON and satisfies its derived output schema (for a typed task-required tool, also the task's result at each `tasks/get`)",
        "any",
        F(Fault::Internal, ""),
    ),
    row(
        "25",
        Output,
        "Inline image/audio/blob items are at most 786,432 raw bytes; the whole response fits 4 MiB and the string ceilings",
        "any",
        F(Fault::Internal, ""),
    ),
];

/// The order table as `docs/protocol.md` shows it (Markdown, one row per check).
pub(crate) fn render() -> String {
    let mut out = String::from(
        "| # | Stage | Check | Failure | HTTP | JSON-RPC |\n| --- | --- | --- | --- | --- | --- |\n",
    );
    for c in ORDER {
        let (http, rpc) = match c.answer {
            F(fault, note) => {
                let status = fault.status().as_u16().to_string();
                let mut rpc = format!("{} `{}`", fault.code(), fault.message());
                if !note.is_empty() {
                    rpc.push(' ');
                    rpc.push_str(note);
                }
                (status, rpc)
            }
            O(http, rpc) => (http.to_owned(), rpc.to_owned()),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            c.id,
            c.stage.file(),
            c.check,
            c.failure,
            http,
            rpc
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_never_run_backwards() {
        let rank = |s: Stage| s as u8;
        for pair in ORDER.windows(2) {
            assert!(
                rank(pair[0].stage) <= rank(pair[1].stage),
                "row {} ({:?}) comes after row {} ({:?})",
                pair[1].id,
                pair[1].stage,
                pair[0].id,
                pair[0].stage
            );
        }
    }

    #[test]
    fn admission_precedes_every_lookup() {
        let admission = ORDER.iter().position(|c| c.stage == Stage::Admission);
        let first_lookup = ORDER.iter().position(|c| c.stage == Stage::Lookup);
        assert!(admission.is_some() && admission < first_lookup);
    }
}
