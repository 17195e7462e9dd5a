//! Seller and buyer: the block of lines under the `Dodávateľ` / `Odberateľ` label, aligned
//! with the label's left edge, so side-by-side blocks split by x position. Name first, then
//! street, postcode + city and country; identifiers by their labels inside the block.

use super::super::layout::Segment;
use super::labels::{self, Hit, Key};
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
    /// Right edge of the block's column: values right of it belong to the next column.
    x_max: f32,
}

fn heading<'a>(ctx: &'a Ctx, keys: &[Key]) -> Option<&'a Hit> {
    ctx.hits.iter().find(|h| {
        keys.contains(&h.key)
            && !ctx.blocked.contains(&h.line)
            && labels::is_heading(ctx.lines, &ctx.hits, h)
    })
}

/// The block under heading `h`. When other headings stand on the same baseline (seller
/// and buyer side by side), the block is the x-range from its heading to the next one, and
/// lines of the other columns that fall between its lines (the columns' baselines need not
/// agree) are passed over.
fn block(ctx: &Ctx, h: &Hit, others: &[&Hit]) -> Block {
    let lines = ctx.lines;
    let label_line = &lines[h.line];
    let seg = &label_line.segments[h.seg];
    let x0 = seg.x0;
    let beside: Vec<f32> = others
        .iter()
        .filter(|o| {
            lines[o.line].page == label_line.page
                && (lines[o.line].y - label_line.y).abs() < label_line.size
        })
        .map(|o| lines[o.line].segments[o.seg].x0)
        .collect();
    let x_max = beside
        .iter()
        .copied()
        .filter(|&ox| ox > x0)
        .fold(f32::INFINITY, f32::min);
    let side_by_side = !beside.is_empty();
    // In a column, any segment starting inside it is the block's; a lone block keeps to
    // the label's left edge, since text to its right is usually unrelated.
    let in_block = |s: &Segment| {
        if side_by_side {
            s.x0 >= x0 - ALIGN && s.x0 < x_max - 1.0
        } else {
            (s.x0 - x0).abs() <= ALIGN
        }
    };
    let end = labels::chain_end(&ctx.hits, &seg.text, h);
    let rest: String = seg.text.chars().skip(end).collect();
    let rest = rest
        .trim_start_matches(|c: char| c == ':' || c.is_whitespace())
        .trim()
        .to_string();
    let inline = (!rest.is_empty()).then_some((h.line, rest));
    let mut members = Vec::new();
    let mut prev_y = label_line.y;
    for (li, line) in lines.iter().enumerate().skip(h.line + 1) {
        if line.page != label_line.page
            || prev_y - line.y > 2.6 * line.size.max(label_line.size)
            || ctx.blocked.contains(&li)
        {
            break;
        }
        let Some(si) = line.segments.iter().position(in_block) else {
            if side_by_side {
                continue;
            }
            break;
        };
        let text = &line.segments[si].text;
        let starts_with = |keys: &[Key]| {
            ctx.hits
                .iter()
                .any(|o| o.line == li && o.seg == si && o.start <= 1 && keys.contains(&o.key))
        };
        let party_heading = ctx.hits.iter().any(|o| {
            o.line == li
                && o.seg == si
                && matches!(o.key, Key::Seller | Key::Buyer)
                && labels::is_heading(ctx.lines, &ctx.hits, o)
        });
        // Another section starts: the other party, document data, totals.
        if party_heading
            || labels::is_section(text)
            || starts_with(&[
                Key::Number,
                Key::CreditNumber,
                Key::IssueDate,
                Key::DueDate,
                Key::TaxPointDate,
                Key::DeliveryDate,
                Key::VarSymbol,
                Key::NetTotal,
                Key::GrossTotal,
                Key::Payable,
                Key::Total,
                Key::Currency,
            ])
        {
            break;
        }
        members.push((li, si));
        prev_y = line.y;
    }
    Block {
        members,
        inline,
        label: (h.line, h.seg),
        x_max,
    }
}

/// Headings of parties other than seller and buyer, whose identifiers must not be taken
/// for the seller's.
const OTHER_PARTIES: [&str; 6] = [
    "Príjemca platby",
    "Payee",
    "Daňový zástupca",
    "Tax representative",
    "Miesto dodania",
    "Delivery",
];

pub(super) fn fill(ctx: &Ctx, draft: &mut Draft) {
    let seller = heading(ctx, &[Key::Seller]);
    let buyer = heading(ctx, &[Key::Buyer]);
    let seller_block = seller.map(|h| block(ctx, h, &buyer.into_iter().collect::<Vec<_>>()));
    let buyer_block = buyer.map(|h| block(ctx, h, &seller.into_iter().collect::<Vec<_>>()));
    if let Some(b) = &seller_block {
        party(ctx, b, &mut draft.seller, "seller");
    }
    if let Some(b) = &buyer_block {
        party(ctx, b, &mut draft.buyer, "buyer");
    }
    // Blocks of other parties (payee, tax representative, delivery), found by their
    // section titles, so their identifiers stay theirs.
    let mut others: Vec<Block> = Vec::new();
    for (li, line) in ctx.lines.iter().enumerate() {
        for (si, seg) in line.segments.iter().enumerate() {
            let folded = super::super::text::fold_string(seg.text.trim());
            let title = OTHER_PARTIES.iter().any(|t| {
                folded
                    .split('/')
                    .next()
                    .is_some_and(|first| first.trim() == super::super::text::fold_string(t))
            });
            if title {
                let pseudo = Hit {
                    key: Key::Other,
                    line: li,
                    seg: si,
                    start: 0,
                    end: seg.text.chars().count(),
                    label: seg.text.clone(),
                };
                others.push(block(ctx, &pseudo, &[]));
            }
        }
    }
    // Identifiers outside all blocks (a footer with the seller's registration data).
    let inside = |h: &Hit| {
        seller_block
            .iter()
            .chain(buyer_block.iter())
            .chain(others.iter())
            .any(|b| b.members.contains(&(h.line, h.seg)) || b.label == (h.line, h.seg))
    };
    let outside: Vec<Hit> = ctx.hits.iter().filter(|h| !inside(h)).cloned().collect();
    ids(ctx, &outside, &mut draft.seller, 0.75, f32::INFINITY);
}

fn party(ctx: &Ctx, b: &Block, p: &mut Party, role: &str) {
    let mut address: Vec<(usize, String)> = Vec::new();
    if let Some((line, text)) = &b.inline {
        address.push((*line, text.clone()));
    }
    let mut after_empty_label = false;
    for &(li, si) in &b.members {
        let text = ctx.lines[li].segments[si].text.trim().to_string();
        let labelled = ctx
            .hits
            .iter()
            .any(|h| h.line == li && h.seg == si && labelled_line(ctx, h));
        // A value wrapped under its label (`Endpoint:` / `0088:123…`) is not an address.
        let empty_label = labelled && text.ends_with(':');
        if !labelled && !after_empty_label && !EMAIL.is_match(&text) {
            address.push((li, text));
        }
        after_empty_label = empty_label;
    }
    // Only the block's own segments: on shared lines, segments to the right belong to
    // whatever stands there (the other party, document data).
    let block_hits: Vec<Hit> = ctx
        .hits
        .iter()
        .filter(|h| b.members.contains(&(h.line, h.seg)))
        .cloned()
        .collect();
    ids(ctx, &block_hits, p, 1.0, b.x_max);
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
            // A VAT id read under its label is registered in that country, which is almost
            // always the address country too; a VAT id found by pattern alone says less.
            let confidence = if v.confidence >= 0.85 { 0.85 } else { PATTERN };
            code.chars()
                .all(|c| c.is_ascii_uppercase())
                .then(|| (code.to_string(), confidence))
        });
        if let Some((code, confidence)) = from_vat {
            p.address.country = Some(Field::new(
                code,
                confidence,
                Source::Computed {
                    from: format!("{role}.vat_id prefix"),
                },
            ));
        }
    }
}

/// Whether hit `h` starts a `Label: value` line of a block, as opposed to a label word
/// inside a name (`Buyer Official Name`, `Bank of …`): a colon after the label, or an
/// identifier label followed by a number.
fn labelled_line(ctx: &Ctx, h: &Hit) -> bool {
    if h.start > 1 {
        return false;
    }
    let text = &ctx.lines[h.line].segments[h.seg].text;
    let end = labels::chain_end(&ctx.hits, text, h);
    let rest: String = text.chars().skip(end).collect();
    let rest = rest.trim_start();
    rest.starts_with(':')
        || (matches!(
            h.key,
            Key::Ico | Key::Dic | Key::IcDph | Key::Iban | Key::Endpoint
        ) && rest.chars().any(|c| c.is_ascii_digit()))
}

/// A VAT identifier as printed: country prefix and the rest, spaces dropped, dots and
/// dashes kept (`NL8200.98.395.B.01`).
fn vat_id(text: &str) -> Option<String> {
    let compact: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || " .-".contains(*c))
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .trim_end_matches(['.', '-'])
        .to_ascii_uppercase();
    let prefixed = compact.len() >= 4
        && compact[..2].chars().all(|c| c.is_ascii_uppercase())
        && compact[2..].chars().any(|c| c.is_ascii_digit());
    prefixed.then_some(compact)
}

/// A legal registration id: a Slovak IČO (6–8 digits, zero-padded to 8), else the value
/// as printed (`GB983294`, `32081330 Amersfoort`).
fn legal_id(text: &str) -> Option<String> {
    let t = text.trim();
    if t.chars().all(|c| c.is_ascii_digit() || c == ' ') {
        let digits: String = t.chars().filter(char::is_ascii_digit).collect();
        return match digits.len() {
            6..=8 => Some(format!("{digits:0>8}")),
            9..=20 => Some(digits),
            _ => None,
        };
    }
    let shaped = t.chars().count() <= 40
        && t.chars().any(|c| c.is_ascii_digit())
        && t.split_whitespace().count() <= 3;
    shaped.then(|| t.to_string())
}

/// `scheme:value` as printed for electronic addresses, or a bare value.
fn endpoint(text: &str) -> Option<String> {
    let token = text.split_whitespace().next()?.trim_end_matches([',', ';']);
    (token.len() >= 3 && token.chars().any(|c| c.is_ascii_alphanumeric()))
        .then(|| token.to_string())
}

/// IČO, DIČ, IČ DPH, country, endpoint and e-mail from label hits into `p` (unset fields
/// only; check digits are weighed later with the other cross-checks). `weight` scales
/// confidence for hits found outside the party's own block; values must start left of
/// `x_max` (the block's column).
fn ids(ctx: &Ctx, hits: &[Hit], p: &mut Party, weight: f32, x_max: f32) {
    let blocked = |l: usize| ctx.blocked.contains(&l);
    let finder = super::labels::Values {
        lines: ctx.lines,
        hits: &ctx.hits,
        blocked: &blocked,
    };
    // A labelled VAT id wins over a DIČ that looks like one (Czech DIČ are VAT numbers,
    // but a `Tax ID` may be any registration).
    let mut ordered: Vec<&Hit> = hits.iter().filter(|h| h.key == Key::IcDph).collect();
    ordered.extend(hits.iter().filter(|h| h.key != Key::IcDph));
    for h in ordered {
        if !matches!(
            h.key,
            Key::Ico | Key::Dic | Key::IcDph | Key::Email | Key::Country | Key::Endpoint
        ) {
            continue;
        }
        let Some(v) = finder.of_within(h, x_max) else {
            continue;
        };
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
                let Some(id) = legal_id(&v.text) else {
                    continue;
                };
                // Only a Slovak IČO is sure from its shape; other ids are taken as printed.
                let confidence = if id.len() == 8 && id.chars().all(|c| c.is_ascii_digit()) {
                    base
                } else {
                    base.min(0.8)
                };
                p.ico = Some(Field::new(id, confidence, source));
            }
            Key::Dic => {
                let compact: String = token.to_ascii_uppercase();
                if let Some(vat) = vat_id(&compact) {
                    // Czech and most EU DIČ are VAT numbers with a country prefix.
                    if p.vat_id.is_none() {
                        p.vat_id = Some(Field::new(vat, base, source));
                    }
                } else if p.dic.is_none()
                    && compact.chars().all(|c| c.is_ascii_digit())
                    && !compact.is_empty()
                {
                    p.dic = Some(Field::new(compact, base, source));
                }
            }
            Key::IcDph if p.vat_id.is_none() => {
                if let Some(vat) = vat_id(&v.text) {
                    p.vat_id = Some(Field::new(vat, base, source));
                }
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
            Key::Endpoint if p.endpoint.is_none() => {
                if let Some(e) = endpoint(&v.text) {
                    p.endpoint = Some(Field::new(e, base, source));
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
