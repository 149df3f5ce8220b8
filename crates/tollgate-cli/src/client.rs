//! A minimal MCP client over plain HTTP/1.1 for checking a server by hand: `list` and `call` on
//! 2026-07-28 (per-request `_meta` and headers) or 2025-11-25 (`initialize`, then the session).
//! `http://` only; it is a diagnostic tool, not a client library.

use std::error::Error;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tollgate_json::{JsonLimits, JsonObject, JsonValue, from_slice, to_string};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

pub(crate) struct Target {
    host: String,
    port: u16,
    path: String,
}

pub(crate) fn parse_url(url: &str) -> Result<Target> {
    let rest = url
        .strip_prefix("http://")
        .ok_or("only http:// URLs are supported")?;
    let (authority, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() => (h.to_owned(), p.parse()?),
        _ => (authority.to_owned(), 80),
    };
    Ok(Target { host, port, path })
}

struct Response {
    status: u16,
    session: Option<String>,
    body: Vec<u8>,
}

async fn post(target: &Target, headers: &[(&str, &str)], body: &str) -> Result<Response> {
    let mut stream = TcpStream::connect((target.host.as_str(), target.port)).await?;
    let mut request = format!(
        "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        target.path,
        target.host,
        target.port,
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await?;
    let end = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("malformed HTTP response")?;
    let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or("malformed status line")?;
    let session = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("mcp-session-id"))
        .map(|(_, v)| v.trim().to_owned());
    Ok(Response {
        status,
        session,
        body: bytes[end + 4..].to_vec(),
    })
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"tollgate-cli","version":"0.1.0"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

/// The `Mcp-Param-*` headers a 2026-07-28 call of `tool` must carry: the tool's `x-mcp-header`
/// declarations (from `tools/list`) applied to `arguments`.
pub(crate) async fn mirrored_headers(
    target: &Target,
    tool: &str,
    arguments: &JsonObject,
) -> Result<Vec<(String, String)>> {
    let mut cursor: Option<String> = None;
    loop {
        let params = cursor
            .as_ref()
            .map(|c| {
                format!(
                    r#""cursor":{}"#,
                    to_string(&JsonValue::from(c.as_str()), &Default::default())
                        .unwrap_or_default()
                )
            })
            .unwrap_or_default();
        let page = request(target, "2026-07-28", "tools/list", &params, None, &[]).await?;
        let empty = tollgate_json::JsonArray::new();
        let tools = page
            .get("tools")
            .and_then(JsonValue::as_array)
            .unwrap_or(&empty);
        if let Some(found) = tools
            .iter()
            .find(|t| t.get("name").and_then(JsonValue::as_str) == Some(tool))
        {
            let Some(schema) = found.get("inputSchema") else {
                return Ok(Vec::new());
            };
            let compiled = tollgate_schema::CompiledSchema::compile_tool_input(schema)
                .map_err(|e| format!("the tool's inputSchema is outside Profile 1: {e}"))?;
            let mut headers = Vec::new();
            for declaration in compiled.mirrored_headers() {
                let mut value: Option<&JsonValue> = None;
                let mut object = Some(arguments);
                for segment in declaration.path() {
                    value = object.and_then(|o| o.get(segment));
                    object = value.and_then(JsonValue::as_object);
                }
                if let Some(encoded) = value
                    .filter(|v| !v.is_null())
                    .and_then(tollgate::tool::encode_mirrored_value)
                {
                    headers.push((format!("Mcp-Param-{}", declaration.suffix()), encoded));
                }
            }
            return Ok(headers);
        }
        match page.get("nextCursor").and_then(JsonValue::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok(Vec::new()),
        }
    }
}

/// Sends one request on `revision` and returns its `result`, or an error naming the JSON-RPC
/// error or HTTP status.
pub(crate) async fn request(
    target: &Target,
    revision: &str,
    method: &str,
    params: &str,
    name: Option<&str>,
    extra: &[(String, String)],
) -> Result<JsonValue> {
    let response = if revision == "2026-07-28" {
        let sep = if params.is_empty() { "" } else { "," };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}{sep}{META}}}}}"#
        );
        let mut headers = vec![("MCP-Protocol-Version", revision), ("Mcp-Method", method)];
        let encoded_name =
            name.and_then(|n| tollgate::tool::encode_mirrored_value(&JsonValue::from(n)));
        if let Some(name) = &encoded_name {
            headers.push(("Mcp-Name", name));
        }
        for (k, v) in extra {
            headers.push((k, v));
        }
        post(target, &headers, &body).await?
    } else {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{revision}","capabilities":{{}},"clientInfo":{{"name":"tollgate-cli","version":"0.1.0"}}}}}}"#
        );
        let started = post(target, &[], &init).await?;
        if started.status != 200 {
            return Err(format!("initialize failed with HTTP {}", started.status).into());
        }
        let mut headers = vec![("MCP-Protocol-Version", revision)];
        let session = started.session.unwrap_or_default();
        if !session.is_empty() {
            headers.push(("Mcp-Session-Id", session.as_str()));
        }
        post(
            target,
            &headers,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        )
        .await?;
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}}}}}"#);
        post(target, &headers, &body).await?
    };
    let value = from_slice(&response.body, &JsonLimits::default())
        .map_err(|e| format!("HTTP {}: response is not JSON ({e})", response.status))?;
    if let Some(error) = value.get("error") {
        let code = error
            .get("code")
            .map(|c| to_string(c, &Default::default()).unwrap_or_default())
            .unwrap_or_default();
        let message = error
            .get("message")
            .and_then(JsonValue::as_str)
            .unwrap_or("");
        return Err(format!("HTTP {}: JSON-RPC error {code}: {message}", response.status).into());
    }
    value
        .get("result")
        .cloned()
        .ok_or_else(|| format!("HTTP {}: no result", response.status).into())
}

/// One line per tool: name, then title or description.
pub(crate) fn print_tools(result: &JsonValue) {
    let empty = tollgate_json::JsonArray::new();
    let tools = result
        .get("tools")
        .and_then(JsonValue::as_array)
        .unwrap_or(&empty);
    for tool in tools.iter() {
        let name = tool.get("name").and_then(JsonValue::as_str).unwrap_or("?");
        let about = tool
            .get("description")
            .or_else(|| tool.get("title"))
            .and_then(JsonValue::as_str)
            .unwrap_or("");
        println!("{name}\t{about}");
    }
    if let Some(cursor) = result.get("nextCursor").and_then(JsonValue::as_str) {
        println!("(more tools: cursor {cursor})");
    }
}

/// Text content as text, other blocks as their type, then the structured content.
pub(crate) fn print_call(result: &JsonValue) {
    if result.get("isError") == Some(&JsonValue::Bool(true)) {
        println!("(tool error)");
    }
    let empty = tollgate_json::JsonArray::new();
    for block in result
        .get("content")
        .and_then(JsonValue::as_array)
        .unwrap_or(&empty)
        .iter()
    {
        match (
            block.get("type").and_then(JsonValue::as_str),
            block.get("text").and_then(JsonValue::as_str),
        ) {
            (Some("text"), Some(text)) => println!("{text}"),
            (Some(kind), _) => println!("[{kind}]"),
            _ => {}
        }
    }
    if let Some(structured) = result.get("structuredContent") {
        println!(
            "structuredContent: {}",
            to_string(structured, &Default::default()).unwrap_or_default()
        );
    }
}

/// `ARGS-JSON` must be an object.
pub(crate) fn arguments(text: &str) -> Result<JsonObject> {
    match tollgate_json::from_str(text, &JsonLimits::default())? {
        JsonValue::Object(o) => Ok(o),
        _ => Err("the arguments must be a JSON object".into()),
    }
}
