//! Where webhooks may be sent: never into the server's own networks (loopback, private,
//! link-local, cloud metadata services, ...) unless the operator allows a network by name.
//!
//! Checked twice. At registration the URL's host is checked as written: a literal address
//! against every special-purpose block (`crate::special_ip`, in whatever form the URL spells
//! it: the URL parser turns `0x7f.1` and `2130706433` into `127.0.0.1`), a name against the
//! names that never lead to the public internet (`localhost`, `*.localhost`, `.local`,
//! `.internal`, single labels, trailing dots, ...). At delivery the check is made again, and
//! names are resolved by [`CheckedResolver`], which the HTTP client uses for every
//! connection: all the addresses a name resolves to are checked, and the client connects
//! only to those, so a name cannot resolve to a public address when checked and to a
//! private one when connected (DNS rebinding). Redirects are not followed and no proxy is
//! used, so no other host is reached.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hickory_resolver::config::{NameServerConfig, ResolverConfig};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::xfer::Protocol;
use hickory_resolver::{ResolveError, TokioResolver};
use ipnet::IpNet;

use crate::settings::Mode;
use crate::special_ip::{special_purpose, Special};

/// Longest endpoint URL accepted.
pub const MAX_URL_LEN: usize = 2000;

/// Top-level names that never lead to the public internet: the special-use names of RFC
/// 6761 and later (`local` for mDNS, `home.arpa`, `internal` reserved by ICANN for private
/// use, `alt`, `onion`), the reverse-mapping zones under `arpa`, and the names networks
/// commonly use inside (`lan`, `corp`, ...), which ICANN will not delegate.
const INTERNAL_TLDS: [&str; 14] = [
    "local",
    "internal",
    "localdomain",
    "lan",
    "home",
    "corp",
    "intranet",
    "private",
    "test",
    "invalid",
    "example",
    "onion",
    "alt",
    "arpa",
];

/// Why an endpoint URL is refused at registration.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("`url` is not an absolute URL: {0}")]
    Malformed(String),
    #[error("`url` is longer than {MAX_URL_LEN} characters")]
    TooLong,
    #[error("`url` must use https (http is accepted only for loopback hosts in the sandbox, or when `webhooks.allow_http` is set)")]
    NotHttps,
    #[error("`url` must not carry credentials or a fragment")]
    Credentials,
    #[error("`url` names {0}: webhooks are not sent to loopback, private or other special-purpose addresses (the operator may allow a network with `webhooks.allowed_networks`)")]
    PrivateAddress(String),
    #[error("`url` names the host `{host}`, which {reason}: webhooks go to public hosts only")]
    HostNotAllowed { host: String, reason: &'static str },
}

/// Why a delivery was not sent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("{ip} is a special-purpose address ({special})")]
    Address { ip: IpAddr, special: Special },
    #[error("the host `{host}` {reason}")]
    Name { host: String, reason: &'static str },
    #[error("`{host}` resolves to {ip}, a special-purpose address ({special})")]
    Resolved {
        host: String,
        ip: IpAddr,
        special: Special,
    },
    #[error("`{host}` resolves to no address")]
    NoAddress { host: String },
    #[error("the URL cannot be read: {0}")]
    Url(String),
}

/// The rules for endpoint URLs and the addresses behind them.
#[derive(Clone, Debug)]
pub struct TargetPolicy {
    mode: Mode,
    allow_http: bool,
    /// Special-purpose networks allowed all the same.
    allowed: Vec<IpNet>,
}

impl TargetPolicy {
    pub fn new(mode: Mode, allow_http: bool, allowed: Vec<IpNet>) -> TargetPolicy {
        TargetPolicy {
            mode,
            allow_http,
            allowed,
        }
    }

    pub fn from_config(mode: Mode, config: &super::WebhooksConfig) -> TargetPolicy {
        TargetPolicy::new(mode, config.allow_http, config.allowed_networks())
    }

    /// The sandbox's local-development exception: a URL that names this machine outright —
    /// the host `localhost` or a literal loopback address — may be called in the sandbox,
    /// over `http://` too, so a developer's receiver works. Nothing else reaches loopback:
    /// not `*.localhost`, not a DNS name that resolves there (on a hosted sandbox that
    /// would be the server's own machine).
    fn local_development(&self, host: &str) -> bool {
        self.mode == Mode::Sandbox && crate::special_ip::is_this_machine(host)
    }

    /// Check an endpoint URL at registration; the URL as it will be stored. `https://`
    /// always; `http://` when `allow_http` is set, or to this machine in the sandbox
    /// (local development). Signed payloads in clear over the internet would expose
    /// invoice data.
    pub fn check_url(&self, raw: &str) -> Result<String, UrlError> {
        let raw = raw.trim();
        if raw.len() > MAX_URL_LEN {
            return Err(UrlError::TooLong);
        }
        let url = reqwest::Url::parse(raw).map_err(|e| UrlError::Malformed(e.to_string()))?;
        if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
            return Err(UrlError::Credentials);
        }
        let host = url.host_str().unwrap_or_default();
        if host.is_empty() {
            return Err(UrlError::Malformed("no host".into()));
        }
        let local = self.local_development(host);
        match literal(host) {
            _ if local => {}
            Some(ip) => self
                .check_ip(ip)
                .map_err(|special| UrlError::PrivateAddress(format!("{ip} ({special})")))?,
            None => self
                .check_name(host)
                .map_err(|reason| UrlError::HostNotAllowed {
                    host: host.to_string(),
                    reason,
                })?,
        }
        match url.scheme() {
            "https" => {}
            "http" if self.allow_http || local => {}
            _ => return Err(UrlError::NotHttps),
        }
        Ok(url.to_string())
    }

    /// Check a stored URL before delivering to it (the rules may have changed since it was
    /// registered). Host names are then resolved and checked by [`CheckedResolver`].
    pub fn check_delivery(&self, url: &str) -> Result<(), Refused> {
        let url = reqwest::Url::parse(url).map_err(|e| Refused::Url(e.to_string()))?;
        let host = url.host_str().unwrap_or_default();
        if self.local_development(host) {
            return Ok(());
        }
        match literal(host) {
            Some(ip) => self
                .check_ip(ip)
                .map_err(|special| Refused::Address { ip, special }),
            None => self.check_name(host).map_err(|reason| Refused::Name {
                host: host.to_string(),
                reason,
            }),
        }
    }

    /// An address may be called when it is public or in an allowed network.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Special> {
        let Some(special) = special_purpose(ip) else {
            return Ok(());
        };
        let canonical = ip.to_canonical();
        if self
            .allowed
            .iter()
            .any(|net| net.contains(&ip) || net.contains(&canonical))
        {
            return Ok(());
        }
        Err(special)
    }

    /// A host name may be called unless it can only lead inside: `localhost` and its
    /// subdomains never (the sandbox's exact `localhost` is handled before), other internal
    /// names only when some network is allowed (their addresses are checked at delivery all
    /// the same).
    pub fn check_name(&self, host: &str) -> Result<(), &'static str> {
        let host = host.to_ascii_lowercase();
        if host.ends_with('.') {
            return Err("ends with a dot (write the name without it)");
        }
        let Some((_, tld)) = host.rsplit_once('.') else {
            if host == "localhost" {
                return Err("is a name of this machine (localhost)");
            }
            return Err("is a single label, which only a local resolver can answer");
        };
        if tld == "localhost" {
            return Err("is a name of this machine (localhost)");
        }
        if INTERNAL_TLDS.contains(&tld) && self.allowed.is_empty() {
            return Err("is under a top-level name used only inside networks");
        }
        Ok(())
    }
}

/// A literal address in a URL's host (`[...]` around IPv6).
fn literal(host: &str) -> Option<IpAddr> {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// The HTTP client's resolver for webhook deliveries: resolves a host name and hands the
/// client only addresses that passed the policy, or refuses the name when any address it
/// resolves to does not (a name that mixes public and private addresses is not trusted).
pub struct CheckedResolver {
    resolver: TokioResolver,
    policy: Arc<TargetPolicy>,
}

impl CheckedResolver {
    /// Ask `dns_server` (UDP, then TCP), or the system's resolvers when None.
    pub fn new(
        dns_server: Option<SocketAddr>,
        timeout: Duration,
        policy: Arc<TargetPolicy>,
    ) -> Result<CheckedResolver, ResolveError> {
        let mut builder = match dns_server {
            Some(addr) => {
                let mut config = ResolverConfig::new();
                config.add_name_server(NameServerConfig::new(addr, Protocol::Udp));
                config.add_name_server(NameServerConfig::new(addr, Protocol::Tcp));
                TokioResolver::builder_with_config(config, TokioConnectionProvider::default())
            }
            None => TokioResolver::builder_tokio()?,
        };
        builder.options_mut().timeout = timeout;
        Ok(CheckedResolver {
            resolver: builder.build(),
            policy,
        })
    }

    /// The checked addresses of `host`.
    pub async fn addresses(&self, host: &str) -> Result<Vec<IpAddr>, ResolveFailure> {
        if self.policy.local_development(host) {
            // `localhost` is this machine by definition (RFC 6761); no resolver is asked.
            return Ok(vec![
                IpAddr::from([127, 0, 0, 1]),
                IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]),
            ]);
        }
        self.policy
            .check_name(host)
            .map_err(|reason| Refused::Name {
                host: host.to_string(),
                reason,
            })?;
        // Fully qualified: no search domain is tried (single labels are refused above).
        let lookup = self
            .resolver
            .lookup_ip(format!("{host}."))
            .await
            .map_err(ResolveFailure::Dns)?;
        let addresses: Vec<IpAddr> = lookup.iter().collect();
        if addresses.is_empty() {
            return Err(Refused::NoAddress {
                host: host.to_string(),
            }
            .into());
        }
        for ip in &addresses {
            self.policy
                .check_ip(*ip)
                .map_err(|special| Refused::Resolved {
                    host: host.to_string(),
                    ip: *ip,
                    special,
                })?;
        }
        Ok(addresses)
    }
}

/// A name that could not be turned into addresses to call.
#[derive(Debug, thiserror::Error)]
pub enum ResolveFailure {
    #[error("refused: {0}")]
    Refused(#[from] Refused),
    #[error("DNS: {0}")]
    Dns(ResolveError),
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let me = CheckedResolver {
            resolver: self.resolver.clone(),
            policy: self.policy.clone(),
        };
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addresses = me.addresses(&host).await?;
            // The port is the URL's; the client sets it.
            let addrs: reqwest::dns::Addrs =
                Box::new(addresses.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// The refusal inside an HTTP client error, if the resolver refused the name.
pub fn refusal_in<'e>(error: &'e (dyn std::error::Error + 'static)) -> Option<&'e Refused> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(ResolveFailure::Refused(r)) = e.downcast_ref::<ResolveFailure>() {
            return Some(r);
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn production() -> TargetPolicy {
        TargetPolicy::new(Mode::Production, false, Vec::new())
    }

    fn sandbox() -> TargetPolicy {
        TargetPolicy::from_config(Mode::Sandbox, &super::super::WebhooksConfig::default())
    }

    #[test]
    fn urls_need_https_except_loopback_in_the_sandbox() {
        let ok = |p: &TargetPolicy, u: &str| p.check_url(u).is_ok();
        let http = TargetPolicy::new(Mode::Production, true, Vec::new());
        assert!(ok(&production(), "https://erp.example.com/hooks"));
        assert!(!ok(&production(), "http://erp.example.com/hooks"));
        assert!(ok(&http, "http://erp.example.com/hooks"));
        assert!(!ok(&production(), "http://127.0.0.1:9000/h"));
        assert!(ok(&sandbox(), "http://127.0.0.1:9000/h"));
        assert!(ok(&sandbox(), "http://[::1]:9000/h"));
        assert!(ok(&sandbox(), "http://localhost/h"));
        assert!(!ok(&sandbox(), "http://10.0.0.1/h"));
        assert!(!ok(&sandbox(), "https://10.0.0.1/h"));
        assert!(!ok(&http, "ftp://x.example.com/h"));
        assert!(!ok(&production(), "https://u:p@x.example.com/h"));
        assert!(!ok(&sandbox(), "not a url"));
        assert!(ok(&production(), "https://93.184.215.14/h"));
    }

    #[test]
    fn every_form_of_an_internal_target_is_refused() {
        for url in [
            "https://127.0.0.1/h",
            "https://0x7f.1/h",
            "https://2130706433/h",
            "https://0.1.2.3/h",
            "https://10.1.2.3/h",
            "https://169.254.169.254/latest",
            "https://[::1]/h",
            "https://[::127.0.0.1]/h",
            "https://[::ffff:10.0.0.1]/h",
            "https://[::a9fe:a9fe]/h",
            "https://[64:ff9b::a9fe:a9fe]/h",
            "https://[2002:a9fe:a9fe::]/h",
            "https://198.18.0.1/h",
            "https://240.0.0.1/h",
            "https://[fd00::1]/h",
        ] {
            let e = production().check_url(url).expect_err(url);
            assert!(matches!(e, UrlError::PrivateAddress(_)), "{url}: {e}");
            assert!(e.to_string().contains("private"), "{e}");
        }
        for url in [
            "https://localhost/h",
            "https://localhost./h",
            "https://foo.localhost/h",
            "https://printer.local/h",
            "https://metadata.google.internal/h",
            "https://nas.lan/h",
            "https://router.home.arpa/h",
            "https://1.0.0.10.in-addr.arpa/h",
            "https://intranet/h",
            "https://erp.example.com./h",
        ] {
            let e = production().check_url(url).expect_err(url);
            assert!(matches!(e, UrlError::HostNotAllowed { .. }), "{url}: {e}");
        }
    }

    #[test]
    fn allowed_networks_lift_the_refusal_for_their_addresses_only() {
        let intranet = TargetPolicy::new(
            Mode::Production,
            false,
            vec!["10.20.0.0/16".parse().expect("net")],
        );
        assert!(intranet.check_url("https://10.20.1.2/h").is_ok());
        assert!(intranet.check_url("https://[::ffff:10.20.1.2]/h").is_ok());
        assert!(intranet.check_url("https://10.21.1.2/h").is_err());
        assert!(intranet.check_url("https://erp.corp.internal/h").is_ok());
        assert!(intranet.check_url("https://localhost/h").is_err());
        assert_eq!(
            intranet
                .check_ip("10.21.0.1".parse().expect("ip"))
                .map_err(|s| s.block),
            Err("10.0.0.0/8")
        );
        // The sandbox's local-development exception covers `localhost` and literal
        // loopback addresses named in the URL, nothing that merely leads there.
        assert!(sandbox().check_url("https://localhost/h").is_ok());
        assert!(sandbox().check_url("https://127.0.0.2/h").is_ok());
        for url in [
            "https://foo.localhost/h",
            "https://localhost./h",
            "https://[::127.0.0.1]/h",
            "https://0.1.2.3/h",
            "https://printer.local/h",
        ] {
            assert!(sandbox().check_url(url).is_err(), "{url}");
        }
        assert!(sandbox()
            .check_ip("127.0.0.1".parse().expect("ip"))
            .is_err());
        assert!(sandbox()
            .check_ip("169.254.169.254".parse().expect("ip"))
            .is_err());
    }

    #[test]
    fn deliveries_check_the_stored_url_again() {
        assert!(production()
            .check_delivery("https://erp.example.com/h")
            .is_ok());
        assert!(matches!(
            production().check_delivery("http://127.0.0.1:9/h"),
            Err(Refused::Address { .. })
        ));
        assert!(matches!(
            production().check_delivery("http://localhost:9/h"),
            Err(Refused::Name { .. })
        ));
    }
}
