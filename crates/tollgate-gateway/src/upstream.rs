//! One upstream and everything about it below the gateway: its connection (started or
//! connected with the gateway's own credentials, connected again with backoff when found gone),
//! the client handler that hears its lists change, the import of its catalog (tools; prompts,
//! resources, templates and skills) under the gateway's rules, and the owners of the served
//! names. Knows nothing of the gateway's start-up order, of following catalogs while serving
//! or of the configuration's text.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tollgate::json::{JsonObject, JsonValue};
use tollgate::prompt::PromptRegistration;
use tollgate::resource::{ResourceRegistration, ResourceTemplateRegistration};
use tollgate::skill::SkillRegistration;
use tollgate::{ProtocolVersion, ToolRegistration};
use tollgate_client::{Client, ClientLimits};

use crate::catalog::{import_prompt, import_resource, import_template};
use crate::config::{UpstreamConfig, UpstreamTransport};
use crate::error::{GatewayError, GatewayErrorKind};
use crate::import::{Kind, Refusal, RefusalReason, Source, import_tool};
use crate::link::Link;
use crate::naming::Naming;
use crate::oauth::{OAuthGrant, Watched};
use crate::shared::UPSTREAM;
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

/// The client handler that hears an upstream's tool list change.
pub(crate) struct Watch {
    changed: Arc<Notify>,
}

impl Watch {
    pub(crate) fn new(changed: &Arc<Notify>) -> Self {
        Self {
            changed: Arc::clone(changed),
        }
    }
}

impl tollgate_client::handler::Handler for Watch {
    fn notification(&self, method: &str, _: Option<&JsonObject>) {
        if matches!(
            method,
            "notifications/tools/list_changed"
                | "notifications/prompts/list_changed"
                | "notifications/resources/list_changed"
        ) {
            // One stored permit: a burst while a refresh runs gives one more refresh.
            self.changed.notify_one();
        }
    }
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
pub(crate) async fn revive(upstream: Arc<Upstream>) {
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
pub(crate) fn logs(client: &Client) -> bool {
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
    if upstream.sole_call_requests() {
        builder = builder.sole_call_requests(true);
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
