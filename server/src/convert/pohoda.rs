//! POHODA XML (Stormware's accounting program, the most used by Slovak small and medium
//! businesses): issued invoices of a `dat:dataPack` (an import or re-import file) or of a
//! `rsp:responsePack` list (POHODA's own export) → the EN 16931 model, one invoice per
//! `invoice` element, written as Peppol BIS 3.0 UBL.
//!
//! POHODA writes Windows-1250 and names VAT rates by class (`high`, `low`, `third`, `none`):
//! the file is decoded as its declaration says, and a class becomes the percentage POHODA
//! wrote beside it (`rateVAT/@value`, `percentVAT`), else the rate in force in the seller's
//! country on the taxable-supply date. Prices come in either mode (`payVAT`: with or without
//! VAT); amounts are kept as POHODA computed them. The mapping is in docs/conversion.md.

use std::str::FromStr;

use chrono::NaiveDate;
use invex_engine::document::Limits;
use rust_decimal::{Decimal, RoundingStrategy};

use super::structured;
use crate::invoice::model::*;
use crate::xmltree::{self, Element};

/// Every POHODA namespace starts so (`data.xsd`, `invoice.xsd`, `type.xsd`, `list.xsd`, ...).
pub const NAMESPACE_BASE: &str = "http://www.stormware.cz/schema/version_2/";

const MAX_DEPTH: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum PohodaError {
    #[error("the POHODA XML cannot be read: {0}")]
    Xml(invex_engine::document::ParseError),
    #[error("the POHODA XML is in an encoding invex does not know: `{0}`")]
    Encoding(String),
    #[error("no issued invoice to convert in the POHODA file{0}")]
    NoInvoices(String),
}

/// One invoice of the file, and what of it has no place in EN 16931.
#[derive(Debug)]
pub struct Read {
    pub view: InvoiceView,
    pub notes: Vec<String>,
}

/// Whether `head` (a file's first bytes) is POHODA XML.
pub fn looks_like_pohoda(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    text.contains(NAMESPACE_BASE) && (text.contains("dataPack") || text.contains("responsePack"))
}

/// `bytes` as UTF-8, decoded as the XML declaration says (POHODA writes Windows-1250), with
/// the declaration's encoding rewritten to match.
fn decode(bytes: &[u8]) -> Result<String, PohodaError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
    let label = head
        .strip_prefix("<?xml")
        .and_then(|d| d.split("?>").next())
        .and_then(|d| d.split("encoding=").nth(1))
        .and_then(|v| {
            let quote = v.chars().next()?;
            v[1..].split(quote).next()
        })
        .map(str::to_string);
    let encoding = match &label {
        Some(l) => encoding_rs::Encoding::for_label(l.as_bytes())
            .ok_or_else(|| PohodaError::Encoding(l.clone()))?,
        None => encoding_rs::UTF_8,
    };
    let (text, _, _) = encoding.decode(bytes);
    let text = text.into_owned();
    Ok(match &label {
        Some(l) if encoding != encoding_rs::UTF_8 => text
            .replacen(&format!("encoding=\"{l}\""), "encoding=\"UTF-8\"", 1)
            .replacen(&format!("encoding='{l}'"), "encoding='UTF-8'", 1),
        _ => text,
    })
}

/// Every issued invoice of the file. Invoices of other kinds (received, proforma) are
/// named in the first invoice's notes.
pub fn read(bytes: &[u8]) -> Result<Vec<Read>, PohodaError> {
    let text = decode(bytes)?;
    let limits = Limits {
        max_depth: MAX_DEPTH,
        ..Limits::default()
    };
    let root = xmltree::parse(text.as_bytes(), &limits).map_err(PohodaError::Xml)?;
    let mut invoices: Vec<&Element> = Vec::new();
    collect(&root, &mut invoices, 0);
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for inv in invoices {
        let kind = inv.text_at("invoiceHeader/invoiceType").unwrap_or_default();
        match Reader::default().invoice(inv, &kind) {
            Some(r) => out.push(r),
            None => skipped.push(kind),
        }
    }
    if out.is_empty() {
        return Err(PohodaError::NoInvoices(if skipped.is_empty() {
            String::new()
        } else {
            format!(
                " (its invoices are of types {}: only issued invoices, credit and debit notes \
                 and advance invoices are sent)",
                skipped.join(", ")
            )
        }));
    }
    if !skipped.is_empty() {
        let note = format!(
            "the file also holds {} document(s) of other types ({}), not converted",
            skipped.len(),
            skipped.join(", ")
        );
        out[0].notes.push(note);
    }
    Ok(out)
}

/// The `invoice` elements under the envelope (`dataPackItem` or `listInvoice`), in order.
fn collect<'a>(el: &'a Element, out: &mut Vec<&'a Element>, depth: usize) {
    for c in &el.children {
        if c.name == "invoice" && c.ns.starts_with(NAMESPACE_BASE) {
            out.push(c);
        } else if depth < 3 {
            collect(c, out, depth + 1);
        }
    }
}

fn dec(s: &str) -> Option<Decimal> {
    Decimal::from_str(s.trim()).ok()
}

fn text(d: Decimal) -> String {
    d.normalize().to_string()
}

fn money(d: Decimal) -> Decimal {
    d.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// The percentage of a POHODA VAT class in `country` on `date`, as the law set it (for files
/// that do not write the percentage beside the class).
fn class_rate(country: &str, class: &str, date: NaiveDate) -> Option<Decimal> {
    let on = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).is_some_and(|start| date >= start);
    let rate = match (country, class) {
        (_, "none") => 0,
        ("SK", "high") if on(2025, 1, 1) => 23,
        ("SK", "high") => 20,
        ("SK", "low") if on(2025, 1, 1) => 19,
        ("SK", "low") => 10,
        ("SK", "third") if on(2023, 1, 1) => 5,
        ("CZ", "high") => 21,
        ("CZ", "low") if on(2024, 1, 1) => 12,
        ("CZ", "low") => 15,
        ("CZ", "third") if !on(2024, 1, 1) => 10,
        _ => return None,
    };
    Some(Decimal::from(rate))
}

/// One bucket of the summary: (class, base, VAT).
const BUCKETS: [(&str, &str, &str); 4] = [
    ("none", "priceNone", ""),
    ("low", "priceLow", "priceLowVAT"),
    ("high", "priceHigh", "priceHighVAT"),
    ("third", "price3", "price3VAT"),
];

#[derive(Default)]
struct Reader {
    notes: Vec<String>,
    seller_country: Option<String>,
    buyer_country: Option<String>,
    /// The day whose rates apply: the taxable-supply date, else the issue date.
    supply: Option<NaiveDate>,
    /// The document's currency when it is foreign (amounts from `foreignCurrency`).
    foreign: bool,
    /// A credit note's amounts were written negative and are stated positive.
    flipped: bool,
}

/// A line before the VAT breakdown is made of the lines.
struct Priced {
    line: Line,
    rate: Decimal,
    category: &'static str,
    /// POHODA's VAT of the line, when it states one.
    vat: Option<Decimal>,
}

impl Reader {
    fn note(&mut self, s: impl Into<String>) {
        let s = s.into();
        if !self.notes.contains(&s) {
            self.notes.push(s);
        }
    }

    fn invoice(mut self, inv: &Element, kind: &str) -> Option<Read> {
        let (doc_kind, type_code) = match kind {
            "issuedInvoice" => (DocumentKind::Invoice, "380"),
            "issuedCreditNotice" | "issuedCorrectiveTax" => (DocumentKind::CreditNote, "381"),
            "issuedDebitNote" => (DocumentKind::Invoice, "383"),
            "issuedAdvanceInvoice" => (DocumentKind::Invoice, "386"),
            _ => return None,
        };
        let h = inv.child("invoiceHeader")?;
        let me = h.at("myIdentity/address");
        let partner = h.at("partnerIdentity/address");
        let vat_country = |a: Option<&Element>| {
            a.and_then(|a| a.text_at("icDph").or_else(|| a.text_at("dic")))
                .filter(|v| v.len() > 2 && v.as_bytes()[..2].iter().all(u8::is_ascii_uppercase))
                .map(|v| v[..2].to_string())
        };
        self.seller_country = vat_country(me);
        if self.seller_country.is_none() {
            self.note("the seller's country is not in the file: taken as Slovakia");
            self.seller_country = Some("SK".into());
        }
        self.buyer_country = partner
            .and_then(|p| p.text_at("country/ids"))
            .map(|c| match c.as_str() {
                "CZE" => "CZ".into(),
                "SVK" => "SK".into(),
                _ => c,
            })
            .or_else(|| vat_country(partner))
            .or_else(|| self.seller_country.clone());
        let issue = h.text_at("date");
        let tax_point = h.text_at("dateTax");
        self.supply = tax_point
            .as_deref()
            .or(issue.as_deref())
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok());
        let summary = inv.child("invoiceSummary");
        let foreign = summary.and_then(|s| s.text_at("foreignCurrency/currency/ids"));
        self.foreign = foreign.is_some();
        let home = if self.seller_country.as_deref() == Some("CZ") {
            "CZK"
        } else {
            "EUR"
        };
        let mut view = InvoiceView {
            kind: doc_kind,
            customization_id: Some(crate::invoice::write::CUSTOMIZATION_ID.into()),
            profile_id: Some(crate::invoice::write::PROFILE_ID.into()),
            number: h
                .text_at("number/numberRequested")
                .or_else(|| h.text_at("number/ids")),
            type_code: Some(type_code.into()),
            issue_date: issue,
            tax_point_date: tax_point,
            due_date: h.text_at("dateDue"),
            currency: foreign.clone().or_else(|| Some(home.into())),
            tax_currency: foreign.as_ref().map(|_| home.to_string()),
            notes: [h.text_at("text"), h.text_at("note")]
                .into_iter()
                .flatten()
                .collect(),
            references: References {
                order: h.text_at("numberOrder"),
                preceding_invoices: h
                    .text_at("originalDocumentNumber")
                    .map(|id| PrecedingInvoice {
                        id,
                        issue_date: None,
                    })
                    .into_iter()
                    .collect(),
                ..References::default()
            },
            seller: me.map(|a| self.party(a, true)).unwrap_or_default(),
            buyer: partner.map(|a| self.party(a, false)).unwrap_or_default(),
            ..InvoiceView::default()
        };
        if view.notes.len() > 1 {
            view.notes = vec![view.notes.join("\n")];
        }
        if h.child("intNote").is_some() {
            self.note("the internal note is not sent");
        }
        if h.child("symConst").is_some() || h.child("symSpec").is_some() {
            self.note("the constant and specific symbols have no EN 16931 counterpart");
        }
        let credit = doc_kind == DocumentKind::CreditNote;
        let mut priced = self.items(inv, credit);
        let prepaid = self.advances(inv);
        if priced.is_empty() {
            priced = self.summary_lines(summary, h.text_at("text"));
        }
        self.totals(&mut view, priced, summary, prepaid);
        self.payment(h, &mut view);
        self.delivery(h, &mut view);
        Some(Read {
            view,
            notes: self.notes,
        })
    }

    fn party(&mut self, a: &Element, seller: bool) -> Party {
        let name = a.text_at("company").or_else(|| {
            let parts: Vec<String> = [a.text_at("name"), a.text_at("surname")]
                .into_iter()
                .flatten()
                .collect();
            (!parts.is_empty()).then(|| parts.join(" "))
        });
        let country = if seller {
            self.seller_country.clone()
        } else {
            self.buyer_country.clone()
        };
        let slovak = country.as_deref() == Some("SK");
        // Slovak parties: DIČ is the tax number, IČ DPH the VAT id. Czech: DIČ is the VAT id.
        let (vat_id, tax_id) = if slovak {
            (a.text_at("icDph"), a.text_at("dic"))
        } else {
            (a.text_at("dic").or_else(|| a.text_at("icDph")), None)
        };
        let endpoint = match (&tax_id, slovak) {
            (Some(dic), true) if dic.len() == 10 && dic.bytes().all(|b| b.is_ascii_digit()) => {
                self.note(format!(
                    "the {} electronic address is derived from its DIČ: 0245:{dic}",
                    if seller { "seller's" } else { "buyer's" }
                ));
                Some(Identifier {
                    scheme: Some("0245".into()),
                    value: dic.clone(),
                })
            }
            _ => None,
        };
        let street = match (a.text_at("street"), a.text_at("number")) {
            (Some(s), Some(n)) => Some(format!("{s} {n}")),
            (s, n) => s.or(n),
        };
        Party {
            name,
            legal_id: a.text_at("ico").map(|value| Identifier {
                scheme: (slovak && invex_engine::checks::ico_sk(&value)).then(|| "0158".into()),
                value,
            }),
            vat_id,
            tax_id: tax_id.filter(|_| seller),
            endpoint,
            address: Address {
                street,
                city: a.text_at("city"),
                postcode: a.text_at("zip"),
                country,
                ..Address::default()
            },
            contact: Contact {
                phone: a.text_at("phone").or_else(|| a.text_at("mobilPhone")),
                email: a.text_at("email"),
                ..Contact::default()
            },
            ..Party::default()
        }
    }

    /// The percentage of a line's VAT: as POHODA wrote it, else by class, country and date.
    fn rate(&mut self, item: &Element) -> Decimal {
        let class_el = item.child("rateVAT");
        let class = class_el
            .and_then(Element::text)
            .unwrap_or("none")
            .to_string();
        if let Some(v) = class_el.and_then(|c| c.attribute("value")).and_then(dec) {
            return v;
        }
        if let Some(p) = item.text_at("percentVAT").and_then(|p| dec(&p)) {
            return p;
        }
        let country = self.seller_country.clone().unwrap_or_default();
        let class = class.trim_start_matches("history").to_lowercase();
        match self.supply.and_then(|d| class_rate(&country, &class, d)) {
            Some(r) => {
                self.note(format!(
                    "VAT class `{class}` is {r} %, the rate in force in {country} on the supply date"
                ));
                r
            }
            None => {
                self.note(format!(
                    "VAT class `{class}` has no known rate in {country} on the supply date: 0 %"
                ));
                Decimal::ZERO
            }
        }
    }

    fn amounts<'a>(&self, item: &'a Element) -> Option<&'a Element> {
        if self.foreign {
            item.child("foreignCurrency")
        } else {
            item.child("homeCurrency")
        }
    }

    fn items(&mut self, inv: &Element, credit: bool) -> Vec<Priced> {
        let mut out = Vec::new();
        for (n, item) in inv.all("invoiceDetail/invoiceItem").into_iter().enumerate() {
            let rate = self.rate(item);
            let money_el = self.amounts(item);
            let quantity = item
                .text_at("quantity")
                .and_then(|q| dec(&q))
                .unwrap_or(Decimal::ONE);
            let unit_price = money_el
                .and_then(|m| m.text_at("unitPrice"))
                .and_then(|p| dec(&p));
            let with_vat = item.text_at("payVAT").as_deref() == Some("true");
            // The net line amount as POHODA computed it, else from the price in its mode.
            let net = money_el
                .and_then(|m| m.text_at("price"))
                .and_then(|p| dec(&p))
                .or_else(|| {
                    let gross = quantity * unit_price?;
                    Some(if with_vat {
                        money(gross / (Decimal::ONE + rate / Decimal::from(100)))
                    } else {
                        money(gross)
                    })
                })
                .unwrap_or_default();
            let vat = money_el
                .and_then(|m| m.text_at("priceVAT"))
                .and_then(|p| dec(&p));
            if net.is_zero() && quantity.is_zero() {
                continue;
            }
            // A credit note states what is credited positive (POHODA may write it negative).
            let (quantity, net, vat) = if credit && net.is_sign_negative() {
                self.flipped = true;
                (quantity.abs(), net.abs(), vat.map(|v| v.abs()))
            } else {
                (quantity, net, vat)
            };
            let reverse = item.text_at("PDP").is_some_and(|p| p == "true" || p == "1");
            let category = structured::vat_category(&structured::VatFacts {
                rate: Some(rate),
                reverse_charge: reverse,
                exempt: false,
                outside_vat: false,
                seller_country: self.seller_country.as_deref(),
                buyer_country: self.buyer_country.as_deref(),
            });
            let unit_written = item.text_at("unit");
            let unit = structured::unit_code(unit_written.as_deref());
            // UBL prices are net: a price with VAT, or one that does not multiply out to the
            // line amount, becomes the line amount per its quantity.
            let multiplies = !with_vat
                && unit_price.is_some_and(|p| (quantity * p - net).abs() <= Decimal::new(1, 2));
            let (price, base) = if multiplies {
                (unit_price.map(text), None)
            } else {
                (Some(text(net)), Some(text(quantity)).filter(|q| q != "1"))
            };
            out.push(Priced {
                line: Line {
                    id: Some((n + 1).to_string()),
                    note: item.text_at("note"),
                    quantity: Some(text(quantity)),
                    unit: Some(unit.to_string()),
                    net_amount: Some(text(net)),
                    name: item.text_at("text").or_else(|| item.text_at("code")),
                    seller_item_id: item.text_at("code"),
                    standard_item_id: item.text_at("stockItem/stockItem/EAN").map(|value| {
                        Identifier {
                            scheme: Some("0160".into()),
                            value,
                        }
                    }),
                    vat_category: Some(category.into()),
                    vat_rate: Some(text(if category == "AE" {
                        Decimal::ZERO
                    } else {
                        rate
                    })),
                    unit_price: price,
                    base_quantity: base,
                    ..Line::default()
                },
                rate: if category == "AE" {
                    Decimal::ZERO
                } else {
                    rate
                },
                category,
                vat: vat.filter(|_| category != "AE"),
            });
        }
        out
    }

    /// Advance deductions without VAT (an advance that was no tax document) are paid
    /// amounts (BT-113); the sum deducted.
    fn advances(&mut self, inv: &Element) -> Decimal {
        let mut paid = Decimal::ZERO;
        for a in inv.all("invoiceDetail/invoiceAdvancePaymentItem") {
            let amounts = self.amounts(a);
            let gross = amounts
                .and_then(|m| m.text_at("priceSum"))
                .or_else(|| amounts.and_then(|m| m.text_at("price")))
                .and_then(|p| dec(&p))
                .unwrap_or_default();
            let vat = amounts
                .and_then(|m| m.text_at("priceVAT"))
                .and_then(|p| dec(&p))
                .unwrap_or_default();
            if !vat.is_zero() {
                self.note(
                    "an advance deducted with its VAT is carried as a paid amount; its VAT stays \
                     in the breakdown",
                );
            }
            paid += gross.abs();
        }
        if !paid.is_zero() {
            self.note("advances deducted are the paid amount (BT-113)");
        }
        paid
    }

    /// A document without items: one line per VAT bucket of the summary.
    fn summary_lines(&mut self, summary: Option<&Element>, name: Option<String>) -> Vec<Priced> {
        let Some(home) = summary.and_then(|s| s.child("homeCurrency")) else {
            return Vec::new();
        };
        // A foreign-currency document without items: its home-currency buckets at the
        // document's rate (home per `amount` units of the foreign currency).
        let per_unit = summary.filter(|_| self.foreign).and_then(|s| {
            let rate = s.text_at("foreignCurrency/rate").and_then(|r| dec(&r))?;
            let amount = s
                .text_at("foreignCurrency/amount")
                .and_then(|a| dec(&a))
                .unwrap_or(Decimal::ONE);
            (!rate.is_zero()).then(|| amount / rate)
        });
        if self.foreign {
            if per_unit.is_none() {
                return Vec::new();
            }
            self.note(
                "a foreign-currency document without items: its summary converted at the \
                 document's exchange rate",
            );
        }
        let convert = |d: Decimal| per_unit.map_or(d, |f| money(d * f));
        let mut out = Vec::new();
        for (class, base, vat) in BUCKETS {
            let Some(amount) = home
                .text_at(base)
                .and_then(|b| dec(&b))
                .filter(|b| !b.is_zero())
                .map(convert)
            else {
                continue;
            };
            let vat_el = (!vat.is_empty()).then(|| home.child(vat)).flatten();
            let rate = vat_el
                .and_then(|v| v.attribute("rate"))
                .and_then(dec)
                .or_else(|| {
                    let country = self.seller_country.clone()?;
                    class_rate(&country, class, self.supply?)
                })
                .unwrap_or_default();
            let category = structured::vat_category(&structured::VatFacts {
                rate: Some(rate),
                reverse_charge: false,
                exempt: false,
                outside_vat: false,
                seller_country: self.seller_country.as_deref(),
                buyer_country: self.buyer_country.as_deref(),
            });
            out.push(Priced {
                line: Line {
                    id: Some((out.len() + 1).to_string()),
                    quantity: Some("1".into()),
                    unit: Some("C62".into()),
                    net_amount: Some(text(amount)),
                    name: name.clone().or_else(|| Some("Invoice".into())),
                    vat_category: Some(category.into()),
                    vat_rate: Some(text(rate)),
                    unit_price: Some(text(amount)),
                    ..Line::default()
                },
                rate,
                category,
                vat: vat_el.and_then(Element::text).and_then(dec).map(convert),
            });
        }
        if !out.is_empty() {
            self.note("the document has no items: one line per VAT rate of its summary");
        }
        out
    }

    fn totals(
        &mut self,
        view: &mut InvoiceView,
        priced: Vec<Priced>,
        summary: Option<&Element>,
        prepaid: Decimal,
    ) {
        // The VAT breakdown: the lines grouped by category and rate; the VAT of each group
        // as POHODA stated it for its lines, else computed.
        let mut groups: Vec<(&'static str, Decimal, Decimal, Option<Decimal>)> = Vec::new();
        for p in &priced {
            let net = p
                .line
                .net_amount
                .as_deref()
                .and_then(dec)
                .unwrap_or_default();
            match groups
                .iter_mut()
                .find(|g| g.0 == p.category && g.1 == p.rate)
            {
                Some(g) => {
                    g.2 += net;
                    g.3 = g.3.zip(p.vat).map(|(a, b)| a + b);
                }
                None => groups.push((p.category, p.rate, net, p.vat)),
            }
        }
        let mut tax_total = Decimal::ZERO;
        let mut taxable_total = Decimal::ZERO;
        for (category, rate, taxable, vat) in groups {
            let computed = money(taxable * rate / Decimal::from(100));
            // POHODA may round VAT per item; EN 16931 takes it per rate, within a cent.
            let vat = vat
                .map(|v| if self.flipped { v.abs() } else { v })
                .filter(|v| (*v - computed).abs() <= Decimal::new(1, 2))
                .unwrap_or(computed);
            let (code, reason) = structured::exemption(category);
            tax_total += vat;
            taxable_total += taxable;
            view.vat_breakdown.push(VatSubtotal {
                category: Some(category.into()),
                rate: Some(text(rate)),
                taxable: Some(text(taxable)),
                tax: Some(text(vat)),
                exemption_code: code.map(str::to_string),
                exemption_reason: reason.map(str::to_string),
            });
        }
        view.lines = priced.into_iter().map(|p| p.line).collect();
        let rounding = summary
            .and_then(|s| {
                if self.foreign {
                    s.text_at("foreignCurrency/round/priceRound")
                } else {
                    s.text_at("homeCurrency/round/priceRound")
                }
            })
            .and_then(|r| dec(&r))
            // Amounts written negative (and made positive) had their rounding too.
            .map(|r| if self.flipped { -r } else { r })
            .filter(|r| !r.is_zero());
        let inclusive = taxable_total + tax_total;
        view.totals.line_total = Some(text(taxable_total));
        view.totals.tax_exclusive = Some(text(taxable_total));
        view.vat_total = Some(text(tax_total));
        view.totals.tax_inclusive = Some(text(inclusive));
        view.totals.prepaid = (!prepaid.is_zero()).then(|| text(prepaid));
        view.totals.rounding = rounding.map(text);
        view.totals.payable = Some(text(inclusive - prepaid + rounding.unwrap_or_default()));
        if self.foreign {
            // BT-111: the VAT in the home currency, as the summary states it.
            let home = summary.and_then(|s| s.child("homeCurrency"));
            let vat: Decimal = BUCKETS
                .iter()
                .filter(|b| !b.2.is_empty())
                .filter_map(|b| home.and_then(|h| h.text_at(b.2)).and_then(|v| dec(&v)))
                .sum();
            if let Some(currency) = view.tax_currency.clone() {
                view.vat_total_tax_currency = Some(TaxCurrencyTotal {
                    amount: text(if self.flipped { vat.abs() } else { vat }),
                    currency,
                });
            }
        }
    }

    /// Where and when the goods went: the partner's delivery address, and for an
    /// intra-community supply (which EN 16931 asks both of) the buyer's country and the
    /// taxable-supply date when the file names no other.
    fn delivery(&mut self, h: &Element, view: &mut InvoiceView) {
        let ship = h.at("partnerIdentity/shipToAddress");
        let intra = view
            .vat_breakdown
            .iter()
            .any(|r| r.category.as_deref() == Some("K"));
        if ship.is_none() && !intra {
            return;
        }
        let mut delivery = Delivery {
            date: h.text_at("dateDelivery"),
            party_name: ship.and_then(|s| s.text_at("company").or_else(|| s.text_at("name"))),
            address: Address {
                street: ship.and_then(|s| s.text_at("street")),
                city: ship.and_then(|s| s.text_at("city")),
                postcode: ship.and_then(|s| s.text_at("zip")),
                country: ship.and_then(|s| s.text_at("country/ids")),
                ..Address::default()
            },
            ..Delivery::default()
        };
        // An address needs its country (BR-57): the buyer's, when the file names none.
        if delivery.address != Address::default() && delivery.address.country.is_none() {
            delivery.address.country = self.buyer_country.clone();
        }
        if intra {
            if delivery.date.is_none() {
                delivery.date = view.tax_point_date.clone().or(view.issue_date.clone());
                self.note(
                    "the delivery date of the intra-community supply is its taxable-supply date",
                );
            }
            if delivery.address.country.is_none() {
                delivery.address.country = self.buyer_country.clone();
            }
        }
        view.delivery = Some(delivery);
    }

    fn payment(&mut self, h: &Element, view: &mut InvoiceView) {
        let kind = h.text_at("paymentType/paymentType");
        let account = h.text_at("account/accountNo");
        let bank = h.text_at("account/bankCode");
        let iban = match (&account, &bank) {
            (Some(a), _) if looks_like_iban(a) => Some(a.replace(' ', "")),
            (Some(a), Some(b)) => {
                let country = self.seller_country.clone().unwrap_or_default();
                let iban = domestic_iban(&country, a, b);
                if iban.is_some() {
                    self.note(format!(
                        "the IBAN is computed from the account number {a}/{b}"
                    ));
                }
                iban
            }
            (None, _) => {
                if let Some(short) = h.text_at("account/ids") {
                    self.note(format!(
                        "the account is named only by its short name `{short}`: its number is not \
                         in the file"
                    ));
                }
                None
            }
            _ => None,
        };
        let eur = view.currency.as_deref() == Some("EUR");
        let code = match kind.as_deref() {
            Some("draft") | None if iban.is_some() && eur => "58",
            Some("draft") | None if iban.is_some() => "30",
            Some("cash") | Some("delivery") => "10",
            Some("creditcard") => "54",
            Some("encashment") => "49",
            Some("cheque") => "20",
            Some("compensation") => "97",
            Some("draft") => "30",
            _ => "1",
        };
        let payment_id = h.text_at("symVar");
        if iban.is_none() && payment_id.is_none() && kind.is_none() {
            return;
        }
        view.payment_means.push(PaymentMeans {
            code: Some(code.into()),
            payment_id,
            account_id: iban,
            bic: bank.filter(|b| b.len() >= 8 && b.chars().all(|c| c.is_ascii_alphanumeric())),
            ..PaymentMeans::default()
        });
    }
}

fn looks_like_iban(s: &str) -> bool {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    s.len() >= 15
        && s.as_bytes()[..2].iter().all(u8::is_ascii_uppercase)
        && s.as_bytes()[2..4].iter().all(u8::is_ascii_digit)
}

/// The IBAN of a Czech or Slovak domestic account (`[prefix-]number` at a 4-digit bank
/// code): the country, ISO 7064 mod 97-10 check digits, the bank code, the prefix in six
/// digits and the number in ten (both countries lay their accounts out so).
fn domestic_iban(country: &str, account: &str, bank: &str) -> Option<String> {
    if !matches!(country, "CZ" | "SK")
        || bank.len() != 4
        || !bank.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let (prefix, number) = match account.split_once('-') {
        Some((p, n)) => (p, n),
        None => ("", account),
    };
    let digits = |s: &str, n: usize| {
        (s.len() <= n && s.bytes().all(|b| b.is_ascii_digit())).then(|| format!("{s:0>n$}"))
    };
    let bban = format!("{bank}{}{}", digits(prefix, 6)?, digits(number, 10)?);
    // Check digits: the BBAN, the country as numbers (A = 10), 00, mod 97.
    let letters: String = country
        .bytes()
        .map(|b| (b - b'A' + 10).to_string())
        .collect();
    let rearranged = format!("{bban}{letters}00");
    let rem = rearranged
        .bytes()
        .fold(0u32, |r, b| (r * 10 + u32::from(b - b'0')) % 97);
    Some(format!("{country}{:02}{bban}", 98 - rem))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::ubl::tests::fatals;

    fn fixture(name: &str) -> Vec<u8> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pohoda");
        std::fs::read(dir.join(name)).unwrap()
    }

    fn rows(v: &InvoiceView) -> Vec<(String, String, String, String)> {
        v.vat_breakdown
            .iter()
            .map(|r| {
                (
                    r.category.clone().unwrap_or_default(),
                    r.rate.clone().unwrap_or_default(),
                    r.taxable.clone().unwrap_or_default(),
                    r.tax.clone().unwrap_or_default(),
                )
            })
            .collect()
    }

    fn row(c: &str, r: &str, t: &str, x: &str) -> (String, String, String, String) {
        (c.into(), r.into(), t.into(), x.into())
    }

    #[test]
    fn a_windows_1250_data_pack_yields_each_issued_invoice_with_the_source_totals() {
        let bytes = fixture("sk-2025.xml");
        assert!(looks_like_pohoda(&bytes));
        assert!(
            std::str::from_utf8(&bytes).is_err(),
            "the file is Windows-1250"
        );
        let read = read(&bytes).unwrap();
        let numbers: Vec<_> = read.iter().filter_map(|r| r.view.number.clone()).collect();
        assert_eq!(
            numbers,
            [
                "FV2025001",
                "FV2025002",
                "DB2025001",
                "FV2025003",
                "VB2025001",
                "ZF2025001",
                "OD2025001"
            ]
        );
        // Each type as its UBL type: a debit note 383, an advance invoice 386, a corrective
        // tax document a credit note.
        let types: Vec<_> = read
            .iter()
            .filter_map(|r| r.view.type_code.clone())
            .collect();
        assert_eq!(types, ["380", "380", "381", "380", "383", "386", "381"]);
        assert_eq!(
            read[4].view.references.preceding_invoices[0].id,
            "FV2025001"
        );
        assert_eq!(rows(&read[6].view), [row("S", "19", "10", "1.9")]);
        assert!(read[0].notes.iter().any(|n| n.contains("receivedInvoice")));

        // Every class, its rate the law's in 2025 (POHODA wrote no percentage).
        let a = &read[0].view;
        assert_eq!(a.seller.name.as_deref(), Some("Dodávateľ s.r.o."));
        assert_eq!(a.buyer.address.street.as_deref(), Some("Štúrova 12"));
        assert_eq!(a.seller.address.street.as_deref(), Some("Hlavná 1"));
        assert_eq!(a.seller.vat_id.as_deref(), Some("SK2022749619"));
        assert_eq!(a.seller.tax_id.as_deref(), Some("2022749619"));
        assert_eq!(
            a.buyer.endpoint.as_ref().map(|e| e.value.as_str()),
            Some("2020317068")
        );
        assert_eq!(a.currency.as_deref(), Some("EUR"));
        assert_eq!(a.references.order.as_deref(), Some("OBJ-77"));
        assert_eq!(
            rows(a),
            [
                row("S", "23", "455", "104.65"),
                row("S", "19", "38.97", "7.4"),
                row("S", "5", "40", "2"),
                row("E", "0", "5", "0"),
            ]
        );
        assert_eq!(a.lines[0].unit.as_deref(), Some("HUR"));
        assert_eq!(a.totals.tax_inclusive.as_deref(), Some("653.02"));
        assert_eq!(a.totals.payable.as_deref(), Some("653.02"));
        let pay = &a.payment_means[0];
        assert_eq!(pay.code.as_deref(), Some("58"));
        assert_eq!(pay.payment_id.as_deref(), Some("2025001"));
        let iban = pay.account_id.as_deref().unwrap();
        assert!(
            iban.starts_with("SK") && iban.ends_with("11000000004000123456"),
            "{iban}"
        );
        assert!(invex_engine::checks::iban_check(iban).is_ok(), "{iban}");
        assert!(read[0].notes.iter().any(|n| n.contains("internal note")));

        // Prices with VAT: the net line amount as POHODA computed it.
        let b = &read[1].view;
        assert_eq!(rows(b), [row("S", "23", "200", "46")]);
        assert_eq!(b.lines[0].unit_price.as_deref(), Some("200"));
        assert_eq!(b.lines[0].base_quantity.as_deref(), Some("2"));
        assert_eq!(b.totals.payable.as_deref(), Some("246"));

        // A credit note written negative is stated positive and names its invoice.
        let c = &read[2].view;
        assert_eq!(c.kind, DocumentKind::CreditNote);
        assert_eq!(c.references.preceding_invoices[0].id, "FV2025001");
        assert_eq!(rows(c), [row("S", "23", "91", "20.93")]);
        assert_eq!(c.lines[0].quantity.as_deref(), Some("2"));
        assert_eq!(c.totals.payable.as_deref(), Some("111.93"));

        // Only a summary: one line per rate, with the document's rounding.
        let d = &read[3].view;
        assert_eq!(rows(d), [row("S", "23", "1000", "230")]);
        assert_eq!(d.totals.rounding.as_deref(), Some("-0.3"));
        assert_eq!(d.totals.payable.as_deref(), Some("1229.7"));

        for r in &read {
            let xml = crate::invoice::write(&r.view);
            assert_eq!(
                fatals(&xml, "en16931-ubl"),
                Vec::<String>::new(),
                "{:?}",
                r.view.number
            );
            assert_eq!(&crate::invoice::read(&xml).unwrap(), &r.view);
        }
    }

    #[test]
    fn a_foreign_currency_export_keeps_both_currencies() {
        let read = read(&fixture("cz-euro.xml")).unwrap();
        let v = &read[0].view;
        assert_eq!(v.currency.as_deref(), Some("EUR"));
        assert_eq!(v.tax_currency.as_deref(), Some("CZK"));
        assert_eq!(v.seller.vat_id.as_deref(), Some("CZ12345679"));
        // 0 % to a buyer in another member state: an intra-community supply.
        assert_eq!(rows(v), [row("K", "0", "1000", "0")]);
        assert_eq!(
            v.vat_breakdown[0].exemption_code.as_deref(),
            Some("VATEX-EU-IC")
        );
        assert_eq!(v.totals.payable.as_deref(), Some("1000"));
        assert_eq!(
            v.vat_total_tax_currency
                .as_ref()
                .map(|t| (t.amount.as_str(), t.currency.as_str())),
            Some(("0", "CZK"))
        );
        let pay = &v.payment_means[0];
        assert_eq!(pay.account_id.as_deref(), Some("CZ6508000000192000145399"));
        assert_eq!(pay.bic.as_deref(), Some("GIBACZPX"));
        assert_eq!(pay.code.as_deref(), Some("58"));
        let xml = crate::invoice::write(v);
        assert_eq!(fatals(&xml, "en16931-ubl"), Vec::<String>::new());
    }

    #[test]
    fn class_rates_follow_the_law_of_the_supply_date() {
        let d = |s| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        let r = |c, k, s| class_rate(c, k, d(s)).map(|x| x.to_string());
        assert_eq!(r("SK", "high", "2024-12-31").as_deref(), Some("20"));
        assert_eq!(r("SK", "high", "2025-01-01").as_deref(), Some("23"));
        assert_eq!(r("SK", "low", "2025-01-01").as_deref(), Some("19"));
        assert_eq!(r("SK", "third", "2023-01-01").as_deref(), Some("5"));
        assert_eq!(r("SK", "third", "2022-12-31"), None);
        assert_eq!(r("CZ", "low", "2023-12-31").as_deref(), Some("15"));
        assert_eq!(r("CZ", "low", "2024-01-01").as_deref(), Some("12"));
        assert_eq!(r("CZ", "third", "2024-01-01"), None);
    }

    #[test]
    fn domestic_accounts_become_ibans_that_pass_their_check() {
        let iban = domestic_iban("CZ", "19-2000145399", "0800").unwrap();
        assert_eq!(iban, "CZ6508000000192000145399");
        assert_eq!(domestic_iban("SK", "12-34", "12345"), None);
        assert_eq!(domestic_iban("DE", "1", "1234"), None);
    }

    #[test]
    fn what_holds_no_issued_invoice_is_refused_with_the_reason() {
        let received = br#"<?xml version="1.0" encoding="UTF-8"?><dat:dataPack version="2.0" id="x" application="a" note="" xmlns:dat="http://www.stormware.cz/schema/version_2/data.xsd" xmlns:inv="http://www.stormware.cz/schema/version_2/invoice.xsd"><dat:dataPackItem version="2.0" id="1"><inv:invoice version="2.0"><inv:invoiceHeader><inv:invoiceType>receivedInvoice</inv:invoiceType></inv:invoiceHeader></inv:invoice></dat:dataPackItem></dat:dataPack>"#;
        let e = read(received).unwrap_err();
        assert!(e.to_string().contains("receivedInvoice"), "{e}");
        let unknown = br#"<?xml version="1.0" encoding="KOI8-XYZ"?><x/>"#;
        assert!(matches!(read(unknown), Err(PohodaError::Encoding(_))));
    }
}

#[cfg(test)]
mod export_tests {
    use super::*;
    use crate::convert::ubl::tests::fatals;

    /// A genuine POHODA 2025 export: every invoice converts, its total (with VAT, plus
    /// rounding) is the one POHODA's summary states, and the UBL has no fatal finding but the
    /// one the file causes (an account named only by its short name).
    #[test]
    fn a_real_export_converts_with_the_summarys_totals() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pohoda");
        let bytes = std::fs::read(dir.join("vitex-2025-export.xml")).unwrap();
        let read = read(&bytes).unwrap();
        assert_eq!(read.len(), 16);
        // The summaries, read on their own from the same file.
        let text = decode(&bytes).unwrap();
        let root = xmltree::parse(text.as_bytes(), &Limits::default()).unwrap();
        let mut invoices = Vec::new();
        collect(&root, &mut invoices, 0);
        for (r, inv) in read.iter().zip(invoices) {
            let v = &r.view;
            let n = v.number.clone().unwrap_or_default();
            let s = inv.child("invoiceSummary").unwrap();
            let stated = match s.text_at("foreignCurrency/priceSum") {
                Some(foreign) => dec(&foreign).unwrap(),
                None => [
                    "priceNone",
                    "priceLowSum",
                    "priceHighSum",
                    "price3Sum",
                    "round/priceRound",
                ]
                .iter()
                .filter_map(|b| s.text_at(&format!("homeCurrency/{b}")))
                .filter_map(|x| dec(&x))
                .sum(),
            };
            let ours = dec(v.totals.tax_inclusive.as_deref().unwrap()).unwrap()
                + v.totals
                    .rounding
                    .as_deref()
                    .and_then(dec)
                    .unwrap_or_default();
            assert_eq!(ours, stated, "{n}");
            let found = fatals(&crate::invoice::write(v), "en16931-ubl");
            if n == "250100013" {
                assert_eq!(found.len(), 1, "{found:?}");
                assert!(found[0].starts_with("BR-61"));
                assert!(r.notes.iter().any(|x| x.contains("short name `VAL`")));
                assert_eq!(v.currency.as_deref(), Some("EUR"));
            } else {
                assert_eq!(found, Vec::<String>::new(), "{n}");
            }
        }
        // The invoice that deducts an advance: due is its total less the advance.
        let adv = read
            .iter()
            .find(|r| r.view.number.as_deref() == Some("250100005"))
            .unwrap();
        assert_eq!(adv.view.totals.prepaid.as_deref(), Some("7140"));
        assert_eq!(adv.view.totals.payable.as_deref(), Some("120"));
    }
}
