//! What passes between the gateway's caller and an upstream while one forwarded call runs:
//! the upstream's progress relayed to the caller that asked for it (under the caller's own
//! progress token, through the endpoint's `ProgressReporter`), and the caller's going away
//! relayed to the upstream (the upstream call is dropped, which its client cancels as its
//! revision says: `notifications/cancelled`, or the request's stream closed); and, where both
//! the caller and the upstream speak 2026-07-28, the upstream's `input_required` results relayed
//! to the caller (its input requests rebuilt through the endpoint's constructors, its
//! `requestState` carried inside the gateway's own sealed state) and the caller's retry sent
//! back to the upstream with that state. Knows nothing of tools, catalogs or names.

use std::future::Future;

use tokio::sync::mpsc;
use tollgate::context::{
    ClientCapabilities, ClientCapability, InputRequiredResult, ProgressReporter, RequestLogger,
};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::tool::MissingCapabilities;
use tollgate::{InvocationFeatures, ProtocolVersion, RequestContext};
use tollgate_client::{CallOptions, Client, Error, Progress};

use crate::asks;
use crate::error::{Failed, ForwardError};
use crate::inputs::input_request_in;
use crate::link::Link;

/// The most upstream progress reports waiting to be relayed; past it a report is dropped (a
/// later one supersedes it).
const PROGRESS_QUEUE: usize = 32;

/// Runs `call` (made with `options` and the ones it is given) on `link` within `timeout` (its
/// failure with the upstream's error code and data, see [`Failed`]), relaying the upstream's progress to the caller when the caller asked for progress, what the
/// upstream asks of the caller during the call (its requests and log messages, see
/// [`asks`](crate::asks)), and dropping the call (so cancelling it upstream) when the caller's
/// request is cancelled.
pub(crate) async fn relayed<T, F>(
    link: &Link,
    timeout: std::time::Duration,
    features: &InvocationFeatures,
    options: CallOptions,
    call: impl FnOnce(CallOptions) -> F,
) -> Result<T, Failed>
where
    F: Future<Output = Result<T, Error>>,
{
    let reporter = features.find::<ProgressReporter>();
    let (tx, mut rx) = mpsc::channel::<Progress>(PROGRESS_QUEUE);
    let mut options = if reporter.is_some() {
        options.on_progress(move |progress| {
            let _ = tx.try_send(progress.clone());
        })
    } else {
        options
    };
    // The caller's log level, asked of a 2026-07-28 upstream per call (a 2025 upstream's is its
    // session's, set to `debug` at connect; the caller's logger applies the caller's level).
    if let Some(log) = features.find::<RequestLogger>() {
        options = match options.clone().log_level(log.minimum().as_str()) {
            Ok(logging) => logging,
            Err(_) => options,
        };
    }
    let (for_call, mut asked) = asks::channel();
    let bounded = link.bounded(timeout, call(options.handler(for_call)));
    let relay = async {
        let (mut progress_open, mut asked_open) = (true, true);
        while progress_open || asked_open {
            tokio::select! {
                progress = rx.recv(), if progress_open => match progress {
                    Some(progress) => report(reporter, &progress),
                    None => progress_open = false,
                },
                one = asked.recv(), if asked_open => match one {
                    Some(one) => asks::serve(features, one).await,
                    None => asked_open = false,
                },
            }
        }
        // The senders went with the call's options: nothing more to relay; the call decides.
        std::future::pending::<()>().await;
    };
    let result = tokio::select! {
        result = bounded => result,
        () = relay => Err(ForwardError::Upstream.into()),
        () = features.cancellation().cancelled() => Err(ForwardError::Cancelled.into()),
    };
    // Reports and log messages that came with the answer go before it.
    while let Ok(progress) = rx.try_recv() {
        report(reporter, &progress);
    }
    while let Ok(one) = asked.try_recv() {
        asks::serve(features, one).await;
    }
    result
}

/// One upstream report relayed; one the caller's reporter refuses (decreasing, not finite) is
/// dropped.
fn report(reporter: Option<&ProgressReporter>, progress: &Progress) {
    if let Some(reporter) = reporter {
        let _ = reporter.report(progress.progress(), progress.total(), progress.message());
    }
}

/// The member of the gateway's sealed state holding the upstream's `requestState`.
const UPSTREAM_STATE: &str = "upstream";

/// What relaying `input_required` between a caller and an upstream takes, read from the
/// caller's request (owned, so a handler's future need not borrow the request). When both speak
/// 2026-07-28, an `input_required` result is returned (not answered), a retry carries the
/// caller's responses (and, where the registration keeps state, the upstream's state) back, and
/// the upstream is told the caller's own elicitation, sampling and roots capabilities, so it asks
/// only for what the caller can answer (and refuses, -32021, what it requires and the caller
/// lacks). A 2025 caller the endpoint gives a channel to (a tool call, a prompt or a read in a
/// session, over HTTP or stdio) is declared to the upstream the same way, but the upstream's
/// `input_required` is answered by the upstream's client itself: each input request goes
/// through the call's handler to the caller on its own call's stream or as a line (see
/// [`asks`](crate::asks)), and the upstream call is retried with
/// the answers and the upstream's `requestState`, for at most the client's
/// `max_input_rounds` rounds (default 10; past them the call fails, the fixed -32603). To a
/// 2026-07-28 upstream whose caller cannot be relayed to, a call declares none.
pub(crate) struct InputRelay {
    /// Whether the upstream's `input_required` is relayed.
    pub(crate) relays: bool,
    /// The capabilities declared for the call (2026-07-28 upstreams).
    capabilities: Option<JsonObject>,
    /// The caller's responses and the upstream's state, on a retry.
    retry: Option<(JsonObject, Option<JsonValue>)>,
}

impl InputRelay {
    /// Read from `context`, for `client`'s upstream; `keeps_state` when the registration may
    /// carry the upstream's state; `asks` when the caller can be sent requests during the call
    /// (the endpoint gave it a `ClientRequests` channel: a 2025 caller in a session, over HTTP
    /// or stdio).
    pub(crate) fn of(
        context: &RequestContext,
        client: &Client,
        keeps_state: bool,
        asks: bool,
    ) -> Self {
        let none = |capabilities| Self {
            relays: false,
            capabilities,
            retry: None,
        };
        if !client.revision().is_stateless() {
            return none(None);
        }
        if context.protocol_version() != ProtocolVersion::V2026_07_28 {
            let declared = if asks {
                askable(context)
            } else {
                JsonObject::new()
            };
            return none(Some(declared));
        }
        let capabilities = askable(context);
        let retry = context.input_responses().map(|responses| {
            let state = context
                .request_state()
                .filter(|_| keeps_state)
                .and_then(|s| s.get(UPSTREAM_STATE))
                .filter(|s| !s.is_null())
                .cloned();
            (responses.clone(), state)
        });
        Self {
            relays: true,
            capabilities: Some(capabilities),
            retry,
        }
    }

    /// Declares the tasks extension to the upstream (the caller may be given a task).
    pub(crate) fn declare_tasks(&mut self) {
        if let Some(capabilities) = self.capabilities.take() {
            self.capabilities = Some(crate::tasks::with_extension(capabilities));
        }
    }

    /// The options of a tool call, a prompt or a read.
    pub(crate) fn call_options(self) -> CallOptions {
        let mut options = CallOptions::new();
        if let Some(capabilities) = self.capabilities {
            options = options.client_capabilities(capabilities);
        }
        if !self.relays {
            return options;
        }
        options = options.return_input_required();
        match self.retry {
            Some((responses, state)) => options.retry(responses, state),
            None => options,
        }
    }
}

/// The caller's own `elicitation`, `sampling` and `roots` capabilities, as declared.
fn askable(context: &RequestContext) -> JsonObject {
    let mut capabilities = JsonObject::builder();
    for (name, value) in context.client_capabilities().raw().iter() {
        if matches!(name.as_str(), "elicitation" | "sampling" | "roots") {
            capabilities.push(name.clone(), value.clone());
        }
    }
    capabilities.build()
}

/// Whether an upstream's result is an `input_required` one.
pub(crate) fn asks_input(result: &JsonValue) -> bool {
    result.get("resultType").and_then(JsonValue::as_str) == Some("input_required")
}

/// The upstream's `input_required` result as the gateway's own: each input request rebuilt
/// through the endpoint's constructors (form elicitation, sampling, roots), the upstream's
/// `requestState` kept inside the gateway's sealed state when the registration `keeps_state`.
/// `None` for anything else (another method, a URL elicitation, a malformed request, state
/// the registration cannot keep, nothing asked and no state).
pub(crate) fn input_required_of(
    result: &JsonValue,
    keeps_state: bool,
) -> Option<InputRequiredResult> {
    let upstream_state = result.get("requestState").filter(|s| !s.is_null());
    if upstream_state.is_some() && !keeps_state {
        return None;
    }
    let requests = match result.get("inputRequests") {
        None => None,
        Some(requests) => Some(requests.as_object()?),
    };
    let mut relayed: Option<InputRequiredResult> = None;
    for (key, request) in requests.into_iter().flat_map(JsonObject::iter) {
        let rebuilt = input_request_in(request)?;
        relayed = Some(match relayed {
            None => InputRequiredResult::with_input_request(key.as_str(), rebuilt),
            Some(relayed) => relayed.add_input_request(key.as_str(), rebuilt),
        });
    }
    if !keeps_state {
        return relayed;
    }
    let state = JsonObject::builder()
        .insert(
            UPSTREAM_STATE,
            upstream_state.cloned().unwrap_or(JsonValue::Null),
        )
        .build();
    Some(match relayed {
        None => InputRequiredResult::with_state(state.into()),
        Some(relayed) => relayed.state(state.into()),
    })
}

/// An upstream's refusal of a tool call, a prompt or a read for capabilities its caller lacks
/// (`data.requiredCapabilities`: `elicitation`, `sampling`, `roots` and the `extensions`
/// named), as the handler's answer: those the caller does not declare, which the endpoint
/// refuses with its own -32021 naming them, on the caller's revision.
/// `None` when the upstream names none the caller lacks, or more or longer than the runtime
/// takes (then it is the upstream's failure).
pub(crate) fn missing_capabilities_of(
    declared: &ClientCapabilities,
    data: Option<&JsonValue>,
) -> Option<MissingCapabilities> {
    let required = data?.get("requiredCapabilities")?.as_object()?;
    let mut named: Vec<ClientCapability> = Vec::new();
    for (name, value) in required.iter() {
        match name.as_str() {
            "elicitation" => named.push(ClientCapability::Elicitation),
            "sampling" => named.push(ClientCapability::Sampling),
            "roots" => named.push(ClientCapability::Roots),
            "extensions" => {
                let extensions = value.as_object()?;
                named.extend(
                    extensions
                        .iter()
                        .map(|(id, _)| ClientCapability::Extension(id.as_str().into())),
                );
            }
            _ => {}
        }
    }
    MissingCapabilities::new(named.into_iter().filter(|c| !declared.declares(c)))
}
