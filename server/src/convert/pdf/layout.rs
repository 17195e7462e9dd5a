//! Reading order from positions: glyphs → lines (by baseline, with a tolerance) → words
//! (by gaps) → segments (words separated by a column-sized gap). Content-stream order is
//! ignored, so shuffled text objects read the same as tidy ones.

use super::interp::Glyph;

#[derive(Clone, Debug)]
pub(super) struct Segment {
    pub text: String,
    pub x0: f32,
    pub x1: f32,
}

#[derive(Clone, Debug)]
pub(super) struct Line {
    /// 1-based page number.
    pub page: u32,
    /// Baseline in PDF space (larger is higher on the page).
    pub y: f32,
    /// Largest font size on the line.
    pub size: f32,
    /// Words with their extents, left to right.
    pub words: Vec<Segment>,
    /// Words grouped by column-sized gaps: what the field finders read.
    pub segments: Vec<Segment>,
}

impl Line {
    pub(super) fn text(&self) -> String {
        self.segments
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join("  ")
    }
}

/// A gap wider than this share of the font size separates words…
const WORD_GAP: f32 = 0.15;
/// …and wider than this, columns (label | value, table cells).
const COLUMN_GAP: f32 = 0.9;
/// Glyphs whose baselines differ by less than this share of the font size share a line.
const BASELINE_TOLERANCE: f32 = 0.4;

pub(super) fn lines(page: u32, mut glyphs: Vec<Glyph>) -> Vec<Line> {
    glyphs.retain(|g| g.x.is_finite() && g.y.is_finite() && g.width.is_finite());
    glyphs.sort_by(|a, b| b.y.total_cmp(&a.y).then(a.x.total_cmp(&b.x)));
    let mut rows: Vec<(f32, Vec<Glyph>)> = Vec::new();
    for g in glyphs {
        match rows.last_mut() {
            Some((y, members))
                if (*y - g.y).abs()
                    <= BASELINE_TOLERANCE
                        * g.size.min(members.first().map_or(g.size, |m| m.size)) =>
            {
                // Running mean, so a jittered line does not drift away from its start.
                *y += (g.y - *y) / (members.len() + 1) as f32;
                members.push(g);
            }
            _ => rows.push((g.y, vec![g])),
        }
    }
    rows.into_iter()
        .filter_map(|(y, members)| line(page, y, members))
        .collect()
}

fn line(page: u32, y: f32, mut glyphs: Vec<Glyph>) -> Option<Line> {
    glyphs.sort_by(|a, b| a.x.total_cmp(&b.x));
    // Fake bold draws each glyph twice at (almost) the same place.
    glyphs.dedup_by(|b, a| a.text == b.text && (a.x - b.x).abs() < 0.5 && (a.y - b.y).abs() < 0.5);
    let size = glyphs.iter().map(|g| g.size).fold(0.0, f32::max);
    let mut words: Vec<Segment> = Vec::new();
    let mut pending_space = false;
    for g in &glyphs {
        if g.text.trim().is_empty() {
            pending_space = true;
            continue;
        }
        let text = g.text.replace(char::is_whitespace, "");
        match words.last_mut() {
            Some(w) if !pending_space && g.x - w.x1 <= WORD_GAP * g.size => {
                w.text.push_str(&text);
                w.x1 = w.x1.max(g.x + g.width);
            }
            _ => words.push(Segment {
                text,
                x0: g.x,
                x1: g.x + g.width,
            }),
        }
        pending_space = false;
    }
    let mut segments: Vec<Segment> = Vec::new();
    for w in words.iter().cloned() {
        match segments.last_mut() {
            Some(s) if w.x0 - s.x1 <= COLUMN_GAP * size => {
                s.text.push(' ');
                s.text.push_str(&w.text);
                s.x1 = s.x1.max(w.x1);
            }
            _ => segments.push(w),
        }
    }
    (!segments.is_empty()).then_some(Line {
        page,
        y,
        size,
        words,
        segments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(text: &str, x: f32, y: f32) -> Glyph {
        Glyph {
            text: text.into(),
            x,
            y,
            width: 5.0,
            size: 10.0,
        }
    }

    #[test]
    fn shuffled_glyphs_read_in_order() {
        let glyphs = vec![
            g("b", 105.0, 699.0),
            g("2", 105.0, 680.0),
            g("a", 100.0, 700.5),
            g("X", 200.0, 700.0),
            g("1", 100.0, 681.0),
        ];
        let ls = lines(1, glyphs);
        assert_eq!(ls.len(), 2);
        assert_eq!(ls[0].text(), "ab  X");
        assert_eq!(ls[1].text(), "12");
        assert_eq!(ls[0].segments.len(), 2);
        assert_eq!(ls[0].words.len(), 2);
        assert_eq!((ls[0].words[1].x0, ls[0].words[1].x1), (200.0, 205.0));
    }
}
