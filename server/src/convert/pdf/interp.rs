//! A content-stream interpreter that only tracks what text placement needs: the CTM, the
//! text state and matrices, fonts and form XObjects. Every shown character becomes a
//! [`Glyph`] at its position in page space.

use super::fonts::Font;
use super::load::{self, Budget};
use super::PdfError;
use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, Object, ObjectId};
use std::collections::HashMap;
use std::rc::Rc;

/// One shown character (or ligature) in page space.
#[derive(Clone, Debug)]
pub(super) struct Glyph {
    pub text: String,
    /// Left end of the baseline.
    pub x: f32,
    pub y: f32,
    pub width: f32,
    /// Effective font size (text size scaled by the matrices).
    pub size: f32,
}

/// What a page yielded besides glyphs.
#[derive(Default)]
pub(super) struct PageScan {
    pub glyphs: Vec<Glyph>,
    pub images: usize,
    /// Problems that were skipped over (a damaged stream, an unreadable font).
    pub problems: Vec<String>,
}

type Matrix = [f32; 6];
const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

fn mul(a: &Matrix, b: &Matrix) -> Matrix {
    [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    ]
}

fn translate(tx: f32, ty: f32) -> Matrix {
    [1.0, 0.0, 0.0, 1.0, tx, ty]
}

#[derive(Clone)]
struct State {
    ctm: Matrix,
    font: Option<Rc<Font>>,
    size: f32,
    char_spacing: f32,
    word_spacing: f32,
    h_scale: f32,
    leading: f32,
    rise: f32,
}

/// Form XObjects nest; deeper than this is either broken or hostile.
const MAX_FORM_DEPTH: usize = 8;
/// Operators per page, so a tiny stream that loops through forms cannot run for ever.
const MAX_OPERATIONS: usize = 2_000_000;

struct Interp<'a> {
    doc: &'a Document,
    budget: &'a mut Budget,
    fonts: HashMap<ObjectId, Rc<Font>>,
    scan: PageScan,
    operations: usize,
}

pub(super) fn scan_page(
    doc: &Document,
    page: ObjectId,
    budget: &mut Budget,
) -> Result<PageScan, PdfError> {
    let resources = load::page_resources(doc, page);
    let mut content = Vec::new();
    for id in doc.get_page_contents(page) {
        if let Ok(Object::Stream(s)) = doc.get_object(id) {
            match budget.decode(s)? {
                Some(bytes) => {
                    content.extend_from_slice(&bytes);
                    content.push(b'\n');
                }
                None => content.push(b'\n'),
            }
        }
    }
    let mut it = Interp {
        doc,
        budget,
        fonts: HashMap::new(),
        scan: PageScan::default(),
        operations: 0,
    };
    let state = State {
        ctm: IDENTITY,
        font: None,
        size: 0.0,
        char_spacing: 0.0,
        word_spacing: 0.0,
        h_scale: 1.0,
        leading: 0.0,
        rise: 0.0,
    };
    it.run(&content, &resources, state, 0)?;
    Ok(it.scan)
}

fn num(ops: &[Object], i: usize) -> f32 {
    ops.get(i).and_then(load::number).unwrap_or(0.0)
}

fn matrix(ops: &[Object]) -> Matrix {
    [
        num(ops, 0),
        num(ops, 1),
        num(ops, 2),
        num(ops, 3),
        num(ops, 4),
        num(ops, 5),
    ]
}

impl Interp<'_> {
    fn font(&mut self, resources: &[&Dictionary], name: &[u8]) -> Result<Rc<Font>, PdfError> {
        let doc = self.doc;
        let found = resources.iter().find_map(|r| {
            let fonts = load::get_dict(doc, r, b"Font")?;
            let entry = fonts.get(name).ok()?;
            Some((entry.as_reference().ok(), load::dict(doc, entry)?))
        });
        let Some((id, dict)) = found else {
            self.problem(format!(
                "font /{} is missing",
                String::from_utf8_lossy(name)
            ));
            return Ok(Rc::new(Font::fallback()));
        };
        if let Some(font) = id.and_then(|id| self.fonts.get(&id)) {
            return Ok(font.clone());
        }
        let font = Rc::new(Font::load(doc, dict, self.budget)?);
        if font.to_unicode.as_ref().is_some_and(|m| m.truncated) {
            self.problem(format!(
                "font /{}: its ToUnicode map is larger than any real one; entries past the \
                 limits were not used, so some text may be missing",
                String::from_utf8_lossy(name)
            ));
        }
        if let Some(id) = id {
            self.fonts.insert(id, font.clone());
        }
        Ok(font)
    }

    fn problem(&mut self, text: String) {
        // A broken file repeats the same fault on every operator; one mention is enough.
        if self.scan.problems.len() < 20 && !self.scan.problems.contains(&text) {
            self.scan.problems.push(text);
        }
    }

    fn run(
        &mut self,
        content: &[u8],
        resources: &[&Dictionary],
        start: State,
        depth: usize,
    ) -> Result<(), PdfError> {
        let mut gs = start;
        let mut stack: Vec<State> = Vec::new();
        let mut tm = IDENTITY;
        let mut tlm = IDENTITY;
        for op in Content::decode_iter(content) {
            let Ok(Operation { operator, operands }) = op else {
                self.problem(
                    "a content stream is damaged; text after the damage is not read".into(),
                );
                break;
            };
            self.operations += 1;
            if self.operations > MAX_OPERATIONS {
                self.problem(format!(
                    "more than {MAX_OPERATIONS} drawing operations; the rest is not read"
                ));
                break;
            }
            let o = &operands;
            match operator.as_str() {
                // Bounded: unbalanced `q`s in a hostile stream must not grow memory.
                "q" if stack.len() < 256 => stack.push(gs.clone()),
                "Q" => {
                    if let Some(s) = stack.pop() {
                        gs = s;
                    }
                }
                "cm" => gs.ctm = mul(&matrix(o), &gs.ctm),
                "BT" => {
                    tm = IDENTITY;
                    tlm = IDENTITY;
                }
                "Tf" => {
                    gs.size = num(o, 1);
                    if let Some(Object::Name(name)) = o.first() {
                        gs.font = Some(self.font(resources, name)?);
                    }
                }
                "Tc" => gs.char_spacing = num(o, 0),
                "Tw" => gs.word_spacing = num(o, 0),
                "Tz" => gs.h_scale = num(o, 0) / 100.0,
                "TL" => gs.leading = num(o, 0),
                "Ts" => gs.rise = num(o, 0),
                "Td" => {
                    tlm = mul(&translate(num(o, 0), num(o, 1)), &tlm);
                    tm = tlm;
                }
                "TD" => {
                    gs.leading = -num(o, 1);
                    tlm = mul(&translate(num(o, 0), num(o, 1)), &tlm);
                    tm = tlm;
                }
                "Tm" => {
                    tlm = matrix(o);
                    tm = tlm;
                }
                "T*" => {
                    tlm = mul(&translate(0.0, -gs.leading), &tlm);
                    tm = tlm;
                }
                "Tj" | "'" | "\"" => {
                    if operator != "Tj" {
                        if operator == "\"" {
                            gs.word_spacing = num(o, 0);
                            gs.char_spacing = num(o, 1);
                        }
                        tlm = mul(&translate(0.0, -gs.leading), &tlm);
                        tm = tlm;
                    }
                    if let Some(Object::String(bytes, _)) = o.last() {
                        self.show(bytes, &gs, &mut tm)?;
                    }
                }
                "TJ" => {
                    if let Some(Object::Array(items)) = o.first() {
                        for item in items {
                            match item {
                                Object::String(bytes, _) => self.show(bytes, &gs, &mut tm)?,
                                other => {
                                    let adjust = load::number(other).unwrap_or(0.0);
                                    let tx = -adjust / 1000.0 * gs.size * gs.h_scale;
                                    tm = mul(&translate(tx, 0.0), &tm);
                                }
                            }
                        }
                    }
                }
                "Do" => {
                    if let Some(Object::Name(name)) = o.first() {
                        self.draw_xobject(resources, name, &gs, depth)?;
                    }
                }
                "BI" => self.scan.images += 1,
                _ => {}
            }
        }
        Ok(())
    }

    fn draw_xobject(
        &mut self,
        resources: &[&Dictionary],
        name: &[u8],
        gs: &State,
        depth: usize,
    ) -> Result<(), PdfError> {
        let doc = self.doc;
        let found = resources.iter().find_map(|r| {
            let xobjects = load::get_dict(doc, r, b"XObject")?;
            match load::deref(doc, xobjects.get(name).ok()?)? {
                Object::Stream(s) => Some(s),
                _ => None,
            }
        });
        let Some(stream) = found else {
            return Ok(());
        };
        match load::get_name(doc, &stream.dict, b"Subtype") {
            Some(b"Image") => self.scan.images += 1,
            Some(b"Form") if depth < MAX_FORM_DEPTH => {
                let Some(content) = self.budget.decode(stream)? else {
                    self.problem("a form XObject is damaged".into());
                    return Ok(());
                };
                let form_matrix = match load::get(doc, &stream.dict, b"Matrix") {
                    Some(Object::Array(m)) if m.len() == 6 => matrix(m),
                    _ => IDENTITY,
                };
                let mut inner: Vec<&Dictionary> = Vec::new();
                inner.extend(load::get_dict(doc, &stream.dict, b"Resources"));
                // Forms without their own resources use the page's (deprecated but common).
                inner.extend_from_slice(resources);
                let mut state = gs.clone();
                state.ctm = mul(&form_matrix, &gs.ctm);
                self.run(&content, &inner, state, depth + 1)?;
            }
            Some(b"Form") => self.problem("form XObjects nest too deeply".into()),
            _ => {}
        }
        Ok(())
    }

    fn show(&mut self, bytes: &[u8], gs: &State, tm: &mut Matrix) -> Result<(), PdfError> {
        let font = gs.font.clone().unwrap_or_else(|| Rc::new(Font::fallback()));
        for code in font.decode(bytes) {
            let trm = mul(
                &mul(&[gs.size * gs.h_scale, 0.0, 0.0, gs.size, 0.0, gs.rise], tm),
                &gs.ctm,
            );
            let advance = (code.advance * gs.size
                + gs.char_spacing
                + if code.is_space_byte {
                    gs.word_spacing
                } else {
                    0.0
                })
                * gs.h_scale;
            let full = mul(tm, &gs.ctm);
            let x_scale = (full[0] * full[0] + full[1] * full[1]).sqrt();
            let size = (trm[2] * trm[2] + trm[3] * trm[3]).sqrt();
            // Rotated text (margin notes, stamps) would cut through lines; it is skipped.
            let horizontal = trm[1].abs() <= 0.1 * trm[0].abs() && trm[0] > 0.0;
            if horizontal && !code.text.is_empty() && size.is_finite() && size > 0.5 {
                self.budget.glyph(code.text.len())?;
                self.scan.glyphs.push(Glyph {
                    text: code.text,
                    x: trm[4],
                    y: trm[5],
                    width: code.advance * gs.size * gs.h_scale * x_scale,
                    size,
                });
            }
            *tm = mul(&translate(advance, 0.0), tm);
        }
        Ok(())
    }
}
