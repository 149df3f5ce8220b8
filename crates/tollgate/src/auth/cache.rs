//! Tokens already checked: each admitted identity kept under its token's SHA-256 (never the
//! token itself) until the token's validity ends, at most 5 minutes, in at most 10,000 entries.
//!
//! Knows nothing of how a token was checked.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use sha2::{Digest, Sha256};

use crate::facts::identity::AdmissionIdentity;

/// The most tokens remembered.
pub const MAX_CACHED_TOKENS: usize = 10_000;
/// The longest a checked token is reused without checking it again.
const MAX_REUSE: Duration = Duration::from_secs(300);

pub(crate) type TokenKey = [u8; 32];

/// Checked tokens by digest.
pub(crate) struct TokenCache {
    entries: Mutex<HashMap<TokenKey, (AdmissionIdentity, Instant)>>,
}

impl TokenCache {
    pub(crate) fn new() -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn key(token: &str) -> TokenKey {
        Sha256::digest(token.as_bytes()).into()
    }

    /// The identity a token was admitted as, while its reuse lasts.
    pub(crate) fn get(&self, key: &TokenKey) -> Option<AdmissionIdentity> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        match entries.get(key) {
            Some((identity, until)) if Instant::now() < *until => Some(identity.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Remembers `identity` until `until` (or 5 minutes, if sooner). When full, expired entries
    /// are dropped first; when none are, the token is not remembered.
    pub(crate) fn put(&self, key: TokenKey, identity: AdmissionIdentity, until: SystemTime) {
        let left = until
            .duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO)
            .min(MAX_REUSE);
        if left.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= MAX_CACHED_TOKENS && !entries.contains_key(&key) {
            entries.retain(|_, (_, until)| now < *until);
            if entries.len() >= MAX_CACHED_TOKENS {
                return;
            }
        }
        entries.insert(key, (identity, now + left));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_are_bounded() {
        let cache = TokenCache::new();
        let later = SystemTime::now() + Duration::from_secs(60);
        let who = AdmissionIdentity::principal("p");
        cache.put(
            TokenCache::key("past"),
            who.clone(),
            SystemTime::now() - Duration::from_secs(1),
        );
        assert!(cache.get(&TokenCache::key("past")).is_none());
        for n in 0..MAX_CACHED_TOKENS {
            cache.put(TokenCache::key(&n.to_string()), who.clone(), later);
        }
        assert_eq!(cache.len(), MAX_CACHED_TOKENS);
        cache.put(TokenCache::key("one past"), who.clone(), later);
        assert_eq!(cache.len(), MAX_CACHED_TOKENS);
        assert!(cache.get(&TokenCache::key("one past")).is_none());
        assert_eq!(cache.get(&TokenCache::key("0")), Some(who));
    }
}
