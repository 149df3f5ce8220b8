//! The bounded cache of per-principal views one catalog carries (`Rendered`): each view's
//! rendering by its key, at most the endpoint's bound of them, the one used least recently
//! dropped past it. Made empty with each catalog, so a live change published drops every view
//! of the catalog before it (with that catalog, once no request holds it).
//!
//! Knows nothing of what a view is or how it is rendered (`view`), nor of catalogs: it keeps
//! whatever it is given.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A view: one bit per registration of the catalog it was taken of (tools, prompts,
/// resources, templates, skills, in that order), set where the registration is visible.
pub(crate) type Key = Box<[u64]>;

/// The views rendered of one catalog.
pub(crate) struct Rendered<T> {
    cache: Mutex<Lru<T>>,
}

impl<T> Default for Rendered<T> {
    fn default() -> Self {
        Self {
            cache: Mutex::new(Lru {
                entries: HashMap::new(),
                tick: 0,
            }),
        }
    }
}

struct Lru<T> {
    /// Each view's rendering, and when it was last used (`tick`).
    entries: HashMap<Key, (Arc<T>, u64)>,
    tick: u64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The map is changed whole under the lock: a poisoned one is still consistent.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<T> Rendered<T> {
    /// How many views are rendered now.
    pub(crate) fn len(&self) -> usize {
        lock(&self.cache).entries.len()
    }

    /// The rendering of `key`, if cached (it is then the one used most recently).
    pub(crate) fn get(&self, key: &[u64]) -> Option<Arc<T>> {
        let mut lru = lock(&self.cache);
        lru.tick += 1;
        let tick = lru.tick;
        let (rendered, used) = lru.entries.get_mut(key)?;
        *used = tick;
        Some(Arc::clone(rendered))
    }

    /// Caches `rendered` as `key`'s (keeping one cached meanwhile, and returning it), dropping
    /// the view used least recently when `bound` are cached already.
    pub(crate) fn insert(&self, key: Key, rendered: Arc<T>, bound: usize) -> Arc<T> {
        let mut lru = lock(&self.cache);
        lru.tick += 1;
        let tick = lru.tick;
        if let Some((cached, used)) = lru.entries.get_mut(&key) {
            *used = tick;
            return Arc::clone(cached);
        }
        while lru.entries.len() >= bound.max(1) {
            let oldest = lru
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(key, _)| key.clone());
            match oldest {
                Some(oldest) => lru.entries.remove(&oldest),
                None => break,
            };
        }
        lru.entries.insert(key, (Arc::clone(&rendered), tick));
        rendered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered_with(n: u64, bound: usize, cache: &Rendered<u64>) {
        cache.insert(vec![n].into_boxed_slice(), Arc::new(n), bound);
    }

    #[test]
    fn the_cache_holds_its_bound_and_drops_the_least_recently_used_one_past_it() {
        let cache = Rendered::default();
        for n in 0..3 {
            rendered_with(n, 3, &cache);
        }
        assert_eq!(cache.len(), 3, "at the bound, all are kept");
        // View 0 is used again: view 1 is now the least recently used.
        assert_eq!(cache.get(&[0]).as_deref(), Some(&0));
        rendered_with(3, 3, &cache);
        assert_eq!(cache.len(), 3, "one past the bound evicts, never grows");
        assert!(
            cache.get(&[1]).is_none(),
            "the least recently used view is dropped"
        );
        assert!(cache.get(&[0]).is_some() && cache.get(&[3]).is_some());
    }

    #[test]
    fn a_view_cached_twice_keeps_the_first_rendering() {
        let cache = Rendered::default();
        let first = cache.insert(vec![7].into(), Arc::new(1), 2);
        let second = cache.insert(vec![7].into(), Arc::new(2), 2);
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(*second, 1);
        assert_eq!(cache.len(), 1);
    }
}
