//! Name-only predicates. Rule contexts such as
//! `/descendant::*[ends-with(local-name(), 'Amount') and ...]` test every element of the
//! document with a condition that reads nothing but the element's name. Its value is the
//! same for every node of one name, so the evaluator computes it once per document and
//! name (`Ir::NameMemo`) instead of once per node.

use super::functions::Func;
use super::ir::{next_memo_id, Ir};
use super::lower::is_boolean;

/// Wrap every maximal boolean subexpression that depends on the context node's name only.
pub(crate) fn memoise(mut ir: Ir) -> Ir {
    if is_boolean(&ir) && name_only(&ir) && reads_name(&ir) {
        return Ir::NameMemo(next_memo_id(), Box::new(ir));
    }
    for ch in ir.children_mut() {
        let taken = std::mem::replace(ch, Ir::Empty);
        *ch = memoise(taken);
    }
    ir
}

/// Built only from literals, the name functions of the context node and pure string and
/// boolean operations (so its value, or its error, is a function of the name).
fn name_only(ir: &Ir) -> bool {
    match ir {
        Ir::Literal(_) => true,
        Ir::Call(Func::LocalName | Func::Name | Func::NamespaceUri, args) => {
            matches!(args.as_slice(), [Ir::ContextItem])
        }
        Ir::Call(
            Func::Not
            | Func::Boolean
            | Func::True
            | Func::False
            | Func::Contains
            | Func::StartsWith
            | Func::EndsWith
            | Func::UpperCase
            | Func::LowerCase
            | Func::NormalizeSpace
            | Func::StringLength
            | Func::Substring
            | Func::SubstringBefore
            | Func::SubstringAfter
            | Func::Concat,
            args,
        ) => args.iter().all(name_only),
        Ir::Seq(items) => items.iter().all(name_only),
        Ir::And(a, b) | Ir::Or(a, b) | Ir::General(_, a, b) | Ir::Value(_, a, b) => {
            name_only(a) && name_only(b)
        }
        Ir::InCodeList(_, a) => name_only(a),
        _ => false,
    }
}

/// Whether the expression calls a name function at all (else it is constant).
fn reads_name(ir: &Ir) -> bool {
    match ir {
        Ir::Call(Func::LocalName | Func::Name | Func::NamespaceUri, _) => true,
        other => other.children().into_iter().any(reads_name),
    }
}
