//! `invex validate`: validate files against a profile and print the reports.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use invex_engine::pack::LoadError;
use invex_engine::registry::Catalog;
use invex_engine::report::{to_svrl, to_text, Report};
use invex_engine::rules::RuleSet;
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

/// The profile `invex validate` uses when none is named.
pub const DEFAULT_PROFILE: &str = "en16931-ubl";

/// Show a progress bar from this many files on (when stderr is a terminal).
pub const PROGRESS_THRESHOLD: usize = 20;

#[derive(Clone, Debug)]
pub struct ValidateOptions {
    /// `id` or `id@version`.
    pub profile: String,
    pub format: Format,
    pub rulepacks: PathBuf,
    /// Draw a progress bar on stderr.
    pub progress: bool,
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

/// Load the rule packs and pick the profile.
pub fn load_ruleset(rulepacks: &Path, profile: &str) -> Result<Arc<RuleSet>, ValidateError> {
    let catalog = Catalog::load(rulepacks).map_err(|errors| ValidateError::Load {
        dir: rulepacks.to_path_buf(),
        errors,
    })?;
    catalog
        .ruleset(profile)
        .ok_or_else(|| ValidateError::UnknownProfile {
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
    let rules = load_ruleset(&opts.rulepacks, &opts.profile)?;
    run_with(&rules, opts.format, opts.progress, files, out, err)
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
        let results: Vec<FileResult> = chunk
            .par_iter()
            .map(|path| {
                let r = validate_file(rules, path);
                if let Some(bar) = &bar {
                    bar.inc(1);
                }
                r
            })
            .collect();
        for (path, result) in chunk.iter().zip(results) {
            let this = match &result {
                Ok(r) if r.is_valid() => Outcome::AllValid,
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
            write_result(out, rules, format, several, path, &result)?;
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
    rules: &RuleSet,
    format: Format,
    several: bool,
    path: &Path,
    result: &FileResult,
) -> std::io::Result<()> {
    let file = path.display().to_string();
    match (format, result) {
        (Format::Json, Ok(report)) if several => {
            let line = serde_json::to_string(&WithFile {
                file: &file,
                report,
            })
            .map_err(std::io::Error::other)?;
            writeln!(out, "{line}")
        }
        (Format::Json, Ok(report)) => writeln!(out, "{}", report.to_json_pretty()),
        (Format::Json, Err(e)) if several => {
            let value = serde_json::json!({ "file": file, "error": e });
            writeln!(out, "{value}")
        }
        (Format::Json, Err(_)) => Ok(()),
        (Format::Svrl, Ok(report)) => {
            let svrl = to_svrl(report, Some(rules));
            if several {
                // Each file's document, introduced by a comment after its declaration.
                let (decl, body) = svrl.split_once('\n').unwrap_or(("", svrl.as_str()));
                writeln!(out, "{decl}\n<!-- file: {} -->", comment_safe(&file))?;
                write!(out, "{body}")
            } else {
                write!(out, "{svrl}")
            }
        }
        (Format::Svrl, Err(_)) => Ok(()),
        (Format::Text, Ok(report)) => {
            if several {
                writeln!(out, "==> {file} <==")?;
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
