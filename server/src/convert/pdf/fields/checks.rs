//! Cross-checks between extracted values. Passing raises the values involved, failing
//! lowers them (≤ 0.5; identifiers failing their check digits ≤ 0.3) and is recorded.

use super::super::CrossCheck;
use crate::convert::model::{Draft, Field};
use invex_engine::checks;
use rust_decimal::Decimal;

const TOLERANCE: Decimal = Decimal::from_parts(1, 0, 0, false, 2);
const FAILED: f32 = 0.5;
const FAILED_ID: f32 = 0.3;

fn raise<T>(f: &mut Option<Field<T>>) {
    if let Some(f) = f {
        f.confidence = (f.confidence + 0.07).min(0.97);
    }
}

fn lower<T>(f: &mut Option<Field<T>>, to: f32) {
    if let Some(f) = f {
        f.confidence = f.confidence.min(to);
    }
}

fn close(a: Decimal, b: Decimal) -> bool {
    (a - b).abs() <= TOLERANCE
}

fn check(out: &mut Vec<CrossCheck>, name: &str, passed: bool, detail: String) -> bool {
    out.push(CrossCheck {
        name: name.to_string(),
        passed,
        detail,
    });
    passed
}

pub(super) fn apply(d: &mut Draft) -> Vec<CrossCheck> {
    let mut out = Vec::new();
    identifiers(d, &mut out);
    lines(d, &mut out);
    vat_rows(d, &mut out);
    totals(d, &mut out);
    out
}

fn identifiers(d: &mut Draft, out: &mut Vec<CrossCheck>) {
    for (role, party) in [("seller", &mut d.seller), ("buyer", &mut d.buyer)] {
        if let Some(v) = party.ico.as_ref().map(|f| f.value.clone()) {
            let ok = checks::ico_sk(&v);
            let detail = format!(
                "IČO {v} {} the mod-11 check digit",
                if ok { "passes" } else { "fails" }
            );
            if check(out, &format!("{role}.ico check digit"), ok, detail) {
                raise(&mut party.ico);
            } else {
                lower(&mut party.ico, FAILED_ID);
            }
        }
        if let Some(v) = party
            .vat_id
            .as_ref()
            .map(|f| f.value.clone())
            .filter(|v| v.starts_with("SK"))
        {
            let ok = checks::ic_dph_sk(&v);
            let detail = format!(
                "IČ DPH {v} {} SK + 10 digits divisible by 11",
                if ok { "is" } else { "is not" }
            );
            if check(out, &format!("{role}.vat_id check digits"), ok, detail) {
                raise(&mut party.vat_id);
            } else {
                lower(&mut party.vat_id, FAILED_ID);
            }
        }
        if let Some(v) = party.dic.as_ref().map(|f| f.value.clone()) {
            let ok = checks::dic_sk(&v);
            if !check(
                out,
                &format!("{role}.dic format"),
                ok,
                format!("DIČ {v}: 10 digits, not starting with 0"),
            ) {
                lower(&mut party.dic, FAILED_ID);
            }
            // The Slovak IČ DPH is SK + DIČ for most payers: agreement confirms both.
            if let Some(vat) = party
                .vat_id
                .as_ref()
                .map(|f| f.value.clone())
                .filter(|v| v.starts_with("SK"))
            {
                if vat[2..] == v {
                    raise(&mut party.dic);
                }
            }
        }
    }
    if let Some(v) = d.payment.iban.as_ref().map(|f| f.value.clone()) {
        let ok = checks::iban(&v);
        let detail = format!(
            "IBAN {v} {} the mod-97 check",
            if ok { "passes" } else { "fails" }
        );
        if check(out, "payment.iban check digits", ok, detail) {
            raise(&mut d.payment.iban);
        } else {
            lower(&mut d.payment.iban, FAILED_ID);
            lower(&mut d.payment.means_code, FAILED_ID);
        }
    }
}

fn lines(d: &mut Draft, out: &mut Vec<CrossCheck>) {
    let mut all_ok = true;
    for (i, line) in d.lines.iter_mut().enumerate() {
        let (Some(q), Some(p), Some(a)) = (&line.quantity, &line.unit_price, &line.net_amount)
        else {
            continue;
        };
        let product = (q.value * p.value).round_dp(2);
        let ok = close(product, a.value);
        all_ok &= ok;
        let detail = format!("{} × {} = {product}, stated {}", q.value, p.value, a.value);
        if check(
            out,
            &format!("lines[{i}] quantity × price = amount"),
            ok,
            detail,
        ) {
            raise(&mut line.quantity);
            raise(&mut line.unit_price);
            raise(&mut line.net_amount);
        } else {
            lower(&mut line.quantity, FAILED);
            lower(&mut line.unit_price, FAILED);
            lower(&mut line.net_amount, FAILED);
        }
    }
    let amounts: Option<Vec<Decimal>> = d
        .lines
        .iter()
        .map(|l| l.net_amount.as_ref().map(|a| a.value))
        .collect();
    // Against the stated line total when there is one (document allowances and charges
    // lie between it and the net total), else against the net total.
    let stated_line_total = d.totals.line_total.as_ref().map(|f| f.value);
    if let (Some(amounts), Some(stated)) = (
        amounts.as_ref().filter(|a| !a.is_empty()),
        stated_line_total,
    ) {
        let sum: Decimal = amounts.iter().sum();
        let ok = close(sum, stated);
        let detail = format!(
            "sum of {} line amounts {sum}, stated line total {stated}",
            amounts.len()
        );
        if check(out, "lines sum to the line total", ok, detail) {
            raise(&mut d.totals.line_total);
            if all_ok {
                for l in &mut d.lines {
                    raise(&mut l.net_amount);
                }
            }
        } else {
            lower(&mut d.totals.line_total, FAILED);
            for l in &mut d.lines {
                lower(&mut l.net_amount, FAILED);
                lower(&mut l.quantity, FAILED);
                lower(&mut l.unit_price, FAILED);
            }
        }
        return;
    }
    let (Some(amounts), Some(net)) = (
        amounts.filter(|a| !a.is_empty()),
        d.totals.tax_exclusive.as_ref().map(|f| f.value),
    ) else {
        return;
    };
    let sum: Decimal = amounts.iter().sum();
    let ok = close(sum, net);
    let detail = format!(
        "sum of {} line amounts {sum}, stated net total {net}",
        amounts.len()
    );
    if check(out, "lines sum to the net total", ok, detail) {
        d.totals.line_total = Some(Field::new(
            sum,
            d.totals
                .tax_exclusive
                .as_ref()
                .map_or(0.9, |f| f.confidence),
            crate::convert::model::Source::Computed {
                from: "sum of line amounts".into(),
            },
        ));
        raise(&mut d.totals.tax_exclusive);
        if all_ok {
            for l in &mut d.lines {
                raise(&mut l.net_amount);
            }
        }
    } else {
        lower(&mut d.totals.tax_exclusive, FAILED);
        for l in &mut d.lines {
            lower(&mut l.net_amount, FAILED);
            lower(&mut l.quantity, FAILED);
            lower(&mut l.unit_price, FAILED);
        }
    }
}

fn vat_rows(d: &mut Draft, out: &mut Vec<CrossCheck>) {
    for row in &mut d.vat_breakdown {
        let (Some(rate), Some(base), Some(tax)) = (&row.rate, &row.taxable, &row.tax) else {
            continue;
        };
        let expected = (base.value * rate.value / Decimal::from(100)).round_dp(2);
        let ok = close(expected, tax.value);
        let detail = format!(
            "{} × {} % = {expected}, stated {}",
            base.value, rate.value, tax.value
        );
        if check(
            out,
            &format!("VAT {} %: base × rate = tax", rate.value),
            ok,
            detail,
        ) {
            raise(&mut row.rate);
            raise(&mut row.taxable);
            raise(&mut row.tax);
        } else {
            lower(&mut row.taxable, FAILED);
            lower(&mut row.tax, FAILED);
        }
    }
    let taxes: Option<Vec<Decimal>> = d
        .vat_breakdown
        .iter()
        .map(|r| r.tax.as_ref().map(|t| t.value))
        .collect();
    if let (Some(taxes), Some(total)) = (
        taxes.filter(|t| !t.is_empty()),
        d.totals.tax.as_ref().map(|f| f.value),
    ) {
        let sum: Decimal = taxes.iter().sum();
        let ok = close(sum, total);
        if !check(
            out,
            "VAT rows sum to the VAT total",
            ok,
            format!("sum of VAT rows {sum}, stated VAT total {total}"),
        ) {
            lower(&mut d.totals.tax, FAILED);
            for r in &mut d.vat_breakdown {
                lower(&mut r.tax, FAILED);
            }
        }
    }
    let bases: Option<Vec<Decimal>> = d
        .vat_breakdown
        .iter()
        .map(|r| r.taxable.as_ref().map(|t| t.value))
        .collect();
    if let (Some(bases), Some(net)) = (
        bases.filter(|b| !b.is_empty()),
        d.totals.tax_exclusive.as_ref().map(|f| f.value),
    ) {
        let sum: Decimal = bases.iter().sum();
        let ok = close(sum, net);
        if !check(
            out,
            "VAT bases sum to the net total",
            ok,
            format!("sum of VAT bases {sum}, stated net total {net}"),
        ) {
            lower(&mut d.totals.tax_exclusive, FAILED);
            for r in &mut d.vat_breakdown {
                lower(&mut r.taxable, FAILED);
            }
        }
    }
}

fn totals(d: &mut Draft, out: &mut Vec<CrossCheck>) {
    let t = &mut d.totals;
    let value = |f: &Option<Field<Decimal>>| f.as_ref().map(|f| f.value);
    // The grand total: with VAT, else the amount due.
    let gross = value(&t.tax_inclusive).or(value(&t.payable));
    if let (Some(net), Some(vat), Some(gross)) = (value(&t.tax_exclusive), value(&t.tax), gross) {
        let ok = close(net + vat, gross);
        let detail = format!("{net} + {vat} = {}, stated total {gross}", net + vat);
        if check(out, "net + VAT = total", ok, detail) {
            raise(&mut t.tax_exclusive);
            raise(&mut t.tax);
            raise(&mut t.tax_inclusive);
            raise(&mut t.payable);
        } else {
            lower(&mut t.tax_exclusive, FAILED);
            lower(&mut t.tax, FAILED);
            lower(&mut t.tax_inclusive, FAILED);
            lower(&mut t.payable, FAILED);
        }
    }
    if let (Some(total), Some(due)) = (value(&t.tax_inclusive), value(&t.payable)) {
        // Prepayments make these differ legitimately; a difference still needs a look.
        let ok = close(total, due);
        if !check(
            out,
            "total = amount due",
            ok,
            format!("total {total}, amount due {due}"),
        ) {
            lower(&mut t.payable, 0.6);
        }
    }
}
