//! The VAT breakdown (a recap table, `Základ dane 20 %` / `DPH 20 %` label pairs, or rows
//! shaped like `20 %  740,00  148,00`) and the document totals.

use super::labels::{Hit, Key};
use super::{parse, pdf_source, Ctx, PATTERN};
use crate::convert::model::Source;
use crate::convert::model::{Draft, Field, VatRow};
use rust_decimal::Decimal;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Col {
    Category,
    Rate,
    Base,
    Tax,
    Gross,
}

fn classify(cell: &str) -> Option<Col> {
    use super::super::text::contains_word as has;
    let any = |words: &[&str]| words.iter().any(|w| has(cell, w));
    if any(&["kategoria", "kategorie", "category"]) {
        Some(Col::Category)
    } else if any(&["sadzba", "sazba", "rate", "satz", "%"]) {
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

/// UNCL 5305 VAT category codes.
pub(super) fn is_category(code: &str) -> bool {
    ["S", "Z", "E", "AE", "K", "G", "O", "L", "M"].contains(&code)
}

pub(super) struct Recap {
    pub rows: Vec<VatRow>,
    /// (line, segment) of the recap's header and cells.
    pub segments: Vec<(usize, usize)>,
}

const RECAP: f32 = 0.85;

/// A recap column: kind, extent, title.
type RecapCol<'a> = (Col, f32, f32, &'a str);

/// The recap header's columns and how many leading cells of the line it spans: the cells
/// up to the first one that is a label or holds an amount (totals often share the
/// header's line, to its right).
fn recap_header(line: &super::super::layout::Line) -> Option<(Vec<RecapCol<'_>>, usize)> {
    if line.segments.len() < 3 {
        return None;
    }
    let mut cols = Vec::new();
    let mut span = 0;
    for s in &line.segments {
        let amount = parse::numbers(&s.text).iter().any(|t| !t.percent);
        if amount || s.text.contains(':') {
            break;
        }
        span += 1;
        if let Some(c) = classify(&s.text) {
            cols.push((c, s.x0, s.x1, s.text.as_str()));
        }
    }
    let has = |k: Col| cols.iter().any(|c| c.0 == k);
    (has(Col::Rate) && has(Col::Base) && has(Col::Tax)).then_some((cols, span))
}

pub(super) fn find_recap(ctx: &Ctx) -> Recap {
    let mut recap = Recap {
        rows: Vec::new(),
        segments: Vec::new(),
    };
    for (hi, line) in ctx.lines.iter().enumerate() {
        if ctx.blocked.contains(&hi) {
            continue;
        }
        let Some((cols, span)) = recap_header(line) else {
            continue;
        };
        // The table's extent: cells starting right of it are other text (the totals).
        // Right-aligned amounts may start well left of their title.
        let left = cols.iter().map(|c| c.1).fold(f32::INFINITY, f32::min) - 40.0;
        let right = cols.iter().map(|c| c.2).fold(0.0, f32::max) + 6.0;
        let mut segments: Vec<(usize, usize)> = (0..span).map(|si| (hi, si)).collect();
        let mut rows = Vec::new();
        let mut prev_y = line.y;
        for (li, row) in ctx.lines.iter().enumerate().skip(hi + 1) {
            if row.page != line.page || prev_y - row.y > 3.0 * row.size || ctx.blocked.contains(&li)
            {
                break;
            }
            let cells: Vec<(usize, &super::super::layout::Segment)> = row
                .segments
                .iter()
                .enumerate()
                .filter(|(_, s)| s.x0 >= left && s.x0 < right)
                .collect();
            if cells.is_empty() {
                // Only text beside the table on this line.
                continue;
            }
            let mut category = None;
            let mut rate = None;
            let mut base = None;
            let mut tax = None;
            let mut numbers = 0;
            for &(_, s) in &cells {
                let overlap = |c: &RecapCol| (s.x1.min(c.2) - s.x0.max(c.1)).max(0.0);
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
                if col.0 == Col::Category {
                    let code = s.text.split_whitespace().next().unwrap_or("");
                    if col.0 == Col::Category && is_category(code) && category.is_none() {
                        let source = pdf_source(ctx.lines, li, method);
                        category = Some(Field::new(code.to_string(), RECAP, source));
                    }
                    continue;
                }
                let Some(tok) = parse::numbers(&s.text).into_iter().next() else {
                    continue;
                };
                let Some(value) = parse::to_decimal(&tok.raw, ctx.decimal) else {
                    continue;
                };
                numbers += 1;
                let field = Field::new(value, RECAP, pdf_source(ctx.lines, li, method));
                match col.0 {
                    Col::Rate => rate = Some(field),
                    Col::Base => base = Some(field),
                    Col::Tax => tax = Some(field),
                    Col::Gross | Col::Category => {}
                }
            }
            prev_y = row.y;
            if numbers == 0 {
                // A second header line, a category name or exemption reason in small print.
                segments.extend(cells.iter().map(|(si, _)| (li, *si)));
                continue;
            }
            // Category O carries no rate: its printed code stands for one.
            let keyed = rate.is_some() || category.is_some();
            match rate {
                rate if keyed && (base.is_some() || tax.is_some()) => {
                    let category = category.or_else(|| rate.as_ref().and_then(self::category));
                    rows.push(VatRow {
                        category,
                        rate,
                        taxable: base,
                        tax,
                    });
                    segments.extend(cells.iter().map(|(si, _)| (li, *si)));
                }
                _ => {
                    // A bare `Spolu` row closes the recap and belongs to it (its first
                    // amount is the base, not a grand total); a specific label is a total.
                    let labels: Vec<Key> = ctx
                        .hits
                        .iter()
                        .filter(|h| h.line == li && cells.iter().any(|(si, _)| *si == h.seg))
                        .map(|h| h.key)
                        .collect();
                    if !labels.is_empty() && labels.iter().all(|k| *k == Key::Total) {
                        segments.extend(cells.iter().map(|(si, _)| (li, *si)));
                    }
                    break;
                }
            }
        }
        if !rows.is_empty() {
            recap.rows = rows;
            recap.segments = segments;
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

/// Lines without a VAT category take it from the recap row of their rate, when exactly
/// one category has that rate (a 0 % line may be Z, E, AE, K, G or O: the recap says which).
pub(super) fn line_categories(draft: &mut Draft) {
    let rows = draft.vat_breakdown.clone();
    for line in &mut draft.lines {
        let Some(rate) = line.vat_rate.as_ref().map(|r| r.value) else {
            continue;
        };
        let mut codes: Vec<&str> = rows
            .iter()
            .filter(|r| r.rate.as_ref().is_some_and(|r| r.value == rate))
            .filter_map(|r| r.category.as_ref().map(|c| c.value.as_str()))
            .collect();
        codes.sort_unstable();
        codes.dedup();
        let current = line.vat_category.as_ref().map(|c| c.value.as_str());
        // A positive rate's `S` from the rate alone stands; a 0 % guess gives way.
        if let [code] = codes[..] {
            if current.is_none() || (rate.is_zero() && current != Some(code)) {
                line.vat_category = Some(Field::new(
                    code.to_string(),
                    0.8,
                    Source::Computed {
                        from: format!("VAT recap row for {} %", rate.normalize()),
                    },
                ));
            }
        }
    }
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
