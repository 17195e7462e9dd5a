//! The downloadable template (CSV and xlsx): the columns of the `generic` mapping, a
//! header row and one example invoice with fictitious Slovak parties whose identifiers
//! pass their check digits.

use super::TabularError;
use rust_xlsxwriter::{ExcelDateTime, Format, Workbook, Worksheet, XlsxError};

/// How a template column is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Text,
    Number,
    Date,
}

/// One template column: header, draft path, format as documented, required.
pub struct Column {
    pub header: &'static str,
    pub path: &'static str,
    pub kind: Kind,
    pub required: bool,
}

const fn col(header: &'static str, path: &'static str, kind: Kind, required: bool) -> Column {
    Column {
        header,
        path,
        kind,
        required,
    }
}

use Kind::{Date, Number, Text};

/// The template's columns in order; `mappings/generic.json` maps exactly these.
pub const COLUMNS: [Column; 45] = [
    col("Invoice number", "number", Text, true),
    col("Document type", "kind", Text, false),
    col("Issue date", "issue_date", Date, true),
    col("Due date", "due_date", Date, false),
    col("Tax point date", "tax_point_date", Date, false),
    col("Currency", "currency", Text, false),
    col("Buyer reference", "buyer_reference", Text, false),
    col("Order reference", "order_reference", Text, false),
    col("Preceding invoice", "preceding_invoice", Text, false),
    col("Note", "note", Text, false),
    col("Seller name", "seller.name", Text, false),
    col("Seller IČO", "seller.ico", Text, false),
    col("Seller DIČ", "seller.dic", Text, false),
    col("Seller VAT ID", "seller.vat_id", Text, false),
    col("Seller endpoint", "seller.endpoint", Text, false),
    col("Seller street", "seller.address.street", Text, false),
    col("Seller city", "seller.address.city", Text, false),
    col("Seller postcode", "seller.address.postcode", Text, false),
    col("Seller country", "seller.address.country", Text, false),
    col("Seller email", "seller.email", Text, false),
    col("Buyer name", "buyer.name", Text, false),
    col("Buyer IČO", "buyer.ico", Text, false),
    col("Buyer DIČ", "buyer.dic", Text, false),
    col("Buyer VAT ID", "buyer.vat_id", Text, false),
    col("Buyer endpoint", "buyer.endpoint", Text, false),
    col("Buyer street", "buyer.address.street", Text, false),
    col("Buyer city", "buyer.address.city", Text, false),
    col("Buyer postcode", "buyer.address.postcode", Text, false),
    col("Buyer country", "buyer.address.country", Text, false),
    col("Buyer email", "buyer.email", Text, false),
    col("Payment means", "payment.means_code", Text, false),
    col("IBAN", "payment.iban", Text, false),
    col("BIC", "payment.bic", Text, false),
    col("Variable symbol", "payment.reference", Text, false),
    col("Line ID", "lines.id", Text, false),
    col("Item name", "lines.name", Text, true),
    col("Quantity", "lines.quantity", Number, false),
    col("Unit", "lines.unit", Text, false),
    col("Unit price", "lines.unit_price", Number, true),
    col("Line net amount", "lines.net_amount", Number, false),
    col("VAT category", "lines.vat_category", Text, false),
    col("VAT rate", "lines.vat_rate", Number, false),
    col("Total without VAT", "totals.tax_exclusive", Number, false),
    col("VAT total", "totals.tax", Number, false),
    col("Total with VAT", "totals.tax_inclusive", Number, false),
];

/// Invoice-level values of the example, repeated on each of its rows.
const EXAMPLE_HEADER: [&str; 34] = [
    "VF2027-0001",
    "380",
    "2027-01-15",
    "2027-01-29",
    "2027-01-15",
    "EUR",
    "",
    "OBJ-2027-17",
    "",
    "Fictitious example invoice",
    "Vzorová firma s.r.o.",
    "12345679",
    "2121234577",
    "SK2121234577",
    "0245:2121234577",
    "Hlavná 12",
    "Bratislava",
    "811 01",
    "SK",
    "faktury@vzorova-firma.example",
    "Odberateľ Žilina a.s.",
    "45678901",
    "2024567897",
    "SK2024567897",
    "0245:2024567897",
    "Štúrova 5",
    "Žilina",
    "010 01",
    "SK",
    "uctaren@odberatel.example",
    "58",
    "SK2411000000002612345678",
    "TATRSKBX",
    "20270001",
];

/// The example's lines (line ID … VAT rate), then totals on every row.
const EXAMPLE_LINES: [[&str; 8]; 2] = [
    [
        "1",
        "Konzultačné služby – analýza",
        "10",
        "HUR",
        "50.00",
        "500.00",
        "S",
        "23",
    ],
    [
        "2",
        "Licencia softvéru, ročná",
        "1",
        "C62",
        "120.00",
        "120.00",
        "S",
        "23",
    ],
];

const EXAMPLE_TOTALS: [&str; 3] = ["620.00", "142.60", "762.60"];

/// Template rows as text: header row, then one row per example line.
pub fn rows() -> Vec<Vec<&'static str>> {
    let mut out = vec![COLUMNS.iter().map(|c| c.header).collect()];
    for line in EXAMPLE_LINES {
        let mut row: Vec<&str> = EXAMPLE_HEADER.to_vec();
        row.extend(line);
        row.extend(EXAMPLE_TOTALS);
        out.push(row);
    }
    out
}

/// The template as UTF-8 CSV with a byte order mark (so Excel shows č, ž, ô right),
/// comma-separated, decimal point, ISO dates.
pub fn template_csv() -> Vec<u8> {
    let mut out = "\u{feff}".as_bytes().to_vec();
    for row in rows() {
        let line: Vec<String> = row.iter().map(|v| quote(v)).collect();
        out.extend(line.join(",").as_bytes());
        out.extend(b"\r\n");
    }
    out
}

fn quote(value: &str) -> String {
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_string()
    }
}

/// The template as an xlsx workbook: sheet `Invoices` (real number and date cells,
/// identifiers as text so leading zeros survive) and sheet `Columns` describing each
/// column.
pub fn template_xlsx() -> Result<Vec<u8>, TabularError> {
    build_xlsx().map_err(|e| TabularError::Template(e.to_string()))
}

fn build_xlsx() -> Result<Vec<u8>, XlsxError> {
    let mut book = Workbook::new();
    let bold = Format::new().set_bold();
    let date = Format::new().set_num_format("yyyy-mm-dd");
    let amount = Format::new().set_num_format("0.00");
    let sheet = book.add_worksheet();
    sheet.set_name("Invoices")?;
    for (r, row) in rows().iter().enumerate() {
        let r = r as u32;
        for (c, value) in row.iter().enumerate() {
            let c = c as u16;
            if r == 0 {
                sheet.write_string_with_format(r, c, *value, &bold)?;
                continue;
            }
            write_cell(sheet, r, c, value, &date, &amount)?;
        }
    }
    for c in 0..COLUMNS.len() {
        sheet.set_column_width(c as u16, 18)?;
    }
    sheet.set_freeze_panes(1, 0)?;

    let help = book.add_worksheet();
    help.set_name("Columns")?;
    for (c, title) in ["Column", "Draft field", "Required", "Format"]
        .iter()
        .enumerate()
    {
        help.write_string_with_format(0, c as u16, *title, &bold)?;
    }
    for (i, column) in COLUMNS.iter().enumerate() {
        let r = i as u32 + 1;
        help.write_string(r, 0, column.header)?;
        help.write_string(r, 1, column.path)?;
        help.write_string(r, 2, if column.required { "yes" } else { "no" })?;
        let format = match column.kind {
            Text => "text",
            Number => "number (decimal point or comma)",
            Date => "date (2027-01-31 or 31.01.2027)",
        };
        help.write_string(r, 3, format)?;
    }
    help.set_column_width(0, 22)?;
    help.set_column_width(1, 26)?;
    help.set_column_width(3, 34)?;
    book.save_to_buffer()
}

fn write_cell(
    sheet: &mut Worksheet,
    r: u32,
    c: u16,
    value: &str,
    date: &Format,
    amount: &Format,
) -> Result<(), XlsxError> {
    if value.is_empty() {
        return Ok(());
    }
    match COLUMNS[c as usize].kind {
        Text => {
            sheet.write_string(r, c, value)?;
        }
        Number => match value.parse::<f64>() {
            Ok(n) => {
                sheet.write_number_with_format(r, c, n, amount)?;
            }
            Err(_) => {
                sheet.write_string(r, c, value)?;
            }
        },
        Date => {
            let parts: Vec<&str> = value.split('-').collect();
            let ymd = match parts.as_slice() {
                [y, m, d] => match (y.parse(), m.parse(), d.parse()) {
                    (Ok(y), Ok(m), Ok(d)) => Some(ExcelDateTime::from_ymd(y, m, d)?),
                    _ => None,
                },
                _ => None,
            };
            match ymd {
                Some(dt) => {
                    sheet.write_datetime_with_format(r, c, dt, date)?;
                }
                None => {
                    sheet.write_string(r, c, value)?;
                }
            }
        }
    }
    Ok(())
}
