//! `tools/list` and `tools/call`, one handler each for every revision. A call goes through its
//! stages in order: parameters; the tool's lookup, its required client capabilities (tasks
//! included) and mirrored `Mcp-Param-*` headers; the tool's limiter; request state; input
//! validation; the handler with its invocation features; then the outcome, validated and written
//! in the request's revision.

use std::sync::Arc;

use tollgate_json::{JsonObject, JsonString, JsonValue};
use tollgate_schema::ValidationErrorKind;

use crate::client_request::Asks;
use crate::facts::context::missing_capabilities;
use crate::facts::context::{ClientCapability, RequestContext};
use crate::model::app::client_renders_views;
use crate::model::content::TextContent;
use crate::model::features::InvocationFeatures;
use crate::model::guard::{BoxFuture, fresh_features, guarded};
use crate::model::intercept::{FailureKind, HandlerFailure, HandlerOutput, run_chain, sanitize};
use crate::model::origin::Transport;
use crate::model::projection::complete;
use crate::model::result::{CompleteResult, OperationResult, ToolOutput};
use crate::model::tool::check::{ArgumentCheck, Checked};
use crate::model::tool::foreign::ForeignCheck;
use crate::model::tool::options::{RequestStateMode, TaskSupport};
use crate::model::tool::{Invocation, InvokeFailure, ToolRegistration};
use crate::policy::rules::refusal_reply;
use crate::registry::snapshot::Catalog;
use crate::registry::{Endpoint, revision_slot};
use crate::state::request::{
    Binding, Retry, application_input, input_required, open_input, retry_params,
};
use crate::tasks::model::TASKS_EXTENSION;
use crate::tasks::runner::Tasks;
use crate::version::{ProtocolVersion, is_legacy};
use crate::wire::fault::{Fault, INVALID_ARGUMENTS_TEXT};
use crate::wire::headers;
use crate::wire::id::RequestId;
use crate::wire::method::Method;
use crate::wire::reply::{Reply, fail, tree_reply};
use crate::wire::stage::stage;

/// `tools/list`: the page the cursor names (issued by this catalog, as the caller sees it),
/// pre-rendered per revision, with the tools' MCP Apps metadata when the client declared the
/// extension (both renderings are made with the catalog).
pub(crate) fn list(
    endpoint: &Endpoint,
    params: &JsonObject,
    id: Option<&RequestId>,
    context: &RequestContext,
) -> Reply {
    stage!(Lookup);
    let revision = context.protocol_version;
    let catalog = endpoint.catalog_for(&context.admission);
    let slot = revision_slot(revision);
    let apps = &catalog.app_tool_pages[slot];
    let pages = if !apps.is_empty() && client_renders_views(&context.client_capabilities) {
        apps
    } else {
        &catalog.tool_pages[slot]
    };
    crate::methods::paged(revision, params, id, pages, catalog.fingerprint)
}

/// What a `tools/call` names: the tool, its arguments (an object, empty when absent), a
/// retry's responses and state, and (2025-11-25) whether it asks to run as a task.
struct Call<'p> {
    name: &'p JsonString,
    arguments: JsonObject,
    retry: Option<Retry<'p>>,
    task: bool,
}

impl<'p> Call<'p> {
    fn read(
        params: &'p JsonObject,
        revision: ProtocolVersion,
        declared: bool,
    ) -> Result<Self, Fault> {
        let Some(JsonValue::String(name)) = params.get("name") else {
            return Err(Fault::InvalidParams);
        };
        let arguments = match params.get("arguments") {
            None => JsonObject::new(),
            Some(JsonValue::Object(a)) => a.clone(),
            Some(_) => return Err(Fault::InvalidParams),
        };
        let retry = retry_params(params, revision)?;
        // 2025-11-25's `task` (2026-07-28 ignores the obsolete member).
        // Read only where the capability is declared: elsewhere the member is ignored, as the
        // revision asks of a server that does not declare it.
        let task = declared && requested_task(params.get("task"))?;
        Ok(Self {
            name,
            arguments,
            retry,
            task,
        })
    }
}

/// Whether a 2025-11-25 call asks for a task: `task` is an object with an optional
/// non-negative integer `ttl` (a wish the endpoint's own lifetime overrides).
#[cold]
fn requested_task(task: Option<&JsonValue>) -> Result<bool, Fault> {
    match task {
        None => Ok(false),
        Some(JsonValue::Object(task)) => {
            let ttl_ok = task.get("ttl").is_none_or(|t| {
                t.as_number()
                    .is_some_and(|n| n.is_integer() && n.to_u64().is_some())
            });
            if ttl_ok {
                Ok(true)
            } else {
                Err(Fault::InvalidParams)
            }
        }
        Some(_) => Err(Fault::InvalidParams),
    }
}

/// `tools/call`, once admitted.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would hold its arguments twice in the request's future"
)]
pub(crate) fn call(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    params: &JsonObject,
    context: &mut RequestContext,
) -> impl Future<Output = Reply> {
    async move {
        stage!(Lookup);
        let id = context.request_id.clone();
        let id = id.as_ref();
        let revision = context.protocol_version;
        // (The declaration is asked only on 2025-11-25.)
        let declared = revision.has_requested_tasks() && endpoint.declares_requested_tasks();
        let call = match Call::read(params, revision, declared) {
            Ok(call) => call,
            Err(fault) => return fail(revision, id, fault, None),
        };
        // The catalog this call runs on to its end (as its caller sees it).
        let catalog = endpoint.catalog_for(&context.admission);
        let (tool, tasks) = match select(endpoint, &catalog, transport, &call, context) {
            Ok(selected) => selected,
            Err(reply) => return reply,
        };
        // The operation name admission saw is this very name (`Method::operation_name`).
        stage!(Limiter);
        if let Err(reply) = charge_tool(endpoint, context, tool.inner.rate_limiter.as_deref()) {
            return reply;
        }
        // Request state: opened and verified against this request before anything else uses it.
        if let Some((responses, state)) = call.retry {
            stage!(RequestState);
            // Boxed: a retry is rare, and every call's future would carry its size.
            let retried = Box::pin(retry_input(
                endpoint, tool, context, &call, responses, state,
            ));
            match retried.await {
                Ok(input) => context.input = Some(Arc::new(input)),
                Err(fault) => return fail(revision, id, fault, None),
            }
        }
        let (features, guard) = fresh_features();
        let (features, mut created) =
            features_for(endpoint, transport, tool, context, tasks, features, &call);
        // A 2025-11-25 call that asked for a task gets one even when its handler answers
        // inline (the revision answers such a call with a task).
        let requested = created.as_mut().and_then(|c| c.kept.take());
        let check = created.as_ref().map(|c| &*c.check);
        let ended = if endpoint.inner.interceptors.is_empty() && requested.is_none() {
            validate_and_invoke(endpoint, tool, context, &call.arguments, features, check).await
        } else {
            // Boxed: the intercepted path's and a requested task's state stay out of every
            // call's future.
            let arguments = &call.arguments;
            Box::pin(elsewhere(
                endpoint, tool, context, arguments, features, check, requested,
            ))
            .await
        };
        guard.disarm();
        let task_serial = created.as_ref().map(|c| c.serial);
        // A task refused for its arguments (an interceptor created it before they were
        // validated), or because the store did not answer: the call answers as any call with
        // those arguments, or 503.
        let ended = match check.and_then(ArgumentCheck::refused) {
            Some(Checked::Invalid) => Ended::InvalidArguments,
            Some(Checked::Busy) => Ended::Busy,
            Some(Checked::Valid) | None => ended,
        };
        crate::facts::telemetry::stage_sync("output", || {
            outcome(endpoint, tool, &call, context, task_serial, ended)
        })
    }
}

/// The handler stage of a call with interceptors, or of a 2025-11-25 call that asked for a
/// task (its inline answer then made a task's).
async fn elsewhere(
    endpoint: &Endpoint,
    tool: &ToolRegistration,
    context: &RequestContext,
    arguments: &JsonObject,
    features: InvocationFeatures,
    check: Option<&ArgumentCheck>,
    requested: Option<Box<crate::tasks::runner::TaskCreation>>,
) -> Ended {
    let ended = if endpoint.inner.interceptors.is_empty() {
        validate_and_invoke(endpoint, tool, context, arguments, features, check).await
    } else {
        stage!(Interception);
        intercepted(endpoint, tool, context, arguments, features, check).await
    };
    match requested {
        Some(creation) => as_task(*creation, ended).await,
        None => ended,
    }
}

/// A 2025-11-25 call that asked for a task and whose handler answered inline: its result
/// becomes the result of a task created for it (stored as any task's, read back through the
/// sanitizer and the output schema at `tasks/result`). Anything else ends as it ended.
async fn as_task(creation: crate::tasks::runner::TaskCreation, ended: Ended) -> Ended {
    let result = match ended {
        Ended::Output(Invocation::Operation(OperationResult::Complete(result))) => result,
        Ended::Output(Invocation::Structured(value)) => {
            CompleteResult::from_tool_structured_content(value)
        }
        other => return other,
    };
    match creation.spawn(move |_| async move { Ok(result) }).await {
        Ok(created) => Ended::Output(Invocation::Operation(OperationResult::TaskCreated(created))),
        Err(_) => Ended::Failed,
    }
}

/// A retry's input: a typed-complete tool never issued state to come back to; an
/// application-protected tool's state is handed over as returned; any other is opened and
/// verified against this call (and, on a single-use endpoint, consumed).
async fn retry_input(
    endpoint: &Endpoint,
    tool: &ToolRegistration,
    context: &RequestContext,
    call: &Call<'_>,
    responses: Option<&JsonObject>,
    state: Option<&JsonString>,
) -> Result<crate::facts::context::InputContext, Fault> {
    if tool.inner.completes {
        return Err(Fault::InvalidRequestState);
    }
    if tool.inner.state_mode == RequestStateMode::ApplicationProtected {
        return application_input(responses, state);
    }
    let method = Method::ToolsCall.name();
    let (name, arguments) = (call.name.as_str(), &call.arguments);
    open_input(endpoint, context, method, name, arguments, responses, state).await
}

/// How a call's handler stage ended.
enum Ended {
    /// The handler's (or an interceptor's) output.
    Output(Invocation),
    /// Arguments that fail the input schema, its budget or binding.
    InvalidArguments,
    /// No evaluation slot was free.
    Busy,
    /// A handler's error or panic, an interceptor's failure, or an output of the wrong kind.
    Failed,
}

/// Input validation (its outcome recorded for task creation), then the handler.
async fn validate_and_invoke(
    endpoint: &Endpoint,
    tool: &ToolRegistration,
    context: &RequestContext,
    arguments: &JsonObject,
    features: InvocationFeatures,
    check: Option<&ArgumentCheck>,
) -> Ended {
    let limits = &endpoint.inner.limits;
    let arguments_value = JsonValue::Object(arguments.clone());
    stage!(Validation);
    let checked = crate::facts::telemetry::stage_sync("validation", || {
        checked(tool, &arguments_value, limits)
    });
    if let Some(check) = check {
        check.record(checked);
    }
    match checked {
        Checked::Valid => {}
        Checked::Busy => {
            crate::wire::log::budget_reached(crate::wire::log::Budget::EvaluationSlots);
            return Ended::Busy;
        }
        Checked::Invalid => return Ended::InvalidArguments,
    }
    let JsonValue::Object(validated) = arguments_value else {
        return Ended::Failed;
    };
    stage!(Handler);
    let invocation = crate::facts::telemetry::stage(
        "handler",
        guarded(|| {
            tool.inner.invoker.invoke(
                context,
                validated,
                &features,
                &limits.bind,
                &endpoint.inner.failures,
            )
        }),
    )
    .await;
    match invocation {
        Some(Ok(invocation)) => Ended::Output(invocation),
        Some(Err(InvokeFailure::InvalidArguments)) => Ended::InvalidArguments,
        Some(Err(InvokeFailure::Handler)) | None => Ended::Failed,
    }
}

/// The endpoint's interceptors around input validation and the handler.
async fn intercepted(
    endpoint: &Endpoint,
    tool: &ToolRegistration,
    context: &RequestContext,
    arguments: &JsonObject,
    features: InvocationFeatures,
    check: Option<&ArgumentCheck>,
) -> Ended {
    let revision = context.protocol_version;
    let inner = Box::new(move |features| -> BoxFuture<'_, _> {
        Box::pin(async move {
            match validate_and_invoke(endpoint, tool, context, arguments, features, check).await {
                Ended::Output(invocation) => Ok(HandlerOutput::Tool(match invocation {
                    Invocation::Structured(value) => OperationResult::Complete(
                        CompleteResult::from_tool_structured_content(value),
                    ),
                    Invocation::Operation(result) => result,
                })),
                Ended::InvalidArguments if revision.arguments_error_is_protocol_error() => {
                    Err(HandlerFailure::of(FailureKind::InvalidParams))
                }
                Ended::InvalidArguments => {
                    crate::wire::log::refused_arguments();
                    Ok(HandlerOutput::Tool(OperationResult::Complete(
                        CompleteResult::from_tool_error_text(INVALID_ARGUMENTS_TEXT),
                    )))
                }
                Ended::Busy => Err(HandlerFailure::of(FailureKind::Busy)),
                Ended::Failed => Err(HandlerFailure::new()),
            }
        })
    });
    let chain = &endpoint.inner.interceptors;
    match run_chain(chain, context, arguments, features, inner).await {
        Ok(HandlerOutput::Tool(result)) => Ended::Output(Invocation::Operation(result)),
        Ok(_) => Ended::Failed,
        Err(failure) => match failure.kind {
            FailureKind::InvalidParams => Ended::InvalidArguments,
            FailureKind::Busy => Ended::Busy,
            FailureKind::Internal => Ended::Failed,
        },
    }
}

/// The operation limiter of a tool call: the tool's named limiter, else the endpoint's.
fn charge_tool(
    endpoint: &Endpoint,
    context: &RequestContext,
    named: Option<&str>,
) -> Result<(), Reply> {
    crate::policy::rules::charge_tool(&endpoint.inner.policy, context, named)
        .map_err(|refusal| refusal_reply(context, refusal))
}

/// The tool a call names on this revision, once its required client capabilities (all missing
/// ones reported together, the tasks extension included) and its mirrored `Mcp-Param-*` headers
/// (HTTP only) agree; with the endpoint's tasks when this call may create one.
fn select<'e>(
    endpoint: &Endpoint,
    catalog: &'e Catalog,
    transport: Transport<'_>,
    call: &Call<'_>,
    context: &RequestContext,
) -> Result<(&'e ToolRegistration, Option<Arc<Tasks>>), Reply> {
    let revision = context.protocol_version;
    let id = context.request_id.as_ref();
    let Some(tool) = catalog.tool(call.name, revision) else {
        return Err(fail(revision, id, Fault::UnknownTool, None));
    };
    crate::facts::telemetry::target(crate::facts::telemetry::Target::Tool(tool.shared_name()));
    crate::methods::require_scopes(endpoint, context, &tool.inner.required_scopes)?;
    let caps = &context.client_capabilities;
    // Tasks: offered by an endpoint with a store, on 2026-07-28 to a client declaring the
    // extension on this call, on 2025-11-25 to a call asking for one; a tool that requires
    // them refuses a call that cannot have one.
    let tasks = match &endpoint.inner.tasks {
        Some(tasks) if tool.inner.task_support != TaskSupport::Forbidden => {
            let offered = if revision.has_requested_tasks() {
                call.task
            } else {
                !is_legacy(revision) && caps.extension(TASKS_EXTENSION)
            };
            offered.then(|| tasks.clone())
        }
        _ => None,
    };
    // 2025-11-25's tool-level negotiation: a task for a tool that takes none, or none for one
    // that requires it, is -32601.
    // (`call.task` is read only where the capability is declared.)
    if revision.has_requested_tasks() && endpoint.inner.tasks.is_some() {
        let support = tool.inner.task_support;
        let wrong = if call.task {
            support == TaskSupport::Forbidden
        } else {
            support == TaskSupport::Required
        };
        if wrong {
            return Err(fail(revision, id, Fault::MethodNotFound, None));
        }
    }
    let tasks_missing = tool.inner.task_support == TaskSupport::Required && tasks.is_none();
    // The tool's own requirements, then those of the inputs every call may need.
    let mut required: Vec<ClientCapability> = Vec::new();
    for capability in tool
        .inner
        .required_capabilities
        .iter()
        .cloned()
        .chain(tool.required_input_capabilities())
    {
        if !caps.declares(&capability) && !required.contains(&capability) {
            required.push(capability);
        }
    }
    if tasks_missing || !required.is_empty() {
        let extension = ClientCapability::Extension(TASKS_EXTENSION.into());
        let missing = required.iter().chain(tasks_missing.then_some(&extension));
        return Err(missing_capabilities(revision, id, missing));
    }
    if let Some(headers) = transport.headers() {
        let mirrored = tool.inner.input.mirrored_headers();
        if !headers::mirrored_arguments_agree(headers, mirrored, &call.arguments) {
            return Err(fail(revision, id, Fault::HeaderMismatch, None));
        }
    }
    Ok((tool, tasks))
}

/// What task creation a call was offered: its serial (a handle must carry it back), the
/// arguments' check it shares with the handler's validation, and the creation itself when a
/// 2025-11-25 call asked for a task.
struct Created {
    serial: u64,
    check: Arc<ArgumentCheck>,
    /// Boxed: it lives across the handler's await, in every call's future.
    kept: Option<Box<crate::tasks::runner::TaskCreation>>,
}

/// The invocation features of a call: progress and logging where the transport can carry them,
/// the response stream and server-to-client requests inside a 2025 session, and task creation
/// where this call may create one (with the serial its handle must carry back).
fn features_for(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    tool: &ToolRegistration,
    context: &RequestContext,
    tasks: Option<Arc<Tasks>>,
    features: InvocationFeatures,
    call: &Call<'_>,
) -> (InvocationFeatures, Option<Created>) {
    let arguments = &call.arguments;
    let mut features = crate::client_request::transport_features(
        features,
        transport,
        context,
        endpoint.inner.logging,
        || Asks::Declared(tool.inner.input_declarations.clone()),
    );
    let mut created = None;
    if let Some(tasks) = tasks {
        // The call's own validation records its outcome here; a task created before it (by an
        // interceptor) validates the arguments itself.
        let (for_check, tool_for_check) = (endpoint.clone(), tool.clone());
        let value = JsonValue::Object(arguments.clone());
        let check =
            ArgumentCheck::new(move || checked(&tool_for_check, &value, &for_check.inner.limits));
        let creation = crate::tasks::runner::TaskCreation::new(
            tasks,
            endpoint.inner.limits.output,
            crate::tasks::runner::owner_of(&endpoint.inner.path, context),
            crate::tasks::runner::CreatingTool {
                name: tool.inner.name.clone(),
                declared: tool.inner.input_declarations.clone(),
                typed: tool.has_output(),
            },
            // Kept with the task only for the sanitizer, which sees them at `tasks/get`.
            endpoint
                .inner
                .sanitizer
                .is_some()
                .then(|| arguments.clone()),
            Arc::clone(&check),
        );
        created = Some(Created {
            serial: creation.serial(),
            check,
            // A 2025-11-25 call asking for a task: an inline answer is turned into one.
            kept: call.task.then(|| Box::new(creation.clone())),
        });
        features = features.with(creation);
    }
    (features, created)
}

/// The arguments against the tool's input schema (its evaluation budget included).
fn checked(
    tool: &ToolRegistration,
    arguments: &JsonValue,
    limits: &crate::registry::EndpointLimits,
) -> Checked {
    match tool.inner.input.validate_in(arguments, limits.gate()) {
        Ok(()) => {}
        Err(e) if e.kind() == ValidationErrorKind::Busy => return Checked::Busy,
        Err(_) => return Checked::Invalid,
    }
    match tool
        .inner
        .foreign_input
        .as_ref()
        .map(|f| f.check(arguments))
    {
        None | Some(ForeignCheck::Valid) => Checked::Valid,
        Some(ForeignCheck::Invalid) => Checked::Invalid,
        Some(ForeignCheck::Busy) => Checked::Busy,
    }
}

/// What the handler stage comes to: a completed result (sanitized, then a typed tool's output
/// validated and mirrored), an `input_required` result, the task this very call created, or a
/// fixed failure.
fn outcome(
    endpoint: &Endpoint,
    tool: &ToolRegistration,
    call: &Call<'_>,
    context: &RequestContext,
    task_serial: Option<u64>,
    ended: Ended,
) -> Reply {
    let limits = &endpoint.inner.limits;
    let revision = context.protocol_version;
    let id = context.request_id.as_ref();
    let typed = tool.has_output();
    let invocation = match ended {
        Ended::Output(invocation) => invocation,
        // A 2025-11-25 call asking for a task is refused before one exists (its answer must be
        // a task, and none is created for arguments that fail the schema).
        Ended::InvalidArguments if call.task && task_serial.is_some() => {
            return fail(revision, id, Fault::InvalidParams, None);
        }
        Ended::InvalidArguments => return invalid_arguments(endpoint, tool, call, context),
        Ended::Busy => return fail(revision, id, Fault::Busy, None),
        Ended::Failed => return fail(revision, id, Fault::Internal, None),
    };
    let result = match invocation {
        // A typed tool's output, straight from its handler.
        Invocation::Structured(value) if endpoint.inner.sanitizer.is_none() => {
            match structured(tool, value, limits) {
                Ok(result) => result,
                Err(fault) => return fail(revision, id, fault, None),
            }
        }
        Invocation::Structured(value) => {
            let result = CompleteResult::from_tool_structured_content(value);
            match sanitized(endpoint, tool, call, context, result)
                .map(|r| typed_output(tool, r, limits))
            {
                Some(Ok(result)) => result,
                Some(Err(fault)) => return fail(revision, id, fault, None),
                None => return fail(revision, id, Fault::Internal, None),
            }
        }
        Invocation::Operation(OperationResult::Complete(result)) => {
            let Some(result) = sanitized(endpoint, tool, call, context, result) else {
                return fail(revision, id, Fault::Internal, None);
            };
            if !typed {
                result
            } else {
                match typed_output(tool, result, limits) {
                    Ok(result) => result,
                    Err(fault) => return fail(revision, id, fault, None),
                }
            }
        }
        // A typed-complete tool always completes, and a tool asks only for the kinds of
        // input it declared.
        Invocation::Operation(OperationResult::InputRequired(required))
            if tool.inner.completes
                || required
                    .input_requests()
                    .any(|(_, r)| !tool.declares_input(r.kind())) =>
        {
            return fail(revision, id, Fault::Internal, None);
        }
        Invocation::Operation(OperationResult::InputRequired(required)) => {
            let binding = Binding {
                method: Method::ToolsCall,
                name: call.name,
                arguments: &call.arguments,
            };
            let mode = tool.inner.state_mode;
            stage!(InputRequired);
            return input_required(endpoint, context, &binding, mode, &required);
        }
        // Capabilities the handler found missing: refused as the registration's own would be,
        // but only those the caller did not declare.
        Invocation::Operation(OperationResult::MissingCapabilities(missing)) => {
            return missing.refusal(context);
        }
        Invocation::Operation(OperationResult::TaskCreated(created)) => {
            // Only a task this very call created: a handle kept from another call, or made
            // where tasks were not offered, is an application contract failure.
            if task_serial != Some(created.serial) {
                return fail(revision, id, Fault::Internal, None);
            }
            // (`TaskCreation::spawn` creates tasks for validated arguments only.)
            let rendered = if revision.has_requested_tasks() {
                crate::tasks::record::requested_created(&created.result)
            } else {
                created.result.to_builder()
            };
            return tree_reply(&limits.output, revision, id, rendered);
        }
    };
    if result.tool_output().is_error() {
        crate::facts::telemetry::tool_error();
    }
    stage!(Output);
    complete(&limits.output, revision, id, &result)
}

/// A completed result through the endpoint's sanitizer (unchanged without one): `None` when
/// it refused or panicked.
fn sanitized(
    endpoint: &Endpoint,
    tool: &ToolRegistration,
    call: &Call<'_>,
    context: &RequestContext,
    result: CompleteResult,
) -> Option<CompleteResult> {
    let sanitizer = endpoint.inner.sanitizer.as_ref();
    if sanitizer.is_some() {
        stage!(Sanitizing);
    }
    sanitize(
        sanitizer,
        context,
        &tool.inner.name,
        &call.arguments,
        result,
    )
}

/// Arguments that fail the schema, its budget or binding: the fixed `isError` result (through
/// the sanitizer, like any result), except up to 2025-06-18, which keep their JSON-RPC -32602.
fn invalid_arguments(
    endpoint: &Endpoint,
    tool: &ToolRegistration,
    call: &Call<'_>,
    context: &RequestContext,
) -> Reply {
    let revision = context.protocol_version;
    let id = context.request_id.as_ref();
    if revision.arguments_error_is_protocol_error() {
        return fail(revision, id, Fault::InvalidParams, None);
    }
    crate::wire::log::refused_arguments();
    let fixed = CompleteResult::from_tool_error_text(INVALID_ARGUMENTS_TEXT);
    let Some(result) = sanitized(endpoint, tool, call, context, fixed) else {
        return fail(revision, id, Fault::Internal, None);
    };
    complete(&endpoint.inner.limits.output, revision, id, &result)
}

/// A typed tool's completed result after interception or sanitizing. A tool error (`isError`:
/// an interceptor's refusal, the fixed invalid-arguments result) needs no structured content;
/// any other result must carry structured content that satisfies the derived output schema, and
/// is mirrored as text when the tool mirrors and the result carries no content of its own.
pub(crate) fn typed_output(
    tool: &ToolRegistration,
    result: CompleteResult,
    limits: &crate::registry::EndpointLimits,
) -> Result<CompleteResult, Fault> {
    stage!(Output);
    let output = result.tool_output();
    let value = match output.structured_content() {
        None if output.is_error() => return Ok(result),
        None => return Err(Fault::Internal),
        Some(value) => value,
    };
    if !output.content().is_empty() || output.is_error() {
        output_valid(tool, value, limits)?;
        return Ok(result);
    }
    let mirrored = structured(tool, value.clone(), limits)?;
    match result.meta() {
        None => Ok(mirrored),
        Some(meta) => mirrored
            .to_builder()
            .meta(meta.clone())
            .map(|b| b.build())
            .map_err(|_| Fault::Internal),
    }
}

/// A typed tool's output: validated against the derived output schema, then wrapped with its
/// optional text mirror.
fn structured(
    tool: &ToolRegistration,
    value: JsonValue,
    limits: &crate::registry::EndpointLimits,
) -> Result<CompleteResult, Fault> {
    stage!(Output);
    output_valid(tool, &value, limits)?;
    let mut output = ToolOutput::builder();
    if tool.inner.text_mirror {
        let text = tollgate_json::to_string(&value, &limits.output).map_err(|_| Fault::Internal)?;
        output = output.add_content(TextContent::new(text));
    }
    Ok(CompleteResult::with_tool_output(output.structured_content(value).build()).build())
}

/// A typed tool's output found no evaluation slot free: the budget event, and the busy
/// fault it is answered with.
#[cold]
fn evaluation_budget() -> Fault {
    crate::wire::log::budget_reached(crate::wire::log::Budget::EvaluationSlots);
    Fault::Busy
}

/// Structured content against the tool's output schema (derived, authored or foreign).
fn output_valid(
    tool: &ToolRegistration,
    value: &JsonValue,
    limits: &crate::registry::EndpointLimits,
) -> Result<(), Fault> {
    if let Some(schema) = &tool.inner.output {
        match schema.validate_in(value, limits.gate()) {
            Ok(()) => {}
            Err(e) if e.kind() == ValidationErrorKind::Busy => return Err(evaluation_budget()),
            Err(_) => return Err(Fault::Internal),
        }
    }
    match tool.inner.foreign_output.as_ref().map(|f| f.check(value)) {
        None | Some(ForeignCheck::Valid) => Ok(()),
        Some(ForeignCheck::Invalid) => Err(Fault::Internal),
        Some(ForeignCheck::Busy) => Err(evaluation_budget()),
    }
}
