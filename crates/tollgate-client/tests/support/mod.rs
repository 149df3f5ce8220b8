//! The endpoint the client's tests talk to, on every transport: an echo, a tool that asks the
//! user (2026-07-28 `input_required`, 2025 `elicitation/create` on the call's stream), a typed
//! tool with an output schema, and a tool that waits until it is cancelled.

#![allow(dead_code, unreachable_pub, reason = "each test file uses a subset")]
#![allow(clippy::unwrap_used, reason = "tests")]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tollgate::context::{ClientRequests, InputRequest, InputRequiredResult};
use tollgate::endpoint::ProtocolVersions;
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::tool::{
    CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement, OperationResult,
};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    Server, ToolArguments, ToolRegistration,
};

pub const ALL: [ProtocolVersion; 5] = [
    ProtocolVersion::V2026_07_28,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2024_11_05,
];

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
pub struct Sum {
    pub a: i64,
    pub b: i64,
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema, Debug, PartialEq)]
pub struct Total {
    pub total: i64,
}

pub fn json(text: &str) -> JsonValue {
    from_str(text, &JsonLimits::default()).unwrap()
}

pub fn text(result: &JsonValue) -> &str {
    result
        .get("content")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .and_then(|b| b.get("text"))
        .and_then(JsonValue::as_str)
        .unwrap_or("")
}

async fn echo(
    _: &RequestContext,
    args: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let text = args
        .converted()
        .get("region")
        .and_then(JsonValue::as_str)
        .unwrap_or("none")
        .to_owned();
    Ok(CompleteResult::from_tool_text(text).into())
}

fn name_schema() -> JsonObject {
    match json(r#"{"type":"object","properties":{"name":{"type":"string","default":"Ada"}}}"#) {
        JsonValue::Object(o) => o,
        _ => JsonObject::new(),
    }
}

fn answered_name(answer: &JsonValue) -> String {
    answer
        .get("content")
        .and_then(|c| c.get("name"))
        .and_then(JsonValue::as_str)
        .unwrap_or("?")
        .to_owned()
}

/// Asks for a name: `input_required` on 2026-07-28, a request on the stream on 2025.
async fn ask(
    ctx: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let question = || InputRequest::elicitation("Your name?", name_schema());
    if ctx.protocol_version() == ProtocolVersion::V2026_07_28 {
        if let Some(answer) = ctx.input_response("name") {
            return Ok(
                CompleteResult::from_tool_text(format!("hello {}", answered_name(answer))).into(),
            );
        }
        return Ok(InputRequiredResult::with_input_request("name", question()).into());
    }
    let Some(client) = features.find::<ClientRequests>() else {
        return Ok(CompleteResult::from_tool_text("no channel").into());
    };
    let text = match client.send(question()).await {
        Ok(answer) => format!("hello {}", answered_name(&answer)),
        Err(_) => "refused".to_owned(),
    };
    Ok(CompleteResult::from_tool_text(text).into())
}

async fn add(
    _: &RequestContext,
    args: ToolArguments<Sum>,
    _: &InvocationFeatures,
) -> Result<Total, Infallible> {
    let sum = args.converted();
    Ok(Total {
        total: sum.a + sum.b,
    })
}

/// The endpoint; `cancelled` counts the `wait` calls that ended by cancellation.
pub fn endpoint(revisions: &[ProtocolVersion], cancelled: Arc<AtomicUsize>) -> Endpoint {
    let set = || revisions.iter().copied().collect::<ProtocolVersions>();
    let mut builder = Endpoint::with_path("/mcp", set(), Implementation::new("t", "1"));
    if revisions.contains(&ProtocolVersion::V2026_07_28) {
        let mirrored = json(
            r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#,
        );
        builder = builder.add_tool(
            ToolRegistration::with_name("mirror", [ProtocolVersion::V2026_07_28])
                .input_schema(&mirrored)
                .unwrap()
                .handler(echo)
                .build()
                .unwrap(),
        );
    }
    // `cancelled` is 1 once the call runs, 2 once the server ended it (its future dropped or
    // its cancellation token fired).
    let wait = move |_: &RequestContext, _: ToolArguments<JsonObject>, f: &InvocationFeatures| {
        let token = f.cancellation().clone();
        let guard = Ended(Arc::clone(&cancelled));
        async move {
            guard.0.fetch_add(1, Ordering::SeqCst);
            token.cancelled().await;
            drop(guard);
            Ok::<OperationResult, Infallible>(CompleteResult::from_tool_text("cancelled").into())
        }
    };
    builder
        .add_tool(
            ToolRegistration::with_name("echo", set())
                .json_object_arguments()
                .handler(echo)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("ask", set())
                .json_object_arguments()
                .handler(ask)
                .input_request_declarations([InputRequestDeclaration::new(
                    InputRequestKind::Elicitation,
                    InputRequirement::Conditional,
                )])
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("add", set())
                .argument_and_output_types::<Sum, Total>()
                .handler(add)
                .build()
                .unwrap(),
        )
        .add_tool(
            ToolRegistration::with_name("wait", set())
                .json_object_arguments()
                .handler(wait)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

struct Ended(Arc<AtomicUsize>);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

pub async fn start(endpoint: Endpoint) -> SocketAddr {
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), McpService::new(endpoint))
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));
    addr
}

/// Answers `elicitation/create` by accepting with the schema's defaults, and counts
/// notifications.
#[derive(Default)]
pub struct Accept {
    pub notifications: Arc<AtomicUsize>,
}

impl tollgate_client::handler::Handler for Accept {
    fn notification(&self, _: &str, _: Option<&JsonObject>) {
        self.notifications.fetch_add(1, Ordering::SeqCst);
    }

    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Option<&'a JsonObject>,
    ) -> tollgate_client::handler::HandlerFuture<'a> {
        Box::pin(async move {
            if method != "elicitation/create" {
                return Err(tollgate_client::handler::Refusal::METHOD_NOT_FOUND);
            }
            let content =
                tollgate_client::handler::apply_elicitation_defaults(params, JsonObject::new());
            Ok(JsonObject::builder()
                .insert("action", "accept")
                .insert("content", content)
                .build()
                .into())
        })
    }
}

pub fn elicitation() -> JsonObject {
    JsonObject::builder()
        .insert("elicitation", JsonObject::new())
        .build()
}
