//! Per-principal views: what one admitted identity sees of a catalog.
//!
//! Owns the view function an endpoint is built with
//! ([`EndpointBuilder::view`](crate::endpoint::EndpointBuilder::view)), the catalogs rendered
//! for views narrower than the whole (`Views::narrow`, kept in the bounded cache each published
//! catalog carries, `view_cache`: dropped with it when a live change is published), and what a
//! listener's view changed between two announcements (`Watch`).
//!
//! A view is the set of registrations its identity sees, not the identity: two principals who
//! see the same registrations share one rendering. A narrowed catalog is compiled exactly as the
//! endpoint's own (`compile`), from the visible registrations alone, so an unseen registration
//! is absent from every list and every lookup, and its call, get, read or completion answers
//! as an unknown name does. Its cursors are bound to the view. An identity that sees everything
//! reads the endpoint's own pre-rendered catalog.
//!
//! Knows nothing of requests, transports or how identities are admitted.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use crate::facts::identity::AdmissionIdentity;
use crate::model::app::AppView;
use crate::model::prompt::PromptRegistration;
use crate::model::resource::{ResourceRegistration, ResourceTemplateRegistration};
use crate::model::skill::SkillRegistration;
use crate::model::tool::ToolRegistration;
use crate::registry::catalog::Rules;
use crate::registry::compile::{Registrations, compile_view};
use crate::registry::live::{Live, differences};
use crate::registry::snapshot::Catalog;
use crate::registry::view_cache::Key;
use crate::stream::ListView;

/// How many distinct views' catalogs one published catalog keeps rendered, unless
/// [`EndpointBuilder::views_cached`](crate::endpoint::EndpointBuilder::views_cached) says
/// otherwise. Past it, the view used least recently is dropped (and rendered again when next
/// used).
///
/// ```
/// assert_eq!(tollgate::endpoint::DEFAULT_VIEWS_CACHED, 64);
/// ```
pub const DEFAULT_VIEWS_CACHED: usize = 64;

/// The most [`EndpointBuilder::views_cached`](crate::endpoint::EndpointBuilder::views_cached)
/// allows: each cached view holds a rendered catalog.
///
/// ```
/// assert_eq!(tollgate::endpoint::MAX_VIEWS_CACHED, 4096);
/// ```
pub const MAX_VIEWS_CACHED: usize = 4096;

/// One registration of an endpoint's catalog, as a view function is asked about it.
///
/// # Examples
///
/// ```
/// use tollgate::endpoint::Registered;
///
/// // A view function: only principals with the `admin` scope see tools named `admin.*`.
/// let view = |who: &tollgate::policy::AdmissionIdentity, item: Registered<'_>| match item {
///     Registered::Tool(tool) => !tool.name().starts_with("admin.") || who.has_scope("admin"),
///     _ => true,
/// };
/// # let _ = view;
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Registered<'a> {
    /// A tool.
    Tool(&'a ToolRegistration),
    /// A prompt.
    Prompt(&'a PromptRegistration),
    /// A resource at an exact URI.
    Resource(&'a ResourceRegistration),
    /// A URI-template resource.
    ResourceTemplate(&'a ResourceTemplateRegistration),
    /// A skill (2026-07-28).
    Skill(&'a SkillRegistration),
    /// An MCP Apps view. A view that a tool the principal sees names is visible whatever the
    /// view function answers for it (the tool's `_meta.ui.resourceUri` must stay readable).
    AppView(&'a AppView),
}

impl Registered<'_> {
    /// What names it in its list: a tool's, prompt's or skill's name, a resource's URI, a
    /// template's URI template.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate::endpoint::Registered;
    ///
    /// fn public(item: Registered<'_>) -> bool {
    ///     !item.key().starts_with("internal.")
    /// }
    /// # let _ = public;
    /// ```
    pub fn key(&self) -> &str {
        match self {
            Self::Tool(t) => t.name(),
            Self::Prompt(p) => p.name(),
            Self::Resource(r) => r.uri(),
            Self::ResourceTemplate(t) => t.uri_template(),
            Self::Skill(s) => s.name(),
            Self::AppView(v) => v.uri(),
        }
    }
}

/// A view function: whether an identity sees a registration.
pub(crate) type ViewFn = dyn Fn(&AdmissionIdentity, Registered<'_>) -> bool + Send + Sync;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Each guarded value is changed whole under the lock: a poisoned one is still consistent.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An endpoint's views: the function, the bound of each catalog's cache, and the rules its
/// narrowed catalogs are compiled under (the endpoint's own).
pub(crate) struct Views {
    see: Arc<ViewFn>,
    bound: usize,
    rules: Rules,
}

impl Views {
    pub(crate) fn new(see: Arc<ViewFn>, bound: usize, rules: Rules) -> Self {
        Self { see, bound, rules }
    }

    /// The catalog `who` sees of `base`: `None` when it sees all of it (the caller then reads
    /// `base` itself), else its view's catalog, from `base`'s cache or rendered now and cached.
    pub(crate) fn narrow(&self, base: &Catalog, who: &AdmissionIdentity) -> Option<Arc<Catalog>> {
        let key = self.key(base, who)?;
        if let Some(hit) = base.views.get(&key) {
            return Some(hit);
        }
        // Rendered outside the lock: two requests racing on a new view may both render it, and
        // the first one cached is kept.
        let rendered = Arc::new(self.render(base, &key));
        Some(base.views.insert(key, rendered, self.bound))
    }

    /// The view of `who` on `base`, or `None` when every registration is visible.
    fn key(&self, base: &Catalog, who: &AdmissionIdentity) -> Option<Key> {
        let see = &*self.see;
        let items = base
            .tools
            .iter()
            .map(|t| see(who, Registered::Tool(t)))
            .chain(base.prompts.iter().map(|p| see(who, Registered::Prompt(p))))
            .chain(
                base.resources
                    .iter()
                    .map(|r| see(who, Registered::Resource(r))),
            )
            .chain(
                base.templates
                    .iter()
                    .map(|t| see(who, Registered::ResourceTemplate(t))),
            )
            .chain(
                base.skill_registrations
                    .iter()
                    .map(|s| see(who, Registered::Skill(s))),
            )
            .chain(
                base.app_views
                    .iter()
                    .map(|v| see(who, Registered::AppView(v))),
            );
        let mut key: Vec<u64> = Vec::new();
        let mut all = true;
        for (i, visible) in items.enumerate() {
            if i % 64 == 0 {
                key.push(0);
            }
            if visible {
                if let Some(word) = key.last_mut() {
                    *word |= 1 << (i % 64);
                }
            } else {
                all = false;
            }
        }
        (!all).then(|| key.into_boxed_slice())
    }

    /// `base` narrowed to the registrations `key` sets, compiled as the endpoint's own catalog
    /// is, its cursors bound to the view. A narrowed catalog that does not compile (a subset of
    /// one that did: not expected) withholds everything: its lists answer an internal error.
    fn render(&self, base: &Catalog, key: &[u64]) -> Catalog {
        let mut at = 0;
        let mut pick = |n: usize| -> Vec<bool> {
            let flags = (at..at + n)
                .map(|i| key.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0))
                .collect();
            at += n;
            flags
        };
        let tools = pick(base.tools.len());
        let prompts = pick(base.prompts.len());
        let resources = pick(base.resources.len());
        let templates = pick(base.templates.len());
        let skills = pick(base.skill_registrations.len());
        let apps = pick(base.app_views.len());
        let tools = subset(&base.tools, &tools);
        let apps = crate::registry::apps::visible_views(&base.app_views, &apps, &tools);
        let registrations = Registrations {
            tools,
            prompts: subset(&base.prompts, &prompts),
            resources: subset(&base.resources, &resources),
            templates: subset(&base.templates, &templates),
            skills: subset(&base.skill_registrations, &skills),
            apps,
        };
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        // Never 0: that is the endpoint's own catalog.
        let salt = hasher.finish() | 1;
        let skills_served = base.skills.is_some();
        compile_view(registrations, &self.rules, salt, skills_served)
            .unwrap_or_else(|_| Catalog::withheld())
    }
}

/// The items of `list` whose flag in `visible` is set.
fn subset<T: Clone>(list: &[T], visible: &[bool]) -> Vec<T> {
    list.iter()
        .zip(visible)
        .filter(|(_, seen)| **seen)
        .map(|(item, _)| item.clone())
        .collect()
}

/// One listener's view of a live catalog (a 2025 session's streams, a stdio session, a
/// `subscriptions/listen` stream): its identity, recorded when it started, and its view's
/// catalog as it was last announced to it.
pub(crate) struct Watch {
    identity: AdmissionIdentity,
    views: Arc<Views>,
    live: Weak<Live>,
    seen: Mutex<Arc<Catalog>>,
}

impl Watch {
    /// A watch of `identity`'s view of `live`'s catalog, from the one published now.
    pub(crate) fn new(identity: AdmissionIdentity, views: Arc<Views>, live: &Arc<Live>) -> Self {
        let seen = view_of(&views, &live.current(), &identity);
        Self {
            identity,
            views,
            live: Arc::downgrade(live),
            seen: Mutex::new(seen),
        }
    }
}

/// `who`'s catalog of `now`: its view's, or `now` itself when it sees everything.
fn view_of(views: &Views, now: &Arc<Catalog>, who: &AdmissionIdentity) -> Arc<Catalog> {
    views.narrow(now, who).unwrap_or_else(|| Arc::clone(now))
}

impl ListView for Watch {
    /// The lists of this view that differ, as rendered, between the catalog last announced to
    /// it and the one published now (whatever the announcement said changed in the whole: a
    /// change outside the view is no change of it).
    fn changed(&self, _announced: u16) -> u16 {
        let Some(live) = self.live.upgrade() else {
            return 0;
        };
        let now = view_of(&self.views, &live.current(), &self.identity);
        let mut seen = lock(&self.seen);
        let lists = differences(&seen, &now);
        *seen = now;
        lists
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn skill(name: &str) -> SkillRegistration {
        let md = format!("---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n");
        SkillRegistration::builder(name)
            .file("SKILL.md", md)
            .build()
            .unwrap()
    }

    fn tool(name: &str) -> ToolRegistration {
        async fn answer(
            _: &crate::facts::context::RequestContext,
            _: crate::model::tool::ToolArguments<tollgate_json::JsonObject>,
            _: &crate::model::features::InvocationFeatures,
        ) -> Result<crate::model::result::OperationResult, std::convert::Infallible> {
            Ok(crate::model::result::CompleteResult::from_tool_text("ok").into())
        }
        ToolRegistration::with_name(name, [V26])
            .json_object_arguments()
            .handler(answer)
            .build()
            .unwrap()
    }

    const V26: crate::version::ProtocolVersion = crate::version::ProtocolVersion::V2026_07_28;

    /// Anonymous callers do not see `secret*`; principals see everything.
    fn viewed() -> crate::registry::builder::EndpointBuilder {
        crate::registry::Endpoint::with_path(
            "/mcp",
            [V26],
            crate::registry::Implementation::new("views", "1"),
        )
        .view(|who, item| who.principal_name().is_some() || !item.key().starts_with("secret"))
    }

    fn page_text(page: Option<&Vec<u8>>) -> String {
        String::from_utf8_lossy(page.map_or(&[][..], |p| &p[..])).into_owned()
    }

    #[test]
    fn an_unseen_skill_is_absent_from_the_views_lists_and_lookups() {
        let endpoint = viewed()
            .add_skill(skill("pdf"))
            .add_skill(skill("secret"))
            .build()
            .unwrap();
        let secret = skill("secret");
        let anonymous = AdmissionIdentity::anonymous();
        let view = endpoint.catalog_for(&anonymous);
        let skills = view.skills.as_ref().unwrap();
        assert!(!skills.get.contains_key(secret.uri()));
        assert!(!skills.files.contains_key(secret.uri()));
        assert!(view.route_resource(secret.uri(), V26).is_none());
        assert!(!page_text(skills.pages.first()).contains("secret"));
        assert!(page_text(skills.pages.first()).contains("pdf"));
        let slot = crate::registry::revision_slot(V26);
        assert!(!page_text(view.resource_pages[slot].as_ref()).contains("secret"));
        // Who sees everything reads the endpoint's own catalog, rendering nothing.
        let principal = AdmissionIdentity::principal("p");
        let full = endpoint.catalog_for(&principal);
        assert!(full.skills.as_ref().unwrap().get.contains_key(secret.uri()));
        assert_eq!(endpoint.rendered_views(), 1);
        // A view seeing no skill still answers an (empty) skills list.
        let none = viewed().add_skill(skill("secret")).build().unwrap();
        let view = none.catalog_for(&anonymous);
        let skills = view.skills.as_ref().unwrap();
        assert!(skills.get.is_empty());
        assert!(page_text(skills.pages.first()).contains(r#""skills":[]"#));
    }

    #[test]
    fn a_live_change_drops_the_views_rendered_of_the_catalog_before_it() {
        // Outside a runtime: the change is announced at once, and nobody listens.
        let endpoint = viewed()
            .add_tool(tool("open"))
            .add_tool(tool("secret.reset"))
            .live_catalogs()
            .build()
            .unwrap();
        let anonymous = AdmissionIdentity::anonymous();
        let names = |endpoint: &crate::registry::Endpoint| -> Vec<String> {
            let view = endpoint.catalog_for(&anonymous);
            view.tools.iter().map(|t| t.name().to_owned()).collect()
        };
        assert_eq!(names(&endpoint), ["open"]);
        assert_eq!(endpoint.rendered_views(), 1);
        let catalogs = endpoint.catalogs().unwrap();
        catalogs.add_tool(tool("open2")).unwrap();
        assert_eq!(endpoint.rendered_views(), 0, "dropped with the catalog");
        assert_eq!(names(&endpoint), ["open", "open2"]);
        assert_eq!(endpoint.rendered_views(), 1);
    }
}
