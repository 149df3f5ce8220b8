//! One catalog as requests see it: the registrations, their lookups by name, and every page
//! rendered from them (`Catalog`), immutable once made; and the handle a request holds on it
//! from its start to its end (`Snapshot`): a borrow of the endpoint's own catalog when it is
//! fixed (no count to keep), or the live catalog loaded once (an `Arc`, so a change published
//! meanwhile does not touch it). Knows nothing of how a catalog is checked, rendered or changed.

use crate::model::app::AppView;
use crate::model::prompt::PromptRegistration;
use crate::model::resource::{ResourceRegistration, ResourceTemplateRegistration, Route};
use crate::model::skill::SkillRegistration;
use crate::model::tool::ToolRegistration;
use crate::registry::view_cache::Rendered;
use crate::registry::{NameMap, REVISIONS, skills};
use crate::version::ProtocolVersion;

/// The registrations of one catalog and everything rendered from them.
pub(crate) struct Catalog {
    pub(crate) tools: Vec<ToolRegistration>,
    pub(crate) by_name: NameMap<usize>,
    pub(crate) prompts: Vec<PromptRegistration>,
    pub(crate) prompt_by_name: NameMap<usize>,
    pub(crate) resources: Vec<ResourceRegistration>,
    pub(crate) templates: Vec<ResourceTemplateRegistration>,
    /// The skills as registered (a change starts from them).
    pub(crate) skill_registrations: Vec<SkillRegistration>,
    /// The skills extension's answers and files (2026-07-28), when skills are registered.
    pub(crate) skills: Option<skills::Skills>,
    /// The MCP Apps views as registered (a change starts from them).
    pub(crate) app_views: Vec<AppView>,
    /// The views served as resources, in registration order (`apps::index`).
    pub(crate) app_files: Vec<ResourceRegistration>,
    /// Per served revision: the one-page `resources/list` and `resources/templates/list`
    /// results.
    pub(crate) resource_pages: [Option<Vec<u8>>; REVISIONS],
    pub(crate) template_pages: [Option<Vec<u8>>; REVISIONS],
    /// Per served revision: the one-page `prompts/list` result (a present cursor is refused).
    pub(crate) prompt_pages: [Option<Vec<u8>>; REVISIONS],
    /// Per served revision (index by `revision_slot`): the `server/discover` result (2026-07-28)
    /// or the `initialize` result (2025 revisions), then the tools/list result pages.
    pub(crate) discover: [Option<Vec<u8>>; REVISIONS],
    pub(crate) tool_pages: [Vec<Vec<u8>>; REVISIONS],
    /// Per served revision: the `tools/list` pages for a client that declared MCP Apps (each
    /// tool's `_meta.ui`), when a tool listed there carries that metadata (else empty: every
    /// client reads `tool_pages`). Same pages and cursors as `tool_pages`.
    pub(crate) app_tool_pages: [Vec<Vec<u8>>; REVISIONS],
    /// Binds `tools/list` cursors to this catalog: a cursor of another is refused.
    pub(crate) fingerprint: u64,
    /// The per-principal views rendered of this catalog (`view`), dropped with it.
    pub(crate) views: Rendered<Catalog>,
}

impl Catalog {
    /// Whether a tool here takes 2025-11-25's experimental tasks (then that revision's
    /// `initialize` declares the `tasks` capability).
    pub(crate) fn has_requested_tasks(&self) -> bool {
        self.tools.iter().any(|t| {
            t.revisions()
                .contains(crate::version::ProtocolVersion::V2025_11_25)
                && t.task_support() != crate::model::tool::options::TaskSupport::Forbidden
        })
    }

    /// A catalog holding nothing and no page (its lists answer an internal error): what a view
    /// is given when its catalog cannot be rendered.
    pub(crate) fn withheld() -> Self {
        Self {
            tools: Vec::new(),
            by_name: NameMap::default(),
            prompts: Vec::new(),
            prompt_by_name: NameMap::default(),
            resources: Vec::new(),
            templates: Vec::new(),
            skill_registrations: Vec::new(),
            skills: None,
            app_views: Vec::new(),
            app_files: Vec::new(),
            resource_pages: Default::default(),
            template_pages: Default::default(),
            prompt_pages: Default::default(),
            discover: Default::default(),
            tool_pages: Default::default(),
            app_tool_pages: Default::default(),
            fingerprint: 0,
            views: Rendered::default(),
        }
    }

    /// The tool `name` on `revision`.
    pub(crate) fn tool(&self, name: &str, revision: ProtocolVersion) -> Option<&ToolRegistration> {
        let tool = self.tools.get(*self.by_name.get(name)?)?;
        tool.revisions().contains(revision).then_some(tool)
    }

    /// The prompt `name` on `revision`.
    pub(crate) fn prompt(
        &self,
        name: &str,
        revision: ProtocolVersion,
    ) -> Option<&PromptRegistration> {
        let prompt = self.prompts.get(*self.prompt_by_name.get(name)?)?;
        prompt.revisions().contains(revision).then_some(prompt)
    }

    /// Whether `revision` offers prompts (the `prompts` capability).
    pub(crate) fn offers_prompts(&self, revision: ProtocolVersion) -> bool {
        self.prompts
            .iter()
            .any(|p| p.revisions().contains(revision))
    }

    /// Whether `revision` offers skills (the skills extension: 2026-07-28, with skills).
    pub(crate) fn offers_skills(&self, revision: ProtocolVersion) -> bool {
        self.skills.is_some() && revision == ProtocolVersion::V2026_07_28
    }

    /// Whether `revision` offers resources (the `resources` capability).
    pub(crate) fn offers_resources(&self, revision: ProtocolVersion) -> bool {
        self.offers_skills(revision)
            || self
                .app_files
                .iter()
                .any(|r| r.revisions().contains(revision))
            || self
                .resources
                .iter()
                .any(|r| r.revisions().contains(revision))
            || self
                .templates
                .iter()
                .any(|t| t.revisions().contains(revision))
    }

    /// Whether `revision` offers completions (the `completions` capability).
    pub(crate) fn offers_completions(&self, revision: ProtocolVersion) -> bool {
        self.prompts
            .iter()
            .any(|p| p.completes() && p.revisions().contains(revision))
            || self
                .templates
                .iter()
                .any(|t| t.completes() && t.revisions().contains(revision))
    }

    /// The template registered as `uri_template` (its source, exactly) on `revision`.
    pub(crate) fn template(
        &self,
        uri_template: &str,
        revision: ProtocolVersion,
    ) -> Option<&ResourceTemplateRegistration> {
        self.templates
            .iter()
            .find(|t| t.uri_template() == uri_template && t.revisions().contains(revision))
    }

    /// Routes a read: a skill's file (2026-07-28), else an MCP Apps view, else an exact
    /// resource, else a template.
    pub(crate) fn route_resource(&self, uri: &str, revision: ProtocolVersion) -> Option<Route<'_>> {
        if let Some(file) = self.skills.as_ref().and_then(|s| s.files.get(uri))
            && file.revisions().contains(revision)
        {
            return Some(Route::Exact(file));
        }
        if let Some(view) = self
            .app_files
            .iter()
            .find(|v| v.uri() == uri && v.revisions().contains(revision))
        {
            return Some(Route::Exact(view));
        }
        crate::model::resource::route(uri, revision, &self.resources, &self.templates)
    }
}

/// The catalog one request runs on, from its start to its end.
pub(crate) enum Snapshot<'e> {
    /// The endpoint's fixed catalog, borrowed.
    Fixed(&'e Catalog),
    /// The live catalog as it was when the request loaded it, or the caller's view of the
    /// catalog (either one's).
    Live(std::sync::Arc<Catalog>),
}

impl std::ops::Deref for Snapshot<'_> {
    type Target = Catalog;

    #[inline]
    fn deref(&self) -> &Catalog {
        match self {
            Self::Fixed(catalog) => catalog,
            Self::Live(catalog) => catalog,
        }
    }
}
