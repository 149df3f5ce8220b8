//! What a 2025 upstream asks of the caller during a call, relayed over Streamable HTTP on both
//! sides: its elicitation on the call's own stream reaches that call's caller and the caller's
//! answer goes back; a caller that cannot answer gets the upstream a fixed refusal; its log
//! messages reach the caller at the caller's own level.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tollgate::context::{
    ClientRequests, InputRequest, InputRequiredResult, LogLevel, RequestLogger,
};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::tool::{
    CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement, OperationResult,
};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    Server, ToolArguments, ToolRegistration,
};
use tollgate_client::handler::{Handler, HandlerFuture};
use tollgate_client::{Client, Revision};
use tollgate_gateway::{Gateway, GatewayConfig};

use crate::upstream::{V26, config, object};

pub(crate) const V25: ProtocolVersion = ProtocolVersion::V2025_11_25;

/// Logs `asking` at `info`, then asks the caller for a name on the call's stream.
async fn ask(
    _: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, std::convert::Infallible> {
    if let Some(log) = features.find::<RequestLogger>() {
        log.log_from(LogLevel::Info, "upstream", "asking");
    }
    Ok(CompleteResult::from_tool_text(ask_name(features).await).into())
}

/// Asks the caller for a name through the 2025 channel: `hello NAME`, or why not.
pub(crate) async fn ask_name(features: &InvocationFeatures) -> String {
    let Some(caller) = features.find::<ClientRequests>() else {
        return "no channel".to_owned();
    };
    let schema = object(r#"{"type":"object","properties":{"name":{"type":"string"}}}"#);
    match caller
        .send(InputRequest::elicitation("Name?", schema))
        .await
    {
        Ok(answer) => format!(
            "hello {}",
            answer
                .get("content")
                .and_then(|c| c.get("name"))
                .and_then(JsonValue::as_str)
                .unwrap_or("?")
        ),
        Err(error) => format!("refused: {error:?}"),
    }
}

pub(crate) async fn serve(endpoint: Endpoint) -> SocketAddr {
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), McpService::new(endpoint))
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));
    addr
}

/// A Tollgate upstream on 2025-11-25 alone, logging, serving [`ask`].
async fn upstream_2025() -> SocketAddr {
    let tool = ToolRegistration::with_name("ask", [V25])
        .json_object_arguments()
        .handler(ask)
        .input_request_declarations([InputRequestDeclaration::new(
            InputRequestKind::Elicitation,
            InputRequirement::Conditional,
        )])
        .build()
        .unwrap();
    let endpoint = Endpoint::with_path("/mcp", [V25], Implementation::new("asking", "1"))
        .logging(true)
        .add_tool(tool)
        .build()
        .unwrap();
    serve(endpoint).await
}

/// Answers elicitations with `name` and keeps the log messages it is sent.
#[derive(Clone)]
pub(crate) struct Caller {
    name: &'static str,
    pub(crate) asked: Arc<AtomicUsize>,
    logs: Arc<Mutex<Vec<JsonObject>>>,
}

impl Caller {
    pub(crate) fn new(name: &'static str) -> Self {
        Self {
            name,
            asked: Arc::default(),
            logs: Arc::default(),
        }
    }
}

impl Handler for Caller {
    fn notification(&self, method: &str, params: Option<&JsonObject>) {
        if method == "notifications/message" {
            self.logs
                .lock()
                .unwrap()
                .push(params.cloned().unwrap_or_default());
        }
    }

    fn request<'a>(&'a self, method: &'a str, _: Option<&'a JsonObject>) -> HandlerFuture<'a> {
        Box::pin(async move {
            assert_eq!(method, "elicitation/create");
            self.asked.fetch_add(1, Ordering::SeqCst);
            let content = JsonObject::builder().insert("name", self.name).build();
            Ok(JsonObject::builder()
                .insert("action", "accept")
                .insert("content", content)
                .build()
                .into())
        })
    }
}

/// The gateway in front of `upstream`, served over HTTP on `revisions`.
pub(crate) async fn gateway_url(
    upstream: SocketAddr,
    revisions: &[ProtocolVersion],
) -> (Gateway, String) {
    gateway_with(&config(&[("up", upstream, Some("up"))]), revisions).await
}

/// The gateway of `config`, served over HTTP on `revisions`.
async fn gateway_with(config: &GatewayConfig, revisions: &[ProtocolVersion]) -> (Gateway, String) {
    let gateway = Gateway::connect(config, revisions).await.unwrap();
    let endpoint = gateway
        .install(Endpoint::with_path(
            "/mcp",
            revisions
                .iter()
                .copied()
                .collect::<tollgate::endpoint::ProtocolVersions>(),
            Implementation::new("gateway", "1"),
        ))
        .build()
        .unwrap();
    let url = format!("http://{}/mcp", serve(endpoint).await);
    (gateway, url)
}

pub(crate) async fn connect(
    url: &str,
    revision: Revision,
    caller: &Caller,
    elicits: bool,
) -> Client {
    let capabilities = if elicits {
        object(r#"{"elicitation":{}}"#)
    } else {
        JsonObject::new()
    };
    Client::builder()
        .revisions([revision])
        .capabilities(capabilities)
        .handler(caller.clone())
        .connect_http(url)
        .await
        .unwrap()
}

fn text(result: &JsonValue) -> &str {
    result
        .get("content")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .and_then(|b| b.get("text"))
        .and_then(JsonValue::as_str)
        .unwrap()
}

async fn set_level(client: &Client, level: &str) {
    let level = JsonObject::builder().insert("level", level).build();
    client
        .request("logging/setLevel", Some(level))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_upstream_s_elicitation_and_logs_reach_the_call_s_caller() {
    let upstream = upstream_2025().await;
    let (gateway, url) = gateway_url(upstream, &[V26, V25]).await;
    // Two callers at once on their own sessions: each call's request reaches its own caller.
    let (ada, grace) = (Caller::new("Ada"), Caller::new("Grace"));
    let first = connect(&url, Revision::V2025_11_25, &ada, true).await;
    let second = connect(&url, Revision::V2025_11_25, &grace, true).await;
    set_level(&first, "info").await;
    set_level(&second, "error").await;
    let (a, b) = tokio::join!(
        first.call_tool("up_ask", JsonObject::new()),
        second.call_tool("up_ask", JsonObject::new())
    );
    assert_eq!(text(&a.unwrap()), "hello Ada");
    assert_eq!(text(&b.unwrap()), "hello Grace");
    assert_eq!(ada.asked.load(Ordering::SeqCst), 1);
    assert_eq!(grace.asked.load(Ordering::SeqCst), 1);
    // The log message reached the caller that asked for info, not the one that asked for
    // errors only (the gateway applies each caller's level).
    let logs = ada.logs.lock().unwrap().clone();
    assert_eq!(logs.len(), 1);
    assert_eq!(
        logs[0].get("level").and_then(JsonValue::as_str),
        Some("info")
    );
    assert_eq!(
        logs[0].get("logger").and_then(JsonValue::as_str),
        Some("upstream")
    );
    assert_eq!(
        logs[0].get("data").and_then(JsonValue::as_str),
        Some("asking")
    );
    assert!(grace.logs.lock().unwrap().is_empty());
    first.close().await.unwrap();
    second.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_cannot_answer_gets_the_upstream_the_fixed_refusal() {
    let upstream = upstream_2025().await;
    let (gateway, url) = gateway_url(upstream, &[V26, V25]).await;
    // A 2025 caller that declares no elicitation, and a 2026-07-28 caller (whose revision has
    // no server-to-client requests): the upstream's request is refused (-32601), the upstream
    // answers its own way, and neither caller is asked.
    for (revision, elicits) in [
        (Revision::V2025_11_25, false),
        (Revision::V2026_07_28, true),
    ] {
        let caller = Caller::new("Ada");
        let client = connect(&url, revision, &caller, elicits).await;
        let result = client.call_tool("up_ask", JsonObject::new()).await.unwrap();
        assert_eq!(text(&result), "refused: Rejected", "{revision}");
        assert_eq!(caller.asked.load(Ordering::SeqCst), 0, "{revision}");
        client.close().await.unwrap();
    }
    gateway.close().await;
}

/// One more round of asking for a name until `n` were given (the names so far in the request
/// state): the names joined, or the next `input_required`.
pub(crate) fn name_round(
    context: &RequestContext,
    n: usize,
) -> Result<String, InputRequiredResult> {
    let mut names: Vec<String> = context
        .request_state()
        .and_then(JsonValue::as_str)
        .map(|s| {
            s.split(',')
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if let Some(name) = context
        .input_responses()
        .and_then(|r| r.get("name"))
        .and_then(|a| a.get("content"))
        .and_then(|c| c.get("name"))
        .and_then(JsonValue::as_str)
    {
        names.push(name.to_owned());
    }
    if names.len() >= n {
        return Ok(names.join(","));
    }
    let schema = object(r#"{"type":"object","properties":{"name":{"type":"string"}}}"#);
    let ask = InputRequest::elicitation("Name?", schema);
    Err(InputRequiredResult::with_input_request("name", ask)
        .state(JsonValue::from(format!("{},", names.join(",")))))
}

/// A 2026-07-28 upstream whose `rounds` asks the caller for a name `n` times (one
/// `input_required` round each, its count carried in its own request state), then answers the
/// names it was given, joined. Its elicitation is required: a caller that does not declare it
/// is refused (-32021) before any round.
async fn rounds_upstream() -> SocketAddr {
    use tollgate::tool::RequestStateMode;
    async fn rounds(
        context: &RequestContext,
        arguments: ToolArguments<JsonObject>,
        _: &InvocationFeatures,
    ) -> Result<OperationResult, std::convert::Infallible> {
        let n = arguments
            .raw()
            .get("n")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_u64())
            .unwrap_or(1);
        Ok(
            match name_round(context, usize::try_from(n).unwrap_or(usize::MAX)) {
                Ok(names) => CompleteResult::from_tool_text(names).into(),
                Err(ask) => ask.into(),
            },
        )
    }
    let tool = ToolRegistration::with_name("rounds", [V26])
        .json_object_arguments()
        .handler(rounds)
        .input_request_declarations([InputRequestDeclaration::new(
            InputRequestKind::Elicitation,
            InputRequirement::Required,
        )])
        .request_state_mode(RequestStateMode::FrameworkProtected)
        .build()
        .unwrap();
    serve(
        Endpoint::with_path("/mcp", [V26], Implementation::new("rounds", "1"))
            .add_tool(tool)
            .build()
            .unwrap(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_upstream_s_input_required_reaches_a_2025_caller_on_its_call_s_stream() {
    let upstream = rounds_upstream().await;
    let (gateway, url) = gateway_url(upstream, &[V26, V25]).await;
    let ada = Caller::new("Ada");
    let client = connect(&url, Revision::V2025_11_25, &ada, true).await;
    // One round: the caller is asked on its call's stream, the upstream retried with the
    // answer and its own state.
    let one = client
        .call_tool("up_rounds", object(r#"{"n":1}"#))
        .await
        .unwrap();
    assert_eq!(text(&one), "Ada");
    assert_eq!(ada.asked.load(Ordering::SeqCst), 1);
    // At the bound (10 rounds, the upstream client's default) the call completes; one past it
    // is the fixed internal error, never a loop.
    let ten = client
        .call_tool("up_rounds", object(r#"{"n":10}"#))
        .await
        .unwrap();
    assert_eq!(text(&ten), ["Ada"; 10].join(","));
    assert_eq!(ada.asked.load(Ordering::SeqCst), 11);
    let eleven = client
        .call_tool("up_rounds", object(r#"{"n":11}"#))
        .await
        .unwrap_err();
    assert_eq!(eleven.code(), Some(-32603));
    assert_eq!(
        ada.asked.load(Ordering::SeqCst),
        21,
        "ten rounds asked, then refused"
    );
    client.close().await.unwrap();

    // A 2025 caller that does not declare elicitation is declared none: the upstream refuses
    // before asking (-32021), and the caller is refused so too, never asked.
    let grace = Caller::new("Grace");
    let unable = connect(&url, Revision::V2025_11_25, &grace, false).await;
    let refused = unable
        .call_tool("up_rounds", object(r#"{"n":1}"#))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Some(-32021));
    assert_eq!(grace.asked.load(Ordering::SeqCst), 0);
    unable.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rounds_answered_within_a_call_are_the_upstream_s_max_input_rounds() {
    let upstream = rounds_upstream().await;
    let table = format!(
        "[[upstream]]\nname = \"up\"\nprefix = \"up\"\nurl = \"http://{upstream}/mcp\"\nmax_input_rounds = 3\n"
    );
    let config = GatewayConfig::from_toml(&table).unwrap();
    let (gateway, url) = gateway_with(&config, &[V26, V25]).await;
    let ada = Caller::new("Ada");
    let client = connect(&url, Revision::V2025_11_25, &ada, true).await;
    // At the configured bound the call completes; one past it is the fixed internal error.
    let three = client
        .call_tool("up_rounds", object(r#"{"n":3}"#))
        .await
        .unwrap();
    assert_eq!(text(&three), "Ada,Ada,Ada");
    let four = client
        .call_tool("up_rounds", object(r#"{"n":4}"#))
        .await
        .unwrap_err();
    assert_eq!(four.code(), Some(-32603));
    assert_eq!(
        ada.asked.load(Ordering::SeqCst),
        6,
        "three rounds asked, then refused"
    );
    client.close().await.unwrap();
    gateway.close().await;
}
