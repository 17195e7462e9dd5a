//! A tenant's provider as its administrator enters it, checked: the issuer a URL the server
//! may reach, the e-mail domains well-formed, the role map's roles real. The store keeps the
//! result ([`crate::store::SsoRecord`]); this turns one into the other.

use crate::auth::Role;
use crate::store::SsoRecord;
use crate::webhooks::target::TargetPolicy;

/// Most e-mail domains one tenant may route to its provider.
pub const MAX_DOMAINS: usize = 20;
/// Most lines in a role map.
pub const MAX_ROLE_MAP: usize = 50;
const MAX_FIELD: usize = 500;

/// The administrator's form, as entered.
#[derive(Clone, Debug, Default)]
pub struct SsoForm {
    pub issuer: String,
    pub client_id: String,
    /// Blank keeps the secret saved before.
    pub client_secret: String,
    /// Separated by spaces, commas or lines.
    pub domains: String,
    /// Asked for besides `openid`, separated by spaces.
    pub scopes: String,
    pub role_claim: String,
    /// One `value = role` per line; `#` starts a comment.
    pub role_map: String,
    /// A role name, or blank for none.
    pub default_role: String,
    pub required: bool,
}

/// Checked settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SsoSettings {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub domains: Vec<String>,
    pub scopes: Vec<String>,
    pub role_claim: String,
    pub role_map: Vec<(String, Role)>,
    pub default_role: Option<Role>,
    pub required: bool,
}

/// What is wrong with a form, naming its field.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("issuer: {0}")]
    Issuer(String),
    #[error("client_id: required, at most 500 characters")]
    ClientId,
    #[error("client_secret: at most 500 characters of printable ASCII")]
    ClientSecret,
    #[error("domains: `{0}` is not an e-mail domain (such as firma.sk)")]
    Domain(String),
    #[error("domains: at least one and at most {MAX_DOMAINS}")]
    DomainCount,
    #[error("scopes: `{0}` is not a scope")]
    Scope(String),
    #[error("role_claim: required, at most 500 characters")]
    RoleClaim,
    #[error("role_map: line {line}: {problem}")]
    RoleMap { line: usize, problem: String },
    #[error("default_role: `{0}` is not a role")]
    DefaultRole(String),
    #[error("required: sign-in through the provider can be required only by an administrator who has just signed in through it")]
    RequiredUntested,
}

impl SettingsError {
    /// The form field the problem is in.
    pub fn field(&self) -> &'static str {
        match self {
            SettingsError::Issuer(_) => "issuer",
            SettingsError::ClientId => "client_id",
            SettingsError::ClientSecret => "client_secret",
            SettingsError::Domain(_) | SettingsError::DomainCount => "domains",
            SettingsError::Scope(_) => "scopes",
            SettingsError::RoleClaim => "role_claim",
            SettingsError::RoleMap { .. } => "role_map",
            SettingsError::DefaultRole(_) => "default_role",
            SettingsError::RequiredUntested => "required",
        }
    }
}

fn bounded(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty() && s.len() <= MAX_FIELD && !s.chars().any(char::is_control))
        .then(|| s.to_string())
}

/// An e-mail domain as the routing keeps it: lowercase ASCII (IDNs in their `xn--` form),
/// two labels at least, each of letters, digits and inner hyphens.
pub fn domain(raw: &str) -> Option<String> {
    let d = raw.trim().trim_start_matches('@').to_ascii_lowercase();
    let labels: Vec<&str> = d.split('.').collect();
    let ok = d.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    ok.then_some(d)
}

/// A scope token (RFC 6749 §3.3: printable ASCII without space, `"` and `\`).
fn scope(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s.bytes()
            .all(|b| b == 0x21 || (0x23..=0x7e).contains(&b) && b != b'\\')
}

fn role_map(text: &str) -> Result<Vec<(String, Role)>, SettingsError> {
    let mut map = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |problem: &str| SettingsError::RoleMap {
            line: i + 1,
            problem: problem.to_string(),
        };
        // The role is after the last `=`: claim values may contain one.
        let Some((value, role)) = line.rsplit_once('=') else {
            return Err(bad("write `value = role`"));
        };
        let value = bounded(value).ok_or_else(|| bad("the value is empty or too long"))?;
        let role = Role::parse(role.trim())
            .ok_or_else(|| bad("the role is not admin, accountant, developer or auditor"))?;
        map.push((value, role));
        if map.len() > MAX_ROLE_MAP {
            return Err(bad("too many lines"));
        }
    }
    Ok(map)
}

impl SsoForm {
    /// Check the form. `saved_secret` is the secret saved before (a blank field keeps it);
    /// `policy` decides which issuers the server may reach.
    pub fn check(
        &self,
        policy: &TargetPolicy,
        saved_secret: Option<&str>,
    ) -> Result<SsoSettings, SettingsError> {
        let issuer = policy
            .check_url(&self.issuer)
            .map_err(|e| SettingsError::Issuer(e.to_string().replace("`url`", "the issuer")))?;
        let parsed =
            reqwest::Url::parse(&issuer).map_err(|e| SettingsError::Issuer(e.to_string()))?;
        if parsed.query().is_some() {
            return Err(SettingsError::Issuer("the issuer carries no query".into()));
        }
        // Kept as entered (without surrounding space): the provider's `iss` must equal it
        // exactly, and the URL parser would add a trailing slash to a bare host.
        let issuer = self.issuer.trim().to_string();
        let client_id = bounded(&self.client_id).ok_or(SettingsError::ClientId)?;
        let client_secret = match self.client_secret.trim() {
            "" => saved_secret.map(str::to_string),
            s if s.len() <= MAX_FIELD && s.bytes().all(|b| (0x20..0x7f).contains(&b)) => {
                Some(s.to_string())
            }
            _ => return Err(SettingsError::ClientSecret),
        };
        let mut domains = Vec::new();
        for raw in self
            .domains
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|s| !s.is_empty())
        {
            let d =
                domain(raw).ok_or_else(|| SettingsError::Domain(raw.chars().take(80).collect()))?;
            if !domains.contains(&d) {
                domains.push(d);
            }
        }
        if domains.is_empty() || domains.len() > MAX_DOMAINS {
            return Err(SettingsError::DomainCount);
        }
        domains.sort();
        let mut scopes = Vec::new();
        for s in self.scopes.split_whitespace() {
            if !scope(s) {
                return Err(SettingsError::Scope(s.chars().take(80).collect()));
            }
            if s != "openid" && !scopes.iter().any(|k| k == s) {
                scopes.push(s.to_string());
            }
        }
        let role_claim = bounded(&self.role_claim).ok_or(SettingsError::RoleClaim)?;
        let role_map = role_map(&self.role_map)?;
        let default_role = match self.default_role.trim() {
            "" => None,
            r => Some(
                Role::parse(r)
                    .ok_or_else(|| SettingsError::DefaultRole(r.chars().take(40).collect()))?,
            ),
        };
        Ok(SsoSettings {
            issuer,
            client_id,
            client_secret,
            domains,
            scopes,
            role_claim,
            role_map,
            default_role,
            required: self.required,
        })
    }

    /// The form showing saved settings (the secret is never shown).
    pub fn of(record: &SsoRecord, domains: &[String]) -> SsoForm {
        SsoForm {
            issuer: record.issuer.clone(),
            client_id: record.client_id.clone(),
            client_secret: String::new(),
            domains: domains.join(" "),
            scopes: record.scopes.clone(),
            role_claim: record.role_claim.clone(),
            role_map: SsoSettings::role_map_of(record)
                .iter()
                .map(|(v, r)| format!("{v} = {}", r.as_str()))
                .collect::<Vec<_>>()
                .join("\n"),
            default_role: record.default_role.clone().unwrap_or_default(),
            required: record.required,
        }
    }
}

impl SsoSettings {
    /// The record to store, set by `by` at `now`.
    pub fn record(&self, tenant_id: &str, by: &str, now: &str) -> SsoRecord {
        let pairs: Vec<(&str, &str)> = self
            .role_map
            .iter()
            .map(|(v, r)| (v.as_str(), r.as_str()))
            .collect();
        SsoRecord {
            tenant_id: tenant_id.to_string(),
            issuer: self.issuer.clone(),
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            scopes: self.scopes.join(" "),
            role_claim: self.role_claim.clone(),
            role_map: serde_json::to_string(&pairs).unwrap_or_else(|_| "[]".into()),
            default_role: self.default_role.map(|r| r.as_str().to_string()),
            required: self.required,
            updated_at: now.to_string(),
            updated_by: by.to_string(),
        }
    }

    /// The role map of a stored record (pairs with an unknown role are left out).
    pub fn role_map_of(record: &SsoRecord) -> Vec<(String, Role)> {
        serde_json::from_str::<Vec<(String, String)>>(&record.role_map)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(v, r)| Role::parse(&r).map(|r| (v, r)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Mode;

    fn form() -> SsoForm {
        SsoForm {
            issuer: "https://login.firma.sk/realms/main".into(),
            client_id: "invex".into(),
            client_secret: "s3cret".into(),
            domains: "Firma.sk, @pobocka.firma.sk firma.sk".into(),
            scopes: "email profile groups openid".into(),
            role_claim: "groups".into(),
            role_map: "# who does what\ninvex-admins = admin\ncn=Účtovníci,o=firma = accountant\n"
                .into(),
            default_role: "".into(),
            required: false,
        }
    }

    fn production() -> TargetPolicy {
        TargetPolicy::new(Mode::Production, false, Vec::new())
    }

    #[test]
    fn a_good_form_is_normalised() {
        let s = form().check(&production(), None).unwrap();
        assert_eq!(s.domains, vec!["firma.sk", "pobocka.firma.sk"]);
        assert_eq!(s.scopes, vec!["email", "profile", "groups"]);
        assert_eq!(
            s.role_map,
            vec![
                ("invex-admins".to_string(), Role::Admin),
                ("cn=Účtovníci,o=firma".to_string(), Role::Accountant)
            ]
        );
        assert_eq!(s.default_role, None);
        // Stored and shown again, the role map survives; the secret is not shown.
        let record = s.record("ten_1", "per_1", "2027-01-01T00:00:00Z");
        assert_eq!(SsoSettings::role_map_of(&record), s.role_map);
        let shown = SsoForm::of(&record, &s.domains);
        assert!(shown.client_secret.is_empty());
        let again = SsoForm {
            client_secret: String::new(),
            ..shown
        }
        .check(&production(), record.client_secret.as_deref())
        .unwrap();
        assert_eq!(again, s);
    }

    #[test]
    fn bad_fields_are_named() {
        let policy = production();
        let with = |f: fn(&mut SsoForm)| {
            let mut x = form();
            f(&mut x);
            x.check(&policy, None).unwrap_err().field()
        };
        assert_eq!(
            with(|f| f.issuer = "http://login.firma.sk".into()),
            "issuer"
        );
        assert_eq!(with(|f| f.issuer = "https://10.0.0.5/".into()), "issuer");
        assert_eq!(
            with(|f| f.issuer = "https://login.firma.sk/?x=1".into()),
            "issuer"
        );
        assert_eq!(with(|f| f.client_id = " ".into()), "client_id");
        assert_eq!(with(|f| f.domains = "firma".into()), "domains");
        assert_eq!(with(|f| f.domains = "".into()), "domains");
        assert_eq!(with(|f| f.domains = "fir_ma.sk".into()), "domains");
        assert_eq!(with(|f| f.scopes = "a\"b".into()), "scopes");
        assert_eq!(with(|f| f.role_map = "invex-admins".into()), "role_map");
        assert_eq!(with(|f| f.role_map = "x = boss".into()), "role_map");
        assert_eq!(with(|f| f.default_role = "boss".into()), "default_role");
        assert_eq!(with(|f| f.role_claim = "".into()), "role_claim");
    }
}
