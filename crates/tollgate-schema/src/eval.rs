//! The Profile 1 evaluator: 2020-12 semantics for the profile's keywords, under an operation
//! budget, a recursion bound and a process-wide concurrency gate.
//!
//! Valid traversal builds no paths. A failure outside a suppressed branch (`anyOf` alternatives,
//! `if` conditions) creates one [`Diagnostic`], and the frames it unwinds through add their path
//! segments; suppressed branches fail with no allocation at all.

#[cfg(test)]
#[path = "eval_tests.rs"]
mod tests;

use std::cmp::Ordering;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};

use tollgate_json::{JsonObject, JsonValue};

use crate::compile::{
    CompiledSchema, KIND_SCHEMA, KIND_TRUE, Keywords, LINEAR_PROPERTIES, Node, NodeHeader, NodeId,
    Property, flags, name_tag, types,
};
use crate::error::{Diagnostic, ValidationError, ValidationErrorKind};
use crate::limits::SchemaLimits;

/// Bounds how many evaluations run at once. A call past the bound is refused immediately with
/// [`ValidationErrorKind::Busy`]; nothing queues.
///
/// [`CompiledSchema::validate`] uses the process-wide [`EvaluationGate::global`] gate (128
/// concurrent calls); a runtime may create its own with another bound and use
/// [`CompiledSchema::validate_in`].
///
/// # Examples
///
/// ```
/// use tollgate_schema::EvaluationGate;
/// static GATE: EvaluationGate = EvaluationGate::new(16);
/// assert_eq!(GATE.max_active(), 16);
/// ```
#[derive(Debug)]
pub struct EvaluationGate {
    active: AtomicUsize,
    max: usize,
}

static GLOBAL: EvaluationGate = EvaluationGate::new(EvaluationGate::DEFAULT_MAX_ACTIVE);

impl EvaluationGate {
    /// The default bound on concurrent evaluation calls.
    pub const DEFAULT_MAX_ACTIVE: usize = 128;

    /// A gate admitting at most `max_active` evaluations at once.
    pub const fn new(max_active: usize) -> Self {
        Self {
            active: AtomicUsize::new(0),
            max: max_active,
        }
    }

    /// The process-wide gate with the default bound.
    pub fn global() -> &'static Self {
        &GLOBAL
    }

    /// The bound.
    pub fn max_active(&self) -> usize {
        self.max
    }

    /// Evaluations running now.
    pub fn active(&self) -> usize {
        self.active.load(AtomicOrdering::Relaxed)
    }

    fn enter(&self) -> Option<EvaluationPermit<'_>> {
        // One atomic add; a call that lands past the bound gives its place straight back. The
        // count can overshoot briefly under contention, but admission never exceeds the bound.
        let permit = EvaluationPermit(self);
        if self.active.fetch_add(1, AtomicOrdering::Acquire) < self.max {
            Some(permit)
        } else {
            drop(permit);
            None
        }
    }

    /// Takes one place in the gate until the permit is dropped; `None` when the gate is full.
    /// For runtimes that reserve a place before a longer operation, and for tests.
    pub fn try_acquire(&self) -> Option<EvaluationPermit<'_>> {
        self.enter()
    }
}

/// One place in an [`EvaluationGate`], released on drop.
#[derive(Debug)]
pub struct EvaluationPermit<'a>(&'a EvaluationGate);

impl Drop for EvaluationPermit<'_> {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, AtomicOrdering::Release);
    }
}

impl CompiledSchema {
    /// Validates `instance` against the schema through the process-wide gate.
    ///
    /// # Errors
    ///
    /// [`ValidationErrorKind::Invalid`] with an internal [`Diagnostic`],
    /// [`ValidationErrorKind::BudgetExhausted`], or [`ValidationErrorKind::Busy`].
    pub fn validate(&self, instance: &JsonValue) -> Result<(), ValidationError> {
        self.validate_in(instance, EvaluationGate::global())
    }

    /// Validates `instance` through `gate`.
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate).
    pub fn validate_in(
        &self,
        instance: &JsonValue,
        gate: &EvaluationGate,
    ) -> Result<(), ValidationError> {
        let Some(_guard) = gate.enter() else {
            return Err(ValidationError::new(ValidationErrorKind::Busy, None));
        };
        let mut eval = Evaluator {
            headers: &self.0.node_headers,
            nodes: &self.0.nodes,
            remaining: self.0.limits.max_operations(),
        };
        match eval.visit(self.0.root, instance, 0, false) {
            Ok(()) => Ok(()),
            Err(Fail::Invalid(d)) => Err(ValidationError::new(ValidationErrorKind::Invalid, d)),
            Err(Fail::Exhausted) => Err(ValidationError::new(
                ValidationErrorKind::BudgetExhausted,
                None,
            )),
        }
    }
}

enum Fail {
    /// Invalid; the diagnostic is `None` inside suppressed branches.
    Invalid(Option<Box<Diagnostic>>),
    /// Budget or recursion bound exhausted: always propagates, never suppressed.
    Exhausted,
}

impl Fail {
    /// Adds an instance path segment while unwinding.
    fn within(mut self, segment: impl FnOnce() -> String) -> Self {
        if let Fail::Invalid(Some(d)) = &mut self {
            d.instance_path.push(segment());
        }
        self
    }
}

type Step = Result<(), Fail>;

struct Evaluator<'s> {
    headers: &'s [NodeHeader],
    nodes: &'s [Node],
    remaining: u64,
}

impl Evaluator<'_> {
    #[inline]
    fn charge(&mut self, ops: u64) -> Step {
        match self.remaining.checked_sub(ops) {
            Some(r) => {
                self.remaining = r;
                Ok(())
            }
            None => {
                self.remaining = 0;
                Err(Fail::Exhausted)
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn fail(k: &Keywords, keyword: &'static str, quiet: bool) -> Step {
        Err(Fail::Invalid((!quiet).then(|| {
            Box::new(Diagnostic {
                keyword,
                schema_location: k.location.to_string(),
                instance_path: Vec::new(),
            })
        })))
    }

    /// Visits a child schema: leaf schemas (only `type`, or `true`) are settled here, inline,
    /// without the full visit; everything else goes through [`node`](Self::node). The charge is
    /// the same either way.
    #[inline(always)]
    fn visit(&mut self, id: NodeId, v: &JsonValue, depth: usize, quiet: bool) -> Step {
        let h = self.headers[id as usize];
        if h.kind == KIND_SCHEMA && h.flags == 0 {
            self.charge(1)?;
            if h.types != 0 && h.types & instance_types(v) == 0 {
                return self.fail_at(id, "type", quiet);
            }
            return Ok(());
        }
        if h.kind == KIND_TRUE {
            return self.charge(1);
        }
        self.node(id, v, depth, quiet)
    }

    #[cold]
    #[inline(never)]
    fn fail_at(&self, id: NodeId, keyword: &'static str, quiet: bool) -> Step {
        match &self.nodes[id as usize] {
            Node::Schema(k) => Self::fail(k, keyword, quiet),
            _ => Err(Fail::Invalid(None)),
        }
    }

    fn node(&mut self, id: NodeId, v: &JsonValue, depth: usize, quiet: bool) -> Step {
        self.charge(1)?;
        if depth >= SchemaLimits::MAX_EVALUATION_DEPTH {
            return Err(Fail::Exhausted);
        }
        let k = match &self.nodes[id as usize] {
            Node::True => return Ok(()),
            Node::False(location) => {
                return Err(Fail::Invalid((!quiet).then(|| {
                    Box::new(Diagnostic {
                        keyword: "false",
                        schema_location: location.to_string(),
                        instance_path: Vec::new(),
                    })
                })));
            }
            Node::Schema(k) => k,
        };
        if k.types != 0 && k.types & instance_types(v) == 0 {
            return Self::fail(k, "type", quiet);
        }
        if k.flags == 0 {
            return Ok(());
        }
        if k.flags & flags::CONST != 0
            && let Some(c) = &k.constant
            && !self.equal(c, v)?
        {
            return Self::fail(k, "const", quiet);
        }
        if k.flags & flags::ENUM != 0 && !self.in_enum(k, v)? {
            return Self::fail(k, "enum", quiet);
        }
        if k.flags & flags::BOUNDS != 0
            && let JsonValue::Number(n) = v
        {
            if k.minimum
                .as_ref()
                .is_some_and(|m| n.cmp_value(m) == Ordering::Less)
            {
                return Self::fail(k, "minimum", quiet);
            }
            if k.maximum
                .as_ref()
                .is_some_and(|m| n.cmp_value(m) == Ordering::Greater)
            {
                return Self::fail(k, "maximum", quiet);
            }
        }
        match v {
            JsonValue::Object(o) if k.flags & flags::OBJECT != 0 => {
                self.object(k, o, depth, quiet)?;
            }
            JsonValue::Array(a) if k.flags & flags::ITEMS != 0 => {
                if let Some(items) = k.items {
                    for (i, item) in a.iter().enumerate() {
                        self.charge(1)?;
                        self.visit(items, item, depth + 1, quiet)
                            .map_err(|f| f.within(|| i.to_string()))?;
                    }
                }
            }
            _ => {}
        }
        if k.flags & flags::APPLICATORS == 0 {
            return Ok(());
        }
        self.applicators(k, v, depth, quiet)
    }

    /// Whether `v` is one of `k`'s `enum` values (compared by bytes when they are all strings),
    /// charging one operation per candidate tried (one for a non-string against strings).
    #[inline]
    fn in_enum(&mut self, k: &Keywords, v: &JsonValue) -> Result<bool, Fail> {
        if let Some(strings) = &k.string_enum {
            let JsonValue::String(s) = v else {
                self.charge(1)?;
                return Ok(false);
            };
            for candidate in strings.iter() {
                self.charge(1)?;
                if same_bytes(candidate.as_bytes(), s.as_bytes()) {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        if let Some(list) = &k.enumeration {
            for candidate in list.iter() {
                if self.equal(candidate, v)? {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        Ok(true)
    }

    /// The applicators of a schema that has some: `$ref`, `allOf`, `anyOf`, then
    /// `if`/`then`/`else`.
    #[inline]
    fn applicators(&mut self, k: &Keywords, v: &JsonValue, depth: usize, quiet: bool) -> Step {
        if let Some(target) = k.reference {
            self.charge(1)?;
            self.visit(target, v, depth + 1, quiet)?;
        }
        for &sub in k.all_of.iter() {
            self.visit(sub, v, depth + 1, quiet)?;
        }
        if !k.any_of.is_empty() {
            let mut matched = false;
            for &sub in k.any_of.iter() {
                match self.visit(sub, v, depth + 1, true) {
                    Ok(()) => {
                        matched = true;
                        break;
                    }
                    Err(Fail::Invalid(_)) => {}
                    Err(Fail::Exhausted) => return Err(Fail::Exhausted),
                }
            }
            if !matched {
                return Self::fail(k, "anyOf", quiet);
            }
        }
        if let Some(condition) = k.condition {
            let branch = match self.visit(condition, v, depth + 1, true) {
                Ok(()) => k.then,
                Err(Fail::Invalid(_)) => k.otherwise,
                Err(Fail::Exhausted) => return Err(Fail::Exhausted),
            };
            if let Some(branch) = branch {
                self.visit(branch, v, depth + 1, quiet)?;
            }
        }
        Ok(())
    }

    fn object(&mut self, k: &Keywords, o: &JsonObject, depth: usize, quiet: bool) -> Step {
        for name in k.required_elsewhere.iter() {
            self.charge(1)?;
            if !o.contains_key(name) {
                return Self::fail(k, "required", quiet);
            }
        }
        let mut seen_required = 0u64;
        if !k.properties.is_empty() || k.additional.is_some() {
            for (name, value) in o.iter() {
                self.charge(1)?;
                let schema = match find_property(&k.properties, name.as_bytes()) {
                    Some(p) => {
                        seen_required |= p.required_bit;
                        Some(p.node)
                    }
                    None => k.additional,
                };
                if let Some(schema) = schema {
                    self.visit(schema, value, depth + 1, quiet)
                        .map_err(|f| f.within(|| name.to_string()))?;
                }
            }
        }
        // A required bit implies a declared property, so the member pass above ran whenever the
        // mask is nonzero; were it ever skipped, the comparison fails closed.
        if seen_required != k.required_mask {
            self.charge(1)?;
            return Self::fail(k, "required", quiet);
        }
        Ok(())
    }

    /// JSON equality, charging one operation per compared value and the cost of ordering the
    /// members of compared objects.
    fn equal(&mut self, a: &JsonValue, b: &JsonValue) -> Result<bool, Fail> {
        self.charge(1)?;
        Ok(match (a, b) {
            (JsonValue::Null, JsonValue::Null) => true,
            (JsonValue::Bool(x), JsonValue::Bool(y)) => x == y,
            (JsonValue::Number(x), JsonValue::Number(y)) => x.cmp_value(y) == Ordering::Equal,
            (JsonValue::String(x), JsonValue::String(y)) => same_bytes(x.as_bytes(), y.as_bytes()),
            (JsonValue::Array(x), JsonValue::Array(y)) => {
                if x.len() != y.len() {
                    return Ok(false);
                }
                for (p, q) in x.iter().zip(y.iter()) {
                    if !self.equal(p, q)? {
                        return Ok(false);
                    }
                }
                true
            }
            (JsonValue::Object(x), JsonValue::Object(y)) => {
                if x.len() != y.len() {
                    return Ok(false);
                }
                let n = x.len() as u64;
                self.charge(n * u64::from(n.max(2).ilog2()))?;
                for (name, p) in x.iter() {
                    match y.get(name) {
                        Some(q) if self.equal(p, q)? => {}
                        _ => return Ok(false),
                    }
                }
                true
            }
            _ => false,
        })
    }
}

/// Finds the declared property named `name`: a tag prefilter, then a full comparison.
#[inline]
fn find_property<'k>(properties: &'k [Property], name: &[u8]) -> Option<&'k Property> {
    let tag = name_tag(name);
    if properties.len() <= LINEAR_PROPERTIES {
        return properties
            .iter()
            .find(|p| p.tag == tag && same_bytes(p.name.as_bytes(), name));
    }
    let start = properties.partition_point(|p| p.tag < tag);
    properties[start..]
        .iter()
        .take_while(|p| p.tag == tag)
        .find(|p| same_bytes(p.name.as_bytes(), name))
}

/// Byte equality that stays inline for the short names typical of schemas (a library `memcmp`
/// call costs more than the comparison): names of up to 16 bytes are compared as two
/// overlapping fixed-width words, which together cover every byte.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0..=3 => n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]),
        4..=7 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        8..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

#[inline]
fn word4(s: &[u8], at: usize) -> Option<[u8; 4]> {
    s.get(at..at + 4).and_then(|w| w.try_into().ok())
}

#[inline]
fn word8(s: &[u8], at: usize) -> Option<[u8; 8]> {
    s.get(at..at + 8).and_then(|w| w.try_into().ok())
}

#[cfg(test)]
#[test]
fn same_bytes_agrees_with_slice_equality() {
    let words: Vec<Vec<u8>> = (0..40)
        .flat_map(|n| {
            let base: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            let mut variants = vec![base.clone()];
            for i in 0..n {
                let mut v = base.clone();
                v[i] ^= 1;
                variants.push(v);
            }
            variants
        })
        .collect();
    for a in &words {
        for b in &words {
            assert_eq!(same_bytes(a, b), a == b, "{a:?} {b:?}");
        }
    }
}

fn instance_types(v: &JsonValue) -> u8 {
    match v {
        JsonValue::Null => types::NULL,
        JsonValue::Bool(_) => types::BOOLEAN,
        JsonValue::Object(_) => types::OBJECT,
        JsonValue::Array(_) => types::ARRAY,
        JsonValue::String(_) => types::STRING,
        JsonValue::Number(n) if n.is_integer() => types::NUMBER | types::INTEGER,
        JsonValue::Number(_) => types::NUMBER,
    }
}
