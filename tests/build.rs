//! Probes the test prerequisites from outside the repository (the conformance corpus,
//! xmllint, OpenSSH's client, curl): see ../tools/build/probe.rs.

use std::path::Path;

include!("../tools/build/probe.rs");

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    probe_test_environment(
        Path::new(&manifest)
            .parent()
            .expect("the crate lies in the workspace"),
    );
}
