//! MCP Apps views in a catalog: the rules views meet on their endpoint (served on a revision
//! that carries them, unique URIs that no resource holds, every view a tool names registered,
//! each read within the output limits) and the resources they are served as. Runs for the
//! endpoint's catalog, every live change and every per-principal view, as `compile` does.
//! Knows nothing of requests: which client is sent view metadata is decided by `tools/list`.

use std::collections::HashSet;

use tollgate_json::to_vec;

use crate::facts::error::{BuildError, BuildErrorKind};
use crate::model::app::AppView;
use crate::model::resource::{ResourceOutput, ResourceRegistration};
use crate::registry::catalog::Rules;
use crate::registry::compile::Registrations;
use crate::version::ProtocolVersions;

/// The endpoint's revisions that carry views (those with `_meta` on descriptors: 2025-06-18
/// on).
pub(crate) fn served_revisions(rules: &Rules) -> ProtocolVersions {
    rules
        .revisions
        .iter()
        .filter(|r| r.carries_titles_and_structure())
        .fold(ProtocolVersions::empty(), ProtocolVersions::with)
}

/// Checks the views of `registrations` and makes the resources they are served as, in
/// registration order.
///
/// # Errors
///
/// [`BuildErrorKind::InvalidAppView`] (views on an endpoint serving no revision that carries
/// them, or a read over the output limits), [`BuildErrorKind::DuplicateResource`] (two views,
/// or a view and a resource, at one URI), [`BuildErrorKind::UnknownAppView`] (a tool names a
/// view that is not registered).
pub(crate) fn index(
    registrations: &Registrations,
    rules: &Rules,
) -> Result<Vec<ResourceRegistration>, BuildError> {
    let views = &registrations.apps;
    let revisions = served_revisions(rules);
    if let Some(view) = views.first()
        && revisions.is_empty()
    {
        return Err(rules
            .error(BuildErrorKind::InvalidAppView)
            .resource(view.uri())
            .with_detail("views are served on 2025-06-18 and later: the endpoint serves none"));
    }
    let mut uris: HashSet<&str> = registrations.resources.iter().map(|r| r.uri()).collect();
    for view in views {
        if !uris.insert(view.uri()) {
            return Err(rules
                .error(BuildErrorKind::DuplicateResource)
                .resource(view.uri()));
        }
    }
    let named: HashSet<&str> = views.iter().map(AppView::uri).collect();
    for tool in &registrations.tools {
        if let Some(uri) = tool.app_view()
            && !named.contains(uri)
        {
            return Err(rules
                .error(BuildErrorKind::UnknownAppView)
                .tool_name(tool.name())
                .resource(uri));
        }
    }
    views
        .iter()
        .map(|view| {
            check_fits(view, rules, revisions)?;
            Ok(ResourceRegistration::served_view(view, revisions))
        })
        .collect()
}

/// A view's read result fits the output limits on every revision it is served on.
fn check_fits(
    view: &AppView,
    rules: &Rules,
    revisions: ProtocolVersions,
) -> Result<(), BuildError> {
    let output = ResourceOutput::of_view(view);
    for revision in revisions.iter() {
        let fits = output
            .render_result(revision, rules.cache)
            .is_some_and(|result| to_vec(&result.build().into(), &rules.output).is_ok());
        if !fits {
            return Err(rules
                .error(BuildErrorKind::InvalidAppView)
                .resource(view.uri())
                .with_detail("a view's read does not fit the output limits"));
        }
    }
    Ok(())
}

/// The views visible in a per-principal view: those the view function shows, and every view a
/// visible tool names (a tool seen with its view must be able to show it).
pub(crate) fn visible_views(
    views: &[AppView],
    shown: &[bool],
    tools: &[crate::model::tool::ToolRegistration],
) -> Vec<AppView> {
    let named: HashSet<&str> = tools.iter().filter_map(|t| t.app_view()).collect();
    views
        .iter()
        .zip(shown)
        .filter(|(view, shown)| **shown || named.contains(view.uri()))
        .map(|(view, _)| view.clone())
        .collect()
}

#[cfg(test)]
#[path = "apps_tests.rs"]
mod tests;
