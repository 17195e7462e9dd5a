//! Probes the test prerequisites from outside the repository (the conformance corpus,
//! xmllint, OpenSSH's client, curl): see ../tools/build/probe.rs.

include!("../tools/build/probe.rs");

fn main() {
    probe_this_crate();
}
