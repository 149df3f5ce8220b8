//! Every fixed answer the protocol gives: JSON-RPC codes, messages and HTTP statuses, in one
//! place.
//!
//! Messages are constants; none of them is ever built from request data. The only request
//! value that reaches a response is a readable request id, plus the bounded `requested` version
//! that the unsupported-version error's schema requires.

use http::StatusCode;

/// The text of the completed `isError` result for arguments that fail the input schema, the
/// evaluation budget, or typed binding. It names no value, property or detail.
///
/// # Examples
///
/// A client (or a test) recognises the fixed answer by this text:
///
/// ```
/// let text = tollgate::tool::INVALID_ARGUMENTS_TEXT;
/// assert_eq!(text, "Arguments do not match the tool's inputSchema.");
/// assert!(!text.contains('{'), "it never carries a submitted value");
/// ```
pub const INVALID_ARGUMENTS_TEXT: &str = "Arguments do not match the tool's inputSchema.";

/// JSON-RPC and MCP error codes.
pub(crate) mod code {
    pub(crate) const PARSE_ERROR: i64 = -32700;
    pub(crate) const INVALID_REQUEST: i64 = -32600;
    pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
    pub(crate) const INVALID_PARAMS: i64 = -32602;
    pub(crate) const INTERNAL_ERROR: i64 = -32603;
    pub(crate) const HEADER_MISMATCH: i64 = -32020;
    pub(crate) const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// "Resource not found" on the 2025 revisions (2026-07-28 uses -32602).
    pub(crate) const RESOURCE_NOT_FOUND_2025: i64 = -32002;
    /// Admission refused an unauthenticated caller (an implementation-defined server error).
    pub(crate) const UNAUTHORIZED: i64 = -32001;
    /// Admission refused an authenticated caller (an implementation-defined server error).
    pub(crate) const FORBIDDEN: i64 = -32003;
    /// A rate limiter refused the request (Soklet's code).
    pub(crate) const RATE_LIMITED: i64 = -31999;
}

/// A framework failure with a fixed code, message and HTTP status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The body is not JSON, or breaks an input JSON limit (including the byte limit).
    Parse,
    /// Valid JSON that is not a JSON-RPC request or notification.
    InvalidRequest,
    /// A method this endpoint does not implement for the selected revision.
    MethodNotFound,
    /// Malformed parameters, including missing required `_meta` fields.
    InvalidParams,
    /// `tools/call` names no tool served on this endpoint and revision.
    UnknownTool,
    /// `prompts/get` or `completion/complete` names no prompt served on this endpoint and
    /// revision.
    UnknownPrompt,
    /// `resources/read` names no resource or template match on 2026-07-28 (-32602).
    ResourceNotFound,
    /// The same on the 2025 revisions, which give it its own code (-32002).
    ResourceNotFound2025,
    /// `skills/get` names no `SKILL.md` this endpoint serves (-32602, the skills extension).
    SkillNotFound,
    /// `resources/directory/read` names no directory this endpoint serves (-32602).
    NotADirectory,
    /// A `requestState` that does not open here: altered, expired, bound to another request or
    /// principal, or past the round limit (the reasons are not told apart).
    InvalidRequestState,
    /// A pagination cursor this endpoint did not issue.
    InvalidCursor,
    /// `tasks/*` names no task this caller may see: unknown, expired or another's (the
    /// reasons are not told apart).
    TaskNotFound,
    /// `tasks/cancel` of a task that has ended (2025-11-25).
    TaskEnded,
    /// `tasks/result` of a task that was cancelled (2025-11-25): the call has no result.
    TaskCancelled,
    /// A required header is missing, repeated or malformed, or disagrees with the body.
    HeaderMismatch,
    /// The requested protocol revision is not served here (carries data; see `protocol`).
    UnsupportedVersion,
    /// A required client capability was not declared (carries data; see `protocol`).
    MissingCapability,
    /// Application execution failed: a handler error or panic, an output schema or output
    /// limit failure. The correlated error travels in HTTP 200.
    Internal,
    /// The server refused work it has no capacity for right now.
    Busy,
    /// Admission refused an unauthenticated caller (HTTP 401, on every revision).
    Unauthorized,
    /// Admission refused the caller (HTTP 403, on every revision).
    Forbidden,
    /// A rate limiter refused the request (HTTP 429 with `Retry-After`, on every revision).
    RateLimited,
    /// A 2025-revision request without the session its endpoint requires.
    SessionRequired,
    /// A 2025-revision request naming an unknown, ended or expired session.
    SessionNotFound,
    /// A JSON-RPC batch (2025-03-26) with more elements than the endpoint takes.
    BatchTooLarge,
}

impl Fault {
    pub(crate) const fn code(self) -> i64 {
        match self {
            Self::Parse => code::PARSE_ERROR,
            Self::InvalidRequest => code::INVALID_REQUEST,
            Self::MethodNotFound => code::METHOD_NOT_FOUND,
            Self::InvalidParams
            | Self::UnknownTool
            | Self::UnknownPrompt
            | Self::ResourceNotFound
            | Self::SkillNotFound
            | Self::NotADirectory
            | Self::InvalidRequestState
            | Self::InvalidCursor
            | Self::TaskNotFound
            | Self::TaskEnded => code::INVALID_PARAMS,
            Self::ResourceNotFound2025 => code::RESOURCE_NOT_FOUND_2025,
            Self::HeaderMismatch => code::HEADER_MISMATCH,
            Self::SessionRequired | Self::SessionNotFound | Self::BatchTooLarge => {
                code::INVALID_REQUEST
            }
            Self::UnsupportedVersion => code::UNSUPPORTED_PROTOCOL_VERSION,
            Self::MissingCapability => code::MISSING_REQUIRED_CLIENT_CAPABILITY,
            Self::Internal | Self::Busy | Self::TaskCancelled => code::INTERNAL_ERROR,
            Self::Unauthorized => code::UNAUTHORIZED,
            Self::Forbidden => code::FORBIDDEN,
            Self::RateLimited => code::RATE_LIMITED,
        }
    }

    pub(crate) const fn message(self) -> &'static str {
        match self {
            Self::Parse => "Parse error",
            Self::InvalidRequest => "Invalid Request",
            Self::MethodNotFound => "Method not found",
            Self::InvalidParams => "Invalid params",
            Self::UnknownTool => "Unknown tool",
            Self::UnknownPrompt => "Unknown prompt",
            Self::ResourceNotFound | Self::ResourceNotFound2025 => "Resource not found",
            Self::SkillNotFound => "Skill not found",
            Self::NotADirectory => "Not a directory",
            Self::InvalidRequestState => "Invalid request state",
            Self::InvalidCursor => "Invalid cursor",
            Self::TaskNotFound => "Task not found",
            Self::TaskEnded => "Task already ended",
            Self::TaskCancelled => "Task cancelled",
            Self::HeaderMismatch => "Header mismatch",
            Self::UnsupportedVersion => "Unsupported protocol version",
            Self::MissingCapability => "Missing required client capability",
            Self::Internal => "Internal error",
            Self::Busy => "Server busy",
            Self::Unauthorized => "Unauthorized",
            Self::Forbidden => "Forbidden",
            Self::RateLimited => "Rate limit exceeded",
            Self::SessionRequired => "Session required",
            Self::SessionNotFound => "Session not found",
            Self::BatchTooLarge => "Batch too large",
        }
    }

    pub(crate) const fn status(self) -> StatusCode {
        match self {
            Self::Parse
            | Self::InvalidRequest
            | Self::InvalidParams
            | Self::UnknownTool
            | Self::UnknownPrompt
            | Self::ResourceNotFound
            | Self::ResourceNotFound2025
            | Self::SkillNotFound
            | Self::NotADirectory
            | Self::InvalidRequestState
            | Self::InvalidCursor
            | Self::TaskNotFound
            | Self::TaskEnded
            | Self::HeaderMismatch
            | Self::UnsupportedVersion
            | Self::MissingCapability => StatusCode::BAD_REQUEST,
            Self::MethodNotFound => StatusCode::NOT_FOUND,
            Self::Internal | Self::TaskCancelled => StatusCode::OK,
            Self::Busy => StatusCode::SERVICE_UNAVAILABLE,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden => StatusCode::FORBIDDEN,
            Self::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Self::SessionRequired | Self::BatchTooLarge => StatusCode::BAD_REQUEST,
            Self::SessionNotFound => StatusCode::NOT_FOUND,
        }
    }

    /// The HTTP status on the 2025 revisions, whose transports define statuses only for
    /// malformed messages, versions and sessions: every other JSON-RPC error is an ordinary
    /// response to a well-formed request and travels in HTTP 200.
    pub(crate) const fn legacy_status(self) -> StatusCode {
        match self {
            Self::Parse
            | Self::InvalidRequest
            | Self::UnsupportedVersion
            | Self::Busy
            | Self::Unauthorized
            | Self::Forbidden
            | Self::RateLimited
            | Self::SessionRequired
            | Self::SessionNotFound
            | Self::BatchTooLarge => self.status(),
            Self::MethodNotFound
            | Self::InvalidParams
            | Self::UnknownTool
            | Self::UnknownPrompt
            | Self::ResourceNotFound
            | Self::ResourceNotFound2025
            | Self::SkillNotFound
            | Self::NotADirectory
            | Self::InvalidRequestState
            | Self::InvalidCursor
            | Self::TaskNotFound
            | Self::TaskEnded
            | Self::TaskCancelled
            | Self::HeaderMismatch
            | Self::MissingCapability
            | Self::Internal => StatusCode::OK,
        }
    }
}
