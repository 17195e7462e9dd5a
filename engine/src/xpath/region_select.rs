//! Rule contexts selected one region of a document at a time (see `rules::REGION_NODES`).
//!
//! A context such as `cac:InvoiceLine/cac:Item/cac:ClassifiedTaxCategory[...]` is the path
//! `//cac:InvoiceLine/cac:Item/cac:ClassifiedTaxCategory[...]` from the root. What it
//! selects below one `cac:InvoiceLine` depends on that element's subtree alone, so the
//! nodes below the `cac:InvoiceLine` elements of a region can be selected just before the
//! region's rules run, while the region is in the CPU cache, instead of in a separate pass
//! over the whole document (on a large invoice, every such pass waits on memory line by
//! line).

use std::ops::Range;

use super::eval::State;
use super::ir::{Axis, Ir, KindTest, NameKey, NodeTest, Pred, SetOp, Step};
use super::EvalError;
use crate::document::{NameId, NodeId};

type R<T> = Result<T, EvalError>;

/// A rule context prepared for selection by region: the alternatives of the context whose
/// root guard holds and whose names all occur in the document.
pub struct RegionSelector<'e> {
    branches: Vec<Branch<'e>>,
}

/// One alternative `/self::node()[guard]//name[preds]/rest` (guard optional; `rest`:
/// child and attribute steps with non-positional predicates).
struct Branch<'e> {
    name: NameId,
    attribute: bool,
    preds: &'e [Pred],
    rest: &'e [Step],
}

/// The alternatives of `ir` before name resolution, or None when some alternative has
/// another shape.
struct Shape<'e> {
    guard: &'e [Pred],
    name: NameKey,
    attribute: bool,
    preds: &'e [Pred],
    rest: &'e [Step],
}

fn non_positional(preds: &[Pred]) -> bool {
    preds.iter().all(|p| matches!(p, Pred::Bool(_)))
}

fn shapes<'e>(ir: &'e Ir, out: &mut Vec<Shape<'e>>) -> bool {
    match ir {
        Ir::Cached(_, e) => shapes(e, out),
        Ir::Set(SetOp::Union, a, b) => shapes(a, out) && shapes(b, out),
        Ir::Path(start, steps) if matches!(**start, Ir::Root) => {
            let (guard, steps) = match steps.split_first() {
                Some((
                    Step::Axis {
                        axis: Axis::Self_,
                        test: NodeTest::Kind(KindTest::AnyNode),
                        preds,
                    },
                    rest,
                )) => (preds.as_slice(), rest),
                _ => (&[][..], steps.as_slice()),
            };
            let Some((
                Step::DescendantNamed {
                    name,
                    attribute,
                    preds,
                },
                rest,
            )) = steps.split_first()
            else {
                return false;
            };
            let rest_ok = rest.iter().all(|s| {
                matches!(s, Step::Axis { axis: Axis::Child | Axis::Attribute, preds, .. }
                    if non_positional(preds))
            });
            if !(rest_ok && non_positional(guard) && non_positional(preds)) {
                return false;
            }
            out.push(Shape {
                guard,
                name: *name,
                attribute: *attribute,
                preds,
                rest,
            });
            true
        }
        _ => false,
    }
}

impl RegionSelector<'_> {
    /// A context that selects nothing in this document.
    pub fn empty() -> Self {
        RegionSelector {
            branches: Vec::new(),
        }
    }
}

impl State<'_> {
    /// Prepare `ir` (a rule context, evaluated with lenient predicates) for selection by
    /// region: root guards are evaluated and names resolved here, once per document.
    /// `Ok(None)`: not of the shape this handles.
    pub(crate) fn region_selector<'e>(&mut self, ir: &'e Ir) -> R<Option<RegionSelector<'e>>> {
        let mut found = Vec::new();
        if !shapes(ir, &mut found) {
            return Ok(None);
        }
        let root = self.doc.root();
        let mut branches = Vec::with_capacity(found.len());
        for s in found {
            let Some(name) = self.name(s.name) else {
                continue;
            };
            if !self.names_present(s.rest) || !self.preds_hold(root, s.guard)? {
                continue;
            }
            branches.push(Branch {
                name,
                attribute: s.attribute,
                preds: s.preds,
                rest: s.rest,
            });
        }
        Ok(Some(RegionSelector { branches }))
    }

    /// The nodes `selector` selects below its named descendants with ids in `range`, in
    /// document order. Over consecutive ranges this yields the whole selection; a node
    /// lies outside its range when its named ancestor is near the range's end.
    pub(crate) fn select_in_range(
        &mut self,
        selector: &RegionSelector<'_>,
        range: Range<u32>,
        out: &mut Vec<NodeId>,
    ) -> R<()> {
        out.clear();
        let doc = self.doc;
        for b in &selector.branches {
            let all = if b.attribute {
                doc.attributes_named(b.name)
            } else {
                doc.elements_named(b.name)
            };
            let from = all.partition_point(|m| m.0 < range.start);
            for &c in all[from..].iter().take_while(|m| m.0 < range.end) {
                if self.preds_hold(c, b.preds)? {
                    self.walk(c, b.rest, &mut |m| {
                        out.push(m);
                        false
                    })?;
                }
            }
        }
        // Several alternatives, or a named element nested in another of its name, can
        // yield nodes out of document order or twice.
        if !out.windows(2).all(|w| w[0] < w[1]) {
            out.sort_unstable();
            out.dedup();
        }
        Ok(())
    }
}
