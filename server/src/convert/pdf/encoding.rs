//! Single-byte font encodings, glyph names and the widths of the standard 14 fonts (which
//! PDFs may use without a /Widths array).

/// Windows-1252 code points 0x80–0x9F (WinAnsiEncoding); `\0` marks undefined codes.
const WIN_ANSI_HIGH: [char; 32] = [
    '€', '\0', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\0', 'Ž', '\0', '\0', '‘',
    '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\0', 'ž', 'Ÿ',
];

/// MacRomanEncoding 0x80–0xFF.
const MAC_ROMAN_HIGH: &str = "ÄÅÇÉÑÖÜáàâäãåçéèêëíìîïñóòôöõúùûü†°¢£§•¶ß®©™´¨≠ÆØ∞±≤≥¥µ∂∑∏π∫ªºΩæø¿¡¬√ƒ≈∆«»…\u{a0}ÀÃÕŒœ–—“”‘’÷◊ÿŸ⁄€‹›ﬁﬂ‡·‚„‰ÂÊÁËÈÍÎÏÌÓÔ\u{f8ff}ÒÚÛÙıˆ˜¯˘˙˚¸˝˛ˇ";

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Base {
    WinAnsi,
    MacRoman,
    Standard,
}

pub(super) fn base_from_name(name: &[u8]) -> Option<Base> {
    match name {
        b"WinAnsiEncoding" => Some(Base::WinAnsi),
        b"MacRomanEncoding" => Some(Base::MacRoman),
        b"StandardEncoding" => Some(Base::Standard),
        _ => None,
    }
}

fn win_ansi(b: u8) -> Option<char> {
    match b {
        0x20..=0x7e | 0xa0..=0xff => Some(char::from(b)),
        0x80..=0x9f => Some(WIN_ANSI_HIGH[usize::from(b - 0x80)]).filter(|c| *c != '\0'),
        _ => None,
    }
}

/// The 256-entry table of a base encoding. StandardEncoding differs from ASCII only in
/// the quotes below 0x80; its rarely used upper half is approximated by WinAnsi.
pub(super) fn table(base: Base) -> Vec<Option<char>> {
    (0u8..=255)
        .map(|b| match (base, b) {
            (Base::Standard, 0x27) => Some('’'),
            (Base::Standard, 0x60) => Some('‘'),
            (Base::MacRoman, 0x80..=0xff) => MAC_ROMAN_HIGH.chars().nth(usize::from(b - 0x80)),
            _ => win_ansi(b),
        })
        .collect()
}

/// Glyph names used by /Differences arrays: the Adobe names of ASCII, Latin-1 and the
/// Central European letters, plus the `uni` + four hex digits and `u` + hex conventions.
pub(super) fn glyph_char(name: &str) -> Option<char> {
    if name.chars().count() == 1 {
        return name.chars().next().filter(|c| c.is_ascii_alphabetic());
    }
    if let Some(hex) = name.strip_prefix("uni").filter(|h| h.len() >= 4) {
        return u32::from_str_radix(&hex[..4], 16)
            .ok()
            .and_then(char::from_u32);
    }
    if let Some(hex) = name
        .strip_prefix('u')
        .filter(|h| (4..=6).contains(&h.len()))
    {
        if let Ok(v) = u32::from_str_radix(hex, 16) {
            return char::from_u32(v);
        }
    }
    if let Some(accented) = compose(name) {
        return Some(accented);
    }
    let c = match name {
        "space" | "nbspace" | "nonbreakingspace" => ' ',
        "exclam" => '!',
        "quotedbl" => '"',
        "numbersign" => '#',
        "dollar" => '$',
        "percent" => '%',
        "ampersand" => '&',
        "quotesingle" => '\'',
        "quoteright" => '’',
        "quoteleft" => '‘',
        "parenleft" => '(',
        "parenright" => ')',
        "asterisk" => '*',
        "plus" => '+',
        "comma" => ',',
        "hyphen" | "minus" => '-',
        "period" => '.',
        "slash" => '/',
        "zero" => '0',
        "one" => '1',
        "two" => '2',
        "three" => '3',
        "four" => '4',
        "five" => '5',
        "six" => '6',
        "seven" => '7',
        "eight" => '8',
        "nine" => '9',
        "colon" => ':',
        "semicolon" => ';',
        "less" => '<',
        "equal" => '=',
        "greater" => '>',
        "question" => '?',
        "at" => '@',
        "bracketleft" => '[',
        "backslash" => '\\',
        "bracketright" => ']',
        "asciicircum" => '^',
        "underscore" => '_',
        "grave" => '`',
        "braceleft" => '{',
        "bar" => '|',
        "braceright" => '}',
        "asciitilde" => '~',
        "Euro" => '€',
        "endash" => '–',
        "emdash" => '—',
        "quotedblleft" => '“',
        "quotedblright" => '”',
        "quotedblbase" => '„',
        "quotesinglbase" => '‚',
        "bullet" => '•',
        "ellipsis" => '…',
        "degree" => '°',
        "section" => '§',
        "multiply" => '×',
        "germandbls" => 'ß',
        "sterling" => '£',
        "yen" => '¥',
        "copyright" => '©',
        "registered" => '®',
        "trademark" => '™',
        "dotlessi" => 'ı',
        _ => return None,
    };
    Some(c)
}

/// `ccaron` → `č`: base letter plus an accent name.
fn compose(name: &str) -> Option<char> {
    const ACCENTS: [(&str, &str, &str); 8] = [
        // (accent name, base letters, composed letters in the same order)
        (
            "acute",
            "aeiouyAEIOUYlrnszcLRNSZC",
            "áéíóúýÁÉÍÓÚÝĺŕńśźćĹŔŃŚŹĆ",
        ),
        ("caron", "cdenrstzlCDENRSTZL", "čďěňřšťžľČĎĚŇŘŠŤŽĽ"),
        ("dieresis", "aeiouyAEIOUY", "äëïöüÿÄËÏÖÜŸ"),
        ("circumflex", "aeiouAEIOU", "âêîôûÂÊÎÔÛ"),
        ("ring", "uUaA", "ůŮåÅ"),
        ("grave", "aeiouAEIOU", "àèìòùÀÈÌÒÙ"),
        ("tilde", "anoANO", "ãñõÃÑÕ"),
        ("cedilla", "cCsStT", "çÇşŞţŢ"),
    ];
    let mut chars = name.chars();
    let letter = chars.next()?;
    let accent = chars.as_str();
    // `lcommaaccent`-style names and `dcroat` are rare in invoices; the ones below are not.
    match name {
        "lslash" => return Some('ł'),
        "Lslash" => return Some('Ł'),
        "oslash" => return Some('ø'),
        "Oslash" => return Some('Ø'),
        "ohungarumlaut" => return Some('ő'),
        "uhungarumlaut" => return Some('ű'),
        "Ohungarumlaut" => return Some('Ő'),
        "Uhungarumlaut" => return Some('Ű'),
        "aogonek" => return Some('ą'),
        "eogonek" => return Some('ę'),
        "zdotaccent" => return Some('ż'),
        "Zdotaccent" => return Some('Ż'),
        _ => {}
    }
    let (_, bases, composed) = ACCENTS.iter().find(|(a, _, _)| *a == accent)?;
    let index = bases.chars().position(|b| b == letter)?;
    composed.chars().nth(index)
}

/// Widths (per 1000 em) of ASCII 0x20–0x7E in Helvetica and Helvetica-Bold (Adobe AFM).
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667,
    611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500,
    222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];
const HELVETICA_BOLD: [u16; 95] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, 975, 722, 722, 722, 722, 667,
    611, 778, 722, 278, 556, 722, 611, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 333, 278, 333, 584, 556, 333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556,
    278, 889, 611, 611, 611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
];

/// Width of `c` in a standard 14 font (by base font name), `None` for other fonts.
/// Times is approximated from Helvetica; accented letters take their base letter's width.
pub(super) fn standard_width(base_font: &str, c: char) -> Option<f32> {
    let name = base_font.split('+').next_back().unwrap_or(base_font);
    let family = if name.starts_with("Courier") {
        return Some(600.0);
    } else if name.starts_with("Helvetica") || name.starts_with("Arial") {
        1.0
    } else if name.starts_with("Times") {
        0.9
    } else {
        return None;
    };
    let bold = name.contains("Bold");
    let ascii = super::text::fold_char(c);
    let w = match u32::from(ascii) {
        v @ 0x20..=0x7e => {
            let i = (v - 0x20) as usize;
            f32::from(if bold {
                HELVETICA_BOLD[i]
            } else {
                HELVETICA[i]
            })
        }
        _ => 556.0,
    };
    Some(w * family)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_have_the_right_shape() {
        assert_eq!(MAC_ROMAN_HIGH.chars().count(), 128);
        assert_eq!(table(Base::WinAnsi)[0x8a], Some('Š'));
        assert_eq!(table(Base::WinAnsi)[0x9e], Some('ž'));
        assert_eq!(table(Base::MacRoman)[0x8a], Some('ä'));
    }

    #[test]
    fn glyph_names() {
        assert_eq!(glyph_char("scaron"), Some('š'));
        assert_eq!(glyph_char("lcaron"), Some('ľ'));
        assert_eq!(glyph_char("Uring"), Some('Ů'));
        assert_eq!(glyph_char("uni010D"), Some('č'));
        assert_eq!(glyph_char("seven"), Some('7'));
        assert_eq!(glyph_char("a"), Some('a'));
        assert_eq!(glyph_char("nonsense"), None);
    }
}
