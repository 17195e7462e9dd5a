//! `invex convert FILE... --out DIR`: the conversion pipeline on local files, without a
//! server. Every invoice gets its UBL in DIR; those the review gate holds are written as
//! `*.needs-review.xml` beside a `*.review.json` with the reasons and fields, so nothing
//! uncertain can be mistaken for a finished document.

use std::io::Write;
use std::path::{Path, PathBuf};

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use indicatif::{ProgressBar, ProgressStyle};
use invex_engine::registry::Catalog;
use serde::Serialize;

use super::extract::{self, ExtractError};
use super::gate::{CrossCheck, ReviewReason};
use super::model::FieldView;
use super::review::{self, Candidate};
use super::tabular::Mapping;
use crate::invoice::json::Declared;

pub struct BatchOptions {
    pub out: PathBuf,
    pub mapping: Option<Mapping>,
    /// Validate against this profile; detected per document when absent.
    pub profile: Option<String>,
    pub threshold: f32,
    pub progress: bool,
    pub limits: extract::Limits,
}

/// One row of the summary.
#[derive(Debug, Serialize)]
pub struct Converted {
    pub file: String,
    pub invoice: Option<String>,
    pub status: &'static str,
    pub confidence: f32,
    pub fatal: usize,
    pub reasons: Vec<ReviewReason>,
    pub output: Option<PathBuf>,
    pub error: Option<String>,
}

impl Converted {
    /// The row of a file (or invoice) that could not be converted.
    fn failed(file: &str, error: String) -> Converted {
        Converted {
            file: file.into(),
            invoice: None,
            status: "error",
            confidence: 0.0,
            fatal: 0,
            reasons: Vec::new(),
            output: None,
            error: Some(error),
        }
    }
}

#[derive(Debug, Default)]
pub struct Summary {
    pub rows: Vec<Converted>,
}

impl Summary {
    /// 0: every invoice ready; 1: some need review; 2: a file could not be converted.
    pub fn exit_code(&self) -> u8 {
        if self.rows.iter().any(|r| r.error.is_some()) {
            2
        } else if self.rows.iter().any(|r| r.status != "ready") {
            1
        } else {
            0
        }
    }

    pub fn table(&self) -> String {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_header([
            "file",
            "invoice",
            "status",
            "confidence",
            "fatal",
            "reasons / output",
        ]);
        for r in &self.rows {
            let detail = match (&r.error, &r.output) {
                (Some(e), _) => e.clone(),
                (None, Some(out)) if r.reasons.is_empty() => out.display().to_string(),
                (None, out) => {
                    let mut s: Vec<String> = r
                        .reasons
                        .iter()
                        .take(3)
                        .map(|x| x.message.clone())
                        .collect();
                    if r.reasons.len() > 3 {
                        s.push(format!("… {} more", r.reasons.len() - 3));
                    }
                    if let Some(out) = out {
                        s.push(format!("→ {}", out.display()));
                    }
                    s.join("\n")
                }
            };
            t.add_row([
                r.file.clone(),
                r.invoice.clone().unwrap_or_else(|| "-".into()),
                r.status.to_string(),
                format!("{:.2}", r.confidence),
                r.fatal.to_string(),
                detail,
            ]);
        }
        let ready = self.rows.iter().filter(|r| r.status == "ready").count();
        let held = self
            .rows
            .iter()
            .filter(|r| r.status == "needs_review")
            .count();
        let failed = self.rows.iter().filter(|r| r.error.is_some()).count();
        format!("{t}\n{ready} ready, {held} need review, {failed} file(s) failed\n")
    }
}

#[derive(Serialize)]
struct ReviewFile<'a> {
    source: &'a str,
    status: &'static str,
    confidence: f32,
    reasons: &'a [ReviewReason],
    cross_checks: &'a [CrossCheck],
    fields: Vec<FieldView>,
}

/// A path in `dir` that does not exist yet: `base.ext`, `base-2.ext`, …
fn free_path(dir: &Path, base: &str, ext: &str) -> PathBuf {
    let mut path = dir.join(format!("{base}.{ext}"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{base}-{n}.{ext}"));
        n += 1;
    }
    path
}

fn write_one(
    opts: &BatchOptions,
    catalog: &Catalog,
    file: &str,
    index: usize,
    candidate: &Candidate,
) -> std::io::Result<Converted> {
    let evaluation =
        match review::evaluate(catalog, opts.profile.as_deref(), candidate, opts.threshold) {
            Ok(e) => e,
            Err(e) => return Ok(Converted::failed(file, e.to_string())),
        };
    let invoice = crate::sending::document::identity(&evaluation.xml).document_id;
    let stem = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fallback = format!("{stem}-{}", index + 1);
    let base = super::archive::file_stem(invoice.as_deref().unwrap_or(&fallback), &fallback);
    let held = !evaluation.reasons.is_empty();
    let status = if held { "needs_review" } else { "ready" };
    let output = if held {
        let xml = free_path(&opts.out, &format!("{base}.needs-review"), "xml");
        std::fs::write(&xml, &evaluation.xml)?;
        let review = ReviewFile {
            source: file,
            status,
            confidence: evaluation.confidence,
            reasons: &evaluation.reasons,
            cross_checks: &evaluation.cross_checks,
            fields: candidate.draft.fields(),
        };
        let json = serde_json::to_vec_pretty(&review).map_err(std::io::Error::other)?;
        std::fs::write(xml.with_extension("review.json"), json)?;
        xml
    } else {
        let xml = free_path(&opts.out, &base, "xml");
        std::fs::write(&xml, &evaluation.xml)?;
        xml
    };
    Ok(Converted {
        file: file.into(),
        invoice,
        status,
        confidence: evaluation.confidence,
        fatal: evaluation.report.counts.fatal,
        reasons: evaluation.reasons,
        output: Some(output),
        error: None,
    })
}

/// Convert every file; problems with one file are reported in its row, never abort the
/// others.
pub fn run(
    opts: &BatchOptions,
    catalog: &Catalog,
    files: &[PathBuf],
    err: &mut dyn Write,
) -> std::io::Result<Summary> {
    std::fs::create_dir_all(&opts.out)?;
    let bar = opts.progress.then(|| {
        let bar = ProgressBar::new(files.len() as u64);
        if let Ok(style) =
            ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed} {msg}")
        {
            bar.set_style(style);
        }
        bar
    });
    let mut summary = Summary::default();
    for path in files {
        let name = path.display().to_string();
        if let Some(bar) = &bar {
            bar.set_message(name.clone());
        }
        let extracted = std::fs::read(path)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|bytes| {
                let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                extract::extract(
                    &bytes,
                    file_name.as_deref(),
                    Declared::of_part(None, file_name.as_deref()),
                    opts.mapping.as_ref(),
                    &opts.limits,
                )
                .map_err(|e: ExtractError| e.to_string())
            });
        match extracted {
            Err(e) => {
                let _ = writeln!(err, "{name}: {e}");
                summary.rows.push(Converted::failed(&name, e));
            }
            Ok(extracted) => {
                for (i, candidate) in extracted.candidates.iter().enumerate() {
                    summary
                        .rows
                        .push(write_one(opts, catalog, &name, i, candidate)?);
                }
            }
        }
        if let Some(bar) = &bar {
            bar.inc(1);
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(summary)
}
