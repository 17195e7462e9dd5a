//! The sandbox data set: ten fictitious Slovak companies answered locally. Their IČOs pass
//! the check digit (99900017 ... 99900131, a range chosen to be far from real numbers) and
//! every name says `Sandbox`; every group says `source: "sandbox"`. Among them:
//! 99900025 is on the tax-debtor list, 99900033 is terminated, 99900041 is a public-sector
//! partner with beneficial owners, 99900050 is unknown to RÚZ. Any other valid IČO is
//! unknown to every register (`not_found` throughout).

use super::answer::*;
use super::{assemble, debtors_data};

/// (DIČ, SK NACE, statements (id, period from, period to)).
type Accounts = (
    &'static str,
    &'static str,
    &'static [(i64, &'static str, &'static str)],
);
/// (entry number, registered from, owners (name, birth date, public official, from)).
type Partner = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str, bool, &'static str)],
);

struct Company {
    ico: &'static str,
    name: &'static str,
    former_name: Option<(&'static str, &'static str, &'static str)>,
    legal_form: (&'static str, &'static str),
    street: &'static str,
    number: &'static str,
    postal_code: &'static str,
    city: &'static str,
    established: &'static str,
    terminated: Option<&'static str>,
    /// (name, role, valid from, valid to)
    statutory: &'static [(
        &'static str,
        &'static str,
        &'static str,
        Option<&'static str>,
    )],
    /// (DIČ, SK NACE, statements (id, from, to)); None: unknown to RÚZ.
    ruz: Option<Accounts>,
    tax_debt: Option<&'static str>,
    /// (entry number, registered from, owners (name, birth date, public official, from)).
    rpvs: Option<Partner>,
}

const SRO: (&str, &str) = ("112", "Spoločnosť s ručením obmedzeným");
const AS: (&str, &str) = ("121", "Akciová spoločnosť");

const COMPANIES: &[Company] = &[
    Company {
        ico: "99900017",
        name: "Sandbox Dodávateľ s.r.o.",
        former_name: Some(("Sandbox Obchod s.r.o.", "2012-03-01", "2018-06-30")),
        legal_form: SRO,
        street: "Hlavná",
        number: "1",
        postal_code: "81101",
        city: "Bratislava",
        established: "2012-03-01",
        terminated: None,
        statutory: &[
            (
                "Sandbox Ján Vzorový",
                "konateľ",
                "2012-03-01",
                Some("2019-12-31"),
            ),
            ("Sandbox Eva Vzorová", "konateľ", "2020-01-01", None),
        ],
        ruz: Some((
            "2099000171",
            "46900",
            &[
                (9_900_303, "2024-01", "2024-12"),
                (9_900_302, "2023-01", "2023-12"),
                (9_900_301, "2022-01", "2022-12"),
            ],
        )),
        tax_debt: None,
        rpvs: None,
    },
    Company {
        ico: "99900025",
        name: "Sandbox Dlžník s.r.o.",
        former_name: None,
        legal_form: SRO,
        street: "Mlynská",
        number: "12",
        postal_code: "04001",
        city: "Košice",
        established: "2015-09-15",
        terminated: None,
        statutory: &[("Sandbox Peter Dlhý", "konateľ", "2015-09-15", None)],
        ruz: Some(("2099000252", "41200", &[(9_900_311, "2023-01", "2023-12")])),
        tax_debt: Some("18450.32"),
        rpvs: None,
    },
    Company {
        ico: "99900033",
        name: "Sandbox Zaniknutá s.r.o. v likvidácii",
        former_name: Some(("Sandbox Zaniknutá s.r.o.", "2005-02-01", "2021-03-31")),
        legal_form: SRO,
        street: "Nová",
        number: "5",
        postal_code: "01001",
        city: "Žilina",
        established: "2005-02-01",
        terminated: Some("2022-11-30"),
        statutory: &[(
            "Sandbox Mária Likvidátorová",
            "likvidátor",
            "2021-04-01",
            Some("2022-11-30"),
        )],
        ruz: Some(("2099000333", "47190", &[(9_900_321, "2020-01", "2020-12")])),
        tax_debt: None,
        rpvs: None,
    },
    Company {
        ico: "99900041",
        name: "Sandbox Stavby a.s.",
        former_name: None,
        legal_form: AS,
        street: "Priemyselná",
        number: "8",
        postal_code: "94901",
        city: "Nitra",
        established: "2001-06-01",
        terminated: None,
        statutory: &[
            (
                "Sandbox Ing. Juraj Staviteľ",
                "predseda predstavenstva",
                "2001-06-01",
                None,
            ),
            (
                "Sandbox Lucia Murárová",
                "člen predstavenstva",
                "2016-01-01",
                None,
            ),
        ],
        ruz: Some((
            "2099000414",
            "41200",
            &[
                (9_900_332, "2024-01", "2024-12"),
                (9_900_331, "2023-01", "2023-12"),
            ],
        )),
        tax_debt: None,
        rpvs: Some((
            "99041",
            "2017-02-01",
            &[
                ("Sandbox Juraj Staviteľ", "1970-04-12", false, "2017-02-01"),
                ("Sandbox Anna Staviteľová", "1974-09-30", true, "2019-05-15"),
            ],
        )),
    },
    Company {
        ico: "99900050",
        name: "Sandbox Nováčik s.r.o.",
        former_name: None,
        legal_form: SRO,
        street: "Jarná",
        number: "3",
        postal_code: "08001",
        city: "Prešov",
        established: "2026-05-04",
        terminated: None,
        statutory: &[("Sandbox Tomáš Nový", "konateľ", "2026-05-04", None)],
        ruz: None,
        tax_debt: None,
        rpvs: None,
    },
    Company {
        ico: "99900068",
        name: "Sandbox Softvér s.r.o.",
        former_name: None,
        legal_form: SRO,
        street: "Karadžičova",
        number: "16",
        postal_code: "82108",
        city: "Bratislava",
        established: "2010-01-20",
        terminated: None,
        statutory: &[("Sandbox Martin Kódovač", "konateľ", "2010-01-20", None)],
        ruz: Some(("2099000681", "62010", &[(9_900_341, "2024-01", "2024-12")])),
        tax_debt: None,
        rpvs: None,
    },
    Company {
        ico: "99900076",
        name: "Sandbox Potraviny v.o.s.",
        former_name: None,
        legal_form: ("111", "Verejná obchodná spoločnosť"),
        street: "Námestie SNP",
        number: "20",
        postal_code: "97401",
        city: "Banská Bystrica",
        established: "1998-04-01",
        terminated: None,
        statutory: &[
            ("Sandbox Ondrej Kupec", "spoločník", "1998-04-01", None),
            ("Sandbox Zuzana Kupcová", "spoločník", "1998-04-01", None),
        ],
        ruz: Some(("2099000769", "47110", &[(9_900_351, "2024-01", "2024-12")])),
        tax_debt: None,
        rpvs: None,
    },
    Company {
        ico: "99900084",
        name: "Sandbox Doprava a.s.",
        former_name: None,
        legal_form: AS,
        street: "Staničná",
        number: "2",
        postal_code: "91701",
        city: "Trnava",
        established: "1995-11-01",
        terminated: None,
        statutory: &[(
            "Sandbox Karol Vodič",
            "predseda predstavenstva",
            "2018-01-01",
            None,
        )],
        ruz: Some(("2099000846", "49410", &[(9_900_361, "2024-01", "2024-12")])),
        tax_debt: None,
        rpvs: Some((
            "99084",
            "2018-03-01",
            &[("Sandbox Karol Vodič", "1965-01-08", false, "2018-03-01")],
        )),
    },
    Company {
        ico: "99900092",
        name: "Sandbox Poľnohospodárske družstvo",
        former_name: None,
        legal_form: ("205", "Družstvo"),
        street: "Poľná",
        number: "44",
        postal_code: "92101",
        city: "Piešťany",
        established: "1992-07-01",
        terminated: None,
        statutory: &[("Sandbox Michal Roľník", "predseda", "2014-06-01", None)],
        ruz: Some(("2099000923", "01110", &[(9_900_371, "2024-01", "2024-12")])),
        tax_debt: None,
        rpvs: None,
    },
    Company {
        ico: "99900106",
        name: "Sandbox Nadácia Pre Vzor",
        former_name: None,
        legal_form: ("721", "Nadácia"),
        street: "Školská",
        number: "7",
        postal_code: "91101",
        city: "Trenčín",
        established: "2003-09-01",
        terminated: None,
        statutory: &[("Sandbox Helena Správcová", "správca", "2003-09-01", None)],
        ruz: Some(("2099001064", "94990", &[(9_900_381, "2024-01", "2024-12")])),
        tax_debt: None,
        rpvs: None,
    },
];

/// Every sandbox company: IČO, name, and whether it has ceased to exist.
pub fn companies() -> impl Iterator<Item = (&'static str, &'static str, bool)> {
    COMPANIES
        .iter()
        .map(|c| (c.ico, c.name, c.terminated.is_some()))
}

const NOT_IN_SANDBOX: &str = "no company with this IČO is in the sandbox data set";

fn group<T>(data: Option<T>, not_found: &str, detail_ok: Option<&str>) -> Group<T> {
    let status = if data.is_some() {
        GroupStatus::Ok
    } else {
        GroupStatus::NotFound
    };
    let detail = match status {
        GroupStatus::Ok => detail_ok.map(str::to_string),
        _ => Some(not_found.to_string()),
    };
    Group {
        source: "sandbox".to_string(),
        source_url: None,
        fetched_at: crate::clock::now(),
        status,
        cached: false,
        data,
        detail,
    }
}

/// The sandbox answer for `ico` (a valid IČO).
pub fn lookup(ico: &str) -> CompanyAnswer {
    let company = COMPANIES.iter().find(|c| c.ico == ico);
    let Some(c) = company else {
        return assemble(
            ico,
            "sandbox",
            group(None, NOT_IN_SANDBOX, None),
            group(None, NOT_IN_SANDBOX, None),
            group(None, NOT_IN_SANDBOX, None),
            group(None, NOT_IN_SANDBOX, None),
        );
    };
    let address = Address {
        formatted: format!(
            "{} {}, {} {}, Slovenská republika",
            c.street, c.number, c.postal_code, c.city
        ),
        street: Some(c.street.to_string()),
        number: Some(c.number.to_string()),
        postal_code: Some(c.postal_code.to_string()),
        municipality: Some(c.city.to_string()),
        country: Some("Slovenská republika".to_string()),
        valid_from: Some(c.established.to_string()),
        valid_to: c.terminated.map(str::to_string),
    };
    let mut names: Vec<Dated> = c
        .former_name
        .iter()
        .map(|(n, from, to)| Dated {
            value: n.to_string(),
            valid_from: Some(from.to_string()),
            valid_to: Some(to.to_string()),
        })
        .collect();
    names.push(Dated {
        value: c.name.to_string(),
        valid_from: Some(
            c.former_name
                .map(|(_, _, to)| to)
                .unwrap_or(c.established)
                .to_string(),
        ),
        valid_to: c.terminated.map(str::to_string),
    });
    let register = CommercialRegister {
        rpo_id: None,
        current_name: Some(c.name.to_string()),
        names,
        current_address: Some(address.formatted.clone()),
        addresses: vec![address],
        legal_form: Some(LegalForm {
            code: Some(c.legal_form.0.to_string()),
            name: Some(c.legal_form.1.to_string()),
        }),
        established: Some(c.established.to_string()),
        terminated: c.terminated.map(str::to_string),
        statutory_bodies: c
            .statutory
            .iter()
            .map(|(name, role, from, to)| StatutoryMember {
                name: name.to_string(),
                role: Some(role.to_string()),
                valid_from: Some(from.to_string()),
                valid_to: to.map(str::to_string),
            })
            .collect(),
    };
    let debts = c
        .tax_debt
        .map(|amount| TaxDebt {
            name: c.name.to_string(),
            street: Some(format!("{} {}", c.street, c.number)),
            postal_code: Some(c.postal_code.to_string()),
            municipality: Some(c.city.to_string()),
            amount: Some(amount.to_string()),
        })
        .into_iter()
        .collect();
    let accounts = c.ruz.map(|(dic, nace, statements)| FinancialResults {
        ruz_id: 0,
        ico: Some(c.ico.to_string()),
        dic: Some(dic.to_string()),
        name: Some(c.name.to_string()),
        address: PostalAddress {
            street: Some(format!("{} {}", c.street, c.number)),
            city: Some(c.city.to_string()),
            postal_code: Some(c.postal_code.to_string()),
        },
        sk_nace: Some(nace.to_string()),
        legal_form_code: Some(c.legal_form.0.to_string()),
        established: Some(c.established.to_string()),
        dissolved: c.terminated.map(str::to_string),
        statements: statements
            .iter()
            .map(|(id, from, to)| Statement {
                id: *id,
                period_from: Some(from.to_string()),
                period_to: Some(to.to_string()),
                kind: Some("Riadna".to_string()),
                submitted_on: None,
                consolidated: Some(false),
            })
            .collect(),
        statement_ids: statements.iter().map(|(id, _, _)| *id).collect(),
        annual_report_ids: Vec::new(),
    });
    let partner = c.rpvs.map(|(entry, from, owners)| PublicSectorPartner {
        rpvs_id: None,
        entry_number: Some(entry.to_string()),
        name: Some(c.name.to_string()),
        ico: Some(c.ico.to_string()),
        registered_from: Some(from.to_string()),
        registered_to: None,
        legal_form: Some(c.legal_form.1.to_string()),
        address: Some(format!(
            "{} {}, {} {}",
            c.street, c.number, c.postal_code, c.city
        )),
        beneficial_owners: owners
            .iter()
            .map(|(name, born, official, from)| BeneficialOwner {
                name: name.to_string(),
                birth_date: Some(born.to_string()),
                public_official: Some(*official),
                valid_from: Some(from.to_string()),
                valid_to: None,
            })
            .collect(),
    });
    assemble(
        ico,
        "sandbox",
        group(Some(register), NOT_IN_SANDBOX, None),
        group(
            Some(debtors_data(c.name.to_string(), debts)),
            NOT_IN_SANDBOX,
            Some("sandbox data: the tax-debtor list carries no IČO and is matched by name"),
        ),
        group(
            accounts,
            "the sandbox RÚZ has no accounting unit with this IČO",
            None,
        ),
        group(
            partner,
            "the sandbox RPVS has no public-sector partner with this IČO",
            None,
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_icos_pass_the_check_digit_and_names_say_sandbox() {
        for c in COMPANIES {
            assert_eq!(super::super::ico::parse(c.ico).as_deref(), Ok(c.ico));
            assert!(c.name.starts_with("Sandbox"), "{}", c.name);
        }
        assert_eq!(COMPANIES.len(), 10);
    }
}
