//! The compiled form of a Profile 1 schema: nodes, their keyword sets and headers, and the
//! immutable whole the evaluator walks. Built only by the compiler.

use tollgate_json::{JsonArray, JsonNumber, JsonString, JsonValue};

use crate::header::MirroredHeader;
use crate::limits::SchemaLimits;

pub(crate) type NodeId = u32;

/// Bits of the `type` keyword.
pub(crate) mod types {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const BOOLEAN: u8 = 2;
    pub(crate) const OBJECT: u8 = 4;
    pub(crate) const ARRAY: u8 = 8;
    pub(crate) const NUMBER: u8 = 16;
    pub(crate) const STRING: u8 = 32;
    pub(crate) const INTEGER: u8 = 64;

    pub(crate) fn from_name(name: &str) -> Option<u8> {
        Some(match name {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "object" => OBJECT,
            "array" => ARRAY,
            "number" => NUMBER,
            "string" => STRING,
            "integer" => INTEGER,
            _ => return None,
        })
    }
}

#[allow(
    clippy::large_enum_variant,
    reason = "nodes live in one boxed slice; keeping keywords inline saves a pointer chase per visit"
)]
pub(crate) enum Node {
    True,
    /// `false`, with its location for diagnostics.
    False(Box<str>),
    Schema(Keywords),
}

/// Which keyword groups a schema has, so evaluation skips absent ones with one test.
pub(crate) mod flags {
    pub(crate) const CONST: u16 = 1;
    pub(crate) const ENUM: u16 = 2;
    pub(crate) const BOUNDS: u16 = 4;
    pub(crate) const OBJECT: u16 = 8;
    pub(crate) const ITEMS: u16 = 16;
    pub(crate) const APPLICATORS: u16 = 32;
}

/// A property of a `properties` keyword, with a cheap prefilter for name matching.
pub(crate) struct Property {
    pub(crate) tag: u64,
    pub(crate) name: JsonString,
    pub(crate) node: NodeId,
    /// The bit of this property in `Keywords::required_mask`, when it is required.
    pub(crate) required_bit: u64,
}

/// Properties up to this count are matched by a linear scan of tags; larger sets are sorted by
/// tag and binary-searched.
pub(crate) const LINEAR_PROPERTIES: usize = 16;

/// Length, first and last byte of a name: equal names have equal tags, and most unequal names
/// differ in one of these, so full comparison is rarely needed.
#[inline]
pub(crate) fn name_tag(name: &[u8]) -> u64 {
    match (name.first(), name.last()) {
        (Some(&first), Some(&last)) => {
            ((name.len() as u64) << 16) | (u64::from(first) << 8) | u64::from(last)
        }
        _ => 0,
    }
}

/// The assertions and applicators of one object schema; annotations are not kept here (the
/// authored document is).
#[derive(Default)]
pub(crate) struct Keywords {
    pub(crate) location: Box<str>,
    pub(crate) flags: u16,
    pub(crate) types: u8,
    pub(crate) constant: Option<JsonValue>,
    pub(crate) enumeration: Option<JsonArray>,
    /// The enum's values when every one is a string: matched without the general equality walk.
    pub(crate) string_enum: Option<Box<[JsonString]>>,
    pub(crate) minimum: Option<JsonNumber>,
    pub(crate) maximum: Option<JsonNumber>,
    pub(crate) required: Box<[JsonString]>,
    /// Required names that are not declared properties; checked by lookup.
    pub(crate) required_elsewhere: Box<[JsonString]>,
    /// The bits of the required properties that are declared properties (at most 64 of them;
    /// any beyond are in `required_elsewhere`).
    pub(crate) required_mask: u64,
    /// In authored order up to `LINEAR_PROPERTIES`, sorted by tag beyond.
    pub(crate) properties: Box<[Property]>,
    pub(crate) additional: Option<NodeId>,
    pub(crate) items: Option<NodeId>,
    pub(crate) all_of: Box<[NodeId]>,
    pub(crate) any_of: Box<[NodeId]>,
    pub(crate) condition: Option<NodeId>,
    pub(crate) then: Option<NodeId>,
    pub(crate) otherwise: Option<NodeId>,
    pub(crate) reference: Option<NodeId>,
}

/// What evaluation needs to decide how to visit a node, kept dense and apart from the keywords.
#[derive(Clone, Copy)]
pub(crate) struct NodeHeader {
    /// `KIND_TRUE`, `KIND_FALSE` or `KIND_SCHEMA`.
    pub(crate) kind: u8,
    pub(crate) types: u8,
    pub(crate) flags: u16,
}

pub(crate) const KIND_TRUE: u8 = 0;
pub(crate) const KIND_FALSE: u8 = 1;
pub(crate) const KIND_SCHEMA: u8 = 2;

impl NodeHeader {
    pub(crate) fn of(node: &Node) -> Self {
        match node {
            Node::True => Self {
                kind: KIND_TRUE,
                types: 0,
                flags: 0,
            },
            Node::False(_) => Self {
                kind: KIND_FALSE,
                types: 0,
                flags: 0,
            },
            Node::Schema(k) => Self {
                kind: KIND_SCHEMA,
                types: k.types,
                flags: k.flags,
            },
        }
    }
}

pub(crate) struct Inner {
    /// Where evaluation starts: the root, or what a reference-only root refers to.
    pub(crate) root: NodeId,
    pub(crate) document: JsonValue,
    pub(crate) node_headers: Box<[NodeHeader]>,
    pub(crate) nodes: Box<[Node]>,
    pub(crate) headers: Box<[MirroredHeader]>,
    pub(crate) limits: SchemaLimits,
}
