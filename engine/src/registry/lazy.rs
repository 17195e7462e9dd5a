//! A catalogue that compiles rule packs only when a profile that stacks them is first
//! asked for, for the command line: `invex validate` of one invoice needs the packs of
//! one profile, not every pack of the directory.
//!
//! Opening it reads `profiles.yaml` alone (checked as a full load checks it); resolution
//! and detection need nothing more, since they look at the profile definitions and the
//! document types only. A profile's packs are loaded, checked and compiled on first use,
//! each pack once however many profiles share it, and concurrently with the other packs
//! of the profile. What a full load ([`Catalog::load`](super::Catalog::load)) would
//! report about packs no profile in use needs is not seen. The server keeps compiling
//! everything up front through the lock and fixture gate ([`Registry`](super::Registry)).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use chrono::NaiveDate;

use super::{detection_note, latest_among, resolve_among, ResolveError};
use crate::detect::{detect_profile, Detected};
use crate::doctype::{DocumentGate, Scope};
use crate::document::Document;
use crate::pack::{self, compare_versions, DocumentTypeDef, LoadError, ProfileDef};
use crate::rules::{build_ruleset, compile_pack, CompiledPack, RuleSet};

type Compiled<T> = Result<Arc<T>, LoadError>;

/// Profiles from `profiles.yaml`, their rule sets compiled on demand.
pub struct LazyCatalog {
    root: PathBuf,
    /// Sorted by id then version.
    profiles: Vec<ProfileDef>,
    /// One cell per profile, in the order of `profiles`.
    rules: Vec<OnceLock<Compiled<RuleSet>>>,
    /// Every pack compiled so far (or failed), by `id@version`.
    packs: Mutex<HashMap<String, Arc<OnceLock<Compiled<CompiledPack>>>>>,
    document_types: Arc<[DocumentTypeDef]>,
    /// The rule set for documents no profile takes.
    no_profile: Arc<RuleSet>,
}

impl std::fmt::Debug for LazyCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyCatalog")
            .field("root", &self.root)
            .field("profiles", &self.profiles.len())
            .finish_non_exhaustive()
    }
}

impl LazyCatalog {
    /// Read and check `<root>/profiles.yaml`; no pack is loaded yet.
    pub fn open(root: &Path) -> Result<LazyCatalog, LoadError> {
        let source = pack::load_profiles(root)?;
        let mut profiles = source.def.profiles;
        profiles.sort_by(|a, b| {
            a.id.cmp(&b.id)
                .then_with(|| compare_versions(&a.version, &b.version))
        });
        let document_types: Arc<[DocumentTypeDef]> = source.def.document_types.into();
        // What the profiles take, each type once, in declaration order.
        let installed: Vec<DocumentTypeDef> = document_types
            .iter()
            .filter(|t| profiles.iter().any(|p| p.documents.contains(&t.id)))
            .cloned()
            .collect();
        let no_profile = Arc::new(RuleSet::no_profile(installed, document_types.clone()));
        Ok(LazyCatalog {
            root: root.to_path_buf(),
            rules: profiles.iter().map(|_| OnceLock::new()).collect(),
            profiles,
            packs: Mutex::new(HashMap::new()),
            document_types,
            no_profile,
        })
    }

    /// The profile definitions, sorted by id then version.
    pub fn profiles(&self) -> &[ProfileDef] {
        &self.profiles
    }

    /// A profile by `id@version` (always that version), or by `id` alone: the newest
    /// version in force on `day`, with a sentence saying which and why. As
    /// [`Catalog::resolve`](super::Catalog::resolve).
    pub fn resolve(
        &self,
        name: &str,
        day: NaiveDate,
    ) -> Result<(&ProfileDef, Option<String>), ResolveError> {
        let defs: Vec<&ProfileDef> = self.profiles.iter().collect();
        resolve_among(&defs, name, day).map(|(i, why)| (&self.profiles[i], why))
    }

    /// The rule set of a profile of this catalogue, compiled on first use.
    pub fn rules(&self, profile: &ProfileDef) -> Result<Arc<RuleSet>, LoadError> {
        let Some(i) = self
            .profiles
            .iter()
            .position(|p| p.id == profile.id && p.version == profile.version)
        else {
            return Err(LoadError {
                diagnostics: vec![pack::Diagnostic::file(
                    self.root.join(pack::PROFILES_FILE),
                    format!("no profile {}", profile.reference()),
                )],
            });
        };
        self.rules[i]
            .get_or_init(|| self.compile_profile(&self.profiles[i]))
            .clone()
    }

    /// The rule set for `doc`'s detected profile among the versions in force on `day`,
    /// with the sentence saying which and why; as
    /// [`Catalog::detected_ruleset_at`](super::Catalog::detected_ruleset_at), except that
    /// the profile's packs are compiled now if they were not yet (and why they do not
    /// compile is the error when they do not).
    pub fn detected_ruleset_at(
        &self,
        doc: &Document,
        day: NaiveDate,
    ) -> Result<(Arc<RuleSet>, String), String> {
        let defs: Vec<&ProfileDef> = self.profiles.iter().collect();
        match detect_profile(doc, &latest_among(&defs, day), &self.document_types) {
            Detected::Profile(d) => match self.resolve(&d.profile, day) {
                Ok((def, why)) => {
                    let rules = self.rules(def).map_err(|e| {
                        format!(
                            "detected {}, whose rule packs failed to load:\n{e}",
                            def.reference()
                        )
                    })?;
                    Ok((
                        rules,
                        detection_note(&d.profile, &d.reason, def, why.is_some(), day),
                    ))
                }
                Err(_) => Err(format!("detected {}, which is not installed", d.profile)),
            },
            Detected::Uncovered(why) => Ok((self.no_profile.clone(), why)),
            Detected::Undecided(why) => Err(why),
        }
    }

    /// Load and compile the packs of `def` (those not compiled yet, at the same time) and
    /// stack them.
    fn compile_profile(&self, def: &ProfileDef) -> Compiled<RuleSet> {
        let cells: Vec<(String, Arc<OnceLock<Compiled<CompiledPack>>>)> = {
            let mut packs = self
                .packs
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            def.packs
                .iter()
                .map(|r| (r.clone(), packs.entry(r.clone()).or_default().clone()))
                .collect()
        };
        // Each pack on a thread of its own: compiling is most of the start-up time, and
        // the packs of a profile do not depend on each other. (A pack another thread is
        // compiling already is waited for.)
        let compiled: Vec<Compiled<CompiledPack>> = std::thread::scope(|scope| {
            let handles: Vec<_> = cells
                .iter()
                .skip(1)
                .map(|(r, cell)| {
                    scope.spawn(move || cell.get_or_init(|| self.compile_pack(r)).clone())
                })
                .collect();
            let mut out = Vec::with_capacity(cells.len());
            if let Some((r, cell)) = cells.first() {
                out.push(cell.get_or_init(|| self.compile_pack(r)).clone());
            }
            for h in handles {
                out.push(h.join().unwrap_or_else(|_| {
                    Err(LoadError {
                        diagnostics: vec![pack::Diagnostic::file(
                            &self.root,
                            "a rule pack's compilation panicked",
                        )],
                    })
                }));
            }
            out
        });
        let mut members = Vec::with_capacity(compiled.len());
        let mut diagnostics = Vec::new();
        for c in compiled {
            match c {
                Ok(p) => members.push(p),
                Err(e) => diagnostics.extend(e.diagnostics),
            }
        }
        if !diagnostics.is_empty() {
            return Err(LoadError { diagnostics });
        }
        let accepted = def
            .documents
            .iter()
            .filter_map(|d| self.document_types.iter().find(|t| t.id == *d).cloned())
            .collect();
        let gate = DocumentGate {
            scope: Scope::Profile(def.reference()),
            accepted,
            declared: self.document_types.clone(),
        };
        build_ruleset(def.reference(), def.title.clone(), members, Some(gate))
            .map(Arc::new)
            .map_err(|diagnostics| LoadError { diagnostics })
    }

    fn compile_pack(&self, reference: &str) -> Compiled<CompiledPack> {
        let source = pack::load_pack_at(&self.root, reference)?;
        let (compiled, diagnostics) = compile_pack(&source);
        match compiled {
            Some(p) if diagnostics.is_empty() => Ok(Arc::new(p)),
            _ => Err(LoadError { diagnostics }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Catalog;

    fn shipped() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rulepacks")
    }

    fn day(s: &str) -> NaiveDate {
        pack::parse_date(s).expect("a date")
    }

    /// Resolution, detection and the reports agree with the eager catalogue on the
    /// shipped packs, and only the packs asked for are compiled.
    #[test]
    fn agrees_with_the_full_catalogue_and_compiles_only_what_is_asked_for() {
        let lazy = LazyCatalog::open(&shipped()).expect("profiles.yaml loads");
        let full = Catalog::load(&shipped()).expect("the packs load");
        let names: Vec<String> = full.profiles().iter().map(|p| p.def.reference()).collect();
        assert_eq!(
            lazy.profiles()
                .iter()
                .map(ProfileDef::reference)
                .collect::<Vec<_>>(),
            names
        );
        for name in ["peppol-bis3", "peppol-bis3-sk", "en16931-ubl", "nope"] {
            for d in ["2026-09-01", "2027-01-15", "2027-03-01", "2020-01-01"] {
                let a = full
                    .resolve(name, day(d))
                    .map(|(p, why)| (p.def.reference(), why));
                let b = lazy
                    .resolve(name, day(d))
                    .map(|(p, why)| (p.reference(), why));
                assert_eq!(a, b, "{name} on {d}");
            }
        }
        assert!(lazy.packs.lock().expect("lock").is_empty());

        let invoice = std::fs::read(shipped().join("../examples/invoice-sk.xml")).expect("example");
        let doc = Document::parse(&invoice).expect("well-formed");
        let at = day("2027-01-15");
        let (eager_rules, eager_note) = full.detected_ruleset_at(&doc, at).expect("detected");
        let (lazy_rules, lazy_note) = lazy.detected_ruleset_at(&doc, at).expect("detected");
        assert_eq!(lazy_note, eager_note);
        assert_eq!(lazy_rules.rules_version(), eager_rules.rules_version());
        let (mut a, mut b) = (eager_rules.validate(&doc), lazy_rules.validate(&doc));
        a.duration_us = 0;
        b.duration_us = 0;
        assert_eq!(a, b);
        // Only the packs of the detected profile were compiled.
        let mut compiled: Vec<String> = lazy.packs.lock().expect("lock").keys().cloned().collect();
        compiled.sort();
        let mut expected = lazy_rules.rules_version();
        expected.sort();
        assert_eq!(compiled, expected);

        // A document no profile takes gets the refusing rule set, as from the full one.
        let html = Document::parse(b"<html/>").expect("well-formed");
        let (rules, note) = lazy.detected_ruleset_at(&html, at).expect("refused");
        assert_eq!(rules.profile(), "none");
        assert_eq!(
            Some(note),
            full.detected_ruleset_at(&html, at).ok().map(|x| x.1)
        );
    }

    #[test]
    fn a_broken_pack_fails_only_the_profiles_that_use_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        };
        let pack = |id: &str, test: &str| {
            write(
                &format!("{id}/1/pack.yaml"),
                &format!(
                    "pack: {id}\nversion: '1'\ntitle: {id}\nnamespaces:\n  t: urn:t\n\
                     patterns: [patterns/main.yaml]\n"
                ),
            );
            write(
                &format!("{id}/1/patterns/main.yaml"),
                &format!(
                    "pattern: main\nrules:\n  - context: /t:Doc\n    asserts:\n      \
                     - id: {id}-1\n        flag: fatal\n        test: {test}\n        \
                     message: m\n        remediation: r\n        owner: sender-mapping\n"
                ),
            );
        };
        pack("good", "true()");
        pack("bad", "count(");
        write(
            "profiles.yaml",
            "document_types:\n  - id: t\n    namespace: urn:t\n    root: Doc\n    title: T\n\
             profiles:\n  - id: ok\n    version: '1'\n    packs: [good@1]\n    documents: [t]\n\
             \x20 - id: broken\n    version: '1'\n    packs: [good@1, bad@1]\n    documents: [t]\n",
        );
        let lazy = LazyCatalog::open(dir.path()).expect("profiles.yaml is fine");
        let today = crate::registry::today();
        let (ok, _) = lazy.resolve("ok", today).expect("ok");
        assert!(lazy.rules(ok).is_ok());
        let (broken, _) = lazy.resolve("broken", today).expect("broken");
        let e = lazy.rules(broken).expect_err("bad@1 does not compile");
        assert!(e.to_string().contains("main.yaml"), "{e}");
        // profiles.yaml naming a pack that is not there fails at once.
        write(
            "profiles.yaml",
            "document_types:\n  - id: t\n    namespace: urn:t\n    root: Doc\n    title: T\n\
             profiles:\n  - id: ok\n    version: '1'\n    packs: [gone@1]\n    documents: [t]\n",
        );
        let e = LazyCatalog::open(dir.path()).expect_err("unknown pack");
        assert!(e.to_string().contains("unknown pack `gone@1`"), "{e}");
    }
}
