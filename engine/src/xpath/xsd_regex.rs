//! XPath 2.0 / XML Schema regular expressions → patterns for the Rust `regex` crate.
//!
//! [`translate`] parses a pattern with the XPath 2.0 (F&O §7.6.1) extensions of the
//! XML Schema 1.0 regex grammar and emits a Rust pattern with the same meaning when
//! used for searching (as `fn:matches`, `fn:replace`, `fn:tokenize` do: **no implicit
//! anchoring**, unlike XSD pattern facets).
//!
//! | XPath construct                     | Rust output / behaviour                           |
//! |-------------------------------------|---------------------------------------------------|
//! | `.`                                 | `.` (any char but `\n`); `(?s:.)` with flag `s`   |
//! | `^` `$`                             | string anchors; `(?m:^)` `(?m:$)` with flag `m`   |
//! | flag `i`                            | global `(?i)` (Unicode simple case folding)       |
//! | flag `x`                            | whitespace outside `[...]` removed before parsing |
//! | flag `q` (XPath 3.0)                | whole pattern literal (`m`, `s`, `x` ignored)      |
//! | `\d` `\D`                           | `\p{Nd}` / `\P{Nd}`                               |
//! | `\s` `\S`                           | `[ \t\n\r]` / its complement                      |
//! | `\w` `\W`                           | `[^\p{P}\p{Z}\p{C}]` / `[\p{P}\p{Z}\p{C}]`        |
//! | `\i` `\I` `\c` `\C`                 | explicit XML name-character classes               |
//! | `\p{Lu}` … `\P{…}`                  | same Unicode general category                     |
//! | `\p{IsBasicLatin}` (blocks)         | explicit code-point ranges (see below)            |
//! | `[a-z-[aeiou]]` (subtraction)       | `[[a-z]&&[^[aeiou]]]`                              |
//! | `*?` `+?` `??` `{n,m}?`             | same (reluctant quantifiers are XPath 2.0)        |
//! | `\1` … (back-references)            | error: unsupported by the `regex` crate           |
//! | `(?…)`, `\b`, `\x41`, `{` bare, …   | error FORX0002: not XSD/XPath 2.0 syntax          |
//!
//! Notes and deliberate choices:
//! * `\i`/`\c` use the XML 1.0 5th edition `NameStartChar` / `NameChar` ranges (as
//!   XSD 1.1 does) rather than the long XML 1.0 2nd-edition tables.
//! * Unicode blocks (`\p{IsX}`) are translated to explicit ranges from the Unicode 3.1
//!   block table XSD 1.0 refers to (the `regex` crate has no block property). Newer
//!   block names are not known; `IsGreekandCoptic` is accepted as an alias of
//!   `IsGreek`. Surrogate blocks match nothing (Rust strings hold no surrogates).
//! * Under the `i` flag XPath says `\p{…}` classes are *not* case-folded. Outside
//!   square brackets they are wrapped in `(?-i:…)` to honour that; inside a bracketed
//!   class the `regex` crate folds the whole class, so `[\p{Lu}]` with `i` also matches
//!   lower-case letters (a documented deviation).
//! * Error offsets are character offsets into the pattern (after `x`-flag whitespace
//!   removal, when that flag is set).
//!
//! Replacement strings: [`check_replacement`] validates XPath `$N` / `\$` / `\\` syntax
//! (FORX0004) and [`translate_replacement`] / [`translate_replacement_with_groups`]
//! convert it to the `regex` crate's `${N}` syntax. Remember that `fn:replace` (and
//! `fn:tokenize`) must raise FORX0003 when the pattern matches the empty string —
//! see [`check_not_matching_empty`].

/// An error in a regular expression, its flags or a replacement string, with the XPath
/// error code from [`RegexError::code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegexError {
    /// FORX0001: a flag character other than `s`, `m`, `i`, `x`, `q`.
    #[error("invalid regular expression flags {flags:?}: unknown flag {flag:?}")]
    InvalidFlags {
        /// The whole flags argument.
        flags: String,
        /// The first offending character.
        flag: char,
    },
    /// FORX0002: the pattern is not a valid XPath 2.0 regular expression.
    #[error("invalid regular expression {pattern:?} at offset {offset}: {message}")]
    InvalidPattern {
        /// The pattern as given.
        pattern: String,
        /// Character offset of the problem.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// FORX0002: valid XPath, but not expressible with the `regex` crate
    /// (back-references, or a compiled program exceeding its size limits).
    #[error("unsupported regular expression {pattern:?}: {message}")]
    Unsupported {
        /// The pattern as given.
        pattern: String,
        /// What is not supported.
        message: String,
    },
    /// FORX0003: the pattern matches the empty string (forbidden for `fn:replace` and
    /// `fn:tokenize`).
    #[error("regular expression {pattern:?} matches the empty string")]
    MatchesEmptyString {
        /// The pattern as given.
        pattern: String,
    },
    /// FORX0004: invalid replacement string.
    #[error("invalid replacement string {replacement:?}: {message}")]
    InvalidReplacement {
        /// The replacement as given.
        replacement: String,
        /// What is wrong.
        message: String,
    },
}

impl RegexError {
    /// The XPath error code (`FORX0001` … `FORX0004`).
    pub fn code(&self) -> &'static str {
        match self {
            RegexError::InvalidFlags { .. } => "FORX0001",
            RegexError::InvalidPattern { .. } | RegexError::Unsupported { .. } => "FORX0002",
            RegexError::MatchesEmptyString { .. } => "FORX0003",
            RegexError::InvalidReplacement { .. } => "FORX0004",
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    s: bool,
    m: bool,
    i: bool,
    x: bool,
    q: bool,
}

fn parse_flags(flags: &str) -> Result<Flags, RegexError> {
    let mut f = Flags::default();
    for c in flags.chars() {
        match c {
            's' => f.s = true,
            'm' => f.m = true,
            'i' => f.i = true,
            'x' => f.x = true,
            'q' => f.q = true,
            other => {
                return Err(RegexError::InvalidFlags {
                    flags: flags.to_string(),
                    flag: other,
                })
            }
        }
    }
    Ok(f)
}

/// Maximum nesting of groups / subtracted classes accepted (the `regex` crate has its
/// own nesting limit of 250, which our wrappers also count against).
const MAX_DEPTH: usize = 100;

/// Translates an XPath 2.0 regular expression and its flags into an equivalent pattern
/// for `regex::Regex::new`. See the module documentation for the mapping.
///
/// Errors: [`RegexError::InvalidFlags`] (FORX0001) for a bad flag character,
/// [`RegexError::InvalidPattern`] (FORX0002) for syntax XSD/XPath does not allow,
/// [`RegexError::Unsupported`] (FORX0002) for back-references.
pub fn translate(pattern: &str, flags: &str) -> Result<String, RegexError> {
    let f = parse_flags(flags)?;
    let mut out = String::new();
    if f.i {
        out.push_str("(?i)");
    }
    if f.q {
        out.push_str(&regex::escape(pattern));
        return Ok(out);
    }
    let chars = if f.x {
        strip_x_whitespace(pattern)
    } else {
        pattern.chars().collect()
    };
    let mut p = Parser {
        chars,
        pos: 0,
        flags: f,
        pattern,
        depth: 0,
    };
    let body = p.parse_regexp()?;
    if p.pos < p.chars.len() {
        // parse_regexp only stops early at ')'
        return Err(p.error_at(p.pos, "unmatched ')'"));
    }
    out.push_str(&body);
    Ok(out)
}

/// Translates and compiles in one step; a pattern the `regex` crate cannot build (for
/// example one exceeding its size limit, like `a{100000}{100000}`) is reported as
/// [`RegexError::Unsupported`] (FORX0002).
pub fn compile(pattern: &str, flags: &str) -> Result<regex::Regex, RegexError> {
    let translated = translate(pattern, flags)?;
    regex::Regex::new(&translated).map_err(|e| RegexError::Unsupported {
        pattern: pattern.to_string(),
        message: e.to_string(),
    })
}

/// FORX0003 check for `fn:replace` / `fn:tokenize`: an error if `re` (the compiled
/// form of `pattern`) matches the empty string, i.e. if
/// `fn:matches("", $pattern, $flags)` is true.
pub fn check_not_matching_empty(re: &regex::Regex, pattern: &str) -> Result<(), RegexError> {
    if re.is_match("") {
        Err(RegexError::MatchesEmptyString {
            pattern: pattern.to_string(),
        })
    } else {
        Ok(())
    }
}

/// `x` flag: removes `#x9 #xA #xD #x20` outside character class expressions, before
/// parsing (F&O 7.6.1.1). An escape `\` always keeps the next non-whitespace
/// character (outside classes) or the next character (inside classes).
fn strip_x_whitespace(pattern: &str) -> Vec<char> {
    let is_ws = |c: char| matches!(c, ' ' | '\t' | '\n' | '\r');
    let mut out = Vec::with_capacity(pattern.len());
    let mut depth = 0usize;
    let mut it = pattern.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            out.push(c);
            if depth == 0 {
                while it.peek().copied().is_some_and(is_ws) {
                    it.next();
                }
            }
            if let Some(n) = it.next() {
                out.push(n);
            }
            continue;
        }
        if depth == 0 && is_ws(c) {
            continue;
        }
        if c == '[' {
            depth += 1;
        } else if c == ']' && depth > 0 {
            depth -= 1;
        }
        out.push(c);
    }
    out
}

/// A set of characters produced by an escape, as the inside of a Rust bracket class:
/// the set is `[items]`, or `[^items]` when `negated`.
struct CharSet {
    items: String,
    negated: bool,
    /// Category/block escapes: not case-folded under the `i` flag in XPath.
    case_sensitive: bool,
}

impl CharSet {
    fn new(items: impl Into<String>, negated: bool) -> CharSet {
        CharSet {
            items: items.into(),
            negated,
            case_sensitive: false,
        }
    }

    /// As a stand-alone class.
    fn standalone(&self) -> String {
        if self.negated {
            format!("[^{}]", self.items)
        } else {
            format!("[{}]", self.items)
        }
    }

    /// As items to put inside an enclosing bracket class (union).
    fn inside(&self) -> String {
        if self.negated {
            format!("[^{}]", self.items)
        } else {
            self.items.clone()
        }
    }
}

/// A nested class matching nothing (usable as an item of a bracket class).
const EMPTY_SET: &str = r"[\x{0}&&\x{1}]";

/// XML 1.0 (5th ed.) NameStartChar, as Rust class items.
const NAME_START: &str = concat!(
    r"\x{3A}A-Z\x{5F}a-z\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{2FF}\x{370}-\x{37D}",
    r"\x{37F}-\x{1FFF}\x{200C}-\x{200D}\x{2070}-\x{218F}\x{2C00}-\x{2FEF}",
    r"\x{3001}-\x{D7FF}\x{F900}-\x{FDCF}\x{FDF0}-\x{FFFD}\x{10000}-\x{EFFFF}"
);

/// NameChar minus NameStartChar, as Rust class items.
const NAME_EXTRA: &str = r"\x{2D}\x{2E}0-9\x{B7}\x{300}-\x{36F}\x{203F}-\x{2040}";

/// XSD general-category names accepted in `\p{…}` (the `regex` crate knows them all
/// under the same short names).
const CATEGORIES: &[&str] = &[
    "L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No", "P", "Pc",
    "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Z", "Zs", "Zl", "Zp", "S", "Sm", "Sc", "Sk", "So", "C",
    "Cc", "Cf", "Co", "Cn",
];

/// Unicode 3.1 blocks (the table XSD 1.0 refers to): XSD name (without `Is`) and
/// code-point ranges.
const BLOCKS: &[(&str, &[(u32, u32)])] = &[
    ("BasicLatin", &[(0x0000, 0x007F)]),
    ("Latin-1Supplement", &[(0x0080, 0x00FF)]),
    ("LatinExtended-A", &[(0x0100, 0x017F)]),
    ("LatinExtended-B", &[(0x0180, 0x024F)]),
    ("IPAExtensions", &[(0x0250, 0x02AF)]),
    ("SpacingModifierLetters", &[(0x02B0, 0x02FF)]),
    ("CombiningDiacriticalMarks", &[(0x0300, 0x036F)]),
    ("Greek", &[(0x0370, 0x03FF)]),
    ("GreekandCoptic", &[(0x0370, 0x03FF)]),
    ("Cyrillic", &[(0x0400, 0x04FF)]),
    ("Armenian", &[(0x0530, 0x058F)]),
    ("Hebrew", &[(0x0590, 0x05FF)]),
    ("Arabic", &[(0x0600, 0x06FF)]),
    ("Syriac", &[(0x0700, 0x074F)]),
    ("Thaana", &[(0x0780, 0x07BF)]),
    ("Devanagari", &[(0x0900, 0x097F)]),
    ("Bengali", &[(0x0980, 0x09FF)]),
    ("Gurmukhi", &[(0x0A00, 0x0A7F)]),
    ("Gujarati", &[(0x0A80, 0x0AFF)]),
    ("Oriya", &[(0x0B00, 0x0B7F)]),
    ("Tamil", &[(0x0B80, 0x0BFF)]),
    ("Telugu", &[(0x0C00, 0x0C7F)]),
    ("Kannada", &[(0x0C80, 0x0CFF)]),
    ("Malayalam", &[(0x0D00, 0x0D7F)]),
    ("Sinhala", &[(0x0D80, 0x0DFF)]),
    ("Thai", &[(0x0E00, 0x0E7F)]),
    ("Lao", &[(0x0E80, 0x0EFF)]),
    ("Tibetan", &[(0x0F00, 0x0FFF)]),
    ("Myanmar", &[(0x1000, 0x109F)]),
    ("Georgian", &[(0x10A0, 0x10FF)]),
    ("HangulJamo", &[(0x1100, 0x11FF)]),
    ("Ethiopic", &[(0x1200, 0x137F)]),
    ("Cherokee", &[(0x13A0, 0x13FF)]),
    ("UnifiedCanadianAboriginalSyllabics", &[(0x1400, 0x167F)]),
    ("Ogham", &[(0x1680, 0x169F)]),
    ("Runic", &[(0x16A0, 0x16FF)]),
    ("Khmer", &[(0x1780, 0x17FF)]),
    ("Mongolian", &[(0x1800, 0x18AF)]),
    ("LatinExtendedAdditional", &[(0x1E00, 0x1EFF)]),
    ("GreekExtended", &[(0x1F00, 0x1FFF)]),
    ("GeneralPunctuation", &[(0x2000, 0x206F)]),
    ("SuperscriptsandSubscripts", &[(0x2070, 0x209F)]),
    ("CurrencySymbols", &[(0x20A0, 0x20CF)]),
    ("CombiningMarksforSymbols", &[(0x20D0, 0x20FF)]),
    ("LetterlikeSymbols", &[(0x2100, 0x214F)]),
    ("NumberForms", &[(0x2150, 0x218F)]),
    ("Arrows", &[(0x2190, 0x21FF)]),
    ("MathematicalOperators", &[(0x2200, 0x22FF)]),
    ("MiscellaneousTechnical", &[(0x2300, 0x23FF)]),
    ("ControlPictures", &[(0x2400, 0x243F)]),
    ("OpticalCharacterRecognition", &[(0x2440, 0x245F)]),
    ("EnclosedAlphanumerics", &[(0x2460, 0x24FF)]),
    ("BoxDrawing", &[(0x2500, 0x257F)]),
    ("BlockElements", &[(0x2580, 0x259F)]),
    ("GeometricShapes", &[(0x25A0, 0x25FF)]),
    ("MiscellaneousSymbols", &[(0x2600, 0x26FF)]),
    ("Dingbats", &[(0x2700, 0x27BF)]),
    ("BraillePatterns", &[(0x2800, 0x28FF)]),
    ("CJKRadicalsSupplement", &[(0x2E80, 0x2EFF)]),
    ("KangxiRadicals", &[(0x2F00, 0x2FDF)]),
    ("IdeographicDescriptionCharacters", &[(0x2FF0, 0x2FFF)]),
    ("CJKSymbolsandPunctuation", &[(0x3000, 0x303F)]),
    ("Hiragana", &[(0x3040, 0x309F)]),
    ("Katakana", &[(0x30A0, 0x30FF)]),
    ("Bopomofo", &[(0x3100, 0x312F)]),
    ("HangulCompatibilityJamo", &[(0x3130, 0x318F)]),
    ("Kanbun", &[(0x3190, 0x319F)]),
    ("BopomofoExtended", &[(0x31A0, 0x31BF)]),
    ("EnclosedCJKLettersandMonths", &[(0x3200, 0x32FF)]),
    ("CJKCompatibility", &[(0x3300, 0x33FF)]),
    ("CJKUnifiedIdeographsExtensionA", &[(0x3400, 0x4DB5)]),
    ("CJKUnifiedIdeographs", &[(0x4E00, 0x9FFF)]),
    ("YiSyllables", &[(0xA000, 0xA48F)]),
    ("YiRadicals", &[(0xA490, 0xA4CF)]),
    ("HangulSyllables", &[(0xAC00, 0xD7A3)]),
    ("HighSurrogates", &[]),
    ("HighPrivateUseSurrogates", &[]),
    ("LowSurrogates", &[]),
    (
        "PrivateUse",
        &[(0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD)],
    ),
    ("CJKCompatibilityIdeographs", &[(0xF900, 0xFAFF)]),
    ("AlphabeticPresentationForms", &[(0xFB00, 0xFB4F)]),
    ("ArabicPresentationForms-A", &[(0xFB50, 0xFDFF)]),
    ("CombiningHalfMarks", &[(0xFE20, 0xFE2F)]),
    ("CJKCompatibilityForms", &[(0xFE30, 0xFE4F)]),
    ("SmallFormVariants", &[(0xFE50, 0xFE6F)]),
    ("ArabicPresentationForms-B", &[(0xFE70, 0xFEFE)]),
    ("Specials", &[(0xFEFF, 0xFEFF), (0xFFF0, 0xFFFD)]),
    ("HalfwidthandFullwidthForms", &[(0xFF00, 0xFFEF)]),
    ("OldItalic", &[(0x10300, 0x1032F)]),
    ("Gothic", &[(0x10330, 0x1034F)]),
    ("Deseret", &[(0x10400, 0x1044F)]),
    ("ByzantineMusicalSymbols", &[(0x1D000, 0x1D0FF)]),
    ("MusicalSymbols", &[(0x1D100, 0x1D1FF)]),
    ("MathematicalAlphanumericSymbols", &[(0x1D400, 0x1D7FF)]),
    ("CJKUnifiedIdeographsExtensionB", &[(0x20000, 0x2A6D6)]),
    (
        "CJKCompatibilityIdeographsSupplement",
        &[(0x2F800, 0x2FA1F)],
    ),
    ("Tags", &[(0xE0000, 0xE007F)]),
    ("SupplementaryPrivateUseArea-A", &[(0xF0000, 0xFFFFD)]),
    ("SupplementaryPrivateUseArea-B", &[(0x100000, 0x10FFFD)]),
];

/// Rust class items for a block's ranges (an empty block gives [`EMPTY_SET`]).
fn block_items(ranges: &[(u32, u32)]) -> String {
    if ranges.is_empty() {
        return EMPTY_SET.to_string();
    }
    ranges
        .iter()
        .map(|(a, b)| format!(r"\x{{{a:X}}}-\x{{{b:X}}}"))
        .collect()
}

/// A single character escaped for use anywhere in a Rust pattern (inside or outside
/// brackets).
fn lit(c: char) -> String {
    let mut buf = [0u8; 4];
    regex::escape(c.encode_utf8(&mut buf))
}

/// Result of an escape: one character, or a set.
enum Escape {
    Char(char),
    Set(CharSet),
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    flags: Flags,
    pattern: &'a str,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    fn error_at(&self, offset: usize, message: impl Into<String>) -> RegexError {
        RegexError::InvalidPattern {
            pattern: self.pattern.to_string(),
            offset,
            message: message.into(),
        }
    }

    fn enter(&mut self) -> Result<(), RegexError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(RegexError::Unsupported {
                pattern: self.pattern.to_string(),
                message: format!("nesting deeper than {MAX_DEPTH} levels"),
            });
        }
        Ok(())
    }

    /// regExp ::= branch ( '|' branch )*  — stops at end of input or an unmatched ')'.
    fn parse_regexp(&mut self) -> Result<String, RegexError> {
        let mut out = self.parse_branch()?;
        while self.peek() == Some('|') {
            self.pos += 1;
            out.push('|');
            out.push_str(&self.parse_branch()?);
        }
        Ok(out)
    }

    /// branch ::= piece*
    fn parse_branch(&mut self) -> Result<String, RegexError> {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            out.push_str(&self.parse_piece()?);
        }
        Ok(out)
    }

    /// piece ::= atom quantifier?
    fn parse_piece(&mut self) -> Result<String, RegexError> {
        let (atom, bare_anchor) = self.parse_atom()?;
        match self.parse_quantifier()? {
            None => Ok(atom),
            Some(q) if bare_anchor => Ok(format!("(?:{atom}){q}")),
            Some(q) => Ok(format!("{atom}{q}")),
        }
    }

    /// quantifier ::= ( [?*+] | '{' quantity '}' ) '?'?
    fn parse_quantifier(&mut self) -> Result<Option<String>, RegexError> {
        let mut q = match self.peek() {
            Some(c @ ('?' | '*' | '+')) => {
                self.pos += 1;
                c.to_string()
            }
            Some('{') => self.parse_quantity()?,
            _ => return Ok(None),
        };
        if self.peek() == Some('?') {
            self.pos += 1;
            q.push('?');
        }
        Ok(Some(q))
    }

    /// '{' n '}' | '{' n ',' '}' | '{' n ',' m '}'  with n <= m.
    fn parse_quantity(&mut self) -> Result<String, RegexError> {
        let start = self.pos;
        self.pos += 1; // '{'
        let min = self.parse_number()?.ok_or_else(|| {
            self.error_at(
                start,
                "'{' must start a quantifier {n}, {n,} or {n,m}; escape it as '\\{'",
            )
        })?;
        let q = match self.peek() {
            Some('}') => format!("{{{min}}}"),
            Some(',') => {
                self.pos += 1;
                match self.parse_number()? {
                    None => format!("{{{min},}}"),
                    Some(max) => {
                        if max < min {
                            return Err(self.error_at(
                                start,
                                format!("quantifier {{{min},{max}}} has max < min"),
                            ));
                        }
                        format!("{{{min},{max}}}")
                    }
                }
            }
            _ => return Err(self.error_at(start, "malformed quantifier")),
        };
        if self.peek() != Some('}') {
            return Err(self.error_at(start, "malformed quantifier: missing '}'"));
        }
        self.pos += 1;
        Ok(q)
    }

    fn parse_number(&mut self) -> Result<Option<u32>, RegexError> {
        let start = self.pos;
        let mut n: u32 = 0;
        while let Some(d) = self.peek().filter(char::is_ascii_digit) {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(d as u32 - '0' as u32))
                .ok_or_else(|| self.error_at(start, "quantifier count too large"))?;
            self.pos += 1;
        }
        Ok((self.pos > start).then_some(n))
    }

    /// atom ::= Char | charClass | '(' regExp ')' ; charClass includes '.', '^', '$'
    /// and escapes. Returns the Rust fragment (always a single quantifiable unit) and
    /// whether it is a bare anchor that needs a group before a quantifier.
    fn parse_atom(&mut self) -> Result<(String, bool), RegexError> {
        let at = self.pos;
        let Some(c) = self.peek() else {
            return Err(self.error_at(at, "unexpected end of pattern"));
        };
        match c {
            '(' => {
                if self.peek_at(1) == Some('?') {
                    return Err(self.error_at(
                        at,
                        "'(?' constructs (non-capturing groups, flags, look-around) are not \
                         XPath 2.0 regular expression syntax",
                    ));
                }
                self.pos += 1;
                self.enter()?;
                let inner = self.parse_regexp()?;
                self.depth -= 1;
                if self.peek() != Some(')') {
                    return Err(self.error_at(at, "unclosed '('"));
                }
                self.pos += 1;
                Ok((format!("({inner})"), false))
            }
            '[' => Ok((self.parse_class_expr()?, false)),
            '.' => {
                self.pos += 1;
                Ok((if self.flags.s { "(?s:.)" } else { "." }.to_string(), false))
            }
            '^' | '$' => {
                self.pos += 1;
                if self.flags.m {
                    Ok((format!("(?m:{c})"), false))
                } else {
                    Ok((c.to_string(), true))
                }
            }
            '\\' => match self.parse_escape(false)? {
                Escape::Char(ch) => Ok((lit(ch), false)),
                Escape::Set(set) => {
                    let s = set.standalone();
                    if set.case_sensitive && self.flags.i {
                        Ok((format!("(?-i:{s})"), false))
                    } else {
                        Ok((s, false))
                    }
                }
            },
            '?' | '*' | '+' => Err(self.error_at(
                at,
                format!("quantifier '{c}' does not follow an atom; escape it as '\\{c}'"),
            )),
            '{' | '}' | ']' => Err(self.error_at(
                at,
                format!("'{c}' is a metacharacter here; escape it as '\\{c}'"),
            )),
            _ => {
                self.pos += 1;
                Ok((lit(c), false))
            }
        }
    }

    /// Parses an escape starting at '\'. `in_class` only affects error messages.
    fn parse_escape(&mut self, in_class: bool) -> Result<Escape, RegexError> {
        let at = self.pos;
        self.pos += 1; // '\'
        let Some(c) = self.peek() else {
            return Err(self.error_at(at, "pattern ends with '\\'"));
        };
        self.pos += 1;
        let set = |items: &str, negated: bool| Ok(Escape::Set(CharSet::new(items, negated)));
        match c {
            'n' => Ok(Escape::Char('\n')),
            'r' => Ok(Escape::Char('\r')),
            't' => Ok(Escape::Char('\t')),
            '\\' | '|' | '.' | '?' | '*' | '+' | '(' | ')' | '{' | '}' | '-' | '[' | ']' | '^'
            | '$' => Ok(Escape::Char(c)),
            's' => set(r"\x{20}\t\n\r", false),
            'S' => set(r"\x{20}\t\n\r", true),
            'd' => set(r"\p{Nd}", false),
            'D' => set(r"\p{Nd}", true),
            'w' => set(r"\p{P}\p{Z}\p{C}", true),
            'W' => set(r"\p{P}\p{Z}\p{C}", false),
            'i' => set(NAME_START, false),
            'I' => set(NAME_START, true),
            'c' => set(&format!("{NAME_START}{NAME_EXTRA}"), false),
            'C' => set(&format!("{NAME_START}{NAME_EXTRA}"), true),
            'p' | 'P' => self.parse_property(at, c == 'P'),
            '1'..='9' if !in_class => Err(RegexError::Unsupported {
                pattern: self.pattern.to_string(),
                message: format!(
                    "back-reference '\\{c}' at offset {at}: back-references are not supported \
                     by the regular expression engine"
                ),
            }),
            _ => Err(self.error_at(at, format!("invalid escape '\\{c}'"))),
        }
    }

    /// After `\p` / `\P`: '{' name '}' with a general category or an `Is` block name.
    fn parse_property(&mut self, at: usize, negated: bool) -> Result<Escape, RegexError> {
        if self.peek() != Some('{') {
            return Err(self.error_at(at, "'\\p' / '\\P' must be followed by '{name}'"));
        }
        self.pos += 1;
        let name_start = self.pos;
        while self.peek().is_some_and(|c| c != '}') {
            self.pos += 1;
        }
        if self.peek() != Some('}') {
            return Err(self.error_at(at, "unterminated '\\p{'"));
        }
        let name: String = self.chars[name_start..self.pos].iter().collect();
        self.pos += 1;
        let items = if let Some(block) = name.strip_prefix("Is") {
            match BLOCKS.iter().find(|(b, _)| *b == block) {
                Some((_, ranges)) => block_items(ranges),
                None => {
                    return Err(self.error_at(at, format!("unknown Unicode block name '{name}'")))
                }
            }
        } else if CATEGORIES.contains(&name.as_str()) {
            format!(r"\p{{{name}}}")
        } else {
            return Err(self.error_at(at, format!("unknown character category '{name}'")));
        };
        Ok(Escape::Set(CharSet {
            items,
            negated,
            case_sensitive: true,
        }))
    }

    /// charClassExpr ::= '[' charGroup ']' (at '['), returned as a Rust bracket class.
    fn parse_class_expr(&mut self) -> Result<String, RegexError> {
        let open = self.pos;
        self.pos += 1; // '['
        self.enter()?;
        let negated = self.peek() == Some('^');
        if negated {
            self.pos += 1;
        }
        let mut items = String::new();
        let mut count = 0usize;
        loop {
            let at = self.pos;
            let Some(c) = self.peek() else {
                return Err(self.error_at(open, "unterminated character class '['"));
            };
            match c {
                ']' => {
                    if count == 0 {
                        return Err(self.error_at(at, "empty character class"));
                    }
                    self.pos += 1;
                    break;
                }
                '-' => {
                    let next = self.peek_at(1);
                    if next == Some('[') {
                        if count == 0 {
                            return Err(
                                self.error_at(at, "character class subtraction needs a base class")
                            );
                        }
                        self.pos += 1; // '-'
                        let sub = self.parse_class_expr()?;
                        if self.peek() != Some(']') {
                            return Err(self.error_at(
                                self.pos,
                                "a subtracted class must be the last part of a character class",
                            ));
                        }
                        self.pos += 1;
                        self.depth -= 1;
                        let base = if negated {
                            format!("[^{items}]")
                        } else {
                            format!("[{items}]")
                        };
                        return Ok(format!("[{base}&&[^{sub}]]"));
                    }
                    if count == 0 || next == Some(']') {
                        self.pos += 1;
                        items.push_str(&lit('-'));
                        count += 1;
                        continue;
                    }
                    return Err(self.error_at(
                        at,
                        "'-' is only allowed at the start or end of a character class or in a \
                         range; escape it as '\\-'",
                    ));
                }
                '[' => {
                    return Err(self.error_at(
                        at,
                        "'[' inside a character class must be escaped as '\\[' (only '-[...]' \
                         subtraction may nest)",
                    ))
                }
                '\\' => match self.parse_escape(true)? {
                    Escape::Char(ch) => {
                        let item = self.range_from(ch)?;
                        items.push_str(&item);
                        count += 1;
                    }
                    Escape::Set(set) => {
                        if self.peek() == Some('-') && !matches!(self.peek_at(1), Some(']' | '[')) {
                            return Err(
                                self.error_at(at, "a multi-character escape cannot start a range")
                            );
                        }
                        items.push_str(&set.inside());
                        count += 1;
                    }
                },
                _ => {
                    self.pos += 1;
                    let item = self.range_from(c)?;
                    items.push_str(&item);
                    count += 1;
                }
            }
        }
        self.depth -= 1;
        Ok(if negated {
            format!("[^{items}]")
        } else {
            format!("[{items}]")
        })
    }

    /// After a single character `first` in a class: a range `first-last` if a '-'
    /// follows that is not the end of the class nor a subtraction; else just `first`.
    fn range_from(&mut self, first: char) -> Result<String, RegexError> {
        if self.peek() != Some('-') || matches!(self.peek_at(1), Some(']' | '[') | None) {
            return Ok(lit(first));
        }
        let at = self.pos;
        self.pos += 1; // '-'
        let last = match self.peek() {
            Some('\\') => match self.parse_escape(true)? {
                Escape::Char(ch) => ch,
                Escape::Set(_) => {
                    return Err(self.error_at(at, "a multi-character escape cannot end a range"))
                }
            },
            Some('-') => {
                return Err(self.error_at(at, "'-' cannot end a range unescaped; use '\\-'"))
            }
            Some(ch) => {
                self.pos += 1;
                ch
            }
            None => return Err(self.error_at(at, "unterminated character class")),
        };
        if last < first {
            return Err(self.error_at(
                at,
                format!("invalid range {first:?}-{last:?}: end is before start"),
            ));
        }
        Ok(format!("{}-{}", lit(first), lit(last)))
    }
}

// ---------------------------------------------------------------------------
// replacement strings
// ---------------------------------------------------------------------------

/// Validates an XPath `fn:replace` replacement string (FORX0004): a `\` must be
/// followed by `\` or `$`, and a `$` by a decimal digit.
pub fn check_replacement(rep: &str) -> Result<(), RegexError> {
    let bad = |message: &str| RegexError::InvalidReplacement {
        replacement: rep.to_string(),
        message: message.to_string(),
    };
    let mut it = rep.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\\' => match it.next() {
                Some('\\' | '$') => {}
                _ => return Err(bad("'\\' must be followed by '\\' or '$'")),
            },
            '$' => match it.peek() {
                Some(d) if d.is_ascii_digit() => {}
                _ => {
                    return Err(bad(
                        "'$' must be followed by a digit (use '\\$' for a literal '$')",
                    ))
                }
            },
            _ => {}
        }
    }
    Ok(())
}

/// Converts an XPath replacement string to the `regex` crate's syntax, for patterns
/// with at most 9 capturing groups: `$N` (one digit, any following digits are literal)
/// → `${N}`, `\$` → `$$`, `\\` → `\`, literal `$` → `$$`. Call [`check_replacement`]
/// first; invalid sequences are passed through literally here. For patterns with 10 or
/// more groups use [`translate_replacement_with_groups`], which applies the XPath rule
/// for multi-digit group numbers.
pub fn translate_replacement(rep: &str) -> String {
    translate_replacement_impl(rep, 9)
}

/// Like [`translate_replacement`] but with the XPath rule for `$` followed by several
/// digits: the first digit always belongs to the group number, and each further digit
/// is included as long as the number stays `<= group_count` (the number of capturing
/// groups, `Regex::captures_len() - 1`). A reference to a group that does not exist, or
/// did not participate in the match, is replaced by the empty string — as the `regex`
/// crate does. Validates first (FORX0004).
pub fn translate_replacement_with_groups(
    rep: &str,
    group_count: usize,
) -> Result<String, RegexError> {
    check_replacement(rep)?;
    Ok(translate_replacement_impl(rep, group_count))
}

fn translate_replacement_impl(rep: &str, group_count: usize) -> String {
    let chars: Vec<char> = rep.chars().collect();
    let mut out = String::with_capacity(rep.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => match chars.get(i + 1) {
                Some('$') => {
                    out.push_str("$$");
                    i += 2;
                }
                Some('\\') => {
                    out.push('\\');
                    i += 2;
                }
                _ => {
                    out.push('\\');
                    i += 1;
                }
            },
            '$' => match chars.get(i + 1).and_then(|d| d.to_digit(10)) {
                Some(first) => {
                    let mut n = first as usize;
                    let mut j = i + 2;
                    while let Some(d) = chars.get(j).and_then(|d| d.to_digit(10)) {
                        let candidate = n.saturating_mul(10).saturating_add(d as usize);
                        if candidate > group_count {
                            break;
                        }
                        n = candidate;
                        j += 1;
                    }
                    out.push_str(&format!("${{{n}}}"));
                    i = j;
                }
                None => {
                    out.push_str("$$");
                    i += 1;
                }
            },
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Replacement for the `q` flag (XPath 3.0): used literally, so only `$` needs escaping
/// for the `regex` crate (`regex::NoExpand` is the alternative).
pub fn literal_replacement(rep: &str) -> String {
    rep.replace('$', "$$")
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    /// Translate + compile, panicking with context (tests only).
    fn re(pattern: &str, flags: &str) -> Regex {
        let t = translate(pattern, flags)
            .unwrap_or_else(|e| panic!("translate({pattern:?}, {flags:?}) failed: {e}"));
        Regex::new(&t).unwrap_or_else(|e| panic!("{pattern:?} → {t:?} does not compile: {e}"))
    }

    fn matches(input: &str, pattern: &str, flags: &str) -> bool {
        re(pattern, flags).is_match(input)
    }

    fn err(pattern: &str, flags: &str) -> RegexError {
        match translate(pattern, flags) {
            Ok(t) => panic!("{pattern:?} should be rejected, got {t:?}"),
            Err(e) => e,
        }
    }

    fn replace(input: &str, pattern: &str, rep: &str, flags: &str) -> String {
        let r = re(pattern, flags);
        check_not_matching_empty(&r, pattern).expect("non-empty match");
        let rep = translate_replacement_with_groups(rep, r.captures_len() - 1)
            .expect("valid replacement");
        r.replace_all(input, rep.as_str()).into_owned()
    }

    #[test]
    fn flags() {
        assert_eq!(translate("a", "").as_deref(), Ok("a"));
        assert!(translate("a", "smixq").is_ok());
        assert!(translate("a", "ii").is_ok());
        let e = err("a", "g");
        assert_eq!(e.code(), "FORX0001");
        assert!(matches!(e, RegexError::InvalidFlags { flag: 'g', .. }));
        assert_eq!(err("a", "I").code(), "FORX0001");
        assert_eq!(err("a", " ").code(), "FORX0001");
    }

    #[test]
    fn no_implicit_anchoring() {
        assert!(matches("abracadabra", "bra", ""));
        assert!(matches("abracadabra", "^a.*a$", ""));
        assert!(!matches("abracadabra", "^bra", ""));
        assert!(matches("a", "", ""));
        assert!(!matches("abc", "^b$", ""));
    }

    #[test]
    fn dot_and_s_flag() {
        assert!(!matches("a\nb", "a.b", ""));
        assert!(matches("a\nb", "a.b", "s"));
        assert!(matches("a\rb", "a.b", "")); // XPath 2.0: only #xA is excluded
        assert!(matches("a€b", "^a.b$", ""));
        assert!(matches("a😀b", "^a.b$", ""));
    }

    #[test]
    fn anchors_and_m_flag() {
        let text = "line1\nline2";
        assert!(!matches(text, "^line2$", ""));
        assert!(matches(text, "^line2$", "m"));
        assert!(matches(text, "^line1$", "m"));
        assert!(!matches("abc\n", "abc$", "")); // $ is the very end of the string
        assert!(matches("abc\n", "abc$", "m"));
        // anchors are atoms and may be quantified
        assert!(matches("abc", "^*abc", ""));
        assert!(matches("abc", "^?abc$+", "m"));
        // ^ and $ are metacharacters anywhere
        assert!(!matches("a^b", "a^b", ""));
        assert!(matches("a^b", r"a\^b", ""));
        assert!(matches("a$b", r"a\$b", ""));
    }

    #[test]
    fn case_insensitive() {
        assert!(matches("HELLO", "hello", "i"));
        assert!(matches("hello", "[A-Z]+", "i"));
        assert!(!matches("hello", "^[A-Z]+$", ""));
        // \p{Lu} is not affected by i (outside brackets)
        assert!(!matches("abc", r"^\p{Lu}+$", "i"));
        assert!(matches("ABC", r"^\p{Lu}+$", "i"));
        assert!(!matches("k", r"\P{Ll}", "i"));
        // blocks neither: the Kelvin sign folds to k but is not Basic Latin
        assert!(!matches("\u{212A}", r"\p{IsBasicLatin}", "i"));
        assert!(matches("\u{212A}", "k", "i"));
    }

    #[test]
    fn x_flag() {
        assert!(matches("helloworld", "hello world", "x"));
        assert!(!matches("hello world", "^hello world$", "x"));
        assert!(matches("hello world", "hello[ ]world", "x"));
        assert!(matches("ab", "a \n\t b", "x"));
        assert!(matches("aa", "^a{ 2 }$", "x"));
        assert!(matches("a b", r"^a\s b$", "x"));
        // escaped whitespace: the escape applies to the next non-white character
        assert!(matches("a.b", r"a\ .b", "x"));
        assert!(!matches("ab", "a b", "xq"));
        assert!(matches("a b", "a b", "xq"));
    }

    #[test]
    fn q_flag() {
        assert!(matches("a.b*c", ".b*", "q"));
        assert!(!matches("axbbc", ".b*", "q"));
        assert!(matches("A.B", "a.b", "qi"));
        assert!(matches("(", "(", "q"));
        assert_eq!(translate("[", "q").as_deref(), Ok(r"\["));
    }

    #[test]
    fn escapes() {
        assert!(matches("a\nb", r"a\nb", ""));
        assert!(matches("a\rb\t", r"a\rb\t", ""));
        for c in [
            '\\', '|', '.', '?', '*', '+', '(', ')', '{', '}', '-', '[', ']', '^', '$',
        ] {
            let p = format!("^\\{c}$");
            assert!(matches(&c.to_string(), &p, ""), "{p}");
            let p = format!("^[\\{c}]$");
            assert!(matches(&c.to_string(), &p, ""), "{p}");
        }
        for bad in [
            r"\b", r"\B", r"\x41", r"\u0041", r"\a", r"\e", r"\0", r"\Q", r"\k", "\\",
        ] {
            assert_eq!(err(bad, "").code(), "FORX0002", "{bad}");
        }
    }

    #[test]
    fn multi_char_escapes() {
        assert!(matches("٣", r"^\d$", "")); // Arabic-Indic digit is Nd
        assert!(!matches("½", r"^\d$", "")); // No, not Nd
        assert!(matches("x", r"^\D$", ""));
        assert!(matches(" \t\n\r", r"^\s+$", ""));
        assert!(!matches("\u{a0}", r"\s", "")); // NBSP is not XSD \s
        assert!(matches("\u{a0}", r"^\S$", ""));
        assert!(!matches("é_1", r"^\w+$", "")); // '_' is punctuation (Pc)
        assert!(matches("é1", r"^\w+$", ""));
        assert!(matches("+", r"^\w$", "")); // '+' is Sm, a symbol: in \w
        assert!(!matches(".", r"\w", ""));
        assert!(!matches(" ", r"\w", ""));
        assert!(matches(".", r"^\W$", ""));
        assert!(matches("_x:y", r"^\i\c*$", ""));
        assert!(!matches("1x", r"^\i\c*$", ""));
        assert!(matches("a-b.c·d", r"^\c+$", ""));
        assert!(matches("1", r"^\I$", ""));
        assert!(matches(" ", r"^\C$", ""));
        assert!(!matches("a", r"\C", ""));
        assert!(matches("x", r"^[\d\s\w]$", ""));
        assert!(matches("5", r"^[^\D]$", ""));
        assert!(!matches("x", r"^[^\D]$", ""));
        assert!(matches("5", r"^[\S]$", ""));
        assert!(matches("名", r"^[\i]$", ""));
    }

    #[test]
    fn categories_and_blocks() {
        for cat in CATEGORIES {
            re(&format!(r"\p{{{cat}}}"), "");
            re(&format!(r"[\P{{{cat}}}a]"), "");
        }
        assert!(matches("A", r"^\p{Lu}$", ""));
        assert!(!matches("a", r"^\p{Lu}$", ""));
        assert!(matches("a", r"^\P{Lu}$", ""));
        assert!(matches("€", r"^\p{Sc}$", ""));
        assert!(matches("a", r"^\p{IsBasicLatin}$", ""));
        assert!(!matches("é", r"^\p{IsBasicLatin}$", ""));
        assert!(matches("é", r"^\p{IsLatin-1Supplement}$", ""));
        assert!(matches("é", r"^\P{IsBasicLatin}$", ""));
        assert!(matches("α", r"^\p{IsGreek}$", ""));
        assert!(matches("α", r"^\p{IsGreekandCoptic}$", ""));
        assert!(matches("\u{F0001}", r"^\p{IsPrivateUse}$", ""));
        assert!(matches("\u{E000}", r"^[\p{IsPrivateUse}]$", ""));
        assert!(matches("\u{FEFF}", r"^\p{IsSpecials}$", ""));
        assert!(!matches("a", r"\p{IsHighSurrogates}", ""));
        assert!(matches("a", r"^\P{IsHighSurrogates}$", ""));
        assert!(matches("a", r"^[\p{IsLowSurrogates}a]$", ""));
        assert!(matches("b", r"^[^\p{IsLowSurrogates}a]$", ""));
        for (name, _) in BLOCKS {
            re(&format!(r"\p{{Is{name}}}"), "");
            re(&format!(r"[^\P{{Is{name}}}x]"), "");
        }
        for bad in [
            r"\p{Greek}",
            r"\p{IsFoo}",
            r"\p{Letter}",
            r"\p{lu}",
            r"\p{L",
            r"\pL",
            r"\p",
            r"\p{}",
        ] {
            assert_eq!(err(bad, "").code(), "FORX0002", "{bad}");
        }
    }

    #[test]
    fn character_classes() {
        assert!(matches("b", "^[abc]$", ""));
        assert!(!matches("d", "^[abc]$", ""));
        assert!(matches("d", "^[^abc]$", ""));
        assert!(matches("-", "^[-a]$", ""));
        assert!(matches("-", "^[a-]$", ""));
        assert!(!matches("-", "^[^-a]$", ""));
        assert!(matches("^", "^[a^]$", ""));
        assert!(matches("$", "^[$]$", ""));
        assert!(matches(".", "^[.]$", ""));
        assert!(!matches("x", "^[.]$", ""));
        assert!(matches("&", "^[&&]$", ""));
        assert!(matches("~", "^[~~]$", ""));
        assert!(matches(":", "^[:alpha:]$", ""));
        assert!(matches("|", "^[|]$", ""));
        assert!(matches("\n", r"^[\n-\r]$", ""));
        assert!(matches("\u{b}", r"^[\n-\r]$", ""));
        assert!(matches("*", r"^[\*-\-]$", ""));
        assert!(matches("é", "^[à-ü]$", ""));
        for bad in [
            "[]", "[^]", "[a", "[z-a]", "[a-c-e]", "[[a]]", "[a[]", r"[\d-z]", r"[a-\d]", "[a--]",
            "[--a]", "[a-[b]c]", "[-[a]]", "a]", "[a-]]",
        ] {
            assert_eq!(err(bad, "").code(), "FORX0002", "{bad}");
        }
    }

    #[test]
    fn class_subtraction() {
        let p = "^[a-z-[aeiou]]+$";
        assert!(matches("bcdfg", p, ""));
        assert!(!matches("bcdefg", p, ""));
        assert!(matches("xyz", "^[a-z-[^x-z]]+$", ""));
        assert!(!matches("axyz", "^[a-z-[^x-z]]+$", ""));
        // negated base: (not a-z) minus digits
        assert!(matches("A", "^[^a-z-[0-9]]$", ""));
        assert!(!matches("5", "^[^a-z-[0-9]]$", ""));
        assert!(!matches("q", "^[^a-z-[0-9]]$", ""));
        // nested subtraction: a-z minus (aeiou minus u)
        assert!(matches("u", "^[a-z-[aeiou-[u]]]$", ""));
        assert!(!matches("e", "^[a-z-[aeiou-[u]]]$", ""));
        assert!(matches("x", r"^[\w-[\d]]$", ""));
        assert!(!matches("7", r"^[\w-[\d]]$", ""));
        assert_eq!(
            translate("[a-z-[aeiou]]", "").as_deref(),
            Ok("[[a-z]&&[^[aeiou]]]")
        );
    }

    #[test]
    fn quantifiers() {
        assert!(matches("aaa", "^a{3}$", ""));
        assert!(!matches("aa", "^a{3}$", ""));
        assert!(matches("aaaa", "^a{2,}$", ""));
        assert!(matches("aa", "^a{1,3}$", ""));
        assert!(matches("", "^a{0}$", ""));
        assert!(matches("ab", "^a?b+c*$", ""));
        for bad in [
            "a{",
            "a{}",
            "a{,3}",
            "a{3,1}",
            "a{1",
            "a{1,2",
            "a}",
            "{1}",
            "*a",
            "+",
            "a**",
            "a{x}",
            "a{99999999999}",
            "a???",
            "a+*",
        ] {
            assert_eq!(err(bad, "").code(), "FORX0002", "{bad}");
        }
    }

    #[test]
    fn reluctant_quantifiers() {
        let r = re("<.+?>", "");
        assert_eq!(r.find("<a><b>").map(|m| m.as_str()), Some("<a>"));
        let r = re("<.+>", "");
        assert_eq!(r.find("<a><b>").map(|m| m.as_str()), Some("<a><b>"));
        let r = re("a{2,3}?", "");
        assert_eq!(r.find("aaaa").map(|m| m.as_str()), Some("aa"));
        let r = re("a??b", "");
        assert_eq!(r.find("ab").map(|m| m.as_str()), Some("ab"));
        // `.*?` matches the empty string: fn:replace must refuse it (FORX0003)
        let r = re(".*?", "");
        assert_eq!(
            check_not_matching_empty(&r, ".*?").map_err(|e| e.code()),
            Err("FORX0003")
        );
    }

    #[test]
    fn groups_and_alternation() {
        assert!(matches("abab", "^(ab)+$", ""));
        assert!(matches("cat", "^(cat|dog)$", ""));
        assert!(matches("", "^()$", ""));
        assert!(matches("a", "^(a|)$", ""));
        assert!(matches("", "^(a|)$", ""));
        assert!(matches("b", "^(|b)$", ""));
        let r = re("(a)(b)?(c)", "");
        assert_eq!(r.captures_len(), 4);
        for bad in [
            "(", ")", "(a", "a)", "(?:a)", "(?i)a", "(?=a)", "(?<n>a)", "((a)",
        ] {
            assert_eq!(err(bad, "").code(), "FORX0002", "{bad}");
        }
    }

    #[test]
    fn back_references_unsupported() {
        let e = err(r"(a)\1", "");
        assert_eq!(e.code(), "FORX0002");
        assert!(matches!(e, RegexError::Unsupported { .. }));
        assert!(e.to_string().contains("back-reference"));
    }

    #[test]
    fn literals_are_escaped() {
        for lit_str in [
            "#", "&", "~", " ", "\"", "'", "/", "<", ">", "=", "!", ",", ":", "@", "%",
        ] {
            assert!(matches(lit_str, &format!("^{lit_str}$"), ""), "{lit_str}");
        }
        assert!(matches("a b", "^a b$", ""));
        assert!(matches("€💶", "^€💶$", ""));
        assert!(matches("\u{0}", "^\u{0}$", ""));
    }

    #[test]
    fn peppol_patterns() {
        // patterns as written in the Peppol BIS 3 / EN 16931 schematron
        let p = "urn:fdc:peppol.eu:2017:poacc:billing:([0-9]{2}):1.0";
        assert!(matches(
            "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0",
            p,
            ""
        ));
        assert!(!matches(
            "urn:fdc:peppol.eu:2017:poacc:billing:1:1.0",
            p,
            ""
        ));
        assert!(matches("123456789", "^[0-9]{9}$", ""));
        assert!(matches("ABC12345678", "^[A-Z0-9]{11,16}$", ""));
        let date_re = r"^(0?[1-9]|[12][0-9]|3[01])[-\\/ ]?(0?[1-9]|1[0-2])[-\\/ ]?(19|20)[0-9]{2}";
        assert!(matches("01/02/2020", date_re, ""));
        assert!(matches("1-2-2020", date_re, ""));
        assert!(matches("a b", r"\s", ""));
        let r = re(r"\s", "");
        assert_eq!(r.split("49 59").collect::<Vec<_>>(), vec!["49", "59"]);
        assert!(matches("a|b", r"\|", ""));
        assert!(matches("x", r"^[A-Za-z0-9]+$", ""));
        assert!(matches("ab@x.io", r"^[^@\s]+@[^@\s]+\.[^@\s]+$", ""));
    }

    #[test]
    fn replacement_syntax() {
        assert!(check_replacement("abc").is_ok());
        assert!(check_replacement("$1-$2").is_ok());
        assert!(check_replacement(r"\$\\").is_ok());
        assert!(check_replacement("").is_ok());
        for bad in ["$", "$a", "a$", r"\", r"\n", r"\1", "50$ off"] {
            let e = check_replacement(bad).expect_err(bad);
            assert_eq!(e.code(), "FORX0004");
        }
        assert_eq!(translate_replacement("$1"), "${1}");
        assert_eq!(translate_replacement("$12"), "${1}2");
        assert_eq!(translate_replacement(r"\$1"), "$$1");
        assert_eq!(translate_replacement(r"a\\b"), r"a\b");
        assert_eq!(translate_replacement("x${y}"), "x$${y}");
        assert_eq!(
            translate_replacement_with_groups("$12", 12).as_deref(),
            Ok("${12}")
        );
        assert_eq!(
            translate_replacement_with_groups("$123", 12).as_deref(),
            Ok("${12}3")
        );
        assert_eq!(
            translate_replacement_with_groups("$10", 1).as_deref(),
            Ok("${1}0")
        );
        assert_eq!(
            translate_replacement_with_groups("$0", 0).as_deref(),
            Ok("${0}")
        );
        assert!(translate_replacement_with_groups("$", 3).is_err());
        assert_eq!(literal_replacement("$1 \\"), "$$1 \\");
    }

    #[test]
    fn replace_like_xpath() {
        // examples from F&O fn:replace
        assert_eq!(replace("abracadabra", "bra", "*", ""), "a*cada*");
        assert_eq!(replace("abracadabra", "a.*a", "*", ""), "*");
        assert_eq!(replace("abracadabra", "a.*?a", "*", ""), "*c*bra");
        assert_eq!(replace("abracadabra", "a", "", ""), "brcdbr");
        assert_eq!(
            replace("abracadabra", "a(.)", "a$1$1", ""),
            "abbraccaddabbra"
        );
        assert_eq!(replace("AAAA", "A+", "b", ""), "b");
        assert_eq!(replace("AAAA", "A+?", "b", ""), "bbbb");
        assert_eq!(replace("darted", "^(.*?)d(.*)$", "$1c$2", ""), "carted");
        assert_eq!(replace("a1b2", r"(\d)", r"\$$1", ""), "a$1b$2");
        assert_eq!(replace("abc", "(b)", "$2", ""), "ac"); // missing group → ""
        assert_eq!(replace("abc", "(b)", "$10", ""), "ab0c");
        // FORX0003
        let r = re("a*", "");
        assert_eq!(
            check_not_matching_empty(&r, "a*").map_err(|e| e.code()),
            Err("FORX0003")
        );
    }

    #[test]
    fn tokenize_like_xpath() {
        let r = re(r",\s*", "");
        assert_eq!(
            r.split("1, 15, 24, 50").collect::<Vec<_>>(),
            ["1", "15", "24", "50"]
        );
        let r = re(r"\s*<br>\s*", "i");
        assert_eq!(
            r.split("Some unparsed <br> HTML <BR> text")
                .collect::<Vec<_>>(),
            ["Some unparsed", "HTML", "text"]
        );
    }

    #[test]
    fn compile_helper_and_limits() {
        assert!(compile("a+", "").is_ok());
        assert_eq!(
            compile("a(", "").map(|_| ()).map_err(|e| e.code()),
            Err("FORX0002")
        );
        let e = compile("(((a{1000}){1000}){1000}){1000}", "").expect_err("too big");
        assert!(matches!(e, RegexError::Unsupported { .. }));
        // deep nesting is an error, not a stack overflow
        let deep = format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000));
        assert_eq!(err(&deep, "").code(), "FORX0002");
        let deep_class = format!("{}]", "[a-".repeat(10_000));
        assert_eq!(err(&deep_class, "").code(), "FORX0002");
    }

    #[test]
    fn error_messages() {
        let e = err("a{", "");
        assert!(e.to_string().contains("offset 1"), "{e}");
        let e = err("ab)", "");
        assert!(e.to_string().contains("unmatched ')'"), "{e}");
        assert!(err("[a", "").to_string().contains("unterminated"));
    }

    #[test]
    fn never_panics_on_garbage() {
        let pieces = [
            "a",
            "[",
            "]",
            "(",
            ")",
            "-",
            "^",
            "$",
            "\\",
            "{",
            "}",
            ",",
            "1",
            "?",
            "*",
            "+",
            "|",
            "p",
            "{Lu}",
            "[^",
            "-[",
            "é",
            " ",
            ".",
            "\\p{IsGreek}",
            "\\d",
        ];
        // every triple of pieces (pairs too, via the empty piece), with the flags that
        // change the translation; anything we accept must compile
        let check = |p: &str, flags: &str| {
            if let Ok(t) = translate(p, flags) {
                Regex::new(&t).unwrap_or_else(|e| panic!("{p:?} → {t:?} does not compile: {e}"));
            }
        };
        for a in pieces {
            for b in pieces {
                for flags in ["x", "i", "ms"] {
                    check(&format!("{a}{b}"), flags);
                }
                for c in pieces {
                    check(&format!("{a}{b}{c}"), "");
                }
            }
        }
    }
}
