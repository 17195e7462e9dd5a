//! Why a file could not be read as invoices at all. Problems with single cells are not
//! errors: they become [`super::CellIssue`]s next to the invoice they belong to.

/// A whole-file failure (or a bad mapping); every message names what to fix.
#[derive(Debug, thiserror::Error)]
pub enum TabularError {
    #[error("the file is empty")]
    Empty,
    #[error("this is not a CSV or Excel file: {0}")]
    UnsupportedFormat(String),
    #[error("the file is named `{name}` but its content is not a spreadsheet workbook")]
    NotAWorkbook { name: String },
    #[error("could not read the {format} workbook: {reason}")]
    Workbook {
        format: &'static str,
        reason: String,
    },
    #[error("the workbook has no sheet named `{0}` (the mapping asks for it)")]
    NoSuchSheet(String),
    #[error("the text is not valid {encoding}")]
    Encoding { encoding: &'static str },
    #[error("CSV line {line}: {reason}")]
    Csv { line: u64, reason: String },
    /// A limit of [`super::Limits`] was passed; reading stopped there.
    #[error("{what}: more than the limit `{limit}` allows ({value})")]
    Limit {
        /// The limit's name (`max_rows`, `max_zip_entries`, ...).
        limit: &'static str,
        value: u64,
        what: String,
    },
    #[error(
        "the upload holds more than {limit} invoices, the most one upload may hold \
         (INVEX_CONVERT_MAX_INVOICES); split the file"
    )]
    TooManyInvoices { limit: usize },
    #[error("no header row found: the file has no non-empty rows")]
    NoHeader,
    #[error("mapping `{mapping}`: the file has no column for {}", .missing.join("; "))]
    MissingColumns {
        mapping: String,
        missing: Vec<String>,
    },
    #[error(
        "no mapping fits the file's columns; closest is `{closest}`, which misses {}",
        .missing.join("; ")
    )]
    NoMatchingMapping {
        closest: String,
        missing: Vec<String>,
    },
    #[error("the mapping is not valid JSON for a mapping: {0}")]
    MappingJson(String),
    #[error("mapping column `{column}`: `{path}` is not a draft field path{hint}")]
    UnknownPath {
        column: String,
        path: String,
        hint: String,
    },
    #[error("mapping default for `{path}`: {reason}")]
    BadDefault { path: String, reason: String },
    #[error("mapping: {0}")]
    BadMapping(String),
    #[error("could not write the xlsx template: {0}")]
    Template(String),
}

impl TabularError {
    pub fn limit(limit: &'static str, value: impl TryInto<u64>, what: impl Into<String>) -> Self {
        TabularError::Limit {
            limit,
            value: value.try_into().unwrap_or(u64::MAX),
            what: what.into(),
        }
    }
}
