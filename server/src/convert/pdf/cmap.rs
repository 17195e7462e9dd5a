//! ToUnicode CMaps: code space ranges, `bfchar` and `bfrange` mappings (PDF 32000-1,
//! 9.10.3). Ranges are kept as ranges, so a hostile `<0000> <FFFFFFFF>` costs nothing.

use std::collections::HashMap;

/// Every shown code is looked up in the code space and `bfrange` lists one by one, so
/// their length bounds the work per glyph; real ToUnicode maps have a handful of code
/// spaces and at most a few hundred ranges.
const MAX_SPACES: usize = 64;
const MAX_RANGES: usize = 4096;
/// The longest destination string PDF 32000-1 (9.10.3) allows: 512 bytes of UTF-16BE.
const MAX_DESTINATION: usize = 512;

#[derive(Debug, Default)]
pub(super) struct CMap {
    /// (byte length, low, high) of each code space range.
    spaces: Vec<(usize, u32, u32)>,
    chars: HashMap<(usize, u32), String>,
    ranges: Vec<Range>,
    /// Entries past the limits above were left out.
    pub(super) truncated: bool,
}

#[derive(Debug)]
struct Range {
    len: usize,
    lo: u32,
    hi: u32,
    target: Target,
}

#[derive(Debug)]
enum Target {
    /// UTF-16 units of the first code; later codes increment the last unit.
    Start(Vec<u16>),
    List(Vec<String>),
}

#[derive(Debug, PartialEq)]
enum Token {
    Hex(Vec<u8>),
    Int(i64),
    Word(String),
    Open,
    Close,
}

fn tokens(src: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let b = src[i];
        match b {
            b'%' => {
                while i < src.len() && src[i] != b'\n' && src[i] != b'\r' {
                    i += 1;
                }
            }
            b'<' if src.get(i + 1) == Some(&b'<') => i += 2,
            b'>' if src.get(i + 1) == Some(&b'>') => i += 2,
            b'<' => {
                let start = i + 1;
                let end = src[start..]
                    .iter()
                    .position(|&c| c == b'>')
                    .map_or(src.len(), |p| start + p);
                let digits: Vec<u8> = src[start..end]
                    .iter()
                    .copied()
                    .filter(u8::is_ascii_hexdigit)
                    .collect();
                let bytes = digits
                    .chunks(2)
                    .map(|pair| {
                        let hi = hex_val(pair[0]);
                        let lo = pair.get(1).map_or(0, |&c| hex_val(c));
                        hi << 4 | lo
                    })
                    .collect();
                out.push(Token::Hex(bytes));
                i = end + 1;
            }
            b'[' => {
                out.push(Token::Open);
                i += 1;
            }
            b']' => {
                out.push(Token::Close);
                i += 1;
            }
            b'(' => {
                // Literal strings only appear in the CMap header (registry names).
                let mut depth = 0;
                while i < src.len() {
                    match src[i] {
                        b'\\' => i += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                i += 1;
            }
            _ if b.is_ascii_whitespace() => i += 1,
            _ => {
                let start = i;
                while i < src.len()
                    && !src[i].is_ascii_whitespace()
                    && !b"<>[]()%".contains(&src[i])
                {
                    i += 1;
                }
                let word = String::from_utf8_lossy(&src[start..i]).into_owned();
                out.push(match word.parse::<i64>() {
                    Ok(n) => Token::Int(n),
                    Err(_) => Token::Word(word),
                });
                if i == start {
                    i += 1;
                }
            }
        }
    }
    out
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

fn code(bytes: &[u8]) -> Option<(usize, u32)> {
    if bytes.is_empty() || bytes.len() > 4 {
        return None;
    }
    Some((
        bytes.len(),
        bytes.iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b)),
    ))
}

fn utf16_units(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks(2)
        .map(|p| u16::from_be_bytes([p[0], p.get(1).copied().unwrap_or(0)]))
        .collect()
}

fn utf16(bytes: &[u8]) -> String {
    String::from_utf16_lossy(&utf16_units(bytes))
}

impl CMap {
    pub(super) fn parse(src: &[u8]) -> CMap {
        let toks = tokens(src);
        let mut map = CMap::default();
        let mut i = 0;
        while i < toks.len() {
            let Token::Word(w) = &toks[i] else {
                i += 1;
                continue;
            };
            i += 1;
            match w.as_str() {
                "begincodespacerange" => {
                    while let (Some(Token::Hex(lo)), Some(Token::Hex(hi))) =
                        (toks.get(i), toks.get(i + 1))
                    {
                        if let (Some((len, lo)), Some((_, hi))) = (code(lo), code(hi)) {
                            if map.spaces.len() < MAX_SPACES {
                                map.spaces.push((len, lo, hi));
                            } else {
                                map.truncated = true;
                            }
                        }
                        i += 2;
                    }
                }
                "beginbfchar" => {
                    while let (Some(Token::Hex(src)), Some(Token::Hex(dst))) =
                        (toks.get(i), toks.get(i + 1))
                    {
                        match code(src) {
                            Some(key) if dst.len() <= MAX_DESTINATION => {
                                map.chars.insert(key, utf16(dst));
                            }
                            _ => map.truncated = true,
                        }
                        i += 2;
                    }
                }
                "beginbfrange" => {
                    while let (Some(Token::Hex(lo)), Some(Token::Hex(hi))) =
                        (toks.get(i), toks.get(i + 1))
                    {
                        i += 2;
                        let target = match toks.get(i) {
                            Some(Token::Hex(dst)) => {
                                i += 1;
                                if dst.len() > MAX_DESTINATION {
                                    map.truncated = true;
                                    continue;
                                }
                                Target::Start(utf16_units(dst))
                            }
                            Some(Token::Open) => {
                                i += 1;
                                let mut list = Vec::new();
                                while let Some(Token::Hex(dst)) = toks.get(i) {
                                    if dst.len() <= MAX_DESTINATION {
                                        list.push(utf16(dst));
                                    } else {
                                        map.truncated = true;
                                        list.push(String::new());
                                    }
                                    i += 1;
                                }
                                if toks.get(i) == Some(&Token::Close) {
                                    i += 1;
                                }
                                Target::List(list)
                            }
                            _ => break,
                        };
                        if map.ranges.len() >= MAX_RANGES {
                            map.truncated = true;
                            continue;
                        }
                        if let (Some((len, lo)), Some((_, hi))) = (code(lo), code(hi)) {
                            if lo <= hi {
                                map.ranges.push(Range {
                                    len,
                                    lo,
                                    hi,
                                    target,
                                });
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        map
    }

    /// The Unicode text of a code of `len` bytes, if mapped.
    pub(super) fn lookup(&self, len: usize, code: u32) -> Option<String> {
        if let Some(s) = self.chars.get(&(len, code)) {
            return Some(s.clone());
        }
        let r = self
            .ranges
            .iter()
            .find(|r| r.len == len && (r.lo..=r.hi).contains(&code))?;
        let offset = code - r.lo;
        match &r.target {
            Target::List(list) => list.get(offset as usize).cloned(),
            Target::Start(units) => {
                let mut units = units.clone();
                let last = units.last_mut()?;
                *last = last.checked_add(u16::try_from(offset).ok()?)?;
                Some(String::from_utf16_lossy(&units))
            }
        }
    }

    /// How many bytes the next code in `bytes` takes, by the code space ranges.
    pub(super) fn code_len(&self, bytes: &[u8]) -> Option<usize> {
        self.spaces.iter().find_map(|&(len, lo, hi)| {
            let (_, value) = code(bytes.get(..len)?)?;
            // Ranges compare byte by byte; comparing the whole value is the common case.
            (lo..=hi).contains(&value).then_some(len)
        })
    }

    pub(super) fn has_spaces(&self) -> bool {
        !self.spaces.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oversized_maps_are_cut_and_say_so() {
        let long = "00".repeat(MAX_DESTINATION + 2);
        let map =
            CMap::parse(format!("beginbfchar <41> <{long}> <42> <0062> endbfchar").as_bytes());
        assert_eq!(map.lookup(1, 0x41), None);
        assert_eq!(map.lookup(1, 0x42).as_deref(), Some("b"));
        assert!(map.truncated);
        let ranges: String = (0..MAX_RANGES as u32 + 10)
            .map(|i| format!("<{:04X}> <{:04X}> <0041>\n", i * 2, i * 2 + 1))
            .collect();
        let map = CMap::parse(format!("beginbfrange\n{ranges}endbfrange").as_bytes());
        assert_eq!(map.ranges.len(), MAX_RANGES);
        assert!(map.truncated);
        let small = CMap::parse(b"beginbfrange <0000> <00FF> <0041> endbfrange");
        assert!(!small.truncated);
    }

    #[test]
    fn parses_chars_ranges_and_spaces() {
        let src = b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap
            /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
            1 begincodespacerange <0000> <FFFF> endcodespacerange
            2 beginbfchar <0003> <0020> <00A1> <013E> endbfchar
            2 beginbfrange <0010> <0012> <0041> <0020> <0021> [<010D> <0161>] endbfrange
            endcmap";
        let m = CMap::parse(src);
        assert_eq!(m.lookup(2, 3).as_deref(), Some(" "));
        assert_eq!(m.lookup(2, 0xa1).as_deref(), Some("ľ"));
        assert_eq!(m.lookup(2, 0x11).as_deref(), Some("B"));
        assert_eq!(m.lookup(2, 0x21).as_deref(), Some("š"));
        assert_eq!(m.lookup(2, 0x99), None);
        assert_eq!(m.code_len(&[0, 3, 0]), Some(2));
    }

    #[test]
    fn garbage_does_not_panic() {
        for src in [
            &b"beginbfrange <00> <ff"[..],
            b"<<<<]]][[(",
            b"beginbfchar <> <>",
            b"<0",
        ] {
            let m = CMap::parse(src);
            let _ = m.lookup(1, 0);
        }
    }
}
