//! Labels in Slovak, Czech, English and German, where they occur, and the value each one
//! introduces: the rest of its segment, the next segment on the line, or the text below.

use super::super::layout::Line;
use super::super::text::{find_word, fold};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Key {
    Number,
    CreditNumber,
    IssueDate,
    DueDate,
    TaxPointDate,
    /// Delivery date (BT-72): the tax point date when none is printed apart.
    DeliveryDate,
    Currency,
    Seller,
    Buyer,
    Ico,
    Dic,
    IcDph,
    Iban,
    Bic,
    VarSymbol,
    OrderRef,
    BuyerRef,
    NetTotal,
    VatTotal,
    GrossTotal,
    Payable,
    /// Sum of line amounts (BT-106).
    LineTotal,
    Country,
    /// `Spolu`, `Total`, `Celkom` alone: a total of some kind, weaker evidence.
    Total,
    Email,
    /// Electronic address (BT-34 / BT-49), printed as `scheme:value`.
    Endpoint,
    /// The invoice a credit note corrects (BT-25).
    Preceding,
    /// Payment means code (BT-81), printed as `30 (credit transfer)`.
    MeansCode,
    /// Other labels that end the value of a preceding one (phone, bank name, payment form).
    Other,
}

/// (label as printed, key). Folded and matched at word boundaries, longest first.
const LABELS: &[(&str, Key)] = &[
    ("Číslo faktúry", Key::Number),
    ("Číslo faktury", Key::Number),
    ("Faktúra číslo", Key::Number),
    ("Faktúra č.", Key::Number),
    ("Faktura č.", Key::Number),
    ("Faktúra - daňový doklad č.", Key::Number),
    ("Faktúra - daňový doklad", Key::Number),
    ("Daňový doklad č.", Key::Number),
    ("Číslo dokladu", Key::Number),
    ("Invoice number", Key::Number),
    ("Invoice No.", Key::Number),
    ("Invoice No", Key::Number),
    ("Invoice #", Key::Number),
    ("Rechnungsnummer", Key::Number),
    ("Rechnung Nr.", Key::Number),
    ("Rechnungs-Nr.", Key::Number),
    ("Dobropis č.", Key::CreditNumber),
    ("Číslo dobropisu", Key::CreditNumber),
    ("Credit note number", Key::CreditNumber),
    ("Credit note No.", Key::CreditNumber),
    ("Gutschrift Nr.", Key::CreditNumber),
    ("Dátum vystavenia", Key::IssueDate),
    ("Datum vystavení", Key::IssueDate),
    ("Issue date", Key::IssueDate),
    ("Date of issue", Key::IssueDate),
    ("Invoice date", Key::IssueDate),
    ("Rechnungsdatum", Key::IssueDate),
    ("Ausstellungsdatum", Key::IssueDate),
    ("Dátum splatnosti", Key::DueDate),
    ("Datum splatnosti", Key::DueDate),
    ("Splatnosť", Key::DueDate),
    ("Due date", Key::DueDate),
    ("Payment due", Key::DueDate),
    ("Fälligkeitsdatum", Key::DueDate),
    ("Fällig am", Key::DueDate),
    ("Zahlbar bis", Key::DueDate),
    ("Dátum dodania", Key::DeliveryDate),
    ("Datum dodání", Key::DeliveryDate),
    ("Dátum dodania tovaru", Key::DeliveryDate),
    ("Dátum uskutočnenia zdaniteľného plnenia", Key::TaxPointDate),
    ("Dátum zdaniteľného plnenia", Key::TaxPointDate),
    ("Datum zdanitelného plnění", Key::TaxPointDate),
    ("DUZP", Key::TaxPointDate),
    ("Tax point date", Key::TaxPointDate),
    ("Delivery date", Key::DeliveryDate),
    ("Date of supply", Key::DeliveryDate),
    ("Lieferdatum", Key::DeliveryDate),
    ("Leistungsdatum", Key::DeliveryDate),
    ("Mena", Key::Currency),
    ("Měna", Key::Currency),
    ("Currency", Key::Currency),
    ("Währung", Key::Currency),
    ("Dodávateľ", Key::Seller),
    ("Dodavatel", Key::Seller),
    ("Supplier", Key::Seller),
    ("Seller", Key::Seller),
    ("Lieferant", Key::Seller),
    ("Verkäufer", Key::Seller),
    ("Odberateľ", Key::Buyer),
    ("Odběratel", Key::Buyer),
    ("Customer", Key::Buyer),
    ("Buyer", Key::Buyer),
    ("Bill to", Key::Buyer),
    ("Billed to", Key::Buyer),
    ("Kunde", Key::Buyer),
    ("Käufer", Key::Buyer),
    ("Rechnungsempfänger", Key::Buyer),
    ("IČO", Key::Ico),
    ("IČ", Key::Ico),
    ("Company ID", Key::Ico),
    ("Company No.", Key::Ico),
    ("Reg. No.", Key::Ico),
    ("Registration number", Key::Ico),
    ("Business ID", Key::Ico),
    ("DIČ", Key::Dic),
    ("Tax ID", Key::Dic),
    ("Tax No.", Key::Dic),
    ("Steuernummer", Key::Dic),
    ("St.-Nr.", Key::Dic),
    ("IČ DPH", Key::IcDph),
    ("IČ pre DPH", Key::IcDph),
    ("VAT ID", Key::IcDph),
    ("VAT No.", Key::IcDph),
    ("VAT number", Key::IcDph),
    ("VAT reg. No.", Key::IcDph),
    ("VAT registration number", Key::IcDph),
    ("USt-IdNr.", Key::IcDph),
    ("USt-ID", Key::IcDph),
    ("IBAN", Key::Iban),
    ("SWIFT/BIC", Key::Bic),
    ("BIC/SWIFT", Key::Bic),
    ("SWIFT", Key::Bic),
    ("BIC", Key::Bic),
    ("Variabilný symbol", Key::VarSymbol),
    ("Variabilní symbol", Key::VarSymbol),
    ("VS", Key::VarSymbol),
    ("Payment reference", Key::VarSymbol),
    ("Verwendungszweck", Key::VarSymbol),
    ("Číslo objednávky", Key::OrderRef),
    ("Objednávka č.", Key::OrderRef),
    ("Objednávka", Key::OrderRef),
    ("Order number", Key::OrderRef),
    ("Order No.", Key::OrderRef),
    ("Purchase order", Key::OrderRef),
    ("PO number", Key::OrderRef),
    ("Bestellnummer", Key::OrderRef),
    ("Your reference", Key::BuyerRef),
    ("Referencia odberateľa", Key::BuyerRef),
    ("Pôvodná faktúra", Key::Preceding),
    ("Opravovaná faktúra", Key::Preceding),
    ("Preceding invoice", Key::Preceding),
    ("Original invoice", Key::Preceding),
    ("Corrected invoice", Key::Preceding),
    ("Buyer reference", Key::BuyerRef),
    ("Spolu bez DPH", Key::NetTotal),
    ("Celkom bez DPH", Key::NetTotal),
    ("Celkem bez DPH", Key::NetTotal),
    ("Základ dane spolu", Key::NetTotal),
    ("Total without VAT", Key::NetTotal),
    ("Total excl. VAT", Key::NetTotal),
    ("Total excluding VAT", Key::NetTotal),
    ("Total net", Key::NetTotal),
    ("Net total", Key::NetTotal),
    ("Subtotal", Key::NetTotal),
    ("Nettobetrag", Key::NetTotal),
    ("Summe netto", Key::NetTotal),
    ("DPH spolu", Key::VatTotal),
    ("Spolu DPH", Key::VatTotal),
    ("DPH celkom", Key::VatTotal),
    ("Celkom DPH", Key::VatTotal),
    ("DPH celkem", Key::VatTotal),
    ("Total VAT", Key::VatTotal),
    ("VAT total", Key::VatTotal),
    ("VAT amount", Key::VatTotal),
    ("Umsatzsteuer", Key::VatTotal),
    ("Spolu s DPH", Key::GrossTotal),
    ("Celkom s DPH", Key::GrossTotal),
    ("Celkem s DPH", Key::GrossTotal),
    ("Total incl. VAT", Key::GrossTotal),
    ("Total with VAT", Key::GrossTotal),
    ("Suma položiek", Key::LineTotal),
    ("Spolu položky", Key::LineTotal),
    ("Line total", Key::LineTotal),
    ("Lines total", Key::LineTotal),
    ("Krajina", Key::Country),
    ("Country", Key::Country),
    ("Obchodné meno", Key::Other),
    ("Trading name", Key::Other),
    ("Identifikátor", Key::Other),
    ("Party ID", Key::Other),
    ("Elektronická adresa", Key::Endpoint),
    ("Electronic address", Key::Endpoint),
    ("Endpoint", Key::Endpoint),
    ("Peppol ID", Key::Endpoint),
    ("Kontakt", Key::Other),
    ("Contact", Key::Other),
    ("Právne údaje", Key::Other),
    ("Legal information", Key::Other),
    ("Total including VAT", Key::GrossTotal),
    ("Gesamtbetrag", Key::GrossTotal),
    ("Bruttobetrag", Key::GrossTotal),
    ("Celkom k úhrade", Key::Payable),
    ("Celkem k úhradě", Key::Payable),
    ("Spolu k úhrade", Key::Payable),
    ("Suma k úhrade", Key::Payable),
    ("K úhrade", Key::Payable),
    ("K úhradě", Key::Payable),
    ("Amount due", Key::Payable),
    ("Total due", Key::Payable),
    ("Balance due", Key::Payable),
    ("Amount payable", Key::Payable),
    ("Zahlbetrag", Key::Payable),
    ("Zu zahlen", Key::Payable),
    ("Spolu", Key::Total),
    ("Celkom", Key::Total),
    ("Celkem", Key::Total),
    ("Total", Key::Total),
    ("Summe", Key::Total),
    ("E-mail", Key::Email),
    ("Email", Key::Email),
    ("Tel.", Key::Other),
    ("Telefón", Key::Other),
    ("Phone", Key::Other),
    ("Banka", Key::Other),
    ("Bank", Key::Other),
    ("Forma úhrady", Key::Other),
    ("Spôsob úhrady", Key::MeansCode),
    ("Payment means", Key::MeansCode),
    ("Payment method", Key::Other),
    ("Platobné podmienky", Key::Other),
    ("Payment terms", Key::Other),
    ("Názov účtu", Key::Other),
    ("Account name", Key::Other),
    ("Account number", Key::Other),
    ("Mena DPH", Key::Other),
    ("VAT currency", Key::Other),
    ("Druh dokladu", Key::Other),
    ("Document type", Key::Other),
    ("Zľavy", Key::Other),
    ("Allowances", Key::Other),
    ("Poplatky", Key::Other),
    ("Charges", Key::Other),
    ("Uhradené zálohy", Key::Other),
    ("Prepaid amount", Key::Other),
    ("Zaokrúhlenie", Key::Other),
    ("Rounding", Key::Other),
    ("Číslo účtu", Key::Other),
    ("Konštantný symbol", Key::Other),
    ("Web", Key::Other),
];

/// A label found in the text.
#[derive(Clone, Debug)]
pub(super) struct Hit {
    pub key: Key,
    pub line: usize,
    pub seg: usize,
    /// Char positions of the label in the segment text.
    pub start: usize,
    pub end: usize,
    /// The label as printed.
    pub label: String,
}

/// A value found for a label.
#[derive(Clone, Debug)]
pub(super) struct Value {
    pub text: String,
    pub line: usize,
    /// The value sits under the label rather than after it.
    pub below: bool,
}

pub(super) fn find_hits(lines: &[Line]) -> Vec<Hit> {
    let labels: Vec<(Vec<char>, Key)> = LABELS.iter().map(|(l, k)| (fold(l), *k)).collect();
    let mut hits = Vec::new();
    for (li, line) in lines.iter().enumerate() {
        for (si, seg) in line.segments.iter().enumerate() {
            let hay = fold(&seg.text);
            let mut found: Vec<(usize, usize, Key)> = Vec::new();
            for (label, key) in &labels {
                for (s, e) in find_word(&hay, label) {
                    found.push((s, e, *key));
                }
            }
            // Longest label at the earliest position wins; overlapping shorter ones go.
            found.sort_by(|a, b| a.0.cmp(&b.0).then((b.1 - b.0).cmp(&(a.1 - a.0))));
            let mut taken_until = 0;
            for (s, e, key) in found {
                if s < taken_until {
                    continue;
                }
                taken_until = e;
                hits.push(Hit {
                    key,
                    line: li,
                    seg: si,
                    start: s,
                    end: e,
                    label: seg.text.chars().skip(s).take(e - s).collect(),
                });
            }
        }
    }
    hits
}

/// Separators printed between a label and its value.
fn trim_value(s: &str) -> &str {
    s.trim_start_matches(|c: char| c.is_whitespace() || ":#.–-/=".contains(c))
        .trim_end_matches(|c: char| c.is_whitespace() || c == ',' || c == ';')
}

/// Finds the value of each label hit, skipping lines that are not allowed to hold values
/// (table rows, where a header like `Spolu` sits above item amounts).
pub(super) struct Values<'a> {
    pub lines: &'a [Line],
    pub hits: &'a [Hit],
    pub blocked: &'a dyn Fn(usize) -> bool,
}

impl Values<'_> {
    fn starts_with_hit(&self, line: usize, seg: usize) -> bool {
        self.hits
            .iter()
            .any(|h| h.line == line && h.seg == seg && h.start <= 1)
    }

    pub(super) fn of(&self, h: &Hit) -> Option<Value> {
        self.of_within(h, f32::INFINITY)
    }

    /// The value of `h`, taken only from text that starts left of `x_max`: in side-by-side
    /// blocks the segment to the right of an empty label belongs to the other column.
    pub(super) fn of_within(&self, h: &Hit, x_max: f32) -> Option<Value> {
        let line = &self.lines[h.line];
        let seg = &line.segments[h.seg];
        let len = seg.text.chars().count();
        let next = self
            .hits
            .iter()
            .filter(|o| o.line == h.line && o.seg == h.seg && o.start >= h.end)
            .map(|o| o.start)
            .min()
            .unwrap_or(len);
        let rest: String = seg.text.chars().skip(h.end).take(next - h.end).collect();
        let rest = trim_value(&rest);
        if !rest.is_empty() {
            return Some(Value {
                text: rest.to_string(),
                line: h.line,
                below: false,
            });
        }
        if next < len {
            // `Dodávateľ / Seller`: a translation follows; its value is this label's too.
            let between: String = seg.text.chars().skip(h.end).take(next - h.end).collect();
            let translation = self
                .hits
                .iter()
                .find(|o| o.line == h.line && o.seg == h.seg && o.start == next);
            return match translation {
                Some(t)
                    if between
                        .chars()
                        .all(|c| c.is_whitespace() || "/|:".contains(c)) =>
                {
                    self.of_within(t, x_max)
                }
                _ => None,
            };
        }
        if let Some(right) = line.segments.get(h.seg + 1).filter(|r| r.x0 < x_max) {
            if !self.starts_with_hit(h.line, h.seg + 1) {
                let text = trim_value(&right.text);
                return (!text.is_empty()).then(|| Value {
                    text: text.to_string(),
                    line: h.line,
                    below: false,
                });
            }
            // Another label stands right of this one: only a value that wrapped under
            // the label can be this label's.
            if !seg.text.trim_end().ends_with(':') {
                return None;
            }
        }
        // Under the label: the next line, close below, with a segment under the label.
        let below = h.line + 1;
        let under = self.lines.get(below)?;
        if under.page != line.page
            || (line.y - under.y) > 2.5 * line.size.max(under.size)
            || (self.blocked)(below)
        {
            return None;
        }
        let (si, s) = under
            .segments
            .iter()
            .enumerate()
            .find(|(_, s)| s.x0 < seg.x1 + 2.0 && s.x1 > seg.x0 - 2.0)?;
        if self.starts_with_hit(below, si) {
            return None;
        }
        let text = trim_value(&s.text);
        (!text.is_empty()).then(|| Value {
            text: text.to_string(),
            line: below,
            below: true,
        })
    }
}

/// Where a label hit ends once translations chained to it are skipped
/// (`Dodávateľ / Seller`): the char position in its segment.
pub(super) fn chain_end(hits: &[Hit], seg_text: &str, h: &Hit) -> usize {
    let mut end = h.end;
    while let Some(next) = hits.iter().find(|o| {
        o.line == h.line && o.seg == h.seg && o.start >= end && {
            let between: String = seg_text.chars().skip(end).take(o.start - end).collect();
            between
                .chars()
                .all(|c| c.is_whitespace() || "/|:".contains(c))
        }
    }) {
        end = next.end;
    }
    end
}

/// Whether `h` heads a block (`Odberateľ / Buyer`, `Supplier:`, `Dodávateľ: Alfa s.r.o.`)
/// rather than being a word of a value: the label, its translations, then nothing or a
/// colon. `Dodávateľ s.r.o.` and `Buyer Official Name` are names, not headings.
pub(super) fn is_heading(lines: &[Line], hits: &[Hit], h: &Hit) -> bool {
    if h.start > 1 {
        return false;
    }
    let text = &lines[h.line].segments[h.seg].text;
    let end = chain_end(hits, text, h);
    let rest: String = text.chars().skip(end).collect();
    let rest = rest.trim_start();
    rest.is_empty() || rest.starts_with(':')
}

/// Titles of sections (`Platobné údaje / Payment`, `Rekapitulácia DPH / VAT breakdown`,
/// `Položky / Lines (EUR)`): they end party blocks and item tables.
const SECTIONS: &[&str] = &[
    "doklad",
    "document",
    "referencie",
    "references",
    "platobne udaje",
    "payment",
    "payment details",
    "bank details",
    "bankove spojenie",
    "poznamky",
    "notes",
    "polozky",
    "lines",
    "items",
    "miesto dodania",
    "delivery",
    "dodacia adresa",
    "delivery address",
    "ship to",
    "prijemca platby",
    "payee",
    "danovy zastupca",
    "tax representative",
    "rekapitulacia dph",
    "vat breakdown",
    "vat summary",
    "vat recap",
    "rozpis dph",
    "zlavy a poplatky na doklade",
    "document allowances and charges",
    "allowances and charges",
];

/// Whether a segment is nothing but a section title, in one or more languages.
pub(super) fn is_section(text: &str) -> bool {
    let folded = super::super::text::fold_string(text);
    let body = match folded.split_once('(') {
        Some((head, tail)) if tail.trim_end().ends_with(')') => head,
        _ => folded.as_str(),
    };
    let body = body.trim().trim_end_matches(':');
    !body.is_empty() && body.split('/').all(|part| SECTIONS.contains(&part.trim()))
}

/// Whether a segment holds a page footer's numbering (`Strana 1 z 2 / Page 1 of 2`,
/// `Seite 3 von 4`, `Page 3/4`): a page word, a number, `of`, a number.
pub(super) fn is_page_number(text: &str) -> bool {
    let folded = super::super::text::fold_string(text).replace('/', " / ");
    let words: Vec<&str> = folded.split_whitespace().collect();
    let number = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit());
    words.windows(4).any(|w| {
        ["page", "strana", "seite", "stranka"].contains(&w[0])
            && number(w[1])
            && ["of", "z", "zo", "von", "/"].contains(&w[2])
            && number(w[3])
    })
}
