//! Live catalogs: the [`Catalogs`] handle an endpoint built with
//! [`live_catalogs`](crate::endpoint::EndpointBuilder::live_catalogs) gives, the
//! [`CatalogChange`]s it applies, and the announcement of what changed.
//!
//! A change starts from the catalog published last (changes are applied one at a time), is
//! compiled by `compile` exactly as the builder compiles registrations, and is refused whole on
//! the first broken rule (nothing is published). An accepted change publishes the new catalog,
//! rendered, with one atomic swap (`arc-swap`): a request loads the catalog once when it starts
//! and runs to its end on it, taking no lock. Announcements are coalesced: the first change
//! after a quiet period starts a [`LIST_CHANGED_WINDOW`], and at its end the lists that differ
//! from the last announced catalog (per revision, compared as rendered) are announced once, to
//! 2025 sessions' standalone streams and to `subscriptions/listen` streams; a list that ended
//! where it started is not announced. Knows nothing of requests, transports or framing.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;

use crate::facts::error::{BuildError, BuildErrorKind};
use crate::model::app::AppView;
use crate::model::prompt::PromptRegistration;
use crate::model::resource::{ResourceRegistration, ResourceTemplateRegistration};
use crate::model::skill::SkillRegistration;
use crate::model::subscription::{Event, ListKind, Publisher, list_bit};
use crate::model::tool::ToolRegistration;
use crate::registry::catalog::Rules;
use crate::registry::compile::{Registrations, compile};
use crate::registry::snapshot::Catalog;
use crate::registry::{IMPLEMENTED, revision_slot};
use crate::session::SessionTable;
use crate::version::is_legacy;

/// How long announcements of a burst of changes are held and merged: the first change after a
/// quiet period is announced this long after it, together with every change made meanwhile
/// (so a burst gives each stream one `list_changed` per list that changed, not one per change).
///
/// ```
/// assert_eq!(tollgate::endpoint::LIST_CHANGED_WINDOW.as_millis(), 50);
/// ```
pub const LIST_CHANGED_WINDOW: Duration = Duration::from_millis(50);

/// One step of a change.
enum Step {
    Tool(Edit<ToolRegistration>),
    Prompt(Edit<PromptRegistration>),
    Resource(Edit<ResourceRegistration>),
    Template(Edit<ResourceTemplateRegistration>),
    Skill(Edit<SkillRegistration>),
    AppView(Edit<AppView>),
}

/// Add (a new name), replace (in place, by its name) or remove (by name).
enum Edit<T> {
    Add(T),
    Replace(T),
    Remove(Arc<str>),
}

/// What names a registration in its list: a tool's or prompt's name, a resource's URI, a
/// template's URI template, a skill's name (or its root URI: two skills may share a name).
trait Named {
    fn key(&self) -> &str;

    /// Whether `key` names this registration.
    fn is(&self, key: &str) -> bool {
        self.key() == key
    }

    /// Whether `other` replaces this registration.
    fn same(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Named for ToolRegistration {
    fn key(&self) -> &str {
        self.name()
    }
}

impl Named for PromptRegistration {
    fn key(&self) -> &str {
        self.name()
    }
}

impl Named for ResourceRegistration {
    fn key(&self) -> &str {
        self.uri()
    }
}

impl Named for ResourceTemplateRegistration {
    fn key(&self) -> &str {
        self.uri_template()
    }
}

impl Named for SkillRegistration {
    fn key(&self) -> &str {
        self.name()
    }

    /// A root URI (`skill://...`, never a name) names the skill at that root; a name, the
    /// first skill of that name.
    fn is(&self, key: &str) -> bool {
        if key.starts_with("skill://") {
            self.root_uri() == key
        } else {
            self.name() == key
        }
    }

    /// The skill at the same root; or, when none is there, the first of the same name.
    fn same(&self, other: &Self) -> bool {
        self.root_uri() == other.root_uri()
    }
}

impl Named for AppView {
    fn key(&self) -> &str {
        self.uri()
    }
}

impl<T: Named> Edit<T> {
    /// Applies the edit to `list`; `false` when a replaced or removed name is not there (an
    /// added one that is already there is the compiler's to refuse, as at build).
    fn apply(self, list: &mut Vec<T>) -> bool {
        match self {
            Self::Add(item) => list.push(item),
            Self::Replace(item) => {
                let at = (list.iter().position(|r| r.same(&item)))
                    .or_else(|| list.iter().position(|r| r.key() == item.key()));
                match at.and_then(|at| list.get_mut(at)) {
                    Some(slot) => *slot = item,
                    None => return false,
                }
            }
            Self::Remove(key) => match list.iter().position(|r| r.is(&key)) {
                Some(at) => {
                    list.remove(at);
                }
                None => return false,
            },
        }
        true
    }
}

/// A change to a live catalog: steps applied in order, accepted or refused as a whole by
/// [`Catalogs::apply`]. Adding a name that is there is refused as the builder refuses a
/// duplicate; replacing or removing one that is not there is refused with
/// [`BuildErrorKind::UnknownRegistration`]. A replaced registration keeps its place in its list.
///
/// # Examples
///
/// ```
/// use tollgate::endpoint::CatalogChange;
///
/// let change = CatalogChange::new()
///     .remove_tool("old_search")
///     .remove_prompt("old_summary");
/// # let _ = change;
/// ```
#[derive(Default)]
#[must_use = "apply the change with Catalogs::apply"]
pub struct CatalogChange {
    steps: Vec<Step>,
}

impl std::fmt::Debug for CatalogChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatalogChange")
            .field("steps", &self.steps.len())
            .finish()
    }
}

impl CatalogChange {
    /// An empty change.
    pub fn new() -> Self {
        Self::default()
    }

    fn step(mut self, step: Step) -> Self {
        self.steps.push(step);
        self
    }

    /// Adds a tool (last in the list).
    pub fn add_tool(self, tool: ToolRegistration) -> Self {
        self.step(Step::Tool(Edit::Add(tool)))
    }

    /// Replaces the tool of the same name, in its place.
    pub fn replace_tool(self, tool: ToolRegistration) -> Self {
        self.step(Step::Tool(Edit::Replace(tool)))
    }

    /// Removes the tool `name`.
    pub fn remove_tool(self, name: impl Into<Arc<str>>) -> Self {
        self.step(Step::Tool(Edit::Remove(name.into())))
    }

    /// Adds a prompt (last in the list).
    pub fn add_prompt(self, prompt: PromptRegistration) -> Self {
        self.step(Step::Prompt(Edit::Add(prompt)))
    }

    /// Replaces the prompt of the same name, in its place.
    pub fn replace_prompt(self, prompt: PromptRegistration) -> Self {
        self.step(Step::Prompt(Edit::Replace(prompt)))
    }

    /// Removes the prompt `name`.
    pub fn remove_prompt(self, name: impl Into<Arc<str>>) -> Self {
        self.step(Step::Prompt(Edit::Remove(name.into())))
    }

    /// Adds a resource at an exact URI (last in the list).
    pub fn add_resource(self, resource: ResourceRegistration) -> Self {
        self.step(Step::Resource(Edit::Add(resource)))
    }

    /// Replaces the resource at the same URI, in its place.
    pub fn replace_resource(self, resource: ResourceRegistration) -> Self {
        self.step(Step::Resource(Edit::Replace(resource)))
    }

    /// Removes the resource at `uri`.
    pub fn remove_resource(self, uri: impl Into<Arc<str>>) -> Self {
        self.step(Step::Resource(Edit::Remove(uri.into())))
    }

    /// Adds a URI-template resource (last in the list, so routed after the others).
    pub fn add_resource_template(self, template: ResourceTemplateRegistration) -> Self {
        self.step(Step::Template(Edit::Add(template)))
    }

    /// Replaces the template with the same URI template, in its place.
    pub fn replace_resource_template(self, template: ResourceTemplateRegistration) -> Self {
        self.step(Step::Template(Edit::Replace(template)))
    }

    /// Removes the template whose URI template is `uri_template`.
    pub fn remove_resource_template(self, uri_template: impl Into<Arc<str>>) -> Self {
        self.step(Step::Template(Edit::Remove(uri_template.into())))
    }

    /// Adds a skill (2026-07-28; announced as a change of the resources list).
    pub fn add_skill(self, skill: SkillRegistration) -> Self {
        self.step(Step::Skill(Edit::Add(skill)))
    }

    /// Replaces the skill at the same root URI, in its place; when there is none, the first
    /// skill of the same name.
    pub fn replace_skill(self, skill: SkillRegistration) -> Self {
        self.step(Step::Skill(Edit::Replace(skill)))
    }

    /// Removes the skill `name`, or the skill whose root URI (`skill://<skill-path>`) it is:
    /// name the root where two skills share a name (their paths differ), since a name removes
    /// the first of that name.
    pub fn remove_skill(self, name: impl Into<Arc<str>>) -> Self {
        self.step(Step::Skill(Edit::Remove(name.into())))
    }

    /// Adds an MCP Apps view (listed after the resources; announced as a change of the
    /// resources list). Add it in the same change as the tool that names it: a tool naming a
    /// view the catalog does not hold is refused ([`BuildErrorKind::UnknownAppView`]).
    pub fn add_app_view(self, view: AppView) -> Self {
        self.step(Step::AppView(Edit::Add(view)))
    }

    /// Replaces the MCP Apps view at the same URI, in its place.
    pub fn replace_app_view(self, view: AppView) -> Self {
        self.step(Step::AppView(Edit::Replace(view)))
    }

    /// Removes the MCP Apps view at `uri` (remove or change the tools naming it in the same
    /// change).
    pub fn remove_app_view(self, uri: impl Into<Arc<str>>) -> Self {
        self.step(Step::AppView(Edit::Remove(uri.into())))
    }
}

/// A live endpoint's catalog: the one published, the rules every change is held to, and the
/// announcements.
pub(crate) struct Live {
    current: ArcSwap<Catalog>,
    rules: Rules,
    /// Changes are applied one at a time; the count of those accepted.
    writer: Mutex<u64>,
    announcer: Arc<Announcer>,
    /// The named change events and their bus, set once at build: `events.rs`'s, opaque here
    /// (the live catalog knows nothing of events).
    pub(super) events: std::sync::OnceLock<Arc<dyn std::any::Any + Send + Sync>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Each guarded value is replaced whole: a poisoned one is still consistent.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Live {
    pub(crate) fn new(
        catalog: Catalog,
        rules: Rules,
        publisher: Publisher,
        sessions: Option<Arc<SessionTable>>,
        viewed: bool,
    ) -> Self {
        let catalog = Arc::new(catalog);
        Self {
            announcer: Arc::new(Announcer {
                state: Mutex::new(Announced {
                    catalog: Arc::clone(&catalog),
                    scheduled: false,
                }),
                publisher,
                sessions,
                viewed,
            }),
            current: ArcSwap::new(catalog),
            rules,
            writer: Mutex::new(0),
            events: std::sync::OnceLock::new(),
        }
    }

    /// The catalog published now.
    #[inline]
    pub(crate) fn current(&self) -> Arc<Catalog> {
        self.current.load_full()
    }

    /// Applies `change` to the catalog published now: the new version, or the first rule
    /// broken (and nothing published).
    pub(super) fn apply(self: &Arc<Self>, change: CatalogChange) -> Result<u64, BuildError> {
        let mut version = lock(&self.writer);
        let catalog = self.next(&self.current.load_full(), change)?;
        self.current.store(Arc::new(catalog));
        *version += 1;
        let accepted = *version;
        drop(version);
        self.changed();
        Ok(accepted)
    }

    /// Whether `change` would be accepted now (compiled, never published).
    #[cfg(feature = "postgres")]
    pub(super) fn check(&self, change: CatalogChange) -> Result<(), BuildError> {
        let _writer = lock(&self.writer);
        self.next(&self.current.load_full(), change).map(drop)
    }

    /// The catalog `change` makes of `now`, or the first rule it breaks.
    fn next(&self, now: &Catalog, change: CatalogChange) -> Result<Catalog, BuildError> {
        let mut next = Registrations {
            tools: now.tools.clone(),
            prompts: now.prompts.clone(),
            resources: now.resources.clone(),
            templates: now.templates.clone(),
            skills: now.skill_registrations.clone(),
            apps: now.app_views.clone(),
        };
        for step in change.steps {
            let found = match step {
                Step::Tool(edit) => edit.apply(&mut next.tools),
                Step::Prompt(edit) => edit.apply(&mut next.prompts),
                Step::Resource(edit) => edit.apply(&mut next.resources),
                Step::Template(edit) => edit.apply(&mut next.templates),
                Step::Skill(edit) => edit.apply(&mut next.skills),
                Step::AppView(edit) => edit.apply(&mut next.apps),
            };
            if !found {
                return Err(self.rules.error(BuildErrorKind::UnknownRegistration));
            }
        }
        compile(next, &self.rules)
    }

    /// A change was published: announce it at the end of the window (at once outside a
    /// runtime, where nothing could wait for it). The waiting task holds the catalog weakly: an
    /// endpoint dropped meanwhile announces nothing.
    fn changed(self: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.announcer.announce(&self.current);
            return;
        };
        if !self.announcer.schedule() {
            return;
        }
        let live = Arc::downgrade(self);
        runtime.spawn(async move {
            tokio::time::sleep(LIST_CHANGED_WINDOW).await;
            if let Some(live) = live.upgrade() {
                live.announcer.announce(&live.current);
            }
        });
    }
}

/// The handle to a live endpoint's catalog ([`Endpoint::catalogs`](crate::Endpoint::catalogs)):
/// cheap to clone, shared by every clone of the endpoint. Each change is checked as
/// [`EndpointBuilder::build`](crate::endpoint::EndpointBuilder::build) checks registrations and
/// refused whole on any failure; an accepted one is published at once (requests starting after
/// it see it, requests running finish on the catalog they started on) and announced after
/// [`LIST_CHANGED_WINDOW`].
///
/// # Examples
///
/// ```
/// use tollgate::{Endpoint, Implementation, ProtocolVersion};
///
/// let endpoint = Endpoint::with_path("/mcp", [ProtocolVersion::V2026_07_28],
///     Implementation::new("demo", "1.0.0")).live_catalogs().build()?;
/// let Some(catalogs) = endpoint.catalogs() else { unreachable!("built live") };
/// // Removing a tool that is not there is refused, and changes nothing.
/// assert!(catalogs.remove_tool("missing").is_err());
/// assert_eq!(catalogs.version(), 0);
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct Catalogs {
    pub(super) live: Arc<Live>,
}

impl std::fmt::Debug for Catalogs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalogs")
            .field("version", &self.version())
            .finish_non_exhaustive()
    }
}

impl Catalogs {
    pub(crate) fn new(live: Arc<Live>) -> Self {
        Self { live }
    }

    /// Applies `change` as a whole and publishes the new catalog; returns its version (the
    /// count of changes accepted so far).
    ///
    /// # Errors
    ///
    /// The first rule the changed catalog breaks, as [`EndpointBuilder::build`] reports it
    /// (duplicate names, revisions outside the endpoint, limiters or task store missing, scopes
    /// without a protected resource, skills' rules, a page over the output limit), or
    /// [`BuildErrorKind::UnknownRegistration`] for a replaced or removed name that is not
    /// there. The catalog is then left as it was.
    ///
    /// [`EndpointBuilder::build`]: crate::endpoint::EndpointBuilder::build
    pub fn apply(&self, change: CatalogChange) -> Result<u64, BuildError> {
        self.live.apply(change)
    }

    /// Adds a tool: `apply(CatalogChange::new().add_tool(tool))`.
    ///
    /// # Errors
    ///
    /// As [`apply`](Self::apply).
    pub fn add_tool(&self, tool: ToolRegistration) -> Result<u64, BuildError> {
        self.apply(CatalogChange::new().add_tool(tool))
    }

    /// Replaces the tool of the same name: `apply(CatalogChange::new().replace_tool(tool))`.
    ///
    /// # Errors
    ///
    /// As [`apply`](Self::apply).
    pub fn replace_tool(&self, tool: ToolRegistration) -> Result<u64, BuildError> {
        self.apply(CatalogChange::new().replace_tool(tool))
    }

    /// Removes the tool `name`: `apply(CatalogChange::new().remove_tool(name))`.
    ///
    /// # Errors
    ///
    /// As [`apply`](Self::apply).
    pub fn remove_tool(&self, name: &str) -> Result<u64, BuildError> {
        self.apply(CatalogChange::new().remove_tool(name))
    }

    /// The count of changes accepted so far (0 as built).
    pub fn version(&self) -> u64 {
        *lock(&self.live.writer)
    }

    /// The tools published now, in list order.
    pub fn tools(&self) -> Vec<ToolRegistration> {
        self.live.current().tools.clone()
    }

    /// The names of the tools published now, in list order.
    pub fn tool_names(&self) -> Vec<String> {
        self.live
            .current()
            .tools
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    }
}

/// Relays a live endpoint's list changes on `revision` as notification lines to `lines` (a
/// stdio 2025 session, whose one stream is its output) until the output closes; `None` on a
/// fixed endpoint, or where the 2025 revisions keep no sessions (discovery then says
/// `listChanged: false`). Lost events (a lagging receiver) announce every list. With
/// per-principal views, `view` (the session's) keeps the lists its view did not change.
pub(crate) fn announce_lines(
    endpoint: &crate::registry::Endpoint,
    revision: crate::version::ProtocolVersion,
    lines: tokio::sync::mpsc::Sender<Vec<u8>>,
    view: Option<Arc<dyn crate::stream::ListView>>,
) -> Option<tokio::task::AbortHandle> {
    use tokio::sync::broadcast::error::RecvError;
    if !endpoint.inner.live.as_ref()?.rules.sessions {
        return None;
    }
    let mut events = endpoint.inner.listeners.events.subscribe();
    let relay = tokio::spawn(async move {
        loop {
            let lists = match events.recv().await {
                Ok(Event::ListsChanged(lists)) => lists,
                Ok(_) => continue,
                Err(RecvError::Lagged(_)) => u16::MAX,
                Err(RecvError::Closed) => return,
            };
            let lists = view.as_ref().map_or(lists, |view| view.changed(lists));
            for list in ListKind::ALL {
                if lists & list_bit(revision, list) == 0 {
                    continue;
                }
                let line = format!(r#"{{"jsonrpc":"2.0","method":"{}"}}"#, list.notification());
                if lines.send(line.into_bytes()).await.is_err() {
                    return;
                }
            }
        }
    });
    Some(relay.abort_handle())
}

/// What was announced last, and whether an announcement is due.
struct Announced {
    catalog: Arc<Catalog>,
    scheduled: bool,
}

/// Announces changes, a window's worth at a time.
struct Announcer {
    state: Mutex<Announced>,
    publisher: Publisher,
    sessions: Option<Arc<SessionTable>>,
    /// Whether listeners have per-principal views: each then compares its own view, which a
    /// change may alter without altering the whole catalog's pages (a registration the view
    /// function judges by more than its descriptor), so every window is announced.
    viewed: bool,
}

impl Announcer {
    /// Whether this change is the first since the last announcement (its caller then has it
    /// announced at the end of the window).
    fn schedule(&self) -> bool {
        let mut state = lock(&self.state);
        !std::mem::replace(&mut state.scheduled, true)
    }

    /// Announces what differs between the last announced catalog and the one published now
    /// (loaded under the lock: a change published before it is in it, one after schedules
    /// another announcement).
    fn announce(&self, current: &ArcSwap<Catalog>) {
        let lists = {
            let mut state = lock(&self.state);
            state.scheduled = false;
            let now = current.load_full();
            let lists = differences(&state.catalog, &now);
            state.catalog = now;
            lists
        };
        if lists == 0 && !self.viewed {
            return;
        }
        self.publisher.publish_here(Event::ListsChanged(lists));
        if let Some(sessions) = &self.sessions {
            sessions.lists_changed(lists);
        }
    }
}

/// The lists that differ between two catalogs, as rendered, per revision (`list_bit`): a
/// skill's change is one of the resources list (its `SKILL.md` is listed there, and
/// `skills/list` lives beside it).
pub(crate) fn differences(before: &Catalog, after: &Catalog) -> u16 {
    let mut lists = 0;
    for revision in IMPLEMENTED.iter() {
        let slot = revision_slot(revision);
        if before.tool_pages[slot] != after.tool_pages[slot]
            || before.app_tool_pages[slot] != after.app_tool_pages[slot]
        {
            lists |= list_bit(revision, ListKind::Tools);
        }
        if before.prompt_pages[slot] != after.prompt_pages[slot] {
            lists |= list_bit(revision, ListKind::Prompts);
        }
        let skills_changed =
            before.skills.as_ref().map(|s| &s.pages) != after.skills.as_ref().map(|s| &s.pages);
        if before.resource_pages[slot] != after.resource_pages[slot]
            || before.template_pages[slot] != after.template_pages[slot]
            || (!is_legacy(revision) && skills_changed)
        {
            lists |= list_bit(revision, ListKind::Resources);
        }
    }
    lists
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
