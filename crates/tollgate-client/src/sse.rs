//! A bounded parser for `text/event-stream` bodies (the WHATWG event-stream format). It owns
//! line splitting (CRLF, LF or CR, split anywhere across chunks), the `data`, `id`, `event` and
//! `retry` fields and the bound on one event; it must not know JSON or MCP: an event's data is
//! bytes handed to the caller.

use crate::error::{Error, ErrorKind};

/// One dispatched event: its data lines joined by `\n`, and its type when one was named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field, when present.
    pub event: Option<String>,
    /// The `data` lines, joined by `\n`.
    pub data: Vec<u8>,
}

/// An incremental event-stream parser. Feed it chunks as they arrive; it returns the complete
/// events and keeps the stream's last event id and the server's `retry` delay.
///
/// Every line and every event's data is bounded by `max_event_bytes`: past it, [`feed`]
/// returns an [`ErrorKind::Limit`] error and the stream must be dropped.
///
/// [`feed`]: SseParser::feed
///
/// # Examples
///
/// ```
/// use tollgate_client::sse::SseParser;
///
/// let mut parser = SseParser::new(1024);
/// let events = parser.feed(b"id: 7\nretry: 500\ndata: {\"a\":\ndata: 1}\n\n")?;
/// assert_eq!(events[0].data, b"{\"a\":\n1}");
/// assert_eq!(parser.last_event_id(), Some("7"));
/// assert_eq!(parser.retry_ms(), Some(500));
/// # Ok::<(), tollgate_client::Error>(())
/// ```
#[derive(Debug)]
pub struct SseParser {
    max: usize,
    line: Vec<u8>,
    after_cr: bool,
    data: Vec<u8>,
    has_data: bool,
    event: Option<String>,
    last_id: Option<String>,
    retry_ms: Option<u64>,
}

impl SseParser {
    /// A parser bounding each line and each event's data to `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Self {
        Self {
            max: max_event_bytes,
            line: Vec::new(),
            after_cr: false,
            data: Vec::new(),
            has_data: false,
            event: None,
            last_id: None,
            retry_ms: None,
        }
    }

    /// The last event id the stream set (what `Last-Event-ID` sends on resumption).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref().filter(|id| !id.is_empty())
    }

    /// The server's last `retry` field, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry_ms
    }

    /// Forgets a partial line and event when a stream ends (keeping the last id and `retry`),
    /// before the stream is resumed.
    pub fn end_of_stream(&mut self) {
        self.line.clear();
        self.after_cr = false;
        self.data.clear();
        self.has_data = false;
        self.event = None;
    }

    /// Reads a chunk; returns the events it completed.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Limit`] when a line or an event's data passes the bound;
    /// [`ErrorKind::Protocol`] when a line is not UTF-8.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, Error> {
        let mut events = Vec::new();
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.push_line_bytes(&rest[..end])?;
                    self.after_cr = rest[end] == b'\r';
                    rest = &rest[end + 1..];
                    let line = std::mem::take(&mut self.line);
                    if let Some(event) = self.line(&line)? {
                        events.push(event);
                    }
                }
                None => {
                    self.push_line_bytes(rest)?;
                    rest = &[];
                }
            }
        }
        Ok(events)
    }

    fn push_line_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if self.line.len() + bytes.len() > self.max {
            return Err(Error::new(ErrorKind::Limit, "event-stream line too long"));
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// One complete line: a field, a comment, or the blank line that dispatches.
    fn line(&mut self, line: &[u8]) -> Result<Option<SseEvent>, Error> {
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line[0] == b':' {
            return Ok(None);
        }
        let line = std::str::from_utf8(line)
            .map_err(|_| Error::new(ErrorKind::Protocol, "event-stream line is not UTF-8"))?;
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                let extra = usize::from(self.has_data) + value.len();
                if self.data.len() + extra > self.max {
                    return Err(Error::new(ErrorKind::Limit, "event-stream event too large"));
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value.as_bytes());
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry_ms = value.parse().ok();
            }
            _ => {}
        }
        Ok(None)
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        let had_data = std::mem::replace(&mut self.has_data, false);
        if !had_data || self.data.is_empty() {
            // A priming event (an id, no data) sets the id and dispatches nothing.
            self.data.clear();
            return None;
        }
        Some(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn all(parser: &mut SseParser, input: &[u8]) -> Vec<Vec<u8>> {
        parser
            .feed(input)
            .unwrap()
            .into_iter()
            .map(|e| e.data)
            .collect()
    }

    #[test]
    fn every_line_ending_and_any_split() {
        let input = b"data: a\r\n\r\ndata: b\r\rdata: c\n\n: comment\nevent: x\ndata:d\n\n";
        let whole = all(&mut SseParser::new(64), input);
        assert_eq!(
            whole,
            [b"a".to_vec(), b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]
        );
        for cut in 0..input.len() {
            let mut parser = SseParser::new(64);
            let mut parts = all(&mut parser, &input[..cut]);
            parts.extend(all(&mut parser, &input[cut..]));
            assert_eq!(parts, whole, "split at {cut}");
        }
    }

    #[test]
    fn priming_event_sets_the_id_without_dispatching() {
        let mut parser = SseParser::new(64);
        assert!(parser.feed(b"id: 1\ndata:\n\n").unwrap().is_empty());
        assert_eq!(parser.last_event_id(), Some("1"));
        let mut parser = SseParser::new(64);
        assert!(parser.feed(b"id: 9\nretry: 10\n\n").unwrap().is_empty());
        assert_eq!(parser.last_event_id(), Some("9"));
        assert_eq!(parser.retry_ms(), Some(10));
        parser.feed(b"retry: 1x\n\n").unwrap();
        assert_eq!(parser.retry_ms(), Some(10));
    }

    #[test]
    fn line_at_the_bound_and_one_past() {
        let mut parser = SseParser::new(10);
        // "data: " plus four bytes is a ten-byte line.
        assert_eq!(all(&mut parser, b"data: 1234\n\n"), [b"1234".to_vec()]);
        let err = SseParser::new(10).feed(b"data: 12345\n\n").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Limit);
    }

    #[test]
    fn event_data_at_the_bound_and_one_past() {
        // Two data lines "12345" and "6789" join to ten bytes with the newline.
        let mut parser = SseParser::new(10);
        assert_eq!(
            all(&mut parser, b"data:12345\ndata:6789\n\n"),
            [b"12345\n6789".to_vec()]
        );
        let err = SseParser::new(10)
            .feed(b"data:12345\ndata:67890\n\n")
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Limit);
    }

    #[test]
    fn invalid_utf8_is_a_protocol_error() {
        let err = SseParser::new(10).feed(b"data: \xff\n").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Protocol);
    }
}
