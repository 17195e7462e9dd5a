//! What the rendition prints and in which order: title, document data and references,
//! parties, payment, notes, lines, allowances and charges, VAT breakdown, totals.
//!
//! Labels are always `Slovensky / English: value`, so a reader of the extracted text can
//! key on the English label before the colon.

mod tables;

use super::format;
use super::layout::{Layout, Page, Style, TextLine, CONTENT_WIDTH, MARGIN};
use crate::invoice::{Address, Delivery, DocumentKind, InvoiceView, Party, PaymentMeans};

/// The document's title, e.g. `Faktúra / Invoice FA-1`.
pub fn title(view: &InvoiceView) -> String {
    let kind = match view.kind {
        DocumentKind::Invoice => "Faktúra / Invoice",
        DocumentKind::CreditNote => "Dobropis / Credit note",
    };
    match &view.number {
        Some(n) => format!("{kind} {n}"),
        None => kind.to_string(),
    }
}

pub fn compose(view: &InvoiceView, mut layout: Layout<'_>, mark: Option<&str>) -> Vec<Page> {
    let title = title(view);
    let half = Layout::column_width(2);
    let mut w = Writer {
        layout: &mut layout,
        view,
    };

    w.layout.block(MARGIN, &[line(Style::TITLE, &title)]);
    w.layout.block(
        MARGIN,
        &[line(
            Style::SMALL,
            "Čitateľná podoba elektronickej faktúry Peppol BIS Billing 3.0 / \
             Human-readable rendition of a Peppol BIS Billing 3.0 e-invoice",
        )],
    );
    w.layout.gap(8.0);
    w.layout.rule(0.6);
    w.layout.gap(8.0);

    // Payment details go under the references or under the buyer, whichever keeps the
    // header shorter (both right-hand columns are usually short).
    let document = w.document_block(half);
    let references = w.references_block(half);
    let seller = w.party_block("Dodávateľ / Seller", &view.seller, half);
    let buyer = w.party_block("Odberateľ / Buyer", &view.buyer, half);
    let payment = w.payment_block(half);
    let (top_right, bottom_right) = if payment.len() > 1 {
        let h = Layout::height;
        let with_spacer = |block: &[TextLine]| {
            let mut out = block.to_vec();
            if !out.is_empty() {
                out.push(line(Style::BODY, ""));
            }
            out.extend(payment.iter().cloned());
            out
        };
        let under_references = with_spacer(&references);
        let under_buyer = with_spacer(&buyer);
        let first = h(&document).max(h(&under_references)) + h(&seller).max(h(&buyer));
        let second = h(&document).max(h(&references)) + h(&seller).max(h(&under_buyer));
        if first <= second {
            (under_references, buyer)
        } else {
            (references, under_buyer)
        }
    } else {
        (references, buyer)
    };
    w.layout.columns(&[document, top_right]);
    w.layout.gap(8.0);
    w.layout.columns(&[seller, bottom_right]);
    w.layout.gap(8.0);

    // Less common blocks, two to a row.
    let mut extra = Vec::new();
    if let Some(payee) = &view.payee {
        extra.push(w.party_block("Príjemca platby / Payee", payee, half));
    }
    if let Some(representative) = &view.tax_representative {
        extra.push(w.party_block("Daňový zástupca / Tax representative", representative, half));
    }
    if let Some(delivery) = &view.delivery {
        let block = w.delivery_block(delivery, half);
        if block.len() > 1 {
            extra.push(block);
        }
    }
    for pair in extra.chunks(2) {
        w.layout.columns(pair);
        w.layout.gap(8.0);
    }

    if !view.notes.is_empty() {
        let mut notes = vec![line(Style::HEADING, "Poznámky / Notes")];
        for note in &view.notes {
            notes.extend(w.labelled("Poznámka / Note", note, CONTENT_WIDTH));
        }
        w.layout.block(MARGIN, &notes);
        w.layout.gap(8.0);
    }

    w.lines_table();
    w.charges_table();
    w.vat_and_totals();
    layout.finish(&title, mark)
}

fn line(style: Style, text: &str) -> TextLine {
    TextLine {
        style,
        text: text.to_string(),
    }
}

struct Writer<'a, 'f> {
    layout: &'a mut Layout<'f>,
    view: &'a InvoiceView,
}

impl Writer<'_, '_> {
    fn currency(&self) -> Option<&str> {
        self.view.currency.as_deref()
    }

    fn labelled(&self, label: &str, value: &str, width: f32) -> Vec<TextLine> {
        self.layout
            .lines(Style::BODY, &format!("{label}: {value}"), width)
    }

    fn push(&self, out: &mut Vec<TextLine>, label: &str, value: Option<&str>, width: f32) {
        if let Some(value) = value {
            out.extend(self.labelled(label, value, width));
        }
    }

    fn document_block(&self, width: f32) -> Vec<TextLine> {
        let v = self.view;
        let mut out = vec![line(Style::HEADING, "Doklad / Document")];
        let number_label = match v.kind {
            DocumentKind::Invoice => "Číslo faktúry / Invoice number",
            DocumentKind::CreditNote => "Číslo dobropisu / Credit note number",
        };
        self.push(&mut out, number_label, v.number.as_deref(), width);
        self.push(
            &mut out,
            "Dátum vystavenia / Issue date",
            v.issue_date.as_deref(),
            width,
        );
        self.push(
            &mut out,
            "Dátum splatnosti / Due date",
            v.due_date.as_deref(),
            width,
        );
        let delivery_date = v.delivery.as_ref().and_then(|d| d.date.as_deref());
        self.push(
            &mut out,
            "Dátum dodania / Delivery date",
            delivery_date,
            width,
        );
        self.push(
            &mut out,
            "Dátum zdaniteľného plnenia / Tax point date",
            v.tax_point_date.as_deref(),
            width,
        );
        if let Some(p) = &v.period {
            let text = format::period(p.start.as_deref(), p.end.as_deref());
            self.push(
                &mut out,
                "Fakturačné obdobie / Invoicing period",
                Some(&text),
                width,
            );
        }
        self.push(&mut out, "Mena / Currency", v.currency.as_deref(), width);
        self.push(
            &mut out,
            "Mena DPH / VAT currency",
            v.tax_currency.as_deref(),
            width,
        );
        if let Some(code) = &v.type_code {
            let text = match format::document_type(code) {
                Some(name) => format!("{code} ({name})"),
                None => code.clone(),
            };
            self.push(&mut out, "Druh dokladu / Document type", Some(&text), width);
        }
        out
    }

    fn references_block(&self, width: f32) -> Vec<TextLine> {
        let r = &self.view.references;
        let mut out = vec![line(Style::HEADING, "Referencie / References")];
        let fields = [
            (
                "Referencia odberateľa / Buyer reference",
                &r.buyer_reference,
            ),
            ("Objednávka / Purchase order", &r.order),
            ("Zákazka dodávateľa / Sales order", &r.sales_order),
            ("Zmluva / Contract", &r.contract),
            ("Projekt / Project", &r.project),
            ("Dodací list / Despatch advice", &r.despatch_advice),
            ("Príjemka / Receiving advice", &r.receiving_advice),
            ("Súťaž / Tender or lot", &r.tender),
            (
                "Účtovanie odberateľa / Buyer accounting reference",
                &r.accounting_cost,
            ),
        ];
        for (label, value) in fields {
            self.push(&mut out, label, value.as_deref(), width);
        }
        for preceding in &r.preceding_invoices {
            let text = match &preceding.issue_date {
                Some(date) => format!("{} ({date})", preceding.id),
                None => preceding.id.clone(),
            };
            self.push(
                &mut out,
                "Pôvodná faktúra / Preceding invoice",
                Some(&text),
                width,
            );
        }
        for doc in &r.documents {
            let (label, text) = if doc.type_code.as_deref() == Some("130") {
                ("Fakturovaný objekt / Invoiced object", doc.id.clone())
            } else {
                let text = match &doc.description {
                    Some(d) => format!("{} ({d})", doc.id),
                    None => doc.id.clone(),
                };
                ("Súvisiaci doklad / Supporting document", text)
            };
            self.push(&mut out, label, Some(&text), width);
        }
        if out.len() == 1 {
            out.clear();
        }
        out
    }

    fn party_block(&self, heading: &str, party: &Party, width: f32) -> Vec<TextLine> {
        let mut out = vec![line(Style::HEADING, heading)];
        if let Some(name) = &party.name {
            out.extend(self.layout.lines(Style::NAME, name, width));
        }
        self.push(
            &mut out,
            "Obchodné meno / Trading name",
            party.trading_name.as_deref(),
            width,
        );
        out.extend(self.address(&party.address, width));
        let legal_id = party.legal_id.as_ref().map(|i| i.value.as_str());
        self.push(&mut out, "IČO / Company ID", legal_id, width);
        self.push(&mut out, "DIČ / Tax ID", party.tax_id.as_deref(), width);
        self.push(&mut out, "IČ DPH / VAT ID", party.vat_id.as_deref(), width);
        for id in &party.identifiers {
            let text = format::scheme_value(id.scheme.as_deref(), &id.value);
            self.push(&mut out, "Identifikátor / Party ID", Some(&text), width);
        }
        if let Some(endpoint) = &party.endpoint {
            let text = format::scheme_value(endpoint.scheme.as_deref(), &endpoint.value);
            self.push(
                &mut out,
                "Elektronická adresa / Endpoint",
                Some(&text),
                width,
            );
        }
        self.push(
            &mut out,
            "Právne údaje / Legal information",
            party.legal_form.as_deref(),
            width,
        );
        let c = &party.contact;
        self.push(&mut out, "Kontakt / Contact", c.name.as_deref(), width);
        self.push(&mut out, "Telefón / Phone", c.phone.as_deref(), width);
        self.push(&mut out, "E-mail / Email", c.email.as_deref(), width);
        out
    }

    /// Street lines and `postcode city` as printed on letters, the country labelled.
    fn address(&self, a: &Address, width: f32) -> Vec<TextLine> {
        let mut out = Vec::new();
        for part in [&a.street, &a.additional_street, &a.line]
            .into_iter()
            .flatten()
        {
            out.extend(self.layout.lines(Style::BODY, part, width));
        }
        let city = [a.postcode.as_deref(), a.city.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        if !city.is_empty() {
            out.extend(self.layout.lines(Style::BODY, &city, width));
        }
        if let Some(region) = &a.subdivision {
            out.extend(self.layout.lines(Style::BODY, region, width));
        }
        self.push(&mut out, "Krajina / Country", a.country.as_deref(), width);
        out
    }

    fn delivery_block(&self, d: &Delivery, width: f32) -> Vec<TextLine> {
        let mut out = vec![line(Style::HEADING, "Miesto dodania / Delivery")];
        if let Some(name) = &d.party_name {
            out.extend(self.layout.lines(Style::NAME, name, width));
        }
        if let Some(id) = &d.location_id {
            let text = format::scheme_value(id.scheme.as_deref(), &id.value);
            self.push(&mut out, "Miesto / Location ID", Some(&text), width);
        }
        if !d.address.is_empty() {
            out.extend(self.address(&d.address, width));
        }
        out
    }

    fn payment_block(&self, width: f32) -> Vec<TextLine> {
        let mut out = vec![line(Style::HEADING, "Platobné údaje / Payment")];
        for means in &self.view.payment_means {
            out.extend(self.payment_means(means, width));
        }
        self.push(
            &mut out,
            "Platobné podmienky / Payment terms",
            self.view.payment_terms.as_deref(),
            width,
        );
        out
    }

    fn payment_means(&self, m: &PaymentMeans, width: f32) -> Vec<TextLine> {
        let mut out = Vec::new();
        if let Some(code) = &m.code {
            let name = m.text.as_deref().or_else(|| format::payment_means(code));
            let text = match name {
                Some(name) => format!("{code} ({name})"),
                None => code.clone(),
            };
            self.push(
                &mut out,
                "Spôsob úhrady / Payment means",
                Some(&text),
                width,
            );
        }
        if let Some(account) = &m.account_id {
            if format::looks_like_iban(account) {
                self.push(&mut out, "IBAN", Some(account), width);
            } else {
                self.push(
                    &mut out,
                    "Číslo účtu / Account number",
                    Some(account),
                    width,
                );
            }
        }
        self.push(
            &mut out,
            "Názov účtu / Account name",
            m.account_name.as_deref(),
            width,
        );
        self.push(&mut out, "BIC", m.bic.as_deref(), width);
        self.push(
            &mut out,
            "Platobná referencia / Payment reference",
            m.payment_id.as_deref(),
            width,
        );
        let card = m.card.as_ref().map(|c| match &c.network {
            Some(network) => format!("{} ({network})", c.number),
            None => c.number.clone(),
        });
        self.push(&mut out, "Karta / Card", card.as_deref(), width);
        self.push(
            &mut out,
            "Mandát / Mandate reference",
            m.mandate.as_deref(),
            width,
        );
        self.push(
            &mut out,
            "Účet platiteľa / Debited account",
            m.debited_account.as_deref(),
            width,
        );
        out
    }
}
