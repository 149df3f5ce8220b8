//! The Profile 1 compiler: a schema document in, an immutable [`CompiledSchema`] out, or an error
//! naming the keyword and location. Everything outside the profile fails closed.

#[cfg(test)]
#[path = "compile_tests.rs"]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;

use tollgate_json::{JsonObject, JsonString, JsonValue};

use crate::error::{CompileError, CompileErrorKind as K};
use crate::header::{HeaderValueType, MirroredHeader, is_token};
use crate::keywords::{DIALECTS, EXCLUDED};
use crate::limits::SchemaLimits;
use crate::pointer::{canonical_pointer, escape_into, percent_decode};

pub(crate) use crate::node::{
    Inner, KIND_SCHEMA, KIND_TRUE, Keywords, LINEAR_PROPERTIES, Node, NodeHeader, NodeId, Property,
    flags, name_tag, types,
};

/// A schema compiled into Tool Schema Profile 1: immutable, cheap to clone, and constructible
/// only through the compiler. It publishes the exact authored document.
///
/// # Examples
///
/// ```
/// use tollgate_json::{from_str, JsonLimits};
/// use tollgate_schema::CompiledSchema;
///
/// let limits = JsonLimits::default();
/// let doc = from_str(r#"{
///     "type": "object",
///     "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
///     "required": ["query"],
///     "additionalProperties": false
/// }"#, &limits).unwrap();
/// let schema = CompiledSchema::compile_tool_input(&doc).unwrap();
/// assert!(schema.validate(&from_str(r#"{"query": "mug", "limit": 10.0}"#, &limits).unwrap()).is_ok());
/// assert!(schema.validate(&from_str(r#"{"limit": 0}"#, &limits).unwrap()).is_err());
/// ```
#[derive(Clone)]
pub struct CompiledSchema(pub(crate) Arc<Inner>);

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("nodes", &self.0.nodes.len())
            .field("mirrored_headers", &self.0.headers.len())
            .finish_non_exhaustive()
    }
}

impl CompiledSchema {
    /// Compiles any Profile 1 schema under the default limits.
    ///
    /// # Errors
    ///
    /// A [`CompileError`] naming the kind, the JSON Pointer of the offending schema and the
    /// keyword.
    pub fn compile(document: &JsonValue) -> Result<Self, CompileError> {
        Self::compile_with(document, &SchemaLimits::default())
    }

    /// Compiles any Profile 1 schema under `limits`.
    ///
    /// # Errors
    ///
    /// As [`compile`](Self::compile).
    pub fn compile_with(document: &JsonValue, limits: &SchemaLimits) -> Result<Self, CompileError> {
        Compiler::new(limits).run(document)
    }

    /// Compiles a tool input schema: a Profile 1 schema whose root is also an object schema with
    /// `"type": "object"`.
    ///
    /// # Errors
    ///
    /// As [`compile`](Self::compile), plus [`RootNotObject`](crate::CompileErrorKind::RootNotObject).
    pub fn compile_tool_input(document: &JsonValue) -> Result<Self, CompileError> {
        Self::compile_tool_input_with(document, &SchemaLimits::default())
    }

    /// Compiles a tool input schema under `limits`.
    ///
    /// # Errors
    ///
    /// As [`compile_tool_input`](Self::compile_tool_input).
    pub fn compile_tool_input_with(
        document: &JsonValue,
        limits: &SchemaLimits,
    ) -> Result<Self, CompileError> {
        let compiled = Self::compile_with(document, limits)?;
        let root_is_object = document
            .get("type")
            .and_then(JsonValue::as_str)
            .is_some_and(|t| t == "object");
        if !root_is_object {
            return Err(CompileError::new(K::RootNotObject, "", Some("type")));
        }
        Ok(compiled)
    }

    /// The exact authored document.
    pub fn document(&self) -> &JsonValue {
        &self.0.document
    }

    /// The `x-mcp-header` declarations, in document order.
    pub fn mirrored_headers(&self) -> &[MirroredHeader] {
        &self.0.headers
    }

    /// The number of compiled schema nodes.
    pub fn node_count(&self) -> usize {
        self.0.nodes.len()
    }

    /// The limits the schema was compiled with (its evaluation budget among them).
    pub fn limits(&self) -> &SchemaLimits {
        &self.0.limits
    }
}

struct PendingRef {
    node: NodeId,
    target: JsonString,
    location: String,
}

struct Compiler<'a> {
    limits: &'a SchemaLimits,
    nodes: Vec<Node>,
    by_pointer: HashMap<String, NodeId>,
    anchors: HashMap<JsonString, NodeId>,
    refs: Vec<PendingRef>,
    headers: Vec<MirroredHeader>,
    keywords: usize,
}

fn is_anchor_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
}

impl<'a> Compiler<'a> {
    fn new(limits: &'a SchemaLimits) -> Self {
        Self {
            limits,
            nodes: Vec::new(),
            by_pointer: HashMap::new(),
            anchors: HashMap::new(),
            refs: Vec::new(),
            headers: Vec::new(),
            keywords: 0,
        }
    }

    fn run(mut self, document: &JsonValue) -> Result<CompiledSchema, CompileError> {
        let mut location = String::new();
        self.schema(document, &mut location, 1, Some(&mut Vec::new()))?;
        self.resolve_refs()?;
        self.check_cycles()?;
        let root = self.collapse_references();
        Ok(CompiledSchema(Arc::new(Inner {
            root,
            document: document.clone(),
            node_headers: self.nodes.iter().map(NodeHeader::of).collect(),
            nodes: self.nodes.into_boxed_slice(),
            headers: self.headers.into_boxed_slice(),
            limits: *self.limits,
        })))
    }

    /// Compiles the schema at `location`. `chain` is `Some(property names)` while the schema is
    /// reached from the root only through `properties`.
    fn schema(
        &mut self,
        value: &JsonValue,
        location: &mut String,
        depth: usize,
        chain: Option<&mut Vec<JsonString>>,
    ) -> Result<NodeId, CompileError> {
        if depth > self.limits.max_depth() {
            return Err(CompileError::new(K::TooDeep, location, None));
        }
        if self.nodes.len() >= self.limits.max_nodes() {
            return Err(CompileError::new(K::TooManyNodes, location, None));
        }
        let id = NodeId::try_from(self.nodes.len())
            .map_err(|_| CompileError::new(K::TooManyNodes, location, None))?;
        self.by_pointer.insert(location.clone(), id);
        let object = match value {
            JsonValue::Bool(true) => {
                self.nodes.push(Node::True);
                return Ok(id);
            }
            JsonValue::Bool(false) => {
                self.nodes.push(Node::False(location.as_str().into()));
                return Ok(id);
            }
            JsonValue::Object(o) => o,
            _ => return Err(CompileError::new(K::NotASchema, location, None)),
        };
        self.nodes.push(Node::True);
        let mut k = Keywords {
            location: location.as_str().into(),
            ..Keywords::default()
        };
        let mut header: Option<&JsonValue> = None;
        let mut chain = chain;
        for (name, v) in object.iter() {
            self.keywords += 1;
            if self.keywords > self.limits.max_keywords() {
                return Err(CompileError::new(K::TooManyKeywords, location, Some(name)));
            }
            let bad = |kind| Err(CompileError::new(kind, location, Some(name)));
            match name.as_str() {
                "$anchor" => {
                    let Some(anchor) = v.as_string().filter(|s| is_anchor_name(s)) else {
                        return bad(K::InvalidKeywordValue);
                    };
                    if self.anchors.insert(anchor.clone(), id).is_some() {
                        return bad(K::DuplicateAnchor);
                    }
                }
                "$ref" => {
                    let Some(target) = v.as_string() else {
                        return bad(K::InvalidKeywordValue);
                    };
                    self.refs.push(PendingRef {
                        node: id,
                        target: target.clone(),
                        location: location.clone(),
                    });
                }
                "$defs" => {
                    let Some(defs) = v.as_object() else {
                        return bad(K::InvalidKeywordValue);
                    };
                    self.schema_map(defs, "$defs", location, depth, None)?;
                }
                "properties" => {
                    let Some(props) = v.as_object() else {
                        return bad(K::InvalidKeywordValue);
                    };
                    k.properties = self.properties(props, location, depth, chain.as_deref_mut())?;
                }
                "additionalProperties" => {
                    k.additional = Some(self.child(v, location, &[name], depth)?);
                }
                "items" => k.items = Some(self.child(v, location, &[name], depth)?),
                "if" => k.condition = Some(self.child(v, location, &[name], depth)?),
                "then" => k.then = Some(self.child(v, location, &[name], depth)?),
                "else" => k.otherwise = Some(self.child(v, location, &[name], depth)?),
                "allOf" | "anyOf" => {
                    let Some(list) = v.as_array().filter(|a| !a.is_empty()) else {
                        return bad(K::InvalidKeywordValue);
                    };
                    let mut ids = Vec::with_capacity(list.len());
                    for (i, item) in list.iter().enumerate() {
                        ids.push(self.child(item, location, &[name, &i.to_string()], depth)?);
                    }
                    if name == "allOf" {
                        k.all_of = ids.into_boxed_slice();
                    } else {
                        k.any_of = ids.into_boxed_slice();
                    }
                }
                "x-mcp-header" => header = Some(v),
                other => {
                    if let Err(kind) = plain_keyword(&mut k, other, v, depth) {
                        return bad(kind);
                    }
                }
            }
        }
        if let Some(v) = header {
            self.header(v, object, location, depth, chain.as_deref())?;
        }
        finish(&mut k);
        self.nodes[id as usize] = Node::Schema(k);
        Ok(id)
    }

    /// Compiles a `properties` object's schemas and lists them, sorted by tag past
    /// [`LINEAR_PROPERTIES`] (each property's required bit is set when the node is finished).
    fn properties(
        &mut self,
        props: &JsonObject,
        location: &mut String,
        depth: usize,
        chain: Option<&mut Vec<JsonString>>,
    ) -> Result<Box<[Property]>, CompileError> {
        let ids = self.schema_map(props, "properties", location, depth, chain)?;
        let mut list: Vec<Property> = props
            .iter()
            .zip(ids)
            .map(|((name, _), node)| Property {
                tag: name_tag(name.as_bytes()),
                name: name.clone(),
                node,
                required_bit: 0,
            })
            .collect();
        if list.len() > LINEAR_PROPERTIES {
            list.sort_by_key(|p| p.tag);
        }
        Ok(list.into_boxed_slice())
    }

    /// Compiles a child schema at `location` + `/tokens…`.
    fn child(
        &mut self,
        value: &JsonValue,
        location: &mut String,
        tokens: &[&str],
        depth: usize,
    ) -> Result<NodeId, CompileError> {
        let len = location.len();
        for t in tokens {
            location.push('/');
            escape_into(t, location);
        }
        let result = self.schema(value, location, depth + 1, None);
        location.truncate(len);
        result
    }

    /// Compiles each member of a `properties` or `$defs` object, in member order.
    fn schema_map(
        &mut self,
        map: &JsonObject,
        keyword: &str,
        location: &mut String,
        depth: usize,
        mut chain: Option<&mut Vec<JsonString>>,
    ) -> Result<Vec<NodeId>, CompileError> {
        let mut ids = Vec::with_capacity(map.len());
        for (name, v) in map.iter() {
            let len = location.len();
            location.push('/');
            location.push_str(keyword);
            location.push('/');
            escape_into(name, location);
            let result = match chain.as_deref_mut() {
                Some(names) => {
                    names.push(name.clone());
                    let r = self.schema(v, location, depth + 1, Some(names));
                    names.pop();
                    r
                }
                None => self.schema(v, location, depth + 1, None),
            };
            location.truncate(len);
            ids.push(result?);
        }
        Ok(ids)
    }

    fn header(
        &mut self,
        value: &JsonValue,
        object: &JsonObject,
        location: &str,
        depth: usize,
        chain: Option<&Vec<JsonString>>,
    ) -> Result<(), CompileError> {
        let keyword = Some("x-mcp-header");
        let Some(suffix) = value.as_string().filter(|s| is_token(s)) else {
            return Err(CompileError::new(K::InvalidHeaderName, location, keyword));
        };
        let value_type = match object.get("type").and_then(JsonValue::as_str) {
            Some("string") => Some(HeaderValueType::String),
            Some("boolean") => Some(HeaderValueType::Boolean),
            Some("integer") => Some(HeaderValueType::Integer),
            _ => None,
        };
        let (Some(path), Some(value_type)) = (chain.filter(|_| depth > 1), value_type) else {
            return Err(CompileError::new(K::IneligibleHeader, location, keyword));
        };
        if self
            .headers
            .iter()
            .any(|h| h.suffix.eq_ignore_ascii_case(suffix))
        {
            return Err(CompileError::new(K::DuplicateHeader, location, keyword));
        }
        let mut pointer = String::new();
        for name in path {
            pointer.push('/');
            escape_into(name, &mut pointer);
        }
        self.headers.push(MirroredHeader {
            path: path.clone().into_boxed_slice(),
            pointer,
            suffix: suffix.clone(),
            value_type,
        });
        Ok(())
    }

    fn resolve_refs(&mut self) -> Result<(), CompileError> {
        for r in std::mem::take(&mut self.refs) {
            let err = |kind| CompileError::new(kind, &r.location, Some("$ref"));
            let Some(fragment) = r.target.strip_prefix('#') else {
                return Err(err(K::RemoteReference));
            };
            let fragment = percent_decode(fragment).ok_or_else(|| err(K::InvalidReference))?;
            let target = if fragment.is_empty() {
                Some(0)
            } else if fragment.starts_with('/') {
                let key = canonical_pointer(&fragment).ok_or_else(|| err(K::InvalidReference))?;
                self.by_pointer.get(&key).copied()
            } else if is_anchor_name(&fragment) {
                self.anchors.get(fragment.as_str()).copied()
            } else {
                return Err(err(K::InvalidReference));
            };
            let target = target.ok_or_else(|| err(K::DanglingReference))?;
            if let Node::Schema(k) = &mut self.nodes[r.node as usize] {
                k.reference = Some(target);
                k.flags |= flags::APPLICATORS;
            }
        }
        Ok(())
    }

    /// Points every edge that leads to a reference-only schema (a `$ref` and nothing else that
    /// asserts; annotations do not count) straight at what it refers to, following chains. Runs
    /// after the cycle check, so chains end. Returns the node evaluation starts from.
    fn collapse_references(&mut self) -> NodeId {
        let forward: Vec<Option<NodeId>> = self
            .nodes
            .iter()
            .map(|n| match n {
                Node::Schema(k) if k.flags == flags::APPLICATORS && only_reference(k) => {
                    k.reference
                }
                _ => None,
            })
            .collect();
        let resolve = |mut id: NodeId| {
            // Bounded by the node count: the in-place graph is acyclic.
            for _ in 0..forward.len() {
                match forward[id as usize] {
                    Some(next) => id = next,
                    None => break,
                }
            }
            id
        };
        for node in &mut self.nodes {
            if let Node::Schema(k) = node {
                for p in k.properties.iter_mut() {
                    p.node = resolve(p.node);
                }
                for id in k.all_of.iter_mut().chain(k.any_of.iter_mut()) {
                    *id = resolve(*id);
                }
                for id in [
                    &mut k.additional,
                    &mut k.items,
                    &mut k.condition,
                    &mut k.then,
                    &mut k.otherwise,
                    &mut k.reference,
                ]
                .into_iter()
                .flatten()
                {
                    *id = resolve(*id);
                }
            }
        }
        resolve(0)
    }

    /// Rejects cycles among in-place applicators (`$ref`, `allOf`, `anyOf`, `if`, `then`,
    /// `else`): such a cycle re-enters the same schema on the same instance value forever.
    fn check_cycles(&self) -> Result<(), CompileError> {
        const WHITE: u8 = 0;
        const GREY: u8 = 1;
        const BLACK: u8 = 2;
        let mut colour = vec![WHITE; self.nodes.len()];
        let mut stack: Vec<(NodeId, usize)> = Vec::new();
        for start in 0..self.nodes.len() {
            if colour[start] != WHITE {
                continue;
            }
            let start = start as NodeId;
            colour[start as usize] = GREY;
            stack.push((start, 0));
            while let Some(top) = stack.last_mut() {
                let node = top.0;
                let edge = in_place_edges(&self.nodes[node as usize]).nth(top.1);
                top.1 += 1;
                match edge {
                    None => {
                        colour[node as usize] = BLACK;
                        stack.pop();
                    }
                    Some(child) => match colour[child as usize] {
                        WHITE => {
                            colour[child as usize] = GREY;
                            stack.push((child, 0));
                        }
                        GREY => {
                            let location = match &self.nodes[child as usize] {
                                Node::Schema(k) => &*k.location,
                                _ => "",
                            };
                            return Err(CompileError::new(
                                K::ReferenceCycle,
                                location,
                                Some("$ref"),
                            ));
                        }
                        _ => {}
                    },
                }
            }
        }
        Ok(())
    }
}

/// Checks a keyword that names no subschema into `k`: `$schema` (at the root only), the
/// annotations, `type`, `enum`, `const`, `required`, `minimum` and `maximum`. Refuses an
/// excluded or unknown keyword; the error's location and keyword are the caller's to add.
fn plain_keyword(k: &mut Keywords, name: &str, v: &JsonValue, depth: usize) -> Result<(), K> {
    match name {
        "$schema" => {
            if depth != 1 || !v.as_str().is_some_and(|s| DIALECTS.contains(&s)) {
                return Err(K::UnsupportedDialect);
            }
        }
        "$comment" | "title" | "description" | "format" => {
            if v.as_str().is_none() {
                return Err(K::InvalidKeywordValue);
            }
        }
        "deprecated" | "readOnly" | "writeOnly" => {
            if v.as_bool().is_none() {
                return Err(K::InvalidKeywordValue);
            }
        }
        "default" => {}
        "examples" => {
            if v.as_array().is_none() {
                return Err(K::InvalidKeywordValue);
            }
        }
        "type" => {
            k.types = match v {
                JsonValue::String(s) => types::from_name(s).unwrap_or(0),
                JsonValue::Array(list) => {
                    let mut bits = 0u8;
                    for t in list.iter() {
                        match t.as_str().and_then(types::from_name) {
                            Some(b) if bits & b == 0 => bits |= b,
                            _ => return Err(K::InvalidKeywordValue),
                        }
                    }
                    bits
                }
                _ => 0,
            };
            if k.types == 0 {
                return Err(K::InvalidKeywordValue);
            }
        }
        "enum" => {
            let Some(list) = v.as_array() else {
                return Err(K::InvalidKeywordValue);
            };
            k.enumeration = Some(list.clone());
        }
        "const" => k.constant = Some(v.clone()),
        "required" => {
            let Some(list) = v.as_array() else {
                return Err(K::InvalidKeywordValue);
            };
            let mut names: Vec<JsonString> = Vec::with_capacity(list.len());
            for item in list.iter() {
                match item.as_string() {
                    Some(s) if !names.contains(s) => names.push(s.clone()),
                    _ => return Err(K::InvalidKeywordValue),
                }
            }
            k.required = names.into_boxed_slice();
        }
        "minimum" | "maximum" => {
            let Some(n) = v.as_number() else {
                return Err(K::InvalidKeywordValue);
            };
            if name == "minimum" {
                k.minimum = Some(n.clone());
            } else {
                k.maximum = Some(n.clone());
            }
        }
        other if EXCLUDED.contains(&other) => return Err(K::ExcludedKeyword),
        _ => return Err(K::UnknownKeyword),
    }
    Ok(())
}

/// Whether a schema's only applicator is `$ref` (its flags already say nothing else asserts).
fn only_reference(k: &Keywords) -> bool {
    k.types == 0
        && k.all_of.is_empty()
        && k.any_of.is_empty()
        && k.condition.is_none()
        && k.reference.is_some()
}

/// Splits `required` between declared properties (tracked by bit during the member pass) and
/// other names, and sets the keyword-group flags.
fn finish(k: &mut Keywords) {
    let mut elsewhere = Vec::new();
    let mut next_bit = 0u32;
    for name in k.required.iter() {
        let declared = k.properties.iter_mut().find(|p| p.name == *name);
        match declared {
            Some(p) if next_bit < 64 => {
                p.required_bit = 1 << next_bit;
                k.required_mask |= p.required_bit;
                next_bit += 1;
            }
            _ => elsewhere.push(name.clone()),
        }
    }
    k.required_elsewhere = elsewhere.into_boxed_slice();
    if let Some(list) = &k.enumeration {
        let strings: Option<Vec<JsonString>> =
            list.iter().map(|v| v.as_string().cloned()).collect();
        k.string_enum = strings.map(Vec::into_boxed_slice);
    }
    let mut f = 0;
    if k.constant.is_some() {
        f |= flags::CONST;
    }
    if k.enumeration.is_some() {
        f |= flags::ENUM;
    }
    if k.minimum.is_some() || k.maximum.is_some() {
        f |= flags::BOUNDS;
    }
    if !k.required.is_empty() || !k.properties.is_empty() || k.additional.is_some() {
        f |= flags::OBJECT;
    }
    if k.items.is_some() {
        f |= flags::ITEMS;
    }
    if k.reference.is_some()
        || !k.all_of.is_empty()
        || !k.any_of.is_empty()
        || k.condition.is_some()
    {
        f |= flags::APPLICATORS;
    }
    k.flags = f;
}

fn in_place_edges(node: &Node) -> impl Iterator<Item = NodeId> + '_ {
    let k = match node {
        Node::Schema(k) => Some(k),
        _ => None,
    };
    k.into_iter().flat_map(|k| {
        k.reference
            .into_iter()
            .chain(k.all_of.iter().copied())
            .chain(k.any_of.iter().copied())
            .chain(k.condition)
            .chain(k.then)
            .chain(k.otherwise)
    })
}
