//! Resource read fallbacks over real HTTP on every revision: reached only for URIs under their
//! prefix that no exact resource or template routes, never listed, their not-found the
//! revision's "Resource not found" (the URI not echoed), not subscribable, and their
//! registration rules.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "integration tests"
)]

use crate::support;

use std::net::SocketAddr;

use support::{META, Response, post, start};
use tollgate::{
    BuildErrorKind, Endpoint, Implementation, InvocationFeatures, McpService, ProtocolVersion,
    RequestContext,
    content::ResourceContents,
    endpoint::SessionConfig,
    resource::{
        ResourceFallback, ResourceOutput, ResourceRegistration, ResourceRequest,
        ResourceTemplateRegistration,
    },
};

const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const ALL: [ProtocolVersion; 3] = [V26, V1125, V0618];

type Outcome = Result<ResourceOutput, tollgate::content::ContentError>;

/// Answers with who served the read (`from`), or not found for a URI holding `gone`.
fn answer(from: &str, r: &ResourceRequest) -> Outcome {
    if r.uri().contains("gone") {
        return Ok(ResourceOutput::not_found());
    }
    Ok(ResourceOutput::with_contents(ResourceContents::text(
        r.uri(),
        Some("text/plain"),
        from,
    )?))
}

async fn exact(_: &RequestContext, r: ResourceRequest, _: &InvocationFeatures) -> Outcome {
    answer("exact", &r)
}

async fn templated(_: &RequestContext, r: ResourceRequest, _: &InvocationFeatures) -> Outcome {
    answer("template", &r)
}

async fn fallen(_: &RequestContext, r: ResourceRequest, _: &InvocationFeatures) -> Outcome {
    answer("fallback", &r)
}

fn fallback(prefix: &str) -> ResourceFallback {
    ResourceFallback::with_prefix(prefix, "Up", ALL)
        .handler(fallen)
        .build()
        .unwrap()
}

fn endpoint(sessions: Option<SessionConfig>) -> Endpoint {
    Endpoint::with_path("/mcp", ALL, Implementation::new("fallback", "1"))
        .legacy_sessions(sessions)
        .add_resource(
            ResourceRegistration::with_uri("up+test://listed", "listed", ALL)
                .handler(exact)
                .build()
                .unwrap(),
        )
        .add_resource_template(
            ResourceTemplateRegistration::with_uri_template("up+test://items/{id}", "Item", ALL)
                .handler(templated)
                .build()
                .unwrap(),
        )
        .add_resource_fallback(fallback("up+"))
        .build()
        .unwrap()
}

async fn send(addr: SocketAddr, revision: ProtocolVersion, method: &str, uri: &str) -> Response {
    let mut headers = vec![("MCP-Protocol-Version", revision.as_str())];
    let params = if revision == V26 {
        headers.push(("Mcp-Method", method));
        if !uri.is_empty() {
            headers.push(("Mcp-Name", uri));
            format!(r#""uri":"{uri}",{META}"#)
        } else {
            META.to_owned()
        }
    } else if uri.is_empty() {
        String::new()
    } else {
        format!(r#""uri":"{uri}""#)
    };
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}}}}}"#);
    post(addr, &headers, body.as_bytes()).await
}

#[tokio::test]
async fn reached_only_for_unrouted_uris_under_its_prefix() {
    let addr = start(McpService::new(endpoint(None))).await;
    for revision in ALL {
        for (uri, from) in [
            ("up+test://listed", "exact"),
            ("up+test://items/7", "template"),
            ("up+test://unlisted/a/b?c=d", "fallback"),
            ("up+test://items/", "fallback"),
        ] {
            let read = send(addr, revision, "resources/read", uri).await;
            assert_eq!(read.status, 200, "{}", read.text());
            assert!(
                read.text().contains(&format!(r#""text":"{from}""#)),
                "{uri}: {}",
                read.text()
            );
        }
        // Not under its prefix, or the fallback's own not-found: the revision's
        // "Resource not found", the URI not echoed.
        for uri in ["other+test://marker", "up+test://gone-marker"] {
            let missing = send(addr, revision, "resources/read", uri).await;
            let (status, code) = if revision == V26 {
                (400, -32602)
            } else {
                (200, -32002)
            };
            assert_eq!((missing.status, missing.code()), (status, code), "{uri}");
            assert_eq!(missing.message(), "Resource not found");
            assert!(!missing.text().contains("marker"), "{}", missing.text());
        }
    }
}

#[tokio::test]
async fn never_listed() {
    let addr = start(McpService::new(endpoint(None))).await;
    for revision in ALL {
        let resources = send(addr, revision, "resources/list", "").await;
        assert_eq!(resources.status, 200, "{}", resources.text());
        assert!(resources.text().contains("up+test://listed"));
        let templates = send(addr, revision, "resources/templates/list", "").await;
        assert_eq!(templates.status, 200, "{}", templates.text());
        assert!(templates.text().contains("up+test://items/{id}"));
        for list in [&resources, &templates] {
            assert!(!list.text().contains(r#""Up""#), "{}", list.text());
            assert!(!list.text().contains(r#""up+""#), "{}", list.text());
        }
    }
}

#[tokio::test]
async fn not_subscribable() {
    let addr = start(McpService::new(endpoint(Some(SessionConfig::default())))).await;
    for revision in [V1125, V0618] {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#,
            revision.as_str()
        );
        let session = post(addr, &[], init.as_bytes()).await;
        let session = session.header("mcp-session-id").unwrap().to_owned();
        let subscribe = |uri: &'static str| {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{{"uri":"{uri}"}}}}"#
            );
            let session = session.clone();
            async move {
                let headers = [
                    ("MCP-Protocol-Version", revision.as_str()),
                    ("Mcp-Session-Id", session.as_str()),
                ];
                post(addr, &headers, body.as_bytes()).await
            }
        };
        assert_eq!(subscribe("up+test://listed").await.status, 200);
        let unlisted = subscribe("up+test://unlisted").await;
        assert_eq!(unlisted.code(), -32002, "{}", unlisted.text());
    }
}

#[tokio::test]
async fn without_a_fallback_the_same_read_is_not_found() {
    let plain = Endpoint::with_path("/mcp", ALL, Implementation::new("plain", "1"))
        .legacy_sessions(None)
        .add_resource(
            ResourceRegistration::with_uri("up+test://listed", "listed", ALL)
                .handler(exact)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let addr = start(McpService::new(plain)).await;
    let missing = send(addr, V1125, "resources/read", "up+test://unlisted").await;
    assert_eq!(missing.code(), -32002);
}

#[test]
fn registration_rules() {
    let base = || Endpoint::with_path("/mcp", [V26], Implementation::new("f", "1"));
    let two = base()
        .add_resource_fallback(
            ResourceFallback::with_prefix("up+", "Up", [V26])
                .handler(fallen)
                .build()
                .unwrap(),
        )
        .add_resource_fallback(
            ResourceFallback::with_prefix("up+", "Again", [V26])
                .handler(fallen)
                .build()
                .unwrap(),
        )
        .build();
    assert_eq!(two.unwrap_err().kind(), BuildErrorKind::DuplicateResource);
    let outside = base().add_resource_fallback(fallback("up+")).build();
    assert_eq!(
        outside.unwrap_err().kind(),
        BuildErrorKind::RevisionOutsideEndpoint
    );
    let scoped = base()
        .add_resource_fallback(
            ResourceFallback::with_prefix("up+", "Up", [V26])
                .handler(fallen)
                .required_scopes(["read"])
                .build()
                .unwrap(),
        )
        .build();
    assert_eq!(
        scoped.unwrap_err().kind(),
        BuildErrorKind::InvalidAuthorization
    );
}

/// An endpoint whose only resource route is a fallback on `revisions`.
fn fallback_only(revisions: &[ProtocolVersion]) -> Endpoint {
    Endpoint::with_path("/mcp", ALL, Implementation::new("fallback", "1"))
        .legacy_sessions(None)
        .add_resource_fallback(
            ResourceFallback::with_prefix(
                "up+",
                "Up",
                revisions
                    .iter()
                    .copied()
                    .collect::<tollgate::endpoint::ProtocolVersions>(),
            )
            .handler(fallen)
            .build()
            .unwrap(),
        )
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_fallback_alone_declares_resources_on_its_revisions() {
    let addr = start(McpService::new(fallback_only(&ALL))).await;
    let discover = send(addr, V26, "server/discover", "").await;
    let caps = discover.result().get("capabilities").cloned().unwrap();
    assert!(caps.get("resources").is_some(), "{}", discover.text());
    let init = post(
        addr,
        &[],
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    )
    .await;
    assert!(
        init.result()
            .get("capabilities")
            .and_then(|c| c.get("resources"))
            .is_some(),
        "{}",
        init.text()
    );
    for revision in ALL {
        let read = send(addr, revision, "resources/read", "up+test://a").await;
        assert!(
            read.text().contains(r#""text":"fallback""#),
            "{}",
            read.text()
        );
        // Nothing is listed.
        let list = send(addr, revision, "resources/list", "").await;
        assert!(list.text().contains(r#""resources":[]"#), "{}", list.text());
    }
    // On the revisions it does not serve there are no resources: the methods are not offered.
    let addr = start(McpService::new(fallback_only(&[V26]))).await;
    let discover = send(addr, V26, "server/discover", "").await;
    let caps = discover.result().get("capabilities").cloned().unwrap();
    assert!(caps.get("resources").is_some(), "{}", discover.text());
    for revision in [V1125, V0618] {
        let read = send(addr, revision, "resources/read", "up+test://a").await;
        assert_eq!(read.code(), -32601, "{revision}: {}", read.text());
    }
}
