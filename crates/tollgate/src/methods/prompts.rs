//! `prompts/get` and `completion/complete` (prompt arguments), on every revision; `prompts/list`
//! is a pre-rendered page (`methods::one_page`).

use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::context::RequestContext;
use crate::methods::require_scopes;
use crate::model::guard::guarded;
use crate::model::prompt::PromptArguments;
use crate::model::prompt::completion::{Completion, CompletionRequest};
use crate::registry::Endpoint;
use crate::state::request::{Binding, retry_params, run};
use crate::version::is_legacy;
use crate::wire::fault::Fault;
use crate::wire::method::Method;
use crate::wire::reply::{Reply, fail, tree_reply};
use crate::wire::stage::stage;

/// `prompts/get`: the prompt, its arguments checked against its declarations once any
/// interceptors have run (missing, unknown and non-string ones are -32602, and the handler does
/// not run), the handler, the messages.
pub(crate) async fn get(
    endpoint: &Endpoint,
    params: &JsonObject,
    mut context: RequestContext,
) -> Reply {
    stage!(Lookup);
    let id = context.request_id.clone();
    let id = id.as_ref();
    let revision = context.protocol_version;
    let Some(JsonValue::String(name)) = params.get("name") else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    let retry = match retry_params(params, revision) {
        Ok(retry) => retry,
        Err(fault) => return fail(revision, id, fault, None),
    };
    // The catalog this request runs on to its end (as its caller sees it).
    let catalog = endpoint.catalog_for(&context.admission);
    let Some(prompt) = catalog.prompt(name, revision) else {
        return fail(revision, id, Fault::UnknownPrompt, None);
    };
    crate::facts::telemetry::target(crate::facts::telemetry::Target::Prompt(
        prompt.shared_name(),
    ));
    if let Err(reply) = require_scopes(endpoint, &context, &prompt.inner.required_scopes) {
        return reply;
    }
    context.operation_name = Some(name.clone());
    // The arguments as sent (an object, or none), for request state and interceptors; checked
    // against the prompt's declarations once those have run.
    let raw_arguments = match params.get("arguments") {
        Some(JsonValue::Object(a)) => a.clone(),
        None => JsonObject::new(),
        Some(_) => return fail(revision, id, Fault::InvalidParams, None),
    };
    let declared = prompt.arguments();
    let arguments = || PromptArguments::check(params.get("arguments"), declared);
    let binding = Binding {
        method: Method::PromptsGet,
        name,
        arguments: &raw_arguments,
    };
    let handler = &*prompt.inner.handler;
    let result = match run(endpoint, context, &binding, retry, handler, arguments).await {
        Ok(result) => result,
        Err(reply) => return reply,
    };
    let Some(messages) = crate::model::prompt::render_messages(result.messages(), revision) else {
        return fail(revision, id, Fault::Internal, None);
    };
    let mut out = JsonObject::builder();
    if !is_legacy(revision) {
        out.push("resultType", "complete");
    }
    if let Some(description) = result.get_description() {
        out.push("description", description);
    }
    out.push("messages", messages);
    tree_reply(&endpoint.inner.limits.output, revision, id, out)
}

/// `completion/complete` for a prompt argument: the prompt's completion handler, or no values
/// when it has none. Resource-template references are refused (Tollgate serves no resources).
pub(crate) async fn complete(
    endpoint: &Endpoint,
    params: &JsonObject,
    mut context: RequestContext,
) -> Reply {
    stage!(Lookup);
    let id = context.request_id.clone();
    let id = id.as_ref();
    let revision = context.protocol_version;
    let (Some(JsonValue::Object(reference)), Some(JsonValue::Object(argument))) =
        (params.get("ref"), params.get("argument"))
    else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    let (Some(JsonValue::String(argument_name)), Some(JsonValue::String(value))) =
        (argument.get("name"), argument.get("value"))
    else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    let (Some("ref/prompt"), Some(JsonValue::String(name))) = (
        reference.get("type").and_then(JsonValue::as_str),
        reference.get("name"),
    ) else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    // The catalog this request runs on to its end (as its caller sees it).
    let catalog = endpoint.catalog_for(&context.admission);
    let Some(prompt) = catalog.prompt(name, revision) else {
        return fail(revision, id, Fault::UnknownPrompt, None);
    };
    crate::facts::telemetry::target(crate::facts::telemetry::Target::Prompt(
        prompt.shared_name(),
    ));
    if let Err(reply) = require_scopes(endpoint, &context, &prompt.inner.required_scopes) {
        return reply;
    }
    if !prompt
        .arguments()
        .iter()
        .any(|a| a.name() == argument_name.as_str())
    {
        return fail(revision, id, Fault::InvalidParams, None);
    }
    // Context: already-chosen values of the prompt's other declared arguments, all strings.
    let mut chosen = Vec::new();
    match params.get("context").map(|c| c.get("arguments")) {
        None | Some(None) => {}
        Some(Some(JsonValue::Object(given))) => {
            for (k, v) in given.iter() {
                let declared = prompt.arguments().iter().any(|a| a.name() == k.as_str());
                match v.as_str() {
                    Some(v) if declared => chosen.push((Arc::from(k.as_str()), Arc::from(v))),
                    _ => return fail(revision, id, Fault::InvalidParams, None),
                }
            }
        }
        Some(Some(_)) => return fail(revision, id, Fault::InvalidParams, None),
    }
    context.operation_name = Some(name.clone());
    let completion = match &prompt.inner.completion {
        None => Some(Completion::empty()),
        Some(handler) => {
            let request = CompletionRequest::new(argument_name, value, chosen);
            guarded(|| handler.invoke(&context, request, &endpoint.inner.failures))
                .await
                .flatten()
        }
    };
    let Some(completion) = completion else {
        return fail(revision, id, Fault::Internal, None);
    };
    let mut out = JsonObject::builder();
    if !is_legacy(revision) {
        out.push("resultType", "complete");
    }
    out.push("completion", completion.render());
    tree_reply(&endpoint.inner.limits.output, revision, id, out)
}
