//! The VAT breakdown (a recap table, `Základ dane 20 %` / `DPH 20 %` label pairs, or rows
//! shaped like `20 %  740,00  148,00`) and the document totals.

use super::labels::{Hit, Key};
use super::{parse, pdf_source, Ctx, PATTERN};
use crate::convert::model::Source;
use crate::convert::model::{Draft, Field, VatRow};
use rust_decimal::Decimal;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Col {
    Rate,
    Base,
    Tax,
    Gross,
}

fn classify(cell: &str) -> Option<Col> {
    use super::super::text::contains_word as has;
    let any = |words: &[&str]| words.iter().any(|w| has(cell, w));
    if any(&["sadzba", "sazba", "rate", "satz", "%"]) {
        Some(Col::Rate)
    } else if any(&[
        "zaklad",
        "zaklad dane",
        "base",
        "taxable",
        "bez dph",
        "net",
        "netto",
        "excl",
    ]) {
        Some(Col::Base)
    } else if any(&[
        "s dph", "spolu", "celkom", "celkem", "total", "incl", "brutto", "gross",
    ]) {
        Some(Col::Gross)
    } else if any(&["dph", "vat", "tax", "dan", "mwst", "ust"]) {
        Some(Col::Tax)
    } else {
        None
    }
}

pub(super) struct Recap {
    pub rows: Vec<VatRow>,
    pub lines: Vec<usize>,
}

const RECAP: f32 = 0.85;

pub(super) fn find_recap(ctx: &Ctx) -> Recap {
    let mut recap = Recap {
        rows: Vec::new(),
        lines: Vec::new(),
    };
    for (hi, line) in ctx.lines.iter().enumerate() {
        if ctx.blocked.contains(&hi) || line.segments.len() < 3 {
            continue;
        }
        let cols: Vec<(Col, f32, f32, &str)> = line
            .segments
            .iter()
            .filter_map(|s| classify(&s.text).map(|c| (c, s.x0, s.x1, s.text.as_str())))
            .collect();
        let has = |k: Col| cols.iter().any(|c| c.0 == k);
        let numbers_in_header = line
            .segments
            .iter()
            .any(|s| parse::numbers(&s.text).iter().any(|t| !t.percent));
        if numbers_in_header || !(has(Col::Rate) && has(Col::Base) && has(Col::Tax)) {
            continue;
        }
        recap.lines.push(hi);
        let mut prev_y = line.y;
        for (li, row) in ctx.lines.iter().enumerate().skip(hi + 1) {
            if row.page != line.page || prev_y - row.y > 3.0 * row.size || ctx.blocked.contains(&li)
            {
                break;
            }
            let mut rate = None;
            let mut base = None;
            let mut tax = None;
            let mut numbers = 0;
            for s in &row.segments {
                let Some(tok) = parse::numbers(&s.text).into_iter().next() else {
                    continue;
                };
                let Some(value) = parse::to_decimal(&tok.raw, ctx.decimal) else {
                    continue;
                };
                numbers += 1;
                let overlap = |c: &(Col, f32, f32, &str)| (s.x1.min(c.2) - s.x0.max(c.1)).max(0.0);
                let centre = (s.x0 + s.x1) / 2.0;
                let col = cols.iter().max_by(|a, b| {
                    overlap(a).total_cmp(&overlap(b)).then(
                        (((b.1 + b.2) / 2.0) - centre)
                            .abs()
                            .total_cmp(&(((a.1 + a.2) / 2.0) - centre).abs()),
                    )
                });
                let Some(col) = col else { continue };
                let method = format!("VAT recap column \"{}\"", col.3);
                let field = Field::new(value, RECAP, pdf_source(ctx.lines, li, method));
                match col.0 {
                    Col::Rate => rate = Some(field),
                    Col::Base => base = Some(field),
                    Col::Tax => tax = Some(field),
                    Col::Gross => {}
                }
            }
            if numbers == 0 {
                break;
            }
            match rate {
                Some(rate) if base.is_some() || tax.is_some() => {
                    recap.rows.push(VatRow {
                        category: category(&rate),
                        rate: Some(rate),
                        taxable: base,
                        tax,
                    });
                    recap.lines.push(li);
                    prev_y = row.y;
                }
                _ => {
                    // A bare `Spolu` row closes the recap and belongs to it (its first
                    // amount is the base, not a grand total); a specific label is a total.
                    let labels: Vec<Key> = ctx
                        .hits
                        .iter()
                        .filter(|h| h.line == li)
                        .map(|h| h.key)
                        .collect();
                    if !labels.is_empty() && labels.iter().all(|k| *k == Key::Total) {
                        recap.lines.push(li);
                    }
                    break;
                }
            }
        }
        if !recap.rows.is_empty() {
            break;
        }
    }
    recap
}

fn category(rate: &Field<Decimal>) -> Option<Field<String>> {
    (rate.value > Decimal::ZERO).then(|| {
        Field::new(
            "S".to_string(),
            0.8,
            Source::Computed {
                from: "VAT rate".into(),
            },
        )
    })
}

/// `Základ dane 20 %: 740,00` and `DPH 20 %: 148,00` on lines of their own.
pub(super) fn label_rows(ctx: &Ctx) -> Vec<VatRow> {
    let mut rows: Vec<VatRow> = Vec::new();
    for (li, line) in ctx.lines.iter().enumerate() {
        if ctx.blocked.contains(&li) {
            continue;
        }
        let text = line.text();
        let folded = super::super::text::fold_string(&text);
        let is_base = ["zaklad dane", "zaklad", "base", "taxable amount", "netto"]
            .iter()
            .any(|p| folded.starts_with(p));
        let is_tax = ["dph", "vat", "tax", "mwst", "ust"]
            .iter()
            .any(|p| folded.starts_with(p));
        if !is_base && !is_tax {
            continue;
        }
        let toks = parse::numbers(&text);
        let Some(rate_tok) = toks.iter().find(|t| t.percent) else {
            continue;
        };
        let Some(value) = toks
            .iter()
            .filter(|t| !t.percent && t.start > rate_tok.end)
            .find_map(|t| parse::to_decimal(&t.raw, ctx.decimal))
        else {
            continue;
        };
        let Some(rate) = parse::to_decimal(&rate_tok.raw, ctx.decimal) else {
            continue;
        };
        let label: String = text.chars().take(rate_tok.end + 1).collect();
        let field = Field::new(
            value,
            super::LABEL_SAME_LINE,
            pdf_source(ctx.lines, li, format!("label \"{}\"", label.trim())),
        );
        let row = match rows
            .iter_mut()
            .position(|r| r.rate.as_ref().is_some_and(|r| r.value == rate))
        {
            Some(i) => &mut rows[i],
            None => {
                let rate_field = Field::new(
                    rate,
                    super::LABEL_SAME_LINE,
                    pdf_source(ctx.lines, li, format!("label \"{}\"", label.trim())),
                );
                rows.push(VatRow {
                    category: category(&rate_field),
                    rate: Some(rate_field),
                    ..VatRow::default()
                });
                let last = rows.len() - 1;
                &mut rows[last]
            }
        };
        if is_base {
            row.taxable.get_or_insert(field);
        } else {
            row.tax.get_or_insert(field);
        }
    }
    rows
}

/// Rows shaped like `20 %  740,00  148,00` anywhere outside tables, kept only when the
/// arithmetic agrees (base × rate = tax): the shape alone says little.
pub(super) fn pattern_rows(ctx: &Ctx) -> Vec<VatRow> {
    let mut rows = Vec::new();
    for (li, line) in ctx.lines.iter().enumerate() {
        if ctx.blocked.contains(&li) {
            continue;
        }
        let toks = parse::numbers(&line.text());
        let Some(rate_tok) = toks.iter().find(|t| t.percent) else {
            continue;
        };
        let amounts: Vec<Decimal> = toks
            .iter()
            .filter(|t| !t.percent && t.start > rate_tok.start)
            .filter_map(|t| parse::to_decimal(&t.raw, ctx.decimal))
            .collect();
        let (Some(rate), [base, tax, ..]) =
            (parse::to_decimal(&rate_tok.raw, ctx.decimal), &amounts[..])
        else {
            continue;
        };
        if (base * rate / Decimal::from(100)).round_dp(2) - tax != Decimal::ZERO {
            continue;
        }
        let src = || pdf_source(ctx.lines, li, "pattern VAT row (rate, base, tax)".into());
        let rate = Field::new(rate, PATTERN, src());
        rows.push(VatRow {
            category: category(&rate),
            rate: Some(rate),
            taxable: Some(Field::new(*base, PATTERN, src())),
            tax: Some(Field::new(*tax, PATTERN, src())),
        });
    }
    rows
}

pub(super) fn totals(ctx: &Ctx, draft: &mut Draft) {
    let amount = |s: &str| parse::amount(s, ctx.decimal);
    let get = |key: Key| ctx.first(key, amount);
    draft.totals.line_total = get(Key::LineTotal).map(|(f, _)| f);
    draft.totals.tax_exclusive = get(Key::NetTotal).map(|(f, _)| f);
    draft.totals.tax = get(Key::VatTotal).map(|(f, _)| f);
    draft.totals.tax_inclusive = get(Key::GrossTotal).map(|(f, _)| f);
    draft.totals.payable = get(Key::Payable).map(|(f, _)| f);
    if draft.totals.tax_inclusive.is_none() {
        // A bare `Total` / `Spolu` outside tables: the grand total on most layouts.
        let generic: Option<(Field<Decimal>, Hit)> = get(Key::Total);
        draft.totals.tax_inclusive = generic.map(|(mut f, _)| {
            f.confidence = f.confidence.min(0.75);
            f
        });
    }
}
