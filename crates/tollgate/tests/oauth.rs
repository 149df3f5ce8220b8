//! The OAuth resource server (feature `oauth`) over real HTTP: a local authorization server
//! fixture publishes its metadata, JWK Set and introspection endpoint on loopback, tokens are
//! signed here with P-256 keys, and every refusal the MCP authorization spec names is checked
//! for its status, code and challenge — and for carrying nothing of the token.
//!
//! The fixture is a test double for the key and introspection endpoints only; the real
//! authorization server flow (discovery, PKCE, the official TypeScript client) runs in
//! `scripts/oauth-e2e`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "integration tests"
)]

mod support;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::Mac as _;
use p256::ecdsa::{Signature, SigningKey, signature::Signer as _};
use serde_json::{Value, json};
use support::{META, Response, post, raw, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tollgate::auth::{BearerAuth, Introspection, JwtValidation, MAX_BEARER_TOKEN_BYTES};
use tollgate::json::JsonObject;
use tollgate::policy::{AdmissionIdentity, ProtectedResource};
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext, ToolArguments, ToolRegistration,
    tool::{CompleteResult, OperationResult},
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const ALL: [ProtocolVersion; 3] = [V26, V1125, V0618];
const RESOURCE: &str = "https://mcp.example/mcp";
const METADATA: &str = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
/// Put into tokens' claims; it must never come back.
const MARKER: &str = "Zq7secretMarker";

// ---- the authorization server fixture ----

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Up,
    /// Every request answered 500.
    Failing,
    /// Connections accepted and never answered.
    Hanging,
}

struct State {
    mode: Mode,
    jwks: Value,
    metadata_hits: usize,
    jwks_hits: usize,
    introspections: usize,
    basic: Option<String>,
}

#[derive(Clone)]
struct Issuer {
    url: String,
    state: Arc<Mutex<State>>,
}

impl Issuer {
    async fn start(keys: &[(&str, &SigningKey)]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let issuer = Self {
            url,
            state: Arc::new(Mutex::new(State {
                mode: Mode::Up,
                jwks: Value::Null,
                metadata_hits: 0,
                jwks_hits: 0,
                introspections: 0,
                basic: None,
            })),
        };
        issuer.publish(keys);
        let served = issuer.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(served.clone().answer(stream));
            }
        });
        issuer
    }

    fn publish(&self, keys: &[(&str, &SigningKey)]) {
        let keys: Vec<Value> = keys.iter().map(|(kid, key)| jwk(kid, key)).collect();
        self.state.lock().unwrap().jwks = json!({ "keys": keys });
    }

    fn set_mode(&self, mode: Mode) {
        self.state.lock().unwrap().mode = mode;
    }

    fn jwks_hits(&self) -> usize {
        self.state.lock().unwrap().jwks_hits
    }

    async fn answer(self, mut stream: tokio::net::TcpStream) {
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        let head_end = loop {
            let Ok(n) = stream.read(&mut buf).await else {
                return;
            };
            if n == 0 {
                return;
            }
            bytes.extend_from_slice(&buf[..n]);
            if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                break end;
            }
        };
        let head = String::from_utf8_lossy(&bytes[..head_end]).into_owned();
        let length: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0);
        while bytes.len() < head_end + 4 + length {
            let Ok(n) = stream.read(&mut buf).await else {
                return;
            };
            if n == 0 {
                return;
            }
            bytes.extend_from_slice(&buf[..n]);
        }
        let body = String::from_utf8_lossy(&bytes[head_end + 4..]).into_owned();
        let path = head.split(' ').nth(1).unwrap_or("").to_owned();
        let mode = self.state.lock().unwrap().mode;
        let (status, answer) = match mode {
            Mode::Hanging => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
            Mode::Failing => (500, "{}".to_owned()),
            Mode::Up => self.route(&path, &head, &body),
        };
        let response = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
            answer.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
    }

    fn route(&self, path: &str, head: &str, body: &str) -> (u16, String) {
        let mut state = self.state.lock().unwrap();
        match path {
            "/.well-known/oauth-authorization-server" => {
                state.metadata_hits += 1;
                let doc = json!({
                    "issuer": self.url,
                    "jwks_uri": format!("{}/jwks", self.url),
                    "introspection_endpoint": format!("{}/introspect", self.url),
                });
                (200, doc.to_string())
            }
            "/jwks" => {
                state.jwks_hits += 1;
                (200, state.jwks.to_string())
            }
            "/introspect" => {
                state.introspections += 1;
                state.basic = head.lines().find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("authorization")
                        .then(|| v.trim().to_owned())
                });
                let token = body
                    .split('&')
                    .find_map(|p| p.strip_prefix("token="))
                    .unwrap_or("");
                (200, self.introspection(token).to_string())
            }
            _ => (404, "{}".to_owned()),
        }
    }

    fn introspection(&self, token: &str) -> Value {
        let exp = now() + 600;
        match token {
            "opaque-good" => json!({
                "active": true, "iss": self.url, "aud": RESOURCE, "sub": "olga",
                "scope": "catalog:read", "exp": exp, "client_id": "cli", "note": MARKER,
            }),
            "opaque-elsewhere" => json!({
                "active": true, "iss": self.url, "aud": "https://other.example/mcp",
                "sub": "olga", "scope": "catalog:read", "exp": exp,
            }),
            "opaque-refresh" => json!({
                "active": true, "iss": self.url, "aud": RESOURCE, "sub": "olga",
                "scope": "catalog:read", "exp": exp, "token_type": "refresh_token",
            }),
            _ => json!({ "active": false }),
        }
    }
}

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32].into()).unwrap()
}

fn jwk(kid: &str, key: &SigningKey) -> Value {
    let point = key.verifying_key().to_encoded_point(false);
    json!({
        "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
        "x": URL_SAFE_NO_PAD.encode(point.x().unwrap()),
        "y": URL_SAFE_NO_PAD.encode(point.y().unwrap()),
    })
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn b64(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(value.to_string())
}

/// A compact JWS of `header` and `claims`, signed ES256 by `key`.
fn sign(key: &SigningKey, header: &Value, claims: &Value) -> String {
    let message = format!("{}.{}", b64(header), b64(claims));
    let signature: Signature = key.sign(message.as_bytes());
    format!("{message}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

fn header(kid: &str) -> Value {
    json!({ "alg": "ES256", "typ": "at+jwt", "kid": kid })
}

/// Good claims for the fixture issuer, with `changes` applied (`null` removes a claim).
fn claims(issuer: &Issuer, changes: &Value) -> Value {
    let mut claims = json!({
        "iss": issuer.url, "aud": RESOURCE, "sub": "alice", "client_id": "demo",
        "scope": "catalog:read", "iat": now(), "exp": now() + 300, "note": MARKER,
    });
    for (name, value) in changes.as_object().unwrap() {
        if value.is_null() {
            claims.as_object_mut().unwrap().remove(name);
        } else {
            claims[name] = value.clone();
        }
    }
    claims
}

// ---- the protected endpoint ----

async fn whoami(
    ctx: &RequestContext,
    _: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let identity = ctx.admission_identity();
    let scopes: Vec<&str> = identity.scopes().collect();
    let client = identity
        .claim("client_id")
        .and_then(|c| c.as_str())
        .unwrap_or("-");
    let note = identity.claim("note").map_or("-", |_| "kept");
    Ok(CompleteResult::from_tool_text(format!(
        "{} {} {client} {note}",
        identity.principal_name().unwrap_or("anonymous"),
        scopes.join(",")
    ))
    .into())
}

fn resource(issuer: &Issuer) -> ProtectedResource {
    ProtectedResource::builder(RESOURCE)
        .authorization_server(&issuer.url)
        .scopes_supported(["catalog:read", "catalog:write"])
        .build()
        .unwrap()
}

fn endpoint(auth: BearerAuth, sessions: bool) -> Endpoint {
    let tool = |name: &str| {
        ToolRegistration::with_name(name, ALL)
            .json_object_arguments()
            .handler(whoami)
    };
    let mut builder = Endpoint::with_path("/mcp", ALL, Implementation::new("oauth", "1"))
        .bearer_auth(auth)
        .add_tool(tool("whoami").build().unwrap())
        .add_tool(
            tool("restock")
                .required_scopes(["catalog:write"])
                .build()
                .unwrap(),
        );
    if !sessions {
        builder = builder.legacy_sessions(None);
    }
    builder.build().unwrap()
}

/// The fixture issuer (keys `k1` = key(1)) and a server admitting its JWTs.
async fn serve(configure: impl FnOnce(JwtValidation) -> JwtValidation) -> (Issuer, SocketAddr) {
    let issuer = Issuer::start(&[("k1", &key(1))]).await;
    let resource = resource(&issuer);
    let auth = BearerAuth::builder(&resource)
        .jwt(configure(JwtValidation::new(&issuer.url)))
        .introspection(Introspection::new(&issuer.url).client_credentials("rs", "pw"))
        .required_scopes(["catalog:read"])
        .keep_claims(["client_id"])
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint(auth, false))).await;
    (issuer, addr)
}

/// `tools/call` of `tool` on `revision` with exactly these `Authorization` values.
async fn call_as(
    addr: SocketAddr,
    revision: ProtocolVersion,
    authorization: &[&str],
    tool: &str,
) -> Response {
    let mut headers = vec![("MCP-Protocol-Version", revision.as_str())];
    for value in authorization {
        headers.push(("Authorization", value));
    }
    let meta = if revision == V26 {
        headers.push(("Mcp-Method", "tools/call"));
        headers.push(("Mcp-Name", tool));
        format!(",{META}")
    } else {
        String::new()
    };
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}{meta}}}}}"#
    );
    // A refusal must come at once, whatever the authorization server does.
    tokio::time::timeout(
        Duration::from_secs(30),
        post(addr, &headers, body.as_bytes()),
    )
    .await
    .expect("an answer, not a hang")
}

async fn call(addr: SocketAddr, token: &str) -> Response {
    call_as(addr, V26, &[&format!("Bearer {token}")], "whoami").await
}

/// Nothing of the token or its claims in the answer.
fn assert_no_echo(response: &Response, token: &str) {
    let all = format!("{:?}{}", response.headers, response.text());
    assert!(!all.contains(MARKER), "{all}");
    if token.len() > 8 {
        assert!(!all.contains(token), "{all}");
        for part in token.split('.').filter(|p| p.len() > 8) {
            assert!(!all.contains(part), "{all}");
        }
    }
}

fn invalid_token_challenge() -> String {
    format!(r#"Bearer error="invalid_token", resource_metadata="{METADATA}", scope="catalog:read""#)
}

fn assert_invalid(response: &Response, token: &str) {
    assert_eq!(
        (response.status, response.code()),
        (401, -32001),
        "{}",
        response.text()
    );
    assert_eq!(
        response.header("www-authenticate"),
        Some(invalid_token_challenge().as_str())
    );
    assert_no_echo(response, token);
}

// ---- the tests ----

#[tokio::test]
async fn a_good_token_admits_its_subject_scopes_and_kept_claims_on_every_revision() {
    let (issuer, addr) = serve(|j| j).await;
    let token = sign(&key(1), &header("k1"), &claims(&issuer, &json!({})));
    for revision in ALL {
        let response = call_as(addr, revision, &[&format!("Bearer {token}")], "whoami").await;
        assert_eq!(response.status, 200, "{revision}: {}", response.text());
        // `note` was not named by keep_claims: not in the identity.
        assert!(
            response.text().contains("alice catalog:read demo -"),
            "{}",
            response.text()
        );
    }
    // The key set was fetched once (the verified token is then reused from the cache).
    assert_eq!(issuer.jwks_hits(), 1);
    // The scheme is case-insensitive; `aud` may be a list naming this resource.
    let listed = sign(
        &key(1),
        &header("k1"),
        &claims(
            &issuer,
            &json!({ "aud": ["https://other.example", "https://MCP.example:443/mcp"] }),
        ),
    );
    let response = call_as(addr, V26, &[&format!("bEaReR {listed}")], "whoami").await;
    assert_eq!(response.status, 200, "{}", response.text());
}

#[tokio::test]
async fn no_token_is_a_401_challenge_pointing_at_the_metadata_on_every_revision() {
    let (_issuer, addr) = serve(|j| j).await;
    // The scope to ask for first: the baseline every request needs (least privilege; restock
    // steps up on its 403).
    let expected = format!(r#"Bearer resource_metadata="{METADATA}", scope="catalog:read""#);
    for revision in ALL {
        for authorization in [&[][..], &["Basic YWxpY2U6cHc="][..]] {
            let response = call_as(addr, revision, authorization, "whoami").await;
            assert_eq!(
                (response.status, response.code()),
                (401, -32001),
                "{revision}"
            );
            assert_eq!(response.header("www-authenticate"), Some(expected.as_str()));
        }
    }
    // A 2025 client refused at initialize gets no session.
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let refused = post(addr, &[], init.as_bytes()).await;
    assert_eq!(
        (refused.status, refused.header("mcp-session-id")),
        (401, None)
    );
}

#[tokio::test]
async fn a_malformed_authorization_header_is_a_400_invalid_request() {
    let (issuer, addr) = serve(|j| j).await;
    let good = sign(&key(1), &header("k1"), &claims(&issuer, &json!({})));
    let at_bound = "a".repeat(MAX_BEARER_TOKEN_BYTES);
    let past_bound = "a".repeat(MAX_BEARER_TOKEN_BYTES + 1);
    let expected = format!(r#"Bearer error="invalid_request", resource_metadata="{METADATA}""#);
    let cases: Vec<Vec<String>> = vec![
        vec!["Bearer".into()],
        vec!["Bearer    ".into()],
        vec!["Bearer a b".into()],
        vec!["Bearer a,b".into()],
        vec![format!("Bearer {past_bound}")],
        // The same good token twice is still two credentials.
        vec![format!("Bearer {good}"), format!("Bearer {good}")],
    ];
    for case in cases {
        let values: Vec<&str> = case.iter().map(String::as_str).collect();
        let response = call_as(addr, V26, &values, "whoami").await;
        assert_eq!(
            (response.status, response.code()),
            (400, -32600),
            "{}",
            response.text()
        );
        assert_eq!(response.header("www-authenticate"), Some(expected.as_str()));
        assert_no_echo(&response, &good);
    }
    // At the bound the token is read (and is not a valid one).
    let response = call(addr, &at_bound).await;
    assert_eq!(response.status, 401);
    assert!(!response.text().contains(&at_bound[..64]));
}

#[tokio::test]
async fn forged_misaddressed_and_mistimed_tokens_are_invalid() {
    let (issuer, addr) = serve(|j| j.leeway(Duration::from_secs(30))).await;
    let good = claims(&issuer, &json!({}));
    let bad_signature = {
        let token = sign(&key(1), &header("k1"), &good);
        let forged = sign(&key(9), &header("k1"), &good);
        let (message, _) = token.rsplit_once('.').unwrap();
        let (_, signature) = forged.rsplit_once('.').unwrap();
        format!("{message}.{signature}")
    };
    let t = now();
    let cases = [
        ("bad signature", bad_signature),
        (
            "another issuer",
            sign(
                &key(1),
                &header("k1"),
                &claims(&issuer, &json!({ "iss": "https://evil.example" })),
            ),
        ),
        (
            "no issuer",
            sign(
                &key(1),
                &header("k1"),
                &claims(&issuer, &json!({ "iss": null })),
            ),
        ),
        (
            "another audience",
            sign(
                &key(1),
                &header("k1"),
                &claims(&issuer, &json!({ "aud": "https://other.example/mcp" })),
            ),
        ),
        (
            "no audience",
            sign(
                &key(1),
                &header("k1"),
                &claims(&issuer, &json!({ "aud": null })),
            ),
        ),
        (
            "expired past the leeway",
            sign(
                &key(1),
                &header("k1"),
                &claims(&issuer, &json!({ "exp": t - 31 })),
            ),
        ),
        (
            "no expiry",
            sign(
                &key(1),
                &header("k1"),
                &claims(&issuer, &json!({ "exp": null })),
            ),
        ),
        (
            "not yet valid",
            sign(
                &key(1),
                &header("k1"),
                &claims(&issuer, &json!({ "nbf": t + 120 })),
            ),
        ),
        (
            "issued in the future",
            sign(
                &key(1),
                &header("k1"),
                &claims(&issuer, &json!({ "iat": t + 120 })),
            ),
        ),
        (
            "no subject",
            sign(
                &key(1),
                &header("k1"),
                &claims(&issuer, &json!({ "sub": null })),
            ),
        ),
        (
            "not typed as an access token",
            sign(
                &key(1),
                &json!({ "alg": "ES256", "typ": "JWT", "kid": "k1" }),
                &good,
            ),
        ),
        (
            "a critical extension",
            sign(
                &key(1),
                &json!({ "alg": "ES256", "typ": "at+jwt", "kid": "k1", "crit": ["exp"] }),
                &good,
            ),
        ),
        (
            "alg none",
            format!(
                "{}.{}.",
                b64(&json!({ "alg": "none", "typ": "at+jwt", "kid": "k1" })),
                b64(&good)
            ),
        ),
        (
            "not a JWT nor a known opaque token",
            "opaque-unknown".to_owned(),
        ),
        (
            "an opaque token for another resource",
            "opaque-elsewhere".to_owned(),
        ),
        ("an active refresh token", "opaque-refresh".to_owned()),
    ];
    for (what, token) in &cases {
        let response = call(addr, token).await;
        assert_eq!(response.status, 401, "{what}: {}", response.text());
        assert_invalid(&response, token);
    }
    // Within the leeway an expired token is still good.
    let lenient = sign(
        &key(1),
        &header("k1"),
        &claims(&issuer, &json!({ "exp": t - 20 })),
    );
    assert_eq!(call(addr, &lenient).await.status, 200);
}

#[tokio::test]
async fn hmac_signed_with_the_public_key_is_refused() {
    let (issuer, addr) = serve(|j| j).await;
    let public = jwk("k1", &key(1)).to_string();
    let point = key(1).verifying_key().to_encoded_point(false);
    let header = json!({ "alg": "HS256", "typ": "at+jwt", "kid": "k1" });
    let message = format!("{}.{}", b64(&header), b64(&claims(&issuer, &json!({}))));
    for secret in [public.as_bytes(), point.as_bytes()] {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret).unwrap();
        mac.update(message.as_bytes());
        let token = format!(
            "{message}.{}",
            URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
        );
        assert_invalid(&call(addr, &token).await, &token);
    }
}

#[tokio::test]
async fn an_unknown_key_id_refreshes_the_key_set_once_then_refuses() {
    let (issuer, addr) =
        serve(|j| j.jwks_cache(Duration::from_secs(600), Duration::from_secs(1))).await;
    let good = sign(&key(1), &header("k1"), &claims(&issuer, &json!({})));
    assert_eq!(call(addr, &good).await.status, 200);
    assert_eq!(issuer.jwks_hits(), 1);
    // Past the refresh interval (1 s, the least allowed).
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    // A key the issuer does not publish: one refetch, then 401.
    let rotated = sign(
        &key(2),
        &header("k2"),
        &claims(&issuer, &json!({ "sub": "bob" })),
    );
    assert_invalid(&call(addr, &rotated).await, &rotated);
    assert_eq!(issuer.jwks_hits(), 2);
    // The issuer rotates: the next token naming k2 refetches and is admitted.
    issuer.publish(&[("k1", &key(1)), ("k2", &key(2))]);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let response = call(addr, &rotated).await;
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(issuer.jwks_hits(), 3);
}

#[tokio::test]
async fn unknown_key_ids_refetch_at_most_once_per_refresh_interval() {
    let (issuer, addr) = serve(|j| j).await;
    let good = sign(&key(1), &header("k1"), &claims(&issuer, &json!({})));
    assert_eq!(call(addr, &good).await.status, 200);
    for n in 0..5 {
        let unknown = sign(
            &key(3),
            &header(&format!("x{n}")),
            &claims(&issuer, &json!({})),
        );
        assert_invalid(&call(addr, &unknown).await, &unknown);
    }
    // The fetch at the first call was under a minute ago: no token makes another.
    assert_eq!(issuer.jwks_hits(), 1);
}

#[tokio::test]
async fn an_unreachable_authorization_server_is_a_503_with_retry_after_not_a_hang() {
    for mode in [Mode::Failing, Mode::Hanging] {
        let (issuer, addr) = serve(|j| j.fetch_timeout(Duration::from_secs(1))).await;
        issuer.set_mode(mode);
        let token = sign(&key(1), &header("k1"), &claims(&issuer, &json!({})));
        for revision in ALL {
            let response = call_as(addr, revision, &[&format!("Bearer {token}")], "whoami").await;
            assert_eq!(
                (response.status, response.code()),
                (503, -32603),
                "{}",
                response.text()
            );
            assert_eq!(response.header("retry-after"), Some("5"));
            assert_no_echo(&response, &token);
        }
        // Introspection down too: the same answer.
        let response = call(addr, "opaque-good").await;
        assert_eq!(response.status, 503, "{}", response.text());
    }
}

#[tokio::test]
async fn a_missing_scope_is_a_403_insufficient_scope_challenge() {
    let (issuer, addr) = serve(|j| j).await;
    let reader = sign(&key(1), &header("k1"), &claims(&issuer, &json!({})));
    for revision in ALL {
        let response = call_as(addr, revision, &[&format!("Bearer {reader}")], "restock").await;
        assert_eq!(
            (response.status, response.code()),
            (403, -32003),
            "{revision}: {}",
            response.text()
        );
        // The scopes to ask for: those granted and those needed, in one challenge.
        let challenge = format!(
            r#"Bearer error="insufficient_scope", resource_metadata="{METADATA}", scope="catalog:read catalog:write""#
        );
        assert_eq!(
            response.header("www-authenticate"),
            Some(challenge.as_str())
        );
        assert_no_echo(&response, &reader);
    }
    let writer = sign(
        &key(1),
        &header("k1"),
        &claims(&issuer, &json!({ "scope": "catalog:read catalog:write" })),
    );
    assert_eq!(
        call_as(addr, V26, &[&format!("Bearer {writer}")], "restock")
            .await
            .status,
        200
    );
    // Without the endpoint's baseline scope nothing is admitted.
    let none = sign(
        &key(1),
        &header("k1"),
        &claims(&issuer, &json!({ "scope": "other" })),
    );
    let response = call(addr, &none).await;
    assert_eq!((response.status, response.code()), (403, -32003));
    // `scp` as a list is read too.
    let scp = sign(
        &key(1),
        &header("k1"),
        &claims(&issuer, &json!({ "scope": null, "scp": ["catalog:read"] })),
    );
    assert_eq!(call(addr, &scp).await.status, 200);
    // A catalog lists every tool (Soklet does not filter catalogs by authorization).
    let body = format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{META}}}}}"#);
    let bearer = format!("Bearer {reader}");
    let list = post(
        addr,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
            ("Authorization", bearer.as_str()),
        ],
        body.as_bytes(),
    )
    .await;
    assert!(list.text().contains("restock"), "{}", list.text());
}

#[tokio::test]
async fn opaque_tokens_are_introspected_with_the_resource_servers_credentials() {
    let (issuer, addr) = serve(|j| j).await;
    let response = call(addr, "opaque-good").await;
    assert_eq!(response.status, 200, "{}", response.text());
    assert!(response.text().contains("olga catalog:read cli -"));
    let basic = issuer.state.lock().unwrap().basic.clone();
    assert_eq!(
        basic.as_deref(),
        Some(format!("Basic {}", STANDARD.encode("rs:pw")).as_str())
    );
    // An active answer is reused for a while, not asked again per request.
    assert_eq!(call(addr, "opaque-good").await.status, 200);
    assert_eq!(issuer.state.lock().unwrap().introspections, 1);
}

#[tokio::test]
async fn a_2025_session_belongs_to_its_token_subject() {
    let issuer = Issuer::start(&[("k1", &key(1))]).await;
    let resource = resource(&issuer);
    let auth = BearerAuth::builder(&resource)
        .jwt(JwtValidation::new(&issuer.url))
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint(auth, true))).await;
    let alice = format!(
        "Bearer {}",
        sign(&key(1), &header("k1"), &claims(&issuer, &json!({})))
    );
    let bob = format!(
        "Bearer {}",
        sign(
            &key(1),
            &header("k1"),
            &claims(&issuer, &json!({ "sub": "bob" }))
        )
    );
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let opened = post(addr, &[("Authorization", alice.as_str())], init.as_bytes()).await;
    assert_eq!(opened.status, 200, "{}", opened.text());
    let session = opened.header("mcp-session-id").unwrap().to_owned();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#;
    let with = |authorization: &str| {
        let mut headers = vec![
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", session.as_str()),
        ];
        if !authorization.is_empty() {
            headers.push(("Authorization", authorization));
        }
        headers
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect::<Vec<_>>()
    };
    let send = |headers: Vec<(String, String)>| async move {
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        post(addr, &headers, body.as_bytes()).await
    };
    // Without baseline scopes a 401 names everything the resource supports.
    let refused = send(with("")).await;
    assert_eq!(
        refused.header("www-authenticate"),
        Some(
            format!(r#"Bearer resource_metadata="{METADATA}", scope="catalog:read catalog:write""#)
                .as_str()
        )
    );
    let response = send(with(&alice)).await;
    assert_eq!(response.status, 200, "{}", response.text());
    // Every request carries the token: the session alone admits nothing.
    assert_eq!(send(with("")).await.status, 401);
    // Another subject's token does not find alice's session.
    assert_eq!(send(with(&bob)).await.status, 404);
}

#[tokio::test]
async fn the_metadata_document_is_served_without_a_token() {
    let (issuer, addr) = serve(|j| j).await;
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        let response = raw(addr, request.as_bytes()).await;
        assert_eq!(response.status, 200, "{path}");
        assert!(
            response
                .header("content-type")
                .is_some_and(|c| c.starts_with("application/json"))
        );
        let doc: Value = serde_json::from_slice(&response.body).unwrap();
        assert_eq!(doc["resource"], RESOURCE);
        assert_eq!(doc["authorization_servers"], json!([issuer.url]));
        assert_eq!(
            doc["scopes_supported"],
            json!(["catalog:read", "catalog:write"])
        );
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        let post = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let refused = raw(addr, post.as_bytes()).await;
        assert_eq!(refused.status, 405);
        assert_eq!(refused.header("allow"), Some("GET, HEAD"));
    }
    let other = raw(
        addr,
        b"GET /.well-known/oauth-protected-resource/other HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(other.status, 404);
}

#[test]
fn bearer_auth_refuses_configurations_it_cannot_honour() {
    let resource = ProtectedResource::builder(RESOURCE)
        .authorization_server("https://auth.example")
        .build()
        .unwrap();
    let kind = |builder: tollgate::auth::BearerAuthBuilder| builder.build().unwrap_err().kind();
    let invalid = BuildErrorKind::InvalidAuthorization;
    // Nothing to check tokens with.
    assert_eq!(kind(BearerAuth::builder(&resource)), invalid);
    // An issuer that is not the resource's authorization server.
    assert_eq!(
        kind(BearerAuth::builder(&resource).jwt(JwtValidation::new("https://other.example"))),
        invalid
    );
    // Plain http off loopback, leeway past its bound, and the same issuer twice.
    let http = ProtectedResource::builder(RESOURCE)
        .authorization_server("http://auth.example")
        .build();
    assert_eq!(http.unwrap_err().kind(), invalid);
    assert_eq!(
        kind(
            BearerAuth::builder(&resource).jwt(
                JwtValidation::new("https://auth.example").jwks_uri("http://keys.example/jwks")
            )
        ),
        invalid
    );
    let jwt = || JwtValidation::new("https://auth.example");
    assert_eq!(
        kind(BearerAuth::builder(&resource).jwt(jwt().leeway(Duration::from_secs(301)))),
        invalid
    );
    assert!(
        BearerAuth::builder(&resource)
            .jwt(jwt().leeway(Duration::from_secs(300)))
            .build()
            .is_ok()
    );
    assert_eq!(
        kind(BearerAuth::builder(&resource).jwt(jwt()).jwt(jwt())),
        invalid
    );
    assert_eq!(
        kind(BearerAuth::builder(&resource).jwt(jwt().algorithms([]))),
        invalid
    );
    let cache = |min_refresh| jwt().jwks_cache(Duration::from_secs(600), min_refresh);
    assert_eq!(
        kind(BearerAuth::builder(&resource).jwt(cache(Duration::from_millis(999)))),
        invalid
    );
    assert!(
        BearerAuth::builder(&resource)
            .jwt(cache(Duration::from_secs(1)))
            .build()
            .is_ok()
    );
    // Claim and scope lists at their bounds and one past.
    let names = |n: usize| (0..n).map(|i| format!("c{i}")).collect::<Vec<_>>();
    let base = || BearerAuth::builder(&resource).jwt(jwt());
    for (at, past) in [
        (base().keep_claims(names(32)), base().keep_claims(names(33))),
        (
            base().required_scopes(names(64)),
            base().required_scopes(names(65)),
        ),
    ] {
        assert!(at.build().is_ok());
        assert_eq!(kind(past), invalid);
    }
    // Operations requiring scopes need a protected endpoint.
    let err = Endpoint::with_path("/mcp", ALL, Implementation::new("e", "1"))
        .add_tool(
            ToolRegistration::with_name("t", ALL)
                .json_object_arguments()
                .handler(whoami)
                .required_scopes(["x"])
                .build()
                .unwrap(),
        )
        .build()
        .unwrap_err();
    assert_eq!((err.kind(), err.tool()), (invalid, Some("t")));
}

#[tokio::test]
async fn stdio_is_refused_unless_given_an_identity() {
    let resource = ProtectedResource::builder(RESOURCE)
        .authorization_server("https://auth.example")
        .build()
        .unwrap();
    let jwt = JwtValidation::new("https://auth.example");
    for (identity, expected) in [
        (None, "-32001"),
        (Some(AdmissionIdentity::principal("local")), "local"),
    ] {
        let mut builder = BearerAuth::builder(&resource).jwt(jwt.clone());
        if let Some(identity) = identity {
            builder = builder.stdio_identity(identity);
        }
        let endpoint = endpoint(builder.build().unwrap(), false);
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        tokio::spawn(
            tollgate::transport::StdioServer::new(endpoint).serve(server_read, server_write),
        );
        let (client_read, mut client_write) = tokio::io::split(client);
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"whoami","arguments":{{}},{META}}}}}"#
        );
        client_write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        use tokio::io::AsyncBufReadExt as _;
        let mut lines = tokio::io::BufReader::new(client_read).lines();
        let answer = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(answer.contains(expected), "{answer}");
    }
}
