//! Compiling registrations into a catalog: the construction rules every tool, prompt, resource,
//! template, skill and MCP Apps view (`apps`) must meet on its endpoint (within the endpoint's revisions, unique by name,
//! named limiters registered, a task store where tools support tasks, scopes only on a protected
//! resource, the skills' own rules), then the catalog rendered once (`catalog`). The builder runs
//! it once; a live endpoint's `Catalogs` handle runs it again for every change, so a change is
//! held to exactly the builder's checks. Knows nothing of requests or of how a change is made.

use std::collections::HashSet;

use crate::facts::error::{BuildError, BuildErrorKind};
use crate::model::app::AppView;
use crate::model::prompt::PromptRegistration;
use crate::model::resource::template::MAX_TEMPLATES_PER_ENDPOINT;
use crate::model::resource::{ResourceRegistration, ResourceTemplateRegistration};
use crate::model::skill::SkillRegistration;
use crate::model::tool::ToolRegistration;
use crate::model::tool::options::TaskSupport;
use crate::registry::catalog::{self, Rules};
use crate::registry::snapshot::Catalog;
use crate::registry::{NameMap, apps, skills};
use crate::version::ProtocolVersion;

/// What a catalog is made of, in registration order.
#[derive(Clone, Default)]
pub(crate) struct Registrations {
    pub(crate) tools: Vec<ToolRegistration>,
    pub(crate) prompts: Vec<PromptRegistration>,
    pub(crate) resources: Vec<ResourceRegistration>,
    pub(crate) templates: Vec<ResourceTemplateRegistration>,
    pub(crate) skills: Vec<SkillRegistration>,
    pub(crate) apps: Vec<AppView>,
}

/// Checks `registrations` against `rules` and renders them: the catalog, or the first rule
/// broken (nothing is kept of a refused catalog).
///
/// # Errors
///
/// What [`EndpointBuilder::build`](crate::endpoint::EndpointBuilder::build) documents for
/// registrations.
pub(crate) fn compile(registrations: Registrations, rules: &Rules) -> Result<Catalog, BuildError> {
    compile_view(registrations, rules, 0, false)
}

/// [`compile`] for a per-principal view (`view`): `salt` (0 for the endpoint's own catalog)
/// binds the lists' cursors to the view, and `skills_served` renders an empty skills list when
/// the endpoint serves skills but none is visible.
///
/// # Errors
///
/// As [`compile`].
pub(crate) fn compile_view(
    registrations: Registrations,
    rules: &Rules,
    salt: u64,
    skills_served: bool,
) -> Result<Catalog, BuildError> {
    let by_name = index_tools(&registrations, rules)?;
    let prompt_by_name = index_prompts(&registrations, rules)?;
    check_resources(&registrations, rules)?;
    check_scopes(&registrations, rules)?;
    let skills = index_skills(&registrations, rules, salt, skills_served)?;
    let app_files = apps::index(&registrations, rules)?;
    let fingerprint = salt
        ^ catalog::fingerprint(
            &rules.path,
            rules.page_size,
            rules.revisions,
            &registrations.tools,
        )
        .map_err(|tool| {
            rules
                .error(BuildErrorKind::InvalidConfiguration)
                .tool_name(&tool)
        })?;
    let mut catalog = Catalog {
        tools: registrations.tools,
        by_name,
        prompts: registrations.prompts,
        prompt_by_name,
        resources: registrations.resources,
        templates: registrations.templates,
        skill_registrations: registrations.skills,
        skills,
        app_views: registrations.apps,
        app_files,
        resource_pages: Default::default(),
        template_pages: Default::default(),
        prompt_pages: Default::default(),
        discover: Default::default(),
        tool_pages: Default::default(),
        app_tool_pages: Default::default(),
        fingerprint,
        views: Default::default(),
    };
    catalog::render(&mut catalog, rules)
        .map_err(|()| rules.error(BuildErrorKind::InvalidConfiguration))?;
    Ok(catalog)
}

/// Tools: within the endpoint's revisions, naming registered limiters, with a task store
/// when they support tasks, and unique by name.
fn index_tools(registrations: &Registrations, rules: &Rules) -> Result<NameMap<usize>, BuildError> {
    let tools = &registrations.tools;
    let mut by_name = NameMap::with_capacity_and_hasher(tools.len(), Default::default());
    for (i, tool) in tools.iter().enumerate() {
        // A tool on every revision it can be represented on is served on those the endpoint
        // serves (at least one); any other names its revisions exactly.
        let outside = if tool.inner.every {
            tool.revisions()
                .iter()
                .all(|r| !rules.revisions.contains(r))
        } else {
            !tool.revisions().is_subset_of(rules.revisions)
        };
        if outside {
            return Err(BuildError::new(BuildErrorKind::RevisionOutsideEndpoint)
                .tool_name(tool.name())
                .at_path(&rules.path)
                .with_revisions(tool.revisions()));
        }
        if let Some(kind) = tool.legacy_refusal() {
            return Err(BuildError::new(kind)
                .tool_name(tool.name())
                .at_path(&rules.path)
                .with_revisions(tool.revisions()));
        }
        if let Some(name) = &tool.inner.rate_limiter
            && !rules.limiters.contains(name)
        {
            let kind = BuildErrorKind::UnknownRateLimiter;
            return Err(rules.error(kind).tool_name(tool.name()));
        }
        if tool.inner.task_support != TaskSupport::Forbidden && !rules.task_store {
            let kind = BuildErrorKind::TasksNotConfigured;
            return Err(rules.error(kind).tool_name(tool.name()));
        }
        if by_name.insert(tool.inner.name.clone(), i).is_some() {
            let kind = BuildErrorKind::DuplicateToolName;
            return Err(rules.error(kind).tool_name(tool.name()));
        }
    }
    Ok(by_name)
}

/// Prompts: within the endpoint's revisions and unique by name.
fn index_prompts(
    registrations: &Registrations,
    rules: &Rules,
) -> Result<NameMap<usize>, BuildError> {
    let prompts = &registrations.prompts;
    let mut prompt_by_name = NameMap::with_capacity_and_hasher(prompts.len(), Default::default());
    for (i, prompt) in prompts.iter().enumerate() {
        if !prompt.revisions().is_subset_of(rules.revisions) {
            return Err(BuildError::new(BuildErrorKind::RevisionOutsideEndpoint)
                .prompt_name(prompt.name())
                .at_path(&rules.path)
                .with_revisions(prompt.revisions()));
        }
        if prompt_by_name
            .insert(prompt.inner.name.clone(), i)
            .is_some()
        {
            let kind = BuildErrorKind::DuplicatePromptName;
            return Err(rules.error(kind).prompt_name(prompt.name()));
        }
    }
    Ok(prompt_by_name)
}

/// Resources and templates: within the endpoint's revisions, unique, and few enough
/// templates.
fn check_resources(registrations: &Registrations, rules: &Rules) -> Result<(), BuildError> {
    let (resources, templates) = (&registrations.resources, &registrations.templates);
    for resource in resources {
        if !resource.revisions().is_subset_of(rules.revisions) {
            return Err(BuildError::new(BuildErrorKind::RevisionOutsideEndpoint)
                .resource(resource.uri())
                .at_path(&rules.path)
                .with_revisions(resource.revisions()));
        }
    }
    for template in templates {
        if !template.revisions().is_subset_of(rules.revisions) {
            return Err(BuildError::new(BuildErrorKind::RevisionOutsideEndpoint)
                .resource(template.uri_template())
                .at_path(&rules.path)
                .with_revisions(template.revisions()));
        }
    }
    let mut uris = HashSet::with_capacity(resources.len());
    if let Some(dup) = resources.iter().find(|r| !uris.insert(r.uri())) {
        let kind = BuildErrorKind::DuplicateResource;
        return Err(rules.error(kind).resource(dup.uri()));
    }
    let mut sources = HashSet::with_capacity(templates.len());
    if let Some(dup) = templates.iter().find(|t| !sources.insert(t.uri_template())) {
        let kind = BuildErrorKind::DuplicateResource;
        return Err(rules.error(kind).resource(dup.uri_template()));
    }
    if templates.len() > MAX_TEMPLATES_PER_ENDPOINT {
        return Err(rules.error(BuildErrorKind::TooManyTemplates));
    }
    Ok(())
}

/// Operations requiring scopes need a protected resource to challenge for them.
fn check_scopes(registrations: &Registrations, rules: &Rules) -> Result<(), BuildError> {
    if rules.protected {
        return Ok(());
    }
    let fail = || {
        rules
            .error(BuildErrorKind::InvalidAuthorization)
            .with_detail("an operation requires scopes but the endpoint is no protected resource")
    };
    let r = registrations;
    if let Some(tool) = r.tools.iter().find(|t| !t.inner.required_scopes.is_empty()) {
        return Err(fail().tool_name(tool.name()));
    }
    if let Some(prompt) = r
        .prompts
        .iter()
        .find(|p| !p.inner.required_scopes.is_empty())
    {
        return Err(fail().prompt_name(prompt.name()));
    }
    if let Some(resource) = r
        .resources
        .iter()
        .find(|r| !r.inner.required_scopes.is_empty())
    {
        return Err(fail().resource(resource.uri()));
    }
    if let Some(template) = r
        .templates
        .iter()
        .find(|t| !t.inner.required_scopes.is_empty())
    {
        return Err(fail().resource(template.uri_template()));
    }
    Ok(())
}

/// The skills, indexed and rendered: 2026-07-28 only, no two overlapping, no file at a
/// registered resource's URI.
fn index_skills(
    registrations: &Registrations,
    rules: &Rules,
    salt: u64,
    served: bool,
) -> Result<Option<skills::Skills>, BuildError> {
    if !registrations.skills.is_empty() && !rules.revisions.contains(ProtocolVersion::V2026_07_28) {
        return Err(rules
            .error(BuildErrorKind::InvalidSkill)
            .with_detail("skills are served on 2026-07-28: the endpoint must serve it"));
    }
    let setting = skills::Setting {
        cache: rules.cache,
        output: &rules.output,
        page_size: rules.page_size,
        path: &rules.path,
        resources: &registrations.resources,
        salt,
        keep_empty: served,
    };
    skills::index(&registrations.skills, &setting)
}
