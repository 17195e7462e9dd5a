//! Draft → Peppol BIS Billing 3.0 UBL (Invoice or CreditNote).
//!
//! The writer prints what the draft holds and computes what EN 16931 defines as
//! computed: line net amounts when only quantity and price are known, the VAT breakdown
//! per category and rate (BR-CO-17: tax = taxable × rate, rounded per group) and the
//! document totals. Missing values are left out rather than invented, so validation
//! reports them and the review gate holds the draft.

use super::model::{DocumentKind, Draft, Field, Line, Party};
use crate::xmlwrite::Xml;
use rust_decimal::{Decimal, RoundingStrategy};
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub const CUSTOMIZATION_ID: &str =
    "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0";
pub const PROFILE_ID: &str = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0";

/// ICD of the Slovak IČO, used as schemeID of legal registration identifiers (BT-30/47).
const ICO_SCHEME: &str = "0158";

/// One computed VAT breakdown row (BG-23).
#[derive(Clone, Debug, PartialEq)]
pub struct VatGroup {
    pub category: String,
    pub rate: Option<Decimal>,
    pub taxable: Decimal,
    pub tax: Decimal,
}

/// What the writer computed, for cross-checks against the values the input stated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Computed {
    pub line_nets: Vec<Option<Decimal>>,
    pub vat: Vec<VatGroup>,
    pub line_total: Decimal,
    pub tax_total: Decimal,
    pub tax_inclusive: Decimal,
}

pub fn money(d: Decimal) -> Decimal {
    d.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

fn amount(d: Decimal) -> String {
    format!("{:.2}", money(d))
}

fn text<T: AsRef<str>>(f: &Option<Field<T>>) -> Option<&str> {
    f.as_ref()
        .map(|f| f.value.as_ref().trim())
        .filter(|s| !s.is_empty())
}

fn dec(f: &Option<Field<Decimal>>) -> Option<Decimal> {
    f.as_ref().map(|f| f.value)
}

/// The net amount of a line: as stated, else quantity × price.
pub fn line_net(line: &Line) -> Option<Decimal> {
    dec(&line.net_amount).or_else(|| Some(money(dec(&line.quantity)? * dec(&line.unit_price)?)))
}

/// VAT category of a line; `S` when only a positive rate is known, `Z` for rate 0 is not
/// assumed (0 % can be Z, E, AE, K, G or O), so such lines stay without a category.
fn line_category(line: &Line) -> Option<String> {
    text(&line.vat_category).map(|c| c.to_ascii_uppercase())
}

/// Compute line nets, the VAT breakdown and the totals from the draft's lines.
pub fn compute(draft: &Draft) -> Computed {
    let mut out = Computed::default();
    let mut groups: BTreeMap<(String, Option<Decimal>), Decimal> = BTreeMap::new();
    for line in &draft.lines {
        let net = line_net(line);
        out.line_nets.push(net);
        let Some(net) = net else { continue };
        out.line_total += net;
        let Some(category) = line_category(line) else {
            continue;
        };
        let rate = dec(&line.vat_rate).map(|r| r.normalize());
        *groups.entry((category, rate)).or_default() += net;
    }
    for ((category, rate), taxable) in groups {
        let tax = match rate {
            Some(r) => money(taxable * r / Decimal::ONE_HUNDRED),
            None => Decimal::ZERO,
        };
        out.tax_total += tax;
        out.vat.push(VatGroup {
            category,
            rate,
            taxable,
            tax,
        });
    }
    out.line_total = money(out.line_total);
    out.tax_inclusive = out.line_total + out.tax_total;
    out
}

/// Exemption reason codes that follow from the category alone (BT-121).
fn exemption_code(category: &str) -> Option<&'static str> {
    match category {
        "AE" => Some("VATEX-EU-AE"),
        "K" => Some("VATEX-EU-IC"),
        "G" => Some("VATEX-EU-G"),
        "O" => Some("VATEX-EU-O"),
        _ => None,
    }
}

fn money_leaf(x: &mut Xml, name: &str, currency: &str, value: Decimal) {
    x.leaf_attr(name, "currencyID", currency, &amount(value));
}

/// `scheme:value` → (scheme, value); a bare value has no scheme.
fn endpoint(party: &Party) -> Option<(Option<&str>, &str)> {
    let raw = text(&party.endpoint)?;
    Some(match raw.split_once(':') {
        Some((scheme, value))
            if scheme.len() == 4 && scheme.bytes().all(|b| b.is_ascii_digit()) =>
        {
            (Some(scheme), value.trim())
        }
        _ => (None, raw),
    })
}

fn party(x: &mut Xml, p: &Party, seller: bool) {
    x.open("cac:Party");
    if let Some((scheme, value)) = endpoint(p) {
        match scheme {
            Some(s) => x.leaf_attr("cbc:EndpointID", "schemeID", s, value),
            None => x.leaf("cbc:EndpointID", value),
        }
    }
    if let Some(name) = text(&p.name) {
        x.open("cac:PartyName");
        x.leaf("cbc:Name", name);
        x.close("cac:PartyName");
    }
    x.open("cac:PostalAddress");
    x.opt("cbc:StreetName", text(&p.address.street));
    x.opt("cbc:CityName", text(&p.address.city));
    x.opt("cbc:PostalZone", text(&p.address.postcode));
    x.open("cac:Country");
    // BR-09 / BR-11 need the country; an address without one is reported by validation.
    x.opt(
        "cbc:IdentificationCode",
        text(&p.address.country).map(str::trim),
    );
    x.close("cac:Country");
    x.close("cac:PostalAddress");
    if let Some(vat) = text(&p.vat_id) {
        x.open("cac:PartyTaxScheme");
        x.leaf("cbc:CompanyID", vat);
        x.open("cac:TaxScheme");
        x.leaf("cbc:ID", "VAT");
        x.close("cac:TaxScheme");
        x.close("cac:PartyTaxScheme");
    }
    // BT-32 exists for the seller only.
    if let (true, Some(dic)) = (seller, text(&p.dic)) {
        x.open("cac:PartyTaxScheme");
        x.leaf("cbc:CompanyID", dic);
        x.open("cac:TaxScheme");
        x.leaf("cbc:ID", "TAX");
        x.close("cac:TaxScheme");
        x.close("cac:PartyTaxScheme");
    }
    x.open("cac:PartyLegalEntity");
    x.opt("cbc:RegistrationName", text(&p.name));
    if let Some(ico) = text(&p.ico) {
        let slovak = ico.len() == 8 && invex_engine::checks::ico_sk(ico);
        if slovak {
            x.leaf_attr("cbc:CompanyID", "schemeID", ICO_SCHEME, ico);
        } else {
            x.leaf("cbc:CompanyID", ico);
        }
    }
    x.close("cac:PartyLegalEntity");
    if let Some(email) = text(&p.email) {
        x.open("cac:Contact");
        x.leaf("cbc:ElectronicMail", email);
        x.close("cac:Contact");
    }
    x.close("cac:Party");
}

fn tax_category(x: &mut Xml, element: &str, category: &str, rate: Option<Decimal>) {
    x.open(element);
    x.leaf("cbc:ID", category);
    // Category O carries no rate (BR-O-05/BR-O-10).
    if let (Some(r), false) = (rate, category == "O") {
        x.leaf("cbc:Percent", &r.normalize().to_string());
    }
    if element == "cac:TaxCategory" {
        if let Some(code) = exemption_code(category) {
            x.leaf("cbc:TaxExemptionReasonCode", code);
        }
    }
    x.open("cac:TaxScheme");
    x.leaf("cbc:ID", "VAT");
    x.close("cac:TaxScheme");
    x.close(element);
}

/// Write the draft as UBL. Never fails: what is missing is left for validation to report.
pub fn write(draft: &Draft) -> Vec<u8> {
    let computed = compute(draft);
    let credit = draft.kind == DocumentKind::CreditNote;
    let (root, ns, line_el, qty_el) = if credit {
        (
            "CreditNote",
            "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2",
            "cac:CreditNoteLine",
            "cbc:CreditedQuantity",
        )
    } else {
        (
            "Invoice",
            "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2",
            "cac:InvoiceLine",
            "cbc:InvoicedQuantity",
        )
    };
    let currency = text(&draft.currency).unwrap_or("EUR").to_ascii_uppercase();
    let mut x = Xml::with_capacity(4096 + draft.lines.len() * 600);
    x.0.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = write!(
        x.0,
        "<{root} xmlns=\"{ns}\" \
         xmlns:cac=\"urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2\" \
         xmlns:cbc=\"urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2\">"
    );
    x.leaf("cbc:CustomizationID", CUSTOMIZATION_ID);
    x.leaf("cbc:ProfileID", PROFILE_ID);
    x.opt("cbc:ID", text(&draft.number));
    let date = |f: &Option<Field<chrono::NaiveDate>>| {
        f.as_ref().map(|f| f.value.format("%Y-%m-%d").to_string())
    };
    x.opt("cbc:IssueDate", date(&draft.issue_date).as_deref());
    // UBL orders these differently in the two documents.
    if !credit {
        x.opt("cbc:DueDate", date(&draft.due_date).as_deref());
        x.leaf("cbc:InvoiceTypeCode", "380");
        x.opt("cbc:Note", text(&draft.note));
        x.opt("cbc:TaxPointDate", date(&draft.tax_point_date).as_deref());
    } else {
        x.opt("cbc:TaxPointDate", date(&draft.tax_point_date).as_deref());
        x.leaf("cbc:CreditNoteTypeCode", "381");
        x.opt("cbc:Note", text(&draft.note));
    }
    x.leaf("cbc:DocumentCurrencyCode", &currency);
    x.opt("cbc:BuyerReference", text(&draft.buyer_reference));
    if let Some(order) = text(&draft.order_reference) {
        x.open("cac:OrderReference");
        x.leaf("cbc:ID", order);
        x.close("cac:OrderReference");
    }
    if let Some(preceding) = text(&draft.preceding_invoice) {
        x.open("cac:BillingReference");
        x.open("cac:InvoiceDocumentReference");
        x.leaf("cbc:ID", preceding);
        x.close("cac:InvoiceDocumentReference");
        x.close("cac:BillingReference");
    }
    x.open("cac:AccountingSupplierParty");
    party(&mut x, &draft.seller, true);
    x.close("cac:AccountingSupplierParty");
    x.open("cac:AccountingCustomerParty");
    party(&mut x, &draft.buyer, false);
    x.close("cac:AccountingCustomerParty");

    let iban = text(&draft.payment.iban);
    let means = text(&draft.payment.means_code);
    let credit_due = if credit { date(&draft.due_date) } else { None };
    if iban.is_some() || means.is_some() || credit_due.is_some() {
        x.open("cac:PaymentMeans");
        // 30 (credit transfer) when only an account is known; 58 is SEPA-specific.
        x.leaf("cbc:PaymentMeansCode", means.unwrap_or("30"));
        x.opt("cbc:PaymentDueDate", credit_due.as_deref());
        x.opt("cbc:PaymentID", text(&draft.payment.reference));
        if let Some(iban) = iban {
            x.open("cac:PayeeFinancialAccount");
            x.leaf("cbc:ID", &iban.replace(' ', ""));
            if let Some(bic) = text(&draft.payment.bic) {
                x.open("cac:FinancialInstitutionBranch");
                x.leaf("cbc:ID", bic);
                x.close("cac:FinancialInstitutionBranch");
            }
            x.close("cac:PayeeFinancialAccount");
        }
        x.close("cac:PaymentMeans");
    }

    x.open("cac:TaxTotal");
    money_leaf(&mut x, "cbc:TaxAmount", &currency, computed.tax_total);
    for group in &computed.vat {
        x.open("cac:TaxSubtotal");
        money_leaf(&mut x, "cbc:TaxableAmount", &currency, group.taxable);
        money_leaf(&mut x, "cbc:TaxAmount", &currency, group.tax);
        tax_category(&mut x, "cac:TaxCategory", &group.category, group.rate);
        x.close("cac:TaxSubtotal");
    }
    x.close("cac:TaxTotal");

    x.open("cac:LegalMonetaryTotal");
    money_leaf(
        &mut x,
        "cbc:LineExtensionAmount",
        &currency,
        computed.line_total,
    );
    money_leaf(
        &mut x,
        "cbc:TaxExclusiveAmount",
        &currency,
        computed.line_total,
    );
    money_leaf(
        &mut x,
        "cbc:TaxInclusiveAmount",
        &currency,
        computed.tax_inclusive,
    );
    money_leaf(
        &mut x,
        "cbc:PayableAmount",
        &currency,
        computed.tax_inclusive,
    );
    x.close("cac:LegalMonetaryTotal");

    for (i, line) in draft.lines.iter().enumerate() {
        x.open(line_el);
        let id = text(&line.id)
            .map(str::to_string)
            .unwrap_or_else(|| (i + 1).to_string());
        x.leaf("cbc:ID", &id);
        if let Some(q) = dec(&line.quantity) {
            let unit = text(&line.unit).unwrap_or("C62");
            x.leaf_attr(qty_el, "unitCode", unit, &q.normalize().to_string());
        }
        if let Some(net) = computed.line_nets.get(i).copied().flatten() {
            money_leaf(&mut x, "cbc:LineExtensionAmount", &currency, net);
        }
        x.open("cac:Item");
        x.opt("cbc:Name", text(&line.name));
        if let Some(category) = line_category(line) {
            tax_category(
                &mut x,
                "cac:ClassifiedTaxCategory",
                &category,
                dec(&line.vat_rate),
            );
        }
        x.close("cac:Item");
        if let Some(price) = dec(&line.unit_price) {
            x.open("cac:Price");
            x.leaf_attr(
                "cbc:PriceAmount",
                "currencyID",
                &currency,
                &price.normalize().to_string(),
            );
            x.close("cac:Price");
        }
        x.close(line_el);
    }
    let _ = write!(x.0, "</{root}>");
    x.0.into_bytes()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::convert::model::Source;

    fn src() -> Source {
        Source::Cell {
            sheet: None,
            row: 2,
            column: "A".into(),
        }
    }

    /// A complete Slovak domestic invoice, as an extractor would produce it.
    pub(crate) fn slovak_draft() -> Draft {
        let mut d = Draft::default();
        for (path, value) in [
            ("number", "FV-2027-0001"),
            ("issue_date", "2027-01-15"),
            ("due_date", "2027-01-29"),
            ("currency", "EUR"),
            ("buyer_reference", "OBJ-77"),
            ("payment.means_code", "30"),
            ("payment.iban", "SK3112000000198742637541"),
            ("payment.reference", "20270001"),
            ("seller.name", "Dodávateľ s.r.o."),
            ("seller.ico", "31322832"),
            ("seller.dic", "2022749619"),
            ("seller.vat_id", "SK2022749619"),
            ("seller.endpoint", "0245:2022749619"),
            ("seller.address.street", "Hlavná 1"),
            ("seller.address.city", "Žilina"),
            ("seller.address.postcode", "01001"),
            ("seller.address.country", "SK"),
            ("buyer.name", "Odberateľ a.s."),
            ("buyer.vat_id", "SK2020317068"),
            ("buyer.endpoint", "0245:2020317068"),
            ("buyer.address.street", "Ľubovnianska 5"),
            ("buyer.address.city", "Bratislava"),
            ("buyer.address.postcode", "85101"),
            ("buyer.address.country", "SK"),
            ("lines[0].name", "Konzultácie"),
            ("lines[0].quantity", "10"),
            ("lines[0].unit", "HUR"),
            ("lines[0].unit_price", "45.50"),
            ("lines[0].vat_category", "S"),
            ("lines[0].vat_rate", "23"),
            ("lines[1].name", "Kniha"),
            ("lines[1].quantity", "3"),
            ("lines[1].unit_price", "12.99"),
            ("lines[1].vat_category", "S"),
            ("lines[1].vat_rate", "5"),
        ] {
            d.set(path, value, src()).unwrap();
        }
        d
    }

    #[test]
    fn computes_lines_vat_groups_and_totals() {
        let c = compute(&slovak_draft());
        assert_eq!(c.line_total, Decimal::new(49397, 2)); // 455.00 + 38.97
        assert_eq!(c.vat.len(), 2);
        let s23 = c
            .vat
            .iter()
            .find(|g| g.rate == Some(Decimal::from(23)))
            .unwrap();
        assert_eq!(s23.tax, Decimal::new(10465, 2));
        let s5 = c
            .vat
            .iter()
            .find(|g| g.rate == Some(Decimal::from(5)))
            .unwrap();
        assert_eq!(s5.tax, Decimal::new(195, 2)); // 1.9485 → 1.95
        assert_eq!(c.tax_inclusive, Decimal::new(60057, 2));
    }

    #[test]
    fn escapes_text_and_writes_a_credit_note() {
        let mut d = slovak_draft();
        d.kind = DocumentKind::CreditNote;
        d.set("preceding_invoice", "FV-2026-9", src()).unwrap();
        d.set("seller.name", "A & B <s.r.o.>", src()).unwrap();
        let xml = String::from_utf8(write(&d)).unwrap();
        assert!(xml.contains("<cbc:Name>A &amp; B &lt;s.r.o.&gt;</cbc:Name>"));
        assert!(xml.contains("<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>"));
        assert!(xml.contains("<cac:CreditNoteLine>"));
        assert!(xml.contains("<cbc:PaymentDueDate>2027-01-29</cbc:PaymentDueDate>"));
        assert!(!xml.contains("<cbc:DueDate>"));
    }

    #[test]
    fn a_credit_note_states_its_tax_point_date_before_its_type_code_as_ubl_orders_it() {
        let mut d = slovak_draft();
        d.kind = DocumentKind::CreditNote;
        d.set("tax_point_date", "2027-01-10", src()).unwrap();
        let xml = String::from_utf8(write(&d)).unwrap();
        let tax_point = xml.find("<cbc:TaxPointDate>").unwrap();
        assert!(tax_point < xml.find("<cbc:CreditNoteTypeCode>").unwrap());
        let mut d = slovak_draft();
        d.set("tax_point_date", "2027-01-10", src()).unwrap();
        let xml = String::from_utf8(write(&d)).unwrap();
        let tax_point = xml.find("<cbc:TaxPointDate>").unwrap();
        assert!(tax_point > xml.find("<cbc:InvoiceTypeCode>").unwrap());
    }

    /// The shipped rule packs, compiled once for all conversion tests.
    pub(crate) fn catalog() -> &'static invex_engine::registry::Catalog {
        static CATALOG: std::sync::OnceLock<invex_engine::registry::Catalog> =
            std::sync::OnceLock::new();
        CATALOG.get_or_init(|| {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../rulepacks");
            invex_engine::registry::Catalog::load(&dir).unwrap()
        })
    }

    /// Fatal findings of `xml` under `profile`, as `rule_id: message`.
    pub(crate) fn fatals(xml: &[u8], profile: &str) -> Vec<String> {
        let doc = invex_engine::document::Document::parse(xml).unwrap();
        let report = catalog().ruleset(profile).unwrap().validate(&doc);
        report
            .findings
            .iter()
            .filter(|f| f.severity == invex_engine::report::Severity::Fatal)
            .map(|f| format!("{}: {}", f.rule_id, f.message))
            .collect()
    }

    #[test]
    fn a_complete_draft_is_valid_under_every_peppol_profile() {
        let xml = write(&slovak_draft());
        for profile in ["peppol-bis3", "peppol-bis3-sk", "peppol-bis3-sk-strict"] {
            assert_eq!(fatals(&xml, profile), Vec::<String>::new(), "{profile}");
        }
        let mut credit = slovak_draft();
        credit.kind = DocumentKind::CreditNote;
        credit.set("preceding_invoice", "FV-2026-9", src()).unwrap();
        assert_eq!(
            fatals(&write(&credit), "peppol-bis3-sk"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn reverse_charge_and_zero_rated_lines_get_their_exemption_codes() {
        let mut d = slovak_draft();
        d.set("lines[1].vat_category", "AE", src()).unwrap();
        d.set("lines[1].vat_rate", "0", src()).unwrap();
        let xml = write(&d);
        assert!(String::from_utf8_lossy(&xml).contains("VATEX-EU-AE"));
        assert_eq!(fatals(&xml, "peppol-bis3"), Vec::<String>::new());
    }

    #[test]
    fn a_draft_without_number_and_buyer_is_written_and_the_gaps_are_reported() {
        let mut d = slovak_draft();
        d.number = None;
        d.buyer = Party::default();
        let fatal = fatals(&write(&d), "peppol-bis3");
        assert!(fatal.iter().any(|f| f.starts_with("BR-02")), "{fatal:?}");
        assert!(fatal.iter().any(|f| f.starts_with("BR-07")), "{fatal:?}");
    }
}
