//! The gateway itself: its upstreams connected, their tools imported (or refused), the
//! imported tools installed on an endpoint builder, and each upstream's catalog followed once
//! the endpoint is built. Owns the start-up order (connect every upstream, list every catalog,
//! check names across upstreams) and the upstreams' lifetimes; knows nothing of the
//! configuration's text or of serving.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tollgate::endpoint::{Catalogs, EndpointBuilder};
use tollgate::json::{JsonObject, JsonValue};
use tollgate::prompt::PromptRegistration;
use tollgate::resource::{ResourceRegistration, ResourceTemplateRegistration};
use tollgate::skill::SkillRegistration;
use tollgate::task::InMemoryTaskStore;
use tollgate::{Endpoint, ProtocolVersion, ToolRegistration};
use tollgate_client::{Client, ClientLimits};

use crate::catalog::{import_prompt, import_resource, import_template};
use crate::config::{GatewayConfig, UpstreamConfig, UpstreamTransport};
use crate::error::{ForwardError, GatewayError, GatewayErrorKind};
use crate::import::{Kind, Refusal, RefusalReason, Source, import_tool};
use crate::link::Link;
use crate::live::{Watch, follow, listen};
use crate::naming::Naming;
use crate::oauth::{OAuthGrant, Watched};
use crate::pending::{Joining, join_later};
pub(crate) use crate::shared::{UPSTREAM, lock};
use crate::skills::{SkillCache, SkillSource, import_skills, offers_skills, overlap};

/// Served name -> the upstream serving it.
pub(crate) type Owners = Arc<Mutex<HashMap<String, String>>>;

/// One connected upstream: its configuration, its client, the signal its `list_changed`
/// raises, and the names it serves now.
pub(crate) struct Upstream {
    pub(crate) config: UpstreamConfig,
    pub(crate) link: Arc<Link>,
    pub(crate) changed: Arc<Notify>,
    pub(crate) served: Mutex<Vec<String>>,
    /// The prompts, resources, templates and skills it serves now, by owner key
    /// ([`owner_key`]).
    pub(crate) served_others: Mutex<Vec<String>>,
    /// Its skills imported last (an unchanged entry is not read again).
    pub(crate) skills: SkillCache,
}

impl Upstream {
    /// A connected upstream that serves nothing yet.
    pub(crate) fn new(config: UpstreamConfig, link: Arc<Link>, changed: Arc<Notify>) -> Self {
        Self {
            config,
            link,
            changed,
            served: Mutex::new(Vec::new()),
            served_others: Mutex::new(Vec::new()),
            skills: SkillCache::default(),
        }
    }
}

/// An upstream's prompts, resources, templates and skills, imported.
#[derive(Default)]
pub(crate) struct Others {
    pub(crate) prompts: Vec<PromptRegistration>,
    pub(crate) resources: Vec<ResourceRegistration>,
    pub(crate) templates: Vec<ResourceTemplateRegistration>,
    pub(crate) skills: Vec<SkillRegistration>,
}

impl Others {
    /// Every registration's owner key, with its kind and served name or URI.
    pub(crate) fn keys(&self) -> Vec<(Kind, String, String)> {
        let key = |kind, name: &str| (kind, owner_key(kind, name), name.to_owned());
        let prompts = self.prompts.iter().map(|p| key(Kind::Prompt, p.name()));
        let resources = self.resources.iter().map(|r| key(Kind::Resource, r.uri()));
        let templates = self
            .templates
            .iter()
            .map(|t| key(Kind::Template, t.uri_template()));
        let skills = self.skills.iter().map(|s| key(Kind::Skill, s.root_uri()));
        prompts
            .chain(resources)
            .chain(templates)
            .chain(skills)
            .collect()
    }
}

/// The key a served prompt, resource, template or skill (by its root URI) is owned under
/// (tools: their name).
pub(crate) fn owner_key(kind: Kind, name: &str) -> String {
    format!("{kind:?}:{name}")
}

/// Whether serving `key` (an owner key) would clash with what another upstream than `upstream`
/// serves: the same key, or (a skill) a root that is another's or lies inside or around it.
pub(crate) fn clashes(owners: &HashMap<String, String>, key: &str, upstream: &str) -> bool {
    if owners.get(key).is_some_and(|owner| owner != upstream) {
        return true;
    }
    let skill = format!("{:?}:", Kind::Skill);
    let Some(root) = key.strip_prefix(&skill) else {
        return false;
    };
    owners.iter().any(|(other, owner)| {
        owner != upstream
            && other
                .strip_prefix(&skill)
                .is_some_and(|other| overlap(root, other))
    })
}

/// Lists and imports `upstream`'s prompts, resources, templates and skills, where its
/// capabilities say it has them (skills: where the upstream and the gateway speak 2026-07-28);
/// `Err` when a list fails. The `skill://` resources of an upstream whose skills are imported
/// are served as its skills' files, never as resources of their own.
pub(crate) async fn import_others(
    upstream: &Upstream,
    rules: &Rules,
) -> Result<(Others, Vec<Refusal>), ()> {
    let config = &upstream.config;
    let client = upstream.link.client();
    let capabilities = client.server().get("capabilities");
    let offers = |name: &str| capabilities.and_then(|c| c.get(name)).is_some();
    let naming = Naming::new(config.prefix());
    let source = crate::catalog::Source {
        upstream: config.name(),
        link: &upstream.link,
        naming: &naming,
        call_timeout: config.call_timeout(),
        revisions: &rules.revisions,
        completes: offers("completions"),
    };
    let timeout = config.call_timeout();
    let mut others = Others::default();
    let mut refusals = Vec::new();
    let skills = rules.revisions.contains(&ProtocolVersion::V2026_07_28) && offers_skills(&client);
    if skills {
        let source = SkillSource {
            upstream: config.name(),
            client: &client,
            prefix: config.prefix(),
            timeout,
            cache: &upstream.skills,
        };
        let (imported, refused) = import_skills(&source).await?;
        others.skills = imported;
        refusals.extend(refused);
    }
    if offers("prompts") {
        let listed = match tokio::time::timeout(timeout, client.list_prompts()).await {
            Ok(Ok(listed)) => listed,
            _ => return Err(()),
        };
        for entry in &listed {
            match import_prompt(&source, entry) {
                Ok(prompt) => others.prompts.push(prompt),
                Err(refusal) => refusals.push(refusal),
            }
        }
    }
    if offers("resources") {
        let listed = match tokio::time::timeout(timeout, client.list_resources()).await {
            Ok(Ok(listed)) => listed,
            _ => return Err(()),
        };
        let skill_file = |entry: &&JsonValue| {
            skills
                && entry
                    .get("uri")
                    .and_then(JsonValue::as_str)
                    .is_some_and(|uri| uri.starts_with("skill://"))
        };
        for entry in listed.iter().filter(|e| !skill_file(e)) {
            match import_resource(&source, entry) {
                Ok(resource) => others.resources.push(resource),
                Err(refusal) => refusals.push(refusal),
            }
        }
        let listed = match tokio::time::timeout(timeout, client.list_resource_templates()).await {
            Ok(Ok(listed)) => listed,
            _ => return Err(()),
        };
        for entry in &listed {
            match import_template(&source, entry) {
                Ok(template) => others.templates.push(template),
                Err(refusal) => refusals.push(refusal),
            }
        }
    }
    Ok((others, refusals))
}

/// What every import needs beside the upstream: the revisions served and the schema rule.
#[derive(Clone)]
pub(crate) struct Rules {
    pub(crate) revisions: Vec<ProtocolVersion>,
    pub(crate) profile1_only: bool,
}

impl Rules {
    /// Whether upstream tasks become the gateway's own: when it serves 2026-07-28 (the revision
    /// the runtime's tasks live on).
    pub(crate) fn relays_tasks(&self) -> bool {
        self.revisions.contains(&ProtocolVersion::V2026_07_28)
    }
}

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
        self.skills
            .iter()
            .cloned()
            .fold(builder, |b, s| b.add_skill(s))
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

/// Follows `upstream` while the gateway serves: its catalog changes, its reconnection when
/// gone, and the `subscriptions/listen` kept open on a 2026-07-28 upstream.
pub(crate) fn spawn_followers(upstream: &Arc<Upstream>, joining: &Joining) -> [JoinHandle<()>; 3] {
    [
        tokio::spawn(follow(
            Arc::clone(upstream),
            joining.catalogs.clone(),
            Arc::clone(&joining.owners),
            joining.rules.clone(),
        )),
        tokio::spawn(revive(Arc::clone(upstream))),
        tokio::spawn(listen(Arc::clone(upstream))),
    ]
}

/// Every tool of `listed` imported, or refused (a name listed twice: the first one served).
pub(crate) fn import_all(
    upstream: &Upstream,
    listed: &[JsonValue],
    rules: &Rules,
) -> (Vec<ToolRegistration>, Vec<Refusal>) {
    let config = &upstream.config;
    let naming = Naming::new(config.prefix());
    let source = Source {
        upstream: config.name(),
        link: &upstream.link,
        naming: &naming,
        call_timeout: config.call_timeout(),
        revisions: &rules.revisions,
        profile1_only: rules.profile1_only,
        tasks: rules.relays_tasks() && upstream.link.client().revision().is_stateless(),
    };
    let mut tools: Vec<ToolRegistration> = Vec::new();
    let mut refusals = Vec::new();
    for entry in listed {
        match import_tool(&source, entry) {
            Ok(tool) if tools.iter().any(|t| t.name() == tool.name()) => {
                let listed_name = entry.get("name").and_then(JsonValue::as_str).unwrap_or("");
                refusals.push(Refusal::new(
                    config.name(),
                    listed_name,
                    RefusalReason::NameClash,
                ));
            }
            Ok(tool) => tools.push(tool),
            Err(refusal) => refusals.push(refusal),
        }
    }
    (tools, refusals)
}

/// The first wait before connecting again to an upstream found gone; it doubles after each
/// failed attempt up to [`MAX_REVIVE_BACKOFF`].
pub const FIRST_REVIVE_BACKOFF: std::time::Duration = std::time::Duration::from_millis(250);

/// The longest wait between two attempts to connect again.
pub const MAX_REVIVE_BACKOFF: std::time::Duration = std::time::Duration::from_secs(30);

/// Connects again to an upstream whenever a call finds it gone (a stdio child that exited, an
/// HTTP server that refuses, a 2025 session lost), with backoff; meanwhile its registrations
/// answer the fixed -32603 at once. Once connected, its catalog is listed again.
async fn revive(upstream: Arc<Upstream>) {
    let name = upstream.config.name();
    loop {
        upstream.link.gone().await;
        tracing::warn!(target: UPSTREAM, upstream = name, "upstream gone: connecting again");
        let mut backoff = FIRST_REVIVE_BACKOFF;
        loop {
            match connect(&upstream.config, Watch::new(&upstream.changed)).await {
                Ok(client) => {
                    let old = upstream.link.replace(client);
                    let _ = old.close().await;
                    tracing::info!(target: UPSTREAM, upstream = name, "upstream connected again");
                    upstream.changed.notify_one();
                    break;
                }
                Err(_) => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_REVIVE_BACKOFF);
                }
            }
        }
    }
}

/// Whether `client`'s upstream declares the `logging` capability.
fn logs(client: &Client) -> bool {
    client
        .server()
        .get("capabilities")
        .and_then(|c| c.get("logging"))
        .is_some()
}

/// Starts or connects to one upstream, with the gateway's own credentials. A 2025 upstream that
/// logs is asked for every level (`logging/setLevel` `debug`: the level is its session's, which
/// all callers share); each caller's own level is applied by the gateway's endpoint.
pub(crate) async fn connect(
    upstream: &UpstreamConfig,
    watch: Watch,
) -> Result<Client, GatewayError> {
    let client = connect_client(upstream, watch).await?;
    if !client.revision().is_stateless() && logs(&client) {
        let level = JsonObject::builder().insert("level", "debug").build();
        let asked = client.request("logging/setLevel", Some(level));
        // An upstream that refuses keeps its own level; its messages are relayed as they come.
        let _ = tokio::time::timeout(upstream.call_timeout(), asked).await;
    }
    Ok(client)
}

/// Starts or connects to one upstream's client.
async fn connect_client(upstream: &UpstreamConfig, watch: Watch) -> Result<Client, GatewayError> {
    let failed = || GatewayError::new(GatewayErrorKind::Upstream, Some(upstream.name()));
    // What an upstream asks during a call is relayed to that call's caller (whose own
    // capabilities the gateway's endpoint checks then): a 2026-07-28 upstream's input
    // requests, and a 2025 upstream's requests on the call's own stream (Streamable HTTP). A
    // 2025 request that names no call (a stdio upstream's, or one on the session's GET stream)
    // is refused (-32601).
    // The tasks extension too, so the gateway may follow (`tasks/get`, `tasks/update`,
    // `tasks/cancel`) the tasks an upstream creates; a tool call declares what its own caller
    // can take instead (a task only for a caller the gateway can give one to).
    let asks = JsonObject::builder()
        .insert("elicitation", JsonObject::new())
        .insert("sampling", JsonObject::new())
        .insert("roots", JsonObject::new())
        .insert(
            "extensions",
            JsonObject::builder()
                .insert(tollgate::task::TASKS_EXTENSION, JsonObject::new())
                .build(),
        )
        .build();
    let limits = ClientLimits::default().with_max_input_rounds(upstream.max_input_rounds());
    let mut builder = Client::builder()
        .unchecked_output_schemas()
        .capabilities(asks)
        .limits(limits)
        .handler(watch);
    if let Some(revisions) = upstream.revisions() {
        builder = builder.revisions(revisions.iter().copied());
    }
    match upstream.transport() {
        UpstreamTransport::Http { url, headers } => {
            let mut builder = builder;
            for (name, value) in headers {
                builder = builder.header(name, value).map_err(|_| failed())?;
            }
            let Some(oauth) = upstream.oauth() else {
                return builder.connect_http(url).await.map_err(|_| failed());
            };
            // The authorization-code grant's client has no redirect: tokens it cannot use or
            // refresh fail the connection at once (logged, naming the login command), never a
            // wait for a browser.
            let client = oauth
                .client_builder()
                .and_then(|b| b.build().map_err(std::io::Error::other))
                .map_err(|_| failed())?;
            let watched = Watched::new(client, upstream.name(), oauth.grant());
            builder = builder.authorizer(Arc::clone(&watched) as _);
            match builder.connect_http(url).await {
                Ok(client) => Ok(client),
                Err(_)
                    if oauth.grant() == OAuthGrant::AuthorizationCode
                        && watched.last_refusal().is_some() =>
                {
                    let kind = if watched.last_unreachable() {
                        GatewayErrorKind::AuthorizationUnreachable
                    } else {
                        GatewayErrorKind::LoginNeeded
                    };
                    Err(GatewayError::new(kind, Some(upstream.name()))
                        .because(watched.last_refusal()))
                }
                Err(_) => Err(failed()),
            }
        }
        UpstreamTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut process = tokio::process::Command::new(command);
            process.args(args).envs(env.iter().map(|(k, v)| (k, v)));
            if let Some(cwd) = cwd {
                process.current_dir(cwd);
            }
            let name: Arc<str> = Arc::from(upstream.name());
            builder
                .stderr(move |line| {
                    tracing::info!(target: UPSTREAM, upstream = &*name, line, "upstream stderr");
                })
                .connect_stdio(process)
                .await
                .map_err(|_| failed())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_root_clashes_with_another_upstream_s_at_or_around_it() {
        let mut owners = HashMap::new();
        owners.insert(owner_key(Kind::Skill, "skill://acme/pdf"), "b".to_owned());
        owners.insert(owner_key(Kind::Prompt, "greet"), "b".to_owned());
        let skill = |root: &str| owner_key(Kind::Skill, root);
        assert!(clashes(&owners, &skill("skill://acme/pdf"), "a"));
        assert!(clashes(&owners, &skill("skill://acme"), "a"));
        assert!(clashes(&owners, &skill("skill://acme/pdf/forms"), "a"));
        assert!(!clashes(&owners, &skill("skill://acme/pdfx"), "a"));
        assert!(!clashes(&owners, &skill("skill://b/acme/pdf"), "a"));
        // Its own names never clash with it; other kinds by their exact key only.
        assert!(!clashes(&owners, &skill("skill://acme/pdf"), "b"));
        assert!(clashes(&owners, &owner_key(Kind::Prompt, "greet"), "a"));
        assert!(!clashes(&owners, &owner_key(Kind::Resource, "greet"), "a"));
    }
}
