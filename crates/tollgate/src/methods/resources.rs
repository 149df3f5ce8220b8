//! `resources/read` on every revision, and the 2025 session's `resources/subscribe` and
//! `resources/unsubscribe`; the catalogs are pre-rendered pages (`methods::one_page`).

use tollgate_json::{JsonObject, JsonValue};

use crate::facts::context::RequestContext;
use crate::methods::require_scopes;
use crate::model::origin::Transport;
use crate::model::resource::{ResourceRequest, Route, fallback};
use crate::registry::Endpoint;
use crate::session::Session;
use crate::state::request::{Binding, retry_params, run};
use crate::version::is_legacy;
use crate::wire::fault::Fault;
use crate::wire::method::Method;
use crate::wire::reply::{Reply, fail, result_reply_json, tree_reply};
use crate::wire::stage::stage;

/// `resources/read`: an exact resource, else the first matching template, else the first
/// fallback under whose prefix the URI falls (`EndpointBuilder::add_resource_fallback`); its handler (with
/// its transport's features, as a tool call's); the contents (never empty). An unknown URI is "Resource not found" in each revision's code, and
/// the URI is not echoed.
pub(crate) async fn read(
    endpoint: &Endpoint,
    transport: Transport<'_>,
    params: &JsonObject,
    context: &mut RequestContext,
) -> Reply {
    stage!(Lookup);
    let id = context.request_id.clone();
    let id = id.as_ref();
    let revision = context.protocol_version;
    let Some(JsonValue::String(uri)) = params.get("uri") else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    let retry = match retry_params(params, revision) {
        Ok(retry) => retry,
        Err(fault) => return fail(revision, id, fault, None),
    };
    let not_found = if is_legacy(revision) {
        Fault::ResourceNotFound2025
    } else {
        Fault::ResourceNotFound
    };
    let inner = &endpoint.inner;
    // The catalog this read runs on to its end (as its caller sees it).
    let catalog = endpoint.catalog_for(&context.admission);
    let (registration, request) = match catalog.route_resource(uri, revision) {
        Some(Route::Exact(r)) => (&r.inner, ResourceRequest::for_test(uri, [])),
        Some(Route::Template(t, variables)) => (&t.inner, ResourceRequest::routed(uri, variables)),
        // Unrouted: a fallback whose prefix starts the URI (never listed), else not found.
        None => match fallback::route(uri, revision, &inner.fallbacks) {
            Some(f) => (&f.inner, ResourceRequest::routed(uri, Vec::new())),
            None => return fail(revision, id, not_found, None),
        },
    };
    if let Err(reply) = require_scopes(endpoint, context, &registration.required_scopes) {
        return reply;
    }
    context.operation_name = Some(uri.clone());
    // Request state for a read is bound to its URI (it has no other arguments).
    let bound = JsonObject::new();
    let binding = Binding {
        method: Method::ResourcesRead,
        name: uri,
        arguments: &bound,
    };
    let handler = &*registration.handler;
    let output = match run(
        endpoint,
        transport,
        context,
        &binding,
        retry,
        handler,
        || Some(request),
    )
    .await
    {
        Ok(output) => output,
        Err(reply) => return reply,
    };
    if output.is_not_found() {
        return fail(revision, id, not_found, None);
    }
    let cache = registration.cache().unwrap_or(inner.cache);
    let Some(out) = output.render_result(revision, cache) else {
        return fail(revision, id, Fault::Internal, None);
    };
    tree_reply(&endpoint.inner.limits.output, revision, id, out)
}

/// `resources/subscribe` and `resources/unsubscribe`: the URI must name a resource served on
/// this revision (an exact one, or a template match: not a fallback, which is not listed), of at most 8,192 bytes; a session holds at
/// most 1,024, of at most 256 KiB together.
pub(crate) fn subscription(
    endpoint: &Endpoint,
    method: Method,
    params: &JsonObject,
    context: &RequestContext,
    session: Option<&Session>,
) -> Reply {
    stage!(Lookup);
    let revision = context.protocol_version;
    let id = context.request_id.as_ref();
    let Some(session) = session else {
        return fail(revision, id, Fault::MethodNotFound, None);
    };
    let Some(uri) = params.get("uri").and_then(JsonValue::as_str) else {
        return fail(revision, id, Fault::InvalidParams, None);
    };
    if uri.len() > crate::stream::MAX_SUBSCRIPTION_URI_BYTES {
        return fail(revision, id, Fault::InvalidParams, None);
    }
    let catalog = endpoint.catalog_for(&context.admission);
    let required = match catalog.route_resource(uri, revision) {
        None => return fail(revision, id, Fault::ResourceNotFound2025, None),
        Some(Route::Exact(r)) => &r.inner.required_scopes,
        Some(Route::Template(t, _)) => &t.inner.required_scopes,
    };
    if let Err(reply) = require_scopes(endpoint, context, required) {
        return reply;
    }
    if method == Method::ResourcesSubscribe {
        if !session.streams.subscribe(uri) {
            crate::wire::log::budget_reached(crate::wire::log::Budget::Subscriptions);
            return fail(revision, id, Fault::Busy, None);
        }
    } else {
        session.streams.unsubscribe(uri);
    }
    result_reply_json(id, &JsonValue::Object(JsonObject::new()), revision)
}
