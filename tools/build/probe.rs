// Test prerequisites from outside the repository, `include!`d by the build scripts of
// engine/, server/ and tests/ (each calls `probe_test_environment` with the workspace root).
//
// libtest cannot skip a test at run time: a test passes, fails, or was marked `#[ignore]`
// when it was compiled. So presence is decided here, when the tests are built: a missing
// prerequisite sets a cfg (`invex_no_corpus`, `invex_no_xmllint`, `invex_no_sftp`,
// `invex_no_curl`), and the tests that need it carry
// `#[cfg_attr(invex_no_…, ignore = "why")]`, which `cargo test` counts as ignored and
// lists with the reason. With `INVEX_REQUIRE_…=1` (set by .ci/run) a missing prerequisite
// fails the build instead.
//
// Cargo reruns the probe when one of the variables below changes or a file it found
// changes, not when something missing appears: after installing a tool (or providing the
// corpus) `touch <crate>/build.rs` or `cargo clean -p <crate>`.

/// [`probe_test_environment`] for the crate being built (a member of the workspace).
fn probe_this_crate() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let manifest = std::path::Path::new(&manifest);
    probe_test_environment(manifest.parent().unwrap_or(manifest));
}

/// Prints the cfgs and rerun conditions of the test prerequisites; `repo` is the workspace
/// root.
fn probe_test_environment(repo: &std::path::Path) {
    for cfg in [
        "invex_no_corpus",
        "invex_no_xmllint",
        "invex_no_sftp",
        "invex_no_curl",
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
    }
    for var in [
        "INVEX_CONFORMANCE",
        "INVEX_REQUIRE_CORPUS",
        "INVEX_REQUIRE_XMLLINT",
        "INVEX_REQUIRE_SFTP",
        "INVEX_REQUIRE_CURL",
    ] {
        println!("cargo::rerun-if-env-changed={var}");
    }

    // The official corpus: $INVEX_CONFORMANCE, else ../shared/conformance next to the
    // repository (the tests read it from the same place at run time).
    let root = match std::env::var_os("INVEX_CONFORMANCE") {
        Some(dir) if !dir.is_empty() => std::path::PathBuf::from(dir),
        _ => repo.join("../shared/conformance"),
    };
    let corpus = root.join("corpus");
    if corpus.is_dir() {
        println!("cargo::rerun-if-changed={}", corpus.display());
    } else {
        probe_missing(
            "invex_no_corpus",
            "INVEX_REQUIRE_CORPUS",
            "the conformance corpus",
            &format!("no directory {}", corpus.display()),
            "set INVEX_CONFORMANCE to the conformance directory (the one holding corpus/) \
             or provide ../shared/conformance next to the repository",
        );
    }

    probe_tools(
        &["xmllint"],
        "invex_no_xmllint",
        "INVEX_REQUIRE_XMLLINT",
        "libxml2-utils",
    );
    probe_tools(
        &["sftp", "ssh-keygen"],
        "invex_no_sftp",
        "INVEX_REQUIRE_SFTP",
        "openssh-client",
    );
    probe_tools(&["curl"], "invex_no_curl", "INVEX_REQUIRE_CURL", "curl");
}

/// Looks for every tool of `names` as an executable file in a directory of PATH.
fn probe_tools(names: &[&str], cfg: &str, require: &str, debian: &str) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut missing = Vec::new();
    for name in names {
        let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
        let found = std::env::split_paths(&path)
            .map(|dir| dir.join(&file))
            .find(|candidate| probe_is_executable(candidate.as_path()));
        match found {
            Some(found) => println!("cargo::rerun-if-changed={}", found.display()),
            None => missing.push(*name),
        }
    }
    if !missing.is_empty() {
        let missing = missing.join(" and ");
        probe_missing(
            cfg,
            require,
            &missing,
            "not found in any directory of PATH",
            &format!("Debian: apt-get install {debian}"),
        );
    }
}

#[cfg(unix)]
fn probe_is_executable(file: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn probe_is_executable(file: &std::path::Path) -> bool {
    file.is_file()
}

/// `what` is missing (`where_` says where it was looked for): a build error when `require`
/// is 1, else the tests that need it are compiled as ignored.
fn probe_missing(cfg: &str, require: &str, what: &str, where_: &str, fix: &str) {
    if std::env::var(require).is_ok_and(|v| v == "1") {
        panic!("{require}=1 requires {what} for the tests: {where_}; {fix}");
    }
    println!("cargo::rustc-cfg={cfg}");
    // Said where tests are built (the dev profile), not to someone installing a release.
    if std::env::var("PROFILE").is_ok_and(|p| p != "debug") {
        return;
    }
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    println!(
        "cargo::warning=tests that need {what} are ignored ({cfg}): {where_}; {fix}, then \
         `touch {manifest}/build.rs` or `cargo clean -p {package}` to probe again"
    );
}
