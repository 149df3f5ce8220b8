//! The HTTP+SSE transport of 2024-11-05: a `GET` event stream whose first `endpoint` event names
//! where to `POST` messages, and every server message on that stream as a `message` event. It
//! owns that exchange and hands both directions to the line transport ([`Lines`]) over in-memory
//! pipes, so matching answers, server requests and cancellation are the same code as stdio's.
//! It must not know methods.

use http::{HeaderMap, HeaderValue};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::lines::Lines;
use crate::error::{Error, ErrorKind};
use crate::handler::Handler;
use crate::limits::ClientLimits;
use crate::sse::SseParser;

/// The bytes buffered in each in-memory pipe.
const PIPE: usize = 64 * 1024;

/// Opens the event stream at `url`, waits for its `endpoint` event (which must name the same
/// origin: the client's headers are never sent elsewhere) and starts the line transport over it.
pub(crate) async fn connect(
    client: reqwest::Client,
    url: &str,
    headers: HeaderMap,
    limits: ClientLimits,
    handler: std::sync::Arc<dyn Handler>,
    sole_call: bool,
) -> Result<Lines, Error> {
    let base = reqwest::Url::parse(url)
        .map_err(|_| Error::new(ErrorKind::Argument, "the URL is not valid"))?;
    let mut response = client
        .get(base.clone())
        .headers(headers.clone())
        .header(http::header::ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|_| Error::new(ErrorKind::Connect, "the request could not be sent"))?;
    let streams = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !response.status().is_success() || !streams {
        return Err(Error::status(response.status().as_u16()));
    }
    let mut parser = SseParser::new(limits.max_message_bytes());
    let endpoint = loop {
        let chunk = response
            .chunk()
            .await
            .map_err(|_| Error::new(ErrorKind::Connect, "the event stream broke"))?
            .ok_or(Error::new(ErrorKind::Protocol, "no endpoint event"))?;
        let events = parser.feed(&chunk)?;
        if let Some(event) = events
            .into_iter()
            .find(|e| e.event.as_deref() == Some("endpoint"))
        {
            break event.data;
        }
    };
    let endpoint = std::str::from_utf8(&endpoint)
        .ok()
        .and_then(|e| base.join(e.trim()).ok())
        .filter(|e| e.origin() == base.origin())
        .ok_or(Error::new(
            ErrorKind::Protocol,
            "the endpoint event names no URL of the server's origin",
        ))?;
    let (to_client, from_server) = tokio::io::duplex(PIPE);
    let (to_server, from_client) = tokio::io::duplex(PIPE);
    let reading = tokio::spawn(read_events(response, parser, to_client));
    let max = limits.max_message_bytes();
    let writing = tokio::spawn(post_lines(client, endpoint, headers, from_client, max));
    let lines =
        Lines::start(from_server, to_server, limits, handler, sole_call).on_close(move || {
            Box::pin(async move {
                reading.abort();
                writing.abort();
            })
        });
    Ok(lines)
}

/// Each `message` event's data as one line (a JSON text's newlines are whitespace between
/// tokens, so replacing them keeps the message).
async fn read_events(
    mut response: reqwest::Response,
    mut parser: SseParser,
    mut out: tokio::io::DuplexStream,
) {
    while let Ok(Some(chunk)) = response.chunk().await {
        let Ok(events) = parser.feed(&chunk) else {
            return;
        };
        for event in events {
            if !matches!(event.event.as_deref(), None | Some("message")) {
                continue;
            }
            let mut line: Vec<u8> = event
                .data
                .iter()
                .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
                .collect();
            line.push(b'\n');
            if out.write_all(&line).await.is_err() {
                return;
            }
        }
    }
}

/// Each line the client writes, POSTed to the endpoint (the answers come on the event stream).
async fn post_lines(
    client: reqwest::Client,
    endpoint: reqwest::Url,
    headers: HeaderMap,
    from_client: tokio::io::DuplexStream,
    max: usize,
) {
    let mut lines = BufReader::new(from_client);
    let mut line = Vec::new();
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) if line.len() > max => continue,
            Ok(_) => {}
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line).to_vec();
        let sent = client
            .post(endpoint.clone())
            .headers(headers.clone())
            .header(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )
            .body(body)
            .send()
            .await;
        // A refused message names no request it could fail here: its caller times out.
        drop(sent);
    }
}
