//! Prompts and completions over real HTTP on every revision, side by side: catalogs,
//! capabilities, argument checks before the handler, each revision's projection, `Mcp-Name`
//! agreement on 2026-07-28, and the registration rules.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::net::SocketAddr;

use support::{META, Response, post, start};
use tollgate::json::{JsonValue, to_string};
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext,
    content::{Icon, ImageContent, ResourceLink, TextContent},
    prompt::{
        Completion, CompletionRequest, PromptArgument, PromptArguments, PromptMessage,
        PromptRegistration, PromptResult,
    },
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const ALL: [ProtocolVersion; 3] = [V26, V1125, V0618];

async fn greet(
    ctx: &RequestContext,
    args: PromptArguments,
    _: &InvocationFeatures,
) -> Result<PromptResult, std::fmt::Error> {
    let name = args.get("name").unwrap_or_default();
    let style = args.get("style").unwrap_or("plain");
    Ok(
        PromptResult::with_message(PromptMessage::user(TextContent::new(format!(
            "Greet {name} ({style}) via {}",
            ctx.operation_name().unwrap_or_default()
        ))))
        .add_message(PromptMessage::assistant(TextContent::new("Hello!")))
        .description("a greeting"),
    )
}

async fn complete_name(
    _: &RequestContext,
    request: CompletionRequest,
) -> Result<Completion, std::fmt::Error> {
    if request.argument() == "style" {
        return Ok(Completion::from_values(
            (0..150).map(|i| format!("style{i}")),
        ));
    }
    let names = ["ada", "alan", "grace"];
    let prefix = request.value().to_owned();
    let suffix = request.context("style").unwrap_or_default().to_owned();
    Ok(Completion::from_values(
        names
            .iter()
            .filter(|n| n.starts_with(&prefix))
            .map(|n| format!("{n}{suffix}")),
    ))
}

async fn picture(
    _: &RequestContext,
    _: PromptArguments,
    _: &InvocationFeatures,
) -> Result<PromptResult, std::fmt::Error> {
    Ok(PromptResult::with_message(PromptMessage::user(
        ImageContent::new(&[1, 2, 3], "image/png").unwrap(),
    )))
}

async fn linked(
    _: &RequestContext,
    _: PromptArguments,
    _: &InvocationFeatures,
) -> Result<PromptResult, std::fmt::Error> {
    let link = ResourceLink::new("https://example.com/doc", "doc")
        .unwrap()
        .add_icon(Icon::with_source("https://example.com/i.png").unwrap());
    Ok(PromptResult::with_message(PromptMessage::user(link)))
}

async fn failing(
    _: &RequestContext,
    _: PromptArguments,
    _: &InvocationFeatures,
) -> Result<PromptResult, std::fmt::Error> {
    Err(std::fmt::Error)
}

fn service() -> McpService {
    let prompt = |name: &str| PromptRegistration::with_name(name, ALL);
    McpService::new(
        Endpoint::with_path("/mcp", ALL, Implementation::new("prompts", "1"))
            .legacy_sessions(None)
            .add_prompt(
                prompt("greet")
                    .handler(greet)
                    .title("Greeting")
                    .description("Greets someone")
                    .add_icon(Icon::with_source("https://example.com/g.png").unwrap())
                    .add_argument(PromptArgument::required("name").description("Who"))
                    .add_argument(PromptArgument::optional("style"))
                    .completion(complete_name)
                    .build()
                    .unwrap(),
            )
            .add_prompt(prompt("picture").handler(picture).build().unwrap())
            .add_prompt(prompt("linked").handler(linked).build().unwrap())
            .add_prompt(prompt("failing").handler(failing).build().unwrap())
            .add_prompt(
                PromptRegistration::with_name("modern_only", [V26])
                    .handler(picture)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    )
}

/// Sends `method` with `params` (no braces) on `revision`, with the 2026 headers and `_meta`
/// when it is 2026-07-28 (`name` goes to `Mcp-Name`).
async fn send(
    addr: SocketAddr,
    revision: ProtocolVersion,
    method: &str,
    params: &str,
    name: Option<&str>,
) -> Response {
    let mut headers = vec![("MCP-Protocol-Version", revision.as_str())];
    let params = if revision == V26 {
        headers.push(("Mcp-Method", method));
        if let Some(name) = name {
            headers.push(("Mcp-Name", name));
        }
        let sep = if params.is_empty() { "" } else { "," };
        format!("{params}{sep}{META}")
    } else {
        params.to_owned()
    };
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}}}}}"#);
    post(addr, &headers, body.as_bytes()).await
}

fn error_status(revision: ProtocolVersion) -> u16 {
    // -32602 is 400 on 2026-07-28; the 2025 transports carry it in 200.
    if revision == V26 { 400 } else { 200 }
}

#[tokio::test]
async fn capabilities_and_catalogs_per_revision() {
    let addr = start(service()).await;
    let discover = send(addr, V26, "server/discover", "", None).await;
    let caps = discover.result().get("capabilities").cloned().unwrap();
    assert_eq!(
        to_string(&caps, &Default::default()).unwrap(),
        r#"{"completions":{},"prompts":{}}"#
    );
    for revision in [V1125, V0618] {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
            revision.as_str()
        );
        let resp = post(addr, &[], init.as_bytes()).await;
        let caps = resp.result().get("capabilities").cloned().unwrap();
        assert_eq!(
            to_string(&caps, &Default::default()).unwrap(),
            r#"{"completions":{},"prompts":{"listChanged":false}}"#
        );
    }
    for (revision, names, icons) in [
        (
            V26,
            vec!["greet", "picture", "linked", "failing", "modern_only"],
            true,
        ),
        (V1125, vec!["greet", "picture", "linked", "failing"], true),
        (V0618, vec!["greet", "picture", "linked", "failing"], false),
    ] {
        let resp = send(addr, revision, "prompts/list", "", None).await;
        assert_eq!(resp.status, 200);
        let result = resp.result();
        let listed: Vec<String> = result
            .get("prompts")
            .and_then(JsonValue::as_array)
            .unwrap()
            .iter()
            .map(|p| {
                p.get("name")
                    .and_then(JsonValue::as_str)
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(listed, names, "{revision}");
        let greet = result
            .get("prompts")
            .and_then(|p| p.as_array())
            .unwrap()
            .as_slice()[0]
            .clone();
        assert_eq!(greet.get("icons").is_some(), icons, "{revision}");
        assert_eq!(
            to_string(greet.get("arguments").unwrap(), &Default::default()).unwrap(),
            r#"[{"name":"name","description":"Who","required":true},{"name":"style"}]"#
        );
        assert_eq!(result.get("resultType").is_some(), revision == V26);
        assert_eq!(result.get("ttlMs").is_some(), revision == V26);
        // Prompt catalogs are one page: any cursor is one this endpoint did not issue.
        let resp = send(addr, revision, "prompts/list", r#""cursor":"x""#, None).await;
        assert_eq!((resp.status, resp.code()), (error_status(revision), -32602));
        assert_eq!(resp.message(), "Invalid cursor");
    }
}

#[tokio::test]
async fn get_checks_arguments_before_the_handler_on_every_revision() {
    let addr = start(service()).await;
    for revision in ALL {
        let ok = send(
            addr,
            revision,
            "prompts/get",
            r#""name":"greet","arguments":{"name":"Ada","style":"warm"}"#,
            Some("greet"),
        )
        .await;
        assert_eq!(ok.status, 200, "{}", ok.text());
        let result = ok.result();
        let text = to_string(&result, &Default::default()).unwrap();
        let prefix = if revision == V26 {
            r#"{"resultType":"complete","#
        } else {
            "{"
        };
        assert_eq!(
            text,
            format!(
                r#"{prefix}"description":"a greeting","messages":[{{"role":"user","content":{{"type":"text","text":"Greet Ada (warm) via greet"}}}},{{"role":"assistant","content":{{"type":"text","text":"Hello!"}}}}]}}"#
            )
        );
        for (arguments, why) in [
            (r#""name":"greet""#, "a required argument missing"),
            (
                r#""name":"greet","arguments":{"style":"x"}"#,
                "a required argument missing",
            ),
            (
                r#""name":"greet","arguments":{"name":"A","mood":"x"}"#,
                "an unknown argument",
            ),
            (
                r#""name":"greet","arguments":{"name":7}"#,
                "a value that is not a string",
            ),
            (
                r#""name":"greet","arguments":["A"]"#,
                "arguments that are not an object",
            ),
        ] {
            let resp = send(addr, revision, "prompts/get", arguments, Some("greet")).await;
            assert_eq!(
                (resp.status, resp.code()),
                (error_status(revision), -32602),
                "{why}"
            );
            assert_eq!(resp.message(), "Invalid params");
            assert!(!resp.text().contains("mood") && !resp.text().contains("\"A\""));
        }
        let unknown = send(
            addr,
            revision,
            "prompts/get",
            r#""name":"nope""#,
            Some("nope"),
        )
        .await;
        assert_eq!(
            (unknown.code(), unknown.message()),
            (-32602, "Unknown prompt".to_owned())
        );
        let failing = send(
            addr,
            revision,
            "prompts/get",
            r#""name":"failing""#,
            Some("failing"),
        )
        .await;
        assert_eq!((failing.status, failing.code()), (200, -32603));
        let picture = send(
            addr,
            revision,
            "prompts/get",
            r#""name":"picture""#,
            Some("picture"),
        )
        .await;
        assert!(
            picture
                .text()
                .contains(r#""type":"image","data":"AQID","mimeType":"image/png""#)
        );
        // A resource link with icons cannot be shown on 2025-06-18: the prompt fails rather
        // than silently losing them.
        let linked = send(
            addr,
            revision,
            "prompts/get",
            r#""name":"linked""#,
            Some("linked"),
        )
        .await;
        if revision == V0618 {
            assert_eq!((linked.status, linked.code()), (200, -32603));
        } else {
            assert!(
                linked
                    .text()
                    .contains(r#""icons":[{"src":"https://example.com/i.png"}]"#)
            );
        }
    }
    // A prompt selecting only 2026-07-28 does not exist on the 2025 revisions.
    let resp = send(addr, V1125, "prompts/get", r#""name":"modern_only""#, None).await;
    assert_eq!(resp.message(), "Unknown prompt");
}

#[tokio::test]
async fn mcp_name_must_agree_on_2026() {
    let addr = start(service()).await;
    let params = r#""name":"greet","arguments":{"name":"A"}"#;
    for name in [None, Some("other")] {
        let resp = send(addr, V26, "prompts/get", params, name).await;
        assert_eq!((resp.status, resp.code()), (400, -32020), "{name:?}");
    }
    let encoded = send(
        addr,
        V26,
        "prompts/get",
        params,
        Some("=?base64?Z3JlZXQ=?="),
    )
    .await;
    assert_eq!(encoded.status, 200, "{}", encoded.text());
}

#[tokio::test]
async fn completions_per_revision() {
    let addr = start(service()).await;
    for revision in ALL {
        let ask = |argument: &str, value: &str, context: &str| {
            format!(
                r#""ref":{{"type":"ref/prompt","name":"greet"}},"argument":{{"name":"{argument}","value":"{value}"}}{context}"#
            )
        };
        let resp = send(
            addr,
            revision,
            "completion/complete",
            &ask("name", "a", ""),
            None,
        )
        .await;
        assert_eq!(resp.status, 200, "{}", resp.text());
        let completion = resp.result().get("completion").cloned().unwrap();
        assert_eq!(
            to_string(&completion, &Default::default()).unwrap(),
            r#"{"values":["ada","alan"],"hasMore":false}"#
        );
        let with_context = ask("name", "g", r#","context":{"arguments":{"style":"!"}}"#);
        let resp = send(addr, revision, "completion/complete", &with_context, None).await;
        assert!(
            resp.text().contains(r#""values":["grace!"]"#),
            "{}",
            resp.text()
        );
        let many = send(
            addr,
            revision,
            "completion/complete",
            &ask("style", "", ""),
            None,
        )
        .await;
        let completion = many.result().get("completion").cloned().unwrap();
        assert_eq!(
            completion
                .get("values")
                .and_then(|v| v.as_array())
                .map(|a| a.len()),
            Some(100)
        );
        assert!(many.text().contains(r#""total":150,"hasMore":true"#));
        // A prompt without a completion handler offers nothing.
        let none =
            r#""ref":{"type":"ref/prompt","name":"picture"},"argument":{"name":"x","value":""}"#;
        let resp = send(addr, revision, "completion/complete", none, None).await;
        assert_eq!(resp.code(), -32602, "picture declares no argument x");
        for (params, why) in [
            (ask("mood", "", ""), "an undeclared argument"),
            (ask("name", "", r#","context":{"arguments":{"mood":"x"}}"#), "undeclared context"),
            (ask("name", "", r#","context":{"arguments":{"style":1}}"#), "non-string context"),
            (
                r#""ref":{"type":"ref/resource","uri":"file:///x"},"argument":{"name":"a","value":""}"#.to_owned(),
                "a resource reference (no resources are served)",
            ),
            (r#""ref":{"type":"ref/prompt","name":"greet"}"#.to_owned(), "no argument"),
        ] {
            let resp = send(addr, revision, "completion/complete", &params, None).await;
            assert_eq!((resp.status, resp.code()), (error_status(revision), -32602), "{why}");
        }
        let unknown =
            r#""ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""}"#;
        let resp = send(addr, revision, "completion/complete", unknown, None).await;
        assert_eq!(resp.message(), "Unknown prompt");
    }
}

#[tokio::test]
async fn an_endpoint_without_prompts_has_no_prompt_methods() {
    let addr = start(McpService::new(
        Endpoint::with_path("/mcp", ALL, Implementation::new("bare", "1"))
            .legacy_sessions(None)
            .build()
            .unwrap(),
    ))
    .await;
    let discover = send(addr, V26, "server/discover", "", None).await;
    assert!(
        discover
            .result()
            .get("capabilities")
            .unwrap()
            .get("prompts")
            .is_none()
    );
    // Without the capability the methods do not exist here, on any revision.
    for revision in ALL {
        let status = if revision == V26 { 404 } else { 200 };
        let list = send(addr, revision, "prompts/list", "", None).await;
        assert_eq!((list.status, list.code()), (status, -32601));
        let get = send(addr, revision, "prompts/get", r#""name":"x""#, Some("x")).await;
        assert_eq!(get.code(), -32601);
        let complete =
            r#""ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":""}"#;
        let resp = send(addr, revision, "completion/complete", complete, None).await;
        assert_eq!(resp.code(), -32601);
    }
}

#[test]
fn registration_rules() {
    let err = PromptRegistration::with_name("bad name", [V26])
        .handler(picture)
        .build()
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.prompt()),
        (BuildErrorKind::InvalidPromptName, Some("bad name"))
    );
    assert!(err.to_string().contains("prompt `bad name`"));
    let err = PromptRegistration::with_name("p", [V26])
        .handler(picture)
        .add_argument(PromptArgument::required("a"))
        .add_argument(PromptArgument::optional("a"))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidPromptArgument);
    let err = PromptRegistration::with_name("p", [V26])
        .handler(picture)
        .add_argument(PromptArgument::required(""))
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::InvalidPromptArgument);
    let p = || {
        PromptRegistration::with_name("p", [V26])
            .handler(picture)
            .build()
            .unwrap()
    };
    let err = Endpoint::with_path("/mcp", [V26], Implementation::new("e", "1"))
        .add_prompt(p())
        .add_prompt(p())
        .build()
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::DuplicatePromptName);
    let err = Endpoint::with_path("/mcp", [V1125], Implementation::new("e", "1"))
        .add_prompt(p())
        .build()
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.prompt()),
        (BuildErrorKind::RevisionOutsideEndpoint, Some("p"))
    );
}

async fn needs_topic(
    ctx: &RequestContext,
    _: PromptArguments,
    _: &InvocationFeatures,
) -> Result<tollgate::prompt::PromptOutcome, std::fmt::Error> {
    let topic = ctx
        .input_response("topic")
        .and_then(|r| r.get("content"))
        .and_then(|c| c.get("topic"))
        .and_then(JsonValue::as_str)
        .map(str::to_owned);
    Ok(match topic {
        Some(topic) => PromptResult::with_message(PromptMessage::user(TextContent::new(format!(
            "About {topic}"
        ))))
        .into(),
        None => tollgate::context::InputRequiredResult::with_input_request(
            "topic",
            tollgate::context::InputRequest::elicitation(
                "Topic?",
                tollgate::json::JsonObject::new(),
            ),
        )
        .into(),
    })
}

#[tokio::test]
async fn a_prompt_may_ask_for_input_on_2026() {
    let addr = start(McpService::new(
        Endpoint::with_path("/mcp", [V26, V1125], Implementation::new("p", "1"))
            .legacy_sessions(None)
            .add_prompt(
                PromptRegistration::with_name("topical", [V26, V1125])
                    .handler(needs_topic)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    ))
    .await;
    let caps = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
    let get = |extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{{"name":"topical"{extra},{caps}}}}}"#
        )
    };
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "prompts/get"),
        ("Mcp-Name", "topical"),
    ];
    let first = post(addr, &headers, get("").as_bytes()).await;
    let result = first.result();
    assert_eq!(
        result.get("resultType").and_then(JsonValue::as_str),
        Some("input_required")
    );
    let state = result
        .get("requestState")
        .and_then(JsonValue::as_str)
        .unwrap()
        .to_owned();
    let retry = format!(
        r#","inputResponses":{{"topic":{{"action":"accept","content":{{"topic":"tea"}}}}}},"requestState":"{state}""#
    );
    let second = post(addr, &headers, get(&retry).as_bytes()).await;
    assert!(
        second.text().contains(r#""text":"About tea""#),
        "{}",
        second.text()
    );
    // The state is bound to the prompt's arguments; an empty `arguments` is the same as none.
    let other = format!(r#","arguments":{{}}{retry}"#);
    assert_eq!(
        post(addr, &headers, get(&other).as_bytes()).await.status,
        200
    );
    // 2025-11-25 cannot carry the result.
    let legacy = r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"topical"}}"#;
    let resp = post(
        addr,
        &[("MCP-Protocol-Version", "2025-11-25")],
        legacy.as_bytes(),
    )
    .await;
    assert_eq!((resp.status, resp.code()), (200, -32603));
}

/// Finds, as it runs, that the prompt needs the client's roots.
async fn needs_roots(
    _: &RequestContext,
    _: PromptArguments,
    _: &InvocationFeatures,
) -> Result<tollgate::prompt::PromptOutcome, std::fmt::Error> {
    let missing =
        tollgate::tool::MissingCapabilities::new([tollgate::context::ClientCapability::Roots]);
    Ok(missing.unwrap().into())
}

#[tokio::test]
async fn a_prompt_names_capabilities_it_finds_missing() {
    let addr = start(McpService::new(
        Endpoint::with_path("/mcp", [V26, V1125], Implementation::new("p", "1"))
            .legacy_sessions(None)
            .add_prompt(
                PromptRegistration::with_name("rooted", [V26, V1125])
                    .handler(needs_roots)
                    .build()
                    .unwrap(),
            )
            .build()
            .unwrap(),
    ))
    .await;
    let resp = send(
        addr,
        V26,
        "prompts/get",
        r#""name":"rooted""#,
        Some("rooted"),
    )
    .await;
    assert_eq!((resp.status, resp.code()), (400, -32021));
    assert!(
        resp.text()
            .contains(r#""data":{"requiredCapabilities":{"roots":{}}}"#),
        "{}",
        resp.text()
    );
    let resp = send(addr, V1125, "prompts/get", r#""name":"rooted""#, None).await;
    assert_eq!((resp.status, resp.code()), (200, -32021));
}
