//! What the PDF rendition prints, read from a Peppol BIS 3.0 UBL Invoice or CreditNote.
//!
//! Values are kept as the document states them (trimmed text); formatting is the layout's
//! business. Reading is lenient about content (a missing or odd value is simply not
//! printed) and strict only about well-formedness and the root element, since the input has
//! normally passed validation already.

use invex_engine::document::{Document, Limits};

use super::RenderError;
use crate::xmltree::{self, Element};

/// UBL nests about a dozen levels; a document far deeper is hostile or broken.
const MAX_DEPTH: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocumentKind {
    Invoice,
    CreditNote,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InvoiceView {
    pub kind: DocumentKind,
    /// BT-1
    pub number: Option<String>,
    /// BT-3
    pub type_code: Option<String>,
    /// BT-2
    pub issue_date: Option<String>,
    /// BT-9 (for credit notes it sits in the payment means)
    pub due_date: Option<String>,
    /// BT-7
    pub tax_point_date: Option<String>,
    /// BT-5
    pub currency: Option<String>,
    /// BT-6
    pub tax_currency: Option<String>,
    /// BG-14
    pub period: Option<Period>,
    /// BT-22 (UBL allows several)
    pub notes: Vec<String>,
    pub references: References,
    pub seller: Party,
    pub buyer: Party,
    /// BG-10
    pub payee: Option<Party>,
    /// BG-11
    pub tax_representative: Option<Party>,
    pub delivery: Option<Delivery>,
    pub payment_means: Vec<PaymentMeans>,
    /// BT-20
    pub payment_terms: Option<String>,
    /// BG-20 / BG-21
    pub allowances_charges: Vec<AllowanceCharge>,
    pub lines: Vec<Line>,
    /// BG-23
    pub vat_breakdown: Vec<VatSubtotal>,
    /// BT-110
    pub vat_total: Option<String>,
    /// BT-111, with its currency
    pub vat_total_tax_currency: Option<(String, String)>,
    pub totals: Totals,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Period {
    pub start: Option<String>,
    pub end: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct References {
    /// BT-10
    pub buyer_reference: Option<String>,
    /// BT-13
    pub order: Option<String>,
    /// BT-14
    pub sales_order: Option<String>,
    /// BT-12
    pub contract: Option<String>,
    /// BT-11
    pub project: Option<String>,
    /// BT-16
    pub despatch_advice: Option<String>,
    /// BT-15
    pub receiving_advice: Option<String>,
    /// BT-17
    pub tender: Option<String>,
    /// BT-19
    pub accounting_cost: Option<String>,
    /// BG-3
    pub preceding_invoices: Vec<PrecedingInvoice>,
    /// BG-24 and BT-18 (type code 130)
    pub documents: Vec<DocumentReference>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct PrecedingInvoice {
    pub id: String,
    pub issue_date: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DocumentReference {
    pub id: String,
    pub type_code: Option<String>,
    pub description: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Party {
    /// BT-27 / BT-44 (registration name), falling back to the trading name.
    pub name: Option<String>,
    /// BT-28 / BT-45 when it differs from the registration name.
    pub trading_name: Option<String>,
    /// BT-29 / BT-46, with scheme.
    pub identifiers: Vec<Identifier>,
    /// BT-30 / BT-47 (IČO for Slovak parties).
    pub legal_id: Option<Identifier>,
    /// BT-33
    pub legal_form: Option<String>,
    /// BT-31 / BT-48 (IČ DPH).
    pub vat_id: Option<String>,
    /// BT-32 (DIČ).
    pub tax_id: Option<String>,
    /// BT-34 / BT-49
    pub endpoint: Option<Identifier>,
    pub address: Address,
    pub contact: Contact,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Identifier {
    pub scheme: Option<String>,
    pub value: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Address {
    pub street: Option<String>,
    pub additional_street: Option<String>,
    pub line: Option<String>,
    pub city: Option<String>,
    pub postcode: Option<String>,
    pub subdivision: Option<String>,
    pub country: Option<String>,
}

impl Address {
    pub fn is_empty(&self) -> bool {
        *self == Address::default()
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contact {
    pub name: Option<String>,
    pub phone: Option<String>,
    pub email: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Delivery {
    /// BT-72
    pub date: Option<String>,
    /// BT-70
    pub party_name: Option<String>,
    /// BT-71
    pub location_id: Option<Identifier>,
    pub address: Address,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct PaymentMeans {
    /// BT-81
    pub code: Option<String>,
    /// BT-82
    pub text: Option<String>,
    /// BT-83
    pub payment_id: Option<String>,
    /// BT-84
    pub account_id: Option<String>,
    /// BT-85
    pub account_name: Option<String>,
    /// BT-86
    pub bic: Option<String>,
    /// BT-87 / BT-88
    pub card: Option<String>,
    /// BT-89
    pub mandate: Option<String>,
    /// BT-91
    pub debited_account: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct AllowanceCharge {
    pub is_charge: bool,
    pub amount: Option<String>,
    pub base_amount: Option<String>,
    pub percent: Option<String>,
    pub reason: Option<String>,
    pub reason_code: Option<String>,
    pub vat_category: Option<String>,
    pub vat_rate: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Line {
    /// BT-126
    pub id: Option<String>,
    /// BT-127
    pub note: Option<String>,
    /// BT-129
    pub quantity: Option<String>,
    /// BT-130
    pub unit: Option<String>,
    /// BT-131 (net of line allowances and charges)
    pub net_amount: Option<String>,
    /// BT-133
    pub accounting_cost: Option<String>,
    /// BT-132
    pub order_line: Option<String>,
    pub period: Option<Period>,
    /// BT-153
    pub name: Option<String>,
    /// BT-154
    pub description: Option<String>,
    /// BT-155
    pub seller_item_id: Option<String>,
    /// BT-156
    pub buyer_item_id: Option<String>,
    /// BT-157
    pub standard_item_id: Option<Identifier>,
    /// BT-158
    pub classifications: Vec<Identifier>,
    /// BT-159
    pub origin_country: Option<String>,
    /// BT-160 / BT-161
    pub properties: Vec<(String, String)>,
    /// BT-151
    pub vat_category: Option<String>,
    /// BT-152
    pub vat_rate: Option<String>,
    /// BT-146
    pub unit_price: Option<String>,
    /// BT-149
    pub base_quantity: Option<String>,
    /// BT-148
    pub gross_price: Option<String>,
    /// BT-147
    pub price_discount: Option<String>,
    /// BG-27 / BG-28
    pub allowances_charges: Vec<AllowanceCharge>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct VatSubtotal {
    /// BT-118
    pub category: Option<String>,
    /// BT-119
    pub rate: Option<String>,
    /// BT-116
    pub taxable: Option<String>,
    /// BT-117
    pub tax: Option<String>,
    /// BT-121
    pub exemption_code: Option<String>,
    /// BT-120
    pub exemption_reason: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    /// BT-106
    pub line_total: Option<String>,
    /// BT-107
    pub allowance_total: Option<String>,
    /// BT-108
    pub charge_total: Option<String>,
    /// BT-109
    pub tax_exclusive: Option<String>,
    /// BT-112
    pub tax_inclusive: Option<String>,
    /// BT-113
    pub prepaid: Option<String>,
    /// BT-114
    pub rounding: Option<String>,
    /// BT-115
    pub payable: Option<String>,
}

/// Reads the printed business terms of a UBL Invoice or CreditNote.
pub fn read(xml: &[u8]) -> Result<InvoiceView, RenderError> {
    let limits = Limits {
        max_depth: MAX_DEPTH,
        ..Limits::default()
    };
    let doc = Document::parse_with_limits(xml, &limits).map_err(RenderError::Xml)?;
    from_document(&doc)
}

/// The business terms of an already parsed document.
pub fn from_document(doc: &Document) -> Result<InvoiceView, RenderError> {
    from_tree(&xmltree::from_document(doc))
}

fn from_tree(root: &Element) -> Result<InvoiceView, RenderError> {
    let kind = match root.name.as_str() {
        "Invoice" => DocumentKind::Invoice,
        "CreditNote" => DocumentKind::CreditNote,
        other => return Err(RenderError::NotUbl(other.to_string())),
    };
    let (type_code, line_name, quantity_name) = match kind {
        DocumentKind::Invoice => ("InvoiceTypeCode", "InvoiceLine", "InvoicedQuantity"),
        DocumentKind::CreditNote => ("CreditNoteTypeCode", "CreditNoteLine", "CreditedQuantity"),
    };
    let currency = root.text_at("DocumentCurrencyCode");
    let (vat_total, vat_total_tax_currency) = vat_totals(root, currency.as_deref());
    Ok(InvoiceView {
        kind,
        number: root.text_at("ID"),
        type_code: root.text_at(type_code),
        issue_date: root.text_at("IssueDate"),
        due_date: root
            .text_at("DueDate")
            .or_else(|| root.text_at("PaymentMeans/PaymentDueDate")),
        tax_point_date: root.text_at("TaxPointDate"),
        tax_currency: root.text_at("TaxCurrencyCode"),
        currency,
        period: root.child("InvoicePeriod").and_then(period),
        notes: root.children("Note").filter_map(Element::value).collect(),
        references: references(root),
        seller: root
            .at("AccountingSupplierParty/Party")
            .map(party)
            .unwrap_or_default(),
        buyer: root
            .at("AccountingCustomerParty/Party")
            .map(party)
            .unwrap_or_default(),
        payee: root.child("PayeeParty").map(party),
        tax_representative: root.child("TaxRepresentativeParty").map(party),
        delivery: root.child("Delivery").map(delivery),
        payment_means: root.children("PaymentMeans").map(payment_means).collect(),
        payment_terms: root.text_at("PaymentTerms/Note"),
        allowances_charges: root
            .children("AllowanceCharge")
            .map(allowance_charge)
            .collect(),
        lines: root
            .children(line_name)
            .map(|l| line(l, quantity_name))
            .collect(),
        vat_breakdown: root
            .all("TaxTotal/TaxSubtotal")
            .into_iter()
            .map(vat_subtotal)
            .collect(),
        vat_total,
        vat_total_tax_currency,
        totals: totals(root),
    })
}

fn period(el: &Element) -> Option<Period> {
    let p = Period {
        start: el.text_at("StartDate"),
        end: el.text_at("EndDate"),
    };
    (p != Period::default()).then_some(p)
}

fn references(root: &Element) -> References {
    let mut documents = Vec::new();
    for doc in root.children("AdditionalDocumentReference") {
        if let Some(id) = doc.text_at("ID") {
            documents.push(DocumentReference {
                id,
                type_code: doc.text_at("DocumentTypeCode"),
                description: doc.text_at("DocumentDescription"),
            });
        }
    }
    References {
        buyer_reference: root.text_at("BuyerReference"),
        order: root.text_at("OrderReference/ID"),
        sales_order: root.text_at("OrderReference/SalesOrderID"),
        contract: root.text_at("ContractDocumentReference/ID"),
        project: root.text_at("ProjectReference/ID"),
        despatch_advice: root.text_at("DespatchDocumentReference/ID"),
        receiving_advice: root.text_at("ReceiptDocumentReference/ID"),
        tender: root.text_at("OriginatorDocumentReference/ID"),
        accounting_cost: root.text_at("AccountingCost"),
        preceding_invoices: root
            .all("BillingReference/InvoiceDocumentReference")
            .into_iter()
            .filter_map(|r| {
                Some(PrecedingInvoice {
                    id: r.text_at("ID")?,
                    issue_date: r.text_at("IssueDate"),
                })
            })
            .collect(),
        documents,
    }
}

fn identifier(el: &Element) -> Option<Identifier> {
    Some(Identifier {
        scheme: el.attribute("schemeID").map(str::to_string),
        value: el.value()?,
    })
}

fn party(el: &Element) -> Party {
    let registration = el.text_at("PartyLegalEntity/RegistrationName");
    let trading = el.text_at("PartyName/Name");
    let (name, trading_name) = match (registration, trading) {
        (Some(r), Some(t)) if r != t => (Some(r), Some(t)),
        (Some(r), _) => (Some(r), None),
        (None, t) => (t, None),
    };
    let mut vat_id = None;
    let mut tax_id = None;
    for scheme in el.children("PartyTaxScheme") {
        let is_vat = scheme
            .text_at("TaxScheme/ID")
            .is_some_and(|id| id.eq_ignore_ascii_case("VAT"));
        let slot = if is_vat { &mut vat_id } else { &mut tax_id };
        if slot.is_none() {
            *slot = scheme.text_at("CompanyID");
        }
    }
    Party {
        name,
        trading_name,
        identifiers: el
            .all("PartyIdentification/ID")
            .into_iter()
            .filter_map(identifier)
            .collect(),
        legal_id: el.at("PartyLegalEntity/CompanyID").and_then(identifier),
        legal_form: el.text_at("PartyLegalEntity/CompanyLegalForm"),
        vat_id,
        tax_id,
        endpoint: el.child("EndpointID").and_then(identifier),
        address: el.child("PostalAddress").map(address).unwrap_or_default(),
        contact: Contact {
            name: el.text_at("Contact/Name"),
            phone: el.text_at("Contact/Telephone"),
            email: el.text_at("Contact/ElectronicMail"),
        },
    }
}

fn address(el: &Element) -> Address {
    Address {
        street: el.text_at("StreetName"),
        additional_street: el.text_at("AdditionalStreetName"),
        line: el.text_at("AddressLine/Line"),
        city: el.text_at("CityName"),
        postcode: el.text_at("PostalZone"),
        subdivision: el.text_at("CountrySubentity"),
        country: el.text_at("Country/IdentificationCode"),
    }
}

fn delivery(el: &Element) -> Delivery {
    Delivery {
        date: el.text_at("ActualDeliveryDate"),
        party_name: el.text_at("DeliveryParty/PartyName/Name"),
        location_id: el.at("DeliveryLocation/ID").and_then(identifier),
        address: el
            .at("DeliveryLocation/Address")
            .map(address)
            .unwrap_or_default(),
    }
}

fn payment_means(el: &Element) -> PaymentMeans {
    let code = el.child("PaymentMeansCode");
    let card = el.child("CardAccount").map(|card| {
        let number = card.text_at("PrimaryAccountNumberID").unwrap_or_default();
        match card.text_at("NetworkID") {
            Some(network) => format!("{number} ({network})"),
            None => number,
        }
    });
    PaymentMeans {
        code: code.and_then(Element::value),
        text: code.and_then(|c| c.attribute("name")).map(str::to_string),
        payment_id: el.text_at("PaymentID"),
        account_id: el.text_at("PayeeFinancialAccount/ID"),
        account_name: el.text_at("PayeeFinancialAccount/Name"),
        bic: el.text_at("PayeeFinancialAccount/FinancialInstitutionBranch/ID"),
        card: card.filter(|c| !c.is_empty()),
        mandate: el.text_at("PaymentMandate/ID"),
        debited_account: el.text_at("PaymentMandate/PayerFinancialAccount/ID"),
    }
}

fn allowance_charge(el: &Element) -> AllowanceCharge {
    AllowanceCharge {
        is_charge: el
            .text_at("ChargeIndicator")
            .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        amount: el.text_at("Amount"),
        base_amount: el.text_at("BaseAmount"),
        percent: el.text_at("MultiplierFactorNumeric"),
        reason: el.text_at("AllowanceChargeReason"),
        reason_code: el.text_at("AllowanceChargeReasonCode"),
        vat_category: el.text_at("TaxCategory/ID"),
        vat_rate: el.text_at("TaxCategory/Percent"),
    }
}

fn line(el: &Element, quantity_name: &str) -> Line {
    let item = el.child("Item");
    let item_text = |path: &str| item.and_then(|i| i.text_at(path));
    let price = el.child("Price");
    let price_ac = price.and_then(|p| p.child("AllowanceCharge"));
    Line {
        id: el.text_at("ID"),
        note: el.text_at("Note"),
        quantity: el.text_at(quantity_name),
        unit: el
            .child(quantity_name)
            .and_then(|q| q.attribute("unitCode"))
            .map(str::to_string),
        net_amount: el.text_at("LineExtensionAmount"),
        accounting_cost: el.text_at("AccountingCost"),
        order_line: el.text_at("OrderLineReference/LineID"),
        period: el.child("InvoicePeriod").and_then(period),
        name: item_text("Name"),
        description: item_text("Description"),
        seller_item_id: item_text("SellersItemIdentification/ID"),
        buyer_item_id: item_text("BuyersItemIdentification/ID"),
        standard_item_id: item
            .and_then(|i| i.at("StandardItemIdentification/ID"))
            .and_then(identifier),
        classifications: item
            .map(|i| i.all("CommodityClassification/ItemClassificationCode"))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|c| {
                Some(Identifier {
                    scheme: c.attribute("listID").map(str::to_string),
                    value: c.value()?,
                })
            })
            .collect(),
        origin_country: item_text("OriginCountry/IdentificationCode"),
        properties: item
            .map(|i| i.all("AdditionalItemProperty"))
            .unwrap_or_default()
            .into_iter()
            .filter_map(|p| Some((p.text_at("Name")?, p.text_at("Value")?)))
            .collect(),
        vat_category: item_text("ClassifiedTaxCategory/ID"),
        vat_rate: item_text("ClassifiedTaxCategory/Percent"),
        unit_price: price.and_then(|p| p.text_at("PriceAmount")),
        base_quantity: price.and_then(|p| p.text_at("BaseQuantity")),
        gross_price: price_ac.and_then(|a| a.text_at("BaseAmount")),
        price_discount: price_ac.and_then(|a| a.text_at("Amount")),
        allowances_charges: el
            .children("AllowanceCharge")
            .map(allowance_charge)
            .collect(),
    }
}

fn vat_subtotal(el: &Element) -> VatSubtotal {
    VatSubtotal {
        category: el.text_at("TaxCategory/ID"),
        rate: el.text_at("TaxCategory/Percent"),
        taxable: el.text_at("TaxableAmount"),
        tax: el.text_at("TaxAmount"),
        exemption_code: el.text_at("TaxCategory/TaxExemptionReasonCode"),
        exemption_reason: el.text_at("TaxCategory/TaxExemptionReason"),
    }
}

/// BT-110 is the tax total in the document currency; a second one in the tax currency is
/// BT-111. They are told apart by `currencyID`, falling back to order.
fn vat_totals(
    root: &Element,
    currency: Option<&str>,
) -> (Option<String>, Option<(String, String)>) {
    let mut in_document = None;
    let mut in_tax_currency = None;
    for total in root.children("TaxTotal") {
        let Some(amount_el) = total.child("TaxAmount") else {
            continue;
        };
        let Some(amount) = amount_el.value() else {
            continue;
        };
        let amount_currency = amount_el.attribute("currencyID");
        let is_document = match (amount_currency, currency) {
            (Some(a), Some(c)) => a == c,
            _ => in_document.is_none(),
        };
        if is_document && in_document.is_none() {
            in_document = Some(amount);
        } else if in_tax_currency.is_none() {
            in_tax_currency = Some((amount, amount_currency.unwrap_or_default().to_string()));
        }
    }
    (in_document, in_tax_currency)
}

fn totals(root: &Element) -> Totals {
    let t = |name: &str| root.text_at(&format!("LegalMonetaryTotal/{name}"));
    Totals {
        line_total: t("LineExtensionAmount"),
        allowance_total: t("AllowanceTotalAmount"),
        charge_total: t("ChargeTotalAmount"),
        tax_exclusive: t("TaxExclusiveAmount"),
        tax_inclusive: t("TaxInclusiveAmount"),
        prepaid: t("PrepaidAmount"),
        rounding: t("PayableRoundingAmount"),
        payable: t("PayableAmount"),
    }
}
