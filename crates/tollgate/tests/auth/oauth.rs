//! The OAuth resource server (feature `oauth`) over real HTTP: a local authorization server
//! fixture (`oauth_support`) publishes its metadata, JWK Set and introspection endpoint on
//! loopback, tokens are signed there with P-256 keys, and every refusal the MCP authorization
//! spec names is checked for its status, code and challenge — and for carrying nothing of the
//! token.
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

use super::oauth_support;
use crate::support;

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::Mac as _;
use oauth_support::*;
use serde_json::{Value, json};
use support::{META, post, raw, start};
use tokio::io::AsyncWriteExt;
use tollgate::auth::{BearerAuth, Introspection, JwtValidation, MAX_BEARER_TOKEN_BYTES};
use tollgate::policy::{AdmissionIdentity, ProtectedResource};
use tollgate::{BuildErrorKind, Endpoint, Implementation, McpService, ToolRegistration};

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
            token(&issuer, &json!({ "iss": "https://evil.example" })),
        ),
        ("no issuer", token(&issuer, &json!({ "iss": null }))),
        (
            "another audience",
            token(&issuer, &json!({ "aud": "https://other.example/mcp" })),
        ),
        ("no audience", token(&issuer, &json!({ "aud": null }))),
        (
            "expired past the leeway",
            token(&issuer, &json!({ "exp": t - 31 })),
        ),
        ("no expiry", token(&issuer, &json!({ "exp": null }))),
        ("not yet valid", token(&issuer, &json!({ "nbf": t + 120 }))),
        (
            "issued in the future",
            token(&issuer, &json!({ "iat": t + 120 })),
        ),
        ("no subject", token(&issuer, &json!({ "sub": null }))),
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
async fn a_silent_authorization_server_costs_one_fetch_timeout_however_many_requests_wait() {
    let timeout = Duration::from_secs(1);
    for opaque in [false, true] {
        // An issuer with a path: discovery may try three metadata URLs, each of which hangs.
        let issuer = Issuer::start_at(&[], "/tenant").await;
        issuer.set_mode(Mode::Hanging);
        let auth = BearerAuth::builder(&resource(&issuer));
        let (auth, token) = if opaque {
            let introspection = Introspection::new(&issuer.url).fetch_timeout(timeout);
            (auth.introspection(introspection), "opaque-good".to_owned())
        } else {
            let jwt = JwtValidation::new(&issuer.url).fetch_timeout(timeout);
            (auth.jwt(jwt), token(&issuer, &json!({})))
        };
        let addr = start(McpService::new(endpoint(auth.build().unwrap(), false))).await;
        let began = Instant::now();
        for response in burst(addr, &token, 8).await {
            assert_eq!(response.status, 503, "{}", response.text());
            assert_eq!(response.header("retry-after"), Some("5"));
            assert_no_echo(&response, &token);
        }
        // One lookup, bounded as a whole: not one per request, nor one timeout per URL.
        let took = began.elapsed();
        assert!(took <= 2 * timeout, "opaque {opaque}: {took:?}");
        let tried = issuer.connections();
        assert!((1..=3).contains(&tried), "opaque {opaque}: {tried}");
        // Right after a failed lookup a request is answered without another.
        assert_eq!(call(addr, &token).await.status, 503);
        assert_eq!(issuer.connections(), tried);
    }
}

#[tokio::test]
async fn a_burst_of_first_requests_waits_for_the_one_lookup_under_way() {
    for opaque in [false, true] {
        let (issuer, addr) = serve(|j| j).await;
        let token = match opaque {
            true => "opaque-good".to_owned(),
            false => token(&issuer, &json!({})),
        };
        for response in burst(addr, &token, 8).await {
            assert_eq!(response.status, 200, "opaque {opaque}: {}", response.text());
        }
        assert_eq!(issuer.metadata_hits(), 1, "opaque {opaque}");
        assert_eq!(issuer.jwks_hits(), usize::from(!opaque));
    }
}

#[tokio::test]
async fn a_failed_introspection_discovery_is_retried_after_five_seconds_not_before() {
    let issuer = Issuer::start(&[]).await;
    issuer.set_mode(Mode::Failing);
    let auth = BearerAuth::builder(&resource(&issuer))
        .introspection(Introspection::new(&issuer.url))
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint(auth, false))).await;
    assert_eq!(call(addr, "opaque-good").await.status, 503);
    let tried = issuer.connections();
    issuer.set_mode(Mode::Up);
    assert_eq!(call(addr, "opaque-good").await.status, 503);
    assert_eq!(issuer.connections(), tried);
    tokio::time::sleep(Duration::from_millis(5_100)).await;
    let response = call(addr, "opaque-good").await;
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(issuer.metadata_hits(), 1);
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
    // With both, `scope` is read and `scp` ignored (not refused).
    let both = token(
        &issuer,
        &json!({ "scope": "catalog:read", "scp": ["catalog:write"] }),
    );
    let response = call_as(addr, V26, &[&format!("Bearer {both}")], "restock").await;
    assert_eq!(response.status, 403, "{}", response.text());
    assert_eq!(call(addr, &both).await.status, 200);
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
async fn a_refused_opaque_token_is_asked_about_once_while_remembered() {
    let (issuer, addr) = serve(|j| j).await;
    let introspections = || issuer.state.lock().unwrap().introspections;
    // Eight requests at once with one unknown token: one call (shared, then remembered).
    for response in burst(addr, "opaque-unknown", 8).await {
        assert_invalid(&response, "opaque-unknown");
    }
    assert_eq!(introspections(), 1);
    assert_invalid(&call(addr, "opaque-unknown").await, "opaque-unknown");
    assert_eq!(introspections(), 1);
    // Without the refusal cache, each request after the call settled asks again.
    let issuer = Issuer::start(&[]).await;
    let auth = BearerAuth::builder(&resource(&issuer))
        .introspection(Introspection::new(&issuer.url).refusal_cache_for(Duration::ZERO))
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint(auth, false))).await;
    for _ in 0..3 {
        assert_eq!(call(addr, "opaque-unknown").await.status, 401);
    }
    assert_eq!(issuer.state.lock().unwrap().introspections, 3);
}

#[tokio::test]
async fn concurrent_unknown_tokens_make_at_most_the_cap_of_introspection_calls() {
    // An authorization server that takes every call and answers none: each call holds its
    // place until the fetch timeout (10 s), far past the 100 ms a request waits for one.
    let issuer = Issuer::start(&[]).await;
    issuer.set_mode(Mode::Hanging);
    let introspection = Introspection::new(&issuer.url)
        .endpoint(format!("{}/introspect", issuer.url))
        .fetch_timeout(Duration::from_secs(10))
        .max_concurrent_calls(2);
    let auth = BearerAuth::builder(&resource(&issuer))
        .introspection(introspection)
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint(auth, false))).await;
    let (answers, mut answered) = tokio::sync::mpsc::unbounded_channel();
    // Three distinct tokens at once: two calls (the cap) are made, the third request finds no
    // place and is answered as an unreachable server is, with no call.
    for n in 0..3 {
        let answers = answers.clone();
        tokio::spawn(async move {
            let token = format!("opaque-random-{n}");
            let _ = answers.send((call(addr, &token).await, token));
        });
    }
    let (response, token) = answered.recv().await.unwrap();
    assert_eq!(
        (response.status, response.code()),
        (503, -32603),
        "{}",
        response.text()
    );
    assert_eq!(response.header("retry-after"), Some("5"));
    assert_no_echo(&response, &token);
    assert_eq!(issuer.connections(), 2);
    // A request carrying a token already being asked about joins its call and takes no place.
    let asked = (0..3)
        .map(|n| format!("opaque-random-{n}"))
        .find(|t| *t != token)
        .unwrap();
    let joined = tokio::time::timeout(Duration::from_millis(300), call(addr, &asked));
    assert!(joined.await.is_err(), "it waits on the call under way");
    assert_eq!(issuer.connections(), 2);

    // The default cap: forty random tokens at once make sixteen calls, the others a 503 each.
    let issuer = Issuer::start(&[]).await;
    issuer.set_mode(Mode::Hanging);
    let introspection = Introspection::new(&issuer.url)
        .endpoint(format!("{}/introspect", issuer.url))
        .fetch_timeout(Duration::from_secs(10));
    let auth = BearerAuth::builder(&resource(&issuer))
        .introspection(introspection)
        .build()
        .unwrap();
    let addr = start(McpService::new(endpoint(auth, false))).await;
    let (answers, mut answered) = tokio::sync::mpsc::unbounded_channel();
    for n in 0..40 {
        let answers = answers.clone();
        tokio::spawn(async move {
            let _ = answers.send(call(addr, &format!("opaque-flood-{n}")).await.status);
        });
    }
    for _ in 0..24 {
        assert_eq!(answered.recv().await, Some(503));
    }
    // The calls holding the places may still be connecting on a busy machine.
    for _ in 0..200 {
        if issuer.connections() >= 16 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(issuer.connections(), 16);
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

/// A metadata route answers a CORS preflight only when the service has a policy, and only a
/// real one (`OPTIONS` with `Access-Control-Request-Method`); any other `OPTIONS` is 405.
#[tokio::test]
async fn the_metadata_route_answers_preflights_under_a_cors_policy() {
    const APP: &str = "https://app.example.com";
    let issuer = Issuer::start(&[("k1", &key(1))]).await;
    let auth = BearerAuth::builder(&resource(&issuer))
        .jwt(JwtValidation::new(&issuer.url))
        .build()
        .unwrap();
    let service = |cors: bool| {
        let builder = McpService::builder().endpoint(endpoint(auth.clone(), false));
        let builder = if cors {
            builder.cors(tollgate::transport::CorsPolicy::allow_origins([APP]).unwrap())
        } else {
            builder
        };
        builder.build().unwrap()
    };
    let options = |acrm: bool| {
        format!(
            "OPTIONS /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: {APP}\r\n{}Connection: close\r\n\r\n",
            if acrm {
                "Access-Control-Request-Method: GET\r\n"
            } else {
                ""
            }
        )
    };
    let with_policy = start(service(true)).await;
    let granted = raw(with_policy, options(true).as_bytes()).await;
    assert_eq!(granted.status, 204);
    assert_eq!(granted.header("access-control-allow-origin"), Some(APP));
    let plain = raw(with_policy, options(false).as_bytes()).await;
    assert_eq!(plain.status, 405);
    assert_eq!(plain.header("allow"), Some("GET, HEAD"));
    assert_eq!(plain.header("vary"), Some("Origin"));
    // Without a policy a page from that origin is refused before any route (403), and the
    // same request from no page is not a preflight: 405, with no grant and no `Vary`.
    let without = start(service(false)).await;
    assert_eq!(raw(without, options(true).as_bytes()).await.status, 403);
    let originless = options(true).replace(&format!("Origin: {APP}\r\n"), "");
    let refused = raw(without, originless.as_bytes()).await;
    assert_eq!(refused.status, 405);
    assert_eq!(refused.header("access-control-allow-origin"), None);
    assert_eq!(refused.header("vary"), None);
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
    // The URL every challenge names is served, with this resource's document.
    let reader = token(&issuer, &json!({}));
    let answers = [
        call_as(addr, V26, &[], "whoami").await,
        call(addr, "not-a-good-token").await,
        call_as(addr, V26, &["Bearer"], "whoami").await,
        call_as(addr, V26, &[&format!("Bearer {reader}")], "restock").await,
    ];
    for answer in &answers {
        let challenge = answer.header("www-authenticate").unwrap();
        let url = challenge
            .split("resource_metadata=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap();
        let path = url.strip_prefix("https://mcp.example").unwrap();
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        let document = raw(addr, request.as_bytes()).await;
        assert_eq!(
            (answer.status, document.status),
            (answer.status, 200),
            "{url}"
        );
        let doc: Value = serde_json::from_slice(&document.body).unwrap();
        assert_eq!(doc["resource"], RESOURCE);
    }
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    assert_eq!(statuses, [401, 401, 400, 403]);
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

#[test]
fn an_endpoint_publishes_the_resource_at_its_path_and_the_one_its_bearer_auth_checks() {
    let invalid = BuildErrorKind::InvalidAuthorization;
    let at = |path: &str| Endpoint::with_path(path, ALL, Implementation::new("e", "1"));
    let protected = |id: &str| {
        ProtectedResource::builder(id)
            .authorization_server("https://auth.example")
            .build()
            .unwrap()
    };
    let auth = |r: &ProtectedResource| {
        BearerAuth::builder(r)
            .jwt(JwtValidation::new("https://auth.example"))
            .build()
            .unwrap()
    };
    let refused = |builder: tollgate::endpoint::EndpointBuilder| {
        let err = builder.build().err();
        assert_eq!(err.as_ref().map(|e| e.kind()), Some(invalid), "{err:?}");
        assert_eq!(err.as_ref().and_then(|e| e.path()), Some("/mcp"));
    };
    let mcp = protected(RESOURCE);
    // The challenges' metadata URL is built from the identifier's path: it must be the
    // endpoint's, so the endpoint serves it.
    assert!(at("/mcp").protected_resource(mcp.clone()).build().is_ok());
    for id in [
        "https://mcp.example/api",
        "https://mcp.example/mcp/",
        "https://mcp.example",
    ] {
        refused(at("/mcp").protected_resource(protected(id)));
        refused(at("/mcp").bearer_auth(auth(&protected(id))));
    }
    let err = at("/api").bearer_auth(auth(&mcp)).build().err();
    assert_eq!(err.map(|e| e.kind()), Some(invalid));
    // A BearerAuth checks tokens for the resource the endpoint publishes, and for no other.
    let elsewhere = ProtectedResource::builder(RESOURCE)
        .authorization_server("https://auth.example")
        .scopes_supported(["catalog:read"])
        .build()
        .unwrap();
    for (published, checked) in [(&mcp, &elsewhere), (&elsewhere, &mcp)] {
        refused(
            at("/mcp")
                .protected_resource(published.clone())
                .admission(auth(checked)),
        );
        refused(
            at("/mcp")
                .admission(auth(checked))
                .protected_resource(published.clone()),
        );
    }
    refused(at("/mcp").admission(auth(&mcp)));
    // The same resource, even built twice, is fine; so is another controller in its place.
    let twin = protected(RESOURCE);
    assert!(
        at("/mcp")
            .protected_resource(twin)
            .admission(auth(&mcp))
            .build()
            .is_ok()
    );
    assert!(at("/mcp").bearer_auth(auth(&mcp)).build().is_ok());
    let anyone = |_: &tollgate::policy::AdmissionRequest<'_>| {
        tollgate::policy::AdmissionDecision::admit(AdmissionIdentity::anonymous())
    };
    assert!(
        at("/mcp")
            .admission(auth(&mcp))
            .admission(anyone)
            .build()
            .is_ok()
    );
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
