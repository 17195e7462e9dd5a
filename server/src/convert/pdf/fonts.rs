//! Fonts as the text extractor needs them: bytes → codes → Unicode text and advance width.
//! Simple fonts (Type1, TrueType, Type3) use their encoding (+ /Differences) or ToUnicode;
//! composite fonts (Type0) use ToUnicode with 2-byte codes unless its code space says
//! otherwise.

use super::cmap::CMap;
use super::encoding::{self, Base};
use super::load::{self, Budget};
use super::PdfError;
use lopdf::{Dictionary, Document, Object};
use std::collections::HashMap;

/// One decoded character code.
pub(super) struct Code {
    pub text: String,
    /// Advance in text space (glyph width / 1000).
    pub advance: f32,
    /// A single-byte code 32, to which word spacing (Tw) applies.
    pub is_space_byte: bool,
}

pub(super) struct Font {
    composite: bool,
    table: Vec<Option<char>>,
    pub(super) to_unicode: Option<CMap>,
    base_font: String,
    first_char: u32,
    widths: Vec<f32>,
    cid_widths: HashMap<u32, f32>,
    default_width: f32,
    /// Type3 glyph space differs from 1/1000 em.
    scale: f32,
}

impl Font {
    /// A font for text drawn without a usable font dictionary: codes read as WinAnsi.
    pub(super) fn fallback() -> Font {
        Font {
            composite: false,
            table: encoding::table(Base::WinAnsi),
            to_unicode: None,
            base_font: "Helvetica".into(),
            first_char: 0,
            widths: Vec::new(),
            cid_widths: HashMap::new(),
            default_width: 500.0,
            scale: 1.0,
        }
    }

    pub(super) fn load(
        doc: &Document,
        dict: &Dictionary,
        budget: &mut Budget,
    ) -> Result<Font, PdfError> {
        let subtype = load::get_name(doc, dict, b"Subtype").unwrap_or(b"Type1");
        let base_font = load::get_name(doc, dict, b"BaseFont")
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default();
        let to_unicode = match load::get(doc, dict, b"ToUnicode") {
            Some(Object::Stream(s)) => budget.decode(s)?.map(|bytes| CMap::parse(&bytes)),
            _ => None,
        };
        let mut font = Font {
            composite: subtype == b"Type0",
            table: encoding::table(Base::WinAnsi),
            to_unicode,
            base_font,
            first_char: 0,
            widths: Vec::new(),
            cid_widths: HashMap::new(),
            default_width: 0.0,
            scale: 1.0,
        };
        if font.composite {
            font.load_cid_widths(doc, dict);
        } else {
            font.load_simple(doc, dict, subtype == b"Type3");
        }
        Ok(font)
    }

    fn load_simple(&mut self, doc: &Document, dict: &Dictionary, type3: bool) {
        match load::get(doc, dict, b"Encoding") {
            Some(Object::Name(name)) => {
                if let Some(base) = encoding::base_from_name(name) {
                    self.table = encoding::table(base);
                }
            }
            Some(Object::Dictionary(enc)) => {
                if let Some(base) =
                    load::get_name(doc, enc, b"BaseEncoding").and_then(encoding::base_from_name)
                {
                    self.table = encoding::table(base);
                }
                if let Some(Object::Array(diffs)) = load::get(doc, enc, b"Differences") {
                    let mut code: usize = 0;
                    for item in diffs {
                        match item {
                            Object::Integer(n) => code = usize::try_from(*n).unwrap_or(256),
                            Object::Name(name) => {
                                if code < 256 {
                                    let glyph = String::from_utf8_lossy(name);
                                    self.table[code] = encoding::glyph_char(&glyph);
                                }
                                code += 1;
                            }
                            _ => {}
                        }
                    }
                }
            }
            _ => {}
        }
        self.first_char = load::get(doc, dict, b"FirstChar")
            .and_then(load::number)
            .map_or(0, |n| n.max(0.0) as u32);
        if let Some(Object::Array(ws)) = load::get(doc, dict, b"Widths") {
            self.widths = ws
                .iter()
                .take(256)
                .map(|w| load::deref(doc, w).and_then(load::number).unwrap_or(0.0))
                .collect();
        }
        self.default_width = load::get_dict(doc, dict, b"FontDescriptor")
            .and_then(|fd| load::get(doc, fd, b"MissingWidth"))
            .and_then(load::number)
            .unwrap_or(0.0);
        if type3 {
            if let Some(Object::Array(m)) = load::get(doc, dict, b"FontMatrix") {
                if let Some(a) = m.first().and_then(load::number) {
                    self.scale = a * 1000.0;
                }
            }
        }
    }

    fn load_cid_widths(&mut self, doc: &Document, dict: &Dictionary) {
        let descendant = match load::get(doc, dict, b"DescendantFonts") {
            Some(Object::Array(arr)) => arr.first().and_then(|o| load::dict(doc, o)),
            _ => None,
        };
        let Some(cid) = descendant else {
            self.default_width = 1000.0;
            return;
        };
        self.default_width = load::get(doc, cid, b"DW")
            .and_then(load::number)
            .unwrap_or(1000.0);
        let Some(Object::Array(w)) = load::get(doc, cid, b"W") else {
            return;
        };
        let mut i = 0;
        // Bounded so a `0 4294967295 500` entry cannot allocate the world.
        const MAX_ENTRIES: usize = 65_536;
        while i < w.len() && self.cid_widths.len() < MAX_ENTRIES {
            let Some(first) = load::deref(doc, &w[i]).and_then(load::number) else {
                break;
            };
            let first = first.max(0.0) as u32;
            match w.get(i + 1).and_then(|o| load::deref(doc, o)) {
                Some(Object::Array(list)) => {
                    for (k, v) in list.iter().enumerate().take(MAX_ENTRIES) {
                        if let Some(v) = load::deref(doc, v).and_then(load::number) {
                            self.cid_widths.insert(first.saturating_add(k as u32), v);
                        }
                    }
                    i += 2;
                }
                Some(last) => {
                    let last = load::number(last).map_or(first, |n| n.max(0.0) as u32);
                    let width = w
                        .get(i + 2)
                        .and_then(|o| load::deref(doc, o))
                        .and_then(load::number);
                    if let Some(width) = width {
                        for c in first..=last.min(first.saturating_add(MAX_ENTRIES as u32)) {
                            self.cid_widths.insert(c, width);
                        }
                    }
                    i += 3;
                }
                None => break,
            }
        }
    }

    fn simple_width(&self, code: u32, text: &str) -> f32 {
        let index = code.checked_sub(self.first_char).map(|i| i as usize);
        if let Some(w) = index.and_then(|i| self.widths.get(i)) {
            return *w * self.scale;
        }
        let c = text.chars().next().unwrap_or(' ');
        encoding::standard_width(&self.base_font, c).unwrap_or(if self.default_width > 0.0 {
            self.default_width
        } else {
            500.0
        })
    }

    /// Split a shown string into codes, one at a time: a long string must not become a
    /// long list before the glyph budget has looked at it.
    pub(super) fn decode<'a>(&'a self, bytes: &'a [u8]) -> impl Iterator<Item = Code> + 'a {
        let mut i = 0;
        std::iter::from_fn(move || {
            if i >= bytes.len() {
                return None;
            }
            let len = if self.composite {
                self.to_unicode
                    .as_ref()
                    .filter(|m| m.has_spaces())
                    .and_then(|m| m.code_len(&bytes[i..]))
                    .unwrap_or(2)
            } else {
                1
            };
            let chunk = &bytes[i..bytes.len().min(i + len)];
            i += len;
            let code = chunk.iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b));
            let mapped = self
                .to_unicode
                .as_ref()
                .and_then(|m| m.lookup(chunk.len(), code));
            if self.composite {
                let advance = self
                    .cid_widths
                    .get(&code)
                    .copied()
                    .unwrap_or(self.default_width);
                Some(Code {
                    text: mapped.unwrap_or_default(),
                    advance: advance / 1000.0,
                    is_space_byte: false,
                })
            } else {
                let text = mapped
                    .or_else(|| {
                        self.table
                            .get(code as usize)
                            .copied()
                            .flatten()
                            .map(String::from)
                    })
                    .unwrap_or_default();
                let advance = self.simple_width(code, &text) / 1000.0;
                Some(Code {
                    text,
                    advance,
                    is_space_byte: code == 32,
                })
            }
        })
    }
}
