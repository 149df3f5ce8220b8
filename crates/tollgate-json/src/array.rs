//! Immutable shared arrays.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use crate::value::JsonValue;

/// An immutable JSON array, cheap to clone (shared storage). Order is kept as built or read.
///
/// # Examples
///
/// ```
/// use tollgate_json::{JsonArray, JsonValue};
/// let a: JsonArray = vec![JsonValue::from(1), JsonValue::from("two")].into();
/// assert_eq!(a.len(), 2);
/// assert_eq!(a[1].as_str(), Some("two"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct JsonArray(Arc<[JsonValue]>);

impl JsonArray {
    /// An empty array.
    pub fn new() -> Self {
        Self(Arc::from(Vec::new()))
    }

    /// The elements.
    pub fn as_slice(&self) -> &[JsonValue] {
        &self.0
    }

    pub(crate) fn from_arc(items: Arc<[JsonValue]>) -> Self {
        Self(items)
    }
}

impl Default for JsonArray {
    fn default() -> Self {
        Self::new()
    }
}

impl Deref for JsonArray {
    type Target = [JsonValue];
    fn deref(&self) -> &[JsonValue] {
        &self.0
    }
}

impl From<Vec<JsonValue>> for JsonArray {
    fn from(items: Vec<JsonValue>) -> Self {
        Self(Arc::from(items))
    }
}

impl FromIterator<JsonValue> for JsonArray {
    fn from_iter<I: IntoIterator<Item = JsonValue>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a JsonArray {
    type Item = &'a JsonValue;
    type IntoIter = std::slice::Iter<'a, JsonValue>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Debug for JsonArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}
