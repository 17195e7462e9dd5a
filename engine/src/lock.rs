//! Lock files: what a rule-pack directory held when its author vouched for it.
//!
//! `invex rules lock` writes `pack.lock` into every pack directory (its files with their
//! SHA-256, the number of rules it compiles to, a digest over the file list) and
//! `profiles.lock` beside `profiles.yaml`. The registry serves a pack set only when every
//! pack and `profiles.yaml` match their locks, so a half-written or truncated file, even
//! one that is still valid YAML, never goes live (see docs/rule-packs.md).

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::pack::{PackSource, ProfilesDef, Source, PROFILES_FILE};
use crate::rules::{compile_dir, Compilation};

/// The lock file of a pack, in its directory.
pub const PACK_LOCK: &str = "pack.lock";
/// The lock file of `profiles.yaml`, beside it.
pub const PROFILES_LOCK: &str = "profiles.lock";

const HEADER: &str =
    "# Written by `invex rules lock`: the server serves these files only while they match.\n";

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// One file of a pack and its SHA-256.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedFile {
    /// Relative to the pack directory, `/`-separated.
    pub path: String,
    pub sha256: String,
}

/// `pack.lock`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackLock {
    pub pack: String,
    pub version: String,
    /// Asserts and reports the pack compiles to.
    pub rules: usize,
    /// SHA-256 over the file list: a line `<sha256>  <path>\n` per file, in path order.
    pub digest: String,
    /// `pack.yaml`, the pattern files it lists and the fixture files its rules name, in
    /// path order.
    pub files: Vec<LockedFile>,
}

/// `profiles.lock`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfilesLock {
    /// The profiles declared, `id@version`, in file order.
    pub profiles: Vec<String>,
    /// SHA-256 of `profiles.yaml`.
    pub sha256: String,
}

/// A lock file that cannot be read, parsed or written, or a pack that cannot be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a lock file: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the rule packs in {} do not load:\n{errors}", dir.display())]
    Load {
        dir: PathBuf,
        errors: crate::pack::LoadError,
    },
}

/// `path` relative to `base`, `/`-separated; `None` when it lies elsewhere.
fn relative(base: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(base).ok()?;
    let parts: Option<Vec<&str>> = rel
        .components()
        .map(|c| match c {
            Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    parts.map(|p| p.join("/"))
}

fn digest_of(files: &[LockedFile]) -> String {
    let mut h = Sha256::new();
    for f in files {
        h.update(f.sha256.as_bytes());
        h.update(b"  ");
        h.update(f.path.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

fn read_lock<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, LockError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(LockError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    crate::yaml::from_str(&text)
        .map(Some)
        .map_err(|e| LockError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
}

fn write_lock<T: Serialize>(path: &Path, lock: &T) -> Result<(), LockError> {
    // Plain structs of strings and numbers: serialization cannot fail.
    let text = format!(
        "{HEADER}{}",
        crate::yaml::to_string(lock).unwrap_or_default()
    );
    std::fs::write(path, text).map_err(|source| LockError::Write {
        path: path.to_path_buf(),
        source,
    })
}

impl PackLock {
    /// The lock of a loaded pack that compiles to `rules` checks: `pack.yaml` and its
    /// pattern files as they were parsed, and its fixture files as they are now.
    pub fn of(src: &PackSource, rules: usize) -> Result<PackLock, LockError> {
        let mut files = Vec::new();
        for s in std::iter::once((&src.pack.file, &src.pack.sha256))
            .chain(src.patterns.iter().map(|p| (&p.file, &p.sha256)))
        {
            let path = relative(&src.dir, s.0).unwrap_or_else(|| s.0.display().to_string());
            files.push(LockedFile {
                path,
                sha256: s.1.clone(),
            });
        }
        // A schema pack's schema files, each as the schema compiler read it.
        for (path, sha256) in src.schema.iter().flat_map(|s| &s.files) {
            files.push(LockedFile {
                path: path.clone(),
                sha256: sha256.clone(),
            });
        }
        let schema_rules = src.pack.def.schema.iter().flat_map(|s| &s.rules);
        let mut fixtures: Vec<&String> = src
            .checks()
            .into_iter()
            .flat_map(|(_, c)| c.fixtures.pass.iter().chain(&c.fixtures.fail))
            .chain(schema_rules.flat_map(|r| r.fixtures.pass.iter().chain(&r.fixtures.fail)))
            .collect();
        fixtures.sort();
        fixtures.dedup();
        let dir = src.fixtures_dir();
        for name in fixtures {
            let path = dir.join(name);
            let bytes = std::fs::read(&path).map_err(|source| LockError::Read {
                path: path.clone(),
                source,
            })?;
            files.push(LockedFile {
                path: relative(&src.dir, &path).unwrap_or_else(|| format!("fixtures/{name}")),
                sha256: sha256_hex(&bytes),
            });
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files.dedup_by(|a, b| a.path == b.path);
        Ok(PackLock {
            pack: src.pack.def.pack.clone(),
            version: src.pack.def.version.clone(),
            rules,
            digest: digest_of(&files),
            files,
        })
    }

    /// `dir/pack.lock`, `None` when there is none.
    pub fn read(dir: &Path) -> Result<Option<PackLock>, LockError> {
        read_lock(&dir.join(PACK_LOCK))
    }

    pub fn write(&self, dir: &Path) -> Result<(), LockError> {
        write_lock(&dir.join(PACK_LOCK), self)
    }

    /// `id@version`.
    pub fn reference(&self) -> String {
        format!("{}@{}", self.pack, self.version)
    }

    /// How `actual` (the pack as it is) differs from this lock; empty when it matches.
    pub fn differences(&self, actual: &PackLock) -> Vec<String> {
        let mut out = Vec::new();
        if self.reference() != actual.reference() {
            out.push(format!(
                "{PACK_LOCK} is for {}, not {}",
                self.reference(),
                actual.reference()
            ));
        }
        for f in &actual.files {
            match self.files.iter().find(|l| l.path == f.path) {
                None => out.push(format!("{} is not in {PACK_LOCK}", f.path)),
                Some(l) if l.sha256 != f.sha256 => out.push(format!(
                    "{} differs from {PACK_LOCK} (sha256 {}, locked {})",
                    f.path,
                    short(&f.sha256),
                    short(&l.sha256)
                )),
                Some(_) => {}
            }
        }
        for l in &self.files {
            if !actual.files.iter().any(|f| f.path == l.path) {
                out.push(format!(
                    "{PACK_LOCK} lists {}, which the pack no longer has or uses",
                    l.path
                ));
            }
        }
        if self.rules != actual.rules {
            out.push(format!(
                "the pack compiles to {} rules, {PACK_LOCK} says {}",
                actual.rules, self.rules
            ));
        }
        if out.is_empty() && (self.digest != actual.digest || self.digest != digest_of(&self.files))
        {
            out.push(format!(
                "the digest of {PACK_LOCK} does not match its file list"
            ));
        }
        out
    }
}

fn short(hex: &str) -> &str {
    hex.get(..12).unwrap_or(hex)
}

impl ProfilesLock {
    /// The lock of `profiles.yaml` as it was parsed.
    pub fn of(src: &Source<ProfilesDef>) -> ProfilesLock {
        ProfilesLock {
            profiles: src.def.profiles.iter().map(|p| p.reference()).collect(),
            sha256: src.sha256.clone(),
        }
    }

    /// `root/profiles.lock`, `None` when there is none.
    pub fn read(root: &Path) -> Result<Option<ProfilesLock>, LockError> {
        read_lock(&root.join(PROFILES_LOCK))
    }

    pub fn write(&self, root: &Path) -> Result<(), LockError> {
        write_lock(&root.join(PROFILES_LOCK), self)
    }

    /// How `actual` differs from this lock; empty when it matches.
    pub fn differences(&self, actual: &ProfilesLock) -> Vec<String> {
        let mut out = Vec::new();
        for p in &self.profiles {
            if !actual.profiles.contains(p) {
                out.push(format!("profile {p} of {PROFILES_LOCK} is missing"));
            }
        }
        for p in &actual.profiles {
            if !self.profiles.contains(p) {
                out.push(format!("profile {p} is not in {PROFILES_LOCK}"));
            }
        }
        if self.sha256 != actual.sha256 {
            out.push(format!(
                "{PROFILES_FILE} differs from {PROFILES_LOCK} (sha256 {}, locked {})",
                short(&actual.sha256),
                short(&self.sha256)
            ));
        }
        out
    }
}

/// The locks of a compiled directory as it is: one per pack, and `profiles.yaml`'s.
#[derive(Clone, Debug)]
pub struct Locks {
    pub packs: Vec<(PathBuf, PackLock)>,
    pub profiles: Option<ProfilesLock>,
}

impl Locks {
    /// The locks of `c`, which must have compiled without errors.
    pub fn of(c: &Compilation) -> Result<Locks, LockError> {
        let mut packs = Vec::new();
        for src in &c.sources.packs {
            let rules = c.pack(&src.reference()).map_or(0, |p| p.rule_count());
            packs.push((src.dir.clone(), PackLock::of(src, rules)?));
        }
        Ok(Locks {
            packs,
            profiles: c.sources.profiles.as_ref().map(ProfilesLock::of),
        })
    }

    /// Write every lock file.
    pub fn write(&self, root: &Path) -> Result<(), LockError> {
        for (dir, lock) in &self.packs {
            lock.write(dir)?;
        }
        if let Some(p) = &self.profiles {
            p.write(root)?;
        }
        Ok(())
    }
}

/// Compile `root` and write the lock files of its files as they are, without running
/// fixtures (`invex rules lock` runs them first and refuses to lock failing packs).
pub fn write_locks(root: &Path) -> Result<Locks, LockError> {
    let c = compile_dir(root)
        .into_result()
        .map_err(|errors| LockError::Load {
            dir: root.to_path_buf(),
            errors,
        })?;
    let locks = Locks::of(&c)?;
    locks.write(root)?;
    Ok(locks)
}
