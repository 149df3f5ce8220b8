//! Signed JWTs the client makes: `private_key_jwt` client assertions (RFC 7523 §2.2) from an
//! ES256 or RS256 PEM key, and DPoP proofs (RFC 9449 §4) from a P-256 key made per client. It
//! owns the signing; it must not know when a proof or an assertion is needed.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use serde::Serialize;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::auth::AuthError;

use super::kind;
use super::pkce::random_text;

/// The algorithm of a client's private key for `private_key_jwt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyAlgorithm {
    /// ECDSA with P-256 and SHA-256.
    Es256,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
}

impl KeyAlgorithm {
    /// The algorithm's JOSE name (`"ES256"`, `"RS256"`), or `None` for another.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "ES256" => Some(Self::Es256),
            "RS256" => Some(Self::Rs256),
            _ => None,
        }
    }
}

/// A private key in PEM (PKCS#8; PKCS#1 too for RSA) with its algorithm, wiped on drop.
#[derive(Clone)]
pub(crate) struct PrivateKey {
    pub(crate) pem: Zeroizing<String>,
    pub(crate) algorithm: KeyAlgorithm,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[derive(Serialize)]
struct AssertionClaims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
    jti: &'a str,
}

/// A client assertion for `client_id` at the authorization server `audience` (its issuer),
/// valid for five minutes, with a fresh `jti`.
pub(crate) fn client_assertion(
    key: &PrivateKey,
    client_id: &str,
    audience: &str,
) -> Result<Zeroizing<String>, AuthError> {
    use jsonwebtoken::{Algorithm, EncodingKey, Header};
    let error = || AuthError::new(kind::CREDENTIAL);
    let (encoding, algorithm) = match key.algorithm {
        KeyAlgorithm::Es256 => (
            EncodingKey::from_ec_pem(key.pem.as_bytes()),
            Algorithm::ES256,
        ),
        KeyAlgorithm::Rs256 => (
            EncodingKey::from_rsa_pem(key.pem.as_bytes()),
            Algorithm::RS256,
        ),
    };
    let encoding = encoding.map_err(|_| error())?;
    let jti = random_text(16)?;
    let iat = now();
    let claims = AssertionClaims {
        iss: client_id,
        sub: client_id,
        aud: audience,
        iat,
        exp: iat + 300,
        jti: &jti,
    };
    jsonwebtoken::encode(&Header::new(algorithm), &claims, &encoding)
        .map(Zeroizing::new)
        .map_err(|_| error())
}

/// A P-256 key for DPoP proofs, made fresh for each client (RFC 9449 §2).
pub(crate) struct DpopKey {
    key: SigningKey,
    jwk: String,
}

impl DpopKey {
    /// A fresh key.
    pub(crate) fn new() -> Result<Self, AuthError> {
        let mut bytes = Zeroizing::new([0_u8; 32]);
        // A random scalar; the rare value outside the curve's order is drawn again.
        for _ in 0..8 {
            getrandom::fill(&mut *bytes).map_err(|_| AuthError::new(kind::RANDOM))?;
            if let Ok(key) = SigningKey::from_slice(&*bytes) {
                let point = key.verifying_key().to_encoded_point(false);
                let (Some(x), Some(y)) = (point.x(), point.y()) else {
                    continue;
                };
                let jwk = format!(
                    r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
                    URL_SAFE_NO_PAD.encode(x),
                    URL_SAFE_NO_PAD.encode(y)
                );
                return Ok(Self { key, jwk });
            }
        }
        Err(AuthError::new(kind::RANDOM))
    }

    /// The public key's JWK thumbprint (RFC 7638), as `dpop_jkt` carries it.
    #[cfg(test)]
    pub(crate) fn thumbprint(&self) -> String {
        URL_SAFE_NO_PAD.encode(Sha256::digest(self.jwk.as_bytes()))
    }

    /// A proof for a request with `method` to `url` (without query or fragment), with the
    /// server's `nonce` and, for a resource request, the access token's hash (`ath`).
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        nonce: Option<&str>,
        access_token: Option<&str>,
    ) -> Result<String, AuthError> {
        #[derive(Serialize)]
        struct Claims<'a> {
            jti: &'a str,
            htm: &'a str,
            htu: &'a str,
            iat: u64,
            #[serde(skip_serializing_if = "Option::is_none")]
            nonce: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            ath: Option<String>,
        }
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let jti = random_text(16)?;
        let claims = Claims {
            jti: &jti,
            htm: method,
            htu,
            iat: now(),
            nonce,
            ath: access_token.map(|t| URL_SAFE_NO_PAD.encode(Sha256::digest(t.as_bytes()))),
        };
        let header = format!(r#"{{"alg":"ES256","typ":"dpop+jwt","jwk":{}}}"#, self.jwk);
        let claims = tollgate_json::to_value(&claims)
            .and_then(|v| tollgate_json::to_vec(&v, &tollgate_json::OutputLimits::default()))
            .map_err(|_| AuthError::new(kind::CREDENTIAL))?;
        let signing_input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.as_bytes()),
            URL_SAFE_NO_PAD.encode(&claims)
        );
        let signature: Signature = self.key.sign(signing_input.as_bytes());
        Ok(format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.to_bytes())
        ))
    }
}

/// The longest `DPoP-Nonce` value kept.
const MAX_NONCE_BYTES: usize = 1024;

/// A client's DPoP key and the latest nonces its authorization server and resource server
/// supplied (RFC 9449 §8, §9).
pub(crate) struct Dpop {
    key: DpopKey,
    as_nonce: Mutex<Option<String>>,
    rs_nonce: Mutex<Option<String>>,
}

/// The `DPoP-Nonce` of a response, if present, printable and at most 1 KiB.
fn nonce_of(headers: &http::HeaderMap) -> Option<String> {
    let value = headers.get("dpop-nonce")?.to_str().ok()?;
    (!value.is_empty() && value.len() <= MAX_NONCE_BYTES).then(|| value.to_owned())
}

/// Keeps `headers`' nonce in `slot`; whether it differs from the one kept before.
fn keep(slot: &Mutex<Option<String>>, headers: &http::HeaderMap) -> bool {
    let Some(nonce) = nonce_of(headers) else {
        return false;
    };
    let Ok(mut kept) = slot.lock() else {
        return false;
    };
    let changed = kept.as_deref() != Some(nonce.as_str());
    *kept = Some(nonce);
    changed
}

impl Dpop {
    /// A fresh key and no nonces.
    pub(crate) fn new() -> Result<Self, AuthError> {
        Ok(Self {
            key: DpopKey::new()?,
            as_nonce: Mutex::new(None),
            rs_nonce: Mutex::new(None),
        })
    }

    /// A proof for a token request to `endpoint`, with the authorization server's nonce.
    pub(crate) fn token_proof(&self, endpoint: &str) -> Result<String, AuthError> {
        let nonce = self.as_nonce.lock().ok().and_then(|n| n.clone());
        self.key.proof("POST", endpoint, nonce.as_deref(), None)
    }

    /// A proof for a request to the resource with this access token, with its nonce.
    pub(crate) fn resource_proof(
        &self,
        method: &str,
        url: &str,
        access_token: &str,
    ) -> Result<String, AuthError> {
        let nonce = self.rs_nonce.lock().ok().and_then(|n| n.clone());
        self.key
            .proof(method, url, nonce.as_deref(), Some(access_token))
    }

    /// Keeps the authorization server's nonce from a token answer; whether it is new.
    pub(crate) fn take_as_nonce(&self, headers: &http::HeaderMap) -> bool {
        keep(&self.as_nonce, headers)
    }

    /// Keeps the resource server's nonce from a challenge; whether it is new.
    pub(crate) fn take_rs_nonce(&self, headers: &http::HeaderMap) -> bool {
        keep(&self.rs_nonce, headers)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]
    use super::*;
    use p256::ecdsa::VerifyingKey;
    use p256::ecdsa::signature::Verifier as _;

    fn part(jwt: &str, i: usize) -> String {
        let bytes = URL_SAFE_NO_PAD
            .decode(jwt.split('.').nth(i).unwrap())
            .unwrap();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn a_dpop_proof_is_signed_by_the_key_its_header_carries() {
        let key = DpopKey::new().unwrap();
        let proof = key
            .proof(
                "POST",
                "https://as.example/token?x=1",
                Some("n1"),
                Some("at"),
            )
            .unwrap();
        let header = part(&proof, 0);
        assert!(header.contains(r#""typ":"dpop+jwt""#) && header.contains(&key.jwk));
        let claims = part(&proof, 1);
        assert!(claims.contains(r#""htm":"POST""#));
        assert!(claims.contains(r#""htu":"https://as.example/token""#));
        assert!(claims.contains(r#""nonce":"n1""#));
        // ath = BASE64URL(SHA-256("at")).
        assert!(
            claims.contains(r#""ath":"sda5G2fCr6XjIpiNlGJjjTVN34oe9526mH-BXCK0uu4""#),
            "{claims}"
        );
        let (input, signature) = proof.rsplit_once('.').unwrap();
        let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(signature).unwrap()).unwrap();
        let verifying = VerifyingKey::from(&key.key);
        assert!(verifying.verify(input.as_bytes(), &signature).is_ok());
        assert_eq!(key.thumbprint().len(), 43);
    }

    #[test]
    fn nonces_are_kept_when_new_and_bounded() {
        let dpop = Dpop::new().unwrap();
        let mut headers = http::HeaderMap::new();
        assert!(!dpop.take_rs_nonce(&headers));
        headers.insert("dpop-nonce", http::HeaderValue::from_static("n-1"));
        assert!(dpop.take_rs_nonce(&headers));
        assert!(!dpop.take_rs_nonce(&headers));
        let at = "a".repeat(MAX_NONCE_BYTES);
        headers.insert("dpop-nonce", http::HeaderValue::from_str(&at).unwrap());
        assert!(dpop.take_as_nonce(&headers));
        let past = "a".repeat(MAX_NONCE_BYTES + 1);
        headers.insert("dpop-nonce", http::HeaderValue::from_str(&past).unwrap());
        assert!(!dpop.take_rs_nonce(&headers));
        let proof = dpop.token_proof("https://as.example/token").unwrap();
        assert!(part(&proof, 1).contains(&at));
    }

    #[test]
    fn an_unusable_pem_is_a_credential_error_without_the_key() {
        let key = PrivateKey {
            pem: Zeroizing::new("-----BEGIN PRIVATE KEY-----\nSECRETSTUFF\n".into()),
            algorithm: KeyAlgorithm::Es256,
        };
        let err = client_assertion(&key, "c", "https://as.example").unwrap_err();
        assert_eq!(err.kind(), kind::CREDENTIAL);
        assert!(!err.to_string().contains("SECRET"));
    }
}
