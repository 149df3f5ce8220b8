//! The gateway's own credentials per upstream: static headers, an OAuth client-credentials
//! grant (a client secret or `private_key_jwt`) or the authorization-code grant's stored tokens
//! (refreshed by the gateway; none stored leaves the upstream out, at once) held by the
//! gateway; a caller's token never reaches an upstream (the MCP authorization specification
//! forbids passing tokens through). The login itself runs against a real authorization server
//! in scripts/oauth-e2e.

use tollgate::{Endpoint, Implementation, McpService, ProtocolVersion, Server};
use tollgate_client::oauth::{FileTokenStore, TokenStore, Tokens};
use tollgate_client::{Client, Revision};
use tollgate_gateway::{Gateway, GatewayConfig, GatewayErrorKind};

use crate::upstream::{Upstream, V26, followed_client, gateway_client, object};

/// A P-256 key made for these tests only (`openssl genpkey -algorithm EC`).
const TEST_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgkT2h4t6/YCfraqPs
iZqtL5ywZeKScbYfmZbn21EY6ZWhRANCAAQ/IvOGFaIOg6yDUPu4y56bJEONaKpN
Hv1Pk/593AbDSSMB5u8/Sy/2FIqlgqv41vBHskEDSWbYVkpko0FvBlHg
-----END PRIVATE KEY-----
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_s_token_never_reaches_the_upstream() {
    let upstream = Upstream::default();
    let addr = upstream.start().await;
    let text = format!(
        "[[upstream]]\nname = \"up\"\nprefix = \"up\"\nurl = \"http://{addr}/mcp\"\nheaders = {{ Authorization = \"Bearer gateway-own\" }}\n"
    );
    let revisions = [V26, ProtocolVersion::V2025_11_25];
    let gateway = Gateway::connect(&GatewayConfig::from_toml(&text).unwrap(), &revisions)
        .await
        .unwrap();
    let endpoint = gateway
        .install(Endpoint::with_path(
            "/mcp",
            revisions,
            Implementation::new("gateway", "1"),
        ))
        .build()
        .unwrap();
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), McpService::new(endpoint))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", server.local_addr().unwrap());
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));
    for revision in [Revision::V2026_07_28, Revision::V2025_11_25] {
        let caller = Client::builder()
            .bearer_token("caller-secret")
            .unwrap()
            .revisions([revision])
            .connect_http(&url)
            .await
            .unwrap();
        let result = caller
            .call_tool("up_echo", object(r#"{"text":"hi"}"#))
            .await
            .unwrap();
        assert!(result.get("content").is_some(), "{revision:?}");
        caller.close().await.unwrap();
    }
    let seen = upstream.authorizations.lock().unwrap().clone();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|a| a == "Bearer gateway-own"),
        "the upstream saw another credential than the gateway's own"
    );
    gateway.close().await;
}

/// The gateway in front of an upstream that is its own authorization server, with `oauth` as
/// its `[upstream.oauth]` table; a call through it; the token endpoint's requests.
async fn through_oauth(oauth: &str) -> Vec<String> {
    let upstream = Upstream::default();
    let url = upstream.start_with_oauth().await;
    let text = format!(
        "[[upstream]]\nname = \"up\"\nprefix = \"up\"\nurl = \"{url}\"\n[upstream.oauth]\n{oauth}"
    );
    let gateway = Gateway::connect(&GatewayConfig::from_toml(&text).unwrap(), &[V26])
        .await
        .unwrap();
    let client = gateway_client(&gateway).await;
    let result = client
        .call_tool("up_echo", object(r#"{"text":"hi"}"#))
        .await
        .unwrap();
    assert!(result.get("content").is_some());
    client.close().await.unwrap();
    gateway.close().await;
    // Every credential the upstream saw is the token it issued to the gateway (the first
    // request, before the grant, carries none and is challenged).
    let seen = upstream.authorizations.lock().unwrap().clone();
    assert!(seen.iter().any(|a| a == "Bearer upstream-token"));
    assert!(
        seen.iter()
            .all(|a| a.is_empty() || a == "Bearer upstream-token"),
        "{seen:?}"
    );
    let requests = upstream.token_requests.lock().unwrap().clone();
    assert!(!requests.is_empty());
    for request in &requests {
        assert!(
            request.contains("grant_type=client_credentials"),
            "{request}"
        );
    }
    requests
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_gets_its_own_token_with_a_client_secret() {
    let requests = through_oauth(
        "client_id = \"gw\"\nclient_secret = \"gw-secret\"\nauth_method = \"client_secret_post\"\n",
    )
    .await;
    assert!(requests[0].contains("client_id=gw"));
    assert!(requests[0].contains("client_secret=gw-secret"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configured_scopes_are_asked_beside_the_upstream_s() {
    let requests = through_oauth(
        "client_id = \"gw\"\nclient_secret = \"gw-secret\"\nscopes = [\"mcp:wide\"]\n",
    )
    .await;
    assert!(requests[0].contains("scope=mcp%3Awide"), "{}", requests[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_gets_its_own_token_with_a_private_key_jwt() {
    let path =
        std::env::temp_dir().join(format!("tollgate-gateway-key-{}.pem", std::process::id()));
    std::fs::write(&path, TEST_KEY).unwrap();
    let requests = through_oauth(&format!(
        "client_id = \"gw\"\nprivate_key_file = \"{}\"\nalgorithm = \"ES256\"\n",
        path.display()
    ))
    .await;
    std::fs::remove_file(&path).unwrap();
    assert!(requests[0].contains("client_assertion_type="));
    assert!(requests[0].contains("client_assertion=ey"));
    assert!(!requests[0].contains("client_secret"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_key_file_is_a_start_up_error_naming_the_upstream() {
    let upstream = Upstream::default();
    let url = upstream.start_with_oauth().await;
    let text = format!(
        "[[upstream]]\nname = \"keyless\"\nurl = \"{url}\"\n[upstream.oauth]\nclient_id = \"gw\"\nprivate_key_file = \"/nonexistent/key.pem\"\nalgorithm = \"ES256\"\n"
    );
    let error = Gateway::connect(&GatewayConfig::from_toml(&text).unwrap(), &[V26])
        .await
        .unwrap_err();
    assert_eq!(error.upstream(), Some("keyless"));
}

/// A token file of its own for one test.
fn token_file(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tollgate-gw-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir.join("tokens.json")
}

/// An HTTP upstream with the authorization-code grant and `file` as its token file.
fn authorization_code(url: &str, file: &std::path::Path) -> GatewayConfig {
    let text = format!(
        "[[upstream]]\nname = \"coded\"\nprefix = \"up\"\nurl = \"{url}\"\n[upstream.oauth]\ngrant = \"authorization_code\"\ntoken_file = \"{}\"\nclient_id = \"gw\"\n",
        file.display()
    );
    GatewayConfig::from_toml(&text).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_stored_tokens_the_upstream_is_left_out_at_once_naming_the_login() {
    let upstream = Upstream::default();
    let url = upstream.start_with_oauth().await;
    let file = token_file("none");
    let other = Upstream::default();
    let other_addr = other.start().await;
    let config = format!(
        "[[upstream]]\nname = \"open\"\nurl = \"http://{other_addr}/mcp\"\n[[upstream]]\nname = \"coded\"\nprefix = \"up\"\nurl = \"{url}\"\n[upstream.oauth]\ngrant = \"authorization_code\"\ntoken_file = \"{}\"\n",
        file.display()
    );
    let config = GatewayConfig::from_toml(&config).unwrap();
    // Bounded far below the redirect's 300-second wait: no browser is waited for.
    let gateway = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        Gateway::connect(&config, &[V26]),
    )
    .await
    .expect("the gateway waited instead of leaving the upstream out")
    .unwrap();
    let [unavailable] = gateway.unavailable() else {
        panic!("{:?}", gateway.unavailable());
    };
    assert_eq!(unavailable.kind(), GatewayErrorKind::LoginNeeded);
    assert_eq!(unavailable.upstream(), Some("coded"));
    assert!(unavailable.to_string().contains("tollgate gateway login"));
    // The other upstream is served; nothing of the unavailable one is.
    assert!(gateway.tools().iter().any(|t| t.name() == "echo"));
    assert!(!gateway.tools().iter().any(|t| t.name().starts_with("up_")));
    assert!(upstream.token_requests.lock().unwrap().is_empty());
    assert!(!file.exists(), "nothing is written without a login");
    gateway.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_tokens_are_refreshed_and_kept_and_a_call_goes_through() {
    let upstream = Upstream::default();
    let url = upstream.start_with_oauth().await;
    let base = url.trim_end_matches("/mcp");
    let file = token_file("refresh");
    // What a login left: an access token the upstream no longer takes and a refresh token.
    let mut stored = Tokens::new(base, "stale-token".to_owned());
    stored.refresh_token = Some("refresh-1".to_owned().into());
    FileTokenStore::new(&file).try_save(&url, stored).unwrap();
    let gateway = Gateway::connect(&authorization_code(&url, &file), &[V26])
        .await
        .unwrap();
    assert!(gateway.unavailable().is_empty());
    let client = gateway_client(&gateway).await;
    let result = client
        .call_tool("up_echo", object(r#"{"text":"hi"}"#))
        .await
        .unwrap();
    assert!(result.get("content").is_some());
    client.close().await.unwrap();
    gateway.close().await;
    let requests = upstream.token_requests.lock().unwrap().clone();
    let [refresh] = requests.as_slice() else {
        panic!("{requests:?}");
    };
    assert!(refresh.contains("grant_type=refresh_token"), "{refresh}");
    assert!(refresh.contains("refresh_token=refresh-1"), "{refresh}");
    assert!(refresh.contains("client_id=gw"), "{refresh}");
    // The renewed tokens are in the file, the refresh token kept (none new was issued).
    let kept = FileTokenStore::new(&file).load(&url).unwrap();
    assert_eq!(&*kept.access_token, "upstream-token");
    assert_eq!(
        kept.refresh_token.as_deref().map(String::as_str),
        Some("refresh-1")
    );
    let seen = upstream.authorizations.lock().unwrap().clone();
    assert!(
        seen.iter()
            .all(|a| a.is_empty() || a.starts_with("Bearer "))
    );
    assert!(seen.iter().any(|a| a == "Bearer upstream-token"));
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
}

/// Lists the tools until one named `name` is served; false when it is not within 30 seconds
/// (a bound for a stuck join, never a timing claim).
async fn served_soon(client: &Client, name: &str) -> bool {
    for _ in 0..300 {
        let tools = client.list_tools().await.unwrap();
        if tools
            .iter()
            .any(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))
        {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    false
}

/// What a login leaves in `file` for `url`: an access token the upstream does not take and a
/// refresh token.
fn log_in(url: &str, file: &std::path::Path) {
    let mut stored = Tokens::new(url.trim_end_matches("/mcp"), "stale-token".to_owned());
    stored.refresh_token = Some("refresh-1".to_owned().into());
    FileTokenStore::new(file).try_save(url, stored).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_reaches_the_serving_gateway_without_a_restart() {
    let upstream = Upstream::default();
    let url = upstream.start_with_oauth().await;
    let file = token_file("join");
    let gateway = Gateway::connect(&authorization_code(&url, &file), &[V26])
        .await
        .unwrap();
    assert_eq!(
        gateway.unavailable()[0].kind(),
        GatewayErrorKind::LoginNeeded
    );
    let client = followed_client(&gateway, [V26]).await;
    assert!(client.list_tools().await.unwrap().is_empty());
    log_in(&url, &file);
    assert!(
        served_soon(&client, "up_echo").await,
        "the login did not reach the serving gateway"
    );
    let result = client
        .call_tool("up_echo", object(r#"{"text":"hi"}"#))
        .await
        .unwrap();
    assert!(result.get("content").is_some());
    client.close().await.unwrap();
    gateway.close().await;
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_authorization_server_keeps_the_tokens_and_the_upstream_joins_once_back() {
    let upstream = Upstream::default();
    let url = upstream.start_with_oauth().await;
    let file = token_file("unreachable");
    log_in(&url, &file);
    upstream
        .token_down
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let gateway = Gateway::connect(&authorization_code(&url, &file), &[V26])
        .await
        .unwrap();
    let [unavailable] = gateway.unavailable() else {
        panic!("{:?}", gateway.unavailable());
    };
    assert_eq!(
        unavailable.kind(),
        GatewayErrorKind::AuthorizationUnreachable
    );
    assert!(!unavailable.to_string().contains("gateway login"));
    // The refresh token is kept for the next attempt.
    let kept = FileTokenStore::new(&file).load(&url).unwrap();
    assert_eq!(
        kept.refresh_token.as_deref().map(String::as_str),
        Some("refresh-1")
    );
    let client = followed_client(&gateway, [V26]).await;
    upstream
        .token_down
        .store(false, std::sync::atomic::Ordering::SeqCst);
    assert!(
        served_soon(&client, "up_echo").await,
        "the upstream did not join once its authorization server answered"
    );
    client.close().await.unwrap();
    gateway.close().await;
    let requests = upstream.token_requests.lock().unwrap().clone();
    assert!(
        requests
            .iter()
            .all(|r| r.contains("grant_type=refresh_token"))
    );
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
}
