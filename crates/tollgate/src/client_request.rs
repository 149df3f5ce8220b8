//! Server-to-client requests on the 2025 revisions: a handler asks the client to elicit input,
//! sample its model or list its roots, over the request's own SSE stream (the answer POSTed
//! back) or as a line on stdout (the answer a line on stdin), and awaits the answer.
//!
//! Owns [`ClientRequests`] and [`ClientRequestError`], the routing of a client's JSON-RPC
//! response to the request waiting for it, and the one place a handler's transport features are
//! made (progress, logging, the response stream, server-to-client requests), for tool calls,
//! prompts and resource reads alike. Knows nothing of HTTP or lines: the stream module or the
//! stdio writer carries the request, and the session keeps the waiting table. 2026-07-28 has no such requests; there a
//! handler returns an `input_required` result instead.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use tollgate_json::{JsonObject, JsonValue, OutputLimits, to_vec};

use crate::facts::context::{ClientCapabilities, ClientCapability, RequestContext};
use crate::model::features::{FeatureSet, InvocationFeatures, NotificationSink, ProgressReporter};
use crate::model::input::InputRequest;
use crate::model::origin::Transport;
use crate::model::tool::options::InputRequestDeclaration;
use crate::stream::event::{EventStream, ResponseStream};
use crate::stream::session::PendingRequest;
use crate::stream::session::SessionStreams;
use crate::version::is_legacy;

/// Why a server-to-client request got no result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientRequestError {
    /// The client did not declare the capability the request needs at `initialize` (or the
    /// session's revision has no such request: elicitation before 2025-06-18).
    MissingCapability,
    /// The tool did not declare this kind of input
    /// ([`ToolBuilder::input_request_declarations`](crate::tool::ToolBuilder::input_request_declarations)).
    /// Prompts and resource reads declare no kinds and may ask for any.
    Undeclared,
    /// The client answered with an error, or with a result of the wrong shape for the method.
    Rejected,
    /// No answer can come: the session ended, the request was cancelled, or the session already
    /// has 64 requests waiting.
    Unavailable,
    /// The client did not answer within the session's client request timeout
    /// ([`SessionConfig::client_request_timeout`](crate::endpoint::SessionConfig::client_request_timeout),
    /// 60 seconds by default); the request is forgotten and a late answer is refused.
    TimedOut,
}

impl fmt::Display for ClientRequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MissingCapability => {
                "the client did not declare the capability this request needs"
            }
            Self::Undeclared => "the tool did not declare this kind of input",
            Self::Rejected => "the client rejected the request",
            Self::Unavailable => "the client cannot be asked now",
            Self::TimedOut => "the client did not answer in time",
        })
    }
}

impl std::error::Error for ClientRequestError {}

/// A handler's channel to the client (the 2025 revisions, inside a session).
///
/// Found in [`InvocationFeatures`](crate::InvocationFeatures) for a tool call, a `prompts/get` or a
/// `resources/read` in a 2025 session, over Streamable HTTP or stdio. Each request has a
/// server-chosen id; over HTTP it travels on the request's SSE stream (the answer becomes a
/// stream if it was not one) and the client POSTs its response, over stdio it is a line on
/// stdout and the client's response a line on stdin; the response resumes the handler. A tool asks only for the kinds of
/// input it declared; prompts and resource reads declare none and may ask for any (as their
/// `input_required` results may on 2026-07-28). Every other bound is the same for the three.
///
/// # Examples
///
/// ```no_run
/// use tollgate::{context::{ClientRequests, InputRequest}, InvocationFeatures};
/// use tollgate::json::JsonObject;
///
/// async fn ask_name(features: &InvocationFeatures) -> Option<String> {
///     let client = features.find::<ClientRequests>()?;
///     let answer = client
///         .send(InputRequest::elicitation("Your name?", JsonObject::new()))
///         .await
///         .ok()?;
///     answer.get("content")?.get("name")?.as_str().map(str::to_owned)
/// }
/// ```
pub struct ClientRequests {
    out: Outbound,
    session: Arc<SessionStreams>,
    capabilities: ClientCapabilities,
    /// The kinds of input the handler may ask for.
    asks: Asks,
}

/// Where a request to the client is written.
pub(crate) enum Outbound {
    /// The HTTP request's own event stream.
    Stream(Arc<EventStream>),
    /// The stdio connection's line writer.
    Lines(tokio::sync::mpsc::Sender<Vec<u8>>),
}

impl Outbound {
    /// Writes one encoded request; false when the connection is gone.
    async fn send(&self, bytes: Vec<u8>) -> bool {
        match self {
            Self::Stream(stream) => {
                stream.push_notification(&bytes);
                true
            }
            Self::Lines(lines) => lines.send(bytes).await.is_ok(),
        }
    }
}

/// The kinds of input a handler may ask its client for.
#[derive(Clone)]
pub(crate) enum Asks {
    /// A tool's declared kinds (any other is [`ClientRequestError::Undeclared`]).
    Declared(Arc<[InputRequestDeclaration]>),
    /// Any kind: prompts and resource reads declare none.
    Any,
}

impl Asks {
    fn allows(&self, request: &InputRequest) -> bool {
        match self {
            Self::Declared(declared) => declared.iter().any(|d| d.kind() == request.kind()),
            Self::Any => true,
        }
    }
}

impl fmt::Debug for ClientRequests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientRequests").finish_non_exhaustive()
    }
}

/// Forgets the waiting entry if the caller stops waiting (its future is dropped).
struct Forget<'a> {
    session: &'a SessionStreams,
    id: Arc<str>,
    /// Whether the request was recorded as waiting in the shared store.
    expected: bool,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.session.forget_request(&self.id);
        if self.expected
            && let Some(route) = self.session.route.get()
        {
            route.forget(&self.id);
        }
    }
}

impl ClientRequests {
    pub(crate) fn new(
        out: Outbound,
        session: Arc<SessionStreams>,
        capabilities: ClientCapabilities,
        asks: Asks,
    ) -> Self {
        Self {
            out,
            session,
            capabilities,
            asks,
        }
    }

    /// Sends `request` to the client and waits for its result (an elicitation, sampling or
    /// roots result, exactly as sent, shape-checked), at most the session's client request
    /// timeout (60 seconds unless configured); a cancelled or ended session ends the wait
    /// sooner, as may your own timeout or the invocation's cancellation token.
    ///
    /// # Errors
    ///
    /// [`ClientRequestError::Undeclared`] before anything is sent when a tool did not
    /// declare the request's kind, [`ClientRequestError::MissingCapability`] when the client did
    /// not declare the capability; [`ClientRequestError::Rejected`] for an error answer or a
    /// malformed result; [`ClientRequestError::Unavailable`] when no answer can come;
    /// [`ClientRequestError::TimedOut`] when none came in time.
    pub async fn send(&self, request: InputRequest) -> Result<JsonValue, ClientRequestError> {
        if !self.asks.allows(&request) {
            return Err(ClientRequestError::Undeclared);
        }
        // Elicitation came with 2025-06-18: an older session has no such request, whatever
        // its client declared.
        let defined = !matches!(request.capability(), ClientCapability::Elicitation)
            || self.session.revision.carries_titles_and_structure();
        if !defined || !self.capabilities.declares(request.capability()) {
            return Err(ClientRequestError::MissingCapability);
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        let id = self
            .session
            .register_request(PendingRequest {
                method: request.method(),
                reply,
            })
            .ok_or(ClientRequestError::Unavailable)?;
        let mut forget = Forget {
            session: &self.session,
            id: Arc::clone(&id),
            expected: false,
        };
        // A shared session's answer may be POSTed to another instance: recorded before the
        // request is sent, so the answer cannot arrive first.
        if let Some(route) = self.session.route.get() {
            if !route.expect(&id).await {
                return Err(ClientRequestError::Unavailable);
            }
            forget.expected = true;
        }
        let rendered = request.render();
        let message: JsonValue = JsonObject::builder()
            .insert("jsonrpc", "2.0")
            .insert("id", &*id)
            .insert("method", request.method())
            .insert(
                "params",
                rendered.get("params").cloned().unwrap_or(JsonValue::Null),
            )
            .build()
            .into();
        let bytes = to_vec(&message, &OutputLimits::default())
            .map_err(|_| ClientRequestError::Unavailable)?;
        // Past the timeout `forget` drops the waiting entry: a late answer finds nothing. A
        // writer that cannot take the line now waits within the same timeout.
        let timeout = self.session.budget().limits.client_request_timeout;
        let asked = async {
            if !self.out.send(bytes).await {
                return Err(ClientRequestError::Unavailable);
            }
            match answer.await {
                Ok(Some(result)) => Ok(result),
                Ok(None) => Err(ClientRequestError::Rejected),
                Err(_) => Err(ClientRequestError::Unavailable),
            }
        };
        tokio::time::timeout(timeout, asked)
            .await
            .unwrap_or(Err(ClientRequestError::TimedOut))
    }
}

/// The invocation features a request's transport gives its handler, on top of `features`:
/// progress (when the request asked with a usable token) and logging (when the endpoint lets
/// handlers log and a level is set) where the transport can carry notifications, on an event
/// stream the response stream (when the handler may close the connection), and, inside a 2025
/// session (on an event stream or a stdio connection), [`ClientRequests`] for the kinds `asks`
/// allows (called only then, so a call that
/// cannot ask pays nothing for it). Tool calls, prompts and resource reads all get theirs here.
pub(crate) fn transport_features(
    mut features: InvocationFeatures,
    transport: Transport<'_>,
    context: &RequestContext,
    logging: bool,
    asks: impl FnOnce() -> Asks,
) -> InvocationFeatures {
    let Some(sink) = transport.sink() else {
        return features;
    };
    let progress_token = context.meta.get("progressToken").filter(|t| {
        matches!(t, JsonValue::String(_))
            || t.as_number()
                .is_some_and(tollgate_json::JsonNumber::is_integer)
    });
    if let Some(token) = progress_token {
        features = features.with(ProgressReporter::new(token.clone(), sink.clone()));
    }
    if let (true, Some(level)) = (logging, context.log_level) {
        features = features.with(crate::model::features::RequestLogger::new(
            level,
            sink.clone(),
        ));
    }
    let legacy = is_legacy(context.protocol_version);
    let ask = |out, session| {
        ClientRequests::new(out, session, context.client_capabilities.clone(), asks())
    };
    let (response, requests) = match sink {
        NotificationSink::Stream(stream) => {
            let response = stream
                .may_close_connection()
                .then(|| ResponseStream::new(stream.clone()));
            // A 2025 session can carry server-to-client requests on this request's stream.
            let session = legacy.then(|| stream.session()).flatten();
            let requests = session.map(|s| ask(Outbound::Stream(stream.clone()), s));
            (response, requests)
        }
        // A 2025 session over stdio carries them as lines.
        NotificationSink::SessionLines(lines, session) if legacy => {
            let requests = ask(Outbound::Lines(lines.clone()), Arc::clone(session));
            (None, Some(requests))
        }
        NotificationSink::Lines(_) | NotificationSink::SessionLines(..) => (None, None),
    };
    if response.is_some() || requests.is_some() {
        features = features.with_set(StreamFeatures { response, requests });
    }
    features
}

/// Whether `message` is a client's JSON-RPC response (an `id` with a `result` or an `error`, no
/// `method`), which answers a server-to-client request rather than asking anything.
pub(crate) fn is_response(message: &JsonObject) -> bool {
    !message.contains_key("method")
        && message.contains_key("id")
        && (message.contains_key("result") || message.contains_key("error"))
}

/// Delivers a client's JSON-RPC response (`id` plus `result` or `error`) to the request waiting
/// for it in `session`; whether one was.
pub(crate) fn deliver(session: &SessionStreams, response: &JsonObject) -> bool {
    let Some(id) = response.get("id").and_then(JsonValue::as_str) else {
        return false;
    };
    let Some(pending) = session.take_request(id) else {
        return false;
    };
    let result = match (response.get("result"), response.get("error")) {
        (Some(result), None)
            if crate::model::input::input_response_shape(pending.method, result) =>
        {
            Some(result.clone())
        }
        _ => None,
    };
    // The caller may have stopped waiting; nothing to do then.
    let _ = pending.reply.send(result);
    true
}

/// The features a call answered on an event stream gives its handler together: the stream
/// ([`ResponseStream`], when its handler may close the connection) and, inside a 2025 session,
/// [`ClientRequests`]. One allocation for both, not one each.
pub(crate) struct StreamFeatures {
    pub(crate) response: Option<ResponseStream>,
    pub(crate) requests: Option<ClientRequests>,
}

impl FeatureSet for StreamFeatures {
    fn member(&self, wanted: TypeId) -> Option<&(dyn Any + Send + Sync)> {
        if wanted == TypeId::of::<ResponseStream>() {
            return self
                .response
                .as_ref()
                .map(|r| r as &(dyn Any + Send + Sync));
        }
        if wanted == TypeId::of::<ClientRequests>() {
            return self
                .requests
                .as_ref()
                .map(|r| r as &(dyn Any + Send + Sync));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tool::options::{InputRequestKind, InputRequirement};
    use crate::stream::StreamConfig;
    use crate::version::ProtocolVersion;
    use std::time::Duration;

    /// An elicitation the client never answers fails with `TimedOut` once the session's client
    /// request timeout passes (not before), and its waiting entry is gone: a late answer finds
    /// nothing.
    #[tokio::test(start_paused = true)]
    async fn an_unanswered_elicitation_times_out() {
        let session = Arc::new(SessionStreams::new(
            StreamConfig::default(),
            ProtocolVersion::V2025_11_25,
            Duration::from_secs(600),
        ));
        let limits = crate::stream::session::HoldLimits {
            client_request_timeout: Duration::from_secs(60),
            ..Default::default()
        };
        let _ = session.budget.set(crate::stream::session::Budget {
            limits,
            principal: None,
            endpoint: Arc::default(),
        });
        let stream = EventStream::new(StreamConfig::default());
        let capabilities = ClientCapabilities::from_json(
            JsonObject::builder()
                .insert("elicitation", JsonObject::new())
                .build(),
        );
        let declared: Arc<[InputRequestDeclaration]> = Arc::from([InputRequestDeclaration::new(
            InputRequestKind::Elicitation,
            InputRequirement::Conditional,
        )]);
        let client = ClientRequests::new(
            Outbound::Stream(Arc::clone(&stream)),
            Arc::clone(&session),
            capabilities,
            Asks::Declared(declared),
        );
        let started = tokio::time::Instant::now();
        let asking = tokio::spawn(async move {
            client
                .send(InputRequest::elicitation("Your name?", JsonObject::new()))
                .await
        });
        tokio::time::sleep(Duration::from_secs(59)).await;
        assert!(!asking.is_finished(), "still waiting before the timeout");
        assert_eq!(crate::stream::lock(&session.state).pending.len(), 1);
        let got = asking
            .await
            .unwrap_or_else(|_| unreachable!("the wait ends"));
        assert_eq!(got, Err(ClientRequestError::TimedOut));
        assert!(started.elapsed() >= Duration::from_secs(60));
        assert!(crate::stream::lock(&session.state).pending.is_empty());
        let late = JsonObject::builder()
            .insert("jsonrpc", "2.0")
            .insert("id", "tollgate-1")
            .insert(
                "result",
                JsonObject::builder().insert("action", "cancel").build(),
            )
            .build();
        assert!(
            !deliver(&session, &late),
            "a late answer finds nothing waiting"
        );
    }

    /// A tool asks only for the kinds it declared; a prompt's or a read's handler (`Asks::Any`)
    /// for any kind, the client's capabilities still checked before anything is sent.
    #[tokio::test]
    async fn asks_bound_the_kinds_a_handler_may_send() {
        let session = Arc::new(SessionStreams::new(
            StreamConfig::default(),
            ProtocolVersion::V2025_11_25,
            Duration::from_secs(600),
        ));
        let stream = EventStream::new(StreamConfig::default());
        let client = |capabilities: JsonObject, asks: Asks| {
            ClientRequests::new(
                Outbound::Stream(Arc::clone(&stream)),
                Arc::clone(&session),
                ClientCapabilities::from_json(capabilities),
                asks,
            )
        };
        let none = || JsonObject::new();
        let roots = || {
            JsonObject::builder()
                .insert("roots", JsonObject::new())
                .build()
        };
        let elicit = || InputRequest::elicitation("Your name?", JsonObject::new());
        let declared = Asks::Declared(Arc::from([InputRequestDeclaration::new(
            InputRequestKind::Roots,
            InputRequirement::Conditional,
        )]));
        assert_eq!(
            client(roots(), declared).send(elicit()).await,
            Err(ClientRequestError::Undeclared)
        );
        assert_eq!(
            client(none(), Asks::Any).send(elicit()).await,
            Err(ClientRequestError::MissingCapability)
        );
        assert_eq!(
            client(none(), Asks::Any)
                .send(InputRequest::list_roots())
                .await,
            Err(ClientRequestError::MissingCapability)
        );
        assert!(crate::stream::lock(&session.state).pending.is_empty());
        // Declared by neither side but asked by a prompt: sent, and its answer awaited.
        let asking = client(roots(), Asks::Any);
        let sent = tokio::spawn(async move { asking.send(InputRequest::list_roots()).await });
        while crate::stream::lock(&session.state).pending.is_empty() {
            tokio::task::yield_now().await;
        }
        let answer = JsonObject::builder()
            .insert("jsonrpc", "2.0")
            .insert("id", "tollgate-1")
            .insert(
                "result",
                JsonObject::builder()
                    .insert("roots", Vec::<JsonValue>::new())
                    .build(),
            )
            .build();
        assert!(deliver(&session, &answer));
        let got = sent.await.unwrap_or_else(|_| unreachable!("the wait ends"));
        assert!(got.is_ok(), "{got:?}");
    }

    /// A call's stream features, held together, are found by type as separate ones were (each
    /// present only when given), and an application's value of either type is refused, not
    /// shadowing Tollgate's.
    #[test]
    fn stream_features_are_found_by_type_and_cannot_be_shadowed() {
        use crate::model::features::{CancellationToken, InvocationFeatures};
        let session = Arc::new(SessionStreams::new(
            StreamConfig::default(),
            ProtocolVersion::V2025_11_25,
            Duration::from_secs(600),
        ));
        let stream = EventStream::new(StreamConfig::default());
        let requests = || {
            ClientRequests::new(
                Outbound::Stream(Arc::clone(&stream)),
                Arc::clone(&session),
                ClientCapabilities::default(),
                Asks::Any,
            )
        };
        let both = InvocationFeatures::for_test().with_set(StreamFeatures {
            response: Some(ResponseStream::new(Arc::clone(&stream))),
            requests: Some(requests()),
        });
        assert!(both.find::<ResponseStream>().is_some());
        assert!(both.find::<ClientRequests>().is_some());
        assert!(both.find::<CancellationToken>().is_some());
        assert!(both.find::<String>().is_none());
        let mut only = InvocationFeatures::for_test().with_set(StreamFeatures {
            response: None,
            requests: Some(requests()),
        });
        assert!(only.find::<ResponseStream>().is_none());
        assert!(only.find::<ClientRequests>().is_some());
        assert!(only.insert(requests()).is_err(), "Tollgate's own is kept");
        assert!(
            only.insert(ResponseStream::new(Arc::clone(&stream)))
                .is_ok()
        );
        assert!(only.find::<ResponseStream>().is_some());
        assert!(only.insert(7_u8).is_ok());
        assert_eq!(only.find::<u8>(), Some(&7));
    }
}
