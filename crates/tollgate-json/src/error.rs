//! The crate's one error type: a kind and a byte offset, never the data that caused it.

use std::fmt;

/// What went wrong while reading, writing or converting JSON.
///
/// An error carries an [`ErrorKind`] and the byte offset where it was detected. It never carries
/// any part of the input or output document, so it is always safe to log or return.
///
/// # Examples
///
/// ```
/// use tollgate_json::{from_slice, ErrorKind, JsonLimits};
///
/// let err = from_slice(b"[1, 2,]", &JsonLimits::default()).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::ExpectedValue);
/// assert_eq!(err.offset(), 6);
/// assert!(err.is_syntax());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Error {
    kind: ErrorKind,
    offset: usize,
}

/// The category of an [`Error`].
///
/// Syntax kinds mean the input is not JSON; limit kinds mean it is (or may be) JSON but exceeds a
/// configured bound. The two are kept apart so callers can tell them apart, even when a protocol
/// maps both to the same fixed answer.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The input ended inside a value.
    UnexpectedEnd,
    /// A value was expected here.
    ExpectedValue,
    /// A `:` was expected after an object member name.
    ExpectedColon,
    /// A `,` or the closing bracket of the current container was expected.
    ExpectedCommaOrEnd,
    /// An object member name (a string) was expected.
    ExpectedMemberName,
    /// A number does not follow the JSON number grammar (leading zeros, a bare `-`, `NaN`, ...).
    InvalidNumber,
    /// A literal other than `true`, `false` or `null`.
    InvalidLiteral,
    /// A backslash escape that JSON does not define, or a malformed `\u` escape.
    InvalidEscape,
    /// A `\u` escape of an unpaired UTF-16 surrogate.
    LoneSurrogate,
    /// A raw control character (U+0000 to U+001F) inside a string.
    ControlCharacter,
    /// The input is not valid UTF-8.
    InvalidUtf8,
    /// The input starts with a byte order mark.
    ByteOrderMark,
    /// Something other than whitespace follows the top-level value.
    TrailingCharacters,
    /// An object has two members with the same name.
    DuplicateMemberName,
    /// The input has more bytes than the configured limit.
    InputTooLarge,
    /// Containers are nested deeper than the configured limit.
    DepthLimit,
    /// The document has more values than the configured limit.
    NodeLimit,
    /// A string or member name decodes to more UTF-16 code units than the configured limit.
    StringLengthLimit,
    /// A string or member name is spelled with more UTF-16 token units than the configured limit.
    StringTokenLimit,
    /// A number's exponent is beyond the supported range (more than 18 significant digits).
    NumberExponentLimit,
    /// The written document would exceed the configured output limit.
    OutputTooLarge,
    /// A number cannot be represented by the requested target type.
    NumberNotRepresentable,
    /// A limit was configured outside its permitted range.
    InvalidConfiguration,
    /// Binding: an integer's expanded decimal spelling is longer than the per-integer limit.
    IntegerTooLong,
    /// Binding: the expanded integer characters of one binding exceed the total limit.
    IntegerBudget,
    /// Binding: a number does not fit the target type (range or precision).
    NumberOutOfRange,
    /// Binding: a value of the wrong JSON type for the target.
    TypeMismatch,
    /// Binding: a value of the right type that the target refuses.
    InvalidValue,
    /// Binding: an array or object of the wrong length for the target.
    InvalidLength,
    /// Binding: a string that names no variant of the target enum.
    UnknownVariant,
    /// Binding: a member the target does not accept.
    UnknownField,
    /// Binding: a member the target requires is absent.
    MissingField,
    /// Binding: a member given twice.
    DuplicateField,
    /// Binding: the target type refused the value for a reason of its own (its message is not
    /// kept, since it may quote the value).
    Refused,
    /// Conversion to JSON: the value has no JSON form (a non-finite float, a map key that is not
    /// a string, a duplicate member name, or an error of its own `Serialize` implementation).
    Unserializable,
}

impl ErrorKind {
    /// Whether this kind reports a bound being exceeded rather than malformed input.
    pub const fn is_limit(self) -> bool {
        matches!(
            self,
            Self::InputTooLarge
                | Self::DepthLimit
                | Self::NodeLimit
                | Self::StringLengthLimit
                | Self::StringTokenLimit
                | Self::NumberExponentLimit
                | Self::OutputTooLarge
                | Self::IntegerTooLong
                | Self::IntegerBudget
        )
    }

    /// Whether this kind reports a typed-binding failure (see [`from_value`](crate::from_value)).
    pub const fn is_binding(self) -> bool {
        matches!(
            self,
            Self::IntegerTooLong
                | Self::IntegerBudget
                | Self::NumberOutOfRange
                | Self::TypeMismatch
                | Self::InvalidValue
                | Self::InvalidLength
                | Self::UnknownVariant
                | Self::UnknownField
                | Self::MissingField
                | Self::DuplicateField
                | Self::Refused
        )
    }

    /// Whether this kind reports input that is not JSON.
    pub const fn is_syntax(self) -> bool {
        matches!(
            self,
            Self::UnexpectedEnd
                | Self::ExpectedValue
                | Self::ExpectedColon
                | Self::ExpectedCommaOrEnd
                | Self::ExpectedMemberName
                | Self::InvalidNumber
                | Self::InvalidLiteral
                | Self::InvalidEscape
                | Self::LoneSurrogate
                | Self::ControlCharacter
                | Self::InvalidUtf8
                | Self::ByteOrderMark
                | Self::TrailingCharacters
                | Self::DuplicateMemberName
        )
    }

    /// A fixed, data-free description of this kind.
    pub const fn description(self) -> &'static str {
        match self {
            Self::UnexpectedEnd => "unexpected end of input",
            Self::ExpectedValue => "expected a value",
            Self::ExpectedColon => "expected ':' after a member name",
            Self::ExpectedCommaOrEnd => "expected ',' or the end of the container",
            Self::ExpectedMemberName => "expected a member name",
            Self::InvalidNumber => "invalid number",
            Self::InvalidLiteral => "invalid literal",
            Self::InvalidEscape => "invalid escape sequence",
            Self::LoneSurrogate => "unpaired UTF-16 surrogate escape",
            Self::ControlCharacter => "control character in string",
            Self::InvalidUtf8 => "invalid UTF-8",
            Self::ByteOrderMark => "byte order mark",
            Self::TrailingCharacters => "trailing characters after the value",
            Self::DuplicateMemberName => "duplicate member name",
            Self::InputTooLarge => "input exceeds the byte limit",
            Self::DepthLimit => "nesting exceeds the depth limit",
            Self::NodeLimit => "document exceeds the node limit",
            Self::StringLengthLimit => "string exceeds the decoded length limit",
            Self::StringTokenLimit => "string exceeds the token length limit",
            Self::NumberExponentLimit => "number exponent out of range",
            Self::OutputTooLarge => "output exceeds the byte limit",
            Self::NumberNotRepresentable => "number not representable in the target type",
            Self::InvalidConfiguration => "limit configured outside its permitted range",
            Self::IntegerTooLong => "integer longer than the binding limit",
            Self::IntegerBudget => "binding exceeds its total integer characters",
            Self::NumberOutOfRange => "number out of range for the target type",
            Self::TypeMismatch => "value of the wrong type for the target",
            Self::InvalidValue => "value refused by the target type",
            Self::InvalidLength => "wrong length for the target type",
            Self::UnknownVariant => "unknown enum variant",
            Self::UnknownField => "unknown member",
            Self::MissingField => "missing member",
            Self::DuplicateField => "duplicate member",
            Self::Refused => "value refused by the target type",
            Self::Unserializable => "value has no JSON form",
        }
    }
}

impl Error {
    pub(crate) const fn new(kind: ErrorKind, offset: usize) -> Self {
        Self { kind, offset }
    }

    /// The kind of failure.
    pub const fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The byte offset in the input (or output) where the failure was detected.
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// Shorthand for `self.kind().is_limit()`.
    pub const fn is_limit(&self) -> bool {
        self.kind.is_limit()
    }

    /// Shorthand for `self.kind().is_syntax()`.
    pub const fn is_syntax(&self) -> bool {
        self.kind.is_syntax()
    }

    /// The 1-based line and column (in characters) of [`offset`](Self::offset) within `input`.
    ///
    /// The error keeps no copy of the input; pass the same bytes that were read. Offsets past the
    /// end are clamped to the end.
    ///
    /// # Examples
    ///
    /// ```
    /// use tollgate_json::{from_slice, JsonLimits};
    ///
    /// let input = b"{\n  \"a\": tru\n}";
    /// let err = from_slice(input, &JsonLimits::default()).unwrap_err();
    /// assert_eq!(err.line_column(input), (2, 8));
    /// ```
    pub fn line_column(&self, input: &[u8]) -> (usize, usize) {
        let end = self.offset.min(input.len());
        let before = &input[..end];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let column = before[line_start..]
            .iter()
            .filter(|&&b| (b & 0xC0) != 0x80)
            .count()
            + 1;
        (line, column)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind.description(), self.offset)
    }
}

impl std::error::Error for Error {}
