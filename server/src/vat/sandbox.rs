//! The sandbox register: a few dozen fictitious companies (many Slovak) and the VIES test
//! numbers, answered locally and marked as sandbox data.

use super::RegisterAnswer;

/// (VAT number, name, address). Check digits are real; the companies are fictitious.
pub const COMPANIES: &[(&str, &str, &str)] = &[
    // The buyer of the README's example invoice.
    (
        "SK2120345678",
        "Horehronská stavebná a.s.",
        "Námestie SNP 14, 974 01 Banská Bystrica",
    ),
    (
        "SK2022749619",
        "Sandbox Dodávateľ s.r.o.",
        "Hlavná 1, 811 01 Bratislava",
    ),
    (
        "SK2020317068",
        "Sandbox Odberateľ a.s.",
        "Mlynská 12, 040 01 Košice",
    ),
    (
        "SK1020304758",
        "Sandbox Stavby s.r.o.",
        "Nová 5, 010 01 Žilina",
    ),
    (
        "SK9979544025",
        "Sandbox Potraviny s.r.o.",
        "Štúrova 18, 949 01 Nitra",
    ),
    (
        "SK2599435267",
        "Sandbox Logistika a.s.",
        "Priemyselná 4, 917 01 Trnava",
    ),
    (
        "SK7241379376",
        "Sandbox Softvér s.r.o.",
        "Karadžičova 2, 811 09 Bratislava",
    ),
    (
        "SK5739655724",
        "Sandbox Energia a.s.",
        "Námestie SNP 7, 974 01 Banská Bystrica",
    ),
    (
        "SK9590936520",
        "Sandbox Kníhkupectvo s.r.o.",
        "Hlavná 40, 080 01 Prešov",
    ),
    (
        "SK7296376791",
        "Sandbox Strojárne a.s.",
        "Továrenská 9, 911 01 Trenčín",
    ),
    (
        "SK4221828754",
        "Sandbox Farmácia s.r.o.",
        "Dlhá 3, 921 01 Piešťany",
    ),
    (
        "SK4432410950",
        "Sandbox Nábytok s.r.o.",
        "Lesná 11, 960 01 Zvolen",
    ),
    (
        "SK7475582290",
        "Sandbox Obchod s.r.o.",
        "Masarykova 22, 071 01 Michalovce",
    ),
    (
        "SK5883955220",
        "Sandbox Tlačiareň s.r.o.",
        "Kpt. Nálepku 6, 058 01 Poprad",
    ),
    (
        "SK5581108918",
        "Sandbox Doprava a.s.",
        "Železničná 2, 036 01 Martin",
    ),
    (
        "SK7471166901",
        "Sandbox Poradenstvo s.r.o.",
        "Panenská 24, 811 03 Bratislava",
    ),
    (
        "SK4426084916",
        "Sandbox Stavebniny s.r.o.",
        "Cesta mládeže 8, 984 01 Lučenec",
    ),
    (
        "SK9873618689",
        "Sandbox Mliekareň a.s.",
        "Poľná 15, 927 01 Šaľa",
    ),
    (
        "SK9922673519",
        "Sandbox Elektro s.r.o.",
        "Komárňanská 30, 940 01 Nové Zámky",
    ),
    ("ATU13585627", "Sandbox Händler GmbH", "Ring 3, 1010 Wien"),
    (
        "BE0428759497",
        "Sandbox Leverancier NV",
        "Wetstraat 10, 1040 Brussel",
    ),
    (
        "CZ25123891",
        "Sandbox Dodavatel s.r.o.",
        "Na Příkopě 1, 110 00 Praha",
    ),
    (
        "DE129273398",
        "Sandbox Lieferant GmbH",
        "Hauptstraße 1, 10115 Berlin",
    ),
    (
        "DE136695976",
        "Sandbox Maschinenbau AG",
        "Industriestraße 5, 80331 München",
    ),
    (
        "EL094259216",
        "Sandbox Emporiki AE",
        "Odos Ermou 2, 105 63 Athina",
    ),
    (
        "ESB64717838",
        "Sandbox Proveedor SL",
        "Calle Mayor 1, 28013 Madrid",
    ),
    (
        "FR23334175221",
        "Sandbox Fournisseur SAS",
        "1 rue de Rivoli, 75001 Paris",
    ),
    (
        "HU12892312",
        "Sandbox Szállító Kft.",
        "Váci utca 1, 1052 Budapest",
    ),
    (
        "IT00743110157",
        "Sandbox Fornitore S.p.A.",
        "Via Roma 1, 20121 Milano",
    ),
    (
        "NL004495445B01",
        "Sandbox Leverancier B.V.",
        "Damrak 1, 1012 LG Amsterdam",
    ),
    (
        "PL8567346215",
        "Sandbox Dostawca Sp. z o.o.",
        "ul. Marszałkowska 1, 00-624 Warszawa",
    ),
    (
        "XI980780684",
        "Sandbox Supplier Ltd",
        "1 Donegall Square, Belfast BT1 5GS",
    ),
];

/// The sandbox answer for a number that passed the local checks: known companies are
/// valid, every other number is not registered.
pub fn lookup(vat: &str) -> RegisterAnswer {
    match COMPANIES.iter().find(|(n, _, _)| *n == vat) {
        Some((_, name, address)) => RegisterAnswer::Known {
            valid: true,
            name: Some((*name).to_string()),
            address: Some((*address).to_string()),
        },
        None => RegisterAnswer::Known {
            valid: false,
            name: None,
            address: None,
        },
    }
}

/// The VIES test service's codes (after the country code) and what they answer: `100`
/// valid, `200` not valid, the rest the VIES error they stand for.
pub const TEST_CODES: &[(&str, &str)] = &[
    ("100", "valid"),
    ("200", "not valid"),
    ("201", "INVALID_INPUT"),
    ("202", "INVALID_REQUESTER_INFO"),
    ("300", "SERVICE_UNAVAILABLE"),
    ("301", "MS_UNAVAILABLE"),
    ("302", "TIMEOUT"),
    ("400", "VAT_BLOCKED"),
    ("401", "IP_BLOCKED"),
    ("500", "GLOBAL_MAX_CONCURRENT_REQ"),
    ("501", "GLOBAL_MAX_CONCURRENT_REQ_TIME"),
    ("600", "MS_MAX_CONCURRENT_REQ"),
    ("601", "MS_MAX_CONCURRENT_REQ_TIME"),
];

/// The numbers of the VIES test service (`{country}100` valid, `200` invalid, `201`
/// INVALID_INPUT, `300`/`301`/`302` outages, `500`/`600` busy ...), so integrators can
/// exercise every answer, outages included, without a real register. These numbers fail
/// the local checks, so they are recognised before them.
pub fn test_number(vat: &str) -> Option<RegisterAnswer> {
    let code = vat.get(2..).filter(|c| c.len() == 3)?;
    if !vat.as_bytes()[..2].iter().all(u8::is_ascii_uppercase) {
        return None;
    }
    let known = |valid: bool| RegisterAnswer::Known {
        valid,
        name: valid.then(|| "Sandbox VIES test number".to_string()),
        address: valid.then(|| "---".to_string()),
    };
    let error = match code {
        "100" => return Some(known(true)),
        "200" => return Some(known(false)),
        _ => TEST_CODES
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, error)| *error)?,
    };
    Some(super::vies::classify(
        error,
        Some("sandbox VIES test number"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_numbers_pass_the_local_checks() {
        for (vat, _, _) in COMPANIES {
            assert!(crate::vat::local::check(vat).is_valid(), "{vat}");
        }
        let slovak = COMPANIES.iter().filter(|(v, _, _)| v.starts_with("SK"));
        assert!(slovak.count() >= 15);
    }

    #[test]
    fn vies_test_numbers_give_each_kind_of_answer() {
        assert!(matches!(
            test_number("SK100"),
            Some(RegisterAnswer::Known { valid: true, .. })
        ));
        assert!(matches!(
            test_number("DE200"),
            Some(RegisterAnswer::Known { valid: false, .. })
        ));
        assert!(matches!(
            test_number("SK201"),
            Some(RegisterAnswer::Rejected { .. })
        ));
        assert!(matches!(
            test_number("SK301"),
            Some(RegisterAnswer::Unavailable {
                retry_after_secs: 300,
                ..
            })
        ));
        assert!(matches!(
            test_number("SK600"),
            Some(RegisterAnswer::Unavailable {
                retry_after_secs: 1,
                ..
            })
        ));
        assert_eq!(test_number("SK999"), None);
        assert_eq!(test_number("SK2022749619"), None);
    }
}
