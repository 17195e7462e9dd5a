//! What one CSV file or workbook may hold. Every limit is checked while reading, before
//! anything beyond it is built, and a refusal names the limit and its value.

/// Limits of one file (and of one upload, for `max_invoices`).
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Invoices one upload may hold (`INVEX_CONVERT_MAX_INVOICES`).
    pub max_invoices: usize,
    /// Non-empty rows one file may have.
    pub max_rows: usize,
    /// Rightmost column (1-based count) a non-empty cell may be in.
    pub max_columns: usize,
    /// Cells (counting the empty ones left of a value) of the rows kept in memory.
    pub max_cells: usize,
    /// Members of a workbook's ZIP archive.
    pub max_zip_entries: usize,
    /// Bytes of all members of a workbook together, as actually decompressed.
    pub max_unpacked_bytes: u64,
    /// Decompressed size over compressed size of one member (members under 1 MiB
    /// decompressed are not held to it).
    pub max_compression_ratio: u64,
    /// Strings of an xlsx shared-strings table, declared or present.
    pub max_shared_strings: u64,
    /// Worksheets read from one workbook.
    pub max_sheets: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_invoices: 500,
            max_rows: 100_000,
            max_columns: 1_000,
            max_cells: 2_000_000,
            max_zip_entries: 1_000,
            max_unpacked_bytes: 256 * 1024 * 1024,
            max_compression_ratio: 100,
            max_shared_strings: 1_000_000,
            max_sheets: 64,
        }
    }
}
