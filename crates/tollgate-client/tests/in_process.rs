//! The in-process pair: an endpoint served over an in-memory pipe, on each revision.

#![allow(clippy::unwrap_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use support::{ALL, Accept, Sum, Total, elicitation, endpoint, text};
use tollgate::json::JsonObject;
use tollgate_client::{Client, ErrorKind, Revision};

#[tokio::test]
async fn every_revision_lists_calls_and_answers_input() {
    for revision in Revision::ALL {
        let client = Client::builder()
            .revisions([revision])
            .capabilities(elicitation())
            .handler(Accept::default())
            .connect_in_process(endpoint(&ALL, Arc::default()))
            .await
            .unwrap();
        assert_eq!(client.revision(), revision);
        let names: Vec<_> = client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .filter_map(|t| t.get("name")?.as_str().map(str::to_owned))
            .collect();
        assert!(names.contains(&"echo".to_owned()), "{revision}: {names:?}");
        let args = JsonObject::builder().insert("region", "eu").build();
        assert_eq!(text(&client.call_tool("echo", args).await.unwrap()), "eu");
        let total: Total = client
            .call_tool_as("add", &Sum { a: 2, b: 3 })
            .await
            .unwrap();
        assert_eq!(total, Total { total: 5 });
        if revision >= Revision::V2025_06_18 {
            let tools = client.list_tools().await.unwrap();
            let add = tools
                .iter()
                .find(|t| t.get("name").and_then(|n| n.as_str()) == Some("add"));
            assert!(add.unwrap().get("outputSchema").is_some(), "{revision}");
        }
        if revision.is_stateless() || revision >= Revision::V2025_06_18 {
            // The input_required round (2026-07-28), or the server's request as a line (a 2025
            // session over stdio), answered by the handler, the schema's default applied.
            let result = client.call_tool("ask", JsonObject::new()).await.unwrap();
            assert_eq!(text(&result), "hello Ada");
        }
        client.close().await.unwrap();
    }
}

#[tokio::test]
async fn negotiates_by_discover_then_initialize() {
    let client = Client::builder()
        .connect_in_process(endpoint(
            &[tollgate::ProtocolVersion::V2025_06_18],
            Arc::default(),
        ))
        .await
        .unwrap();
    assert_eq!(client.revision(), Revision::V2025_06_18);
    let client = Client::builder()
        .connect_in_process(endpoint(&ALL, Arc::default()))
        .await
        .unwrap();
    assert_eq!(client.revision(), Revision::V2026_07_28);
    assert!(client.server().get("supportedVersions").is_some());
}

#[tokio::test]
async fn an_older_server_is_met_on_its_own_revision() {
    use tollgate::ProtocolVersion as P;
    for (served, expected) in [
        (P::V2025_03_26, Revision::V2025_03_26),
        (P::V2024_11_05, Revision::V2024_11_05),
    ] {
        let client = Client::builder()
            .connect_in_process(endpoint(&[served], Arc::default()))
            .await
            .unwrap();
        assert_eq!(client.revision(), expected);
        // What the revision does not define is not handed on: no output schema, no title.
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools.len(), 4, "{expected}");
        assert!(
            tools.iter().all(|t| t.get("outputSchema").is_none()),
            "{expected}"
        );
        let result = client
            .call_tool(
                "add",
                JsonObject::builder().insert("a", 1).insert("b", 2).build(),
            )
            .await
            .unwrap();
        assert!(result.get("structuredContent").is_none(), "{expected}");
        assert_eq!(text(&result), r#"{"total":3}"#, "{expected}");
        client.close().await.unwrap();
    }
    // A client that offers only the newer revisions finds none in common.
    let err = Client::builder()
        .revisions([Revision::V2026_07_28, Revision::V2025_11_25])
        .connect_in_process(endpoint(&[P::V2025_03_26], Arc::default()))
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Negotiation | ErrorKind::Rpc),
        "{err}"
    );
}

#[tokio::test]
async fn input_rounds_are_bounded() {
    // One round is needed: a bound of one answers it, a bound of zero refuses.
    for (rounds, ok) in [(1, true), (0, false)] {
        let client = Client::builder()
            .capabilities(elicitation())
            .handler(Accept::default())
            .limits(tollgate_client::ClientLimits::default().with_max_input_rounds(rounds))
            .connect_in_process(endpoint(&ALL, Arc::default()))
            .await
            .unwrap();
        let result = client.call_tool("ask", JsonObject::new()).await;
        match ok {
            true => assert_eq!(text(&result.unwrap()), "hello Ada"),
            false => assert_eq!(result.unwrap_err().kind(), ErrorKind::Limit),
        }
    }
}

#[tokio::test]
async fn a_refused_input_fails_the_call() {
    let client = Client::builder()
        .capabilities(elicitation())
        .connect_in_process(endpoint(&ALL, Arc::default()))
        .await
        .unwrap();
    let err = client
        .call_tool("ask", JsonObject::new())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
}

#[tokio::test]
async fn dropping_a_call_cancels_it_on_the_server() {
    let cancelled = Arc::new(AtomicUsize::new(0));
    let client = Client::builder()
        .revisions([Revision::V2025_11_25])
        .connect_in_process(endpoint(&ALL, Arc::clone(&cancelled)))
        .await
        .unwrap();
    let call = client.call_tool("wait", JsonObject::new());
    let running = async {
        while cancelled.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    // Once the tool runs, the call's future is dropped: notifications/cancelled goes out.
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

/// Answers every elicitation with its own name.
struct Named(&'static str);

impl tollgate_client::handler::Handler for Named {
    fn request<'a>(
        &'a self,
        _: &'a str,
        _: Option<&'a JsonObject>,
    ) -> tollgate_client::handler::HandlerFuture<'a> {
        let content = JsonObject::builder().insert("name", self.0).build();
        let answer = JsonObject::builder()
            .insert("action", "accept")
            .insert("content", content)
            .build();
        Box::pin(async move { Ok(answer.into()) })
    }
}

/// Over lines nothing names the call a server's request belongs to: with
/// `sole_call_requests`, one that arrives while a single request is outstanding goes to that
/// call's own handler; with two outstanding, or without the setting, to the client's.
#[tokio::test]
async fn a_sole_call_s_requests_go_to_its_own_handler() {
    use tollgate_client::CallOptions;
    let cancelled = Arc::new(AtomicUsize::new(0));
    let connect = |sole: bool| {
        Client::builder()
            .revisions([Revision::V2025_11_25])
            .capabilities(elicitation())
            .handler(Named("the client's"))
            .sole_call_requests(sole)
            .connect_in_process(endpoint(&ALL, Arc::clone(&cancelled)))
    };
    let own = || CallOptions::new().handler(Named("the call's"));
    let client = connect(true).await.unwrap();
    let result = client
        .call_tool_with("ask", JsonObject::new(), own())
        .await
        .unwrap();
    assert_eq!(text(&result), "hello the call's");
    // A call without a handler of its own: the client's answers.
    let result = client.call_tool("ask", JsonObject::new()).await.unwrap();
    assert_eq!(text(&result), "hello the client's");
    // Two outstanding: the request names neither, so the client's handler gets it.
    let waiting = client.call_tool("wait", JsonObject::new());
    let asked = async {
        while cancelled.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        client.call_tool_with("ask", JsonObject::new(), own()).await
    };
    tokio::select! {
        biased;
        _ = waiting => unreachable!("the tool waits until it is cancelled"),
        result = asked => assert_eq!(text(&result.unwrap()), "hello the client's"),
    }
    client.close().await.unwrap();
    // Off (the default): the call's own handler is not asked.
    let client = connect(false).await.unwrap();
    let result = client
        .call_tool_with("ask", JsonObject::new(), own())
        .await
        .unwrap();
    assert_eq!(text(&result), "hello the client's");
    client.close().await.unwrap();
}
