//! Where the Slovak registers live and how long their answers are kept.
//!
//! One `[company]` table in the TOML file; `INVEX_COMPANY_*` variables (and `INVEX_FS_API_KEY`)
//! override it. The time budget of a lookup is the server-wide `register_timeout_ms`.

use serde::{Deserialize, Serialize};

/// Register base URLs, the Financial Administration's API key and cache lifetimes.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompanyConfig {
    /// RPO (Register právnických osôb), Statistical Office of the Slovak Republic.
    pub rpo_url: String,
    /// RÚZ (Register účtovných závierok) open API.
    pub ruz_url: String,
    /// RPVS (Register partnerov verejného sektora) OData service.
    pub rpvs_url: String,
    /// Financial Administration (Finančná správa) open-data lists API.
    pub fs_url: String,
    /// The key the Financial Administration mails on registration. Without it the debtors
    /// group is `unavailable` and says the key is not configured.
    pub fs_api_key: Option<String>,
    /// How long `ok` and `not_found` answers are kept, in seconds, for every register
    /// without its own value below. 0 turns caching off.
    pub cache_ttl_secs: u64,
    pub rpo_cache_ttl_secs: Option<u64>,
    pub ruz_cache_ttl_secs: Option<u64>,
    pub rpvs_cache_ttl_secs: Option<u64>,
    pub fs_cache_ttl_secs: Option<u64>,
}

pub const DEFAULT_RPO_URL: &str = "https://api.statistics.sk/rpo/v1";
pub const DEFAULT_RUZ_URL: &str = "https://www.registeruz.sk/cruz-public";
pub const DEFAULT_RPVS_URL: &str = "https://rpvs.gov.sk/opendatav2";
pub const DEFAULT_FS_URL: &str = "https://iz.opendata.financnasprava.sk/api";

impl Default for CompanyConfig {
    fn default() -> Self {
        CompanyConfig {
            rpo_url: DEFAULT_RPO_URL.to_string(),
            ruz_url: DEFAULT_RUZ_URL.to_string(),
            rpvs_url: DEFAULT_RPVS_URL.to_string(),
            fs_url: DEFAULT_FS_URL.to_string(),
            fs_api_key: None,
            // Registers change slowly (daily at most); six hours keeps them off the
            // request path for repeated partners without serving week-old data.
            cache_ttl_secs: 6 * 3600,
            rpo_cache_ttl_secs: None,
            ruz_cache_ttl_secs: None,
            rpvs_cache_ttl_secs: None,
            fs_cache_ttl_secs: None,
        }
    }
}

/// The key is a credential: never printed.
impl std::fmt::Debug for CompanyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompanyConfig")
            .field("rpo_url", &self.rpo_url)
            .field("ruz_url", &self.ruz_url)
            .field("rpvs_url", &self.rpvs_url)
            .field("fs_url", &self.fs_url)
            .field(
                "fs_api_key",
                &self.fs_api_key.as_ref().map(|_| "<redacted>"),
            )
            .field("cache_ttl_secs", &self.cache_ttl_secs)
            .field("rpo_cache_ttl_secs", &self.rpo_cache_ttl_secs)
            .field("ruz_cache_ttl_secs", &self.ruz_cache_ttl_secs)
            .field("rpvs_cache_ttl_secs", &self.rpvs_cache_ttl_secs)
            .field("fs_cache_ttl_secs", &self.fs_cache_ttl_secs)
            .finish()
    }
}

impl CompanyConfig {
    /// Apply one `INVEX_*` variable (`key` without the prefix). Keys that are not ours are
    /// ignored, as the main parser does.
    pub fn apply_env(&mut self, key: &str, value: String) -> Result<(), String> {
        let secs = |v: &str| v.trim().parse::<u64>().map_err(|e| format!("`{v}`: {e}"));
        match key {
            "COMPANY_RPO_URL" => self.rpo_url = value,
            "COMPANY_RUZ_URL" => self.ruz_url = value,
            "COMPANY_RPVS_URL" => self.rpvs_url = value,
            "COMPANY_FS_URL" => self.fs_url = value,
            "FS_API_KEY" | "COMPANY_FS_API_KEY" => {
                self.fs_api_key = Some(value).filter(|v| !v.trim().is_empty())
            }
            "COMPANY_CACHE_TTL_SECS" => self.cache_ttl_secs = secs(&value)?,
            "COMPANY_RPO_CACHE_TTL_SECS" => self.rpo_cache_ttl_secs = Some(secs(&value)?),
            "COMPANY_RUZ_CACHE_TTL_SECS" => self.ruz_cache_ttl_secs = Some(secs(&value)?),
            "COMPANY_RPVS_CACHE_TTL_SECS" => self.rpvs_cache_ttl_secs = Some(secs(&value)?),
            "COMPANY_FS_CACHE_TTL_SECS" => self.fs_cache_ttl_secs = Some(secs(&value)?),
            _ => {}
        }
        Ok(())
    }

    pub fn rpo_ttl(&self) -> u64 {
        self.rpo_cache_ttl_secs.unwrap_or(self.cache_ttl_secs)
    }
    pub fn ruz_ttl(&self) -> u64 {
        self.ruz_cache_ttl_secs.unwrap_or(self.cache_ttl_secs)
    }
    pub fn rpvs_ttl(&self) -> u64 {
        self.rpvs_cache_ttl_secs.unwrap_or(self.cache_ttl_secs)
    }
    pub fn fs_ttl(&self) -> u64 {
        self.fs_cache_ttl_secs.unwrap_or(self.cache_ttl_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_sets_urls_key_and_lifetimes() {
        let mut c = CompanyConfig::default();
        c.apply_env("COMPANY_RPO_URL", "http://x/rpo".into())
            .unwrap();
        c.apply_env("FS_API_KEY", "secret".into()).unwrap();
        c.apply_env("COMPANY_CACHE_TTL_SECS", "60".into()).unwrap();
        c.apply_env("COMPANY_FS_CACHE_TTL_SECS", "5".into())
            .unwrap();
        assert_eq!(c.rpo_url, "http://x/rpo");
        assert_eq!(c.fs_api_key.as_deref(), Some("secret"));
        assert_eq!((c.rpo_ttl(), c.fs_ttl()), (60, 5));
        assert!(c
            .apply_env("COMPANY_CACHE_TTL_SECS", "soon".into())
            .is_err());
        assert!(
            !format!("{c:?}").contains("secret"),
            "the key is never printed"
        );
    }
}
