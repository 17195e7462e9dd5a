//! `--format github`: GitHub Actions workflow commands, which the runner turns into
//! annotations on the files: `::error file=PATH,line=L,col=C,title=RULE-ID::message`.
//!
//! Escaping as the runner reads it: in the message `%`, CR and LF become `%25`, `%0D`,
//! `%0A`; in property values also `:` and `,` become `%3A` and `%2C`. A line of the
//! document can therefore never end the command early or start another one.

use std::io::{self, Write};

use invex_engine::report::Severity;

use super::{one_line, Document, Sink, Summary};

pub struct Github;

/// The workflow command of a severity.
fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Fatal => "error",
        Severity::Warning => "warning",
        Severity::Information => "notice",
    }
}

/// A command's message.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value (`file=`, `title=`, ...).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

impl Sink for Github {
    fn document(&mut self, out: &mut dyn Write, doc: &Document<'_>) -> io::Result<()> {
        let file = escape_property(doc.name);
        match doc.result {
            Ok((report, _)) => {
                for f in &report.findings {
                    let mut message = one_line(&f.message);
                    if let Some(about) = &f.about_rule {
                        message.push_str(&format!(" [rule {}]", one_line(about)));
                    }
                    if !f.remediation.is_empty() {
                        message.push_str(&format!("\nremediation: {}", one_line(&f.remediation)));
                    }
                    message.push_str(&format!("\nat {} ({})", f.location.path, report.profile));
                    let position = match f.location.line {
                        0 => String::new(),
                        line => format!(",line={line},col={}", f.location.column.max(1)),
                    };
                    writeln!(
                        out,
                        "::{} file={file}{position},title={}::{}",
                        command(f.severity),
                        escape_property(&f.rule_id),
                        escape_data(&message)
                    )?;
                }
                if !report.omitted.is_zero() {
                    writeln!(
                        out,
                        "::warning file={file},title=invex::{}",
                        escape_data(&format!(
                            "{} more finding(s) counted but not listed",
                            report.omitted.total()
                        ))
                    )?;
                }
                Ok(())
            }
            Err(e) => writeln!(
                out,
                "::error file={file},title=invex::{}",
                escape_data(&format!("not validated: {e}"))
            ),
        }
    }

    fn finish(&mut self, _out: &mut dyn Write, _summary: &Summary) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_a_command_on_one_line() {
        assert_eq!(escape_data("100% sure\r\nnext"), "100%25 sure%0D%0Anext");
        assert_eq!(escape_property("dir,a:b/%x.xml"), "dir%2Ca%3Ab/%25x.xml");
        // `::` in a message stays: only the first `::` after the properties ends them.
        assert_eq!(escape_data("a::b"), "a::b");
    }
}
