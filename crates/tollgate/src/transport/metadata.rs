//! The OAuth protected-resource metadata routes (RFC 9728): which well-known paths a service
//! answers with which endpoint's document, and the answer itself.
//!
//! Owns the routes and the GET answer. Knows nothing of tokens or of the MCP pipeline: a
//! metadata request is never admitted (a client reads it before it has a token), parsed or
//! rate-limited; the service's Host, Origin and CORS checks still apply.

use std::sync::Arc;

use http::{Method, StatusCode};

use crate::policy::authorization::{METADATA_PREFIX, ProtectedResource};
use crate::registry::{Endpoint, NameMap};
use crate::wire::reply::Reply;

/// The methods a metadata route answers.
pub(crate) const ALLOW: &str = "GET, HEAD";

/// Well-known path → document.
pub(crate) type Routes = NameMap<ProtectedResource>;

/// The routes of a service's endpoints: `/.well-known/oauth-protected-resource` followed by
/// each protected endpoint's path, and the bare well-known path when exactly one endpoint is
/// protected. An endpoint's path is its resource identifier's path (its build refuses
/// otherwise), so the first route is exactly the metadata URL its challenges name.
pub(crate) fn routes<'a>(endpoints: impl Iterator<Item = &'a Endpoint>) -> Routes {
    let mut routes = Routes::default();
    let mut protected = Vec::new();
    for endpoint in endpoints {
        if let Some(resource) = &endpoint.inner.policy.protected {
            let path: Arc<str> = format!("{METADATA_PREFIX}{}", endpoint.inner.path).into();
            routes.insert(path, resource.clone());
            protected.push(resource.clone());
        }
    }
    if let [only] = protected.as_slice() {
        routes.insert(METADATA_PREFIX.into(), only.clone());
    }
    routes
}

/// The answer to a request on a metadata route: the document for `GET` (and `HEAD`), else
/// `Err(())` for 405.
pub(crate) fn answer(method: &Method, resource: &ProtectedResource) -> Result<Reply, ()> {
    if method != Method::GET && method != Method::HEAD {
        return Err(());
    }
    let mut reply = Reply::empty(StatusCode::OK);
    reply.body = Some(resource.metadata_document().to_vec());
    Ok(reply)
}
