//! Rows to invoices: rows are grouped by invoice number, invoice-level columns are read
//! from every row of the group (and must agree), each row with line data becomes a line,
//! and what the file leaves out is defaulted or computed, each marked as such.

use super::codes::{self, fold};
use super::fields::{self, FieldKind, Slot, Value, KIND_PATH, LINE_PREFIX};
use super::mapping::{DefaultValue, Mapping};
use super::table::{Cell, Row};
use super::values::{self, Doubt};
use super::{CellIssue, ExtractedInvoice, Limits, Severity, TabularError};
use crate::convert::model::{Draft, Field, Line, Source};
use rust_decimal::{Decimal, RoundingStrategy};
use std::collections::HashMap;

/// Confidence of an identifier or code that failed its check (kept for the reviewer).
pub const INVALID: f32 = crate::convert::model::FAILED_CHECK;
/// Confidence of a value that other rows of the same invoice contradict, or of line
/// amounts that do not add up.
pub const CONTRADICTED: f32 = 0.5;
/// Built-in fallbacks when neither the file nor the mapping says.
pub const DEFAULT_UNIT: (&str, f32) = ("C62", 0.9);
pub const DEFAULT_CURRENCY: (&str, f32) = ("EUR", 0.7);
pub const DEFAULT_QUANTITY: f32 = 0.8;
/// A quantity column that is present but blank on a row.
pub const BLANK_QUANTITY: f32 = 0.5;
/// An account on an invoice means a credit transfer; 30 or 58 does not change where the
/// money goes, so the default does not hold the invoice for review.
pub const DEFAULT_MEANS: (&str, f32) = ("58", 0.85);
/// Largest gap between the stated line amount and quantity × price.
const TOLERANCE: Decimal = Decimal::from_parts(1, 0, 0, false, 2);

/// How the header row maps onto the draft.
pub struct Context<'a> {
    pub mapping: &'a Mapping,
    pub sheet: Option<&'a str>,
    pub headers: &'a [String],
    pub columns: &'a [Option<String>],
}

impl Context<'_> {
    fn source(&self, row: u32, column: usize) -> Source {
        Source::Cell {
            sheet: self.sheet.map(str::to_string),
            row,
            column: self.header(column),
        }
    }

    fn header(&self, column: usize) -> String {
        self.headers.get(column).cloned().unwrap_or_default()
    }

    fn issue(
        &self,
        row: u32,
        column: usize,
        field: &str,
        message: String,
        severity: Severity,
    ) -> CellIssue {
        CellIssue {
            row,
            column: self.header(column),
            field: field.to_string(),
            message,
            severity,
        }
    }

    fn column_of(&self, path: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.as_deref() == Some(path))
    }

    fn default_source(&self, path: &str) -> Source {
        Source::Default {
            reason: format!("mapping `{}` default for {path}", self.mapping.id),
        }
    }
}

/// One cell read as its field's type.
struct Reading {
    value: Value,
    confidence: f32,
    /// The value failed its check (kept, with low confidence).
    problem: Option<String>,
    /// The value could be read another way.
    ambiguity: Option<String>,
}

fn read(cell: &Cell, kind: FieldKind, mapping: &Mapping) -> Result<Reading, String> {
    let from = |value: Value, doubt: Doubt| Reading {
        confidence: doubt.confidence(),
        ambiguity: match doubt {
            Doubt::Ambiguous(note) => Some(note),
            _ => None,
        },
        value,
        problem: None,
    };
    match kind {
        FieldKind::Text(text_kind) => {
            let checked = codes::check(text_kind, &cell.text());
            let mut reading = from(Value::Text(checked.value), checked.doubt);
            if checked.problem.is_some() {
                reading.confidence = INVALID;
                reading.problem = checked.problem;
            }
            Ok(reading)
        }
        FieldKind::Amount => {
            let p = amount(cell, mapping)?;
            Ok(from(Value::Amount(p.value), p.doubt))
        }
        FieldKind::Rate => {
            let p = amount(cell, mapping)?;
            let (rate, doubt) = if p.value > Decimal::ZERO && p.value < Decimal::ONE {
                // Excel stores a cell shown as 23 % as 0.23.
                let rate = (p.value * Decimal::ONE_HUNDRED).normalize();
                let note = format!("VAT rate {} read as {rate} %", p.value);
                (rate, p.doubt.and(Doubt::Interpreted(note)))
            } else {
                (p.value, p.doubt)
            };
            let mut reading = from(Value::Amount(rate), doubt);
            if rate < Decimal::ZERO || rate > Decimal::ONE_HUNDRED {
                reading.confidence = INVALID;
                reading.problem = Some(format!(
                    "VAT rate {rate} is not a percentage between 0 and 100"
                ));
            }
            Ok(reading)
        }
        FieldKind::Date => {
            let p = match cell {
                Cell::Date(d) => values::Parsed::clean(*d),
                Cell::Number(n) => {
                    let d = values::date_from_serial(*n)
                        .ok_or_else(|| format!("{} is a number, not a date", cell.text()))?;
                    let note = format!("{} read as an Excel serial date ({d})", cell.text());
                    values::Parsed {
                        value: d,
                        doubt: Doubt::Interpreted(note),
                    }
                }
                _ => values::parse_date(&cell.text(), &mapping.date_formats, mapping.date_order)?,
            };
            Ok(from(Value::Date(p.value), p.doubt))
        }
        FieldKind::DocKind => {
            let p = codes::kind(&cell.text())?;
            Ok(from(Value::Kind(p.value), p.doubt))
        }
    }
}

fn amount(cell: &Cell, mapping: &Mapping) -> Result<values::Parsed<Decimal>, String> {
    match cell {
        Cell::Number(n) => values::number_from_f64(*n).map(values::Parsed::clean),
        Cell::Date(d) => Err(format!("{d} is a date, not a number")),
        _ => values::parse_number(&cell.text(), mapping.decimal_separator),
    }
}

/// Rows of one invoice, in file order.
struct Group {
    rows: Vec<Row>,
}

/// Rows to invoices, one row at a time, so that the reading can stop at the invoice
/// limit before any row after it is read, and only the rows of the invoices kept are
/// held. The header is the `header`-th non-empty row; the rows up to it are skipped.
pub struct Grouper<'c> {
    ctx: &'c Context<'c>,
    limits: &'c Limits,
    header: usize,
    seen: usize,
    number_col: Option<usize>,
    header_key: Vec<String>,
    groups: Vec<Group>,
    index: HashMap<String, usize>,
    orphans: Vec<CellIssue>,
    previous: Option<usize>,
    cells: usize,
}

impl<'c> Grouper<'c> {
    pub fn new(header: usize, ctx: &'c Context<'c>, limits: &'c Limits) -> Self {
        Grouper {
            ctx,
            limits,
            header,
            seen: 0,
            number_col: ctx.column_of("number"),
            header_key: ctx.headers.iter().map(|h| fold(h)).collect(),
            groups: Vec::new(),
            index: HashMap::new(),
            orphans: Vec::new(),
            previous: None,
            cells: 0,
        }
    }

    /// Take the next non-empty row of the table.
    pub fn push(&mut self, row: Row) -> Result<(), TabularError> {
        self.seen += 1;
        if self.seen <= self.header + 1 {
            return Ok(());
        }
        let Some(number_col) = self.number_col else {
            return Ok(());
        };
        // Some exports repeat the header on every printed page.
        let repeats_header = row
            .cells
            .iter()
            .zip(&self.header_key)
            .all(|(c, h)| c.is_empty() || fold(&c.text()) == *h);
        if repeats_header {
            return Ok(());
        }
        let number = row.cell(number_col).text();
        let at = if number.is_empty() {
            // A row without a number continues the invoice of the row above it.
            self.previous
        } else if let Some(&at) = self.index.get(&number) {
            Some(at)
        } else {
            if self.groups.len() >= self.limits.max_invoices {
                return Err(TabularError::TooManyInvoices {
                    limit: self.limits.max_invoices,
                });
            }
            self.groups.push(Group { rows: Vec::new() });
            self.index.insert(number, self.groups.len() - 1);
            Some(self.groups.len() - 1)
        };
        self.previous = at;
        match at.and_then(|i| self.groups.get_mut(i)) {
            Some(group) => {
                self.cells += row.cells.len();
                if self.cells > self.limits.max_cells {
                    return Err(TabularError::limit(
                        "max_cells",
                        self.limits.max_cells,
                        "the invoices' rows hold more cells than allowed",
                    ));
                }
                group.rows.push(row);
            }
            None => self.orphans.push(self.ctx.issue(
                row.number,
                number_col,
                "number",
                "the row has no invoice number and no invoice above it; it was skipped".into(),
                Severity::Error,
            )),
        }
        Ok(())
    }

    /// The invoices of the rows taken, and the issues of rows that belong to none.
    pub fn finish(self) -> (Vec<ExtractedInvoice>, Vec<CellIssue>) {
        let invoices = self.groups.iter().map(|g| invoice(g, self.ctx)).collect();
        (invoices, self.orphans)
    }
}

fn invoice(group: &Group, ctx: &Context) -> ExtractedInvoice {
    let mut draft = Draft::default();
    let mut issues = Vec::new();
    let mut kind_read = false;
    for (col, path) in ctx.columns.iter().enumerate() {
        let Some(path) = path.as_deref() else {
            continue;
        };
        if path.starts_with(LINE_PREFIX) {
            continue;
        }
        let read = invoice_field(&mut draft, &mut issues, group, col, path, ctx);
        kind_read |= read && path == KIND_PATH;
    }
    for row in &group.rows {
        if let Some(line) = line(row, draft.lines.len(), &mut issues, ctx) {
            draft.lines.push(line);
        }
    }
    complete_invoice(&mut draft, kind_read, ctx);
    ExtractedInvoice {
        draft,
        rows: group.rows.iter().map(|r| r.number).collect(),
        issues,
    }
}

/// Read an invoice-level column from every row of the group: the first readable value
/// wins; a later row that says otherwise is an issue and makes the value uncertain.
/// Returns whether a value was read.
fn invoice_field(
    draft: &mut Draft,
    issues: &mut Vec<CellIssue>,
    group: &Group,
    col: usize,
    path: &str,
    ctx: &Context,
) -> bool {
    let kind = fields::kind_of(path);
    let mut first: Option<(u32, Value)> = None;
    for row in &group.rows {
        let cell = row.cell(col);
        if cell.is_empty() {
            continue;
        }
        let reading = match read(cell, kind, ctx.mapping) {
            Ok(r) => r,
            Err(message) => {
                issues.push(ctx.issue(row.number, col, path, message, Severity::Error));
                continue;
            }
        };
        if let Some((first_row, first_value)) = &first {
            if *first_value != reading.value {
                issues.push(ctx.issue(
                    row.number,
                    col,
                    path,
                    format!(
                        "`{}` differs from `{first_value}` in row {first_row} of the same \
                         invoice; the invoice keeps `{first_value}`",
                        reading.value
                    ),
                    Severity::Error,
                ));
                if let Some(slot) = draft.slot(path) {
                    slot.cap(CONTRADICTED);
                }
            }
            continue;
        }
        note_reading(issues, &reading, row.number, col, path, ctx);
        if let Value::Kind(k) = reading.value {
            draft.kind = k;
        } else if let Some(slot) = draft.slot(path) {
            fields::put(
                slot,
                reading.value.clone(),
                reading.confidence,
                ctx.source(row.number, col),
            );
        }
        first = Some((row.number, reading.value));
    }
    first.is_some()
}

fn note_reading(
    issues: &mut Vec<CellIssue>,
    r: &Reading,
    row: u32,
    col: usize,
    field: &str,
    ctx: &Context,
) {
    if let Some(problem) = &r.problem {
        issues.push(ctx.issue(row, col, field, problem.clone(), Severity::Error));
    }
    if let Some(note) = &r.ambiguity {
        issues.push(ctx.issue(row, col, field, note.clone(), Severity::Warning));
    }
}

/// A row's line, if it has any line data.
fn line(row: &Row, index: usize, issues: &mut Vec<CellIssue>, ctx: &Context) -> Option<Line> {
    let line_cols: Vec<(usize, &str)> = ctx
        .columns
        .iter()
        .enumerate()
        .filter_map(|(c, p)| {
            p.as_deref()
                .and_then(|p| p.strip_prefix(LINE_PREFIX))
                .map(|s| (c, s))
        })
        .collect();
    if line_cols.iter().all(|(c, _)| row.cell(*c).is_empty()) {
        return None;
    }
    let mut line = Line::default();
    let field = |suffix: &str| format!("lines[{index}].{suffix}");
    for &(col, suffix) in &line_cols {
        let cell = row.cell(col);
        if cell.is_empty() {
            continue;
        }
        let kind = fields::kind_of(&format!("{LINE_PREFIX}{suffix}"));
        match read(cell, kind, ctx.mapping) {
            Ok(reading) => {
                note_reading(issues, &reading, row.number, col, &field(suffix), ctx);
                if let Some(slot) = line.slot(suffix) {
                    fields::put(
                        slot,
                        reading.value,
                        reading.confidence,
                        ctx.source(row.number, col),
                    );
                }
            }
            Err(message) => {
                issues.push(ctx.issue(row.number, col, &field(suffix), message, Severity::Error))
            }
        }
    }
    complete_line(&mut line, row, index, issues, ctx);
    Some(line)
}

fn put_default(slot: Option<Slot>, path: &str, default: &DefaultValue, ctx: &Context) {
    let Some(slot) = slot else { return };
    if slot.is_set() {
        return;
    }
    // Defaults were checked when the mapping was loaded; read them like a cell.
    let cell = match default {
        // JSON numbers use a decimal point whatever the file does: read as a number cell.
        DefaultValue::Number(n) => n.as_f64().map_or(Cell::Text(n.to_string()), Cell::Number),
        _ => Cell::Text(default.value()),
    };
    if let Ok(r) = read(&cell, fields::kind_of(path), ctx.mapping) {
        fields::put(
            slot,
            r.value,
            default.confidence().min(r.confidence),
            ctx.default_source(path),
        );
    }
}

/// Line defaults, computed amounts and the amount cross-check.
fn complete_line(
    line: &mut Line,
    row: &Row,
    index: usize,
    issues: &mut Vec<CellIssue>,
    ctx: &Context,
) {
    for (suffix, default) in ctx.mapping.line_defaults() {
        let path = format!("{LINE_PREFIX}{suffix}");
        put_default(line.slot(suffix), &path, default, ctx);
    }
    if line.unit.is_none() {
        let (unit, confidence) = DEFAULT_UNIT;
        line.unit = Some(Field::new(
            unit.to_string(),
            confidence,
            Source::Default {
                reason: "no unit given; C62 (one) assumed".into(),
            },
        ));
    }
    if line.quantity.is_none() {
        let quantity_col = ctx.column_of("lines.quantity");
        let confidence = if quantity_col.is_some() {
            BLANK_QUANTITY
        } else {
            DEFAULT_QUANTITY
        };
        if let Some(col) = quantity_col {
            if row.cell(col).is_empty() {
                issues.push(ctx.issue(
                    row.number,
                    col,
                    &format!("lines[{index}].quantity"),
                    "no quantity; 1 assumed".into(),
                    Severity::Warning,
                ));
            }
        }
        line.quantity = Some(Field::new(
            Decimal::ONE,
            confidence,
            Source::Default {
                reason: "no quantity given; 1 assumed".into(),
            },
        ));
    }
    if line.vat_category.is_none() {
        if let Some(rate) = &line.vat_rate {
            if rate.value > Decimal::ZERO {
                line.vat_category = Some(Field::new(
                    "S".to_string(),
                    rate.confidence.min(0.9),
                    Source::Computed {
                        from: "lines.vat_rate (a rate above 0 is the standard category S)".into(),
                    },
                ));
            }
        }
    }
    amounts(line, row, index, issues, ctx);
}

fn amounts(line: &mut Line, row: &Row, index: usize, issues: &mut Vec<CellIssue>, ctx: &Context) {
    let (Some(quantity), price, net) = (&line.quantity, &mut line.unit_price, &mut line.net_amount)
    else {
        return;
    };
    match (price.as_mut(), net.as_mut()) {
        (Some(p), None) => {
            let value = (quantity.value * p.value)
                .round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
            *net = Some(Field::new(
                value,
                quantity.confidence.min(p.confidence),
                Source::Computed {
                    from: "lines.quantity × lines.unit_price".into(),
                },
            ));
        }
        (None, Some(n)) if !quantity.value.is_zero() => {
            let value = (n.value / quantity.value)
                .round_dp_with_strategy(6, RoundingStrategy::MidpointAwayFromZero)
                .normalize();
            *price = Some(Field::new(
                value,
                quantity.confidence.min(n.confidence),
                Source::Computed {
                    from: "lines.net_amount ÷ lines.quantity".into(),
                },
            ));
        }
        (Some(p), Some(n)) => {
            let expected = quantity.value * p.value;
            if (expected - n.value).abs() > TOLERANCE {
                let col = ctx
                    .column_of("lines.net_amount")
                    .or_else(|| ctx.column_of("lines.unit_price"))
                    .unwrap_or(0);
                issues.push(ctx.issue(
                    row.number,
                    col,
                    &format!("lines[{index}].net_amount"),
                    format!(
                        "line amount {} differs from quantity × unit price = {} × {} = {}",
                        n.value,
                        quantity.value,
                        p.value,
                        expected.normalize()
                    ),
                    Severity::Error,
                ));
                n.confidence = n.confidence.min(CONTRADICTED);
                p.confidence = p.confidence.min(CONTRADICTED);
            }
        }
        _ => {}
    }
}

/// Invoice-level defaults and values derived from others.
fn complete_invoice(draft: &mut Draft, kind_read: bool, ctx: &Context) {
    for (path, default) in &ctx.mapping.defaults {
        if path.starts_with(LINE_PREFIX) {
            continue;
        }
        if path == KIND_PATH {
            if !kind_read {
                if let Ok(p) = codes::kind(&default.value()) {
                    draft.kind = p.value;
                }
            }
            continue;
        }
        put_default(draft.slot(path), path, default, ctx);
    }
    if draft.currency.is_none() {
        let (currency, confidence) = DEFAULT_CURRENCY;
        draft.currency = Some(Field::new(
            currency.to_string(),
            confidence,
            Source::Default {
                reason: "no currency given; EUR assumed (Slovak domestic invoice)".into(),
            },
        ));
    }
    if draft.payment.means_code.is_none() {
        if let Some(iban) = &draft.payment.iban {
            let (code, confidence) = DEFAULT_MEANS;
            draft.payment.means_code = Some(Field::new(
                code.to_string(),
                confidence.min(iban.confidence),
                Source::Default {
                    reason: "an IBAN without payment means; 58 (SEPA credit transfer) assumed"
                        .into(),
                },
            ));
        }
    }
    draft.seller.derive_slovak_ids("seller");
    draft.buyer.derive_slovak_ids("buyer");
}
