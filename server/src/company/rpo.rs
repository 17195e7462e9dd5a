//! RPO (Register právnických osôb, Statistical Office of the Slovak Republic):
//! `GET {base}/search?identifier={IČO}` finds the entity's RPO id, then
//! `GET {base}/entity/{id}?showHistoricalData=true` gives the full record with every name,
//! address, legal form and statutory-body member and their validity dates.
//!
//! Wire shape (camelCase; modelled on the published API as used by public clients — the
//! apiary description at susrrro.docs.apiary.io was not reachable from here): `fullNames`,
//! `addresses` and `legalForms` are lists of `{value, validFrom, validTo?}`, an address has
//! `street`, `regNumber`, `buildingNumber`, `postalCodes[]`, `municipality{value, code}`,
//! `country{value, code}`; `statutoryBodies` are `{stakeholderType{value}, personName
//! {formatedName, givenNames[], familyNames[]}, validFrom, validTo?}`; `establishment` and
//! `termination` are ISO dates. Every field is optional here so that a missing one never
//! turns an answer into an outage.

use serde::Deserialize;
use serde_json::Value;

use super::answer::{Address, CommercialRegister, Dated, LegalForm, StatutoryMember};
use super::{get_json, text_of, Found, RegisterError};

pub const SOURCE: &str = "RPO (Register právnických osôb, Štatistický úrad SR)";
const REGISTER: &str = "RPO";

#[derive(Clone)]
pub struct RpoClient {
    http: reqwest::Client,
    base: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SearchResponse {
    results: Vec<Entity>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "camelCase")]
struct Entity {
    id: Value,
    identifiers: Vec<ValueDated>,
    full_names: Vec<ValueDated>,
    addresses: Vec<WireAddress>,
    legal_forms: Vec<WireLegalForm>,
    establishment: Option<String>,
    termination: Option<String>,
    statutory_bodies: Vec<WireStakeholder>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "camelCase")]
struct ValueDated {
    value: Value,
    valid_from: Option<String>,
    valid_to: Option<String>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default)]
struct Coded {
    value: Option<String>,
    code: Value,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "camelCase")]
struct WireAddress {
    street: Option<String>,
    reg_number: Value,
    building_number: Value,
    postal_codes: Vec<Value>,
    municipality: Option<Coded>,
    country: Option<Coded>,
    valid_from: Option<String>,
    valid_to: Option<String>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "camelCase")]
struct WireLegalForm {
    value: Option<Coded>,
    valid_from: Option<String>,
    valid_to: Option<String>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "camelCase")]
struct PersonName {
    formated_name: Option<String>,
    given_names: Vec<String>,
    family_names: Vec<String>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "camelCase")]
struct WireStakeholder {
    stakeholder_type: Option<Coded>,
    person_name: Option<PersonName>,
    /// Legal persons sitting on a body are named here instead of `personName`.
    full_name: Option<String>,
    valid_from: Option<String>,
    valid_to: Option<String>,
}

impl RpoClient {
    pub fn new(http: reqwest::Client, base: &str) -> RpoClient {
        RpoClient {
            http,
            base: base.trim_end_matches('/').to_string(),
        }
    }

    /// The RPO record of `ico`.
    pub async fn lookup(&self, ico: &str) -> Result<Found<CommercialRegister>, RegisterError> {
        let search: Option<SearchResponse> = get_json(
            self.http
                .get(format!("{}/search", self.base))
                .query(&[("identifier", ico)]),
            REGISTER,
            "the search by IČO",
        )
        .await?;
        let results = search.map(|s| s.results).unwrap_or_default();
        // The search matches identifiers; prefer the result that carries exactly this IČO.
        let Some(hit) = results
            .iter()
            .find(|r| {
                r.identifiers
                    .iter()
                    .any(|i| text_of(&i.value).as_deref() == Some(ico))
            })
            .or(results.first())
        else {
            return Ok(Found::NotFound(format!(
                "RPO has no legal entity with IČO {ico}"
            )));
        };
        let Some(id) = text_of(&hit.id) else {
            return Err(RegisterError::Shape {
                register: REGISTER,
                what: "the search by IČO",
                reason: "a result without an id".into(),
            });
        };
        let entity: Option<Entity> = get_json(
            self.http
                .get(format!("{}/entity/{id}", self.base))
                .query(&[("showHistoricalData", "true")]),
            REGISTER,
            "the entity record",
        )
        .await?;
        // A search hit whose record is gone: the search result is all RPO has to say.
        let entity = entity.unwrap_or_else(|| hit.clone());
        Ok(Found::Data(convert(&entity)))
    }
}

/// Of dated values, the one in force: no `validTo`, latest `validFrom`; else the last.
fn current<T>(items: &[T], dates: impl Fn(&T) -> (&Option<String>, &Option<String>)) -> Option<&T> {
    items
        .iter()
        .filter(|i| dates(i).1.is_none())
        .max_by(|a, b| dates(a).0.cmp(dates(b).0))
        .or(items.last())
}

fn convert(e: &Entity) -> CommercialRegister {
    let names: Vec<Dated> = e
        .full_names
        .iter()
        .filter_map(|n| {
            Some(Dated {
                value: text_of(&n.value)?,
                valid_from: n.valid_from.clone(),
                valid_to: n.valid_to.clone(),
            })
        })
        .collect();
    let addresses: Vec<Address> = e.addresses.iter().map(address).collect();
    let legal_form = current(&e.legal_forms, |l| (&l.valid_from, &l.valid_to)).and_then(|l| {
        l.value.as_ref().map(|v| LegalForm {
            code: text_of(&v.code),
            name: v.value.clone(),
        })
    });
    let statutory_bodies = e
        .statutory_bodies
        .iter()
        .filter_map(|s| {
            let name = s
                .person_name
                .as_ref()
                .and_then(person)
                .or_else(|| s.full_name.clone())?;
            Some(StatutoryMember {
                name,
                role: s.stakeholder_type.as_ref().and_then(|t| t.value.clone()),
                valid_from: s.valid_from.clone(),
                valid_to: s.valid_to.clone(),
            })
        })
        .collect();
    CommercialRegister {
        rpo_id: e.id.as_i64().or_else(|| text_of(&e.id)?.parse().ok()),
        current_name: current(&names, |n| (&n.valid_from, &n.valid_to)).map(|n| n.value.clone()),
        names,
        current_address: current(&addresses, |a| (&a.valid_from, &a.valid_to))
            .map(|a| a.formatted.clone()),
        addresses,
        legal_form,
        established: e.establishment.clone(),
        terminated: e.termination.clone(),
        statutory_bodies,
    }
}

fn person(p: &PersonName) -> Option<String> {
    if let Some(f) = p.formated_name.as_ref().filter(|f| !f.trim().is_empty()) {
        return Some(f.trim().to_string());
    }
    let joined = p
        .given_names
        .iter()
        .chain(p.family_names.iter())
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    (!joined.is_empty()).then_some(joined)
}

fn address(a: &WireAddress) -> Address {
    let number = match (text_of(&a.reg_number), text_of(&a.building_number)) {
        (Some(r), Some(b)) if r != "0" => Some(format!("{r}/{b}")),
        (_, Some(b)) => Some(b),
        (Some(r), None) if r != "0" => Some(r),
        _ => None,
    };
    let postal_code = a.postal_codes.iter().find_map(text_of);
    let municipality = a.municipality.as_ref().and_then(|m| m.value.clone());
    let country = a.country.as_ref().and_then(|c| c.value.clone());
    let street_line = [a.street.clone(), number.clone()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let town_line = [postal_code.clone(), municipality.clone()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let formatted = [street_line, town_line, country.clone().unwrap_or_default()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    Address {
        formatted,
        street: a.street.clone(),
        number,
        postal_code,
        municipality,
        country,
        valid_from: a.valid_from.clone(),
        valid_to: a.valid_to.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entity_record_becomes_the_commercial_register_group() {
        let e: Entity = serde_json::from_value(serde_json::json!({
            "id": 937053,
            "identifiers": [{"value": "31322832", "validFrom": "1992-01-01"}],
            "fullNames": [
                {"value": "Stará s.r.o.", "validFrom": "1992-01-01", "validTo": "2001-05-01"},
                {"value": "Nová s.r.o.", "validFrom": "2001-05-02"}
            ],
            "addresses": [{"street": "Hlavná", "regNumber": 1234, "buildingNumber": "5",
                "postalCodes": ["81101"], "municipality": {"value": "Bratislava", "code": "529346"},
                "country": {"value": "Slovenská republika", "code": "703"}, "validFrom": "1992-01-01"}],
            "legalForms": [{"value": {"code": "112", "value": "Spoločnosť s ručením obmedzeným"}, "validFrom": "1992-01-01"}],
            "establishment": "1992-01-01",
            "statutoryBodies": [
                {"stakeholderType": {"value": "konateľ"}, "personName": {"givenNames": ["Ján"], "familyNames": ["Novák"]}, "validFrom": "1992-01-01", "validTo": "2010-01-01"},
                {"stakeholderType": {"value": "konateľ"}, "personName": {"formatedName": "Ing. Eva Malá"}, "validFrom": "2010-01-02"}
            ]
        }))
        .expect("entity");
        let r = convert(&e);
        assert_eq!(r.rpo_id, Some(937053));
        assert_eq!(r.current_name.as_deref(), Some("Nová s.r.o."));
        assert_eq!(r.names.len(), 2);
        assert_eq!(
            r.current_address.as_deref(),
            Some("Hlavná 1234/5, 81101 Bratislava, Slovenská republika")
        );
        assert_eq!(
            r.legal_form.as_ref().and_then(|l| l.code.as_deref()),
            Some("112")
        );
        assert_eq!(r.statutory_bodies[0].name, "Ján Novák");
        assert_eq!(r.statutory_bodies[1].name, "Ing. Eva Malá");
        assert_eq!(r.terminated, None);
    }
}
