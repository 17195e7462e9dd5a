//! Reading and writing YAML: every YAML file invex reads (rule packs, `profiles.yaml`, lock
//! files) or writes (lock files, catalogue snapshots) goes through this module, with one
//! library (serde-saphyr, over the granit-parser event parser that [`crate::pack::yamlpos`]
//! uses too), one set of limits and one output style.
//!
//! Reading is bounded: at most [`MAX_DEPTH`] nested collections, serde-saphyr's budget of
//! parser events (1,000,000), nodes (250,000), aliases and scalar bytes (64 MiB), and alias
//! replay capped at [`MAX_ALIAS_REPLAY`] events (an alias bomb is refused, not expanded).
//! It reads as serde_yaml 0.9 did: merge keys (`<<`) are ordinary keys, only `true`, `True`,
//! `TRUE`, `false`, `False` and `FALSE` are booleans, a plain scalar in a string field is
//! its text (`2026.10`, `~`, nothing), and a field read with [`blank_as_default`] takes a
//! blank value as empty. Duplicate keys are errors at the repeated key. An error that is
//! not a syntax error names its path (`rules[0].asserts[1].flag: ...`), as serde_yaml's did.
//!
//! Writing keeps the output of the files already committed: block style, sequences in a
//! mapping not indented, no line folding, a string that would read back as something else
//! (`'2026.5'`, `'true'`, `''`) or that cannot be plain (`'*[x]'`, `'a: b'`) in single quotes,
//! a string with line breaks as a literal block.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::ser::{
    SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple,
    SerializeTupleStruct, SerializeTupleVariant,
};
use serde::Deserialize;
use serde::{Serialize, Serializer};
use serde_saphyr::options::{DuplicateKeyPolicy, MergeKeyPolicy};
use serde_saphyr::MessageFormatter as _;

use crate::pack::yamlpos::{Pos, PosTree};

/// The deepest nesting of sequences and mappings read (serde_yaml stopped at 128). Pack files
/// nest about 8 deep; the deserializer recurses per level, some 23 KB of stack a level in a
/// debug build, which overflows a 2 MiB thread stack near 90 levels: 64 stays clear of it.
pub const MAX_DEPTH: usize = 64;

/// The most parser events that aliases may replay in one document.
pub const MAX_ALIAS_REPLAY: usize = 100_000;

/// A YAML text that could not be read, or a value that could not be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    message: String,
    /// 1-based line and column.
    location: Option<(usize, usize)>,
}

impl Error {
    /// What went wrong, without the location.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where, as a 1-based line and column, when known.
    pub fn location(&self) -> Option<(usize, usize)> {
        self.location
    }

    fn from_de(e: &serde_saphyr::Error) -> Error {
        let e = e.without_snippet();
        // The wording for people writing YAML (no advice about the library's options).
        let message = serde_saphyr::UserMessageFormatter
            .format_message(e)
            .into_owned();
        let location = e.location().and_then(|l| {
            let line = usize::try_from(l.line()).ok()?;
            let column = usize::try_from(l.column()).ok()?;
            (line > 0).then_some((line, column.max(1)))
        });
        Error { message, location }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Some((line, column)) => write!(f, "{} at line {line} column {column}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

fn read_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_DEPTH;
    let mut alias_limits = serde_saphyr::options::AliasLimits::default();
    alias_limits.max_total_replayed_events = MAX_ALIAS_REPLAY;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits = alias_limits;
    // Comments are not read; their text is not kept (and a long run of them is no error).
    options.emit_comments = false;
    // A repeated key is an error at the repeated key (serde_yaml let serde refuse a duplicate
    // field, located at the start of the mapping).
    options.duplicate_keys = DuplicateKeyPolicy::Error;
    options.merge_keys = MergeKeyPolicy::AsOrdinary;
    options.strict_booleans = true;
    // `message:` with nothing, `~` or `null` in a string field is that text, as with serde_yaml.
    options.null_as_string = true;
    // Messages without a rendered excerpt of the source: the location is given apart.
    options.with_snippet = false;
    options
}

/// Read one YAML document into `T`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    serde_saphyr::from_str_with_options(text, read_options()).map_err(|e| {
        let mut error = Error::from_de(&e);
        let Some((line, column)) = error.location else {
            return error;
        };
        // A text that is YAML but not a `T`: where in the document, as a path.
        let tree = PosTree::parse(text);
        let mut at = Pos { line, column };
        if matches!(
            e.without_snippet(),
            serde_saphyr::Error::SerdeMissingField { .. }
        ) {
            // serde-saphyr places a missing field at the last key of the mapping that lacks
            // it; point at the mapping itself (its first key), as serde_yaml did.
            if let Some(map) = tree.mapping_of_key(at) {
                at = map;
                error.location = Some((at.line, at.column));
            }
        }
        if let Some(path) = tree.path_at(at) {
            error.message = format!("{path}: {}", error.message);
        }
        error
    })
}

/// For `#[serde(deserialize_with)]` on a collection or struct field: a value left blank
/// (`lets:`), `~` or `null` reads as the empty value, as serde_yaml read a blank one.
pub fn blank_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// Write `value` as one YAML document (no `---`), ending in a line break.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, Error> {
    let mut options = serde_saphyr::SerializerOptions::default();
    options.indent_step = 2;
    options.compact_list_indent = true;
    options.quote_all = false;
    options.tagged_enums = false;
    // Quote by YAML 1.2's rules (as serde_yaml did: `yes`, `1.3.16` and `2026-11-23` stay
    // plain), without writing a `%YAML 1.2` directive.
    options.yaml_12 = true;
    options.no_lang_directive = true;
    // Strings with line breaks as literal blocks; long lines are never folded.
    options.prefer_block_scalars = true;
    options.folded_wrap_chars = usize::MAX;
    serde_saphyr::to_string_with_options(&Styled(value), options).map_err(|e| Error {
        message: e.to_string(),
        location: None,
    })
}

// ---------------------------------------------------------------------------------------
// Scalar styles
// ---------------------------------------------------------------------------------------

/// Whether a string is written single-quoted: when it would read back, plain, as a null, a
/// boolean or a number, or when it cannot be plain but has nothing that needs escapes.
fn single_quoted(s: &str) -> bool {
    reads_as_non_string(s) || (!plain_allowed(s) && quotable(s))
}

/// Whether a string with line breaks is written double-quoted rather than as a literal
/// block: when a block would not keep it as it is (a space at its end or before a line
/// break, or a character that needs an escape).
fn double_quoted(s: &str) -> bool {
    s.contains('\n')
        && (s.ends_with(' ')
            || s.chars().any(|c| !is_printable(c))
            || s.chars()
                .zip(s.chars().skip(1))
                .any(|(a, b)| a == ' ' && is_break(b)))
}

/// A null, a boolean, an integer (decimal, `0x`, `0o`, `0b`) or a float (also `.inf`,
/// `.nan`), or digits with a leading zero (a string in YAML 1.2 that reads as a number
/// elsewhere).
fn reads_as_non_string(s: &str) -> bool {
    matches!(
        s,
        "" | "~"
            | "null"
            | "Null"
            | "NULL"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
    ) || leading_zero_digits(s)
        || reads_as_int(s)
        || reads_as_float(s)
}

fn leading_zero_digits(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    s.len() > 1 && s.starts_with('0') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

fn reads_as_int(s: &str) -> bool {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if body.starts_with(['+', '-']) {
        return false;
    }
    let radix_digits = [("0x", 16), ("0o", 8), ("0b", 2)]
        .into_iter()
        .find_map(|(prefix, radix)| body.strip_prefix(prefix).map(|rest| (rest, radix)));
    let (digits, radix) = radix_digits.unwrap_or((body, 10));
    if digits.starts_with(['+', '-']) {
        return false;
    }
    if negative {
        i128::from_str_radix(&format!("-{digits}"), radix).is_ok()
    } else {
        u128::from_str_radix(digits, radix).is_ok()
    }
}

fn reads_as_float(s: &str) -> bool {
    let unsigned = match s.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return false,
        Some(rest) => rest,
        None => s,
    };
    matches!(unsigned, ".inf" | ".Inf" | ".INF")
        || matches!(s, "-.inf" | "-.Inf" | "-.INF" | ".nan" | ".NaN" | ".NAN")
        || unsigned.parse::<f64>().is_ok_and(f64::is_finite)
}

/// A line break.
fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// A character that may stand unescaped in a plain or single-quoted scalar.
fn is_printable(c: char) -> bool {
    matches!(c,
        '\n' | '\u{20}'..='\u{7E}' | '\u{85}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}'
        | '\u{10000}'..='\u{10FFFF}')
        && c != '\u{FEFF}'
}

/// Single quotes can hold `s` as it is: one line of printable characters.
fn quotable(s: &str) -> bool {
    s.chars().all(|c| is_printable(c) && !is_break(c))
}

/// `s` may be written plain in block context: no indicator at its start, no `: ` or ` #`
/// inside, no space at either end, not a document marker.
fn plain_allowed(s: &str) -> bool {
    let chars: Vec<char> = s.chars().collect();
    let Some(&first) = chars.first() else {
        return false;
    };
    if s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    if first == ' ' || chars.last() == Some(&' ') {
        return false;
    }
    let blank_or_end = |i: usize| {
        chars
            .get(i)
            .is_none_or(|&c| matches!(c, ' ' | '\t') || is_break(c))
    };
    for (i, &c) in chars.iter().enumerate() {
        if i == 0 {
            if matches!(
                c,
                '#' | ','
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '&'
                    | '*'
                    | '!'
                    | '|'
                    | '>'
                    | '\''
                    | '"'
                    | '%'
                    | '@'
                    | '`'
            ) {
                return false;
            }
            if matches!(c, '?' | ':' | '-') && blank_or_end(1) {
                return false;
            }
        } else {
            if c == ':' && blank_or_end(i + 1) {
                return false;
            }
            if c == '#' && matches!(chars[i - 1], ' ' | '\t') {
                return false;
            }
        }
    }
    true
}

/// `T`, serialized with the strings [`single_quoted`] picks in single quotes.
struct Styled<'a, T: ?Sized>(&'a T);

impl<T: Serialize + ?Sized> Serialize for Styled<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(StyledSerializer(serializer))
    }
}

/// Passes everything to the inner serializer, values inside collections wrapped again.
struct StyledSerializer<S>(S);

/// A collection of the inner serializer whose values are wrapped in [`Styled`].
struct StyledCompound<C>(C);

impl<S: Serializer> Serializer for StyledSerializer<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = StyledCompound<S::SerializeSeq>;
    type SerializeTuple = StyledCompound<S::SerializeTuple>;
    type SerializeTupleStruct = StyledCompound<S::SerializeTupleStruct>;
    type SerializeTupleVariant = StyledCompound<S::SerializeTupleVariant>;
    type SerializeMap = StyledCompound<S::SerializeMap>;
    type SerializeStruct = StyledCompound<S::SerializeStruct>;
    type SerializeStructVariant = StyledCompound<S::SerializeStructVariant>;

    fn serialize_str(self, v: &str) -> Result<S::Ok, S::Error> {
        if single_quoted(v) {
            serde_saphyr::SingleQuoted(v).serialize(self.0)
        } else if double_quoted(v) {
            serde_saphyr::DoubleQuoted(v).serialize(self.0)
        } else {
            self.0.serialize_str(v)
        }
    }

    fn serialize_char(self, v: char) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; 4];
        self.serialize_str(v.encode_utf8(&mut buf))
    }

    fn serialize_bool(self, v: bool) -> Result<S::Ok, S::Error> {
        self.0.serialize_bool(v)
    }
    fn serialize_i8(self, v: i8) -> Result<S::Ok, S::Error> {
        self.0.serialize_i8(v)
    }
    fn serialize_i16(self, v: i16) -> Result<S::Ok, S::Error> {
        self.0.serialize_i16(v)
    }
    fn serialize_i32(self, v: i32) -> Result<S::Ok, S::Error> {
        self.0.serialize_i32(v)
    }
    fn serialize_i64(self, v: i64) -> Result<S::Ok, S::Error> {
        self.0.serialize_i64(v)
    }
    fn serialize_i128(self, v: i128) -> Result<S::Ok, S::Error> {
        self.0.serialize_i128(v)
    }
    fn serialize_u8(self, v: u8) -> Result<S::Ok, S::Error> {
        self.0.serialize_u8(v)
    }
    fn serialize_u16(self, v: u16) -> Result<S::Ok, S::Error> {
        self.0.serialize_u16(v)
    }
    fn serialize_u32(self, v: u32) -> Result<S::Ok, S::Error> {
        self.0.serialize_u32(v)
    }
    fn serialize_u64(self, v: u64) -> Result<S::Ok, S::Error> {
        self.0.serialize_u64(v)
    }
    fn serialize_u128(self, v: u128) -> Result<S::Ok, S::Error> {
        self.0.serialize_u128(v)
    }
    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        self.0.serialize_f32(v)
    }
    fn serialize_f64(self, v: f64) -> Result<S::Ok, S::Error> {
        self.0.serialize_f64(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<S::Ok, S::Error> {
        self.0.serialize_bytes(v)
    }
    fn serialize_none(self) -> Result<S::Ok, S::Error> {
        self.0.serialize_none()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&Styled(value))
    }
    fn serialize_unit(self) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit()
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit_struct(name)
    }
    fn serialize_unit_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit_variant(name, index, variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, &Styled(value))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_newtype_variant(name, index, variant, &Styled(value))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        self.0.serialize_seq(len).map(StyledCompound)
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        self.0.serialize_tuple(len).map(StyledCompound)
    }
    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        self.0.serialize_tuple_struct(name, len).map(StyledCompound)
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        self.0
            .serialize_tuple_variant(name, index, variant, len)
            .map(StyledCompound)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        self.0.serialize_map(len).map(StyledCompound)
    }
    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        self.0.serialize_struct(name, len).map(StyledCompound)
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        self.0
            .serialize_struct_variant(name, index, variant, len)
            .map(StyledCompound)
    }
    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

// The sequence-like compounds differ only in their trait and method names.
macro_rules! styled_elements {
    ($($trait:ident::$method:ident),* $(,)?) => {$(
        impl<C: $trait> $trait for StyledCompound<C> {
            type Ok = C::Ok;
            type Error = C::Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
                self.0.$method(&Styled(value))
            }
            fn end(self) -> Result<C::Ok, C::Error> {
                self.0.end()
            }
        }
    )*};
}

styled_elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
);

impl<C: SerializeMap> SerializeMap for StyledCompound<C> {
    type Ok = C::Ok;
    type Error = C::Error;
    // Keys are written as the serializer writes keys.
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), C::Error> {
        self.0.serialize_key(key)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        self.0.serialize_value(&Styled(value))
    }
    fn end(self) -> Result<C::Ok, C::Error> {
        self.0.end()
    }
}

// The struct-like compounds, likewise.
macro_rules! styled_fields {
    ($($trait:ident),* $(,)?) => {$(
        impl<C: $trait> $trait for StyledCompound<C> {
            type Ok = C::Ok;
            type Error = C::Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), C::Error> {
                self.0.serialize_field(key, &Styled(value))
            }
            fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
                self.0.skip_field(key)
            }
            fn end(self) -> Result<C::Ok, C::Error> {
                self.0.end()
            }
        }
    )*};
}

styled_fields!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests;
