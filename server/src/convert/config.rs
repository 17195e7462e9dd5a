//! Conversion settings.

use serde::{Deserialize, Serialize};

use super::extract::Limits;
use super::{pdf, tabular};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConvertConfig {
    /// A field whose confidence is under this value (0.0 – 1.0) holds its conversion for
    /// review.
    pub confidence_threshold: f32,
    /// At most this many invoices per upload (a larger file is refused with 413, as soon
    /// as the reading passes the limit).
    pub max_invoices: usize,
    /// Spreadsheets: non-empty rows of one file.
    pub max_rows: usize,
    /// Spreadsheets: the rightmost column a value may be in.
    pub max_columns: usize,
    /// Spreadsheets: cells of the rows held for the invoices of one file.
    pub max_cells: usize,
    /// Workbooks: members of the ZIP archive.
    pub max_zip_entries: usize,
    /// Workbooks: bytes of all archive members together, as decompressed.
    pub max_unpacked_bytes: u64,
    /// Workbooks: decompressed over compressed size of one member (above 1 MiB).
    pub max_compression_ratio: u64,
    /// xlsx: strings of the shared-strings table, declared or present.
    pub max_shared_strings: u64,
    /// Workbooks: worksheets.
    pub max_sheets: usize,
    /// PDF: pages.
    pub pdf_max_pages: u32,
    /// PDF: decompressed bytes of one stream.
    pub pdf_max_stream_bytes: usize,
    /// PDF: decompressed bytes of all streams read.
    pub pdf_max_total_bytes: usize,
    /// PDF: glyphs shown, all pages together.
    pub pdf_max_glyphs: usize,
    /// PDF: bytes of text of those glyphs.
    pub pdf_max_text_bytes: usize,
}

impl Default for ConvertConfig {
    fn default() -> Self {
        let t = tabular::Limits::default();
        let p = pdf::Limits::default();
        ConvertConfig {
            confidence_threshold: 0.8,
            max_invoices: t.max_invoices,
            max_rows: t.max_rows,
            max_columns: t.max_columns,
            max_cells: t.max_cells,
            max_zip_entries: t.max_zip_entries,
            max_unpacked_bytes: t.max_unpacked_bytes,
            max_compression_ratio: t.max_compression_ratio,
            max_shared_strings: t.max_shared_strings,
            max_sheets: t.max_sheets,
            pdf_max_pages: p.max_pages,
            pdf_max_stream_bytes: p.max_stream_bytes,
            pdf_max_total_bytes: p.max_total_bytes,
            pdf_max_glyphs: p.max_glyphs,
            pdf_max_text_bytes: p.max_text_bytes,
        }
    }
}

impl ConvertConfig {
    /// The extractors' limits.
    pub fn limits(&self) -> Limits {
        Limits {
            tabular: tabular::Limits {
                max_invoices: self.max_invoices,
                max_rows: self.max_rows,
                max_columns: self.max_columns,
                max_cells: self.max_cells,
                max_zip_entries: self.max_zip_entries,
                max_unpacked_bytes: self.max_unpacked_bytes,
                max_compression_ratio: self.max_compression_ratio,
                max_shared_strings: self.max_shared_strings,
                max_sheets: self.max_sheets,
            },
            pdf: pdf::Limits {
                max_pages: self.pdf_max_pages,
                max_stream_bytes: self.pdf_max_stream_bytes,
                max_total_bytes: self.pdf_max_total_bytes,
                max_glyphs: self.pdf_max_glyphs,
                max_text_bytes: self.pdf_max_text_bytes,
            },
        }
    }

    /// Apply `INVEX_CONVERT_<NAME>` (`key` is `CONVERT_<NAME>`) for the limits.
    pub fn apply_env(&mut self, key: &str, value: &str) -> Result<(), String> {
        fn parse<T: std::str::FromStr>(value: &str) -> Result<T, String>
        where
            T::Err: std::fmt::Display,
        {
            value.trim().parse().map_err(|e| format!("`{value}`: {e}"))
        }
        match key {
            "CONVERT_MAX_ROWS" => self.max_rows = parse(value)?,
            "CONVERT_MAX_COLUMNS" => self.max_columns = parse(value)?,
            "CONVERT_MAX_CELLS" => self.max_cells = parse(value)?,
            "CONVERT_MAX_ZIP_ENTRIES" => self.max_zip_entries = parse(value)?,
            "CONVERT_MAX_UNPACKED_BYTES" => self.max_unpacked_bytes = parse(value)?,
            "CONVERT_MAX_COMPRESSION_RATIO" => self.max_compression_ratio = parse(value)?,
            "CONVERT_MAX_SHARED_STRINGS" => self.max_shared_strings = parse(value)?,
            "CONVERT_MAX_SHEETS" => self.max_sheets = parse(value)?,
            "CONVERT_PDF_MAX_PAGES" => self.pdf_max_pages = parse(value)?,
            "CONVERT_PDF_MAX_STREAM_BYTES" => self.pdf_max_stream_bytes = parse(value)?,
            "CONVERT_PDF_MAX_TOTAL_BYTES" => self.pdf_max_total_bytes = parse(value)?,
            "CONVERT_PDF_MAX_GLYPHS" => self.pdf_max_glyphs = parse(value)?,
            "CONVERT_PDF_MAX_TEXT_BYTES" => self.pdf_max_text_bytes = parse(value)?,
            // Other INVEX_CONVERT_ variables are read by the server's own table.
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_come_from_the_environment() {
        let mut c = ConvertConfig::default();
        c.apply_env("CONVERT_MAX_ZIP_ENTRIES", "12").unwrap();
        c.apply_env("CONVERT_PDF_MAX_PAGES", " 7 ").unwrap();
        assert!(c.apply_env("CONVERT_MAX_CELLS", "many").is_err());
        let limits = c.limits();
        assert_eq!(limits.tabular.max_zip_entries, 12);
        assert_eq!(limits.pdf.max_pages, 7);
        assert_eq!(limits.tabular.max_invoices, 500);
    }
}
