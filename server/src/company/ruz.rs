//! RÚZ (Register účtovných závierok) open API, version 2.x:
//! `GET {base}/api/uctovne-jednotky?zmenene-od=2000-01-01&ico={IČO}` lists accounting-unit
//! ids (`{"id": [..], "existujeDalsieId": false}`), `GET {base}/api/uctovna-jednotka?id=`
//! gives the unit (`ico`, `dic`, `nazovUJ`, `ulica`, `mesto`, `psc`, `skNace`,
//! `pravnaForma`, `datumZalozenia`, `datumZrusenia`, `idUctovnychZavierok`,
//! `idVyrocnychSprav`, `stav` for deleted or non-public records) and
//! `GET {base}/api/uctovna-zavierka?id=` a statement (`obdobieOd`, `obdobieDo` as `YYYY-MM`,
//! `typ`, `datumPodania`, `konsolidovana`). Attributes without a value are left out of the
//! register's answers, so every field here is optional.

use futures_util::future::try_join_all;
use serde::Deserialize;
use serde_json::Value;

use super::answer::{FinancialResults, PostalAddress, Statement};
use super::{get_json, text_of, Found, RegisterError};

pub const SOURCE: &str = "RÚZ (Register účtovných závierok)";
const REGISTER: &str = "RÚZ";
/// Statements whose details are fetched (the newest ids); every id is listed regardless.
const STATEMENT_DETAILS: usize = 10;
/// Accounting units tried for one IČO (re-registrations leave deleted units behind).
const UNITS_TRIED: usize = 3;

#[derive(Clone)]
pub struct RuzClient {
    http: reqwest::Client,
    base: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct IdList {
    id: Vec<i64>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Unit {
    id: i64,
    ico: Value,
    dic: Value,
    #[serde(rename = "nazovUJ")]
    nazov_uj: Option<String>,
    ulica: Option<String>,
    mesto: Option<String>,
    psc: Value,
    sk_nace: Value,
    pravna_forma: Value,
    datum_zalozenia: Option<String>,
    datum_zrusenia: Option<String>,
    id_uctovnych_zavierok: Vec<i64>,
    id_vyrocnych_sprav: Vec<i64>,
    /// `ZMAZANÉ` (deleted) or `Neverejná` (not public); absent for normal records.
    stav: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct WireStatement {
    id: i64,
    obdobie_od: Option<String>,
    obdobie_do: Option<String>,
    typ: Option<String>,
    datum_podania: Option<String>,
    konsolidovana: Option<bool>,
}

impl RuzClient {
    pub fn new(http: reqwest::Client, base: &str) -> RuzClient {
        RuzClient {
            http,
            base: base.trim_end_matches('/').to_string(),
        }
    }

    /// The accounting unit of `ico` with its statements.
    pub async fn lookup(&self, ico: &str) -> Result<Found<FinancialResults>, RegisterError> {
        let ids: Option<IdList> = get_json(
            self.http
                .get(format!("{}/api/uctovne-jednotky", self.base))
                .query(&[("zmenene-od", "2000-01-01"), ("ico", ico)]),
            REGISTER,
            "the list of accounting units",
        )
        .await?;
        let mut ids = ids.map(|l| l.id).unwrap_or_default();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        for id in ids.iter().take(UNITS_TRIED) {
            let unit: Option<Unit> = get_json(
                self.http
                    .get(format!("{}/api/uctovna-jednotka", self.base))
                    .query(&[("id", id)]),
                REGISTER,
                "an accounting unit",
            )
            .await?;
            match unit {
                Some(unit) if unit.stav.as_deref() != Some("ZMAZANÉ") => {
                    let statements = self.statements(&unit.id_uctovnych_zavierok).await?;
                    return Ok(Found::Data(convert(unit, statements)));
                }
                _ => continue,
            }
        }
        Ok(Found::NotFound(format!(
            "RÚZ has no accounting unit with IČO {ico}"
        )))
    }

    async fn statements(&self, ids: &[i64]) -> Result<Vec<Statement>, RegisterError> {
        let mut newest: Vec<i64> = ids.to_vec();
        newest.sort_unstable_by(|a, b| b.cmp(a));
        newest.truncate(STATEMENT_DETAILS);
        let fetched = try_join_all(newest.iter().map(|id| async move {
            let s: Option<WireStatement> = get_json(
                self.http
                    .get(format!("{}/api/uctovna-zavierka", self.base))
                    .query(&[("id", id)]),
                REGISTER,
                "a financial statement",
            )
            .await?;
            Ok::<_, RegisterError>(match s {
                Some(s) => Statement {
                    id: s.id,
                    period_from: s.obdobie_od,
                    period_to: s.obdobie_do,
                    kind: s.typ,
                    submitted_on: s.datum_podania,
                    consolidated: s.konsolidovana,
                },
                // Listed but gone (deleted since): the id is all there is.
                None => Statement {
                    id: *id,
                    period_from: None,
                    period_to: None,
                    kind: None,
                    submitted_on: None,
                    consolidated: None,
                },
            })
        }))
        .await?;
        Ok(fetched)
    }
}

fn convert(unit: Unit, statements: Vec<Statement>) -> FinancialResults {
    let mut statement_ids = unit.id_uctovnych_zavierok;
    statement_ids.sort_unstable_by(|a, b| b.cmp(a));
    let mut annual_report_ids = unit.id_vyrocnych_sprav;
    annual_report_ids.sort_unstable_by(|a, b| b.cmp(a));
    FinancialResults {
        ruz_id: unit.id,
        ico: text_of(&unit.ico),
        dic: text_of(&unit.dic),
        name: unit.nazov_uj,
        address: PostalAddress {
            street: unit.ulica,
            city: unit.mesto,
            postal_code: text_of(&unit.psc),
        },
        sk_nace: text_of(&unit.sk_nace),
        legal_form_code: text_of(&unit.pravna_forma),
        established: unit.datum_zalozenia,
        dissolved: unit.datum_zrusenia,
        statements,
        statement_ids,
        annual_report_ids,
    }
}
