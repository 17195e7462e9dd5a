//! Searching the catalogue: filters over the pack versions carrying each rule, and pages
//! cut by rule id.

use super::{CarriedIn, Catalogue, RuleEntry};
use crate::pack::Severity;

/// What to look for; every filter given must hold for one and the same pack version of
/// a rule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Part of the rule id or of its message, any case.
    pub text: Option<String>,
    /// A business term it guards (`BT-24`, `BG-7`), any case.
    pub business_term: Option<String>,
    /// Its owner (`seller-master-data`, ...).
    pub owner: Option<String>,
    /// A pack (`peppol-bis3`: any version) or a pack version (`peppol-bis3@2026.11`).
    pub pack: Option<String>,
    /// Its flag in the pack, or in a profile that runs it.
    pub severity: Option<Severity>,
}

/// One rule found, with the pack version that matched: the newest version of a pack where
/// one matches, else the last that matches.
#[derive(Clone, Copy, Debug)]
pub struct Hit<'a> {
    pub entry: &'a RuleEntry,
    pub version: &'a CarriedIn,
}

/// A page of hits, by rule id.
#[derive(Clone, Debug)]
pub struct Page<'a> {
    pub hits: Vec<Hit<'a>>,
    /// The id to pass as `after` for the next page; absent on the last page.
    pub next: Option<String>,
    /// How many rules match in all.
    pub total: usize,
}

impl Filter {
    fn matches(&self, v: &CarriedIn) -> bool {
        let r = &v.rule;
        if let Some(text) = &self.text {
            let text = text.to_lowercase();
            if !r.id.to_lowercase().contains(&text) && !r.message.to_lowercase().contains(&text) {
                return false;
            }
        }
        if let Some(term) = &self.business_term {
            if !r
                .business_terms
                .iter()
                .any(|t| t.eq_ignore_ascii_case(term))
            {
                return false;
            }
        }
        if let Some(owner) = &self.owner {
            if r.owner.as_deref() != Some(owner.as_str()) {
                return false;
            }
        }
        if let Some(pack) = &self.pack {
            let exact = r.pack == *pack;
            let any_version = r.pack.split_once('@').is_some_and(|(id, _)| id == pack);
            if !exact && !any_version {
                return false;
            }
        }
        if let Some(severity) = self.severity {
            if r.flag != severity && !v.profiles.iter().any(|p| p.flag == severity) {
                return false;
            }
        }
        true
    }
}

impl Catalogue {
    /// The rules matching `filter` whose ids sort after `after`, at most `limit` of them.
    pub fn search(&self, filter: &Filter, after: Option<&str>, limit: usize) -> Page<'_> {
        let mut hits = Vec::new();
        let mut total = 0;
        let mut next = None;
        for entry in &self.entries {
            let matching = || entry.versions.iter().rev().filter(|v| filter.matches(v));
            let Some(version) = matching().find(|v| v.current).or_else(|| matching().next()) else {
                continue;
            };
            total += 1;
            if after.is_some_and(|a| entry.id.as_str() <= a) {
                continue;
            }
            if hits.len() == limit {
                // One more than the page: there is a next page, starting after the last hit.
                if next.is_none() {
                    next = hits.last().map(|h: &Hit<'_>| h.entry.id.clone());
                }
                continue;
            }
            hits.push(Hit { entry, version });
        }
        Page { hits, next, total }
    }
}
