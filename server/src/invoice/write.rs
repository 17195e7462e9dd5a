//! [`InvoiceView`] → Peppol BIS Billing 3.0 UBL, in the element order of the UBL 2.1
//! schemas (which differs between Invoice and CreditNote in a few places).
//!
//! The writer states what the view holds and nothing more: it computes no totals and fills
//! in no defaults beyond the document's identity (specification and process identifiers,
//! the type code). What is missing or inconsistent is the rules' to report. Reading the
//! written XML gives the view back ([`super::read`]); the tests hold the two to that.

use super::model::*;
use crate::xmlwrite::Xml;

/// BT-24 when the view names none: Peppol BIS Billing 3.0.
pub const CUSTOMIZATION_ID: &str =
    "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0";
/// BT-23 when the view names none: the Peppol billing process.
pub const PROFILE_ID: &str = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0";

const INVOICE_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2";
const CREDIT_NOTE_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2";
const CAC_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2";
const CBC_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2";

/// The invoice as UBL.
pub fn write(v: &InvoiceView) -> Vec<u8> {
    let credit = v.kind == DocumentKind::CreditNote;
    let (root, ns, type_el, default_type) = if credit {
        (
            "CreditNote",
            CREDIT_NOTE_NS,
            "cbc:CreditNoteTypeCode",
            "381",
        )
    } else {
        ("Invoice", INVOICE_NS, "cbc:InvoiceTypeCode", "380")
    };
    let w = &mut Writer {
        x: Xml::with_capacity(4096 + v.lines.len() * 1024),
        currency: v.currency.as_deref(),
    };
    w.x.0
        .push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    w.x.0.push_str(&format!(
        "<{root} xmlns=\"{ns}\" xmlns:cac=\"{CAC_NS}\" xmlns:cbc=\"{CBC_NS}\">"
    ));
    let x = &mut w.x;
    x.leaf(
        "cbc:CustomizationID",
        v.customization_id.as_deref().unwrap_or(CUSTOMIZATION_ID),
    );
    x.leaf(
        "cbc:ProfileID",
        v.profile_id.as_deref().unwrap_or(PROFILE_ID),
    );
    x.opt("cbc:ID", v.number.as_deref());
    x.opt("cbc:IssueDate", v.issue_date.as_deref());
    let type_code = v.type_code.as_deref().unwrap_or(default_type);
    if credit {
        x.opt("cbc:TaxPointDate", v.tax_point_date.as_deref());
        x.leaf(type_el, type_code);
        for note in &v.notes {
            x.leaf("cbc:Note", note);
        }
    } else {
        x.opt("cbc:DueDate", v.due_date.as_deref());
        x.leaf(type_el, type_code);
        for note in &v.notes {
            x.leaf("cbc:Note", note);
        }
        x.opt("cbc:TaxPointDate", v.tax_point_date.as_deref());
    }
    x.opt("cbc:DocumentCurrencyCode", v.currency.as_deref());
    x.opt("cbc:TaxCurrencyCode", v.tax_currency.as_deref());
    let r = &v.references;
    x.opt("cbc:AccountingCost", r.accounting_cost.as_deref());
    x.opt("cbc:BuyerReference", r.buyer_reference.as_deref());
    if let Some(p) = &v.period {
        period(x, p);
    }
    if r.order.is_some() || r.sales_order.is_some() {
        x.open("cac:OrderReference");
        // The order's ID is mandatory in UBL: a sales order reference alone goes with
        // `NA`, as Peppol BIS 3.0 prescribes.
        x.leaf("cbc:ID", r.order.as_deref().unwrap_or("NA"));
        x.opt("cbc:SalesOrderID", r.sales_order.as_deref());
        x.close("cac:OrderReference");
    }
    for p in &r.preceding_invoices {
        x.open("cac:BillingReference");
        x.open("cac:InvoiceDocumentReference");
        x.leaf("cbc:ID", &p.id);
        x.opt("cbc:IssueDate", p.issue_date.as_deref());
        x.close("cac:InvoiceDocumentReference");
        x.close("cac:BillingReference");
    }
    id_reference(
        x,
        "cac:DespatchDocumentReference",
        r.despatch_advice.as_deref(),
    );
    id_reference(
        x,
        "cac:ReceiptDocumentReference",
        r.receiving_advice.as_deref(),
    );
    if credit {
        id_reference(x, "cac:ContractDocumentReference", r.contract.as_deref());
        // A credit note has no ProjectReference: BT-11 is a document reference of type 50.
        if let Some(project) = &r.project {
            x.open("cac:AdditionalDocumentReference");
            x.leaf("cbc:ID", project);
            x.leaf("cbc:DocumentTypeCode", "50");
            x.close("cac:AdditionalDocumentReference");
        }
        for d in &r.documents {
            document(x, d);
        }
        id_reference(x, "cac:OriginatorDocumentReference", r.tender.as_deref());
    } else {
        id_reference(x, "cac:OriginatorDocumentReference", r.tender.as_deref());
        id_reference(x, "cac:ContractDocumentReference", r.contract.as_deref());
        for d in &r.documents {
            document(x, d);
        }
        id_reference(x, "cac:ProjectReference", r.project.as_deref());
    }
    x.open("cac:AccountingSupplierParty");
    party(x, "cac:Party", &v.seller, Role::Seller);
    x.close("cac:AccountingSupplierParty");
    x.open("cac:AccountingCustomerParty");
    party(x, "cac:Party", &v.buyer, Role::Buyer);
    x.close("cac:AccountingCustomerParty");
    // These two are parties themselves, not wrappers of one.
    if let Some(p) = &v.payee {
        party(x, "cac:PayeeParty", p, Role::Payee);
    }
    if let Some(p) = &v.tax_representative {
        party(x, "cac:TaxRepresentativeParty", p, Role::TaxRepresentative);
    }
    if let Some(d) = &v.delivery {
        delivery(x, d);
    }
    // A credit note carries its due date in the (first) payment means.
    let credit_due = if credit { v.due_date.as_deref() } else { None };
    if v.payment_means.is_empty() && credit_due.is_some() {
        x.open("cac:PaymentMeans");
        x.opt("cbc:PaymentDueDate", credit_due);
        x.close("cac:PaymentMeans");
    }
    for (i, m) in v.payment_means.iter().enumerate() {
        payment_means(x, m, credit_due.filter(|_| i == 0));
    }
    if let Some(terms) = &v.payment_terms {
        x.open("cac:PaymentTerms");
        x.leaf("cbc:Note", terms);
        x.close("cac:PaymentTerms");
    }
    for ac in &v.allowances_charges {
        w.allowance_charge(ac, true);
    }
    w.tax_totals(v);
    w.totals(&v.totals);
    for l in &v.lines {
        w.line(l, credit);
    }
    w.x.0.push_str(&format!("</{root}>"));
    std::mem::take(&mut w.x.0).into_bytes()
}

struct Writer<'a> {
    x: Xml,
    /// BT-5: the `currencyID` of every amount but BT-111.
    currency: Option<&'a str>,
}

impl Writer<'_> {
    fn amount(&mut self, name: &str, value: Option<&str>) {
        if let Some(v) = value {
            self.x.leaf_attrs(name, &[("currencyID", self.currency)], v);
        }
    }

    fn allowance_charge(&mut self, ac: &AllowanceCharge, document_level: bool) {
        let x = &mut self.x;
        x.open("cac:AllowanceCharge");
        x.leaf(
            "cbc:ChargeIndicator",
            if ac.is_charge { "true" } else { "false" },
        );
        x.opt("cbc:AllowanceChargeReasonCode", ac.reason_code.as_deref());
        x.opt("cbc:AllowanceChargeReason", ac.reason.as_deref());
        x.opt("cbc:MultiplierFactorNumeric", ac.percent.as_deref());
        self.amount("cbc:Amount", ac.amount.as_deref());
        self.amount("cbc:BaseAmount", ac.base_amount.as_deref());
        if document_level && (ac.vat_category.is_some() || ac.vat_rate.is_some()) {
            tax_category(
                &mut self.x,
                "cac:TaxCategory",
                ac.vat_category.as_deref(),
                ac.vat_rate.as_deref(),
                None,
            );
        }
        self.x.close("cac:AllowanceCharge");
    }

    fn tax_totals(&mut self, v: &InvoiceView) {
        if v.vat_total.is_some() || !v.vat_breakdown.is_empty() {
            self.x.open("cac:TaxTotal");
            self.amount("cbc:TaxAmount", v.vat_total.as_deref());
            for s in &v.vat_breakdown {
                self.x.open("cac:TaxSubtotal");
                self.amount("cbc:TaxableAmount", s.taxable.as_deref());
                self.amount("cbc:TaxAmount", s.tax.as_deref());
                tax_category(
                    &mut self.x,
                    "cac:TaxCategory",
                    s.category.as_deref(),
                    s.rate.as_deref(),
                    Some(s),
                );
                self.x.close("cac:TaxSubtotal");
            }
            self.x.close("cac:TaxTotal");
        }
        if let Some(t) = &v.vat_total_tax_currency {
            let currency = Some(t.currency.as_str()).filter(|c| !c.is_empty());
            self.x.open("cac:TaxTotal");
            self.x
                .leaf_attrs("cbc:TaxAmount", &[("currencyID", currency)], &t.amount);
            self.x.close("cac:TaxTotal");
        }
    }

    fn totals(&mut self, t: &Totals) {
        self.x.open("cac:LegalMonetaryTotal");
        self.amount("cbc:LineExtensionAmount", t.line_total.as_deref());
        self.amount("cbc:TaxExclusiveAmount", t.tax_exclusive.as_deref());
        self.amount("cbc:TaxInclusiveAmount", t.tax_inclusive.as_deref());
        self.amount("cbc:AllowanceTotalAmount", t.allowance_total.as_deref());
        self.amount("cbc:ChargeTotalAmount", t.charge_total.as_deref());
        self.amount("cbc:PrepaidAmount", t.prepaid.as_deref());
        self.amount("cbc:PayableRoundingAmount", t.rounding.as_deref());
        self.amount("cbc:PayableAmount", t.payable.as_deref());
        self.x.close("cac:LegalMonetaryTotal");
    }

    fn line(&mut self, l: &Line, credit: bool) {
        let (line_el, quantity_el) = if credit {
            ("cac:CreditNoteLine", "cbc:CreditedQuantity")
        } else {
            ("cac:InvoiceLine", "cbc:InvoicedQuantity")
        };
        self.x.open(line_el);
        self.x.opt("cbc:ID", l.id.as_deref());
        self.x.opt("cbc:Note", l.note.as_deref());
        if l.quantity.is_some() || l.unit.is_some() {
            let q = l.quantity.as_deref().unwrap_or_default();
            self.x
                .leaf_attrs(quantity_el, &[("unitCode", l.unit.as_deref())], q);
        }
        self.amount("cbc:LineExtensionAmount", l.net_amount.as_deref());
        self.x
            .opt("cbc:AccountingCost", l.accounting_cost.as_deref());
        if let Some(p) = &l.period {
            period(&mut self.x, p);
        }
        if let Some(line_id) = &l.order_line {
            self.x.open("cac:OrderLineReference");
            self.x.leaf("cbc:LineID", line_id);
            self.x.close("cac:OrderLineReference");
        }
        if let Some(id) = &l.object_id {
            self.x.open("cac:DocumentReference");
            identifier(&mut self.x, "cbc:ID", "schemeID", id);
            self.x.leaf("cbc:DocumentTypeCode", "130");
            self.x.close("cac:DocumentReference");
        }
        for ac in &l.allowances_charges {
            self.allowance_charge(ac, false);
        }
        item(&mut self.x, l);
        let has_price_ac = l.gross_price.is_some() || l.price_discount.is_some();
        let has_base = l.base_quantity.is_some() || l.base_quantity_unit.is_some();
        if l.unit_price.is_some() || has_base || has_price_ac {
            self.x.open("cac:Price");
            self.amount("cbc:PriceAmount", l.unit_price.as_deref());
            if has_base {
                let q = l.base_quantity.as_deref().unwrap_or_default();
                self.x.leaf_attrs(
                    "cbc:BaseQuantity",
                    &[("unitCode", l.base_quantity_unit.as_deref())],
                    q,
                );
            }
            if has_price_ac {
                self.x.open("cac:AllowanceCharge");
                self.x.leaf("cbc:ChargeIndicator", "false");
                self.amount("cbc:Amount", l.price_discount.as_deref());
                self.amount("cbc:BaseAmount", l.gross_price.as_deref());
                self.x.close("cac:AllowanceCharge");
            }
            self.x.close("cac:Price");
        }
        self.x.close(line_el);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Seller,
    Buyer,
    Payee,
    TaxRepresentative,
}

fn period(x: &mut Xml, p: &Period) {
    x.open("cac:InvoicePeriod");
    x.opt("cbc:StartDate", p.start.as_deref());
    x.opt("cbc:EndDate", p.end.as_deref());
    x.opt("cbc:DescriptionCode", p.description_code.as_deref());
    x.close("cac:InvoicePeriod");
}

fn id_reference(x: &mut Xml, element: &str, id: Option<&str>) {
    if let Some(id) = id {
        x.open(element);
        x.leaf("cbc:ID", id);
        x.close(element);
    }
}

fn identifier(x: &mut Xml, element: &str, scheme_attr: &str, id: &Identifier) {
    x.leaf_attrs(element, &[(scheme_attr, id.scheme.as_deref())], &id.value);
}

fn document(x: &mut Xml, d: &DocumentReference) {
    x.open("cac:AdditionalDocumentReference");
    x.leaf_attrs("cbc:ID", &[("schemeID", d.scheme.as_deref())], &d.id);
    x.opt("cbc:DocumentTypeCode", d.type_code.as_deref());
    x.opt("cbc:DocumentDescription", d.description.as_deref());
    if d.attachment.is_some() || d.uri.is_some() {
        x.open("cac:Attachment");
        if let Some(a) = &d.attachment {
            x.leaf_attrs(
                "cbc:EmbeddedDocumentBinaryObject",
                &[
                    ("mimeCode", a.mime_code.as_deref()),
                    ("filename", a.filename.as_deref()),
                ],
                &a.content,
            );
        }
        if let Some(uri) = &d.uri {
            x.open("cac:ExternalReference");
            x.leaf("cbc:URI", uri);
            x.close("cac:ExternalReference");
        }
        x.close("cac:Attachment");
    }
    x.close("cac:AdditionalDocumentReference");
}

fn party(x: &mut Xml, element: &str, p: &Party, role: Role) {
    x.open(element);
    if let Some(e) = &p.endpoint {
        identifier(x, "cbc:EndpointID", "schemeID", e);
    }
    for id in &p.identifiers {
        x.open("cac:PartyIdentification");
        identifier(x, "cbc:ID", "schemeID", id);
        x.close("cac:PartyIdentification");
    }
    // The seller's and buyer's PartyName is the trading name (their name is the legal
    // entity's registration name); the payee and the tax representative have only a name.
    let party_name = match role {
        Role::Seller | Role::Buyer => p.trading_name.as_deref(),
        Role::Payee | Role::TaxRepresentative => p.name.as_deref(),
    };
    if let Some(name) = party_name {
        x.open("cac:PartyName");
        x.leaf("cbc:Name", name);
        x.close("cac:PartyName");
    }
    if !p.address.is_empty() {
        address(x, "cac:PostalAddress", &p.address);
    }
    if let Some(vat) = &p.vat_id {
        party_tax_scheme(x, vat, "VAT");
    }
    if let Some(tax) = &p.tax_id {
        party_tax_scheme(x, tax, "TAX");
    }
    let registration = match role {
        Role::Seller | Role::Buyer => p.name.as_deref(),
        Role::Payee | Role::TaxRepresentative => None,
    };
    if registration.is_some() || p.legal_id.is_some() || p.legal_form.is_some() {
        x.open("cac:PartyLegalEntity");
        x.opt("cbc:RegistrationName", registration);
        if let Some(id) = &p.legal_id {
            identifier(x, "cbc:CompanyID", "schemeID", id);
        }
        x.opt("cbc:CompanyLegalForm", p.legal_form.as_deref());
        x.close("cac:PartyLegalEntity");
    }
    if !p.contact.is_empty() {
        x.open("cac:Contact");
        x.opt("cbc:Name", p.contact.name.as_deref());
        x.opt("cbc:Telephone", p.contact.phone.as_deref());
        x.opt("cbc:ElectronicMail", p.contact.email.as_deref());
        x.close("cac:Contact");
    }
    x.close(element);
}

fn party_tax_scheme(x: &mut Xml, id: &str, scheme: &str) {
    x.open("cac:PartyTaxScheme");
    x.leaf("cbc:CompanyID", id);
    x.open("cac:TaxScheme");
    x.leaf("cbc:ID", scheme);
    x.close("cac:TaxScheme");
    x.close("cac:PartyTaxScheme");
}

fn address(x: &mut Xml, element: &str, a: &Address) {
    x.open(element);
    x.opt("cbc:StreetName", a.street.as_deref());
    x.opt("cbc:AdditionalStreetName", a.additional_street.as_deref());
    x.opt("cbc:CityName", a.city.as_deref());
    x.opt("cbc:PostalZone", a.postcode.as_deref());
    x.opt("cbc:CountrySubentity", a.subdivision.as_deref());
    if let Some(line) = &a.line {
        x.open("cac:AddressLine");
        x.leaf("cbc:Line", line);
        x.close("cac:AddressLine");
    }
    if let Some(country) = &a.country {
        x.open("cac:Country");
        x.leaf("cbc:IdentificationCode", country);
        x.close("cac:Country");
    }
    x.close(element);
}

fn delivery(x: &mut Xml, d: &Delivery) {
    x.open("cac:Delivery");
    x.opt("cbc:ActualDeliveryDate", d.date.as_deref());
    if d.location_id.is_some() || !d.address.is_empty() {
        x.open("cac:DeliveryLocation");
        if let Some(id) = &d.location_id {
            identifier(x, "cbc:ID", "schemeID", id);
        }
        if !d.address.is_empty() {
            address(x, "cac:Address", &d.address);
        }
        x.close("cac:DeliveryLocation");
    }
    if let Some(name) = &d.party_name {
        x.open("cac:DeliveryParty");
        x.open("cac:PartyName");
        x.leaf("cbc:Name", name);
        x.close("cac:PartyName");
        x.close("cac:DeliveryParty");
    }
    x.close("cac:Delivery");
}

fn payment_means(x: &mut Xml, m: &PaymentMeans, due_date: Option<&str>) {
    x.open("cac:PaymentMeans");
    if let Some(code) = &m.code {
        x.leaf_attrs("cbc:PaymentMeansCode", &[("name", m.text.as_deref())], code);
    }
    x.opt("cbc:PaymentDueDate", due_date);
    x.opt("cbc:PaymentID", m.payment_id.as_deref());
    if let Some(card) = &m.card {
        x.open("cac:CardAccount");
        x.leaf("cbc:PrimaryAccountNumberID", &card.number);
        x.opt("cbc:NetworkID", card.network.as_deref());
        x.opt("cbc:HolderName", card.holder.as_deref());
        x.close("cac:CardAccount");
    }
    if m.account_id.is_some() || m.account_name.is_some() || m.bic.is_some() {
        x.open("cac:PayeeFinancialAccount");
        x.opt("cbc:ID", m.account_id.as_deref());
        x.opt("cbc:Name", m.account_name.as_deref());
        if let Some(bic) = &m.bic {
            x.open("cac:FinancialInstitutionBranch");
            x.leaf("cbc:ID", bic);
            x.close("cac:FinancialInstitutionBranch");
        }
        x.close("cac:PayeeFinancialAccount");
    }
    if m.mandate.is_some() || m.debited_account.is_some() {
        x.open("cac:PaymentMandate");
        x.opt("cbc:ID", m.mandate.as_deref());
        if let Some(account) = &m.debited_account {
            x.open("cac:PayerFinancialAccount");
            x.leaf("cbc:ID", account);
            x.close("cac:PayerFinancialAccount");
        }
        x.close("cac:PaymentMandate");
    }
    x.close("cac:PaymentMeans");
}

fn tax_category(
    x: &mut Xml,
    element: &str,
    category: Option<&str>,
    rate: Option<&str>,
    exemption: Option<&VatSubtotal>,
) {
    x.open(element);
    x.opt("cbc:ID", category);
    x.opt("cbc:Percent", rate);
    if let Some(s) = exemption {
        x.opt("cbc:TaxExemptionReasonCode", s.exemption_code.as_deref());
        x.opt("cbc:TaxExemptionReason", s.exemption_reason.as_deref());
    }
    x.open("cac:TaxScheme");
    x.leaf("cbc:ID", "VAT");
    x.close("cac:TaxScheme");
    x.close(element);
}

fn item(x: &mut Xml, l: &Line) {
    x.open("cac:Item");
    x.opt("cbc:Description", l.description.as_deref());
    x.opt("cbc:Name", l.name.as_deref());
    if let Some(id) = &l.buyer_item_id {
        x.open("cac:BuyersItemIdentification");
        x.leaf("cbc:ID", id);
        x.close("cac:BuyersItemIdentification");
    }
    if let Some(id) = &l.seller_item_id {
        x.open("cac:SellersItemIdentification");
        x.leaf("cbc:ID", id);
        x.close("cac:SellersItemIdentification");
    }
    if let Some(id) = &l.standard_item_id {
        x.open("cac:StandardItemIdentification");
        identifier(x, "cbc:ID", "schemeID", id);
        x.close("cac:StandardItemIdentification");
    }
    if let Some(country) = &l.origin_country {
        x.open("cac:OriginCountry");
        x.leaf("cbc:IdentificationCode", country);
        x.close("cac:OriginCountry");
    }
    for c in &l.classifications {
        x.open("cac:CommodityClassification");
        identifier(x, "cbc:ItemClassificationCode", "listID", c);
        x.close("cac:CommodityClassification");
    }
    if l.vat_category.is_some() || l.vat_rate.is_some() {
        tax_category(
            x,
            "cac:ClassifiedTaxCategory",
            l.vat_category.as_deref(),
            l.vat_rate.as_deref(),
            None,
        );
    }
    for p in &l.properties {
        x.open("cac:AdditionalItemProperty");
        x.leaf("cbc:Name", &p.name);
        x.leaf("cbc:Value", &p.value);
        x.close("cac:AdditionalItemProperty");
    }
    x.close("cac:Item");
}
