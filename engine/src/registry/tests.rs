use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::pack::tests::{pack_yaml, profiles_yaml, write};

const DOC: &str = r#"<Doc xmlns="urn:test:doc"><Line/><Line/></Doc>"#;

/// A pack whose single assert fires with `message` on every document.
fn versioned_pack(root: &Path, version: &str, message: &str) {
    write(
        root,
        &format!("p/{version}/pack.yaml"),
        &pack_yaml("p", version, &["patterns/main.yaml"], ""),
    );
    write(
        root,
        &format!("p/{version}/patterns/main.yaml"),
        &format!(
            "pattern: main
rules:
  - context: /t:Doc
    asserts:
      - id: V-1
        flag: warning
        test: count(t:Line) = 0
        message: {message}
"
        ),
    );
}

fn profile_on(root: &Path, version: &str) {
    let pack = format!("p@{version}");
    write(
        root,
        "profiles.yaml",
        &profiles_yaml(&[("prof", "1", &[pack.as_str()])]),
    );
}

fn break_pack(root: &Path, version: &str) {
    write(
        root,
        &format!("p/{version}/patterns/main.yaml"),
        "pattern: main
rules:
  - context: /t:Doc
    asserts:
      - id: V-1
        flag: warning
        test: count(t:Line = 0
        message: broken
",
    );
}

#[test]
fn profiles_by_id_and_by_version() {
    let dir = tempfile::tempdir().unwrap();
    versioned_pack(dir.path(), "1", "one");
    versioned_pack(dir.path(), "2", "two");
    write(
        dir.path(),
        "profiles.yaml",
        &profiles_yaml(&[("prof", "10", &["p@2"]), ("prof", "9", &["p@1"])]),
    );
    let reg = Registry::open(dir.path()).unwrap();
    let cat = reg.current();
    assert_eq!(cat.ruleset("prof").unwrap().profile(), "prof@10");
    assert_eq!(cat.ruleset("prof@9").unwrap().rules_version(), ["p@1"]);
    assert!(cat.ruleset("nope").is_none());
    assert_eq!(cat.versions(), ["p@1", "p@2"]);
    assert_eq!(cat.pack_infos()[0].rules, 1);
    assert!(reg.status().ok);
}

#[test]
fn reload_swaps_and_in_flight_rule_sets_stay_valid() {
    let dir = tempfile::tempdir().unwrap();
    versioned_pack(dir.path(), "1", "one");
    profile_on(dir.path(), "1");
    let reg = Registry::open(dir.path()).unwrap();
    let before = reg.current().ruleset("prof").unwrap();

    versioned_pack(dir.path(), "2", "two");
    profile_on(dir.path(), "2");
    let outcome = reg.reload().unwrap();
    assert_eq!(outcome.previous, ["p@1"]);
    assert_eq!(outcome.versions, ["p@1", "p@2"]);
    assert_eq!(outcome.profiles, ["prof@1"]);

    let after = reg.current().ruleset("prof").unwrap();
    let r = after.validate_bytes(DOC.as_bytes()).unwrap();
    assert_eq!(r.rules_version, ["p@2"]);
    assert_eq!(r.findings[0].message, "two");
    // The rule set taken before the swap still works and says what it ran.
    let r = before.validate_bytes(DOC.as_bytes()).unwrap();
    assert_eq!(r.rules_version, ["p@1"]);
    assert_eq!(r.findings[0].message, "one");
    assert!(reg.status().ok);
}

#[test]
fn a_broken_pack_keeps_the_running_version() {
    let dir = tempfile::tempdir().unwrap();
    versioned_pack(dir.path(), "1", "one");
    profile_on(dir.path(), "1");
    let reg = Registry::open(dir.path()).unwrap();
    let catalog_before = reg.current();

    break_pack(dir.path(), "1");
    let err = reg.reload().unwrap_err();
    assert!(err.diagnostics[0].file.ends_with("main.yaml"));
    assert_eq!(err.diagnostics[0].line, 7);

    let status = reg.status();
    assert!(!status.ok);
    let msg = status.error.unwrap();
    assert!(msg.contains("main.yaml:7:9:"), "{msg}");
    assert_eq!(status.versions, ["p@1"]);
    assert!(Arc::ptr_eq(&catalog_before, &reg.current()));
    let r = reg
        .current()
        .ruleset("prof@1")
        .unwrap()
        .validate_bytes(DOC.as_bytes())
        .unwrap();
    assert_eq!(r.findings[0].message, "one");

    // Fixing it recovers.
    versioned_pack(dir.path(), "1", "fixed");
    reg.reload().unwrap();
    assert!(reg.status().ok);
    let r = reg
        .current()
        .ruleset("prof")
        .unwrap()
        .validate_bytes(DOC.as_bytes())
        .unwrap();
    assert_eq!(r.findings[0].message, "fixed");
}

#[test]
fn open_or_empty_records_the_error() {
    let dir = tempfile::tempdir().unwrap();
    versioned_pack(dir.path(), "1", "one");
    break_pack(dir.path(), "1");
    profile_on(dir.path(), "1");
    let reg = Registry::open_or_empty(dir.path());
    assert!(reg.current().profiles().is_empty());
    assert!(!reg.status().ok);
    assert!(Registry::open(dir.path()).is_err());
}

fn wait_for(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Validations run in a loop on other threads while packs change on disk: none fails,
/// the new version shows up in `rules_version`, a broken edit keeps the running version.
#[test]
fn hot_reload_while_validating() {
    let dir = tempfile::tempdir().unwrap();
    versioned_pack(dir.path(), "1", "one");
    profile_on(dir.path(), "1");
    let reg = Arc::new(Registry::open(dir.path()).unwrap());
    let guard = reg.watch_with_debounce(Duration::from_millis(100)).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let failures = Arc::new(AtomicUsize::new(0));
    let seen_v2 = Arc::new(AtomicBool::new(false));
    let validations = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (reg, stop, failures, seen_v2, validations) = (
                reg.clone(),
                stop.clone(),
                failures.clone(),
                seen_v2.clone(),
                validations.clone(),
            );
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Some(rules) = reg.current().ruleset("prof") else {
                        failures.fetch_add(1, Ordering::Relaxed);
                        continue;
                    };
                    match rules.validate_bytes(DOC.as_bytes()) {
                        Ok(r) => {
                            let expected = match r.rules_version.as_slice() {
                                [v] if v == "p@1" => "one",
                                [v] if v == "p@2" => {
                                    seen_v2.store(true, Ordering::Relaxed);
                                    "two"
                                }
                                _ => "?",
                            };
                            if r.findings.len() != 1 || r.findings[0].message != expected {
                                failures.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        Err(_) => {
                            failures.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    validations.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();

    wait_for("first validations", Duration::from_secs(10), || {
        validations.load(Ordering::Relaxed) > 10
    });
    // A new version, then the profile switched to it.
    versioned_pack(dir.path(), "2", "two");
    profile_on(dir.path(), "2");
    wait_for("p@2 in rules_version", Duration::from_secs(20), || {
        seen_v2.load(Ordering::Relaxed)
    });
    assert!(reg.status().ok, "{:?}", reg.status());

    // A broken edit: the running version stays.
    break_pack(dir.path(), "2");
    wait_for("the failed reload", Duration::from_secs(20), || {
        !reg.status().ok
    });
    let n = validations.load(Ordering::Relaxed);
    wait_for(
        "validations after the broken edit",
        Duration::from_secs(10),
        || validations.load(Ordering::Relaxed) > n + 10,
    );
    assert_eq!(
        reg.current().ruleset("prof").unwrap().rules_version(),
        ["p@2"]
    );

    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    drop(guard);
    assert_eq!(failures.load(Ordering::Relaxed), 0);
    assert!(reg.status().error.unwrap().contains("main.yaml"));
}
