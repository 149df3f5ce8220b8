//! What a checked token says (feature `oauth`): the subject and granted scopes read from a JWT's
//! claims or an introspection answer, into the [`Verified`] result the admission controller
//! turns into an identity, and why a token is [`Refused`]. Knows nothing of how a token was
//! checked, nor of requests.

use std::sync::Arc;
use std::time::SystemTime;

use tollgate_json::{JsonObject, JsonValue};

use crate::policy::authorization::{MAX_SCOPES, is_scope_token};

/// The longest `sub` accepted, in bytes.
const MAX_SUBJECT_BYTES: usize = 256;

/// A token that checked out: its subject, granted scopes, every claim, and until when the
/// result may be reused.
pub(crate) struct Verified {
    pub(super) subject: Arc<str>,
    pub(super) issuer: Option<Arc<str>>,
    pub(super) scopes: Vec<Arc<str>>,
    pub(super) claims: JsonObject,
    pub(super) until: SystemTime,
}

/// Why a token was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not a valid token for this resource (401 `invalid_token`).
    Invalid,
    /// The authorization server could not be asked (503).
    Unavailable,
}

pub(crate) fn b64(value: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(value)
        .ok()
}

/// The subject and scopes of a checked token's claims (or introspection answer): `sub` of 1 to
/// 256 bytes, and the granted scopes from `scope` (space-separated, RFC 9068 / RFC 7662), or,
/// only when there is no `scope`, from `scp` (a string or an array). Each must be a well-formed
/// scope token, and at most 64 distinct ones are read: a token granting more is refused whole
/// (never cut to a subset chosen by order).
pub(crate) fn claims_of(
    claims: JsonObject,
    issuer: &str,
    until: SystemTime,
) -> Result<Verified, Refused> {
    let subject = claims
        .get("sub")
        .and_then(JsonValue::as_str)
        .filter(|s| (1..=MAX_SUBJECT_BYTES).contains(&s.len()) && !s.chars().any(char::is_control))
        .ok_or(Refused::Invalid)?;
    let mut scopes: Vec<Arc<str>> = Vec::new();
    let mut add = |scope: &str| {
        if !is_scope_token(scope) {
            return false;
        }
        if !scopes.iter().any(|s| &**s == scope) {
            if scopes.len() >= MAX_SCOPES {
                return false;
            }
            scopes.push(scope.into());
        }
        true
    };
    // `scope` is the standard claim: when a token carries both, `scp` is ignored.
    let fine = match (claims.get("scope"), claims.get("scp")) {
        (None, None) => true,
        (Some(JsonValue::String(s)), _) | (None, Some(JsonValue::String(s))) => s
            .as_str()
            .split(' ')
            .filter(|s| !s.is_empty())
            .all(&mut add),
        (None, Some(JsonValue::Array(list))) => {
            list.iter().all(|s| s.as_str().is_some_and(&mut add))
        }
        _ => false,
    };
    if !fine {
        return Err(Refused::Invalid);
    }
    Ok(Verified {
        subject: subject.into(),
        // The configured issuer that vouched for the token (an introspection answer need
        // not name one), so two issuers' subjects never share a principal.
        issuer: Some(Arc::from(issuer)),
        scopes,
        claims,
        until,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tollgate_json::JsonLimits;

    fn read(json: &str) -> Result<Vec<String>, Refused> {
        let value =
            tollgate_json::from_str(json, &JsonLimits::new()).map_err(|_| Refused::Invalid)?;
        let claims = value.as_object().cloned().ok_or(Refused::Invalid)?;
        let verified = claims_of(claims, "https://as.example", SystemTime::now())?;
        Ok(verified.scopes.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn scope_is_read_and_scp_ignored_when_both_are_present() {
        let both = r#"{"sub":"a","scope":"read write","scp":["admin"]}"#;
        assert_eq!(read(both), Ok(vec!["read".into(), "write".into()]));
        // Even an `scp` that would be refused on its own.
        let odd = r#"{"sub":"a","scope":"read","scp":7}"#;
        assert_eq!(read(odd), Ok(vec!["read".into()]));
        let scp = r#"{"sub":"a","scp":["read","read","write"]}"#;
        assert_eq!(read(scp), Ok(vec!["read".into(), "write".into()]));
        assert_eq!(read(r#"{"sub":"a","scp":"read"}"#), Ok(vec!["read".into()]));
        assert_eq!(read(r#"{"sub":"a"}"#), Ok(vec![]));
        // A `scope` that is no string is refused, whatever `scp` says.
        let bad = r#"{"sub":"a","scope":["read"],"scp":"read"}"#;
        assert_eq!(read(bad), Err(Refused::Invalid));
        assert_eq!(read(r#"{"sub":"a","scope":"a\"b"}"#), Err(Refused::Invalid));
    }

    #[test]
    fn at_most_64_distinct_scopes_are_read() {
        let names = |n: usize| (0..n).map(|i| format!("s{i}")).collect::<Vec<_>>();
        let token = |scopes: &[String]| format!(r#"{{"sub":"a","scope":"{}"}}"#, scopes.join(" "));
        let at = names(MAX_SCOPES);
        assert_eq!(read(&token(&at)).map(|s| s.len()), Ok(MAX_SCOPES));
        // Repeating one of them is no 65th scope.
        let repeated = [at.clone(), vec!["s0".into()]].concat();
        assert_eq!(read(&token(&repeated)).map(|s| s.len()), Ok(MAX_SCOPES));
        assert_eq!(read(&token(&names(MAX_SCOPES + 1))), Err(Refused::Invalid));
        let list = |n: usize| format!(r#"{{"sub":"a","scp":{:?}}}"#, names(n));
        assert_eq!(read(&list(MAX_SCOPES)).map(|s| s.len()), Ok(MAX_SCOPES));
        assert_eq!(read(&list(MAX_SCOPES + 1)), Err(Refused::Invalid));
    }
}
