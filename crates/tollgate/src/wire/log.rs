//! What Tollgate tells an operator through `tracing`: the stable event targets, the one span per
//! JSON-RPC request, and the refusal event every fixed fault reply emits (with its kind, code and
//! nothing of the request).
//!
//! Owns the names operators filter on (targets, span and field names; listed in
//! `docs/guide/observability.md`) and the rule that an event carries fixed strings, codes,
//! registered names, type names and counts only: never an argument, a result, a token, a header
//! value or request state. Knows no endpoint, handler or transport; the rooms above call it
//! where their facts happen.
//!
//! With no subscriber installed, every event and span here is a disabled call site: one relaxed
//! load of tracing's global maximum level, nothing formatted, nothing allocated.

use crate::wire::fault::Fault;
use crate::wire::id::RequestId;

/// The target of the per-request span.
#[cfg_attr(not(test), allow(dead_code, reason = "used by `request_span`"))]
pub(crate) const REQUEST: &str = "tollgate::request";
/// The target of refusal events (a fixed fault answered, or a tool's arguments refused).
pub(crate) const REFUSAL: &str = "tollgate::refusal";
/// The target of handler failure events (an error returned, a panic caught).
pub(crate) const HANDLER: &str = "tollgate::handler";
/// The target of store failure and retry events (tasks, sessions, used request states).
pub(crate) const STORE: &str = "tollgate::store";
/// The target of session lifecycle events.
pub(crate) const SESSION: &str = "tollgate::session";
/// The target of task lifecycle events.
pub(crate) const TASK: &str = "tollgate::task";
/// The target of connection events (shed, refused for capacity).
pub(crate) const CONNECTION: &str = "tollgate::connection";
/// The target of readiness probe events (a failed probe, ready again).
pub(crate) const HEALTH: &str = "tollgate::health";
/// The target of shutdown progress events.
pub(crate) const SHUTDOWN: &str = "tollgate::shutdown";
/// The target of budget events (a bound Tollgate keeps was reached and a request refused as
/// busy for it).
pub(crate) const BUDGET: &str = "tollgate::budget";

/// A bound a request reached, as the `budget` field of its `tollgate::budget` event. (A
/// connection past the connection limit has its own `tollgate::connection` event.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Budget {
    /// Requests running at once in one 2025 session.
    SessionRequests,
    /// 2025 sessions the store may hold.
    Sessions,
    /// Open `subscriptions/listen` requests, per principal or in all.
    Listeners,
    /// Resource subscriptions of one 2025 session.
    Subscriptions,
    /// Schema evaluations running at once (the evaluation gate's slots: a tool's arguments or
    /// output).
    EvaluationSlots,
    /// Request-body bytes one peer may have in requests not yet answered.
    PeerBodyBytes,
}

impl Budget {
    /// The `budget` field's value.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Self::SessionRequests => "session_requests",
            Self::Sessions => "sessions",
            Self::Listeners => "listeners",
            Self::Subscriptions => "subscriptions",
            Self::EvaluationSlots => "evaluation_slots",
            Self::PeerBodyBytes => "peer_body_bytes",
        }
    }
}

/// A request reached `budget` and is answered busy: one `warn` event (`tollgate::budget`, field
/// `budget`), beside the `busy` refusal its fault reply emits. What an operator raises, or
/// looks for a noisy client behind.
#[cold]
pub(crate) fn budget_reached(budget: Budget) {
    tracing::warn!(target: BUDGET, budget = budget.as_str(), "budget reached");
}

/// The longest request id a span records (the same bound OpenTelemetry's span keeps); a longer
/// id is left out.
#[cfg_attr(not(test), allow(dead_code, reason = "used by `request_span`"))]
const MAX_RECORDED_ID: usize = 128;

/// The span one JSON-RPC request runs in: `mcp.request` with its `method` (from the method
/// table: a fixed name, or `_OTHER`), its `name` (the tool, prompt or resource the request
/// names, only once it is known to be registered; pass `None` before) and its `id` (up to 128
/// bytes).
///
/// The pipeline makes it once per request and runs the request's future inside it
/// (`tracing::Instrument::instrument`), so every event below carries the request. A disabled
/// span (no subscriber, or a filter that leaves `tollgate::request` out) costs one relaxed load.
#[inline]
pub(crate) fn request_span(
    method: &'static str,
    name: Option<&str>,
    id: Option<&RequestId>,
) -> tracing::Span {
    let span = tracing::info_span!(
        target: REQUEST,
        "mcp.request",
        method,
        name = tracing::field::Empty,
        id = tracing::field::Empty,
    );
    if !span.is_disabled() {
        if let Some(name) = name {
            span.record("name", name);
        }
        if let Some(id) = id.filter(|id| recordable(id)) {
            span.record("id", tracing::field::display(id));
        }
    }
    span
}

/// Whether a request id is short enough to record.
fn recordable(id: &RequestId) -> bool {
    match id {
        RequestId::String(s) => s.as_str().len() <= MAX_RECORDED_ID,
        RequestId::Integer(n) => n.to_string().len() <= MAX_RECORDED_ID,
    }
}

/// What a fault refuses, as the `kind` field of its refusal event; `None` for the internal
/// error, whose causes (a handler's error or panic, an output past its limits) log themselves.
pub(crate) const fn refusal_kind(fault: Fault) -> Option<&'static str> {
    Some(match fault {
        Fault::Unauthorized | Fault::Forbidden => "admission",
        Fault::RateLimited => "rate_limit",
        Fault::Parse | Fault::BatchTooLarge => "limits",
        Fault::Busy => "busy",
        Fault::HeaderMismatch => "header_mismatch",
        Fault::InvalidParams | Fault::InvalidRequest | Fault::InvalidRequestState => {
            "invalid_params"
        }
        Fault::MethodNotFound
        | Fault::UnknownTool
        | Fault::UnknownPrompt
        | Fault::ResourceNotFound
        | Fault::ResourceNotFound2025
        | Fault::SkillNotFound
        | Fault::NotADirectory
        | Fault::InvalidCursor
        | Fault::TaskNotFound
        | Fault::TaskEnded
        | Fault::TaskCancelled
        | Fault::UnsupportedVersion
        | Fault::MissingCapability
        | Fault::SessionRequired
        | Fault::SessionNotFound => "not_served",
        Fault::Internal => return None,
    })
}

/// The refusal event of a fault answered: `info` for admission, rate limits and input limits
/// (what an operator tunes), `warn` for capacity (`busy`), `debug` for a client's protocol
/// mistakes. Fields: `kind` and the JSON-RPC `code`.
#[cold]
pub(crate) fn refused(fault: Fault) {
    let Some(kind) = refusal_kind(fault) else {
        return;
    };
    let code = fault.code();
    match kind {
        "admission" | "rate_limit" | "limits" => {
            tracing::info!(target: REFUSAL, kind, code, "request refused");
        }
        "busy" => tracing::warn!(target: REFUSAL, kind, code, "request refused"),
        _ => tracing::debug!(target: REFUSAL, kind, code, "request refused"),
    }
}

/// A refusal that is not a fault reply: a tool's arguments that fail its input schema or typed
/// binding, answered as the fixed `isError` result (`kind` `invalid_arguments`, `debug`).
#[cold]
pub(crate) fn refused_arguments() {
    tracing::debug!(target: REFUSAL, kind = "invalid_arguments", "request refused");
}

/// A panic caught by the guard: a handler's, or an admission controller's or store's future
/// (`error` level; the payload is not recorded: it may carry anything the code formatted).
#[cold]
pub(crate) fn panicked() {
    tracing::error!(target: HANDLER, "panic caught");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_internal_error_has_no_refusal_kind() {
        assert_eq!(refusal_kind(Fault::Internal), None);
        assert_eq!(refusal_kind(Fault::Unauthorized), Some("admission"));
        assert_eq!(refusal_kind(Fault::Forbidden), Some("admission"));
        assert_eq!(refusal_kind(Fault::RateLimited), Some("rate_limit"));
        assert_eq!(refusal_kind(Fault::Parse), Some("limits"));
        assert_eq!(refusal_kind(Fault::HeaderMismatch), Some("header_mismatch"));
        assert_eq!(refusal_kind(Fault::InvalidParams), Some("invalid_params"));
        assert_eq!(refusal_kind(Fault::UnknownTool), Some("not_served"));
    }

    #[test]
    fn a_long_request_id_is_not_recorded() {
        let at = RequestId::String(tollgate_json::JsonString::from("a".repeat(128).as_str()));
        let past = RequestId::String(tollgate_json::JsonString::from("a".repeat(129).as_str()));
        assert!(recordable(&at));
        assert!(!recordable(&past));
    }

    /// Keeps the fields each span is made or recorded with, as text.
    #[derive(Clone, Default)]
    struct Spans(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

    struct Text<'a>(&'a mut Vec<String>);

    impl tracing::field::Visit for Text<'_> {
        fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
            self.0.push(format!("{}={value:?}", field.name()));
        }
        fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
            self.0.push(format!("{}={value}", field.name()));
        }
    }

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Spans {
        fn on_new_span(
            &self,
            attrs: &tracing::span::Attributes<'_>,
            _: &tracing::span::Id,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            attrs.record(&mut Text(&mut self.0.lock().unwrap()));
        }
        fn on_record(
            &self,
            _: &tracing::span::Id,
            values: &tracing::span::Record<'_>,
            _: tracing_subscriber::layer::Context<'_, S>,
        ) {
            values.record(&mut Text(&mut self.0.lock().unwrap()));
        }
    }

    #[test]
    #[allow(clippy::unwrap_used, reason = "tests")]
    fn the_request_span_records_method_name_and_an_id_up_to_128_bytes() {
        use tracing_subscriber::layer::SubscriberExt;
        let spans = Spans::default();
        let subscriber = tracing_subscriber::registry().with(spans.clone());
        tracing::subscriber::with_default(subscriber, || {
            let at = RequestId::String(tollgate_json::JsonString::from("a".repeat(128).as_str()));
            let past = RequestId::String(tollgate_json::JsonString::from("b".repeat(129).as_str()));
            let one = request_span("tools/call", Some("add"), Some(&at));
            let two = request_span("tools/list", None, Some(&past));
            assert!(!one.is_disabled() && !two.is_disabled());
        });
        let seen = spans.0.lock().unwrap().join(" ");
        assert!(
            seen.contains("method=tools/call") && seen.contains("name=add"),
            "{seen}"
        );
        assert!(
            seen.contains(&format!("id={:?}", "a".repeat(128))),
            "{seen}"
        );
        assert!(seen.contains("method=tools/list"), "{seen}");
        assert!(
            !seen.contains("bbbb"),
            "a 129-byte id is not recorded: {seen}"
        );
    }
}
