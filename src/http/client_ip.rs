//! The client's address: the TCP peer, or, when the peer is a configured trusted proxy,
//! the nearest untrusted address in `X-Forwarded-For` (D3).
//!
//! `X-Forwarded-For` is read right to left: each trusted proxy appends the address it
//! saw, so the rightmost address that is not one of ours is the first hop a client
//! controls. Everything to its left is whatever the client chose to send. Without a
//! trusted peer the header is ignored entirely: anyone can write it.

use std::net::IpAddr;

use actix_web::HttpRequest;
use ipnet::IpNet;

pub fn client_ip(req: &HttpRequest, trusted: &[IpNet]) -> Option<IpAddr> {
    // A dual-stack listener sees IPv4 clients as `::ffff:a.b.c.d`.
    let peer = req.peer_addr()?.ip().to_canonical();
    let forwarded = req
        .headers()
        .get_all("x-forwarded-for")
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",");
    Some(resolve(peer, &forwarded, trusted))
}

fn resolve(peer: IpAddr, forwarded: &str, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let mut client = peer;
    for hop in forwarded
        .rsplit(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
    {
        let Ok(ip) = hop.parse::<IpAddr>() else {
            // An unreadable hop ends what can be believed.
            break;
        };
        client = ip.to_canonical();
        if !is_trusted(&client) {
            break;
        }
    }
    client
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|n| n.parse().unwrap()).collect()
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_the_header_says() {
        assert_eq!(
            resolve(ip("198.51.100.4"), "203.0.113.9", &[]),
            ip("198.51.100.4")
        );
        let trusted = nets(&["10.0.0.0/8"]);
        assert_eq!(
            resolve(ip("198.51.100.4"), "203.0.113.9", &trusted),
            ip("198.51.100.4")
        );
    }

    #[test]
    fn behind_trusted_proxies_the_rightmost_untrusted_hop_is_the_client() {
        let trusted = nets(&["10.0.0.0/8", "127.0.0.1/32"]);
        // The client forged the first entry; the proxy chain added the rest.
        let header = "1.2.3.4, 203.0.113.9, 10.0.0.7";
        assert_eq!(
            resolve(ip("127.0.0.1"), header, &trusted),
            ip("203.0.113.9")
        );
        assert_eq!(resolve(ip("10.0.0.2"), "", &trusted), ip("10.0.0.2"));
        assert_eq!(
            resolve(ip("10.0.0.2"), "10.0.0.5, 10.0.0.6", &trusted),
            ip("10.0.0.5")
        );
        assert_eq!(
            resolve(ip("10.0.0.2"), "203.0.113.9, garbage", &trusted),
            ip("10.0.0.2")
        );
        assert_eq!(
            resolve(ip("10.0.0.2"), "::ffff:203.0.113.9", &trusted),
            ip("203.0.113.9")
        );
    }
}
