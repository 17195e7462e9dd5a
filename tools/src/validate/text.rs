//! `--format text`: one line per finding, `path:line:col: severity RULE-ID message`, as
//! compilers print them (editors and CI logs make them clickable), with colour on a
//! terminal.

use std::ffi::OsStr;
use std::io::{self, Write};

use anstyle::{AnsiColor, Style};
use invex_engine::report::{Report, Severity, Verdict};

use super::{one_line, Document, Sink, Summary};

/// `--color`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// Colour when standard output is a terminal and `NO_COLOR` is unset or empty.
    #[default]
    Auto,
    Always,
    Never,
}

/// Whether to colour: `always` and `never` decide; `auto` colours a terminal unless
/// `NO_COLOR` has a value (<https://no-color.org>: any non-empty value).
pub fn use_color(choice: ColorChoice, stdout_is_terminal: bool, no_color: Option<&OsStr>) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => stdout_is_terminal && no_color.is_none_or(OsStr::is_empty),
    }
}

/// The styles of the text format (all plain without colour).
#[derive(Clone, Copy, Debug)]
struct Palette {
    fatal: Style,
    warning: Style,
    information: Style,
    valid: Style,
    error: Style,
    dim: Style,
}

impl Palette {
    fn new(color: bool) -> Palette {
        if !color {
            let plain = Style::new();
            return Palette {
                fatal: plain,
                warning: plain,
                information: plain,
                valid: plain,
                error: plain,
                dim: plain,
            };
        }
        let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
        Palette {
            fatal: fg(AnsiColor::Red).bold(),
            warning: fg(AnsiColor::Yellow).bold(),
            information: fg(AnsiColor::Cyan),
            valid: fg(AnsiColor::Green).bold(),
            error: fg(AnsiColor::Red).bold(),
            dim: Style::new().dimmed(),
        }
    }

    fn severity(&self, s: Severity) -> Style {
        match s {
            Severity::Fatal => self.fatal,
            Severity::Warning => self.warning,
            Severity::Information => self.information,
        }
    }
}

/// `text` in `style` (the escape codes render as nothing for a plain style).
fn paint(style: Style, text: &str) -> String {
    format!("{}{text}{}", style.render(), style.render_reset())
}

/// Per document: a line saying which profile and why (when detected or resolved), a line
/// per finding (`path:line:col: severity RULE-ID message`, a finding without a position
/// at `path:1:1`) followed by an indented remediation, and the document's verdict line
/// `path: valid|invalid: N fatal, ...`. A document that could not be validated:
/// `path: error: why`.
pub struct Text {
    palette: Palette,
}

impl Text {
    pub fn new(color: bool) -> Text {
        Text {
            palette: Palette::new(color),
        }
    }

    fn report(&self, out: &mut dyn Write, name: &str, report: &Report) -> io::Result<()> {
        let p = &self.palette;
        if let Some(detection) = &report.detection {
            writeln!(
                out,
                "{name}: profile {}, {}",
                report.profile,
                one_line(detection)
            )?;
        }
        if let Some(resolution) = &report.resolution {
            writeln!(out, "{name}: profile {}", one_line(resolution))?;
        }
        for f in &report.findings {
            let (line, column) = match f.location.line {
                0 => (1, 1),
                line => (line, f.location.column.max(1)),
            };
            write!(
                out,
                "{name}:{line}:{column}: {} {} {}",
                paint(p.severity(f.severity), f.severity.as_str()),
                one_line(&f.rule_id),
                one_line(&f.message)
            )?;
            if let Some(about) = &f.about_rule {
                write!(out, " [rule {}]", one_line(about))?;
            }
            writeln!(out)?;
            if !f.remediation.is_empty() {
                writeln!(
                    out,
                    "    {}",
                    paint(p.dim, &format!("remediation: {}", one_line(&f.remediation)))
                )?;
            }
        }
        if !report.omitted.is_zero() {
            writeln!(
                out,
                "{name}: {} more finding(s) counted but not listed",
                report.omitted.total()
            )?;
        }
        let verdict = match report.verdict {
            Verdict::Valid => paint(p.valid, "valid"),
            Verdict::Invalid => paint(p.fatal, "invalid"),
        };
        writeln!(
            out,
            "{name}: {verdict}: {} fatal, {} warning, {} information (profile {}; rules {}; {} µs)",
            report.counts.fatal,
            report.counts.warning,
            report.counts.information,
            report.profile,
            report.rules_version.join(", "),
            report.duration_us
        )
    }
}

impl Sink for Text {
    fn document(&mut self, out: &mut dyn Write, doc: &Document<'_>) -> io::Result<()> {
        let name = one_line(doc.name);
        match doc.result {
            Ok((report, _)) => self.report(out, &name, report),
            Err(e) => writeln!(
                out,
                "{name}: {}: {}",
                paint(self.palette.error, "error"),
                one_line(e)
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
    fn auto_colours_a_terminal_unless_no_color_has_a_value() {
        let set = Some(OsStr::new("1"));
        let empty = Some(OsStr::new(""));
        assert!(use_color(ColorChoice::Auto, true, None));
        assert!(use_color(ColorChoice::Auto, true, empty));
        assert!(!use_color(ColorChoice::Auto, true, set));
        assert!(!use_color(ColorChoice::Auto, false, None));
        assert!(use_color(ColorChoice::Always, false, set));
        assert!(!use_color(ColorChoice::Never, true, None));
    }

    #[test]
    fn plain_styles_add_no_escape_codes() {
        let p = Palette::new(false);
        assert_eq!(paint(p.fatal, "fatal"), "fatal");
        let p = Palette::new(true);
        assert_eq!(paint(p.fatal, "fatal"), "\u{1b}[1m\u{1b}[31mfatal\u{1b}[0m");
    }
}
