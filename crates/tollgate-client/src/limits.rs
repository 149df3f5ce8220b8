//! The client's bounds on what a server sends. It owns the numbers and their defaults; it must
//! not know how transports read (they ask it).

use std::time::Duration;

use tollgate_json::JsonLimits;

use crate::error::{Error, ErrorKind};

const MIB: usize = 1024 * 1024;

/// Bounds on everything a server sends to this client. Each has a safe default; raising one is
/// an explicit call, and none can pass the JSON reader's own ceilings.
///
/// # Examples
///
/// ```
/// use tollgate_client::ClientLimits;
///
/// let limits = ClientLimits::default().with_max_message_bytes(1024 * 1024)?.with_max_pages(50);
/// assert_eq!(limits.max_message_bytes(), 1024 * 1024);
/// assert_eq!(limits.max_pages(), 50);
/// # Ok::<(), tollgate_client::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ClientLimits {
    json: JsonLimits,
    max_message_bytes: usize,
    max_pages: usize,
    max_reconnects: u32,
    max_retry_delay: Duration,
    max_input_rounds: u32,
    request_timeout: Duration,
    max_listen_buffer: usize,
}

impl Default for ClientLimits {
    fn default() -> Self {
        Self {
            json: JsonLimits::default(),
            max_message_bytes: Self::DEFAULT_MAX_MESSAGE_BYTES,
            max_pages: Self::DEFAULT_MAX_PAGES,
            max_reconnects: Self::DEFAULT_MAX_RECONNECTS,
            max_retry_delay: Self::DEFAULT_MAX_RETRY_DELAY,
            max_input_rounds: Self::DEFAULT_MAX_INPUT_ROUNDS,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            max_listen_buffer: Self::DEFAULT_MAX_LISTEN_BUFFER,
        }
    }
}

impl ClientLimits {
    /// Default bound on one message: an HTTP body, one event of an event stream, one stdio line
    /// (10 MiB).
    pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 10 * MIB;
    /// The highest [`max_message_bytes`](Self::max_message_bytes) allowed (16 MiB).
    pub const MAX_MESSAGE_BYTES_CEILING: usize = 16 * MIB;
    /// Default number of pages a collecting list reads before giving up (1,000).
    pub const DEFAULT_MAX_PAGES: usize = 1_000;
    /// Default number of times one request's event stream is resumed (5).
    pub const DEFAULT_MAX_RECONNECTS: u32 = 5;
    /// Default cap on the server's `retry` delay before resuming a stream (30 s).
    pub const DEFAULT_MAX_RETRY_DELAY: Duration = Duration::from_secs(30);
    /// Default number of `input_required` rounds one call answers (10, the server's own bound).
    pub const DEFAULT_MAX_INPUT_ROUNDS: u32 = 10;
    /// Default time one request waits for its answer (60 s, as the official SDKs wait).
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
    /// Default number of notifications a listen stream holds before its reader takes them
    /// (1,024).
    pub const DEFAULT_MAX_LISTEN_BUFFER: usize = 1_024;

    /// The limits the JSON reader applies to every message (default: `JsonLimits::default()`).
    pub fn json(&self) -> &JsonLimits {
        &self.json
    }

    /// The bound on one message in bytes (default 10 MiB).
    pub fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
    }

    /// Pages a collecting list reads at most (default 1,000).
    pub fn max_pages(&self) -> usize {
        self.max_pages
    }

    /// Times one request's event stream is resumed at most (default 5).
    pub fn max_reconnects(&self) -> u32 {
        self.max_reconnects
    }

    /// The longest `retry` delay honoured before resuming a stream (default 30 s).
    pub fn max_retry_delay(&self) -> Duration {
        self.max_retry_delay
    }

    /// `input_required` rounds one call answers at most (default 10).
    pub fn max_input_rounds(&self) -> u32 {
        self.max_input_rounds
    }

    /// How long one request waits for its answer (default 60 s); `subscriptions/listen` is
    /// exempt (it lasts until the server or the caller ends it).
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Notifications a listen stream holds unread at most (default 1,024).
    pub fn max_listen_buffer(&self) -> usize {
        self.max_listen_buffer
    }

    /// Replaces the JSON reader's limits (default `JsonLimits::default()`: 10 MiB, depth 128,
    /// 100,000 values, 1 Mi UTF-16 units per string).
    pub fn with_json(mut self, json: JsonLimits) -> Self {
        self.json = json;
        self
    }

    /// Sets the bound on one message (default 10 MiB).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Argument`] for zero or more than
    /// [`MAX_MESSAGE_BYTES_CEILING`](Self::MAX_MESSAGE_BYTES_CEILING).
    pub fn with_max_message_bytes(mut self, bytes: usize) -> Result<Self, Error> {
        if bytes == 0 || bytes > Self::MAX_MESSAGE_BYTES_CEILING {
            return Err(Error::new(
                ErrorKind::Argument,
                "max_message_bytes out of range",
            ));
        }
        self.max_message_bytes = bytes;
        Ok(self)
    }

    /// Sets how many pages a collecting list reads at most (default 1,000).
    pub fn with_max_pages(mut self, pages: usize) -> Self {
        self.max_pages = pages;
        self
    }

    /// Sets how many times one request's event stream is resumed (default 5; 0 never resumes).
    pub fn with_max_reconnects(mut self, reconnects: u32) -> Self {
        self.max_reconnects = reconnects;
        self
    }

    /// Sets the cap on the server's `retry` delay (default 30 s).
    pub fn with_max_retry_delay(mut self, delay: Duration) -> Self {
        self.max_retry_delay = delay;
        self
    }

    /// Sets how many `input_required` rounds one call answers (default 10).
    pub fn with_max_input_rounds(mut self, rounds: u32) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// Sets how long one request waits for its answer (default 60 s). A request past it fails
    /// with [`ErrorKind::TimedOut`] and is cancelled as its revision says: over stdio and on a
    /// 2025 session `notifications/cancelled` goes to the server; a 2026-07-28 HTTP request is
    /// closed. Every request but `subscriptions/listen` is bounded; a task's wait is bounded
    /// per poll.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tollgate_client::ClientLimits;
    ///
    /// let limits = ClientLimits::default().with_request_timeout(Duration::from_secs(5));
    /// assert_eq!(limits.request_timeout(), Duration::from_secs(5));
    /// ```
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets how many notifications a listen stream holds unread (default 1,024; at least 1). A
    /// reader that falls further behind gets what was held, then [`ErrorKind::Limit`], and the
    /// stream ends: nothing is dropped silently.
    pub fn with_max_listen_buffer(mut self, notifications: usize) -> Self {
        self.max_listen_buffer = notifications.max(1);
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn message_bytes_at_the_ceiling_and_one_past() {
        let at = ClientLimits::default()
            .with_max_message_bytes(ClientLimits::MAX_MESSAGE_BYTES_CEILING)
            .unwrap();
        assert_eq!(at.max_message_bytes(), 16 * MIB);
        let past = ClientLimits::default()
            .with_max_message_bytes(ClientLimits::MAX_MESSAGE_BYTES_CEILING + 1)
            .unwrap_err();
        assert_eq!(past.kind(), ErrorKind::Argument);
        assert!(ClientLimits::default().with_max_message_bytes(0).is_err());
    }
}
