//! The DNS-rebinding guard's reading of `Host` and `Origin`: a loopback host, a loopback page's
//! origin, and the host part of an authority. Strict: anything but a host and an optional port
//! of one to five digits matches nothing. The service decides what is allowed; this only reads.

pub(crate) fn is_loopback_host(host: &str) -> bool {
    ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .any(|loopback| loopback.eq_ignore_ascii_case(host))
}

/// `http://` or `https://` followed by a loopback host and an optional port, nothing else: a page
/// served from this machine. A rebinding page's Origin names the attacker's host instead.
pub(crate) fn is_loopback_origin(origin: &str) -> bool {
    let Some(authority) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = host_of(authority);
    let port_ok = authority[host.len()..]
        .strip_prefix(':')
        .is_none_or(|port| {
            !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit())
        });
    (authority.len() == host.len() || port_ok) && is_loopback_host(host)
}

/// The host part of `host[:port]`, keeping IPv6 brackets. A bracketed host may be followed by
/// nothing or by `:` and a port; anything else (`[::1]x`) is not a host, and the whole
/// authority is returned so that it matches no allowed name.
pub(crate) fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        let Some(end) = authority.find(']') else {
            return authority;
        };
        let rest = &authority[end + 1..];
        let port_ok = rest.is_empty() || rest.strip_prefix(':').is_some_and(valid_port);
        return if port_ok {
            &authority[..=end]
        } else {
            authority
        };
    }
    // The last colon, found by a plain scan of the few bytes a Host value has (on every
    // request: cheaper than the general substring search).
    match authority.bytes().rposition(|b| b == b':') {
        Some(colon) if valid_port(&authority[colon + 1..]) => &authority[..colon],
        _ => authority,
    }
}

/// One to five ASCII digits.
fn valid_port(port: &str) -> bool {
    !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `host` is a name [`McpServiceBuilder::allowed_host`](crate::transport::McpServiceBuilder::allowed_host)
/// can match: a `Host` value's host part without a port (the port a request names is not
/// compared), a registered name, an IPv4 address or a bracketed IPv6 address.
///
/// # Examples
///
/// ```
/// use tollgate::transport::is_allowed_host;
///
/// assert!(is_allowed_host("mcp.example.com"));
/// assert!(is_allowed_host("[2001:db8::1]"));
/// assert!(!is_allowed_host("mcp.example.com:8443"));
/// assert!(!is_allowed_host("a/b"));
/// ```
pub fn is_allowed_host(host: &str) -> bool {
    is_authority(host) && host_of(host).len() == host.len()
}

/// Whether `authority` is a `Host` value RFC 9112 accepts: a host (a registered name of RFC 3986
/// `reg-name` characters, an IPv4 address, or a bracketed IPv6 address) and an optional port of
/// one to five digits. No user information, no path, nothing empty.
pub(crate) fn is_authority(authority: &str) -> bool {
    let host = host_of(authority);
    // `host_of` returns the whole value when what follows a host is not a port.
    let port_ok = authority.len() == host.len()
        || authority[host.len()..]
            .strip_prefix(':')
            .is_some_and(valid_port);
    let host_ok = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(ipv6) => {
            !ipv6.is_empty()
                && ipv6
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        }
        None => {
            !host.is_empty()
                && host.bytes().all(|b| {
                    b.is_ascii_alphanumeric()
                        || matches!(
                            b,
                            b'-' | b'.'
                                | b'_'
                                | b'~'
                                | b'%'
                                | b'!'
                                | b'$'
                                | b'&'
                                | b'\''
                                | b'('
                                | b')'
                                | b'*'
                                | b'+'
                                | b','
                                | b';'
                                | b'='
                        )
                })
        }
    };
    port_ok && host_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins() {
        for ok in [
            "http://localhost",
            "http://127.0.0.1:6274",
            "https://[::1]:8443",
            "http://LOCALHOST:1",
        ] {
            assert!(is_loopback_origin(ok), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil",
            "null",
            "file://localhost",
            "http://localhost:",
            "http://localhost/x",
            "http://localhost:80x",
            "http://[::1]evil",
            "http://[::1]:80x",
            "http://[::1]:",
        ] {
            assert!(!is_loopback_origin(bad), "{bad}");
        }
    }

    #[test]
    fn authorities() {
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:8443",
            "mcp.example.com",
        ] {
            assert!(is_authority(ok), "{ok}");
        }
        for bad in [
            "",
            ":80",
            "a@b",
            "a b",
            "[::1]x",
            "[]",
            "localhost:",
            "localhost:123456",
            "a/b",
        ] {
            assert!(!is_authority(bad), "{bad}");
        }
    }

    #[test]
    fn hosts() {
        assert_eq!(host_of("localhost:8080"), "localhost");
        assert_eq!(host_of("[::1]:8080"), "[::1]");
        assert_eq!(host_of("example.com"), "example.com");
        // Nothing but a port may follow a bracketed host.
        assert_eq!(host_of("[::1]x"), "[::1]x");
        assert_eq!(host_of("[::1]:80x"), "[::1]:80x");
        assert_eq!(host_of("[::1]:"), "[::1]:");
        assert!(!is_loopback_host(host_of("[::1]x")));
        assert_eq!(host_of("localhost:"), "localhost:");
        assert_eq!(host_of("localhost:123456"), "localhost:123456");
        assert_eq!(host_of("localhost:65535"), "localhost");
    }
}
