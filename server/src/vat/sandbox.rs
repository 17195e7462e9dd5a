//! The sandbox register: a few companies answered locally, marked as sandbox data.

use super::RegisterAnswer;

/// (VAT number, name, address). Check digits are real; the companies are fictitious.
const COMPANIES: &[(&str, &str, &str)] = &[
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
        "CZ25123891",
        "Sandbox Dodavatel s.r.o.",
        "Na Příkopě 1, 110 00 Praha",
    ),
    (
        "DE129273398",
        "Sandbox Lieferant GmbH",
        "Hauptstraße 1, 10115 Berlin",
    ),
    ("ATU13585627", "Sandbox Händler GmbH", "Ring 3, 1010 Wien"),
];

/// The sandbox answer: known companies are valid, every other well-formed number is not
/// registered.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_numbers_pass_the_local_checks() {
        for (vat, _, _) in COMPANIES {
            assert!(crate::vat::local::check(vat).is_valid(), "{vat}");
        }
    }
}
