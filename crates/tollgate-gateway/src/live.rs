//! Upstream catalogs followed while the gateway serves: an upstream's
//! `notifications/tools/list_changed` (heard through the client's handler: on stdio, on a 2025
//! HTTP session's stream, or on the `subscriptions/listen` the gateway keeps open on a
//! 2026-07-28 upstream that announces changes) or its re-list interval starts a refresh, which lists and imports its tools again and applies the
//! difference to the endpoint's live catalog as one change. Owns the refresh and its rules (a
//! change clashing with another upstream's names is refused whole; a failed list changes
//! nothing); knows nothing of how tools are imported or served.

use std::sync::Arc;

use tokio::sync::Notify;
use tollgate::endpoint::{CatalogChange, Catalogs};
use tollgate::json::{JsonObject, JsonValue};

use crate::gateway::{
    FIRST_REVIVE_BACKOFF, MAX_REVIVE_BACKOFF, Owners, Rules, UPSTREAM, Upstream, import_all, lock,
};

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
        if method == "notifications/tools/list_changed" {
            // One stored permit: a burst while a refresh runs gives one more refresh.
            self.changed.notify_one();
        }
    }
}

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

/// Lists and imports the upstream's tools again and applies the difference.
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
    let Some(listed) = listed else {
        tracing::warn!(target: UPSTREAM, upstream = name, "re-list failed: the catalog is unchanged");
        return;
    };
    let (tools, refusals) = import_all(upstream, &listed, rules);
    for refusal in &refusals {
        tracing::warn!(target: UPSTREAM, upstream = name, "{refusal}");
    }
    let mut owners = lock(owners);
    if let Some(clash) = tools
        .iter()
        .find(|t| owners.get(t.name()).is_some_and(|owner| owner != name))
    {
        tracing::warn!(
            target: UPSTREAM,
            upstream = name,
            tool = clash.name(),
            "catalog change refused: another upstream serves the name"
        );
        return;
    }
    let mut served = lock(&upstream.served);
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
    match catalogs.apply(change) {
        Ok(version) => {
            for old in served.drain(..) {
                owners.remove(&old);
            }
            for tool in &tools {
                owners.insert(tool.name().to_owned(), name.to_owned());
                served.push(tool.name().to_owned());
            }
            tracing::info!(target: UPSTREAM, upstream = name, tools = served.len(), version, "catalog change applied");
        }
        Err(error) => {
            tracing::warn!(target: UPSTREAM, upstream = name, %error, "catalog change refused");
        }
    }
}

/// Keeps a `subscriptions/listen` open on a 2026-07-28 upstream whose tools announce changes
/// (`capabilities.tools.listChanged`), for as long as the gateway runs: its notifications reach
/// the client's handler ([`Watch`]) like any other. Opened again on the client in use after it
/// ends or fails (the upstream closed it, its token expired, the upstream was connected to
/// again), waiting between tries from [`FIRST_REVIVE_BACKOFF`] doubling to
/// [`MAX_REVIVE_BACKOFF`]; a listen that heard something starts the wait over.
pub(crate) async fn listen(upstream: Arc<Upstream>) {
    let filter = JsonObject::builder()
        .insert("toolsListChanged", true)
        .build();
    let mut backoff = FIRST_REVIVE_BACKOFF;
    loop {
        let client = upstream.link.client();
        let announces = client
            .server()
            .get("capabilities")
            .and_then(|c| c.get("tools"))
            .and_then(|t| t.get("listChanged"))
            == Some(&JsonValue::Bool(true));
        if client.revision().is_stateless()
            && announces
            && let Ok(mut listen) = client.listen(filter.clone())
        {
            while let Some(Ok(_)) = listen.next().await {
                backoff = FIRST_REVIVE_BACKOFF;
            }
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_REVIVE_BACKOFF);
    }
}
