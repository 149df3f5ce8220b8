//! The `Authorization: Bearer` credential of a request (RFC 6750 §2.1): present once, the scheme
//! matched without regard to case, the token a `b64token` of at most 8 KiB.
//!
//! Knows nothing of what a token means.

use crate::policy::admission::AdmissionRequest;

/// The longest bearer token read, in bytes; a longer one is a malformed request.
pub const MAX_BEARER_TOKEN_BYTES: usize = 8 * 1024;

/// What a request's `Authorization` header holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Credential<'a> {
    /// No `Authorization` header, or one for another scheme (this resource asks for a bearer
    /// token either way).
    Missing,
    /// Several `Authorization` headers, a `Bearer` one with no token, or a token that is not a
    /// `b64token` within the bound.
    Malformed,
    Bearer(&'a str),
}

/// The bearer credential of `request`.
pub(crate) fn credential<'a>(request: &AdmissionRequest<'a>) -> Credential<'a> {
    match request.header_count("authorization") {
        0 => return Credential::Missing,
        1 => {}
        _ => return Credential::Malformed,
    }
    let Some(value) = request.header("authorization") else {
        // Present once but not visible ASCII.
        return Credential::Malformed;
    };
    parse(value)
}

/// `value` of an `Authorization` header.
pub(crate) fn parse(value: &str) -> Credential<'_> {
    let value = value.trim_matches(|c| c == ' ' || c == '\t');
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Credential::Missing;
    }
    let token = rest.trim_start_matches(' ');
    if token.is_empty() || token.len() > MAX_BEARER_TOKEN_BYTES || !is_b64token(token) {
        return Credential::Malformed;
    }
    Credential::Bearer(token)
}

/// RFC 6750's `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_and_tokens() {
        assert_eq!(
            parse("Bearer abc.def-_~+/=="),
            Credential::Bearer("abc.def-_~+/==")
        );
        assert_eq!(parse("bearer   abc"), Credential::Bearer("abc"));
        assert_eq!(parse("BEARER abc"), Credential::Bearer("abc"));
        assert_eq!(parse("Basic dXNlcjpwYXNz"), Credential::Missing);
        assert_eq!(parse("Bearerabc"), Credential::Missing);
        assert_eq!(parse("Bearer"), Credential::Malformed);
        assert_eq!(parse("Bearer "), Credential::Malformed);
        assert_eq!(parse("Bearer a b"), Credential::Malformed);
        assert_eq!(parse("Bearer a,b"), Credential::Malformed);
        assert_eq!(parse("Bearer ==="), Credential::Malformed);
        assert_eq!(parse("Bearer a=b"), Credential::Malformed);
    }

    #[test]
    fn tokens_are_bounded() {
        let at = "a".repeat(MAX_BEARER_TOKEN_BYTES);
        assert_eq!(
            parse(&format!("Bearer {at}")),
            Credential::Bearer(at.as_str())
        );
        let past = "a".repeat(MAX_BEARER_TOKEN_BYTES + 1);
        assert_eq!(parse(&format!("Bearer {past}")), Credential::Malformed);
    }
}
