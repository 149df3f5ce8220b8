//! List caching as 2026-07-28 allows it: a collected list (`tools/list`, `prompts/list`,
//! `resources/list`, `resources/templates/list`, `skills/list`) is kept for the `ttlMs` its
//! pages carry (the shortest of them; nothing is kept when a page names none or 0) and dropped
//! when the server says the list changed. It owns the entries and the handler wrapper that sees
//! `list_changed`; it must not know transports.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;
use tollgate_json::{JsonObject, JsonValue};

use crate::handler::{Handler, HandlerFuture};

/// Collected lists by method, each with the instant it goes stale.
#[derive(Debug, Default)]
pub(crate) struct ListCache {
    entries: Mutex<HashMap<String, (Instant, Vec<JsonValue>)>>,
}

impl ListCache {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, Vec<JsonValue>)>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The list, while it is fresh (stale from `ttlMs` after it was read).
    pub(crate) fn get(&self, method: &str) -> Option<Vec<JsonValue>> {
        let mut entries = self.entries();
        match entries.get(method) {
            Some((stale, items)) if Instant::now() < *stale => Some(items.clone()),
            Some(_) => {
                entries.remove(method);
                None
            }
            None => None,
        }
    }

    /// Keeps a list read just now for `ttl_ms` (nothing for 0).
    pub(crate) fn put(&self, method: &str, ttl_ms: u64, items: &[JsonValue]) {
        if ttl_ms == 0 {
            return;
        }
        let stale = Instant::now() + Duration::from_millis(ttl_ms);
        self.entries()
            .insert(method.to_owned(), (stale, items.to_vec()));
    }

    /// Drops what a `notifications/*/list_changed` makes stale.
    fn changed(&self, notification: &str) {
        let lists: &[&str] = match notification {
            "notifications/tools/list_changed" => &["tools/list"],
            "notifications/prompts/list_changed" => &["prompts/list"],
            // A skill's change is announced as one of the resources list (its SKILL.md is
            // listed there), so `skills/list` goes stale with it.
            "notifications/resources/list_changed" => {
                &["resources/list", "resources/templates/list", "skills/list"]
            }
            _ => &[],
        };
        let mut entries = self.entries();
        for list in lists {
            entries.remove(*list);
        }
    }
}

/// A page's `ttlMs`, when it names one.
pub(crate) fn ttl_of(result: &JsonValue) -> Option<u64> {
    result
        .get("ttlMs")
        .and_then(JsonValue::as_number)
        .and_then(|n| n.to_u64())
}

/// The application's handler, behind one that drops cached lists on `list_changed`.
pub(crate) struct Invalidating {
    pub(crate) inner: Arc<dyn Handler>,
    pub(crate) cache: Arc<ListCache>,
}

impl Handler for Invalidating {
    fn notification(&self, method: &str, params: Option<&JsonObject>) {
        self.cache.changed(method);
        self.inner.notification(method, params);
    }

    fn request<'a>(&'a self, method: &'a str, params: Option<&'a JsonObject>) -> HandlerFuture<'a> {
        self.inner.request(method, params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_resources_change_drops_the_skills_list_too() {
        let cache = ListCache::default();
        for list in ["skills/list", "resources/list", "tools/list"] {
            cache.put(list, 60_000, &[JsonValue::Bool(true)]);
        }
        cache.changed("notifications/resources/list_changed");
        assert!(cache.get("skills/list").is_none());
        assert!(cache.get("resources/list").is_none());
        assert!(cache.get("tools/list").is_some());
    }
}
