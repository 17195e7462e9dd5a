//! Which IP addresses are not public: the blocks of the IANA IPv4 and IPv6 Special-Purpose
//! Address Registries (RFC 6890 and the RFCs that added to them since), multicast, and the
//! IPv6 space outside global unicast (2000::/3), which the IETF holds in reserve.
//!
//! Every block of the registries counts, whether the registry marks it globally reachable
//! or not: anycast services and AS112 servers are no place a tenant's data should go either.
//! IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:0:0/96`, the NAT64 prefix
//! `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address they carry; the
//! deprecated IPv4-compatible form `::/96` and Teredo (inside `2001::/23`) are refused
//! whole. The tables are written out here (no crate keeps them current and complete, and
//! the standard library's predicates cover only part of them); check them against
//! <https://www.iana.org/assignments/iana-ipv4-special-registry/> and
//! <https://www.iana.org/assignments/iana-ipv6-special-registry/> when those change.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A special-purpose block an address fell in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Special {
    /// The block, as the registry writes it.
    pub block: &'static str,
    /// What it is for.
    pub name: &'static str,
    /// The IPv6 form the IPv4 address was found in, when it was embedded in one.
    pub embedded_in: Option<&'static str>,
}

impl fmt::Display for Special {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.block)?;
        if let Some(form) = self.embedded_in {
            write!(f, ", carried in {form}")?;
        }
        Ok(())
    }
}

/// `(network, prefix length, block, name)`, more specific blocks first.
const V4: &[(u32, u8, &str, &str)] = &[
    (0xffff_ffff, 32, "255.255.255.255/32", "limited broadcast"),
    (0x0000_0000, 8, "0.0.0.0/8", "\"this network\""),
    (0x0a00_0000, 8, "10.0.0.0/8", "private-use"),
    (0x6440_0000, 10, "100.64.0.0/10", "shared address space"),
    (0x7f00_0000, 8, "127.0.0.0/8", "loopback"),
    (0xa9fe_0000, 16, "169.254.0.0/16", "link-local"),
    (0xac10_0000, 12, "172.16.0.0/12", "private-use"),
    (0xc000_0000, 24, "192.0.0.0/24", "IETF protocol assignments"),
    (
        0xc000_0200,
        24,
        "192.0.2.0/24",
        "documentation (TEST-NET-1)",
    ),
    (0xc01f_c400, 24, "192.31.196.0/24", "AS112-v4"),
    (0xc034_c100, 24, "192.52.193.0/24", "AMT"),
    (
        0xc058_6300,
        24,
        "192.88.99.0/24",
        "deprecated 6to4 relay anycast",
    ),
    (0xc0a8_0000, 16, "192.168.0.0/16", "private-use"),
    (
        0xc0af_3000,
        24,
        "192.175.48.0/24",
        "AS112 direct delegation",
    ),
    (0xc612_0000, 15, "198.18.0.0/15", "benchmarking"),
    (
        0xc633_6400,
        24,
        "198.51.100.0/24",
        "documentation (TEST-NET-2)",
    ),
    (
        0xcb00_7100,
        24,
        "203.0.113.0/24",
        "documentation (TEST-NET-3)",
    ),
    (0xe000_0000, 4, "224.0.0.0/4", "multicast"),
    (0xf000_0000, 4, "240.0.0.0/4", "reserved"),
];

/// IPv6 blocks inside global unicast (2000::/3), more specific first.
const V6_IN_GLOBAL: &[(u128, u8, &str, &str)] = &[
    (0x2001_0000 << 96, 32, "2001::/32", "Teredo"),
    (0x2001_0db8 << 96, 32, "2001:db8::/32", "documentation"),
    (
        0x2001_0000 << 96,
        23,
        "2001::/23",
        "IETF protocol assignments",
    ),
    (
        0x2620_004f_8000 << 80,
        48,
        "2620:4f:8000::/48",
        "AS112 direct delegation",
    ),
    (0x3fff << 112, 20, "3fff::/20", "documentation"),
];

/// IPv6 blocks outside global unicast, named for the message; the rest of that space is
/// "reserved by the IETF".
const V6_OUTSIDE: &[(u128, u8, &str, &str)] = &[
    (0, 128, "::/128", "unspecified"),
    (1, 128, "::1/128", "loopback"),
    (0, 96, "::/96", "deprecated IPv4-compatible"),
    (0xffff << 32, 96, "::ffff:0:0/96", "IPv4-mapped"),
    (0xffff << 48, 96, "::ffff:0:0:0/96", "IPv4-translated"),
    (
        0x0064_ff9b_0001 << 80,
        48,
        "64:ff9b:1::/48",
        "local-use IPv4/IPv6 translation",
    ),
    (
        0x0064_ff9b << 96,
        96,
        "64:ff9b::/96",
        "IPv4/IPv6 translation",
    ),
    (0x0100 << 112, 64, "100::/64", "discard-only"),
    (
        0x0100_0000_0000_0001 << 64,
        64,
        "100:0:0:1::/64",
        "dummy prefix",
    ),
    (0x5f00 << 112, 16, "5f00::/16", "SRv6 segment identifiers"),
    (0xfc00 << 112, 7, "fc00::/7", "unique-local"),
    (0xfe80 << 112, 10, "fe80::/10", "link-local"),
    (0xfec0 << 112, 10, "fec0::/10", "deprecated site-local"),
    (0xff00 << 112, 8, "ff00::/8", "multicast"),
];

const RESERVED_V6: Special = Special {
    block: "outside 2000::/3",
    name: "reserved by the IETF",
    embedded_in: None,
};

/// The special-purpose block `ip` is in; `None` for a public address.
pub fn special_purpose(ip: IpAddr) -> Option<Special> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

/// `localhost` or a literal loopback address (bracketed IPv6 and the IPv4-mapped form
/// included): a host on this machine. Names other than `localhost` are not resolved.
pub fn is_this_machine(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

fn special_v4(ip: Ipv4Addr) -> Option<Special> {
    let bits = u32::from(ip);
    V4.iter()
        .find(|(net, len, _, _)| prefix_v4(bits, *len) == *net)
        .map(|(_, _, block, name)| Special {
            block,
            name,
            embedded_in: None,
        })
}

fn special_v6(ip: Ipv6Addr) -> Option<Special> {
    let bits = u128::from(ip);
    let in_table = |table: &'static [(u128, u8, &'static str, &'static str)]| {
        table
            .iter()
            .find(|(net, len, _, _)| prefix_v6(bits, *len) == *net)
            .map(|(_, len, block, name)| (*len, *block, *name))
    };
    // The forms that carry an IPv4 address are as public as that address.
    let low32 = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    if prefix_v6(bits, 96) == 0xffff << 32 {
        return special_v4(low32).map(|s| carried(s, "an IPv4-mapped address (::ffff:0:0/96)"));
    }
    if prefix_v6(bits, 96) == 0x0064_ff9b << 96 {
        return special_v4(low32).map(|s| carried(s, "a NAT64 address (64:ff9b::/96)"));
    }
    if prefix_v6(bits, 16) == 0x2002 << 112 {
        let v4 = Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32);
        return special_v4(v4).map(|s| carried(s, "a 6to4 address (2002::/16)"));
    }
    if prefix_v6(bits, 3) == 0x2000 << 112 {
        return in_table(V6_IN_GLOBAL).map(|(_, block, name)| Special {
            block,
            name,
            embedded_in: None,
        });
    }
    Some(
        in_table(V6_OUTSIDE)
            .map(|(_, block, name)| Special {
                block,
                name,
                embedded_in: None,
            })
            .unwrap_or(RESERVED_V6),
    )
}

fn carried(s: Special, form: &'static str) -> Special {
    Special {
        embedded_in: Some(form),
        ..s
    }
}

fn prefix_v4(bits: u32, len: u8) -> u32 {
    match len {
        0 => 0,
        n => bits & (u32::MAX << (32 - u32::from(n.min(32)))),
    }
}

fn prefix_v6(bits: u128, len: u8) -> u128 {
    match len {
        0 => 0,
        n => bits & (u128::MAX << (128 - u32::from(n.min(128)))),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn this_machine_is_localhost_or_a_loopback_literal() {
        for host in [
            "localhost",
            "LOCALHOST",
            "127.0.0.1",
            "127.8.9.1",
            "::1",
            "[::1]",
            "[::ffff:127.0.0.1]",
        ] {
            assert!(is_this_machine(host), "{host}");
        }
        for host in [
            "localhost.example",
            "10.0.0.1",
            "[::2]",
            "::ffff:10.0.0.1",
            "smtp.firma.sk",
            "",
        ] {
            assert!(!is_this_machine(host), "{host}");
        }
    }

    use super::*;

    fn special(s: &str) -> Option<&'static str> {
        special_purpose(s.parse().expect("ip")).map(|s| s.block)
    }

    #[test]
    fn every_ipv4_block_of_the_registry_is_special() {
        for (ip, block) in [
            ("0.0.0.0", "0.0.0.0/8"),
            ("0.1.2.3", "0.0.0.0/8"),
            ("10.255.0.1", "10.0.0.0/8"),
            ("100.64.0.1", "100.64.0.0/10"),
            ("100.127.255.255", "100.64.0.0/10"),
            ("127.0.0.1", "127.0.0.0/8"),
            ("127.255.255.254", "127.0.0.0/8"),
            ("169.254.169.254", "169.254.0.0/16"),
            ("172.16.0.1", "172.16.0.0/12"),
            ("172.31.255.255", "172.16.0.0/12"),
            ("192.0.0.9", "192.0.0.0/24"),
            ("192.0.0.170", "192.0.0.0/24"),
            ("192.0.2.1", "192.0.2.0/24"),
            ("192.31.196.1", "192.31.196.0/24"),
            ("192.52.193.1", "192.52.193.0/24"),
            ("192.88.99.1", "192.88.99.0/24"),
            ("192.168.1.1", "192.168.0.0/16"),
            ("192.175.48.6", "192.175.48.0/24"),
            ("198.18.0.1", "198.18.0.0/15"),
            ("198.19.255.254", "198.18.0.0/15"),
            ("198.51.100.7", "198.51.100.0/24"),
            ("203.0.113.7", "203.0.113.0/24"),
            ("224.0.0.251", "224.0.0.0/4"),
            ("239.255.255.250", "224.0.0.0/4"),
            ("240.0.0.1", "240.0.0.0/4"),
            ("255.255.255.254", "240.0.0.0/4"),
            ("255.255.255.255", "255.255.255.255/32"),
        ] {
            assert_eq!(special(ip), Some(block), "{ip}");
        }
    }

    #[test]
    fn public_ipv4_addresses_are_not_special() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.215.14",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.1",
            "192.0.3.1",
            "192.169.0.1",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
        ] {
            assert_eq!(special(ip), None, "{ip}");
        }
    }

    #[test]
    fn every_ipv6_block_of_the_registry_is_special() {
        for (ip, block) in [
            ("::", "::/128"),
            ("::1", "::1/128"),
            ("::127.0.0.1", "::/96"),
            ("::a9fe:a9fe", "::/96"),
            ("::8.8.8.8", "::/96"),
            ("::ffff:0:808:808", "::ffff:0:0:0/96"),
            ("64:ff9b:1::a9fe:a9fe", "64:ff9b:1::/48"),
            ("64:ff9b:1::808:808", "64:ff9b:1::/48"),
            ("100::1", "100::/64"),
            ("100:0:0:1::1", "100:0:0:1::/64"),
            ("2001::1", "2001::/32"),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::/32"),
            ("2001:1::1", "2001::/23"),
            ("2001:2::1", "2001::/23"),
            ("2001:20::1", "2001::/23"),
            ("2001:1ff::1", "2001::/23"),
            ("2001:db8::1", "2001:db8::/32"),
            ("2620:4f:8000::1", "2620:4f:8000::/48"),
            ("3fff::1", "3fff::/20"),
            ("3fff:fff::1", "3fff::/20"),
            ("5f00::1", "5f00::/16"),
            ("fc00::1", "fc00::/7"),
            ("fd12:3456::1", "fc00::/7"),
            ("fe80::1", "fe80::/10"),
            ("febf::1", "fe80::/10"),
            ("fec0::1", "fec0::/10"),
            ("ff02::1", "ff00::/8"),
            ("4000::1", "outside 2000::/3"),
            ("200::1", "outside 2000::/3"),
        ] {
            assert_eq!(special(ip), Some(block), "{ip}");
        }
    }

    #[test]
    fn ipv6_forms_carrying_ipv4_are_judged_by_the_ipv4_address() {
        for (ip, block, form) in [
            ("::ffff:127.0.0.1", "127.0.0.0/8", "IPv4-mapped"),
            ("::ffff:a9fe:a9fe", "169.254.0.0/16", "IPv4-mapped"),
            ("64:ff9b::a9fe:a9fe", "169.254.0.0/16", "NAT64"),
            ("64:ff9b::10.0.0.1", "10.0.0.0/8", "NAT64"),
            ("2002:a9fe:a9fe::1", "169.254.0.0/16", "6to4"),
            ("2002:7f00:1::", "127.0.0.0/8", "6to4"),
            ("2002:c0a8:101:1::1", "192.168.0.0/16", "6to4"),
        ] {
            let s = special_purpose(ip.parse().expect("ip")).expect(ip);
            assert_eq!(s.block, block, "{ip}");
            assert!(s.embedded_in.is_some_and(|f| f.contains(form)), "{ip}: {s}");
        }
        for ip in [
            "::ffff:93.184.215.14",
            "64:ff9b::5db8:d70e",
            "2002:5db8:d70e::1",
        ] {
            assert_eq!(special(ip), None, "{ip}");
        }
    }

    #[test]
    fn public_ipv6_addresses_are_not_special() {
        for ip in [
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "2001:200::1",
            "2001:4860:4860::8888",
            "2620:4f:8001::1",
            "3ffe::1",
            "3fff:1000::1",
        ] {
            assert_eq!(special(ip), None, "{ip}");
        }
    }

    #[test]
    fn the_message_names_the_block_and_the_form() {
        let s = special_purpose("64:ff9b::a9fe:a9fe".parse().expect("ip")).expect("special");
        assert_eq!(
            s.to_string(),
            "link-local 169.254.0.0/16, carried in a NAT64 address (64:ff9b::/96)"
        );
    }
}
