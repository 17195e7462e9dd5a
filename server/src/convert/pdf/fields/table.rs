//! The items table: a header row whose cells name columns (description, quantity, unit,
//! unit price, VAT %, amount), then rows below until totals, a gap or other text. Cells go
//! to columns by x position: numbers by overlap (they are usually right-aligned), text by
//! where it starts.

use super::super::layout::Segment;
use super::labels::{self, Key};
use super::{parse, pdf_source, Ctx};
use crate::convert::model::{Field, Line as ItemLine, Source};
use rust_decimal::Decimal;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Col {
    Index,
    Desc,
    Qty,
    Unit,
    Price,
    Rate,
    Net,
    Gross,
    VatAmount,
}

/// Header keywords by column, checked in this order so that `Jedn. cena bez DPH` is a
/// price and `Spolu bez DPH` an amount.
const KEYWORDS: &[(Col, &[&str])] = &[
    (
        Col::Gross,
        &[
            "s dph",
            "incl. vat",
            "including vat",
            "gross",
            "brutto",
            "s dph celkom",
        ],
    ),
    (
        Col::Price,
        &[
            "jedn. cena",
            "jednotkova cena",
            "j. cena",
            "cena/mj",
            "cena za mj",
            "cena za m.j.",
            "cena/ks",
            "unit price",
            "price",
            "einzelpreis",
            "preis",
            "cena",
        ],
    ),
    (
        Col::VatAmount,
        &[
            "suma dph",
            "dph eur",
            "dph €",
            "vat amount",
            "tax amount",
            "mwst betrag",
            "vyska dph",
        ],
    ),
    (
        Col::Rate,
        &[
            "dph %", "% dph", "sadzba", "sazba", "vat %", "vat rate", "tax %", "%",
        ],
    ),
    (
        Col::Qty,
        &[
            "mnozstvo", "mnozstvi", "mn.", "pocet", "qty", "qty.", "quantity", "menge", "anzahl",
        ],
    ),
    (
        Col::Unit,
        &["mj", "m.j.", "jednotka", "unit", "uom", "einheit", "j."],
    ),
    (
        Col::Net,
        &[
            "bez dph",
            "spolu",
            "celkom",
            "celkem",
            "suma",
            "amount",
            "total",
            "net",
            "line total",
            "betrag",
            "gesamt",
            "netto",
            "zaklad",
        ],
    ),
    // A bare `DPH` column holds the rate on most invoices; weaker than any amount title.
    (Col::Rate, &["dph", "vat", "mwst", "ust"]),
    (
        Col::Desc,
        &[
            "popis",
            "nazov",
            "nazev",
            "polozka",
            "oznacenie",
            "text",
            "description",
            "item",
            "product",
            "service",
            "bezeichnung",
            "artikel",
            "leistung",
            "predmet",
            "tovar",
            "sluzba",
        ],
    ),
    (
        Col::Index,
        &["c.", "#", "p.c.", "por.", "pos", "pos.", "no.", "nr."],
    ),
];

fn classify(cell: &str) -> Option<Col> {
    KEYWORDS
        .iter()
        .find(|(_, words)| {
            words
                .iter()
                .any(|w| super::super::text::contains_word(cell, w))
        })
        .map(|(c, _)| *c)
}

#[derive(Clone, Debug)]
pub(super) struct Column {
    pub kind: Col,
    pub x0: f32,
    pub x1: f32,
    pub title: String,
}

pub(super) struct Table {
    pub columns: Vec<Column>,
    /// Every line of the table, header included.
    pub lines: Vec<usize>,
    pub rows: Vec<Row>,
}

pub(super) struct Row {
    /// (column index, text, line).
    pub cells: Vec<(usize, String, usize)>,
}

/// The columns of a header line, if it is one.
fn header(ctx: &Ctx, li: usize) -> Option<Vec<Column>> {
    let line = &ctx.lines[li];
    if line.segments.len() < 3 {
        return None;
    }
    let mut cols = Vec::new();
    for s in &line.segments {
        // Header cells are titles, not amounts.
        if parse::numbers(&s.text)
            .iter()
            .any(|t| !t.percent && t.raw.len() > 1)
        {
            return None;
        }
        // Titles set close together merge into one segment (`Množstvo MJ`); one word per
        // column title splits them again by the words' own extents.
        let words: Vec<&Segment> = line
            .words
            .iter()
            .filter(|w| w.x0 >= s.x0 && w.x1 <= s.x1)
            .collect();
        let kinds: Vec<Option<Col>> = words.iter().map(|w| classify(&w.text)).collect();
        let split = words.len() == 2
            && kinds
                .iter()
                .all(|k| matches!(k, Some(Col::Qty | Col::Unit)))
            && kinds[0] != kinds[1];
        if split {
            for (w, kind) in words.iter().zip(kinds) {
                if let Some(kind) = kind {
                    cols.push(Column {
                        kind,
                        x0: w.x0,
                        x1: w.x1,
                        title: w.text.clone(),
                    });
                }
            }
        } else if let Some(kind) = classify(&s.text) {
            cols.push(Column {
                kind,
                x0: s.x0,
                x1: s.x1,
                title: s.text.clone(),
            });
        }
    }
    let has = |k: Col| cols.iter().any(|c| c.kind == k);
    let mut kinds: Vec<Col> = cols.iter().map(|c| c.kind).collect();
    kinds.dedup();
    let ok = cols.len() >= 3
        && (has(Col::Qty) || has(Col::Price))
        && (has(Col::Net) || has(Col::Gross))
        && kinds.len() >= 3;
    ok.then_some(cols)
}

fn is_numeric(text: &str) -> bool {
    let t = text.trim();
    let starts = t
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit() || c == '-' || c == '−');
    starts && !parse::numbers(t).is_empty()
}

/// Column for a cell: numbers by overlap (else the nearest), text by its left edge.
fn column_of(cols: &[Column], x0: f32, x1: f32, numeric: bool) -> usize {
    if numeric {
        let overlap = |c: &Column| (x1.min(c.x1) - x0.max(c.x0)).max(0.0);
        if let Some((i, _)) = cols
            .iter()
            .enumerate()
            .filter(|(_, c)| overlap(c) > 0.0)
            .max_by(|a, b| overlap(a.1).total_cmp(&overlap(b.1)))
        {
            return i;
        }
        let centre = (x0 + x1) / 2.0;
        return cols
            .iter()
            .enumerate()
            .min_by(|a, b| {
                let da = ((a.1.x0 + a.1.x1) / 2.0 - centre).abs();
                let db = ((b.1.x0 + b.1.x1) / 2.0 - centre).abs();
                da.total_cmp(&db)
            })
            .map_or(0, |(i, _)| i);
    }
    let mut best = 0;
    for (i, c) in cols.iter().enumerate() {
        if c.x0 - 4.0 <= x0 {
            best = i;
        }
    }
    best
}

pub(super) fn find(ctx: &Ctx) -> Vec<Table> {
    let mut tables = Vec::new();
    let mut li = 0;
    while li < ctx.lines.len() {
        let Some(columns) = header(ctx, li) else {
            li += 1;
            continue;
        };
        let (table, next) = rows(ctx, li, columns);
        li = next;
        tables.push(table);
    }
    tables
}

fn rows(ctx: &Ctx, head: usize, columns: Vec<Column>) -> (Table, usize) {
    let lines = ctx.lines;
    let mut table = Table {
        columns,
        lines: vec![head],
        rows: Vec::new(),
    };
    let mut prev = head;
    let mut li = head + 1;
    let mut row_size = 0.0_f32;
    while li < lines.len() {
        let line = &lines[li];
        let gap = lines[prev].y - line.y;
        if line.page != lines[head].page || gap > 3.0 * line.size.max(lines[prev].size) {
            break;
        }
        let ends = ctx.hits.iter().any(|h| {
            h.line == li
                && h.start <= 1
                && matches!(
                    h.key,
                    Key::NetTotal
                        | Key::VatTotal
                        | Key::GrossTotal
                        | Key::Payable
                        | Key::Total
                        | Key::LineTotal
                )
                && !is_numeric(&line.segments[h.seg].text)
        });
        // The next section (`Rekapitulácia DPH / VAT breakdown`, `Document allowances and
        // charges`) or a page footer ends the table as totals do.
        let section = (line
            .segments
            .first()
            .is_some_and(|s| labels::is_section(&s.text))
            && !line.segments.iter().any(|s| is_numeric(&s.text)))
            || line
                .segments
                .iter()
                .any(|s| labels::is_page_number(&s.text));
        if ends || section || header(ctx, li).is_some() {
            break;
        }
        let cells: Vec<(usize, String, usize)> = line
            .segments
            .iter()
            .map(|s| {
                (
                    column_of(&table.columns, s.x0, s.x1, is_numeric(&s.text)),
                    s.text.clone(),
                    li,
                )
            })
            .collect();
        let numeric = cells.iter().any(|(c, t, _)| {
            matches!(
                table.columns[*c].kind,
                Col::Qty | Col::Price | Col::Net | Col::Gross
            ) && is_numeric(t)
        });
        if numeric {
            table.rows.push(Row { cells });
            row_size = line.size;
        } else {
            let text_only = cells
                .iter()
                .all(|(c, _, _)| matches!(table.columns[*c].kind, Col::Desc | Col::Index));
            match table.rows.last_mut() {
                // A description that wraps onto the next line.
                // (`Label: value` lines under an item are details, not its name.)
                // Smaller print under an item is a detail (description, ids), not its name.
                Some(row)
                    if text_only
                        && gap <= 1.6 * line.size
                        && !line.text().contains(": ")
                        && line.size >= 0.95 * row_size =>
                {
                    row.cells.extend(cells)
                }
                Some(_) if text_only && gap <= 1.6 * line.size => {}
                // A second header line (units under titles) before the first row.
                None if li == head + 1 => {}
                _ => break,
            }
        }
        table.lines.push(li);
        prev = li;
        li += 1;
    }
    (table, li)
}

/// The table's rows as draft lines.
pub(super) fn lines(ctx: &Ctx, t: &Table, reverse_charge: bool) -> Vec<ItemLine> {
    const CELL: f32 = 0.85;
    let mut out = Vec::new();
    for row in &t.rows {
        let mut line = ItemLine::default();
        let field_text = |col: usize, text: &str, li: usize, conf: f32| {
            let method = format!("table column \"{}\"", t.columns[col].title);
            Field::new(text.to_string(), conf, pdf_source(ctx.lines, li, method))
        };
        let mut desc: Vec<(String, usize, usize)> = Vec::new();
        for (col, text, li) in &row.cells {
            let (col, li) = (*col, *li);
            let method = format!("table column \"{}\"", t.columns[col].title);
            let src = || pdf_source(ctx.lines, li, method.clone());
            let amount = || parse::amount(text, ctx.decimal);
            match t.columns[col].kind {
                Col::Desc => desc.push((text.clone(), col, li)),
                Col::Index => {
                    if is_numeric(text) {
                        line.id = Some(field_text(col, text.trim_end_matches('.'), li, CELL));
                    } else {
                        desc.push((text.clone(), col, li));
                    }
                }
                // `4 pcs` is one cell when the unit is printed close to the number; it
                // may then overlap the unit column more than the quantity column.
                Col::Qty | Col::Unit if is_numeric(text) => {
                    let toks = parse::numbers(text);
                    if let Some(q) = toks
                        .first()
                        .and_then(|t| parse::to_decimal(&t.raw, ctx.decimal))
                    {
                        line.quantity = Some(Field::new(q, CELL, src()));
                        let rest: String = text.chars().skip(toks[0].end).collect();
                        if !rest.trim().is_empty() && line.unit.is_none() {
                            line.unit = Some(unit(rest.trim(), src()));
                        }
                    }
                }
                Col::Qty => {}
                Col::Unit => line.unit = Some(unit(text, src())),
                Col::Price => line.unit_price = amount().map(|a| Field::new(a, CELL, src())),
                Col::Rate => {
                    line.vat_rate = amount()
                        .filter(|r| *r >= Decimal::ZERO && *r <= Decimal::from(50))
                        .map(|a| Field::new(a, CELL, src()));
                    // A category without a rate (`O`, not subject to VAT) printed instead.
                    if line.vat_rate.is_none() && super::vat::is_category(text.trim()) {
                        line.vat_category = Some(Field::new(text.trim().to_string(), CELL, src()));
                    }
                }
                Col::Net => line.net_amount = amount().map(|a| Field::new(a, CELL, src())),
                Col::Gross | Col::VatAmount => {}
            }
        }
        if let Some((_, col, li)) = desc.first() {
            let text = desc
                .iter()
                .map(|(t, _, _)| t.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            line.name = Some(field_text(*col, &text, *li, CELL));
        }
        if line.net_amount.is_none() {
            if let (Some(q), Some(p)) = (&line.quantity, &line.unit_price) {
                line.net_amount = Some(Field::new(
                    (q.value * p.value).round_dp(2),
                    q.confidence.min(p.confidence),
                    Source::Computed {
                        from: "quantity × unit price".into(),
                    },
                ));
            }
        }
        if let (Some(rate), None) = (&line.vat_rate, &line.vat_category) {
            let category = if rate.value > Decimal::ZERO {
                Some("S")
            } else if reverse_charge {
                Some("AE")
            } else {
                None
            };
            line.vat_category = category.map(|c| {
                Field::new(
                    c.to_string(),
                    if c == "S" { 0.8 } else { 0.6 },
                    Source::Computed {
                        from: "VAT rate".into(),
                    },
                )
            });
        }
        if line.name.is_some() || line.net_amount.is_some() {
            out.push(line);
        }
    }
    out
}

fn unit(text: &str, source: Source) -> Field<String> {
    match parse::unit_code(text) {
        Some(code) => Field::new(code.to_string(), 0.85, source),
        // Already a code (`C62`, `H87`) as e-invoice renderings print them.
        None if is_code(text.trim()) => Field::new(text.trim().to_string(), 0.8, source),
        // An unknown unit is kept as printed; it is not a valid code, so review it.
        None => Field::new(text.trim().to_string(), 0.4, source),
    }
}

fn is_code(s: &str) -> bool {
    (2..=3).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && s.chars().any(|c| c.is_ascii_uppercase())
}
