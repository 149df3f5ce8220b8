//! The request head's fields Tollgate reads, found in one pass over the header map: the head's
//! size, `Host`, `Origin`, `Content-Type`, `Content-Length`, `Accept`, the MCP headers
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Session-Id`) and `traceparent`.
//! Each is kept as its first value and whether it came more than once, so a check that needs
//! exactly one value, or the first, asks the [`Head`] instead of hashing the name into the map
//! again (a lookup of a name that is not a standard one hashes it byte by byte).
//!
//! Owns the classification only: what a field must look like is the business of whoever reads
//! it. Knows no endpoint, revision or transport.

use http::{HeaderMap, HeaderValue};

/// One header field as the pass found it: absent, or its first value and whether another
/// followed.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Field<'a> {
    first: Option<&'a HeaderValue>,
    repeated: bool,
}

impl<'a> Field<'a> {
    /// A field as the map holds it under one name (for a name the pass does not read).
    pub(crate) fn of(values: http::header::GetAll<'a, HeaderValue>) -> Self {
        let mut values = values.iter();
        Self {
            first: values.next(),
            repeated: values.next().is_some(),
        }
    }

    fn add(&mut self, value: &'a HeaderValue) {
        if self.first.is_none() {
            self.first = Some(value);
        } else {
            self.repeated = true;
        }
    }

    /// Whether the request carries the field at all.
    pub(crate) fn is_present(self) -> bool {
        self.first.is_some()
    }

    /// Whether the field came more than once.
    pub(crate) fn is_repeated(self) -> bool {
        self.repeated
    }

    /// The field's first value (what `HeaderMap::get` answers).
    pub(crate) fn first(self) -> Option<&'a HeaderValue> {
        self.first
    }

    /// The field's one value as text, `None` when absent, `Err` when repeated or not visible
    /// ASCII (with spaces and tabs).
    pub(crate) fn single(self) -> Result<Option<&'a str>, ()> {
        match self.first {
            None => Ok(None),
            Some(_) if self.repeated => Err(()),
            Some(value) => value.to_str().map(Some).map_err(|_| ()),
        }
    }
}

/// The fields of a request head Tollgate reads (see the module's doc).
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Head<'a> {
    /// The head's size as the header bound counts it: each field's name and value, and 4
    /// bytes for its separator and line end.
    pub(crate) bytes: usize,
    pub(crate) host: Field<'a>,
    pub(crate) origin: Field<'a>,
    pub(crate) content_type: Field<'a>,
    pub(crate) content_length: Field<'a>,
    pub(crate) accept: Field<'a>,
    pub(crate) protocol_version: Field<'a>,
    pub(crate) method: Field<'a>,
    pub(crate) name: Field<'a>,
    pub(crate) session_id: Field<'a>,
    pub(crate) traceparent: Field<'a>,
}

impl<'a> Head<'a> {
    /// Reads `headers` once.
    pub(crate) fn read(headers: &'a HeaderMap) -> Self {
        let mut head = Self::default();
        for (name, value) in headers {
            let name = name.as_str();
            head.bytes = head.bytes.saturating_add(name.len() + value.len() + 4);
            // Names arrive lowercase; sorted by length, the comparisons are few.
            let field = match name.len() {
                4 if name == "host" => &mut head.host,
                6 if name == "origin" => &mut head.origin,
                6 if name == "accept" => &mut head.accept,
                8 if name == "mcp-name" => &mut head.name,
                10 if name == "mcp-method" => &mut head.method,
                11 if name == "traceparent" => &mut head.traceparent,
                12 if name == "content-type" => &mut head.content_type,
                14 if name == "content-length" => &mut head.content_length,
                14 if name == "mcp-session-id" => &mut head.session_id,
                20 if name == "mcp-protocol-version" => &mut head.protocol_version,
                _ => continue,
            };
            field.add(value);
        }
        head
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::wire::headers;
    use http::HeaderName;
    use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN};
    use proptest::prelude::*;

    /// Every field with the name it is read under, as the rest of Tollgate spells it.
    fn fields<'h>(head: &Head<'h>) -> [(HeaderName, Field<'h>); 10] {
        [
            (HOST, head.host),
            (ORIGIN, head.origin),
            (CONTENT_TYPE, head.content_type),
            (CONTENT_LENGTH, head.content_length),
            (ACCEPT, head.accept),
            (headers::PROTOCOL_VERSION, head.protocol_version),
            (HeaderName::from_static("mcp-method"), head.method),
            (HeaderName::from_static("mcp-name"), head.name),
            (headers::SESSION_ID, head.session_id),
            (HeaderName::from_static("traceparent"), head.traceparent),
        ]
    }

    /// What the map itself holds under `name`, against what the pass found (and what
    /// [`headers::single`] answers from the map).
    fn agrees(map: &HeaderMap, name: &HeaderName, field: Field<'_>) -> bool {
        let all: Vec<_> = map.get_all(name).iter().collect();
        let single = match all[..] {
            [] => Ok(None),
            [one] => one.to_str().map(Some).map_err(|_| ()),
            _ => Err(()),
        };
        field.first() == all.first().copied()
            && field.is_repeated() == (all.len() > 1)
            && field.single() == single
            && headers::single(map, name) == single
    }

    #[test]
    fn each_field_is_found_once_repeated_or_absent() {
        let mut map = HeaderMap::new();
        map.insert(HOST, HeaderValue::from_static("localhost:8080"));
        map.append(ACCEPT, HeaderValue::from_static("application/json"));
        map.append(ACCEPT, HeaderValue::from_static("text/event-stream"));
        map.insert(
            "mcp-method",
            HeaderValue::from_bytes(b"tools/\xffcall").unwrap(),
        );
        map.insert("x-other", HeaderValue::from_static("1"));
        let head = Head::read(&map);
        assert_eq!(head.host.single(), Ok(Some("localhost:8080")));
        assert!(head.accept.is_repeated() && head.accept.single().is_err());
        assert_eq!(head.accept.first().unwrap(), "application/json");
        assert!(head.method.is_present() && head.method.single().is_err());
        assert!(!head.origin.is_present() && head.origin.single() == Ok(None));
        for (name, field) in fields(&head) {
            assert!(agrees(&map, &name, field), "{name}");
        }
        let counted: usize = map
            .iter()
            .map(|(n, v)| n.as_str().len() + v.len() + 4)
            .sum();
        assert_eq!(head.bytes, counted);
    }

    #[test]
    fn an_empty_head_has_nothing() {
        let map = HeaderMap::new();
        let head = Head::read(&map);
        assert_eq!(head.bytes, 0);
        assert!(fields(&head).iter().all(|(_, f)| !f.is_present()));
    }

    /// The names read, and for each a name of the same length that differs in one byte (the
    /// pass compares lengths first), and `tracestate`, which shares `mcp-method`'s.
    const NAMES: [&str; 21] = [
        "host",
        "hosx",
        "origin",
        "origim",
        "accept",
        "acceps",
        "mcp-name",
        "mcp-namf",
        "mcp-method",
        "mcp-methoe",
        "tracestate",
        "traceparent",
        "traceparenu",
        "content-type",
        "content-typf",
        "content-length",
        "content-lengti",
        "mcp-session-id",
        "mcp-session-ie",
        "mcp-protocol-version",
        "mcp-protocol-versioo",
    ];

    proptest! {
        #[test]
        fn the_pass_agrees_with_the_map(
            entries in proptest::collection::vec(
                (0..NAMES.len(), proptest::collection::vec(0x09u8..0xff, 0..6)),
                0..12,
            )
        ) {
            let mut map = HeaderMap::new();
            for (i, value) in entries {
                let name = HeaderName::from_bytes(NAMES[i].as_bytes()).unwrap();
                if let Ok(value) = HeaderValue::from_bytes(&value) {
                    map.append(name, value);
                }
            }
            let head = Head::read(&map);
            for (name, field) in fields(&head) {
                prop_assert!(agrees(&map, &name, field), "{}", name);
            }
        }
    }
}
