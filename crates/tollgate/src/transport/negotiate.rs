//! Media-type negotiation for the HTTP transport: whether a POST's `Content-Type` is JSON, and
//! whether a request's `Accept` permits the answers it may get (JSON and an event stream for a
//! POST, an event stream for a GET). Reads headers only; knows nothing of JSON-RPC.

use http::HeaderValue;
use http::header::ACCEPT;

use crate::wire::head::Field;

/// Whether `Content-Type` names `application/json` (parameters allowed, case-insensitive).
pub(crate) fn is_json(value: Option<&HeaderValue>) -> bool {
    // What clients send, settled without splitting.
    if value.is_some_and(|v| v.as_bytes() == b"application/json") {
        return true;
    }
    value.and_then(|v| v.to_str().ok()).is_some_and(|v| {
        let essence = v.split(';').next().unwrap_or_default().trim();
        essence.eq_ignore_ascii_case("application/json")
    })
}

/// What a request's `Accept` must permit.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// A POST: both `application/json` and `text/event-stream`.
    JsonAndSse,
    /// A GET: `text/event-stream`.
    Sse,
}

/// Whether `Accept` permits what is wanted. An absent header permits everything (RFC 9110); a
/// range with `q=0` permits nothing. `accept` is the field as
/// [`Head`](crate::wire::head::Head) found it in `headers`.
pub(crate) fn accepts(headers: &http::HeaderMap, accept: Field<'_>, wanted: Wanted) -> bool {
    let Some(first) = accept.first() else {
        return true;
    };
    // One field holding either list clients send, settled without parsing: each permits both
    // types. (With more fields, every one must still be text.)
    if !accept.is_repeated()
        && matches!(
            first.as_bytes(),
            b"application/json, text/event-stream" | b"text/event-stream, application/json"
        )
    {
        return true;
    }
    let values = headers.get_all(ACCEPT);
    let (mut json, mut sse) = (false, false);
    for value in values.iter() {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for range in value.split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                let p = p.trim();
                p.eq_ignore_ascii_case("q=0")
                    || p.eq_ignore_ascii_case("q=0.0")
                    || p.eq_ignore_ascii_case("q=0.00")
                    || p.eq_ignore_ascii_case("q=0.000")
            });
            if media.is_empty() || refused {
                continue;
            }
            let (ty, sub) = media.split_once('/').unwrap_or((media, ""));
            let any = sub == "*";
            if ty == "*" && any {
                return true;
            }
            json |=
                ty.eq_ignore_ascii_case("application") && (any || sub.eq_ignore_ascii_case("json"));
            sse |= ty.eq_ignore_ascii_case("text")
                && (any || sub.eq_ignore_ascii_case("event-stream"));
        }
    }
    sse && (json || wanted == Wanted::Sse)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn accept_negotiation() {
        let with = |v: &str| {
            let mut h = http::HeaderMap::new();
            h.insert(
                ACCEPT,
                HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("")),
            );
            accepted(&h, Wanted::JsonAndSse)
        };
        assert!(accepted(&http::HeaderMap::new(), Wanted::JsonAndSse));
        assert!(with("application/json, text/event-stream"));
        assert!(with("*/*"));
        assert!(with("application/*;q=0.5, text/*"));
        assert!(!with("application/json"));
        assert!(!with("text/event-stream"));
        assert!(!with("application/json, text/event-stream;q=0"));
        let mut h = http::HeaderMap::new();
        h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        assert!(accepted(&h, Wanted::Sse));
        h.insert(ACCEPT, HeaderValue::from_static("application/json"));
        assert!(!accepted(&h, Wanted::Sse));
        // Several fields: each is read, and together they permit both.
        h.append(ACCEPT, HeaderValue::from_static("text/event-stream"));
        assert!(accepted(&h, Wanted::JsonAndSse));
        h.append(ACCEPT, HeaderValue::from_bytes(b"text/\xffplain").unwrap());
        assert!(!accepted(&h, Wanted::JsonAndSse));
        let mut h = http::HeaderMap::new();
        h.append(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        h.append(ACCEPT, HeaderValue::from_static("text/html"));
        assert!(accepted(&h, Wanted::JsonAndSse));
    }

    fn accepted(h: &http::HeaderMap, wanted: Wanted) -> bool {
        accepts(h, crate::wire::head::Head::read(h).accept, wanted)
    }
}
