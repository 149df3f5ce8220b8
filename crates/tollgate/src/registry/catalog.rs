//! Catalog rendering: every page an endpoint answers from, rendered once when it is built, per
//! served revision. The `server/discover` (2026-07-28) or `initialize` (2025) result with the
//! capabilities the registrations imply, the `tools/list` pages and their cursors, and the
//! one-page prompt, resource and template catalogs. Knows nothing of requests: the methods splice
//! the request's id into these bytes.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use tollgate_json::{JsonArray, JsonObject, JsonObjectBuilder, OutputLimits, to_vec};

use crate::model::skill::SKILLS_EXTENSION;
use crate::model::tool::ToolRegistration;
use crate::registry::{EndpointInner, Implementation, cursor_text, revision_slot};
use crate::tasks::model::TASKS_EXTENSION;
use crate::version::{ProtocolVersion, ProtocolVersions, is_legacy};

/// What rendering needs beyond the endpoint's state.
pub(crate) struct Rendering {
    pub(crate) implementation: Implementation,
    pub(crate) instructions: Option<Arc<str>>,
    pub(crate) page_size: usize,
}

/// The catalog's fingerprint: path, page size and every tool descriptor on every revision, so
/// a cursor from another endpoint or another build of the catalog is refused. `Err` names a tool
/// whose descriptor cannot be rendered.
pub(crate) fn fingerprint(
    path: &str,
    page_size: usize,
    revisions: ProtocolVersions,
    tools: &[ToolRegistration],
) -> Result<u64, String> {
    let mut hasher = DefaultHasher::new();
    path.hash(&mut hasher);
    page_size.hash(&mut hasher);
    for revision in revisions.iter() {
        for tool in tools.iter().filter(|t| t.revisions().contains(revision)) {
            let descriptor = to_vec(&tool.descriptor(revision), &OutputLimits::default())
                .map_err(|_| tool.name().to_owned())?;
            descriptor.hash(&mut hasher);
        }
    }
    Ok(hasher.finish())
}

/// Renders every page for every served revision into `inner`; `Err` when a page does not fit
/// the output limits.
pub(crate) fn render(inner: &mut EndpointInner, rendering: &Rendering) -> Result<(), ()> {
    for revision in inner.revisions.iter() {
        let slot = revision_slot(revision);
        inner.discover[slot] = Some(discover(inner, rendering, revision)?);
        inner.tool_pages[slot] = tool_pages(inner, rendering.page_size, revision)?;
        let prompts: JsonArray = inner
            .prompts
            .iter()
            .filter(|p| p.revisions().contains(revision))
            .map(|p| p.descriptor(revision))
            .collect();
        inner.prompt_pages[slot] = Some(page(inner, revision, "prompts", prompts)?);
        let mut resources: JsonArray = inner
            .resources
            .iter()
            .filter(|r| r.revisions().contains(revision))
            .map(|r| r.descriptor(revision))
            .collect();
        // Each skill's SKILL.md is listed after the registered resources (2026-07-28).
        if let Some(skills) = inner.skills.as_ref().filter(|_| !is_legacy(revision)) {
            resources = resources
                .as_slice()
                .iter()
                .chain(&skills.listed)
                .cloned()
                .collect();
        }
        inner.resource_pages[slot] = Some(page(inner, revision, "resources", resources)?);
        let templates: JsonArray = inner
            .templates
            .iter()
            .filter(|t| t.revisions().contains(revision))
            .map(|t| t.descriptor(revision))
            .collect();
        inner.template_pages[slot] = Some(page(inner, revision, "resourceTemplates", templates)?);
    }
    Ok(())
}

/// One page of a catalog: its items under `key`, with the result type and caching hints on
/// 2026-07-28.
fn page(
    inner: &EndpointInner,
    revision: ProtocolVersion,
    key: &str,
    items: JsonArray,
) -> Result<Vec<u8>, ()> {
    let mut page = JsonObject::builder();
    if !is_legacy(revision) {
        page.push("resultType", "complete");
    }
    page.push(key, items);
    if !is_legacy(revision) {
        inner.cache.push_into(&mut page);
    }
    to_vec(&page.build().into(), &inner.limits.output).map_err(|_| ())
}

/// The `tools/list` pages of a revision: `page_size` tools each (one empty page when there are
/// none), each but the last with the cursor of the next.
fn tool_pages(
    inner: &EndpointInner,
    page_size: usize,
    revision: ProtocolVersion,
) -> Result<Vec<Vec<u8>>, ()> {
    let legacy = is_legacy(revision);
    let listed: Vec<&ToolRegistration> = inner
        .tools
        .iter()
        .filter(|t| t.revisions().contains(revision))
        .collect();
    let chunks: Vec<&[&ToolRegistration]> = if listed.is_empty() {
        vec![&[][..]]
    } else {
        listed.chunks(page_size).collect()
    };
    let pages = chunks.len();
    let mut rendered = Vec::with_capacity(pages);
    for (index, chunk) in chunks.into_iter().enumerate() {
        let tools: JsonArray = chunk.iter().map(|t| t.descriptor(revision)).collect();
        let mut page = JsonObject::builder();
        if !legacy {
            page.push("resultType", "complete");
        }
        page.push("tools", tools);
        if index + 1 < pages {
            page.push("nextCursor", cursor_text(inner.fingerprint, index + 1));
        }
        if !legacy {
            inner.cache.push_into(&mut page);
        }
        rendered.push(to_vec(&page.build().into(), &inner.limits.output).map_err(|_| ())?);
    }
    Ok(rendered)
}

/// The `server/discover` result (2026-07-28) or the `initialize` result (2025 revisions).
fn discover(
    inner: &EndpointInner,
    rendering: &Rendering,
    revision: ProtocolVersion,
) -> Result<Vec<u8>, ()> {
    let server_info = rendering.implementation.render(revision);
    let mut result = JsonObject::builder();
    if is_legacy(revision) {
        result.push("protocolVersion", revision.as_str());
        result.push("capabilities", capabilities(inner, revision));
        result.push("serverInfo", server_info);
        if let Some(text) = &rendering.instructions {
            result.push("instructions", &**text);
        }
    } else {
        result.push("resultType", "complete");
        result.push("supportedVersions", inner.supported_json.clone());
        result.push("capabilities", capabilities(inner, revision));
        if let Some(text) = &rendering.instructions {
            result.push("instructions", &**text);
        }
        result.push(
            "_meta",
            JsonObject::builder()
                .insert("io.modelcontextprotocol/serverInfo", server_info)
                .build(),
        );
        inner.cache.push_into(&mut result);
    }
    to_vec(&result.build().into(), &inner.limits.output).map_err(|_| ())
}

/// The capabilities the registrations imply on a revision. Catalogs are immutable, so the 2025
/// revisions' `listChanged` flags are false; resource updates travel on a 2025 session's
/// standalone stream (no sessions, no `subscribe`) and on `subscriptions/listen` on 2026-07-28.
fn capabilities(inner: &EndpointInner, revision: ProtocolVersion) -> JsonObject {
    let legacy = is_legacy(revision);
    let mut capabilities = JsonObject::builder();
    if inner.logging && (!legacy || inner.sessions.is_some()) {
        capabilities.push("logging", JsonObject::new());
    }
    if inner.tools.iter().any(|t| t.revisions().contains(revision)) {
        capabilities.push("tools", list_changed(legacy));
    }
    let skills_here = !legacy && inner.skills.is_some();
    let resources_here = skills_here
        || inner
            .resources
            .iter()
            .any(|r| r.revisions().contains(revision))
        || inner
            .templates
            .iter()
            .any(|t| t.revisions().contains(revision));
    if resources_here {
        let mut resources = JsonObject::builder();
        if legacy {
            resources.push("listChanged", false);
        }
        resources.push("subscribe", !legacy || inner.sessions.is_some());
        capabilities.push("resources", resources.build());
    }
    let prompts_here = || {
        inner
            .prompts
            .iter()
            .filter(move |p| p.revisions().contains(revision))
    };
    if prompts_here().any(|p| p.completes()) {
        capabilities.push("completions", JsonObject::new());
    }
    let mut extensions = JsonObject::builder();
    if !legacy && inner.tasks.is_some() {
        extensions.push(TASKS_EXTENSION, JsonObject::new());
    }
    if skills_here {
        // Every skill is served file by file, so every directory can be read.
        let settings = JsonObject::builder().insert("directoryRead", true);
        extensions.push(SKILLS_EXTENSION, settings.build());
    }
    if !extensions.is_empty() {
        capabilities.push("extensions", extensions.build());
    }
    if prompts_here().next().is_some() {
        capabilities.push("prompts", list_changed(legacy));
    }
    capabilities.build()
}

/// A capability object, with `listChanged: false` on the 2025 revisions.
fn list_changed(legacy: bool) -> JsonObject {
    let mut capability: JsonObjectBuilder = JsonObject::builder();
    if legacy {
        capability.push("listChanged", false);
    }
    capability.build()
}
