//! End-to-end tests of the tabular extractor: real files (the template, a Windows-1250
//! accounting export, workbooks written here) through `extract`.

use super::*;
use crate::convert::model::{DocumentKind, Field, Source};
use chrono::NaiveDate;
use encoding_rs::WINDOWS_1250;
use rust_decimal::Decimal;
use rust_xlsxwriter::{ExcelDateTime, Format as XlsxFormat, Workbook};
use std::str::FromStr;

const SK_EXPORT: &[u8] = include_bytes!("testdata/sk-export-cp1250.csv");

/// [`super::extract`] under the default limits.
fn extract(
    bytes: &[u8],
    filename: Option<&str>,
    mapping: Option<&Mapping>,
) -> Result<Extraction, TabularError> {
    super::extract(bytes, filename, mapping, &Limits::default())
}

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

fn value<T: Clone>(f: &Option<Field<T>>) -> T {
    f.as_ref().expect("field is present").value.clone()
}

fn confidence<T>(f: &Option<Field<T>>) -> f32 {
    f.as_ref().expect("field is present").confidence
}

fn cell_of<T>(f: &Option<Field<T>>) -> (u32, String) {
    match &f.as_ref().expect("field is present").source {
        Source::Cell { row, column, .. } => (*row, column.clone()),
        other => panic!("not from a cell: {other:?}"),
    }
}

/// A CSV in the template's columns (only some), comma-separated.
fn generic_csv(rows: &[&str]) -> Vec<u8> {
    let mut out = String::from(
        "Invoice number,Issue date,Due date,Seller name,Seller VAT ID,Buyer name,IBAN,\
         Item name,Quantity,Unit,Unit price,Line net amount,VAT rate\n",
    );
    for r in rows {
        out.push_str(r);
        out.push('\n');
    }
    out.into_bytes()
}

fn issues_of(inv: &ExtractedInvoice) -> Vec<(u32, &str, &str)> {
    inv.issues
        .iter()
        .map(|i| (i.row, i.column.as_str(), i.field.as_str()))
        .collect()
}

fn assert_template_invoice(x: &Extraction) {
    assert_eq!(x.mapping_id, "generic");
    assert_eq!(x.unmapped_columns, Vec::<String>::new());
    assert_eq!(x.invoices.len(), 1);
    let inv = &x.invoices[0];
    assert_eq!(inv.issues, []);
    assert_eq!(inv.rows, [2, 3]);
    let d = &inv.draft;
    assert_eq!(d.kind, DocumentKind::Invoice);
    assert_eq!(value(&d.number), "VF2027-0001");
    assert_eq!(value(&d.issue_date), date(2027, 1, 15));
    assert_eq!(value(&d.due_date), date(2027, 1, 29));
    assert_eq!(value(&d.currency), "EUR");
    assert_eq!(value(&d.seller.name), "Vzorová firma s.r.o.");
    assert_eq!(value(&d.seller.ico), "12345679");
    assert_eq!(value(&d.seller.vat_id), "SK2121234577");
    assert_eq!(value(&d.seller.endpoint), "0245:2121234577");
    assert_eq!(value(&d.buyer.name), "Odberateľ Žilina a.s.");
    assert_eq!(value(&d.buyer.address.city), "Žilina");
    assert_eq!(value(&d.payment.iban), "SK2411000000002612345678");
    assert_eq!(value(&d.payment.means_code), "58");
    assert_eq!(d.lines.len(), 2);
    assert_eq!(value(&d.lines[0].name), "Konzultačné služby – analýza");
    assert_eq!(value(&d.lines[0].quantity), dec("10"));
    assert_eq!(value(&d.lines[0].unit), "HUR");
    assert_eq!(value(&d.lines[0].unit_price), dec("50"));
    assert_eq!(value(&d.lines[0].net_amount), dec("500"));
    assert_eq!(value(&d.lines[1].vat_category), "S");
    assert_eq!(value(&d.lines[1].vat_rate), dec("23"));
    assert_eq!(value(&d.totals.tax_inclusive), dec("762.6"));
    // Every value came straight from a cell and needed no interpretation.
    for f in d.fields() {
        assert!(matches!(f.source, Source::Cell { .. }), "{}", f.path);
        assert!(f.confidence >= 0.98, "{} {}", f.path, f.confidence);
    }
    assert_eq!(cell_of(&d.lines[1].name), (3, "Item name".to_string()));
}

#[test]
fn template_csv_extracts_back_into_its_invoice() {
    let csv = template_csv();
    assert!(csv.starts_with(&[0xEF, 0xBB, 0xBF]));
    let x = extract(&csv, Some("invex-template.csv"), None).unwrap();
    assert_eq!(
        (x.format, x.encoding.as_deref(), x.delimiter),
        (Format::Csv, Some("UTF-8"), Some(','))
    );
    assert_eq!(x.header_row, 1);
    assert_template_invoice(&x);
}

#[test]
fn template_xlsx_extracts_back_into_its_invoice() {
    let xlsx = template_xlsx().unwrap();
    assert!(xlsx.starts_with(b"PK"));
    // The name says CSV; the content decides.
    let x = extract(&xlsx, Some("template.csv"), None).unwrap();
    assert_eq!(
        (x.format, x.sheet.as_deref(), x.encoding.as_deref()),
        (Format::Xlsx, Some("Invoices"), None)
    );
    assert_template_invoice(&x);
    let d = &x.invoices[0].draft;
    match &d.issue_date.as_ref().unwrap().source {
        Source::Cell { sheet, row, column } => {
            assert_eq!(
                (sheet.as_deref(), *row, column.as_str()),
                (Some("Invoices"), 2, "Issue date")
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn template_columns_are_the_generic_mapping_and_are_documented() {
    let generic = mapping("generic").unwrap();
    assert_eq!(generic.columns.len(), template::COLUMNS.len());
    let doc = include_str!("../../../../docs/conversion-template.md");
    for c in template::COLUMNS {
        assert_eq!(
            generic.columns.get(c.header).map(String::as_str),
            Some(c.path),
            "{}",
            c.header
        );
        assert!(
            doc.contains(&format!("| {} |", c.header)),
            "{} not documented",
            c.header
        );
        assert!(
            doc.contains(&format!("`{}`", c.path)),
            "{} not documented",
            c.path
        );
    }
    for (header, path) in &mapping("sk-accounting").unwrap().columns {
        assert!(
            doc.contains(header.as_str()),
            "{header} ({path}) not documented"
        );
    }
}

#[test]
fn windows_1250_accounting_export_is_read_with_its_mapping() {
    let x = extract(SK_EXPORT, Some("faktury.csv"), None).unwrap();
    assert_eq!(x.encoding.as_deref(), Some("windows-1250"));
    assert_eq!(
        (x.delimiter, x.mapping_id.as_str()),
        (Some(';'), "sk-accounting")
    );
    // The title line and the blank line above the header are skipped.
    assert_eq!(x.header_row, 3);
    assert_eq!(x.unmapped_columns, ["Stredisko"]);
    assert_eq!(x.invoices.len(), 2);

    let first = &x.invoices[0];
    assert_eq!(first.issues, []);
    assert_eq!(first.rows, [4, 5]);
    let d = &first.draft;
    assert_eq!(value(&d.number), "FA270001");
    assert_eq!(d.kind, DocumentKind::Invoice);
    assert_eq!(value(&d.issue_date), date(2027, 1, 15));
    assert_eq!(value(&d.due_date), date(2027, 1, 29));
    assert_eq!(value(&d.buyer.name), "Ďurčanská ľadová šťava, s.r.o.");
    assert_eq!(value(&d.buyer.address.city), "Banská Bystrica");
    assert_eq!(value(&d.buyer.address.country), "SK");
    assert_eq!(value(&d.buyer.vat_id), "SK2024567897");
    assert_eq!(value(&d.lines[0].name), "Čistenie kancelárií – ôsmy týždeň");
    assert_eq!(value(&d.lines[1].name), "Žiarovky, päť kusov v balení");
    assert_eq!(value(&d.lines[0].unit), "HUR");
    assert_eq!(value(&d.lines[1].unit), "H87");
    assert_eq!(value(&d.lines[0].unit_price), dec("25.50"));
    assert_eq!(value(&d.lines[1].net_amount), dec("662.50"));
    assert_eq!(value(&d.lines[0].vat_rate), dec("23"));
    assert_eq!(value(&d.totals.tax_inclusive), dec("1191.26"));
    assert_eq!(value(&d.payment.iban), "SK2411000000002612345678");
    assert_eq!(value(&d.payment.reference), "270001");
    assert_eq!(cell_of(&d.buyer.ico), (4, "IČO odberateľa".to_string()));
    // Not in the file: defaulted or derived, and marked so.
    assert!(matches!(
        d.currency.as_ref().unwrap().source,
        Source::Default { .. }
    ));
    assert!((confidence(&d.currency) - 0.7).abs() < 1e-6);
    assert!(matches!(
        d.buyer.endpoint.as_ref().unwrap().source,
        Source::Computed { .. }
    ));
    assert_eq!(value(&d.buyer.endpoint), "0245:2024567897");
    assert_eq!(value(&d.lines[0].vat_category), "S");
    assert!(d.seller.name.is_none());

    let credit = &x.invoices[1].draft;
    assert_eq!(credit.kind, DocumentKind::CreditNote);
    assert_eq!(value(&credit.buyer.name), "Ňufáková Anna – Kvetinárstvo");
    assert_eq!(value(&credit.lines[0].quantity), dec("-2"));
    assert_eq!(value(&credit.lines[0].net_amount), dec("-20.00"));
    assert_eq!(x.invoices[1].rows, [6]);
}

#[test]
fn accounting_export_snapshot() {
    let x = extract(SK_EXPORT, None, None).unwrap();
    insta::assert_yaml_snapshot!("sk_export", x);
}

#[test]
fn utf8_with_bom_and_utf16_give_the_same_invoices() {
    let text = WINDOWS_1250.decode(SK_EXPORT).0.into_owned();
    let plain = extract(text.as_bytes(), None, None).unwrap();
    assert_eq!(plain.encoding.as_deref(), Some("UTF-8"));
    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend(text.as_bytes());
    let with_bom = extract(&bom, None, None).unwrap();
    assert_eq!(with_bom.encoding.as_deref(), Some("UTF-8"));
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let wide = extract(&utf16, None, None).unwrap();
    assert_eq!(wide.encoding.as_deref(), Some("UTF-16LE"));
    let cp1250 = extract(SK_EXPORT, None, None).unwrap();
    for x in [&with_bom, &wide, &cp1250] {
        assert_eq!(x.invoices, plain.invoices);
    }
}

#[test]
fn slovak_characters_in_windows_1250_built_with_encoding_rs() {
    let text = "Číslo faktúry;Dátum vystavenia;Odberateľ;Položka;Množstvo;MJ;Cena za MJ bez DPH\n\
                F1;1.2.2027;Čerstvé ďatle ľudí ňou šťavou žiaria ô ä;Dodávka;1;ks;1 234,50\n";
    let (bytes, _, unmappable) = WINDOWS_1250.encode(text);
    assert!(!unmappable);
    assert!(
        std::str::from_utf8(&bytes).is_err(),
        "the test needs real 1250 bytes"
    );
    let x = extract(&bytes, None, None).unwrap();
    assert_eq!(x.encoding.as_deref(), Some("windows-1250"));
    let d = &x.invoices[0].draft;
    assert_eq!(
        value(&d.buyer.name),
        "Čerstvé ďatle ľudí ňou šťavou žiaria ô ä"
    );
    assert_eq!(value(&d.lines[0].unit_price), dec("1234.50"));
    assert_eq!(value(&d.lines[0].net_amount), dec("1234.50"));
    assert!(matches!(
        d.lines[0].net_amount.as_ref().unwrap().source,
        Source::Computed { .. }
    ));
    assert_eq!(value(&d.issue_date), date(2027, 2, 1));
}

#[test]
fn rows_are_grouped_into_invoices_by_number() {
    let csv = generic_csv(&[
        "A-1,2027-01-10,,Seller,,Buyer,,Work,2,HUR,40,80,23",
        "B-7,2027-01-11,,Seller,,Buyer,,Goods,1,C62,10,10,23",
        "A-1,2027-01-10,,Seller,,Buyer,,Travel,1,C62,15,15,23",
        ",,,,,,,Parking,1,C62,5,5,23",
    ]);
    let x = extract(&csv, None, None).unwrap();
    let summary: Vec<(String, Vec<u32>, usize)> = x
        .invoices
        .iter()
        .map(|i| (value(&i.draft.number), i.rows.clone(), i.draft.lines.len()))
        .collect();
    assert_eq!(
        summary,
        [
            ("A-1".to_string(), vec![2, 4, 5], 3),
            ("B-7".to_string(), vec![3], 1)
        ]
    );
    assert!(
        x.invoices.iter().all(|i| i.issues.is_empty()),
        "{:?}",
        x.invoices[0].issues
    );
}

#[test]
fn a_header_value_that_disagrees_is_an_issue_at_its_row_and_column() {
    let csv = generic_csv(&[
        "A-1,2027-01-10,,Seller,,Buyer One,,Work,2,HUR,40,80,23",
        "A-1,10.01.2027,,Seller,,Buyer Two,,Travel,1,C62,15,15,23",
    ]);
    let x = extract(&csv, None, None).unwrap();
    let inv = &x.invoices[0];
    // Same date written differently is not a disagreement; another buyer is.
    assert_eq!(issues_of(inv), [(3, "Buyer name", "buyer.name")]);
    assert!(inv.issues[0].message.contains("Buyer One") && inv.issues[0].message.contains("row 2"));
    assert_eq!(inv.issues[0].severity, Severity::Error);
    assert_eq!(value(&inv.draft.buyer.name), "Buyer One");
    assert!(confidence(&inv.draft.buyer.name) <= 0.5);
}

#[test]
fn a_bad_iban_is_kept_with_an_issue_at_its_row_and_column() {
    let csv = generic_csv(&["A-1,2027-01-10,,Seller,SK2121234577,Buyer,SK25 1100 0000 0026 1234 5678,Work,2,HUR,40,80,23"]);
    let x = extract(&csv, None, None).unwrap();
    let inv = &x.invoices[0];
    assert_eq!(issues_of(inv), [(2, "IBAN", "payment.iban")]);
    assert!(
        inv.issues[0].message.contains("IBAN"),
        "{}",
        inv.issues[0].message
    );
    assert_eq!(value(&inv.draft.payment.iban), "SK2511000000002612345678");
    assert!(confidence(&inv.draft.payment.iban) <= 0.3);
    assert_eq!(cell_of(&inv.draft.payment.iban), (2, "IBAN".to_string()));
}

#[test]
fn bad_identifiers_are_issues_at_their_cells() {
    let csv = b"Invoice number,Issue date,Seller IC\xc3\x93,Seller VAT ID,Buyer DI\xc4\x8c,Buyer endpoint,Item name,Unit price\n\
                A-1,2027-01-10,12345678,SK2121234578,123,0245:12,Work,10\n";
    let x = extract(csv, None, None).unwrap();
    let inv = &x.invoices[0];
    let fields: Vec<&str> = inv.issues.iter().map(|i| i.field.as_str()).collect();
    assert_eq!(
        fields,
        ["seller.ico", "seller.vat_id", "buyer.dic", "buyer.endpoint"]
    );
    assert!(inv
        .issues
        .iter()
        .all(|i| i.row == 2 && i.severity == Severity::Error));
    let d = &inv.draft;
    for c in [
        confidence(&d.seller.ico),
        confidence(&d.seller.vat_id),
        confidence(&d.buyer.dic),
    ] {
        assert!(c <= 0.3);
    }
    // Nothing is derived from identifiers that failed their checks.
    assert!(d.seller.dic.is_none());
    assert!(d.seller.endpoint.is_none());
}

#[test]
fn ambiguous_dates_and_numbers_get_lower_confidence() {
    let csv = generic_csv(&["A-1,03/04/2027,15/04/2027,Seller,,Buyer,,Work,1,HUR,\"1,234\",,23"]);
    let x = extract(&csv, None, None).unwrap();
    let inv = &x.invoices[0];
    let d = &inv.draft;
    assert_eq!(value(&d.issue_date), date(2027, 4, 3));
    assert!(confidence(&d.issue_date) <= 0.6);
    assert_eq!(value(&d.due_date), date(2027, 4, 15));
    assert!(confidence(&d.due_date) >= 0.98);
    // The generic mapping's decimal separator is a point, so `1,234` is a thousand.
    assert_eq!(value(&d.lines[0].unit_price), dec("1234"));
    assert!(confidence(&d.lines[0].unit_price) <= 0.6);
    // A value computed from an uncertain one is as uncertain.
    assert!(confidence(&d.lines[0].net_amount) <= 0.6);
    assert!(d.overall_confidence() <= 0.6);
    let warnings: Vec<(&str, Severity)> = inv
        .issues
        .iter()
        .map(|i| (i.field.as_str(), i.severity))
        .collect();
    assert_eq!(
        warnings,
        [
            ("issue_date", Severity::Warning),
            ("lines[0].unit_price", Severity::Warning)
        ]
    );
}

#[test]
fn unreadable_cells_give_no_field_and_an_issue() {
    let csv = generic_csv(&["A-1,someday,,Seller,,Buyer,,Work,two,HUR,40,,23"]);
    let x = extract(&csv, None, None).unwrap();
    let inv = &x.invoices[0];
    assert_eq!(
        issues_of(inv),
        [
            (2, "Issue date", "issue_date"),
            (2, "Quantity", "lines[0].quantity")
        ]
    );
    assert!(inv.draft.issue_date.is_none());
    // The quantity defaults to 1 with low confidence, so the line amount is uncertain.
    assert!(confidence(&inv.draft.lines[0].quantity) <= 0.5);
}

#[test]
fn line_amounts_are_computed_or_cross_checked() {
    let csv = generic_csv(&[
        "A-1,2027-01-10,,Seller,,Buyer,,Computed,3,HUR,12.5,,23",
        "A-1,2027-01-10,,Seller,,Buyer,,Right,3,HUR,12.5,37.50,23",
        "A-1,2027-01-10,,Seller,,Buyer,,Wrong,3,HUR,12.5,40.00,23",
        "A-1,2027-01-10,,Seller,,Buyer,,Price from amount,4,HUR,,50,23",
    ]);
    let x = extract(&csv, None, None).unwrap();
    let inv = &x.invoices[0];
    let lines = &inv.draft.lines;
    assert_eq!(value(&lines[0].net_amount), dec("37.50"));
    assert_eq!(
        lines[0].net_amount.as_ref().unwrap().source,
        Source::Computed {
            from: "lines.quantity × lines.unit_price".into()
        }
    );
    assert!(confidence(&lines[1].net_amount) >= 0.98);
    assert_eq!(
        issues_of(inv),
        [(4, "Line net amount", "lines[2].net_amount")]
    );
    assert!(
        inv.issues[0].message.contains("37.5"),
        "{}",
        inv.issues[0].message
    );
    assert!(confidence(&lines[2].net_amount) <= 0.5);
    assert_eq!(value(&lines[3].unit_price), dec("12.5"));
    assert!(matches!(
        lines[3].unit_price.as_ref().unwrap().source,
        Source::Computed { .. }
    ));
}

#[test]
fn defaults_when_the_file_is_silent() {
    let csv = b"Invoice number,Issue date,Item name,Unit price\nA-1,2027-01-10,Work,10\n";
    let x = extract(csv, None, None).unwrap();
    let d = &x.invoices[0].draft;
    let unit = d.lines[0].unit.as_ref().unwrap();
    assert_eq!((unit.value.as_str(), unit.confidence), ("C62", 0.9));
    assert!(matches!(unit.source, Source::Default { .. }));
    let currency = d.currency.as_ref().unwrap();
    assert_eq!((currency.value.as_str(), currency.confidence), ("EUR", 0.7));
    assert!(matches!(
        d.lines[0].quantity.as_ref().unwrap().source,
        Source::Default { .. }
    ));
}

#[test]
fn a_client_mapping_with_defaults_supplies_the_seller() {
    let json = r#"{
        "id": "my-export",
        "columns": {"Doklad": "number", "Dátum": "issue_date", "Text": "lines.name",
                    "Suma": "lines.net_amount", "Odberateľ": "buyer.name"},
        "delimiter": "|",
        "decimal_separator": ",",
        "date_formats": ["%d/%m/%Y"],
        "defaults": {"seller.name": "Vzorová firma s.r.o.", "seller.vat_id": "SK2121234577",
                     "currency": {"value": "CZK", "confidence": 0.95}, "kind": "381",
                     "lines.vat_rate": 1.234}
    }"#;
    let m = Mapping::from_json(json.as_bytes()).unwrap();
    let csv = "Doklad|Dátum|Odberateľ|Text|Suma\nD-1|03/04/2027|Firma|Oprava|1,234\n";
    let x = extract(csv.as_bytes(), None, Some(&m)).unwrap();
    assert_eq!(
        (x.mapping_id.as_str(), x.delimiter),
        ("my-export", Some('|'))
    );
    let inv = &x.invoices[0];
    let d = &inv.draft;
    assert_eq!(d.kind, DocumentKind::CreditNote);
    // A date matching the mapping's own format is trusted.
    assert_eq!(value(&d.issue_date), date(2027, 4, 3));
    assert!(confidence(&d.issue_date) >= 0.98);
    assert_eq!(value(&d.lines[0].net_amount), dec("1.234"));
    // A JSON number default is not subject to the file's decimal comma.
    assert_eq!(value(&d.lines[0].vat_rate), dec("1.234"));
    assert!(matches!(
        d.lines[0].vat_rate.as_ref().unwrap().source,
        Source::Default { .. }
    ));
    assert_eq!(value(&d.seller.vat_id), "SK2121234577");
    assert!(matches!(
        d.seller.name.as_ref().unwrap().source,
        Source::Default { .. }
    ));
    assert_eq!(
        (value(&d.currency), confidence(&d.currency)),
        ("CZK".to_string(), 0.95)
    );
    assert_eq!(value(&d.seller.dic), "2121234577");
    assert_eq!(value(&d.seller.endpoint), "0245:2121234577");
}

#[test]
fn missing_columns_are_named() {
    let csv = b"Invoice number,Item name,Colour\nA-1,Work,red\n";
    let err = extract(csv, None, None).unwrap_err();
    let message = err.to_string();
    assert!(
        matches!(err, TabularError::NoMatchingMapping { .. }),
        "{message}"
    );
    assert!(message.contains("`generic`"), "{message}");
    assert!(message.contains("`Issue date`"), "{message}");
    assert!(
        message.contains("`Unit price` or `Line net amount`"),
        "{message}"
    );

    let sk = mapping("sk-accounting").unwrap();
    let err = extract(csv, None, Some(&sk)).unwrap_err();
    assert!(
        matches!(err, TabularError::MissingColumns { ref missing, .. } if missing.len() == 4),
        "{err}"
    );
}

#[test]
fn rows_without_an_invoice_are_reported() {
    let csv = generic_csv(&[
        ",,,,,,,Orphan,1,C62,5,5,23",
        "A-1,2027-01-10,,S,,B,,Work,1,C62,5,5,23",
    ]);
    let x = extract(&csv, None, None).unwrap();
    assert_eq!(x.invoices.len(), 1);
    assert_eq!(x.issues.len(), 1);
    assert_eq!(
        (x.issues[0].row, x.issues[0].column.as_str()),
        (2, "Invoice number")
    );
}

/// A workbook as an accounting system might write it: a title row, the header on row 3,
/// real date cells, numeric cells (an IČO without its leading zeros, a VAT rate stored as
/// a percentage fraction) and a second, unrelated sheet first.
fn accounting_workbook() -> Vec<u8> {
    let mut book = Workbook::new();
    let notes = book.add_worksheet();
    notes.set_name("Poznámky").unwrap();
    notes.write_string(0, 0, "Export z účtovníctva").unwrap();
    let sheet = book.add_worksheet();
    sheet.set_name("Faktúry").unwrap();
    let date = XlsxFormat::new().set_num_format("dd.mm.yyyy");
    let percent = XlsxFormat::new().set_num_format("0 %");
    sheet.write_string(0, 0, "Faktúry január 2027").unwrap();
    let headers = [
        "Číslo faktúry",
        "Dátum vystavenia",
        "Dátum splatnosti",
        "Odberateľ",
        "IČO odberateľa",
        "Položka",
        "Množstvo",
        "MJ",
        "Cena za MJ bez DPH",
        "Sadzba DPH",
    ];
    for (c, h) in headers.iter().enumerate() {
        sheet.write_string(2, c as u16, *h).unwrap();
    }
    let issued = ExcelDateTime::from_ymd(2027, 1, 15).unwrap();
    let due = ExcelDateTime::from_ymd(2027, 1, 29).unwrap();
    for (i, (item, qty, price)) in [("Servis", 2.0, 99.9), ("Diely", 3.0, 12.35)]
        .iter()
        .enumerate()
    {
        let r = 3 + i as u32;
        sheet.write_string(r, 0, "F-100").unwrap();
        sheet
            .write_datetime_with_format(r, 1, &issued, &date)
            .unwrap();
        sheet.write_datetime_with_format(r, 2, &due, &date).unwrap();
        sheet.write_string(r, 3, "Odberateľ, s.r.o.").unwrap();
        sheet.write_number(r, 4, 345687.0).unwrap();
        sheet.write_string(r, 5, *item).unwrap();
        sheet.write_number(r, 6, *qty).unwrap();
        sheet.write_string(r, 7, "ks").unwrap();
        sheet.write_number(r, 8, *price).unwrap();
        sheet
            .write_number_with_format(r, 9, 0.23, &percent)
            .unwrap();
    }
    book.save_to_buffer().unwrap()
}

#[test]
fn xlsx_with_date_and_number_cells() {
    let x = extract(&accounting_workbook(), Some("export.xlsx"), None).unwrap();
    assert_eq!(
        (x.format, x.sheet.as_deref()),
        (Format::Xlsx, Some("Faktúry"))
    );
    assert_eq!((x.mapping_id.as_str(), x.header_row), ("sk-accounting", 3));
    let inv = &x.invoices[0];
    assert_eq!(inv.rows, [4, 5]);
    let d = &inv.draft;
    assert_eq!(value(&d.issue_date), date(2027, 1, 15));
    assert!(confidence(&d.issue_date) >= 0.98);
    assert_eq!(value(&d.due_date), date(2027, 1, 29));
    // Leading zeros restored, and said so.
    assert_eq!(value(&d.buyer.ico), "00345687");
    assert!(confidence(&d.buyer.ico) < 0.98);
    assert_eq!(value(&d.lines[0].unit_price), dec("99.9"));
    assert_eq!(value(&d.lines[0].net_amount), dec("199.80"));
    assert_eq!(value(&d.lines[1].net_amount), dec("37.05"));
    assert_eq!(value(&d.lines[1].vat_rate), dec("23"));
    assert_eq!(value(&d.lines[1].unit), "H87");
    assert_eq!(inv.issues, []);
    match &d.lines[1].quantity.as_ref().unwrap().source {
        Source::Cell { sheet, row, column } => assert_eq!(
            (sheet.as_deref(), *row, column.as_str()),
            (Some("Faktúry"), 5, "Množstvo")
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_mapping_can_name_the_sheet() {
    let json = r#"{"id":"notes","sheet":"Poznámky","columns":{"Číslo faktúry":"number",
        "Dátum vystavenia":"issue_date","Položka":"lines.name","Cena za MJ bez DPH":"lines.unit_price"}}"#;
    let m = Mapping::from_json(json.as_bytes()).unwrap();
    let err = extract(&accounting_workbook(), None, Some(&m)).unwrap_err();
    assert!(matches!(err, TabularError::MissingColumns { .. }), "{err}");
    let json = json.replace("Poznámky", "Chýba");
    let m = Mapping::from_json(json.as_bytes()).unwrap();
    let err = extract(&accounting_workbook(), None, Some(&m)).unwrap_err();
    assert!(
        matches!(err, TabularError::NoSuchSheet(ref s) if s == "Chýba"),
        "{err}"
    );
}

#[test]
fn excel_serial_dates_in_text() {
    let csv = b"Invoice number,Issue date,Item name,Unit price\nA-1,46402,Work,10\n";
    let x = extract(csv, None, None).unwrap();
    let d = &x.invoices[0].draft;
    assert_eq!(value(&d.issue_date), date(2027, 1, 15));
    assert!(confidence(&d.issue_date) < 0.98);
}

#[test]
fn extraction_serializes_for_the_api() {
    let x = extract(&template_csv(), None, None).unwrap();
    let json = serde_json::to_value(&x).unwrap();
    assert_eq!(json["format"], "csv");
    assert_eq!(json["mapping_id"], "generic");
    assert_eq!(
        json["invoices"][0]["draft"]["number"]["source"]["kind"],
        "cell"
    );
    let back: Extraction = serde_json::from_value(json).unwrap();
    assert_eq!(back, x);
}

#[test]
fn a_repeated_header_row_is_skipped() {
    let csv = b"Invoice number;Issue date;Item name;Unit price\n\
                A-1;2027-01-10;Work;10\n\
                Invoice number;Issue date;Item name;Unit price\n\
                A-1;2027-01-10;More work;20\n";
    let x = extract(csv, None, None).unwrap();
    assert_eq!(x.invoices.len(), 1);
    assert_eq!(x.invoices[0].rows, [2, 4]);
    assert_eq!(x.invoices[0].issues, []);
}
