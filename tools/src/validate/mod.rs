//! `invex validate`: validate files, directories and standard input against a profile,
//! write the reports in one of several formats, and sum the run up.
//!
//! The inputs are expanded first ([`inputs`]), validated in parallel a chunk at a time
//! and written in order by a [`Sink`] per format; JUnit and SARIF, which describe the
//! whole run, are written at the end. The summary line ([`summary`]) closes the output.

pub mod github;
pub mod inputs;
pub mod json;
pub mod junit;
pub mod sarif;
pub mod summary;
pub mod svrl;
pub mod text;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use chrono::NaiveDate;
use indicatif::{ProgressBar, ProgressStyle};
use invex_engine::document::Document as XmlDocument;
use invex_engine::pack::LoadError;
use invex_engine::registry::{LazyCatalog, ResolveError};
use invex_engine::report::Report;
use invex_engine::rules::{self, RuleSet};
use rayon::prelude::*;

pub use inputs::{FileFilter, Input, InputError, DEFAULT_GLOB, STDIN_NAME};
pub use summary::{FailOn, Summary};
pub use text::{use_color, ColorChoice};

/// Output format of `invex validate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// JSON (one document), JSON Lines with a `file` member (several).
    Json,
    /// ISO Schematron SVRL.
    Svrl,
    /// `path:line:col: severity RULE-ID message` lines.
    Text,
    /// JUnit XML: a test case per document.
    Junit,
    /// SARIF 2.1.0: a result per finding.
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
}

impl Format {
    /// Whether the summary line goes to standard error, so that standard output stays
    /// one parseable document (JSON, SVRL, JUnit, SARIF). Text and GitHub commands end
    /// with it on standard output.
    pub fn summary_on_stderr(self) -> bool {
        !matches!(self, Format::Text | Format::Github)
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "json" => Ok(Format::Json),
            "svrl" => Ok(Format::Svrl),
            "text" => Ok(Format::Text),
            "junit" => Ok(Format::Junit),
            "sarif" => Ok(Format::Sarif),
            "github" => Ok(Format::Github),
            other => Err(format!(
                "unknown format `{other}` (json, svrl, text, junit, sarif, github)"
            )),
        }
    }
}

/// The profile `invex validate` uses when none is named: [`AUTO_PROFILE`].
pub const DEFAULT_PROFILE: &str = AUTO_PROFILE;

/// The profile name that asks for detection: each file is validated with the installed
/// profile that takes its document element and whose specification identifiers (BT-24)
/// and country conditions it meets, else with [`FALLBACK_PROFILE`] (see
/// [`invex_engine::detect`]); a document no installed profile takes is refused with
/// `INVEX-DOCTYPE`.
pub const AUTO_PROFILE: &str = "auto";

/// The profile detection picks when the specification identifier selects none.
pub use invex_engine::registry::FALLBACK_PROFILE;

/// Show a progress bar from this many files on (when stderr is a terminal).
pub const PROGRESS_THRESHOLD: usize = 20;

#[derive(Clone, Debug)]
pub struct ValidateOptions {
    /// `id`, `id@version`, or [`AUTO_PROFILE`] to detect the profile of each file.
    pub profile: String,
    pub format: Format,
    pub rulepacks: PathBuf,
    /// Draw a progress bar on stderr (from [`PROGRESS_THRESHOLD`] documents on).
    pub progress: bool,
    /// The day whose rules apply: a bare profile name (and detection) takes the newest
    /// profile version in force on it.
    pub at: NaiveDate,
    /// Which files in directories are validated.
    pub glob: String,
    /// From which severity on a finding fails the run (exit 1).
    pub fail_on: FailOn,
    /// Colour the text format.
    pub color: bool,
    /// Turns a document that is not XML (its first byte `{`: a JSON invoice) into the XML
    /// to validate. The binary gives the server's writer; without one, every document is
    /// validated as it is.
    pub prepare: Option<Prepare>,
}

/// See [`ValidateOptions::prepare`].
pub type Prepare = fn(&[u8]) -> Result<Vec<u8>, String>;

/// Whether `bytes` start, after white space, with `{`: not XML, a JSON document.
fn looks_like_json(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{')
}

impl ValidateOptions {
    /// The defaults of the command line for `profile`, `format` and `rulepacks`.
    pub fn new(profile: &str, format: Format, rulepacks: PathBuf) -> ValidateOptions {
        ValidateOptions {
            profile: profile.to_string(),
            format,
            rulepacks,
            progress: false,
            at: invex_engine::registry::today(),
            glob: DEFAULT_GLOB.to_string(),
            fail_on: FailOn::Fatal,
            color: false,
            prepare: None,
        }
    }
}

/// How a validation run ended; maps to the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// No document has a finding at or above `--fail-on` (exit 0).
    AllValid,
    /// A document has a finding at or above `--fail-on` (exit 1); with the default
    /// `--fail-on fatal`, a document is invalid.
    SomeInvalid,
    /// A document could not be read or parsed (exit 2).
    Errors,
}

impl Outcome {
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::AllValid => 0,
            Outcome::SomeInvalid => 1,
            Outcome::Errors => 2,
        }
    }

    fn of(summary: &Summary) -> Outcome {
        match summary.exit_code() {
            0 => Outcome::AllValid,
            1 => Outcome::SomeInvalid,
            _ => Outcome::Errors,
        }
    }
}

/// Errors that stop the whole run (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    #[error("rule packs in {} failed to load:\n{errors}", dir.display())]
    Load { dir: PathBuf, errors: LoadError },
    #[error("unknown profile `{name}` (available: {available})")]
    UnknownProfile { name: String, available: String },
    #[error("profile `{name}`: {reason}")]
    NotInForce { name: String, reason: String },
    #[error(transparent)]
    Inputs(#[from] InputError),
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

/// One validated document as the output formats see it.
pub struct Document<'a> {
    /// The path as given or found, or [`STDIN_NAME`].
    pub name: &'a str,
    /// The report and the rule set that produced it, or why there is none.
    pub result: Result<(&'a Report, &'a RuleSet), &'a str>,
}

/// An output format: told each document in order, then the run's summary.
pub trait Sink {
    fn document(&mut self, out: &mut dyn Write, doc: &Document<'_>) -> std::io::Result<()>;
    /// Called once after the last document (the summary line itself is written by the
    /// caller).
    fn finish(&mut self, out: &mut dyn Write, summary: &Summary) -> std::io::Result<()>;
}

/// The writer of `format`.
pub fn sink(format: Format, several: bool, fail_on: FailOn, color: bool) -> Box<dyn Sink> {
    match format {
        Format::Json => Box::new(json::Json { several }),
        Format::Svrl => Box::new(svrl::Svrl { several }),
        Format::Text => Box::new(text::Text::new(color)),
        Format::Junit => Box::new(junit::Junit::new(fail_on)),
        Format::Sarif => Box::new(sarif::Sarif::new()),
        Format::Github => Box::new(github::Github),
    }
}

/// Whitespace (line breaks too) collapsed to single spaces, and control characters
/// (which could move a terminal's cursor or end a line early) replaced by U+FFFD: text
/// from a document or a file name goes into one line of output.
pub fn one_line(s: &str) -> String {
    s.split_whitespace()
        .map(|word| {
            word.chars()
                .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `c`, or U+FFFD where XML 1.0 does not allow it.
pub fn xml_char(c: char) -> char {
    match c {
        '\t' | '\n' | '\r' => c,
        '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => '\u{FFFD}',
        _ => c,
    }
}

/// The result for one document.
pub type FileResult = Result<Report, String>;

/// Validate one document's bytes with `rules`.
pub fn validate_bytes(rules: &RuleSet, bytes: &[u8]) -> FileResult {
    rules.validate_bytes(bytes).map_err(|e| e.to_string())
}

/// Validate one file with `rules`.
pub fn validate_file(rules: &RuleSet, path: &Path) -> FileResult {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    validate_bytes(rules, &bytes)
}

/// The result for one file in auto mode: the report and the rule set that produced it.
pub type DetectedResult = Result<(Report, Arc<RuleSet>), String>;

/// Validate one document with the profile detected from it (compiling its packs if this
/// is the first document that needs them). The report's `detection` says which profile
/// and why.
pub fn validate_detected(catalog: &LazyCatalog, bytes: &[u8], at: NaiveDate) -> DetectedResult {
    let start = Instant::now();
    let doc = XmlDocument::parse(bytes).map_err(|e| rules::ValidateError::Parse(e).to_string())?;
    let parsing = start.elapsed();
    let (rules, note) = catalog
        .detected_ruleset_at(&doc, at)
        .map_err(|why| format!("no profile could be detected: {why}"))?;
    // The report's time is the document's (parse and validation), not the compilation
    // of the profile the first document that needs it pays for.
    let validating = Instant::now();
    let mut report = rules.validate(&doc);
    report.detection = Some(note);
    report.duration_us =
        u64::try_from((parsing + validating.elapsed()).as_micros()).unwrap_or(u64::MAX);
    Ok((report, rules))
}

/// Open the rule-pack directory: `profiles.yaml` now, each profile's packs when first
/// needed (start-up compiles only what the documents need).
pub fn open_catalog(rulepacks: &Path) -> Result<LazyCatalog, ValidateError> {
    LazyCatalog::open(rulepacks).map_err(|errors| ValidateError::Load {
        dir: rulepacks.to_path_buf(),
        errors,
    })
}

/// Pick the profile in force on `at` and compile it, with the sentence saying which
/// version and why (for a bare name).
pub fn load_ruleset(
    catalog: &LazyCatalog,
    rulepacks: &Path,
    profile: &str,
    at: NaiveDate,
) -> Result<(Arc<RuleSet>, Option<String>), ValidateError> {
    match catalog.resolve(profile, at) {
        Ok((p, why)) => {
            let rules = catalog.rules(p).map_err(|errors| ValidateError::Load {
                dir: rulepacks.to_path_buf(),
                errors,
            })?;
            return Ok((rules, why));
        }
        Err(e @ ResolveError::NotInForce { .. }) => {
            return Err(ValidateError::NotInForce {
                name: profile.to_string(),
                reason: e.to_string(),
            })
        }
        Err(ResolveError::Unknown) => {}
    }
    Err(ValidateError::UnknownProfile {
        name: profile.to_string(),
        available: {
            let names: Vec<String> = catalog.profiles().iter().map(|p| p.reference()).collect();
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        },
    })
}

/// Validate the documents `args` name (files, directories, `-` for `stdin`), write them
/// to `out` in the chosen format, per-document errors of the machine formats to `err`,
/// and the summary line to `out` (text, github) or `err` (the others).
pub fn run(
    opts: &ValidateOptions,
    args: &[PathBuf],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, ValidateError> {
    let filter = FileFilter::new(&opts.glob)?;
    let inputs = inputs::expand(args, &filter, stdin)?;
    let catalog = open_catalog(&opts.rulepacks)?;
    let summary = if opts.profile == AUTO_PROFILE {
        run_inputs(opts, &inputs, out, err, |bytes| {
            validate_detected(&catalog, bytes, opts.at)
        })?
    } else {
        let (rules, resolution) = load_ruleset(&catalog, &opts.rulepacks, &opts.profile, opts.at)?;
        run_inputs(opts, &inputs, out, err, |bytes| {
            validate_bytes(&rules, bytes).map(|mut report| {
                report.resolution = resolution.clone();
                (report, rules.clone())
            })
        })?
    };
    Ok(Outcome::of(&summary))
}

/// Validate `inputs` with `validate` (which also hands back the rule set used) and write
/// the results and the summary.
fn run_inputs<F>(
    opts: &ValidateOptions,
    inputs: &[Input],
    out: &mut dyn Write,
    err: &mut dyn Write,
    validate: F,
) -> Result<Summary, ValidateError>
where
    F: Fn(&[u8]) -> DetectedResult + Sync,
{
    let several = inputs.len() > 1;
    let mut sink = sink(opts.format, several, opts.fail_on, opts.color);
    let mut summary = Summary::new(opts.fail_on);
    let bar = if opts.progress && inputs.len() >= PROGRESS_THRESHOLD {
        let bar = ProgressBar::new(inputs.len() as u64);
        if let Ok(style) =
            ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed} (eta {eta})")
        {
            bar.set_style(style);
        }
        Some(bar)
    } else {
        None
    };
    // Errors of single documents are in the output of text and GitHub commands already.
    let errors_to_stderr = opts.format.summary_on_stderr();
    // Validate in parallel, a chunk at a time, and write each chunk in order.
    for chunk in inputs.chunks(64) {
        let results: Vec<DetectedResult> = chunk
            .par_iter()
            .map(|input| {
                let r = input.bytes().and_then(|bytes| match opts.prepare {
                    Some(prepare) if looks_like_json(&bytes) => {
                        prepare(&bytes).and_then(|xml| validate(&xml))
                    }
                    _ => validate(&bytes),
                });
                if let Some(bar) = &bar {
                    bar.inc(1);
                }
                r
            })
            .collect();
        for (input, result) in chunk.iter().zip(results) {
            if let (Err(e), true) = (&result, errors_to_stderr) {
                let line = format!("invex: {}: {}", one_line(&input.name), one_line(e));
                match &bar {
                    Some(bar) => bar.suspend(|| writeln!(err, "{line}"))?,
                    None => writeln!(err, "{line}")?,
                }
            }
            let doc = Document {
                name: &input.name,
                result: match &result {
                    Ok((report, rules)) => Ok((report, &**rules)),
                    Err(e) => Err(e.as_str()),
                },
            };
            summary.add(doc.result.map(|(report, _)| report));
            match &bar {
                Some(bar) => bar.suspend(|| sink.document(out, &doc))?,
                None => sink.document(out, &doc)?,
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    sink.finish(out, &summary)?;
    out.flush()?;
    if opts.format.summary_on_stderr() {
        writeln!(err, "{}", summary.line())?;
    } else {
        writeln!(out, "{}", summary.line())?;
        out.flush()?;
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{tree, write, BAD_DOC, OK_DOC};

    fn opts(dir: &Path, format: Format) -> ValidateOptions {
        ValidateOptions::new("prof", format, dir.to_path_buf())
    }

    fn run_to_strings(o: &ValidateOptions, files: &[PathBuf]) -> (Outcome, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let outcome = run(o, files, &mut std::io::empty(), &mut out, &mut err).unwrap();
        (
            outcome,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn one_valid_file_as_json() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let f = write(dir.path(), "in/ok.xml", OK_DOC);
        let (outcome, out, _) = run_to_strings(&opts(dir.path(), Format::Json), &[f]);
        assert_eq!(outcome, Outcome::AllValid);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["verdict"], "valid");
        assert_eq!(v["profile"], "prof@1");
        assert!(v.get("file").is_none());
    }

    #[test]
    fn several_files_as_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let ok = write(dir.path(), "in/ok.xml", OK_DOC);
        let bad = write(dir.path(), "in/bad.xml", BAD_DOC);
        let (outcome, out, _) =
            run_to_strings(&opts(dir.path(), Format::Json), &[ok.clone(), bad.clone()]);
        assert_eq!(outcome, Outcome::SomeInvalid);
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["file"], ok.display().to_string());
        assert_eq!(lines[0]["verdict"], "valid");
        assert_eq!(lines[1]["verdict"], "invalid");
        assert_eq!(lines[1]["findings"][0]["rule_id"], "T-01");
        assert!(out.starts_with("{\"file\":"), "{out}");
        assert!(out
            .lines()
            .all(|l| l.find("\"verdict\"") < l.find("\"findings\"")));
    }

    #[test]
    fn unreadable_and_malformed_files_exit_2() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let ok = write(dir.path(), "in/ok.xml", OK_DOC);
        let broken = write(dir.path(), "in/broken.xml", "<Doc>");
        let missing = dir.path().join("in/missing.xml");
        let (outcome, out, err) = run_to_strings(
            &opts(dir.path(), Format::Json),
            &[ok, broken, missing.clone()],
        );
        assert_eq!(outcome, Outcome::Errors);
        assert_eq!(outcome.exit_code(), 2);
        assert_eq!(out.lines().count(), 3);
        assert!(out.lines().nth(1).unwrap().contains("\"error\""));
        assert!(err.contains(&missing.display().to_string()));
    }

    #[test]
    fn text_and_svrl_formats() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let bad = write(dir.path(), "in/bad.xml", BAD_DOC);
        let (outcome, out, _) =
            run_to_strings(&opts(dir.path(), Format::Text), std::slice::from_ref(&bad));
        assert_eq!(outcome, Outcome::SomeInvalid);
        let name = bad.display().to_string();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            format!("{name}:1:1: fatal T-01 A document has lines.")
        );
        assert_eq!(lines[1], "    remediation: Add a line.");
        assert!(
            lines[2].starts_with(&format!(
                "{name}: invalid: 1 fatal, 0 warning, 0 information (profile prof@1; rules p@1.0; "
            )),
            "{out}"
        );
        // The summary closes standard output in the text format.
        assert_eq!(
            lines[3],
            "invex: 1 file: 0 valid, 1 invalid, 0 error(s); findings: 1 fatal, 0 warning, 0 information"
        );
        assert_eq!(lines.len(), 4, "{out}");
        let (_, out, _) = run_to_strings(&opts(dir.path(), Format::Svrl), &[bad]);
        assert!(out.contains("<svrl:failed-assert id=\"T-01\""), "{out}");
    }

    #[test]
    fn fail_on_warning_fails_documents_with_warnings() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        // Five lines: valid, but T-02 warns.
        let many = write(
            dir.path(),
            "in/many.xml",
            "<Doc xmlns='urn:test:doc'><Line/><Line/><Line/><Line/><Line/></Doc>",
        );
        let mut o = opts(dir.path(), Format::Json);
        let (outcome, _, err) = run_to_strings(&o, std::slice::from_ref(&many));
        assert_eq!(outcome, Outcome::AllValid);
        assert!(
            err.ends_with(
                "invex: 1 file: 1 valid, 0 invalid, 0 error(s); findings: 0 fatal, 1 warning, 0 information\n"
            ),
            "{err}"
        );
        o.fail_on = FailOn::Warning;
        let (outcome, _, err) = run_to_strings(&o, &[many]);
        assert_eq!(outcome, Outcome::SomeInvalid);
        assert!(err.contains("; 1 failing at warning"), "{err}");
    }

    #[test]
    fn directories_and_stdin() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        write(dir.path(), "in/b/ok.xml", OK_DOC);
        write(dir.path(), "in/a/bad.xml", BAD_DOC);
        write(dir.path(), "in/a/readme.txt", "not xml");
        let o = opts(dir.path(), Format::Text);
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut stdin: &[u8] = OK_DOC.as_bytes();
        let outcome = run(
            &o,
            &[dir.path().join("in"), PathBuf::from("-")],
            &mut stdin,
            &mut out,
            &mut err,
        )
        .unwrap();
        assert_eq!(outcome, Outcome::SomeInvalid);
        let out = String::from_utf8(out).unwrap();
        let verdicts: Vec<&str> = out
            .lines()
            .filter(|l| l.contains(": valid: ") || l.contains(": invalid: "))
            .collect();
        let base = dir.path().join("in").display().to_string();
        assert!(
            verdicts[0].starts_with(&format!("{base}/a/bad.xml: invalid: ")),
            "{out}"
        );
        assert!(
            verdicts[1].starts_with(&format!("{base}/b/ok.xml: valid: ")),
            "{out}"
        );
        assert!(verdicts[2].starts_with("<stdin>: valid: "), "{out}");
        assert_eq!(verdicts.len(), 3, "{out}");
        assert!(out.ends_with("invex: 3 files: 2 valid, 1 invalid, 0 error(s); findings: 1 fatal, 0 warning, 0 information\n"), "{out}");
    }

    #[test]
    fn junit_sarif_and_github_formats() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let ok = write(dir.path(), "in/ok.xml", OK_DOC);
        let bad = write(dir.path(), "in/b,a:d%.xml", BAD_DOC);
        let missing = dir.path().join("in/missing.xml");
        let files = [ok, bad.clone(), missing];

        let (outcome, out, err) = run_to_strings(&opts(dir.path(), Format::Junit), &files);
        assert_eq!(outcome, Outcome::Errors);
        assert!(
            out.contains(r#"<testsuite name="invex validate" tests="3" failures="1" errors="1""#),
            "{out}"
        );
        assert!(out.contains(r#"<failure message="1 finding(s) at or above fatal, first T-01: A document has lines." type="fatal">"#), "{out}");
        assert!(out.contains(r#"<error message="cannot read: "#), "{out}");
        // The summary and the per-file error go to standard error.
        assert!(
            err.contains("invex: 3 files: 1 valid, 1 invalid, 1 error(s)"),
            "{err}"
        );

        let (_, out, _) = run_to_strings(&opts(dir.path(), Format::Sarif), &files);
        let log: serde_json::Value = serde_json::from_str(&out).unwrap();
        let run = &log["runs"][0];
        assert_eq!(run["tool"]["driver"]["name"], "invex");
        assert_eq!(run["tool"]["driver"]["rules"][0]["id"], "T-01");
        assert_eq!(
            run["tool"]["driver"]["rules"][0]["help"]["text"],
            "Add a line."
        );
        let result = &run["results"][0];
        assert_eq!(result["ruleId"], "T-01");
        assert_eq!(result["level"], "error");
        let uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap();
        assert!(
            uri.starts_with("file:///") && uri.ends_with("/in/b%2Ca%3Ad%25.xml"),
            "{uri}"
        );
        assert_eq!(run["invocations"][0]["executionSuccessful"], false);
        assert_eq!(
            run["invocations"][0]["toolExecutionNotifications"][0]["level"],
            "error"
        );

        let (_, out, _) = run_to_strings(&opts(dir.path(), Format::Github), &files);
        let escaped = bad
            .display()
            .to_string()
            .replace('%', "%25")
            .replace(',', "%2C")
            .replace(':', "%3A");
        assert!(
            out.contains(&format!("::error file={escaped},line=1,col=1,title=T-01::A document has lines.%0Aremediation: Add a line.%0Aat /t:Doc (prof@1)\n")),
            "{out}"
        );
        assert!(
            out.contains("title=invex::not validated: cannot read: "),
            "{out}"
        );
    }

    /// A UBL rule-pack tree: pack `base@1` (fatal B-01: an invoice has an ID) in profile
    /// `en16931-ubl@1`, and with `with_sk` pack `sk@1` (warning SK-T-01, always) stacked
    /// on it in profile `peppol-bis3-sk@1`.
    fn ubl_tree(root: &Path, with_sk: bool) {
        let pack = |id: &str, rule: &str, flag: &str, test: &str| {
            write(
                root,
                &format!("{id}/1/pack.yaml"),
                &format!(
                    "pack: {id}\nversion: '1'\ntitle: {id}\nnamespaces:\n  \
                     ubl: urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\n  \
                     cbc: urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2\n\
                     patterns: [patterns/main.yaml]\n"
                ),
            );
            write(
                root,
                &format!("{id}/1/patterns/main.yaml"),
                &format!(
                    "pattern: main\nrules:\n  - context: /ubl:Invoice\n    asserts:\n      \
                     - id: {rule}\n        flag: {flag}\n        test: {test}\n        \
                     message: m\n        remediation: r\n        owner: sender-mapping\n"
                ),
            );
        };
        pack("base", "B-01", "fatal", "exists(cbc:ID)");
        let mut profiles = String::from(
            "document_types:\n  - id: ubl-invoice\n    \
             namespace: urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\n    \
             root: Invoice\n    title: UBL 2.1 Invoice\n\
             profiles:\n  - id: en16931-ubl\n    version: '1'\n    packs: [base@1]\n    \
             documents: [ubl-invoice]\n    customization_ids: ['urn:cen.eu:en16931:2017']\n",
        );
        if with_sk {
            pack("sk", "SK-T-01", "warning", "false()");
            profiles.push_str(
                "  - id: peppol-bis3-sk\n    version: '1'\n    packs: [base@1, sk@1]\n    \
                 documents: [ubl-invoice]\n    customization_ids: \
                 ['urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0']\n    \
                 detection: {seller_country: SK, buyer_country: SK}\n",
            );
        }
        write(root, "profiles.yaml", &profiles);
    }

    /// A Peppol BIS invoice from a Slovak seller to a buyer in `buyer_country`.
    fn peppol_doc(buyer_country: &str) -> String {
        let party = |c: &str| {
            format!(
                "<cac:Party><cac:PostalAddress><cac:Country><cbc:IdentificationCode>{c}\
                 </cbc:IdentificationCode></cac:Country></cac:PostalAddress></cac:Party>"
            )
        };
        format!(
            "<Invoice xmlns='urn:oasis:names:specification:ubl:schema:xsd:Invoice-2' \
             xmlns:cac='urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2' \
             xmlns:cbc='urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2'>\
             <cbc:CustomizationID>urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0</cbc:CustomizationID>\
             <cbc:ID>1</cbc:ID>\
             <cac:AccountingSupplierParty>{}</cac:AccountingSupplierParty>\
             <cac:AccountingCustomerParty>{}</cac:AccountingCustomerParty></Invoice>",
            party("SK"),
            party(buyer_country)
        )
    }

    fn auto(dir: &Path, format: Format) -> ValidateOptions {
        ValidateOptions {
            profile: DEFAULT_PROFILE.into(),
            ..opts(dir, format)
        }
    }

    #[test]
    fn the_default_profile_is_detection() {
        assert_eq!(DEFAULT_PROFILE, AUTO_PROFILE);
        assert_eq!(FALLBACK_PROFILE, "en16931-ubl");
    }

    #[test]
    fn auto_detects_the_profile_per_file_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        ubl_tree(dir.path(), true);
        let sk = write(dir.path(), "in/sk.xml", &peppol_doc("SK"));
        let cz = write(dir.path(), "in/cz.xml", &peppol_doc("CZ"));
        let (outcome, out, err) =
            run_to_strings(&auto(dir.path(), Format::Json), &[sk.clone(), cz.clone()]);
        assert_eq!(outcome, Outcome::AllValid, "{err}");
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["profile"], "peppol-bis3-sk@1");
        let why = lines[0]["detection"].as_str().unwrap();
        assert!(why.starts_with("detected peppol-bis3-sk: "), "{why}");
        assert!(
            why.contains("seller country (BT-40) SK and buyer country (BT-55) SK"),
            "{why}"
        );
        assert_eq!(lines[0]["findings"][0]["rule_id"], "SK-T-01");
        // SK -> CZ: not the Slovak profile's conditions, and no peppol-bis3 installed here:
        // the EN 16931 identifier the Peppol one starts with decides.
        assert_eq!(lines[1]["profile"], "en16931-ubl@1");
        let why = lines[1]["detection"].as_str().unwrap();
        assert!(why.starts_with("detected en16931-ubl: "), "{why}");
        assert!(
            why.ends_with("starts with urn:cen.eu:en16931:2017, which en16931-ubl is for"),
            "{why}"
        );
        assert_eq!(lines[1]["findings"].as_array().unwrap().len(), 0);
    }

    #[test]
    fn auto_reports_detection_in_text_and_svrl() {
        let dir = tempfile::tempdir().unwrap();
        ubl_tree(dir.path(), true);
        let sk = write(dir.path(), "in/sk.xml", &peppol_doc("SK"));
        let (_, out, _) =
            run_to_strings(&auto(dir.path(), Format::Text), std::slice::from_ref(&sk));
        assert!(
            out.starts_with(&format!(
                "{}: profile peppol-bis3-sk@1, detected peppol-bis3-sk: ",
                sk.display()
            )),
            "{out}"
        );
        let (_, out, _) = run_to_strings(&auto(dir.path(), Format::Svrl), &[sk]);
        let second = out.lines().nth(1).unwrap();
        assert!(
            second.starts_with("<!-- profile peppol-bis3-sk@1, detected peppol-bis3-sk: "),
            "{out}"
        );
    }

    #[test]
    fn auto_without_the_fallback_profile_is_a_file_error() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let f = write(dir.path(), "in/ok.xml", OK_DOC);
        let (outcome, _, err) = run_to_strings(&auto(dir.path(), Format::Json), &[f]);
        assert_eq!(outcome, Outcome::Errors);
        assert!(
            err.contains(
                "no profile could be detected: the document has no specification identifier"
            ),
            "{err}"
        );
        assert!(err.contains("en16931-ubl is not installed"), "{err}");
    }

    #[test]
    fn auto_refuses_documents_no_profile_takes() {
        let dir = tempfile::tempdir().unwrap();
        ubl_tree(dir.path(), true);
        let html = write(dir.path(), "in/page.xml", "<html><body>hello</body></html>");
        let (outcome, out, _) =
            run_to_strings(&auto(dir.path(), Format::Text), std::slice::from_ref(&html));
        assert_eq!(outcome, Outcome::SomeInvalid, "{out}");
        let name = html.display().to_string();
        assert!(
            out.starts_with(&format!(
                "{name}: profile none, no installed profile takes the document element html\n"
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "{name}:1:1: fatal INVEX-DOCTYPE The document element html (no namespace)"
            )),
            "{out}"
        );
    }

    #[test]
    fn a_named_profile_reports_no_detection() {
        let dir = tempfile::tempdir().unwrap();
        ubl_tree(dir.path(), true);
        let sk = write(dir.path(), "in/sk.xml", &peppol_doc("SK"));
        let mut o = opts(dir.path(), Format::Json);
        o.profile = "en16931-ubl".into();
        let (_, out, _) = run_to_strings(&o, &[sk]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["profile"], "en16931-ubl@1");
        assert!(v.get("detection").is_none(), "{out}");
    }

    #[test]
    fn unknown_profile_and_broken_packs_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let mut o = opts(dir.path(), Format::Json);
        o.profile = "nope".into();
        let e = run(
            &o,
            &[],
            &mut std::io::empty(),
            &mut Vec::new(),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("prof@1"), "{e}");
        write(dir.path(), "p/1.0/patterns/main.yaml", "pattern: [");
        let e = run(
            &opts(dir.path(), Format::Json),
            &[],
            &mut std::io::empty(),
            &mut Vec::new(),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("main.yaml:"), "{e}");
    }
}
