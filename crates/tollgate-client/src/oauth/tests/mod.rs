//! The OAuth client against a local mock of a protected resource and its authorization server
//! (a hyper server on an ephemeral loopback port), standing in only for what each test needs:
//! the mock here, the authorization-code flow in `code.rs`, the grants without a user in
//! `grants.rs`. The real check is the conformance suite.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;

use super::*;

mod code;
mod grants;

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
    /// The metadata names a token endpoint nothing listens on (the server unreachable).
    token_down: bool,
    metadata_padding: usize,
    client_prefix: &'static str,
    issued_token_type: &'static str,
    prm: bool,
    as_metadata: bool,
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
            token_down: false,
            metadata_padding: 0,
            client_prefix: "dyn",
            issued_token_type: "urn:ietf:params:oauth:token-type:id-jag",
            prm: true,
            as_metadata: true,
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
            ("GET", "/.well-known/oauth-protected-resource/mcp") if self.prm => {
                let resource = self.resource.clone().unwrap_or(format!("{base}/mcp"));
                let scopes = self
                    .scopes_supported
                    .map(|s| format!(r#","scopes_supported":{}"#, list(s)))
                    .unwrap_or_default();
                json(format!(
                    r#"{{"resource":"{resource}","authorization_servers":["{base}"]{scopes}}}"#
                ))
            }
            ("GET", "/.well-known/oauth-authorization-server") if self.as_metadata => {
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
                let token = if self.token_down {
                    "http://127.0.0.1:1/token".to_owned()
                } else {
                    format!("{base}/token")
                };
                json(format!(
                    r#"{{"issuer":"{issuer}","authorization_endpoint":"{base}/authorize","token_endpoint":"{token}","registration_endpoint":"{base}/register","authorization_response_iss_parameter_supported":{},"client_id_metadata_document_supported":{},"token_endpoint_auth_methods_supported":{}{pkce}{scopes},"pad":"{pad}"}}"#,
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
            ("POST", "/idp/token") => json(format!(
                r#"{{"access_token":"jag-{count}","issued_token_type":"{}","token_type":"N_A"}}"#,
                self.issued_token_type
            )),
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
