//! `--format svrl`: one ISO Schematron SVRL document per validated document, each
//! introduced by comments naming the file and how its profile was chosen.

use std::io::{self, Write};

use invex_engine::report::to_svrl;

use super::{Document, Sink, Summary};

pub struct Svrl {
    /// Several documents: each SVRL document names its file in a comment.
    pub several: bool,
}

impl Sink for Svrl {
    fn document(&mut self, out: &mut dyn Write, doc: &Document<'_>) -> io::Result<()> {
        let Ok((report, rules)) = doc.result else {
            // The error is on standard error.
            return Ok(());
        };
        let svrl = to_svrl(report, Some(rules));
        // Each file's document, introduced by comments after its declaration.
        let mut comments = String::new();
        if self.several {
            comments.push_str(&format!("<!-- file: {} -->\n", comment_safe(doc.name)));
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

    fn finish(&mut self, _out: &mut dyn Write, _summary: &Summary) -> io::Result<()> {
        Ok(())
    }
}

/// Text that may stand in an XML comment: no `--`, and only characters XML allows.
fn comment_safe(s: &str) -> String {
    let s: String = s.chars().map(super::xml_char).collect();
    let mut s = s;
    while s.contains("--") {
        s = s.replace("--", "- -");
    }
    // A comment may not end with `-` either (before `-->`).
    if s.ends_with('-') {
        s.push(' ');
    }
    s
}
