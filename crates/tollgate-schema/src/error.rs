//! The crate's errors: compile errors name the schema location and keyword (schemas are authored
//! by the application, not by clients); validation errors carry only a kind and an internal
//! diagnostic that is never meant for clients.

use std::fmt;

/// Why a schema did not compile into Profile 1.
///
/// # Examples
///
/// ```
/// use tollgate_json::{from_str, JsonLimits};
/// use tollgate_schema::{CompileErrorKind, CompiledSchema};
///
/// let doc = from_str(r#"{"properties": {"a": {"pattern": "^x"}}}"#, &JsonLimits::default()).unwrap();
/// let err = CompiledSchema::compile(&doc).unwrap_err();
/// assert_eq!(err.kind(), CompileErrorKind::ExcludedKeyword);
/// assert_eq!(err.location(), "/properties/a");
/// assert_eq!(err.keyword(), Some("pattern"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    kind: CompileErrorKind,
    location: String,
    keyword: Option<String>,
}

/// The kind of a [`CompileError`].
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompileErrorKind {
    /// A keyword Profile 1 does not recognise (including unknown `x-*` names).
    UnknownKeyword,
    /// A JSON Schema keyword Profile 1 deliberately excludes (`oneOf`, `pattern`, `$id`, ...).
    ExcludedKeyword,
    /// A recognised keyword with a value of the wrong type or form.
    InvalidKeywordValue,
    /// A value where a schema is required that is neither an object nor a boolean.
    NotASchema,
    /// `$schema` names a dialect other than 2020-12, or appears below the root.
    UnsupportedDialect,
    /// A `$ref` that is not a same-document fragment.
    RemoteReference,
    /// A `$ref` whose fragment is malformed.
    InvalidReference,
    /// A `$ref` to a location that is not a compiled schema, or to an unknown anchor.
    DanglingReference,
    /// A `$ref`/`allOf`/`anyOf`/`if`/`then`/`else` cycle that never descends into the instance.
    ReferenceCycle,
    /// Two `$anchor`s with the same name.
    DuplicateAnchor,
    /// More compiled schema nodes than the limit (4,096 by default).
    TooManyNodes,
    /// Schemas nested deeper than the limit (64 by default).
    TooDeep,
    /// More keywords than the limit (32,768 by default).
    TooManyKeywords,
    /// An `x-mcp-header` that is not a nonempty RFC 9110 token.
    InvalidHeaderName,
    /// An `x-mcp-header` on a schema that is not a property reached from the root only through
    /// `properties`, or whose direct `type` is not `string`, `boolean` or `integer`.
    IneligibleHeader,
    /// Two `x-mcp-header` suffixes equal ignoring ASCII case.
    DuplicateHeader,
    /// A tool input schema whose root is not an object schema with `"type": "object"`.
    RootNotObject,
}

impl CompileErrorKind {
    /// A fixed description of the kind.
    pub const fn description(self) -> &'static str {
        match self {
            Self::UnknownKeyword => "keyword not recognised by Tool Schema Profile 1",
            Self::ExcludedKeyword => "keyword excluded from Tool Schema Profile 1",
            Self::InvalidKeywordValue => "invalid keyword value",
            Self::NotASchema => "expected a schema (an object or a boolean)",
            Self::UnsupportedDialect => "$schema must be the 2020-12 dialect, at the root",
            Self::RemoteReference => "$ref must be a same-document fragment",
            Self::InvalidReference => "malformed $ref fragment",
            Self::DanglingReference => "$ref target is not a schema in this document",
            Self::ReferenceCycle => "reference cycle that never descends into the instance",
            Self::DuplicateAnchor => "duplicate $anchor",
            Self::TooManyNodes => "schema has too many nodes",
            Self::TooDeep => "schema is nested too deeply",
            Self::TooManyKeywords => "schema has too many keywords",
            Self::InvalidHeaderName => "x-mcp-header must be a nonempty RFC 9110 token",
            Self::IneligibleHeader => {
                "x-mcp-header is only allowed on a string, boolean or integer property reached through properties"
            }
            Self::DuplicateHeader => "x-mcp-header suffixes must be unique ignoring case",
            Self::RootNotObject => {
                "a tool input schema must have an object root with \"type\": \"object\""
            }
        }
    }
}

/// The longest keyword name an error repeats; longer names are cut (they come from the schema
/// author, but an error should stay small).
const MAX_KEYWORD_CHARS: usize = 64;

impl CompileError {
    pub(crate) fn new(kind: CompileErrorKind, location: &str, keyword: Option<&str>) -> Self {
        Self {
            kind,
            location: location.to_owned(),
            keyword: keyword.map(|k| k.chars().take(MAX_KEYWORD_CHARS).collect()),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> CompileErrorKind {
        self.kind
    }

    /// The JSON Pointer of the schema object where compilation failed (`""` is the root).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The keyword involved, when one is.
    pub fn keyword(&self) -> Option<&str> {
        self.keyword.as_deref()
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.description())?;
        if let Some(k) = &self.keyword {
            write!(f, " (keyword {k:?})")?;
        }
        write!(f, " at {:?}", self.location)
    }
}

impl std::error::Error for CompileError {}

/// Why an instance was not accepted.
///
/// The three outcomes are distinct so a runtime can tell them apart, though a tool endpoint maps
/// all of them to the same fixed, safe answer. The [`Diagnostic`] is for logs and tooling only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError {
    kind: ValidationErrorKind,
    diagnostic: Option<Box<Diagnostic>>,
}

/// The kind of a [`ValidationError`].
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValidationErrorKind {
    /// The instance does not satisfy the schema.
    Invalid,
    /// Evaluation used its whole operation budget (one million by default) or its depth bound,
    /// whether or not the instance would have been valid.
    BudgetExhausted,
    /// The process already runs the maximum number of concurrent evaluations; the call was
    /// refused at once, not queued.
    Busy,
}

impl ValidationError {
    pub(crate) fn new(kind: ValidationErrorKind, diagnostic: Option<Box<Diagnostic>>) -> Self {
        Self { kind, diagnostic }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ValidationErrorKind {
        self.kind
    }

    /// Where the first failure was found, for logs and tooling; never for clients.
    pub fn diagnostic(&self) -> Option<&Diagnostic> {
        self.diagnostic.as_deref()
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            ValidationErrorKind::Invalid => "instance does not match the schema",
            ValidationErrorKind::BudgetExhausted => "schema evaluation budget exhausted",
            ValidationErrorKind::Busy => "too many concurrent schema evaluations",
        })
    }
}

impl std::error::Error for ValidationError {}

/// Where an evaluation failed: the schema location and keyword, and the instance path (as a JSON
/// Pointer). Built only when a failure is reported, never during valid traversal or inside
/// suppressed branches. It names instance member names, so it is internal: log it under your
/// own policy, never send it to a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub(crate) keyword: &'static str,
    pub(crate) schema_location: String,
    /// Instance path segments, innermost first while unwinding; reversed when read.
    pub(crate) instance_path: Vec<String>,
}

impl Diagnostic {
    /// The keyword that failed.
    pub fn keyword(&self) -> &'static str {
        self.keyword
    }
    /// The JSON Pointer of the schema object holding the keyword.
    pub fn schema_location(&self) -> &str {
        &self.schema_location
    }
    /// The JSON Pointer of the failing value within the instance.
    pub fn instance_pointer(&self) -> String {
        let mut out = String::new();
        for segment in self.instance_path.iter().rev() {
            out.push('/');
            crate::pointer::escape_into(segment, &mut out);
        }
        out
    }
}
