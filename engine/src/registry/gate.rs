//! The gate a pack set passes before it goes live: it compiles, every pack and
//! `profiles.yaml` match their lock files, and the fixtures of every pack that is new or
//! changed (against the live set) pass.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::fixtures;
use crate::lock::{PackLock, ProfilesLock, PACK_LOCK, PROFILES_LOCK};
use crate::pack::{LoadError, PROFILES_FILE};
use crate::rules::{compile_dir, Compilation};

/// Why one pack (or `profiles.yaml`) kept a pack set from going live.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PackRefusal {
    /// `id@version`, or `profiles.yaml`.
    pub pack: String,
    pub reasons: Vec<String>,
}

/// A pack set that compiled but did not pass the gate.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", render(.packs))]
pub struct Refusal {
    pub packs: Vec<PackRefusal>,
}

fn render(packs: &[PackRefusal]) -> String {
    packs
        .iter()
        .flat_map(|p| p.reasons.iter().map(move |r| format!("{}: {r}", p.pack)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Why a pack set did not go live.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReloadError {
    /// Files that do not load or compile (every problem, `file:line:column`).
    #[error("{0}")]
    Load(#[from] LoadError),
    /// Files that compile but do not match their locks, or failing fixtures.
    #[error("{0}")]
    Refused(#[from] Refusal),
}

impl ReloadError {
    /// The per-pack reasons of a refusal (none for a load error).
    pub fn refusals(&self) -> &[PackRefusal] {
        match self {
            ReloadError::Load(_) => &[],
            ReloadError::Refused(r) => &r.packs,
        }
    }
}

/// A pack set that passed: its compilation, the lock digest of every pack, and the packs
/// whose fixtures ran.
pub(super) struct Admitted {
    pub compilation: Compilation,
    pub digests: BTreeMap<String, String>,
    pub fixtures_run: Vec<String>,
}

/// Compile `dir` and check it against its locks and, for packs whose digest differs from
/// `live` (or that `live` lacks), their fixtures.
pub(super) fn admit(dir: &Path, live: &BTreeMap<String, String>) -> Result<Admitted, ReloadError> {
    let compilation = compile_dir(dir).into_result()?;
    let mut refused: Vec<PackRefusal> = Vec::new();
    let mut digests = BTreeMap::new();
    for src in &compilation.sources.packs {
        let reference = src.reference();
        let rules = compilation.pack(&reference).map_or(0, |p| p.rule_count());
        let reasons = match (PackLock::of(src, rules), PackLock::read(&src.dir)) {
            (Err(e), _) | (_, Err(e)) => vec![e.to_string()],
            (Ok(_), Ok(None)) => vec![format!(
                "no {PACK_LOCK}: run `invex rules lock` once the pack is complete"
            )],
            (Ok(actual), Ok(Some(lock))) => {
                let d = lock.differences(&actual);
                if d.is_empty() {
                    digests.insert(reference.clone(), actual.digest);
                }
                d
            }
        };
        if !reasons.is_empty() {
            refused.push(PackRefusal {
                pack: reference,
                reasons,
            });
        }
    }
    if let Some(src) = &compilation.sources.profiles {
        let reasons = match ProfilesLock::read(dir) {
            Err(e) => vec![e.to_string()],
            Ok(None) => vec![format!(
                "no {PROFILES_LOCK}: run `invex rules lock` once {PROFILES_FILE} is complete"
            )],
            Ok(Some(lock)) => lock.differences(&ProfilesLock::of(src)),
        };
        if !reasons.is_empty() {
            refused.push(PackRefusal {
                pack: PROFILES_FILE.to_string(),
                reasons,
            });
        }
    }
    if !refused.is_empty() {
        return Err(Refusal { packs: refused }.into());
    }
    let mut fixtures_run = Vec::new();
    for pack in &compilation.packs {
        let reference = pack.reference();
        if live.get(&reference) == digests.get(&reference) {
            continue;
        }
        let result = fixtures::run_pack(pack);
        fixtures_run.push(reference.clone());
        if !result.failures.is_empty() {
            let reasons = result
                .failures
                .iter()
                .map(|f| {
                    format!(
                        "fixture {} ({} {}) fails: {}",
                        f.fixture
                            .strip_prefix(&pack.dir)
                            .unwrap_or(&f.fixture)
                            .display(),
                        f.rule,
                        f.expectation.as_str(),
                        f.detail
                    )
                })
                .collect();
            refused.push(PackRefusal {
                pack: reference,
                reasons,
            });
        }
    }
    if !refused.is_empty() {
        return Err(Refusal { packs: refused }.into());
    }
    Ok(Admitted {
        compilation,
        digests,
        fixtures_run,
    })
}
