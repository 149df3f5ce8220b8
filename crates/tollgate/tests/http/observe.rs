//! What an operator sees through `tracing` (issue 45), from the outside: a capturing subscriber
//! (a small layer keeping every event and span field of the test's thread), a real
//! server on the same current-thread runtime, and raw requests. A failing handler, a panicking
//! handler and each refusal kind (admission, rate limit, limits, invalid arguments, header
//! mismatch) give one event with the expected fields, and no field carries a marker planted in
//! the arguments, the token or the headers; the error reporter runs once per failed handler.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use support::{Open, post, post_request, request, start};
use tollgate::endpoint::HandlerErrorReport;
use tollgate::json::{JsonLimits, JsonObject, from_str};
use tollgate::policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest, TokenBucket};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    tool::{CompleteResult, OperationResult},
};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
pub(crate) const MARKER: &str = "MARKER7f3a";

/// One captured event: its target, level and fields as text.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    target: String,
    pub(crate) level: tracing::Level,
    fields: Vec<(String, String)>,
}

impl Seen {
    pub(crate) fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Fields(Vec<(String, String)>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

/// Keeps every event, and the fields of every span, in order.
#[derive(Clone, Default)]
pub(crate) struct Capture {
    events: Arc<Mutex<Vec<Seen>>>,
    spans: Arc<Mutex<Vec<String>>>,
}

thread_local! {
    /// The capture of the test running on this thread, if it is capturing.
    static CAPTURING: std::cell::RefCell<Option<Capture>> = const { std::cell::RefCell::new(None) };
}

/// The binary's one global subscriber: it hands each event and span to the capture of the
/// thread it happens on. (A global subscriber, not a scoped one per test: tracing computes a call
/// site's interest from the dispatchers alive when the site is first hit, so scoped subscribers
/// of tests running side by side can miss events.)
struct Route;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Route {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        CAPTURING.with(|capturing| {
            if let Some(capture) = &*capturing.borrow() {
                let mut fields = Fields::default();
                event.record(&mut fields);
                capture.events.lock().unwrap().push(Seen {
                    target: event.metadata().target().to_owned(),
                    level: *event.metadata().level(),
                    fields: fields.0,
                });
            }
        });
    }

    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: Context<'_, S>,
    ) {
        CAPTURING.with(|capturing| {
            if let Some(capture) = &*capturing.borrow() {
                let mut fields = Fields::default();
                attrs.record(&mut fields);
                capture
                    .spans
                    .lock()
                    .unwrap()
                    .push(format!("{:?}", fields.0));
            }
        });
    }
}

impl Capture {
    /// The events of `target`.
    pub(crate) fn of(&self, target: &str) -> Vec<Seen> {
        let events = self.events.lock().unwrap();
        events
            .iter()
            .filter(|e| e.target == target)
            .cloned()
            .collect()
    }

    /// Fails if any event or span field carries the marker.
    pub(crate) fn assert_no_marker(&self) {
        let events = self.events.lock().unwrap();
        for event in events.iter() {
            for (name, value) in &event.fields {
                assert!(!value.contains(MARKER), "{name} of {event:?} echoes");
            }
        }
        for span in self.spans.lock().unwrap().iter() {
            assert!(!span.contains(MARKER), "a span echoes: {span}");
        }
    }
}

/// An error whose type the endpoint declares safe to log.
#[derive(Debug)]
struct OutOfStock;

impl fmt::Display for OutOfStock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("out of stock")
    }
}

impl std::error::Error for OutOfStock {}

type Reports = Arc<Mutex<Vec<(String, Option<String>, Option<String>, bool)>>>;

fn endpoint(reports: &Reports) -> Endpoint {
    let schema = from_str(
        r#"{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}"#,
        &JsonLimits::default(),
    )
    .unwrap();
    let kept = Arc::clone(reports);
    let unsafe_failure =
        |_: &RequestContext, a: ToolArguments<JsonObject>, _: &InvocationFeatures| {
            // The error carries what the caller sent, as many real errors do.
            let text = format!("cannot use {:?}", a.raw());
            async move { Err::<OperationResult, String>(text) }
        };
    let safe_failure =
        |_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures| async {
            Err::<OperationResult, OutOfStock>(OutOfStock)
        };
    let panicking = |_: &RequestContext, a: ToolArguments<JsonObject>, _: &InvocationFeatures| async move {
        panic!("handler panics with {:?}", a.raw());
        #[allow(unreachable_code, reason = "the handler's type")]
        Ok::<OperationResult, String>(CompleteResult::from_tool_text("never").into())
    };
    let fine = |_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures| async {
        Ok::<OperationResult, String>(CompleteResult::from_tool_text("fine").into())
    };
    let tool = |name: &str| ToolRegistration::with_name(name, [V26]).json_object_arguments();
    Endpoint::with_path("/mcp", [V26], Implementation::new("observe", "1"))
        .error_safe_to_log::<OutOfStock>()
        .error_reporter(move |report: &HandlerErrorReport<'_>| {
            kept.lock().unwrap().push((
                report.type_name().to_owned(),
                report.name().map(str::to_owned),
                report.error().map(ToString::to_string),
                report.downcast_ref::<String>().is_some(),
            ));
        })
        .add_tool(tool("unsafe").handler(unsafe_failure).build().unwrap())
        .add_tool(tool("safe").handler(safe_failure).build().unwrap())
        .add_tool(tool("panics").handler(panicking).build().unwrap())
        .add_tool(
            ToolRegistration::with_name("strict", [V26])
                .input_schema(&schema)
                .unwrap()
                .handler(fine)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

/// Runs `body` capturing what happens on this thread (the test's current-thread runtime runs
/// the server's tasks here too).
pub(crate) async fn captured<F: Future<Output = ()>>(body: impl FnOnce(Capture) -> F) -> Capture {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let subscriber = tracing_subscriber::registry().with(Route);
        tracing::subscriber::set_global_default(subscriber).unwrap();
    });
    let capture = Capture::default();
    CAPTURING.with(|c| *c.borrow_mut() = Some(capture.clone()));
    body(capture.clone()).await;
    CAPTURING.with(|c| *c.borrow_mut() = None);
    capture
}

async fn serve(endpoint: Endpoint) -> SocketAddr {
    start(McpService::new(endpoint)).await
}

fn arguments() -> String {
    format!(r#"{{"n":"{MARKER}"}}"#)
}

#[tokio::test]
async fn a_failing_handler_is_one_event_with_its_type_and_the_reporter_runs_once() {
    let reports = Reports::default();
    let capture = captured(|_| async {
        let addr = serve(endpoint(&reports)).await;
        let response = support::call(addr, "unsafe", &arguments(), &[]).await;
        assert_eq!(response.code(), -32603);
    })
    .await;
    // A subscriber is set and no OpenTelemetry span holds the request: the call ran in one
    // `mcp.request` span, its method from the method table.
    let spans = capture.spans.lock().unwrap().clone();
    let requests = spans
        .iter()
        .filter(|s| s.contains(r#"("method", "tools/call")"#))
        .count();
    assert_eq!(requests, 1, "{spans:?}");
    let events = capture.of("tollgate::handler");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].level, tracing::Level::WARN);
    assert_eq!(
        events[0].field("error.type_name"),
        Some("alloc::string::String")
    );
    assert_eq!(
        events[0].field("error.message"),
        None,
        "String is not declared safe"
    );
    assert!(
        capture.of("tollgate::refusal").is_empty(),
        "the internal error is not a refusal"
    );
    capture.assert_no_marker();
    let reports = reports.lock().unwrap();
    assert_eq!(
        *reports,
        [(
            "alloc::string::String".to_owned(),
            Some("unsafe".to_owned()),
            None,
            true
        )]
    );
}

#[tokio::test]
async fn an_error_declared_safe_is_logged_with_its_message() {
    let reports = Reports::default();
    let capture = captured(|_| async {
        let addr = serve(endpoint(&reports)).await;
        let response = support::call(addr, "safe", &arguments(), &[]).await;
        assert_eq!(response.code(), -32603);
    })
    .await;
    let events = capture.of("tollgate::handler");
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(
        events[0]
            .field("error.type_name")
            .unwrap()
            .ends_with("OutOfStock")
    );
    assert_eq!(events[0].field("error.message"), Some("out of stock"));
    capture.assert_no_marker();
    let reports = reports.lock().unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].2.as_deref(), Some("out of stock"));
}

#[tokio::test]
async fn a_panicking_handler_is_one_error_event_and_no_report() {
    let reports = Reports::default();
    let capture = captured(|_| async {
        let addr = serve(endpoint(&reports)).await;
        let response = support::call(addr, "panics", &arguments(), &[]).await;
        assert_eq!(response.code(), -32603);
    })
    .await;
    let events = capture.of("tollgate::handler");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].level, tracing::Level::ERROR);
    assert_eq!(events[0].field("message"), Some("panic caught"));
    capture.assert_no_marker();
    assert!(
        reports.lock().unwrap().is_empty(),
        "a panic is no returned error"
    );
}

/// The one refusal event of a capture, with its kind.
fn one_refusal(capture: &Capture, kind: &str) -> Seen {
    let events = capture.of("tollgate::refusal");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].field("kind"), Some(kind), "{events:?}");
    capture.assert_no_marker();
    events[0].clone()
}

#[tokio::test]
async fn arguments_failing_the_schema_are_one_invalid_arguments_refusal() {
    let capture = captured(|_| async {
        let addr = serve(endpoint(&Reports::default())).await;
        let response = support::call(addr, "strict", &arguments(), &[]).await;
        assert_eq!(response.status, 200);
    })
    .await;
    let event = one_refusal(&capture, "invalid_arguments");
    assert_eq!(event.level, tracing::Level::DEBUG);
    assert!(capture.of("tollgate::handler").is_empty());
}

#[tokio::test]
async fn a_header_disagreeing_with_the_body_is_one_header_mismatch_refusal() {
    let capture = captured(|_| async {
        let addr = serve(endpoint(&Reports::default())).await;
        let body = request(
            "1",
            "tools/call",
            &format!(r#""name":"strict","arguments":{}"#, arguments()),
        );
        let headers = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", MARKER),
        ];
        let response = post(addr, &headers, body.as_bytes()).await;
        assert_eq!(response.code(), -32020);
    })
    .await;
    let event = one_refusal(&capture, "header_mismatch");
    assert_eq!(event.field("code"), Some("-32020"));
}

#[tokio::test]
async fn a_body_that_is_not_json_is_one_limits_refusal() {
    let capture = captured(|_| async {
        let addr = serve(endpoint(&Reports::default())).await;
        let headers = [("MCP-Protocol-Version", "2026-07-28")];
        let response = post(addr, &headers, format!("{{{MARKER}").as_bytes()).await;
        assert_eq!(response.code(), -32700);
    })
    .await;
    let event = one_refusal(&capture, "limits");
    assert_eq!(event.level, tracing::Level::INFO);
}

fn guarded_endpoint() -> Endpoint {
    let admit = |request: &AdmissionRequest<'_>| match request.header("x-api-key") {
        Some("k") => AdmissionDecision::admit(AdmissionIdentity::principal("team")),
        _ => AdmissionDecision::unauthorized(),
    };
    let fine = |_: &RequestContext, _: ToolArguments<JsonObject>, _: &InvocationFeatures| async {
        Ok::<OperationResult, String>(CompleteResult::from_tool_text("fine").into())
    };
    Endpoint::with_path("/mcp", [V26], Implementation::new("guarded", "1"))
        .admission(admit)
        .refused_admission_limiter(None)
        .request_rate_limiter(TokenBucket::with_capacity(1))
        .add_tool(
            ToolRegistration::with_name("fine", [V26])
                .json_object_arguments()
                .handler(fine)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_refused_admission_is_one_admission_refusal() {
    let token = format!("Bearer {MARKER}");
    let capture = captured(|_| async {
        let addr = serve(guarded_endpoint()).await;
        let extra = [("Authorization", token.as_str()), ("x-api-key", MARKER)];
        let response = support::call(addr, "fine", &arguments(), &extra).await;
        assert_eq!(response.status, 401);
    })
    .await;
    let event = one_refusal(&capture, "admission");
    assert_eq!(event.field("code"), Some("-32001"));
}

#[tokio::test]
async fn a_rate_limited_request_is_one_rate_limit_refusal() {
    let capture = captured(|capture| async move {
        let addr = serve(guarded_endpoint()).await;
        let extra = [("x-api-key", "k"), ("x-other", MARKER)];
        let first = support::call(addr, "fine", &arguments(), &extra).await;
        assert_eq!(first.status, 200);
        assert!(
            capture.of("tollgate::refusal").is_empty(),
            "an answered call is no refusal"
        );
        let second = support::call(addr, "fine", &arguments(), &extra).await;
        assert_eq!(second.status, 429);
    })
    .await;
    let event = one_refusal(&capture, "rate_limit");
    assert_eq!(event.field("code"), Some("-31999"));
}

#[tokio::test]
async fn an_answered_call_emits_nothing_at_info() {
    let capture = captured(|_| async {
        let addr = serve(endpoint(&Reports::default())).await;
        let response = support::call(addr, "strict", r#"{"n":1}"#, &[]).await;
        assert_eq!(response.status, 200);
    })
    .await;
    let events = capture.events.lock().unwrap();
    let loud: Vec<_> = events
        .iter()
        .filter(|e| e.target.starts_with("tollgate") && e.level <= tracing::Level::INFO)
        .collect();
    assert!(loud.is_empty(), "{loud:?}");
}

/// A `subscriptions/listen` request of the principal `team` (admitted by its `x-api-key`).
fn listen_request(addr: SocketAddr, id: usize) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "subscriptions/listen"),
        ("x-api-key", "k"),
        ("x-other", MARKER),
    ];
    post_request(addr, &headers, &body)
}

#[tokio::test]
async fn a_listen_past_the_principals_bound_is_one_budget_event_and_one_busy_refusal() {
    let bound = tollgate::endpoint::MAX_LISTEN_STREAMS_PER_PRINCIPAL;
    let capture = captured(|capture| async move {
        let admit = |request: &AdmissionRequest<'_>| match request.header("x-api-key") {
            Some("k") => AdmissionDecision::admit(AdmissionIdentity::principal("team")),
            _ => AdmissionDecision::unauthorized(),
        };
        let endpoint = Endpoint::with_path("/mcp", [V26], Implementation::new("listens", "1"))
            .admission(admit)
            .live_catalogs()
            .build()
            .unwrap();
        let addr = serve(endpoint).await;
        // At the bound: every listen is open, and nothing reached a budget.
        let mut open = Vec::new();
        for id in 0..bound {
            let stream = Open::send(addr, listen_request(addr, id)).await;
            assert_eq!(stream.status, 200);
            open.push(stream);
        }
        assert!(capture.of("tollgate::budget").is_empty());
        // One past it: busy.
        let past = Open::send(addr, listen_request(addr, bound)).await;
        assert_eq!(past.status, 503);
        drop(open);
    })
    .await;
    let budget = capture.of("tollgate::budget");
    assert_eq!(budget.len(), 1, "{budget:?}");
    assert_eq!(budget[0].level, tracing::Level::WARN);
    assert_eq!(budget[0].field("budget"), Some("listeners"));
    let event = one_refusal(&capture, "busy");
    assert_eq!(event.field("code"), Some("-32603"));
}

#[tokio::test]
async fn a_failing_completion_handler_is_one_event_and_one_report() {
    use tollgate::prompt::{
        Completion, CompletionRequest, PromptArgument, PromptArguments, PromptMessage,
        PromptRegistration, PromptResult,
    };
    let reports = Reports::default();
    let kept = Arc::clone(&reports);
    let get = |_: &RequestContext, _: PromptArguments, _: &InvocationFeatures| async {
        Ok::<PromptResult, String>(PromptResult::with_message(PromptMessage::user(
            tollgate::content::TextContent::new("hi"),
        )))
    };
    let complete = |_: &RequestContext, request: CompletionRequest| {
        // The error carries what the caller typed.
        let text = format!("no name like {}", request.value());
        async move { Err::<Completion, String>(text) }
    };
    let endpoint = Endpoint::with_path("/mcp", [V26], Implementation::new("complete", "1"))
        .error_reporter(move |report: &HandlerErrorReport<'_>| {
            kept.lock().unwrap().push((
                report.type_name().to_owned(),
                report.name().map(str::to_owned),
                report.error().map(ToString::to_string),
                report.downcast_ref::<String>().is_some(),
            ));
        })
        .add_prompt(
            PromptRegistration::with_name("greet", [V26])
                .handler(get)
                .add_argument(PromptArgument::required("name"))
                .completion(complete)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let capture = captured(|_| async {
        let addr = serve(endpoint).await;
        let params = format!(
            r#""ref":{{"type":"ref/prompt","name":"greet"}},"argument":{{"name":"name","value":"{MARKER}"}}"#
        );
        let response = support::send(addr, "completion/complete", &params).await;
        assert_eq!(response.code(), -32603);
    })
    .await;
    let events = capture.of("tollgate::handler");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(
        events[0].field("error.type_name"),
        Some("alloc::string::String")
    );
    capture.assert_no_marker();
    let reports = reports.lock().unwrap();
    assert_eq!(
        *reports,
        [(
            "alloc::string::String".to_owned(),
            Some("greet".to_owned()),
            None,
            true
        )]
    );
}
