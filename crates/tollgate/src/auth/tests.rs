//! The bearer-token controller's unit tests: claims, algorithms, the admitted identity.
use super::*;
use tollgate_json::JsonLimits;

fn read(json: &str) -> Result<Vec<String>, Refused> {
    let value = tollgate_json::from_str(json, &JsonLimits::new()).map_err(|_| Refused::Invalid)?;
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

/// The admitted identity carries the token's `exp` (a JWT's with its leeway, which `until`
/// holds; an introspected token's `exp` past the shorter cache time), for the streams and
/// listens it opens to end then.
#[test]
fn the_identity_carries_the_tokens_expiry() {
    let Ok(resource) = ProtectedResource::builder("https://mcp.example/mcp")
        .authorization_server("https://as.example")
        .build()
    else {
        unreachable!("a valid resource")
    };
    let Ok(auth) = BearerAuth::builder(&resource)
        .jwt(JwtValidation::new("https://as.example"))
        .build()
    else {
        unreachable!("a valid configuration")
    };
    let exp = 4_000_000_000_u64;
    let at = |secs: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
    let verified = |until| {
        let value =
            tollgate_json::from_str(&format!(r#"{{"sub":"a","exp":{exp}}}"#), &JsonLimits::new());
        let claims = value.ok().and_then(|v| v.as_object().cloned());
        claims_of(claims.unwrap_or_default(), "https://as.example", until).ok()
    };
    // Introspection: cached for less than the token lives; the identity ends at `exp`.
    let cached = verified(at(exp - 600)).map(|v| auth.inner.identity(v));
    assert_eq!(cached.and_then(|i| i.expires_at()), Some(at(exp)));
    // A JWT: `until` is `exp` plus the leeway the check allowed.
    let lenient = verified(at(exp + 60)).map(|v| auth.inner.identity(v));
    assert_eq!(lenient.and_then(|i| i.expires_at()), Some(at(exp + 60)));
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
