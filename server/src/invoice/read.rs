//! UBL Invoice or CreditNote → [`InvoiceView`].
//!
//! Values are kept as the document states them (trimmed text). Reading is lenient about
//! content (a missing or odd value is simply absent) and strict only about
//! well-formedness and the root element: what the business terms mean is the rules' to
//! judge.

use invex_engine::document::{Document, Limits};

use super::model::*;
use crate::xmltree::{self, Element};

/// UBL nests about a dozen levels; a document far deeper is hostile or broken.
const MAX_DEPTH: usize = 64;

/// Why a document has no business terms to read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("the invoice XML cannot be read: {0}")]
    Xml(invex_engine::document::ParseError),
    #[error("not a UBL Invoice or CreditNote: the root element is <{0}>")]
    NotUbl(String),
}

/// Reads the business terms of a UBL Invoice or CreditNote.
pub fn read(xml: &[u8]) -> Result<InvoiceView, ReadError> {
    let limits = Limits {
        max_depth: MAX_DEPTH,
        ..Limits::default()
    };
    let doc = Document::parse_with_limits(xml, &limits).map_err(ReadError::Xml)?;
    from_document(&doc)
}

/// The business terms of an already parsed document.
pub fn from_document(doc: &Document) -> Result<InvoiceView, ReadError> {
    from_tree(&xmltree::from_document(doc))
}

fn from_tree(root: &Element) -> Result<InvoiceView, ReadError> {
    let kind = match root.name.as_str() {
        "Invoice" => DocumentKind::Invoice,
        "CreditNote" => DocumentKind::CreditNote,
        other => return Err(ReadError::NotUbl(other.to_string())),
    };
    let (type_code, line_name, quantity_name) = match kind {
        DocumentKind::Invoice => ("InvoiceTypeCode", "InvoiceLine", "InvoicedQuantity"),
        DocumentKind::CreditNote => ("CreditNoteTypeCode", "CreditNoteLine", "CreditedQuantity"),
    };
    let currency = root.text_at("DocumentCurrencyCode");
    let (vat_total, vat_total_tax_currency) = vat_totals(root, currency.as_deref());
    Ok(InvoiceView {
        kind,
        customization_id: root.text_at("CustomizationID"),
        profile_id: root.text_at("ProfileID"),
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
        references: references(root, kind),
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
        // A credit note's due date may sit in an otherwise empty payment means.
        payment_means: root
            .children("PaymentMeans")
            .map(payment_means)
            .filter(|m| !m.is_empty())
            .collect(),
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
        description_code: el.text_at("DescriptionCode"),
    };
    (p != Period::default()).then_some(p)
}

fn references(root: &Element, kind: DocumentKind) -> References {
    let mut documents = Vec::new();
    // A credit note has no ProjectReference: Peppol carries BT-11 there as a document
    // reference of type 50.
    let mut project = root.text_at("ProjectReference/ID");
    for doc in root.children("AdditionalDocumentReference") {
        let Some(id) = doc.text_at("ID") else {
            continue;
        };
        let type_code = doc.text_at("DocumentTypeCode");
        if kind == DocumentKind::CreditNote
            && type_code.as_deref() == Some("50")
            && project.is_none()
        {
            project = Some(id);
            continue;
        }
        let binary = doc.at("Attachment/EmbeddedDocumentBinaryObject");
        documents.push(DocumentReference {
            id,
            scheme: doc
                .child("ID")
                .and_then(|i| i.attribute("schemeID"))
                .map(str::to_string),
            type_code,
            description: doc.text_at("DocumentDescription"),
            uri: doc.text_at("Attachment/ExternalReference/URI"),
            attachment: binary.map(|b| Attachment {
                // Base64 may be wrapped over lines; the content is the same without them.
                content: b
                    .text()
                    .unwrap_or_default()
                    .chars()
                    .filter(|c| !c.is_ascii_whitespace())
                    .collect(),
                mime_code: b.attribute("mimeCode").map(str::to_string),
                filename: b.attribute("filename").map(str::to_string),
            }),
        });
    }
    References {
        buyer_reference: root.text_at("BuyerReference"),
        order: root.text_at("OrderReference/ID"),
        sales_order: root.text_at("OrderReference/SalesOrderID"),
        contract: root.text_at("ContractDocumentReference/ID"),
        project,
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
    let card = el.child("CardAccount").map(|card| Card {
        number: card.text_at("PrimaryAccountNumberID").unwrap_or_default(),
        network: card.text_at("NetworkID"),
        holder: card.text_at("HolderName"),
    });
    PaymentMeans {
        code: code.and_then(Element::value),
        text: code.and_then(|c| c.attribute("name")).map(str::to_string),
        payment_id: el.text_at("PaymentID"),
        account_id: el.text_at("PayeeFinancialAccount/ID"),
        account_name: el.text_at("PayeeFinancialAccount/Name"),
        bic: el.text_at("PayeeFinancialAccount/FinancialInstitutionBranch/ID"),
        card: card.filter(|c| *c != Card::default()),
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
        object_id: el
            .children("DocumentReference")
            .find(|d| d.text_at("DocumentTypeCode").as_deref() == Some("130"))
            .and_then(|d| d.child("ID"))
            .and_then(identifier),
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
            .filter_map(|p| {
                Some(ItemProperty {
                    name: p.text_at("Name")?,
                    value: p.text_at("Value")?,
                })
            })
            .collect(),
        vat_category: item_text("ClassifiedTaxCategory/ID"),
        vat_rate: item_text("ClassifiedTaxCategory/Percent"),
        unit_price: price.and_then(|p| p.text_at("PriceAmount")),
        base_quantity: price.and_then(|p| p.text_at("BaseQuantity")),
        base_quantity_unit: price
            .and_then(|p| p.child("BaseQuantity"))
            .and_then(|q| q.attribute("unitCode"))
            .map(str::to_string),
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
) -> (Option<String>, Option<TaxCurrencyTotal>) {
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
            in_tax_currency = Some(TaxCurrencyTotal {
                amount,
                currency: amount_currency.unwrap_or_default().to_string(),
            });
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
