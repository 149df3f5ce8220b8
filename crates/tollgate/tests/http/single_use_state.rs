//! Single-use request state over real HTTP: a retry runs its handler once, and the same state
//! presented again (by the same caller, another anonymous caller, a client that lost the
//! answer, or through another instance sharing the replay store) gets the fixed invalid-state
//! error, never a second execution. The PostgreSQL test needs `TOLLGATE_TEST_POSTGRES_URL`;
//! `scripts/test` runs it with `--ignored` beside a throwaway server.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use support::{Response, post, start};
use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::{
    Endpoint, Implementation, McpService, ProtocolVersion, ToolRegistration,
    context::{InputRequest, InputRequiredResult},
    endpoint::{EndpointBuilder, InMemoryReplayStore, ReplayStore, RequestStateKey},
    tool::{
        CompleteResult, InputRequestDeclaration, InputRequestKind, InputRequirement,
        OperationResult, RequestStateMode,
    },
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const ELICIT: &str = r#"{"elicitation":{}}"#;

/// An endpoint whose `reserve` asks how many, then counts each retry it completes in `runs`;
/// single use through `store` when given. Every instance shares one sealing key.
fn endpoint(runs: &Arc<AtomicUsize>, store: Option<impl ReplayStore>) -> McpService {
    let runs = Arc::clone(runs);
    let reserve = ToolRegistration::with_name("reserve", [V26])
        .json_object_arguments()
        .handler(
            move |ctx: &tollgate::RequestContext,
                  _: tollgate::ToolArguments<JsonObject>,
                  _: &tollgate::InvocationFeatures| {
                let runs = Arc::clone(&runs);
                let round = ctx.input_round();
                async move {
                    if round == 0 {
                        let schema = from_str(
                            r#"{"type":"object","properties":{"n":{"type":"integer"}}}"#,
                            &JsonLimits::default(),
                        )
                        .unwrap();
                        let ask = InputRequest::elicitation(
                            "How many?",
                            schema.as_object().cloned().unwrap(),
                        );
                        let asked = InputRequiredResult::with_input_request("n", ask)
                            .state(JsonValue::from("s"));
                        return Ok::<OperationResult, Infallible>(asked.into());
                    }
                    runs.fetch_add(1, Ordering::SeqCst);
                    Ok(CompleteResult::from_tool_text("reserved").into())
                }
            },
        )
        .input_request_declarations([InputRequestDeclaration::new(
            InputRequestKind::Elicitation,
            InputRequirement::Conditional,
        )])
        .request_state_mode(RequestStateMode::FrameworkProtected)
        .build()
        .unwrap();
    let key = RequestStateKey::from_secret(&(0u8..32).map(|i| i ^ 0xa5).collect::<Vec<u8>>());
    let builder: EndpointBuilder =
        Endpoint::with_path("/mcp", [V26], Implementation::new("s", "1"))
            .request_state_key(key.unwrap())
            .add_tool(reserve);
    let builder = match store {
        Some(store) => builder.request_state_single_use(store),
        None => builder,
    };
    McpService::new(builder.build().unwrap())
}

/// A 2026-07-28 `reserve` call, anonymous, with `extra` params.
async fn call(addr: SocketAddr, extra: &str) -> Response {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"reserve","arguments":{{"sku":"POT-001"}}{extra},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{ELICIT}}}}}}}"#
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "reserve"),
    ];
    post(addr, &headers, body.as_bytes()).await
}

/// Asks, and returns the retry's params carrying the state.
async fn asked(addr: SocketAddr) -> String {
    let first = call(addr, "").await;
    let state = first
        .result()
        .get("requestState")
        .and_then(JsonValue::as_str)
        .unwrap_or_else(|| panic!("no state: {}", first.text()))
        .to_owned();
    format!(
        r#","inputResponses":{{"n":{{"action":"accept","content":{{"n":2}}}}}},"requestState":"{state}""#
    )
}

fn assert_refused(resp: &Response) {
    assert_eq!((resp.status, resp.code()), (400, -32602), "{}", resp.text());
    assert_eq!(resp.message(), "Invalid request state");
}

#[tokio::test]
async fn the_second_use_of_a_state_is_refused_and_the_handler_ran_once() {
    let runs = Arc::new(AtomicUsize::new(0));
    let addr = start(endpoint(&runs, Some(InMemoryReplayStore::new()))).await;
    let retry = asked(addr).await;
    let done = call(addr, &retry).await;
    assert_eq!(done.status, 200, "{}", done.text());
    assert!(done.text().contains("reserved"), "{}", done.text());
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // A client that lost that answer sends the same retry again; then another anonymous
    // caller replays it: the fixed error both times, and no second reservation.
    assert_refused(&call(addr, &retry).await);
    assert_refused(&call(addr, &retry).await);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // A new round trip gets a new state, used once as well.
    let again = asked(addr).await;
    assert_ne!(again, retry);
    assert_eq!(call(addr, &again).await.status, 200);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn concurrent_retries_with_one_state_run_the_handler_once() {
    let runs = Arc::new(AtomicUsize::new(0));
    let addr = start(endpoint(&runs, Some(InMemoryReplayStore::new()))).await;
    let retry = asked(addr).await;
    let answers = tokio::join!(
        call(addr, &retry),
        call(addr, &retry),
        call(addr, &retry),
        call(addr, &retry),
    );
    let answers = [answers.0, answers.1, answers.2, answers.3];
    assert_eq!(answers.iter().filter(|r| r.status == 200).count(), 1);
    for refused in answers.iter().filter(|r| r.status != 200) {
        assert_refused(refused);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn without_single_use_a_state_opens_on_every_retry_until_it_expires() {
    let runs = Arc::new(AtomicUsize::new(0));
    let addr = start(endpoint(&runs, None::<InMemoryReplayStore>)).await;
    let retry = asked(addr).await;
    for _ in 0..2 {
        assert_eq!(call(addr, &retry).await.status, 200);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_full_replay_store_refuses_rather_than_forgets() {
    let runs = Arc::new(AtomicUsize::new(0));
    let addr = start(endpoint(&runs, Some(InMemoryReplayStore::with_capacity(1)))).await;
    let (first, second) = (asked(addr).await, asked(addr).await);
    assert_eq!(call(addr, &first).await.status, 200);
    // At its one entry: the next state is refused (fail closed), the used one stays used.
    assert_refused(&call(addr, &second).await);
    assert_refused(&call(addr, &first).await);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[cfg(feature = "postgres")]
#[tokio::test]
#[ignore = "needs PostgreSQL: scripts/with-postgres cargo test --test http -- --ignored http::single_use_state::"]
async fn a_single_use_state_refused_on_its_second_use_on_another_instance_through_postgresql() {
    use tollgate::endpoint::{PostgresReplayStore, check_replay_store_contract};
    let url = std::env::var("TOLLGATE_TEST_POSTGRES_URL")
        .expect("TOLLGATE_TEST_POSTGRES_URL names the test database (scripts/test sets it)");
    let contract = PostgresReplayStore::connect(&url).await.unwrap();
    let prefix = format!("contract-{}-", std::process::id());
    assert_eq!(
        check_replay_store_contract(&contract, &prefix).await,
        Ok(())
    );
    // Two instances, each with its own connections to the one database.
    let runs = Arc::new(AtomicUsize::new(0));
    let one = start(endpoint(
        &runs,
        Some(PostgresReplayStore::connect(&url).await.unwrap()),
    ))
    .await;
    let two = start(endpoint(
        &runs,
        Some(PostgresReplayStore::connect(&url).await.unwrap()),
    ))
    .await;
    let retry = asked(one).await;
    let done = call(one, &retry).await;
    assert_eq!(done.status, 200, "{}", done.text());
    assert_refused(&call(two, &retry).await);
    assert_refused(&call(one, &retry).await);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    // Raced across the two instances: one runs it.
    let raced = asked(two).await;
    let (a, b) = tokio::join!(call(one, &raced), call(two, &raced));
    assert_eq!(
        [a.status, b.status].iter().filter(|s| **s == 200).count(),
        1
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}
