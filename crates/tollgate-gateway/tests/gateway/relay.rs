//! What the gateway relays while a call runs: the upstream's progress to the caller that asked
//! for it, the caller's cancellation to the upstream, and completions with the prompt's name
//! mapped back.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tollgate::json::{JsonObject, JsonValue};
use tollgate::{Endpoint, Implementation, ProtocolVersion};
use tollgate_client::{CallOptions, Client};
use tollgate_gateway::{Gateway, GatewayConfig};

use crate::upstream::{Upstream, V26, config, gateway_client, object};

/// `progressive` (an event stream with progress) and `slow` (never answers).
const RELAY_TOOLS: &str = r#"{"tools":[
 {"name":"progressive","inputSchema":{"type":"object"}},
 {"name":"slow","inputSchema":{"type":"object"}}
]}"#;

/// One progress report as the caller saw it: progress, total, message.
type Report = (f64, Option<f64>, Option<String>);

async fn relay_upstream() -> (Upstream, std::net::SocketAddr) {
    let upstream = Upstream::default();
    *upstream.tools.lock().unwrap() = RELAY_TOOLS.to_owned();
    let addr = upstream.start().await;
    (upstream, addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstream_s_progress_reaches_the_caller_that_asked_for_it() {
    let (_upstream, addr) = relay_upstream().await;
    let gateway = Gateway::connect(&config(&[("up", addr, Some("up"))]), &[V26])
        .await
        .unwrap();
    let client = gateway_client(&gateway).await;
    let seen: Arc<Mutex<Vec<Report>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let options = CallOptions::new().on_progress(move |p| {
        sink.lock()
            .unwrap()
            .push((p.progress(), p.total(), p.message().map(str::to_owned)));
    });
    let result = client
        .call_tool_with("up_progressive", JsonObject::new(), options)
        .await
        .unwrap();
    assert_eq!(
        result
            .get("content")
            .and_then(|c| c.as_array())
            .and_then(|c| c.first())
            .and_then(|b| b.get("text"))
            .and_then(JsonValue::as_str),
        Some("progressed")
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (1.0, Some(2.0), Some("half".to_owned())),
            (2.0, Some(2.0), Some("done".to_owned()))
        ]
    );
    // A caller that did not ask gets the result alone (the upstream is asked for none).
    let plain = client
        .call_tool("up_progressive", JsonObject::new())
        .await
        .unwrap();
    assert!(plain.get("content").is_some());
    client.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_goes_away_cancels_the_upstream_call() {
    let (upstream, addr) = relay_upstream().await;
    // A long call bound, so only the caller's going away can end the upstream call.
    let text = format!(
        "[[upstream]]\nname = \"up\"\nprefix = \"up\"\ntimeout_ms = 600000\nurl = \"http://{addr}/mcp\"\n"
    );
    let config = GatewayConfig::from_toml(&text).unwrap();
    for revision in [V26, ProtocolVersion::V2025_11_25] {
        let gateway = Gateway::connect(&config, &[revision]).await.unwrap();
        let endpoint = gateway
            .install(Endpoint::with_path(
                "/mcp",
                [revision],
                Implementation::new("gateway", "1"),
            ))
            .build()
            .unwrap();
        let client = Client::builder()
            .connect_in_process(endpoint)
            .await
            .unwrap();
        let before = upstream.cancelled.load(std::sync::atomic::Ordering::SeqCst);
        // The caller gives up: its dropped call is cancelled towards the gateway.
        let call = client.call_tool("up_slow", JsonObject::new());
        assert!(
            tokio::time::timeout(Duration::from_millis(200), call)
                .await
                .is_err()
        );
        let mut relayed = false;
        for _ in 0..100 {
            if upstream.cancelled.load(std::sync::atomic::Ordering::SeqCst) > before {
                relayed = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(relayed, "{revision:?}: the upstream call was not cancelled");
        client.close().await.unwrap();
        gateway.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_go_to_the_upstream_under_its_own_prompt_name() {
    let addr = Upstream::default().start().await;
    let gateway = Gateway::connect(
        &config(&[("hostile", addr, Some("up"))]),
        &[V26, ProtocolVersion::V2025_11_25],
    )
    .await
    .unwrap();
    let client = gateway_client(&gateway).await;
    let reference = object(r#"{"type":"ref/prompt","name":"up_greet"}"#);
    let answer = client.complete(reference, "who", "Ad").await.unwrap();
    let completion = answer.get("completion").unwrap();
    let values: Vec<&str> = completion
        .get("values")
        .and_then(JsonValue::as_array)
        .unwrap()
        .iter()
        .filter_map(JsonValue::as_str)
        .collect();
    assert_eq!(values, ["greet/who/Ad"]);
    assert_eq!(completion.get("hasMore"), Some(&JsonValue::Bool(true)));
    assert_eq!(
        completion
            .get("total")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_u64()),
        Some(2)
    );
    // An argument the prompt does not declare is refused by the gateway's own check.
    let undeclared = object(r#"{"type":"ref/prompt","name":"up_greet"}"#);
    assert!(client.complete(undeclared, "nobody", "x").await.is_err());
    client.close().await.unwrap();
    gateway.close().await;
}

/// A Tollgate upstream on 2026-07-28 whose `confirm` asks for an elicitation with state of
/// its own (a Tollgate server always sends a `requestState`, sealed) and, on the retry,
/// answers what it received.
async fn asking_upstream() -> std::net::SocketAddr {
    use tollgate::context::{InputRequest, InputRequiredResult};
    use tollgate::tool::{
        CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement,
        OperationResult, RequestStateMode,
    };
    use tollgate::{InvocationFeatures, RequestContext, ToolArguments, ToolRegistration};

    async fn confirm(
        context: &RequestContext,
        _: ToolArguments<JsonObject>,
        _: &InvocationFeatures,
    ) -> Result<OperationResult, std::convert::Infallible> {
        let Some(responses) = context.input_responses() else {
            let ask = InputRequest::elicitation(
                "Proceed?",
                object(r#"{"type":"object","properties":{"ok":{"type":"boolean"}}}"#),
            );
            return Ok(InputRequiredResult::with_input_request("go", ask)
                .state(JsonValue::from("upstream-state"))
                .into());
        };
        let seen = JsonObject::builder()
            .insert("go", responses.get("go").cloned())
            .insert("state", context.request_state().cloned())
            .build();
        Ok(CompleteResult::from_tool_structured_content(seen).into())
    }

    let tool = ToolRegistration::with_name("confirm", [V26])
        .json_object_arguments()
        .handler(confirm)
        .input_request_declarations([InputRequestDeclaration::new(
            InputRequestKind::Elicitation,
            InputRequirement::Required,
        )])
        .request_state_mode(RequestStateMode::FrameworkProtected)
        .build()
        .unwrap();
    async fn ask(
        context: &RequestContext,
        _: tollgate::prompt::PromptArguments,
        _: &InvocationFeatures,
    ) -> Result<tollgate::prompt::PromptOutcome, std::convert::Infallible> {
        use tollgate::prompt::{PromptMessage, PromptResult};
        if context.input_responses().is_none() {
            let ask = InputRequest::elicitation("Proceed?", JsonObject::new());
            return Ok(InputRequiredResult::with_input_request("go", ask)
                .state(JsonValue::from("prompt-state"))
                .into());
        }
        let state = context.request_state().and_then(JsonValue::as_str);
        let text = tollgate::content::TextContent::new(format!("answered with {state:?}"));
        Ok(PromptResult::with_message(PromptMessage::user(text)).into())
    }

    let prompt = tollgate::prompt::PromptRegistration::with_name("ask", [V26])
        .handler(ask)
        .build()
        .unwrap();
    // A read asking for an elicitation first, then answering.
    let read = |context: &RequestContext,
                request: tollgate::resource::ResourceRequest,
                _: &InvocationFeatures| {
        let asked = context.input_responses().is_none();
        let uri = request.uri().to_owned();
        async move {
            use tollgate::resource::{ResourceOutcome, ResourceOutput};
            if asked {
                let ask = InputRequest::elicitation("Proceed?", JsonObject::new());
                return Ok::<ResourceOutcome, std::convert::Infallible>(
                    InputRequiredResult::with_input_request("go", ask).into(),
                );
            }
            let contents = tollgate::content::ResourceContents::text(&uri, None, "read").unwrap();
            Ok(ResourceOutput::with_contents(contents).into())
        }
    };
    let resource = tollgate::resource::ResourceRegistration::with_uri("ask://here", "here", [V26])
        .handler(read)
        .build()
        .unwrap();
    // A read that finds, as it runs, that it needs an extension its caller lacks.
    let feeds = |_: &RequestContext,
                 _: tollgate::resource::ResourceRequest,
                 _: &InvocationFeatures| async {
        let extension = tollgate::context::ClientCapability::Extension("com.example/feeds".into());
        let missing = tollgate::tool::MissingCapabilities::new([extension]).unwrap();
        Ok::<tollgate::resource::ResourceOutcome, std::convert::Infallible>(missing.into())
    };
    let needs = tollgate::resource::ResourceRegistration::with_uri("feeds://here", "feeds", [V26])
        .handler(feeds)
        .build()
        .unwrap();
    let endpoint = Endpoint::with_path("/mcp", [V26], Implementation::new("asking", "1"))
        .add_tool(tool)
        .add_prompt(prompt)
        .add_resource(resource)
        .add_resource(needs)
        .build()
        .unwrap();
    let server = tollgate::Server::bind(
        "127.0.0.1:0".parse().unwrap(),
        tollgate::McpService::new(endpoint),
    )
    .await
    .unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));
    addr
}

/// Answers every elicitation with `{"ok": true}`.
struct Accept;

impl tollgate_client::handler::Handler for Accept {
    fn request<'a>(
        &'a self,
        method: &'a str,
        _: Option<&'a JsonObject>,
    ) -> tollgate_client::handler::HandlerFuture<'a> {
        Box::pin(async move {
            assert_eq!(method, "elicitation/create");
            Ok(object(r#"{"action":"accept","content":{"ok":true}}"#).into())
        })
    }
}

/// The gateway's endpoint, serving `revisions`.
fn endpoint(gateway: &Gateway, revisions: &[ProtocolVersion]) -> tollgate::Endpoint {
    let revisions = revisions.iter().copied();
    gateway
        .install(Endpoint::with_path(
            "/mcp",
            revisions.collect::<tollgate::endpoint::ProtocolVersions>(),
            Implementation::new("gateway", "1"),
        ))
        .build()
        .unwrap()
}

/// A client of the gateway's `revisions` on `revision`, answering elicitations.
async fn asked_client(
    gateway: &Gateway,
    revisions: &[ProtocolVersion],
    revision: tollgate_client::Revision,
) -> Client {
    let endpoint = endpoint(gateway, revisions);
    Client::builder()
        .capabilities(object(r#"{"elicitation":{}}"#))
        .handler(Accept)
        .revisions([revision])
        .connect_in_process(endpoint)
        .await
        .unwrap()
}

/// What the upstream's tool saw on the retry: the caller's answer and its own state.
fn seen(result: &JsonValue) -> (Option<&JsonValue>, Option<&str>) {
    let seen = result.get("structuredContent").unwrap();
    let ok = seen
        .get("go")
        .and_then(|g| g.get("content"))
        .and_then(|c| c.get("ok"));
    (ok, seen.get("state").and_then(JsonValue::as_str))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_s_input_required_reaches_a_2026_caller_and_its_answer_goes_back() {
    use tollgate_client::Revision;
    let addr = asking_upstream().await;
    let config = config(&[("asking", addr, Some("up"))]);

    // Served on 2026-07-28 alone: the upstream's state travels sealed in the gateway's, and
    // comes back to the upstream as it sent it (it never sees the gateway's).
    let gateway = Gateway::connect(&config, &[V26]).await.unwrap();
    let client = asked_client(&gateway, &[V26], Revision::V2026_07_28).await;
    let result = client
        .call_tool("up_confirm", JsonObject::new())
        .await
        .unwrap();
    assert_eq!(
        seen(&result),
        (Some(&JsonValue::Bool(true)), Some("upstream-state"))
    );
    // A prompt's input_required likewise (its state travels with it on any gateway).
    let prompt = client
        .get_prompt("up_ask", JsonObject::new())
        .await
        .unwrap();
    let text = prompt
        .get("messages")
        .and_then(|m| m.as_array())
        .and_then(|m| m.first())
        .and_then(|m| m.get("content"))
        .and_then(|c| c.get("text"))
        .and_then(JsonValue::as_str);
    assert_eq!(text, Some(r#"answered with Some("prompt-state")"#));
    // A caller that cannot answer an elicitation is told so (-32021), as for the
    // endpoint's own tools.
    let unable = Client::builder()
        .connect_in_process(endpoint(&gateway, &[V26]))
        .await
        .unwrap();
    let refused = unable
        .call_tool("up_confirm", JsonObject::new())
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some(-32021));
    // A prompt's and a read's likewise: the upstream's -32021 is the endpoint's own.
    let refused = unable
        .get_prompt("up_ask", JsonObject::new())
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some(-32021));
    let refused = unable.read_resource("up+ask://here").await.unwrap_err();
    assert_eq!(refused.code(), Some(-32021));
    // An extension the upstream's read finds missing is named to the caller as it was named.
    let refused = unable.read_resource("up+feeds://here").await.unwrap_err();
    assert_eq!(refused.code(), Some(-32021));
    let named = refused
        .data()
        .and_then(|d| d.get("requiredCapabilities"))
        .and_then(|r| r.get("extensions"))
        .and_then(|e| e.get("com.example/feeds"));
    assert!(named.is_some(), "{:?}", refused.data());
    // The read's input_required reaches a caller that can answer, and its answer goes back.
    let read = client.read_resource("up+ask://here").await.unwrap();
    let text = read
        .get("contents")
        .and_then(JsonValue::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("text"))
        .and_then(JsonValue::as_str);
    assert_eq!(text, Some("read"));
    unable.close().await.unwrap();
    client.close().await.unwrap();
    gateway.close().await;

    // Served on 2025 revisions too, the gateway's tools keep no state (the runtime's rule), so
    // an upstream's state cannot travel: the fixed internal error, never a hang.
    let revisions = [V26, ProtocolVersion::V2025_11_25];
    let gateway = Gateway::connect(&config, &revisions).await.unwrap();
    let client = asked_client(&gateway, &revisions, Revision::V2026_07_28).await;
    let error = client
        .call_tool("up_confirm", JsonObject::new())
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some(-32603));
    client.close().await.unwrap();

    // A 2025 caller over stdio is asked in lines: the gateway's client answers the upstream's
    // round with the caller's answer and the upstream's own state, within the call.
    let old = asked_client(&gateway, &revisions, Revision::V2025_11_25).await;
    let result = old
        .call_tool("up_confirm", JsonObject::new())
        .await
        .unwrap();
    assert_eq!(
        seen(&result),
        (Some(&JsonValue::Bool(true)), Some("upstream-state"))
    );
    old.close().await.unwrap();

    // A 2025 caller without elicitation is refused as the endpoint refuses its own: -32021.
    let unable = Client::builder()
        .revisions([Revision::V2025_11_25])
        .connect_in_process(endpoint(&gateway, &revisions))
        .await
        .unwrap();
    let refused = unable
        .call_tool("up_confirm", JsonObject::new())
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some(-32021));
    unable.close().await.unwrap();
    gateway.close().await;
}
