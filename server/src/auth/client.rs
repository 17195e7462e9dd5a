//! The client address a request is counted under: the connection's peer, or, when the peer
//! is a configured trusted proxy, the address that proxy reports in `X-Forwarded-For`.
//! The header is never believed from anyone else: any client can send it.

use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;
use ipnet::IpNet;

pub static X_FORWARDED_FOR: axum::http::HeaderName =
    axum::http::HeaderName::from_static("x-forwarded-for");

/// The client of a request that arrived from `peer`. Behind trusted proxies, the header's
/// hops are read from the right (each proxy appends the address it received from): the
/// first hop that is not itself a trusted proxy is the client. An unreadable hop ends the
/// walk at the proxy that reported it.
pub fn client_address(
    peer: Option<IpAddr>,
    headers: &HeaderMap,
    trusted: &[IpNet],
) -> Option<IpAddr> {
    let peer = peer.map(unmapped)?;
    if !is_trusted(peer, trusted) {
        return Some(peer);
    }
    let hops: Vec<&str> = headers
        .get_all(&X_FORWARDED_FOR)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    let mut client = peer;
    for hop in hops.iter().rev() {
        let Some(ip) = parse_hop(hop) else {
            break;
        };
        client = ip;
        if !is_trusted(ip, trusted) {
            break;
        }
    }
    Some(client)
}

fn is_trusted(ip: IpAddr, trusted: &[IpNet]) -> bool {
    trusted.iter().any(|net| net.contains(&ip))
}

/// A hop as proxies write it: an address, or an address with a port (`[v6]:port` too).
fn parse_hop(hop: &str) -> Option<IpAddr> {
    hop.parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .map(unmapped)
}

/// IPv4-mapped IPv6 addresses (a dual-stack listener's view of IPv4 clients) as IPv4.
fn unmapped(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    fn forwarded(values: &[&'static str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(&X_FORWARDED_FOR, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn the_header_counts_only_from_a_trusted_proxy() {
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().expect("net")];
        let h = forwarded(&["203.0.113.9"]);
        // Not from the proxy: the header is ignored.
        assert_eq!(
            client_address(Some(ip("198.51.100.1")), &h, &trusted),
            Some(ip("198.51.100.1"))
        );
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &h, &[]),
            Some(ip("10.0.0.2"))
        );
        // From the proxy: the address it reports.
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &h, &trusted),
            Some(ip("203.0.113.9"))
        );
    }

    #[test]
    fn hops_are_read_from_the_right_past_trusted_proxies() {
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().expect("net")];
        // The client wrote a fake first hop; the proxies appended the real ones.
        let h = forwarded(&["1.1.1.1, 203.0.113.9", "10.1.1.1"]);
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &h, &trusted),
            Some(ip("203.0.113.9"))
        );
        let h = forwarded(&["[2001:db8::1]:4711"]);
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &h, &trusted),
            Some(ip("2001:db8::1"))
        );
        // An unreadable hop: the proxy that reported it.
        let h = forwarded(&["203.0.113.9, garbage, 10.1.1.1"]);
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &h, &trusted),
            Some(ip("10.1.1.1"))
        );
        // No header: the proxy itself.
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &HeaderMap::new(), &trusted),
            Some(ip("10.0.0.2"))
        );
        assert_eq!(
            client_address(Some(ip("::ffff:192.0.2.1")), &HeaderMap::new(), &[]),
            Some(ip("192.0.2.1"))
        );
        assert_eq!(client_address(None, &HeaderMap::new(), &trusted), None);
    }
}
