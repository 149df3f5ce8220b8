//! Resource read fallbacks: a handler for the URIs under a fixed prefix that no exact resource
//! or template of the catalog routes (a gateway's `PREFIX+uri` for a URI its upstream sent but
//! does not list). Owns [`ResourceFallback`], its prefix check and its routing. A fallback is
//! never listed (no `resources/list` or `resources/templates/list` entry) and cannot be
//! subscribed to; on its revisions the endpoint offers resources (the registry declares the
//! capability). Knows nothing of catalogs, transports or sessions.

use std::fmt;
use std::sync::Arc;

use super::template::{MAX_TEMPLATE_BYTES, MAX_TEMPLATE_ROUTED_URI_BYTES, is_literal};
use super::{ResourceBuilder, ResourceHandlerStage, ResourceInner};
use crate::facts::error::{BuildError, BuildErrorKind};
use crate::version::{ProtocolVersion, ProtocolVersions};

/// The address of a fallback: the prefix of the URIs it reads (a type parameter of
/// [`ResourceHandlerStage`]).
#[derive(Debug)]
pub struct Prefix(Arc<str>);

/// An immutable read fallback: the handler of every URI starting with its prefix that no exact
/// resource and no template routes, consulted after both (fallbacks in registration order).
/// It is not listed anywhere and cannot be subscribed to; on the revisions it serves, the
/// endpoint offers resources (the `resources` capability is declared and `resources/read`
/// answered even when nothing is listed). A read through it passes the same
/// checks a template's does: its required scopes, request state bound to the URI, the output
/// limits, and [`ResourceOutput::not_found`](super::ResourceOutput::not_found) answered as the
/// revision's "Resource not found" (the URI never echoed). A URI longer than
/// [`MAX_TEMPLATE_ROUTED_URI_BYTES`] is not routed to it, as to a template.
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use tollgate::{InvocationFeatures, ProtocolVersion, RequestContext};
/// use tollgate::resource::{ResourceFallback, ResourceOutput, ResourceRequest};
///
/// async fn unlisted(
///     _: &RequestContext,
///     _: ResourceRequest,
///     _: &InvocationFeatures,
/// ) -> Result<ResourceOutput, Infallible> {
///     Ok(ResourceOutput::not_found())
/// }
///
/// let fallback = ResourceFallback::with_prefix("docs+", "Docs", [ProtocolVersion::V2026_07_28])
///     .handler(unlisted)
///     .build()?;
/// assert_eq!(fallback.prefix(), "docs+");
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct ResourceFallback {
    pub(crate) prefix: Arc<str>,
    pub(crate) inner: Arc<ResourceInner>,
}

impl fmt::Debug for ResourceFallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceFallback")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl ResourceFallback {
    /// Starts a fallback for the URIs starting with `prefix` (1 to 8,192 bytes of RFC 6570
    /// literal characters: no space, quote, `<`, `>`, `\`, `^`, backquote, `{`, `|`, `}` or
    /// control character), called `name` (never listed; it names the fallback in errors).
    pub fn with_prefix(
        prefix: impl Into<Arc<str>>,
        name: impl Into<Arc<str>>,
        revisions: impl Into<ProtocolVersions>,
    ) -> ResourceHandlerStage<Prefix> {
        ResourceHandlerStage {
            address: Prefix(prefix.into()),
            name: name.into(),
            revisions: revisions.into(),
        }
    }

    /// The prefix of the URIs it reads.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The revisions it is served on.
    pub fn revisions(&self) -> ProtocolVersions {
        self.inner.revisions
    }
}

impl ResourceBuilder<Prefix> {
    /// Finishes the fallback. Its metadata (title, description, MIME type, size, icons) is
    /// never rendered: a fallback is not listed.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::EmptyRevisions`], or [`BuildErrorKind::InvalidResource`] for an empty
    /// prefix, one longer than 8,192 bytes or holding a character outside RFC 6570's literals,
    /// an empty name, or a malformed media type.
    pub fn build(self) -> Result<ResourceFallback, BuildError> {
        let prefix = self.address.0.clone();
        let fail = |kind| BuildError::new(kind).resource(&prefix);
        if prefix.is_empty() || prefix.len() > MAX_TEMPLATE_BYTES || !prefix.bytes().all(is_literal)
        {
            return Err(fail(BuildErrorKind::InvalidResource));
        }
        let (Prefix(prefix), inner) = self.inner(fail)?;
        Ok(ResourceFallback {
            prefix,
            inner: Arc::new(inner),
        })
    }
}

/// The revisions any of `fallbacks` is served on: there the endpoint offers resources.
pub(crate) fn revisions(fallbacks: &[ResourceFallback]) -> ProtocolVersions {
    fallbacks
        .iter()
        .flat_map(|f| f.revisions().iter())
        .collect()
}

/// The first fallback (in registration order) served on `revision` whose prefix starts `uri`;
/// none for a URI longer than a template may route.
pub(crate) fn route<'e>(
    uri: &str,
    revision: ProtocolVersion,
    fallbacks: &'e [ResourceFallback],
) -> Option<&'e ResourceFallback> {
    if uri.len() > MAX_TEMPLATE_ROUTED_URI_BYTES {
        return None;
    }
    fallbacks
        .iter()
        .find(|f| f.revisions().contains(revision) && uri.starts_with(&*f.prefix))
}

/// An endpoint's fallbacks: each within the endpoint's `revisions`
/// ([`BuildErrorKind::RevisionOutsideEndpoint`]), no prefix twice
/// ([`BuildErrorKind::DuplicateResource`]), and scopes only on a protected endpoint
/// ([`BuildErrorKind::InvalidAuthorization`]), as for templates.
pub(crate) fn check(
    fallbacks: &[ResourceFallback],
    revisions: ProtocolVersions,
    protected: bool,
) -> Result<(), BuildError> {
    let mut prefixes = std::collections::HashSet::with_capacity(fallbacks.len());
    for fallback in fallbacks {
        let fail = |kind| Err(BuildError::new(kind).resource(&fallback.prefix));
        if !fallback.revisions().is_subset_of(revisions) {
            return fail(BuildErrorKind::RevisionOutsideEndpoint);
        }
        if !prefixes.insert(&*fallback.prefix) {
            return fail(BuildErrorKind::DuplicateResource);
        }
        if !protected && !fallback.inner.required_scopes.is_empty() {
            return fail(BuildErrorKind::InvalidAuthorization);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::model::resource::ResourceOutput;
    use crate::{InvocationFeatures, RequestContext, resource::ResourceRequest};

    const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;

    async fn nothing(
        _: &RequestContext,
        _: ResourceRequest,
        _: &InvocationFeatures,
    ) -> Result<ResourceOutput, std::convert::Infallible> {
        Ok(ResourceOutput::not_found())
    }

    fn fallback(prefix: &str) -> Result<ResourceFallback, BuildError> {
        ResourceFallback::with_prefix(prefix, "f", [V26])
            .handler(nothing)
            .build()
    }

    #[test]
    fn a_prefix_is_1_to_8192_literal_bytes() {
        assert!(fallback("").is_err());
        assert!(fallback(&"a".repeat(MAX_TEMPLATE_BYTES)).is_ok());
        let long = fallback(&"a".repeat(MAX_TEMPLATE_BYTES + 1)).unwrap_err();
        assert_eq!(long.kind(), BuildErrorKind::InvalidResource);
        for bad in ["a b", "a{b", "a}", "a\n", "a\"", "a<", "a|"] {
            assert!(fallback(bad).is_err(), "{bad:?}");
        }
        assert!(fallback("ev+").is_ok());
    }

    #[test]
    fn routes_uris_under_its_prefix_on_its_revisions() {
        let fallbacks = [fallback("a+").unwrap(), fallback("a").unwrap()];
        let routed = |uri| route(uri, V26, &fallbacks).map(ResourceFallback::prefix);
        assert_eq!(routed("a+x://y"), Some("a+"));
        assert_eq!(routed("ab://y"), Some("a"));
        assert_eq!(routed("b+a://y"), None);
        assert!(route("a+x", ProtocolVersion::V2025_11_25, &fallbacks).is_none());
    }

    #[test]
    fn a_uri_is_routed_up_to_the_template_bound_not_past_it() {
        let fallbacks = [fallback("a+").unwrap()];
        let at = format!("a+{}", "x".repeat(MAX_TEMPLATE_ROUTED_URI_BYTES - 2));
        assert!(route(&at, V26, &fallbacks).is_some());
        let past = format!("{at}x");
        assert!(route(&past, V26, &fallbacks).is_none());
    }
}
