//! No echo: for random markers placed in every request position a client controls (argument
//! values and names, tool names, methods, cursors, `_meta`, header values, session ids,
//! task ids and task answers), no
//! error answer, on any revision, contains the marker. The request id is echoed by design and
//! `requested` in the unsupported-version error is required by the 2026-07-28 schema (bounded
//! to short tokens), so neither carries a marker here.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;

use proptest::prelude::*;
use support::{META, post, start};
use tollgate::json::{JsonLimits, JsonObject, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    tool::{CompleteResult, OperationResult},
};

async fn echo(
    _: &RequestContext,
    a: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    Ok(CompleteResult::from_tool_structured_content(a.raw().clone()).into())
}

async fn prompt(
    _: &tollgate::RequestContext,
    _: tollgate::prompt::PromptArguments,
    _: &InvocationFeatures,
) -> Result<tollgate::prompt::PromptResult, String> {
    Err("a prompt that fails".to_owned())
}

async fn unreadable(
    _: &RequestContext,
    r: tollgate::resource::ResourceRequest,
    _: &InvocationFeatures,
) -> Result<tollgate::resource::ResourceOutput, String> {
    Err(format!("cannot read {}", r.uri()))
}

async fn completion(
    _: &RequestContext,
    r: tollgate::prompt::CompletionRequest,
) -> Result<tollgate::prompt::Completion, String> {
    Err(format!("cannot complete {}", r.value()))
}

async fn failing(
    _: &RequestContext,
    a: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, String> {
    Err(format!("failed on {:?}", a.raw()))
}

fn service() -> McpService {
    let all = [
        ProtocolVersion::V2026_07_28,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
    ];
    let strict = from_str(
        r#"{"type":"object","properties":{"n":{"type":"integer"},"t":{"type":"string","enum":["a"]}},"additionalProperties":false}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    let mirrored = from_str(
        r#"{"type":"object","properties":{"t":{"type":"string","x-mcp-header":"T"}}}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    let endpoint = Endpoint::with_path("/mcp", all, Implementation::new("no-echo", "1"))
        .task_store(tollgate::task::InMemoryTaskStore::default())
        .add_tool(
            ToolRegistration::with_name("strict", all)
                .input_schema(&strict)
                .unwrap()
                .handler(echo)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("failing", all)
                .json_object_arguments()
                .handler(failing)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("mirrored", [ProtocolVersion::V2026_07_28])
                .input_schema(&mirrored)
                .unwrap()
                .handler(echo)
                .build()
                .unwrap(),
        )
        .add_prompt(
            tollgate::prompt::PromptRegistration::with_name("p", all)
                .handler(prompt)
                .add_argument(tollgate::prompt::PromptArgument::required("a"))
                .completion(completion)
                .build()
                .unwrap(),
        )
        .add_resource_template(
            tollgate::resource::ResourceTemplateRegistration::with_uri_template(
                "test://items/{id}",
                "i",
                all,
            )
            .handler(unreadable)
            .build()
            .unwrap(),
        )
        .build()
        .unwrap();
    McpService::new(endpoint)
}

/// Every request that puts `m` somewhere a client controls and must fail.
fn probes(m: &str) -> Vec<(Vec<(String, String)>, String)> {
    let modern = |method: &str, name: Option<&str>| {
        let mut h = vec![
            ("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned()),
            ("Mcp-Method".to_owned(), method.to_owned()),
        ];
        if let Some(n) = name {
            h.push(("Mcp-Name".to_owned(), n.to_owned()));
        }
        h
    };
    let call = |name: &str, args: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{args},{META}}}}}"#
        )
    };
    let legacy = vec![("MCP-Protocol-Version".to_owned(), "2025-06-18".to_owned())];
    let get = |name: &str, args: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{{"name":"{name}","arguments":{args},{META}}}}}"#
        )
    };
    let complete = |name: &str, argument: &str, value: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{{"ref":{{"type":"ref/prompt","name":"{name}"}},"argument":{{"name":"{argument}","value":"{value}"}},{META}}}}}"#
        )
    };
    let read = |uri: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{"uri":"{uri}",{META}}}}}"#
        )
    };
    let legacy_read = |uri: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{"uri":"{uri}"}}}}"#
        )
    };
    let tasks = |method: &str, params: &str, extension: bool| {
        let caps = if extension {
            r#"{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#
        } else {
            "{}"
        };
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{caps}}}}}}}"#
        )
    };
    vec![
        (
            modern("tasks/get", Some(m)),
            tasks("tasks/get", &format!(r#""taskId":"{m}""#), true),
        ),
        (
            modern("tasks/get", Some(m)),
            tasks("tasks/get", &format!(r#""taskId":"{m}""#), false),
        ),
        (
            modern("tasks/cancel", Some(m)),
            tasks("tasks/cancel", &format!(r#""taskId":"{m}""#), true),
        ),
        (
            modern("tasks/update", Some(m)),
            tasks(
                "tasks/update",
                &format!(r#""taskId":"{m}","inputResponses":{{"{m}":{{"action":"{m}"}}}}"#),
                true,
            ),
        ),
        (
            modern("tasks/update", Some("t")),
            tasks(
                "tasks/update",
                &format!(r#""taskId":"t","inputResponses":"{m}""#),
                true,
            ),
        ),
        (
            modern("tasks/get", Some("other")),
            tasks("tasks/get", &format!(r#""taskId":"{m}""#), true),
        ),
        (
            modern("resources/read", Some(&format!("test://{m}"))),
            read(&format!("test://{m}")),
        ),
        (
            modern("resources/read", Some(&format!("test://items/{m}"))),
            read(&format!("test://items/{m}")),
        ),
        (
            modern("resources/read", Some("test://x")),
            read(&format!("test://{m}")),
        ),
        (legacy.clone(), legacy_read(&format!("test://{m}"))),
        (legacy.clone(), legacy_read(&format!("test://items/{m}"))),
        (modern("prompts/get", Some(m)), get(m, "{}")),
        (
            modern("prompts/get", Some("p")),
            get("p", &format!(r#"{{"{m}":"x"}}"#)),
        ),
        (
            modern("prompts/get", Some("p")),
            get("p", &format!(r#"{{"a":"{m}"}}"#)),
        ),
        (modern("completion/complete", None), complete(m, "a", "x")),
        (modern("completion/complete", None), complete("p", m, "x")),
        (modern("completion/complete", None), complete("p", "a", m)),
        (
            modern("prompts/list", None),
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{{"cursor":"{m}",{META}}}}}"#
            ),
        ),
        (
            modern("tools/call", Some("strict")),
            call("strict", &format!(r#"{{"t":"{m}"}}"#)),
        ),
        (
            modern("tools/call", Some("strict")),
            call("strict", &format!(r#"{{"{m}":1}}"#)),
        ),
        (
            modern("tools/call", Some("strict")),
            call("strict", &format!(r#"{{"n":"{m}"}}"#)),
        ),
        (modern("tools/call", Some(m)), call(m, "{}")),
        (
            modern("tools/call", Some("failing")),
            call("failing", &format!(r#"{{"x":"{m}"}}"#)),
        ),
        (modern("tools/call", Some("other")), call("strict", "{}")),
        (modern("tools/call", Some(m)), call("strict", "{}")),
        (
            modern("tools/call", Some("mirrored")),
            call("mirrored", r#"{"t":"a"}"#),
        ),
        (
            {
                let mut h = modern("tools/call", Some("mirrored"));
                h.push(("Mcp-Param-T".to_owned(), m.to_owned()));
                h
            },
            call("mirrored", r#"{"t":"a"}"#),
        ),
        (
            modern(m, None),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{m}","params":{{{META}}}}}"#),
        ),
        (
            modern("tools/list", None),
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"cursor":"{m}",{META}}}}}"#
            ),
        ),
        (
            modern("tools/list", None),
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":"{m}"}}}}}}"#
            ),
        ),
        (
            modern("tools/list", None),
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"{m}"}}}}}}}}"#
            ),
        ),
        (
            modern("tools/list", None),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","{m}":1}}"#),
        ),
        (
            modern("tools/list", None),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"x":"{m}"#),
        ),
        (
            legacy.clone(),
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"strict","arguments":{{"t":"{m}"}}}}}}"#
            ),
        ),
        (
            legacy.clone(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{m}"}}"#),
        ),
        (
            {
                let mut h = legacy.clone();
                h.push(("Mcp-Session-Id".to_owned(), m.to_owned()));
                h
            },
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_owned(),
        ),
        (
            vec![],
            format!(
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{m}","capabilities":{{}},"clientInfo":{{"name":"{m}"}}}}}}"#
            ),
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn no_error_answer_contains_the_marker(marker in "[A-Za-z][A-Za-z0-9]{11,24}") {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let addr = start(service()).await;
            for (headers, body) in probes(&marker) {
                let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                let resp = post(addr, &headers, body.as_bytes()).await;
                let text = resp.text();
                let failed = resp.status != 200 || text.contains("\"error\"") || text.contains("\"isError\":true");
                assert!(failed, "the probe should fail: {body} -> {text}");
                assert!(!text.contains(&marker), "echoed {marker} in {} for {body}", text);
            }
        });
    }
}
