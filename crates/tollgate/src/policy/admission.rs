//! Admission: what a controller sees of a request ([`AdmissionRequest`]), what it answers
//! ([`AdmissionDecision`], now or later through [`Admission`]), and the controller itself
//! ([`AdmissionController`]).
//!
//! Owns the shape of a decision. When admission runs and how a refusal is answered are
//! `policy/rules.rs`'s; how a controller establishes identity (a key, a bearer token) is the
//! controller's.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{HeaderMap, HeaderValue};

use crate::facts::context::{AdmissionIdentity, RequestContext};
use crate::wire::unwind::BoxFuture;

/// What admission sees of a request: its validated context (operation, method, operation name,
/// revision, informational client information, `_meta`) and, over HTTP, its headers.
///
/// # Examples
///
/// ```
/// use tollgate::{policy::{AdmissionDecision, AdmissionIdentity, AdmissionRequest}};
///
/// // Admit callers presenting the right API key, under that key's principal.
/// fn admit(request: &AdmissionRequest<'_>) -> AdmissionDecision {
///     match request.header("x-api-key") {
///         Some("k-123") => AdmissionDecision::admit(AdmissionIdentity::principal("team-a")),
///         Some(_) => AdmissionDecision::forbidden(),
///         None => AdmissionDecision::unauthorized(),
///     }
/// }
/// # let _ = admit;
/// ```
pub struct AdmissionRequest<'a> {
    pub(crate) context: &'a RequestContext,
    pub(crate) headers: Option<&'a HeaderMap>,
}

impl fmt::Debug for AdmissionRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdmissionRequest")
            .field("method", &self.context.json_rpc_method())
            .finish_non_exhaustive()
    }
}

impl<'a> AdmissionRequest<'a> {
    /// The validated request (its admission identity is still anonymous here).
    pub fn context(&self) -> &'a RequestContext {
        self.context
    }

    /// A request header's value, when the request came over HTTP and carries it exactly once as
    /// visible ASCII. Over stdio there are no headers: the process's owner is the caller.
    pub fn header(&self, name: &str) -> Option<&'a str> {
        let headers = self.headers?;
        let mut values = headers.get_all(name).iter();
        let first = values.next()?;
        if values.next().is_some() {
            return None;
        }
        first.to_str().ok()
    }

    /// How many times the request carries the header `name` (0 over stdio).
    pub fn header_count(&self, name: &str) -> usize {
        self.headers.map_or(0, |h| h.get_all(name).iter().count())
    }

    /// Whether the request came over HTTP.
    pub fn is_http(&self) -> bool {
        self.headers.is_some()
    }
}

/// An admission controller's answer.
///
/// # Examples
///
/// ```
/// use tollgate::{policy::{AdmissionDecision, AdmissionIdentity}};
///
/// let ok = AdmissionDecision::admit(AdmissionIdentity::principal("alice"));
/// assert!(ok.is_admitted());
/// let challenge = AdmissionDecision::unauthorized_with_challenge(r#"Bearer realm="mcp""#);
/// assert!(!challenge.is_admitted());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionDecision(pub(crate) Decision);

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Admit(AdmissionIdentity),
    Unauthorized(Option<HeaderValue>),
    Forbidden(Option<HeaderValue>),
    Malformed(Option<HeaderValue>),
    Unavailable(Duration),
}

impl AdmissionDecision {
    /// Admits the request under `identity` (handlers see it in
    /// [`RequestContext::admission_identity`]).
    pub fn admit(identity: AdmissionIdentity) -> Self {
        Self(Decision::Admit(identity))
    }

    /// Refuses an unauthenticated caller: HTTP 401, JSON-RPC -32001 `Unauthorized`.
    pub fn unauthorized() -> Self {
        Self(Decision::Unauthorized(None))
    }

    /// As [`unauthorized`](Self::unauthorized), with a `WWW-Authenticate` challenge (for
    /// example the OAuth resource-metadata pointer MCP authorization uses). A challenge that is
    /// not a valid header value is left out.
    pub fn unauthorized_with_challenge(challenge: &str) -> Self {
        Self(Decision::Unauthorized(
            HeaderValue::from_str(challenge).ok(),
        ))
    }

    /// Refuses an authenticated caller that may not do this: HTTP 403, JSON-RPC -32003
    /// `Forbidden`.
    pub fn forbidden() -> Self {
        Self(Decision::Forbidden(None))
    }

    /// As [`forbidden`](Self::forbidden), with a `WWW-Authenticate` challenge (MCP
    /// authorization's `error="insufficient_scope"` step-up). A challenge that is not a valid
    /// header value is left out.
    pub fn forbidden_with_challenge(challenge: &str) -> Self {
        Self(Decision::Forbidden(HeaderValue::from_str(challenge).ok()))
    }

    /// Refuses credentials that are malformed (a repeated or unparsable `Authorization`, RFC 6750's
    /// `invalid_request`): HTTP 400, JSON-RPC -32600 `Invalid Request`, with a `WWW-Authenticate`
    /// challenge (left out when it is not a valid header value).
    pub fn malformed_with_challenge(challenge: &str) -> Self {
        Self(Decision::Malformed(HeaderValue::from_str(challenge).ok()))
    }

    /// Cannot decide now (the identity provider cannot be reached): HTTP 503 with
    /// `Retry-After`, JSON-RPC -32603 `Server busy`. Not counted as a refused admission.
    pub fn unavailable(retry_after: Duration) -> Self {
        Self(Decision::Unavailable(retry_after))
    }

    /// Whether the request is admitted.
    pub fn is_admitted(&self) -> bool {
        matches!(self.0, Decision::Admit(_))
    }

    /// The admitted identity, when admitted.
    pub fn identity(&self) -> Option<&AdmissionIdentity> {
        match &self.0 {
            Decision::Admit(identity) => Some(identity),
            _ => None,
        }
    }
}

/// A decision, ready now or still being made (a controller that asks an identity provider).
/// Await it for the [`AdmissionDecision`].
///
/// # Examples
///
/// ```
/// use tollgate::policy::{Admission, AdmissionDecision, AdmissionIdentity};
///
/// let now: Admission<'_> = AdmissionDecision::admit(AdmissionIdentity::anonymous()).into();
/// let later = Admission::pending(async { AdmissionDecision::unauthorized() });
/// # let _ = (now, later);
/// ```
#[must_use = "an admission does nothing unless awaited"]
pub struct Admission<'a>(State<'a>);

enum State<'a> {
    Ready(Option<AdmissionDecision>),
    Pending(BoxFuture<'a, AdmissionDecision>),
}

impl fmt::Debug for Admission<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            State::Ready(_) => "Admission::Ready",
            State::Pending(_) => "Admission::Pending",
        })
    }
}

impl<'a> Admission<'a> {
    /// A decision made now.
    pub fn ready(decision: AdmissionDecision) -> Self {
        Self(State::Ready(Some(decision)))
    }

    /// A decision a future makes.
    pub fn pending(future: impl Future<Output = AdmissionDecision> + Send + 'a) -> Self {
        Self(State::Pending(Box::pin(future)))
    }
}

impl From<AdmissionDecision> for Admission<'_> {
    fn from(decision: AdmissionDecision) -> Self {
        Self::ready(decision)
    }
}

impl Future for Admission<'_> {
    type Output = AdmissionDecision;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<AdmissionDecision> {
        match &mut self.0 {
            // Polled again after it finished: a refusal, never an admission.
            State::Ready(decision) => Poll::Ready(
                decision
                    .take()
                    .unwrap_or_else(AdmissionDecision::unauthorized),
            ),
            State::Pending(future) => future.as_mut().poll(cx),
        }
    }
}

/// Decides whether a validated request may proceed, and under which identity. Runs for every
/// request, notification, client response, stream `GET` and session `DELETE`, once the request
/// is well-formed and before anything answers from the endpoint's state: before any catalog,
/// tool, prompt, resource, task or session is looked up, any client capability is checked or any
/// handler runs. The context names the operation (tool or prompt name, resource URI,
/// completion reference) when the method has one. A panicking controller refuses the request.
///
/// Any `Fn(&AdmissionRequest<'_>) -> AdmissionDecision` is a controller. One that must wait (an
/// introspection call, a key fetch) implements the trait and returns [`Admission::pending`].
///
/// # Examples
///
/// ```
/// use tollgate::policy::{
///     Admission, AdmissionController, AdmissionDecision, AdmissionIdentity, AdmissionRequest,
/// };
///
/// struct AskDirectory;
///
/// impl AdmissionController for AskDirectory {
///     fn admit<'a>(&'a self, request: &'a AdmissionRequest<'a>) -> Admission<'a> {
///         let key = request.header("x-api-key").map(str::to_owned);
///         Admission::pending(async move {
///             // ... look the key up somewhere that answers asynchronously ...
///             match key.as_deref() {
///                 Some("k-123") => AdmissionDecision::admit(AdmissionIdentity::principal("team-a")),
///                 _ => AdmissionDecision::unauthorized(),
///             }
///         })
///     }
/// }
/// # let _ = AskDirectory;
/// ```
pub trait AdmissionController: Send + Sync + 'static {
    /// Decides.
    fn admit<'a>(&'a self, request: &'a AdmissionRequest<'a>) -> Admission<'a>;
}

impl<F> AdmissionController for F
where
    F: Fn(&AdmissionRequest<'_>) -> AdmissionDecision + Send + Sync + 'static,
{
    fn admit<'a>(&'a self, request: &'a AdmissionRequest<'a>) -> Admission<'a> {
        Admission::ready(self(request))
    }
}
