//! A generator of valid EN 16931 / Peppol BIS 3.0 UBL invoices of any size, for benchmarks
//! and scaling tests. Amounts are consistent (line sums, VAT breakdown, totals), so the
//! document passes the business rules and a validation run exercises every rule fully.

use std::fmt::Write;

use rust_decimal::Decimal;

/// A Slovak domestic invoice (seller and buyer in SK, EUR, VAT 23 %) with `lines` lines,
/// about 1.25 KB per line.
pub fn generate_invoice(lines: usize) -> String {
    let mut body = String::with_capacity(4096 + lines * 1300);
    let rate = Decimal::from(23);
    let mut total = Decimal::ZERO;
    for i in 1..=lines {
        let qty = Decimal::from((i % 7 + 1) as i64);
        let price = Decimal::new(((i * 37) % 9000 + 100) as i64, 2);
        let amount = (qty * price).round_dp(2);
        total += amount;
        write_line(&mut body, i, qty, price, amount);
    }
    let vat = (total * rate / Decimal::from(100)).round_dp(2);
    let gross = total + vat;
    let mut doc = String::with_capacity(body.len() + 4096);
    doc.push_str(HEADER);
    let _ = write!(
        doc,
        r#"  <cac:TaxTotal>
    <cbc:TaxAmount currencyID="EUR">{vat:.2}</cbc:TaxAmount>
    <cac:TaxSubtotal>
      <cbc:TaxableAmount currencyID="EUR">{total:.2}</cbc:TaxableAmount>
      <cbc:TaxAmount currencyID="EUR">{vat:.2}</cbc:TaxAmount>
      <cac:TaxCategory>
        <cbc:ID>S</cbc:ID>
        <cbc:Percent>23</cbc:Percent>
        <cac:TaxScheme>
          <cbc:ID>VAT</cbc:ID>
        </cac:TaxScheme>
      </cac:TaxCategory>
    </cac:TaxSubtotal>
  </cac:TaxTotal>
  <cac:LegalMonetaryTotal>
    <cbc:LineExtensionAmount currencyID="EUR">{total:.2}</cbc:LineExtensionAmount>
    <cbc:TaxExclusiveAmount currencyID="EUR">{total:.2}</cbc:TaxExclusiveAmount>
    <cbc:TaxInclusiveAmount currencyID="EUR">{gross:.2}</cbc:TaxInclusiveAmount>
    <cbc:PayableAmount currencyID="EUR">{gross:.2}</cbc:PayableAmount>
  </cac:LegalMonetaryTotal>
"#
    );
    doc.push_str(&body);
    doc.push_str("</Invoice>\n");
    doc
}

fn write_line(out: &mut String, i: usize, qty: Decimal, price: Decimal, amount: Decimal) {
    let _ = write!(
        out,
        r#"  <cac:InvoiceLine>
    <cbc:ID>{i}</cbc:ID>
    <cbc:Note>Dodávka podľa objednávky OBJ-2026-{i:05}, položka {i}</cbc:Note>
    <cbc:InvoicedQuantity unitCode="H87">{qty}</cbc:InvoicedQuantity>
    <cbc:LineExtensionAmount currencyID="EUR">{amount:.2}</cbc:LineExtensionAmount>
    <cac:InvoicePeriod>
      <cbc:StartDate>2026-10-01</cbc:StartDate>
      <cbc:EndDate>2026-10-31</cbc:EndDate>
    </cac:InvoicePeriod>
    <cac:OrderLineReference>
      <cbc:LineID>{i}</cbc:LineID>
    </cac:OrderLineReference>
    <cac:Item>
      <cbc:Description>Kancelársky materiál, balenie č. {i}, dodané na sklad Bratislava</cbc:Description>
      <cbc:Name>Položka {i}</cbc:Name>
      <cac:SellersItemIdentification>
        <cbc:ID>TS-{i:06}</cbc:ID>
      </cac:SellersItemIdentification>
      <cac:StandardItemIdentification>
        <cbc:ID schemeID="0160">0{gtin:012}</cbc:ID>
      </cac:StandardItemIdentification>
      <cac:CommodityClassification>
        <cbc:ItemClassificationCode listID="STI">30192000</cbc:ItemClassificationCode>
      </cac:CommodityClassification>
      <cac:ClassifiedTaxCategory>
        <cbc:ID>S</cbc:ID>
        <cbc:Percent>23</cbc:Percent>
        <cac:TaxScheme>
          <cbc:ID>VAT</cbc:ID>
        </cac:TaxScheme>
      </cac:ClassifiedTaxCategory>
    </cac:Item>
    <cac:Price>
      <cbc:PriceAmount currencyID="EUR">{price:.2}</cbc:PriceAmount>
      <cbc:BaseQuantity unitCode="H87">1</cbc:BaseQuantity>
    </cac:Price>
  </cac:InvoiceLine>
"#,
        gtin = 400_000_000_000u64 + i as u64
    );
}

const HEADER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
         xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
         xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:CustomizationID>urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0</cbc:CustomizationID>
  <cbc:ProfileID>urn:fdc:peppol.eu:2017:poacc:billing:01:1.0</cbc:ProfileID>
  <cbc:ID>FA2026-1102</cbc:ID>
  <cbc:IssueDate>2026-11-02</cbc:IssueDate>
  <cbc:DueDate>2026-11-16</cbc:DueDate>
  <cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>
  <cbc:DocumentCurrencyCode>EUR</cbc:DocumentCurrencyCode>
  <cbc:BuyerReference>OBJ-2026-044</cbc:BuyerReference>
  <cac:AccountingSupplierParty>
    <cac:Party>
      <cbc:EndpointID schemeID="9950">SK2022749619</cbc:EndpointID>
      <cac:PartyName>
        <cbc:Name>Tatra Softvér</cbc:Name>
      </cac:PartyName>
      <cac:PostalAddress>
        <cbc:StreetName>Mlynské nivy 5</cbc:StreetName>
        <cbc:CityName>Bratislava</cbc:CityName>
        <cbc:PostalZone>82109</cbc:PostalZone>
        <cac:Country>
          <cbc:IdentificationCode>SK</cbc:IdentificationCode>
        </cac:Country>
      </cac:PostalAddress>
      <cac:PartyTaxScheme>
        <cbc:CompanyID>SK2022749619</cbc:CompanyID>
        <cac:TaxScheme>
          <cbc:ID>VAT</cbc:ID>
        </cac:TaxScheme>
      </cac:PartyTaxScheme>
      <cac:PartyLegalEntity>
        <cbc:RegistrationName>Tatra Softvér s.r.o.</cbc:RegistrationName>
        <cbc:CompanyID schemeID="0245">31322832</cbc:CompanyID>
      </cac:PartyLegalEntity>
    </cac:Party>
  </cac:AccountingSupplierParty>
  <cac:AccountingCustomerParty>
    <cac:Party>
      <cbc:EndpointID schemeID="9950">SK2120345678</cbc:EndpointID>
      <cac:PartyName>
        <cbc:Name>Horehronská stavebná</cbc:Name>
      </cac:PartyName>
      <cac:PostalAddress>
        <cbc:StreetName>Námestie SNP 14</cbc:StreetName>
        <cbc:CityName>Banská Bystrica</cbc:CityName>
        <cbc:PostalZone>97401</cbc:PostalZone>
        <cac:Country>
          <cbc:IdentificationCode>SK</cbc:IdentificationCode>
        </cac:Country>
      </cac:PostalAddress>
      <cac:PartyTaxScheme>
        <cbc:CompanyID>SK2120345678</cbc:CompanyID>
        <cac:TaxScheme>
          <cbc:ID>VAT</cbc:ID>
        </cac:TaxScheme>
      </cac:PartyTaxScheme>
      <cac:PartyLegalEntity>
        <cbc:RegistrationName>Horehronská stavebná a.s.</cbc:RegistrationName>
      </cac:PartyLegalEntity>
    </cac:Party>
  </cac:AccountingCustomerParty>
  <cac:Delivery>
    <cbc:ActualDeliveryDate>2026-10-31</cbc:ActualDeliveryDate>
  </cac:Delivery>
  <cac:PaymentMeans>
    <cbc:PaymentMeansCode>58</cbc:PaymentMeansCode>
    <cbc:PaymentID>2026110200</cbc:PaymentID>
    <cac:PayeeFinancialAccount>
      <cbc:ID>SK3112000000198742637541</cbc:ID>
    </cac:PayeeFinancialAccount>
  </cac:PaymentMeans>
  <cac:PaymentTerms>
    <cbc:Note>Splatné do 14 dní.</cbc:Note>
  </cac:PaymentTerms>
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use invex_engine::document::Document;

    #[test]
    fn generated_invoices_parse_and_scale() {
        let small = generate_invoice(3);
        let d = Document::parse(small.as_bytes()).expect("generated invoice parses");
        let line = d
            .lookup_name(
                "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2",
                "InvoiceLine",
            )
            .expect("has lines");
        assert_eq!(d.elements_named(line).len(), 3);
        let big = generate_invoice(1000);
        let per_line = (big.len() - small.len()) / 997;
        assert!(
            (1000..1600).contains(&per_line),
            "{per_line} bytes per line"
        );
    }
}
