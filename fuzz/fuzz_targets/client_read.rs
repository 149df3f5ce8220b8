//! What a server sends, as tollgate-client reads it: arbitrary bytes through the event-stream
//! parser (split into two chunks where the first byte says, so every split point is tried), each
//! event's data through the JSON-RPC message reader, and the whole input as one message (an
//! HTTP JSON body or a stdio line). Nothing may panic, and no event may pass the parser's bound.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tollgate_client::__private::read_message;
use tollgate_client::sse::SseParser;

const BOUND: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((&split, body)) = data.split_first() else {
        return;
    };
    let (a, b) = body.split_at(usize::from(split).min(body.len()));
    let mut parser = SseParser::new(BOUND);
    'chunks: for chunk in [a, b] {
        match parser.feed(chunk) {
            Ok(events) => {
                for event in events {
                    assert!(event.data.len() <= BOUND, "an event past the bound");
                    let _ = read_message(&event.data);
                }
            }
            Err(_) => break 'chunks,
        }
    }
    if let Some(id) = parser.last_event_id() {
        assert!(id.len() <= BOUND && !id.contains('\0'));
    }
    let _ = read_message(body);
});
