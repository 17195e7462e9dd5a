//! Items, atomic values and the XPath 2.0 rules that relate them: atomization, casting,
//! numeric promotion, comparison and the effective boolean value.

use std::cmp::Ordering;
use std::sync::Arc;

use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use rust_decimal::Decimal;

use super::lexical::{self, XsDate};
use super::EvalError;
use crate::document::{Document, NodeId};

/// An XPath item.
#[derive(Clone, Debug)]
pub enum Item {
    Node(NodeId),
    Atomic(Atomic),
}

/// An atomic value. Node content atomizes to `Untyped` (no schema types here).
#[derive(Clone, Debug)]
pub enum Atomic {
    String(Arc<str>),
    Untyped(Arc<str>),
    Boolean(bool),
    Integer(i64),
    Decimal(Decimal),
    Double(f64),
    Date(XsDate),
}

pub type Sequence = Vec<Item>;

/// The atomic types invex knows, for casts and `castable as`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicType {
    String,
    Untyped,
    Boolean,
    Integer,
    Decimal,
    Double,
    Date,
}

impl AtomicType {
    pub fn name(self) -> &'static str {
        match self {
            AtomicType::String => "xs:string",
            AtomicType::Untyped => "xs:untypedAtomic",
            AtomicType::Boolean => "xs:boolean",
            AtomicType::Integer => "xs:integer",
            AtomicType::Decimal => "xs:decimal",
            AtomicType::Double => "xs:double",
            AtomicType::Date => "xs:date",
        }
    }
}

pub(crate) fn err(code: &str, message: impl Into<String>) -> EvalError {
    EvalError {
        code: code.to_string(),
        message: message.into(),
    }
}

impl Atomic {
    pub fn string(s: &str) -> Atomic {
        Atomic::String(Arc::from(s))
    }

    pub fn type_of(&self) -> AtomicType {
        match self {
            Atomic::String(_) => AtomicType::String,
            Atomic::Untyped(_) => AtomicType::Untyped,
            Atomic::Boolean(_) => AtomicType::Boolean,
            Atomic::Integer(_) => AtomicType::Integer,
            Atomic::Decimal(_) => AtomicType::Decimal,
            Atomic::Double(_) => AtomicType::Double,
            Atomic::Date(_) => AtomicType::Date,
        }
    }

    pub fn is_numeric(&self) -> bool {
        matches!(
            self,
            Atomic::Integer(_) | Atomic::Decimal(_) | Atomic::Double(_)
        )
    }

    pub fn is_stringlike(&self) -> bool {
        matches!(self, Atomic::String(_) | Atomic::Untyped(_))
    }

    /// The value cast to xs:string.
    pub fn to_xs_string(&self) -> Arc<str> {
        match self {
            Atomic::String(s) | Atomic::Untyped(s) => s.clone(),
            other => Arc::from(other.display().as_str()),
        }
    }

    /// Canonical lexical form.
    pub fn display(&self) -> String {
        match self {
            // `str::to_owned`, not `to_string`: `Arc<str>` has no `ToString` fast path and
            // would go through the formatting machinery (hot: string values of literals).
            Atomic::String(s) | Atomic::Untyped(s) => (**s).to_owned(),
            Atomic::Boolean(b) => b.to_string(),
            Atomic::Integer(i) => i.to_string(),
            Atomic::Decimal(d) => lexical::format_decimal(*d),
            Atomic::Double(f) => lexical::format_double(*f),
            Atomic::Date(d) => d.format(),
        }
    }

    /// Cast to the target type with XPath 2.0 casting rules.
    pub fn cast(&self, to: AtomicType) -> Result<Atomic, EvalError> {
        let invalid = |v: &str| err("FORG0001", format!("cannot cast '{v}' to {}", to.name()));
        Ok(match (self, to) {
            (_, AtomicType::String) => Atomic::String(self.to_xs_string()),
            (_, AtomicType::Untyped) => Atomic::Untyped(self.to_xs_string()),
            (Atomic::String(s) | Atomic::Untyped(s), t) => match t {
                AtomicType::Boolean => {
                    Atomic::Boolean(lexical::parse_boolean(s).ok_or_else(|| invalid(s))?)
                }
                AtomicType::Integer => {
                    Atomic::Integer(lexical::parse_integer(s).ok_or_else(|| invalid(s))?)
                }
                AtomicType::Decimal => {
                    Atomic::Decimal(lexical::parse_decimal(s).ok_or_else(|| invalid(s))?)
                }
                AtomicType::Double => {
                    Atomic::Double(lexical::parse_double(s).ok_or_else(|| invalid(s))?)
                }
                AtomicType::Date => Atomic::Date(lexical::parse_date(s).ok_or_else(|| invalid(s))?),
                AtomicType::String | AtomicType::Untyped => unreachable_cast(),
            },
            (Atomic::Boolean(b), AtomicType::Boolean) => Atomic::Boolean(*b),
            (Atomic::Boolean(b), AtomicType::Integer) => Atomic::Integer(*b as i64),
            (Atomic::Boolean(b), AtomicType::Decimal) => Atomic::Decimal(Decimal::from(*b as i64)),
            (Atomic::Boolean(b), AtomicType::Double) => Atomic::Double(*b as i64 as f64),
            (n, AtomicType::Boolean) if n.is_numeric() => Atomic::Boolean(match n {
                Atomic::Integer(i) => *i != 0,
                Atomic::Decimal(d) => !d.is_zero(),
                Atomic::Double(f) => !(*f == 0.0 || f.is_nan()),
                _ => false,
            }),
            (Atomic::Integer(i), AtomicType::Integer) => Atomic::Integer(*i),
            (Atomic::Integer(i), AtomicType::Decimal) => Atomic::Decimal(Decimal::from(*i)),
            (Atomic::Integer(i), AtomicType::Double) => Atomic::Double(*i as f64),
            (Atomic::Decimal(d), AtomicType::Integer) => Atomic::Integer(
                d.trunc()
                    .to_i64()
                    .ok_or_else(|| err("FOCA0003", "decimal too large for xs:integer"))?,
            ),
            (Atomic::Decimal(d), AtomicType::Decimal) => Atomic::Decimal(*d),
            (Atomic::Decimal(d), AtomicType::Double) => Atomic::Double(decimal_to_f64(*d)),
            (Atomic::Double(f), AtomicType::Double) => Atomic::Double(*f),
            (Atomic::Double(f), AtomicType::Decimal) => Atomic::Decimal(double_to_decimal(*f)?),
            (Atomic::Double(f), AtomicType::Integer) => {
                if !f.is_finite() {
                    return Err(err("FOCA0002", "cannot cast NaN or INF to xs:integer"));
                }
                let t = f.trunc();
                if t.abs() >= 9.2e18 {
                    return Err(err("FOCA0003", "double too large for xs:integer"));
                }
                Atomic::Integer(t as i64)
            }
            (Atomic::Date(d), AtomicType::Date) => Atomic::Date(*d),
            (from, to) => {
                return Err(err(
                    "XPTY0004",
                    format!("cannot cast {} to {}", from.type_of().name(), to.name()),
                ))
            }
        })
    }

    /// Numeric value as f64 (for promotion to xs:double).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Atomic::Integer(i) => Some(*i as f64),
            Atomic::Decimal(d) => Some(decimal_to_f64(*d)),
            Atomic::Double(f) => Some(*f),
            _ => None,
        }
    }
}

fn unreachable_cast() -> Atomic {
    // String and untyped targets are handled by the first match arm.
    Atomic::Boolean(false)
}

pub fn decimal_to_f64(d: Decimal) -> f64 {
    // Via the canonical string: exact round-to-nearest, as a cast from the lexical form.
    lexical::format_decimal(d)
        .parse::<f64>()
        .unwrap_or(f64::NAN)
}

pub fn double_to_decimal(f: f64) -> Result<Decimal, EvalError> {
    if !f.is_finite() {
        return Err(err("FOCA0002", "cannot cast NaN or INF to xs:decimal"));
    }
    // The double's exact binary value (to 28 significant digits), as Saxon converts, not
    // the shortest decimal that prints the same: xs:decimal(xs:double('0.1')) != 0.1.
    Decimal::from_f64_retain(f).ok_or_else(|| err("FOCA0001", "double out of range for xs:decimal"))
}

/// Atomize one item.
pub fn atomize_item(doc: &Document, item: &Item) -> Atomic {
    match item {
        Item::Atomic(a) => a.clone(),
        Item::Node(n) => Atomic::Untyped(Arc::from(doc.string_value(*n).as_ref())),
    }
}

/// Atomize a sequence.
pub fn atomize(doc: &Document, seq: &[Item]) -> Vec<Atomic> {
    seq.iter().map(|i| atomize_item(doc, i)).collect()
}

/// Effective boolean value (XPath 2.0, 2.4.3).
pub fn effective_boolean(seq: &[Item]) -> Result<bool, EvalError> {
    match seq {
        [] => Ok(false),
        [Item::Node(_), ..] => Ok(true),
        [Item::Atomic(a)] => Ok(match a {
            Atomic::Boolean(b) => *b,
            Atomic::String(s) | Atomic::Untyped(s) => !s.is_empty(),
            Atomic::Integer(i) => *i != 0,
            Atomic::Decimal(d) => !d.is_zero(),
            Atomic::Double(f) => !(*f == 0.0 || f.is_nan()),
            Atomic::Date(_) => {
                return Err(err(
                    "FORG0006",
                    "effective boolean value not defined for xs:date",
                ))
            }
        }),
        _ => Err(err(
            "FORG0006",
            "effective boolean value not defined for a sequence of two or more atomic values",
        )),
    }
}

/// Numeric kinds in promotion order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum NumKind {
    Integer,
    Decimal,
    Double,
}

fn num_kind(a: &Atomic) -> Option<NumKind> {
    match a {
        Atomic::Integer(_) => Some(NumKind::Integer),
        Atomic::Decimal(_) => Some(NumKind::Decimal),
        Atomic::Double(_) => Some(NumKind::Double),
        _ => None,
    }
}

fn as_decimal(a: &Atomic) -> Decimal {
    match a {
        Atomic::Integer(i) => Decimal::from(*i),
        Atomic::Decimal(d) => *d,
        _ => Decimal::ZERO,
    }
}

/// Compare two numerics after promotion; None when unordered (NaN).
pub fn compare_numeric(a: &Atomic, b: &Atomic) -> Option<Ordering> {
    let (ka, kb) = (num_kind(a)?, num_kind(b)?);
    match ka.max(kb) {
        NumKind::Integer => match (a, b) {
            (Atomic::Integer(x), Atomic::Integer(y)) => Some(x.cmp(y)),
            _ => None,
        },
        NumKind::Decimal => Some(as_decimal(a).cmp(&as_decimal(b))),
        NumKind::Double => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompOp {
    /// The operator with its operands swapped (`a < b` ⇔ `b > a`).
    pub fn flip(self) -> CompOp {
        match self {
            CompOp::Lt => CompOp::Gt,
            CompOp::Le => CompOp::Ge,
            CompOp::Gt => CompOp::Lt,
            CompOp::Ge => CompOp::Le,
            other => other,
        }
    }

    pub fn holds(self, ord: Option<Ordering>) -> bool {
        match ord {
            None => self == CompOp::Ne,
            Some(o) => match self {
                CompOp::Eq => o == Ordering::Equal,
                CompOp::Ne => o != Ordering::Equal,
                CompOp::Lt => o == Ordering::Less,
                CompOp::Le => o != Ordering::Greater,
                CompOp::Gt => o == Ordering::Greater,
                CompOp::Ge => o != Ordering::Less,
            },
        }
    }
}

/// Value comparison of two atomics (untyped already cast as the caller wants).
pub fn value_compare(op: CompOp, a: &Atomic, b: &Atomic) -> Result<bool, EvalError> {
    let ord = match (a, b) {
        (x, y) if x.is_numeric() && y.is_numeric() => compare_numeric(x, y),
        (Atomic::String(x) | Atomic::Untyped(x), Atomic::String(y) | Atomic::Untyped(y)) => {
            Some(x.as_ref().cmp(y.as_ref()))
        }
        (Atomic::Boolean(x), Atomic::Boolean(y)) => Some(x.cmp(y)),
        (Atomic::Date(x), Atomic::Date(y)) => Some(x.compare(y)),
        (x, y) => {
            return Err(err(
                "XPTY0004",
                format!(
                    "cannot compare {} with {}",
                    x.type_of().name(),
                    y.type_of().name()
                ),
            ))
        }
    };
    Ok(op.holds(ord))
}

/// One pair of a general comparison (XPath 2.0, 3.5.2): untyped operands take the other
/// operand's type (numeric → xs:double, untyped/string → xs:string).
pub fn general_pair(op: CompOp, a: &Atomic, b: &Atomic) -> Result<bool, EvalError> {
    match (a, b) {
        (Atomic::Untyped(_), Atomic::Untyped(_)) => value_compare(op, a, b),
        (Atomic::Untyped(s), other) if other.is_numeric() => {
            let x = Atomic::Untyped(s.clone()).cast(AtomicType::Double)?;
            value_compare(op, &x, other)
        }
        (other, Atomic::Untyped(s)) if other.is_numeric() => {
            let y = Atomic::Untyped(s.clone()).cast(AtomicType::Double)?;
            value_compare(op, other, &y)
        }
        (Atomic::Untyped(s), other) => {
            let x = Atomic::Untyped(s.clone()).cast(other.type_of())?;
            value_compare(op, &x, other)
        }
        (other, Atomic::Untyped(s)) => {
            let y = Atomic::Untyped(s.clone()).cast(other.type_of())?;
            value_compare(op, other, &y)
        }
        _ => value_compare(op, a, b),
    }
}

/// Arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Mod,
}

/// Arithmetic on two atomics with XPath 2.0 promotion; untyped operands become xs:double.
pub fn arithmetic(op: ArithOp, a: &Atomic, b: &Atomic) -> Result<Atomic, EvalError> {
    let promote = |x: &Atomic| -> Result<Atomic, EvalError> {
        match x {
            Atomic::Untyped(_) => x.cast(AtomicType::Double),
            n if n.is_numeric() => Ok(n.clone()),
            other => Err(err(
                "XPTY0004",
                format!("arithmetic on {} is not defined", other.type_of().name()),
            )),
        }
    };
    let (a, b) = (promote(a)?, promote(b)?);
    let kind = num_kind(&a)
        .unwrap_or(NumKind::Double)
        .max(num_kind(&b).unwrap_or(NumKind::Double));
    let overflow = || err("FOAR0002", "numeric overflow");
    let div_zero = || err("FOAR0001", "division by zero");
    match kind {
        NumKind::Integer => {
            let (Atomic::Integer(x), Atomic::Integer(y)) = (&a, &b) else {
                return Err(overflow());
            };
            let (x, y) = (*x, *y);
            Ok(match op {
                ArithOp::Add => Atomic::Integer(x.checked_add(y).ok_or_else(overflow)?),
                ArithOp::Sub => Atomic::Integer(x.checked_sub(y).ok_or_else(overflow)?),
                ArithOp::Mul => Atomic::Integer(x.checked_mul(y).ok_or_else(overflow)?),
                ArithOp::Div => {
                    if y == 0 {
                        return Err(div_zero());
                    }
                    Atomic::Decimal(
                        Decimal::from(x)
                            .checked_div(Decimal::from(y))
                            .ok_or_else(overflow)?,
                    )
                }
                ArithOp::IntDiv => {
                    if y == 0 {
                        return Err(div_zero());
                    }
                    Atomic::Integer(x.checked_div(y).ok_or_else(overflow)?)
                }
                ArithOp::Mod => {
                    if y == 0 {
                        return Err(div_zero());
                    }
                    Atomic::Integer(x.checked_rem(y).ok_or_else(overflow)?)
                }
            })
        }
        NumKind::Decimal => {
            let (x, y) = (as_decimal(&a), as_decimal(&b));
            Ok(match op {
                ArithOp::Add => Atomic::Decimal(x.checked_add(y).ok_or_else(overflow)?),
                ArithOp::Sub => Atomic::Decimal(x.checked_sub(y).ok_or_else(overflow)?),
                ArithOp::Mul => Atomic::Decimal(x.checked_mul(y).ok_or_else(overflow)?),
                ArithOp::Div => {
                    if y.is_zero() {
                        return Err(div_zero());
                    }
                    Atomic::Decimal(x.checked_div(y).ok_or_else(overflow)?)
                }
                ArithOp::IntDiv => {
                    if y.is_zero() {
                        return Err(div_zero());
                    }
                    let q = x.checked_div(y).ok_or_else(overflow)?.trunc();
                    Atomic::Integer(q.to_i64().ok_or_else(overflow)?)
                }
                ArithOp::Mod => {
                    if y.is_zero() {
                        return Err(div_zero());
                    }
                    Atomic::Decimal(x.checked_rem(y).ok_or_else(overflow)?)
                }
            })
        }
        NumKind::Double => {
            let (x, y) = (
                a.as_f64().unwrap_or(f64::NAN),
                b.as_f64().unwrap_or(f64::NAN),
            );
            Ok(match op {
                ArithOp::Add => Atomic::Double(x + y),
                ArithOp::Sub => Atomic::Double(x - y),
                ArithOp::Mul => Atomic::Double(x * y),
                ArithOp::Div => Atomic::Double(x / y),
                ArithOp::Mod => Atomic::Double(x % y),
                ArithOp::IntDiv => {
                    if y == 0.0 {
                        return Err(div_zero());
                    }
                    if x.is_nan() || y.is_nan() || x.is_infinite() {
                        return Err(err("FOAR0002", "idiv of NaN or INF"));
                    }
                    let q = (x / y).trunc();
                    if q.abs() >= 9.2e18 {
                        return Err(overflow());
                    }
                    Atomic::Integer(q as i64)
                }
            })
        }
    }
}

/// Negate a numeric (untyped → double).
pub fn negate(a: &Atomic) -> Result<Atomic, EvalError> {
    Ok(match a {
        Atomic::Integer(i) => Atomic::Integer(
            i.checked_neg()
                .ok_or_else(|| err("FOAR0002", "numeric overflow"))?,
        ),
        Atomic::Decimal(d) => Atomic::Decimal(-*d),
        Atomic::Double(f) => Atomic::Double(-*f),
        Atomic::Untyped(_) => negate(&a.cast(AtomicType::Double)?)?,
        other => {
            return Err(err(
                "XPTY0004",
                format!("unary minus on {}", other.type_of().name()),
            ))
        }
    })
}

/// Equality used by distinct-values / index-of (`eq` semantics, incomparable = distinct,
/// NaN equal to NaN).
pub fn atomic_equal(a: &Atomic, b: &Atomic) -> bool {
    match (a, b) {
        (Atomic::Double(x), Atomic::Double(y)) if x.is_nan() && y.is_nan() => true,
        (x, y) if x.is_numeric() && y.is_numeric() => {
            compare_numeric(x, y) == Some(Ordering::Equal)
        }
        (Atomic::String(x) | Atomic::Untyped(x), Atomic::String(y) | Atomic::Untyped(y)) => x == y,
        (Atomic::Boolean(x), Atomic::Boolean(y)) => x == y,
        (Atomic::Date(x), Atomic::Date(y)) => x.compare(y) == Ordering::Equal,
        _ => false,
    }
}

/// Round half toward positive infinity (fn:round) at `precision` decimal places.
pub fn round_half_up(a: &Atomic, precision: i64) -> Result<Atomic, EvalError> {
    Ok(match a {
        Atomic::Integer(i) => {
            if precision >= 0 {
                Atomic::Integer(*i)
            } else {
                let d = round_decimal(Decimal::from(*i), precision);
                Atomic::Integer(d.to_i64().unwrap_or(*i))
            }
        }
        Atomic::Decimal(d) => Atomic::Decimal(round_decimal(*d, precision)),
        Atomic::Double(f) => {
            if !f.is_finite() || *f == 0.0 {
                Atomic::Double(*f)
            } else if precision == 0 {
                // Nearest integer, ties toward +infinity (floor(x + 0.5) misrounds
                // 0.49999999999999994, so test the tie exactly instead).
                let r = if f - f.floor() == 0.5 {
                    f.ceil()
                } else {
                    f.round()
                };
                Atomic::Double(if r == 0.0 && *f < 0.0 { -0.0 } else { r })
            } else {
                // Through decimal for exactness where representable, as processors do.
                match Decimal::from_f64(*f) {
                    Some(d) => Atomic::Double(decimal_to_f64(round_decimal(d, precision))),
                    None => Atomic::Double(*f),
                }
            }
        }
        Atomic::Untyped(_) => round_half_up(&a.cast(AtomicType::Double)?, precision)?,
        other => {
            return Err(err(
                "XPTY0004",
                format!("round() on {}", other.type_of().name()),
            ))
        }
    })
}

fn round_decimal(d: Decimal, precision: i64) -> Decimal {
    if precision >= 0 {
        let p = precision.min(28) as u32;
        // Half toward +infinity: away from zero above zero, toward zero below it.
        let strategy = if d.is_sign_negative() {
            rust_decimal::RoundingStrategy::MidpointTowardZero
        } else {
            rust_decimal::RoundingStrategy::MidpointAwayFromZero
        };
        d.round_dp_with_strategy(p, strategy)
    } else {
        let factor = Decimal::from_i128_with_scale(10i128.pow((-precision).min(27) as u32), 0);
        round_decimal(d / factor, 0) * factor
    }
}

/// Sum of numerics, with XPath promotion; untyped values become xs:double.
pub fn sum(values: &[Atomic]) -> Result<Atomic, EvalError> {
    let mut acc = Atomic::Integer(0);
    for v in values {
        acc = arithmetic(ArithOp::Add, &acc, v)?;
    }
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Atomic {
        Atomic::Decimal(s.parse().unwrap())
    }

    #[test]
    fn round_is_half_up_toward_positive_infinity() {
        assert_eq!(round_half_up(&dec("2.5"), 0).unwrap().display(), "3");
        assert_eq!(round_half_up(&dec("-2.5"), 0).unwrap().display(), "-2");
        assert_eq!(round_half_up(&dec("-2.51"), 0).unwrap().display(), "-3");
        assert_eq!(round_half_up(&dec("1.005"), 2).unwrap().display(), "1.01");
        assert_eq!(round_half_up(&dec("-1.005"), 2).unwrap().display(), "-1");
        assert_eq!(
            round_half_up(&Atomic::Double(2.5), 0).unwrap().display(),
            "3"
        );
        assert_eq!(
            round_half_up(&Atomic::Double(-2.5), 0).unwrap().display(),
            "-2"
        );
        assert_eq!(
            round_half_up(&Atomic::Double(0.49999999999999994), 0)
                .unwrap()
                .display(),
            "0"
        );
    }

    #[test]
    fn integer_division_yields_decimal() {
        let r = arithmetic(ArithOp::Div, &Atomic::Integer(1), &Atomic::Integer(4)).unwrap();
        assert_eq!(r.display(), "0.25");
        assert!(matches!(r, Atomic::Decimal(_)));
        let e = arithmetic(ArithOp::Div, &Atomic::Integer(1), &Atomic::Integer(0)).unwrap_err();
        assert_eq!(e.code, "FOAR0001");
    }

    #[test]
    fn untyped_arithmetic_is_double() {
        let r = arithmetic(ArithOp::Add, &Atomic::Untyped("0.1".into()), &dec("0.2")).unwrap();
        assert!(matches!(r, Atomic::Double(_)));
        assert_eq!(r.display(), "0.30000000000000004");
    }

    #[test]
    fn general_comparison_casts_untyped() {
        let u = Atomic::Untyped("10".into());
        assert!(general_pair(CompOp::Gt, &u, &Atomic::Integer(9)).unwrap());
        // untyped vs untyped compares as strings
        assert!(general_pair(CompOp::Lt, &u, &Atomic::Untyped("9".into())).unwrap());
        assert_eq!(
            general_pair(
                CompOp::Eq,
                &Atomic::Untyped("x".into()),
                &Atomic::Integer(1)
            )
            .unwrap_err()
            .code,
            "FORG0001"
        );
    }

    #[test]
    fn ebv_rules() {
        assert!(!effective_boolean(&[]).unwrap());
        assert!(effective_boolean(&[Item::Atomic(Atomic::string("a"))]).unwrap());
        assert!(!effective_boolean(&[Item::Atomic(Atomic::Double(f64::NAN))]).unwrap());
        assert!(effective_boolean(&[
            Item::Atomic(Atomic::Integer(1)),
            Item::Atomic(Atomic::Integer(1))
        ])
        .is_err());
    }
}
