//! Who admission accepted: [`AdmissionIdentity`], its principal and, when a token granted them,
//! its scopes, the claims the deployment chose to keep and the moment the credential expires
//! (which ends the streams and listens it opened).
//!
//! Knows nothing of how an identity was established (API key, bearer token, the process's
//! owner): that is the admission controller's business.

use std::sync::Arc;
use std::time::SystemTime;

use tollgate_json::{JsonObject, JsonValue};

/// The identity admission accepted for this request. Until an admission controller is
/// configured, every request is admitted as [`AdmissionIdentity::anonymous`].
///
/// An identity names its principal (the partition for rate limits, the owner of 2025 sessions
/// and tasks) and, when it came from an access token, the scopes the token granted and the
/// claims kept from it, and until when the credential holds ([`expires_at`](Self::expires_at):
/// a 2025 `GET` stream or a 2026-07-28 `subscriptions/listen` opened under it ends then). Scopes
/// matter to operations that require them
/// (`ToolBuilder::required_scopes` and the same on prompts and resources): an identity with no
/// granted scopes satisfies none.
///
/// # Examples
///
/// ```
/// use tollgate::policy::AdmissionIdentity;
/// use tollgate::json::JsonObject;
///
/// let who = AdmissionIdentity::principal("user-17")
///     .with_scopes(["catalog:read", "catalog:write"])
///     .with_claims(JsonObject::builder().insert("tenant", "acme").build());
/// assert_eq!(who.principal_name(), Some("user-17"));
/// assert!(who.has_scope("catalog:write"));
/// assert_eq!(who.claim("tenant").and_then(|v| v.as_str()), Some("acme"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct AdmissionIdentity {
    principal: Option<Arc<str>>,
    grant: Option<Arc<Grant>>,
    expires: Option<SystemTime>,
}

/// What a token granted: its scopes and the kept claims.
#[derive(Debug, PartialEq, Eq, Hash, Default)]
struct Grant {
    scopes: Box<[Arc<str>]>,
    claims: JsonObject,
}

impl AdmissionIdentity {
    /// The identity of an unauthenticated, admitted caller.
    pub fn anonymous() -> Self {
        Self {
            principal: None,
            grant: None,
            expires: None,
        }
    }

    /// An identity naming an authenticated principal.
    pub fn principal(name: impl Into<Arc<str>>) -> Self {
        Self {
            principal: Some(name.into()),
            grant: None,
            expires: None,
        }
    }

    /// The same identity with these granted scopes (replacing any it had; duplicates are kept
    /// once).
    #[must_use]
    pub fn with_scopes<S: Into<Arc<str>>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        let mut list: Vec<Arc<str>> = Vec::new();
        for scope in scopes {
            let scope = scope.into();
            if !list.contains(&scope) {
                list.push(scope);
            }
        }
        let claims = self.claims().cloned().unwrap_or_default();
        self.grant = Some(Arc::new(Grant {
            scopes: list.into_boxed_slice(),
            claims,
        }));
        self
    }

    /// The same identity keeping these claims (replacing any it had).
    #[must_use]
    pub fn with_claims(mut self, claims: JsonObject) -> Self {
        let scopes = self
            .grant
            .as_ref()
            .map(|g| g.scopes.clone())
            .unwrap_or_default();
        self.grant = Some(Arc::new(Grant { scopes, claims }));
        self
    }

    /// The same identity, its credential expiring at `at` (an access token's `exp`). What it
    /// opens that outlives a request ends then: a 2025 session's `GET` stream closes, and a
    /// 2026-07-28 `subscriptions/listen` answers its graceful completion result, so the client
    /// opens it again with a fresh token. `auth::BearerAuth` (feature `oauth`) sets it from
    /// the token; an identity without one holds until the stream ends otherwise.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use tollgate::policy::AdmissionIdentity;
    ///
    /// let at = SystemTime::now() + Duration::from_secs(300);
    /// let who = AdmissionIdentity::principal("user-17").with_expiry(at);
    /// assert_eq!(who.expires_at(), Some(at));
    /// assert_eq!(AdmissionIdentity::principal("user-17").expires_at(), None);
    /// ```
    #[must_use]
    pub fn with_expiry(mut self, at: SystemTime) -> Self {
        self.expires = Some(at);
        self
    }

    /// When the credential this identity was admitted with expires (`None`: never, as far as
    /// admission said).
    pub fn expires_at(&self) -> Option<SystemTime> {
        self.expires
    }

    /// How long the credential still holds from now, on tokio's clock (`None`: no expiry;
    /// zero: expired already). A stream or listen opened under it sleeps this long at most.
    pub(crate) fn expires_in(&self) -> Option<std::time::Duration> {
        self.expires
            .map(|at| at.duration_since(SystemTime::now()).unwrap_or_default())
    }

    /// The principal, or `None` when anonymous.
    pub fn principal_name(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    /// The granted scopes, in the order they were granted (empty when none were).
    pub fn scopes(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.grant
            .as_deref()
            .map_or(&[][..], |g| &g.scopes[..])
            .iter()
            .map(|s| &**s)
    }

    /// Whether `scope` was granted (exactly; hierarchies are the protected resource's, see
    /// `ProtectedResource::scope_implies`).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes().any(|s| s == scope)
    }

    /// The kept claims, when a token granted this identity.
    pub fn claims(&self) -> Option<&JsonObject> {
        self.grant.as_deref().map(|g| &g.claims)
    }

    /// One kept claim.
    pub fn claim(&self, name: &str) -> Option<&JsonValue> {
        self.claims()?.get(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_and_claims_compose() {
        let who = AdmissionIdentity::principal("p")
            .with_claims(JsonObject::builder().insert("a", 1).build())
            .with_scopes(["x", "y", "x"]);
        assert_eq!(who.scopes().collect::<Vec<_>>(), ["x", "y"]);
        assert!(who.claim("a").is_some());
        assert!(!AdmissionIdentity::anonymous().has_scope("x"));
        assert_eq!(AdmissionIdentity::anonymous().scopes().len(), 0);
    }
}
