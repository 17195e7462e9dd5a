//! The rule packs shipped with this build, carried inside the binary.
//!
//! The engine loads packs from a directory (diagnostics, lock files and fixtures are all
//! about files), so the embedded set is written out once into a directory named by its
//! digest under the cache directory and loaded from there like any other. Before it is
//! used, the copy is compared byte for byte with the embedded files and must hold nothing
//! else: a copy someone changed or added to is replaced, never loaded. Without a cache
//! directory (no `$HOME`), the packs go to a private temporary directory for the process.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The archive `build.rs` wrote (see there for the format).
static ARCHIVE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/rulepacks.bin"));
/// Digest of the embedded files: the name of their copy.
pub const DIGEST: &str = env!("INVEX_RULEPACKS_DIGEST");

/// The embedded files: `/`-separated relative path and content, in path order.
pub fn files() -> impl Iterator<Item = (&'static str, &'static [u8])> {
    Entries { rest: ARCHIVE }
}

struct Entries {
    rest: &'static [u8],
}

impl Iterator for Entries {
    type Item = (&'static str, &'static [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        // The archive is this build's own (build.rs): a malformed one ends the listing.
        let (len, rest) = self.rest.split_first_chunk::<4>()?;
        let (path, rest) = rest.split_at_checked(u32::from_le_bytes(*len) as usize)?;
        let (len, rest) = rest.split_first_chunk::<8>()?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
        let (content, rest) = rest.split_at_checked(len)?;
        self.rest = rest;
        Some((std::str::from_utf8(path).ok()?, content))
    }
}

/// The directory holding the embedded packs, written on first use (see the module docs).
pub fn dir() -> io::Result<PathBuf> {
    static DIR: OnceLock<Result<Copy, String>> = OnceLock::new();
    let copy = DIR.get_or_init(|| {
        let written = match crate::cache_dir() {
            Some(cache) => ensure(&cache.join("rulepacks")).map(Copy::Cached),
            None => private().map(Copy::Private),
        };
        written.map_err(|e| e.to_string())
    });
    match copy {
        Ok(Copy::Cached(dir)) => Ok(dir.clone()),
        Ok(Copy::Private(dir)) => Ok(dir.path().to_path_buf()),
        Err(e) => Err(io::Error::other(format!(
            "cannot write the embedded rule packs out: {e} (set INVEX_CACHE_DIR to a writable \
             directory, or INVEX_RULEPACKS to a rule-pack directory)"
        ))),
    }
}

enum Copy {
    Cached(PathBuf),
    /// Removed when the process ends normally.
    Private(tempfile::TempDir),
}

fn private() -> io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("invex-rulepacks-")
        .tempdir()?;
    write_all(dir.path())?;
    Ok(dir)
}

/// `parent/DIGEST`, holding exactly the embedded files.
pub fn ensure(parent: &Path) -> io::Result<PathBuf> {
    create_private_dir(parent)?;
    let target = parent.join(DIGEST);
    if matches(&target)? {
        return Ok(target);
    }
    // Written beside the target and renamed into place, so that another process never
    // loads a half-written copy. Processes starting together all get here: the first
    // rename wins and the others use its copy (a directory is never renamed over a
    // non-empty one); a copy that does not match is moved aside, never loaded.
    let fresh = tempfile::Builder::new()
        .prefix(&format!(".{DIGEST}."))
        .tempdir_in(parent)?;
    write_all(fresh.path())?;
    for _ in 0..3 {
        if std::fs::rename(fresh.path(), &target).is_ok() {
            // The directory is the copy now: nothing left to remove.
            let _ = fresh.keep();
            return Ok(target);
        }
        if matches(&target)? {
            return Ok(target);
        }
        let stale = tempfile::Builder::new()
            .prefix(&format!(".{DIGEST}.stale."))
            .tempdir_in(parent)?;
        // Another process may have moved it already; the next rename tells.
        let _ = std::fs::rename(&target, stale.path().join("old"));
    }
    Err(io::Error::other(format!(
        "{} keeps changing while the embedded rule packs are written there",
        target.display()
    )))
}

fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

fn write_all(root: &Path) -> io::Result<()> {
    for (rel, content) in files() {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content)?;
    }
    Ok(())
}

/// Whether `dir` holds exactly the embedded files with their content.
fn matches(dir: &Path) -> io::Result<bool> {
    if !dir.is_dir() {
        return Ok(false);
    }
    let mut expected = BTreeSet::new();
    for (rel, content) in files() {
        match std::fs::read(dir.join(rel)) {
            Ok(bytes) if bytes == content => {}
            Ok(_) => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        }
        expected.insert(PathBuf::from(rel));
    }
    let mut found = Vec::new();
    list(dir, dir, &mut found)?;
    Ok(found.len() == expected.len() && found.iter().all(|f| expected.contains(f)))
}

/// Every entry below `dir` that is not a directory (files, links, anything else).
fn list(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            list(root, &path, out)?;
        } else {
            out.push(path.strip_prefix(root).unwrap_or(&path).to_path_buf());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> Option<&'static [u8]> {
        files().find(|(p, _)| *p == path).map(|(_, c)| c)
    }

    #[test]
    fn the_archive_holds_the_shipped_packs() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rulepacks");
        let names: Vec<_> = files().map(|(p, _)| p).collect();
        assert!(names.contains(&"profiles.yaml"), "{names:?}");
        assert!(names.iter().any(|n| n.ends_with("/pack.yaml")));
        for (rel, content) in files() {
            assert_eq!(std::fs::read(root.join(rel)).expect(rel), content, "{rel}");
        }
    }

    #[test]
    fn processes_starting_together_share_one_whole_copy() {
        let cache = tempfile::tempdir().expect("tempdir");
        let dirs: Vec<PathBuf> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| ensure(cache.path()).expect("written")))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect()
        });
        assert!(dirs.iter().all(|d| d == &dirs[0]));
        assert!(matches(&dirs[0]).expect("readable"));
        let names: Vec<_> = std::fs::read_dir(cache.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(DIGEST)]);
    }

    #[test]
    fn a_copy_is_written_once_and_a_changed_copy_is_replaced() {
        let cache = tempfile::tempdir().expect("tempdir");
        let dir = ensure(cache.path()).expect("written");
        assert!(matches(&dir).expect("readable"));
        let profiles = dir.join("profiles.yaml");
        // Changed content, and an extra pack, are both not the embedded set.
        std::fs::write(&profiles, "profiles: []\n").expect("write");
        assert!(!matches(&dir).expect("readable"));
        let again = ensure(cache.path()).expect("rewritten");
        assert_eq!(again, dir);
        assert_eq!(
            std::fs::read(&profiles).expect("read"),
            file("profiles.yaml").expect("embedded")
        );
        std::fs::create_dir_all(dir.join("evil/1.0")).expect("mkdir");
        std::fs::write(dir.join("evil/1.0/pack.yaml"), "id: evil\n").expect("write");
        assert!(!matches(&dir).expect("readable"));
        ensure(cache.path()).expect("rewritten");
        assert!(!dir.join("evil").exists());
        // Nothing but the copy is left behind.
        let names: Vec<_> = std::fs::read_dir(cache.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(DIGEST)]);
    }
}
