//! The keys sealed request state uses: one [`RequestStateKey`] (a secret, zeroed when dropped),
//! and the key ring, several of them, each with an id, one sealing and
//! the others still opening. A deployment rotates its secret without failing a multi-round call
//! in flight: add the new key as the sealing one and keep the old one opening until every state
//! it sealed has expired (15 minutes), then retire it. A state sealed by a retired key no longer
//! opens, and is answered as any state that does not open.
//!
//! Owns the key, the ring, their bounds and the ring's text form (an environment variable or a
//! file every instance shares). Knows nothing of the envelope (`state.rs`) or of requests.

use std::fmt;
use std::path::Path;

use crate::facts::error::{BuildError, BuildErrorKind};

/// The fewest distinct byte values a configured secret may have.
const MIN_DISTINCT_SECRET_BYTES: usize = 8;

/// The secret request state is sealed with. Every instance serving one endpoint must share it
/// (a state sealed by one instance is opened by whichever receives the retry).
///
/// # Examples
///
/// ```
/// use tollgate::endpoint::RequestStateKey;
///
/// // 32 bytes from a secret store (here, fixed for the example).
/// let secret: Vec<u8> = (0u8..32).map(|i| i.wrapping_mul(97) ^ 0x5a).collect();
/// let key = RequestStateKey::from_secret(&secret)?;
/// assert!(RequestStateKey::from_secret(b"too short").is_err());
/// // A secret with little entropy (all zeros, one repeated byte, a short pattern) is refused.
/// assert!(RequestStateKey::from_secret(&[0u8; 32]).is_err());
/// assert!(RequestStateKey::from_secret(&[7u8; 64]).is_err());
/// // Debug never shows the secret.
/// assert_eq!(format!("{key:?}"), "RequestStateKey(..)");
/// # Ok::<(), tollgate::BuildError>(())
/// ```
pub struct RequestStateKey {
    /// On the heap, written in place and never moved by value: a key handed around moves the
    /// box, not the bytes, so no stale copy of the secret is left in a stack frame.
    secret: Box<[u8; 32]>,
}

impl Drop for RequestStateKey {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut *self.secret);
    }
}

impl Clone for RequestStateKey {
    fn clone(&self) -> Self {
        let mut copy = Self::zeroed();
        copy.secret.copy_from_slice(&self.secret[..]);
        copy
    }
}

impl fmt::Debug for RequestStateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RequestStateKey(..)")
    }
}

impl RequestStateKey {
    /// A key from at least 32 bytes of secret (longer secrets are condensed with SHA-256). The
    /// secret must not be plainly weak: at least 8 distinct byte values (a random 32-byte secret
    /// has about 27, its hex spelling about 16). This refuses placeholders, not guessable
    /// secrets: generate the secret with a cryptographic random source. The key's bytes are
    /// zeroed when it is dropped.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidConfiguration`] for fewer than 32 bytes, or a secret with fewer
    /// than 8 distinct byte values (all zeros, a repeated byte, a short pattern).
    pub fn from_secret(secret: &[u8]) -> Result<Self, BuildError> {
        use zeroize::Zeroize as _;
        // Which byte values occur says much about the secret: wiped once counted.
        let mut seen = [false; 256];
        for b in secret {
            seen[usize::from(*b)] = true;
        }
        let distinct = seen.iter().filter(|s| **s).count();
        seen.zeroize();
        if secret.len() < 32 || distinct < MIN_DISTINCT_SECRET_BYTES {
            return Err(BuildError::new(BuildErrorKind::InvalidConfiguration));
        }
        // Written straight into the key's own (heap) bytes, never through a stack array.
        let mut key = Self::zeroed();
        if secret.len() == 32 {
            key.secret.copy_from_slice(secret);
        } else {
            #[cfg(feature = "request-state")]
            {
                use sha2::Digest;
                let out =
                    sha2::digest::generic_array::GenericArray::from_mut_slice(&mut key.secret[..]);
                sha2::Sha256::new().chain_update(secret).finalize_into(out);
            }
            #[cfg(not(feature = "request-state"))]
            key.secret.copy_from_slice(&secret[..32]);
        }
        Ok(key)
    }

    /// A key of zeros, to be written in place.
    fn zeroed() -> Self {
        Self {
            secret: Box::new([0u8; 32]),
        }
    }

    /// The key's secret bytes (for the envelope's key derivation, `state.rs`).
    #[cfg_attr(
        not(feature = "request-state"),
        allow(dead_code, reason = "read only when sealing is built")
    )]
    pub(crate) fn secret(&self) -> &[u8; 32] {
        &self.secret
    }

    /// A random key for this process: states do not survive a restart and are not shared with
    /// other instances. The default when an endpoint sets none.
    pub fn generate() -> Option<Self> {
        let mut key = Self::zeroed();
        getrandom::fill(&mut key.secret[..]).ok()?;
        Some(key)
    }
}

/// The most keys a ring holds.
pub const MAX_REQUEST_STATE_KEYS: usize = 16;
/// The longest key id, in bytes (ids are 1 to 32 of `A-Z a-z 0-9 . _ -`).
pub const MAX_REQUEST_STATE_KEY_ID_BYTES: usize = 32;
/// The largest key ring configuration text, in bytes.
pub const MAX_REQUEST_STATE_KEYS_TEXT_BYTES: usize = 16 * 1024;

/// The id the single key of [`RequestStateKeyRing::from`] a [`RequestStateKey`] has.
const DEFAULT_ID: &str = "default";

// The fixed details of configuration errors (`BuildError::detail`): none names a secret.
const DETAIL_ID: &str = "key id must be 1 to 32 of A-Z a-z 0-9 . _ -";
const DETAIL_DUPLICATE: &str = "key id given twice";
const DETAIL_TOO_MANY: &str = "more than 16 request-state keys";
const DETAIL_EMPTY: &str = "no request-state key";
const DETAIL_ENTRY: &str = "a key is ID=base64:SECRET or ID=hex:SECRET";
const DETAIL_ENCODING: &str = "key secret is not valid base64 or hex";
const DETAIL_WEAK: &str = "key secret shorter than 32 bytes or with under 8 distinct bytes";
const DETAIL_TEXT: &str = "key configuration larger than 16 KiB or not UTF-8";
const DETAIL_UNSET: &str = "key environment variable not set";
const DETAIL_FILE: &str = "key file cannot be read";

fn invalid(detail: &'static str) -> BuildError {
    BuildError::new(BuildErrorKind::InvalidConfiguration).with_detail(detail)
}

/// The keys sealed request state is sealed and opened with, shared by every instance serving an
/// endpoint (see [`EndpointBuilder::request_state_keys`](crate::endpoint::EndpointBuilder::request_state_keys)).
///
/// The first key seals; every key opens a state sealed under its id. The text form, for an
/// environment variable or a file, lists `ID=base64:SECRET` or `ID=hex:SECRET` entries separated
/// by commas or new lines, the sealing key first; blank lines and lines starting with `#` are
/// skipped. Each secret is at least 32 bytes, as [`RequestStateKey::from_secret`] requires.
///
/// # Examples
///
/// ```
/// use tollgate::endpoint::{RequestStateKey, RequestStateKeyRing};
///
/// // Rotation: `k2` now seals, `k1` still opens what it sealed.
/// let ring = RequestStateKeyRing::parse(
///     "k2=hex:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f,\
///      k1=base64:ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=",
/// )?;
/// assert_eq!(ring.sealing_id(), "k2");
/// assert_eq!(ring.ids().collect::<Vec<_>>(), ["k2", "k1"]);
/// // Debug shows the ids, never a secret.
/// assert_eq!(format!("{ring:?}"), r#"RequestStateKeyRing { sealing: "k2", opening: ["k1"] }"#);
/// // Built in code: the same ring.
/// let k1: Vec<u8> = (32u8..64).collect();
/// let k2: Vec<u8> = (0u8..32).collect();
/// let built = RequestStateKeyRing::new("k2", RequestStateKey::from_secret(&k2)?)?
///     .also_opening("k1", RequestStateKey::from_secret(&k1)?)?;
/// assert_eq!(built.ids().collect::<Vec<_>>(), ["k2", "k1"]);
/// # Ok::<(), tollgate::BuildError>(())
/// ```
#[derive(Clone)]
pub struct RequestStateKeyRing {
    /// The sealing key first.
    keys: Vec<(Box<str>, RequestStateKey)>,
}

impl fmt::Debug for RequestStateKeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut ids = self.keys.iter().map(|(id, _)| &**id);
        f.debug_struct("RequestStateKeyRing")
            .field("sealing", &ids.next().unwrap_or(""))
            .field("opening", &ids.collect::<Vec<_>>())
            .finish()
    }
}

impl From<RequestStateKey> for RequestStateKeyRing {
    /// A ring of one key, with the id `default`.
    fn from(key: RequestStateKey) -> Self {
        Self {
            keys: vec![(DEFAULT_ID.into(), key)],
        }
    }
}

fn valid_id(id: &str) -> bool {
    (1..=MAX_REQUEST_STATE_KEY_ID_BYTES).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

impl RequestStateKeyRing {
    /// A ring whose key `id` seals (and opens).
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidConfiguration`] for an id that is not 1 to 32 of
    /// `A-Z a-z 0-9 . _ -`.
    pub fn new(id: &str, sealing: RequestStateKey) -> Result<Self, BuildError> {
        if !valid_id(id) {
            return Err(invalid(DETAIL_ID));
        }
        Ok(Self {
            keys: vec![(id.into(), sealing)],
        })
    }

    /// Adds a key that opens what it sealed but no longer seals.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidConfiguration`] for an invalid or repeated id, or past
    /// [`MAX_REQUEST_STATE_KEYS`] keys.
    pub fn also_opening(mut self, id: &str, key: RequestStateKey) -> Result<Self, BuildError> {
        if !valid_id(id) {
            return Err(invalid(DETAIL_ID));
        }
        if self.keys.iter().any(|(known, _)| &**known == id) {
            return Err(invalid(DETAIL_DUPLICATE));
        }
        if self.keys.len() >= MAX_REQUEST_STATE_KEYS {
            return Err(invalid(DETAIL_TOO_MANY));
        }
        self.keys.push((id.into(), key));
        Ok(self)
    }

    /// A ring from its text form (see the type's documentation).
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidConfiguration`] with a fixed detail and the entry's position
    /// (`entry N`, counted from 1) for a malformed entry, an invalid or repeated id, a secret
    /// that is not base64 or hex or is too weak, more than [`MAX_REQUEST_STATE_KEYS`] entries, no
    /// entry, or a text over [`MAX_REQUEST_STATE_KEYS_TEXT_BYTES`]. No error holds a secret.
    pub fn parse(text: &str) -> Result<Self, BuildError> {
        if text.len() > MAX_REQUEST_STATE_KEYS_TEXT_BYTES {
            return Err(invalid(DETAIL_TEXT));
        }
        let entries = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .flat_map(|line| line.split(','))
            .map(str::trim)
            .filter(|entry| !entry.is_empty());
        let mut ring: Option<Self> = None;
        for (n, entry) in entries.enumerate() {
            let at = |e: BuildError| e.at_location(format!("entry {}", n + 1));
            let (id, secret) = entry
                .split_once('=')
                .ok_or_else(|| at(invalid(DETAIL_ENTRY)))?;
            let secret = decode(secret.trim()).map_err(at)?;
            let key =
                RequestStateKey::from_secret(&secret).map_err(|_| at(invalid(DETAIL_WEAK)))?;
            ring = Some(
                match ring {
                    None => Self::new(id.trim(), key),
                    Some(ring) => ring.also_opening(id.trim(), key),
                }
                .map_err(at)?,
            );
        }
        ring.ok_or_else(|| invalid(DETAIL_EMPTY))
    }

    /// A ring from the environment variable `var` (its text form).
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidConfiguration`] when the variable is not set or not UTF-8, and
    /// as [`parse`](Self::parse).
    pub fn from_env(var: &str) -> Result<Self, BuildError> {
        match std::env::var(var) {
            Ok(text) => Self::parse(&zeroize::Zeroizing::new(text)),
            Err(std::env::VarError::NotPresent) => Err(invalid(DETAIL_UNSET)),
            Err(std::env::VarError::NotUnicode(_)) => Err(invalid(DETAIL_TEXT)),
        }
    }

    /// A ring from the file at `path` (its text form), read up to
    /// [`MAX_REQUEST_STATE_KEYS_TEXT_BYTES`] + 1 bytes.
    ///
    /// # Errors
    ///
    /// [`BuildErrorKind::InvalidConfiguration`] when the file cannot be read, is larger than
    /// the bound or is not UTF-8, and as [`parse`](Self::parse).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, BuildError> {
        use std::io::Read as _;
        let file = std::fs::File::open(path).map_err(|_| invalid(DETAIL_FILE))?;
        // Room for the whole bound up front: no reallocation leaves a copy of a secret behind.
        let mut bytes =
            zeroize::Zeroizing::new(Vec::with_capacity(MAX_REQUEST_STATE_KEYS_TEXT_BYTES + 1));
        let bound = u64::try_from(MAX_REQUEST_STATE_KEYS_TEXT_BYTES + 1).unwrap_or(u64::MAX);
        file.take(bound)
            .read_to_end(&mut bytes)
            .map_err(|_| invalid(DETAIL_FILE))?;
        match std::str::from_utf8(&bytes) {
            Ok(text) => Self::parse(text),
            Err(_) => Err(invalid(DETAIL_TEXT)),
        }
    }

    /// The id of the key that seals.
    pub fn sealing_id(&self) -> &str {
        self.keys.first().map_or("", |(id, _)| id)
    }

    /// Every key's id, the sealing key's first.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(|(id, _)| &**id)
    }

    /// The sealing key and its id.
    #[cfg_attr(
        not(feature = "request-state"),
        allow(dead_code, reason = "read only when sealing is built")
    )]
    pub(crate) fn sealing(&self) -> Option<(&str, &RequestStateKey)> {
        self.keys.first().map(|(id, key)| (&**id, key))
    }

    /// Every key, the sealing key's first.
    #[cfg_attr(
        not(feature = "request-state"),
        allow(dead_code, reason = "read only when sealing is built")
    )]
    pub(crate) fn keys(&self) -> impl Iterator<Item = &RequestStateKey> {
        self.keys.iter().map(|(_, key)| key)
    }

    /// The key with id `id`.
    #[cfg_attr(
        not(feature = "request-state"),
        allow(dead_code, reason = "read only when sealing is built")
    )]
    pub(crate) fn get(&self, id: &str) -> Option<&RequestStateKey> {
        self.keys
            .iter()
            .find(|(k, _)| &**k == id)
            .map(|(_, key)| key)
    }
}

/// `base64:` (standard alphabet, padded) or `hex:` secret bytes, wiped when dropped.
fn decode(secret: &str) -> Result<zeroize::Zeroizing<Vec<u8>>, BuildError> {
    if let Some(b64) = secret.strip_prefix("base64:") {
        // Decoded into a buffer that wipes itself, so a secret that fails part way (bad
        // padding, an odd byte) is wiped too, not freed as it was.
        let mut out = zeroize::Zeroizing::new(Vec::new());
        return crate::wire::syntax::base64_decode_into(
            b64.as_bytes(),
            MAX_REQUEST_STATE_KEYS_TEXT_BYTES,
            &mut out,
        )
        .map(|()| out)
        .ok_or_else(|| invalid(DETAIL_ENCODING));
    }
    let Some(hex) = secret.strip_prefix("hex:") else {
        return Err(invalid(DETAIL_ENTRY));
    };
    let digit = |b: u8| char::from(b).to_digit(16);
    let bytes = hex.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return Err(invalid(DETAIL_ENCODING));
    }
    // Filled in place (and wiped however it ends), never through a growing buffer.
    let mut out = zeroize::Zeroizing::new(Vec::with_capacity(bytes.len() / 2));
    for pair in bytes.chunks_exact(2) {
        let byte = match pair {
            [hi, lo] => match (digit(*hi), digit(*lo)) {
                (Some(hi), Some(lo)) => u8::try_from(hi * 16 + lo).ok(),
                _ => None,
            },
            _ => None,
        };
        out.push(byte.ok_or_else(|| invalid(DETAIL_ENCODING))?);
    }
    Ok(out)
}

#[cfg(test)]
#[path = "keyring_tests.rs"]
mod tests;
