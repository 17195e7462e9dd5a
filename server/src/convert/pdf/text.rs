//! Text folding for label matching: lower case without diacritics, one char for one char,
//! so positions in the folded text are positions in the original.

/// `Č` → `c`, `ß` → `s`, NBSP → space; other characters lower-cased when that keeps one
/// character.
pub(super) fn fold_char(c: char) -> char {
    const FROM: &str = "áäàâãåčćçďéěëèêíìîïĺľłňńñóôöòõőŕřšśşťúůüùûűýÿžźżÁÄÀÂÃÅČĆÇĎÉĚËÈÊÍÌÎÏĹĽŁŇŃÑÓÔÖÒÕŐŔŘŠŚŞŤÚŮÜÙÛŰÝŸŽŹŻß";
    const TO: &str = "aaaaaacccdeeeeeiiiilllnnnoooooorrssstuuuuuuyyzzzaaaaaacccdeeeeeiiiilllnnnoooooorrssstuuuuuuyyzzzs";
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    if c == '\u{a0}' || c == '\u{2009}' || c == '\u{202f}' {
        return ' ';
    }
    if let Some(i) = FROM.chars().position(|f| f == c) {
        return TO.chars().nth(i).unwrap_or(c);
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

pub(super) fn fold(s: &str) -> Vec<char> {
    s.chars().map(fold_char).collect()
}

pub(super) fn fold_string(s: &str) -> String {
    s.chars().map(fold_char).collect()
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric()
}

/// Occurrences of `needle` (already folded) in `hay` (folded) at word boundaries:
/// start/end positions in chars.
pub(super) fn find_word(hay: &[char], needle: &[char]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    if needle.is_empty() || needle.len() > hay.len() {
        return out;
    }
    for start in 0..=hay.len() - needle.len() {
        let end = start + needle.len();
        if hay[start..end] != *needle {
            continue;
        }
        let left_ok = start == 0 || !is_word(hay[start - 1]) || !is_word(needle[0]);
        let right_ok =
            end == hay.len() || !is_word(hay[end]) || !needle.last().is_some_and(|c| is_word(*c));
        if left_ok && right_ok {
            out.push((start, end));
        }
    }
    out
}

/// Whether folded `hay` contains `needle` (folded) as whole words.
pub(super) fn contains_word(hay: &str, needle: &str) -> bool {
    !find_word(&fold(hay), &fold(needle)).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_keeps_positions() {
        let s = "Číslo faktúry: Dodávateľ IČ DPH ß";
        assert_eq!(fold(s).len(), s.chars().count());
        assert_eq!(fold_string(s), "cislo faktury: dodavatel ic dph s");
    }

    #[test]
    fn word_boundaries() {
        assert!(contains_word("DIČ: 123", "dic"));
        assert!(!contains_word("DIČ: 123", "ic"));
        assert!(contains_word("Faktúra č. 5", "faktura c."));
        assert!(contains_word("Spolu s DPH", "s dph"));
        assert!(!contains_word("Spolu bez DPH", "s dph"));
    }
}
