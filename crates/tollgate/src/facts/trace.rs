//! Distributed-trace context a request carries: W3C Trace Context (`traceparent`,
//! `tracestate`) and W3C Baggage (`baggage`), from the request's `params._meta` keys of those
//! names (which the MCP specification reserves for them) or else from the HTTP headers of those
//! names.
//!
//! Every value is validated against its W3C grammar and bounded before a handler can see it; a
//! malformed or oversized value is dropped (it is never an error, never trusted, never echoed).
//! Baggage is read whether or not a trace context is there; a `tracestate` only beside a valid
//! `traceparent` from the same place. Read on first use, so a request whose handler never asks
//! pays nothing. Knows nothing of spans or exporters.

use http::{HeaderMap, HeaderName};
use tollgate_json::JsonObject;

/// The three fields, by their `_meta` key and header name (one name for both). Header names
/// are made once so a lookup hashes the name without first parsing it.
static TRACEPARENT: (&str, HeaderName) = ("traceparent", HeaderName::from_static("traceparent"));
static TRACESTATE: (&str, HeaderName) = ("tracestate", HeaderName::from_static("tracestate"));
static BAGGAGE: (&str, HeaderName) = ("baggage", HeaderName::from_static("baggage"));

/// The longest `traceparent` accepted (version 00 is exactly 55 characters; later versions
/// may append fields).
pub const MAX_TRACEPARENT_BYTES: usize = 256;
/// The longest `tracestate` accepted (W3C Trace Context: at most 32 members; propagators
/// should keep at least 512 characters).
pub const MAX_TRACESTATE_BYTES: usize = 512;
/// The most `tracestate` members.
pub const MAX_TRACESTATE_MEMBERS: usize = 32;
/// The longest `baggage` accepted (W3C Baggage: 8,192 bytes in total).
pub const MAX_BAGGAGE_BYTES: usize = 8192;
/// The most `baggage` members (W3C Baggage: 64).
pub const MAX_BAGGAGE_MEMBERS: usize = 64;

/// A validated W3C Trace Context: the caller's `traceparent` (and its `tracestate`, when that
/// was valid too).
///
/// # Examples
///
/// ```
/// use tollgate::context::TraceContext;
///
/// let trace = TraceContext::parse("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", None)
///     .expect("a valid traceparent");
/// assert_eq!(trace.trace_id(), "0af7651916cd43dd8448eb211c80319c");
/// assert_eq!(trace.parent_id(), "b7ad6b7169203331");
/// assert!(trace.sampled());
///
/// // Malformed values are dropped, never errors: an all-zero trace id, upper case, a bad length.
/// assert!(TraceContext::parse("00-00000000000000000000000000000000-b7ad6b7169203331-01", None).is_none());
/// assert!(TraceContext::parse("00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", None).is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: Box<str>,
    tracestate: Option<Box<str>>,
}

impl TraceContext {
    /// A trace context from a `traceparent` and an optional `tracestate`: `None` when the
    /// `traceparent` is not valid W3C Trace Context. An invalid `tracestate` is dropped and the
    /// `traceparent` kept.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        if !valid_traceparent(traceparent) {
            return None;
        }
        Some(Self {
            traceparent: traceparent.into(),
            tracestate: tracestate.filter(|s| valid_tracestate(s)).map(Into::into),
        })
    }

    /// The `traceparent` as received (validated).
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The trace id: 32 lowercase hexadecimal digits, not all zero.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The caller's span id: 16 lowercase hexadecimal digits, not all zero.
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }

    /// The trace flags byte.
    pub fn flags(&self) -> u8 {
        u8::from_str_radix(&self.traceparent[53..55], 16).unwrap_or(0)
    }

    /// Whether the caller sampled this trace (flag bit 0).
    pub fn sampled(&self) -> bool {
        self.flags() & 1 == 1
    }

    /// The `tracestate`, when one was sent and valid.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }
}

/// Validated W3C Baggage: name/value pairs the caller propagates, values percent-decoded.
/// Properties (`;k=v` after a value) are accepted and not kept.
///
/// # Examples
///
/// ```
/// use tollgate::context::Baggage;
///
/// let baggage = Baggage::parse("tenant=acme, region=eu%2Dwest;ttl=60").expect("valid baggage");
/// assert_eq!(baggage.get("tenant"), Some("acme"));
/// assert_eq!(baggage.get("region"), Some("eu-west"));
/// assert_eq!(baggage.len(), 2);
///
/// // A member without `=` makes the whole header malformed: it is dropped.
/// assert!(Baggage::parse("tenant").is_none());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baggage {
    entries: Vec<(Box<str>, Box<str>)>,
}

impl Baggage {
    /// Baggage from a `baggage` value: `None` when it is malformed or over its bounds
    /// ([`MAX_BAGGAGE_BYTES`](crate::context::MAX_BAGGAGE_BYTES),
    /// [`MAX_BAGGAGE_MEMBERS`](crate::context::MAX_BAGGAGE_MEMBERS)).
    pub fn parse(value: &str) -> Option<Self> {
        if value.len() > MAX_BAGGAGE_BYTES {
            return None;
        }
        let mut entries = Vec::new();
        for member in value.split(',') {
            if entries.len() == MAX_BAGGAGE_MEMBERS {
                return None;
            }
            let pair = member.split(';').next().unwrap_or_default();
            let (key, raw) = pair.split_once('=')?;
            let key = key.trim_matches(OWS);
            let raw = raw.trim_matches(OWS);
            if key.is_empty() || !key.bytes().all(is_token) || !raw.bytes().all(is_baggage_octet) {
                return None;
            }
            if !member
                .split(';')
                .skip(1)
                .all(|p| valid_baggage_property(p.trim_matches(OWS)))
            {
                return None;
            }
            entries.push((key.into(), percent_decode(raw)?.into()));
        }
        Some(Self { entries })
    }

    /// The value of `key` (the first, if repeated).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
    }

    /// Every member, in the order sent.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (&**k, &**v))
    }

    /// How many members.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Where a value came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Meta,
    Header,
}

/// The trace context and baggage of one request. Each of `traceparent` and `baggage` is read
/// from `_meta` when its key is there (a malformed `_meta` value does not fall back to a
/// header), else from the HTTP header; `tracestate` only from where its `traceparent` came
/// from. A repeated `traceparent` header is dropped; repeated `tracestate` and `baggage`
/// headers are one comma-separated list, as HTTP combines them.
pub(crate) fn read(
    meta: &JsonObject,
    headers: Option<&HeaderMap>,
) -> (Option<TraceContext>, Option<Baggage>) {
    let baggage = pick(Some(meta), headers, &BAGGAGE, true)
        .and_then(|(_, value)| value)
        .and_then(|value| Baggage::parse(&value));
    (read_trace(Some(meta), headers), baggage)
}

/// The trace context alone, as [`read`] finds it (`meta` absent: from the headers).
pub(crate) fn read_trace(
    meta: Option<&JsonObject>,
    headers: Option<&HeaderMap>,
) -> Option<TraceContext> {
    match pick(meta, headers, &TRACEPARENT, false) {
        Some((source, Some(parent))) => {
            let state = match source {
                Source::Meta => from_meta(meta, TRACESTATE.0),
                Source::Header => from_headers(headers, &TRACESTATE.1, true),
            };
            TraceContext::parse(&parent, state.flatten().as_deref())
        }
        _ => None,
    }
}

/// `key` in `_meta`: absent, or present as a string (`Some(None)`: present but not one).
fn from_meta(meta: Option<&JsonObject>, key: &str) -> Option<Option<String>> {
    meta?.get(key).map(|v| v.as_str().map(str::to_owned))
}

/// `key`'s header values: absent, or present as one value (`join`: several joined by commas;
/// `Some(None)`: unreadable, repeated where it may not be, or past the byte bound).
fn from_headers(
    headers: Option<&HeaderMap>,
    key: &HeaderName,
    join: bool,
) -> Option<Option<String>> {
    let mut all = headers?.get_all(key).iter().peekable();
    all.peek()?;
    let mut joined = String::new();
    for (i, value) in all.enumerate() {
        if i > 0 && !join {
            return Some(None);
        }
        let Ok(text) = value.to_str() else {
            return Some(None);
        };
        if i > 0 {
            joined.push(',');
        }
        joined.push_str(text);
        if joined.len() > MAX_BAGGAGE_BYTES {
            return Some(None);
        }
    }
    Some(Some(joined))
}

/// `key` from `_meta` when it is there, else from the headers, with where it came from.
fn pick(
    meta: Option<&JsonObject>,
    headers: Option<&HeaderMap>,
    (meta_key, header): &(&str, HeaderName),
    join: bool,
) -> Option<(Source, Option<String>)> {
    match from_meta(meta, meta_key) {
        Some(value) => Some((Source::Meta, value)),
        None => from_headers(headers, header, join).map(|v| (Source::Header, v)),
    }
}

const OWS: &[char] = &[' ', '\t'];

fn is_lower_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

fn valid_traceparent(value: &str) -> bool {
    let b = value.as_bytes();
    if b.len() < 55 || b.len() > MAX_TRACEPARENT_BYTES {
        return false;
    }
    let hex = |range: std::ops::Range<usize>| b[range].iter().all(|&c| is_lower_hex(c));
    let nonzero = |range: std::ops::Range<usize>| b[range].iter().any(|&c| c != b'0');
    let shape = hex(0..2)
        && b[2] == b'-'
        && hex(3..35)
        && b[35] == b'-'
        && hex(36..52)
        && b[52] == b'-'
        && hex(53..55);
    if !shape || &b[0..2] == b"ff" || !nonzero(3..35) || !nonzero(36..52) {
        return false;
    }
    // Version 00 is exactly 55 characters; a later version may append `-`-led fields of
    // lowercase hexadecimal digits.
    if &b[0..2] == b"00" {
        b.len() == 55
    } else {
        b.len() == 55 || (b[55] == b'-' && b[56..].iter().all(|&c| c == b'-' || is_lower_hex(c)))
    }
}

fn valid_tracestate(value: &str) -> bool {
    if value.len() > MAX_TRACESTATE_BYTES {
        return false;
    }
    let mut keys: Vec<&str> = Vec::new();
    for member in value.split(',') {
        let member = member.trim_matches(OWS);
        // Empty members are allowed and ignored.
        if member.is_empty() {
            continue;
        }
        if keys.len() == MAX_TRACESTATE_MEMBERS {
            return false;
        }
        let Some((key, val)) = member.split_once('=') else {
            return false;
        };
        if !valid_tracestate_key(key) || !valid_tracestate_value(val) || keys.contains(&key) {
            return false;
        }
        keys.push(key);
    }
    true
}

fn valid_tracestate_key(key: &str) -> bool {
    let part = |s: &str, max: usize, first_digit: bool| {
        let b = s.as_bytes();
        !b.is_empty()
            && b.len() <= max
            && (b[0].is_ascii_lowercase() || (first_digit && b[0].is_ascii_digit()))
            && b[1..].iter().all(|&c| {
                c.is_ascii_lowercase()
                    || c.is_ascii_digit()
                    || matches!(c, b'_' | b'-' | b'*' | b'/')
            })
    };
    match key.split_once('@') {
        Some((tenant, system)) => part(tenant, 241, true) && part(system, 14, false),
        None => part(key, 256, false),
    }
}

fn valid_tracestate_value(value: &str) -> bool {
    let b = value.as_bytes();
    let nblk = |c: u8| (0x21..=0x7e).contains(&c) && c != b',' && c != b'=';
    !b.is_empty()
        && b.len() <= 256
        && b.last().is_some_and(|&c| nblk(c))
        && b.iter().all(|&c| c == b' ' || nblk(c))
}

/// RFC 9110 `tchar`.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// W3C Baggage `baggage-octet`: visible ASCII but `"`, `,`, `;` and `\`.
fn is_baggage_octet(b: u8) -> bool {
    matches!(b, 0x21 | 0x23..=0x2b | 0x2d..=0x3a | 0x3c..=0x5b | 0x5d..=0x7e)
}

fn valid_baggage_property(property: &str) -> bool {
    match property.split_once('=') {
        Some((key, value)) => {
            let key = key.trim_matches(OWS);
            !key.is_empty()
                && key.bytes().all(is_token)
                && value.trim_matches(OWS).bytes().all(is_baggage_octet)
        }
        None => !property.is_empty() && property.bytes().all(is_token),
    }
}

/// Percent-decodes a baggage value (bytes that are not UTF-8 become U+FFFD, as W3C Baggage
/// says); `None` for a broken escape.
fn percent_decode(raw: &str) -> Option<String> {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hi = (*b.get(i + 1)? as char).to_digit(16)?;
            let lo = (*b.get(i + 2)? as char).to_digit(16)?;
            out.push(u8::try_from(hi * 16 + lo).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// `_meta` values for the three keys when sent as strings; used by tests.
#[cfg(test)]
use tollgate_json::JsonValue;

#[cfg(test)]
fn meta_with(pairs: &[(&str, &str)]) -> JsonObject {
    let mut b = JsonObject::builder();
    for (k, v) in pairs {
        b.push(*k, JsonValue::from(*v));
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn traceparent_grammar() {
        assert!(valid_traceparent(PARENT));
        // A later version may append fields; version ff is invalid.
        assert!(valid_traceparent(
            "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-beef"
        ));
        assert!(!valid_traceparent(
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-beef"
        ));
        assert!(!valid_traceparent(
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        ));
        assert!(!valid_traceparent(
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"
        ));
        assert!(!valid_traceparent(&PARENT[..54]));
        assert!(!valid_traceparent(""));
        assert!(!valid_traceparent(
            "00-0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331-01"
        ));
    }

    #[test]
    fn traceparent_at_and_past_its_bound() {
        let at = String::from("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-");
        let at = format!("{at}{}", "a".repeat(MAX_TRACEPARENT_BYTES - at.len()));
        assert_eq!(at.len(), MAX_TRACEPARENT_BYTES);
        assert!(valid_traceparent(&at));
        assert!(!valid_traceparent(&format!("{at}a")));
    }

    #[test]
    fn tracestate_is_dropped_alone() {
        let t = TraceContext::parse(PARENT, Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"));
        assert_eq!(
            t.as_ref().and_then(TraceContext::tracestate),
            Some("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")
        );
        for bad in [
            "Congo=x",
            "congo",
            "a=b,a=c",
            "k=v=",
            "k=caf\u{e9}",
            "tenant@SYS=v",
        ] {
            let t = TraceContext::parse(PARENT, Some(bad));
            assert!(t.is_some(), "the traceparent survives {bad:?}");
            assert_eq!(t.and_then(|t| t.tracestate.clone()), None, "{bad:?}");
        }
        assert!(valid_tracestate("t3n@sys=v, ,x=y"));
    }

    #[test]
    fn tracestate_at_and_past_its_bounds() {
        let members: Vec<String> = (0..MAX_TRACESTATE_MEMBERS)
            .map(|i| format!("k{i:02}=v"))
            .collect();
        assert!(valid_tracestate(&members.join(",")));
        assert!(!valid_tracestate(&format!("{},k99=v", members.join(","))));
        let long = format!("k={}", "v".repeat(MAX_TRACESTATE_BYTES - 2));
        assert!(!valid_tracestate(&long), "a value over 256 characters");
        let at = (0..MAX_TRACESTATE_BYTES / 8)
            .map(|i| format!("k{i:03}=vv"))
            .collect::<Vec<_>>()
            .join(",");
        assert!(at.len() < MAX_TRACESTATE_BYTES);
        let past = "a".repeat(MAX_TRACESTATE_BYTES + 1);
        assert!(!valid_tracestate(&past));
    }

    #[test]
    fn baggage_at_and_past_its_bounds() {
        let at: Vec<String> = (0..MAX_BAGGAGE_MEMBERS)
            .map(|i| format!("k{i}=v"))
            .collect();
        assert_eq!(Baggage::parse(&at.join(",")).map(|b| b.len()), Some(64));
        assert!(Baggage::parse(&format!("{},k=v", at.join(","))).is_none());
        let big = format!("k={}", "v".repeat(MAX_BAGGAGE_BYTES - 2));
        assert!(Baggage::parse(&big).is_some());
        assert!(Baggage::parse(&format!("{big}v")).is_none());
    }

    #[test]
    fn baggage_grammar() {
        assert!(Baggage::parse("k=%ZZ").is_none());
        assert_eq!(
            Baggage::parse("k=%FF").and_then(|b| b.get("k").map(str::to_owned)),
            Some("\u{fffd}".to_owned()),
            "not UTF-8: replaced"
        );
        assert!(Baggage::parse("k=\"quoted\"").is_none());
        assert!(Baggage::parse("=v").is_none());
        assert!(Baggage::parse("k=v;;").is_none());
        assert_eq!(
            Baggage::parse("k = v ; p ; q=1").and_then(|b| b.get("k").map(str::to_owned)),
            Some("v".to_owned())
        );
    }

    #[test]
    fn tracestate_comes_from_where_its_traceparent_came_from() {
        let mut headers = HeaderMap::new();
        headers.insert("traceparent", http::HeaderValue::from_static(PARENT));
        headers.append("tracestate", http::HeaderValue::from_static("a=1"));
        headers.append("tracestate", http::HeaderValue::from_static("b=2"));
        // Repeated tracestate headers are one list.
        let (trace, _) = read(&JsonObject::new(), Some(&headers));
        assert_eq!(
            trace.and_then(|t| t.tracestate.clone()).as_deref(),
            Some("a=1,b=2")
        );
        // A `_meta` traceparent does not take the header's tracestate.
        let meta = meta_with(&[("traceparent", PARENT)]);
        let (trace, _) = read(&meta, Some(&headers));
        assert_eq!(trace.map(|t| t.tracestate.is_none()), Some(true));
    }

    #[test]
    fn a_later_versions_tail_is_hexadecimal() {
        let base = "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        assert!(valid_traceparent(&format!("{base}-ab-cd")));
        assert!(!valid_traceparent(&format!("{base}-a\r\nb")));
        assert!(!valid_traceparent(&format!("{base}-\u{e9}")));
    }

    #[test]
    fn meta_wins_and_headers_fill_in() {
        let mut headers = HeaderMap::new();
        headers.insert("traceparent", http::HeaderValue::from_static(PARENT));
        headers.insert("baggage", http::HeaderValue::from_static("from=header"));
        let meta = meta_with(&[("baggage", "from=meta")]);
        let (trace, baggage) = read(&meta, Some(&headers));
        assert_eq!(
            trace.map(|t| t.trace_id().to_owned()).as_deref(),
            Some("0af7651916cd43dd8448eb211c80319c")
        );
        assert_eq!(
            baggage
                .and_then(|b| b.get("from").map(str::to_owned))
                .as_deref(),
            Some("meta")
        );
        // A malformed `_meta` value does not fall back to the header.
        let meta = meta_with(&[("traceparent", "garbage")]);
        assert_eq!(read(&meta, Some(&headers)).0, None);
        // A repeated header is dropped.
        headers.append("traceparent", http::HeaderValue::from_static(PARENT));
        assert_eq!(read(&JsonObject::new(), Some(&headers)).0, None);
        // A non-string `_meta` value is dropped.
        let mut b = JsonObject::builder();
        b.push("traceparent", JsonValue::from(1));
        assert_eq!(read(&b.build(), None).0, None);
    }
}
