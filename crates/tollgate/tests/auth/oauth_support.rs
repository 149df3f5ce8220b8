//! The OAuth tests' fixtures: a local authorization server on loopback publishing its metadata,
//! JWK Set and introspection endpoint (and able to fail or hang), P-256 signing keys, token
//! minting, and a protected endpoint with the calls the tests make to it.

#![allow(dead_code, unreachable_pub, reason = "shared by the OAuth tests")]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::{Signature, SigningKey, signature::Signer as _};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tollgate::auth::{BearerAuth, Introspection, JwtValidation};
use tollgate::json::JsonObject;
use tollgate::policy::ProtectedResource;
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    ToolArguments, ToolRegistration,
    tool::{CompleteResult, OperationResult},
};

use crate::support::{META, Response, post, start};

pub const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
pub const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
pub const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
pub const ALL: [ProtocolVersion; 3] = [V26, V1125, V0618];
pub const RESOURCE: &str = "https://mcp.example/mcp";
pub const METADATA: &str = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
/// Put into tokens' claims; it must never come back.
pub const MARKER: &str = "Zq7secretMarker";

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Up,
    /// Every request answered 500.
    Failing,
    /// Connections accepted and never answered.
    Hanging,
}

pub struct State {
    pub mode: Mode,
    pub jwks: Value,
    pub metadata_hits: usize,
    pub jwks_hits: usize,
    pub introspections: usize,
    pub basic: Option<String>,
    /// Connections accepted, whatever was asked on them.
    pub connections: usize,
}

#[derive(Clone)]
pub struct Issuer {
    pub url: String,
    pub state: Arc<Mutex<State>>,
}

impl Issuer {
    pub async fn start(keys: &[(&str, &SigningKey)]) -> Self {
        Self::start_at(keys, "").await
    }

    /// An issuer whose identifier has `path` after its origin (its metadata is then looked for
    /// at three URLs; only [`Mode::Hanging`] and [`Mode::Failing`] answer them).
    pub async fn start_at(keys: &[(&str, &SigningKey)], path: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}{path}", listener.local_addr().unwrap());
        let issuer = Self {
            url,
            state: Arc::new(Mutex::new(State {
                mode: Mode::Up,
                jwks: Value::Null,
                metadata_hits: 0,
                jwks_hits: 0,
                introspections: 0,
                basic: None,
                connections: 0,
            })),
        };
        issuer.publish(keys);
        let served = issuer.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                served.state.lock().unwrap().connections += 1;
                tokio::spawn(served.clone().answer(stream));
            }
        });
        issuer
    }

    pub fn publish(&self, keys: &[(&str, &SigningKey)]) {
        let keys: Vec<Value> = keys.iter().map(|(kid, key)| jwk(kid, key)).collect();
        self.state.lock().unwrap().jwks = json!({ "keys": keys });
    }

    pub fn set_mode(&self, mode: Mode) {
        self.state.lock().unwrap().mode = mode;
    }

    pub fn jwks_hits(&self) -> usize {
        self.state.lock().unwrap().jwks_hits
    }

    pub fn metadata_hits(&self) -> usize {
        self.state.lock().unwrap().metadata_hits
    }

    pub fn connections(&self) -> usize {
        self.state.lock().unwrap().connections
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

pub fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32].into()).unwrap()
}

pub fn jwk(kid: &str, key: &SigningKey) -> Value {
    let point = key.verifying_key().to_encoded_point(false);
    json!({
        "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
        "x": URL_SAFE_NO_PAD.encode(point.x().unwrap()),
        "y": URL_SAFE_NO_PAD.encode(point.y().unwrap()),
    })
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

pub fn b64(value: &Value) -> String {
    URL_SAFE_NO_PAD.encode(value.to_string())
}

/// A compact JWS of `header` and `claims`, signed ES256 by `key`.
pub fn sign(key: &SigningKey, header: &Value, claims: &Value) -> String {
    let message = format!("{}.{}", b64(header), b64(claims));
    let signature: Signature = key.sign(message.as_bytes());
    format!("{message}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

pub fn header(kid: &str) -> Value {
    json!({ "alg": "ES256", "typ": "at+jwt", "kid": kid })
}

/// A token of the fixture issuer signed by `k1`, its good claims with `changes` applied.
pub fn token(issuer: &Issuer, changes: &Value) -> String {
    sign(&key(1), &header("k1"), &claims(issuer, changes))
}

/// Good claims for the fixture issuer, with `changes` applied (`null` removes a claim).
pub fn claims(issuer: &Issuer, changes: &Value) -> Value {
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

pub async fn whoami(
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

pub fn resource(issuer: &Issuer) -> ProtectedResource {
    ProtectedResource::builder(RESOURCE)
        .authorization_server(&issuer.url)
        .scopes_supported(["catalog:read", "catalog:write"])
        .build()
        .unwrap()
}

pub fn endpoint(auth: BearerAuth, sessions: bool) -> Endpoint {
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
pub async fn serve(configure: impl FnOnce(JwtValidation) -> JwtValidation) -> (Issuer, SocketAddr) {
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
pub async fn call_as(
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

pub async fn call(addr: SocketAddr, token: &str) -> Response {
    call_as(addr, V26, &[&format!("Bearer {token}")], "whoami").await
}

/// `n` calls with `token` at once, their answers in order.
pub async fn burst(addr: SocketAddr, token: &str, n: usize) -> Vec<Response> {
    let calls: Vec<_> = (0..n)
        .map(|_| {
            let token = token.to_owned();
            tokio::spawn(async move { call(addr, &token).await })
        })
        .collect();
    let mut answers = Vec::with_capacity(n);
    for answer in calls {
        answers.push(answer.await.unwrap());
    }
    answers
}

/// Nothing of the token or its claims in the answer.
pub fn assert_no_echo(response: &Response, token: &str) {
    let all = format!("{:?}{}", response.headers, response.text());
    assert!(!all.contains(MARKER), "{all}");
    if token.len() > 8 {
        assert!(!all.contains(token), "{all}");
        for part in token.split('.').filter(|p| p.len() > 8) {
            assert!(!all.contains(part), "{all}");
        }
    }
}

pub fn invalid_token_challenge() -> String {
    format!(r#"Bearer error="invalid_token", resource_metadata="{METADATA}", scope="catalog:read""#)
}

pub fn assert_invalid(response: &Response, token: &str) {
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
