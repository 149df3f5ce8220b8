//! The bounds every read and write obeys, with the production defaults of the Tollgate
//! specification and the hard ceilings no configuration may pass.

use crate::error::{Error, ErrorKind};

/// One mebibyte.
const MIB: usize = 1024 * 1024;

/// Bounds on what the reader accepts. Each bound is enforced independently: a document that fits
/// the byte limit still fails when it is too deep, has too many values, or holds a string that is
/// too long.
///
/// The defaults are the production defaults of the specification. Raising a bound is an explicit
/// call that returns an error past the bound's hard ceiling.
///
/// # Examples
///
/// ```
/// use tollgate_json::JsonLimits;
///
/// let limits = JsonLimits::default().with_max_input_bytes(16 * 1024 * 1024).unwrap();
/// assert_eq!(limits.max_input_bytes(), 16 * 1024 * 1024);
/// assert!(JsonLimits::default().with_max_input_bytes(16 * 1024 * 1024 + 1).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonLimits {
    max_input_bytes: usize,
    max_depth: usize,
    max_nodes: usize,
    max_string_units: usize,
    max_string_token_units: usize,
}

impl JsonLimits {
    /// Default input byte limit: 10 MiB.
    pub const DEFAULT_MAX_INPUT_BYTES: usize = 10 * MIB;
    /// Hard ceiling on the input byte limit: 16 MiB.
    pub const MAX_INPUT_BYTES_CEILING: usize = 16 * MIB;
    /// Default nesting depth: 128 (an empty array at top level has depth 1).
    pub const DEFAULT_MAX_DEPTH: usize = 128;
    /// Hard ceiling on the depth limit, chosen so that recursive consumers of a tree (writers,
    /// evaluators, drop) stay far from any thread's stack size.
    pub const MAX_DEPTH_CEILING: usize = 512;
    /// Default value count: 100,000 (every value counts, containers included).
    pub const DEFAULT_MAX_NODES: usize = 100_000;
    /// Hard ceiling on the value count.
    pub const MAX_NODES_CEILING: usize = 10_000_000;
    /// Default ceiling on the UTF-16 code units of a decoded string or member name, and on the
    /// UTF-16 token units of its escaped spelling: 1,048,576.
    pub const DEFAULT_MAX_STRING_UNITS: usize = MIB;
    /// Hard ceiling on both string bounds.
    pub const MAX_STRING_UNITS_CEILING: usize = 16 * MIB;

    /// The production defaults.
    pub const fn new() -> Self {
        Self {
            max_input_bytes: Self::DEFAULT_MAX_INPUT_BYTES,
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_nodes: Self::DEFAULT_MAX_NODES,
            max_string_units: Self::DEFAULT_MAX_STRING_UNITS,
            max_string_token_units: Self::DEFAULT_MAX_STRING_UNITS,
        }
    }

    /// The maximum number of input bytes.
    pub const fn max_input_bytes(&self) -> usize {
        self.max_input_bytes
    }
    /// The maximum nesting depth of arrays and objects.
    pub const fn max_depth(&self) -> usize {
        self.max_depth
    }
    /// The maximum number of values in one document.
    pub const fn max_nodes(&self) -> usize {
        self.max_nodes
    }
    /// The maximum decoded UTF-16 length of one string or member name.
    pub const fn max_string_units(&self) -> usize {
        self.max_string_units
    }
    /// The maximum UTF-16 length of one string's or member name's spelling, quotes excluded.
    pub const fn max_string_token_units(&self) -> usize {
        self.max_string_token_units
    }

    /// Sets the input byte limit.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidConfiguration`] when `bytes` is zero or above
    /// [`MAX_INPUT_BYTES_CEILING`](Self::MAX_INPUT_BYTES_CEILING).
    pub fn with_max_input_bytes(mut self, bytes: usize) -> Result<Self, Error> {
        self.max_input_bytes = checked(bytes, Self::MAX_INPUT_BYTES_CEILING)?;
        Ok(self)
    }
    /// Sets the depth limit.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidConfiguration`] when `depth` is zero or above
    /// [`MAX_DEPTH_CEILING`](Self::MAX_DEPTH_CEILING).
    pub fn with_max_depth(mut self, depth: usize) -> Result<Self, Error> {
        self.max_depth = checked(depth, Self::MAX_DEPTH_CEILING)?;
        Ok(self)
    }
    /// Sets the value-count limit.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidConfiguration`] when `nodes` is zero or above
    /// [`MAX_NODES_CEILING`](Self::MAX_NODES_CEILING).
    pub fn with_max_nodes(mut self, nodes: usize) -> Result<Self, Error> {
        self.max_nodes = checked(nodes, Self::MAX_NODES_CEILING)?;
        Ok(self)
    }
    /// Sets both string bounds (decoded units and token units) to `units`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidConfiguration`] when `units` is zero or above
    /// [`MAX_STRING_UNITS_CEILING`](Self::MAX_STRING_UNITS_CEILING).
    pub fn with_max_string_units(mut self, units: usize) -> Result<Self, Error> {
        let units = checked(units, Self::MAX_STRING_UNITS_CEILING)?;
        self.max_string_units = units;
        self.max_string_token_units = units;
        Ok(self)
    }
}

impl Default for JsonLimits {
    fn default() -> Self {
        Self::new()
    }
}

/// Bounds on what the writer produces. Exceeding one is an error, never a truncated document.
///
/// # Examples
///
/// ```
/// use tollgate_json::{to_vec, ErrorKind, JsonValue, OutputLimits};
///
/// let text = JsonValue::from("x".repeat(100));
/// let small = OutputLimits::default().with_max_output_bytes(64).unwrap();
/// assert_eq!(to_vec(&text, &small).unwrap_err().kind(), ErrorKind::OutputTooLarge);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimits {
    max_output_bytes: usize,
    max_string_units: usize,
    max_string_token_units: usize,
    max_depth: usize,
}

impl OutputLimits {
    /// Default output byte limit: 4 MiB of UTF-8.
    pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 4 * MIB;
    /// Hard ceiling on the output byte limit: 16 MiB.
    pub const MAX_OUTPUT_BYTES_CEILING: usize = 16 * MIB;
    /// Default output nesting bound. Output trees are built by applications, not read from a
    /// bounded input, so this bound only protects the writer's stack.
    pub const DEFAULT_MAX_DEPTH: usize = JsonLimits::MAX_DEPTH_CEILING;

    /// The production defaults.
    pub const fn new() -> Self {
        Self {
            max_output_bytes: Self::DEFAULT_MAX_OUTPUT_BYTES,
            max_string_units: JsonLimits::DEFAULT_MAX_STRING_UNITS,
            max_string_token_units: JsonLimits::DEFAULT_MAX_STRING_UNITS,
            max_depth: Self::DEFAULT_MAX_DEPTH,
        }
    }

    /// The maximum number of UTF-8 bytes written.
    pub const fn max_output_bytes(&self) -> usize {
        self.max_output_bytes
    }
    /// The maximum decoded UTF-16 length of one written string or member name.
    pub const fn max_string_units(&self) -> usize {
        self.max_string_units
    }
    /// The maximum UTF-16 length of one written string's escaped spelling.
    pub const fn max_string_token_units(&self) -> usize {
        self.max_string_token_units
    }
    /// The maximum nesting depth written.
    pub const fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// Sets the output byte limit.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidConfiguration`] when `bytes` is zero or above
    /// [`MAX_OUTPUT_BYTES_CEILING`](Self::MAX_OUTPUT_BYTES_CEILING).
    pub fn with_max_output_bytes(mut self, bytes: usize) -> Result<Self, Error> {
        self.max_output_bytes = checked(bytes, Self::MAX_OUTPUT_BYTES_CEILING)?;
        Ok(self)
    }
    /// Sets both string bounds (decoded units and token units) to `units`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidConfiguration`] when `units` is zero or above
    /// [`JsonLimits::MAX_STRING_UNITS_CEILING`].
    pub fn with_max_string_units(mut self, units: usize) -> Result<Self, Error> {
        let units = checked(units, JsonLimits::MAX_STRING_UNITS_CEILING)?;
        self.max_string_units = units;
        self.max_string_token_units = units;
        Ok(self)
    }
    /// Sets the nesting bound: how many levels of arrays and objects may be written, as
    /// [`JsonLimits::with_max_depth`] bounds what is read (a value written under a depth
    /// reads back under the same depth). Writing a value that will sit `n` levels inside a
    /// document under `max_depth - n` keeps the whole document within `max_depth`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidConfiguration`] when `depth` is zero or above
    /// [`JsonLimits::MAX_DEPTH_CEILING`].
    pub fn with_max_depth(mut self, depth: usize) -> Result<Self, Error> {
        self.max_depth = checked(depth, JsonLimits::MAX_DEPTH_CEILING)?;
        Ok(self)
    }
}

impl Default for OutputLimits {
    fn default() -> Self {
        Self::new()
    }
}

fn checked(value: usize, ceiling: usize) -> Result<usize, Error> {
    if value == 0 || value > ceiling {
        Err(Error::new(ErrorKind::InvalidConfiguration, 0))
    } else {
        Ok(value)
    }
}
