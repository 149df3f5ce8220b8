//! The client's address behind trusted reverse proxies: a request whose connection comes from a
//! trusted proxy is taken to come from the address that proxy reports, in `Forwarded` (RFC 7239
//! `for=`) or, without one, `X-Forwarded-For`. The list is read from the right (the hop nearest
//! this server) past every trusted proxy; the first address that is not one is the client. A
//! value that is not an address (`unknown`, an obfuscated identifier, garbage) stops the walk:
//! the request is then taken to come from the last trusted hop, so a client can never claim an
//! address by writing the header itself.
//!
//! Knows HTTP headers and addresses; nothing of MCP.

use std::net::{IpAddr, SocketAddr};

use http::HeaderMap;
use ipnet::IpNet;

/// The proxies whose forwarding headers are believed.
#[derive(Clone, Debug, Default)]
pub(crate) struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    pub(crate) fn push(&mut self, net: IpNet) {
        self.0.push(net);
    }

    /// Whether `ip` is a trusted proxy.
    pub(crate) fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The request's client: `peer`, or when `peer` is a trusted proxy, the address it forwarded
    /// for (with port 0 unless `Forwarded` named one).
    #[inline]
    pub(crate) fn client(&self, peer: SocketAddr, headers: &HeaderMap) -> SocketAddr {
        if self.0.is_empty() {
            return peer;
        }
        self.forwarded(peer, headers)
    }

    /// [`client`](Self::client) with proxies to trust.
    fn forwarded(&self, peer: SocketAddr, headers: &HeaderMap) -> SocketAddr {
        if !self.trusts(peer.ip()) {
            return peer;
        }
        let forwarded = headers.get_all(http::header::FORWARDED);
        let hops: Vec<Option<SocketAddr>> = if forwarded.iter().next().is_some() {
            forwarded
                .iter()
                .flat_map(|v| v.to_str().map_or(vec![None], forwarded_for))
                .collect()
        } else {
            headers
                .get_all("x-forwarded-for")
                .iter()
                .flat_map(|v| v.to_str().map_or(vec![None], forwarded_list))
                .collect()
        };
        let mut client = peer;
        for hop in hops.into_iter().rev() {
            let Some(hop) = hop else {
                break;
            };
            client = hop;
            if !self.trusts(hop.ip()) {
                break;
            }
        }
        client
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

/// One hop's address: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`, `[2001:db8::1]:4711`.
fn address(text: &str) -> Option<SocketAddr> {
    let text = text.trim();
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(SocketAddr::new(canonical(ip), 0));
    }
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Some(SocketAddr::new(canonical(addr.ip()), addr.port()));
    }
    let bracketed = text.strip_prefix('[')?.strip_suffix(']')?;
    bracketed
        .parse::<IpAddr>()
        .ok()
        .map(|ip| SocketAddr::new(canonical(ip), 0))
}

/// `X-Forwarded-For`'s comma-separated addresses, in order.
fn forwarded_list(value: &str) -> Vec<Option<SocketAddr>> {
    value.split(',').map(address).collect()
}

/// `Forwarded`'s elements' `for=` addresses, in order (an element without one, or whose node is
/// not an address, is `None`).
fn forwarded_for(value: &str) -> Vec<Option<SocketAddr>> {
    value
        .split(',')
        .map(|element| {
            element.split(';').find_map(|pair| {
                let (name, node) = pair.split_once('=')?;
                if !name.trim().eq_ignore_ascii_case("for") {
                    return None;
                }
                let node = node.trim();
                let node = node
                    .strip_prefix('"')
                    .and_then(|n| n.strip_suffix('"'))
                    .unwrap_or(node);
                address(node)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn proxies(nets: &[&str]) -> TrustedProxies {
        let mut trusted = TrustedProxies::default();
        for net in nets {
            trusted.push(net.parse().unwrap());
        }
        trusted
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    fn peer(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_claims() {
        let trusted = proxies(&["10.0.0.0/8"]);
        let claims = headers(&[("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(
            trusted.client(peer("198.51.100.7:5000"), &claims),
            peer("198.51.100.7:5000")
        );
        let none = TrustedProxies::default();
        assert_eq!(
            none.client(peer("10.0.0.1:5000"), &claims),
            peer("10.0.0.1:5000")
        );
    }

    #[test]
    fn the_first_untrusted_hop_from_the_right_is_the_client() {
        let trusted = proxies(&["10.0.0.0/8", "127.0.0.1/32"]);
        // The client wrote a spoofed first entry; the proxies appended the real ones.
        let chain = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9, 10.1.1.1")]);
        assert_eq!(
            trusted.client(peer("127.0.0.1:40000"), &chain).ip(),
            "203.0.113.9".parse::<IpAddr>().unwrap()
        );
        // Split over two fields, the same list.
        let split = headers(&[
            ("x-forwarded-for", "1.2.3.4"),
            ("x-forwarded-for", "203.0.113.9, 10.1.1.1"),
        ]);
        assert_eq!(
            trusted.client(peer("127.0.0.1:40000"), &split).ip(),
            "203.0.113.9".parse::<IpAddr>().unwrap()
        );
    }

    #[test]
    fn garbage_stops_the_walk_at_the_last_trusted_hop() {
        let trusted = proxies(&["10.0.0.0/8", "127.0.0.1/32"]);
        let chain = headers(&[("x-forwarded-for", "203.0.113.9, not-an-address, 10.1.1.1")]);
        assert_eq!(
            trusted.client(peer("127.0.0.1:40000"), &chain).ip(),
            "10.1.1.1".parse::<IpAddr>().unwrap()
        );
        let empty = headers(&[]);
        assert_eq!(
            trusted.client(peer("127.0.0.1:40000"), &empty),
            peer("127.0.0.1:40000")
        );
    }

    #[test]
    fn forwarded_is_preferred_and_read_with_ports_and_brackets() {
        let trusted = proxies(&["127.0.0.1/32"]);
        let both = headers(&[
            (
                "forwarded",
                r#"for=192.0.2.60;proto=http, For="[2001:db8:cafe::17]:4711""#,
            ),
            ("x-forwarded-for", "198.51.100.1"),
        ]);
        assert_eq!(
            trusted.client(peer("127.0.0.1:1"), &both),
            peer("[2001:db8:cafe::17]:4711")
        );
        let unknown = headers(&[("forwarded", "for=unknown")]);
        assert_eq!(
            trusted.client(peer("127.0.0.1:1"), &unknown),
            peer("127.0.0.1:1")
        );
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(trusted.trusts(mapped));
    }
}
