//! The business terms of an EN 16931 invoice or credit note, as invex reads them from UBL,
//! writes them to UBL and exchanges them as JSON (the JSON invoice of docs/integration.md,
//! whose JSON Schema is generated from these types).
//!
//! Values are kept as the document states them: text trimmed, dates as `YYYY-MM-DD`,
//! amounts, quantities and percentages as decimal strings (never floats, so no cent is lost
//! on the way). Every field is optional here; what EN 16931 requires is the rules' to
//! report, so a JSON invoice with gaps is answered with findings, not refused.

use serde::{Deserialize, Serialize};

use super::checked;
use serde_with::skip_serializing_none;
use utoipa::ToSchema;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = InvoiceKind)]
pub enum DocumentKind {
    /// A UBL `Invoice`.
    #[default]
    Invoice,
    /// A UBL `CreditNote`.
    CreditNote,
}

/// An invoice or credit note (EN 16931), business term by business term.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = JsonInvoice)]
pub struct InvoiceView {
    pub kind: DocumentKind,
    /// BT-24 specification identifier (UBL `CustomizationID`); Peppol BIS Billing 3.0 when
    /// absent.
    pub customization_id: Option<String>,
    /// BT-23 business process (UBL `ProfileID`); Peppol billing process 01 when absent.
    pub profile_id: Option<String>,
    /// BT-1 invoice number
    pub number: Option<String>,
    /// BT-3 type code (UNTDID 1001): 380 for an invoice, 381 for a credit note when absent.
    pub type_code: Option<String>,
    /// BT-2 issue date
    #[schema(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    #[serde(deserialize_with = "checked::date")]
    pub issue_date: Option<String>,
    /// BT-9 payment due date (a credit note carries it in its payment means)
    #[schema(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    #[serde(deserialize_with = "checked::date")]
    pub due_date: Option<String>,
    /// BT-7 VAT point date
    #[schema(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    #[serde(deserialize_with = "checked::date")]
    pub tax_point_date: Option<String>,
    /// BT-5 invoice currency (ISO 4217)
    pub currency: Option<String>,
    /// BT-6 VAT accounting currency (ISO 4217)
    pub tax_currency: Option<String>,
    /// BG-14 invoicing period, with BT-8
    pub period: Option<Period>,
    /// BT-22 invoice notes
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub references: References,
    /// BG-4 seller
    pub seller: Party,
    /// BG-7 buyer
    pub buyer: Party,
    /// BG-10 payee
    pub payee: Option<Party>,
    /// BG-11 seller's tax representative
    pub tax_representative: Option<Party>,
    /// BG-13 delivery
    pub delivery: Option<Delivery>,
    /// BG-16 payment instructions
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub payment_means: Vec<PaymentMeans>,
    /// BT-20 payment terms
    pub payment_terms: Option<String>,
    /// BG-20 / BG-21 document level allowances and charges
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowances_charges: Vec<AllowanceCharge>,
    /// BG-25 invoice lines
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<Line>,
    /// BG-23 VAT breakdown
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vat_breakdown: Vec<VatSubtotal>,
    /// BT-110 invoice total VAT amount
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub vat_total: Option<String>,
    /// BT-111 invoice total VAT amount in the VAT accounting currency
    pub vat_total_tax_currency: Option<TaxCurrencyTotal>,
    /// BG-22 document totals
    pub totals: Totals,
}

/// BT-111: an amount in the VAT accounting currency.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = TaxCurrencyTotal)]
pub struct TaxCurrencyTotal {
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal_text")]
    pub amount: String,
    /// ISO 4217, the same as BT-6
    pub currency: String,
}

/// BG-14 / BG-26 a period.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = InvoicePeriod)]
pub struct Period {
    /// BT-73 / BT-134 start date
    #[schema(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    #[serde(deserialize_with = "checked::date")]
    pub start: Option<String>,
    /// BT-74 / BT-135 end date
    #[schema(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    #[serde(deserialize_with = "checked::date")]
    pub end: Option<String>,
    /// BT-8 VAT point date code (UNTDID 2005: 3, 35 or 432); document level only
    pub description_code: Option<String>,
}

/// The document's references to other documents.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = InvoiceReferences)]
pub struct References {
    /// BT-10 buyer reference
    pub buyer_reference: Option<String>,
    /// BT-13 purchase order reference
    pub order: Option<String>,
    /// BT-14 sales order reference
    pub sales_order: Option<String>,
    /// BT-12 contract reference
    pub contract: Option<String>,
    /// BT-11 project reference
    pub project: Option<String>,
    /// BT-16 despatch advice reference
    pub despatch_advice: Option<String>,
    /// BT-15 receiving advice reference
    pub receiving_advice: Option<String>,
    /// BT-17 tender or lot reference
    pub tender: Option<String>,
    /// BT-19 buyer accounting reference
    pub accounting_cost: Option<String>,
    /// BG-3 preceding invoices
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preceding_invoices: Vec<PrecedingInvoice>,
    /// BT-18 invoiced object identifier (type code 130) and BG-24 supporting documents
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub documents: Vec<DocumentReference>,
}

/// BG-3 a preceding invoice.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PrecedingInvoice {
    /// BT-25
    pub id: String,
    /// BT-26
    #[schema(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    #[serde(deserialize_with = "checked::date")]
    pub issue_date: Option<String>,
}

/// BG-24 a supporting document, or (type code 130) BT-18 the invoiced object.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = SupportingDocument)]
pub struct DocumentReference {
    /// BT-122 (or BT-18)
    pub id: String,
    /// BT-18-1 the identifier's scheme
    pub scheme: Option<String>,
    /// UNTDID 1001: 130 for the invoiced object, 50 for a credit note's project (BT-11)
    pub type_code: Option<String>,
    /// BT-123
    pub description: Option<String>,
    /// BT-124 external document location
    pub uri: Option<String>,
    /// BT-125 attached document
    pub attachment: Option<Attachment>,
}

/// BT-125 an attached document, base64 encoded.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Attachment {
    /// The content in base64.
    pub content: String,
    /// BT-125-1 MIME code, e.g. `application/pdf`
    pub mime_code: Option<String>,
    /// BT-125-2 file name
    pub filename: Option<String>,
}

/// A party: seller (BG-4), buyer (BG-7), payee (BG-10) or tax representative (BG-11).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = InvoiceParty)]
pub struct Party {
    /// BT-27 / BT-44 / BT-59 / BT-62 name
    pub name: Option<String>,
    /// BT-28 / BT-45 trading name
    pub trading_name: Option<String>,
    /// BT-29 / BT-46 / BT-60 identifiers (BT-90 creditor id has scheme `SEPA`)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub identifiers: Vec<Identifier>,
    /// BT-30 / BT-47 / BT-61 legal registration identifier (Slovak IČO: scheme 0245)
    pub legal_id: Option<Identifier>,
    /// BT-33 additional legal information
    pub legal_form: Option<String>,
    /// BT-31 / BT-48 / BT-63 VAT identifier (IČ DPH)
    pub vat_id: Option<String>,
    /// BT-32 seller tax registration identifier (DIČ)
    pub tax_id: Option<String>,
    /// BT-34 / BT-49 electronic address (Peppol participant id)
    pub endpoint: Option<Identifier>,
    /// BG-5 / BG-8 / BG-12 postal address
    pub address: Address,
    /// BG-6 / BG-9 contact
    pub contact: Contact,
}

/// An identifier with its scheme (ISO 6523 ICD, or EAS for electronic addresses).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Identifier {
    pub scheme: Option<String>,
    pub value: String,
}

/// A postal address (BG-5, BG-8, BG-12, BG-15).
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = InvoiceAddress)]
pub struct Address {
    /// BT-35 / BT-50 / BT-64 / BT-75 address line 1
    pub street: Option<String>,
    /// BT-36 / BT-51 / BT-65 / BT-76 address line 2
    pub additional_street: Option<String>,
    /// BT-162 / BT-163 / BT-164 / BT-165 address line 3
    pub line: Option<String>,
    /// BT-37 / BT-52 / BT-66 / BT-77 city
    pub city: Option<String>,
    /// BT-38 / BT-53 / BT-67 / BT-78 post code
    pub postcode: Option<String>,
    /// BT-39 / BT-54 / BT-68 / BT-79 country subdivision
    pub subdivision: Option<String>,
    /// BT-40 / BT-55 / BT-69 / BT-80 country code (ISO 3166-1 alpha-2)
    pub country: Option<String>,
}

impl Address {
    pub fn is_empty(&self) -> bool {
        *self == Address::default()
    }
}

/// BG-6 / BG-9 contact.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = PartyContact)]
pub struct Contact {
    /// BT-41 / BT-56
    pub name: Option<String>,
    /// BT-42 / BT-57
    pub phone: Option<String>,
    /// BT-43 / BT-58
    pub email: Option<String>,
}

impl Contact {
    pub fn is_empty(&self) -> bool {
        *self == Contact::default()
    }
}

/// BG-13 delivery information.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = InvoiceDelivery)]
pub struct Delivery {
    /// BT-72 actual delivery date
    #[schema(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    #[serde(deserialize_with = "checked::date")]
    pub date: Option<String>,
    /// BT-70 deliver to party name
    pub party_name: Option<String>,
    /// BT-71 deliver to location identifier
    pub location_id: Option<Identifier>,
    /// BG-15 deliver to address
    pub address: Address,
}

/// BG-16 payment instructions.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PaymentMeans {
    /// BT-81 payment means type code (UNCL 4461: 30, 58 SEPA credit transfer, 59 direct debit…)
    pub code: Option<String>,
    /// BT-82 payment means text
    pub text: Option<String>,
    /// BT-83 remittance information (the Slovak variable symbol)
    pub payment_id: Option<String>,
    /// BT-84 payment account identifier (IBAN)
    pub account_id: Option<String>,
    /// BT-85 payment account name
    pub account_name: Option<String>,
    /// BT-86 payment service provider identifier (BIC)
    pub bic: Option<String>,
    /// BG-18 payment card
    pub card: Option<Card>,
    /// BT-89 mandate reference identifier
    pub mandate: Option<String>,
    /// BT-91 debited account identifier
    pub debited_account: Option<String>,
}

impl PaymentMeans {
    pub fn is_empty(&self) -> bool {
        *self == PaymentMeans::default()
    }
}

/// BG-18 payment card information.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = PaymentCard)]
pub struct Card {
    /// BT-87 primary account number (at most the last 4 to 6 digits)
    pub number: String,
    /// The card network (UBL `NetworkID`, required there)
    pub network: Option<String>,
    /// BT-88 card holder name
    pub holder: Option<String>,
}

/// BG-20 / BG-21 / BG-27 / BG-28 an allowance or a charge.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AllowanceCharge {
    /// `true` for a charge, `false` for an allowance
    pub is_charge: bool,
    /// BT-92 / BT-99 / BT-136 / BT-141 amount
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub amount: Option<String>,
    /// BT-93 / BT-100 / BT-137 / BT-142 base amount
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub base_amount: Option<String>,
    /// BT-94 / BT-101 / BT-138 / BT-143 percentage
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub percent: Option<String>,
    /// BT-97 / BT-104 / BT-139 / BT-144 reason
    pub reason: Option<String>,
    /// BT-98 / BT-105 / BT-140 / BT-145 reason code
    pub reason_code: Option<String>,
    /// BT-95 / BT-102 VAT category code (document level)
    pub vat_category: Option<String>,
    /// BT-96 / BT-103 VAT rate (document level)
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub vat_rate: Option<String>,
}

/// BG-25 an invoice line.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = InvoiceLine)]
pub struct Line {
    /// BT-126 line identifier
    pub id: Option<String>,
    /// BT-127 line note
    pub note: Option<String>,
    /// BT-129 invoiced quantity
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub quantity: Option<String>,
    /// BT-130 unit of measure (UN/ECE Rec 20, e.g. `C62`, `HUR`)
    pub unit: Option<String>,
    /// BT-131 line net amount
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub net_amount: Option<String>,
    /// BT-133 buyer accounting reference
    pub accounting_cost: Option<String>,
    /// BT-132 referenced purchase order line
    pub order_line: Option<String>,
    /// BT-128 line object identifier
    pub object_id: Option<Identifier>,
    /// BG-26 line period
    pub period: Option<Period>,
    /// BT-153 item name
    pub name: Option<String>,
    /// BT-154 item description
    pub description: Option<String>,
    /// BT-155 seller's item identifier
    pub seller_item_id: Option<String>,
    /// BT-156 buyer's item identifier
    pub buyer_item_id: Option<String>,
    /// BT-157 item standard identifier
    pub standard_item_id: Option<Identifier>,
    /// BT-158 item classification identifiers (scheme: UNTDID 7143 list id)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classifications: Vec<Identifier>,
    /// BT-159 item country of origin
    pub origin_country: Option<String>,
    /// BG-32 item attributes (BT-160 name, BT-161 value)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<ItemProperty>,
    /// BT-151 invoiced item VAT category code
    pub vat_category: Option<String>,
    /// BT-152 invoiced item VAT rate
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub vat_rate: Option<String>,
    /// BT-146 item net price
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub unit_price: Option<String>,
    /// BT-149 item price base quantity
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub base_quantity: Option<String>,
    /// BT-150 item price base quantity unit of measure
    pub base_quantity_unit: Option<String>,
    /// BT-148 item gross price
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub gross_price: Option<String>,
    /// BT-147 item price discount
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub price_discount: Option<String>,
    /// BG-27 / BG-28 line allowances and charges
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowances_charges: Vec<AllowanceCharge>,
}

/// BG-32 an item attribute.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ItemProperty {
    /// BT-160
    pub name: String,
    /// BT-161
    pub value: String,
}

/// BG-23 one VAT breakdown row.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = VatBreakdown)]
pub struct VatSubtotal {
    /// BT-118 VAT category code
    pub category: Option<String>,
    /// BT-119 VAT category rate
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub rate: Option<String>,
    /// BT-116 VAT category taxable amount
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub taxable: Option<String>,
    /// BT-117 VAT category tax amount
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub tax: Option<String>,
    /// BT-121 VAT exemption reason code (VATEX)
    pub exemption_code: Option<String>,
    /// BT-120 VAT exemption reason text
    pub exemption_reason: Option<String>,
}

/// BG-22 document totals.
#[skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
#[schema(as = InvoiceTotals)]
pub struct Totals {
    /// BT-106 sum of invoice line net amounts
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub line_total: Option<String>,
    /// BT-107 sum of allowances on document level
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub allowance_total: Option<String>,
    /// BT-108 sum of charges on document level
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub charge_total: Option<String>,
    /// BT-109 invoice total without VAT
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub tax_exclusive: Option<String>,
    /// BT-112 invoice total with VAT
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub tax_inclusive: Option<String>,
    /// BT-113 paid amount
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub prepaid: Option<String>,
    /// BT-114 rounding amount
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub rounding: Option<String>,
    /// BT-115 amount due for payment
    #[schema(pattern = r"^[+-]?[0-9]+(\.[0-9]+)?$")]
    #[serde(deserialize_with = "checked::decimal")]
    pub payable: Option<String>,
}
