//! A small PDF writer for tests: Helvetica (WinAnsi, no /Widths, as generators write the
//! standard fonts) and DejaVu Sans embedded as a Type0 / Identity-H font with a ToUnicode
//! CMap, text placed at absolute positions, optional shuffling with baseline jitter,
//! attachments and image-only pages.

use super::encoding;
use lopdf::{dictionary, Document, Object, ObjectId, Stream, StringFormat};
use std::collections::BTreeMap;

const DEJAVU: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Font {
    Helvetica,
    Bold,
    DejaVu,
}

#[derive(Clone, Debug)]
pub struct Text {
    pub x: f32,
    pub y: f32,
    pub size: f32,
    pub font: Font,
    pub text: String,
    /// Right-aligned at `x`.
    pub right: bool,
}

pub fn t(x: f32, y: f32, text: &str) -> Text {
    Text {
        x,
        y,
        size: 9.0,
        font: Font::Helvetica,
        text: text.into(),
        right: false,
    }
}

/// Right-aligned at `x`.
pub fn r(x: f32, y: f32, text: &str) -> Text {
    Text {
        right: true,
        ..t(x, y, text)
    }
}

/// DejaVu Sans (Type0), for Slovak letters outside WinAnsi.
pub fn u(x: f32, y: f32, text: &str) -> Text {
    Text {
        font: Font::DejaVu,
        ..t(x, y, text)
    }
}

pub fn ur(x: f32, y: f32, text: &str) -> Text {
    Text {
        right: true,
        ..u(x, y, text)
    }
}

impl Text {
    pub fn size(mut self, size: f32) -> Self {
        self.size = size;
        self
    }
    pub fn bold(mut self) -> Self {
        self.font = Font::Bold;
        self
    }
}

#[derive(Default)]
pub struct Page {
    pub items: Vec<Text>,
    /// Emit words as separate text objects in a scrambled order with jittered baselines.
    pub shuffled: bool,
    /// Draw an image instead of text.
    pub image_only: bool,
}

pub struct Attachment {
    pub name: String,
    pub bytes: Vec<u8>,
}

struct DejaVu {
    data: Vec<u8>,
    used: BTreeMap<u16, (char, u16)>,
}

impl DejaVu {
    fn load() -> DejaVu {
        DejaVu {
            data: std::fs::read(DEJAVU).expect("DejaVu Sans is installed"),
            used: BTreeMap::new(),
        }
    }

    fn face(&self) -> ttf_parser::Face<'_> {
        ttf_parser::Face::parse(&self.data, 0).expect("DejaVu parses")
    }

    /// Glyph ids and advances (1/1000 em) of `s`, remembering them for /W and ToUnicode.
    fn glyphs(&mut self, s: &str) -> Vec<(u16, f32)> {
        let face = ttf_parser::Face::parse(&self.data, 0).expect("DejaVu parses");
        let upem = f32::from(face.units_per_em());
        let out: Vec<(u16, char, f32)> = s
            .chars()
            .map(|c| {
                let gid = face.glyph_index(c).map_or(0, |g| g.0);
                let adv = face
                    .glyph_hor_advance(ttf_parser::GlyphId(gid))
                    .unwrap_or(0);
                (gid, c, f32::from(adv) * 1000.0 / upem)
            })
            .collect();
        for (gid, c, adv) in &out {
            self.used.insert(*gid, (*c, adv.round() as u16));
        }
        out.into_iter().map(|(g, _, a)| (g, a)).collect()
    }
}

fn width(font: Font, dejavu: &mut DejaVu, s: &str, size: f32) -> f32 {
    let per_mille: f32 = match font {
        Font::DejaVu => dejavu.glyphs(s).iter().map(|(_, a)| a).sum(),
        Font::Helvetica => s
            .chars()
            .map(|c| encoding::standard_width("Helvetica", c).unwrap_or(556.0))
            .sum(),
        Font::Bold => s
            .chars()
            .map(|c| encoding::standard_width("Helvetica-Bold", c).unwrap_or(556.0))
            .sum(),
    };
    per_mille * size / 1000.0
}

fn win_ansi(s: &str) -> Vec<u8> {
    let table = encoding::table(encoding::Base::WinAnsi);
    s.chars()
        .map(|c| {
            table
                .iter()
                .position(|t| *t == Some(c))
                .map_or(b'?', |p| p as u8)
        })
        .collect()
}

fn literal(bytes: &[u8]) -> String {
    let mut out = String::from("(");
    for &b in bytes {
        match b {
            b'(' | b')' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push(')');
    out
}

/// Deterministic scrambling for the scanned-like layout.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn show(font: Font, dejavu: &mut DejaVu, s: &str) -> String {
    match font {
        Font::DejaVu => {
            let hex: String = dejavu
                .glyphs(s)
                .iter()
                .map(|(g, _)| format!("{g:04X}"))
                .collect();
            format!("<{hex}> Tj")
        }
        _ => format!("{} Tj", literal(&win_ansi(s))),
    }
}

fn font_name(font: Font) -> &'static str {
    match font {
        Font::Helvetica => "F1",
        Font::Bold => "F2",
        Font::DejaVu => "F3",
    }
}

fn content(page: &Page, dejavu: &mut DejaVu, seed: u64) -> Vec<u8> {
    if page.image_only {
        return b"q 500 0 0 700 50 70 cm /Im1 Do Q".to_vec();
    }
    // (x, y, size, font, text)
    let mut pieces: Vec<(f32, f32, f32, Font, String)> = Vec::new();
    let mut rng = Lcg(seed);
    for item in &page.items {
        let x0 = if item.right {
            item.x - width(item.font, dejavu, &item.text, item.size)
        } else {
            item.x
        };
        if page.shuffled {
            let jitter = (rng.next() % 13) as f32 / 10.0 - 0.6;
            let mut x = x0;
            for (i, word) in item.text.split(' ').enumerate() {
                if i > 0 {
                    x += width(item.font, dejavu, " ", item.size);
                }
                pieces.push((x, item.y + jitter, item.size, item.font, word.to_string()));
                x += width(item.font, dejavu, word, item.size);
            }
        } else {
            pieces.push((x0, item.y, item.size, item.font, item.text.clone()));
        }
    }
    if page.shuffled {
        for i in (1..pieces.len()).rev() {
            let j = (rng.next() % (i as u64 + 1)) as usize;
            pieces.swap(i, j);
        }
    }
    let mut out = String::new();
    for (x, y, size, font, text) in pieces {
        if page.shuffled {
            out.push_str(&format!(
                "BT /{} {size} Tf 1 0 0 1 {x:.2} {y:.2} Tm {} ET\n",
                font_name(font),
                show(font, dejavu, &text)
            ));
        } else {
            out.push_str(&format!(
                "BT /{} {size} Tf {x:.2} {y:.2} Td {} ET\n",
                font_name(font),
                show(font, dejavu, &text)
            ));
        }
    }
    out.into_bytes()
}

fn to_unicode(used: &BTreeMap<u16, (char, u16)>) -> Vec<u8> {
    let mut s = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n",
    );
    let entries: Vec<_> = used.iter().collect();
    for chunk in entries.chunks(100) {
        s.push_str(&format!("{} beginbfchar\n", chunk.len()));
        for (gid, (c, _)) in chunk {
            let mut units = [0u16; 2];
            let hex: String = c
                .encode_utf16(&mut units)
                .iter()
                .map(|u| format!("{u:04X}"))
                .collect();
            s.push_str(&format!("<{gid:04X}> <{hex}>\n"));
        }
        s.push_str("endbfchar\n");
    }
    s.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    s.into_bytes()
}

fn stream(dict: lopdf::Dictionary, bytes: Vec<u8>) -> Stream {
    let mut s = Stream::new(dict, bytes);
    // Compressed like real files; the extractor must inflate.
    let _ = s.compress();
    s
}

/// Build a PDF from pages and attachments.
pub fn build(pages: &[Page], attachments: &[Attachment]) -> Vec<u8> {
    let mut doc = Document::with_version("1.7");
    let mut dejavu = DejaVu::load();
    let pages_id = doc.new_object_id();
    let helvetica = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica", "Encoding" => "WinAnsiEncoding",
    });
    let bold = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica-Bold", "Encoding" => "WinAnsiEncoding",
    });
    let type0 = doc.new_object_id();
    let image = doc.add_object(stream(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Image", "Width" => 2, "Height" => 2,
            "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
        },
        vec![0, 255, 255, 0],
    ));
    let resources = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => helvetica, "F2" => bold, "F3" => type0 },
        "XObject" => dictionary! { "Im1" => image },
    });
    let mut kids: Vec<Object> = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let bytes = content(page, &mut dejavu, 7 + i as u64);
        let content_id = doc.add_object(stream(dictionary! {}, bytes));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        });
        kids.push(page_id.into());
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Count" => kids.len() as i64, "Kids" => kids, "Resources" => resources,
        }),
    );
    if dejavu.used.is_empty() {
        // Unused: keep files small (and the fuzz test's bytes on the interesting parts).
        doc.objects.insert(
            type0,
            Object::Dictionary(
                dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" },
            ),
        );
    } else {
        write_type0(&mut doc, type0, &dejavu);
    }
    let mut catalog = dictionary! { "Type" => "Catalog", "Pages" => pages_id };
    if !attachments.is_empty() {
        let mut names: Vec<Object> = Vec::new();
        let mut af: Vec<Object> = Vec::new();
        for a in attachments {
            let file = doc.add_object(stream(
                dictionary! { "Type" => "EmbeddedFile", "Subtype" => "text/xml" },
                a.bytes.clone(),
            ));
            let spec = doc.add_object(dictionary! {
                "Type" => "Filespec",
                "F" => Object::String(a.name.clone().into_bytes(), StringFormat::Literal),
                "UF" => Object::String(a.name.clone().into_bytes(), StringFormat::Literal),
                "AFRelationship" => "Alternative",
                "EF" => dictionary! { "F" => file, "UF" => file },
            });
            names.push(Object::String(
                a.name.clone().into_bytes(),
                StringFormat::Literal,
            ));
            names.push(spec.into());
            af.push(spec.into());
        }
        catalog.set(
            "Names",
            dictionary! { "EmbeddedFiles" => dictionary! { "Names" => names } },
        );
        catalog.set("AF", af);
    }
    let catalog_id = doc.add_object(catalog);
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("the test PDF saves");
    out
}

fn write_type0(doc: &mut Document, id: ObjectId, dejavu: &DejaVu) {
    let face = dejavu.face();
    let upem = f32::from(face.units_per_em());
    let scale = |v: i16| (f32::from(v) * 1000.0 / upem) as i64;
    let file = doc.add_object(stream(
        dictionary! { "Length1" => dejavu.data.len() as i64 },
        dejavu.data.clone(),
    ));
    let descriptor = doc.add_object(dictionary! {
        "Type" => "FontDescriptor", "FontName" => "DejaVuSans", "Flags" => 32,
        "FontBBox" => vec![(-1021).into(), (-463).into(), 1793.into(), 1232.into()],
        "ItalicAngle" => 0, "Ascent" => scale(face.ascender()), "Descent" => scale(face.descender()),
        "CapHeight" => 729, "StemV" => 80, "FontFile2" => file,
    });
    let mut w: Vec<Object> = Vec::new();
    for (gid, (_, adv)) in &dejavu.used {
        w.push(i64::from(*gid).into());
        w.push(vec![i64::from(*adv).into()].into());
    }
    let cid = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "CIDFontType2", "BaseFont" => "DejaVuSans",
        "CIDSystemInfo" => dictionary! {
            "Registry" => Object::string_literal("Adobe"), "Ordering" => Object::string_literal("Identity"), "Supplement" => 0,
        },
        "FontDescriptor" => descriptor, "W" => w, "CIDToGIDMap" => "Identity",
    });
    let cmap = doc.add_object(stream(dictionary! {}, to_unicode(&dejavu.used)));
    doc.objects.insert(
        id,
        Object::Dictionary(dictionary! {
            "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "DejaVuSans", "Encoding" => "Identity-H",
            "DescendantFonts" => vec![cid.into()], "ToUnicode" => cmap,
        }),
    );
}
