//! Round trip: a draft written as UBL, rendered to PDF by invex itself and converted back
//! gives the same business terms. The yardstick for "the same" is what
//! [`invoice::read`] says the XML holds, so the renderer and the extractor are held
//! to one reading of the document.

use super::model::{DocumentKind, Draft, Field, Source};
use super::ubl::tests::{fatals, slovak_draft};
use super::{pdf, ubl};
use crate::invoice::{self as invoice, InvoiceView, Party as ViewParty};
use rust_decimal::Decimal;
use std::path::PathBuf;
use std::str::FromStr;

fn terms(d: &Draft) -> Vec<(String, String)> {
    d.fields().into_iter().map(|f| (f.path, f.value)).collect()
}

/// The UBL rendered by invex and read back by the PDF extractor, with the extracted text
/// for failure messages.
fn convert(name: &str, xml: &[u8]) -> (Draft, String) {
    let pdf_bytes = crate::artifacts::render_pdf(xml).unwrap_or_else(|e| panic!("{name}: {e}"));
    let extraction = pdf::extract(&pdf_bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(
        extraction.drafts.len(),
        1,
        "{name}: one invoice expected\n{}",
        extraction.text
    );
    (extraction.drafts[0].draft.clone(), extraction.text)
}

fn dec(s: &str) -> Option<Decimal> {
    Decimal::from_str(s.trim()).ok().map(|d| d.normalize())
}

/// Collects differences instead of stopping at the first, so one run shows them all.
#[derive(Default)]
struct Diff(Vec<String>);

impl Diff {
    fn text(&mut self, what: &str, want: Option<&str>, got: &Option<Field<String>>) {
        let got = got.as_ref().map(|f| f.value.as_str());
        if want.map(str::trim) != got {
            self.0.push(format!("{what}: want {want:?}, got {got:?}"));
        }
    }

    fn date(&mut self, what: &str, want: Option<&str>, got: &Option<Field<chrono::NaiveDate>>) {
        let got = got.as_ref().map(|f| f.value.format("%Y-%m-%d").to_string());
        if want != got.as_deref() {
            self.0.push(format!("{what}: want {want:?}, got {got:?}"));
        }
    }

    fn amount(&mut self, what: &str, want: Option<&str>, got: &Option<Field<Decimal>>) {
        let got = got.as_ref().map(|f| f.value.normalize());
        if want.and_then(dec) != got {
            self.0.push(format!("{what}: want {want:?}, got {got:?}"));
        }
    }

    fn count(&mut self, what: &str, want: usize, got: usize) -> bool {
        if want != got {
            self.0.push(format!("{what}: want {want}, got {got}"));
        }
        want == got
    }

    fn assert_empty(&self, name: &str, text: &str) {
        assert!(
            self.0.is_empty(),
            "{name}: lost or changed in the round trip:\n  {}\ntext:\n{text}",
            self.0.join("\n  ")
        );
    }
}

/// An account the rendition labels as an IBAN (country, check digits, alphanumerics).
fn iban_of(view: &InvoiceView) -> Option<String> {
    let account = view.payment_means.first()?.account_id.as_deref()?;
    let compact: String = account.chars().filter(|c| !c.is_whitespace()).collect();
    let b = compact.as_bytes();
    let shaped = (15..=34).contains(&b.len())
        && b[..2].iter().all(u8::is_ascii_uppercase)
        && b[2..4].iter().all(u8::is_ascii_digit)
        && b[4..].iter().all(u8::is_ascii_alphanumeric);
    shaped.then_some(compact)
}

fn compare_party(diff: &mut Diff, role: &str, want: &ViewParty, got: &super::model::Party) {
    diff.text(&format!("{role}.name"), want.name.as_deref(), &got.name);
    diff.text(
        &format!("{role}.vat_id"),
        want.vat_id.as_deref(),
        &got.vat_id,
    );
    let legal_id = want.legal_id.as_ref().map(|i| i.value.as_str());
    diff.text(&format!("{role}.ico (legal id)"), legal_id, &got.ico);
}

/// Compares everything a [`Draft`] can hold with what the XML states. Allowances and
/// charges, prepaid and rounding amounts have no place in a draft, so they are not
/// compared; the totals that include them are, as the document prints them.
fn compare(view: &InvoiceView, d: &Draft) -> Diff {
    let mut diff = Diff::default();
    let kind = match view.kind {
        invoice::DocumentKind::Invoice => DocumentKind::Invoice,
        invoice::DocumentKind::CreditNote => DocumentKind::CreditNote,
    };
    if kind != d.kind {
        diff.0
            .push(format!("kind: want {kind:?}, got {:?}", d.kind));
    }
    diff.text("number", view.number.as_deref(), &d.number);
    diff.date("issue_date", view.issue_date.as_deref(), &d.issue_date);
    diff.date("due_date", view.due_date.as_deref(), &d.due_date);
    diff.text("currency", view.currency.as_deref(), &d.currency);
    compare_party(&mut diff, "seller", &view.seller, &d.seller);
    compare_party(&mut diff, "buyer", &view.buyer, &d.buyer);
    diff.text("payment.iban", iban_of(view).as_deref(), &d.payment.iban);
    if diff.count("lines", view.lines.len(), d.lines.len()) {
        for (i, (want, got)) in view.lines.iter().zip(&d.lines).enumerate() {
            let at = |f: &str| format!("lines[{i}].{f}");
            diff.amount(&at("quantity"), want.quantity.as_deref(), &got.quantity);
            diff.amount(
                &at("unit_price"),
                want.unit_price.as_deref(),
                &got.unit_price,
            );
            diff.amount(
                &at("net_amount"),
                want.net_amount.as_deref(),
                &got.net_amount,
            );
            diff.amount(&at("vat_rate"), want.vat_rate.as_deref(), &got.vat_rate);
        }
    }
    if diff.count("VAT rows", view.vat_breakdown.len(), d.vat_breakdown.len()) {
        for (i, (want, got)) in view.vat_breakdown.iter().zip(&d.vat_breakdown).enumerate() {
            let at = |f: &str| format!("vat_breakdown[{i}].{f}");
            diff.text(&at("category"), want.category.as_deref(), &got.category);
            diff.amount(&at("rate"), want.rate.as_deref(), &got.rate);
            diff.amount(&at("taxable"), want.taxable.as_deref(), &got.taxable);
            diff.amount(&at("tax"), want.tax.as_deref(), &got.tax);
        }
    }
    let t = &view.totals;
    diff.amount(
        "totals.line_total",
        t.line_total.as_deref(),
        &d.totals.line_total,
    );
    diff.amount(
        "totals.tax_exclusive",
        t.tax_exclusive.as_deref(),
        &d.totals.tax_exclusive,
    );
    diff.amount("totals.tax", view.vat_total.as_deref(), &d.totals.tax);
    diff.amount(
        "totals.tax_inclusive",
        t.tax_inclusive.as_deref(),
        &d.totals.tax_inclusive,
    );
    diff.amount("totals.payable", t.payable.as_deref(), &d.totals.payable);
    diff
}

/// Paths the extractor may add to what the original draft stated: what the writer
/// computed and the renderer printed (totals, VAT rows, line amounts), line ids and the
/// default unit. Their values are checked against the XML by [`compare`].
fn derived(path: &str) -> bool {
    path.starts_with("totals.")
        || path.starts_with("vat_breakdown[")
        || (path.starts_with("lines[")
            && [".id", ".unit", ".net_amount"]
                .iter()
                .any(|f| path.ends_with(f)))
}

/// The original draft's terms all come back unchanged, nothing else is invented, and the
/// result agrees with the rendered XML.
fn assert_round_trip(name: &str, original: &Draft) -> Draft {
    let xml = ubl::write(original);
    let (back, text) = convert(name, &xml);
    let want = terms(original);
    let got = terms(&back);
    let missing: Vec<_> = want.iter().filter(|t| !got.contains(t)).collect();
    let invented: Vec<_> = got
        .iter()
        .filter(|(path, _)| !derived(path) && !want.iter().any(|(p, _)| p == path))
        .collect();
    assert!(
        missing.is_empty() && invented.is_empty(),
        "{name}: lost or changed: {missing:#?}\ninvented: {invented:#?}\ntext:\n{text}"
    );
    let view = invoice::read(&xml).unwrap_or_else(|e| panic!("{name}: {e}"));
    compare(&view, &back).assert_empty(name, &text);
    back
}

fn review() -> Source {
    Source::Review { by: "test".into() }
}

fn credit_note() -> Draft {
    let mut d = slovak_draft();
    d.kind = DocumentKind::CreditNote;
    for (path, value) in [
        ("number", "DB-2027-0003"),
        ("preceding_invoice", "FV-2026-0099"),
        ("lines[1].quantity", "1"),
    ] {
        d.set(path, value, review()).unwrap();
    }
    d
}

#[test]
fn a_pdf_rendered_by_invex_converts_back_to_the_same_business_terms() {
    assert_round_trip("slovak draft", &slovak_draft());
}

#[test]
fn a_credit_note_keeps_its_kind_and_preceding_invoice() {
    let back = assert_round_trip("credit note", &credit_note());
    assert_eq!(back.kind, DocumentKind::CreditNote);
    assert_eq!(
        back.preceding_invoice.as_ref().map(|f| f.value.as_str()),
        Some("FV-2026-0099")
    );
}

#[test]
fn forty_lines_over_several_pages_come_back_once_each_in_order() {
    let mut d = slovak_draft();
    d.lines.clear();
    let names = [
        "Konzultácie k zavedeniu e-fakturácie",
        "Kniha",
        "Licencia softvéru, ročná",
        "Školenie používateľov (2 hodiny)",
        "Doprava",
    ];
    for i in 0..40 {
        let at = |f: &str| format!("lines[{i}].{f}");
        let name = format!("{} č. {}", names[i % names.len()], i + 1);
        let quantity = (i % 7 + 1).to_string();
        let price = format!("{}.{:02}", 10 + i * 3, (i * 17) % 100);
        let (unit, rate) = if i % 3 == 0 {
            ("HUR", "23")
        } else {
            ("C62", "5")
        };
        for (path, value) in [
            (at("name"), name.as_str()),
            (at("quantity"), quantity.as_str()),
            (at("unit"), unit),
            (at("unit_price"), price.as_str()),
            (at("vat_category"), "S"),
            (at("vat_rate"), rate),
        ] {
            d.set(&path, value, review()).unwrap();
        }
    }
    let xml = ubl::write(&d);
    let pdf_bytes = crate::artifacts::render_pdf(&xml).unwrap();
    let pages = pdf::extract(&pdf_bytes).unwrap().pages;
    assert!(pages >= 2, "40 lines take {pages} page(s)");
    let back = assert_round_trip("40 lines", &d);
    let got: Vec<&str> = back
        .lines
        .iter()
        .map(|l| l.name.as_ref().map_or("", |f| f.value.as_str()))
        .collect();
    let want: Vec<&str> = d
        .lines
        .iter()
        .map(|l| l.name.as_ref().map_or("", |f| f.value.as_str()))
        .collect();
    assert_eq!(got, want);
    let ids: Vec<String> = back
        .lines
        .iter()
        .map(|l| l.id.as_ref().map_or(String::new(), |f| f.value.clone()))
        .collect();
    let expected: Vec<String> = (1..=40).map(|i| i.to_string()).collect();
    assert_eq!(ids, expected);
}

#[test]
fn converted_drafts_validate_under_peppol_bis3() {
    for (name, original) in [
        ("slovak draft", slovak_draft()),
        ("credit note", credit_note()),
    ] {
        let (back, text) = convert(name, &ubl::write(&original));
        let fatal = fatals(&ubl::write(&back), "peppol-bis3");
        assert!(fatal.is_empty(), "{name}: {fatal:#?}\ntext:\n{text}");
    }
}

/// The conformance corpus (`INVEX_CONFORMANCE`, else `../shared/conformance` next to the
/// repository). It was there when the tests were built (build.rs; else the tests that call
/// this are ignored), so its absence now fails.
pub(crate) fn corpus() -> PathBuf {
    let root = match std::env::var_os("INVEX_CONFORMANCE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance"),
    };
    let corpus = root.join("corpus");
    assert!(
        corpus.is_dir(),
        "the conformance corpus is missing at {}, though it was found when the tests were built",
        corpus.display()
    );
    corpus
}

/// Every UBL document in the corpus whose file name contains `example`.
pub(crate) fn examples(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            examples(&path, out);
        } else if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains("example") && n.to_ascii_lowercase().ends_with(".xml"))
        {
            out.push(path);
        }
    }
}

#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn corpus_examples_convert_back_to_what_their_xml_states() {
    let corpus = corpus();
    let mut files = Vec::new();
    examples(&corpus, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no examples under {}", corpus.display());
    let mut failures = Vec::new();
    for path in &files {
        let name = path
            .strip_prefix(&corpus)
            .unwrap_or(path)
            .display()
            .to_string();
        let xml = std::fs::read(path).unwrap();
        let view = invoice::read(&xml).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (back, text) = convert(&name, &xml);
        let diff = compare(&view, &back);
        if !diff.0.is_empty() {
            failures.push(format!(
                "{name}:\n  {}\n--- text ---\n{text}",
                diff.0.join("\n  ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} examples differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
