//! RPVS (Register partnerov verejného sektora, Ministry of Justice), OData v4:
//! `GET {base}/PartneriVerejnehoSektora?$filter=Ico eq '{IČO}'&$expand=Partner,PravnaForma,Adresa`
//! → `{"value": [{Id, CisloVlozky, ObchodneMeno, Ico, PlatnostOd, PlatnostDo,
//! PravnaForma{Meno, StatistickyKod}, Adresa{MenoUlice, OrientacneCislo, Mesto, Psc},
//! Partner{Id, CisloVlozky}}]}`; the beneficial owners hang off the partner:
//! `GET {base}/Partneri({Partner.Id})?$expand=KonecniUzivateliaVyhod` →
//! `{Id, CisloVlozky, KonecniUzivateliaVyhod: [{Meno, Priezvisko, TitulPred, TitulZa,
//! DatumNarodenia, JeVerejnyCinitel, PlatnostOd, PlatnostDo}]}` (a legal person as owner
//! has `ObchodneMeno` instead of a name). Shapes taken from public crawlers of the service;
//! every field is optional here.

use serde::Deserialize;
use serde_json::Value;

use super::answer::{BeneficialOwner, PublicSectorPartner};
use super::{get_json, text_of, Found, RegisterError};

pub const SOURCE: &str = "RPVS (Register partnerov verejného sektora)";
const REGISTER: &str = "RPVS";

#[derive(Clone)]
pub struct RpvsClient {
    http: reqwest::Client,
    base: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Collection {
    value: Vec<Registration>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "PascalCase")]
struct Registration {
    id: Value,
    cislo_vlozky: Value,
    obchodne_meno: Option<String>,
    meno: Option<String>,
    priezvisko: Option<String>,
    ico: Value,
    platnost_od: Option<String>,
    platnost_do: Option<String>,
    pravna_forma: Option<WireLegalForm>,
    adresa: Option<WireAddress>,
    partner: Option<PartnerRef>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "PascalCase")]
struct WireLegalForm {
    meno: Option<String>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "PascalCase")]
struct WireAddress {
    meno_ulice: Option<String>,
    orientacne_cislo: Value,
    mesto: Option<String>,
    psc: Value,
}

#[derive(Deserialize, Default, Clone)]
#[serde(default, rename_all = "PascalCase")]
struct PartnerRef {
    id: Value,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
struct Partner {
    konecni_uzivatelia_vyhod: Vec<WireOwner>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
struct WireOwner {
    meno: Option<String>,
    priezvisko: Option<String>,
    titul_pred: Option<String>,
    titul_za: Option<String>,
    obchodne_meno: Option<String>,
    datum_narodenia: Option<String>,
    je_verejny_cinitel: Option<bool>,
    platnost_od: Option<String>,
    platnost_do: Option<String>,
}

impl RpvsClient {
    pub fn new(http: reqwest::Client, base: &str) -> RpvsClient {
        RpvsClient {
            http,
            base: base.trim_end_matches('/').to_string(),
        }
    }

    /// The registration of `ico` (the one in force, else the latest) and its owners.
    pub async fn lookup(&self, ico: &str) -> Result<Found<PublicSectorPartner>, RegisterError> {
        // `ico` is eight checked digits, so it cannot break out of the OData string literal.
        let found: Option<Collection> = get_json(
            self.http
                .get(format!("{}/PartneriVerejnehoSektora", self.base))
                .query(&[
                    ("$filter", format!("Ico eq '{ico}'")),
                    ("$expand", "Partner,PravnaForma,Adresa".to_string()),
                ]),
            REGISTER,
            "the search by IČO",
        )
        .await?;
        let records = found.map(|c| c.value).unwrap_or_default();
        let Some(record) = records
            .iter()
            .filter(|r| r.platnost_do.is_none())
            .max_by(|a, b| a.platnost_od.cmp(&b.platnost_od))
            .or_else(|| {
                records
                    .iter()
                    .max_by(|a, b| a.platnost_od.cmp(&b.platnost_od))
            })
        else {
            return Ok(Found::NotFound(format!(
                "RPVS has no public-sector partner with IČO {ico}"
            )));
        };
        let owners = match record.partner.as_ref().and_then(|p| text_of(&p.id)) {
            Some(partner_id) => {
                let partner: Option<Partner> = get_json(
                    self.http
                        .get(format!("{}/Partneri({partner_id})", self.base))
                        .query(&[("$expand", "KonecniUzivateliaVyhod")]),
                    REGISTER,
                    "the partner's beneficial owners",
                )
                .await?;
                partner
                    .map(|p| p.konecni_uzivatelia_vyhod)
                    .unwrap_or_default()
            }
            None => Vec::new(),
        };
        Ok(Found::Data(convert(record, owners)))
    }
}

fn convert(r: &Registration, owners: Vec<WireOwner>) -> PublicSectorPartner {
    let person = [r.meno.clone(), r.priezvisko.clone()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let address = r.adresa.as_ref().map(|a| {
        let street = [a.meno_ulice.clone(), text_of(&a.orientacne_cislo)]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        let town = [text_of(&a.psc), a.mesto.clone()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        [street, town]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(", ")
    });
    PublicSectorPartner {
        rpvs_id: r.id.as_i64(),
        entry_number: text_of(&r.cislo_vlozky),
        name: r
            .obchodne_meno
            .clone()
            .or_else(|| (!person.is_empty()).then_some(person)),
        ico: text_of(&r.ico),
        registered_from: r.platnost_od.clone(),
        registered_to: r.platnost_do.clone(),
        legal_form: r.pravna_forma.as_ref().and_then(|f| f.meno.clone()),
        address: address.filter(|a| !a.is_empty()),
        beneficial_owners: owners.into_iter().filter_map(owner).collect(),
    }
}

fn owner(o: WireOwner) -> Option<BeneficialOwner> {
    let person = [o.titul_pred, o.meno, o.priezvisko]
        .into_iter()
        .flatten()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let person = match o.titul_za.filter(|t| !t.trim().is_empty()) {
        Some(t) if !person.is_empty() => format!("{person}, {}", t.trim()),
        _ => person,
    };
    let name = if person.is_empty() {
        o.obchodne_meno?
    } else {
        person
    };
    Some(BeneficialOwner {
        name,
        birth_date: o.datum_narodenia,
        public_official: o.je_verejny_cinitel,
        valid_from: o.platnost_od,
        valid_to: o.platnost_do,
    })
}
