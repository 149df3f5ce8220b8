//! Protocol revisions: the exact `ProtocolVersion` values a tool or endpoint selects.
//!
//! Owns the revision names and their wire spelling. Knows nothing of what each revision's
//! methods are; the method table (`wire/method.rs`) and the revisions' gates own that.

use std::fmt;

/// An exact MCP protocol revision.
///
/// Registrations name the revisions they serve; nothing selects "the latest" implicitly.
///
/// # Examples
///
/// ```
/// use tollgate::ProtocolVersion;
///
/// assert_eq!(ProtocolVersion::V2026_07_28.as_str(), "2026-07-28");
/// assert_eq!(ProtocolVersion::from_wire("2026-07-28"), Some(ProtocolVersion::V2026_07_28));
/// assert_eq!(ProtocolVersion::from_wire("2026-07-28 "), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// `2024-11-05`: `initialize` and sessions, served over stdio only (its HTTP+SSE transport
    /// is deprecated and not served).
    V2024_11_05,
    /// `2025-03-26`: the first Streamable HTTP revision, with JSON-RPC batches.
    V2025_03_26,
    /// `2025-06-18`.
    V2025_06_18,
    /// `2025-11-25`.
    V2025_11_25,
    /// `2026-07-28`: stateless, with per-request `_meta` and `server/discover`.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every revision Tollgate knows, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];

    /// The wire spelling, e.g. `"2026-07-28"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// The revision with exactly this spelling.
    pub fn from_wire(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == text)
    }

    const fn bit(self) -> u8 {
        1 << self.rank()
    }

    /// The revision's place, oldest first (its index in [`Self::ALL`]).
    pub(crate) const fn rank(self) -> usize {
        match self {
            Self::V2024_11_05 => 0,
            Self::V2025_03_26 => 1,
            Self::V2025_06_18 => 2,
            Self::V2025_11_25 => 3,
            Self::V2026_07_28 => 4,
        }
    }

    /// Whether the revision is served over Streamable HTTP (every one but 2024-11-05, whose
    /// HTTP+SSE transport is deprecated and not served).
    pub(crate) const fn on_http(self) -> bool {
        !matches!(self, Self::V2024_11_05)
    }

    /// Whether the revision carries `title` fields, `_meta` on descriptors and content blocks,
    /// `lastModified` annotations, structured tool output with output schemas, resource links
    /// and elicitation (2025-06-18 on).
    pub(crate) const fn carries_titles_and_structure(self) -> bool {
        self.rank() >= Self::V2025_06_18.rank()
    }

    /// Whether the revision carries icons and an implementation's description and website
    /// (2025-11-25 on).
    pub(crate) const fn carries_icons(self) -> bool {
        self.rank() >= Self::V2025_11_25.rank()
    }

    /// Whether the revision carries tool annotations, audio content and the `completions`
    /// capability (2025-03-26 on).
    pub(crate) const fn carries_annotations_and_audio(self) -> bool {
        self.rank() >= Self::V2025_03_26.rank()
    }

    /// Whether the revision has the experimental, requestor-driven tasks of 2025-11-25 (a
    /// `tools/call` with a `task` member, `tasks/get`, `tasks/result`, `tasks/cancel`), as
    /// opposed to 2026-07-28's tasks extension.
    pub(crate) const fn has_requested_tasks(self) -> bool {
        matches!(self, Self::V2025_11_25)
    }

    /// Whether invalid tool arguments are a JSON-RPC -32602 error rather than a tool error
    /// result (up to 2025-06-18).
    pub(crate) const fn arguments_error_is_protocol_error(self) -> bool {
        self.rank() <= Self::V2025_06_18.rank()
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of [`ProtocolVersion`]s, iterated newest first.
///
/// # Examples
///
/// ```
/// use tollgate::{ProtocolVersion, endpoint::ProtocolVersions};
///
/// let set: ProtocolVersions = [ProtocolVersion::V2026_07_28].into_iter().collect();
/// assert!(set.contains(ProtocolVersion::V2026_07_28));
/// assert!(!set.contains(ProtocolVersion::V2025_06_18));
/// ```
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ProtocolVersions(u8);

impl ProtocolVersions {
    /// The empty set.
    pub const fn empty() -> Self {
        Self(0)
    }

    /// Whether `version` is in the set.
    pub const fn contains(self, version: ProtocolVersion) -> bool {
        self.0 & version.bit() != 0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether every member of `self` is in `other`.
    pub const fn is_subset_of(self, other: ProtocolVersions) -> bool {
        self.0 & !other.0 == 0
    }

    /// The set with `version` added.
    #[must_use]
    pub const fn with(self, version: ProtocolVersion) -> Self {
        Self(self.0 | version.bit())
    }

    /// The members, newest first.
    pub fn iter(self) -> impl Iterator<Item = ProtocolVersion> {
        ProtocolVersion::ALL
            .into_iter()
            .rev()
            .filter(move |v| self.contains(*v))
    }
}

impl FromIterator<ProtocolVersion> for ProtocolVersions {
    fn from_iter<I: IntoIterator<Item = ProtocolVersion>>(iter: I) -> Self {
        iter.into_iter().fold(Self::empty(), Self::with)
    }
}

impl From<ProtocolVersion> for ProtocolVersions {
    fn from(version: ProtocolVersion) -> Self {
        Self::empty().with(version)
    }
}

impl<const N: usize> From<[ProtocolVersion; N]> for ProtocolVersions {
    fn from(versions: [ProtocolVersion; N]) -> Self {
        versions.into_iter().collect()
    }
}

impl fmt::Debug for ProtocolVersions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(self.iter().map(ProtocolVersion::as_str))
            .finish()
    }
}

impl fmt::Display for ProtocolVersions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for v in self.iter() {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            f.write_str(v.as_str())?;
        }
        Ok(())
    }
}

/// Whether `revision` is one of the 2025 revisions (sessions, `initialize`, their projection and
/// statuses) rather than 2026-07-28.
pub(crate) const fn is_legacy(revision: ProtocolVersion) -> bool {
    !matches!(revision, ProtocolVersion::V2026_07_28)
}
