//! `invex validate`: validate files against a profile and print the reports.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use chrono::NaiveDate;
use indicatif::{ProgressBar, ProgressStyle};
use invex_engine::document::Document;
use invex_engine::pack::LoadError;
use invex_engine::registry::{Catalog, ResolveError};
use invex_engine::report::{to_svrl, to_text, Report};
use invex_engine::rules::{self, RuleSet};
use rayon::prelude::*;

/// Output format of `invex validate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// JSON (one document), JSON Lines with a `file` member (several).
    Json,
    /// ISO Schematron SVRL.
    Svrl,
    /// Human-readable lines.
    Text,
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "json" => Ok(Format::Json),
            "svrl" => Ok(Format::Svrl),
            "text" => Ok(Format::Text),
            other => Err(format!("unknown format `{other}` (json, svrl, text)")),
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
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// The day whose rules apply: a bare profile name (and detection) takes the newest
    /// profile version in force on it.
    pub at: NaiveDate,
}

/// How a validation run ended; maps to the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Every file is valid (exit 0).
    AllValid,
    /// At least one file is invalid (exit 1).
    SomeInvalid,
    /// A file could not be read or parsed (exit 2).
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
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

/// The result for one file.
pub type FileResult = Result<Report, String>;

/// Validate one file's bytes.
pub fn validate_file(rules: &RuleSet, path: &Path) -> FileResult {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    rules.validate_bytes(&bytes).map_err(|e| e.to_string())
}

/// The result for one file in auto mode: the report and the rule set that produced it.
pub type DetectedResult = Result<(Report, Arc<RuleSet>), String>;

/// Validate one file with the profile detected from it. The report's `detection` says
/// which profile and why.
pub fn validate_file_detected(catalog: &Catalog, path: &Path, at: NaiveDate) -> DetectedResult {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let start = Instant::now();
    let doc = Document::parse(&bytes).map_err(|e| rules::ValidateError::Parse(e).to_string())?;
    let (rules, note) = catalog
        .detected_ruleset_at(&doc, at)
        .map_err(|why| format!("no profile could be detected: {why}"))?;
    let mut report = rules.validate(&doc);
    report.detection = Some(note);
    report.duration_us = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
    Ok((report, rules))
}

/// Load the rule-pack directory.
pub fn load_catalog(rulepacks: &Path) -> Result<Catalog, ValidateError> {
    Catalog::load(rulepacks).map_err(|errors| ValidateError::Load {
        dir: rulepacks.to_path_buf(),
        errors,
    })
}

/// Load the rule packs and pick the profile in force on `at`, with the sentence saying
/// which version and why (for a bare name).
pub fn load_ruleset(
    rulepacks: &Path,
    profile: &str,
    at: NaiveDate,
) -> Result<(Arc<RuleSet>, Option<String>), ValidateError> {
    let catalog = load_catalog(rulepacks)?;
    match catalog.resolve(profile, at) {
        Ok((p, why)) => return Ok((p.rules.clone(), why)),
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
            let names: Vec<String> = catalog
                .profiles()
                .iter()
                .map(|p| p.def.reference())
                .collect();
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        },
    })
}

/// Validate `files` and write the reports to `out`; per-file errors also go to `err`.
pub fn run(
    opts: &ValidateOptions,
    files: &[PathBuf],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, ValidateError> {
    if opts.profile == AUTO_PROFILE {
        let catalog = load_catalog(&opts.rulepacks)?;
        return run_detected(
            &catalog,
            opts.at,
            opts.format,
            opts.progress,
            files,
            out,
            err,
        );
    }
    let (rules, resolution) = load_ruleset(&opts.rulepacks, &opts.profile, opts.at)?;
    run_files(opts.format, opts.progress, files, out, err, |path| {
        validate_file(&rules, path).map(|mut report| {
            report.resolution = resolution.clone();
            (report, &*rules)
        })
    })
}

/// [`run`] with profile detection per file among the versions in force on `at`, the
/// catalog already loaded.
pub fn run_detected(
    catalog: &Catalog,
    at: NaiveDate,
    format: Format,
    progress: bool,
    files: &[PathBuf],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, ValidateError> {
    run_files(format, progress, files, out, err, |path| {
        validate_file_detected(catalog, path, at)
    })
}

/// [`run`] with a rule set already loaded.
pub fn run_with(
    rules: &RuleSet,
    format: Format,
    progress: bool,
    files: &[PathBuf],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, ValidateError> {
    run_files(format, progress, files, out, err, |path| {
        validate_file(rules, path).map(|report| (report, rules))
    })
}

/// Validate `files` with `validate` (which also hands back the rule set used, for SVRL) and
/// write the results.
fn run_files<R, F>(
    format: Format,
    progress: bool,
    files: &[PathBuf],
    out: &mut dyn Write,
    err: &mut dyn Write,
    validate: F,
) -> Result<Outcome, ValidateError>
where
    R: std::ops::Deref<Target = RuleSet> + Send,
    F: Fn(&Path) -> Result<(Report, R), String> + Sync,
{
    let several = files.len() > 1;
    let bar = if progress {
        let bar = ProgressBar::new(files.len() as u64);
        if let Ok(style) =
            ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed} (eta {eta})")
        {
            bar.set_style(style);
        }
        Some(bar)
    } else {
        None
    };
    let mut outcome = Outcome::AllValid;
    // Validate in parallel, a chunk at a time, and print each chunk in order.
    for chunk in files.chunks(64) {
        let results: Vec<Result<(Report, R), String>> = chunk
            .par_iter()
            .map(|path| {
                let r = validate(path);
                if let Some(bar) = &bar {
                    bar.inc(1);
                }
                r
            })
            .collect();
        for (path, result) in chunk.iter().zip(results) {
            let this = match &result {
                Ok((r, _)) if r.is_valid() => Outcome::AllValid,
                Ok(_) => Outcome::SomeInvalid,
                Err(_) => Outcome::Errors,
            };
            outcome = outcome.max(this);
            if let Err(e) = &result {
                let line = format!("invex: {}: {e}", path.display());
                match &bar {
                    Some(bar) => bar.suspend(|| writeln!(err, "{line}"))?,
                    None => writeln!(err, "{line}")?,
                }
            }
            let result = result.as_ref().map(|(report, rules)| (report, &**rules));
            write_result(out, format, several, path, result)?;
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    out.flush()?;
    Ok(outcome)
}

fn write_result(
    out: &mut dyn Write,
    format: Format,
    several: bool,
    path: &Path,
    result: Result<(&Report, &RuleSet), &String>,
) -> std::io::Result<()> {
    let file = path.display().to_string();
    match (format, result) {
        (Format::Json, Ok((report, _))) if several => {
            let line = serde_json::to_string(&WithFile {
                file: &file,
                report,
            })
            .map_err(std::io::Error::other)?;
            writeln!(out, "{line}")
        }
        (Format::Json, Ok((report, _))) => writeln!(out, "{}", report.to_json_pretty()),
        (Format::Json, Err(e)) if several => {
            let value = serde_json::json!({ "file": file, "error": e });
            writeln!(out, "{value}")
        }
        (Format::Json, Err(_)) => Ok(()),
        (Format::Svrl, Ok((report, rules))) => {
            let svrl = to_svrl(report, Some(rules));
            // Each file's document, introduced by comments after its declaration.
            let mut comments = String::new();
            if several {
                comments.push_str(&format!("<!-- file: {} -->\n", comment_safe(&file)));
            }
            if let Some(detection) = &report.detection {
                comments.push_str(&format!(
                    "<!-- profile {}, {} -->\n",
                    comment_safe(&report.profile),
                    comment_safe(detection)
                ));
            }
            if let Some(resolution) = &report.resolution {
                comments.push_str(&format!("<!-- profile {} -->\n", comment_safe(resolution)));
            }
            if comments.is_empty() {
                return write!(out, "{svrl}");
            }
            let (decl, body) = svrl.split_once('\n').unwrap_or(("", svrl.as_str()));
            write!(out, "{decl}\n{comments}{body}")
        }
        (Format::Svrl, Err(_)) => Ok(()),
        (Format::Text, Ok((report, _))) => {
            if several {
                writeln!(out, "==> {file} <==")?;
            }
            if let Some(detection) = &report.detection {
                writeln!(out, "profile {}, {detection}", report.profile)?;
            }
            if let Some(resolution) = &report.resolution {
                writeln!(out, "profile {resolution}")?;
            }
            write!(out, "{}", to_text(report))
        }
        (Format::Text, Err(e)) => {
            if several {
                writeln!(out, "==> {file} <==")?;
            }
            writeln!(out, "error: {e}")
        }
    }
}

/// A report with the file it is about first (JSON Lines output).
#[derive(serde::Serialize)]
struct WithFile<'a> {
    file: &'a str,
    #[serde(flatten)]
    report: &'a Report,
}

fn comment_safe(s: &str) -> String {
    s.replace("--", "- -")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{tree, write, BAD_DOC, OK_DOC};

    fn opts(dir: &Path, format: Format) -> ValidateOptions {
        ValidateOptions {
            at: invex_engine::registry::today(),
            profile: "prof".into(),
            format,
            rulepacks: dir.to_path_buf(),
            progress: false,
        }
    }

    fn run_to_strings(o: &ValidateOptions, files: &[PathBuf]) -> (Outcome, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let outcome = run(o, files, &mut out, &mut err).unwrap();
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
        assert!(
            out.starts_with("fatal T-01 at /t:Doc (1:1): A document has lines.\n"),
            "{out}"
        );
        assert!(out.contains("invalid: 1 fatal"));
        let (_, out, _) = run_to_strings(&opts(dir.path(), Format::Svrl), &[bad]);
        assert!(out.contains("<svrl:failed-assert id=\"T-01\""), "{out}");
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
            out.starts_with("profile peppol-bis3-sk@1, detected peppol-bis3-sk: "),
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
        let (outcome, out, _) = run_to_strings(&auto(dir.path(), Format::Text), &[html]);
        assert_eq!(outcome, Outcome::SomeInvalid, "{out}");
        assert!(
            out.starts_with("profile none, no installed profile takes the document element html\n"),
            "{out}"
        );
        assert!(
            out.contains(
                "fatal INVEX-DOCTYPE at / (1:1): The document element html (no namespace)"
            ),
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
        let e = run(&o, &[], &mut Vec::new(), &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("prof@1"), "{e}");
        write(dir.path(), "p/1.0/patterns/main.yaml", "pattern: [");
        let e = run(
            &opts(dir.path(), Format::Json),
            &[],
            &mut Vec::new(),
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("main.yaml:"), "{e}");
    }
}
