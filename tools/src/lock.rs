//! `invex rules lock`: vouch for a rule-pack directory as it is. Writes `pack.lock` into
//! every pack and `profiles.lock` beside `profiles.yaml`, once every pack compiles and
//! passes its fixtures; `--check` compares the files with their locks instead (for CI).
//! The server serves only packs that match their locks (see docs/rule-packs.md).

use std::fmt::Write as _;
use std::path::Path;

use invex_engine::lock::{LockError, Locks, PackLock, ProfilesLock, PACK_LOCK, PROFILES_LOCK};
use invex_engine::pack::PROFILES_FILE;
use invex_engine::rules::compile_dir;

use crate::fixtures::run_compiled;

/// How `invex rules lock` ended; maps to the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockOutcome {
    /// Locks written, or (`--check`) every lock matches: exit 0.
    Ok,
    /// Fixtures fail (nothing written), or (`--check`) a lock is missing or differs: exit 1.
    Refused,
    /// The packs do not load or compile, or a file cannot be read or written: exit 2.
    Error,
}

impl LockOutcome {
    pub fn exit_code(self) -> u8 {
        match self {
            LockOutcome::Ok => 0,
            LockOutcome::Refused => 1,
            LockOutcome::Error => 2,
        }
    }
}

/// The outcome and what to print.
#[derive(Clone, Debug)]
pub struct LockRun {
    pub outcome: LockOutcome,
    pub output: String,
}

fn error(e: impl std::fmt::Display) -> LockRun {
    LockRun {
        outcome: LockOutcome::Error,
        output: format!("error: {e}\n"),
    }
}

/// The locks of `dir` as it is, when everything compiles.
fn current(dir: &Path) -> Result<(Locks, invex_engine::rules::Compilation), LockRun> {
    let c = compile_dir(dir);
    if !c.is_ok() {
        let mut output = String::new();
        for d in &c.diagnostics {
            let _ = writeln!(output, "error: {d}");
        }
        let _ = writeln!(output, "not locked: the rule packs do not load");
        return Err(LockRun {
            outcome: LockOutcome::Error,
            output,
        });
    }
    let locks = Locks::of(&c).map_err(error)?;
    Ok((locks, c))
}

/// Run every fixture, then write the lock files of `dir`.
pub fn lock(dir: &Path) -> LockRun {
    let (locks, c) = match current(dir) {
        Ok(x) => x,
        Err(run) => return run,
    };
    let fixtures = run_compiled(&c);
    if !fixtures.ok() {
        let mut output = fixtures.render();
        let _ = writeln!(output, "not locked: fixtures fail; fix the packs first");
        return LockRun {
            outcome: LockOutcome::Refused,
            output,
        };
    }
    if let Err(e) = locks.write(dir) {
        return error(e);
    }
    let mut output = String::new();
    for (d, l) in &locks.packs {
        let _ = writeln!(
            output,
            "locked {}: {} rules, {} files, digest {} ({})",
            l.reference(),
            l.rules,
            l.files.len(),
            l.digest,
            d.join(PACK_LOCK).display()
        );
    }
    if let Some(p) = &locks.profiles {
        let _ = writeln!(
            output,
            "locked {PROFILES_FILE}: {} profiles ({})",
            p.profiles.len(),
            dir.join(PROFILES_LOCK).display()
        );
    }
    LockRun {
        outcome: LockOutcome::Ok,
        output,
    }
}

/// Compare every pack and `profiles.yaml` of `dir` with its lock file.
pub fn check(dir: &Path) -> LockRun {
    let (locks, _) = match current(dir) {
        Ok(x) => x,
        Err(run) => return run,
    };
    let mut output = String::new();
    let mut mismatches = 0;
    let mut report = |what: String, found: Result<Option<Vec<String>>, LockError>| match found {
        Ok(Some(d)) if d.is_empty() => {
            let _ = writeln!(output, "ok {what}");
        }
        Ok(Some(d)) => {
            mismatches += 1;
            for reason in d {
                let _ = writeln!(output, "MISMATCH {what}: {reason}");
            }
        }
        Ok(None) => {
            mismatches += 1;
            let _ = writeln!(output, "MISSING {what}: no lock file");
        }
        Err(e) => {
            mismatches += 1;
            let _ = writeln!(output, "MISMATCH {what}: {e}");
        }
    };
    for (d, actual) in &locks.packs {
        let found = PackLock::read(d).map(|l| l.map(|l| l.differences(actual)));
        report(actual.reference(), found);
    }
    if let Some(actual) = &locks.profiles {
        let found = ProfilesLock::read(dir).map(|l| l.map(|l| l.differences(actual)));
        report(PROFILES_FILE.to_string(), found);
    }
    let outcome = if mismatches == 0 {
        LockOutcome::Ok
    } else {
        let _ = writeln!(
            output,
            "{mismatches} lock(s) do not match: review the changes, then run `invex rules lock`"
        );
        LockOutcome::Refused
    };
    LockRun { outcome, output }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{tree, write, OK_DOC};

    #[test]
    fn lock_then_check_then_notice_a_change() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let r = check(dir.path());
        assert_eq!(r.outcome, LockOutcome::Refused, "{}", r.output);
        assert!(
            r.output.contains("MISSING p@1.0: no lock file"),
            "{}",
            r.output
        );
        assert!(
            r.output.contains("MISSING profiles.yaml: no lock file"),
            "{}",
            r.output
        );

        let r = lock(dir.path());
        assert_eq!(r.outcome, LockOutcome::Ok, "{}", r.output);
        assert!(
            r.output
                .starts_with("locked p@1.0: 2 rules, 4 files, digest "),
            "{}",
            r.output
        );
        let text = std::fs::read_to_string(dir.path().join("p/1.0/pack.lock")).unwrap();
        assert!(
            text.starts_with("# Written by `invex rules lock`"),
            "{text}"
        );
        assert!(text.contains("\nrules: 2\n"), "{text}");
        for f in [
            "fixtures/bad.xml",
            "fixtures/ok.xml",
            "pack.yaml",
            "patterns/main.yaml",
        ] {
            assert!(text.contains(&format!("- path: {f}\n")), "{text}");
        }
        let r = check(dir.path());
        assert_eq!(r.outcome, LockOutcome::Ok, "{}", r.output);
        assert_eq!(r.output, "ok p@1.0\nok profiles.yaml\n");

        write(dir.path(), "p/1.0/fixtures/ok.xml", &format!("{OK_DOC}\n"));
        let r = check(dir.path());
        assert_eq!(r.outcome, LockOutcome::Refused);
        assert!(
            r.output
                .contains("MISMATCH p@1.0: fixtures/ok.xml differs from pack.lock (sha256 "),
            "{}",
            r.output
        );
        assert_eq!(r.outcome.exit_code(), 1);
    }

    #[test]
    fn packs_whose_fixtures_fail_are_not_locked() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        write(dir.path(), "p/1.0/fixtures/bad.xml", OK_DOC);
        let r = lock(dir.path());
        assert_eq!(r.outcome, LockOutcome::Refused, "{}", r.output);
        assert!(
            r.output.contains("FAIL p@1.0 T-01 (fail fixture"),
            "{}",
            r.output
        );
        assert!(!dir.path().join("p/1.0/pack.lock").exists());
        assert!(!dir.path().join("profiles.lock").exists());
    }

    #[test]
    fn broken_packs_are_an_error() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        write(dir.path(), "p/1.0/patterns/main.yaml", "pattern: [");
        for r in [lock(dir.path()), check(dir.path())] {
            assert_eq!(r.outcome, LockOutcome::Error);
            assert_eq!(r.outcome.exit_code(), 2);
            assert!(r.output.contains("main.yaml:"), "{}", r.output);
        }
    }
}
