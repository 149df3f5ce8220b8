//! The gateway itself: its upstreams connected, their tools imported (or refused), the
//! imported tools installed on an endpoint builder, and each upstream's catalog followed once
//! the endpoint is built. Owns the start-up order (connect every upstream, list every catalog,
//! check names across upstreams) and the upstreams' lifetimes; knows nothing of the
//! configuration's text or of serving.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tollgate::endpoint::{Catalogs, EndpointBuilder};
use tollgate::prompt::PromptRegistration;
use tollgate::resource::{ResourceFallback, ResourceRegistration, ResourceTemplateRegistration};
use tollgate::skill::SkillRegistration;
use tollgate::task::InMemoryTaskStore;
use tollgate::{Endpoint, ProtocolVersion, ToolRegistration};

use crate::catalog::{Resolve, unlisted_reads};
use crate::config::{GatewayConfig, UpstreamConfig};
use crate::error::{ForwardError, GatewayError, GatewayErrorKind};
use crate::import::{Kind, Refusal};
use crate::link::Link;
use crate::live::{Joining, spawn_followers};
use crate::naming::Naming;
use crate::pending::join_later;
use crate::shared::{UPSTREAM, lock};
use crate::upstream::{
    Owners, Rules, Upstream, Watch, clashes, connect, import_all, import_others, logs, owner_key,
};

/// A connected gateway: its upstreams' clients, the tools imported from them, and the tools
/// left out.
pub struct Gateway {
    upstreams: Vec<Arc<Upstream>>,
    tools: Vec<ToolRegistration>,
    prompts: Vec<PromptRegistration>,
    resources: Vec<ResourceRegistration>,
    templates: Vec<ResourceTemplateRegistration>,
    skills: Vec<SkillRegistration>,
    refusals: Vec<Refusal>,
    unavailable: Vec<GatewayError>,
    /// The upstreams left out at start-up, each with whether its authorization server was
    /// unreachable (else a login is needed): joined while serving.
    pending: Vec<(UpstreamConfig, bool)>,
    /// The pending upstreams that joined since.
    joined: Arc<Mutex<Vec<Arc<Upstream>>>>,
    rules: Rules,
    owners: Owners,
    followers: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("upstreams", &self.upstreams.len())
            .field("tools", &self.tools.len())
            .field("refusals", &self.refusals.len())
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// Connects to every upstream of `config`, lists its tools and imports them for
    /// `revisions` (the revisions the gateway's endpoint serves).
    ///
    /// # Errors
    ///
    /// [`GatewayErrorKind::Upstream`] naming the first upstream that cannot be started,
    /// connected to or listed (the ones connected before it are closed);
    /// [`GatewayErrorKind::NameClash`] when two upstreams serve the same name. An upstream
    /// whose authorization-code grant has no usable tokens is not an error: it is left out
    /// and listed in [`unavailable`](Self::unavailable).
    pub async fn connect(
        config: &GatewayConfig,
        revisions: &[ProtocolVersion],
    ) -> Result<Self, GatewayError> {
        let mut gateway = Self {
            upstreams: Vec::new(),
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            skills: Vec::new(),
            refusals: Vec::new(),
            unavailable: Vec::new(),
            pending: Vec::new(),
            joined: Arc::default(),
            rules: Rules {
                revisions: revisions.to_vec(),
                profile1_only: config.profile1_only(),
            },
            owners: Owners::default(),
            followers: Arc::default(),
        };
        for upstream in config.upstreams() {
            match gateway.add(upstream).await {
                Ok(()) => {}
                // Left out until a login (the refusal is logged by the upstream's OAuth
                // client, naming the login command) or until its authorization server answers:
                // the others are served, and it joins once it can (`follow`).
                Err(error)
                    if matches!(
                        error.kind(),
                        GatewayErrorKind::LoginNeeded | GatewayErrorKind::AuthorizationUnreachable
                    ) =>
                {
                    let unreachable = error.kind() == GatewayErrorKind::AuthorizationUnreachable;
                    gateway.pending.push((upstream.clone(), unreachable));
                    gateway.unavailable.push(error);
                }
                Err(error) => {
                    gateway.close().await;
                    return Err(error);
                }
            }
        }
        for refusal in &gateway.refusals {
            tracing::warn!(target: UPSTREAM, upstream = refusal.upstream(), "{refusal}");
        }
        Ok(gateway)
    }

    /// Connects one upstream and imports its catalog.
    async fn add(&mut self, config: &UpstreamConfig) -> Result<(), GatewayError> {
        let failed = || GatewayError::new(GatewayErrorKind::Upstream, Some(config.name()));
        let changed = Arc::new(Notify::new());
        let link = Link::new(connect(config, Watch::new(&changed)).await?);
        let upstream = Arc::new(Upstream::new(config.clone(), link, changed));
        self.upstreams.push(Arc::clone(&upstream));
        let listed = upstream
            .link
            .client()
            .list_tools()
            .await
            .map_err(|_| failed())?;
        let (tools, refusals) = import_all(&upstream, &listed, &self.rules);
        self.refusals.extend(refusals);
        let names: Vec<String> = tools.iter().map(|t| t.name().to_owned()).collect();
        {
            let mut owners = lock(&self.owners);
            if names.iter().any(|n| owners.contains_key(n)) {
                return Err(GatewayError::new(
                    GatewayErrorKind::NameClash,
                    Some(config.name()),
                ));
            }
            for name in &names {
                owners.insert(name.clone(), config.name().to_owned());
            }
        }
        tracing::info!(target: UPSTREAM, upstream = config.name(), tools = names.len(), "upstream imported");
        *lock(&upstream.served) = names;
        self.tools.extend(tools);
        self.add_prompts_and_resources(&upstream).await
    }

    /// Imports the upstream's prompts, resources and templates, where its capabilities say it
    /// has them.
    async fn add_prompts_and_resources(&mut self, upstream: &Upstream) -> Result<(), GatewayError> {
        let name = upstream.config.name();
        let (others, refusals) = import_others(upstream, &self.rules)
            .await
            .map_err(|()| GatewayError::new(GatewayErrorKind::Upstream, Some(name)))?;
        self.refusals.extend(refusals);
        let keys = others.keys();
        for (kind, _, served) in &keys {
            self.claim(*kind, served, name)?;
        }
        *lock(&upstream.served_others) = keys.into_iter().map(|(_, key, _)| key).collect();
        self.prompts.extend(others.prompts);
        self.resources.extend(others.resources);
        self.templates.extend(others.templates);
        self.skills.extend(others.skills);
        Ok(())
    }

    /// Records that `upstream` serves the prompt, resource, template or skill `name`; a clash
    /// with another upstream refuses start-up.
    fn claim(&self, kind: Kind, name: &str, upstream: &str) -> Result<(), GatewayError> {
        let key = owner_key(kind, name);
        let mut owners = lock(&self.owners);
        if clashes(&owners, &key, upstream) {
            return Err(GatewayError::new(
                GatewayErrorKind::NameClash,
                Some(upstream),
            ));
        }
        owners.insert(key, upstream.to_owned());
        Ok(())
    }

    /// The tools imported at start-up, in upstream and list order.
    pub fn tools(&self) -> &[ToolRegistration] {
        &self.tools
    }

    /// The prompts imported at start-up.
    pub fn prompts(&self) -> &[PromptRegistration] {
        &self.prompts
    }

    /// The resources imported at start-up.
    pub fn resources(&self) -> &[ResourceRegistration] {
        &self.resources
    }

    /// The resource templates imported at start-up.
    pub fn resource_templates(&self) -> &[ResourceTemplateRegistration] {
        &self.templates
    }

    /// The skills imported at start-up (served at `skill://PREFIX/<path>` under a prefix).
    pub fn skills(&self) -> &[SkillRegistration] {
        &self.skills
    }

    /// The upstreams left out at start-up because their authorization-code grant has no
    /// usable tokens (none stored, or the refresh was refused: each a
    /// [`GatewayErrorKind::LoginNeeded`] naming the upstream; run `tollgate gateway login` for
    /// it, [`login`](crate::login)) or its authorization server could not be reached to
    /// refresh them ([`GatewayErrorKind::AuthorizationUnreachable`]). Once the endpoint is
    /// [followed](Self::follow), each joins when it can: a login is noticed within
    /// [`LOGIN_POLL`](crate::LOGIN_POLL) (the token file changed), an unreachable server is
    /// tried again with backoff; its catalog then arrives as one live change. This list stays
    /// what start-up found.
    pub fn unavailable(&self) -> &[GatewayError] {
        &self.unavailable
    }

    /// The upstream tools, prompts, resources and templates left out at start-up, and why.
    pub fn refusals(&self) -> &[Refusal] {
        &self.refusals
    }

    /// Adds every imported tool, prompt, resource, template and skill to `builder`, turns its live catalogs on (so
    /// [`follow`](Self::follow) can keep them current), declares the gateway's forwarding
    /// error safe to log (its text is fixed and carries no data), and, when an upstream
    /// declares the `logging` capability, turns logging on
    /// ([`EndpointBuilder::logging`]), so its log messages reach the callers that ask for them.
    /// When the gateway serves 2026-07-28 it also sets an in-memory task store
    /// ([`InMemoryTaskStore::default`](tollgate::task::InMemoryTaskStore), 10,000 tasks), so an
    /// upstream's task can become the caller's own; set another store after `install` to
    /// replace it (PostgreSQL for a cluster).
    pub fn install(&self, builder: EndpointBuilder) -> EndpointBuilder {
        let mut builder = builder.live_catalogs().error_safe_to_log::<ForwardError>();
        if self.rules.relays_tasks() {
            builder = builder.task_store(InMemoryTaskStore::default());
        }
        // A pending upstream may log once it joins.
        if !self.pending.is_empty() || self.upstreams.iter().any(|u| logs(&u.link.client())) {
            builder = builder.logging(true);
        }
        let builder = self
            .tools
            .iter()
            .cloned()
            .fold(builder, |b, t| b.add_tool(t));
        let builder = self
            .prompts
            .iter()
            .cloned()
            .fold(builder, |b, p| b.add_prompt(p));
        let builder = self
            .resources
            .iter()
            .cloned()
            .fold(builder, |b, r| b.add_resource(r));
        let builder = self
            .templates
            .iter()
            .cloned()
            .fold(builder, |b, t| b.add_resource_template(t));
        let builder = self
            .unlisted_reads()
            .into_iter()
            .fold(builder, |b, f| b.add_resource_fallback(f));
        self.skills
            .iter()
            .cloned()
            .fold(builder, |b, s| b.add_skill(s))
    }

    /// The read fallback of each prefixed upstream (`PREFIX+uri` for the URIs its answers carry
    /// that it neither lists nor templates): a connected one reads through its link (followed
    /// across reconnections), a pending one through the link it has once it joins.
    fn unlisted_reads(&self) -> Vec<ResourceFallback> {
        let connected = self.upstreams.iter().map(|u| {
            let link = Arc::clone(&u.link);
            let resolve: Resolve = Arc::new(move || Some(Arc::clone(&link)));
            (&u.config, resolve)
        });
        let pending = self.pending.iter().map(|(config, _)| {
            let (joined, name) = (Arc::clone(&self.joined), config.name().to_owned());
            let resolve: Resolve = Arc::new(move || {
                let joined = lock(&joined);
                let upstream = joined.iter().find(|u| u.config.name() == name)?;
                Some(Arc::clone(&upstream.link))
            });
            (config, resolve)
        });
        connected
            .chain(pending)
            .filter_map(|(config, resolve)| {
                let naming = Naming::new(config.prefix());
                let timeout = config.call_timeout();
                unlisted_reads(
                    config.name(),
                    &naming,
                    timeout,
                    &self.rules.revisions,
                    resolve,
                )
            })
            .collect()
    }

    /// Keeps `endpoint`'s catalog current with the upstreams': on an upstream's
    /// `list_changed` for tools, prompts or resources (from a stdio upstream, a 2025 HTTP
    /// session's stream, or a `subscriptions/listen` the gateway keeps open on a 2026-07-28
    /// upstream that announces changes), and every `relist_ms` where configured, its tools,
    /// prompts, resources and templates
    /// are listed and imported again, and the difference applied as one catalog change
    /// (announced to the endpoint's clients as live catalogs announce). A change that would
    /// serve a name another upstream serves is refused whole and logged with the name.
    ///
    /// # Errors
    ///
    /// [`GatewayErrorKind::Build`] when `endpoint` was not built with live catalogs (build it
    /// from [`install`](Self::install)).
    pub fn follow(&self, endpoint: &Endpoint) -> Result<(), GatewayError> {
        let catalogs: Catalogs = endpoint
            .catalogs()
            .ok_or_else(|| GatewayError::new(GatewayErrorKind::Build, None))?;
        let joining = Joining {
            catalogs,
            owners: Arc::clone(&self.owners),
            rules: self.rules.clone(),
            followers: Arc::clone(&self.followers),
            joined: Arc::clone(&self.joined),
        };
        let mut followers = lock(&self.followers);
        for upstream in &self.upstreams {
            followers.extend(spawn_followers(upstream, &joining));
        }
        for (config, unreachable) in &self.pending {
            let waiting = join_later(config.clone(), *unreachable, joining.clone());
            followers.push(tokio::spawn(waiting));
        }
        Ok(())
    }

    /// Stops following and closes every upstream (a stdio child is ended; a 2025 HTTP session
    /// deleted).
    pub async fn close(&self) {
        for follower in lock(&self.followers).drain(..) {
            follower.abort();
        }
        let joined: Vec<Arc<Upstream>> = lock(&self.joined).drain(..).collect();
        for upstream in self.upstreams.iter().chain(&joined) {
            let _ = upstream.link.client().close().await;
        }
    }
}
