//! Paths ending in an expression step, as EN 16931 writes its tax-category tests:
//! `cac:Item/cac:ClassifiedTaxCategory/normalize-space(cbc:ID) = 'S'` and, as a predicate,
//! `cac:TaxScheme/(upper-case(normalize-space(cbc:ID)) = 'VAT')`. The general evaluator
//! builds a node sequence for every step and a value sequence for the last one; these walk
//! the node steps and evaluate the last step per node in place, with the same result and
//! the same errors.

use super::eval::{Focus, State};
use super::functions::Func;
use super::ir::{Axis, Ir, Step};
use super::lower::is_boolean;
use super::value::CompOp;
use super::EvalError;
use crate::document::NodeId;

type R<T> = Result<T, EvalError>;

impl State<'_> {
    /// `path/f(x) op 'literal'` with `f` a string function of the node (see
    /// [`string_of_node`]). `None`: not that shape, or steps the walker does not take.
    pub(crate) fn string_step_vs_literal(
        &mut self,
        a: &Ir,
        op: CompOp,
        lit: &str,
        f: &Focus,
    ) -> R<Option<bool>> {
        let Some((start, prefix, last)) = split_expr_step(a) else {
            return Ok(None);
        };
        if !string_of_node(last) {
            return Ok(None);
        }
        let Some(nodes) = self.step_nodes(start, prefix, f)? else {
            return Ok(None);
        };
        // Every node's value first, as the general evaluator computes the whole last step
        // before comparing: an error at a later node is raised even when an earlier one
        // matched. The value is a function of the node alone (no position), so the focus
        // position does not matter.
        let mut hit = false;
        for n in nodes {
            let s = self.string_opt(last, &Focus::node(n))?;
            hit |= op.holds(Some(s.as_ref().cmp(lit)));
        }
        Ok(Some(hit))
    }

    /// Effective boolean value of `path/(boolean)` when the steps select at most one node:
    /// none gives the empty sequence (false), one gives the boolean at that node, with the
    /// same focus (position 1 of 1). `None`: several nodes (an error the general evaluator
    /// reports), or not that shape.
    pub(crate) fn bool_step(&mut self, ir: &Ir, f: &Focus) -> R<Option<bool>> {
        let Some((start, prefix, last)) = split_expr_step(ir) else {
            return Ok(None);
        };
        if !is_boolean(last) {
            return Ok(None);
        }
        let Some(nodes) = self.step_nodes(start, prefix, f)? else {
            return Ok(None);
        };
        match nodes.as_slice() {
            [] => Ok(Some(false)),
            [n] => self.eval_bool(last, &Focus::node(*n)).map(Some),
            _ => Ok(None),
        }
    }

    /// The nodes of `start/prefix` in document order (walked; `None`: not walkable).
    fn step_nodes(&mut self, start: &Ir, prefix: &[Step], f: &Focus) -> R<Option<Vec<NodeId>>> {
        let mut nodes = Vec::new();
        let walked = self.walk_steps(start, prefix, f, true, &mut |n| {
            nodes.push(n);
            false
        })?;
        Ok(walked.map(|_| nodes))
    }
}

/// A path of node steps followed by one expression step: (start, node steps, last).
fn split_expr_step(ir: &Ir) -> Option<(&Ir, &[Step], &Ir)> {
    let Ir::Path(start, steps) = ir else {
        return None;
    };
    match steps.split_last()? {
        (Step::Expr(last), prefix) if !prefix.is_empty() => Some((start, prefix, last)),
        _ => None,
    }
}

/// A string function of the context node or of a child/attribute path without
/// predicates: one xs:string per node, independent of the focus position.
fn string_of_node(e: &Ir) -> bool {
    let Ir::Call(Func::NormalizeSpace | Func::UpperCase | Func::LowerCase | Func::String, args) = e
    else {
        return false;
    };
    match args.as_slice() {
        [Ir::ContextItem] => true,
        [Ir::Path(start, steps)] => {
            matches!(**start, Ir::ContextItem)
                && steps.iter().all(|s| {
                    matches!(s, Step::Axis { axis: Axis::Child | Axis::Attribute, preds, .. }
                        if preds.is_empty())
                })
        }
        [inner] => string_of_node(inner),
        _ => false,
    }
}
