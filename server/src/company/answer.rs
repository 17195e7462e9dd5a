//! The answer of `GET /v1/company/sk/{ico}`: four groups, one per kind of register, each
//! saying where it came from, when, and whether the register answered.

use serde::Serialize;
use utoipa::ToSchema;

/// Whether a register answered for this group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GroupStatus {
    /// The register answered; `data` holds what it said.
    Ok,
    /// The register answered that it has no record for this IČO.
    NotFound,
    /// The register could not be asked or did not answer in time; `detail` says why.
    /// Nothing is known — this is never a statement that the record does not exist.
    Unavailable,
}

/// One group of the answer.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Group<T> {
    /// The register that answered (`sandbox` for the built-in data set).
    pub source: String,
    /// The register's base URL (null in the sandbox).
    pub source_url: Option<String>,
    /// When the register answered (ISO 8601 UTC); a cached answer keeps its original time.
    pub fetched_at: String,
    pub status: GroupStatus,
    /// Whether this answer came from the cache rather than from the register just now.
    pub cached: bool,
    /// Null unless `status` is `ok`.
    #[schema(nullable = true)]
    pub data: Option<T>,
    /// Why a group is `unavailable` or `not_found`, or a caveat on an `ok` answer.
    pub detail: Option<String>,
}

impl<T> Group<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Group<U> {
        Group {
            source: self.source,
            source_url: self.source_url,
            fetched_at: self.fetched_at,
            status: self.status,
            cached: self.cached,
            data: self.data.map(f),
            detail: self.detail,
        }
    }
}

/// Slovak company data (interface spec 2.7).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct CompanyAnswer {
    /// The 8-digit IČO asked about (a legacy 6-digit IČO is answered left-padded with `00`).
    pub ico: String,
    /// The best known current name: RPO, else RÚZ, else RPVS.
    pub name: Option<String>,
    /// `sandbox` answers are built-in sample data, never production results.
    pub environment: String,
    /// True when at least one group is `unavailable`.
    pub partial: bool,
    /// RPO: names, addresses, legal form, establishment and termination, statutory bodies.
    pub commercial_register: Group<CommercialRegister>,
    /// Financial Administration tax debtors (`ds_dsdd`).
    pub debtors: Group<Debtors>,
    /// RÚZ: the accounting unit and its financial statements.
    pub financial_results: Group<FinancialResults>,
    /// RPVS: registration as a public-sector partner and beneficial owners.
    pub public_sector_partners: Group<PublicSectorPartner>,
}

impl CompanyAnswer {
    /// Every group unavailable: nothing at all is known.
    pub fn all_unavailable(&self) -> bool {
        [
            self.commercial_register.status,
            self.debtors.status,
            self.financial_results.status,
            self.public_sector_partners.status,
        ]
        .iter()
        .all(|s| *s == GroupStatus::Unavailable)
    }

    /// `(group, detail)` of each unavailable group.
    pub fn unavailable(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut add = |name: &'static str, status: GroupStatus, detail: &Option<String>| {
            if status == GroupStatus::Unavailable {
                out.push((name, detail.clone().unwrap_or_default()));
            }
        };
        add(
            "commercial_register",
            self.commercial_register.status,
            &self.commercial_register.detail,
        );
        add("debtors", self.debtors.status, &self.debtors.detail);
        add(
            "financial_results",
            self.financial_results.status,
            &self.financial_results.detail,
        );
        add(
            "public_sector_partners",
            self.public_sector_partners.status,
            &self.public_sector_partners.detail,
        );
        out
    }
}

/// A value with the period it was valid (ISO dates; `valid_to` null while it still is).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct Dated {
    pub value: String,
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct Address {
    /// Street, number, postcode and municipality on one line.
    pub formatted: String,
    pub street: Option<String>,
    /// Building number as registered (`regNumber/buildingNumber` when both are known).
    pub number: Option<String>,
    pub postal_code: Option<String>,
    pub municipality: Option<String>,
    pub country: Option<String>,
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct LegalForm {
    /// Statistical code of the legal form (e.g. `112` for s.r.o.).
    pub code: Option<String>,
    pub name: Option<String>,
}

/// A member of a statutory body (konateľ, predstavenstvo, ...).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct StatutoryMember {
    pub name: String,
    /// The function, as the register names it (e.g. `konateľ`).
    pub role: Option<String>,
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
}

/// RPO record of a legal entity.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct CommercialRegister {
    /// RPO's own id of the entity.
    pub rpo_id: Option<i64>,
    pub current_name: Option<String>,
    /// Every name the entity has had, with validity.
    pub names: Vec<Dated>,
    pub current_address: Option<String>,
    pub addresses: Vec<Address>,
    /// The current legal form.
    pub legal_form: Option<LegalForm>,
    /// Date of establishment (ISO).
    pub established: Option<String>,
    /// Date of termination (ISO); null while the entity exists.
    pub terminated: Option<String>,
    /// Members of statutory bodies, current and past, with validity.
    pub statutory_bodies: Vec<StatutoryMember>,
}

/// One record of the tax-debtor list.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct TaxDebt {
    pub name: String,
    pub street: Option<String>,
    pub postal_code: Option<String>,
    pub municipality: Option<String>,
    /// The arrears in EUR as the list states them.
    pub amount: Option<String>,
}

/// Debts owed to public bodies, as far as an open register publishes them.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct Debtors {
    /// Whether the company is on the Financial Administration's tax-debtor list.
    pub tax_debtor: bool,
    pub tax_debts: Vec<TaxDebt>,
    /// The tax-debtor list carries no IČO: records are matched by the company's registered
    /// name (`matched_by: "name"`), which is the name searched for here.
    pub searched_name: String,
    pub matched_by: String,
    /// Debtor lists this answer does not cover (no open, queryable source is modelled).
    pub not_covered: Vec<String>,
}

/// A financial statement filed with RÚZ.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct Statement {
    pub id: i64,
    /// Period start (`YYYY-MM`).
    pub period_from: Option<String>,
    /// Period end (`YYYY-MM`).
    pub period_to: Option<String>,
    /// `Riadna`, `Mimoriadna`, `Priebežná` or `Kombinovaná`.
    pub kind: Option<String>,
    pub submitted_on: Option<String>,
    pub consolidated: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct PostalAddress {
    pub street: Option<String>,
    pub city: Option<String>,
    pub postal_code: Option<String>,
}

/// RÚZ accounting unit.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct FinancialResults {
    /// RÚZ's own id of the accounting unit.
    pub ruz_id: i64,
    pub ico: Option<String>,
    pub dic: Option<String>,
    pub name: Option<String>,
    pub address: PostalAddress,
    /// SK NACE code of the main activity.
    pub sk_nace: Option<String>,
    pub legal_form_code: Option<String>,
    pub established: Option<String>,
    pub dissolved: Option<String>,
    /// Details of the most recent statements (at most 10), newest id first.
    pub statements: Vec<Statement>,
    /// Ids of every filed financial statement.
    pub statement_ids: Vec<i64>,
    /// Ids of every filed annual report.
    pub annual_report_ids: Vec<i64>,
}

/// A beneficial owner (konečný užívateľ výhod).
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct BeneficialOwner {
    pub name: String,
    pub birth_date: Option<String>,
    /// Whether the owner is a public official (verejný činiteľ).
    pub public_official: Option<bool>,
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
}

/// RPVS registration.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct PublicSectorPartner {
    /// RPVS's id of the registration.
    pub rpvs_id: Option<i64>,
    /// Entry number (číslo vložky).
    pub entry_number: Option<String>,
    pub name: Option<String>,
    pub ico: Option<String>,
    pub registered_from: Option<String>,
    /// Null while the registration is in force.
    pub registered_to: Option<String>,
    pub legal_form: Option<String>,
    pub address: Option<String>,
    pub beneficial_owners: Vec<BeneficialOwner>,
}
