//! The client's one error type. It owns the kinds a call can fail with; it must not carry what
//! the application sent (arguments, tokens, headers). What a server answered in a JSON-RPC error
//! (its code, a bounded copy of its message, its `data`) is kept, since callers act on it.

use tollgate_json::JsonValue;

/// The longest server error message kept, in characters (the rest is cut).
const MESSAGE_CHARS: usize = 256;

/// What went wrong, without the data involved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The connection could not be made or broke (DNS, TCP, TLS, a closed pipe).
    Connect,
    /// The server answered with an HTTP status the exchange does not allow.
    Status,
    /// The server answered a JSON-RPC error (see [`Error::code`]).
    Rpc,
    /// The server's bytes broke the protocol: not JSON, not JSON-RPC, an unexpected shape.
    Protocol,
    /// The server's bytes exceeded a [`ClientLimits`](crate::ClientLimits) bound.
    Limit,
    /// The 2025 session is gone (the server answered 404 to its id); connect again.
    SessionExpired,
    /// No revision both sides speak.
    Negotiation,
    /// A structured result did not match the tool's `outputSchema`, or the schema is outside
    /// Profile 1.
    Schema,
    /// The [`Authorizer`](crate::auth::Authorizer) could not supply credentials.
    Auth,
    /// The transport is closed (the client was closed, the child exited).
    Closed,
    /// The application's [`Handler`](crate::handler::Handler) refused a request the call
    /// needed answered (an `input_required` round).
    Refused,
    /// The request got no answer within
    /// [`ClientLimits::request_timeout`](crate::ClientLimits::request_timeout); it was
    /// cancelled.
    TimedOut,
    /// A local argument could not be used (for example arguments that are not a JSON object, a
    /// header name or value HTTP refuses).
    Argument,
}

impl ErrorKind {
    /// A fixed description of the kind.
    pub const fn description(self) -> &'static str {
        match self {
            Self::Connect => "connection failed",
            Self::Status => "unexpected HTTP status",
            Self::Rpc => "the server answered an error",
            Self::Protocol => "the server broke the protocol",
            Self::Limit => "the server's answer exceeded a client limit",
            Self::SessionExpired => "the session expired",
            Self::Negotiation => "no protocol revision in common",
            Self::Schema => "structured result does not match the output schema",
            Self::Auth => "authorization failed",
            Self::Closed => "the transport is closed",
            Self::Refused => "the handler refused a server request",
            Self::TimedOut => "the request timed out",
            Self::Argument => "an argument could not be used",
        }
    }
}

/// Why a client call failed: a kind, and for a server's answer its HTTP status or JSON-RPC code,
/// message and data. Never the values the application sent.
#[derive(Debug, Clone)]
pub struct Error {
    kind: ErrorKind,
    detail: &'static str,
    status: Option<u16>,
    code: Option<i64>,
    message: Option<Box<str>>,
    data: Option<JsonValue>,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, detail: &'static str) -> Self {
        Self {
            kind,
            detail,
            status: None,
            code: None,
            message: None,
            data: None,
        }
    }

    pub(crate) fn status(status: u16) -> Self {
        Self {
            status: Some(status),
            ..Self::new(ErrorKind::Status, "")
        }
    }

    pub(crate) fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// A JSON-RPC error object as the server sent it.
    pub(crate) fn rpc(error: &JsonValue) -> Self {
        let code = error
            .get("code")
            .and_then(JsonValue::as_number)
            .and_then(|n| n.to_i64());
        let message = error
            .get("message")
            .and_then(JsonValue::as_str)
            .map(|m| m.chars().take(MESSAGE_CHARS).collect::<String>().into());
        Self {
            code,
            message,
            data: error.get("data").cloned(),
            ..Self::new(ErrorKind::Rpc, "")
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The HTTP status the server answered, when one was involved.
    pub fn http_status(&self) -> Option<u16> {
        self.status
    }

    /// The JSON-RPC error code the server answered ([`ErrorKind::Rpc`]).
    pub fn code(&self) -> Option<i64> {
        self.code
    }

    /// The server's JSON-RPC error message, cut to 256 characters ([`ErrorKind::Rpc`]).
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The server's JSON-RPC error `data` ([`ErrorKind::Rpc`]).
    pub fn data(&self) -> Option<&JsonValue> {
        self.data.as_ref()
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind.description())?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        if let Some(status) = self.status {
            write!(f, " (HTTP {status})")?;
        }
        if let Some(code) = self.code {
            write!(f, " {code}")?;
        }
        if let Some(message) = &self.message {
            write!(f, ": {message}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

impl From<tollgate_json::Error> for Error {
    fn from(error: tollgate_json::Error) -> Self {
        if error.is_limit() {
            Self::new(ErrorKind::Limit, error.kind().description())
        } else {
            Self::new(ErrorKind::Protocol, error.kind().description())
        }
    }
}

impl From<crate::auth::AuthError> for Error {
    fn from(error: crate::auth::AuthError) -> Self {
        Self::new(ErrorKind::Auth, error.kind())
    }
}
