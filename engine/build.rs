//! Fingerprints the XPath compiler's source for the expression memo (`xpath::memo`): a memo
//! file written by one build is read only by a build of the same compiler, so a change to
//! the IR or the lowering can never meet IR written before it.
//!
//! Also probes the test prerequisites from outside the repository (../tools/build/probe.rs);
//! the engine's own tests need the conformance corpus and xmllint.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;

include!("../tools/build/probe.rs");

fn main() {
    probe_this_crate();
    let dir = Path::new("src/xpath");
    println!("cargo:rerun-if-changed=src/xpath");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    // Two differently seeded hashes make a 128-bit fingerprint: a stale memo must not be
    // mistaken for a current one by a collision.
    let mut a = DefaultHasher::new();
    let mut b = DefaultHasher::new();
    0xA5u8.hash(&mut b);
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_default();
        for h in [&mut a, &mut b] {
            f.file_name().hash(h);
            bytes.hash(h);
        }
    }
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    for h in [&mut a, &mut b] {
        version.hash(h);
    }
    println!(
        "cargo:rustc-env=INVEX_XPATH_FINGERPRINT={:016x}{:016x}",
        a.finish(),
        b.finish()
    );
}
