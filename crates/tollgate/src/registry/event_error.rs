//! [`CatalogEventError`]: why a catalog event was not published or not applied everywhere. Its
//! kind, the count of instances it concerns and, when refused by a check, the rule broken; never
//! the payload or the event's name. Knows nothing of how events travel.

use std::fmt;

use crate::facts::error::{BuildError, BuildErrorKind};

/// What went wrong publishing a catalog event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CatalogEventErrorKind {
    /// No handler is registered under the event's name.
    UnknownEvent,
    /// The payload is over the bound, or could not be read back.
    TooLarge,
    /// The handler or the change's checks refused it; nothing changed.
    Refused,
    /// Live instances did not apply it within the acknowledgement timeout (it is logged, and
    /// they apply it when they catch up).
    NotAcknowledged,
    /// Live instances refused it (their code differs from this instance's).
    RefusedElsewhere,
    /// PostgreSQL failed or did not answer in time.
    Backend,
}

/// A catalog event's failure: its kind, the instances it concerns and, when refused, the rule
/// broken; never the payload.
///
/// # Examples
///
/// ```
/// use tollgate::endpoint::{CatalogEventError, CatalogEventErrorKind};
///
/// let error = CatalogEventError::new(CatalogEventErrorKind::UnknownEvent);
/// assert_eq!(error.to_string(), "no handler is registered for this catalog event");
/// assert_eq!(error.count(), 0);
/// ```
#[derive(Clone, Debug)]
pub struct CatalogEventError {
    kind: CatalogEventErrorKind,
    count: u64,
    refused: Option<BuildError>,
}

impl CatalogEventError {
    /// An error of `kind`.
    pub const fn new(kind: CatalogEventErrorKind) -> Self {
        Self {
            kind,
            count: 0,
            refused: None,
        }
    }

    pub(super) fn refused(error: BuildError) -> Self {
        Self {
            kind: CatalogEventErrorKind::Refused,
            count: 0,
            refused: Some(error),
        }
    }

    #[cfg(feature = "postgres")]
    pub(super) fn with_count(mut self, count: u64) -> Self {
        self.count = count;
        self
    }

    /// What failed.
    pub const fn kind(&self) -> CatalogEventErrorKind {
        self.kind
    }

    /// For [`NotAcknowledged`](CatalogEventErrorKind::NotAcknowledged) and
    /// [`RefusedElsewhere`](CatalogEventErrorKind::RefusedElsewhere), how many live instances
    /// did not apply the event; else 0.
    pub const fn count(&self) -> u64 {
        self.count
    }

    /// For [`Refused`](CatalogEventErrorKind::Refused), the rule the change broke (as
    /// [`Catalogs::apply`](crate::endpoint::Catalogs::apply) reports it), when a change was made.
    pub fn build_error(&self) -> Option<&BuildError> {
        self.refused.as_ref()
    }

    /// The kind of the broken rule, when refused by a check.
    pub fn build_error_kind(&self) -> Option<BuildErrorKind> {
        self.refused.as_ref().map(BuildError::kind)
    }
}

impl fmt::Display for CatalogEventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            CatalogEventErrorKind::UnknownEvent => {
                f.write_str("no handler is registered for this catalog event")
            }
            CatalogEventErrorKind::TooLarge => f.write_str("catalog event payload is too large"),
            CatalogEventErrorKind::Refused => f.write_str("catalog event refused"),
            CatalogEventErrorKind::NotAcknowledged => write!(
                f,
                "catalog event not applied in time by {} live instance(s)",
                self.count
            ),
            CatalogEventErrorKind::RefusedElsewhere => write!(
                f,
                "catalog event refused by {} live instance(s)",
                self.count
            ),
            CatalogEventErrorKind::Backend => f.write_str("catalog event bus backend failed"),
        }
    }
}

impl std::error::Error for CatalogEventError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.refused
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
