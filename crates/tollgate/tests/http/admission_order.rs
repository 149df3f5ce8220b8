//! Admission precedes every lookup, capability check and header comparison, for every method,
//! on every revision: over real HTTP, with a controller that refuses callers without a key, an
//! unknown tool name, a real tool name, a mismatched `Mcp-Param-*` header, a missing client
//! capability, `tools/list`, `prompts/get`, `resources/read` and `tasks/get` all get the same
//! 401 and no handler is entered; with the key, the usual answers come back. The controller also
//! sees each operation's name as sent, before any lookup.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use support::{Response, post, start};
use tollgate::json::{JsonLimits, JsonObject, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    content::{ResourceContents, TextContent},
    context::ClientCapability,
    policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest, OperationType},
    prompt::{PromptArguments, PromptMessage, PromptRegistration, PromptResult},
    resource::{ResourceOutput, ResourceRegistration, ResourceRequest},
    task::InMemoryTaskStore,
    tool::{CompleteResult, OperationResult},
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const ALL: [ProtocolVersion; 3] = [V26, V1125, V0618];

/// What the controller saw: (operation, operation name) per decision.
type Seen = Arc<Mutex<Vec<(OperationType, Option<String>)>>>;

struct Fixture {
    addr: SocketAddr,
    entered: Arc<AtomicUsize>,
    seen: Seen,
}

async fn fixture() -> Fixture {
    let entered = Arc::new(AtomicUsize::new(0));
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let admit = move |request: &AdmissionRequest<'_>| {
        let ctx = request.context();
        log.lock().unwrap().push((
            ctx.operation_type().clone(),
            ctx.operation_name().map(str::to_owned),
        ));
        match request.header("x-api-key") {
            Some("k") => AdmissionDecision::admit(AdmissionIdentity::principal("team")),
            _ => AdmissionDecision::unauthorized(),
        }
    };
    let (t, p, r) = (
        Arc::clone(&entered),
        Arc::clone(&entered),
        Arc::clone(&entered),
    );
    let tool = move |_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures| {
        t.fetch_add(1, Ordering::SeqCst);
        async { Ok::<OperationResult, Infallible>(CompleteResult::from_tool_text("ran").into()) }
    };
    let prompt = move |_: &RequestContext, _: PromptArguments, _: &InvocationFeatures| {
        p.fetch_add(1, Ordering::SeqCst);
        async {
            Ok::<_, std::fmt::Error>(PromptResult::with_message(PromptMessage::user(
                TextContent::new("hi"),
            )))
        }
    };
    let resource = move |_: &RequestContext, req: ResourceRequest, _: &InvocationFeatures| {
        r.fetch_add(1, Ordering::SeqCst);
        let uri = req.uri().to_owned();
        async move {
            Ok::<_, tollgate::content::ContentError>(ResourceOutput::with_contents(
                ResourceContents::text(&uri, None, "r")?,
            ))
        }
    };
    let mirrored = from_str(
        r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    let endpoint = Endpoint::with_path("/mcp", ALL, Implementation::new("order", "1"))
        .legacy_sessions(None)
        .admission(admit)
        .refused_admission_limiter(None)
        .task_store(InMemoryTaskStore::default())
        .add_tool(
            ToolRegistration::with_name("real", ALL)
                .json_object_arguments()
                .handler(tool.clone())
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("mirrored", [V26])
                .input_schema(&mirrored)
                .unwrap()
                .handler(tool.clone())
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("sampler", ALL)
                .json_object_arguments()
                .handler(tool)
                .require_client_capability(ClientCapability::Sampling)
                .build()
                .unwrap(),
        )
        .add_prompt(
            PromptRegistration::with_name("greet", ALL)
                .handler(prompt)
                .build()
                .unwrap(),
        )
        .add_resource(
            ResourceRegistration::with_uri("test://r", "r", ALL)
                .handler(resource)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    Fixture {
        addr: start(McpService::new(endpoint)).await,
        entered,
        seen,
    }
}

/// One request: `params` without braces; on 2026-07-28 with `_meta`, `Mcp-Method` and (when
/// given) `Mcp-Name`; `extra` headers added as they are.
async fn send(
    addr: SocketAddr,
    revision: ProtocolVersion,
    key: bool,
    method: &str,
    name: Option<&str>,
    params: &str,
    extra: &[(&str, &str)],
) -> Response {
    let mut headers = vec![("MCP-Protocol-Version", revision.as_str())];
    if key {
        headers.push(("X-Api-Key", "k"));
    }
    let mut params = params.to_owned();
    if revision == V26 {
        headers.push(("Mcp-Method", method));
        if let Some(n) = name {
            headers.push(("Mcp-Name", n));
        }
        let sep = if params.is_empty() { "" } else { "," };
        params = format!(
            r#"{params}{sep}"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{"extensions":{{"io.modelcontextprotocol/tasks":{{}}}}}}}}"#
        );
    }
    headers.extend_from_slice(extra);
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}}}}}"#);
    post(addr, &headers, body.as_bytes()).await
}

/// A probe: (label, method, `Mcp-Name`, params, extra headers).
type Probe = (
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
    Vec<(&'static str, &'static str)>,
);

/// The probes of the issue, per revision.
fn probes(revision: ProtocolVersion) -> Vec<Probe> {
    let mut probes = vec![
        (
            "unknown tool",
            "tools/call",
            Some("nope"),
            r#""name":"nope","arguments":{}"#,
            vec![],
        ),
        (
            "real tool",
            "tools/call",
            Some("real"),
            r#""name":"real","arguments":{}"#,
            vec![],
        ),
        (
            "missing capability",
            "tools/call",
            Some("sampler"),
            r#""name":"sampler","arguments":{}"#,
            vec![],
        ),
        ("tools/list", "tools/list", None, "", vec![]),
        (
            "prompts/get",
            "prompts/get",
            Some("greet"),
            r#""name":"greet""#,
            vec![],
        ),
        (
            "resources/read",
            "resources/read",
            Some("test://r"),
            r#""uri":"test://r""#,
            vec![],
        ),
    ];
    if revision == V26 {
        probes.push((
            "mismatched Mcp-Param",
            "tools/call",
            Some("mirrored"),
            r#""name":"mirrored","arguments":{"region":"eu"}"#,
            vec![("Mcp-Param-Region", "us")],
        ));
        probes.push((
            "tasks/get",
            "tasks/get",
            Some("0123456789abcdef0123456789abcdef"),
            r#""taskId":"0123456789abcdef0123456789abcdef""#,
            vec![],
        ));
    }
    probes
}

#[tokio::test]
async fn a_refused_caller_learns_nothing_and_enters_no_handler() {
    let f = fixture().await;
    for revision in ALL {
        for (label, method, name, params, extra) in probes(revision) {
            let resp = send(f.addr, revision, false, method, name, params, &extra).await;
            assert_eq!(
                (resp.status, resp.code(), resp.message().as_str()),
                (401, -32001, "Unauthorized"),
                "{revision} {label}: {}",
                resp.text()
            );
        }
    }
    assert_eq!(
        f.entered.load(Ordering::SeqCst),
        0,
        "no handler was entered"
    );
}

#[tokio::test]
async fn an_admitted_caller_gets_the_usual_answers() {
    let f = fixture().await;
    for revision in ALL {
        let legacy = revision != V26;
        for (label, method, name, params, extra) in probes(revision) {
            let resp = send(f.addr, revision, true, method, name, params, &extra).await;
            let text = resp.text();
            match label {
                "unknown tool" => assert_eq!(resp.code(), -32602, "{revision}: {text}"),
                "real tool" | "tools/list" | "prompts/get" | "resources/read" => {
                    assert_eq!(resp.status, 200, "{revision} {label}: {text}");
                    assert!(
                        resp.json().get("result").is_some(),
                        "{revision} {label}: {text}"
                    );
                }
                "missing capability" => {
                    assert_eq!(resp.code(), -32021, "{revision}: {text}");
                    assert_eq!(resp.status, if legacy { 200 } else { 400 });
                }
                "mismatched Mcp-Param" => assert_eq!((resp.status, resp.code()), (400, -32020)),
                "tasks/get" => assert_eq!(resp.code(), -32602, "{text}"),
                _ => unreachable!("{label}"),
            }
        }
    }
    // The real tool, the prompt and the resource ran once per revision.
    assert_eq!(f.entered.load(Ordering::SeqCst), 9);
}

#[tokio::test]
async fn admission_sees_each_operation_name_as_sent() {
    let f = fixture().await;
    for revision in ALL {
        f.seen.lock().unwrap().clear();
        for (_, method, name, params, extra) in probes(revision) {
            let _ = send(f.addr, revision, false, method, name, params, &extra).await;
        }
        let _ = send(
            f.addr,
            revision,
            false,
            "completion/complete",
            None,
            r#""ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"a","value":"b"}"#,
            &[],
        )
        .await;
        let seen = f.seen.lock().unwrap().clone();
        let names: Vec<(OperationType, Option<&str>)> = seen
            .iter()
            .map(|(o, n)| (o.clone(), n.as_deref()))
            .collect();
        assert!(
            names.contains(&(OperationType::ToolsCall, Some("nope"))),
            "{revision}: {names:?}"
        );
        assert!(names.contains(&(OperationType::ToolsCall, Some("real"))));
        assert!(names.contains(&(OperationType::PromptsGet, Some("greet"))));
        assert!(names.contains(&(OperationType::ResourcesRead, Some("test://r"))));
        assert!(names.contains(&(OperationType::Complete, Some("greet"))));
        assert!(names.contains(&(OperationType::ToolsList, None)));
        if revision == V26 {
            assert!(names.iter().any(|(o, _)| *o == OperationType::TasksGet));
        }
    }
}
