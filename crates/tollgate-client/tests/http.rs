//! The client against a real Tollgate endpoint on loopback, on each revision Streamable HTTP
//! carries (all but 2024-11-05): negotiation, lists, calls with mirrored headers, 2025 server
//! requests on a call's stream, sessions and their end.

#![allow(clippy::unwrap_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use std::convert::Infallible;

use support::{ALL, Accept, elicitation, endpoint, start, text};
use tollgate::context::{
    ClientRequests, InputRequest, InputRequiredResult, LogLevel, RequestLogger,
};
use tollgate::endpoint::ProtocolVersions;
use tollgate::json::{JsonObject, JsonValue};
use tollgate::tool::{
    CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement, OperationResult,
};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, ProtocolVersion, RequestContext, ToolArguments,
    ToolRegistration,
};
use tollgate_client::handler::{Handler, HandlerFuture};
use tollgate_client::{CallOptions, Client, ClientLimits, ErrorKind, Revision};

/// Every revision the client speaks over Streamable HTTP.
fn on_http() -> impl Iterator<Item = Revision> {
    Revision::ALL
        .into_iter()
        .filter(|r| *r != Revision::V2024_11_05)
}

async fn url(revisions: &[ProtocolVersion]) -> String {
    format!(
        "http://{}/mcp",
        start(endpoint(revisions, Arc::default())).await
    )
}

#[tokio::test]
async fn lists_and_calls_on_every_revision() {
    let url = url(&ALL).await;
    for revision in on_http() {
        let client = Client::builder()
            .revisions([revision])
            .capabilities(elicitation())
            .handler(Accept::default())
            .connect_http(&url)
            .await
            .unwrap();
        assert_eq!(client.revision(), revision);
        let tools = client.list_tools().await.unwrap();
        let mirrored = revision == Revision::V2026_07_28;
        assert_eq!(tools.len(), 4 + usize::from(mirrored), "{revision}");
        let args = JsonObject::builder().insert("region", "zürich").build();
        let result = client.call_tool("echo", args.clone()).await.unwrap();
        assert_eq!(text(&result), "zürich", "{revision}");
        if mirrored {
            // The value crosses Mcp-Param-Region base64-encoded; the server refuses a call
            // whose header is missing or disagrees with the body, so an answer proves it.
            let result = client.call_tool("mirror", args).await.unwrap();
            assert_eq!(text(&result), "zürich");
        }
        let total: support::Total = client
            .call_tool_as("add", &support::Sum { a: 2, b: 3 })
            .await
            .unwrap();
        assert_eq!(total.total, 5, "{revision}");
        // 2026-07-28: an input_required round; 2025: elicitation/create on the call's stream,
        // answered by POST. Either way the handler's answer (the schema's default) arrives.
        // 2025-03-26 has no elicitation.
        if revision != Revision::V2025_03_26 {
            let result = client.call_tool("ask", JsonObject::new()).await.unwrap();
            assert_eq!(text(&result), "hello Ada", "{revision}");
        }
        client.close().await.unwrap();
    }
}

#[tokio::test]
async fn negotiates_down_to_what_the_server_speaks() {
    for served in [
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_03_26,
    ] {
        let client = Client::builder()
            .connect_http(&url(&[served]).await)
            .await
            .unwrap();
        assert_eq!(client.revision().as_str(), served.as_str());
        assert_eq!(client.list_tools().await.unwrap().len(), 4);
        client.close().await.unwrap();
    }
    // 2024-11-05 is not offered over Streamable HTTP (its transport was HTTP+SSE).
    let err = Client::builder()
        .revisions([Revision::V2024_11_05])
        .connect_http(&url(&ALL).await)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Negotiation);
    let modern = url(&[ProtocolVersion::V2026_07_28]).await;
    let client = Client::builder().connect_http(&modern).await.unwrap();
    assert_eq!(client.revision(), Revision::V2026_07_28);
    let err = Client::builder()
        .revisions([Revision::V2025_06_18])
        .connect_http(&modern)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Rpc | ErrorKind::Status | ErrorKind::Negotiation
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_closed_session_is_gone() {
    let client = Client::builder()
        .revisions([Revision::V2025_11_25])
        .connect_http(&url(&ALL).await)
        .await
        .unwrap();
    client.close().await.unwrap();
    // The session id is forgotten with the DELETE: the next request carries none and is
    // refused as a request outside any session.
    assert!(client.list_tools().await.is_err());
}

#[tokio::test]
async fn pages_are_bounded() {
    let url = url(&ALL).await;
    let client = Client::builder().connect_http(&url).await.unwrap();
    let page = client.list_tools_page(None).await.unwrap();
    assert!(page.next_cursor.is_none());
    // One page is the whole list: at a bound of one page it is read, at zero it is refused.
    let at = Client::builder()
        .limits(ClientLimits::default().with_max_pages(1))
        .connect_http(&url)
        .await
        .unwrap();
    assert_eq!(at.list_tools().await.unwrap().len(), 5);
    let past = Client::builder()
        .limits(ClientLimits::default().with_max_pages(0))
        .connect_http(&url)
        .await
        .unwrap();
    assert_eq!(
        past.list_tools().await.unwrap_err().kind(),
        ErrorKind::Limit
    );
}

#[tokio::test]
async fn a_dropped_2025_call_is_cancelled_on_the_server() {
    let cancelled = Arc::new(AtomicUsize::new(0));
    let addr = start(endpoint(&ALL, Arc::clone(&cancelled))).await;
    let client = Client::builder()
        .revisions([Revision::V2025_11_25])
        .connect_http(&format!("http://{addr}/mcp"))
        .await
        .unwrap();
    let call = client.call_tool("wait", JsonObject::new());
    let running = async {
        while cancelled.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::select! {
        _ = call => unreachable!("the tool waits until it is cancelled"),
        () = running => {}
    }
    let ended = async {
        while cancelled.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    // A generous bound so a lost cancellation fails rather than hangs (not a timing check).
    assert!(
        tokio::time::timeout(Duration::from_secs(30), ended)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_timed_out_call_is_cancelled_on_the_server_on_every_revision() {
    for revision in on_http() {
        let cancelled = Arc::new(AtomicUsize::new(0));
        let addr = start(endpoint(&ALL, Arc::clone(&cancelled))).await;
        // Long enough for the tool to start on a loaded machine; nothing here measures it.
        let client = Client::builder()
            .revisions([revision])
            .limits(ClientLimits::default().with_request_timeout(Duration::from_secs(2)))
            .connect_http(&format!("http://{addr}/mcp"))
            .await
            .unwrap();
        client.list_tools().await.unwrap();
        let timed_out = client.call_tool("wait", JsonObject::new()).await;
        assert_eq!(
            timed_out.unwrap_err().kind(),
            ErrorKind::TimedOut,
            "{revision}"
        );
        // 2025: notifications/cancelled; 2026-07-28: the request closed. Either ends the call.
        let ended = async {
            while cancelled.load(Ordering::SeqCst) < 2 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        // A generous bound so a lost cancellation fails rather than hangs (not a timing check).
        let ended = tokio::time::timeout(Duration::from_secs(30), ended).await;
        assert!(ended.is_ok(), "{revision}");
        client.close().await.unwrap();
    }
}

/// Records what reaches it and answers `elicitation/create` with `name`.
struct Named {
    name: &'static str,
    requests: Arc<AtomicUsize>,
    logs: Arc<AtomicUsize>,
}

impl Named {
    fn new(name: &'static str) -> (Self, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let (requests, logs) = (Arc::default(), Arc::default());
        let named = Self {
            name,
            requests: Arc::clone(&requests),
            logs: Arc::clone(&logs),
        };
        (named, requests, logs)
    }
}

impl Handler for Named {
    fn notification(&self, method: &str, _: Option<&JsonObject>) {
        if method == "notifications/message" {
            self.logs.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn request<'a>(&'a self, method: &'a str, _: Option<&'a JsonObject>) -> HandlerFuture<'a> {
        Box::pin(async move {
            assert_eq!(method, "elicitation/create");
            self.requests.fetch_add(1, Ordering::SeqCst);
            let content = JsonObject::builder().insert("name", self.name).build();
            Ok(JsonObject::builder()
                .insert("action", "accept")
                .insert("content", content)
                .build()
                .into())
        })
    }
}

/// Logs one message, then asks for a name (`input_required` on 2026-07-28, a request on the
/// call's stream on 2025).
async fn log_and_ask(
    ctx: &RequestContext,
    _: ToolArguments<JsonObject>,
    features: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    // Once per call: a 2026-07-28 retry does not log again.
    if let Some(log) = features
        .find::<RequestLogger>()
        .filter(|_| ctx.input_response("name").is_none())
    {
        log.log(LogLevel::Info, "asking");
    }
    let question = || InputRequest::elicitation("Your name?", JsonObject::new());
    let answer = match (
        ctx.input_response("name"),
        features.find::<ClientRequests>(),
    ) {
        (Some(answer), _) => answer.clone(),
        (None, Some(channel)) => channel.send(question()).await.unwrap(),
        (None, None) => {
            return Ok(InputRequiredResult::with_input_request("name", question()).into());
        }
    };
    let name = answer
        .get("content")
        .and_then(|c| c.get("name"))
        .and_then(JsonValue::as_str)
        .unwrap_or("?");
    Ok(CompleteResult::from_tool_text(format!("hello {name}")).into())
}

/// A logging endpoint serving [`log_and_ask`] as `ask`.
async fn logging_url(revisions: &[ProtocolVersion]) -> String {
    let set = || revisions.iter().copied().collect::<ProtocolVersions>();
    let endpoint = Endpoint::with_path("/mcp", set(), Implementation::new("t", "1"))
        .logging(true)
        .add_tool(
            ToolRegistration::with_name("ask", set())
                .json_object_arguments()
                .handler(log_and_ask)
                .input_request_declarations([InputRequestDeclaration::new(
                    InputRequestKind::Elicitation,
                    InputRequirement::Conditional,
                )])
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    format!("http://{}/mcp", start(endpoint).await)
}

#[tokio::test]
async fn a_call_s_own_handler_gets_what_its_stream_carries() {
    for revision in [
        Revision::V2026_07_28,
        Revision::V2025_11_25,
        Revision::V2025_06_18,
    ] {
        let served = ProtocolVersion::ALL
            .into_iter()
            .find(|p| p.as_str() == revision.as_str())
            .unwrap();
        let url = logging_url(&[served]).await;
        let (client_handler, client_requests, client_logs) = Named::new("Ada");
        let client = Client::builder()
            .revisions([revision])
            .capabilities(elicitation())
            .handler(client_handler)
            .connect_http(&url)
            .await
            .unwrap();
        let mut options = CallOptions::new();
        if revision.is_stateless() {
            options = options.log_level("info").unwrap();
        } else {
            let level = JsonObject::builder().insert("level", "info").build();
            client
                .request("logging/setLevel", Some(level))
                .await
                .unwrap();
        }
        // Without a handler of its own, the call's request and log go to the client's.
        let result = client
            .call_tool_with("ask", JsonObject::new(), options.clone())
            .await
            .unwrap();
        assert_eq!(text(&result), "hello Ada", "{revision}");
        assert_eq!(client_requests.load(Ordering::SeqCst), 1, "{revision}");
        assert_eq!(client_logs.load(Ordering::SeqCst), 1, "{revision}");
        // With one, they go to it alone.
        let (call_handler, call_requests, call_logs) = Named::new("Grace");
        let result = client
            .call_tool_with("ask", JsonObject::new(), options.handler(call_handler))
            .await
            .unwrap();
        assert_eq!(text(&result), "hello Grace", "{revision}");
        assert_eq!(call_requests.load(Ordering::SeqCst), 1, "{revision}");
        assert_eq!(call_logs.load(Ordering::SeqCst), 1, "{revision}");
        assert_eq!(client_requests.load(Ordering::SeqCst), 1, "{revision}");
        assert_eq!(client_logs.load(Ordering::SeqCst), 1, "{revision}");
        client.close().await.unwrap();
    }
}
