//! The vendored DejaVu Sans faces: glyph lookup and advance widths for layout, raw data
//! for subsetting.
//!
//! Text is set glyph by glyph without shaping or kerning: the faces map every Latin
//! (including Slovak) character to one glyph, which is all an invoice needs, and it keeps
//! the glyph-to-character map exact for the ToUnicode CMap.

use ttf_parser::{Face, GlyphId};

use super::RenderError;

static REGULAR: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
static BOLD: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf");

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FontId {
    Regular,
    Bold,
}

impl FontId {
    /// The PostScript name, used as the PDF base font name after the subset tag.
    pub fn postscript_name(self) -> &'static str {
        match self {
            FontId::Regular => "DejaVuSans",
            FontId::Bold => "DejaVuSans-Bold",
        }
    }

    /// The resource name in page dictionaries.
    pub fn resource_name(self) -> &'static [u8] {
        match self {
            FontId::Regular => b"F1",
            FontId::Bold => b"F2",
        }
    }
}

pub struct Font {
    pub id: FontId,
    pub data: &'static [u8],
    face: Face<'static>,
    units_per_em: f32,
    /// Shown for characters the face lacks, so nothing is silently dropped.
    replacement: (char, GlyphId),
}

impl Font {
    fn load(id: FontId) -> Result<Font, RenderError> {
        let data = match id {
            FontId::Regular => REGULAR,
            FontId::Bold => BOLD,
        };
        let face = Face::parse(data, 0).map_err(|e| RenderError::Font {
            font: id.postscript_name(),
            message: e.to_string(),
        })?;
        let replacement = ['\u{FFFD}', '?']
            .into_iter()
            .find_map(|c| face.glyph_index(c).map(|g| (c, g)))
            .unwrap_or(('?', GlyphId(0)));
        Ok(Font {
            id,
            data,
            units_per_em: f32::from(face.units_per_em()),
            face,
            replacement,
        })
    }

    /// The character actually shown for `c` and its glyph. Whitespace and control
    /// characters become a plain space (layout has already split lines), characters
    /// missing from the face become the replacement character.
    pub fn glyph(&self, c: char) -> (char, GlyphId) {
        let c = if c.is_whitespace() || c.is_control() {
            ' '
        } else {
            c
        };
        match self.face.glyph_index(c) {
            Some(g) => (c, g),
            None => self.replacement,
        }
    }

    /// Advance width of a glyph in thousandths of the font size (PDF glyph space).
    pub fn advance(&self, glyph: GlyphId) -> f32 {
        let units = self.face.glyph_hor_advance(glyph).unwrap_or(0);
        f32::from(units) * 1000.0 / self.units_per_em
    }

    /// Width of `text` set at `size` points.
    pub fn width(&self, text: &str, size: f32) -> f32 {
        let thousandths: f32 = text.chars().map(|c| self.advance(self.glyph(c).1)).sum();
        thousandths * size / 1000.0
    }

    /// Vertical metrics and box for the font descriptor, in glyph space.
    pub fn metrics(&self) -> Metrics {
        let scale = |v: i16| f32::from(v) * 1000.0 / self.units_per_em;
        let bbox = self.face.global_bounding_box();
        Metrics {
            ascent: scale(self.face.ascender()),
            descent: scale(self.face.descender()),
            cap_height: scale(self.face.capital_height().unwrap_or(self.face.ascender())),
            bbox: [
                scale(bbox.x_min),
                scale(bbox.y_min),
                scale(bbox.x_max),
                scale(bbox.y_max),
            ],
        }
    }
}

pub struct Metrics {
    pub ascent: f32,
    pub descent: f32,
    pub cap_height: f32,
    pub bbox: [f32; 4],
}

/// Both faces, parsed once per rendering (parsing only reads table offsets).
pub struct Fonts {
    regular: Font,
    bold: Font,
}

impl Fonts {
    pub fn load() -> Result<Fonts, RenderError> {
        Ok(Fonts {
            regular: Font::load(FontId::Regular)?,
            bold: Font::load(FontId::Bold)?,
        })
    }

    pub fn get(&self, id: FontId) -> &Font {
        match id {
            FontId::Regular => &self.regular,
            FontId::Bold => &self.bold,
        }
    }
}
