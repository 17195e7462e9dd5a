//! Seller and buyer: the block of lines under the `Dodávateľ` / `Odberateľ` label, aligned
//! with the label's left edge, so side-by-side blocks split by x position. Name first, then
//! street, postcode + city and country; identifiers by their labels inside the block.

use super::labels::{Hit, Key};
use super::{parse, pdf_source, Ctx, PATTERN};
use crate::convert::model::{Draft, Field, Party, Source};
use regex::Regex;
use std::sync::LazyLock;

/// How far a block line may start from the label's left edge.
const ALIGN: f32 = 12.0;
/// Address lines by their place in the block.
const BLOCK_LINE: f32 = 0.8;
const BLOCK_NAME: f32 = 0.85;

static POSTCODE_CITY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:([A-Z]{1,2})[- ])?(\d{3} ?\d{2}|\d{4,5})\s+(\D.*)$")
        .unwrap_or_else(|_| unreachable!())
});
static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[\w.+-]+@[\w-]+(\.[\w-]+)+").unwrap_or_else(|_| unreachable!()));

struct Block {
    /// (line, segment) of each block line, label line first when it carries text.
    members: Vec<(usize, usize)>,
    /// Text of the label line after the label (`Dodávateľ: Alfa s.r.o.`).
    inline: Option<(usize, String)>,
    /// (line, segment) of the label.
    label: (usize, usize),
}

fn heading<'a>(ctx: &'a Ctx, key: Key) -> Option<&'a Hit> {
    ctx.hits
        .iter()
        .find(|h| h.key == key && h.start <= 1 && !ctx.blocked.contains(&h.line))
}

fn block(ctx: &Ctx, h: &Hit, other: Option<&Hit>) -> Block {
    let lines = ctx.lines;
    let label_line = &lines[h.line];
    let seg = &label_line.segments[h.seg];
    let x0 = seg.x0;
    let x_limit = match other {
        Some(o)
            if (lines[o.line].y - label_line.y).abs() < label_line.size
                && lines[o.line].page == label_line.page =>
        {
            let ox = lines[o.line].segments[o.seg].x0;
            if ox > x0 {
                ox - 1.0
            } else {
                f32::INFINITY
            }
        }
        _ => f32::INFINITY,
    };
    // Skip translations chained to the label (`Dodávateľ / Seller`).
    let mut end = h.end;
    while let Some(next) = ctx.hits.iter().find(|o| {
        o.line == h.line && o.seg == h.seg && o.start >= end && {
            let between: String = seg.text.chars().skip(end).take(o.start - end).collect();
            between
                .chars()
                .all(|c| c.is_whitespace() || "/|:".contains(c))
        }
    }) {
        end = next.end;
    }
    let rest: String = seg.text.chars().skip(end).collect();
    let rest = rest
        .trim_start_matches(|c: char| c == ':' || c.is_whitespace())
        .trim()
        .to_string();
    let inline = (!rest.is_empty()).then_some((h.line, rest));
    let mut members = Vec::new();
    let mut prev_y = label_line.y;
    for (li, line) in lines.iter().enumerate().take(h.line + 14).skip(h.line + 1) {
        if line.page != label_line.page
            || prev_y - line.y > 2.6 * line.size.max(label_line.size)
            || ctx.blocked.contains(&li)
        {
            break;
        }
        let Some(si) = line
            .segments
            .iter()
            .position(|s| (s.x0 - x0).abs() <= ALIGN && s.x0 < x_limit)
        else {
            break;
        };
        let starts_with = |keys: &[Key]| {
            ctx.hits
                .iter()
                .any(|o| o.line == li && o.seg == si && o.start <= 1 && keys.contains(&o.key))
        };
        // Another section starts: the other party, document data, totals.
        if starts_with(&[
            Key::Seller,
            Key::Buyer,
            Key::Number,
            Key::CreditNumber,
            Key::IssueDate,
            Key::DueDate,
            Key::TaxPointDate,
            Key::VarSymbol,
            Key::NetTotal,
            Key::GrossTotal,
            Key::Payable,
            Key::Total,
            Key::Currency,
        ]) {
            break;
        }
        members.push((li, si));
        prev_y = line.y;
    }
    Block {
        members,
        inline,
        label: (h.line, h.seg),
    }
}

pub(super) fn fill(ctx: &Ctx, draft: &mut Draft) {
    let seller = heading(ctx, Key::Seller);
    let buyer = heading(ctx, Key::Buyer);
    let blocks = [
        seller.map(|h| block(ctx, h, buyer)),
        buyer.map(|h| block(ctx, h, seller)),
    ];
    let [seller_block, buyer_block] = blocks;
    if let Some(b) = &seller_block {
        party(ctx, b, &mut draft.seller, "seller");
    }
    if let Some(b) = &buyer_block {
        party(ctx, b, &mut draft.buyer, "buyer");
    }
    // Identifiers outside both blocks (a footer with the seller's registration data).
    let inside = |h: &Hit| {
        [&seller_block, &buyer_block].iter().any(|b| {
            b.as_ref()
                .is_some_and(|b| b.members.contains(&(h.line, h.seg)) || b.label == (h.line, h.seg))
        })
    };
    let outside: Vec<Hit> = ctx.hits.iter().filter(|h| !inside(h)).cloned().collect();
    ids(ctx, &outside, &mut draft.seller, 0.75);
}

fn party(ctx: &Ctx, b: &Block, p: &mut Party, role: &str) {
    let mut address: Vec<(usize, String)> = Vec::new();
    if let Some((line, text)) = &b.inline {
        address.push((*line, text.clone()));
    }
    for &(li, si) in &b.members {
        let has_label = ctx.hits.iter().any(|h| h.line == li && h.seg == si);
        let text = ctx.lines[li].segments[si].text.trim().to_string();
        if !has_label && !EMAIL.is_match(&text) {
            address.push((li, text));
        }
    }
    // Only the block's own segments: on shared lines, segments to the right belong to
    // whatever stands there (the other party, document data).
    let block_hits: Vec<Hit> = ctx
        .hits
        .iter()
        .filter(|h| b.members.contains(&(h.line, h.seg)))
        .cloned()
        .collect();
    ids(ctx, &block_hits, p, 1.0);
    if p.email.is_none() {
        p.email = b.members.iter().find_map(|&(li, si)| {
            let m = EMAIL.find(&ctx.lines[li].segments[si].text)?;
            Some(Field::new(
                m.as_str().to_string(),
                BLOCK_LINE,
                pdf_source(ctx.lines, li, format!("{role} block, e-mail")),
            ))
        });
    }
    let src =
        |line: usize, what: &str| pdf_source(ctx.lines, line, format!("{role} block, {what}"));
    let Some(((name_line, name), rest)) = address.split_first() else {
        return;
    };
    p.name = Some(Field::new(
        name.clone(),
        BLOCK_NAME,
        src(*name_line, "first line"),
    ));
    let postcode_at = rest.iter().position(|(_, t)| POSTCODE_CITY.is_match(t));
    if let Some(i) = postcode_at {
        let (line, text) = &rest[i];
        if let Some(c) = POSTCODE_CITY.captures(text) {
            p.address.postcode = Some(Field::new(
                c[2].to_string(),
                BLOCK_NAME,
                src(*line, "postcode and city"),
            ));
            p.address.city = Some(Field::new(
                c[3].trim().to_string(),
                BLOCK_NAME,
                src(*line, "postcode and city"),
            ));
            if let Some(code) = c.get(1).and_then(|m| parse::country_code(m.as_str())) {
                p.address.country = Some(Field::new(
                    code.to_string(),
                    BLOCK_LINE,
                    src(*line, "postcode prefix"),
                ));
            }
        }
        // The street is the line just above the postcode line (a second name line may
        // come before it).
        if i > 0 {
            let (line, text) = &rest[i - 1];
            if parse::country_code(text).is_none() {
                p.address.street = Some(Field::new(
                    text.clone(),
                    BLOCK_LINE,
                    src(*line, "line above the postcode"),
                ));
            }
        }
    } else if let Some((line, text)) = rest
        .first()
        .filter(|(_, t)| parse::country_code(t).is_none())
    {
        p.address.street = Some(Field::new(
            text.clone(),
            0.5,
            src(*line, "second line (no postcode found)"),
        ));
    }
    if let Some((line, code)) = rest
        .iter()
        .find_map(|(l, t)| parse::country_code(t).map(|c| (*l, c)))
    {
        p.address.country = Some(Field::new(
            code.to_string(),
            BLOCK_NAME,
            src(line, "country line"),
        ));
    }
    if p.address.country.is_none() {
        let from_vat = p.vat_id.as_ref().and_then(|v| {
            let prefix = v.value.get(..2)?;
            let code = if prefix == "EL" { "GR" } else { prefix };
            code.chars()
                .all(|c| c.is_ascii_uppercase())
                .then(|| code.to_string())
        });
        if let Some(code) = from_vat {
            p.address.country = Some(Field::new(
                code,
                PATTERN,
                Source::Computed {
                    from: format!("{role}.vat_id prefix"),
                },
            ));
        }
    }
}

/// IČO, DIČ, IČ DPH and e-mail from label hits into `p` (unset fields only; check digits
/// are weighed later with the other cross-checks). `weight` scales confidence for hits found
/// outside the party's own block.
fn ids(ctx: &Ctx, hits: &[Hit], p: &mut Party, weight: f32) {
    let blocked = |l: usize| ctx.blocked.contains(&l);
    let finder = super::labels::Values {
        lines: ctx.lines,
        hits: &ctx.hits,
        blocked: &blocked,
    };
    for h in hits {
        if !matches!(
            h.key,
            Key::Ico | Key::Dic | Key::IcDph | Key::Email | Key::Country
        ) {
            continue;
        }
        let Some(v) = finder.of(h) else { continue };
        let method = super::label_method(h, &v);
        let base = super::label_confidence(&v) * weight;
        let source = pdf_source(ctx.lines, v.line, method);
        let token: String = v
            .text
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches([',', ';'])
            .to_string();
        match h.key {
            Key::Ico if p.ico.is_none() => {
                let digits: String = v
                    .text
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == ' ')
                    .filter(|c| !c.is_whitespace())
                    .collect();
                if digits.len() < 6 || digits.len() > 8 {
                    continue;
                }
                p.ico = Some(Field::new(format!("{digits:0>8}"), base, source));
            }
            Key::Dic => {
                let compact: String = token.to_ascii_uppercase();
                if compact.len() > 2 && compact[..2].chars().all(|c| c.is_ascii_uppercase()) {
                    // Czech and most EU DIČ are VAT numbers with a country prefix.
                    if p.vat_id.is_none() {
                        p.vat_id = Some(Field::new(compact, base, source));
                    }
                } else if p.dic.is_none()
                    && compact.chars().all(|c| c.is_ascii_digit())
                    && !compact.is_empty()
                {
                    p.dic = Some(Field::new(compact, base, source));
                }
            }
            Key::IcDph if p.vat_id.is_none() => {
                let compact: String = v
                    .text
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == ' ')
                    .filter(|c| !c.is_whitespace())
                    .collect::<String>()
                    .to_ascii_uppercase();
                if compact.len() < 4 || !compact[..2].chars().all(|c| c.is_ascii_uppercase()) {
                    continue;
                }
                p.vat_id = Some(Field::new(compact, base, source));
            }
            Key::Country if p.address.country.is_none() => {
                let code = parse::country_code(&v.text).or_else(|| {
                    let t = v.text.trim();
                    (t.len() == 2 && t.chars().all(|c| c.is_ascii_uppercase())).then_some(t)
                });
                if let Some(code) = code {
                    p.address.country = Some(Field::new(code.to_string(), base, source));
                }
            }
            Key::Email if p.email.is_none() => {
                if let Some(m) = EMAIL.find(&v.text) {
                    p.email = Some(Field::new(m.as_str().to_string(), base, source));
                }
            }
            _ => {}
        }
    }
}
