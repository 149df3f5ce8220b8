//! Sealed request state: the `requestState` Tollgate issues with every `input_required` result
//! and opens on the retry.
//!
//! Owns the envelope: version, the sealing key's id (from the endpoint's key ring and its
//! [`RequestStateKey`]s, `keyring.rs`), random 96-bit nonce, and AES-256-GCM ciphertext under
//! a key derived with HKDF-SHA256 from that key's secret and the endpoint's path. A version 1
//! envelope (no key id, sealed before key rings) is tried with each key of the ring. The
//! plaintext holds the expiry (15 minutes), the round (at most 10), the keys and methods of the
//! inputs asked for, the handler's state, and a random 128-bit use nonce (the [`Ticket`] a
//! single-use endpoint consumes, `single_use/`); the binding (endpoint, method, operation name,
//! a digest of the arguments, the admitted principal) is authenticated as associated data, so
//! state presented on another request, by another principal, after expiry, or altered in any
//! bit does not open. Knows nothing of JSON-RPC; the methods' request-state stage
//! (`state/request.rs`) decides what to seal.

#[cfg(feature = "request-state")]
use std::time::UNIX_EPOCH;
use std::time::{Duration, SystemTime};

#[cfg(feature = "request-state")]
use tollgate_json::{JsonLimits, OutputLimits, from_slice, to_vec};
use tollgate_json::{JsonObject, JsonValue};

#[cfg(feature = "request-state")]
use crate::facts::keyring::RequestStateKey;
use crate::facts::keyring::RequestStateKeyRing;
use crate::single_use::Ticket;

/// How long a sealed state stays valid.
pub const REQUEST_STATE_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// The most rounds one request may take.
pub const MAX_REQUEST_STATE_ROUNDS: u8 = 10;
/// The largest sealed state, in bytes of its wire form.
pub const MAX_REQUEST_STATE_BYTES: usize = 64 * 1024;

/// The envelope's version: 2 names its key; 1 (no key id) is still opened.
#[cfg(feature = "request-state")]
const VERSION: u8 = 2;
#[cfg(feature = "request-state")]
const VERSION_WITHOUT_KEY_ID: u8 = 1;
#[cfg(feature = "request-state")]
const NONCE_BYTES: usize = 12;
/// The random use nonce sealed inside every state (`"once"`, base64 of 16 bytes).
#[cfg(feature = "request-state")]
const USE_NONCE_BYTES: usize = 16;
/// The longest use nonce an opened state may name (its base64 form, with room to spare).
#[cfg(feature = "request-state")]
const MAX_USE_NONCE_TEXT: usize = 64;

/// What a state is bound to: the retry must present the same.
#[cfg_attr(
    not(feature = "request-state"),
    allow(dead_code, reason = "read only when sealing is built")
)]
pub(crate) struct Binding<'a> {
    pub(crate) endpoint: &'a str,
    pub(crate) method: &'a str,
    pub(crate) name: &'a str,
    pub(crate) arguments: &'a JsonObject,
    pub(crate) principal: Option<&'a str>,
}

/// What a sealed state carries.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Opened {
    pub(crate) round: u8,
    /// The keys asked for, with their methods.
    pub(crate) asked: Vec<(String, String)>,
    pub(crate) state: JsonValue,
}

/// Why a state did not open (all answered the same way: the reasons are not told apart on the
/// wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unopenable;

#[cfg(feature = "request-state")]
mod aead {
    use aes_gcm::aead::{Aead, KeyInit, Payload};
    use aes_gcm::{Aes256Gcm, Nonce};
    use hkdf::Hkdf;
    use sha2::{Digest, Sha256};

    use super::{Binding, RequestStateKey};

    pub(super) fn cipher(key: &RequestStateKey, endpoint: &str) -> Option<Aes256Gcm> {
        let hk = Hkdf::<Sha256>::new(Some(b"tollgate/request-state/v1"), key.secret());
        let mut okm = zeroize::Zeroizing::new([0u8; 32]);
        hk.expand(endpoint.as_bytes(), okm.as_mut()).ok()?;
        Aes256Gcm::new_from_slice(okm.as_ref()).ok()
    }

    /// The associated data: a digest of every bound field and of the key's id (empty in a
    /// version 1 envelope), each length-prefixed; the arguments as the digest of their
    /// canonical form.
    pub(super) fn aad(binding: &Binding<'_>, key_id: &str) -> [u8; 32] {
        let arguments: [u8; 32] = super::canonical_digest(binding.arguments);
        let mut h = Sha256::new();
        if !key_id.is_empty() {
            h.update((key_id.len() as u64).to_be_bytes());
            h.update(key_id.as_bytes());
        }
        for part in [
            binding.endpoint.as_bytes(),
            binding.method.as_bytes(),
            binding.name.as_bytes(),
            &arguments[..],
            binding.principal.unwrap_or("").as_bytes(),
            if binding.principal.is_some() {
                b"p"
            } else {
                b"a"
            },
        ] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part);
        }
        h.finalize().into()
    }

    pub(super) fn seal(
        cipher: &Aes256Gcm,
        nonce: &[u8; 12],
        aad: &[u8],
        plain: &[u8],
    ) -> Option<Vec<u8>> {
        cipher
            .encrypt(Nonce::from_slice(nonce), Payload { msg: plain, aad })
            .ok()
    }

    pub(super) fn open(
        cipher: &Aes256Gcm,
        nonce: &[u8],
        aad: &[u8],
        sealed: &[u8],
    ) -> Option<Vec<u8>> {
        cipher
            .decrypt(Nonce::from_slice(nonce), Payload { msg: sealed, aad })
            .ok()
    }
}

/// The SHA-256 digest of the arguments in a canonical form, streamed with no size cap (so two
/// argument objects of any size bind alike only when they are equal): object members sorted by
/// name, every string length-prefixed, numbers by value whatever their spelling (`1.0` binds as
/// `1`), and a tag before each value so no two shapes share an encoding.
#[cfg(feature = "request-state")]
fn canonical_digest(arguments: &JsonObject) -> [u8; 32] {
    use sha2::Digest;
    use std::hash::Hash;

    /// Feeds `Hash` writes into SHA-256, every integer big-endian, so the digest is the same on
    /// every platform.
    struct Feed(sha2::Sha256);

    impl std::hash::Hasher for Feed {
        fn finish(&self) -> u64 {
            0
        }
        fn write(&mut self, bytes: &[u8]) {
            self.0.update(bytes);
        }
        fn write_u8(&mut self, i: u8) {
            self.0.update([i]);
        }
        fn write_u32(&mut self, i: u32) {
            self.0.update(i.to_be_bytes());
        }
        fn write_u64(&mut self, i: u64) {
            self.0.update(i.to_be_bytes());
        }
        fn write_i64(&mut self, i: i64) {
            self.0.update(i.to_be_bytes());
        }
    }

    fn text(feed: &mut Feed, s: &str) {
        feed.0.update((s.len() as u64).to_be_bytes());
        feed.0.update(s.as_bytes());
    }

    fn value(feed: &mut Feed, v: &JsonValue) {
        match v {
            JsonValue::Null => feed.0.update(b"z"),
            JsonValue::Bool(b) => feed.0.update(if *b { b"t" } else { b"f" }),
            JsonValue::Number(n) => {
                feed.0.update(b"n");
                n.hash(feed);
            }
            JsonValue::String(s) => {
                feed.0.update(b"s");
                text(feed, s.as_str());
            }
            JsonValue::Array(a) => {
                feed.0.update(b"a");
                feed.0.update((a.len() as u64).to_be_bytes());
                for item in a.iter() {
                    value(feed, item);
                }
            }
            JsonValue::Object(o) => object(feed, o),
        }
    }

    fn object(feed: &mut Feed, o: &JsonObject) {
        let mut members: Vec<_> = o.iter().collect();
        members.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        feed.0.update(b"o");
        feed.0.update((members.len() as u64).to_be_bytes());
        for (k, v) in members {
            text(feed, k.as_str());
            value(feed, v);
        }
    }

    let mut feed = Feed(sha2::Sha256::new());
    object(&mut feed, arguments);
    feed.0.finalize().into()
}

#[cfg(feature = "request-state")]
fn now_secs(now: SystemTime) -> u64 {
    now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// What a state seals: its expiry, round, the inputs asked for, the handler's state and a fresh
/// random use nonce.
#[cfg(feature = "request-state")]
fn plaintext(opened: &Opened, now: SystemTime) -> Option<Vec<u8>> {
    let mut once = [0u8; USE_NONCE_BYTES];
    getrandom::fill(&mut once).ok()?;
    let asked: Vec<JsonValue> = opened
        .asked
        .iter()
        .map(|(k, m)| {
            JsonValue::from(vec![
                JsonValue::from(k.as_str()),
                JsonValue::from(m.as_str()),
            ])
        })
        .collect();
    let plain = JsonObject::builder()
        .insert("exp", now_secs(now) + REQUEST_STATE_LIFETIME.as_secs())
        .insert("round", u64::from(opened.round))
        .insert("asked", JsonValue::from(asked))
        .insert("state", opened.state.clone())
        .insert("once", crate::wire::syntax::base64_encode(&once))
        .build();
    to_vec(&plain.into(), &OutputLimits::default()).ok()
}

/// Seals `opened` for `binding` with the ring's sealing key; `None` when it would not fit (or
/// sealing is unavailable).
pub(crate) fn seal(
    keys: &RequestStateKeyRing,
    binding: &Binding<'_>,
    opened: &Opened,
    now: SystemTime,
) -> Option<String> {
    #[cfg(feature = "request-state")]
    {
        let plain = plaintext(opened, now)?;
        let (key_id, key) = keys.sealing()?;
        let cipher = aead::cipher(key, binding.endpoint)?;
        let aad = aead::aad(binding, key_id);
        let mut nonce = [0u8; NONCE_BYTES];
        getrandom::fill(&mut nonce).ok()?;
        let sealed = aead::seal(&cipher, &nonce, &aad, &plain)?;
        let mut envelope = Vec::with_capacity(2 + key_id.len() + NONCE_BYTES + sealed.len());
        envelope.push(VERSION);
        envelope.push(u8::try_from(key_id.len()).ok()?);
        envelope.extend_from_slice(key_id.as_bytes());
        envelope.extend_from_slice(&nonce);
        envelope.extend_from_slice(&sealed);
        let text = crate::wire::syntax::base64_encode(&envelope);
        (text.len() <= MAX_REQUEST_STATE_BYTES).then_some(text)
    }
    #[cfg(not(feature = "request-state"))]
    {
        let _ = (keys, binding, opened, now);
        None
    }
}

/// Opens a state presented on a retry bound as `binding`, with the ring's key it names (a
/// version 1 envelope: whichever key of the ring opens it), with its [`Ticket`].
pub(crate) fn open(
    keys: &RequestStateKeyRing,
    binding: &Binding<'_>,
    text: &str,
    now: SystemTime,
) -> Result<(Opened, Ticket), Unopenable> {
    #[cfg(feature = "request-state")]
    {
        if text.len() > MAX_REQUEST_STATE_BYTES {
            return Err(Unopenable);
        }
        let envelope = crate::wire::syntax::base64_decode(text.as_bytes(), MAX_REQUEST_STATE_BYTES)
            .ok_or(Unopenable)?;
        let plain = match envelope.split_first() {
            Some((&VERSION, rest)) => {
                let (&id_len, rest) = rest.split_first().ok_or(Unopenable)?;
                let (id, rest) = rest
                    .split_at_checked(usize::from(id_len))
                    .ok_or(Unopenable)?;
                let id = std::str::from_utf8(id).map_err(|_| Unopenable)?;
                // A retired or unknown key: the state does not open.
                let key = keys.get(id).ok_or(Unopenable)?;
                open_with(key, &aead::aad(binding, id), binding, rest)?
            }
            Some((&VERSION_WITHOUT_KEY_ID, rest)) => {
                // One digest of the arguments, whichever key opens it.
                let aad = aead::aad(binding, "");
                keys.keys()
                    .find_map(|key| open_with(key, &aad, binding, rest).ok())
                    .ok_or(Unopenable)?
            }
            _ => return Err(Unopenable),
        };
        let value = from_slice(&plain, &JsonLimits::default()).map_err(|_| Unopenable)?;
        let exp = value
            .get("exp")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_u64())
            .ok_or(Unopenable)?;
        if now_secs(now) > exp {
            return Err(Unopenable);
        }
        let round = value
            .get("round")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_u64())
            .and_then(|n| u8::try_from(n).ok())
            .ok_or(Unopenable)?;
        let mut asked = Vec::new();
        for pair in value
            .get("asked")
            .and_then(JsonValue::as_array)
            .ok_or(Unopenable)?
            .iter()
        {
            let pair = pair.as_array().ok_or(Unopenable)?;
            match pair.as_slice() {
                [k, m] => asked.push((
                    k.as_str().ok_or(Unopenable)?.to_owned(),
                    m.as_str().ok_or(Unopenable)?.to_owned(),
                )),
                _ => return Err(Unopenable),
            }
        }
        let state = value.get("state").cloned().ok_or(Unopenable)?;
        let nonce = match value.get("once") {
            None => None,
            Some(JsonValue::String(s)) if (1..=MAX_USE_NONCE_TEXT).contains(&s.as_str().len()) => {
                Some(s.as_str().to_owned())
            }
            Some(_) => return Err(Unopenable),
        };
        let ticket = Ticket {
            nonce,
            expires_at_secs: exp,
        };
        Ok((
            Opened {
                round,
                asked,
                state,
            },
            ticket,
        ))
    }
    #[cfg(not(feature = "request-state"))]
    {
        let _ = (keys, binding, text, now);
        Err(Unopenable)
    }
}

/// Decrypts `nonce || ciphertext` with `key` under the associated data `aad`.
#[cfg(feature = "request-state")]
fn open_with(
    key: &RequestStateKey,
    aad: &[u8],
    binding: &Binding<'_>,
    sealed: &[u8],
) -> Result<Vec<u8>, Unopenable> {
    if sealed.len() < NONCE_BYTES + 16 {
        return Err(Unopenable);
    }
    let (nonce, sealed) = sealed.split_at(NONCE_BYTES);
    let cipher = aead::cipher(key, binding.endpoint).ok_or(Unopenable)?;
    aead::open(&cipher, nonce, aad, sealed).ok_or(Unopenable)
}

#[cfg(all(test, feature = "request-state"))]
mod tests {
    use super::*;

    /// [`super::open`] without its ticket.
    fn open(
        keys: &RequestStateKeyRing,
        binding: &Binding<'_>,
        text: &str,
        now: SystemTime,
    ) -> Result<Opened, Unopenable> {
        super::open(keys, binding, text, now).map(|(opened, _)| opened)
    }

    #[test]
    fn every_state_carries_its_own_use_nonce_and_expiry() {
        let key = ring(4);
        let args = JsonObject::new();
        let now = SystemTime::now();
        let bound = binding(&args, None);
        let a = seal(&key, &bound, &opened(), now).unwrap_or_default();
        let b = seal(&key, &bound, &opened(), now).unwrap_or_default();
        let (_, ta) = super::open(&key, &bound, &a, now).unwrap_or_else(|_| unreachable!());
        let (_, tb) = super::open(&key, &bound, &b, now).unwrap_or_else(|_| unreachable!());
        let (na, nb) = (ta.nonce.unwrap_or_default(), tb.nonce.unwrap_or_default());
        assert_eq!(na.len(), 24, "16 bytes in base64");
        assert_ne!(na, nb);
        assert_eq!(
            ta.expires_at_secs,
            now_secs(now) + REQUEST_STATE_LIFETIME.as_secs()
        );
    }

    fn binding<'a>(arguments: &'a JsonObject, principal: Option<&'a str>) -> Binding<'a> {
        Binding {
            endpoint: "/mcp",
            method: "tools/call",
            name: "t",
            arguments,
            principal,
        }
    }

    /// A ring of one key from [`test_secret`]`(seed)`.
    fn ring(seed: u8) -> RequestStateKeyRing {
        RequestStateKeyRing::from(key(seed))
    }

    fn key(seed: u8) -> RequestStateKey {
        RequestStateKey::from_secret(&test_secret(seed)).unwrap_or_else(|_| unreachable!())
    }

    /// A secret with enough distinct bytes, different for each `seed`.
    fn test_secret(seed: u8) -> Vec<u8> {
        (0u8..32)
            .map(|i| i.wrapping_mul(37).wrapping_add(seed.wrapping_mul(101)))
            .collect()
    }

    fn opened() -> Opened {
        Opened {
            round: 1,
            asked: vec![("k".into(), "roots/list".into())],
            state: JsonValue::from("s"),
        }
    }

    #[test]
    fn a_state_opens_only_where_it_was_bound() {
        let key = ring(1);
        let args = JsonObject::builder().insert("a", 1).insert("b", 2).build();
        let now = SystemTime::now();
        let sealed = seal(&key, &binding(&args, Some("alice")), &opened(), now).unwrap_or_default();
        assert!(!sealed.is_empty());
        assert_eq!(
            open(&key, &binding(&args, Some("alice")), &sealed, now),
            Ok(opened())
        );
        // Re-ordered arguments are the same arguments.
        let reordered = JsonObject::builder().insert("b", 2).insert("a", 1).build();
        assert!(open(&key, &binding(&reordered, Some("alice")), &sealed, now).is_ok());
        // Other arguments, another principal, anonymous, another key, later than 15 minutes.
        let other = JsonObject::builder().insert("a", 2).insert("b", 2).build();
        assert!(open(&key, &binding(&other, Some("alice")), &sealed, now).is_err());
        assert!(open(&key, &binding(&args, Some("bob")), &sealed, now).is_err());
        assert!(open(&key, &binding(&args, None), &sealed, now).is_err());
        let other_key = ring(2);
        assert!(open(&other_key, &binding(&args, Some("alice")), &sealed, now).is_err());
        let later = now + REQUEST_STATE_LIFETIME + Duration::from_secs(2);
        assert!(open(&key, &binding(&args, Some("alice")), &sealed, later).is_err());
        // Any altered character.
        for i in [0, sealed.len() / 2, sealed.len() - 1] {
            let mut bytes = sealed.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            let tampered = String::from_utf8(bytes).unwrap_or_default();
            assert!(
                open(&key, &binding(&args, Some("alice")), &tampered, now).is_err(),
                "{i}"
            );
        }
        for junk in ["", "x", "!!!!", &"A".repeat(MAX_REQUEST_STATE_BYTES + 1)] {
            assert!(open(&key, &binding(&args, Some("alice")), junk, now).is_err());
        }
    }

    #[test]
    fn a_state_past_the_size_bound_is_not_sealed() {
        let key = ring(1);
        let args = JsonObject::new();
        let mut big = opened();
        big.state = JsonValue::from("x".repeat(MAX_REQUEST_STATE_BYTES));
        assert!(seal(&key, &binding(&args, None), &big, SystemTime::now()).is_none());
        let mut fits = opened();
        fits.state = JsonValue::from("x".repeat(40 * 1024));
        assert!(seal(&key, &binding(&args, None), &fits, SystemTime::now()).is_some());
    }

    #[test]
    fn arguments_of_any_size_bind_exactly() {
        let key = ring(3);
        // Two argument objects over 4 MiB that differ only in their last character.
        let big = |last: &str| {
            JsonObject::builder()
                .insert("text", format!("{}{last}", "x".repeat(5 * 1024 * 1024)))
                .build()
        };
        let (a, b) = (big("a"), big("b"));
        let now = SystemTime::now();
        let sealed = seal(&key, &binding(&a, None), &opened(), now).unwrap_or_default();
        assert!(!sealed.is_empty());
        assert!(open(&key, &binding(&a, None), &sealed, now).is_ok());
        assert!(open(&key, &binding(&b, None), &sealed, now).is_err());
        // Numbers bind by value; shapes never collide.
        let one = JsonObject::builder().insert("n", 1).build();
        let one_point_oh = tollgate_json::from_slice(br#"{"n":1.0}"#, &JsonLimits::default())
            .ok()
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default();
        assert_eq!(canonical_digest(&one), canonical_digest(&one_point_oh));
        let string_one = JsonObject::builder().insert("n", "1").build();
        assert_ne!(canonical_digest(&one), canonical_digest(&string_one));
        let nested = JsonObject::builder()
            .insert("a", JsonObject::builder().insert("b", "c").build())
            .build();
        let flat = JsonObject::builder().insert("a", "bc").build();
        assert_ne!(canonical_digest(&nested), canonical_digest(&flat));
    }

    #[test]
    fn rotation_keeps_states_open_until_their_key_is_retired() {
        let args = JsonObject::builder().insert("a", 1).build();
        let bound = binding(&args, None);
        let now = SystemTime::now();
        let named = |id: &str, seed: u8| {
            RequestStateKeyRing::new(id, key(seed)).unwrap_or_else(|_| unreachable!())
        };
        // Sealed under k1 alone.
        let k1 = named("k1", 1);
        let by_k1 = seal(&k1, &bound, &opened(), now).unwrap_or_default();
        // Rotated: k2 seals, k1 still opens.
        let rotated = named("k2", 2)
            .also_opening("k1", key(1))
            .unwrap_or_else(|_| unreachable!());
        assert_eq!(open(&rotated, &bound, &by_k1, now), Ok(opened()));
        let by_k2 = seal(&rotated, &bound, &opened(), now).unwrap_or_default();
        assert_eq!(open(&rotated, &bound, &by_k2, now), Ok(opened()));
        // An instance not yet rotated cannot open what k2 sealed (it must know k2 first).
        assert!(open(&k1, &bound, &by_k2, now).is_err());
        // k1 retired: its states no longer open; k2's still do.
        let retired = named("k2", 2);
        assert!(open(&retired, &bound, &by_k1, now).is_err());
        assert_eq!(open(&retired, &bound, &by_k2, now), Ok(opened()));
        // A state naming k1 does not open under another secret called k1.
        assert!(open(&named("k1", 3), &bound, &by_k1, now).is_err());
    }

    #[test]
    fn the_key_id_is_authenticated() {
        let args = JsonObject::builder().build();
        let bound = binding(&args, None);
        let now = SystemTime::now();
        // Two ids for one secret: a state sealed under one does not open named as the other.
        let ring = RequestStateKeyRing::new("a", key(1))
            .and_then(|r| r.also_opening("b", key(1)))
            .unwrap_or_else(|_| unreachable!());
        let sealed = seal(&ring, &bound, &opened(), now).unwrap_or_default();
        let mut envelope =
            crate::wire::syntax::base64_decode(sealed.as_bytes(), 1 << 16).unwrap_or_default();
        assert_eq!(&envelope[..3], &[VERSION, 1, b'a']);
        envelope[2] = b'b';
        let renamed = crate::wire::syntax::base64_encode(&envelope);
        assert!(open(&ring, &bound, &renamed, now).is_err());
        // A key id longer than the envelope, or not UTF-8.
        for bad in [vec![VERSION, 200, b'a'], vec![VERSION, 1, 0xff, 0, 0]] {
            let text = crate::wire::syntax::base64_encode(&bad);
            assert!(open(&ring, &bound, &text, now).is_err());
        }
    }

    #[test]
    fn a_version_2_state_relabelled_version_1_does_not_open() {
        let args = JsonObject::builder().insert("a", 1).build();
        let bound = binding(&args, None);
        let now = SystemTime::now();
        let ring = RequestStateKeyRing::new("k", key(1)).unwrap_or_else(|_| unreachable!());
        let sealed = seal(&ring, &bound, &opened(), now).unwrap_or_default();
        let envelope =
            crate::wire::syntax::base64_decode(sealed.as_bytes(), 1 << 16).unwrap_or_default();
        // Version 1, the key id stripped: same key, same nonce and ciphertext.
        let mut downgraded = vec![VERSION_WITHOUT_KEY_ID];
        downgraded.extend_from_slice(envelope.get(3..).unwrap_or_default());
        let downgraded = crate::wire::syntax::base64_encode(&downgraded);
        assert!(open(&ring, &bound, &downgraded, now).is_err());
        assert_eq!(open(&ring, &bound, &sealed, now), Ok(opened()));
    }

    #[test]
    fn version_1_envelopes_open_with_any_key_of_the_ring() {
        let args = JsonObject::builder().insert("x", "y").build();
        let bound = binding(&args, Some("p"));
        let now = SystemTime::now();
        // A state as Tollgate sealed it before key rings: version 1, no key id.
        let plain = plaintext(&opened(), now).unwrap_or_default();
        let cipher = aead::cipher(&key(1), bound.endpoint).unwrap_or_else(|| unreachable!());
        let nonce = [7u8; NONCE_BYTES];
        let sealed =
            aead::seal(&cipher, &nonce, &aead::aad(&bound, ""), &plain).unwrap_or_default();
        let mut envelope = vec![VERSION_WITHOUT_KEY_ID];
        envelope.extend_from_slice(&nonce);
        envelope.extend_from_slice(&sealed);
        let v1 = crate::wire::syntax::base64_encode(&envelope);
        let ring = RequestStateKeyRing::new("new", key(2))
            .and_then(|r| r.also_opening("old", key(1)))
            .unwrap_or_else(|_| unreachable!());
        assert_eq!(open(&ring, &bound, &v1, now), Ok(opened()));
        assert!(open(&RequestStateKeyRing::from(key(2)), &bound, &v1, now).is_err());
    }
}
