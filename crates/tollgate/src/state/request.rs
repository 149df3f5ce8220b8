//! The request-state stage of the handlers (2026-07-28 multi-round-trip requests): a retry's `inputResponses`
//! and sealed `requestState` read and opened before the handler, and an `input_required` result
//! sealed and rendered after it.

use tollgate_json::{JsonObject, JsonString, JsonValue};

use crate::client_request::{Asks, transport_features};
use crate::facts::context::RequestContext;
use crate::facts::context::missing_capabilities;
use crate::model::features::InvocationFeatures;
use crate::model::guard::{BoxFuture, fresh_features, guarded};
use crate::model::handler::{Erased, Outcome};
use crate::model::input::{InputRequiredResult, MAX_APPLICATION_STATE_BYTES};
use crate::model::intercept::{FailureKind, HandlerFailure, HandlerOutput, run_chain};
use crate::model::origin::Transport;
use crate::model::tool::options::RequestStateMode;
use crate::registry::Endpoint;
use crate::version::{ProtocolVersion, is_legacy};
use crate::wire::fault::Fault;
use crate::wire::method::Method;
use crate::wire::reply::{Reply, fail, tree_reply};

/// A retry's `inputResponses` and `requestState`, each when sent.
pub(crate) type Retry<'p> = (Option<&'p JsonObject>, Option<&'p JsonString>);

/// A retry's fields: `inputResponses` an object, `requestState` a string, and only where
/// multi-round-trip requests exist (2026-07-28). Responses without state are the protocol's
/// ephemeral flow: client input like the arguments, unbound to any request Tollgate issued.
pub(crate) fn retry_params(
    params: &JsonObject,
    revision: ProtocolVersion,
) -> Result<Option<Retry<'_>>, Fault> {
    match (params.get("inputResponses"), params.get("requestState")) {
        (None, None) => Ok(None),
        _ if is_legacy(revision) => Err(Fault::InvalidParams),
        (Some(JsonValue::Object(responses)), Some(JsonValue::String(state))) => {
            Ok(Some((Some(responses), Some(state))))
        }
        (None, Some(JsonValue::String(state))) => Ok(Some((None, Some(state)))),
        (Some(JsonValue::Object(responses)), None) => Ok(Some((Some(responses), None))),
        _ => Err(Fault::InvalidParams),
    }
}

/// Opens a retry's `requestState` for this tool call and keeps the responses to the inputs it
/// asked for (shape-checked; other keys are ignored, as the protocol asks); on a single-use
/// endpoint, consumes the state last, so only a retry that would reach the handler uses it up.
pub(crate) async fn open_input(
    endpoint: &Endpoint,
    context: &RequestContext,
    method: &str,
    name: &str,
    arguments: &JsonObject,
    responses: Option<&JsonObject>,
    state: Option<&JsonString>,
) -> Result<crate::facts::context::InputContext, Fault> {
    let Some(state) = state else {
        // No state: every response must at least be an object; the handler reads what it
        // recognises and ignores the rest.
        let responses = responses.cloned().unwrap_or_default();
        if responses.iter().any(|(_, v)| v.as_object().is_none()) {
            return Err(Fault::InvalidParams);
        }
        return Ok(crate::facts::context::InputContext {
            responses,
            state: JsonValue::Null,
            round: 0,
            verified: false,
            application_state: None,
        });
    };
    let key = endpoint
        .inner
        .state_key
        .as_ref()
        .ok_or(Fault::InvalidRequestState)?;
    let binding = crate::state::seal::Binding {
        endpoint: &endpoint.inner.path,
        method,
        name,
        arguments,
        principal: context.admission.principal_name(),
    };
    let (opened, ticket) =
        crate::state::seal::open(key, &binding, state, std::time::SystemTime::now())
            .map_err(|_| Fault::InvalidRequestState)?;
    let mut kept = JsonObject::builder();
    if let Some(responses) = responses {
        for (key, method) in &opened.asked {
            let Some(response) = responses.get(key) else {
                continue;
            };
            if !crate::model::input::input_response_shape(method, response) {
                return Err(Fault::InvalidParams);
            }
            kept.push(key.as_str(), response.clone());
        }
    }
    if let Some(single_use) = &endpoint.inner.single_use {
        single_use.consume(&ticket).await?;
    }
    Ok(crate::facts::context::InputContext {
        responses: kept.build(),
        state: opened.state,
        round: opened.round,
        verified: true,
        application_state: None,
    })
}

/// Renders an `input_required` result: 2026-07-28 only; state of the kind `mode` allows;
/// every input's client capability declared (all missing ones reported together, -32021);
/// then the application's own state as the `requestState`, or a sealed one (one round further,
/// within the round limit).
pub(crate) fn input_required(
    endpoint: &Endpoint,
    context: &RequestContext,
    binding: &Binding<'_>,
    mode: RequestStateMode,
    required: &InputRequiredResult,
) -> Reply {
    let revision = context.protocol_version;
    let id = context.request_id.as_ref();
    let (method, name, arguments) = (binding.method.name(), binding.name, binding.arguments);
    let state_allowed = match mode {
        RequestStateMode::None => required.state.is_none() && required.application_state.is_none(),
        RequestStateMode::FrameworkProtected => required.application_state.is_none(),
        _ => {
            required.state.is_none()
                && required
                    .application_state
                    .as_ref()
                    .is_none_or(|s| (1..=MAX_APPLICATION_STATE_BYTES).contains(&s.len()))
        }
    };
    if is_legacy(revision) || !required.is_well_formed() || !state_allowed {
        return fail(revision, id, Fault::Internal, None);
    }
    let caps = &context.client_capabilities;
    let mut missing: Vec<&crate::facts::context::ClientCapability> = Vec::new();
    for (_, request) in required.input_requests() {
        if !caps.declares(request.capability()) && !missing.contains(&request.capability()) {
            missing.push(request.capability());
        }
    }
    if !missing.is_empty() {
        return missing_capabilities(revision, id, missing.into_iter());
    }
    let mut out = JsonObject::builder().insert("resultType", "input_required");
    if required.input_requests().next().is_some() {
        let mut requests = JsonObject::builder();
        for (key, request) in required.input_requests() {
            requests.push(key, request.render());
        }
        out.push("inputRequests", requests.build());
    }
    if mode == RequestStateMode::ApplicationProtected {
        if let Some(state) = &required.application_state {
            out.push("requestState", &**state);
        }
        return tree_reply(&endpoint.inner.limits.output, revision, id, out);
    }
    let round = context.input_round().saturating_add(1);
    if round > crate::state::seal::MAX_REQUEST_STATE_ROUNDS {
        return fail(revision, id, Fault::InvalidRequestState, None);
    }
    let Some(key) = endpoint.inner.state_key.as_ref() else {
        return fail(revision, id, Fault::Internal, None);
    };
    let binding = crate::state::seal::Binding {
        endpoint: &endpoint.inner.path,
        method,
        name,
        arguments,
        principal: context.admission.principal_name(),
    };
    let opened = crate::state::seal::Opened {
        round,
        asked: required
            .input_requests()
            .map(|(k, r)| (k.to_owned(), r.method().to_owned()))
            .collect(),
        state: required.state.clone().unwrap_or(JsonValue::Null),
    };
    let Some(sealed) =
        crate::state::seal::seal(key, &binding, &opened, std::time::SystemTime::now())
    else {
        return fail(revision, id, Fault::Internal, None);
    };
    out.push("requestState", sealed);
    tree_reply(&endpoint.inner.limits.output, revision, id, out)
}

/// A retry to an application-protected tool: its `requestState` handed over exactly as the
/// client returned it (at most [`MAX_APPLICATION_STATE_BYTES`]), and its responses as
/// unverified client input (each an object), as on the ephemeral flow.
pub(crate) fn application_input(
    responses: Option<&JsonObject>,
    state: Option<&JsonString>,
) -> Result<crate::facts::context::InputContext, Fault> {
    let responses = responses.cloned().unwrap_or_default();
    if responses.iter().any(|(_, v)| v.as_object().is_none()) {
        return Err(Fault::InvalidParams);
    }
    let application_state = match state {
        Some(s) if s.as_str().is_empty() || s.as_str().len() > MAX_APPLICATION_STATE_BYTES => {
            return Err(Fault::InvalidRequestState);
        }
        Some(s) => Some(std::sync::Arc::from(s.as_str())),
        None => None,
    };
    Ok(crate::facts::context::InputContext {
        responses,
        state: JsonValue::Null,
        round: 0,
        verified: false,
        application_state,
    })
}

/// What request state is bound to: the method, the operation's name and its arguments (as sent).
pub(crate) struct Binding<'a> {
    pub(crate) method: Method,
    pub(crate) name: &'a str,
    pub(crate) arguments: &'a JsonObject,
}

/// The handler stage prompts and resources share: a retry's state opened against `binding`
/// (its input responses then in the context), the handler run under the guard (panics caught,
/// cancelled if the request is abandoned) with its transport's features (as a tool call's:
/// progress, logging, and inside a 2025 session the response stream and server-to-client
/// requests of any kind), and its outcome finished: the completed value, or the reply to send
/// instead.
pub(crate) async fn run<In: Send, T: Kind>(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    context: &mut RequestContext,
    binding: &Binding<'_>,
    retry: Option<Retry<'_>>,
    handler: &dyn Erased<In, Outcome<T>>,
    input: impl FnOnce() -> Option<In> + Send,
) -> Result<T, Reply> {
    open_state(endpoint, context, binding, retry).await?;
    let (features, guard) = fresh_features();
    let features = transport_features(features, transport, context, endpoint.inner.logging, || {
        Asks::Any
    });
    let outcome = if endpoint.inner.interceptors.is_empty() {
        match input() {
            Some(input) => {
                guarded(|| handler.invoke(context, input, &features, &endpoint.inner.failures))
                    .await
                    .flatten()
                    .ok_or(FailureKind::Internal)
            }
            None => Err(FailureKind::InvalidParams),
        }
    } else {
        let context = &context;
        let inner = Box::new(move |features: InvocationFeatures| -> BoxFuture<'_, _> {
            Box::pin(async move {
                let Some(input) = input() else {
                    return Err(HandlerFailure::of(FailureKind::InvalidParams));
                };
                let outcome =
                    guarded(|| handler.invoke(context, input, &features, &endpoint.inner.failures))
                        .await
                        .flatten();
                outcome.map(T::wrap).ok_or_else(HandlerFailure::new)
            })
        });
        let chain = &endpoint.inner.interceptors;
        // Boxed: the chain's state stays out of every call's future.
        match Box::pin(run_chain(
            chain,
            context,
            binding.arguments,
            features,
            inner,
        ))
        .await
        {
            Ok(output) => T::unwrap(output).ok_or(FailureKind::Internal),
            Err(failure) => Err(failure.kind),
        }
    };
    guard.disarm();
    finish(endpoint, context, binding, outcome)
}

/// A prompt's or a resource read's value, as an interceptor's [`HandlerOutput`] carries it.
pub(crate) trait Kind: Sized + Send + 'static {
    fn wrap(outcome: Outcome<Self>) -> HandlerOutput;
    /// `None` for an output of another kind.
    fn unwrap(output: HandlerOutput) -> Option<Outcome<Self>>;
}

impl Kind for crate::model::prompt::PromptResult {
    fn wrap(outcome: Outcome<Self>) -> HandlerOutput {
        HandlerOutput::Prompt(outcome)
    }
    fn unwrap(output: HandlerOutput) -> Option<Outcome<Self>> {
        match output {
            HandlerOutput::Prompt(outcome) => Some(outcome),
            _ => None,
        }
    }
}

impl Kind for crate::model::resource::ResourceOutput {
    fn wrap(outcome: Outcome<Self>) -> HandlerOutput {
        HandlerOutput::Resource(outcome)
    }
    fn unwrap(output: HandlerOutput) -> Option<Outcome<Self>> {
        match output {
            HandlerOutput::Resource(outcome) => Some(outcome),
            _ => None,
        }
    }
}

/// Before the handler: a retry's state opened against `binding` (its input responses then in
/// the context), or the fixed reply for state that does not open (or, single use, was used).
async fn open_state(
    endpoint: &Endpoint,
    context: &mut RequestContext,
    binding: &Binding<'_>,
    retry: Option<Retry<'_>>,
) -> Result<(), Reply> {
    let Some((responses, state)) = retry else {
        return Ok(());
    };
    let method = binding.method.name();
    let (name, bound) = (binding.name, binding.arguments);
    match open_input(endpoint, context, method, name, bound, responses, state).await {
        Ok(input) => {
            context.input = Some(std::sync::Arc::new(input));
            Ok(())
        }
        Err(fault) => {
            let id = context.request_id.as_ref();
            Err(fail(context.protocol_version, id, fault, None))
        }
    }
}

/// After the handler: its completed value, or the reply to send instead (an `input_required`
/// answer sealed against `binding`, or the fixed error of a failure).
fn finish<T>(
    endpoint: &Endpoint,
    context: &RequestContext,
    binding: &Binding<'_>,
    outcome: Result<Outcome<T>, FailureKind>,
) -> Result<T, Reply> {
    let id = context.request_id.as_ref();
    match outcome {
        Ok(Outcome::Complete(value)) => Ok(value),
        // Prompts and resources declare no state mode: their handlers' state is sealed.
        Ok(Outcome::InputRequired(required)) => Err(input_required(
            endpoint,
            context,
            binding,
            RequestStateMode::FrameworkProtected,
            &required,
        )),
        Ok(Outcome::MissingCapabilities(missing)) => Err(missing.refusal(context)),
        Err(kind) => {
            let fault = match kind {
                FailureKind::InvalidParams => Fault::InvalidParams,
                FailureKind::Busy => Fault::Busy,
                FailureKind::Internal => Fault::Internal,
            };
            Err(fail(context.protocol_version, id, fault, None))
        }
    }
}
