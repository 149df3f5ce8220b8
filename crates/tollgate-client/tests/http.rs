//! The client against a real Tollgate endpoint on loopback, on each revision: negotiation,
//! lists, calls with mirrored headers, the output-schema check, sessions and their end.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::convert::Infallible;
use std::net::SocketAddr;

use tollgate::json::{JsonLimits, JsonObject, JsonValue, from_str};
use tollgate::{
    Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion, RequestContext,
    Server, ToolArguments, ToolRegistration,
    tool::{CompleteResult, OperationResult},
};
use tollgate_client::{Client, ErrorKind, Revision};

const ALL: [ProtocolVersion; 3] = [
    ProtocolVersion::V2026_07_28,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2025_06_18,
];

fn schema(text: &str) -> JsonValue {
    from_str(text, &JsonLimits::default()).unwrap()
}

async fn echo(
    _: &RequestContext,
    args: ToolArguments<JsonObject>,
    _: &InvocationFeatures,
) -> Result<OperationResult, Infallible> {
    let text = args
        .converted()
        .get("region")
        .and_then(JsonValue::as_str)
        .unwrap_or("none")
        .to_owned();
    Ok(CompleteResult::from_tool_text(text).into())
}

fn endpoint(revisions: &[ProtocolVersion]) -> Endpoint {
    let set = || {
        revisions
            .iter()
            .copied()
            .collect::<tollgate::endpoint::ProtocolVersions>()
    };
    let mirrored = schema(
        r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#,
    );
    let mut builder = Endpoint::with_path("/mcp", set(), Implementation::new("t", "1"));
    // `x-mcp-header` is a 2026-07-28 declaration: the mirrored tool exists on that revision.
    if revisions.contains(&ProtocolVersion::V2026_07_28) {
        builder = builder.add_tool(
            ToolRegistration::with_name("mirror", [ProtocolVersion::V2026_07_28])
                .input_schema(&mirrored)
                .unwrap()
                .handler(echo)
                .build()
                .unwrap(),
        );
    }
    for n in 0..3 {
        builder = builder.add_tool(
            ToolRegistration::with_name(format!("t{n}"), set())
                .json_object_arguments()
                .handler(echo)
                .build()
                .unwrap(),
        );
    }
    builder.build().unwrap()
}

async fn start(endpoint: Endpoint) -> SocketAddr {
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), McpService::new(endpoint))
        .await
        .unwrap();
    let addr = server.local_addr().unwrap();
    tokio::spawn(server.serve_with_shutdown(std::future::pending()));
    addr
}

fn text(result: &JsonValue) -> &str {
    result
        .get("content")
        .and_then(|c| c.as_array())
        .and_then(|c| c.first())
        .and_then(|b| b.get("text"))
        .and_then(JsonValue::as_str)
        .unwrap_or("")
}

#[tokio::test]
async fn lists_and_calls_on_every_revision() {
    let addr = start(endpoint(&ALL)).await;
    let url = format!("http://{addr}/mcp");
    for revision in Revision::ALL {
        let client = Client::builder()
            .revisions([revision])
            .connect_http(&url)
            .await
            .unwrap();
        assert_eq!(client.revision(), revision);
        let tools = client.list_tools().await.unwrap();
        let mirrored = revision == Revision::V2026_07_28;
        assert_eq!(tools.len(), 3 + usize::from(mirrored), "{revision}");
        let args = JsonObject::builder().insert("region", "zürich").build();
        let result = client.call_tool("t1", args.clone()).await.unwrap();
        assert_eq!(text(&result), "zürich", "{revision}");
        if mirrored {
            // The value crosses Mcp-Param-Region base64-encoded; the server refuses a call
            // whose header is missing or disagrees with the body, so an answer proves it.
            let result = client.call_tool("mirror", args).await.unwrap();
            assert_eq!(text(&result), "zürich");
        }
        client.close().await.unwrap();
    }
}

#[tokio::test]
async fn negotiates_down_to_what_the_server_speaks() {
    for served in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18] {
        let addr = start(endpoint(&[served])).await;
        let client = Client::builder()
            .connect_http(&format!("http://{addr}/mcp"))
            .await
            .unwrap();
        assert_eq!(client.revision().as_str(), served.as_str());
        assert_eq!(client.list_tools().await.unwrap().len(), 3);
    }
    let addr = start(endpoint(&[ProtocolVersion::V2026_07_28])).await;
    let client = Client::builder()
        .connect_http(&format!("http://{addr}/mcp"))
        .await
        .unwrap();
    assert_eq!(client.revision(), Revision::V2026_07_28);
    let err = Client::builder()
        .revisions([Revision::V2025_06_18])
        .connect_http(&format!("http://{addr}/mcp"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::Rpc | ErrorKind::Status | ErrorKind::Negotiation
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_closed_session_is_gone() {
    let addr = start(endpoint(&ALL)).await;
    let client = Client::builder()
        .revisions([Revision::V2025_11_25])
        .connect_http(&format!("http://{addr}/mcp"))
        .await
        .unwrap();
    client.close().await.unwrap();
    // The session id is forgotten with the DELETE: the next request carries none and is
    // refused as a request outside any session.
    assert!(client.list_tools().await.is_err());
}

#[tokio::test]
async fn pages_are_bounded() {
    let addr = start(endpoint(&ALL)).await;
    let url = format!("http://{addr}/mcp");
    let client = Client::builder().connect_http(&url).await.unwrap();
    let page = client.list_tools_page(None).await.unwrap();
    assert!(page.next_cursor.is_none());
    // One page is the whole list: at a bound of one page it is read, at zero it is refused.
    let at = Client::builder()
        .limits(tollgate_client::ClientLimits::default().with_max_pages(1))
        .connect_http(&url)
        .await
        .unwrap();
    assert_eq!(at.list_tools().await.unwrap().len(), 4);
    assert_eq!(at.revision(), Revision::V2026_07_28);
    let past = Client::builder()
        .limits(tollgate_client::ClientLimits::default().with_max_pages(0))
        .connect_http(&url)
        .await
        .unwrap();
    assert_eq!(
        past.list_tools().await.unwrap_err().kind(),
        ErrorKind::Limit
    );
}
