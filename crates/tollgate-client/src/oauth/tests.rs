//! The OAuth client against a local mock of a protected resource and its authorization server
//! (a hyper server on an ephemeral loopback port), standing in only for what each test needs.
//! The real check is the conformance suite.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;

use super::*;

/// One request the mock saw.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    query: Vec<(String, String)>,
    form: Vec<(String, String)>,
    authorization: Option<String>,
}

impl Seen {
    fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .chain(&self.form)
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// How the mock behaves; tests change fields before (or between) challenges.
#[derive(Clone)]
struct Mock {
    resource: Option<String>,
    scopes_supported: Option<&'static str>,
    as_scopes_supported: Option<&'static str>,
    metadata_issuer: Option<String>,
    iss_supported: bool,
    iss: Option<String>,
    pkce: bool,
    cimd: bool,
    auth_methods: &'static str,
    registration_method: Option<&'static str>,
    refresh_ok: bool,
    metadata_padding: usize,
    client_prefix: &'static str,
}

impl Default for Mock {
    fn default() -> Self {
        Self {
            resource: None,
            scopes_supported: None,
            as_scopes_supported: None,
            metadata_issuer: None,
            iss_supported: true,
            iss: None,
            pkce: true,
            cimd: false,
            auth_methods: r#"["none"]"#,
            registration_method: None,
            refresh_ok: true,
            metadata_padding: 0,
            client_prefix: "dyn",
        }
    }
}

fn list(words: &str) -> String {
    let items: Vec<String> = words.split(' ').map(|w| format!("\"{w}\"")).collect();
    format!("[{}]", items.join(","))
}

impl Mock {
    fn respond(
        &self,
        seen: &Seen,
        base: &str,
        count: usize,
    ) -> (u16, Vec<(String, String)>, String) {
        let json = |body: String| (200, vec![], body);
        match (seen.method.as_str(), seen.path.as_str()) {
            ("GET", "/.well-known/oauth-protected-resource/mcp") => {
                let resource = self.resource.clone().unwrap_or(format!("{base}/mcp"));
                let scopes = self
                    .scopes_supported
                    .map(|s| format!(r#","scopes_supported":{}"#, list(s)))
                    .unwrap_or_default();
                json(format!(
                    r#"{{"resource":"{resource}","authorization_servers":["{base}"]{scopes}}}"#
                ))
            }
            ("GET", "/.well-known/oauth-authorization-server") => {
                let issuer = self.metadata_issuer.clone().unwrap_or(base.to_owned());
                let pkce = if self.pkce {
                    r#","code_challenge_methods_supported":["S256"]"#
                } else {
                    ""
                };
                let scopes = self
                    .as_scopes_supported
                    .map(|s| format!(r#","scopes_supported":{}"#, list(s)))
                    .unwrap_or_default();
                let pad = "x".repeat(self.metadata_padding);
                json(format!(
                    r#"{{"issuer":"{issuer}","authorization_endpoint":"{base}/authorize","token_endpoint":"{base}/token","registration_endpoint":"{base}/register","authorization_response_iss_parameter_supported":{},"client_id_metadata_document_supported":{},"token_endpoint_auth_methods_supported":{}{pkce}{scopes},"pad":"{pad}"}}"#,
                    self.iss_supported, self.cimd, self.auth_methods
                ))
            }
            ("POST", "/register") => {
                let method = self
                    .registration_method
                    .map(|m| {
                        format!(
                            r#","client_secret":"sec-{count}","token_endpoint_auth_method":"{m}""#
                        )
                    })
                    .unwrap_or_default();
                (
                    201,
                    vec![],
                    format!(
                        r#"{{"client_id":"{}-{count}"{method}}}"#,
                        self.client_prefix
                    ),
                )
            }
            ("GET", "/authorize") => {
                let mut to = url::Url::parse(seen.param("redirect_uri").unwrap_or("x:")).unwrap();
                to.query_pairs_mut()
                    .append_pair("code", &format!("code-{count}"))
                    .append_pair("state", seen.param("state").unwrap_or(""));
                if let Some(iss) = self
                    .iss
                    .clone()
                    .or(Some(base.to_owned()))
                    .filter(|i| !i.is_empty())
                {
                    to.query_pairs_mut().append_pair("iss", &iss);
                }
                (
                    302,
                    vec![("location".into(), to.to_string())],
                    String::new(),
                )
            }
            ("POST", "/token") => {
                if seen.param("grant_type") == Some("refresh_token") && !self.refresh_ok {
                    return (400, vec![], r#"{"error":"invalid_grant"}"#.into());
                }
                json(format!(
                    r#"{{"access_token":"at-{count}","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-{count}"}}"#
                ))
            }
            _ => (404, vec![], String::new()),
        }
    }
}

struct Server {
    base: String,
    mock: Arc<Mutex<Mock>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    async fn start(mock: Mock) -> Self {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let base = format!("http://localhost:{}", listener.local_addr().unwrap().port());
        let mock = Arc::new(Mutex::new(mock));
        let seen = Arc::new(Mutex::new(Vec::<Seen>::new()));
        let (m, s, b) = (mock.clone(), seen.clone(), base.clone());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (m, s, b) = (m.clone(), s.clone(), b.clone());
                let service = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let (m, s, b) = (m.clone(), s.clone(), b.clone());
                        async move {
                            let (parts, body) = req.into_parts();
                            let body = body.collect().await.unwrap().to_bytes();
                            let seen = Seen {
                                method: parts.method.to_string(),
                                path: parts.uri.path().to_owned(),
                                query: url::form_urlencoded::parse(
                                    parts.uri.query().unwrap_or("").as_bytes(),
                                )
                                .into_owned()
                                .collect(),
                                form: url::form_urlencoded::parse(&body).into_owned().collect(),
                                authorization: parts
                                    .headers
                                    .get("authorization")
                                    .map(|v| v.to_str().unwrap().to_owned()),
                            };
                            let count = {
                                let mut all = s.lock().unwrap();
                                all.push(seen.clone());
                                all.len()
                            };
                            let mock = m.lock().unwrap().clone();
                            let (status, headers, text) = mock.respond(&seen, &b, count);
                            let mut response = hyper::Response::builder().status(status);
                            for (name, value) in headers {
                                response = response.header(name, value);
                            }
                            Ok::<_, std::convert::Infallible>(
                                response
                                    .header("content-type", "application/json")
                                    .body(Full::new(Bytes::from(text)))
                                    .unwrap(),
                            )
                        }
                    },
                );
                tokio::spawn(async move {
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                });
            }
        });
        Self { base, mock, seen }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn seen(&self, path: &str) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.path == path)
            .cloned()
            .collect()
    }

    fn set(&self, change: impl FnOnce(&mut Mock)) {
        change(&mut self.mock.lock().unwrap());
    }
}

fn builder() -> OAuthClientBuilder {
    let redirect = Arc::new(FollowRedirect::new("http://localhost:1/callback").unwrap());
    OAuthClient::builder().redirect(redirect)
}

fn challenge(status: u16, value: &str) -> (u16, http::HeaderMap) {
    let mut headers = http::HeaderMap::new();
    if !value.is_empty() {
        headers.insert(
            http::header::WWW_AUTHENTICATE,
            http::HeaderValue::from_str(value).unwrap(),
        );
    }
    (status, headers)
}

async fn bearer(client: &OAuthClient, url: &str) -> Option<String> {
    let headers = client.headers(&http::Method::POST, url).await.unwrap();
    headers.first().map(|(_, v)| v.to_str().unwrap().to_owned())
}

async fn challenge_with(
    client: &OAuthClient,
    url: &str,
    status: u16,
    value: &str,
) -> Result<Retry, AuthError> {
    let (status, headers) = challenge(status, value);
    client.challenged(url, status, &headers).await
}

#[tokio::test]
async fn a_401_runs_discovery_registration_pkce_and_the_code_exchange() {
    let server = Server::start(Mock {
        scopes_supported: Some("mcp:read mcp:write"),
        ..Mock::default()
    })
    .await;
    let client = builder().build().unwrap();
    assert_eq!(bearer(&client, &server.url()).await, None);
    assert_eq!(
        challenge_with(&client, &server.url(), 401, "Bearer")
            .await
            .unwrap(),
        Retry::Again
    );
    assert!(
        bearer(&client, &server.url())
            .await
            .unwrap()
            .starts_with("Bearer at-")
    );

    let authorize = &server.seen("/authorize")[0];
    assert_eq!(authorize.param("client_id"), Some("dyn-3"));
    assert_eq!(authorize.param("code_challenge_method"), Some("S256"));
    assert_eq!(authorize.param("resource"), Some(server.url().as_str()));
    assert_eq!(authorize.param("scope"), Some("mcp:read mcp:write"));
    let token = &server.seen("/token")[0];
    assert_eq!(token.param("grant_type"), Some("authorization_code"));
    assert_eq!(token.param("resource"), Some(server.url().as_str()));
    assert_eq!(token.param("client_id"), Some("dyn-3"));
    assert_eq!(token.authorization, None);
    let verifier = token.param("code_verifier").unwrap();
    assert_eq!(
        pkce::challenge_of(verifier),
        authorize.param("code_challenge").unwrap()
    );
    assert_eq!(token.param("code"), Some("code-4"));
}

#[tokio::test]
async fn the_challenges_scope_wins_and_no_scope_is_sent_when_none_is_known() {
    let server = Server::start(Mock {
        scopes_supported: Some("a b"),
        ..Mock::default()
    })
    .await;
    let client = builder().build().unwrap();
    challenge_with(&client, &server.url(), 401, r#"Bearer scope="only""#)
        .await
        .unwrap();
    assert_eq!(server.seen("/authorize")[0].param("scope"), Some("only"));

    let bare = Server::start(Mock::default()).await;
    let client = builder().build().unwrap();
    challenge_with(&client, &bare.url(), 401, "Bearer")
        .await
        .unwrap();
    assert_eq!(bare.seen("/authorize")[0].param("scope"), None);
}

#[tokio::test]
async fn offline_access_is_asked_for_only_where_the_server_lists_it() {
    let server = Server::start(Mock {
        scopes_supported: Some("mcp"),
        as_scopes_supported: Some("mcp offline_access"),
        ..Mock::default()
    })
    .await;
    challenge_with(&builder().build().unwrap(), &server.url(), 401, "Bearer")
        .await
        .unwrap();
    assert_eq!(
        server.seen("/authorize")[0].param("scope"),
        Some("mcp offline_access")
    );
    challenge_with(
        &builder().offline_access(false).build().unwrap(),
        &server.url(),
        401,
        "Bearer",
    )
    .await
    .unwrap();
    assert_eq!(server.seen("/authorize")[1].param("scope"), Some("mcp"));
    server.set(|m| m.as_scopes_supported = Some("mcp"));
    challenge_with(&builder().build().unwrap(), &server.url(), 401, "Bearer")
        .await
        .unwrap();
    assert_eq!(server.seen("/authorize")[2].param("scope"), Some("mcp"));
}

#[tokio::test]
async fn a_mismatched_resource_is_refused_before_the_authorization_server_is_asked() {
    let server = Server::start(Mock {
        resource: Some("https://evil.example.com/mcp".into()),
        ..Mock::default()
    })
    .await;
    let err = challenge_with(&builder().build().unwrap(), &server.url(), 401, "Bearer")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), kind::RESOURCE_MISMATCH);
    assert!(
        server
            .seen("/.well-known/oauth-authorization-server")
            .is_empty()
    );
    assert!(server.seen("/authorize").is_empty());
}

#[tokio::test]
async fn metadata_whose_issuer_differs_is_not_used() {
    let server = Server::start(Mock {
        metadata_issuer: Some("https://attacker.example.com".into()),
        ..Mock::default()
    })
    .await;
    let err = challenge_with(&builder().build().unwrap(), &server.url(), 401, "Bearer")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), kind::ISSUER_MISMATCH);
    assert!(server.seen("/register").is_empty());
}

#[tokio::test]
async fn a_server_without_pkce_s256_is_refused() {
    let server = Server::start(Mock {
        pkce: false,
        ..Mock::default()
    })
    .await;
    let err = challenge_with(&builder().build().unwrap(), &server.url(), 401, "Bearer")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), kind::NO_PKCE);
    assert!(server.seen("/authorize").is_empty());
}

#[tokio::test]
async fn the_iss_parameter_is_compared_exactly_and_required_where_advertised() {
    for (supported, iss, expected) in [
        (
            true,
            Some("https://evil.example.com"),
            Some(kind::ISS_MISMATCH),
        ),
        (
            false,
            Some("https://evil.example.com"),
            Some(kind::ISS_MISMATCH),
        ),
        (true, Some(""), Some(kind::ISS_MISSING)),
        (false, Some(""), None),
        (true, None, None),
    ] {
        let server = Server::start(Mock {
            iss_supported: supported,
            ..Mock::default()
        })
        .await;
        let iss = iss.map(str::to_owned);
        server.set(|m| m.iss = iss);
        let result =
            challenge_with(&builder().build().unwrap(), &server.url(), 401, "Bearer").await;
        assert_eq!(result.as_ref().err().map(AuthError::kind), expected);
        assert_eq!(server.seen("/token").len(), usize::from(expected.is_none()));
    }
    // A trailing slash is a different issuer: no normalization.
    let server = Server::start(Mock::default()).await;
    let slash = format!("{}/", server.base);
    server.set(|m| m.iss = Some(slash));
    let err = challenge_with(&builder().build().unwrap(), &server.url(), 401, "Bearer")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), kind::ISS_MISMATCH);
}

#[tokio::test]
async fn pre_registered_credentials_use_basic_and_only_at_their_issuer() {
    let server = Server::start(Mock {
        auth_methods: r#"["client_secret_basic"]"#,
        ..Mock::default()
    })
    .await;
    let pre = ClientCredentials::new(server.base.clone(), "pre").secret("pw:1".into());
    let client = builder().pre_registered(pre).build().unwrap();
    challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    assert!(server.seen("/register").is_empty());
    let token = &server.seen("/token")[0];
    // "pre:pw%3A1" in base64.
    assert_eq!(
        token.authorization.as_deref(),
        Some("Basic cHJlOnB3JTNBMQ==")
    );
    assert_eq!(token.param("client_secret"), None);

    let other = ClientCredentials::new("https://other.example", "pre").secret("pw".into());
    let client = builder().pre_registered(other).build().unwrap();
    challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    assert_eq!(server.seen("/register").len(), 1);
}

#[tokio::test]
async fn the_registered_method_is_used_at_the_token_endpoint() {
    let server = Server::start(Mock {
        auth_methods: r#"["client_secret_post"]"#,
        registration_method: Some("client_secret_post"),
        ..Mock::default()
    })
    .await;
    challenge_with(&builder().build().unwrap(), &server.url(), 401, "Bearer")
        .await
        .unwrap();
    let token = &server.seen("/token")[0];
    assert_eq!(token.authorization, None);
    assert!(token.param("client_secret").unwrap().starts_with("sec-"));
}

#[tokio::test]
async fn a_metadata_document_url_is_the_client_id_where_supported() {
    let server = Server::start(Mock {
        cimd: true,
        ..Mock::default()
    })
    .await;
    let client = builder()
        .client_metadata_document("https://app.example/client.json")
        .build()
        .unwrap();
    challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    assert!(server.seen("/register").is_empty());
    assert_eq!(
        server.seen("/authorize")[0].param("client_id"),
        Some("https://app.example/client.json")
    );
}

#[tokio::test]
async fn a_second_401_refreshes_and_a_third_authorizes_again() {
    let server = Server::start(Mock::default()).await;
    let client = builder().build().unwrap();
    challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    let tokens = server.seen("/token");
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[1].param("grant_type"), Some("refresh_token"));
    assert_eq!(tokens[1].param("resource"), Some(server.url().as_str()));
    assert_eq!(server.seen("/authorize").len(), 1);
    // The refreshed token was refused at once: authorize again rather than loop on refreshes.
    challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    assert_eq!(server.seen("/authorize").len(), 2);
    // A refused refresh falls back to authorization.
    server.set(|m| m.refresh_ok = false);
    challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    assert_eq!(server.seen("/authorize").len(), 3);
}

#[tokio::test]
async fn step_up_asks_for_the_union_and_stops_at_its_limit() {
    let server = Server::start(Mock::default()).await;
    let client = builder().step_up_limit(2).build().unwrap();
    let url = server.url();
    challenge_with(&client, &url, 401, r#"Bearer scope="mcp:basic""#)
        .await
        .unwrap();
    let up = r#"Bearer error="insufficient_scope", scope="mcp:write""#;
    assert_eq!(
        challenge_with(&client, &url, 403, up).await.unwrap(),
        Retry::Again
    );
    assert_eq!(
        server.seen("/authorize")[1].param("scope"),
        Some("mcp:basic mcp:write")
    );
    // The same set again: once more is within the limit (2), the third is one past it.
    assert_eq!(
        challenge_with(&client, &url, 403, up).await.unwrap(),
        Retry::Again
    );
    assert_eq!(
        challenge_with(&client, &url, 403, up).await.unwrap(),
        Retry::GiveUp
    );
    assert_eq!(server.seen("/authorize").len(), 3);
    // A 403 that is not about scope is not retried.
    let other = challenge_with(&client, &url, 403, r#"Bearer error="invalid_token""#)
        .await
        .unwrap();
    assert_eq!(other, Retry::GiveUp);
}

#[tokio::test]
async fn a_changed_authorization_server_gets_a_new_registration() {
    let first = Server::start(Mock {
        client_prefix: "as1",
        ..Mock::default()
    })
    .await;
    let second = Server::start(Mock {
        client_prefix: "as2",
        ..Mock::default()
    })
    .await;
    let client = builder().build().unwrap();
    challenge_with(&client, &first.url(), 401, "Bearer")
        .await
        .unwrap();
    // The resource's metadata now names another issuer (served from the second server, which
    // names itself as the authorization server for the first server's resource).
    let url = first.url();
    let second_base = second.base.clone();
    second.set(|m| m.resource = Some(url.clone()));
    let prm = format!("{second_base}/.well-known/oauth-protected-resource/mcp");
    let err_free = challenge_with(
        &client,
        &url,
        401,
        &format!(r#"Bearer resource_metadata="{prm}""#),
    )
    .await;
    assert!(err_free.is_ok());
    assert_eq!(second.seen("/register").len(), 1);
    let at_second = &second.seen("/token")[0];
    assert_eq!(at_second.param("grant_type"), Some("authorization_code"));
    assert!(at_second.param("client_id").unwrap().starts_with("as2-"));
    assert!(
        second.seen("/authorize")[0]
            .param("client_id")
            .unwrap()
            .starts_with("as2-")
    );
}

#[tokio::test]
async fn a_metadata_document_at_the_byte_limit_is_read_and_one_past_it_is_refused() {
    let server = Server::start(Mock::default()).await;
    let probe = builder().max_document_bytes(1 << 20).build().unwrap();
    challenge_with(&probe, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    let base_len = {
        let http = fetch::http_client().unwrap();
        let url = format!("{}/.well-known/oauth-authorization-server", server.base);
        http.get(url)
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap()
            .len()
    };
    let limit = 4096;
    server.set(|m| m.metadata_padding = limit - base_len);
    let at = builder().max_document_bytes(limit).build().unwrap();
    assert!(
        challenge_with(&at, &server.url(), 401, "Bearer")
            .await
            .is_ok()
    );
    server.set(|m| m.metadata_padding = limit - base_len + 1);
    let past = builder().max_document_bytes(limit).build().unwrap();
    let err = challenge_with(&past, &server.url(), 401, "Bearer")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), kind::TOO_LARGE);
}

#[tokio::test]
async fn errors_never_carry_secrets() {
    let server = Server::start(Mock {
        metadata_issuer: Some("https://attacker.example.com".into()),
        ..Mock::default()
    })
    .await;
    let pre = ClientCredentials::new(server.base.clone(), "id").secret("TOPSECRET".into());
    let err = challenge_with(
        &builder().pre_registered(pre.clone()).build().unwrap(),
        &server.url(),
        401,
        "Bearer",
    )
    .await
    .unwrap_err();
    assert!(!err.to_string().contains("attacker"));
    assert!(!format!("{pre:?}").contains("TOPSECRET"));
}

/// A P-256 key made for these tests only (`openssl genpkey -algorithm EC`).
const TEST_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgkT2h4t6/YCfraqPs
iZqtL5ywZeKScbYfmZbn21EY6ZWhRANCAAQ/IvOGFaIOg6yDUPu4y56bJEONaKpN
Hv1Pk/593AbDSSMB5u8/Sy/2FIqlgqv41vBHskEDSWbYVkpko0FvBlHg
-----END PRIVATE KEY-----
";
const TEST_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEPyLzhhWiDoOsg1D7uMuemyRDjWiq
TR79T5P+fdwGw0kjAebvP0sv9hSKpYKr+NbwR7JBA0lm2FZKZKNBbwZR4A==
-----END PUBLIC KEY-----
";

#[tokio::test]
async fn the_client_credentials_grant_signs_a_private_key_jwt_for_the_issuer() {
    #[derive(serde::Deserialize)]
    struct Claims {
        iss: String,
        sub: String,
        jti: String,
    }
    let server = Server::start(Mock {
        auth_methods: r#"["private_key_jwt"]"#,
        ..Mock::default()
    })
    .await;
    let credentials =
        ClientCredentials::unbound("cc").private_key(TEST_KEY.into(), KeyAlgorithm::Es256);
    let client = OAuthClient::builder()
        .client_credentials_grant(credentials)
        .build()
        .unwrap();
    assert_eq!(
        challenge_with(&client, &server.url(), 401, "Bearer")
            .await
            .unwrap(),
        Retry::Again
    );
    assert!(server.seen("/authorize").is_empty() && server.seen("/register").is_empty());
    let token = &server.seen("/token")[0];
    assert_eq!(token.param("grant_type"), Some("client_credentials"));
    assert_eq!(token.param("resource"), Some(server.url().as_str()));
    assert_eq!(
        token.param("client_assertion_type"),
        Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    );
    let key = jsonwebtoken::DecodingKey::from_ec_pem(TEST_PUBLIC_KEY.as_bytes()).unwrap();
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    validation.set_audience(&[server.base.as_str()]);
    let claims =
        jsonwebtoken::decode::<Claims>(token.param("client_assertion").unwrap(), &key, &validation)
            .unwrap()
            .claims;
    assert_eq!((claims.iss.as_str(), claims.sub.as_str()), ("cc", "cc"));
    assert!(!claims.jti.is_empty());
    assert!(
        bearer(&client, &server.url())
            .await
            .unwrap()
            .starts_with("Bearer at-")
    );

    // Unbound credentials now belong to that issuer: another server does not see them.
    let other = Server::start(Mock::default()).await;
    let err = challenge_with(&client, &other.url(), 401, "Bearer")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), kind::NO_CLIENT);
    assert!(other.seen("/token").is_empty());
}

#[tokio::test]
async fn the_client_credentials_grant_with_a_secret_uses_basic() {
    let server = Server::start(Mock {
        auth_methods: r#"["client_secret_basic"]"#,
        ..Mock::default()
    })
    .await;
    let credentials = ClientCredentials::unbound("cc").secret("pw".into());
    let client = OAuthClient::builder()
        .client_credentials_grant(credentials)
        .build()
        .unwrap();
    challenge_with(&client, &server.url(), 401, r#"Bearer scope="a b""#)
        .await
        .unwrap();
    let token = &server.seen("/token")[0];
    assert_eq!(token.authorization.as_deref(), Some("Basic Y2M6cHc="));
    assert_eq!(token.param("scope"), Some("a b"));
}

#[tokio::test]
async fn without_a_redirect_the_code_flow_is_a_fixed_error() {
    let server = Server::start(Mock::default()).await;
    let client = OAuthClient::builder().build().unwrap();
    let err = challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), kind::NO_REDIRECT_SET);
}
