use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::lock::write_locks;
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
    write_locks(dir.path()).unwrap();
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
    write_locks(dir.path()).unwrap();
    let reg = Registry::open(dir.path()).unwrap();
    let before = reg.current().ruleset("prof").unwrap();

    versioned_pack(dir.path(), "2", "two");
    profile_on(dir.path(), "2");
    write_locks(dir.path()).unwrap();
    let outcome = reg.reload().unwrap();
    assert_eq!(outcome.previous, ["p@1"]);
    assert_eq!(outcome.versions, ["p@1", "p@2"]);
    assert_eq!(outcome.profiles, ["prof@1"]);
    // Only the new pack is tested again.
    assert_eq!(outcome.fixtures_run, ["p@2"]);

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
    write_locks(dir.path()).unwrap();
    let reg = Registry::open(dir.path()).unwrap();
    let catalog_before = reg.current();

    break_pack(dir.path(), "1");
    let ReloadError::Load(err) = reg.reload().unwrap_err() else {
        panic!("a load error expected")
    };
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

    // Fixing it (and vouching for it) recovers.
    versioned_pack(dir.path(), "1", "fixed");
    write_locks(dir.path()).unwrap();
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
    write_locks(dir.path()).unwrap();
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
    write_locks(dir.path()).unwrap();
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

/// A pack `g@{version}` with three asserts in one pattern file, each with a fail fixture
/// (and a common pass fixture), in profile `prof`.
fn gated_pack(root: &Path, version: &str) {
    write(
        root,
        &format!("g/{version}/pack.yaml"),
        &pack_yaml("g", version, &["patterns/main.yaml"], ""),
    );
    let rule = |id: &str, test: &str, fail: &str| {
        format!(
            "  - context: /t:Doc
    asserts:
      - id: {id}
        flag: fatal
        test: {test}
        message: {id} failed.
        fixtures:
          pass: [ok.xml]
          fail: [{fail}]
"
        )
    };
    write(
        root,
        &format!("g/{version}/patterns/main.yaml"),
        &format!(
            "pattern: main\nrules:\n{}{}",
            rule("G-1", "exists(t:Line)", "no-lines.xml"),
            // Rules of one pattern see each node once: the other checks share the rule.
            "      - id: G-2\n        flag: fatal\n        test: count(t:Line) < 3\n        \
             message: G-2 failed.\n        fixtures:\n          pass: [ok.xml]\n          \
             fail: [many-lines.xml]\n      - id: G-3\n        flag: fatal\n        \
             test: not(t:Line[@bad])\n        message: G-3 failed.\n        fixtures:\n          \
             pass: [ok.xml]\n          fail: [bad-line.xml]\n",
        ),
    );
    let fixture = |name: &str, body: &str| {
        write(
            root,
            &format!("g/{version}/fixtures/{name}"),
            &format!("<Doc xmlns='urn:test:doc'>{body}</Doc>"),
        )
    };
    fixture("ok.xml", "<Line/>");
    fixture("no-lines.xml", "");
    fixture("many-lines.xml", "<Line/><Line/><Line/>");
    fixture("bad-line.xml", "<Line bad='1'/>");
    write(
        root,
        "profiles.yaml",
        &profiles_yaml(&[("prof", "1", &[&format!("g@{version}")])]),
    );
}

/// The pattern file of `g@{version}` cut right after its first check: still valid YAML,
/// and a pack with one rule instead of three.
fn truncate_after_first_check(root: &Path, version: &str) {
    let path = root.join(format!("g/{version}/patterns/main.yaml"));
    let text = std::fs::read_to_string(&path).unwrap();
    let cut = text.find("      - id: G-2").unwrap();
    std::fs::write(&path, &text[..cut]).unwrap();
}

fn gated_registry() -> (tempfile::TempDir, Registry) {
    let dir = tempfile::tempdir().unwrap();
    gated_pack(dir.path(), "1");
    write_locks(dir.path()).unwrap();
    let reg = Registry::open(dir.path()).unwrap();
    assert_eq!(reg.current().pack_infos()[0].rules, 3);
    (dir, reg)
}

fn refusal(e: ReloadError) -> Vec<PackRefusal> {
    match e {
        ReloadError::Refused(r) => r.packs,
        ReloadError::Load(e) => panic!("a refusal expected, got a load error: {e}"),
    }
}

/// The reasons given for `pack`.
fn reasons_for(refused: &[PackRefusal], pack: &str) -> Vec<String> {
    refused
        .iter()
        .find(|r| r.pack == pack)
        .unwrap_or_else(|| panic!("no refusal for {pack}: {refused:#?}"))
        .reasons
        .clone()
}

/// The live rule set still has every rule: the fixture of the rule a truncation would
/// drop is still invalid.
fn assert_still_three_rules(reg: &Registry, dir: &Path) {
    let cat = reg.current();
    assert_eq!(cat.pack_infos()[0].rules, 3);
    let many = std::fs::read(dir.join("g/1/fixtures/many-lines.xml")).unwrap();
    let r = cat.ruleset("prof").unwrap().validate_bytes(&many).unwrap();
    assert!(!r.is_valid(), "{r:#?}");
    assert_eq!(r.findings[0].rule_id, "G-2");
}

#[test]
fn a_truncated_pattern_file_that_is_still_yaml_is_refused() {
    let (dir, reg) = gated_registry();
    truncate_after_first_check(dir.path(), "1");
    // The truncated pack compiles on its own: only its lock tells.
    assert!(Catalog::load(dir.path()).is_ok());
    let refused = refusal(reg.reload().unwrap_err());
    let reasons = reasons_for(&refused, "g@1");
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("patterns/main.yaml differs from pack.lock")),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&"the pack compiles to 1 rules, pack.lock says 3".to_string()),
        "{reasons:?}"
    );
    // The fixtures the truncated file no longer names are noticed as well.
    assert!(
        reasons.contains(
            &"pack.lock lists fixtures/many-lines.xml, which the pack no longer has or uses"
                .to_string()
        ),
        "{reasons:?}"
    );
    assert_still_three_rules(&reg, dir.path());
    let status = reg.status();
    assert!(!status.ok);
    assert_eq!(status.attempt, 2);
    assert_eq!(status.refused, refused);
    assert!(status
        .error
        .unwrap()
        .contains("g@1: patterns/main.yaml differs"));
    assert_eq!(status.versions, ["g@1"]);
}

#[test]
fn a_pack_without_a_lock_is_refused_at_start_and_at_reload() {
    let dir = tempfile::tempdir().unwrap();
    gated_pack(dir.path(), "1");
    let e = Registry::open(dir.path()).unwrap_err();
    let refused = refusal(e);
    assert_eq!(
        reasons_for(&refused, "g@1"),
        ["no pack.lock: run `invex rules lock` once the pack is complete"]
    );
    assert_eq!(
        reasons_for(&refused, "profiles.yaml"),
        ["no profiles.lock: run `invex rules lock` once profiles.yaml is complete"]
    );

    write_locks(dir.path()).unwrap();
    let reg = Registry::open(dir.path()).unwrap();
    // A new version arrives without its lock: refused, the old one stays.
    gated_pack(dir.path(), "2");
    std::fs::copy(
        dir.path().join("g/1/pack.lock"),
        dir.path().join("g/2/pack.lock"),
    )
    .unwrap();
    let refused = refusal(reg.reload().unwrap_err());
    assert!(reasons_for(&refused, "g@2").contains(&"pack.lock is for g@1, not g@2".to_string()));
    // profiles.yaml now stacks prof@1 on g@2.
    let reasons = reasons_for(&refused, "profiles.yaml");
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(
        reasons[0].starts_with("profiles.yaml differs from profiles.lock (sha256 "),
        "{reasons:?}"
    );
    assert_eq!(reg.current().versions(), ["g@1"]);
    // With its own lock it goes live.
    write_locks(dir.path()).unwrap();
    let outcome = reg.reload().unwrap();
    assert_eq!(outcome.versions, ["g@1", "g@2"]);
    assert_eq!(outcome.fixtures_run, ["g@2"]);
}

#[test]
fn a_lock_mismatch_in_a_fixture_or_profiles_yaml_is_refused() {
    let (dir, reg) = gated_registry();
    write(
        dir.path(),
        "g/1/fixtures/ok.xml",
        "<Doc xmlns='urn:test:doc'><Line/><Line/></Doc>",
    );
    let refused = refusal(reg.reload().unwrap_err());
    let reasons = reasons_for(&refused, "g@1");
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(
        reasons[0].starts_with("fixtures/ok.xml differs from pack.lock (sha256 "),
        "{reasons:?}"
    );

    // profiles.yaml cut between two profiles: valid YAML, one profile fewer.
    write_locks(dir.path()).unwrap();
    reg.reload().unwrap();
    write(
        dir.path(),
        "profiles.yaml",
        &profiles_yaml(&[("prof", "1", &["g@1"]), ("other", "1", &["g@1"])]),
    );
    write_locks(dir.path()).unwrap();
    reg.reload().unwrap();
    write(
        dir.path(),
        "profiles.yaml",
        &profiles_yaml(&[("prof", "1", &["g@1"])]),
    );
    let refused = refusal(reg.reload().unwrap_err());
    let reasons = reasons_for(&refused, "profiles.yaml");
    assert!(
        reasons.contains(&"profile other@1 of profiles.lock is missing".to_string()),
        "{reasons:?}"
    );
    assert!(reg.current().ruleset("other").is_some());
}

#[test]
fn failing_fixtures_of_a_changed_pack_are_refused() {
    let (dir, reg) = gated_registry();
    // G-2 now allows up to 5 lines: its fail fixture (3 lines) passes. The lock is
    // written without running fixtures, so only the gate's fixture run can tell.
    let path = dir.path().join("g/1/patterns/main.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("count(t:Line) < 3", "count(t:Line) < 5"),
    )
    .unwrap();
    write_locks(dir.path()).unwrap();
    let refused = refusal(reg.reload().unwrap_err());
    assert_eq!(
        reasons_for(&refused, "g@1"),
        ["fixture fixtures/many-lines.xml (G-2 fail) fails: expected the rule to fire, it did not"]
    );
    assert_still_three_rules(&reg, dir.path());
    // The same set fails at start-up: every pack counts as changed there.
    let e = Registry::open(dir.path()).unwrap_err();
    assert_eq!(refusal(e)[0].pack, "g@1");
}

#[test]
fn a_settled_multi_step_write_goes_live_once() {
    let (dir, reg) = gated_registry();
    let reg = Arc::new(reg);
    let guard = reg.watch_with_debounce(Duration::from_millis(600)).unwrap();
    let before = reg.status().attempt;
    // A new version written file by file, its lock last, with short pauses.
    let staging = tempfile::tempdir().unwrap();
    gated_pack(staging.path(), "2");
    write_locks(staging.path()).unwrap();
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    collect(staging.path(), staging.path(), &mut files);
    // Pattern and fixture files first, then pack.yaml, profiles.yaml and the locks.
    files.sort_by_key(|(rel, _)| {
        let name = rel.to_string_lossy();
        (
            name.ends_with(".lock"),
            name.ends_with("pack.yaml") || name.ends_with("profiles.yaml"),
            name.to_string(),
        )
    });
    for (rel, bytes) in &files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
    wait_for("the reload", Duration::from_secs(20), || {
        reg.status().attempt > before
    });
    // No further event: no further reload.
    std::thread::sleep(Duration::from_millis(1500));
    let status = reg.status();
    assert_eq!(status.attempt, before + 1, "{status:?}");
    assert!(status.ok, "{status:?}");
    assert_eq!(status.versions, ["g@1", "g@2"]);
    assert_eq!(
        reg.current().ruleset("prof").unwrap().rules_version(),
        ["g@2"]
    );
    drop(guard);
}

fn collect(base: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(base, &path, out);
        } else {
            let rel = path.strip_prefix(base).unwrap().to_path_buf();
            out.push((rel, std::fs::read(&path).unwrap()));
        }
    }
}

fn day(s: &str) -> NaiveDate {
    crate::pack::parse_date(s).unwrap()
}

/// Two versions of `prof` with overlapping windows: 1 from 2026-08-24 to 2027-02-23,
/// 2 from 2026-11-23 on.
fn dated_catalog(root: &Path) -> Catalog {
    dated_catalog_of(root, "prof")
}

fn dated_catalog_of(root: &Path, id: &str) -> Catalog {
    versioned_pack(root, "1", "one");
    versioned_pack(root, "2", "two");
    let mut yaml = profiles_yaml(&[(id, "'1'", &["p@1"]), (id, "'2'", &["p@2"])]);
    yaml = yaml.replacen(
        "    packs: [p@1]\n",
        "    packs: [p@1]\n    valid_from: '2026-08-24'\n    valid_until: '2027-02-23'\n",
        1,
    );
    yaml = yaml.replacen(
        "    packs: [p@2]\n",
        "    packs: [p@2]\n    valid_from: '2026-11-23'\n",
        1,
    );
    write(root, "profiles.yaml", &yaml);
    Catalog::load(root).unwrap()
}

#[test]
fn a_bare_name_takes_the_newest_version_in_force_on_the_day() {
    let dir = tempfile::tempdir().unwrap();
    let cat = dated_catalog(dir.path());
    let version = |name: &str, d: &str| {
        cat.resolve(name, day(d))
            .map(|(p, _)| p.def.version.clone())
    };
    // Before the new release: only version 1.
    assert_eq!(version("prof", "2026-09-01").unwrap(), "1");
    // Both in force: the newest.
    assert_eq!(version("prof", "2026-11-23").unwrap(), "2");
    assert_eq!(version("prof", "2027-01-15").unwrap(), "2");
    // Version 1's last day, and after it.
    assert_eq!(version("prof", "2027-02-23").unwrap(), "2");
    assert_eq!(version("prof", "2030-01-01").unwrap(), "2");
    // An exact version is always that version, in force or not.
    assert_eq!(version("prof@1", "2030-01-01").unwrap(), "1");
    assert_eq!(version("prof@1", "2020-01-01").unwrap(), "1");
    // Nothing in force before the first window.
    match cat.resolve("prof", day("2026-01-01")) {
        Err(ResolveError::NotInForce { windows, .. }) => assert_eq!(
            windows,
            ["prof@1 2026-08-24 to 2027-02-23", "prof@2 from 2026-11-23"]
        ),
        other => panic!("{:?}", other.map(|(p, _)| p.def.reference())),
    }
    assert_eq!(
        cat.resolve("nope", day("2027-01-15"))
            .map(|(p, _)| p.def.reference()),
        Err(ResolveError::Unknown)
    );
    // The reason names the version, the day and the windows.
    let (_, why) = cat.resolve("prof", day("2027-01-15")).unwrap();
    assert_eq!(
        why.as_deref(),
        Some(
            "prof@2: the newest version of prof in force on 2027-01-15 (in force from \
             2026-11-23; versions: 1 2026-08-24 to 2027-02-23, 2 from 2026-11-23)"
        )
    );
    assert!(cat
        .resolve("prof@2", day("2027-01-15"))
        .unwrap()
        .1
        .is_none());
}

#[test]
fn detection_takes_the_version_in_force_on_the_day() {
    let dir = tempfile::tempdir().unwrap();
    // A document without a specification identifier: detection falls back to the
    // default profile, here with two dated versions.
    let cat = dated_catalog_of(dir.path(), FALLBACK_PROFILE);
    let doc = Document::parse(DOC.as_bytes()).unwrap();
    let (rules, why) = cat.detected_ruleset_at(&doc, day("2026-09-01")).unwrap();
    assert_eq!(rules.profile(), format!("{FALLBACK_PROFILE}@1"));
    assert!(
        why.ends_with("version 1 (in force 2026-08-24 to 2027-02-23) as of 2026-09-01"),
        "{why}"
    );
    let (rules, _) = cat.detected_ruleset_at(&doc, day("2027-03-01")).unwrap();
    assert_eq!(rules.profile(), format!("{FALLBACK_PROFILE}@2"));
}

#[test]
fn profile_windows_must_be_dates_in_order() {
    let dir = tempfile::tempdir().unwrap();
    versioned_pack(dir.path(), "1", "one");
    let yaml = profiles_yaml(&[("prof", "'1'", &["p@1"]), ("other", "'1'", &["p@1"])])
        .replacen(
            "    packs: [p@1]\n",
            "    packs: [p@1]\n    valid_from: '2027-02-30'\n",
            1,
        )
        .replacen(
            "    title: Profile other\n    packs: [p@1]\n",
            "    title: Profile other\n    packs: [p@1]\n    valid_from: '2027-02-01'\n    valid_until: '2027-01-31'\n",
            1,
        );
    write(dir.path(), "profiles.yaml", &yaml);
    let err = Catalog::load(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("valid_from `2027-02-30` of profile prof@1 is not a date YYYY-MM-DD"),
        "{err}"
    );
    assert!(
        err.contains(
            "profile other@1 would be in force until 2027-01-31, before it starts (2027-02-01)"
        ),
        "{err}"
    );
}

#[test]
fn a_single_undated_version_needs_no_reason() {
    let dir = tempfile::tempdir().unwrap();
    versioned_pack(dir.path(), "1", "one");
    write(
        dir.path(),
        "profiles.yaml",
        &profiles_yaml(&[("prof", "'1'", &["p@1"])]),
    );
    let cat = Catalog::load(dir.path()).unwrap();
    let (p, why) = cat.resolve("prof", day("2027-01-15")).unwrap();
    assert_eq!(p.def.reference(), "prof@1");
    assert_eq!(why, None);
}
