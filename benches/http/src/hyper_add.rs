//! The practical limit: hyper 1 + serde_json parsing the JSON-RPC body into a `Value`, adding the
//! two arguments and writing a fixed-shape result (no validation, no MCP rules). `tools/list`
//! returns a catalog serialised once at start-up. It also completes the two handshakes a client
//! makes, so the client bench (`client-bench`) can use it as the fast server: `initialize`
//! (echoing the revision asked for; no session), `notifications/initialized` (202) and
//! `server/discover`.

mod common;

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use serde_json::{Value, json};

fn catalog() -> Bytes {
    let schema: Value = serde_json::from_str(common::FILLER_SCHEMA).unwrap_or(Value::Null);
    let mut tools = vec![json!({"name": "add", "description": "Adds two integers",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}})];
    for i in 0..common::FILLER_TOOLS {
        tools.push(json!({"name": common::filler_name(i), "description": common::FILLER_DESCRIPTION, "inputSchema": schema}));
    }
    Bytes::from(
        serde_json::to_vec(
            &json!({"resultType": "complete", "tools": tools, "ttlMs": 0, "cacheScope": "private"}),
        )
        .unwrap_or_default(),
    )
}

async fn handle(
    request: Request<hyper::body::Incoming>,
    catalog: Bytes,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let post = request.method() == hyper::Method::POST;
    let body = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let method = message.get("method").and_then(Value::as_str);
    if !post || message.get("id").is_none() {
        // A notification (`notifications/initialized`), or a GET for a stream this server has
        // none of.
        let status = if method.is_some() { 202 } else { 405 };
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
        return Ok(response);
    }
    let bytes = match method {
        Some("initialize") => {
            let asked = message
                .pointer("/params/protocolVersion")
                .cloned()
                .unwrap_or(Value::Null);
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": asked,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hyper-add", "version": "1"}
            }}))
            .unwrap_or_default()
        }
        Some("server/discover") => serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hyper-add", "version": "1"}}
        }}))
        .unwrap_or_default(),
        Some("tools/list") => {
            let mut out =
                serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id})).unwrap_or_default();
            out.pop();
            out.extend_from_slice(b",\"result\":");
            out.extend_from_slice(&catalog);
            out.push(b'}');
            out
        }
        _ => {
            let arguments = message.get("params").and_then(|p| p.get("arguments"));
            let number = |k: &str| {
                arguments
                    .and_then(|a| a.get(k))
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
            };
            let sum = number("a").wrapping_add(number("b"));
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": {
                "resultType": "complete",
                "content": [{"type": "text", "text": format!("{{\"sum\":{sum}}}")}],
                "structuredContent": {"sum": sum}
            }}))
            .unwrap_or_default()
        }
    };
    let mut response = Response::new(Full::new(Bytes::from(bytes)));
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let catalog = catalog();
    let service = hyper::service::service_fn(move |r| handle(r, catalog.clone()));
    common::runtime()?.block_on(common::serve(service))?;
    Ok(())
}
