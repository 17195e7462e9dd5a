//! Writes laid-out pages as a PDF 1.7 file with pdf-writer.
//!
//! Fonts are embedded as Type0 / CIDFontType2 with Identity-H encoding, subset to the
//! glyphs used. Subset glyph ids are the CIDs, and a ToUnicode CMap maps each back to its
//! character so extracted text is exact. Object ids are assigned in a fixed order, streams
//! are compressed deterministically, and the dates and file id derive from the invoice, so
//! the same input gives the same bytes.

use std::collections::BTreeMap;

use pdf_writer::types::{CidFontType, FontFlags, SystemInfo, UnicodeCmap};
use pdf_writer::{Content, Date, Filter, Finish, Name, Pdf, Rect, Ref, Str, TextStr};
use sha2::{Digest, Sha256};
use subsetter::GlyphRemapper;

use super::font::{Font, FontId, Fonts};
use super::layout::{Op, Page, Span, PAGE_HEIGHT, PAGE_WIDTH};
use super::RenderError;

/// Document information, fixed by the invoice.
pub struct Meta {
    pub title: String,
    /// The invoice issue date, used as creation date; none when it does not parse.
    pub date: Option<chrono::NaiveDate>,
    /// Seeds the file identifier.
    pub fingerprint: Vec<u8>,
}

/// The glyphs one font shows, in order of first use (which fixes the subset's ids).
struct FontUse {
    remapper: GlyphRemapper,
    /// Subset glyph id → the character it shows.
    chars: BTreeMap<u16, char>,
}

impl FontUse {
    fn new() -> FontUse {
        FontUse {
            remapper: GlyphRemapper::new(),
            chars: BTreeMap::new(),
        }
    }

    /// Encodes text as big-endian subset glyph ids (Identity-H: CID = subset glyph id).
    fn encode(&mut self, font: &Font, text: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len() * 2);
        for c in text.chars() {
            let (shown, glyph) = font.glyph(c);
            let cid = self.remapper.remap(glyph.0);
            self.chars.entry(cid).or_insert(shown);
            out.extend_from_slice(&cid.to_be_bytes());
        }
        out
    }
}

struct Ids {
    next: i32,
}

impl Ids {
    fn next(&mut self) -> Ref {
        let id = Ref::new(self.next);
        self.next += 1;
        id
    }
}

pub fn write(pages: &[Page], fonts: &Fonts, meta: &Meta) -> Result<Vec<u8>, RenderError> {
    let mut uses: BTreeMap<FontId, FontUse> = BTreeMap::new();
    let contents: Vec<Vec<u8>> = pages
        .iter()
        .map(|page| page_content(page, fonts, &mut uses))
        .collect();

    let mut ids = Ids { next: 1 };
    let catalog_id = ids.next();
    let tree_id = ids.next();
    let info_id = ids.next();
    let mut pdf = Pdf::new();

    let mut font_refs = Vec::new();
    for (font_id, font_use) in &uses {
        let type0 = write_font(&mut pdf, &mut ids, fonts.get(*font_id), font_use)?;
        font_refs.push((*font_id, type0));
    }

    let mut page_ids = Vec::new();
    for content in &contents {
        let page_id = ids.next();
        let content_id = ids.next();
        let compressed = compress(content);
        pdf.stream(content_id, &compressed)
            .filter(Filter::FlateDecode);
        let mut page = pdf.page(page_id);
        page.media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT))
            .parent(tree_id)
            .contents(content_id);
        let mut resources = page.resources();
        let mut font_dict = resources.fonts();
        for (font_id, type0) in &font_refs {
            font_dict.pair(Name(font_id.resource_name()), *type0);
        }
        font_dict.finish();
        resources.finish();
        page.finish();
        page_ids.push(page_id);
    }

    let count = i32::try_from(page_ids.len()).map_err(|_| RenderError::TooLarge)?;
    pdf.pages(tree_id).kids(page_ids).count(count);
    pdf.catalog(catalog_id).pages(tree_id).lang(TextStr("sk"));
    let mut info = pdf.document_info(info_id);
    info.title(TextStr(&meta.title)).producer(TextStr("invex"));
    if let Some(date) = meta.date.and_then(pdf_date) {
        info.creation_date(date).modified_date(date);
    }
    info.finish();
    let digest = Sha256::digest(&meta.fingerprint);
    let file_id = digest[..16].to_vec();
    pdf.set_file_id((file_id.clone(), file_id));
    Ok(pdf.finish())
}

fn pdf_date(date: chrono::NaiveDate) -> Option<Date> {
    use chrono::Datelike;
    let year = u16::try_from(date.year()).ok()?;
    let month = u8::try_from(date.month()).ok()?;
    let day = u8::try_from(date.day()).ok()?;
    Some(
        Date::new(year)
            .month(month)
            .day(day)
            .hour(0)
            .minute(0)
            .second(0)
            .utc_offset_hour(0)
            .utc_offset_minute(0),
    )
}

fn page_content(page: &Page, fonts: &Fonts, uses: &mut BTreeMap<FontId, FontUse>) -> Vec<u8> {
    let mut content = Content::new();
    for op in &page.ops {
        match op {
            Op::Fill {
                x,
                y,
                width,
                height,
                gray,
            } => {
                content
                    .set_fill_gray(*gray)
                    .rect(*x, *y, *width, *height)
                    .fill_nonzero();
            }
            Op::Rule {
                from,
                to,
                width,
                gray,
            } => {
                content
                    .set_stroke_gray(*gray)
                    .set_line_width(*width)
                    .move_to(from.0, from.1)
                    .line_to(to.0, to.1)
                    .stroke();
            }
            Op::Text(spans) => text_object(&mut content, spans, fonts, uses),
        }
    }
    content.finish().to_vec()
}

fn text_object(
    content: &mut Content,
    spans: &[Span],
    fonts: &Fonts,
    uses: &mut BTreeMap<FontId, FontUse>,
) {
    content.begin_text();
    let mut current: Option<(FontId, f32, f32)> = None;
    for span in spans {
        let style = span.style;
        if current.map(|(f, s, _)| (f, s)) != Some((style.font, style.size)) {
            content.set_font(Name(style.font.resource_name()), style.size);
        }
        if current.map(|(_, _, g)| g) != Some(style.gray) {
            content.set_fill_gray(style.gray);
        }
        current = Some((style.font, style.size, style.gray));
        let font = fonts.get(style.font);
        let encoded = uses
            .entry(style.font)
            .or_insert_with(FontUse::new)
            .encode(font, &span.text);
        content
            .set_text_matrix([1.0, 0.0, 0.0, 1.0, span.x, span.y])
            .show(Str(&encoded));
    }
    content.end_text();
}

/// Writes the Type0 font with its CID font, descriptor, subset program and ToUnicode
/// CMap; returns the Type0 font's id.
fn write_font(
    pdf: &mut Pdf,
    ids: &mut Ids,
    font: &Font,
    used: &FontUse,
) -> Result<Ref, RenderError> {
    let type0_id = ids.next();
    let cid_id = ids.next();
    let descriptor_id = ids.next();
    let file_id = ids.next();
    let cmap_id = ids.next();

    let subset =
        subsetter::subset(font.data, 0, &used.remapper).map_err(|e| RenderError::Font {
            font: font.id.postscript_name(),
            message: format!("subsetting failed: {e}"),
        })?;
    let base_name = format!("{}+{}", subset_tag(used), font.id.postscript_name());
    let system_info = SystemInfo {
        registry: Str(b"Adobe"),
        ordering: Str(b"Identity"),
        supplement: 0,
    };

    pdf.type0_font(type0_id)
        .base_font(Name(base_name.as_bytes()))
        .encoding_predefined(Name(b"Identity-H"))
        .descendant_font(cid_id)
        .to_unicode(cmap_id);

    // Widths of subset glyphs 0..n in order, from the original glyph ids.
    let widths: Vec<f32> = used
        .remapper
        .remapped_gids()
        .map(|old| font.advance(ttf_parser::GlyphId(old)))
        .collect();
    let mut cid = pdf.cid_font(cid_id);
    cid.subtype(CidFontType::Type2)
        .base_font(Name(base_name.as_bytes()))
        .system_info(system_info)
        .font_descriptor(descriptor_id)
        .cid_to_gid_map_predefined(Name(b"Identity"));
    cid.widths().consecutive(0, widths);
    cid.finish();

    let m = font.metrics();
    pdf.font_descriptor(descriptor_id)
        .name(Name(base_name.as_bytes()))
        .flags(FontFlags::SYMBOLIC)
        .bbox(Rect::new(m.bbox[0], m.bbox[1], m.bbox[2], m.bbox[3]))
        .italic_angle(0.0)
        .ascent(m.ascent)
        .descent(m.descent)
        .cap_height(m.cap_height)
        .stem_v(match font.id {
            FontId::Regular => 80.0,
            FontId::Bold => 140.0,
        })
        .font_file2(file_id);

    let length1 = i32::try_from(subset.len()).map_err(|_| RenderError::TooLarge)?;
    let compressed = compress(&subset);
    pdf.stream(file_id, &compressed)
        .filter(Filter::FlateDecode)
        .pair(Name(b"Length1"), length1);

    let mut cmap = UnicodeCmap::new(Name(b"Custom"), system_info);
    for (cid, c) in &used.chars {
        cmap.pair(*cid, *c);
    }
    let cmap = cmap.finish();
    pdf.cmap(cmap_id, &cmap);
    Ok(type0_id)
}

/// Six capital letters derived from the subset's glyphs, as PDF subset names require;
/// derived, not random, to keep output reproducible.
fn subset_tag(used: &FontUse) -> String {
    let mut hasher = Sha256::new();
    for gid in used.remapper.remapped_gids() {
        hasher.update(gid.to_be_bytes());
    }
    hasher
        .finalize()
        .iter()
        .take(6)
        .map(|b| char::from(b'A' + b % 26))
        .collect()
}

fn compress(data: &[u8]) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec_zlib(data, 6)
}
