//! Random values of the authorization request: the PKCE verifier and its S256 challenge
//! (RFC 7636 §4.1–4.2) and the `state`. It owns only their generation; it must not know the
//! request they go into.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::auth::AuthError;

use super::kind;

/// `n` random bytes as unpadded base64url.
pub(crate) fn random_text(n: usize) -> Result<Zeroizing<String>, AuthError> {
    let mut bytes = Zeroizing::new(vec![0_u8; n]);
    getrandom::fill(&mut bytes).map_err(|_| AuthError::new(kind::RANDOM))?;
    Ok(Zeroizing::new(URL_SAFE_NO_PAD.encode(&*bytes)))
}

/// A PKCE verifier (43 characters from 32 random bytes) and its S256 challenge.
pub(crate) struct Pkce {
    pub(crate) verifier: Zeroizing<String>,
    pub(crate) challenge: String,
}

impl Pkce {
    /// A fresh verifier and its challenge.
    pub(crate) fn new() -> Result<Self, AuthError> {
        let verifier = random_text(32)?;
        let challenge = challenge_of(&verifier);
        Ok(Self {
            verifier,
            challenge,
        })
    }
}

/// `BASE64URL(SHA256(verifier))`.
pub(crate) fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;

    #[test]
    fn the_s256_challenge_matches_rfc_7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            challenge_of(verifier),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_43_unreserved_characters_and_differ() {
        let a = Pkce::new().unwrap();
        let b = Pkce::new().unwrap();
        assert_eq!(a.verifier.len(), 43);
        assert!(
            a.verifier
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        );
        assert_ne!(*a.verifier, *b.verifier);
        assert_eq!(a.challenge, challenge_of(&a.verifier));
    }
}
