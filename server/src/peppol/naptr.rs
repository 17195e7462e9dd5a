//! SML discovery by DNS U-NAPTR (the Peppol SML since 2026-02-01; the old CNAME form is
//! retired): the participant's name in the SML zone is
//! `base32(sha256(lowercase "{icd}:{value}")).iso6523-actorid-upis.{zone}`, and its NAPTR
//! record with service `Meta:SMP` rewrites that name into the SMP base URL.

use std::net::SocketAddr;
use std::time::Duration;

use data_encoding::BASE32_NOPAD;
use hickory_resolver::config::{NameServerConfig, ResolverConfig};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::op::ResponseCode;
use hickory_resolver::proto::rr::{RData, RecordType};
use hickory_resolver::proto::xfer::Protocol;
use hickory_resolver::proto::ProtoErrorKind;
use hickory_resolver::{ResolveError, TokioResolver};
use sha2::{Digest, Sha256};

use super::identifier::{ParticipantId, SCHEME};

/// The NAPTR service that points at a participant's SMP.
pub const SMP_SERVICE: &str = "Meta:SMP";

/// The DNS name the SML publishes for `id` in `zone`.
pub fn dns_name(id: &ParticipantId, zone: &str) -> String {
    let digest = Sha256::digest(id.key().as_bytes());
    format!(
        "{}.{SCHEME}.{}",
        BASE32_NOPAD.encode(&digest).to_ascii_lowercase(),
        zone.trim_matches('.')
    )
}

/// What the SML said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Discovered {
    /// The SMP base URL (no trailing slash).
    Smp(String),
    /// NXDOMAIN, or no `Meta:SMP` record: the SML does not know the participant.
    NotRegistered,
}

/// The SML could not be asked; this never means "not registered".
#[derive(Debug, thiserror::Error)]
pub enum DnsError {
    #[error("the DNS lookup of {name} failed: {source}")]
    Failed {
        name: String,
        #[source]
        source: ResolveError,
    },
    #[error("the DNS lookup of {name} did not finish within {budget_ms} ms")]
    Timeout { name: String, budget_ms: u128 },
    #[error("the NAPTR record of {name} has an unusable regexp `{regexp}`: {reason}")]
    BadRecord {
        name: String,
        regexp: String,
        reason: String,
    },
    #[error("cannot set up the DNS resolver: {0}")]
    Setup(#[source] ResolveError),
}

/// A U-NAPTR client for one SML zone.
pub struct Discovery {
    resolver: TokioResolver,
    zone: String,
    budget: Duration,
}

impl Discovery {
    /// Ask `dns_server` (UDP, then TCP), or the system resolver when None, within `budget`.
    pub fn new(
        zone: &str,
        dns_server: Option<SocketAddr>,
        budget: Duration,
    ) -> Result<Discovery, DnsError> {
        let mut builder = match dns_server {
            Some(addr) => {
                let mut config = ResolverConfig::new();
                config.add_name_server(NameServerConfig::new(addr, Protocol::Udp));
                config.add_name_server(NameServerConfig::new(addr, Protocol::Tcp));
                TokioResolver::builder_with_config(config, TokioConnectionProvider::default())
            }
            None => TokioResolver::builder_tokio().map_err(DnsError::Setup)?,
        };
        let options = builder.options_mut();
        options.timeout = budget;
        options.attempts = 1;
        // Our own cache (moka, with the configured TTL) keeps answers; the resolver's cache
        // would keep a stale NXDOMAIN beyond it.
        options.cache_size = 0;
        Ok(Discovery {
            resolver: builder.build(),
            zone: zone.to_string(),
            budget,
        })
    }

    /// Find the SMP of `id`.
    pub async fn smp_of(&self, id: &ParticipantId) -> Result<Discovered, DnsError> {
        let name = dns_name(id, &self.zone);
        // A fully qualified name: no search domains appended.
        let fqdn = format!("{name}.");
        let answer = tokio::time::timeout(
            self.budget,
            self.resolver.lookup(fqdn.as_str(), RecordType::NAPTR),
        )
        .await
        .map_err(|_| DnsError::Timeout {
            name: name.clone(),
            budget_ms: self.budget.as_millis(),
        })?;
        let lookup = match answer {
            Ok(lookup) => lookup,
            // NXDOMAIN or an empty answer: the zone answered, and does not know the name.
            // (SERVFAIL and REFUSED also arrive as "no records", but say nothing.)
            Err(e) if is_absent(&e) => return Ok(Discovered::NotRegistered),
            Err(source) => return Err(DnsError::Failed { name, source }),
        };
        let mut records: Vec<_> = lookup
            .iter()
            .filter_map(|rdata| match rdata {
                RData::NAPTR(naptr) => Some(naptr.clone()),
                _ => None,
            })
            .filter(|n| {
                String::from_utf8_lossy(n.services()).eq_ignore_ascii_case(SMP_SERVICE)
                    && String::from_utf8_lossy(n.flags()).eq_ignore_ascii_case("U")
            })
            .collect();
        records.sort_by_key(|n| (n.order(), n.preference()));
        let Some(record) = records.first() else {
            return Ok(Discovered::NotRegistered);
        };
        let regexp = String::from_utf8_lossy(record.regexp()).into_owned();
        rewrite(&regexp, &fqdn)
            .map(|url| Discovered::Smp(url.trim_end_matches('/').to_string()))
            .map_err(|reason| DnsError::BadRecord {
                name,
                regexp,
                reason,
            })
    }
}

/// Whether the error is an authoritative "no such name" or "no such record".
fn is_absent(e: &ResolveError) -> bool {
    match e.proto().map(|p| p.kind()) {
        Some(ProtoErrorKind::NoRecordsFound { response_code, .. }) => {
            matches!(
                *response_code,
                ResponseCode::NXDomain | ResponseCode::NoError
            )
        }
        _ => false,
    }
}

/// Apply a NAPTR substitution expression (`!pattern!replacement!flags`, RFC 3403 4.3) to
/// the application-unique string; the result must be an http(s) URL.
pub fn rewrite(expression: &str, subject: &str) -> Result<String, String> {
    let mut chars = expression.chars();
    let delimiter = chars.next().ok_or("the regexp is empty")?;
    if delimiter.is_ascii_alphanumeric() || delimiter == '\\' {
        return Err(format!("`{delimiter}` cannot delimit a substitution"));
    }
    let parts: Vec<&str> = expression[delimiter.len_utf8()..]
        .split(delimiter)
        .collect();
    let [pattern, replacement, flags] = parts.as_slice() else {
        return Err("expected delimiter, pattern, delimiter, replacement, delimiter".into());
    };
    let pattern = if flags.contains('i') {
        format!("(?i){pattern}")
    } else {
        (*pattern).to_string()
    };
    let re = regex::Regex::new(&pattern).map_err(|e| e.to_string())?;
    // RFC 3403 back references are \1..\9.
    let template = regex::Regex::new(r"\\([0-9])")
        .map_err(|e| e.to_string())?
        .replace_all(replacement, "$${$1}");
    let caps = re
        .captures(subject)
        .ok_or("the pattern does not match the name")?;
    let mut url = String::new();
    caps.expand(&template, &mut url);
    if url.starts_with("https://") || url.starts_with("http://") {
        Ok(url)
    } else {
        Err(format!("`{url}` is not an http(s) URL"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_base32_of_sha256_of_the_lowercased_value() {
        // Computed independently: python3 -c "import hashlib,base64;
        // print(base64.b32encode(hashlib.sha256(b'0245:2022749619').digest()))"
        let id = ParticipantId::parse("iso6523-actorid-upis::0245:2022749619").expect("id");
        assert_eq!(
            dns_name(&id, "participant.sml.prod.tech.peppol.org"),
            "g2oshhzs43tsqpnuc72jeexlkf5df6zw3dmacw5hwdhnf3y6xlcq.iso6523-actorid-upis.participant.sml.prod.tech.peppol.org"
        );
        // Case-insensitive: the upper-case VAT prefix hashes as `sk`.
        let vat = ParticipantId::parse("9950:SK2022749619").expect("id");
        assert_eq!(
            dns_name(&vat, "sml.test."),
            "lt7kgptmzvnfhpyy3zxm5c7gv25im3ksvsa5rwafm3p5ixe5tevq.iso6523-actorid-upis.sml.test"
        );
    }

    #[test]
    fn naptr_regexps_rewrite_to_the_smp_url() {
        let name = "abc.iso6523-actorid-upis.sml.test.";
        assert_eq!(
            rewrite("!.*!https://smp.example/!", name).as_deref(),
            Ok("https://smp.example/")
        );
        assert_eq!(
            rewrite("!^(abc)\\..*$!https://\\1.smp.example!", name).as_deref(),
            Ok("https://abc.smp.example")
        );
        assert_eq!(
            rewrite("#.*#http://127.0.0.1:8080/smp#", name).as_deref(),
            Ok("http://127.0.0.1:8080/smp")
        );
        assert!(rewrite("!.*!ftp://smp.example/!", name).is_err());
        assert!(rewrite("!zzz!https://smp.example/!", name).is_err());
        assert!(rewrite("!.*https://smp.example/", name).is_err());
        assert!(rewrite("", name).is_err());
    }
}
