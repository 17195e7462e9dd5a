//! Byte offset → (line, column) mapping. Lines end at `\n`, `\r\n` or a lone `\r` (the XML
//! line ends); columns count characters (Unicode scalar values), both 1-based.

/// Characters are counted in blocks of this many bytes, so that the column of any offset
/// costs at most one block's scan however long its line is (a whole document may be one
/// line, and each of its findings needs a column).
const BLOCK: usize = 512;

/// Where lines start, and how many characters precede each block: line and column of any
/// offset in O(log lines + BLOCK).
pub(super) struct LineIndex {
    starts: Vec<u32>,
    /// `chars[k]`: characters (non-continuation bytes) in `src[..k * BLOCK]`.
    chars: Vec<u32>,
}

impl LineIndex {
    pub(super) fn new(src: &[u8]) -> LineIndex {
        let mut chars = Vec::with_capacity(src.len() / BLOCK + 1);
        let mut n = 0u32;
        chars.push(0);
        for block in src.chunks(BLOCK) {
            n += block.iter().filter(|&&b| (b & 0xC0) != 0x80).count() as u32;
            chars.push(n);
        }
        LineIndex {
            starts: line_starts(src),
            chars,
        }
    }

    /// Characters in `src[..offset]`.
    fn chars_before(&self, src: &[u8], offset: usize) -> u32 {
        let block = offset / BLOCK;
        let base = self.chars.get(block).copied().unwrap_or(0);
        base + column(&src[block * BLOCK..offset]) - 1
    }

    /// 1-based line and column of `offset`.
    pub(super) fn line_column(&self, src: &[u8], offset: usize) -> (u32, u32) {
        let offset = offset.min(src.len());
        let idx = self
            .starts
            .partition_point(|&s| s as usize <= offset)
            .saturating_sub(1);
        let start = self.starts.get(idx).map_or(0, |&s| s as usize);
        let column = self.chars_before(src, offset) - self.chars_before(src, start) + 1;
        (idx as u32 + 1, column)
    }
}

/// Byte offsets at which lines start (always begins with 0).
fn line_starts(src: &[u8]) -> Vec<u32> {
    let mut starts = Vec::with_capacity(src.len() / 32 + 1);
    starts.push(0);
    // Skip 8-byte words without CR/LF quickly (lines are typically 20-80 bytes long).
    let mut i = 0;
    while i + 8 <= src.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&src[i..i + 8]);
        let w = u64::from_le_bytes(w);
        if has_byte(w, b'\n') || has_byte(w, b'\r') {
            for j in i..i + 8 {
                push_if_line_end(src, j, &mut starts);
            }
        }
        i += 8;
    }
    for j in i..src.len() {
        push_if_line_end(src, j, &mut starts);
    }
    starts
}

#[inline]
fn push_if_line_end(src: &[u8], i: usize, starts: &mut Vec<u32>) {
    let b = src[i];
    if b == b'\n' || (b == b'\r' && src.get(i + 1) != Some(&b'\n')) {
        starts.push((i + 1) as u32);
    }
}

/// Whether any byte of the little-endian word `w` equals `b`.
#[inline]
fn has_byte(w: u64, b: u8) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let x = w ^ (LO * b as u64);
    x.wrapping_sub(LO) & !x & HI != 0
}

/// Line and column of `offset` by scanning (used for errors, where no table exists yet).
pub(super) fn line_column_scan(src: &[u8], offset: usize) -> (u32, u32) {
    let offset = offset.min(src.len());
    let mut line = 1u32;
    let mut start = 0usize;
    for (i, &b) in src[..offset].iter().enumerate() {
        if b == b'\n' || (b == b'\r' && src.get(i + 1) != Some(&b'\n')) {
            line += 1;
            start = i + 1;
        }
    }
    (line, column(&src[start..offset]))
}

/// 1 + the number of characters in `prefix` (UTF-8 continuation bytes are not counted).
fn column(prefix: &[u8]) -> u32 {
    prefix.iter().filter(|&&b| (b & 0xC0) != 0x80).count() as u32 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_agrees_with_a_scan_everywhere() {
        let mut src = String::new();
        for i in 0..3000 {
            src.push_str(if i % 7 == 0 { "čž\r\n" } else { "ab" });
            if i % 500 == 0 {
                src.push_str(&"ľ".repeat(700));
                src.push('\r');
            }
        }
        let bytes = src.as_bytes();
        let index = LineIndex::new(bytes);
        for offset in (0..=bytes.len()).filter(|&o| src.is_char_boundary(o)) {
            assert_eq!(
                index.line_column(bytes, offset),
                line_column_scan(bytes, offset),
                "offset {offset}"
            );
        }
    }
}
