//! Opening a PDF under limits: signature, encryption, page count and a decompression
//! budget shared by every stream we decode (content, forms, fonts' CMaps, attachments).

use super::{Limits, PdfError};
use lopdf::{Dictionary, Document, Object, ObjectId, Stream};

/// Decompressed bytes still allowed for this document. One budget for the whole file, so
/// many small bombs cannot add up to a large one.
pub(super) struct Budget {
    left: usize,
    per_stream: usize,
    total: usize,
    /// Glyphs kept for the layout, and the bytes of their text: a small stream can show a
    /// long string many times through forms, and each glyph is held until the end.
    glyphs_left: usize,
    text_left: usize,
    max_glyphs: usize,
    max_text_bytes: usize,
}

impl Budget {
    pub(super) fn new(limits: &Limits) -> Self {
        Budget {
            left: limits.max_total_bytes,
            per_stream: limits.max_stream_bytes,
            total: limits.max_total_bytes,
            glyphs_left: limits.max_glyphs,
            text_left: limits.max_text_bytes,
            max_glyphs: limits.max_glyphs,
            max_text_bytes: limits.max_text_bytes,
        }
    }

    /// Account for one more glyph with `text_bytes` of text; `Err` once the document
    /// shows more than the limits allow, which ends the extraction.
    pub(super) fn glyph(&mut self, text_bytes: usize) -> Result<(), PdfError> {
        if self.glyphs_left == 0 {
            return Err(PdfError::TooMuchText {
                what: "glyphs",
                limit: self.max_glyphs,
            });
        }
        if text_bytes > self.text_left {
            return Err(PdfError::TooMuchText {
                what: "bytes of text",
                limit: self.max_text_bytes,
            });
        }
        self.glyphs_left -= 1;
        self.text_left -= text_bytes;
        Ok(())
    }

    /// The decoded bytes of a stream. `Ok(None)` when the stream is damaged (the caller
    /// skips it); `Err` only when the budget is exhausted, which ends the extraction.
    pub(super) fn decode(&mut self, stream: &Stream) -> Result<Option<Vec<u8>>, PdfError> {
        let cap = self.left.min(self.per_stream);
        match stream.get_plain_content_with_limit(cap) {
            Ok(bytes) => {
                self.left = self.left.saturating_sub(bytes.len());
                Ok(Some(bytes))
            }
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded {
                ..
            })) => Err(self.exceeded(cap)),
            Err(_) => Ok(None),
        }
    }

    fn exceeded(&self, cap: usize) -> PdfError {
        if cap < self.per_stream {
            PdfError::TooLarge {
                what: "all streams together",
                limit: self.total,
            }
        } else {
            PdfError::TooLarge {
                what: "one stream",
                limit: self.per_stream,
            }
        }
    }
}

/// A loaded document with its pages in order.
pub(super) struct Opened {
    pub doc: Document,
    pub pages: Vec<ObjectId>,
}

pub(super) fn open(bytes: &[u8], limits: &Limits) -> Result<Opened, PdfError> {
    // Real files may carry a few bytes of junk before the header; the spec readers
    // tolerate up to 1 KiB.
    let head = &bytes[..bytes.len().min(1024)];
    if !head.windows(5).any(|w| w == b"%PDF-") {
        return Err(PdfError::NotPdf);
    }
    let options = lopdf::LoadOptions {
        max_decompressed_size: Some(limits.max_stream_bytes),
        ..Default::default()
    };
    let doc = Document::load_mem_with_options(bytes, options).map_err(|e| match e {
        lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. }) => {
            PdfError::TooLarge {
                what: "one stream",
                limit: limits.max_stream_bytes,
            }
        }
        lopdf::Error::InvalidPassword | lopdf::Error::Decryption(_) => PdfError::Encrypted,
        other => PdfError::Damaged(format!("cannot read the document structure: {other}")),
    })?;
    // lopdf opens files whose user password is empty (permission-only protection); a
    // file that still carries /Encrypt without a decryption state needs a password.
    if doc.trailer.has(b"Encrypt") && !doc.was_encrypted() {
        return Err(PdfError::Encrypted);
    }
    let max = limits.max_pages as usize;
    let pages: Vec<ObjectId> = doc.page_iter().take(max + 1).collect();
    if pages.len() > max {
        return Err(PdfError::TooManyPages {
            max: limits.max_pages,
        });
    }
    if pages.is_empty() {
        return Err(PdfError::Damaged("the document has no pages".into()));
    }
    Ok(Opened { doc, pages })
}

/// Follow references (bounded, cycles end as `None`).
pub(super) fn deref<'a>(doc: &'a Document, obj: &'a Object) -> Option<&'a Object> {
    doc.dereference(obj).ok().map(|(_, o)| o)
}

pub(super) fn dict<'a>(doc: &'a Document, obj: &'a Object) -> Option<&'a Dictionary> {
    match deref(doc, obj)? {
        Object::Dictionary(d) => Some(d),
        Object::Stream(s) => Some(&s.dict),
        _ => None,
    }
}

pub(super) fn get<'a>(doc: &'a Document, d: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
    deref(doc, d.get(key).ok()?)
}

pub(super) fn get_dict<'a>(
    doc: &'a Document,
    d: &'a Dictionary,
    key: &[u8],
) -> Option<&'a Dictionary> {
    dict(doc, d.get(key).ok()?)
}

pub(super) fn get_name<'a>(doc: &'a Document, d: &'a Dictionary, key: &[u8]) -> Option<&'a [u8]> {
    get(doc, d, key)?.as_name().ok()
}

pub(super) fn number(obj: &Object) -> Option<f32> {
    match obj {
        Object::Integer(i) => Some(*i as f32),
        Object::Real(r) if r.is_finite() => Some(*r),
        _ => None,
    }
}

/// A page's visible area `[x0, y0, x1, y1]` in PDF space: its `MediaBox`, inherited from
/// its parents when it has none, A4 when nothing says (malformed files).
pub(super) fn media_box(doc: &Document, page: ObjectId) -> [f32; 4] {
    const A4: [f32; 4] = [0.0, 0.0, 595.0, 842.0];
    let mut node = doc.get_dictionary(page).ok();
    // Bounded: a Parent chain may loop in a hostile file.
    for _ in 0..32 {
        let Some(d) = node else { break };
        if let Some(Object::Array(a)) = get(doc, d, b"MediaBox") {
            let v: Vec<f32> = a
                .iter()
                .filter_map(|o| deref(doc, o).and_then(number))
                .collect();
            if let [x0, y0, x1, y1] = v[..] {
                let (x0, x1) = (x0.min(x1), x0.max(x1));
                let (y0, y1) = (y0.min(y1), y0.max(y1));
                if x1 - x0 >= 1.0 && y1 - y0 >= 1.0 && x1 - x0 <= 14_400.0 && y1 - y0 <= 14_400.0 {
                    return [x0, y0, x1, y1];
                }
            }
            break;
        }
        node = get_dict(doc, d, b"Parent");
    }
    A4
}

/// The page's resource dictionaries, nearest first (inherited ones after).
pub(super) fn page_resources(doc: &Document, page: ObjectId) -> Vec<&Dictionary> {
    let mut out = Vec::new();
    if let Ok((inline, ids)) = doc.get_page_resources(page) {
        out.extend(inline);
        out.extend(ids.into_iter().filter_map(|id| doc.get_dictionary(id).ok()));
    }
    out
}
