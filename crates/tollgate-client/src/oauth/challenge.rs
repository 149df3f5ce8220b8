//! Reading a `WWW-Authenticate` challenge (RFC 6750 §3, RFC 9728 §5.1): the scheme and the
//! `resource_metadata`, `scope` and `error` parameters of the first `Bearer` or `DPoP`
//! challenge. It owns only the header's grammar; it must not know what a challenge leads to.

/// The parameters of the challenge the client acts on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    /// The protected-resource metadata URL the server named, if any.
    pub(crate) resource_metadata: Option<String>,
    /// The scopes the server asks for, space-separated, if any.
    pub(crate) scope: Option<String>,
    /// The OAuth error code (`invalid_token`, `insufficient_scope`), if any.
    pub(crate) error: Option<String>,
}

impl Challenge {
    /// Whether the server said the token lacks scope (a 403 step-up).
    pub(crate) fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// The longest header value read; a longer one is treated as carrying no parameters.
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// Reads the first `Bearer` (or `DPoP`) challenge of these `WWW-Authenticate` values. Values
/// that do not parse, or that are longer than 8 KiB, give no parameters (discovery then falls
/// back to the well-known paths).
pub(crate) fn parse<'a>(values: impl IntoIterator<Item = &'a http::HeaderValue>) -> Challenge {
    for value in values {
        let Ok(text) = value.to_str() else { continue };
        if text.len() > MAX_HEADER_BYTES {
            continue;
        }
        if let Some(challenge) = parse_one(text) {
            return challenge;
        }
    }
    Challenge::default()
}

/// One header value may hold several challenges; the first `Bearer` or `DPoP` one is read.
fn parse_one(text: &str) -> Option<Challenge> {
    let mut rest = text.trim_start();
    loop {
        let (scheme, after) = token(rest)?;
        let wanted = scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("dpop");
        let (params, next) = params(after);
        if wanted {
            let mut challenge = Challenge::default();
            for (name, value) in params {
                let slot = match name.to_ascii_lowercase().as_str() {
                    "resource_metadata" => &mut challenge.resource_metadata,
                    "scope" => &mut challenge.scope,
                    "error" => &mut challenge.error,
                    _ => continue,
                };
                if slot.is_none() {
                    *slot = Some(value);
                }
            }
            return Some(challenge);
        }
        rest = next?;
    }
}

/// A token (RFC 9110 `token`) at the start of `text`, and what follows it.
fn token(text: &str) -> Option<(&str, &str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)))
        .unwrap_or(text.len());
    (end > 0).then(|| (&text[..end], &text[end..]))
}

/// The `name=value` parameters after a scheme, and the start of the next challenge, if any.
fn params(mut text: &str) -> (Vec<(String, String)>, Option<&str>) {
    let mut out = Vec::new();
    loop {
        text = text.trim_start_matches([' ', '\t', ',']);
        let Some((name, after)) = token(text) else {
            return (out, None);
        };
        let after_ws = after.trim_start_matches([' ', '\t']);
        let Some(value_text) = after_ws.strip_prefix('=') else {
            // A bare token: the scheme of the next challenge (token68 values are not read).
            return (out, Some(text));
        };
        let value_text = value_text.trim_start_matches([' ', '\t']);
        let (value, rest) = if let Some(quoted) = value_text.strip_prefix('"') {
            match quoted_string(quoted) {
                Some(pair) => pair,
                None => return (out, None),
            }
        } else {
            match token(value_text) {
                Some((value, rest)) => (value.to_owned(), rest),
                None => return (out, None),
            }
        };
        out.push((name.to_owned(), value));
        text = rest;
    }
}

/// The rest of a quoted string (after its opening quote) unescaped, and what follows it.
fn quoted_string(text: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Some((value, &text[at + 1..])),
            '\\' => value.push(chars.next()?.1),
            c => value.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Challenge {
        parse([&http::HeaderValue::from_str(text).unwrap_or(http::HeaderValue::from_static(""))])
    }

    #[test]
    fn reads_the_parameters_of_a_bearer_challenge() {
        let c = one(
            r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(c.scope.as_deref(), Some("mcp:read mcp:write"));
        assert!(c.insufficient_scope());
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://a.example/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn skips_other_schemes_and_reads_tokens_and_escapes() {
        let c = one(r#"Basic realm="x", Bearer scope=mcp, error="a\"b""#);
        assert_eq!(c.scope.as_deref(), Some("mcp"));
        assert_eq!(c.error.as_deref(), Some("a\"b"));
        assert!(!c.insufficient_scope());
    }

    #[test]
    fn malformed_or_absent_challenges_give_no_parameters() {
        for text in [
            "",
            "Basic realm=\"x\"",
            "Bearer scope=\"open",
            "=",
            "Bearer ,,,",
        ] {
            let c = one(text);
            assert_eq!(c.scope, None, "{text}");
            assert_eq!(c.resource_metadata, None, "{text}");
        }
    }

    #[test]
    fn an_over_long_header_is_not_read_and_one_at_the_bound_is() {
        let pad = |n: usize| format!("Bearer scope=\"a\", x=\"{}\"", "y".repeat(n));
        let base = pad(0).len();
        let at = pad(MAX_HEADER_BYTES - base);
        assert_eq!(at.len(), MAX_HEADER_BYTES);
        assert_eq!(one(&at).scope.as_deref(), Some("a"));
        assert_eq!(one(&pad(MAX_HEADER_BYTES - base + 1)).scope, None);
    }
}
