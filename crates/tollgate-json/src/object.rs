//! Immutable shared objects: ordered members, unique names, and logarithmic lookup.

use std::collections::HashMap;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use crate::string::JsonString;
use crate::value::JsonValue;

/// Objects with at most this many members are searched linearly; larger ones carry a sorted index.
const LINEAR_MEMBERS: usize = 12;

/// An immutable JSON object, cheap to clone (shared storage).
///
/// Members keep the order in which they were read or inserted, and names are unique: the reader
/// rejects a duplicate name, and the builder replaces a repeated name's value in place. Lookup by
/// name is logarithmic for large objects (a sorted index, immune to hash flooding).
///
/// Equality ignores member order, as JSON object equality does.
///
/// # Examples
///
/// ```
/// use tollgate_json::{JsonObject, JsonValue};
///
/// let obj = JsonObject::builder()
///     .insert("b", 1)
///     .insert("a", "x")
///     .insert("b", 2)
///     .build();
/// let names: Vec<&str> = obj.keys().collect();
/// assert_eq!(names, ["b", "a"]);
/// assert_eq!(obj.get("b"), Some(&JsonValue::from(2)));
/// ```
#[derive(Clone)]
pub struct JsonObject(Repr);

/// An object's storage: a small one is its members alone, in one allocation; a large one also
/// keeps their positions sorted by name.
#[derive(Clone)]
enum Repr {
    /// At most [`LINEAR_MEMBERS`] members, searched in order.
    Small(Arc<[(JsonString, JsonValue)]>),
    Large(Arc<Inner>),
}

struct Inner {
    members: Box<[(JsonString, JsonValue)]>,
    /// Member positions sorted by name.
    index: Box<[u32]>,
}

/// Whether two of at most [`LINEAR_MEMBERS`] members share a name.
fn repeats_a_name(members: &[(JsonString, JsonValue)]) -> bool {
    (1..members.len()).any(|i| members[..i].iter().any(|(k, _)| *k == members[i].0))
}

impl JsonObject {
    /// An empty object. Every empty object shares one allocation, made once.
    pub fn new() -> Self {
        static EMPTY: std::sync::LazyLock<Arc<[(JsonString, JsonValue)]>> =
            std::sync::LazyLock::new(|| Arc::from([]));
        Self(Repr::Small(Arc::clone(&EMPTY)))
    }

    /// A builder that keeps insertion order.
    pub fn builder() -> JsonObjectBuilder {
        JsonObjectBuilder::default()
    }

    /// Builds an object from members whose names must be unique; `None` on a duplicate name.
    pub(crate) fn from_unique(members: Vec<(JsonString, JsonValue)>) -> Option<Self> {
        if members.len() <= LINEAR_MEMBERS {
            if repeats_a_name(&members) {
                return None;
            }
            return Some(Self(Repr::Small(Arc::from(members))));
        }
        let members = members.into_boxed_slice();
        let index = {
            let count = u32::try_from(members.len()).ok()?;
            let mut index: Vec<u32> = (0..count).collect();
            index.sort_unstable_by(|&a, &b| {
                members[a as usize]
                    .0
                    .as_str()
                    .cmp(members[b as usize].0.as_str())
            });
            if index
                .windows(2)
                .any(|w| members[w[0] as usize].0 == members[w[1] as usize].0)
            {
                return None;
            }
            index.into_boxed_slice()
        };
        Some(Self(Repr::Large(Arc::new(Inner { members, index }))))
    }

    /// [`from_unique`](Self::from_unique) for the members of `members` from `start` on (the
    /// reader's working stack), which it takes, also when it answers `None` for a repeated name
    /// (a `start` past the end takes nothing and answers `None`): a small object's are moved
    /// straight into its one allocation.
    pub(crate) fn from_unique_tail(
        members: &mut Vec<(JsonString, JsonValue)>,
        start: usize,
    ) -> Option<Self> {
        let tail = members.get(start..)?;
        if tail.len() > LINEAR_MEMBERS {
            return Self::from_unique(members.drain(start..).collect());
        }
        if repeats_a_name(tail) {
            members.truncate(start);
            return None;
        }
        Some(Self(Repr::Small(members.drain(start..).collect())))
    }

    fn members_slice(&self) -> &[(JsonString, JsonValue)] {
        match &self.0 {
            Repr::Small(members) => members,
            Repr::Large(inner) => &inner.members,
        }
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.members_slice().len()
    }

    /// Whether the object has no members.
    pub fn is_empty(&self) -> bool {
        self.members_slice().is_empty()
    }

    /// The value of the member named `name`.
    pub fn get(&self, name: &str) -> Option<&JsonValue> {
        let members = self.members_slice();
        self.position(name)
            .and_then(|i| members.get(i))
            .map(|(_, v)| v)
    }

    /// Whether a member is named `name`.
    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    fn position(&self, name: &str) -> Option<usize> {
        match &self.0 {
            Repr::Small(members) => members.iter().position(|(k, _)| k.as_str() == name),
            Repr::Large(inner) => {
                let (members, index) = (&inner.members, &inner.index);
                index
                    .binary_search_by(|&i| members[i as usize].0.as_str().cmp(name))
                    .ok()
                    .map(|p| index[p] as usize)
            }
        }
    }

    /// The members in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&JsonString, &JsonValue)> + '_ {
        self.members_slice().iter().map(|(k, v)| (k, v))
    }

    /// The member names in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.members_slice().iter().map(|(k, _)| k.as_str())
    }

    /// The members as a slice, in order.
    pub fn members(&self) -> &[(JsonString, JsonValue)] {
        self.members_slice()
    }

    /// A builder holding this object's members, to derive a changed copy.
    pub fn to_builder(&self) -> JsonObjectBuilder {
        let mut b = JsonObjectBuilder::default();
        for (k, v) in self.iter() {
            b = b.insert(k.clone(), v.clone());
        }
        b
    }
}

impl Default for JsonObject {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for JsonObject {
    fn eq(&self, other: &Self) -> bool {
        let same = match (&self.0, &other.0) {
            (Repr::Small(a), Repr::Small(b)) => Arc::ptr_eq(a, b),
            (Repr::Large(a), Repr::Large(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same || (self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v)))
    }
}

impl Eq for JsonObject {}

impl Hash for JsonObject {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Order-independent, to agree with equality: a sum of per-member hashes.
        let mut sum = 0u64;
        for (k, v) in self.iter() {
            let mut h = DefaultHasher::new();
            k.hash(&mut h);
            v.hash(&mut h);
            sum = sum.wrapping_add(h.finish());
        }
        state.write_usize(self.len());
        state.write_u64(sum);
    }
}

impl fmt::Debug for JsonObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Builds a [`JsonObject`], keeping insertion order. Inserting a name again replaces its value
/// and keeps its first position.
#[derive(Default)]
pub struct JsonObjectBuilder {
    members: Vec<(JsonString, JsonValue)>,
    positions: HashMap<JsonString, usize>,
}

impl JsonObjectBuilder {
    /// Inserts or replaces a member.
    #[must_use]
    pub fn insert(mut self, name: impl Into<JsonString>, value: impl Into<JsonValue>) -> Self {
        self.push(name, value);
        self
    }

    /// Inserts or replaces a member, by reference.
    pub fn push(&mut self, name: impl Into<JsonString>, value: impl Into<JsonValue>) {
        let (name, value) = (name.into(), value.into());
        let existing = if self.members.len() <= LINEAR_MEMBERS {
            self.members.iter().position(|(k, _)| *k == name)
        } else {
            if self.positions.is_empty() {
                for (i, (k, _)) in self.members.iter().enumerate() {
                    self.positions.insert(k.clone(), i);
                }
            }
            self.positions.get(&name).copied()
        };
        match existing {
            Some(i) => self.members[i].1 = value,
            None => {
                if !self.positions.is_empty() {
                    self.positions.insert(name.clone(), self.members.len());
                }
                self.members.push((name, value));
            }
        }
    }

    /// The number of members so far.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether no member was inserted.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Finishes the object.
    pub fn build(self) -> JsonObject {
        // Names are unique by construction, so this cannot fail.
        JsonObject::from_unique(self.members).unwrap_or_default()
    }
}

impl<K: Into<JsonString>, V: Into<JsonValue>> FromIterator<(K, V)> for JsonObject {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut b = JsonObjectBuilder::default();
        for (k, v) in iter {
            b.push(k, v);
        }
        b.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small object is its members alone, a shared slice like a string's: a value is no larger
    /// for holding one (three words, as before the object had two representations).
    #[test]
    fn an_object_is_no_larger_than_a_string() {
        assert_eq!(size_of::<JsonObject>(), size_of::<JsonString>());
        assert!(size_of::<JsonValue>() <= 24);
    }

    #[test]
    fn a_tail_of_the_stack_becomes_an_object_at_the_bound_and_past_it() {
        for n in [0, 1, LINEAR_MEMBERS, LINEAR_MEMBERS + 1, 40] {
            let mut stack: Vec<(JsonString, JsonValue)> =
                vec![(JsonString::from("below"), JsonValue::Null)];
            stack.extend((0..n).map(|i| (JsonString::from(format!("k{i}")), JsonValue::from(i))));
            let obj = JsonObject::from_unique_tail(&mut stack, 1).unwrap();
            assert_eq!(stack.len(), 1, "the tail was taken");
            assert_eq!(obj.len(), n);
            for i in 0..n {
                assert_eq!(obj.get(&format!("k{i}")), Some(&JsonValue::from(i)));
                assert_eq!(obj.members()[i].0.as_str(), format!("k{i}"));
            }
            assert_eq!(obj.get("below"), None);
            assert_eq!(obj, obj.to_builder().build());
            // A repeated name, the last member's: refused, and the tail taken all the same.
            stack.extend((0..n).map(|i| (JsonString::from(format!("k{i}")), JsonValue::Null)));
            stack.push((JsonString::from("k0"), JsonValue::Null));
            assert_eq!(JsonObject::from_unique_tail(&mut stack, 1).is_none(), n > 0);
            assert_eq!(stack.len(), 1);
        }
        let mut stack = Vec::new();
        assert!(
            JsonObject::from_unique_tail(&mut stack, 1).is_none(),
            "past the end"
        );
    }

    #[test]
    fn large_objects_use_the_index() {
        let obj: JsonObject = (0..1000).map(|i| (format!("k{i}"), i)).collect();
        assert_eq!(obj.len(), 1000);
        assert_eq!(obj.get("k999"), Some(&JsonValue::from(999)));
        assert_eq!(obj.get("k1000"), None);
        assert_eq!(obj.keys().next(), Some("k0"));
    }

    #[test]
    fn builder_replaces_in_place_past_the_linear_threshold() {
        let mut b = JsonObject::builder();
        for i in 0..40 {
            b.push(format!("k{i}"), i);
        }
        b.push("k3", "again");
        b.push("k39", "last");
        let obj = b.build();
        assert_eq!(obj.len(), 40);
        assert_eq!(obj.members()[3].1, JsonValue::from("again"));
        assert_eq!(obj.members()[39].1, JsonValue::from("last"));
    }

    #[test]
    fn duplicates_are_refused() {
        let dup = |n: usize| {
            let mut m: Vec<(JsonString, JsonValue)> = (0..n)
                .map(|i| (JsonString::from(format!("k{i}")), JsonValue::Null))
                .collect();
            m.push((JsonString::from("k0"), JsonValue::Null));
            JsonObject::from_unique(m)
        };
        assert!(dup(3).is_none());
        assert!(dup(100).is_none());
    }

    #[test]
    fn equality_ignores_order_and_hash_agrees() {
        let a: JsonObject = [("x", 1), ("y", 2)].into_iter().collect();
        let b: JsonObject = [("y", 2), ("x", 1)].into_iter().collect();
        assert_eq!(a, b);
        let hash = |o: &JsonObject| {
            let mut h = DefaultHasher::new();
            o.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&a), hash(&b));
    }
}
