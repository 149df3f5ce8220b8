//! Routing, the pipeline's last stage: the method offered on this revision by this endpoint,
//! then its one handler in `methods/` (one table and one handler per method for every
//! revision; what differs per revision is the handlers' projection, read from the context).
//!
//! Knows nothing of revisions' envelopes or sessions beyond the context and the session handed
//! on for resource subscriptions.

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::context::RequestContext;
use crate::methods;
use crate::model::origin::Transport;
use crate::registry::Endpoint;
use crate::session::Session;
use crate::version::ProtocolVersion;
use crate::wire::fault::Fault;
use crate::wire::method::Method;
use crate::wire::reply::{Reply, fail, result_reply_json};
use crate::wire::stage::stage;

/// Whether this endpoint offers `method` on `revision`: the method exists there, and its
/// capability is advertised (prompts, completions and resources where registered, tasks with a
/// store, skills where registered, resource subscriptions inside a 2025 session).
fn offered(endpoint: &Endpoint, method: Method, revision: ProtocolVersion, session: bool) -> bool {
    if !method.exists_on(revision) {
        return false;
    }
    match method {
        Method::PromptsList | Method::PromptsGet => endpoint.offers_prompts(revision),
        Method::Complete => endpoint.offers_completions(revision),
        Method::ResourcesList | Method::ResourcesTemplatesList | Method::ResourcesRead => {
            endpoint.offers_resources(revision)
        }
        // Updates reach a session on its standalone stream: without sessions there are none.
        Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
            endpoint.offers_resources(revision) && session
        }
        Method::TasksGet | Method::TasksUpdate | Method::TasksCancel | Method::TasksResult => {
            endpoint.inner.tasks.is_some()
        }
        Method::SkillsList | Method::SkillsGet | Method::ResourcesDirectoryRead => {
            endpoint.offers_skills(revision)
        }
        // The revision's gate answers these before dispatch.
        Method::Initialize | Method::LoggingSetLevel => false,
        // Offered wherever they exist. No catch-all: a new method must say where it is offered.
        Method::Discover
        | Method::Ping
        | Method::ToolsList
        | Method::ToolsCall
        | Method::SubscriptionsListen => true,
    }
}

/// Routes an admitted request to its method's handler: one table and one handler per method
/// for every revision (what differs per revision is the handlers' projection, read from the
/// context). A method the endpoint does not offer here is -32601.
///
/// Every request's future holds the largest of the handlers' futures it may await, and is
/// copied whole as it is handed to the connection, so handlers other than `tools/call` (the
/// hot one) are awaited boxed: one allocation for them instead of kilobytes more to copy for
/// every request. The request's context is borrowed from the stage that owns it (`stages`),
/// never moved down: each future it passed through would keep a place for it.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would hold its arguments twice in the request's future"
)]
pub(crate) fn dispatch(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    method: Method,
    params: &JsonObject,
    context: &mut RequestContext,
    session: Option<&Session>,
) -> impl Future<Output = Reply> {
    async move {
        stage!(Routing);
        let revision = context.protocol_version;
        let id = context.request_id.clone();
        let id = id.as_ref();
        if !offered(endpoint, method, revision, session.is_some()) {
            return fail(revision, id, Fault::MethodNotFound, None);
        }
        let inner = &endpoint.inner;
        match method {
            Method::Discover => methods::discover::discover(endpoint, revision, id),
            Method::Ping => result_reply_json(id, &JsonValue::Object(JsonObject::new()), revision),
            Method::ToolsList => methods::tools::list(endpoint, params, id, context),
            Method::ToolsCall => methods::tools::call(endpoint, transport, params, context).await,
            Method::PromptsList => methods::one_page(
                revision,
                params,
                id,
                &endpoint.catalog_for(&context.admission).prompt_pages,
            ),
            Method::PromptsGet => {
                Box::pin(methods::prompts::get(endpoint, transport, params, context)).await
            }
            Method::Complete => {
                Box::pin(methods::prompts::complete(endpoint, params, context)).await
            }
            Method::ResourcesList => methods::one_page(
                revision,
                params,
                id,
                &endpoint.catalog_for(&context.admission).resource_pages,
            ),
            Method::ResourcesTemplatesList => methods::one_page(
                revision,
                params,
                id,
                &endpoint.catalog_for(&context.admission).template_pages,
            ),
            Method::ResourcesRead => {
                Box::pin(methods::resources::read(
                    endpoint, transport, params, context,
                ))
                .await
            }
            Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
                methods::resources::subscription(endpoint, method, params, context, session)
            }
            Method::SkillsList => {
                methods::skills::list(endpoint, revision, params, id, &context.admission)
            }
            Method::SkillsGet => {
                methods::skills::get(endpoint, revision, params, id, &context.admission)
            }
            Method::ResourcesDirectoryRead => {
                methods::skills::read_directory(endpoint, revision, params, id, &context.admission)
            }
            Method::SubscriptionsListen => {
                Box::pin(crate::methods::listen::listen(
                    endpoint, transport, params, context,
                ))
                .await
            }
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel | Method::TasksResult => {
                let Some(tasks) = inner.tasks.as_deref() else {
                    return fail(revision, id, Fault::MethodNotFound, None);
                };
                let streams = session.map(|s| &s.streams);
                Box::pin(task_method(
                    endpoint, transport, tasks, method, params, context, streams,
                ))
                .await
            }
            Method::Initialize | Method::LoggingSetLevel => {
                fail(revision, id, Fault::MethodNotFound, None)
            }
        }
    }
}

/// A `tasks/*` method: 2025-11-25's shapes (`methods/requested_tasks.rs`) or the 2026-07-28
/// extension's (`methods/tasks.rs`).
async fn task_method(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    tasks: &crate::tasks::runner::Tasks,
    method: Method,
    params: &JsonObject,
    context: &RequestContext,
    session: Option<&std::sync::Arc<crate::stream::session::SessionStreams>>,
) -> Reply {
    use crate::methods::{requested_tasks, tasks as extension};
    let requested = context.protocol_version.has_requested_tasks();
    match method {
        Method::TasksGet if requested => {
            requested_tasks::get(endpoint, tasks, params, context, session).await
        }
        Method::TasksCancel if requested => {
            requested_tasks::cancel(endpoint, tasks, params, context).await
        }
        Method::TasksResult => {
            requested_tasks::result(endpoint, transport, tasks, params, context).await
        }
        Method::TasksGet => extension::get(endpoint, tasks, params, context).await,
        Method::TasksUpdate => extension::update(endpoint, tasks, params, context).await,
        _ => extension::cancel(endpoint, tasks, params, context).await,
    }
}
