//! Upstream catalogs followed while the gateway serves: an upstream's
//! `notifications/tools/list_changed` (heard through the client's handler: on stdio, on a 2025
//! HTTP session's stream, or on the `subscriptions/listen` the gateway keeps open on a
//! 2026-07-28 upstream that announces changes) or its re-list interval starts a refresh, which lists and imports its tools again and applies the
//! difference to the endpoint's live catalog as one change. Owns the refresh and its rules (a
//! change clashing with another upstream's names is refused whole; a failed list changes
//! nothing) and the followers every served upstream gets (the refresh, the reconnection, the
//! listen); knows nothing of how tools are imported or served.

use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;
use tollgate::endpoint::{CatalogChange, Catalogs};
use tollgate::json::{JsonObject, JsonValue};

use crate::import::Kind;
use crate::shared::{UPSTREAM, lock};
use crate::upstream::{
    FIRST_REVIVE_BACKOFF, MAX_REVIVE_BACKOFF, Others, Owners, Rules, Upstream, clashes, import_all,
    import_others, owner_key, revive,
};

/// Follows one upstream for as long as the gateway runs (the task is aborted on close).
pub(crate) async fn follow(
    upstream: Arc<Upstream>,
    catalogs: Catalogs,
    owners: Owners,
    rules: Rules,
) {
    loop {
        match upstream.config.relist() {
            Some(every) => {
                tokio::select! {
                    () = upstream.changed.notified() => {}
                    () = tokio::time::sleep(every) => {}
                }
            }
            None => upstream.changed.notified().await,
        }
        refresh(&upstream, &catalogs, &owners, &rules).await;
    }
}

/// Lists and imports the upstream's tools, prompts, resources, templates and skills again and
/// applies the difference as one change.
async fn refresh(upstream: &Upstream, catalogs: &Catalogs, owners: &Owners, rules: &Rules) {
    let name = upstream.config.name();
    let client = upstream.link.client();
    let listed = tokio::time::timeout(upstream.config.call_timeout(), client.list_tools());
    let listed = match listed.await {
        Ok(Ok(listed)) => Some(listed),
        Ok(Err(error)) => {
            upstream.link.failed(&error);
            None
        }
        Err(_) => None,
    };
    let others = match listed {
        Some(_) => import_others(upstream, rules).await.ok(),
        None => None,
    };
    let (Some(listed), Some((others, other_refusals))) = (listed, others) else {
        tracing::warn!(target: UPSTREAM, upstream = name, "re-list failed: the catalog is unchanged");
        return;
    };
    let (tools, refusals) = import_all(upstream, &listed, rules);
    for refusal in refusals.iter().chain(&other_refusals) {
        tracing::warn!(target: UPSTREAM, upstream = name, "{refusal}");
    }
    let other_keys = others.keys();
    let mut owners = lock(owners);
    let taken = |key: &str| clashes(&owners, key, name);
    let clash = tools
        .iter()
        .map(|t| t.name().to_owned())
        .find(|n| taken(n))
        .or_else(|| {
            other_keys
                .iter()
                .find(|(_, key, _)| taken(key))
                .map(|(_, _, served)| served.clone())
        });
    if let Some(clash) = clash {
        tracing::warn!(
            target: UPSTREAM,
            upstream = name,
            served = clash.as_str(),
            "catalog change refused: another upstream serves the name"
        );
        return;
    }
    let mut served = lock(&upstream.served);
    let mut served_others = lock(&upstream.served_others);
    let mut change = CatalogChange::new();
    for old in served.iter() {
        if !tools.iter().any(|t| t.name() == old) {
            change = change.remove_tool(old.as_str());
        }
    }
    for tool in &tools {
        change = if served.iter().any(|old| old == tool.name()) {
            change.replace_tool(tool.clone())
        } else {
            change.add_tool(tool.clone())
        };
    }
    change = others_change(change, &served_others, &others);
    match catalogs.apply(change) {
        Ok(version) => {
            for old in served.drain(..).chain(served_others.drain(..)) {
                owners.remove(&old);
            }
            for tool in &tools {
                owners.insert(tool.name().to_owned(), name.to_owned());
                served.push(tool.name().to_owned());
            }
            for (_, key, _) in other_keys {
                owners.insert(key.clone(), name.to_owned());
                served_others.push(key);
            }
            tracing::info!(target: UPSTREAM, upstream = name, tools = served.len(), others = served_others.len(), version, "catalog change applied");
        }
        Err(error) => {
            tracing::warn!(target: UPSTREAM, upstream = name, %error, "catalog change refused");
        }
    }
}

/// `change` with the prompts, resources, templates and skills served before (`served`, by owner key)
/// replaced by `others`: the ones gone removed, the ones kept replaced, the new ones added.
fn others_change(mut change: CatalogChange, served: &[String], others: &Others) -> CatalogChange {
    let was = |kind, name: &str| served.contains(&owner_key(kind, name));
    let now = others.keys();
    for key in served {
        if now.iter().any(|(_, k, _)| k == key) {
            continue;
        }
        let Some((kind, name)) = key.split_once(':') else {
            continue;
        };
        change = match kind {
            "Prompt" => change.remove_prompt(name),
            "Resource" => change.remove_resource(name),
            // By its root URI: two upstreams' skills may share a name.
            "Skill" => change.remove_skill(name),
            _ => change.remove_resource_template(name),
        };
    }
    for prompt in &others.prompts {
        change = if was(Kind::Prompt, prompt.name()) {
            change.replace_prompt(prompt.clone())
        } else {
            change.add_prompt(prompt.clone())
        };
    }
    for resource in &others.resources {
        change = if was(Kind::Resource, resource.uri()) {
            change.replace_resource(resource.clone())
        } else {
            change.add_resource(resource.clone())
        };
    }
    for template in &others.templates {
        change = if was(Kind::Template, template.uri_template()) {
            change.replace_resource_template(template.clone())
        } else {
            change.add_resource_template(template.clone())
        };
    }
    for skill in &others.skills {
        change = if was(Kind::Skill, skill.root_uri()) {
            change.replace_skill(skill.clone())
        } else {
            change.add_skill(skill.clone())
        };
    }
    change
}

/// Keeps a `subscriptions/listen` open on a 2026-07-28 upstream whose tools, prompts or
/// resources announce changes (`listChanged` in their capabilities), for those, for as long as
/// the gateway runs: its notifications reach the client's handler ([`Watch`]) like any other.
/// Opened again on the client in use after it ends or fails (the upstream closed it, its token
/// expired, the upstream was connected to again), waiting between tries from
/// [`FIRST_REVIVE_BACKOFF`] doubling to [`MAX_REVIVE_BACKOFF`]; a listen that heard something
/// starts the wait over.
pub(crate) async fn listen(upstream: Arc<Upstream>) {
    let mut backoff = FIRST_REVIVE_BACKOFF;
    loop {
        let client = upstream.link.client();
        let announces = |kind: &str| {
            client
                .server()
                .get("capabilities")
                .and_then(|c| c.get(kind))
                .and_then(|t| t.get("listChanged"))
                == Some(&JsonValue::Bool(true))
        };
        let mut filter = JsonObject::builder();
        for (kind, key) in [
            ("tools", "toolsListChanged"),
            ("prompts", "promptsListChanged"),
            ("resources", "resourcesListChanged"),
        ] {
            if announces(kind) {
                filter.push(key, true);
            }
        }
        let filter = filter.build();
        if client.revision().is_stateless()
            && !filter.is_empty()
            && let Ok(mut listen) = client.listen(filter)
        {
            while let Some(Ok(_)) = listen.next().await {
                backoff = FIRST_REVIVE_BACKOFF;
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_REVIVE_BACKOFF);
    }
}

/// Everything a joined upstream is added to: the endpoint's catalogs, the served names' owners,
/// the import rules, the gateway's followers (aborted on close) and its joined upstreams (closed
/// on close).
#[derive(Clone)]
pub(crate) struct Joining {
    pub(crate) catalogs: Catalogs,
    pub(crate) owners: Owners,
    pub(crate) rules: Rules,
    pub(crate) followers: Arc<Mutex<Vec<JoinHandle<()>>>>,
    pub(crate) joined: Arc<Mutex<Vec<Arc<Upstream>>>>,
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
