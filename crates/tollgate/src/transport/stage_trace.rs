//! The stage-trace test: requests of each kind, on each revision and transport, run through the
//! real service or stdio server with the stage record on (`wire/stage.rs`); the stages each ran
//! are compared with what that request must run, with the order table (`order.rs`), and with
//! the rooms: a request never returns to a room (top-level module) it has left.

#![allow(clippy::unwrap_used, clippy::panic, reason = "tests")]

use std::convert::Infallible;

use tokio::io::AsyncReadExt;

use crate::model::result::CompleteResult;
use crate::model::tool::ToolRegistration;
use crate::pipeline::order::ORDER;
use crate::registry::{Endpoint, Implementation};
use crate::transport::service::McpService;
use crate::version::ProtocolVersion;
use crate::wire::stage::{Stage, traced};

const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;
const LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

async fn echo(
    _: &crate::facts::context::RequestContext,
    _: crate::model::tool::ToolArguments<tollgate_json::JsonObject>,
    _: &crate::model::features::InvocationFeatures,
) -> Result<crate::model::result::OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_text("ok").into())
}

fn endpoint() -> Endpoint {
    let tool = ToolRegistration::with_name("echo", [MODERN, LEGACY])
        .json_object_arguments()
        .handler(echo)
        .build()
        .unwrap();
    Endpoint::with_path("/mcp", [MODERN, LEGACY], Implementation::new("t", "1"))
        .logging(true)
        .add_tool(tool)
        .build()
        .unwrap()
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A POST to the service, with the standard headers for `method` (and `name`, when mirrored).
fn post(
    revision: &str,
    method: &str,
    name: Option<&str>,
    session: Option<&str>,
    body: String,
) -> http::Request<String> {
    let mut request = http::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", revision)
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.body(body).unwrap()
}

/// One request through the service: its status, session id and the stages it ran.
fn run(
    service: &McpService,
    request: http::Request<String>,
) -> (u16, Option<String>, Vec<(Stage, &'static str)>) {
    let ((status, session), trace) = traced(async {
        let response = service.serve(request).await;
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        (response.status().as_u16(), session)
    });
    (status, session, trace)
}

/// The room a module belongs to: its first segment below the crate.
fn room(module: &str) -> &str {
    module.split("::").nth(1).unwrap_or(module)
}

/// Checks a trace against what it must be, the order table and the rooms.
fn check(what: &str, trace: &[(Stage, &'static str)], expected: &[Stage]) {
    let stages: Vec<Stage> = trace.iter().map(|(s, _)| *s).collect();
    assert_eq!(stages, expected, "{what}: stages run");
    for pair in stages.windows(2) {
        assert!(
            pair[0] < pair[1],
            "{what}: {:?} ran after {:?}",
            pair[1],
            pair[0]
        );
    }
    for stage in &stages {
        assert!(
            ORDER.iter().any(|row| row.stage == *stage),
            "{what}: {stage:?} ran but the order table has no row for it"
        );
    }
    let mut left: Vec<&str> = Vec::new();
    let mut current = "";
    for (stage, module) in trace {
        let here = room(module);
        if here != current {
            assert!(
                !left.contains(&here),
                "{what}: {stage:?} returns to room `{here}` after leaving it ({trace:?})"
            );
            if !current.is_empty() {
                left.push(current);
            }
            current = here;
        }
    }
}

use Stage::*;

const CALL: &[Stage] = &[
    Transport, Envelope, Revision, Admission, Routing, Lookup, Limiter, Validation, Handler, Output,
];

#[test]
fn a_2026_request_runs_the_table_s_stages_in_order_through_three_rooms() {
    let service = McpService::new(endpoint());
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{}},{META}}}}}"#
    );
    let (status, _, trace) = run(
        &service,
        post("2026-07-28", "tools/call", Some("echo"), None, call),
    );
    assert_eq!(status, 200);
    check("2026 tools/call", &trace, CALL);
    let rooms: Vec<&str> = trace.iter().map(|(_, m)| room(m)).collect();
    assert_eq!(rooms.first(), Some(&"transport"));
    assert_eq!(rooms.last(), Some(&"methods"));

    let list = format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{META}}}}}"#);
    let (status, _, trace) = run(&service, post("2026-07-28", "tools/list", None, None, list));
    assert_eq!(status, 200);
    check(
        "2026 tools/list",
        &trace,
        &[Transport, Envelope, Revision, Admission, Routing, Lookup],
    );

    // A refusal at the gate runs nothing after it.
    let wrong = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"echo","arguments":{{}},{META}}}}}"#
    );
    let (status, _, trace) = run(
        &service,
        post("2026-07-28", "tools/list", None, None, wrong),
    );
    assert_eq!(status, 400);
    check(
        "2026 header mismatch",
        &trace,
        &[Transport, Envelope, Revision],
    );
}

#[test]
fn a_2025_session_runs_the_session_stage_between_admission_and_routing() {
    let service = McpService::new(endpoint());
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let (status, session, trace) = run(
        &service,
        post(
            "2025-11-25",
            "initialize",
            None,
            None,
            initialize.to_owned(),
        ),
    );
    assert_eq!(status, 200);
    check(
        "2025 initialize",
        &trace,
        &[Transport, Envelope, Revision, Admission, Session],
    );
    let session = session.unwrap();

    let call =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let (status, _, trace) = run(
        &service,
        post(
            "2025-11-25",
            "tools/call",
            Some("echo"),
            Some(&session),
            call.to_owned(),
        ),
    );
    assert_eq!(status, 200);
    let mut expected = CALL.to_vec();
    expected.insert(4, Session);
    check("2025 tools/call", &trace, &expected);

    let level = r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}"#;
    let (status, _, trace) = run(
        &service,
        post(
            "2025-11-25",
            "logging/setLevel",
            None,
            Some(&session),
            level.to_owned(),
        ),
    );
    assert_eq!(status, 200);
    check(
        "2025 setLevel",
        &trace,
        &[Transport, Envelope, Revision, Admission, Session],
    );

    let notice = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _, trace) = run(
        &service,
        post(
            "2025-11-25",
            "notifications/initialized",
            None,
            Some(&session),
            notice.to_owned(),
        ),
    );
    assert_eq!(status, 202);
    check(
        "2025 notification",
        &trace,
        &[Transport, Envelope, Revision, Admission, Session],
    );
}

/// Serves `lines` over stdio; returns what was written and the trace of each line (split where
/// the transport took the next line).
fn stdio(lines: &[String]) -> (String, Vec<Vec<(Stage, &'static str)>>) {
    let input = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    let (output, trace) = traced(async move {
        let (writer, mut reader) = tokio::io::duplex(1 << 16);
        let server = crate::transport::stdio::StdioServer::new(endpoint());
        let serving = tokio::spawn(server.serve(std::io::Cursor::new(input.into_bytes()), writer));
        let mut output = String::new();
        reader.read_to_string(&mut output).await.unwrap();
        serving.await.unwrap().unwrap();
        output
    });
    let mut per_line: Vec<Vec<(Stage, &'static str)>> = Vec::new();
    for entry in trace {
        if entry.0 == Transport || per_line.is_empty() {
            per_line.push(Vec::new());
        }
        if let Some(last) = per_line.last_mut() {
            last.push(entry);
        }
    }
    (output, per_line)
}

#[test]
fn stdio_runs_the_same_pipeline() {
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{}},{META}}}}}"#
    );
    let (output, traces) = stdio(&[call]);
    assert!(
        output.contains(r#""id":1"#) && output.contains("ok"),
        "{output}"
    );
    assert_eq!(traces.len(), 1);
    check("stdio 2026 tools/call", &traces[0], CALL);
    assert_eq!(room(traces[0][0].1), "transport");

    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let notice = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let call =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let (output, traces) = stdio(&[initialize.to_owned(), notice.to_owned(), call.to_owned()]);
    assert!(
        output.contains(r#""id":2"#) && output.contains("ok"),
        "{output}"
    );
    assert_eq!(traces.len(), 3);
    let opened = [Transport, Envelope, Revision, Admission, Session];
    check("stdio initialize", &traces[0], &opened);
    check("stdio notification", &traces[1], &opened);
    let mut expected = CALL.to_vec();
    expected.insert(4, Session);
    check("stdio 2025 tools/call", &traces[2], &expected);
}

#[test]
fn every_stage_has_a_row_in_the_order_table() {
    for stage in Stage::ALL {
        if stage == Transport {
            continue;
        }
        assert!(ORDER.iter().any(|row| row.stage == stage), "{stage:?}");
    }
}
