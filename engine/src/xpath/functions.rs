//! The function library: XPath 2.0 functions the rule sets use, and invex's native helper
//! functions (check digits, tolerance compare) under `urn:invex:functions`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use regex::Regex;
use rust_decimal::Decimal;

use super::eval::{normalize_space, Focus, State};
use super::ir::Ir;
use super::value::{
    atomic_equal, atomize, atomize_item, err, round_half_up, sum, value_compare, ArithOp, Atomic,
    AtomicType, CompOp, Item, Sequence,
};
use super::{xsd_regex, EvalError};
use crate::checks;

type R<T> = Result<T, EvalError>;

macro_rules! functions {
    ($( $variant:ident = $name:literal, $min:literal ..= $max:expr, ctx: $ctx:literal, bool: $b:literal; )*) => {
        /// A built-in function, resolved at compile time.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Func { $( $variant, )* }

        impl Func {
            /// The function's name as written in rules.
            pub fn name(self) -> &'static str {
                match self { $( Func::$variant => $name, )* }
            }
            /// (min, max) arity.
            pub fn arity(self) -> (usize, usize) {
                match self { $( Func::$variant => ($min, $max), )* }
            }
            /// Zero-argument form applies to the context item (`string()` = `string(.)`).
            pub fn defaults_to_context(self) -> bool {
                match self { $( Func::$variant => $ctx, )* }
            }
            /// Always returns a single xs:boolean.
            pub fn returns_boolean(self) -> bool {
                match self { $( Func::$variant => $b, )* }
            }
            pub(super) fn by_name(name: &str) -> Option<Func> {
                match name { $( $name => Some(Func::$variant), )* _ => None }
            }
            /// Every function, for documentation and tests.
            pub fn all() -> &'static [Func] {
                &[ $( Func::$variant, )* ]
            }
        }
    };
}

functions! {
    Exists = "exists", 1..=1, ctx: false, bool: true;
    Empty = "empty", 1..=1, ctx: false, bool: true;
    Not = "not", 1..=1, ctx: false, bool: true;
    Boolean = "boolean", 1..=1, ctx: false, bool: true;
    True = "true", 0..=0, ctx: false, bool: true;
    False = "false", 0..=0, ctx: false, bool: true;
    Count = "count", 1..=1, ctx: false, bool: false;
    Sum = "sum", 1..=2, ctx: false, bool: false;
    Avg = "avg", 1..=1, ctx: false, bool: false;
    Min = "min", 1..=1, ctx: false, bool: false;
    Max = "max", 1..=1, ctx: false, bool: false;
    Round = "round", 1..=2, ctx: false, bool: false;
    RoundHalfToEven = "round-half-to-even", 1..=2, ctx: false, bool: false;
    Abs = "abs", 1..=1, ctx: false, bool: false;
    Floor = "floor", 1..=1, ctx: false, bool: false;
    Ceiling = "ceiling", 1..=1, ctx: false, bool: false;
    Number = "number", 0..=1, ctx: true, bool: false;
    String = "string", 0..=1, ctx: true, bool: false;
    Data = "data", 0..=1, ctx: true, bool: false;
    NormalizeSpace = "normalize-space", 0..=1, ctx: true, bool: false;
    StringLength = "string-length", 0..=1, ctx: true, bool: false;
    UpperCase = "upper-case", 1..=1, ctx: false, bool: false;
    LowerCase = "lower-case", 1..=1, ctx: false, bool: false;
    Contains = "contains", 2..=2, ctx: false, bool: true;
    StartsWith = "starts-with", 2..=2, ctx: false, bool: true;
    EndsWith = "ends-with", 2..=2, ctx: false, bool: true;
    Substring = "substring", 2..=3, ctx: false, bool: false;
    SubstringBefore = "substring-before", 2..=2, ctx: false, bool: false;
    SubstringAfter = "substring-after", 2..=2, ctx: false, bool: false;
    Concat = "concat", 2..=usize::MAX, ctx: false, bool: false;
    StringJoin = "string-join", 1..=2, ctx: false, bool: false;
    Translate = "translate", 3..=3, ctx: false, bool: false;
    Matches = "matches", 2..=3, ctx: false, bool: true;
    Replace = "replace", 3..=4, ctx: false, bool: false;
    Tokenize = "tokenize", 1..=3, ctx: false, bool: false;
    StringToCodepoints = "string-to-codepoints", 1..=1, ctx: false, bool: false;
    CodepointsToString = "codepoints-to-string", 1..=1, ctx: false, bool: false;
    Compare = "compare", 2..=2, ctx: false, bool: false;
    Reverse = "reverse", 1..=1, ctx: false, bool: false;
    Subsequence = "subsequence", 2..=3, ctx: false, bool: false;
    DistinctValues = "distinct-values", 1..=1, ctx: false, bool: false;
    IndexOf = "index-of", 2..=2, ctx: false, bool: false;
    InsertBefore = "insert-before", 3..=3, ctx: false, bool: false;
    Remove = "remove", 2..=2, ctx: false, bool: false;
    Head = "head", 1..=1, ctx: false, bool: false;
    Tail = "tail", 1..=1, ctx: false, bool: false;
    ExactlyOne = "exactly-one", 1..=1, ctx: false, bool: false;
    ZeroOrOne = "zero-or-one", 1..=1, ctx: false, bool: false;
    OneOrMore = "one-or-more", 1..=1, ctx: false, bool: false;
    Last = "last", 0..=0, ctx: false, bool: false;
    Position = "position", 0..=0, ctx: false, bool: false;
    LocalName = "local-name", 0..=1, ctx: true, bool: false;
    Name = "name", 0..=1, ctx: true, bool: false;
    NamespaceUri = "namespace-uri", 0..=1, ctx: true, bool: false;
    Root = "root", 0..=1, ctx: true, bool: false;
    YearFromDate = "year-from-date", 1..=1, ctx: false, bool: false;
    MonthFromDate = "month-from-date", 1..=1, ctx: false, bool: false;
    DayFromDate = "day-from-date", 1..=1, ctx: false, bool: false;
    CurrentDate = "current-date", 0..=0, ctx: false, bool: false;
    // invex helpers (namespace urn:invex:functions)
    Gln = "invex:gln", 1..=1, ctx: false, bool: true;
    Mod11No = "invex:mod11-no", 1..=1, ctx: false, bool: true;
    Mod97Be = "invex:mod97-be", 1..=1, ctx: false, bool: true;
    Iban = "invex:iban", 1..=1, ctx: false, bool: true;
    IcoSk = "invex:ico-sk", 1..=1, ctx: false, bool: true;
    IcDphSk = "invex:ic-dph-sk", 1..=1, ctx: false, bool: true;
    DicSk = "invex:dic-sk", 1..=1, ctx: false, bool: true;
    AbnAu = "invex:abn-au", 1..=1, ctx: false, bool: true;
    SeOrgnr = "invex:se-orgnr", 1..=1, ctx: false, bool: true;
    ItCodiceFiscale = "invex:it-codice-fiscale", 1..=1, ctx: false, bool: true;
    ItPartitaIva = "invex:it-partita-iva", 1..=1, ctx: false, bool: true;
    ItIpa = "invex:it-ipa", 1..=1, ctx: false, bool: true;
    GrTin = "invex:gr-tin", 1..=1, ctx: false, bool: true;
    Slack = "invex:slack", 3..=3, ctx: false, bool: true;
    // The official Peppol helper functions, quirks included (checks::peppol)
    PeppolGln = "invex:peppol-gln", 1..=1, ctx: false, bool: true;
    PeppolMod11 = "invex:peppol-mod11", 1..=1, ctx: false, bool: true;
    PeppolMod97 = "invex:peppol-mod97-0208", 1..=1, ctx: false, bool: true;
    PeppolAbn = "invex:peppol-abn", 1..=1, ctx: false, bool: true;
    PeppolGrTin = "invex:peppol-gr-tin", 1..=1, ctx: false, bool: true;
    PeppolSeOrgnr = "invex:peppol-se-orgnr", 1..=1, ctx: false, bool: true;
    PeppolItIpa = "invex:peppol-it-ipa", 1..=1, ctx: false, bool: true;
    PeppolItCf = "invex:peppol-it-cf", 1..=1, ctx: false, bool: true;
    PeppolItCf16 = "invex:peppol-it-cf16", 1..=1, ctx: false, bool: true;
    PeppolItPivaSeIt = "invex:peppol-it-piva-se-it", 1..=1, ctx: false, bool: true;
    PeppolItPiva = "invex:peppol-it-piva", 1..=1, ctx: false, bool: false;
}

impl Func {
    pub fn builtin(local: &str) -> Option<Func> {
        Func::by_name(local).filter(|f| !f.name().starts_with("invex:"))
    }

    pub fn helper(local: &str) -> Option<Func> {
        Func::by_name(&format!("invex:{local}"))
    }
}

thread_local! {
    // Regexes compiled once per thread: rule patterns are few and literal.
    static REGEXES: RefCell<HashMap<(String, String), Arc<Regex>>> = RefCell::new(HashMap::new());
}

fn regex(pattern: &str, flags: &str) -> R<Arc<Regex>> {
    let key = (pattern.to_string(), flags.to_string());
    if let Some(r) = REGEXES.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(r);
    }
    let translated =
        xsd_regex::translate(pattern, flags).map_err(|e| err(e.code(), e.to_string()))?;
    let re = Regex::new(&translated).map_err(|e| {
        err(
            "FORX0002",
            format!("invalid regular expression '{pattern}': {e}"),
        )
    })?;
    let re = Arc::new(re);
    REGEXES.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() > 4096 {
            c.clear();
        }
        c.insert(key, re.clone());
    });
    Ok(re)
}

fn b(v: bool) -> Sequence {
    vec![Item::Atomic(Atomic::Boolean(v))]
}
fn s(v: &str) -> Sequence {
    vec![Item::Atomic(Atomic::string(v))]
}
fn int(v: i64) -> Sequence {
    vec![Item::Atomic(Atomic::Integer(v))]
}

fn xs_normalize_space(v: &str) -> String {
    v.split([' ', '\t', '\n', '\r'])
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

impl<'d> State<'d> {
    /// Boolean-valued functions evaluated without building a sequence (None: not one).
    pub(crate) fn call_bool(&mut self, func: Func, args: &[Ir], f: &Focus) -> R<Option<bool>> {
        Ok(Some(match func {
            Func::Exists => self.exists(&args[0], f)?,
            Func::Empty => !self.exists(&args[0], f)?,
            Func::Not => !self.eval_bool(&args[0], f)?,
            Func::Boolean => self.eval_bool(&args[0], f)?,
            Func::True => true,
            Func::False => false,
            Func::Contains | Func::StartsWith | Func::EndsWith => {
                let a = self.str_arg(args, 0, f)?;
                // A literal needle (the usual case) is used in place.
                let n = match &args[1] {
                    Ir::Literal(Atomic::String(lit)) => std::borrow::Cow::Borrowed(&**lit),
                    _ => std::borrow::Cow::Owned(self.str_arg(args, 1, f)?.into_owned()),
                };
                match func {
                    Func::Contains => a.contains(&*n),
                    Func::StartsWith => a.starts_with(&*n),
                    _ => a.ends_with(&*n),
                }
            }
            Func::Matches => {
                let a = self.str_arg(args, 0, f)?;
                let p = self.str_arg(args, 1, f)?;
                let flags = match args.get(2) {
                    Some(_) => self.str_arg(args, 2, f)?.into_owned(),
                    None => String::new(),
                };
                regex(&p, &flags)?.is_match(&a)
            }
            helper
                if helper.name().starts_with("invex:")
                    && helper.returns_boolean()
                    && helper != Func::Slack =>
            {
                let v = self.str_arg(args, 0, f)?;
                match helper {
                    Func::Gln => checks::gln(&v),
                    Func::Mod11No => checks::mod11_no(&v),
                    Func::Mod97Be => checks::mod97_be(&v),
                    Func::Iban => checks::iban(&v),
                    Func::IcoSk => checks::ico_sk(&v),
                    Func::IcDphSk => checks::ic_dph_sk(&v),
                    Func::DicSk => checks::dic_sk(&v),
                    Func::AbnAu => checks::abn_au(&v),
                    Func::SeOrgnr => checks::se_orgnr(&v),
                    Func::ItCodiceFiscale => checks::it_codice_fiscale(&v),
                    Func::ItPartitaIva => checks::it_partita_iva(&v),
                    Func::ItIpa => checks::it_ipa(&v),
                    Func::GrTin => checks::gr_tin(&v),
                    Func::PeppolGln => checks::peppol::gln(&v),
                    Func::PeppolMod11 => checks::peppol::mod11(&v),
                    Func::PeppolMod97 => checks::peppol::mod97_0208(&v),
                    Func::PeppolAbn => checks::peppol::abn(&v),
                    Func::PeppolGrTin => checks::peppol::tin_verification(&v),
                    Func::PeppolSeOrgnr => checks::peppol::check_se_orgnr(&v),
                    Func::PeppolItIpa => checks::peppol::check_codice_ipa(&v),
                    Func::PeppolItCf => checks::peppol::check_cf(&v),
                    Func::PeppolItCf16 => checks::peppol::check_cf16(&v),
                    Func::PeppolItPivaSeIt => checks::peppol::check_piva_se_it(&v),
                    other => {
                        return Err(err(
                            "XPST0017",
                            format!("{} is not implemented natively", other.name()),
                        ))
                    }
                }
            }
            _ => return Ok(None),
        }))
    }

    fn str_arg(&mut self, args: &[Ir], i: usize, f: &Focus) -> R<std::borrow::Cow<'d, str>> {
        self.string_opt(&args[i], f)
    }

    fn atomics(&mut self, ir: &Ir, f: &Focus) -> R<Vec<Atomic>> {
        let v = self.eval(ir, f)?;
        Ok(atomize(self.doc, &v))
    }

    fn num_arg(&mut self, ir: &Ir, f: &Focus) -> R<Option<Atomic>> {
        Ok(match self.atomic_opt(ir, f)? {
            None => None,
            Some(Atomic::Untyped(s)) => Some(Atomic::Untyped(s).cast(AtomicType::Double)?),
            Some(a) if a.is_numeric() => Some(a),
            Some(a) => {
                return Err(err(
                    "XPTY0004",
                    format!("expected a number, got {}", a.type_of().name()),
                ))
            }
        })
    }

    fn int_arg(&mut self, ir: &Ir, f: &Focus) -> R<i64> {
        match self.num_arg(ir, f)? {
            Some(Atomic::Integer(i)) => Ok(i),
            Some(a) => match a.cast(AtomicType::Integer)? {
                Atomic::Integer(i) => Ok(i),
                _ => Err(err("XPTY0004", "expected an integer")),
            },
            None => Err(err(
                "XPTY0004",
                "expected an integer, got an empty sequence",
            )),
        }
    }

    pub(crate) fn call(&mut self, func: Func, args: &[Ir], f: &Focus) -> R<Sequence> {
        if let Some(v) = self.call_bool(func, args, f)? {
            return Ok(b(v));
        }
        Ok(match func {
            Func::Count => int(self.eval(&args[0], f)?.len() as i64),
            Func::Sum => {
                let v = self.atomics(&args[0], f)?;
                if v.is_empty() {
                    return match args.get(1) {
                        Some(z) => self.eval(z, f),
                        None => Ok(int(0)),
                    };
                }
                vec![Item::Atomic(sum(&v)?)]
            }
            Func::Avg => {
                let v = self.atomics(&args[0], f)?;
                if v.is_empty() {
                    return Ok(Vec::new());
                }
                let total = sum(&v)?;
                vec![Item::Atomic(super::value::arithmetic(
                    ArithOp::Div,
                    &total,
                    &Atomic::Integer(v.len() as i64),
                )?)]
            }
            Func::Min | Func::Max => {
                let v = self.atomics(&args[0], f)?;
                let mut best: Option<Atomic> = None;
                for a in v {
                    let a = match a {
                        Atomic::Untyped(_) => a.cast(AtomicType::Double)?,
                        other => other,
                    };
                    if let Atomic::Double(x) = a {
                        if x.is_nan() {
                            return Ok(vec![Item::Atomic(a)]);
                        }
                    }
                    best = Some(match best {
                        None => a,
                        Some(cur) => {
                            let op = if func == Func::Min {
                                CompOp::Lt
                            } else {
                                CompOp::Gt
                            };
                            if value_compare(op, &a, &cur)? {
                                a
                            } else {
                                cur
                            }
                        }
                    });
                }
                best.map(|a| vec![Item::Atomic(a)]).unwrap_or_default()
            }
            Func::Round => {
                let Some(x) = self.num_arg(&args[0], f)? else {
                    return Ok(Vec::new());
                };
                let p = match args.get(1) {
                    Some(a) => self.int_arg(a, f)?,
                    None => 0,
                };
                vec![Item::Atomic(round_half_up(&x, p)?)]
            }
            Func::RoundHalfToEven => {
                let Some(x) = self.num_arg(&args[0], f)? else {
                    return Ok(Vec::new());
                };
                let p = match args.get(1) {
                    Some(a) => self.int_arg(a, f)?,
                    None => 0,
                };
                vec![Item::Atomic(round_half_even(&x, p))]
            }
            Func::Abs | Func::Floor | Func::Ceiling => {
                let Some(x) = self.num_arg(&args[0], f)? else {
                    return Ok(Vec::new());
                };
                vec![Item::Atomic(match (func, x) {
                    (Func::Abs, Atomic::Integer(i)) => Atomic::Integer(i.abs()),
                    (Func::Abs, Atomic::Decimal(d)) => Atomic::Decimal(d.abs()),
                    (Func::Abs, Atomic::Double(d)) => Atomic::Double(d.abs()),
                    (Func::Floor, Atomic::Decimal(d)) => Atomic::Decimal(d.floor()),
                    (Func::Floor, Atomic::Double(d)) => Atomic::Double(d.floor()),
                    (Func::Ceiling, Atomic::Decimal(d)) => Atomic::Decimal(d.ceil()),
                    (Func::Ceiling, Atomic::Double(d)) => Atomic::Double(d.ceil()),
                    (_, other) => other,
                })]
            }
            Func::Number => {
                let v = self.eval(&args[0], f)?;
                let n = match v.as_slice() {
                    [] => f64::NAN,
                    [one] => match atomize_item(self.doc, one).cast(AtomicType::Double) {
                        Ok(Atomic::Double(d)) => d,
                        _ => f64::NAN,
                    },
                    _ => {
                        return Err(err(
                            "XPTY0004",
                            format!("number() takes at most one item, got {}", v.len()),
                        ))
                    }
                };
                vec![Item::Atomic(Atomic::Double(n))]
            }
            Func::String => s(&self.str_arg(args, 0, f)?),
            Func::Data => {
                let v = self.eval(&args[0], f)?;
                atomize(self.doc, &v)
                    .into_iter()
                    .map(Item::Atomic)
                    .collect()
            }
            Func::NormalizeSpace => s(&normalize_space(&self.str_arg(args, 0, f)?)),
            Func::StringLength => int(self.str_arg(args, 0, f)?.chars().count() as i64),
            Func::UpperCase => s(&self.str_arg(args, 0, f)?.to_uppercase()),
            Func::LowerCase => s(&self.str_arg(args, 0, f)?.to_lowercase()),
            Func::Substring => {
                let v: Vec<char> = self.str_arg(args, 0, f)?.chars().collect();
                let Some(start) = self.num_arg(&args[1], f)? else {
                    return Ok(s(""));
                };
                let start = round_f64(start.as_f64().unwrap_or(f64::NAN));
                let len = match args.get(2) {
                    Some(a) => match self.num_arg(a, f)? {
                        Some(l) => round_f64(l.as_f64().unwrap_or(f64::NAN)),
                        None => return Ok(s("")),
                    },
                    None => f64::INFINITY,
                };
                // characters at positions p with start <= p < start + len (1-based)
                let out: String = v
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| {
                        let p = (*i + 1) as f64;
                        p >= start && p < start + len
                    })
                    .map(|(_, c)| *c)
                    .collect();
                s(&out)
            }
            Func::SubstringBefore | Func::SubstringAfter => {
                let a = self.str_arg(args, 0, f)?;
                let needle = self.str_arg(args, 1, f)?;
                let r = match a.find(&*needle) {
                    None => "",
                    Some(i) if func == Func::SubstringBefore => &a[..i],
                    Some(i) => &a[i + needle.len()..],
                };
                s(r)
            }
            Func::Concat => {
                let mut out = String::new();
                for i in 0..args.len() {
                    out.push_str(&self.str_arg(args, i, f)?);
                }
                s(&out)
            }
            Func::StringJoin => {
                let v = self.atomics(&args[0], f)?;
                let sep = match args.get(1) {
                    Some(_) => self.str_arg(args, 1, f)?.into_owned(),
                    None => String::new(),
                };
                s(&v.iter().map(|a| a.display()).collect::<Vec<_>>().join(&sep))
            }
            Func::Translate => {
                let a = self.str_arg(args, 0, f)?;
                let from: Vec<char> = self.str_arg(args, 1, f)?.chars().collect();
                let to: Vec<char> = self.str_arg(args, 2, f)?.chars().collect();
                let out: String = a
                    .chars()
                    .filter_map(|c| match from.iter().position(|x| *x == c) {
                        Some(i) => to.get(i).copied(),
                        None => Some(c),
                    })
                    .collect();
                s(&out)
            }
            Func::Replace => {
                let a = self.str_arg(args, 0, f)?;
                let p = self.str_arg(args, 1, f)?;
                let rep = self.str_arg(args, 2, f)?;
                let flags = match args.get(3) {
                    Some(_) => self.str_arg(args, 3, f)?.into_owned(),
                    None => String::new(),
                };
                let re = regex(&p, &flags)?;
                if re.is_match("") {
                    return Err(err("FORX0003", "the pattern matches the empty string"));
                }
                xsd_regex::check_replacement(&rep).map_err(|e| err(e.code(), e.to_string()))?;
                let rep = if flags.contains('q') {
                    rep.replace('$', "$$")
                } else {
                    xsd_regex::translate_replacement(&rep)
                };
                s(&re.replace_all(&a, rep.as_str()))
            }
            Func::Tokenize => {
                let a = self.str_arg(args, 0, f)?;
                if args.len() == 1 {
                    return Ok(xs_normalize_space(&a)
                        .split(' ')
                        .filter(|t| !t.is_empty())
                        .map(|t| Item::Atomic(Atomic::string(t)))
                        .collect());
                }
                let p = self.str_arg(args, 1, f)?;
                let flags = match args.get(2) {
                    Some(_) => self.str_arg(args, 2, f)?.into_owned(),
                    None => String::new(),
                };
                let re = regex(&p, &flags)?;
                if re.is_match("") {
                    return Err(err("FORX0003", "the pattern matches the empty string"));
                }
                if a.is_empty() {
                    return Ok(Vec::new());
                }
                re.split(&a)
                    .map(|t| Item::Atomic(Atomic::string(t)))
                    .collect()
            }
            Func::StringToCodepoints => self
                .str_arg(args, 0, f)?
                .chars()
                .map(|c| Item::Atomic(Atomic::Integer(c as i64)))
                .collect(),
            Func::CodepointsToString => {
                let v = self.atomics(&args[0], f)?;
                let mut out = String::new();
                for a in v {
                    let Atomic::Integer(i) = a.cast(AtomicType::Integer)? else {
                        return Err(err("XPTY0004", "expected integers"));
                    };
                    match u32::try_from(i).ok().and_then(char::from_u32) {
                        Some(c) => out.push(c),
                        None => {
                            return Err(err(
                                "FOCH0001",
                                format!("{i} is not a valid XML character"),
                            ))
                        }
                    }
                }
                s(&out)
            }
            Func::Compare => {
                let x = self.eval(&args[0], f)?;
                let y = self.eval(&args[1], f)?;
                if x.is_empty() || y.is_empty() {
                    return Ok(Vec::new());
                }
                let (a, c) = (self.str_arg(args, 0, f)?, self.str_arg(args, 1, f)?);
                int(match a.cmp(&c) {
                    std::cmp::Ordering::Less => -1,
                    std::cmp::Ordering::Equal => 0,
                    std::cmp::Ordering::Greater => 1,
                })
            }
            Func::Reverse => {
                let mut v = self.eval(&args[0], f)?;
                v.reverse();
                v
            }
            Func::Subsequence => {
                let v = self.eval(&args[0], f)?;
                let start = match self.num_arg(&args[1], f)? {
                    Some(a) => round_f64(a.as_f64().unwrap_or(f64::NAN)),
                    None => return Err(err("XPTY0004", "subsequence() start is empty")),
                };
                let len = match args.get(2) {
                    Some(a) => match self.num_arg(a, f)? {
                        Some(l) => round_f64(l.as_f64().unwrap_or(f64::NAN)),
                        None => return Err(err("XPTY0004", "subsequence() length is empty")),
                    },
                    None => f64::INFINITY,
                };
                v.into_iter()
                    .enumerate()
                    .filter(|(i, _)| {
                        let p = (*i + 1) as f64;
                        p >= start && p < start + len
                    })
                    .map(|(_, it)| it)
                    .collect()
            }
            Func::DistinctValues => {
                let v = self.atomics(&args[0], f)?;
                let mut out: Vec<Atomic> = Vec::new();
                for a in v {
                    // untypedAtomic values keep their type; they compare as strings.
                    if !out.iter().any(|o| atomic_equal(o, &a)) {
                        out.push(a);
                    }
                }
                out.into_iter().map(Item::Atomic).collect()
            }
            Func::IndexOf => {
                let v = self.atomics(&args[0], f)?;
                let Some(probe) = self.atomic_opt(&args[1], f)? else {
                    return Err(err("XPTY0004", "index-of() needs a search value"));
                };
                let probe = match probe {
                    Atomic::Untyped(x) => Atomic::String(x),
                    other => other,
                };
                v.into_iter()
                    .enumerate()
                    .filter(|(_, a)| {
                        let a = match a {
                            Atomic::Untyped(x) => Atomic::String(x.clone()),
                            other => other.clone(),
                        };
                        atomic_equal(&a, &probe)
                    })
                    .map(|(i, _)| Item::Atomic(Atomic::Integer(i as i64 + 1)))
                    .collect()
            }
            Func::InsertBefore => {
                let mut v = self.eval(&args[0], f)?;
                let pos = self.int_arg(&args[1], f)?;
                let ins = self.eval(&args[2], f)?;
                let at = (pos.max(1) as usize - 1).min(v.len());
                v.splice(at..at, ins);
                v
            }
            Func::Remove => {
                let mut v = self.eval(&args[0], f)?;
                let pos = self.int_arg(&args[1], f)?;
                if pos >= 1 && (pos as usize) <= v.len() {
                    v.remove(pos as usize - 1);
                }
                v
            }
            Func::Head => {
                let mut v = self.eval(&args[0], f)?;
                v.truncate(1);
                v
            }
            Func::Tail => {
                let v = self.eval(&args[0], f)?;
                v.into_iter().skip(1).collect()
            }
            Func::ExactlyOne | Func::ZeroOrOne | Func::OneOrMore => {
                let v = self.eval(&args[0], f)?;
                let ok = match func {
                    Func::ExactlyOne => v.len() == 1,
                    Func::ZeroOrOne => v.len() <= 1,
                    _ => !v.is_empty(),
                };
                if !ok {
                    let code = match func {
                        Func::ExactlyOne => "FORG0005",
                        Func::ZeroOrOne => "FORG0003",
                        _ => "FORG0004",
                    };
                    return Err(err(
                        code,
                        format!("{}() got {} items", func.name(), v.len()),
                    ));
                }
                v
            }
            Func::Last => int(f.size as i64),
            Func::Position => int(f.pos as i64),
            Func::LocalName | Func::Name | Func::NamespaceUri => {
                let v = self.eval(&args[0], f)?;
                let n = match v.as_slice() {
                    [] => return Ok(s("")),
                    [Item::Node(n)] => *n,
                    _ => return Err(err("XPTY0004", format!("{}() needs one node", func.name()))),
                };
                let Some(id) = self.doc.name(n) else {
                    return Ok(s(""));
                };
                let q = self.doc.qname(id);
                match func {
                    Func::LocalName => s(&q.local),
                    Func::NamespaceUri => s(&q.namespace),
                    _ if q.prefix.is_empty() => s(&q.local),
                    _ => s(&format!("{}:{}", q.prefix, q.local)),
                }
            }
            Func::Root => {
                let v = self.eval(&args[0], f)?;
                match v.as_slice() {
                    [] => Vec::new(),
                    [Item::Node(_)] => vec![Item::Node(self.doc.root())],
                    _ => return Err(err("XPTY0004", "root() needs one node")),
                }
            }
            Func::YearFromDate | Func::MonthFromDate | Func::DayFromDate => {
                let Some(a) = self.atomic_opt(&args[0], f)? else {
                    return Ok(Vec::new());
                };
                let d = match a {
                    Atomic::Date(d) => d,
                    Atomic::Untyped(_) => match a.cast(AtomicType::Date)? {
                        Atomic::Date(d) => d,
                        _ => return Err(err("XPTY0004", "expected xs:date")),
                    },
                    other => {
                        return Err(err(
                            "XPTY0004",
                            format!("expected xs:date, got {}", other.type_of().name()),
                        ))
                    }
                };
                use chrono::Datelike;
                int(match func {
                    Func::YearFromDate => d.date.year() as i64,
                    Func::MonthFromDate => d.date.month() as i64,
                    _ => d.date.day() as i64,
                })
            }
            Func::CurrentDate => {
                let today = chrono::Utc::now().date_naive();
                vec![Item::Atomic(Atomic::Date(super::lexical::XsDate {
                    date: today,
                    tz_minutes: Some(0),
                }))]
            }
            Func::Slack => {
                let mut d = [Decimal::ZERO; 3];
                for (i, slot) in d.iter_mut().enumerate() {
                    let Some(a) = self.atomic_opt(&args[i], f)? else {
                        return Err(err("XPTY0004", "slack() needs three numbers"));
                    };
                    *slot = match a.cast(AtomicType::Decimal)? {
                        Atomic::Decimal(x) => x,
                        _ => Decimal::ZERO,
                    };
                }
                b(checks::slack(d[0], d[1], d[2]))
            }
            Func::PeppolItPiva => {
                let v = self.str_arg(args, 0, f)?;
                match checks::peppol::check_piva(&v) {
                    Some(r) => int(r),
                    None => {
                        return Err(err(
                            "FORG0001",
                            format!("peppol-it-piva: '{v}' is not an integer"),
                        ))
                    }
                }
            }
            // Boolean functions are answered by call_bool above.
            other => {
                return Err(err(
                    "XPST0017",
                    format!("{}() has no sequence-valued form", other.name()),
                ))
            }
        })
    }
}

/// XPath rounding of a position argument (half up).
fn round_f64(x: f64) -> f64 {
    (x + 0.5).floor()
}

fn round_half_even(x: &Atomic, p: i64) -> Atomic {
    match x {
        Atomic::Decimal(d) if p >= 0 => Atomic::Decimal(d.round_dp_with_strategy(
            p.min(28) as u32,
            rust_decimal::RoundingStrategy::MidpointNearestEven,
        )),
        Atomic::Double(d) if p == 0 => {
            let r = d.round();
            Atomic::Double(if (d - d.trunc()).abs() == 0.5 {
                2.0 * (d / 2.0).round()
            } else {
                r
            })
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_has_a_unique_name() {
        let mut names: Vec<_> = Func::all().iter().map(|f| f.name()).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len());
        assert_eq!(Func::builtin("exists"), Some(Func::Exists));
        assert_eq!(Func::builtin("invex:gln"), None);
        assert_eq!(Func::helper("gln"), Some(Func::Gln));
    }

    #[test]
    fn normalize_space_collapses_xml_whitespace_only() {
        assert_eq!(xs_normalize_space("  a \t b\n"), "a b");
        assert_eq!(xs_normalize_space("a\u{a0}b"), "a\u{a0}b");
    }
}
