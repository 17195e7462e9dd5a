//! The error catalogue: every rule of every installed pack version, by rule id, with who
//! fixes it (its owner), the business terms it guards, the pack versions that carry it and
//! how it changed from one version of a pack to the next.
//!
//! Built from a [`Catalog`] (the packs and profiles in force); the server answers
//! `GET /v1/rules` from it, `invex rules catalogue` prints it, and `invex rules diff`
//! compares [`RuleVersion`]s with [`changes`].

mod compare;
mod search;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::pack::{compare_versions, Severity};
use crate::registry::Catalog;
use crate::rules::{CheckKind, CompiledPack, Layer};

pub use compare::{changes, FieldChange};
pub use search::{Filter, Hit, Page};

/// What kind of rule: a Schematron-style assert or report, or a kind of schema finding.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    /// Fires when its test is false.
    Assert,
    /// Fires when its test is true.
    Report,
    /// A kind of finding of the XML Schema layer (always fatal).
    Schema,
}

/// One rule as one pack version defines it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleVersion {
    pub id: String,
    /// `id@version` of the pack that defines it.
    pub pack: String,
    pub kind: RuleKind,
    /// The flag the pack gives it (a profile may give another: see `profiles`).
    pub flag: Severity,
    /// The pattern (rule group) it belongs to; `schema` for schema rules.
    pub pattern: String,
    /// The XPath of the nodes it is checked on (`/` for schema rules).
    pub context: String,
    /// The XPath test (empty for schema rules), whitespace collapsed.
    pub test: String,
    pub message: String,
    /// How to fix what it reports (empty when the pack gives no hint).
    pub remediation: String,
    /// The EN 16931 business terms it guards (`BT-`, `BG-`).
    pub business_terms: Vec<String>,
    /// Who fixes what it reports (see docs/error-catalogue.md, "Owners").
    pub owner: Option<String>,
    /// Its fixture documents (file names in the pack's `fixtures/`): documents it must not
    /// fire on, and documents it must fire on.
    pub fixtures_pass: Vec<String>,
    pub fixtures_fail: Vec<String>,
}

fn file_names(paths: &[std::path::PathBuf]) -> Vec<String> {
    paths
        .iter()
        .filter_map(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect()
}

/// A profile that runs a rule, with the flag it gives it there.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProfileFlag {
    /// `id@version`.
    pub profile: String,
    pub flag: Severity,
}

/// A pack version that carries a rule.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CarriedIn {
    #[serde(flatten)]
    pub rule: RuleVersion,
    /// Whether this is the newest installed version of its pack.
    pub current: bool,
    /// The previous version of the same pack that carries the rule; absent for the first.
    pub previous: Option<String>,
    /// What differs from `previous` (empty: unchanged, or no previous).
    pub changes: Vec<FieldChange>,
    /// The installed profiles that run the rule from this pack version, with their flags
    /// (a profile that disables or replaces it is not listed).
    pub profiles: Vec<ProfileFlag>,
}

/// Everything the catalogue knows about one rule id.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RuleEntry {
    pub id: String,
    /// The pack versions carrying it, by pack id, oldest version first.
    pub versions: Vec<CarriedIn>,
    /// Pack versions that no longer carry it although an earlier version of the same pack
    /// did (`id@version`, the first such version after each carrying one).
    pub removed_in: Vec<String>,
}

impl RuleEntry {
    /// The newest definition: from the newest version of a pack (the last such pack by id),
    /// else the last version carrying it.
    pub fn latest(&self) -> &RuleVersion {
        match self.versions.iter().rev().find(|v| v.current) {
            Some(v) => &v.rule,
            // An entry is only made with at least one version.
            None => &self.versions[self.versions.len() - 1].rule,
        }
    }
}

/// Every rule of a [`Catalog`], sorted by id.
#[derive(Debug, Default)]
pub struct Catalogue {
    entries: Vec<RuleEntry>,
}

impl Catalogue {
    /// The catalogue of every pack version and profile of `catalog`.
    pub fn of(catalog: &Catalog) -> Catalogue {
        let mut packs: Vec<&Arc<CompiledPack>> = catalog.packs.iter().collect();
        packs.sort_by(|a, b| {
            a.id.cmp(&b.id)
                .then_with(|| compare_versions(&a.version, &b.version))
        });
        // Per pack version and check index: the profiles running it and their flags.
        let mut runs: BTreeMap<(String, String), Vec<ProfileFlag>> = BTreeMap::new();
        for profile in catalog.profiles() {
            let name = profile.def.reference();
            for layer in profile.rules.layers() {
                for (id, flag) in layer_flags(layer) {
                    runs.entry((layer.reference.clone(), id))
                        .or_default()
                        .push(ProfileFlag {
                            profile: name.clone(),
                            flag,
                        });
                }
            }
        }
        // The newest version of each pack id.
        let mut newest: BTreeMap<&str, &str> = BTreeMap::new();
        for p in &packs {
            newest.insert(&p.id, &p.version);
        }
        let mut by_id: BTreeMap<String, RuleEntry> = BTreeMap::new();
        // The pack id and rule ids of the pack version before this one.
        let mut last: Option<(String, Vec<String>)> = None;
        for pack in packs {
            let reference = pack.reference();
            let rules = pack_rules(pack);
            let ids: Vec<String> = rules.iter().map(|r| r.id.clone()).collect();
            if let Some((pack_id, prev_ids)) = &last {
                if *pack_id == pack.id {
                    for gone in prev_ids.iter().filter(|id| !ids.contains(id)) {
                        if let Some(e) = by_id.get_mut(gone) {
                            e.removed_in.push(reference.clone());
                        }
                    }
                }
            }
            for rule in rules {
                let entry = by_id.entry(rule.id.clone()).or_insert_with(|| RuleEntry {
                    id: rule.id.clone(),
                    versions: Vec::new(),
                    removed_in: Vec::new(),
                });
                // The previous version of the same pack carrying this rule.
                let previous = entry
                    .versions
                    .iter()
                    .rev()
                    .find(|v| pack_of(&v.rule.pack) == pack.id);
                let (previous, changes) = match previous {
                    Some(p) => (Some(p.rule.pack.clone()), changes(&p.rule, &rule)),
                    None => (None, Vec::new()),
                };
                let profiles = runs
                    .remove(&(reference.clone(), rule.id.clone()))
                    .unwrap_or_default();
                entry.versions.push(CarriedIn {
                    rule,
                    current: newest.get(pack.id.as_str()) == Some(&pack.version.as_str()),
                    previous,
                    changes,
                    profiles,
                });
            }
            last = Some((pack.id.clone(), ids));
        }
        Catalogue {
            entries: by_id.into_values().collect(),
        }
    }

    /// Every entry, by id.
    pub fn entries(&self) -> &[RuleEntry] {
        &self.entries
    }

    /// The entry of a rule id.
    pub fn get(&self, id: &str) -> Option<&RuleEntry> {
        self.entries
            .binary_search_by(|e| e.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.entries[i])
    }

    /// How many rule ids it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn pack_of(reference: &str) -> &str {
    reference.split_once('@').map_or(reference, |(id, _)| id)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The rules a pack defines, each with its own flag: its schema rules, then its checks in
/// evaluation order.
pub fn pack_rules(pack: &CompiledPack) -> Vec<RuleVersion> {
    let reference = pack.reference();
    let mut out: Vec<RuleVersion> = pack
        .schema
        .iter()
        .flat_map(|s| &s.rules)
        .map(|r| RuleVersion {
            id: r.id.clone(),
            pack: reference.clone(),
            kind: RuleKind::Schema,
            flag: Severity::Fatal,
            pattern: "schema".to_string(),
            context: "/".to_string(),
            test: String::new(),
            message: r.title.clone(),
            remediation: r.remediation.clone(),
            business_terms: Vec::new(),
            owner: r.owner.clone(),
            fixtures_pass: file_names(&r.fixtures_pass),
            fixtures_fail: file_names(&r.fixtures_fail),
        })
        .collect();
    out.extend(pack.checks().map(|(p, r, c)| RuleVersion {
        id: c.id.clone(),
        pack: reference.clone(),
        kind: match c.kind {
            CheckKind::Assert => RuleKind::Assert,
            CheckKind::Report => RuleKind::Report,
        },
        flag: c.flag,
        pattern: p.id.clone(),
        context: one_line(&r.context_source),
        test: one_line(c.test.source()),
        message: c.message.clone(),
        remediation: c.remediation.clone().unwrap_or_default(),
        business_terms: c.business_terms.clone(),
        owner: c.owner.clone(),
        fixtures_pass: file_names(&c.fixtures_pass),
        fixtures_fail: file_names(&c.fixtures_fail),
    }));
    out
}

/// The rules a profile's layer runs, with the flags the profile gives them (rules a higher
/// pack disabled or replaced are left out; schema rules are always fatal).
pub fn layer_rules(layer: &Layer) -> Vec<RuleVersion> {
    let flags: BTreeMap<String, Severity> = layer_flags(layer).into_iter().collect();
    pack_rules(&layer.pack)
        .into_iter()
        .filter_map(|mut r| {
            let flag = *flags.get(&r.id)?;
            r.flag = flag;
            Some(r)
        })
        .collect()
}

/// The rule ids a layer runs and their effective flags.
fn layer_flags(layer: &Layer) -> Vec<(String, Severity)> {
    let mut out: Vec<(String, Severity)> = layer
        .pack
        .schema
        .iter()
        .flat_map(|s| &s.rules)
        .map(|r| (r.id.clone(), Severity::Fatal))
        .collect();
    out.extend(layer.pack.checks().filter_map(|(_, _, c)| {
        let flag = layer.effective.get(c.index).copied().flatten()?;
        Some((c.id.clone(), flag))
    }));
    out
}

/// The catalogue of the catalog in force, built once per catalog: reloads swap the catalog,
/// and the next call builds the new one's catalogue.
#[derive(Debug, Default)]
pub struct CatalogueCache {
    current: Mutex<Option<(Arc<Catalog>, Arc<Catalogue>)>>,
}

impl CatalogueCache {
    pub fn new() -> CatalogueCache {
        CatalogueCache::default()
    }

    /// The catalogue of `catalog`, built now if the cached one is of another catalog.
    pub fn get(&self, catalog: &Arc<Catalog>) -> Arc<Catalogue> {
        // A poisoned lock only means a panic while building: build again.
        let mut slot = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((of, built)) = slot.as_ref() {
            if Arc::ptr_eq(of, catalog) {
                return built.clone();
            }
        }
        let built = Arc::new(Catalogue::of(catalog));
        *slot = Some((catalog.clone(), built.clone()));
        built
    }
}

#[cfg(test)]
mod tests;
