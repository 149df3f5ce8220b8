//! Tollgate's JSON core: a bounded reader, an immutable tree and a limited writer.
//!
//! This crate owns every byte of JSON that reaches or leaves a Tollgate server. It knows JSON and
//! its limits and nothing of MCP: protocol envelopes, error codes and schemas live in other
//! crates.
//!
//! # When to use it
//!
//! Read untrusted input with [`from_slice`]; every bound in [`JsonLimits`] is enforced on its own,
//! so a document that fits the byte limit still fails when it is too deep, has too many values,
//! or holds an oversized string. Build results with [`JsonObject::builder`] and friends, and
//! write them with [`to_vec`] under [`OutputLimits`]; an over-limit document is an error, never a
//! truncated one.
//!
//! # Themes
//!
//! - **Reader, tree, writer apart**: `read`, `value`/`object`/`array`/`string`/`number`, `write`.
//! - **Exact numbers**: [`JsonNumber`] keeps the decimal as written; equality and hashing follow
//!   the value regardless of scale, without expanding exponents.
//! - **UTF-16 dual accounting**: every string is bounded both by its decoded UTF-16 length and by
//!   the UTF-16 length of its escaped spelling, as the specification's token table counts them.
//! - **Errors carry a kind and an offset, never data** ([`Error`]).
//! - **Bounded typed binding**: [`from_value`] binds a tree to any `serde::Deserialize` type,
//!   charging integers by the length of their expanded spelling before producing a digit.
//! - **Typed output**: [`to_value`] turns any `serde::Serialize` value into a tree directly.
//! - **Valid Unicode by construction**: strings are Rust strings, so an unpaired surrogate cannot
//!   exist in a tree; the reader rejects unpaired `\uD800`-style escapes.
//! - **Fast where input is long**: bytes are validated as UTF-8 by `simdutf8`, with the vector
//!   units the CPU has (chosen at run time on x86-64); input it refuses is read again by the
//!   standard library to find the first invalid byte. [`from_str`] skips the check, and long
//!   string runs are scanned in 64-byte blocks.
//!
//! # Features
//!
//! - `serde_json`: [`JsonValue::to_serde_json`] and [`JsonValue::from_serde_json`]. `serde`
//!   support (`Serialize` for all value types, `Deserialize` for [`JsonValue`]) is always on.
//!
//! # Example
//!
//! ```
//! use tollgate_json::{from_slice, to_vec, JsonLimits, JsonValue, OutputLimits};
//!
//! let request = br#"{"jsonrpc":"2.0","id":1,"params":{"a":2,"b":3.0}}"#;
//! let value = from_slice(request, &JsonLimits::default())?;
//! let b = value.get("params").and_then(|p| p.get("b")).and_then(JsonValue::as_number);
//! assert_eq!(b.and_then(|n| n.to_i64()), Some(3));
//! assert_eq!(to_vec(&value, &OutputLimits::default())?, request.to_vec());
//! # Ok::<(), tollgate_json::Error>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod array;
mod bind;
mod error;
#[cfg(feature = "serde_json")]
mod interop;
mod limits;
mod number;
mod object;
mod read;
mod ser;
mod serde_impl;
mod string;
mod value;
mod write;

/// The newtype-struct name through which an exact number crosses serde as its spelling: both
/// [`from_value`] and [`to_value`] turn it into (and out of) a [`JsonNumber`] without expanding
/// digits. A newtype around `String` serialised under this name is a number to them.
#[doc(hidden)]
pub const EXACT_NUMBER: &str = "$tollgate_json::ExactNumber";

/// Like [`EXACT_NUMBER`] for integers: [`from_value`] charges the integer against the binding
/// limits (per-integer and total expanded characters) and passes its expanded digits.
#[doc(hidden)]
pub const EXACT_INTEGER: &str = "$tollgate_json::ExactInteger";

pub use array::JsonArray;
pub use bind::{BindLimits, from_value};
pub use error::{Error, ErrorKind};
pub use limits::{JsonLimits, OutputLimits};
pub use number::JsonNumber;
pub use object::{JsonObject, JsonObjectBuilder};
pub use read::{from_slice, from_str};
pub use ser::{MAX_SERIALIZE_NESTING, to_value};
pub use string::JsonString;
pub use value::{JsonType, JsonValue};
pub use write::{to_string, to_vec, write_into, write_str_into};

/// The crate README's example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;
