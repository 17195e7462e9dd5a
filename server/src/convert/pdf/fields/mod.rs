//! From lines in reading order to invoice drafts: labels, party blocks, the items table,
//! the VAT recap and totals, then cross-checks that adjust confidences.

mod checks;
mod labels;
mod parse;
mod parties;
mod table;
mod vat;

use super::layout::Line;
use super::PdfInvoice;
use crate::convert::model::{DocumentKind, Draft, Field, Source};
use labels::{Hit, Key, Value, Values};
use std::collections::HashSet;

/// A value right after its label (same segment or next segment on the line).
const LABEL_SAME_LINE: f32 = 0.9;
/// A value under its label.
const LABEL_BELOW: f32 = 0.85;
/// Found by its shape alone, anywhere.
const PATTERN: f32 = 0.6;

fn pdf_source(lines: &[Line], line: usize, method: String) -> Source {
    Source::Pdf {
        page: lines.get(line).map_or(1, |l| l.page),
        method,
    }
}

fn label_method(h: &Hit, v: &Value) -> String {
    if v.below {
        format!("label \"{}\" (value below)", h.label)
    } else {
        format!("label \"{}\"", h.label)
    }
}

fn label_confidence(v: &Value) -> f32 {
    if v.below {
        LABEL_BELOW
    } else {
        LABEL_SAME_LINE
    }
}

/// Everything the field finders share for one invoice.
struct Ctx<'a> {
    lines: &'a [Line],
    hits: Vec<Hit>,
    decimal: char,
    /// Lines inside tables (header and rows): their labels are column titles.
    blocked: HashSet<usize>,
    /// Segments of a table that shares its lines with other text (the VAT recap beside
    /// the totals): only these, not their lines, are out of bounds for labels.
    blocked_segs: HashSet<(usize, usize)>,
}

impl Ctx<'_> {
    /// Each hit of `key` outside tables, with its value, in reading order.
    fn values(&self, key: Key) -> Vec<(Hit, Value)> {
        let blocked = |l: usize| self.blocked.contains(&l);
        let finder = Values {
            lines: self.lines,
            hits: &self.hits,
            blocked: &blocked,
        };
        self.hits
            .iter()
            .filter(|h| {
                h.key == key
                    && !self.blocked.contains(&h.line)
                    && !self.blocked_segs.contains(&(h.line, h.seg))
            })
            .filter_map(|h| finder.of(h).map(|v| (h.clone(), v)))
            .collect()
    }

    /// The first value of `key` that `parse` accepts, as a field.
    fn first<T>(&self, key: Key, parse: impl Fn(&str) -> Option<T>) -> Option<(Field<T>, Hit)> {
        self.values(key).into_iter().find_map(|(h, v)| {
            let value = parse(&v.text)?;
            let source = pdf_source(self.lines, v.line, label_method(&h, &v));
            Some((Field::new(value, label_confidence(&v), source), h))
        })
    }
}

/// An invoice number as printed: the first token with a digit.
fn invoice_number(s: &str) -> Option<String> {
    let token = s
        .split_whitespace()
        .next()?
        .trim_matches(|c: char| ":#,;".contains(c))
        .trim_end_matches('.');
    (token.chars().any(|c| c.is_ascii_digit()) && token.chars().count() <= 40)
        .then(|| token.to_string())
}

/// Pages grouped by invoice: a page whose number label shows a different number than the
/// invoice in progress starts a new one.
fn split_invoices(lines: &[Line]) -> Vec<std::ops::Range<usize>> {
    let hits = labels::find_hits(lines);
    let blocked = |_: usize| false;
    let finder = Values {
        lines,
        hits: &hits,
        blocked: &blocked,
    };
    let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
    let mut current: Option<String> = None;
    let mut start = 0;
    let mut page = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.page == page {
            continue;
        }
        page = line.page;
        let number = hits
            .iter()
            .filter(|h| {
                matches!(h.key, Key::Number | Key::CreditNumber) && lines[h.line].page == page
            })
            .find_map(|h| finder.of(h).and_then(|v| invoice_number(&v.text)));
        if let Some(n) = number {
            if current.as_ref().is_some_and(|c| *c != n) {
                groups.push(start..i);
                start = i;
            }
            current = Some(n);
        }
    }
    groups.push(start..lines.len());
    groups
}

pub(super) fn invoices(lines: &[Line]) -> Vec<PdfInvoice> {
    split_invoices(lines)
        .into_iter()
        .map(|range| {
            let mut inv = invoice(&lines[range.clone()]);
            // Sources name pages, which the slice keeps; nothing to shift.
            if range.start > 0 {
                inv.notes.push(format!(
                    "one of several invoices in the PDF (starting on page {})",
                    lines[range.start].page
                ));
            }
            inv
        })
        .collect()
}

fn invoice(lines: &[Line]) -> PdfInvoice {
    let all_text: String = lines.iter().map(|l| l.text() + "\n").collect();
    let hits = labels::find_hits(lines);
    let decimal = parse::decimal_separator(&all_text);
    let mut ctx = Ctx {
        lines,
        hits,
        decimal,
        blocked: HashSet::new(),
        blocked_segs: HashSet::new(),
    };
    let mut draft = Draft::default();
    let mut notes = Vec::new();

    let items = table::find(&ctx);
    ctx.blocked
        .extend(items.iter().flat_map(|t| t.lines.iter().copied()));
    let recap = vat::find_recap(&ctx);
    ctx.blocked_segs.extend(recap.segments.iter().copied());

    header(&ctx, &mut draft, &all_text);
    parties::fill(&ctx, &mut draft);
    payment(&ctx, &mut draft);

    let reverse_charge = [
        "prenesenie daňovej povinnosti",
        "reverse charge",
        "steuerschuldnerschaft des leistungsempfängers",
        "přenesení daňové povinnosti",
    ]
    .iter()
    .any(|p| super::text::fold_string(&all_text).contains(&super::text::fold_string(p)));
    for t in &items {
        draft.lines.extend(table::lines(&ctx, t, reverse_charge));
    }
    if draft.lines.is_empty() {
        notes.push("no table of invoice lines was found (a header row with columns such as description, quantity, unit price, amount)".into());
    }
    draft.vat_breakdown = recap.rows;
    if draft.vat_breakdown.is_empty() {
        draft.vat_breakdown = vat::label_rows(&ctx);
    }
    if draft.vat_breakdown.is_empty() {
        draft.vat_breakdown = vat::pattern_rows(&ctx);
    }
    if draft.vat_breakdown.is_empty() {
        notes.push("no VAT breakdown was found".into());
    }
    vat::line_categories(&mut draft);
    vat::totals(&ctx, &mut draft);
    currency(&ctx, &mut draft, &all_text);

    let cross_checks = checks::apply(&mut draft);
    for (what, missing) in [
        ("invoice number", draft.number.is_none()),
        ("issue date", draft.issue_date.is_none()),
        ("seller name", draft.seller.name.is_none()),
        ("buyer name", draft.buyer.name.is_none()),
    ] {
        if missing {
            notes.push(format!("the {what} was not found"));
        }
    }
    PdfInvoice {
        draft,
        cross_checks,
        notes,
    }
}

fn header(ctx: &Ctx, draft: &mut Draft, all_text: &str) {
    if let Some((f, _)) = ctx.first(Key::CreditNumber, invoice_number) {
        draft.kind = DocumentKind::CreditNote;
        draft.number = Some(f);
    } else if let Some((f, _)) = ctx.first(Key::Number, invoice_number) {
        draft.number = Some(f);
    } else {
        draft.number = title_number(ctx);
    }
    let head: String =
        super::text::fold_string(&all_text.lines().take(12).collect::<Vec<_>>().join(" "));
    if [
        "dobropis",
        "credit note",
        "gutschrift",
        "opravny danovy doklad",
    ]
    .iter()
    .any(|w| head.contains(w))
    {
        draft.kind = DocumentKind::CreditNote;
    }
    draft.issue_date = ctx.first(Key::IssueDate, parse::date).map(|(f, _)| f);
    draft.due_date = ctx.first(Key::DueDate, parse::date).map(|(f, _)| f);
    // A delivery date stands for the tax point date when that is not printed apart
    // (Slovak `Dátum dodania` is the DUZP on most invoices).
    draft.tax_point_date = ctx
        .first(Key::TaxPointDate, parse::date)
        .or_else(|| ctx.first(Key::DeliveryDate, parse::date))
        .map(|(f, _)| f);
    draft.order_reference = ctx.first(Key::OrderRef, invoice_number).map(|(f, _)| f);
    draft.preceding_invoice = ctx.first(Key::Preceding, invoice_number).map(|(f, _)| f);
    draft.buyer_reference = ctx
        .first(Key::BuyerRef, |s| {
            Some(s.trim().to_string()).filter(|s| !s.is_empty())
        })
        .map(|(f, _)| f);
}

/// `FAKTÚRA 2027001` / `Invoice INV-7` in a title, without a number label.
fn title_number(ctx: &Ctx) -> Option<Field<String>> {
    for (i, line) in ctx.lines.iter().enumerate().take(15) {
        let text = line.text();
        let words: Vec<&str> = text.split_whitespace().collect();
        for pair in words.windows(2) {
            let word = super::text::fold_string(pair[0]);
            if ["faktura", "invoice", "rechnung", "dobropis"].contains(&word.as_str()) {
                if let Some(n) = invoice_number(pair[1]) {
                    let source =
                        pdf_source(ctx.lines, i, format!("pattern title \"{} {}\"", pair[0], n));
                    return Some(Field::new(n, PATTERN, source));
                }
            }
        }
    }
    None
}

fn payment(ctx: &Ctx, draft: &mut Draft) {
    let iban = |s: &str| {
        let compact: String = s
            .chars()
            .filter(|c| !c.is_whitespace())
            .take_while(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_uppercase())
            .collect();
        let len = invex_engine::checks::iban_length(compact.get(..2)?)?;
        compact
            .get(..len.min(compact.len()))
            .map(str::to_string)
            .filter(|s| s.len() >= 15)
    };
    draft.payment.iban = ctx.first(Key::Iban, iban).map(|(f, _)| f).or_else(|| {
        // An IBAN-shaped string without a label.
        ctx.lines.iter().enumerate().find_map(|(i, line)| {
            line.segments.iter().find_map(|s| {
                let words: Vec<&str> = s.text.split_whitespace().collect();
                (0..words.len()).find_map(|w| {
                    let first = words[w];
                    let shaped = first.len() >= 4
                        && first.chars().take(2).all(|c| c.is_ascii_uppercase())
                        && first.chars().skip(2).take(2).all(|c| c.is_ascii_digit());
                    if !shaped {
                        return None;
                    }
                    let candidate = iban(&words[w..].join(" "))?;
                    invex_engine::checks::iban(&candidate).then(|| {
                        Field::new(
                            candidate,
                            PATTERN,
                            pdf_source(ctx.lines, i, "pattern IBAN".into()),
                        )
                    })
                })
            })
        })
    });
    let bic = |s: &str| {
        let token = s.split_whitespace().next()?.to_ascii_uppercase();
        let shaped = (token.len() == 8 || token.len() == 11)
            && token.chars().all(|c| c.is_ascii_alphanumeric());
        shaped.then_some(token)
    };
    draft.payment.bic = ctx.first(Key::Bic, bic).map(|(f, _)| f);
    let symbol = |s: &str| {
        let token = s.split_whitespace().next()?;
        (token.chars().all(|c| c.is_ascii_digit()) && token.len() <= 10).then(|| token.to_string())
    };
    draft.payment.reference = ctx.first(Key::VarSymbol, symbol).map(|(f, _)| f);
    // A printed UNCL 4461 code (`30 (credit transfer)`), else credit transfer for an IBAN.
    let means = |s: &str| {
        let token = s.split_whitespace().next()?;
        let digits = token.len() <= 3 && token.chars().all(|c| c.is_ascii_digit());
        (digits || token == "ZZZ").then(|| token.to_string())
    };
    draft.payment.means_code = ctx.first(Key::MeansCode, means).map(|(f, _)| f);
    if let (None, Some(iban)) = (&draft.payment.means_code, &draft.payment.iban) {
        // An account on an invoice means a credit transfer; the code does not change where
        // the money goes, so it does not hold the invoice for review.
        draft.payment.means_code = Some(Field::new(
            "30".to_string(),
            0.85_f32.min(iban.confidence),
            Source::Computed {
                from: "payment.iban (credit transfer)".into(),
            },
        ));
    }
}

fn currency(ctx: &Ctx, draft: &mut Draft, all_text: &str) {
    if let Some((f, _)) = ctx.first(Key::Currency, |s| parse::currency(s).map(str::to_string)) {
        draft.currency = Some(f);
        return;
    }
    // The totals' own currency marks, then any code or symbol in the text.
    let total_texts: Vec<(Hit, Value)> = [Key::Payable, Key::GrossTotal, Key::NetTotal, Key::Total]
        .iter()
        .flat_map(|k| ctx.values(*k))
        .collect();
    for (h, v) in total_texts {
        if let Some(code) = parse::currency(&v.text) {
            let source = pdf_source(ctx.lines, v.line, format!("currency of \"{}\"", h.label));
            draft.currency = Some(Field::new(code.to_string(), 0.8, source));
            return;
        }
    }
    let mut codes: Vec<&str> = all_text.lines().filter_map(parse::currency).collect();
    codes.sort_unstable();
    codes.dedup();
    if let [code] = codes[..] {
        let line = ctx
            .lines
            .iter()
            .position(|l| parse::currency(&l.text()) == Some(code))
            .unwrap_or(0);
        draft.currency = Some(Field::new(
            code.to_string(),
            0.7,
            pdf_source(ctx.lines, line, format!("pattern currency {code}")),
        ));
    }
}
