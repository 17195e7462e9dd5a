//! `--format json`: the report of one document pretty-printed, or JSON Lines with a
//! `file` member for several.

use std::io::{self, Write};

use invex_engine::report::Report;

use super::{Document, Sink, Summary};

pub struct Json {
    /// Several documents: JSON Lines.
    pub several: bool,
}

/// A report with the file it is about first (JSON Lines output).
#[derive(serde::Serialize)]
struct WithFile<'a> {
    file: &'a str,
    #[serde(flatten)]
    report: &'a Report,
}

impl Sink for Json {
    fn document(&mut self, out: &mut dyn Write, doc: &Document<'_>) -> io::Result<()> {
        match doc.result {
            Ok((report, _)) if self.several => {
                let line = serde_json::to_string(&WithFile {
                    file: doc.name,
                    report,
                })
                .map_err(io::Error::other)?;
                writeln!(out, "{line}")
            }
            Ok((report, _)) => writeln!(out, "{}", report.to_json_pretty()),
            Err(e) if self.several => {
                let value = serde_json::json!({ "file": doc.name, "error": e });
                writeln!(out, "{value}")
            }
            // One document: the error is on standard error only.
            Err(_) => Ok(()),
        }
    }

    fn finish(&mut self, _out: &mut dyn Write, _summary: &Summary) -> io::Result<()> {
        Ok(())
    }
}
