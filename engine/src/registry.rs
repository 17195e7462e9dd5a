//! The live catalogue of compiled profiles, swapped atomically on reload.
//!
//! [`Registry::current`] hands out an `Arc<Catalog>`; a validation that took a rule set
//! from it keeps that `Arc<RuleSet>` to the end and reports the `rules_version` it
//! started with, whatever reloads happen meanwhile. [`Registry::reload`] compiles the
//! whole directory on the calling thread and swaps only when the set passes the gate
//! (`gate`): everything compiles, every pack and `profiles.yaml` match their lock files,
//! and the fixtures of every new or changed pack pass. Otherwise the last good catalogue
//! stays active and the reasons are in [`ReloadStatus`]. Start-up passes the same gate,
//! every pack counting as new. [`Registry::watch`] reloads on a background thread once
//! file events have settled (no event for a quiet period).

mod gate;
mod lazy;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use chrono::NaiveDate;
use notify::{RecursiveMode, Watcher};
use serde::Serialize;

use crate::detect::{detect_profile, Detected, EN16931_UBL};
use crate::document::Document;
use crate::pack::{compare_versions, DocumentTypeDef, LoadError, ProfileDef};
use crate::rules::{compile_dir, Compilation, CompiledPack, RuleSet};

pub use gate::{PackRefusal, Refusal, ReloadError};
pub use lazy::LazyCatalog;

/// The profile detection picks when the document's specification identifier selects none.
pub const FALLBACK_PROFILE: &str = EN16931_UBL;

/// What the registry serves: compiled profiles and the packs they use.
#[derive(Debug)]
pub struct Catalog {
    /// Profiles, sorted by id then version.
    profiles: Vec<ProfileEntry>,
    /// Every compiled pack, sorted by id then version.
    pub packs: Vec<Arc<CompiledPack>>,
    /// When this catalogue was loaded.
    pub loaded_at: String,
    /// Every document type `profiles.yaml` declares.
    document_types: Arc<[DocumentTypeDef]>,
    /// The rule set for documents no installed profile takes.
    no_profile: Arc<RuleSet>,
}

#[derive(Debug, Clone)]
pub struct ProfileEntry {
    pub def: ProfileDef,
    pub rules: Arc<RuleSet>,
}

/// A summary of a profile, for listings.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfileInfo {
    pub id: String,
    pub version: String,
    pub title: Option<String>,
    pub packs: Vec<String>,
    /// The document elements the profile validates, `{namespace}local`.
    pub documents: Vec<String>,
    /// The specification identifiers (BT-24) detection picks it for (prefixes).
    pub customization_ids: Vec<String>,
    /// The first day the version is in force (`YYYY-MM-DD`); absent: from the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    /// The last day it is in force; absent: until a later version replaces it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<String>,
    /// Whether a bare name (or detection) picks this version today.
    pub current: bool,
}

/// A summary of a pack, for listings.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackInfo {
    pub id: String,
    pub version: String,
    pub title: String,
    pub rules: usize,
}

impl Catalog {
    /// An empty catalogue (no profiles).
    pub fn empty() -> Catalog {
        Catalog {
            profiles: Vec::new(),
            packs: Vec::new(),
            loaded_at: now_rfc3339(),
            document_types: Arc::new([]),
            no_profile: Arc::new(RuleSet::no_profile(Vec::new(), Arc::new([]))),
        }
    }

    /// Load and compile `dir` (without the lock and fixture gate of [`Registry`]).
    pub fn load(dir: &Path) -> Result<Catalog, LoadError> {
        Ok(Catalog::of(compile_dir(dir).into_result()?))
    }

    /// The catalogue of a compilation without errors.
    fn of(compiled: Compilation) -> Catalog {
        let mut profiles: Vec<ProfileEntry> = compiled
            .profiles
            .into_iter()
            .map(|p| ProfileEntry {
                def: p.def,
                rules: p.rules,
            })
            .collect();
        profiles.sort_by(|a, b| {
            a.def
                .id
                .cmp(&b.def.id)
                .then_with(|| compare_versions(&a.def.version, &b.def.version))
        });
        // What the installed profiles take, each type once, in declaration order.
        let installed: Vec<DocumentTypeDef> = compiled
            .document_types
            .iter()
            .filter(|t| profiles.iter().any(|p| p.def.documents.contains(&t.id)))
            .cloned()
            .collect();
        let no_profile = RuleSet::no_profile(installed, compiled.document_types.clone());
        Catalog {
            profiles,
            packs: compiled.packs,
            loaded_at: now_rfc3339(),
            document_types: compiled.document_types,
            no_profile: Arc::new(no_profile),
        }
    }

    /// A profile by `id@version`, or by `id` alone (the newest version in force today).
    pub fn profile(&self, name: &str) -> Option<&ProfileEntry> {
        self.resolve(name, today()).ok().map(|(p, _)| p)
    }

    /// A profile by `id@version` (always that version), or by `id` alone: the newest
    /// version in force on `day`, with a sentence saying which and why.
    pub fn resolve(
        &self,
        name: &str,
        day: NaiveDate,
    ) -> Result<(&ProfileEntry, Option<String>), ResolveError> {
        let defs: Vec<&ProfileDef> = self.profiles.iter().map(|p| &p.def).collect();
        resolve_among(&defs, name, day).map(|(i, why)| (&self.profiles[i], why))
    }

    /// The rule set of a profile named `id@version` or `id` (in force today).
    pub fn ruleset(&self, name: &str) -> Option<Arc<RuleSet>> {
        self.profile(name).map(|p| p.rules.clone())
    }

    pub fn profiles(&self) -> &[ProfileEntry] {
        &self.profiles
    }

    pub fn profile_infos(&self) -> Vec<ProfileInfo> {
        self.profiles
            .iter()
            .map(|p| ProfileInfo {
                id: p.def.id.clone(),
                version: p.def.version.clone(),
                title: p.def.title.clone(),
                packs: p.def.packs.clone(),
                documents: p
                    .rules
                    .gate()
                    .map(|g| g.accepted.iter().map(DocumentTypeDef::clark).collect())
                    .unwrap_or_default(),
                customization_ids: p.def.customization_ids.clone(),
                valid_from: p.def.valid_from.clone(),
                valid_until: p.def.valid_until.clone(),
                current: self
                    .profile(&p.def.id)
                    .is_some_and(|c| c.def.version == p.def.version),
            })
            .collect()
    }

    pub fn pack_infos(&self) -> Vec<PackInfo> {
        self.packs
            .iter()
            .map(|p| PackInfo {
                id: p.id.clone(),
                version: p.version.clone(),
                title: p.title.clone(),
                rules: p.rule_count(),
            })
            .collect()
    }

    /// Every pack loaded, `id@version`.
    pub fn versions(&self) -> Vec<String> {
        self.packs.iter().map(|p| p.reference()).collect()
    }

    /// The newest version of every profile in force on `day`.
    fn latest_profiles(&self, day: NaiveDate) -> Vec<&ProfileDef> {
        let defs: Vec<&ProfileDef> = self.profiles.iter().map(|p| &p.def).collect();
        latest_among(&defs, day)
    }

    /// The rule set for `doc`'s detected profile, with a sentence saying which and why (a
    /// report's `detection`). A document no installed profile takes gets the rule set that
    /// refuses it (profile `none`, the finding `INVEX-DOCTYPE`). The reason when
    /// detection cannot choose among the profiles that take the document.
    pub fn detected_ruleset(&self, doc: &Document) -> Result<(Arc<RuleSet>, String), String> {
        self.detected_ruleset_at(doc, today())
    }

    /// [`Catalog::detected_ruleset`] among the profile versions in force on `day`.
    pub fn detected_ruleset_at(
        &self,
        doc: &Document,
        day: NaiveDate,
    ) -> Result<(Arc<RuleSet>, String), String> {
        match detect_profile(doc, &self.latest_profiles(day), &self.document_types) {
            Detected::Profile(d) => match self.resolve(&d.profile, day) {
                Ok((p, why)) => Ok((
                    p.rules.clone(),
                    detection_note(&d.profile, &d.reason, &p.def, why.is_some(), day),
                )),
                // Detection chooses among this catalogue's profiles in force on `day`.
                Err(_) => Err(format!("detected {}, which is not installed", d.profile)),
            },
            Detected::Uncovered(why) => Ok((self.no_profile.clone(), why)),
            Detected::Undecided(why) => Err(why),
        }
    }
}

/// A profile among `defs` (sorted by id then version) by `id@version` (always that
/// version), or by `id` alone: the newest version in force on `day`, with a sentence
/// saying which and why. Its index in `defs`.
pub(crate) fn resolve_among(
    defs: &[&ProfileDef],
    name: &str,
    day: NaiveDate,
) -> Result<(usize, Option<String>), ResolveError> {
    if let Some((id, version)) = name.split_once('@') {
        return defs
            .iter()
            .position(|p| p.id == id && p.version == version)
            .map(|i| (i, None))
            .ok_or(ResolveError::Unknown);
    }
    let versions: Vec<usize> = (0..defs.len()).filter(|&i| defs[i].id == name).collect();
    if versions.is_empty() {
        return Err(ResolveError::Unknown);
    }
    // Sorted by version: the last in force is the newest.
    match versions.iter().rev().find(|&&i| defs[i].in_force(day)) {
        // One version, in force whatever the day: its name says all.
        Some(&i) if versions.len() == 1 && defs[i].window() == "always" => Ok((i, None)),
        Some(&i) => {
            let p = defs[i];
            let reason = format!(
                "{}: the newest version of {name} in force on {day} (in force {}{})",
                p.reference(),
                p.window(),
                if versions.len() > 1 {
                    format!(
                        "; versions: {}",
                        versions
                            .iter()
                            .map(|&v| format!("{} {}", defs[v].version, defs[v].window()))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                } else {
                    String::new()
                }
            );
            Ok((i, Some(reason)))
        }
        None => Err(ResolveError::NotInForce {
            day,
            windows: versions
                .iter()
                .map(|&v| format!("{} {}", defs[v].reference(), defs[v].window()))
                .collect(),
        }),
    }
}

/// The newest version of every profile among `defs` (sorted by id then version) in force
/// on `day`.
pub(crate) fn latest_among<'a>(defs: &[&'a ProfileDef], day: NaiveDate) -> Vec<&'a ProfileDef> {
    let mut out: Vec<&ProfileDef> = Vec::new();
    // Sorted by id then version: the last in force of each id is its newest.
    for p in defs.iter().filter(|p| p.in_force(day)) {
        match out.last_mut() {
            Some(last) if last.id == p.id => *last = p,
            _ => out.push(p),
        }
    }
    out
}

/// A report's `detection`: the profile detected and why, and for a profile with dated or
/// several versions (`versioned`), which version and why.
pub(crate) fn detection_note(
    profile: &str,
    reason: &str,
    def: &ProfileDef,
    versioned: bool,
    day: NaiveDate,
) -> String {
    if versioned {
        format!(
            "detected {profile}: {reason}; version {} (in force {}) as of {day}",
            def.version,
            def.window()
        )
    } else {
        format!("detected {profile}: {reason}")
    }
}

/// Why a profile name did not resolve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("no such profile is installed")]
    Unknown,
    #[error("no version is in force on {day}: {}", windows.join(", "))]
    NotInForce {
        day: NaiveDate,
        /// Each version, `id@version` and its window.
        windows: Vec<String>,
    },
}

/// Today's date (UTC): the day a bare profile name resolves for when none is given.
pub fn today() -> NaiveDate {
    chrono::Utc::now().date_naive()
}

/// The outcome of the last load attempt, as the server exposes it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReloadStatus {
    /// Load attempts so far: 1 is the start, each reload (watcher or API) adds one.
    pub attempt: u64,
    /// When the attempt finished (RFC 3339, UTC).
    pub at: String,
    /// The attempt went live. When false, the packs in force are the last set that passed
    /// (none when the start failed).
    pub ok: bool,
    /// Every problem found, one per line, when the attempt failed.
    pub error: Option<String>,
    /// Per pack, why the set was refused: a lock mismatch or failing fixtures (empty when
    /// it went live, or did not even compile: then see `error`).
    pub refused: Vec<PackRefusal>,
    /// The packs active after the attempt (`id@version`).
    pub versions: Vec<String>,
}

/// What a successful reload changed.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReloadOutcome {
    /// Packs active before, `id@version`.
    pub previous: Vec<String>,
    /// Packs active now.
    pub versions: Vec<String>,
    /// Profiles active now, `id@version`.
    pub profiles: Vec<String>,
    /// The new or changed packs whose fixtures ran and passed.
    pub fixtures_run: Vec<String>,
}

/// Compiled rule packs behind an atomic pointer, reloadable while serving.
pub struct Registry {
    dir: PathBuf,
    catalog: ArcSwap<Catalog>,
    status: Mutex<ReloadStatus>,
    /// Serialises reloads (the watcher's and explicit ones) and guards the lock digests
    /// of the live packs (`id@version` → digest): a pack whose digest is unchanged is
    /// not tested again.
    reloading: Mutex<BTreeMap<String, String>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// Load `dir` through the gate (every pack's fixtures run); fails when anything in
    /// it fails to load or compile, does not match its lock, or fails its fixtures.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Registry, ReloadError> {
        let dir = dir.into();
        let admitted = gate::admit(&dir, &BTreeMap::new())?;
        let catalog = Catalog::of(admitted.compilation);
        let status = ReloadStatus {
            attempt: 1,
            at: now_rfc3339(),
            ok: true,
            error: None,
            refused: Vec::new(),
            versions: catalog.versions(),
        };
        Ok(Registry {
            dir,
            catalog: ArcSwap::from_pointee(catalog),
            status: Mutex::new(status),
            reloading: Mutex::new(admitted.digests),
        })
    }

    /// Load `dir`; when that fails, start with an empty catalogue and the error in the
    /// status (a later successful reload fills it).
    pub fn open_or_empty(dir: impl Into<PathBuf>) -> Registry {
        let dir = dir.into();
        match Registry::open(dir.clone()) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(dir = %dir.display(), error = %e, "rule packs failed to load");
                Registry {
                    dir,
                    catalog: ArcSwap::from_pointee(Catalog::empty()),
                    status: Mutex::new(ReloadStatus {
                        attempt: 1,
                        at: now_rfc3339(),
                        ok: false,
                        error: Some(e.to_string()),
                        refused: e.refusals().to_vec(),
                        versions: Vec::new(),
                    }),
                    reloading: Mutex::new(BTreeMap::new()),
                }
            }
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The catalogue in force. Hold the `Arc` (or a rule set from it) for as long as a
    /// validation runs.
    pub fn current(&self) -> Arc<Catalog> {
        self.catalog.load_full()
    }

    /// The outcome of the last load attempt.
    pub fn status(&self) -> ReloadStatus {
        self.status
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Compile the directory again on this thread and pass it through the gate; swap it
    /// in when it passes, keep the running catalogue otherwise. Either way the status
    /// and the log record the attempt.
    pub fn reload(&self) -> Result<ReloadOutcome, ReloadError> {
        let mut live = self
            .reloading
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let previous = self.current().versions();
        let attempt = self.status().attempt + 1;
        match gate::admit(&self.dir, &live) {
            Ok(admitted) => {
                let catalog = Catalog::of(admitted.compilation);
                let outcome = ReloadOutcome {
                    previous,
                    versions: catalog.versions(),
                    profiles: catalog.profiles.iter().map(|p| p.def.reference()).collect(),
                    fixtures_run: admitted.fixtures_run,
                };
                self.catalog.store(Arc::new(catalog));
                *live = admitted.digests;
                self.set_status(ReloadStatus {
                    attempt,
                    at: now_rfc3339(),
                    ok: true,
                    error: None,
                    refused: Vec::new(),
                    versions: outcome.versions.clone(),
                });
                tracing::info!(
                    dir = %self.dir.display(),
                    versions = %outcome.versions.join(", "),
                    fixtures_run = %outcome.fixtures_run.join(", "),
                    "rule packs reloaded"
                );
                Ok(outcome)
            }
            Err(e) => {
                self.set_status(ReloadStatus {
                    attempt,
                    at: now_rfc3339(),
                    ok: false,
                    error: Some(e.to_string()),
                    refused: e.refusals().to_vec(),
                    versions: previous,
                });
                tracing::warn!(
                    dir = %self.dir.display(),
                    error = %e,
                    "rule-pack reload refused; the last good set stays active"
                );
                Err(e)
            }
        }
    }

    fn set_status(&self, s: ReloadStatus) {
        *self
            .status
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = s;
    }

    /// Watch the directory recursively and reload on a background thread once file
    /// events have settled ([`DEFAULT_QUIET_PERIOD`] without one). Watching stops when the
    /// guard is dropped.
    pub fn watch(self: &Arc<Self>) -> Result<WatchGuard, notify::Error> {
        self.watch_with_debounce(DEFAULT_QUIET_PERIOD)
    }

    /// [`Registry::watch`] with a chosen quiet period: a reload starts only after no file
    /// event arrived for that long, so a pack written in several steps is read once,
    /// complete (and were a pause longer, the incomplete pack would not match its lock).
    pub fn watch_with_debounce(
        self: &Arc<Self>,
        debounce: Duration,
    ) -> Result<WatchGuard, notify::Error> {
        let (tx, rx) = mpsc::channel::<Msg>();
        let events = tx.clone();
        let mut watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
                Ok(event) => {
                    if !matches!(event.kind, notify::EventKind::Access(_)) {
                        let _ = events.send(Msg::Changed);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "rule-pack watcher error"),
            })?;
        watcher.watch(&self.dir, RecursiveMode::Recursive)?;
        let weak: Weak<Registry> = Arc::downgrade(self);
        let thread = std::thread::Builder::new()
            .name("invex-rulepack-watch".into())
            .spawn(move || watch_loop(weak, rx, debounce))
            .map_err(|e| notify::Error::generic(&format!("cannot start the watch thread: {e}")))?;
        tracing::info!(dir = %self.dir.display(), "watching rule packs");
        Ok(WatchGuard {
            watcher: Some(watcher),
            stop: tx,
            thread: Some(thread),
        })
    }
}

/// How long the watcher waits without file events before it reloads.
pub const DEFAULT_QUIET_PERIOD: Duration = Duration::from_millis(500);

enum Msg {
    Changed,
    Stop,
}

fn watch_loop(registry: Weak<Registry>, rx: mpsc::Receiver<Msg>, debounce: Duration) {
    // Wait for a change, then until no event arrived for a quiet period, then reload.
    while let Ok(Msg::Changed) = rx.recv() {
        loop {
            match rx.recv_timeout(debounce) {
                Ok(Msg::Changed) => continue,
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
        let Some(registry) = registry.upgrade() else {
            return;
        };
        // Refusals are logged and recorded in the status by reload itself.
        let _ = registry.reload();
    }
}

/// Keeps a [`Registry::watch`] running; dropping it stops the watcher and its thread.
pub struct WatchGuard {
    watcher: Option<notify::RecommendedWatcher>,
    stop: mpsc::Sender<Msg>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.watcher.take();
        let _ = self.stop.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl std::fmt::Debug for WatchGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchGuard").finish_non_exhaustive()
    }
}

fn now_rfc3339() -> String {
    let now: chrono::DateTime<chrono::Utc> = SystemTime::now().into();
    now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests;
