//! Page layout: flowing text blocks, side-by-side columns and tables with repeated
//! headers onto A4 pages, producing positioned text and rules for the PDF writer.
//!
//! Text is emitted in reading order, one text object per printed line (a table row or a
//! totals row is one text object whose cells end in a space), so extractors that follow
//! the content stream get one `Label: value` or one row per line, and positional
//! extractors see the same thing.

use super::font::{FontId, Fonts};

pub const PAGE_WIDTH: f32 = 595.28;
pub const PAGE_HEIGHT: f32 = 841.89;
pub const MARGIN: f32 = 42.0;
pub const CONTENT_WIDTH: f32 = PAGE_WIDTH - 2.0 * MARGIN;
/// Space above the content.
const TOP: f32 = 36.0;
/// Reserved under the content for the footer.
const BOTTOM: f32 = 52.0;
const GUTTER: f32 = 18.0;
/// Table rows use one line step whatever the style, so a tall row can be split by lines.
const ROW_STEP: f32 = 10.0;
const ROW_PAD: f32 = 3.0;
const CELL_PAD: f32 = 3.0;
const HEADER_HEIGHT: f32 = 2.0 * ROW_STEP + 2.0 * ROW_PAD;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Style {
    pub font: FontId,
    pub size: f32,
    /// 0 black … 1 white.
    pub gray: f32,
}

impl Style {
    pub const TITLE: Style = Style::new(FontId::Bold, 15.0, 0.0);
    pub const HEADING: Style = Style::new(FontId::Bold, 9.0, 0.15);
    pub const NAME: Style = Style::new(FontId::Bold, 8.6, 0.0);
    pub const BODY: Style = Style::new(FontId::Regular, 8.0, 0.0);
    pub const SMALL: Style = Style::new(FontId::Regular, 6.9, 0.35);
    pub const TOTAL: Style = Style::new(FontId::Bold, 9.0, 0.0);

    pub const fn new(font: FontId, size: f32, gray: f32) -> Style {
        Style { font, size, gray }
    }

    pub fn step(self) -> f32 {
        self.size * 1.28
    }
}

/// A run of text at a baseline position in PDF user space (origin bottom left).
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub x: f32,
    pub y: f32,
    pub style: Style,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// One text object.
    Text(Vec<Span>),
    Rule {
        from: (f32, f32),
        to: (f32, f32),
        width: f32,
        gray: f32,
    },
    Fill {
        x: f32,
        y: f32,
        width: f32,
        height: f32,
        gray: f32,
    },
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Page {
    pub ops: Vec<Op>,
}

/// One line of a block before placement.
#[derive(Clone, Debug, PartialEq)]
pub struct TextLine {
    pub style: Style,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

pub struct Column {
    /// Slovak and English header labels, printed on two header lines.
    pub sk: &'static str,
    pub en: &'static str,
    pub width: f32,
    pub align: Align,
}

impl Column {
    pub const fn new(sk: &'static str, en: &'static str, width: f32, align: Align) -> Column {
        Column {
            sk,
            en,
            width,
            align,
        }
    }

    fn text_width(&self) -> f32 {
        self.width - 2.0 * CELL_PAD
    }
}

/// A table cell: its lines, already wrapped to the column.
pub type Cell = Vec<TextLine>;

pub struct Layout<'f> {
    fonts: &'f Fonts,
    pages: Vec<Page>,
    /// Distance from the page top to the next free position.
    top: f32,
}

impl<'f> Layout<'f> {
    pub fn new(fonts: &'f Fonts) -> Layout<'f> {
        Layout {
            fonts,
            pages: vec![Page::default()],
            top: TOP,
        }
    }

    pub fn column_width(columns: usize) -> f32 {
        let n = columns.max(1) as f32;
        (CONTENT_WIDTH - GUTTER * (n - 1.0)) / n
    }

    pub fn text_width(&self, style: Style, text: &str) -> f32 {
        self.fonts.get(style.font).width(text, style.size)
    }

    /// Greedy word wrap to `width`; words longer than a line are broken by characters.
    /// Line breaks in the text start new lines. Widths are summed as it goes (there is no
    /// kerning), which keeps a huge unbroken word linear.
    pub fn wrap(&self, style: Style, text: &str, width: f32) -> Vec<String> {
        let font = self.fonts.get(style.font);
        let space = font.width(" ", style.size);
        let mut lines = Vec::new();
        for paragraph in text.lines() {
            let mut current = String::new();
            let mut current_width = 0.0;
            for word in paragraph.split_whitespace() {
                let word_width = font.width(word, style.size);
                let separator = if current.is_empty() { 0.0 } else { space };
                if current_width + separator + word_width <= width {
                    if !current.is_empty() {
                        current.push(' ');
                    }
                    current.push_str(word);
                    current_width += separator + word_width;
                    continue;
                }
                if !current.is_empty() {
                    lines.push(std::mem::take(&mut current));
                    current_width = 0.0;
                }
                if word_width <= width {
                    current.push_str(word);
                    current_width = word_width;
                    continue;
                }
                for c in word.chars() {
                    let c_width = font.width(c.encode_utf8(&mut [0; 4]), style.size);
                    if current_width + c_width > width && !current.is_empty() {
                        lines.push(std::mem::take(&mut current));
                        current_width = 0.0;
                    }
                    current.push(c);
                    current_width += c_width;
                }
            }
            if !current.is_empty() {
                lines.push(current);
            }
        }
        lines
    }

    /// `text` wrapped to `width` as lines of one style.
    pub fn lines(&self, style: Style, text: &str, width: f32) -> Vec<TextLine> {
        self.wrap(style, text, width)
            .into_iter()
            .map(|text| TextLine { style, text })
            .collect()
    }

    fn page(&mut self) -> &mut Page {
        if self.pages.is_empty() {
            self.pages.push(Page::default());
        }
        let last = self.pages.len() - 1;
        &mut self.pages[last]
    }

    fn remaining(&self) -> f32 {
        PAGE_HEIGHT - BOTTOM - self.top
    }

    /// Height available for content on a page.
    pub fn page_capacity() -> f32 {
        PAGE_HEIGHT - BOTTOM - TOP
    }

    pub fn new_page(&mut self) {
        self.pages.push(Page::default());
        self.top = TOP;
    }

    /// Vertical space; at a page end it is simply dropped.
    pub fn gap(&mut self, height: f32) {
        self.top = (self.top + height).min(PAGE_HEIGHT - BOTTOM);
    }

    /// Starts a new page unless `height` fits on this one (or could not fit on any).
    pub fn keep_together(&mut self, height: f32) {
        if height > self.remaining() && height <= Self::page_capacity() && self.top > TOP {
            self.new_page();
        }
    }

    pub fn height(lines: &[TextLine]) -> f32 {
        lines.iter().map(|l| l.style.step()).sum()
    }

    fn baseline(&self, top: f32, style: Style) -> f32 {
        PAGE_HEIGHT - top - style.size
    }

    /// Lines one under the other at `x`, flowing onto new pages.
    pub fn block(&mut self, x: f32, lines: &[TextLine]) {
        for line in lines {
            if line.style.step() > self.remaining() {
                self.new_page();
            }
            let y = self.baseline(self.top, line.style);
            let span = Span {
                x,
                y,
                style: line.style,
                text: line.text.clone(),
            };
            self.page().ops.push(Op::Text(vec![span]));
            self.top += line.style.step();
        }
    }

    /// Blocks side by side in equal columns, kept on one page. A group taller than a page
    /// is stacked instead, which lets it flow.
    pub fn columns(&mut self, columns: &[Vec<TextLine>]) {
        let columns: Vec<&Vec<TextLine>> = columns.iter().filter(|c| !c.is_empty()).collect();
        let height = columns.iter().map(|c| Self::height(c)).fold(0.0, f32::max);
        if height > Self::page_capacity() {
            for column in columns {
                self.block(MARGIN, column);
            }
            return;
        }
        self.keep_together(height);
        let width = Self::column_width(columns.len());
        let start = self.top;
        for (i, column) in columns.iter().enumerate() {
            self.top = start;
            self.block(MARGIN + i as f32 * (width + GUTTER), column);
        }
        self.top = start + height;
    }

    /// A horizontal rule across the content width at the current position.
    pub fn rule(&mut self, gray: f32) {
        let y = PAGE_HEIGHT - self.top;
        self.page().ops.push(Op::Rule {
            from: (MARGIN, y),
            to: (PAGE_WIDTH - MARGIN, y),
            width: 0.5,
            gray,
        });
    }

    /// Label and value rows from `left` to the right margin (totals), the values
    /// right-aligned. Each row is one text object whose label ends in a space, so extracted
    /// text reads `Label: value`; a row too wide for one line puts the value on a second.
    pub fn label_values(&mut self, rows: &[LabelValue], left: f32) {
        let height = self.label_values_height(rows, left);
        self.keep_together(height);
        let right = PAGE_WIDTH - MARGIN;
        for LabelValue {
            label,
            value,
            style,
        } in rows
        {
            let label = format!("{label}: ");
            let two_lines = self.label_value_split(&label, value, *style, left);
            let step = style.step() * if two_lines { 2.0 } else { 1.0 } + 1.0;
            if step > self.remaining() {
                self.new_page();
            }
            let y = self.baseline(self.top + 1.0, *style);
            let value_y = if two_lines { y - style.step() } else { y };
            let value_x = right - self.text_width(*style, value);
            self.page().ops.push(Op::Text(vec![
                Span {
                    x: left,
                    y,
                    style: *style,
                    text: label,
                },
                Span {
                    x: value_x,
                    y: value_y,
                    style: *style,
                    text: value.clone(),
                },
            ]));
            self.top += step;
        }
    }

    fn label_value_split(&self, label: &str, value: &str, style: Style, left: f32) -> bool {
        let needed = self.text_width(style, label) + self.text_width(style, value) + 6.0;
        needed > PAGE_WIDTH - MARGIN - left
    }

    pub fn label_values_height(&self, rows: &[LabelValue], left: f32) -> f32 {
        rows.iter()
            .map(
                |LabelValue {
                     label,
                     value,
                     style,
                 }| {
                    let label = format!("{label}: ");
                    let lines = if self.label_value_split(&label, value, *style, left) {
                        2.0
                    } else {
                        1.0
                    };
                    style.step() * lines + 1.0
                },
            )
            .sum()
    }

    /// A shaded band behind the next `height` points, `width` wide from `left`.
    pub fn shade(&mut self, left: f32, width: f32, height: f32, gray: f32) {
        let y = PAGE_HEIGHT - self.top - height;
        self.page().ops.push(Op::Fill {
            x: left,
            y,
            width,
            height,
            gray,
        });
    }

    /// Where the layout stands, to place something beside what follows.
    pub fn mark(&self) -> Mark {
        Mark {
            page: self.pages.len(),
            top: self.top,
        }
    }

    /// Goes back up to `mark` to set content beside what was placed since; does nothing
    /// if a page break came in between.
    pub fn back_to(&mut self, mark: &Mark) {
        if mark.page == self.pages.len() {
            self.top = mark.top;
        }
    }

    /// Moves below `mark` if it is further down the same page.
    pub fn below(&mut self, mark: &Mark) {
        if mark.page == self.pages.len() {
            self.top = self.top.max(mark.top);
        }
    }

    /// What must fit for a table to start on this page: the header with the first row, or
    /// with its first lines if that row is taller than a page and will be split anyway.
    pub fn table_start_height(rows: &[Vec<Cell>]) -> f32 {
        let first = rows.first().map_or(1, |r| row_lines(r)) as f32 * ROW_STEP + 2.0 * ROW_PAD;
        if HEADER_HEIGHT + first <= Self::page_capacity() {
            HEADER_HEIGHT + first
        } else {
            HEADER_HEIGHT + 3.0 * ROW_STEP + 2.0 * ROW_PAD
        }
    }

    /// Height of a table that does not break.
    pub fn table_height(rows: &[Vec<Cell>]) -> f32 {
        HEADER_HEIGHT
            + rows
                .iter()
                .map(|r| row_lines(r) as f32 * ROW_STEP + 2.0 * ROW_PAD)
                .sum::<f32>()
    }

    /// A table at `x`: header row (repeated on every page the table reaches), then the
    /// rows; a row taller than what is left of a page is split between its lines.
    pub fn table(&mut self, x: f32, columns: &[Column], rows: &[Vec<Cell>]) {
        if Self::table_start_height(rows) > self.remaining() && self.top > TOP {
            self.new_page();
        }
        self.table_header(x, columns);
        for row in rows {
            let total = row_lines(row);
            let mut start = 0;
            while start < total {
                let fits = ((self.remaining() - 2.0 * ROW_PAD) / ROW_STEP).floor();
                let fits = if fits > 0.0 { fits as usize } else { 0 };
                let left = total - start;
                let fresh = ((Self::page_capacity() - HEADER_HEIGHT - 2.0 * ROW_PAD) / ROW_STEP)
                    .floor() as usize;
                let at_page_top = self.top <= TOP + HEADER_HEIGHT + 0.5;
                // Split a row only when it cannot fit a page of its own.
                if !at_page_top && (fits == 0 || (left > fits && start == 0 && left <= fresh)) {
                    self.new_page();
                    self.table_header(x, columns);
                    continue;
                }
                let count = left.min(fits.max(1));
                self.table_row(x, columns, row, start, count);
                start += count;
            }
        }
    }

    fn table_header(&mut self, x0: f32, columns: &[Column]) {
        let top = self.top;
        self.shade(x0, table_width(columns), HEADER_HEIGHT, 0.92);
        let sk = Style::new(FontId::Regular, 6.8, 0.35);
        let en = Style::new(FontId::Bold, 7.5, 0.0);
        for (style, line) in [(sk, 0.0), (en, 1.0)] {
            let line_top = top + ROW_PAD + line * ROW_STEP;
            let mut spans = Vec::new();
            let mut x = x0;
            for column in columns {
                let text = if line == 0.0 { column.sk } else { column.en };
                spans.push(self.cell_span(column, x, line_top, style, text));
                x += column.width;
            }
            self.page().ops.push(Op::Text(spans));
        }
        self.top = top + HEADER_HEIGHT;
    }

    fn table_row(&mut self, x0: f32, columns: &[Column], row: &[Cell], start: usize, count: usize) {
        let top = self.top + ROW_PAD;
        let mut spans = Vec::new();
        let mut x = x0;
        for (column, cell) in columns.iter().zip(row) {
            for (i, line) in cell.iter().enumerate().skip(start).take(count) {
                let line_top = top + (i - start) as f32 * ROW_STEP;
                spans.push(self.cell_span(column, x, line_top, line.style, &line.text));
            }
            x += column.width;
        }
        if !spans.is_empty() {
            self.page().ops.push(Op::Text(spans));
        }
        self.top = top + count as f32 * ROW_STEP + ROW_PAD;
        let y = PAGE_HEIGHT - self.top;
        self.page().ops.push(Op::Rule {
            from: (x0, y),
            to: (x0 + table_width(columns), y),
            width: 0.3,
            gray: 0.75,
        });
    }

    /// A cell line; the trailing space separates cells in extracted text and is not
    /// counted for alignment.
    fn cell_span(&self, column: &Column, x: f32, top: f32, style: Style, text: &str) -> Span {
        let x = match column.align {
            Align::Left => x + CELL_PAD,
            Align::Right => x + column.width - CELL_PAD - self.text_width(style, text),
        };
        Span {
            x,
            y: PAGE_HEIGHT - top - ROW_STEP + (ROW_STEP - style.size) / 2.0,
            style,
            text: format!("{text} "),
        }
    }

    /// Adds the footer (left text, page numbers) to every page, and `mark` centred in the
    /// top margin of every page when given, and returns them.
    pub fn finish(mut self, footer_left: &str, mark: Option<&str>) -> Vec<Page> {
        let count = self.pages.len();
        let style = Style::new(FontId::Regular, 7.0, 0.35);
        let rule_y = BOTTOM - 14.0;
        let text_y = BOTTOM - 25.0;
        let mark_style = Style::new(FontId::Bold, 9.0, 0.0);
        for (i, page) in self.pages.iter_mut().enumerate() {
            if let Some(mark) = mark {
                let width = self.fonts.get(mark_style.font).width(mark, mark_style.size);
                page.ops.push(Op::Text(vec![Span {
                    x: (PAGE_WIDTH - width) / 2.0,
                    y: PAGE_HEIGHT - TOP + 12.0,
                    style: mark_style,
                    text: mark.to_string(),
                }]));
            }
            let numbers = format!("Strana {0} z {1} / Page {0} of {1}", i + 1, count);
            let numbers_x =
                PAGE_WIDTH - MARGIN - self.fonts.get(style.font).width(&numbers, style.size);
            page.ops.push(Op::Rule {
                from: (MARGIN, rule_y),
                to: (PAGE_WIDTH - MARGIN, rule_y),
                width: 0.4,
                gray: 0.6,
            });
            page.ops.push(Op::Text(vec![Span {
                x: MARGIN,
                y: text_y,
                style,
                text: footer_left.to_string(),
            }]));
            page.ops.push(Op::Text(vec![Span {
                x: numbers_x,
                y: text_y,
                style,
                text: numbers,
            }]));
        }
        self.pages
    }

    /// Column width of table text for wrapping cells.
    pub fn cell_width(column: &Column) -> f32 {
        column.text_width()
    }
}

/// A totals row.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelValue {
    pub label: String,
    pub value: String,
    pub style: Style,
}

pub struct Mark {
    page: usize,
    top: f32,
}

fn table_width(columns: &[Column]) -> f32 {
    columns.iter().map(|c| c.width).sum()
}

fn row_lines(row: &[Cell]) -> usize {
    row.iter().map(Vec::len).max().unwrap_or(0).max(1)
}
