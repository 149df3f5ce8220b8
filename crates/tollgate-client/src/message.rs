//! JSON-RPC messages as the client reads and writes them. It owns the envelope: reading one
//! message a server sent (bounded, through tollgate-json) into a request, a notification or a
//! response, and writing the client's requests, notifications and responses. It must not know
//! transports or methods.

use tollgate_json::{JsonNumber, JsonObject, JsonValue, OutputLimits, from_slice, to_vec};

use crate::error::{Error, ErrorKind};
use crate::limits::ClientLimits;

/// One message from the server.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// The answer to a request of ours: its id, and its result or error.
    Response {
        id: JsonValue,
        outcome: Result<JsonValue, Error>,
    },
    /// A server-to-client request.
    Request {
        id: JsonValue,
        method: String,
        params: Option<JsonObject>,
    },
    /// A notification.
    Notification {
        method: String,
        params: Option<JsonObject>,
    },
}

/// Reads one message under the client's limits (what [`read_all`] does without batches).
#[cfg(test)]
pub(crate) fn read(bytes: &[u8], limits: &ClientLimits) -> Result<Incoming, Error> {
    if bytes.len() > limits.max_message_bytes() {
        return Err(Error::new(ErrorKind::Limit, "message too large"));
    }
    let value = from_slice(bytes, limits.json())?;
    classify(value)
}

/// Reads what one frame carries under the client's limits: one message, or when `batches` is
/// set (2025-03-26) also a non-empty JSON-RPC batch, each member sorted as a message of its own.
/// The bound on the frame bounds the batch.
pub(crate) fn read_all(
    bytes: &[u8],
    limits: &ClientLimits,
    batches: bool,
) -> Result<Vec<Incoming>, Error> {
    if bytes.len() > limits.max_message_bytes() {
        return Err(Error::new(ErrorKind::Limit, "message too large"));
    }
    match from_slice(bytes, limits.json())? {
        JsonValue::Array(members) if batches && !members.is_empty() => {
            members.iter().cloned().map(classify).collect()
        }
        value => classify(value).map(|one| vec![one]),
    }
}

/// Sorts a parsed message.
pub(crate) fn classify(value: JsonValue) -> Result<Incoming, Error> {
    let bad = || Error::new(ErrorKind::Protocol, "not a JSON-RPC message");
    let JsonValue::Object(object) = value else {
        return Err(bad());
    };
    if object.get("jsonrpc").and_then(JsonValue::as_str) != Some("2.0") {
        return Err(bad());
    }
    let params = match object.get("params") {
        None => None,
        Some(JsonValue::Object(p)) => Some(p.clone()),
        Some(_) => return Err(bad()),
    };
    let method = object.get("method").and_then(JsonValue::as_str);
    let id = object.get("id").filter(|id| is_id(id)).cloned();
    match (method, id) {
        (Some(method), Some(id)) => Ok(Incoming::Request {
            id,
            method: method.to_owned(),
            params,
        }),
        (Some(method), None) if !object.contains_key("id") => Ok(Incoming::Notification {
            method: method.to_owned(),
            params,
        }),
        (None, Some(id)) => {
            let outcome = match (object.get("result"), object.get("error")) {
                (Some(result), None) => Ok(result.clone()),
                (None, Some(error @ JsonValue::Object(_))) => Err(Error::rpc(error)),
                _ => return Err(bad()),
            };
            Ok(Incoming::Response { id, outcome })
        }
        (None, None) => match object.get("error") {
            // An error answered to a request the server could not read an id from.
            Some(error @ JsonValue::Object(_)) if object.get("id") == Some(&JsonValue::Null) => {
                Ok(Incoming::Response {
                    id: JsonValue::Null,
                    outcome: Err(Error::rpc(error)),
                })
            }
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

fn is_id(id: &JsonValue) -> bool {
    matches!(id, JsonValue::String(_)) || matches!(id, JsonValue::Number(n) if n.is_integer())
}

/// The numeric id a response carries, when it is one of ours.
pub(crate) fn numeric_id(id: &JsonValue) -> Option<u64> {
    id.as_number().and_then(JsonNumber::to_u64)
}

fn write(object: JsonObject) -> Result<Vec<u8>, Error> {
    to_vec(&JsonValue::Object(object), &OutputLimits::default())
        .map_err(|_| Error::new(ErrorKind::Argument, "the message could not be written"))
}

/// A request of ours.
pub(crate) fn request(id: u64, method: &str, params: Option<JsonObject>) -> Result<Vec<u8>, Error> {
    let mut b = JsonObject::builder()
        .insert("jsonrpc", "2.0")
        .insert("id", JsonNumber::from(id))
        .insert("method", method);
    if let Some(params) = params {
        b.push("params", params);
    }
    write(b.build())
}

/// A notification of ours.
pub(crate) fn notification(method: &str, params: Option<JsonObject>) -> Result<Vec<u8>, Error> {
    let mut b = JsonObject::builder()
        .insert("jsonrpc", "2.0")
        .insert("method", method);
    if let Some(params) = params {
        b.push("params", params);
    }
    write(b.build())
}

/// Our answer to a server-to-client request: a result, or an error code and fixed message.
pub(crate) fn response(
    id: &JsonValue,
    outcome: Result<JsonValue, (i64, &'static str)>,
) -> Result<Vec<u8>, Error> {
    let b = JsonObject::builder()
        .insert("jsonrpc", "2.0")
        .insert("id", id.clone());
    let b = match outcome {
        Ok(result) => b.insert("result", result),
        Err((code, message)) => b.insert(
            "error",
            JsonObject::builder()
                .insert("code", JsonNumber::from(code))
                .insert("message", message)
                .build(),
        ),
    };
    write(b.build())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn limits() -> ClientLimits {
        ClientLimits::default()
    }

    #[test]
    fn sorts_the_three_kinds() {
        let r = read(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#, &limits()).unwrap();
        assert!(matches!(r, Incoming::Response { outcome: Ok(_), .. }));
        let e = read(
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"m","data":{"supported":["2025-11-25"]}}}"#,
            &limits(),
        )
        .unwrap();
        let Incoming::Response {
            outcome: Err(e), ..
        } = e
        else {
            unreachable!("an error response")
        };
        assert_eq!(e.code(), Some(-32022));
        assert!(e.data().is_some());
        let q = read(
            br#"{"jsonrpc":"2.0","id":"a","method":"roots/list"}"#,
            &limits(),
        )
        .unwrap();
        assert!(matches!(q, Incoming::Request { .. }));
        let n = read(
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            &limits(),
        )
        .unwrap();
        assert!(matches!(n, Incoming::Notification { .. }));
    }

    #[test]
    fn refuses_what_is_not_json_rpc() {
        for bad in [
            &br#"{"id":1,"result":{}}"#[..],
            br#"{"jsonrpc":"2.0","id":1}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#,
            br#"{"jsonrpc":"2.0","method":"x","params":[1]}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            br#"[1]"#,
            b"\xff",
        ] {
            assert_eq!(
                read(bad, &limits()).unwrap_err().kind(),
                ErrorKind::Protocol
            );
        }
    }

    #[test]
    fn batches_only_where_the_revision_has_them() {
        let batch = br#"[{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"jsonrpc":"2.0","id":1,"result":{}}]"#;
        let read = read_all(batch, &limits(), true).unwrap();
        assert!(matches!(read[0], Incoming::Notification { .. }));
        assert!(matches!(read[1], Incoming::Response { .. }));
        let refused = read_all(batch, &limits(), false).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::Protocol);
        // An empty batch, or one with a member that is not a message, is refused whole.
        for bad in [&b"[]"[..], br#"[{"jsonrpc":"2.0","id":1,"result":{}},1]"#] {
            let err = read_all(bad, &limits(), true).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Protocol);
        }
        // The frame's bound is the batch's.
        let at = ClientLimits::default()
            .with_max_message_bytes(batch.len())
            .unwrap();
        assert_eq!(read_all(batch, &at, true).unwrap().len(), 2);
        let below = ClientLimits::default()
            .with_max_message_bytes(batch.len() - 1)
            .unwrap();
        let err = read_all(batch, &below, true).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Limit);
    }

    #[test]
    fn message_at_the_bound_and_one_past() {
        let message = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        let at = ClientLimits::default()
            .with_max_message_bytes(message.len())
            .unwrap();
        assert!(read(message, &at).is_ok());
        let below = ClientLimits::default()
            .with_max_message_bytes(message.len() - 1)
            .unwrap();
        assert_eq!(read(message, &below).unwrap_err().kind(), ErrorKind::Limit);
    }
}
