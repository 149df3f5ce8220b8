//! `prompts/get` and `completion/complete` (prompt arguments and resource templates'
//! variables), on every revision; `prompts/list`
//! is a pre-rendered page (`methods::one_page`).

use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::context::RequestContext;
use crate::methods::require_scopes;
use crate::model::guard::guarded;
use crate::model::origin::Transport;
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
/// not run), the handler (with its transport's features, as a tool call's), the messages.
pub(crate) async fn get(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    params: &JsonObject,
    context: &mut RequestContext,
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
    if let Err(reply) = require_scopes(endpoint, context, &prompt.inner.required_scopes) {
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
    let result = match run(
        endpoint, transport, context, &binding, retry, handler, arguments,
    )
    .await
    {
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

/// What a `completion/complete` reference names: a prompt, or a resource template (by its URI
/// template, exactly as registered).
enum Completing<'c> {
    Prompt(&'c crate::model::prompt::PromptRegistration),
    Template(&'c crate::model::resource::ResourceTemplateRegistration),
}

impl Completing<'_> {
    /// Whether `name` is one of its declared arguments (a prompt's) or variables (a template's).
    fn declares(&self, name: &str) -> bool {
        match self {
            Self::Prompt(p) => p.arguments().iter().any(|a| a.name() == name),
            Self::Template(t) => t.template.has_variable(name),
        }
    }
}

/// `completion/complete` for a prompt argument or a resource template's variable: the
/// registration's completion handler, or no values when it has none. An unknown prompt is the
/// revision's unknown-prompt error, an unknown template -32602 (neither echoed).
pub(crate) async fn complete(
    endpoint: &Endpoint,
    params: &JsonObject,
    context: &mut RequestContext,
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
    // The catalog this request runs on to its end (as its caller sees it).
    let catalog = endpoint.catalog_for(&context.admission);
    let (target, name) = match (
        reference.get("type").and_then(JsonValue::as_str),
        reference.get("name"),
        reference.get("uri"),
    ) {
        (Some("ref/prompt"), Some(JsonValue::String(name)), _) => {
            let Some(prompt) = catalog.prompt(name, revision) else {
                return fail(revision, id, Fault::UnknownPrompt, None);
            };
            crate::facts::telemetry::target(crate::facts::telemetry::Target::Prompt(
                prompt.shared_name(),
            ));
            (Completing::Prompt(prompt), name)
        }
        (Some("ref/resource"), _, Some(JsonValue::String(uri))) => {
            let Some(template) = catalog.template(uri, revision) else {
                return fail(revision, id, Fault::InvalidParams, None);
            };
            (Completing::Template(template), uri)
        }
        _ => return fail(revision, id, Fault::InvalidParams, None),
    };
    let (scopes, handler) = match &target {
        Completing::Prompt(p) => (&p.inner.required_scopes, p.inner.completion.as_deref()),
        Completing::Template(t) => (&t.inner.required_scopes, t.completion.as_deref()),
    };
    if let Err(reply) = require_scopes(endpoint, context, scopes) {
        return reply;
    }
    if !target.declares(argument_name) {
        return fail(revision, id, Fault::InvalidParams, None);
    }
    // Context: already-chosen values of the other declared arguments (variables), all strings.
    let mut chosen = Vec::new();
    match params.get("context").map(|c| c.get("arguments")) {
        None | Some(None) => {}
        Some(Some(JsonValue::Object(given))) => {
            for (k, v) in given.iter() {
                match v.as_str() {
                    Some(v) if target.declares(k) => {
                        chosen.push((Arc::from(k.as_str()), Arc::from(v)));
                    }
                    _ => return fail(revision, id, Fault::InvalidParams, None),
                }
            }
        }
        Some(Some(_)) => return fail(revision, id, Fault::InvalidParams, None),
    }
    context.operation_name = Some(name.clone());
    let completion = match handler {
        None => Some(Completion::empty()),
        Some(handler) => {
            let request = CompletionRequest::new(argument_name, value, chosen);
            guarded(|| handler.invoke(context, request, &endpoint.inner.failures))
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
