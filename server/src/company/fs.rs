//! The Financial Administration's (Finančná správa SR) open-data lists API:
//! `GET {base}/data/{dataset}/search?page=1&column={column}&search={value}` with the API
//! key in the `key` header answers `{"page", "pages", "itemsCount", "itemsPerPage",
//! "data": [{...}]}`, one object per record with lower-case column names. A search needs
//! at least 5 characters; 404 with "Search not found" means no record matches, 404 with
//! "List not found" means the dataset does not exist. Each dataset names its searchable
//! columns in `GET {base}/lists/{dataset}`:
//!
//! * `ds_dphs` VAT payers (`ic_dph`; columns `ic_dph`, `ico`, `nazov_ds`, `obec`, `psc`,
//!   `ulica_cislo`, `stat`, `druh_reg_dph`, `datum_reg`, `datum_zmeny_druhu_reg`),
//! * `ds_dphz` VAT payers with grounds for cancelling the registration (`ic_dph`),
//! * `ds_dph_iban` VAT payers' bank accounts (`ic_dph`),
//! * `ds_dsdd` tax debtors (`nazov_subjektu`; columns `nazov_subjektu`, `ulica_cislo`,
//!   `psc`, `obec`, `ciastka`) — this list carries **no IČO**, so it is searched by name.
//!
//! This module is independent of any answer type of the server: the generic [`FsClient::search`]
//! returns the raw records, and typed helpers read the columns they know.

use serde::Deserialize;
use serde_json::{Map, Value};

pub const DEBTORS_SOURCE: &str = "Finančná správa SR: zoznam daňových dlžníkov (ds_dsdd)";

/// Dataset slugs.
pub mod datasets {
    /// Tax debtors (searchable by `nazov_subjektu`).
    pub const TAX_DEBTORS: &str = "ds_dsdd";
    /// VAT payers (searchable by `ic_dph`).
    pub const VAT_PAYERS: &str = "ds_dphs";
    /// VAT payers with grounds for cancelling the registration (searchable by `ic_dph`).
    pub const VAT_CANCELLATION_GROUNDS: &str = "ds_dphz";
    /// VAT payers' published bank accounts (searchable by `ic_dph`).
    pub const VAT_BANK_ACCOUNTS: &str = "ds_dph_iban";
}

/// The shortest search the API accepts.
pub const MIN_SEARCH_LEN: usize = 5;

/// One record of a dataset, as the API sends it.
pub type Row = Map<String, Value>;

#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error(
        "the Financial Administration open-data API key is not configured (set INVEX_FS_API_KEY)"
    )]
    NoKey,
    #[error(
        "a Financial Administration search needs at least {min} characters; `{value}` is shorter"
    )]
    TooShort { min: usize, value: String },
    #[error("the Financial Administration open-data API did not answer within the time budget")]
    Timeout,
    #[error("the Financial Administration open-data API cannot be reached: {0}")]
    Unreachable(String),
    #[error("the Financial Administration open-data API refused the API key (HTTP {0})")]
    KeyRefused(u16),
    #[error("the Financial Administration open-data API answered HTTP {status} to a search in {dataset}: {message}")]
    Status {
        dataset: String,
        status: u16,
        message: String,
    },
    #[error("the Financial Administration open-data API answered a search in {dataset} in an unexpected shape: {reason}")]
    Shape { dataset: String, reason: String },
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Page {
    data: Vec<Row>,
}

#[derive(Clone)]
pub struct FsClient {
    http: reqwest::Client,
    base: String,
    key: Option<String>,
}

/// A record of the tax-debtor list.
#[derive(Clone, Debug, PartialEq)]
pub struct TaxDebtor {
    pub name: String,
    pub street: Option<String>,
    pub postal_code: Option<String>,
    pub municipality: Option<String>,
    /// The arrears as the list writes them.
    pub amount: Option<String>,
}

/// A record of `ds_dphs` or `ds_dphz` (the columns both have), plus every other column.
#[derive(Clone, Debug, PartialEq)]
pub struct VatRegistration {
    pub ic_dph: Option<String>,
    pub ico: Option<String>,
    pub name: Option<String>,
    pub street: Option<String>,
    pub postal_code: Option<String>,
    pub municipality: Option<String>,
    /// The whole record, for the columns not named above (`druh_reg_dph`, `datum_reg`, ...).
    pub record: Row,
}

fn column(row: &Row, name: &str) -> Option<String> {
    row.get(name).and_then(super::text_of)
}

/// A name reduced for comparison: case, spaces and punctuation ignored, so that
/// `ABC, s. r. o.` and `ABC s.r.o.` are the same name.
pub fn normalized_name(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

impl FsClient {
    /// `key` is the API key; without it every search fails with [`FsError::NoKey`].
    pub fn new(http: reqwest::Client, base: &str, key: Option<String>) -> FsClient {
        FsClient {
            http,
            base: base.trim_end_matches('/').to_string(),
            key: key.filter(|k| !k.trim().is_empty()),
        }
    }

    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    /// The records of `dataset` whose `column` matches `value` (first page, as the API
    /// matches: callers filter for exact matches). No match is an empty list.
    pub async fn search(
        &self,
        dataset: &str,
        column: &str,
        value: &str,
    ) -> Result<Vec<Row>, FsError> {
        let key = self.key.as_deref().ok_or(FsError::NoKey)?;
        let value = value.trim();
        if value.chars().count() < MIN_SEARCH_LEN {
            return Err(FsError::TooShort {
                min: MIN_SEARCH_LEN,
                value: value.to_string(),
            });
        }
        let net = |e: reqwest::Error| {
            if e.is_timeout() {
                FsError::Timeout
            } else {
                FsError::Unreachable(super::root_cause(&e))
            }
        };
        let response = self
            .http
            .get(format!("{}/data/{dataset}/search", self.base))
            .header("key", key)
            .query(&[("page", "1"), ("column", column), ("search", value)])
            .send()
            .await
            .map_err(net)?;
        let status = response.status();
        let body = response.bytes().await.map_err(net)?;
        match status.as_u16() {
            200..=299 => {}
            401 | 403 => return Err(FsError::KeyRefused(status.as_u16())),
            404 => {
                let text = String::from_utf8_lossy(&body).to_ascii_lowercase();
                if text.contains("list not found") || text.contains("page not found") {
                    return Err(FsError::Status {
                        dataset: dataset.to_string(),
                        status: 404,
                        message: "no such dataset".to_string(),
                    });
                }
                return Ok(Vec::new());
            }
            other => {
                return Err(FsError::Status {
                    dataset: dataset.to_string(),
                    status: other,
                    message: String::from_utf8_lossy(&body).chars().take(200).collect(),
                })
            }
        }
        let page: Page = serde_json::from_slice(&body).map_err(|e| FsError::Shape {
            dataset: dataset.to_string(),
            reason: e.to_string(),
        })?;
        Ok(page.data)
    }

    /// Tax-debtor records whose name is `name` (ignoring case, spaces and punctuation).
    /// The list has no IČO: a name match is the only link to a company.
    pub async fn tax_debtors_named(&self, name: &str) -> Result<Vec<TaxDebtor>, FsError> {
        let wanted = normalized_name(name);
        let rows = self
            .search(datasets::TAX_DEBTORS, "nazov_subjektu", name)
            .await?;
        Ok(rows
            .iter()
            .filter_map(|row| {
                let listed = column(row, "nazov_subjektu")?;
                (normalized_name(&listed) == wanted).then(|| TaxDebtor {
                    name: listed,
                    street: column(row, "ulica_cislo"),
                    postal_code: column(row, "psc"),
                    municipality: column(row, "obec"),
                    amount: column(row, "ciastka"),
                })
            })
            .collect())
    }

    /// `ds_dphs` records of `ic_dph` (e.g. `SK2020317068`): the number is a VAT payer when
    /// the list is not empty.
    pub async fn vat_payers(&self, ic_dph: &str) -> Result<Vec<VatRegistration>, FsError> {
        self.vat_list(datasets::VAT_PAYERS, ic_dph).await
    }

    /// `ds_dphz` records of `ic_dph`: grounds for cancelling the VAT registration exist
    /// when the list is not empty.
    pub async fn vat_cancellation_grounds(
        &self,
        ic_dph: &str,
    ) -> Result<Vec<VatRegistration>, FsError> {
        self.vat_list(datasets::VAT_CANCELLATION_GROUNDS, ic_dph)
            .await
    }

    async fn vat_list(&self, dataset: &str, ic_dph: &str) -> Result<Vec<VatRegistration>, FsError> {
        let rows = self.search(dataset, "ic_dph", ic_dph).await?;
        Ok(rows
            .into_iter()
            .filter(|row| column(row, "ic_dph").as_deref() == Some(ic_dph))
            .map(|row| VatRegistration {
                ic_dph: column(&row, "ic_dph"),
                ico: column(&row, "ico"),
                name: column(&row, "nazov_ds").or_else(|| column(&row, "nazov_subjektu")),
                street: column(&row, "ulica_cislo"),
                postal_code: column(&row, "psc"),
                municipality: column(&row, "obec"),
                record: row,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_without_case_spaces_or_punctuation() {
        assert_eq!(
            normalized_name("ABC, s. r. o."),
            normalized_name("abc s.r.o.")
        );
        assert_ne!(
            normalized_name("ABC s.r.o."),
            normalized_name("ABCD s.r.o.")
        );
    }

    #[tokio::test]
    async fn searches_need_a_key_and_five_characters() {
        let http = reqwest::Client::new();
        let none = FsClient::new(http.clone(), "http://127.0.0.1:9", None);
        assert!(matches!(
            none.search("ds_dphs", "ic_dph", "SK2020317068").await,
            Err(FsError::NoKey)
        ));
        let keyed = FsClient::new(http, "http://127.0.0.1:9", Some("k".into()));
        assert!(matches!(
            keyed.search("ds_dsdd", "nazov_subjektu", "ab").await,
            Err(FsError::TooShort { .. })
        ));
    }
}
