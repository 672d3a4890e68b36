//! Where a webhook may send (D22): `https` URLs of public hosts only, unless
//! `WEBHOOK_ALLOW_PRIVATE=1` (tests, private networks) also allows `http` and private or
//! loopback addresses. A URL is checked when it is registered; the address is checked
//! again on every connection, against the address actually connected to (the sender's
//! resolver keeps only public ones), so a name that later resolves to a private address
//! (DNS rebinding) reaches nothing.
//!
//! An IPv6 address must lie in the global unicast space (`2000::/3`, D27) and outside
//! its special blocks; an IPv4 address carried in IPv6 (mapped, or NAT64's well-known
//! prefix) is judged as the IPv4 address it carries, and every other embedding
//! (IPv4-compatible `::a.b.c.d`, the translated `::ffff:0:a.b.c.d`, site-local
//! `fec0::/10`) lies outside the global space and is refused.
//!
//! Pure functions: nothing here resolves a name or opens a connection.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;
use url::{Host, Url};

use crate::ApiError;

/// The longest URL an endpoint may have.
pub const MAX_URL_CHARS: usize = 2048;

/// Addresses that are not on the public internet (RFC 6890 and its successors); for
/// IPv6, the special blocks inside [`GLOBAL_UNICAST`].
const NOT_PUBLIC: [&str; 19] = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.0.2.0/24",
    "192.88.99.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",
    "240.0.0.0/4",
    "2001::/23",
    "2001:db8::/32",
    "2002::/16",
    "3fff::/20",
];

/// IPv6's global unicast space: every other IPv6 address (loopback, unspecified,
/// unique-local, link- and site-local, multicast, the embeddings of IPv4 other than
/// those [`carried_v4`] reads) is not public.
const GLOBAL_UNICAST: &str = "2000::/3";

/// Whether `ip` is a public address. An IPv4 address carried in IPv6 (mapped, or
/// NAT64's well-known prefix) is judged as the IPv4 address it carries.
pub fn is_public(ip: IpAddr) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => match carried_v4(v6) {
            Some(v4) => IpAddr::V4(v4),
            None if !network(GLOBAL_UNICAST).contains(&IpAddr::V6(v6)) => return false,
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    !NOT_PUBLIC.iter().any(|net| network(net).contains(&ip))
}

fn network(text: &str) -> IpNet {
    text.parse().expect("the table's networks are valid")
}

fn carried_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = v6.segments();
    // 64:ff9b::/96, the NAT64 well-known prefix.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [a, b] = s[6].to_be_bytes();
        let [c, d] = s[7].to_be_bytes();
        return Some(Ipv4Addr::new(a, b, c, d));
    }
    None
}

/// An endpoint's URL as registered: absolute, `https` (or `http` when private
/// destinations are allowed), with a host, without user name, password or fragment, at
/// most [`MAX_URL_CHARS`] as given and as stored (normalised: a host in punycode, a
/// path percent-encoded, which can be several times longer); a host given as an
/// address must be public unless allowed. The error names the field `url`.
pub fn check_url(text: &str, allow_private: bool) -> Result<Url, ApiError> {
    let refuse = |why: &str| Err(ApiError::invalid(format!("field 'url' {why}")));
    if text.chars().count() > MAX_URL_CHARS {
        return refuse(&format!("must be at most {MAX_URL_CHARS} characters"));
    }
    let Ok(url) = Url::parse(text) else {
        return refuse("must be an absolute URL such as https://example.com/hooks/iq");
    };
    if url.as_str().len() > MAX_URL_CHARS {
        return refuse(&format!(
            "must be at most {MAX_URL_CHARS} characters once encoded (non-ASCII characters \
             take up to 12 each)"
        ));
    }
    match url.scheme() {
        "https" => {}
        "http" if allow_private => {}
        "http" => {
            return refuse(
                "must be an https URL (http is allowed only on a private network, with the \
                 service started with WEBHOOK_ALLOW_PRIVATE=1)",
            )
        }
        _ => return refuse("must be an https URL"),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return refuse("must not carry a user name or password: put a token in the path");
    }
    if url.fragment().is_some() {
        return refuse("must not have a fragment (#...), which is never sent");
    }
    let address = match url.host() {
        None => return refuse("must name a host"),
        Some(Host::Domain(_)) => None,
        Some(Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
        Some(Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
    };
    if let Some(ip) = address {
        if !allow_private && !is_public(ip) {
            return refuse(
                "must reach a public address (a receiver on a private network needs the \
                 service started with WEBHOOK_ALLOW_PRIVATE=1)",
            );
        }
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_loopback_and_special_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "::127.0.0.1",
            "::8.8.8.8",
            "::ffff:0:7f00:1",
            "fec0::1",
            "2001:db8::1",
            "100::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "2a00:1450:4001:81c::200e",
        ] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn urls_follow_the_rules() {
        assert!(check_url("https://hooks.example.com/iq?x=1", false).is_ok());
        for (url, why) in [
            ("http://hooks.example.com/", "https"),
            ("ftp://hooks.example.com/", "https"),
            ("hooks.example.com/iq", "absolute"),
            ("https://user:pw@hooks.example.com/", "user name"),
            ("https://hooks.example.com/#x", "fragment"),
            ("https://127.0.0.1/", "public"),
            ("https://[::1]:8443/", "public"),
            ("https://10.0.0.1/", "public"),
        ] {
            let error = check_url(url, false).unwrap_err();
            assert!(error.message.contains(why), "{url}: {}", error.message);
        }
        assert!(check_url("http://127.0.0.1:9000/hook", true).is_ok());
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_CHARS));
        assert!(check_url(&long, false).is_err());
        // Within the bound as typed, four times over it once percent-encoded.
        let accented = format!("https://example.com/{}", "é".repeat(400));
        let error = check_url(&accented, false).unwrap_err();
        assert!(error.message.contains("once encoded"), "{}", error.message);
        for bracketed in [
            "https://[::127.0.0.1]/",
            "https://[::ffff:0:7f00:1]/",
            "https://[fec0::1]/",
        ] {
            assert!(check_url(bracketed, false).is_err(), "{bracketed}");
        }
    }

    proptest::proptest! {
        /// Any text is a URL the rules accept or a refusal naming the field, never a panic.
        #[test]
        fn any_text_is_checked_without_a_panic(text in "\\PC{0,80}", private in proptest::bool::ANY) {
            if let Err(error) = check_url(&text, private) {
                proptest::prop_assert!(error.message.starts_with("field 'url'"));
            }
        }
    }
}
