//! Absent-name guards. Most rules test for elements a given invoice does not contain
//! (`not(cac:X/cbc:Y)`: the 678 UBL-CR asserts and many more): a path from the context
//! node or the root that names an element or attribute absent from the document selects
//! nothing, and the evaluator already answers it without walking. A guard, computed at
//! compile time, gets the same answer for a whole test or rule context from a few name
//! look-ups, before any evaluation.
//!
//! A guard only covers shapes whose value is then fixed and cannot raise an error, so that
//! skipping the evaluation changes nothing.

use super::functions::Func;
use super::ir::{Ir, NameKey, NodeTest, SetOp, Step};
use super::value::{general_pair, value_compare, Atomic};

/// Holds when, for every alternative, at least one of its names is absent from the
/// document.
#[derive(Clone, Debug)]
pub(crate) struct Guard {
    alternatives: Vec<Box<[NameKey]>>,
}

impl Guard {
    /// Whether the guard holds; `absent` tells whether the document lacks a name.
    pub fn holds(&self, mut absent: impl FnMut(NameKey) -> bool) -> bool {
        self.alternatives
            .iter()
            .all(|alt| alt.iter().any(|k| absent(*k)))
    }

    /// Both guards hold.
    fn and(mut self, other: Guard) -> Guard {
        self.alternatives.extend(other.alternatives);
        self
    }
}

/// When `guard` holds, the expression's effective boolean value is `value`.
#[derive(Clone, Debug)]
pub(crate) struct BoolGuard {
    pub guard: Guard,
    pub value: bool,
}

/// A guard under which `ir`, evaluated with a node as the context item, is the empty
/// sequence (and raises no error).
pub(crate) fn empty_guard(ir: &Ir) -> Option<Guard> {
    match ir {
        // As in the evaluator's path short cut: only from the context node or the root.
        Ir::Path(start, steps) if matches!(**start, Ir::ContextItem | Ir::Root) => {
            let names: Box<[NameKey]> = steps.iter().filter_map(step_name).collect();
            (!names.is_empty()).then(|| Guard {
                alternatives: vec![names],
            })
        }
        Ir::Set(SetOp::Union, a, b) => Some(empty_guard(a)?.and(empty_guard(b)?)),
        // Predicates of an empty sequence are never evaluated.
        Ir::Filter(base, _) => empty_guard(base),
        Ir::Cached(_, e) => empty_guard(e),
        _ => None,
    }
}

/// The exact name a step tests for: absent from the document, the step selects nothing.
fn step_name(s: &Step) -> Option<NameKey> {
    match s {
        Step::Axis {
            test: NodeTest::Name(k) | NodeTest::KindNamed(_, k),
            ..
        } => Some(*k),
        Step::DescendantNamed { name, .. } => Some(*name),
        _ => None,
    }
}

/// A guard fixing the effective boolean value of `ir` (evaluated with a node as context).
pub(crate) fn bool_guard(ir: &Ir) -> Option<BoolGuard> {
    let empty = |e: &Ir, value: bool| empty_guard(e).map(|guard| BoolGuard { guard, value });
    match ir {
        Ir::Call(Func::Not | Func::Empty, args) => empty(args.first()?, true),
        Ir::Call(Func::Exists | Func::Boolean, args) => empty(args.first()?, false),
        Ir::Path(..) | Ir::Set(SetOp::Union, ..) | Ir::Filter(..) => empty(ir, false),
        // `count(path) <= 1`: the count is 0.
        Ir::General(op, a, b) | Ir::Value(op, a, b) => {
            let (Ir::Call(Func::Count, args), Ir::Literal(lit)) = (&**a, &**b) else {
                return None;
            };
            let zero = Atomic::Integer(0);
            let value = match ir {
                Ir::General(..) => general_pair(*op, &zero, lit),
                _ => value_compare(*op, &zero, lit),
            }
            .ok()?;
            empty(args.first()?, value)
        }
        // `a or b` evaluates `a` first and stops when it is true.
        Ir::Or(a, b) => {
            let ga = bool_guard(a)?;
            if ga.value {
                return Some(ga);
            }
            let gb = bool_guard(b)?;
            Some(BoolGuard {
                guard: ga.guard.and(gb.guard),
                value: gb.value,
            })
        }
        Ir::And(a, b) => {
            let ga = bool_guard(a)?;
            if !ga.value {
                return Some(ga);
            }
            let gb = bool_guard(b)?;
            Some(BoolGuard {
                guard: ga.guard.and(gb.guard),
                value: gb.value,
            })
        }
        Ir::Cached(_, e) => bool_guard(e),
        _ => None,
    }
}
