//! The grants without a user: client credentials (secret, private_key_jwt), JWT bearer with an ID-JAG or a workload's token.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::sync::Arc;

use super::*;

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

#[tokio::test]
async fn enterprise_managed_authorization_exchanges_the_id_token_for_an_id_jag() {
    let server = Server::start(Mock {
        auth_methods: r#"["client_secret_basic"]"#,
        ..Mock::default()
    })
    .await;
    let exchange = IdJagExchange::new(
        format!("{}/idp/token", server.base),
        "idp-client",
        "id-tok".into(),
    )
    .unwrap();
    let credentials = ClientCredentials::unbound("app").secret("s".into());
    let client = OAuthClient::builder()
        .jwt_bearer_grant(credentials, Arc::new(exchange))
        .build()
        .unwrap();
    challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    let idp = &server.seen("/idp/token")[0];
    assert_eq!(
        idp.param("grant_type"),
        Some("urn:ietf:params:oauth:grant-type:token-exchange")
    );
    assert_eq!(
        idp.param("requested_token_type"),
        Some("urn:ietf:params:oauth:token-type:id-jag")
    );
    assert_eq!(idp.param("subject_token"), Some("id-tok"));
    assert_eq!(
        idp.param("subject_token_type"),
        Some("urn:ietf:params:oauth:token-type:id_token")
    );
    assert_eq!(idp.param("audience"), Some(server.base.as_str()));
    assert_eq!(idp.param("resource"), Some(server.url().as_str()));
    assert_eq!(idp.param("client_id"), Some("idp-client"));
    let token = &server.seen("/token")[0];
    assert_eq!(
        token.param("grant_type"),
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    );
    let jag = format!(
        "jag-{}",
        server
            .seen
            .lock()
            .unwrap()
            .iter()
            .position(|s| s.path == "/idp/token")
            .unwrap()
            + 1
    );
    assert_eq!(token.param("assertion"), Some(jag.as_str()));
    assert_eq!(token.authorization.as_deref(), Some("Basic YXBwOnM="));

    // Another token type from the identity provider is refused before the token endpoint.
    let server = Server::start(Mock {
        issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
        ..Mock::default()
    })
    .await;
    let exchange = IdJagExchange::new(
        format!("{}/idp/token", server.base),
        "idp-client",
        "id-tok".into(),
    )
    .unwrap();
    let client = OAuthClient::builder()
        .jwt_bearer_grant(ClientCredentials::unbound("app"), Arc::new(exchange))
        .build()
        .unwrap();
    let err = challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), kind::EXCHANGE);
    assert!(server.seen("/token").is_empty());
    assert!(IdJagExchange::new("http://idp.example/token", "c", String::new()).is_err());
}

#[tokio::test]
async fn a_workload_identity_token_is_the_jwt_bearer_assertion() {
    let server = Server::start(Mock::default()).await;
    let identity = WorkloadIdentity::new(|| Ok("workload-jwt".to_owned()));
    let client = OAuthClient::builder()
        .jwt_bearer_grant(ClientCredentials::unbound("wl"), Arc::new(identity))
        .build()
        .unwrap();
    challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    let token = &server.seen("/token")[0];
    assert_eq!(
        token.param("grant_type"),
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    );
    assert_eq!(token.param("assertion"), Some("workload-jwt"));
    assert_eq!(token.param("client_id"), Some("wl"));
    assert_eq!(token.param("resource"), Some(server.url().as_str()));
}
