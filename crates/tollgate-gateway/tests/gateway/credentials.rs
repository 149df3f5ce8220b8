//! The gateway's own credentials per upstream: static headers or an OAuth client-credentials
//! grant (a client secret or `private_key_jwt`) held by the gateway; a caller's token never
//! reaches an upstream (the MCP authorization specification forbids passing tokens through).

use tollgate::{Endpoint, Implementation, McpService, ProtocolVersion, Server};
use tollgate_client::{Client, Revision};
use tollgate_gateway::{Gateway, GatewayConfig};

use crate::upstream::{Upstream, V26, gateway_client, object};

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
