//! The authorization-code flow: discovery, checks, registration, PKCE, refresh, step-up, limits.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::sync::Arc;

use super::*;

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
async fn configured_scopes_are_asked_beside_the_servers() {
    let server = Server::start(Mock {
        scopes_supported: Some("a b"),
        ..Mock::default()
    })
    .await;
    let client = builder().scopes(["wide", "a"]).build().unwrap();
    challenge_with(&client, &server.url(), 401, r#"Bearer scope="only""#)
        .await
        .unwrap();
    assert_eq!(
        server.seen("/authorize")[0].param("scope"),
        Some("a only wide")
    );
    // With no scope named by the server, the configured ones alone.
    let bare = Server::start(Mock::default()).await;
    let client = builder().scopes(["wide"]).build().unwrap();
    challenge_with(&client, &bare.url(), 401, "Bearer")
        .await
        .unwrap();
    assert_eq!(bare.seen("/authorize")[0].param("scope"), Some("wide"));
    // A step-up before any 401 of this client (its token from elsewhere) asks them too.
    let up = Server::start(Mock::default()).await;
    let client = builder().scopes(["wide"]).build().unwrap();
    let insufficient = r#"Bearer error="insufficient_scope", scope="mcp:write""#;
    assert_eq!(
        challenge_with(&client, &up.url(), 403, insufficient)
            .await
            .unwrap(),
        Retry::Again
    );
    assert_eq!(
        up.seen("/authorize")[0].param("scope"),
        Some("mcp:write wide")
    );
}

#[test]
fn a_configured_scope_is_a_scope_token_within_its_bounds() {
    let refused = |scopes: Vec<String>| match OAuthClient::builder().scopes(scopes).build() {
        Ok(_) => false,
        Err(e) => {
            assert_eq!(e.kind(), kind::BAD_SCOPE);
            true
        }
    };
    let long = "s".repeat(OAuthClient::MAX_SCOPE_BYTES);
    assert!(!refused(vec![long.clone()]));
    assert!(refused(vec![format!("{long}s")]));
    let many = |n: usize| (0..n).map(|i| format!("s{i}")).collect::<Vec<_>>();
    assert!(!refused(many(OAuthClient::MAX_SCOPES)));
    assert!(refused(many(OAuthClient::MAX_SCOPES + 1)));
    for bad in ["", "a b", "a\"b", "a\\b", "é", "a\u{7f}"] {
        assert!(refused(vec![bad.to_owned()]), "{bad:?}");
    }
    assert!(!refused(vec![
        "mcp:read".to_owned(),
        "https://x/y!#$".to_owned()
    ]));
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
    // OpenID Connect Core §11: offline_access is granted only with prompt=consent.
    assert_eq!(
        server.seen("/authorize")[0].param("prompt"),
        Some("consent")
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
    assert_eq!(server.seen("/authorize")[1].param("prompt"), None);
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
async fn an_unreachable_token_endpoint_keeps_the_refresh_token() {
    let server = Server::start(Mock::default()).await;
    let store: Arc<dyn crate::oauth::TokenStore> =
        Arc::new(crate::oauth::MemoryTokenStore::default());
    let client = builder().token_store(Arc::clone(&store)).build().unwrap();
    challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    let key = crate::oauth::store_key(&server.url());
    let before = store.load(&key).unwrap();
    // The token endpoint goes away: the refresh fails as unreachable, the tokens stay, and no
    // second authorization starts.
    server.set(|m| m.token_down = true);
    let err = challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap_err();
    assert!(err.is_unreachable());
    let kept = store.load(&key).unwrap();
    assert_eq!(kept.refresh_token, before.refresh_token);
    assert_eq!(server.seen("/authorize").len(), 1);
    // It comes back: the kept refresh token renews the access token.
    server.set(|m| m.token_down = false);
    challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    let tokens = server.seen("/token");
    assert_eq!(
        tokens.last().unwrap().param("grant_type"),
        Some("refresh_token")
    );
    assert_eq!(server.seen("/authorize").len(), 1);
}

#[tokio::test]
async fn a_later_run_refreshes_with_the_saved_registration() {
    let server = Server::start(Mock::default()).await;
    let store: Arc<dyn crate::oauth::TokenStore> =
        Arc::new(crate::oauth::MemoryTokenStore::default());
    let first = builder().token_store(Arc::clone(&store)).build().unwrap();
    challenge_with(&first, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    let registered = server.seen("/token")[0]
        .param("client_id")
        .unwrap()
        .to_owned();
    drop(first);
    // A new client (a later run) on the same store: a refresh with the saved client, no
    // second registration.
    let later = builder().token_store(Arc::clone(&store)).build().unwrap();
    challenge_with(&later, &server.url(), 401, "Bearer")
        .await
        .unwrap();
    let tokens = server.seen("/token");
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[1].param("grant_type"), Some("refresh_token"));
    assert_eq!(tokens[1].param("client_id"), Some(registered.as_str()));
    assert_eq!(server.seen("/register").len(), 1);
    assert_eq!(server.seen("/authorize").len(), 1);
    // The renewed tokens keep it for the run after.
    let kept = store.load(&crate::oauth::store_key(&server.url())).unwrap();
    assert_eq!(kept.client.unwrap().client_id(), registered);
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

#[tokio::test]
async fn a_server_without_resource_metadata_is_authorized_the_2025_03_26_way() {
    // Metadata at the origin's root.
    let server = Server::start(Mock {
        prm: false,
        ..Mock::default()
    })
    .await;
    challenge_with(&builder().build().unwrap(), &server.url(), 401, "Bearer")
        .await
        .unwrap();
    assert_eq!(
        server.seen("/.well-known/oauth-protected-resource").len(),
        1
    );
    assert_eq!(
        server.seen("/authorize")[0].param("resource"),
        Some(server.url().as_str())
    );
    // No metadata at all: the default endpoints at the origin.
    let bare = Server::start(Mock {
        prm: false,
        as_metadata: false,
        iss: Some(String::new()),
        ..Mock::default()
    })
    .await;
    challenge_with(&builder().build().unwrap(), &bare.url(), 401, "Bearer")
        .await
        .unwrap();
    assert_eq!(bare.seen("/register").len(), 1);
    assert_eq!(
        bare.seen("/token")[0].param("grant_type"),
        Some("authorization_code")
    );
    // Turned off, such a server is refused.
    let err = challenge_with(
        &builder().legacy_discovery(false).build().unwrap(),
        &bare.url(),
        401,
        "Bearer",
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), kind::NO_RESOURCE_METADATA);
}

#[tokio::test]
async fn follow_redirect_follows_up_to_its_hop_limit() {
    let server = Server::start(Mock::default()).await;
    // The mock's authorization endpoint redirects straight to the redirect URI: one hop.
    let one = FollowRedirect::new("http://localhost:1/callback")
        .unwrap()
        .max_hops(1);
    let client = OAuthClient::builder()
        .redirect(Arc::new(one))
        .build()
        .unwrap();
    assert!(
        challenge_with(&client, &server.url(), 401, "Bearer")
            .await
            .is_ok()
    );
    let none = FollowRedirect::new("http://localhost:1/callback")
        .unwrap()
        .max_hops(0);
    let client = OAuthClient::builder()
        .redirect(Arc::new(none))
        .build()
        .unwrap();
    let err = challenge_with(&client, &server.url(), 401, "Bearer")
        .await
        .unwrap_err();
    assert_eq!(err.kind(), kind::TOO_MANY_REDIRECTS);
}

#[test]
fn an_error_answer_is_acted_on_only_after_the_state_and_issuer_checks() {
    let server: discovery::ServerMetadata = fetch::bind(
        br#"{"issuer":"https://as.example","authorization_response_iss_parameter_supported":true}"#,
        1024,
    )
    .unwrap();
    let check = |pairs: &[(&str, &str)]| {
        let answer: Vec<(String, String)> = pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect();
        flow::check_response(&answer, "s1", &server)
            .err()
            .map(|e| e.kind())
    };
    let denied = [
        ("error", "access_denied"),
        ("state", "s1"),
        ("iss", "https://as.example"),
    ];
    assert_eq!(check(&denied), Some(kind::DENIED));
    let forged = [
        ("error", "access_denied"),
        ("state", "s1"),
        ("iss", "https://evil.example"),
    ];
    assert_eq!(check(&forged), Some(kind::ISS_MISMATCH));
    let stale = [("error", "access_denied"), ("state", "other")];
    assert_eq!(check(&stale), Some(kind::STATE_MISMATCH));
    let good = [
        ("code", "c"),
        ("state", "s1"),
        ("iss", "https://as.example"),
    ];
    assert_eq!(check(&good), None);
    assert_eq!(
        check(&[("state", "s1"), ("iss", "https://as.example")]),
        Some(kind::NO_CODE)
    );
}

#[tokio::test]
async fn overlapping_401s_run_one_flow() {
    let server = Server::start(Mock::default()).await;
    let client = builder().build().unwrap();
    let url = server.url();
    let (a, b) = tokio::join!(
        challenge_with(&client, &url, 401, "Bearer"),
        challenge_with(&client, &url, 401, "Bearer")
    );
    assert_eq!((a.unwrap(), b.unwrap()), (Retry::Again, Retry::Again));
    assert_eq!(server.seen("/authorize").len(), 1);
    assert_eq!(server.seen("/token").len(), 1);
}
