//! What an upstream asks of the caller while one forwarded call runs, carried from the upstream's
//! client to the relay of that call: a 2025 upstream's requests (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`) and log messages (`notifications/message`) that came
//! on the call's own response stream (Streamable HTTP) or, from a stdio upstream with
//! `sole_call_requests`, while the call was the only request outstanding; and a 2026-07-28
//! upstream's `input_required` requests when the client answers them itself (a 2025 caller,
//! asked on its call's own stream or as a line; the client retries with the answers, within its
//! `max_input_rounds`). Owns the call's client handler and the channel to the relay (the fixed
//! refusals it sends upstream are in `error.rs`); knows nothing of tools, catalogs, names or the caller's transport.

use tokio::sync::{mpsc, oneshot};
use tollgate::InvocationFeatures;
use tollgate::context::{
    ClientRequestError, ClientRequests, InputRequest, LogLevel, RequestLogger,
};
use tollgate::json::{JsonObject, JsonValue};
use tollgate_client::handler::{Handler, HandlerFuture, Refusal};

use crate::error::{CANNOT_ASK, NOT_ANSWERED};
use crate::inputs::input_request_of;

/// The most log messages waiting to be relayed; past it a message is dropped.
const ASKED_QUEUE: usize = 32;

/// One thing the upstream asked.
pub(crate) enum Asked {
    /// A request for the caller, and where its answer goes.
    Request {
        request: InputRequest,
        reply: oneshot::Sender<Result<JsonValue, Refusal>>,
    },
    /// A log message for the caller.
    Log {
        level: LogLevel,
        logger: Option<String>,
        data: JsonValue,
    },
}

/// The client handler of one forwarded call: what the upstream asks goes to the call's relay.
pub(crate) struct ForCall {
    tx: mpsc::Sender<Asked>,
}

/// A call's handler and the receiving end its relay reads.
pub(crate) fn channel() -> (ForCall, mpsc::Receiver<Asked>) {
    let (tx, rx) = mpsc::channel(ASKED_QUEUE);
    (ForCall { tx }, rx)
}

impl Handler for ForCall {
    fn notification(&self, method: &str, params: Option<&JsonObject>) {
        if method != "notifications/message" {
            return;
        }
        let Some(params) = params else { return };
        let Some(level) = params
            .get("level")
            .and_then(JsonValue::as_str)
            .and_then(LogLevel::from_wire)
        else {
            return;
        };
        let logger = params
            .get("logger")
            .and_then(JsonValue::as_str)
            .map(str::to_owned);
        let data = params.get("data").cloned().unwrap_or(JsonValue::Null);
        // A full queue drops the message: logs never hold the upstream's stream up.
        let _ = self.tx.try_send(Asked::Log {
            level,
            logger,
            data,
        });
    }

    fn request<'a>(&'a self, method: &'a str, params: Option<&'a JsonObject>) -> HandlerFuture<'a> {
        Box::pin(async move {
            if method == "ping" {
                return Ok(JsonObject::new().into());
            }
            let params = params.cloned().unwrap_or_default();
            let request = input_request_of(method, params).ok_or(CANNOT_ASK)?;
            let (reply, answer) = oneshot::channel();
            self.tx
                .send(Asked::Request { request, reply })
                .await
                .map_err(|_| NOT_ANSWERED)?;
            answer.await.map_err(|_| NOT_ANSWERED)?
        })
    }
}

/// Serves one thing asked: a request through the caller's own channel (the endpoint's
/// [`ClientRequests`], which checks the caller's capabilities), a log message through its
/// [`RequestLogger`] (present when the caller asked for logs; it applies the caller's level).
pub(crate) async fn serve(features: &InvocationFeatures, asked: Asked) {
    match asked {
        Asked::Request { request, reply } => {
            let answer = match features.find::<ClientRequests>() {
                None => Err(CANNOT_ASK),
                Some(caller) => caller.send(request).await.map_err(|e| match e {
                    ClientRequestError::MissingCapability | ClientRequestError::Undeclared => {
                        CANNOT_ASK
                    }
                    _ => NOT_ANSWERED,
                }),
            };
            let _ = reply.send(answer);
        }
        Asked::Log {
            level,
            logger,
            data,
        } => {
            if let Some(log) = features.find::<RequestLogger>() {
                match logger {
                    Some(logger) => log.log_from(level, &logger, data),
                    None => log.log(level, data),
                }
            }
        }
    }
}
