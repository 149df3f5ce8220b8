//! What an upstream asks of a 2025 caller during a prompt or a read, relayed over Streamable
//! HTTP on both sides as for a tool call: a 2025 upstream's elicitation on the prompt's (or the
//! read's) own stream reaches that caller and the answer goes back; a 2026-07-28 upstream's
//! `input_required` is asked of the caller on its own stream and the upstream retried, within
//! the upstream client's ten rounds; a caller that cannot answer is never asked; an upstream
//! prompt's progress reaches the caller that asked for it (`get_prompt_with`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tollgate::content::{ContentError, ResourceContents, TextContent};
use tollgate::context::ProgressReporter;
use tollgate::json::{JsonObject, JsonValue};
use tollgate::prompt::{
    PromptArgument, PromptArguments, PromptMessage, PromptOutcome, PromptRegistration, PromptResult,
};
use tollgate::resource::{ResourceOutcome, ResourceOutput, ResourceRegistration, ResourceRequest};
use tollgate::{Endpoint, Implementation, InvocationFeatures, RequestContext};
use tollgate_client::{CallOptions, Client, Revision};

use crate::asks::{Caller, V25, ask_name, connect, gateway_url, name_round, serve};
use crate::upstream::V26;

/// One progress report as the caller saw it: progress, message.
type Report = (f64, Option<String>);

fn message(text: String) -> PromptResult {
    PromptResult::with_message(PromptMessage::user(TextContent::new(text)))
}

/// A Tollgate upstream on 2025-11-25 alone whose prompt `ask` and resource `ask://here` ask
/// the caller for a name.
async fn upstream_2025() -> SocketAddr {
    async fn prompt(
        _: &RequestContext,
        _: PromptArguments,
        features: &InvocationFeatures,
    ) -> Result<PromptResult, Infallible> {
        Ok(message(ask_name(features).await))
    }
    async fn read(
        _: &RequestContext,
        request: ResourceRequest,
        features: &InvocationFeatures,
    ) -> Result<ResourceOutput, ContentError> {
        let text = ask_name(features).await;
        Ok(ResourceOutput::with_contents(ResourceContents::text(
            request.uri(),
            None,
            text,
        )?))
    }
    let endpoint = Endpoint::with_path("/mcp", [V25], Implementation::new("asking", "1"))
        .add_prompt(
            PromptRegistration::with_name("ask", [V25])
                .handler(prompt)
                .build()
                .unwrap(),
        )
        .add_resource(
            ResourceRegistration::with_uri("ask://here", "here", [V25])
                .handler(read)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    serve(endpoint).await
}

/// A Tollgate upstream on 2026-07-28 alone whose prompt `rounds` asks for a name `n` times
/// (its argument, one `input_required` round each), whose resource `rounds://one` asks once,
/// and whose prompt `counting` reports progress when asked for it.
async fn upstream_2026() -> SocketAddr {
    async fn prompt(
        context: &RequestContext,
        arguments: PromptArguments,
        _: &InvocationFeatures,
    ) -> Result<PromptOutcome, Infallible> {
        let n = arguments.get("n").and_then(|n| n.parse().ok()).unwrap_or(1);
        Ok(match name_round(context, n) {
            Ok(names) => message(names).into(),
            Err(ask) => ask.into(),
        })
    }
    async fn read(
        context: &RequestContext,
        request: ResourceRequest,
        _: &InvocationFeatures,
    ) -> Result<ResourceOutcome, ContentError> {
        Ok(match name_round(context, 1) {
            Ok(names) => {
                ResourceOutput::with_contents(ResourceContents::text(request.uri(), None, names)?)
                    .into()
            }
            Err(ask) => ask.into(),
        })
    }
    async fn counting(
        _: &RequestContext,
        _: PromptArguments,
        features: &InvocationFeatures,
    ) -> Result<PromptResult, Infallible> {
        let reported = features
            .find::<ProgressReporter>()
            .is_some_and(|r| r.report(1.0, Some(2.0), Some("half")).is_ok());
        Ok(message(
            if reported { "reported" } else { "no progress" }.to_owned(),
        ))
    }
    let endpoint = Endpoint::with_path("/mcp", [V26], Implementation::new("rounds", "1"))
        .add_prompt(
            PromptRegistration::with_name("counting", [V26])
                .handler(counting)
                .build()
                .unwrap(),
        )
        .add_prompt(
            PromptRegistration::with_name("rounds", [V26])
                .handler(prompt)
                .add_argument(PromptArgument::optional("n"))
                .build()
                .unwrap(),
        )
        .add_resource(
            ResourceRegistration::with_uri("rounds://one", "one", [V26])
                .handler(read)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    serve(endpoint).await
}

fn prompt_text(result: &JsonValue) -> &str {
    result
        .get("messages")
        .and_then(JsonValue::as_array)
        .and_then(|m| m.first())
        .and_then(|m| m.get("content"))
        .and_then(|c| c.get("text"))
        .and_then(JsonValue::as_str)
        .unwrap()
}

fn read_text(result: &JsonValue) -> &str {
    result
        .get("contents")
        .and_then(JsonValue::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("text"))
        .and_then(JsonValue::as_str)
        .unwrap()
}

async fn prompt(
    client: &Client,
    name: &str,
    n: Option<&str>,
) -> Result<JsonValue, tollgate_client::Error> {
    let mut arguments = JsonObject::builder();
    if let Some(n) = n {
        arguments.push("n", n);
    }
    client.get_prompt(name, arguments.build()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_upstream_s_elicitation_during_a_prompt_or_read_reaches_its_caller() {
    let upstream = upstream_2025().await;
    let (gateway, url) = gateway_url(upstream, &[V26, V25]).await;
    let ada = Caller::new("Ada");
    let client = connect(&url, Revision::V2025_11_25, &ada, true).await;
    let got = prompt(&client, "up_ask", None).await.unwrap();
    assert_eq!(prompt_text(&got), "hello Ada");
    let read = client.read_resource("up+ask://here").await.unwrap();
    assert_eq!(read_text(&read), "hello Ada");
    assert_eq!(ada.asked.load(Ordering::SeqCst), 2);
    client.close().await.unwrap();
    // A 2025 caller that declares no elicitation, and a 2026-07-28 caller: the upstream's
    // request is refused (-32601), the upstream answers its own way, nobody is asked.
    for (revision, elicits) in [
        (Revision::V2025_11_25, false),
        (Revision::V2026_07_28, true),
    ] {
        let grace = Caller::new("Grace");
        let client = connect(&url, revision, &grace, elicits).await;
        let got = prompt(&client, "up_ask", None).await.unwrap();
        assert_eq!(prompt_text(&got), "refused: Rejected", "{revision}");
        let read = client.read_resource("up+ask://here").await.unwrap();
        assert_eq!(read_text(&read), "refused: Rejected", "{revision}");
        assert_eq!(grace.asked.load(Ordering::SeqCst), 0, "{revision}");
        client.close().await.unwrap();
    }
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_upstream_s_input_required_for_a_prompt_or_read_reaches_a_2025_caller() {
    let upstream = upstream_2026().await;
    let (gateway, url) = gateway_url(upstream, &[V26, V25]).await;
    let ada = Caller::new("Ada");
    let client = connect(&url, Revision::V2025_11_25, &ada, true).await;
    let one = prompt(&client, "up_rounds", Some("1")).await.unwrap();
    assert_eq!(prompt_text(&one), "Ada");
    assert_eq!(ada.asked.load(Ordering::SeqCst), 1);
    let read = client.read_resource("up+rounds://one").await.unwrap();
    assert_eq!(read_text(&read), "Ada");
    assert_eq!(ada.asked.load(Ordering::SeqCst), 2);
    // At the bound (10 rounds, the upstream client's default) the prompt completes; one past
    // it is the fixed internal error, never a loop.
    let ten = prompt(&client, "up_rounds", Some("10")).await.unwrap();
    assert_eq!(prompt_text(&ten), ["Ada"; 10].join(","));
    assert_eq!(ada.asked.load(Ordering::SeqCst), 12);
    let eleven = prompt(&client, "up_rounds", Some("11")).await.unwrap_err();
    assert_eq!(eleven.code(), Some(-32603));
    assert_eq!(
        ada.asked.load(Ordering::SeqCst),
        22,
        "ten rounds asked, then refused"
    );
    client.close().await.unwrap();
    // A 2025 caller that does not declare elicitation is declared none: the upstream refuses
    // the round it cannot ask (-32021), and the caller is refused so too, never asked.
    let grace = Caller::new("Grace");
    let unable = connect(&url, Revision::V2025_11_25, &grace, false).await;
    let refused = prompt(&unable, "up_rounds", Some("1")).await.unwrap_err();
    assert_eq!(refused.code(), Some(-32021));
    let refused = unable.read_resource("up+rounds://one").await.unwrap_err();
    assert_eq!(refused.code(), Some(-32021));
    assert_eq!(grace.asked.load(Ordering::SeqCst), 0);
    unable.close().await.unwrap();
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_prompt_s_progress_reaches_the_2025_caller_that_asked_for_it() {
    let upstream = upstream_2026().await;
    let (gateway, url) = gateway_url(upstream, &[V26, V25]).await;
    let ada = Caller::new("Ada");
    let client = connect(&url, Revision::V2025_11_25, &ada, true).await;
    let seen: Arc<Mutex<Vec<Report>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let options = CallOptions::new().on_progress(move |p| {
        sink.lock()
            .unwrap()
            .push((p.progress(), p.message().map(str::to_owned)));
    });
    let got = client
        .get_prompt_with("up_counting", JsonObject::new(), options)
        .await
        .unwrap();
    assert_eq!(prompt_text(&got), "reported");
    assert_eq!(*seen.lock().unwrap(), [(1.0, Some("half".to_owned()))]);
    // A caller that did not ask: the upstream is asked for none.
    let plain = prompt(&client, "up_counting", None).await.unwrap();
    assert_eq!(prompt_text(&plain), "no progress");
    client.close().await.unwrap();
    gateway.close().await;
}
