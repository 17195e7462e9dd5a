//! The tables and totals of the rendition: lines, document allowances and charges, VAT
//! breakdown with the totals beside it.

use super::{line, Writer};
use crate::artifacts::format;
use crate::artifacts::layout::{
    Align, Cell, Column, LabelValue, Layout, Style, MARGIN, PAGE_WIDTH,
};
use crate::invoice::{AllowanceCharge, Line};

const LINE_COLUMNS: [Column; 7] = [
    Column::new("Č.", "No.", 28.0, Align::Left),
    Column::new("Popis", "Description", 225.28, Align::Left),
    Column::new("Množstvo", "Quantity", 52.0, Align::Right),
    Column::new("MJ", "Unit", 34.0, Align::Left),
    Column::new("Jedn. cena", "Unit price", 62.0, Align::Right),
    Column::new("DPH %", "VAT %", 38.0, Align::Right),
    Column::new("Suma bez DPH", "Net amount", 72.0, Align::Right),
];

const CHARGE_COLUMNS: [Column; 5] = [
    Column::new("Druh", "Type", 92.0, Align::Left),
    Column::new("Dôvod", "Reason", 185.28, Align::Left),
    Column::new("Základ", "Base amount", 90.0, Align::Right),
    Column::new("DPH", "VAT", 60.0, Align::Left),
    Column::new("Suma", "Amount", 84.0, Align::Right),
];

/// The VAT breakdown takes the left part of the page, the totals the right.
const VAT_COLUMNS: [Column; 4] = [
    Column::new("Kategória", "Category", 92.0, Align::Left),
    Column::new("Sadzba", "Rate", 32.0, Align::Right),
    Column::new("Základ dane", "Taxable amount", 72.0, Align::Right),
    Column::new("DPH", "VAT amount", 66.0, Align::Right),
];
const TOTALS_LEFT: f32 = MARGIN + 92.0 + 32.0 + 72.0 + 66.0 + 16.0;

impl Writer<'_, '_> {
    /// A heading kept on one page with the start of its table.
    fn section_heading(&mut self, text: &str, rows: &[Vec<Cell>]) {
        let heading = Style::HEADING.step() + 2.0;
        self.layout
            .keep_together(heading + Layout::table_start_height(rows));
        self.layout.block(MARGIN, &[line(Style::HEADING, text)]);
        self.layout.gap(2.0);
    }

    pub(super) fn lines_table(&mut self) {
        if self.view.lines.is_empty() {
            return;
        }
        let heading = format!("Položky / Lines ({})", self.currency().map_or("", |c| c));
        let rows: Vec<Vec<Cell>> = self.view.lines.iter().map(|l| self.line_row(l)).collect();
        self.section_heading(heading.trim_end_matches(" ()"), &rows);
        self.layout.table(MARGIN, &LINE_COLUMNS, &rows);
        self.layout.gap(10.0);
    }

    fn cell(&self, column: &Column, style: Style, text: Option<&str>) -> Cell {
        text.map(|t| self.layout.lines(style, t, Layout::cell_width(column)))
            .unwrap_or_default()
    }

    fn line_row(&self, l: &Line) -> Vec<Cell> {
        let [c_id, c_desc, c_qty, c_unit, c_price, c_vat, c_net] = &LINE_COLUMNS;
        let desc_width = Layout::cell_width(c_desc);
        let mut description = self.cell(c_desc, Style::BODY, l.name.as_deref());
        for detail in line_details(l) {
            description.extend(self.layout.lines(Style::SMALL, &detail, desc_width));
        }
        let vat = match (&l.vat_rate, &l.vat_category) {
            (Some(rate), _) => Some(format::number(rate)),
            (None, Some(category)) => Some(category.clone()),
            (None, None) => None,
        };
        vec![
            self.cell(c_id, Style::BODY, l.id.as_deref()),
            description,
            self.cell(
                c_qty,
                Style::BODY,
                l.quantity.as_deref().map(format::number).as_deref(),
            ),
            self.cell(c_unit, Style::BODY, l.unit.as_deref()),
            self.cell(
                c_price,
                Style::BODY,
                l.unit_price.as_deref().map(format::amount).as_deref(),
            ),
            self.cell(c_vat, Style::BODY, vat.as_deref()),
            self.cell(
                c_net,
                Style::BODY,
                l.net_amount.as_deref().map(format::amount).as_deref(),
            ),
        ]
    }

    pub(super) fn charges_table(&mut self) {
        if self.view.allowances_charges.is_empty() {
            return;
        }
        let currency = self.currency();
        let rows: Vec<Vec<Cell>> = self
            .view
            .allowances_charges
            .iter()
            .map(|ac| {
                let [c_type, c_reason, c_base, c_vat, c_amount] = &CHARGE_COLUMNS;
                let kind = if ac.is_charge {
                    "Poplatok / Charge"
                } else {
                    "Zľava / Allowance"
                };
                let base = ac.base_amount.as_deref().map(|b| match &ac.percent {
                    Some(p) => format!("{} × {} %", format::amount(b), format::number(p)),
                    None => format::amount(b),
                });
                let vat = match (&ac.vat_category, &ac.vat_rate) {
                    (Some(c), Some(r)) => Some(format!("{c} {} %", format::number(r))),
                    (Some(c), None) => Some(c.clone()),
                    _ => None,
                };
                let amount = ac.amount.as_deref().map(|a| format::money(a, currency));
                vec![
                    self.cell(c_type, Style::BODY, Some(kind)),
                    self.cell(c_reason, Style::BODY, reason(ac).as_deref()),
                    self.cell(c_base, Style::BODY, base.as_deref()),
                    self.cell(c_vat, Style::BODY, vat.as_deref()),
                    self.cell(c_amount, Style::BODY, amount.as_deref()),
                ]
            })
            .collect();
        self.section_heading(
            "Zľavy a poplatky na doklade / Document allowances and charges",
            &rows,
        );
        self.layout.table(MARGIN, &CHARGE_COLUMNS, &rows);
        self.layout.gap(10.0);
    }

    /// The VAT breakdown with the totals beside it, or under it when together they would
    /// not fit a page.
    pub(super) fn vat_and_totals(&mut self) {
        let rows = self.vat_rows();
        let (totals, payable) = self.totals_rows();
        let heading = Style::HEADING.step() + 2.0;
        let table_height = if rows.is_empty() {
            0.0
        } else {
            heading + Layout::table_height(&rows)
        };
        let totals_height = self.layout.label_values_height(&totals, TOTALS_LEFT)
            + self.layout.label_values_height(&payable, TOTALS_LEFT)
            + 5.0;
        let together = table_height.max(totals_height);
        if together <= Layout::page_capacity() {
            self.layout.keep_together(together);
        }
        let start = self.layout.mark();
        if !rows.is_empty() {
            self.section_heading("Rekapitulácia DPH / VAT breakdown", &rows);
            self.layout.table(MARGIN, &VAT_COLUMNS, &rows);
        }
        let after_table = self.layout.mark();
        if together <= Layout::page_capacity() {
            self.layout.back_to(&start);
        }
        self.totals(&totals, &payable);
        self.layout.below(&after_table);
    }

    fn vat_rows(&self) -> Vec<Vec<Cell>> {
        let currency = self.currency();
        self.view
            .vat_breakdown
            .iter()
            .map(|row| {
                let [c_cat, c_rate, c_taxable, c_tax] = &VAT_COLUMNS;
                let width = Layout::cell_width(c_cat);
                let mut category = self.cell(c_cat, Style::BODY, row.category.as_deref());
                if let Some(name) = row.category.as_deref().and_then(format::vat_category) {
                    category.extend(self.layout.lines(Style::SMALL, name, width));
                }
                let exemption = [
                    row.exemption_code.as_deref(),
                    row.exemption_reason.as_deref(),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
                if !exemption.is_empty() {
                    let text = format!("Dôvod oslobodenia / Exemption reason: {exemption}");
                    category.extend(self.layout.lines(Style::SMALL, &text, width));
                }
                let rate = row
                    .rate
                    .as_deref()
                    .map(|r| format!("{} %", format::number(r)));
                let taxable = row.taxable.as_deref().map(|a| format::money(a, currency));
                let tax = row.tax.as_deref().map(|a| format::money(a, currency));
                vec![
                    category,
                    self.cell(c_rate, Style::BODY, rate.as_deref()),
                    self.cell(c_taxable, Style::BODY, taxable.as_deref()),
                    self.cell(c_tax, Style::BODY, tax.as_deref()),
                ]
            })
            .collect()
    }

    /// The totals rows and, apart, the amount payable.
    fn totals_rows(&self) -> (Vec<LabelValue>, Vec<LabelValue>) {
        let v = self.view;
        let t = &v.totals;
        let currency = self.currency();
        let mut rows = Vec::new();
        let mut add = |label: &str, value: Option<&String>, currency: Option<&str>| {
            if let Some(value) = value {
                rows.push(LabelValue {
                    label: label.to_string(),
                    value: format::money(value, currency),
                    style: Style::BODY,
                });
            }
        };
        add(
            "Suma položiek / Line total",
            t.line_total.as_ref(),
            currency,
        );
        add("Zľavy / Allowances", t.allowance_total.as_ref(), currency);
        add("Poplatky / Charges", t.charge_total.as_ref(), currency);
        add(
            "Spolu bez DPH / Total without VAT",
            t.tax_exclusive.as_ref(),
            currency,
        );
        add("DPH / VAT total", v.vat_total.as_ref(), currency);
        if let Some(crate::invoice::TaxCurrencyTotal {
            amount,
            currency: tax_currency,
        }) = &v.vat_total_tax_currency
        {
            let label = format!("DPH v {tax_currency} / VAT in {tax_currency}");
            let code = (!tax_currency.is_empty()).then_some(tax_currency.as_str());
            add(&label, Some(amount), code);
        }
        add(
            "Spolu s DPH / Total with VAT",
            t.tax_inclusive.as_ref(),
            currency,
        );
        add(
            "Uhradené zálohy / Prepaid amount",
            t.prepaid.as_ref(),
            currency,
        );
        add("Zaokrúhlenie / Rounding", t.rounding.as_ref(), currency);
        let payable = t
            .payable
            .iter()
            .map(|p| LabelValue {
                label: "K úhrade / Amount payable".to_string(),
                value: format::money(p, currency),
                style: Style::TOTAL,
            })
            .collect();
        (rows, payable)
    }

    fn totals(&mut self, rows: &[LabelValue], payable: &[LabelValue]) {
        if rows.is_empty() && payable.is_empty() {
            return;
        }
        let left = TOTALS_LEFT;
        self.layout.label_values(rows, left);
        if !payable.is_empty() {
            self.layout.gap(3.0);
            let height = self.layout.label_values_height(payable, left) + 3.0;
            self.layout
                .shade(left - 4.0, PAGE_WIDTH - MARGIN - left + 4.0, height, 0.9);
            self.layout.gap(2.0);
            self.layout.label_values(payable, left);
        }
    }
}

fn reason(ac: &AllowanceCharge) -> Option<String> {
    match (&ac.reason, &ac.reason_code) {
        (Some(r), Some(c)) => Some(format!("{r} ({c})")),
        (Some(r), None) => Some(r.clone()),
        (None, Some(c)) => Some(c.clone()),
        (None, None) => None,
    }
}

/// The small print under a line's item name: what identifies, qualifies or adjusts it.
fn line_details(l: &Line) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(d) = &l.description {
        out.push(d.clone());
    }
    let mut labelled = |label: &str, value: Option<String>| {
        if let Some(v) = value {
            out.push(format!("{label}: {v}"));
        }
    };
    labelled("Kód dodávateľa / Seller item ID", l.seller_item_id.clone());
    labelled("Kód odberateľa / Buyer item ID", l.buyer_item_id.clone());
    labelled(
        "Štandardný kód / Standard item ID",
        l.standard_item_id
            .as_ref()
            .map(|i| format::scheme_value(i.scheme.as_deref(), &i.value)),
    );
    for c in &l.classifications {
        labelled(
            "Klasifikácia / Classification",
            Some(format::scheme_value(c.scheme.as_deref(), &c.value)),
        );
    }
    labelled("Krajina pôvodu / Origin", l.origin_country.clone());
    for p in &l.properties {
        labelled(&p.name, Some(p.value.clone()));
    }
    labelled(
        "Obdobie / Period",
        l.period
            .as_ref()
            .map(|p| format::period(p.start.as_deref(), p.end.as_deref())),
    );
    labelled("Riadok objednávky / Order line", l.order_line.clone());
    labelled(
        "Účtovanie / Accounting reference",
        l.accounting_cost.clone(),
    );
    labelled("Poznámka / Note", l.note.clone());
    if let Some(base) = l.base_quantity.as_deref() {
        let base = format::number(base);
        if base != "1" {
            labelled("Cena za / Price per", Some(base));
        }
    }
    if let Some(gross) = &l.gross_price {
        let text = match &l.price_discount {
            Some(d) => format!("{} − {}", format::amount(gross), format::amount(d)),
            None => format::amount(gross),
        };
        labelled("Cena pred zľavou / Gross price", Some(text));
    }
    for ac in &l.allowances_charges {
        let label = if ac.is_charge {
            "Poplatok / Charge"
        } else {
            "Zľava / Allowance"
        };
        let amount = ac.amount.as_deref().map(format::amount).unwrap_or_default();
        let text = match reason(ac) {
            Some(r) => format!("{amount} – {r}"),
            None => amount,
        };
        labelled(label, Some(text));
    }
    out
}
