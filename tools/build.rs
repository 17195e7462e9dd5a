//! Packs the shipped rule packs (`../rulepacks`) into one archive that `src/embedded.rs`
//! includes in the binary, so that an installed `invex` validates and serves anywhere.
//!
//! The format is ours and trivial (a crate for it would add a build dependency and a
//! decompressor to every build for 11 MB that a binary carries well uncompressed): per
//! file, sorted by path, a u32 LE path length, the `/`-separated relative path, a u64 LE
//! content length and the content. Hidden files are left out.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new("../rulepacks");
    // A directory makes cargo rerun the script when anything below it changes.
    println!("cargo:rerun-if-changed=../rulepacks");
    let mut files = Vec::new();
    collect(root, root, &mut files);
    files.sort();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut archive = Vec::new();
    // Two differently seeded hashes: the extracted copy's directory name (a collision could
    // only make two builds share a directory, whose content is compared byte for byte anyway).
    let mut a = DefaultHasher::new();
    let mut b = DefaultHasher::new();
    0x5Au8.hash(&mut b);
    for rel in &files {
        let bytes = std::fs::read(root.join(rel)).expect("a rule-pack file reads");
        let path = rel.as_bytes();
        archive.extend_from_slice(&(path.len() as u32).to_le_bytes());
        archive.extend_from_slice(path);
        archive.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        archive.extend_from_slice(&bytes);
        for h in [&mut a, &mut b] {
            rel.hash(h);
            bytes.hash(h);
        }
    }
    let mut file = std::fs::File::create(out.join("rulepacks.bin")).expect("OUT_DIR writable");
    file.write_all(&archive).expect("archive written");
    println!(
        "cargo:rustc-env=INVEX_RULEPACKS_DIGEST={:016x}{:016x}",
        a.finish(),
        b.finish()
    );
}

/// Every regular file below `dir` as a `/`-separated path relative to `root`.
fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).expect("the rule-pack directory reads");
    for entry in entries {
        let entry = entry.expect("a directory entry reads");
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().expect("a file type");
        if kind.is_dir() {
            collect(root, &path, out);
        } else if kind.is_file() {
            let rel = path.strip_prefix(root).expect("below the root");
            let parts: Vec<_> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
}
