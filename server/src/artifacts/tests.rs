//! Renders invoices and reads the PDFs back with lopdf: structure, pages, extracted text.

use std::path::PathBuf;

use lopdf::{Document, Object};

use super::font::Fonts;
use super::layout::{Layout, Op, PAGE_HEIGHT, PAGE_WIDTH};
use super::{document, render_pdf, RenderError};
use crate::convert::roundtrip::corpus;
use crate::invoice::{self as invoice_view, ReadError};

const INVOICE_SK: &str = include_str!("testdata/invoice-sk.xml");
const CREDIT_NOTE_SK: &str = include_str!("testdata/creditnote-sk.xml");

struct Rendered {
    doc: Document,
    /// Extracted text of each page.
    pages: Vec<String>,
    size: usize,
}

impl Rendered {
    fn text(&self) -> String {
        self.pages.concat()
    }
}

fn render(xml: &str) -> Rendered {
    let bytes = render_pdf(xml.as_bytes()).expect("rendering succeeds");
    assert!(bytes.starts_with(b"%PDF-1."), "a PDF header");
    let doc = Document::load_mem(&bytes).expect("lopdf parses the PDF");
    let pages = doc
        .get_pages()
        .keys()
        .map(|n| doc.extract_text(&[*n]).expect("text extracts"))
        .collect();
    Rendered {
        doc,
        pages,
        size: bytes.len(),
    }
}

/// Checks the text with whitespace runs collapsed: a labelled value wrapped onto a
/// second line, or a row's cells, still read as one phrase.
fn assert_contains(text: &str, needles: &[&str]) {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in needles {
        assert!(
            flat.contains(needle),
            "missing {needle:?} in extracted text:\n{text}"
        );
    }
}

/// `count` lines: the fixture's lines repeated with fresh ids.
fn invoice_with_lines(count: usize) -> String {
    let start = INVOICE_SK
        .find("<cac:InvoiceLine>")
        .expect("fixture has lines");
    let end = INVOICE_SK
        .rfind("</cac:InvoiceLine>")
        .expect("fixture has lines")
        + "</cac:InvoiceLine>".len();
    let lines: Vec<&str> = INVOICE_SK[start..end]
        .split_inclusive("</cac:InvoiceLine>")
        .map(str::trim)
        .collect();
    let mut body = String::new();
    for i in 0..count {
        let template = lines[i % lines.len()];
        let id_start = template.find("<cbc:ID>").expect("line id") + "<cbc:ID>".len();
        let id_end = template.find("</cbc:ID>").expect("line id");
        body.push_str(&template[..id_start]);
        body.push_str(&format!("L{:03}", i + 1));
        body.push_str(&template[id_end..]);
        body.push('\n');
    }
    format!("{}{}{}", &INVOICE_SK[..start], body, &INVOICE_SK[end..])
}

#[test]
fn slovak_invoice_prints_every_business_term_with_diacritics() {
    let r = render(INVOICE_SK);
    assert_eq!(r.pages.len(), 1);
    let text = r.text();
    assert_contains(
        &text,
        &[
            "Faktúra / Invoice FA2027-0042",
            "Číslo faktúry / Invoice number: FA2027-0042",
            "Dátum vystavenia / Issue date: 2027-01-15",
            "Dátum splatnosti / Due date: 2027-01-29",
            "Dátum dodania / Delivery date: 2027-01-14",
            "Fakturačné obdobie / Invoicing period: 2027-01-01 – 2027-01-31",
            "Mena / Currency: EUR",
            "Objednávka / Purchase order: PO-5521",
            "Zmluva / Contract: ZML-2026/118",
            "Referencia odberateľa / Buyer reference: OBJ-2027-007",
            // Parties.
            "Dodávateľ / Seller",
            "Dodávateľ s.r.o.",
            "Obchodné meno / Trading name: Dodávateľ",
            "Ľubovnianska 5",
            "01001 Žilina",
            "IČO / Company ID: 36123456",
            "DIČ / Tax ID: 2022749619",
            "IČ DPH / VAT ID: SK2022749619",
            "Elektronická adresa / Endpoint: 0245:2022749619",
            "Kontakt / Contact: Ľudmila Šťastná",
            "Odberateľ / Buyer",
            "Odberateľ a.s.",
            "04001 Košice",
            "IČ DPH / VAT ID: SK2120345678",
            // Payment.
            "Spôsob úhrady / Payment means: 58 (prevodom SEPA / SEPA credit transfer)",
            "IBAN: SK3112000000198742637541",
            "BIC: TATRSKBX",
            "Platobná referencia / Payment reference: 20270042",
            "Poznámka / Note: Ďakujeme za spoluprácu.",
            // Lines: header row, then id, description, quantity, unit, price, VAT %, net.
            "No. Description Quantity Unit Unit price VAT % Net amount",
            "1 Konzultačné služby – zavedenie e-fakturácie",
            "10 HUR 80.00 23 800.00",
            "2 Licencia softvéru Účtovníctvo Plus, ročná",
            "Zľava / Allowance: 30.00 – Zľava za vernosť (95)",
            "2 C62 150.00 23 270.00",
            "3 Odborná kniha: Daň z pridanej hodnoty v praxi",
            "3 C62 24.50 5 73.50",
            // Document allowances and charges.
            "Zľava / Allowance Zľava za objem (95)",
            "43.50 EUR",
            "Poplatok / Charge Doprava (FC)",
            // VAT breakdown.
            "Category Rate Taxable amount VAT amount",
            "S štandardná sadzba / standard rate 23 % 1036.50 EUR 238.40 EUR",
            "S štandardná sadzba / standard rate 5 % 73.50 EUR 3.68 EUR",
            // Totals.
            "Suma položiek / Line total: 1143.50 EUR",
            "Zľavy / Allowances: 43.50 EUR",
            "Poplatky / Charges: 10.00 EUR",
            "Spolu bez DPH / Total without VAT: 1110.00 EUR",
            "DPH / VAT total: 242.08 EUR",
            "Spolu s DPH / Total with VAT: 1352.08 EUR",
            "Uhradené zálohy / Prepaid amount: 100.00 EUR",
            "K úhrade / Amount payable: 1252.08 EUR",
            "Strana 1 z 1 / Page 1 of 1",
        ],
    );
}

#[test]
fn long_descriptions_wrap_within_the_description_column() {
    let r = render(INVOICE_SK);
    let text = r.text();
    // The item description is longer than the column: its words all arrive, in order.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(
        "Analýza požiadaviek, návrh dátového modelu a konzultácie k zavedeniu elektronickej \
         fakturácie v účtovnom systéme odberateľa"
    ));
}

#[test]
fn credit_note_is_titled_as_such_with_its_due_date_and_preceding_invoice() {
    let r = render(CREDIT_NOTE_SK);
    assert_contains(
        &r.text(),
        &[
            "Dobropis / Credit note DB2027-0003",
            "Číslo dobropisu / Credit note number: DB2027-0003",
            "Dátum splatnosti / Due date: 2027-02-17",
            "Pôvodná faktúra / Preceding invoice: FA2027-0042 (2027-01-15)",
            "Druh dokladu / Document type: 381 (dobropis / credit note)",
            "Dobropis k licencii softvéru Účtovníctvo Plus",
            "Poznámka / Note: Reklamácia – poškodený obal",
            "1 C62 30.00 23 30.00",
            "K úhrade / Amount payable: 36.90 EUR",
        ],
    );
}

#[test]
fn sixty_lines_flow_onto_further_pages_with_repeated_headers() {
    let xml = invoice_with_lines(60);
    let r = render(&xml);
    let count = r.pages.len();
    assert!(count >= 2, "60 lines need more than one page, got {count}");
    assert_eq!(r.doc.get_pages().len(), count);
    for (i, page) in r.pages.iter().enumerate() {
        assert_contains(page, &[&format!("Page {} of {count}", i + 1)]);
    }
    // The table header is repeated on every page the table reaches.
    let with_header = r
        .pages
        .iter()
        .filter(|p| p.contains("No. Description Quantity Unit Unit price VAT % Net amount"))
        .count();
    assert!(with_header >= 2, "table header on {with_header} pages");
    let text = r.text();
    for i in 1..=60 {
        assert!(text.contains(&format!("L{i:03} ")), "line L{i:03} printed");
    }
    assert_contains(&text, &["K úhrade / Amount payable: 1252.08 EUR"]);
}

#[test]
fn rendering_is_byte_identical_and_dated_from_the_issue_date() {
    let first = render_pdf(INVOICE_SK.as_bytes()).expect("renders");
    let second = render_pdf(INVOICE_SK.as_bytes()).expect("renders");
    assert_eq!(first, second);
    let r = render(INVOICE_SK);
    let info = r
        .doc
        .trailer
        .get(b"Info")
        .and_then(Object::as_reference)
        .and_then(|id| r.doc.get_dictionary(id))
        .expect("document info");
    let created = info
        .get(b"CreationDate")
        .and_then(Object::as_str)
        .expect("creation date");
    assert!(created.starts_with(b"D:20270115"), "{created:?}");
}

#[test]
fn fonts_are_embedded_subset_cid_fonts_with_tounicode() {
    let r = render(INVOICE_SK);
    assert!(r.size < 100 * 1024, "PDF is {} bytes", r.size);
    let mut type0 = 0;
    for object in r.doc.objects.values() {
        let Ok(dict) = object.as_dict() else { continue };
        if dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Type0") {
            continue;
        }
        type0 += 1;
        assert_eq!(
            dict.get(b"Encoding").and_then(Object::as_name).ok(),
            Some(&b"Identity-H"[..])
        );
        assert!(dict.get(b"ToUnicode").is_ok());
        let name = dict
            .get(b"BaseFont")
            .and_then(Object::as_name)
            .expect("base font");
        // A subset tag: six capitals and a plus sign.
        assert_eq!(name[6], b'+', "{}", String::from_utf8_lossy(name));
        let descendant = dict
            .get(b"DescendantFonts")
            .and_then(Object::as_array)
            .expect("descendant")[0]
            .as_reference()
            .and_then(|id| r.doc.get_dictionary(id))
            .expect("CID font");
        assert_eq!(
            descendant.get(b"Subtype").and_then(Object::as_name).ok(),
            Some(&b"CIDFontType2"[..])
        );
        let descriptor = descendant
            .get(b"FontDescriptor")
            .and_then(Object::as_reference)
            .and_then(|id| r.doc.get_dictionary(id))
            .expect("descriptor");
        let file = descriptor
            .get(b"FontFile2")
            .and_then(Object::as_reference)
            .and_then(|id| r.doc.get_object(id))
            .and_then(Object::as_stream)
            .expect("font program");
        let program = file.decompressed_content().expect("inflates");
        assert!(program.len() < 60_000, "subset is {} bytes", program.len());
    }
    assert_eq!(type0, 2, "regular and bold");
}

#[test]
fn malformed_input_is_an_error_not_a_panic() {
    let truncated = &INVOICE_SK[..INVOICE_SK.len() / 2];
    let mismatched = "<Invoice><cbc:ID>1</cbc:Name></Invoice>";
    let deep = format!(
        "<Invoice>{}{}</Invoice>",
        "<a>".repeat(200),
        "</a>".repeat(200)
    );
    for bad in [
        "",
        "not xml at all",
        truncated,
        mismatched,
        "<Invoice></Invoice><Invoice/>",
        "<Invoice>&undefined;</Invoice>",
        deep.as_str(),
    ] {
        match render_pdf(bad.as_bytes()) {
            Err(RenderError::Read(ReadError::Xml(_))) => {}
            other => panic!("{bad:.40?} gave {other:?}"),
        }
    }
    assert!(matches!(
        render_pdf(b"<Order><ID>1</ID></Order>"),
        Err(RenderError::Read(ReadError::NotUbl(root))) if root == "Order"
    ));
    assert!(render_pdf(&[0xff, 0xfe, 0x00, 0x3c]).is_err());
}

#[test]
fn a_row_taller_than_a_page_is_split_across_pages() {
    // One unbroken 30,000-character name: broken by characters, flowed over pages.
    let name = "Ž".repeat(30_000);
    let xml = INVOICE_SK.replacen("Licencia softvéru Účtovníctvo Plus, ročná", &name, 1);
    let started = std::time::Instant::now();
    let r = render(&xml);
    assert!(started.elapsed().as_secs() < 20, "wrapping stays linear");
    assert!(r.pages.len() >= 3, "{} pages", r.pages.len());
    let count = r.text().matches('Ž').count();
    assert!(
        count >= 30_000,
        "{count} of the name's characters extracted"
    );
    assert_contains(&r.text(), &["K úhrade / Amount payable: 1252.08 EUR"]);
    assert_layout_sane(xml.as_bytes(), "tall row");
}

#[test]
fn a_bare_invoice_still_renders() {
    let r = render("<Invoice><ID>X-1</ID><Note>Kanji 漢 here</Note></Invoice>");
    assert_contains(
        &r.text(),
        &[
            "Faktúra / Invoice X-1",
            // A character DejaVu Sans lacks is shown, and extracted, as U+FFFD.
            "Poznámka / Note: Kanji \u{FFFD} here",
            "Page 1 of 1",
        ],
    );
}

#[test]
fn reader_takes_terms_from_their_ubl_places() {
    let view = invoice_view::read(INVOICE_SK.as_bytes()).expect("reads");
    assert_eq!(view.number.as_deref(), Some("FA2027-0042"));
    assert_eq!(view.seller.name.as_deref(), Some("Dodávateľ s.r.o."));
    assert_eq!(view.seller.trading_name.as_deref(), Some("Dodávateľ"));
    assert_eq!(
        view.seller.legal_id.as_ref().map(|i| i.value.as_str()),
        Some("36123456")
    );
    assert_eq!(view.seller.tax_id.as_deref(), Some("2022749619"));
    assert_eq!(view.buyer.vat_id.as_deref(), Some("SK2120345678"));
    assert_eq!(view.lines.len(), 3);
    assert_eq!(view.lines[1].allowances_charges.len(), 1);
    assert_eq!(view.lines[0].unit.as_deref(), Some("HUR"));
    assert_eq!(view.allowances_charges.len(), 2);
    assert!(view.allowances_charges[1].is_charge);
    assert_eq!(view.vat_breakdown.len(), 2);
    assert_eq!(view.vat_total.as_deref(), Some("242.08"));
    assert_eq!(view.totals.payable.as_deref(), Some("1252.08"));
    assert_eq!(view.payment_means[0].bic.as_deref(), Some("TATRSKBX"));

    let credit = invoice_view::read(CREDIT_NOTE_SK.as_bytes()).expect("reads");
    assert_eq!(credit.due_date.as_deref(), Some("2027-02-17"));
    assert_eq!(credit.lines[0].quantity.as_deref(), Some("1"));
}

/// Every laid-out text run stays on the page, and runs on one baseline do not overlap.
fn assert_layout_sane(xml: &[u8], name: &str) {
    let view = invoice_view::read(xml).expect("reads");
    let fonts = Fonts::load().expect("fonts");
    let pages = document::compose(&view, Layout::new(&fonts), None);
    for (p, page) in pages.iter().enumerate() {
        let mut runs = Vec::new();
        for op in &page.ops {
            let Op::Text(spans) = op else { continue };
            for span in spans {
                let text = span.text.trim_end();
                let width = fonts.get(span.style.font).width(text, span.style.size);
                assert!(
                    span.x >= 0.0
                        && span.x + width <= PAGE_WIDTH
                        && span.y > 0.0
                        && span.y < PAGE_HEIGHT,
                    "{name} page {}: {text:?} off the page at ({}, {})",
                    p + 1,
                    span.x,
                    span.y
                );
                runs.push((span.y, span.x, span.x + width, text.to_string()));
            }
        }
        for (i, a) in runs.iter().enumerate() {
            for b in &runs[i + 1..] {
                let same_line = (a.0 - b.0).abs() < 3.0;
                let overlap = a.1 < b.2 - 0.5 && b.1 < a.2 - 0.5;
                assert!(
                    !(same_line && overlap),
                    "{name} page {}: {:?} overlaps {:?}",
                    p + 1,
                    a.3,
                    b.3
                );
            }
        }
    }
}

#[test]
fn layout_keeps_text_on_the_page_without_overlaps() {
    assert_layout_sane(INVOICE_SK.as_bytes(), "invoice-sk");
    assert_layout_sane(CREDIT_NOTE_SK.as_bytes(), "creditnote-sk");
    assert_layout_sane(invoice_with_lines(60).as_bytes(), "60 lines");
}

fn corpus_examples(corpus: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        "peppol/examples",
        "peppol/national-examples",
        "en16931/examples",
    ] {
        let Ok(entries) = std::fs::read_dir(corpus.join(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn corpus_examples_render_and_read_back() {
    let corpus = corpus();
    let files = corpus_examples(&corpus);
    assert!(!files.is_empty());
    for path in files {
        let xml = std::fs::read(&path).expect("reads");
        let name = path.display().to_string();
        let view = invoice_view::read(&xml).unwrap_or_else(|e| panic!("{name}: {e}"));
        let bytes = render_pdf(&xml).unwrap_or_else(|e| panic!("{name}: {e}"));
        let doc = Document::load_mem(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
        let text = doc.extract_text(&numbers).expect("text");
        if let Some(number) = &view.number {
            assert!(text.contains(number.as_str()), "{name}: number {number}");
        }
        if let Some(payable) = &view.totals.payable {
            let payable = super::format::amount(payable);
            assert!(text.contains(&payable), "{name}: payable {payable}");
        }
        for line in &view.lines {
            if let Some(amount) = &line.net_amount {
                let amount = super::format::amount(amount);
                assert!(text.contains(&amount), "{name}: line amount {amount}");
            }
        }
        assert_layout_sane(&xml, &name);
    }
}

#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn corpus_credit_note_and_allowances() {
    let corpus = corpus();
    let read = |p: &str| std::fs::read_to_string(corpus.join(p)).expect("corpus file");
    let credit = render(&read("peppol/examples/base-creditnote-correction.xml"));
    assert_contains(
        &credit.text(),
        &["Dobropis / Credit note", "Credit note number:"],
    );
    let allowances = render(&read("peppol/examples/Allowance-example.xml"));
    assert_contains(
        &allowances.text(),
        &[
            "Document allowances and charges",
            "Poplatok / Charge Cleaning (CG)",
            "Zľava / Allowance",
            "BIC: BIC324098",
            "Číslo účtu / Account number: IBAN32423940",
            "DPH v SEK / VAT in SEK:",
        ],
    );
}

/// A sandbox rendition looked like a production invoice once it left the API. Every page of
/// a marked rendition says what it is, in both languages; an unmarked one says nothing.
#[test]
fn a_marked_rendition_says_sandbox_on_every_page() {
    let lines: String = (0..80)
        .map(|i| {
            format!(
                "<cac:InvoiceLine><cbc:ID>{i}</cbc:ID><cbc:InvoicedQuantity unitCode=\"C62\">1</cbc:InvoicedQuantity>\
                 <cbc:LineExtensionAmount currencyID=\"EUR\">1.00</cbc:LineExtensionAmount>\
                 <cac:Item><cbc:Name>Item {i}</cbc:Name></cac:Item>\
                 <cac:Price><cbc:PriceAmount currencyID=\"EUR\">1.00</cbc:PriceAmount></cac:Price></cac:InvoiceLine>"
            )
        })
        .collect();
    let long = INVOICE_SK.replacen("<cac:InvoiceLine>", &format!("{lines}<cac:InvoiceLine>"), 1);
    let bytes =
        super::render_pdf_marked(long.as_bytes(), Some(super::SANDBOX_MARK)).expect("renders");
    let doc = Document::load_mem(&bytes).expect("parses");
    let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
    assert!(pages.len() >= 2, "{} pages", pages.len());
    for n in pages {
        let text = doc.extract_text(&[n]).expect("text");
        assert!(text.contains("SANDBOX"), "page {n}: {text}");
        assert!(text.contains("not a production document"), "page {n}");
        assert!(text.contains("nie je produkčný doklad"), "page {n}");
    }
    let plain = render(&long);
    assert!(!plain.text().contains("SANDBOX"));
}
