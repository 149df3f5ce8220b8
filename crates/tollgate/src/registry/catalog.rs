//! Catalog rendering: every page an endpoint answers from, rendered once when it is built, per
//! served revision. The `server/discover` (2026-07-28) or `initialize` (2025) result with the
//! capabilities the registrations imply, the `tools/list` pages and their cursors, and the
//! one-page prompt, resource and template catalogs. A live endpoint renders each new catalog the
//! same way. Knows nothing of requests: the methods splice the request's id into these bytes.

use std::hash::{DefaultHasher, Hash, Hasher};

use std::collections::HashSet;
use std::sync::Arc;

use tollgate_json::{JsonArray, JsonObject, JsonObjectBuilder, JsonValue, OutputLimits, to_vec};

use crate::facts::error::{BuildError, BuildErrorKind};
use crate::model::app::APPS_EXTENSION;
use crate::model::cache::CachePolicy;

use crate::model::skill::SKILLS_EXTENSION;
use crate::model::tool::ToolRegistration;
use crate::registry::snapshot::Catalog;
use crate::registry::{Implementation, cursor_text, revision_slot};
use crate::tasks::model::TASKS_EXTENSION;
use crate::version::{ProtocolVersion, ProtocolVersions, is_legacy};

/// What the endpoint fixes for every catalog it ever serves: the rules registrations are held
/// to and what rendering needs beyond them.
#[derive(Clone)]
pub(crate) struct Rules {
    pub(crate) path: Arc<str>,
    pub(crate) revisions: ProtocolVersions,
    pub(crate) page_size: usize,
    pub(crate) cache: CachePolicy,
    pub(crate) output: OutputLimits,
    /// The names of the registered rate limiters.
    pub(crate) limiters: HashSet<Arc<str>>,
    /// Whether a task store is configured (tools may support tasks).
    pub(crate) task_store: bool,
    /// Whether the endpoint is a protected resource (operations may require scopes).
    pub(crate) protected: bool,
    pub(crate) implementation: Implementation,
    pub(crate) instructions: Option<Arc<str>>,
    /// `supported` for the discovery result, pre-rendered.
    pub(crate) supported_json: JsonValue,
    /// Whether the `logging` capability is on.
    pub(crate) logging: bool,
    /// Whether the 2025 revisions keep sessions here.
    pub(crate) sessions: bool,
    /// Whether the tasks extension is served (a store, and 2026-07-28).
    pub(crate) tasks: bool,
    /// Whether the catalogs may change while serving (`listChanged` is then advertised).
    pub(crate) live: bool,
    /// The revisions a read fallback serves: there `resources/read` answers, so the
    /// `resources` capability is declared even when nothing is listed.
    pub(crate) fallbacks: ProtocolVersions,
}

impl Rules {
    /// A build error naming this endpoint's path and revisions.
    pub(crate) fn error(&self, kind: BuildErrorKind) -> BuildError {
        BuildError::new(kind)
            .at_path(&self.path)
            .with_revisions(self.revisions)
    }
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
            // With its MCP Apps metadata: a change of a tool's view changes the fingerprint.
            let descriptor = to_vec(
                &tool.descriptor_for(revision, true),
                &OutputLimits::default(),
            )
            .map_err(|_| tool.name().to_owned())?;
            descriptor.hash(&mut hasher);
        }
    }
    Ok(hasher.finish())
}

/// Renders every page for every served revision into `inner`; `Err` when a page does not fit
/// the output limits.
pub(crate) fn render(inner: &mut Catalog, rules: &Rules) -> Result<(), ()> {
    for revision in rules.revisions.iter() {
        let slot = revision_slot(revision);
        inner.discover[slot] = Some(discover(inner, rules, revision)?);
        inner.tool_pages[slot] = tool_pages(inner, rules, revision, false)?;
        inner.app_tool_pages[slot] = if inner
            .tools
            .iter()
            .any(|t| t.revisions().contains(revision) && t.has_app_meta(revision))
        {
            tool_pages(inner, rules, revision, true)?
        } else {
            Vec::new()
        };
        let prompts: JsonArray = inner
            .prompts
            .iter()
            .filter(|p| p.revisions().contains(revision))
            .map(|p| p.descriptor(revision))
            .collect();
        inner.prompt_pages[slot] = Some(page(rules, revision, "prompts", prompts)?);
        // The MCP Apps views are listed after the registered resources.
        let mut resources: JsonArray = inner
            .resources
            .iter()
            .chain(&inner.app_files)
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
        inner.resource_pages[slot] = Some(page(rules, revision, "resources", resources)?);
        let templates: JsonArray = inner
            .templates
            .iter()
            .filter(|t| t.revisions().contains(revision))
            .map(|t| t.descriptor(revision))
            .collect();
        inner.template_pages[slot] = Some(page(rules, revision, "resourceTemplates", templates)?);
    }
    Ok(())
}

/// One page of a catalog: its items under `key`, with the result type and caching hints on
/// 2026-07-28.
fn page(
    rules: &Rules,
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
        rules.cache.push_into(&mut page);
    }
    to_vec(&page.build().into(), &rules.output).map_err(|_| ())
}

/// The `tools/list` pages of a revision: `page_size` tools each (one empty page when there are
/// none), each but the last with the cursor of the next; with `apps`, each tool's MCP Apps
/// metadata (for a client that declared the extension).
fn tool_pages(
    inner: &Catalog,
    rules: &Rules,
    revision: ProtocolVersion,
    apps: bool,
) -> Result<Vec<Vec<u8>>, ()> {
    let page_size = rules.page_size;
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
        let tools: JsonArray = chunk
            .iter()
            .map(|t| t.descriptor_for(revision, apps))
            .collect();
        let mut page = JsonObject::builder();
        if !legacy {
            page.push("resultType", "complete");
        }
        page.push("tools", tools);
        if index + 1 < pages {
            page.push("nextCursor", cursor_text(inner.fingerprint, index + 1));
        }
        if !legacy {
            rules.cache.push_into(&mut page);
        }
        rendered.push(to_vec(&page.build().into(), &rules.output).map_err(|_| ())?);
    }
    Ok(rendered)
}

/// The `server/discover` result (2026-07-28) or the `initialize` result (2025 revisions).
fn discover(inner: &Catalog, rules: &Rules, revision: ProtocolVersion) -> Result<Vec<u8>, ()> {
    let rendering = rules;
    let server_info = rendering.implementation.render(revision);
    let mut result = JsonObject::builder();
    if is_legacy(revision) {
        result.push("protocolVersion", revision.as_str());
        result.push("capabilities", capabilities(inner, rules, revision));
        result.push("serverInfo", server_info);
        if let Some(text) = &rendering.instructions {
            result.push("instructions", &**text);
        }
    } else {
        result.push("resultType", "complete");
        result.push("supportedVersions", rules.supported_json.clone());
        result.push("capabilities", capabilities(inner, rules, revision));
        if let Some(text) = &rendering.instructions {
            result.push("instructions", &**text);
        }
        result.push(
            "_meta",
            JsonObject::builder()
                .insert("io.modelcontextprotocol/serverInfo", server_info)
                .build(),
        );
        rules.cache.push_into(&mut result);
    }
    to_vec(&result.build().into(), &rules.output).map_err(|_| ())
}

/// The capabilities the registrations imply on a revision. A fixed catalog's 2025 `listChanged`
/// flags are false (and absent on 2026-07-28); a live endpoint declares tools, prompts and
/// resources whatever its catalog holds now, with `listChanged: true` where it can notify (on
/// 2025 only with sessions: without one there is no stream to notify on). Resource updates
/// travel on a 2025 session's standalone stream (no sessions, no `subscribe`) and on
/// `subscriptions/listen` on 2026-07-28.
fn capabilities(inner: &Catalog, rules: &Rules, revision: ProtocolVersion) -> JsonObject {
    let legacy = is_legacy(revision);
    let live = rules.live;
    let notifies = live && (!legacy || rules.sessions);
    let mut capabilities = JsonObject::builder();
    if rules.logging && (!legacy || rules.sessions) {
        capabilities.push("logging", JsonObject::new());
    }
    if live || inner.tools.iter().any(|t| t.revisions().contains(revision)) {
        capabilities.push("tools", list_changed(legacy, notifies));
    }
    let skills_here = !legacy && inner.skills.is_some();
    if live || inner.offers_resources(revision) || rules.fallbacks.contains(revision) {
        let mut resources = JsonObject::builder();
        if legacy || notifies {
            resources.push("listChanged", notifies);
        }
        resources.push("subscribe", !legacy || rules.sessions);
        capabilities.push("resources", resources.build());
    }
    // 2024-11-05 has `completion/complete` but no `completions` capability.
    if inner.offers_completions(revision) && revision.carries_annotations_and_audio() {
        capabilities.push("completions", JsonObject::new());
    }
    // 2025-11-25's experimental tasks: task-augmented tool calls, `tasks/get`,
    // `tasks/result` and `tasks/cancel` (no `tasks/list`); the rule is
    // `Endpoint::declares_requested_tasks`'s.
    if rules.tasks && revision.has_requested_tasks() && (live || inner.has_requested_tasks()) {
        let call = JsonObject::builder().insert("call", JsonObject::new());
        let requests = JsonObject::builder().insert("tools", call.build());
        let tasks = JsonObject::builder()
            .insert("cancel", JsonObject::new())
            .insert("requests", requests.build());
        capabilities.push("tasks", tasks.build());
    }
    let mut extensions = JsonObject::builder();
    if !legacy && rules.tasks {
        extensions.push(TASKS_EXTENSION, JsonObject::new());
    }
    if inner
        .app_files
        .iter()
        .any(|v| v.revisions().contains(revision))
    {
        extensions.push(APPS_EXTENSION, JsonObject::new());
    }
    if skills_here {
        // Every skill is served file by file, so every directory can be read.
        let settings = JsonObject::builder().insert("directoryRead", true);
        extensions.push(SKILLS_EXTENSION, settings.build());
    }
    if !extensions.is_empty() {
        capabilities.push("extensions", extensions.build());
    }
    if live || inner.offers_prompts(revision) {
        capabilities.push("prompts", list_changed(legacy, notifies));
    }
    capabilities.build()
}

/// A capability object: `listChanged: true` where changes are notified, `false` on the 2025
/// revisions otherwise, absent on 2026-07-28 otherwise.
fn list_changed(legacy: bool, notifies: bool) -> JsonObject {
    let mut capability: JsonObjectBuilder = JsonObject::builder();
    if legacy || notifies {
        capability.push("listChanged", notifies);
    }
    capability.build()
}
