//! End-to-end tests on PDFs built by [`super::testpdf`].

use super::testpdf::{build, r, t, u, ur, Attachment, Page, Text};
use super::*;
use crate::convert::model::{DocumentKind, Field, Source};
use chrono::NaiveDate;
use rust_decimal::Decimal;
use std::str::FromStr;

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

fn date(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
}

fn v<T: Clone>(f: &Option<Field<T>>) -> T {
    f.as_ref().expect("field present").value.clone()
}

fn conf<T>(f: &Option<Field<T>>) -> f32 {
    f.as_ref().expect("field present").confidence
}

fn method<T>(f: &Option<Field<T>>) -> String {
    match &f.as_ref().expect("field present").source {
        Source::Pdf { method, .. } => method.clone(),
        other => format!("{other:?}"),
    }
}

/// Layout 1: a classic Slovak invoice. Seller block left with document data to its right
/// (labels left, values right), buyer block below on the right, items table, VAT recap.
fn slovak_items(net_total: &str) -> Vec<Text> {
    vec![
        u(40.0, 800.0, "FAKTÚRA - DAŇOVÝ DOKLAD č. 2027001").size(16.0),
        u(40.0, 770.0, "Dodávateľ:"),
        u(320.0, 770.0, "Číslo faktúry:"),
        t(450.0, 770.0, "2027001"),
        u(40.0, 756.0, "Alfa Tech s.r.o."),
        u(320.0, 756.0, "Dátum vystavenia:"),
        t(450.0, 756.0, "15.01.2027"),
        u(40.0, 742.0, "Hlavná 12"),
        u(320.0, 742.0, "Dátum dodania:"),
        t(450.0, 742.0, "15.01.2027"),
        t(40.0, 728.0, "811 01 Bratislava"),
        u(320.0, 728.0, "Dátum splatnosti:"),
        t(450.0, 728.0, "29. 1. 2027"),
        u(40.0, 714.0, "Slovenská republika"),
        u(320.0, 714.0, "Variabilný symbol:"),
        t(450.0, 714.0, "2027001"),
        u(40.0, 700.0, "IČO: 35763469"),
        u(40.0, 686.0, "DIČ: 2021234567"),
        u(40.0, 672.0, "IČ DPH: SK2021234567"),
        u(320.0, 686.0, "Odberateľ:"),
        u(320.0, 672.0, "Beta Obchod a.s."),
        u(320.0, 658.0, "Mlynská 5"),
        u(320.0, 644.0, "040 01 Košice"),
        u(320.0, 630.0, "IČO: 31333532"),
        u(320.0, 616.0, "IČ DPH: SK2020317068"),
        // Items
        u(40.0, 570.0, "Č."),
        u(65.0, 570.0, "Popis"),
        u(250.0, 570.0, "Množstvo"),
        u(305.0, 570.0, "MJ"),
        u(340.0, 570.0, "Jedn. cena"),
        u(400.0, 570.0, "DPH %"),
        u(470.0, 570.0, "Spolu bez DPH"),
        t(40.0, 556.0, "1"),
        u(65.0, 556.0, "Vývoj softvéru – modul fakturácia"),
        r(290.0, 556.0, "10"),
        t(305.0, 556.0, "hod"),
        r(385.0, 556.0, "50,00"),
        r(427.0, 556.0, "20 %"),
        r(530.0, 556.0, "500,00"),
        t(40.0, 544.0, "2"),
        u(65.0, 544.0, "Licencia Invex Pro (ročná)"),
        r(290.0, 544.0, "2"),
        t(305.0, 544.0, "ks"),
        r(385.0, 544.0, "120,00"),
        r(427.0, 544.0, "20 %"),
        r(530.0, 544.0, "240,00"),
        u(65.0, 533.0, "vrátane podpory"),
        t(40.0, 521.0, "3"),
        u(65.0, 521.0, "Školenie"),
        r(290.0, 521.0, "1,5"),
        t(305.0, 521.0, "hod"),
        r(385.0, 521.0, "40,00"),
        r(427.0, 521.0, "20 %"),
        r(530.0, 521.0, "60,00"),
        // Totals and recap
        u(340.0, 490.0, "Spolu bez DPH:"),
        r(530.0, 490.0, net_total),
        u(40.0, 460.0, "Rekapitulácia DPH"),
        u(40.0, 446.0, "Sadzba DPH"),
        u(140.0, 446.0, "Základ dane"),
        u(240.0, 446.0, "DPH"),
        u(300.0, 446.0, "Spolu s DPH"),
        r(80.0, 432.0, "20 %"),
        r(190.0, 432.0, "800,00"),
        r(260.0, 432.0, "160,00"),
        r(350.0, 432.0, "960,00"),
        u(340.0, 400.0, "DPH spolu:"),
        r(530.0, 400.0, "160,00"),
        u(340.0, 386.0, "Celkom k úhrade:"),
        ur(530.0, 386.0, "960,00 €"),
        t(40.0, 360.0, "IBAN:"),
        t(110.0, 360.0, "SK31 1200 0000 1987 4263 7541"),
        t(40.0, 346.0, "SWIFT/BIC:"),
        t(110.0, 346.0, "TATRSKBX"),
        u(40.0, 332.0, "Forma úhrady: prevodným príkazom"),
        t(40.0, 318.0, "Mena: EUR"),
    ]
}

fn slovak_pdf(net_total: &str, shuffled: bool) -> Vec<u8> {
    build(
        &[Page {
            items: slovak_items(net_total),
            shuffled,
            ..Page::default()
        }],
        &[],
    )
}

fn only(x: &PdfExtraction) -> &PdfInvoice {
    assert_eq!(x.drafts.len(), 1, "one invoice expected:\n{}", x.text);
    &x.drafts[0]
}

fn assert_slovak(x: &PdfExtraction) {
    let inv = only(x);
    let d = &inv.draft;
    let ctx = format!("{}\n{:#?}\n{:#?}", x.text, inv.cross_checks, inv.notes);
    assert_eq!(d.kind, DocumentKind::Invoice);
    assert_eq!(v(&d.number), "2027001", "{ctx}");
    assert_eq!(v(&d.issue_date), date("2027-01-15"));
    assert_eq!(v(&d.tax_point_date), date("2027-01-15"));
    assert_eq!(v(&d.due_date), date("2027-01-29"));
    assert_eq!(v(&d.currency), "EUR");
    assert_eq!(v(&d.seller.name), "Alfa Tech s.r.o.", "{ctx}");
    assert_eq!(v(&d.seller.address.street), "Hlavná 12");
    assert_eq!(v(&d.seller.address.postcode), "811 01");
    assert_eq!(v(&d.seller.address.city), "Bratislava");
    assert_eq!(v(&d.seller.address.country), "SK");
    assert_eq!(v(&d.seller.ico), "35763469");
    assert_eq!(v(&d.seller.dic), "2021234567");
    assert_eq!(v(&d.seller.vat_id), "SK2021234567");
    assert_eq!(v(&d.buyer.name), "Beta Obchod a.s.", "{ctx}");
    assert_eq!(v(&d.buyer.address.street), "Mlynská 5");
    assert_eq!(v(&d.buyer.address.postcode), "040 01");
    assert_eq!(v(&d.buyer.address.city), "Košice");
    assert_eq!(v(&d.buyer.ico), "31333532");
    assert_eq!(v(&d.buyer.vat_id), "SK2020317068");
    assert_eq!(d.buyer.dic, None);
    assert_eq!(v(&d.payment.iban), "SK3112000000198742637541");
    assert_eq!(v(&d.payment.bic), "TATRSKBX");
    assert_eq!(v(&d.payment.reference), "2027001");
    assert_eq!(d.lines.len(), 3, "{ctx}");
    let names: Vec<String> = d.lines.iter().map(|l| v(&l.name)).collect();
    assert_eq!(
        names,
        [
            "Vývoj softvéru – modul fakturácia",
            "Licencia Invex Pro (ročná) vrátane podpory",
            "Školenie"
        ]
    );
    let q: Vec<Decimal> = d.lines.iter().map(|l| v(&l.quantity)).collect();
    assert_eq!(q, [dec("10"), dec("2"), dec("1.5")]);
    let units: Vec<String> = d.lines.iter().map(|l| v(&l.unit)).collect();
    assert_eq!(units, ["HUR", "C62", "HUR"]);
    let p: Vec<Decimal> = d.lines.iter().map(|l| v(&l.unit_price)).collect();
    assert_eq!(p, [dec("50.00"), dec("120.00"), dec("40.00")]);
    let a: Vec<Decimal> = d.lines.iter().map(|l| v(&l.net_amount)).collect();
    assert_eq!(a, [dec("500.00"), dec("240.00"), dec("60.00")]);
    assert!(d
        .lines
        .iter()
        .all(|l| v(&l.vat_rate) == dec("20") && v(&l.vat_category) == "S"));
    assert_eq!(v(&d.lines[0].id), "1");
    assert_eq!(d.vat_breakdown.len(), 1, "{ctx}");
    assert_eq!(v(&d.vat_breakdown[0].rate), dec("20"));
    assert_eq!(v(&d.vat_breakdown[0].taxable), dec("800.00"));
    assert_eq!(v(&d.vat_breakdown[0].tax), dec("160.00"));
    assert_eq!(v(&d.totals.tax), dec("160.00"));
    assert_eq!(v(&d.totals.payable), dec("960.00"));
}

#[test]
fn classic_slovak_invoice() {
    let x = extract(&slovak_pdf("800,00", false)).unwrap();
    assert_eq!(x.pages, 1);
    assert!(x.embedded.is_empty());
    assert_slovak(&x);
    let inv = only(&x);
    let d = &inv.draft;
    assert_eq!(v(&d.totals.tax_exclusive), dec("800.00"));
    assert_eq!(v(&d.totals.line_total), dec("800.00"));
    assert!(
        inv.cross_checks.iter().all(|c| c.passed),
        "{:#?}",
        inv.cross_checks
    );
    // Label plus check digits: above the label's own 0.9.
    assert!(conf(&d.seller.vat_id) > 0.9);
    assert!(conf(&d.seller.ico) > 0.9);
    assert!(conf(&d.payment.iban) > 0.9);
    assert!(conf(&d.totals.payable) > 0.9);
    assert!(conf(&d.lines[1].net_amount) > 0.9);
    assert_eq!(method(&d.seller.vat_id), "label \"IČ DPH\"");
    assert_eq!(method(&d.payment.iban), "label \"IBAN\"");
    assert_eq!(method(&d.lines[0].quantity), "table column \"Množstvo\"");
    assert!(matches!(
        d.number.as_ref().unwrap().source,
        Source::Pdf { page: 1, .. }
    ));
    assert!(x.text.contains("Dodávateľ:"), "{}", x.text);
}

#[test]
fn scanned_like_shuffled_jittered_text_reads_the_same() {
    let x = extract(&slovak_pdf("800,00", true)).unwrap();
    assert_slovak(&x);
    let tidy = extract(&slovak_pdf("800,00", false)).unwrap();
    assert_eq!(x.text, tidy.text);
}

#[test]
fn totals_that_do_not_add_up_lower_confidence() {
    let x = extract(&slovak_pdf("850,00", false)).unwrap();
    let inv = only(&x);
    let d = &inv.draft;
    assert_eq!(v(&d.totals.tax_exclusive), dec("850.00"));
    let failed: Vec<&str> = inv
        .cross_checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| c.name.as_str())
        .collect();
    assert!(failed.contains(&"lines sum to the net total"), "{failed:?}");
    assert!(failed.contains(&"net + VAT = total"), "{failed:?}");
    assert!(conf(&d.totals.tax_exclusive) <= 0.5);
    assert!(conf(&d.lines[0].net_amount) <= 0.5);
    assert!(d.totals.line_total.is_none());
    assert!(d.overall_confidence() <= 0.5);
    // Unrelated values keep their confidence.
    assert!(conf(&d.seller.vat_id) > 0.9);
}

/// Layout 2: English, seller and buyer side by side, other label wording, decimal points,
/// a VAT summary as label lines.
fn english_items(number: &str) -> Vec<Text> {
    vec![
        t(40.0, 800.0, "INVOICE").size(18.0).bold(),
        t(40.0, 780.0, &format!("Invoice No.: {number}")),
        t(330.0, 780.0, "Invoice date: 2027-02-03"),
        t(40.0, 766.0, "Payment due: 05/03/2027"),
        t(330.0, 766.0, "Delivery date: 1 February 2027"),
        t(40.0, 740.0, "Supplier").bold(),
        t(330.0, 740.0, "Bill to").bold(),
        t(40.0, 726.0, "Gamma Systems s.r.o."),
        t(330.0, 726.0, "Delta Trading s.r.o."),
        t(40.0, 712.0, "Prievozská 4"),
        t(330.0, 712.0, "Vinohradská 10"),
        t(40.0, 698.0, "821 09 Bratislava"),
        t(330.0, 698.0, "120 00 Praha 2"),
        t(40.0, 684.0, "Slovakia"),
        t(330.0, 684.0, "Czech Republic"),
        t(40.0, 670.0, "Company ID: 36421928"),
        t(330.0, 670.0, "Company ID: 27082440"),
        t(40.0, 656.0, "VAT ID: SK2022749619"),
        t(330.0, 656.0, "VAT ID: CZ27082440"),
        t(40.0, 642.0, "billing@gamma.example"),
        t(40.0, 600.0, "Description").bold(),
        t(300.0, 600.0, "Qty").bold(),
        t(340.0, 600.0, "Unit").bold(),
        t(380.0, 600.0, "Unit price").bold(),
        t(450.0, 600.0, "VAT %").bold(),
        t(510.0, 600.0, "Amount").bold(),
        t(40.0, 586.0, "Consulting services, February"),
        r(318.0, 586.0, "12.5"),
        t(340.0, 586.0, "hours"),
        r(425.0, 586.0, "80.00"),
        r(480.0, 586.0, "20%"),
        r(545.0, 586.0, "1,000.00"),
        t(40.0, 572.0, "Hosting (monthly)"),
        r(318.0, 572.0, "1"),
        t(340.0, 572.0, "month"),
        r(425.0, 572.0, "45.00"),
        r(480.0, 572.0, "20%"),
        r(545.0, 572.0, "45.00"),
        t(40.0, 558.0, "Support hardware"),
        r(318.0, 558.0, "3"),
        t(340.0, 558.0, "pcs"),
        r(425.0, 558.0, "150.00"),
        r(480.0, 558.0, "20%"),
        r(545.0, 558.0, "450.00"),
        t(380.0, 520.0, "Subtotal"),
        r(545.0, 520.0, "1,495.00"),
        t(380.0, 506.0, "Taxable amount 20%"),
        r(545.0, 506.0, "1,495.00"),
        t(380.0, 492.0, "VAT 20%"),
        r(545.0, 492.0, "299.00"),
        t(380.0, 478.0, "Total VAT"),
        r(545.0, 478.0, "299.00"),
        t(380.0, 464.0, "Total incl. VAT"),
        r(545.0, 464.0, "EUR 1,794.00"),
        t(380.0, 450.0, "Amount due").bold(),
        r(545.0, 450.0, "EUR 1,794.00").bold(),
        t(40.0, 420.0, "Bank details").bold(),
        t(40.0, 406.0, "IBAN: SK66 0900 0000 0050 1234 5678"),
        t(40.0, 392.0, "BIC: GIBASKBX"),
        t(40.0, 378.0, "Payment reference: 2027042"),
    ]
}

#[test]
fn english_two_column_invoice() {
    let pdf = build(
        &[Page {
            items: english_items("INV-2027-0042"),
            ..Page::default()
        }],
        &[],
    );
    let x = extract(&pdf).unwrap();
    let inv = only(&x);
    let d = &inv.draft;
    let ctx = format!("{}\n{:#?}\n{:#?}", x.text, inv.cross_checks, inv.notes);
    assert_eq!(v(&d.number), "INV-2027-0042", "{ctx}");
    assert_eq!(method(&d.number), "label \"Invoice No.\"");
    assert_eq!(v(&d.issue_date), date("2027-02-03"));
    assert_eq!(v(&d.due_date), date("2027-03-05"));
    assert_eq!(v(&d.tax_point_date), date("2027-02-01"));
    assert_eq!(v(&d.currency), "EUR");
    assert_eq!(v(&d.seller.name), "Gamma Systems s.r.o.", "{ctx}");
    assert_eq!(v(&d.seller.address.street), "Prievozská 4");
    assert_eq!(v(&d.seller.address.city), "Bratislava");
    assert_eq!(v(&d.seller.address.country), "SK");
    assert_eq!(v(&d.seller.ico), "36421928");
    assert_eq!(v(&d.seller.vat_id), "SK2022749619");
    assert_eq!(v(&d.seller.email), "billing@gamma.example");
    assert_eq!(v(&d.buyer.name), "Delta Trading s.r.o.", "{ctx}");
    assert_eq!(v(&d.buyer.address.street), "Vinohradská 10");
    assert_eq!(v(&d.buyer.address.postcode), "120 00");
    assert_eq!(v(&d.buyer.address.city), "Praha 2");
    assert_eq!(v(&d.buyer.address.country), "CZ");
    assert_eq!(v(&d.buyer.ico), "27082440");
    assert_eq!(v(&d.buyer.vat_id), "CZ27082440");
    assert_eq!(v(&d.payment.iban), "SK6609000000005012345678");
    assert_eq!(v(&d.payment.bic), "GIBASKBX");
    assert_eq!(v(&d.payment.reference), "2027042");
    assert_eq!(d.lines.len(), 3, "{ctx}");
    let q: Vec<Decimal> = d.lines.iter().map(|l| v(&l.quantity)).collect();
    assert_eq!(q, [dec("12.5"), dec("1"), dec("3")]);
    let units: Vec<String> = d.lines.iter().map(|l| v(&l.unit)).collect();
    assert_eq!(units, ["HUR", "MON", "C62"]);
    let a: Vec<Decimal> = d.lines.iter().map(|l| v(&l.net_amount)).collect();
    assert_eq!(a, [dec("1000.00"), dec("45.00"), dec("450.00")]);
    assert_eq!(v(&d.lines[0].name), "Consulting services, February");
    assert_eq!(d.vat_breakdown.len(), 1, "{ctx}");
    assert_eq!(v(&d.vat_breakdown[0].taxable), dec("1495.00"));
    assert_eq!(v(&d.vat_breakdown[0].tax), dec("299.00"));
    assert_eq!(v(&d.totals.tax_exclusive), dec("1495.00"));
    assert_eq!(v(&d.totals.tax), dec("299.00"));
    assert_eq!(v(&d.totals.tax_inclusive), dec("1794.00"));
    assert_eq!(v(&d.totals.payable), dec("1794.00"));
    assert!(inv.cross_checks.iter().all(|c| c.passed), "{ctx}");
}

#[test]
fn pages_with_different_invoice_numbers_are_separate_invoices() {
    let pdf = build(
        &[
            Page {
                items: english_items("INV-1"),
                ..Page::default()
            },
            Page {
                items: english_items("INV-2"),
                ..Page::default()
            },
        ],
        &[],
    );
    let x = extract(&pdf).unwrap();
    assert_eq!(x.pages, 2);
    let numbers: Vec<String> = x.drafts.iter().map(|d| v(&d.draft.number)).collect();
    assert_eq!(numbers, ["INV-1", "INV-2"]);
    assert!(matches!(
        x.drafts[1].draft.number.as_ref().unwrap().source,
        Source::Pdf { page: 2, .. }
    ));
    assert_eq!(x.drafts[1].draft.lines.len(), 3);
}

fn text_page(items: Vec<Text>) -> Page {
    Page {
        items,
        ..Page::default()
    }
}

#[test]
fn embedded_ubl_is_reported() {
    let ubl = include_bytes!("testdata/peppol-base-example.xml");
    let pdf = build(
        &[text_page(vec![t(
            40.0,
            800.0,
            "Invoice Snippet1: see the attached XML",
        )])],
        &[Attachment {
            name: "invoice.xml".into(),
            bytes: ubl.to_vec(),
        }],
    );
    let x = extract(&pdf).unwrap();
    assert_eq!(x.embedded.len(), 1);
    assert_eq!(x.embedded[0].name, "invoice.xml");
    assert_eq!(x.embedded[0].flavour, XmlFlavour::Ubl);
    assert_eq!(x.embedded[0].bytes, ubl.to_vec());
}

#[test]
fn embedded_factur_x_is_reported_and_text_still_extracted() {
    let cii = br#"<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
  xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100">
  <rsm:ExchangedDocument><ram:ID>INV-2027-0042</ram:ID><ram:TypeCode>380</ram:TypeCode></rsm:ExchangedDocument>
</rsm:CrossIndustryInvoice>"#;
    let pdf = build(
        &[text_page(english_items("INV-2027-0042"))],
        &[Attachment {
            name: "factur-x.xml".into(),
            bytes: cii.to_vec(),
        }],
    );
    let x = extract(&pdf).unwrap();
    assert_eq!(x.embedded.len(), 1);
    assert_eq!(x.embedded[0].name, "factur-x.xml");
    assert_eq!(x.embedded[0].flavour, XmlFlavour::FacturX);
    assert_eq!(v(&only(&x).draft.number), "INV-2027-0042");
}

#[test]
fn image_only_scan_is_refused_with_a_clear_error() {
    let pdf = build(
        &[Page {
            image_only: true,
            ..Page::default()
        }],
        &[],
    );
    let err = extract(&pdf).unwrap_err();
    assert_eq!(
        err,
        PdfError::NoText {
            pages: 1,
            images: 1
        }
    );
    let message = err.to_string();
    assert!(message.contains("OCR is not performed"), "{message}");
    assert!(message.contains("manual entry"), "{message}");
}

#[test]
fn not_a_pdf_and_damaged_inputs() {
    assert_eq!(extract(b"hello, world"), Err(PdfError::NotPdf));
    assert_eq!(extract(b""), Err(PdfError::NotPdf));
    assert!(matches!(
        extract(b"%PDF-1.7\n garbage"),
        Err(PdfError::Damaged(_))
    ));
}

#[test]
fn too_many_pages_are_refused() {
    let pages: Vec<Page> = (0..3)
        .map(|_| text_page(vec![t(40.0, 800.0, "x")]))
        .collect();
    let pdf = build(&pages, &[]);
    let limits = Limits {
        max_pages: 2,
        ..Limits::default()
    };
    assert_eq!(
        extract_with(&pdf, &limits),
        Err(PdfError::TooManyPages { max: 2 })
    );
}

#[test]
fn decompression_bombs_are_refused() {
    // 4 MB of spaces compress to a few kilobytes.
    let long = " ".repeat(4 * 1024 * 1024);
    let pdf = build(&[text_page(vec![t(40.0, 800.0, &long)])], &[]);
    assert!(
        pdf.len() < 200_000 + 800_000,
        "compressed test file stays small"
    );
    let limits = Limits {
        max_stream_bytes: 1024 * 1024,
        ..Limits::default()
    };
    let err = extract_with(&pdf, &limits).unwrap_err();
    assert!(matches!(err, PdfError::TooLarge { .. }), "{err:?}");
    assert!(err.to_string().contains("decompression bomb"));
}

#[test]
fn a_long_text_is_refused_before_its_glyphs_fill_memory() {
    // 24 million characters in one string compress to ~25 KB; held as glyphs for the
    // layout they took gigabytes.
    let long = "x".repeat(24 * 1024 * 1024);
    let pdf = build(&[text_page(vec![t(40.0, 800.0, &long)])], &[]);
    assert!(pdf.len() < 1_000_000, "{}", pdf.len());
    assert_eq!(
        extract(&pdf),
        Err(PdfError::TooMuchText {
            what: "glyphs",
            limit: Limits::default().max_glyphs,
        })
    );
}

#[test]
fn password_protected_pdf_is_refused() {
    use lopdf::{dictionary, Object, StringFormat};
    let mut doc = lopdf::Document::load_mem(&slovak_pdf("800,00", false)).unwrap();
    // A Standard security handler whose user password is not empty (its /U does not
    // match the empty password).
    let hex = |b: u8| Object::String(vec![b; 32], StringFormat::Hexadecimal);
    let encrypt = doc.add_object(dictionary! {
        "Filter" => "Standard", "V" => 2, "R" => 3, "Length" => 128, "P" => -4,
        "O" => hex(0), "U" => hex(0x11),
    });
    doc.trailer.set("Encrypt", encrypt);
    let id = Object::String(vec![7; 16], StringFormat::Hexadecimal);
    doc.trailer.set("ID", vec![id.clone(), id]);
    let mut pdf = Vec::new();
    doc.save_to(&mut pdf).unwrap();
    assert_eq!(extract(&pdf), Err(PdfError::Encrypted));
}

/// Truncated and garbled files must end in an error or a result, never a panic. This
/// calls the extractor without its panic guard, so a panic anywhere fails the test.
#[test]
fn truncated_and_garbled_input_never_panics() {
    let good = slovak_pdf("800,00", false);
    let limits = Limits::default();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for cut in (0..good.len()).step_by(good.len() / 40 + 1) {
        let _ = run(&good[..cut], &limits);
    }
    // Uncompressed, so garbling hits content streams and dictionaries rather than
    // deflate data the decoder rejects at once.
    let mut doc =
        lopdf::Document::load_mem(&build(&[text_page(english_items("INV-9"))], &[])).unwrap();
    doc.decompress();
    let mut plain = Vec::new();
    doc.save_to(&mut plain).unwrap();
    for (round, source) in [&good, &plain].into_iter().cycle().take(120).enumerate() {
        let mut bad = source.clone();
        if round % 7 == 0 {
            bad.truncate(bad.len() * (round % 5 + 1) / 6);
        }
        for _ in 0..(1 + next() % 20) {
            let i = (next() as usize) % bad.len();
            bad[i] = next() as u8;
        }
        let _ = run(&bad, &limits);
    }
}

#[test]
fn merged_quantity_and_unit_titles_split_into_columns() {
    let pdf = build(
        &[text_page(vec![
            t(40.0, 800.0, "Invoice number: 77"),
            t(40.0, 700.0, "Description"),
            t(250.0, 700.0, "Qty Unit"),
            t(330.0, 700.0, "Price"),
            t(400.0, 700.0, "Amount"),
            t(40.0, 686.0, "Widget"),
            r(266.0, 686.0, "4"),
            t(270.0, 686.0, "pcs"),
            r(352.0, 686.0, "2.50"),
            r(430.0, 686.0, "10.00"),
        ])],
        &[],
    );
    let x = extract(&pdf).unwrap();
    let d = &only(&x).draft;
    assert_eq!(d.lines.len(), 1, "{}", x.text);
    assert_eq!(v(&d.lines[0].quantity), dec("4"));
    assert_eq!(v(&d.lines[0].unit), "C62");
    assert_eq!(method(&d.lines[0].quantity), "table column \"Unit\"");
    assert_eq!(v(&d.lines[0].net_amount), dec("10.00"));
}

/// Layout 3: seller and buyer side by side whose lines do not share baselines (the
/// columns use different line spacing), names that begin with a label word, a wrapped
/// electronic address, and a VAT recap with the totals beside it on the same baselines.
#[test]
fn side_by_side_parties_on_different_baselines_and_a_recap_beside_the_totals() {
    let pdf = build(
        &[text_page(vec![
            u(40.0, 800.0, "Faktúra / Invoice 2027-77").size(14.0),
            t(40.0, 780.0, "Invoice number: 2027-77"),
            t(40.0, 766.0, "Issue date: 2027-03-01"),
            u(40.0, 740.0, "Dodávateľ / Seller"),
            u(320.0, 740.0, "Odberateľ / Buyer"),
            // Seller lines every 12 points, buyer lines every 15: some merge into one
            // baseline, others interleave.
            u(40.0, 726.0, "Dodávateľ Servis s.r.o."),
            u(40.0, 714.0, "Hlavná 1"),
            u(40.0, 702.0, "01001 Žilina"),
            u(40.0, 690.0, "IČO: 31322832"),
            u(40.0, 678.0, "IČ DPH: SK2022749619"),
            u(40.0, 666.0, "Endpoint:"),
            t(40.0, 654.0, "0245:2022749619"),
            t(320.0, 726.0, "Buyer Holding a.s."),
            u(320.0, 711.0, "Mlynská 5"),
            u(320.0, 696.0, "040 01 Košice"),
            t(320.0, 681.0, "VAT ID: SK2020317068"),
            t(320.0, 666.0, "Country: SK"),
            t(320.0, 651.0, "Endpoint: 0245:2020317068"),
            t(40.0, 600.0, "Description"),
            t(250.0, 600.0, "Qty"),
            t(330.0, 600.0, "Unit price"),
            t(400.0, 600.0, "VAT %"),
            t(480.0, 600.0, "Amount"),
            t(40.0, 586.0, "Consulting"),
            r(266.0, 586.0, "2"),
            r(370.0, 586.0, "50.00"),
            r(430.0, 586.0, "20"),
            r(520.0, 586.0, "100.00"),
            t(40.0, 560.0, "VAT breakdown"),
            t(330.0, 560.0, "Line total:"),
            r(540.0, 560.0, "100.00"),
            t(40.0, 546.0, "Rate"),
            t(90.0, 546.0, "Taxable amount"),
            t(190.0, 546.0, "VAT amount"),
            t(330.0, 546.0, "Total without VAT:"),
            r(540.0, 546.0, "100.00"),
            r(70.0, 532.0, "20 %"),
            r(160.0, 532.0, "100.00"),
            r(240.0, 532.0, "20.00"),
            t(330.0, 532.0, "VAT total:"),
            r(540.0, 532.0, "20.00"),
            t(330.0, 518.0, "Amount payable:"),
            r(540.0, 518.0, "120.00 EUR"),
        ])],
        &[],
    );
    let x = extract(&pdf).unwrap();
    let inv = only(&x);
    let d = &inv.draft;
    let ctx = format!("{}\n{:#?}", x.text, inv.cross_checks);
    assert_eq!(v(&d.seller.name), "Dodávateľ Servis s.r.o.", "{ctx}");
    assert_eq!(v(&d.seller.address.street), "Hlavná 1");
    assert_eq!(v(&d.seller.address.postcode), "01001");
    assert_eq!(v(&d.seller.address.city), "Žilina");
    assert_eq!(v(&d.seller.ico), "31322832");
    assert_eq!(v(&d.seller.vat_id), "SK2022749619", "{ctx}");
    assert_eq!(v(&d.seller.endpoint), "0245:2022749619", "{ctx}");
    assert_eq!(v(&d.buyer.name), "Buyer Holding a.s.", "{ctx}");
    assert_eq!(v(&d.buyer.address.street), "Mlynská 5");
    assert_eq!(v(&d.buyer.address.postcode), "040 01");
    assert_eq!(v(&d.buyer.address.city), "Košice");
    assert_eq!(v(&d.buyer.address.country), "SK");
    assert_eq!(v(&d.buyer.vat_id), "SK2020317068", "{ctx}");
    assert_eq!(v(&d.buyer.endpoint), "0245:2020317068");
    assert_eq!(d.buyer.ico, None);
    assert_eq!(d.lines.len(), 1, "{ctx}");
    assert_eq!(v(&d.lines[0].net_amount), dec("100.00"));
    assert_eq!(d.vat_breakdown.len(), 1, "{ctx}");
    assert_eq!(v(&d.vat_breakdown[0].rate), dec("20"));
    assert_eq!(v(&d.vat_breakdown[0].taxable), dec("100.00"));
    assert_eq!(v(&d.vat_breakdown[0].tax), dec("20.00"));
    assert_eq!(v(&d.totals.line_total), dec("100.00"));
    assert_eq!(v(&d.totals.tax_exclusive), dec("100.00"));
    assert_eq!(v(&d.totals.tax), dec("20.00"));
    assert_eq!(v(&d.totals.payable), dec("120.00"));
    assert!(inv.cross_checks.iter().all(|c| c.passed), "{ctx}");
}

/// The whole conversion pipeline over a PDF: extraction, the UBL writer, validation under
/// peppol-bis3 and the review gate; per invoice the XML, the reasons and the fatal count.
fn pipeline(pdf: &[u8]) -> Vec<(Vec<u8>, Vec<crate::convert::gate::ReviewReason>, usize)> {
    use crate::convert::{extract, review, ubl::tests::catalog};
    let extracted = extract::extract(
        pdf,
        Some("in.pdf"),
        crate::invoice::json::Declared::Xml,
        None,
        &Default::default(),
    )
    .unwrap();
    assert_eq!(extracted.format, "pdf");
    extracted
        .candidates
        .iter()
        .map(|c| {
            let e = review::evaluate(catalog(), Some("peppol-bis3"), c, 0.8).unwrap();
            (e.xml, e.reasons, e.report.counts.fatal)
        })
        .collect()
}

/// The classic Slovak layout with an order number (Peppol needs BT-10 or BT-13).
fn slovak_with_order(shuffled: bool) -> Vec<u8> {
    let mut items = slovak_items("800,00");
    items.push(u(320.0, 700.0, "Objednávka č.: OBJ-2027-15"));
    build(
        &[Page {
            items,
            shuffled,
            ..Page::default()
        }],
        &[],
    )
}

#[test]
fn clean_pdfs_convert_to_valid_ubl_ready_to_send_whatever_their_text_order() {
    let classic = pipeline(&slovak_with_order(false));
    let scanned = pipeline(&slovak_with_order(true));
    assert_eq!(classic.len(), 1);
    let (xml, reasons, fatal) = &classic[0];
    assert_eq!(reasons, &vec![], "ready: nothing to review");
    assert_eq!(*fatal, 0);
    let text = String::from_utf8_lossy(xml);
    // Electronic addresses follow from the DIČ (scheme 0245) when the PDF prints none.
    assert!(text.contains(r#"<cbc:EndpointID schemeID="0245">2021234567</cbc:EndpointID>"#));
    assert!(text.contains(r#"<cbc:EndpointID schemeID="0245">2020317068</cbc:EndpointID>"#));
    assert!(text.contains(r#"<cbc:PayableAmount currencyID="EUR">960.00</cbc:PayableAmount>"#));
    // The scrambled PDF gives the very same document.
    assert_eq!(scanned[0].0, *xml);
}

#[test]
fn uncertain_pdfs_are_held_with_their_reasons() {
    use crate::convert::gate::ReasonKind;
    // Two-column English layout: no order or buyer reference, and a foreign buyer without
    // a Peppol address — validation says so, and the gate holds it.
    let english = pipeline(&build(&[text_page(english_items("INV-2027-7"))], &[]));
    let (_, reasons, fatal) = &english[0];
    assert!(*fatal > 0);
    let messages: Vec<&str> = reasons
        .iter()
        .filter(|r| r.kind == ReasonKind::FatalFinding)
        .map(|r| r.message.as_str())
        .collect();
    assert!(messages.iter().any(|m| m.contains("BT-49")), "{messages:?}");
    // Totals that do not add up: failed cross-checks, and the amounts involved are uncertain.
    let mismatch = pipeline(&slovak_pdf("593.97", false));
    let (_, reasons, _) = &mismatch[0];
    assert!(reasons
        .iter()
        .any(|r| r.kind == ReasonKind::FailedCrossCheck && r.message.contains("593.97")));
    assert!(reasons.iter().any(|r| r.kind == ReasonKind::LowConfidence
        && r.field.as_deref() == Some("totals.tax_exclusive")));
}

#[test]
fn every_page_is_laid_out_with_its_box_and_text_runs_where_they_stand() {
    // Page 2 shows nothing: page 3's text must still be page 3's (the reading text numbers
    // pages by form feeds, which an empty page does not produce).
    let pdf = build(
        &[
            Page {
                items: vec![
                    u(40.0, 800.0, "FAKTÚRA č. 2027001").size(16.0),
                    u(40.0, 700.0, "IBAN:"),
                    t(320.0, 700.0, "SK31 1200 0000 1987 4263 7541"),
                ],
                ..Page::default()
            },
            Page {
                image_only: true,
                ..Page::default()
            },
            Page {
                items: vec![t(100.0, 400.0, "Spolu 1 230,00 EUR")],
                ..Page::default()
            },
        ],
        &[],
    );
    let e = extract(&pdf).unwrap();
    assert_eq!(e.layout.len(), 3);
    let first = &e.layout[0];
    assert_eq!((first.number, first.width, first.height), (1, 595.0, 842.0));
    let iban = first
        .texts
        .iter()
        .find(|t| t.text.starts_with("SK31"))
        .expect("the IBAN run");
    assert!((iban.x - 320.0).abs() < 0.5 && (iban.baseline - 700.0).abs() < 0.5);
    assert!(iban.width > 100.0, "{iban:?}");
    let label = first
        .texts
        .iter()
        .find(|t| t.text == "IBAN:")
        .expect("its label, apart");
    assert!(label.x < 50.0);
    assert!(
        first.texts.iter().any(|t| t.size >= 15.0),
        "the title's size"
    );
    assert!(e.layout[1].texts.is_empty());
    assert_eq!(e.layout[2].number, 3);
    assert!(e.layout[2]
        .texts
        .iter()
        .any(|t| t.text.contains("1 230,00")));
}
