//! Lowering: the xee-xpath-ast syntax tree → invex IR, with compile-time optimisation
//! (`//name` through the name index, code lists as set lookups, context-free
//! subexpressions hoisted into per-document caches).

use std::collections::BTreeSet;
use std::sync::Arc;

use xee_xpath_ast::ast;
use xot::xmlname::NameStrInfo;

use super::functions::Func;
use super::ir::{
    next_cache_id, Axis, CodeList, Ir, ItemTypeIr, KindTest, NameKey, NodeCmp, NodeTest,
    Occurrence, Pred, SetOp, Step,
};
use super::value::{ArithOp, Atomic, AtomicType, CompOp};
use super::{FUNCTIONS_NS, XS_NS};

/// Why an expression cannot be lowered. `Unsupported` sends it to the fallback evaluator;
/// `Invalid` is a static error in the expression.
#[derive(Debug)]
pub enum LowerError {
    Unsupported(String),
    Invalid(String),
}

type R<T> = Result<T, LowerError>;

fn unsupported<T>(what: impl Into<String>) -> R<T> {
    Err(LowerError::Unsupported(what.into()))
}

pub struct Lowerer<'a> {
    /// Declared globals: (name, slot), later ones shadow earlier.
    globals: &'a [(String, u32)],
    boolean_globals: &'a [u32],
    /// Locals in scope: (variable name as renamed by the parser, slot).
    scope: Vec<(xee_xpath_ast::Name, u32)>,
    pub local_count: u32,
}

impl<'a> Lowerer<'a> {
    pub fn new(globals: &'a [(String, u32)], boolean_globals: &'a [u32]) -> Self {
        Lowerer {
            globals,
            boolean_globals,
            scope: Vec::new(),
            local_count: 0,
        }
    }

    pub fn lower_xpath(&mut self, x: &ast::XPath) -> R<Ir> {
        let ir = self.expr(&x.0.value)?;
        Ok(super::name_memo::memoise(hoist(ir)))
    }

    fn expr(&mut self, e: &ast::Expr) -> R<Ir> {
        if e.0.len() == 1 {
            return self.single(&e.0[0].value);
        }
        let items =
            e.0.iter()
                .map(|s| self.single(&s.value))
                .collect::<R<Vec<_>>>()?;
        Ok(Ir::Seq(items))
    }

    fn single(&mut self, e: &ast::ExprSingle) -> R<Ir> {
        match e {
            ast::ExprSingle::Path(p) => self.path(p),
            ast::ExprSingle::Apply(a) => self.apply(a),
            ast::ExprSingle::Let(l) => {
                let value = self.single(&l.var_expr.value)?;
                let slot = self.bind(&l.var_name.value);
                let body = self.single(&l.return_expr.value);
                self.scope.pop();
                Ok(Ir::Let(slot, Box::new(value), Box::new(body?)))
            }
            ast::ExprSingle::If(i) => Ok(Ir::If(
                Box::new(self.expr(&i.condition.value)?),
                Box::new(self.single(&i.then.value)?),
                Box::new(self.single(&i.else_.value)?),
            )),
            ast::ExprSingle::Binary(b) => self.binary(b),
            ast::ExprSingle::For(f) => {
                let input = self.single(&f.var_expr.value)?;
                let slot = self.bind(&f.var_name.value);
                let body = self.single(&f.return_expr.value);
                self.scope.pop();
                Ok(Ir::For(slot, Box::new(input), Box::new(body?)))
            }
            ast::ExprSingle::Quantified(q) => {
                let input = self.single(&q.var_expr.value)?;
                let slot = self.bind(&q.var_name.value);
                let test = self.single(&q.satisfies_expr.value);
                self.scope.pop();
                let (input, test) = (Box::new(input), Box::new(test?));
                Ok(match q.quantifier {
                    ast::Quantifier::Some => Ir::Some(slot, input, test),
                    ast::Quantifier::Every => Ir::Every(slot, input, test),
                })
            }
        }
    }

    fn bind(&mut self, name: &xee_xpath_ast::Name) -> u32 {
        let slot = self.local_count;
        self.local_count += 1;
        self.scope.push((name.clone(), slot));
        slot
    }

    fn var(&self, name: &xee_xpath_ast::Name) -> R<Ir> {
        if let Some((_, slot)) = self.scope.iter().rev().find(|(n, _)| n == name) {
            return Ok(Ir::Local(*slot));
        }
        let local = name.local_name();
        if name.namespace().is_empty() {
            if let Some((_, slot)) = self.globals.iter().rev().find(|(n, _)| n == local) {
                if self.boolean_globals.contains(slot) {
                    // boolean($b) is $b for a boolean; the wrapper carries the static type.
                    return Ok(Ir::Call(Func::Boolean, vec![Ir::Global(*slot)]));
                }
                return Ok(Ir::Global(*slot));
            }
        }
        Err(LowerError::Invalid(format!(
            "variable ${} is not declared",
            local.trim_end_matches('*')
        )))
    }

    fn binary(&mut self, b: &ast::BinaryExpr) -> R<Ir> {
        use ast::BinaryOperator as B;
        let l = Box::new(self.path(&b.left)?);
        let r = Box::new(self.path(&b.right)?);
        Ok(match b.operator {
            B::Or => Ir::Or(l, r),
            B::And => Ir::And(l, r),
            B::ValueEq => Ir::Value(CompOp::Eq, l, r),
            B::ValueNe => Ir::Value(CompOp::Ne, l, r),
            B::ValueLt => Ir::Value(CompOp::Lt, l, r),
            B::ValueLe => Ir::Value(CompOp::Le, l, r),
            B::ValueGt => Ir::Value(CompOp::Gt, l, r),
            B::ValueGe => Ir::Value(CompOp::Ge, l, r),
            B::GenEq => Ir::General(CompOp::Eq, l, r),
            B::GenNe => Ir::General(CompOp::Ne, l, r),
            B::GenLt => Ir::General(CompOp::Lt, l, r),
            B::GenLe => Ir::General(CompOp::Le, l, r),
            B::GenGt => Ir::General(CompOp::Gt, l, r),
            B::GenGe => Ir::General(CompOp::Ge, l, r),
            B::Is => Ir::NodeCompare(NodeCmp::Is, l, r),
            B::Precedes => Ir::NodeCompare(NodeCmp::Precedes, l, r),
            B::Follows => Ir::NodeCompare(NodeCmp::Follows, l, r),
            B::Concat => Ir::Concat(l, r),
            B::Range => Ir::Range(l, r),
            B::Add => Ir::Arith(ArithOp::Add, l, r),
            B::Sub => Ir::Arith(ArithOp::Sub, l, r),
            B::Mul => Ir::Arith(ArithOp::Mul, l, r),
            B::Div => Ir::Arith(ArithOp::Div, l, r),
            B::IntDiv => Ir::Arith(ArithOp::IntDiv, l, r),
            B::Mod => Ir::Arith(ArithOp::Mod, l, r),
            B::Union => Ir::Set(SetOp::Union, l, r),
            B::Intersect => Ir::Set(SetOp::Intersect, l, r),
            B::Except => Ir::Set(SetOp::Except, l, r),
            B::Comma => Ir::Seq(vec![*l, *r]),
        })
    }

    fn apply(&mut self, a: &ast::ApplyExpr) -> R<Ir> {
        let base = self.path(&a.path_expr)?;
        Ok(match &a.operator {
            ast::ApplyOperator::SimpleMap(paths) => {
                let mut acc = base;
                for p in paths {
                    acc = Ir::SimpleMap(Box::new(acc), Box::new(self.path(p)?));
                }
                acc
            }
            ast::ApplyOperator::Unary(ops) => {
                let minus = ops
                    .iter()
                    .filter(|o| matches!(o, ast::UnaryOperator::Minus))
                    .count();
                if minus % 2 == 1 {
                    Ir::Negate(Box::new(base))
                } else {
                    // unary plus: numeric identity (untyped → xs:double)
                    Ir::Arith(
                        ArithOp::Add,
                        Box::new(Ir::Literal(Atomic::Integer(0))),
                        Box::new(base),
                    )
                }
            }
            ast::ApplyOperator::Cast(t) => {
                Ir::Cast(Box::new(base), atomic_type(&t.name.value)?, t.optional)
            }
            ast::ApplyOperator::Castable(t) => {
                Ir::Castable(Box::new(base), atomic_type(&t.name.value)?, t.optional)
            }
            ast::ApplyOperator::InstanceOf(st) => {
                let (it, occ) = sequence_type(st)?;
                Ir::InstanceOf(Box::new(base), it, occ)
            }
            ast::ApplyOperator::Treat(st) => {
                let (it, occ) = sequence_type(st)?;
                Ir::Treat(Box::new(base), it, occ)
            }
        })
    }

    fn path(&mut self, p: &ast::PathExpr) -> R<Ir> {
        let steps = &p.steps;
        let Some(first) = steps.first() else {
            return Ok(Ir::Empty);
        };
        let (start, rest) = match &first.value {
            ast::StepExpr::AxisStep(_) => (Ir::ContextItem, &steps[..]),
            other => (self.step_expr(other)?, &steps[1..]),
        };
        if rest.is_empty() {
            return Ok(start);
        }
        let mut out = Vec::with_capacity(rest.len());
        for s in rest {
            out.push(match &s.value {
                ast::StepExpr::AxisStep(a) => self.axis_step(a)?,
                other => Step::Expr(self.step_expr(other)?),
            });
        }
        Ok(Ir::Path(Box::new(start), collapse_descendants(out)))
    }

    fn axis_step(&mut self, a: &ast::AxisStep) -> R<Step> {
        let axis = match a.axis {
            ast::Axis::Child => Axis::Child,
            ast::Axis::Descendant => Axis::Descendant,
            ast::Axis::DescendantOrSelf => Axis::DescendantOrSelf,
            ast::Axis::Attribute => Axis::Attribute,
            ast::Axis::Self_ => Axis::Self_,
            ast::Axis::Parent => Axis::Parent,
            ast::Axis::Ancestor => Axis::Ancestor,
            ast::Axis::AncestorOrSelf => Axis::AncestorOrSelf,
            ast::Axis::FollowingSibling => Axis::FollowingSibling,
            ast::Axis::PrecedingSibling => Axis::PrecedingSibling,
            ast::Axis::Following => Axis::Following,
            ast::Axis::Preceding => Axis::Preceding,
            ast::Axis::Namespace => return unsupported("the namespace axis"),
        };
        let test = match &a.node_test {
            ast::NodeTest::NameTest(nt) => match nt {
                ast::NameTest::Name(n) => {
                    NodeTest::Name(NameKey::intern(n.value.namespace(), n.value.local_name()))
                }
                ast::NameTest::Star => NodeTest::AnyName,
                ast::NameTest::LocalName(l) => NodeTest::LocalName(Arc::from(l.as_str())),
                ast::NameTest::Namespace(ns) => NodeTest::Namespace(Arc::from(ns.as_str())),
            },
            ast::NodeTest::KindTest(k) => kind_test(k)?,
        };
        let preds = self.preds(&a.predicates)?;
        Ok(Step::Axis { axis, test, preds })
    }

    fn preds(&mut self, ps: &[ast::ExprS]) -> R<Vec<Pred>> {
        ps.iter().map(|p| self.pred(&p.value)).collect()
    }

    fn pred(&mut self, e: &ast::Expr) -> R<Pred> {
        let ir = self.expr(e)?;
        Ok(match &ir {
            Ir::Literal(Atomic::Integer(1)) => Pred::First,
            Ir::Literal(Atomic::Integer(n)) if *n > 1 => Pred::At(*n as usize),
            Ir::Call(Func::Last, args) if args.is_empty() => Pred::Last,
            _ if (is_boolean(&ir) || yields_nodes(&ir)) && !uses_focus_size_or_position(&ir) => {
                Pred::Bool(ir)
            }
            _ => Pred::General(ir),
        })
    }

    fn step_expr(&mut self, s: &ast::StepExpr) -> R<Ir> {
        match s {
            ast::StepExpr::PrimaryExpr(p) => self.primary(&p.value),
            ast::StepExpr::PostfixExpr { primary, postfixes } => {
                let mut base = self.primary(&primary.value)?;
                let mut preds = Vec::new();
                for pf in postfixes {
                    match pf {
                        ast::Postfix::Predicate(e) => preds.push(self.pred(&e.value)?),
                        ast::Postfix::ArgumentList(_) => {
                            return unsupported("dynamic function calls")
                        }
                        ast::Postfix::Lookup(_) => return unsupported("lookup operators"),
                    }
                }
                if !preds.is_empty() {
                    base = Ir::Filter(Box::new(base), preds);
                }
                Ok(base)
            }
            ast::StepExpr::AxisStep(a) => {
                let step = self.axis_step(a)?;
                Ok(Ir::Path(Box::new(Ir::ContextItem), vec![step]))
            }
        }
    }

    fn primary(&mut self, p: &ast::PrimaryExpr) -> R<Ir> {
        match p {
            ast::PrimaryExpr::Literal(l) => Ok(Ir::Literal(match l {
                ast::Literal::Integer(i) => match i64::try_from(i) {
                    Ok(v) => Atomic::Integer(v),
                    Err(_) => return unsupported("integer literals beyond 64 bits"),
                },
                ast::Literal::Decimal(d) => Atomic::Decimal(*d),
                ast::Literal::Double(f) => Atomic::Double(f.0),
                ast::Literal::String(s) => Atomic::string(s),
            })),
            ast::PrimaryExpr::VarRef(n) => self.var(n),
            ast::PrimaryExpr::Expr(e) => match &e.value {
                None => Ok(Ir::Empty),
                Some(e) => self.expr(e),
            },
            ast::PrimaryExpr::ContextItem => Ok(Ir::ContextItem),
            ast::PrimaryExpr::FunctionCall(f) => self.call(f),
            ast::PrimaryExpr::NamedFunctionRef(_) | ast::PrimaryExpr::InlineFunction(_) => {
                unsupported("function items")
            }
            ast::PrimaryExpr::MapConstructor(_) => unsupported("maps"),
            ast::PrimaryExpr::ArrayConstructor(_) => unsupported("arrays"),
            ast::PrimaryExpr::UnaryLookup(_) => unsupported("lookup operators"),
        }
    }

    fn call(&mut self, f: &ast::FunctionCall) -> R<Ir> {
        let name = &f.name.value;
        let (ns, local) = (name.namespace(), name.local_name());
        // fn:root(self::node()) is what `/` parses to.
        if ns == xee_xpath_ast::FN_NAMESPACE
            && local == "root"
            && f.arguments.len() == 1
            && is_self_node(&f.arguments[0].value)
        {
            return Ok(Ir::Root);
        }
        // contains(' A B ', concat(' ', X, ' ')) → code-list membership.
        if ns == xee_xpath_ast::FN_NAMESPACE && local == "contains" && f.arguments.len() == 2 {
            if let Some(ir) = self.code_list(&f.arguments[0].value, &f.arguments[1].value)? {
                return Ok(ir);
            }
        }
        let mut args = f
            .arguments
            .iter()
            .map(|a| self.single(&a.value))
            .collect::<R<Vec<_>>>()?;
        if ns == XS_NS {
            let t = match local {
                "string" => AtomicType::String,
                "untypedAtomic" => AtomicType::Untyped,
                "boolean" => AtomicType::Boolean,
                "integer" => AtomicType::Integer,
                "decimal" => AtomicType::Decimal,
                "double" => AtomicType::Double,
                "date" => AtomicType::Date,
                other => return unsupported(format!("the constructor function xs:{other}")),
            };
            if args.len() != 1 {
                return Err(LowerError::Invalid(format!(
                    "xs:{local}() takes exactly one argument"
                )));
            }
            return Ok(Ir::Cast(Box::new(args.remove(0)), t, true));
        }
        let func = if ns == xee_xpath_ast::FN_NAMESPACE {
            match Func::builtin(local) {
                Some(f) => f,
                None => return unsupported(format!("the function fn:{local}")),
            }
        } else if ns == FUNCTIONS_NS {
            match Func::helper(local) {
                Some(f) => f,
                None => {
                    return Err(LowerError::Invalid(format!(
                        "unknown invex helper function {local}()"
                    )))
                }
            }
        } else {
            return Err(LowerError::Invalid(format!(
                "unknown function {{{ns}}}{local}()"
            )));
        };
        let (min, max) = func.arity();
        if args.len() < min || args.len() > max {
            return Err(LowerError::Invalid(format!(
                "{}() does not take {} argument(s)",
                func.name(),
                args.len()
            )));
        }
        if args.is_empty() && func.defaults_to_context() {
            args.push(Ir::ContextItem);
        }
        Ok(Ir::Call(func, args))
    }

    fn code_list(&mut self, list: &ast::ExprSingle, probe: &ast::ExprSingle) -> R<Option<Ir>> {
        let Some(raw) = string_literal(list) else {
            return Ok(None);
        };
        if !(raw.starts_with(' ') && raw.ends_with(' ')) {
            return Ok(None);
        }
        let Some(call) = single_call(probe) else {
            return Ok(None);
        };
        let n = &call.name.value;
        if n.namespace() != xee_xpath_ast::FN_NAMESPACE
            || n.local_name() != "concat"
            || call.arguments.len() != 3
            || string_literal(&call.arguments[0].value).as_deref() != Some(" ")
            || string_literal(&call.arguments[2].value).as_deref() != Some(" ")
        {
            return Ok(None);
        }
        let arg = self.single(&call.arguments[1].value)?;
        Ok(Some(Ir::InCodeList(
            Arc::new(CodeList::new(&raw)),
            Box::new(arg),
        )))
    }
}

fn single_primary(e: &ast::ExprSingle) -> Option<&ast::PrimaryExpr> {
    match e {
        ast::ExprSingle::Path(p) if p.steps.len() == 1 => match &p.steps[0].value {
            ast::StepExpr::PrimaryExpr(pe) => Some(&pe.value),
            _ => None,
        },
        _ => None,
    }
}

fn string_literal(e: &ast::ExprSingle) -> Option<String> {
    match single_primary(e)? {
        ast::PrimaryExpr::Literal(ast::Literal::String(s)) => Some(s.clone()),
        _ => None,
    }
}

fn single_call(e: &ast::ExprSingle) -> Option<&ast::FunctionCall> {
    match single_primary(e)? {
        ast::PrimaryExpr::FunctionCall(f) => Some(f),
        _ => None,
    }
}

fn is_self_node(e: &ast::ExprSingle) -> bool {
    match e {
        ast::ExprSingle::Path(p) if p.steps.len() == 1 => matches!(
            &p.steps[0].value,
            ast::StepExpr::AxisStep(ast::AxisStep {
                axis: ast::Axis::Self_,
                node_test: ast::NodeTest::KindTest(ast::KindTest::Any),
                predicates,
            }) if predicates.is_empty()
        ),
        _ => false,
    }
}

fn atomic_type(n: &xee_xpath_ast::Name) -> R<AtomicType> {
    if n.namespace() != XS_NS {
        return Err(LowerError::Invalid(format!(
            "unknown type {}",
            n.local_name()
        )));
    }
    Ok(match n.local_name() {
        "string" => AtomicType::String,
        "untypedAtomic" => AtomicType::Untyped,
        "boolean" => AtomicType::Boolean,
        "integer" => AtomicType::Integer,
        "decimal" => AtomicType::Decimal,
        "double" => AtomicType::Double,
        "date" => AtomicType::Date,
        other => return unsupported(format!("the type xs:{other}")),
    })
}

fn kind_test(k: &ast::KindTest) -> R<NodeTest> {
    Ok(match k {
        ast::KindTest::Any => NodeTest::Kind(KindTest::AnyNode),
        ast::KindTest::Text => NodeTest::Kind(KindTest::Text),
        ast::KindTest::Comment => NodeTest::Kind(KindTest::Comment),
        ast::KindTest::Document(None) => NodeTest::Kind(KindTest::Document),
        ast::KindTest::PI(None) => NodeTest::Kind(KindTest::Pi),
        ast::KindTest::Element(None) => NodeTest::Kind(KindTest::Element),
        ast::KindTest::Attribute(None) => NodeTest::Kind(KindTest::Attribute),
        ast::KindTest::Element(Some(t)) | ast::KindTest::Attribute(Some(t)) => {
            let kind = if matches!(k, ast::KindTest::Element(_)) {
                KindTest::Element
            } else {
                KindTest::Attribute
            };
            if t.type_name.is_some() {
                return unsupported("typed element()/attribute() tests");
            }
            match &t.name_or_wildcard {
                xee_xpath_ast::ast::NameOrWildcard::Wildcard => NodeTest::Kind(kind),
                xee_xpath_ast::ast::NameOrWildcard::Name(n) => {
                    NodeTest::KindNamed(kind, NameKey::intern(n.namespace(), n.local_name()))
                }
            }
        }
        _ => return unsupported("this kind test"),
    })
}

fn sequence_type(st: &ast::SequenceType) -> R<(ItemTypeIr, Occurrence)> {
    match st {
        ast::SequenceType::Empty => unsupported("empty-sequence() tests"),
        ast::SequenceType::Item(item) => {
            let occ = match item.occurrence {
                ast::Occurrence::One => Occurrence::One,
                ast::Occurrence::Option => Occurrence::Optional,
                ast::Occurrence::Many => Occurrence::Many,
                ast::Occurrence::NonEmpty => Occurrence::NonEmpty,
            };
            let it = match &item.item_type {
                ast::ItemType::Item => ItemTypeIr::Item,
                ast::ItemType::AtomicOrUnionType(xs) => {
                    use xee_schema_type::Xs;
                    match xs {
                        Xs::String => ItemTypeIr::Atomic(AtomicType::String),
                        Xs::UntypedAtomic => ItemTypeIr::Atomic(AtomicType::Untyped),
                        Xs::Boolean => ItemTypeIr::Atomic(AtomicType::Boolean),
                        Xs::Integer => ItemTypeIr::Atomic(AtomicType::Integer),
                        Xs::Decimal => ItemTypeIr::Atomic(AtomicType::Decimal),
                        Xs::Double => ItemTypeIr::Atomic(AtomicType::Double),
                        Xs::Date => ItemTypeIr::Atomic(AtomicType::Date),
                        Xs::AnyAtomicType => ItemTypeIr::AnyAtomic,
                        Xs::Numeric => ItemTypeIr::Numeric,
                        _ => return unsupported("this atomic type in a sequence type"),
                    }
                }
                ast::ItemType::KindTest(k) => match kind_test(k)? {
                    NodeTest::Kind(k) => ItemTypeIr::Kind(k),
                    _ => return unsupported("named kind tests in a sequence type"),
                },
                _ => return unsupported("function, map and array types"),
            };
            Ok((it, occ))
        }
    }
}

/// `descendant-or-self::node()/child::name[non-positional]` (and `/attribute::name`) →
/// one index lookup.
fn collapse_descendants(steps: Vec<Step>) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::with_capacity(steps.len());
    for s in steps {
        if let Step::Axis {
            axis: axis @ (Axis::Child | Axis::Attribute),
            test: NodeTest::Name(name),
            preds,
        } = &s
        {
            let prev_is_dos = ends_with_descendant_or_self(&out);
            if prev_is_dos && preds.iter().all(|p| matches!(p, Pred::Bool(_))) {
                out.pop();
                out.push(Step::DescendantNamed {
                    name: *name,
                    attribute: *axis == Axis::Attribute,
                    preds: preds.clone(),
                });
                continue;
            }
        }
        // `//*[...]`, `//text()`: with non-positional predicates, descendant-or-self::node()
        // followed by child::test is the descendant axis, one scan already in order.
        if let Step::Axis {
            axis: Axis::Child,
            test,
            preds,
        } = &s
        {
            let prev_is_dos = ends_with_descendant_or_self(&out);
            if prev_is_dos && preds.iter().all(|p| matches!(p, Pred::Bool(_))) {
                out.pop();
                out.push(Step::Axis {
                    axis: Axis::Descendant,
                    test: test.clone(),
                    preds: preds.clone(),
                });
                continue;
            }
        }
        // `//(a | b)[...]`: each alternative through the name index (non-positional
        // predicates distribute over the union).
        if let Some(rewritten) = descendant_union(&out, &s) {
            out.pop();
            out.push(rewritten);
            continue;
        }
        out.push(s);
    }
    out
}

/// Whether the steps so far end with a bare `descendant-or-self::node()` (what `//` adds).
fn ends_with_descendant_or_self(steps: &[Step]) -> bool {
    matches!(
        steps.last(),
        Some(Step::Axis {
            axis: Axis::DescendantOrSelf,
            test: NodeTest::Kind(KindTest::AnyNode),
            preds,
        }) if preds.is_empty()
    )
}

/// `descendant-or-self::node()` followed by `(child::a | child::b ...)[bool preds]` →
/// one expression step: the union of `descendant a[preds]`, `descendant b[preds]` ...
fn descendant_union(before: &[Step], s: &Step) -> Option<Step> {
    if !ends_with_descendant_or_self(before) {
        return None;
    }
    let Step::Expr(e) = s else { return None };
    let (union, preds): (&Ir, &[Pred]) = match e {
        Ir::Filter(base, preds) if matches!(**base, Ir::Set(SetOp::Union, ..)) => (base, preds),
        Ir::Set(SetOp::Union, ..) => (e, &[]),
        _ => return None,
    };
    if !preds.iter().all(|p| matches!(p, Pred::Bool(_))) {
        return None;
    }
    let mut alternatives = Vec::new();
    collect_union(union, &mut alternatives);
    let mut parts = Vec::new();
    for alt in alternatives {
        let Ir::Path(start, steps) = alt else {
            return None;
        };
        let (
            Ir::ContextItem,
            [Step::Axis {
                axis: Axis::Child,
                test: NodeTest::Name(name),
                preds: own,
            }],
        ) = (&**start, steps.as_slice())
        else {
            return None;
        };
        if !own.is_empty() {
            return None;
        }
        parts.push(Ir::Path(
            Box::new(Ir::ContextItem),
            vec![Step::DescendantNamed {
                name: *name,
                attribute: false,
                preds: preds.to_vec(),
            }],
        ));
    }
    let mut it = parts.into_iter();
    let first = it.next()?;
    let union = it.fold(first, |acc, p| {
        Ir::Set(SetOp::Union, Box::new(acc), Box::new(p))
    });
    Some(Step::Expr(union))
}

fn collect_union<'a>(ir: &'a Ir, out: &mut Vec<&'a Ir>) {
    match ir {
        Ir::Set(SetOp::Union, a, b) => {
            collect_union(a, out);
            collect_union(b, out);
        }
        other => out.push(other),
    }
}

/// Statically boolean-valued expressions (their EBV is their value).
pub(crate) fn is_boolean(ir: &Ir) -> bool {
    match ir {
        Ir::Or(..)
        | Ir::And(..)
        | Ir::General(..)
        | Ir::Value(..)
        | Ir::NodeCompare(..)
        | Ir::Castable(..)
        | Ir::InstanceOf(..)
        | Ir::InCodeList(..)
        | Ir::Some(..)
        | Ir::Every(..) => true,
        Ir::Call(f, _) => f.returns_boolean(),
        Ir::Cached(_, e) => is_boolean(e),
        Ir::NameMemo(..) => true,
        _ => false,
    }
}

/// Expressions that evaluate to nodes only (never a number, so as a predicate they filter
/// by existence, not by position).
pub(crate) fn yields_nodes(ir: &Ir) -> bool {
    match ir {
        Ir::Root => true,
        Ir::Path(_, steps) => matches!(
            steps.last(),
            Some(Step::Axis { .. } | Step::DescendantNamed { .. })
        ),
        Ir::Set(..) => true,
        Ir::Filter(base, _) => yields_nodes(base),
        Ir::Cached(_, e) => yields_nodes(e),
        _ => false,
    }
}

/// Whether the expression reads position() or last() of ITS OWN focus.
fn uses_focus_size_or_position(ir: &Ir) -> bool {
    match ir {
        Ir::Call(Func::Position | Func::Last, _) => true,
        // Inner foci: a path's steps, a filter's predicates and a simple map's right side
        // have their own position and size.
        Ir::Path(start, _) => uses_focus_size_or_position(start),
        Ir::Filter(base, _) => uses_focus_size_or_position(base),
        Ir::SimpleMap(a, _) => uses_focus_size_or_position(a),
        other => other
            .children()
            .into_iter()
            .any(uses_focus_size_or_position),
    }
}

#[derive(Default)]
struct Deps {
    context: bool,
    globals: bool,
    free_locals: BTreeSet<u32>,
}

/// What an expression depends on besides the document.
fn deps(ir: &Ir) -> Deps {
    let mut d = Deps::default();
    collect(ir, &mut d);
    return d;

    fn inner(ir: &Ir, d: &mut Deps) {
        // Evaluated with an inner focus: its context use is not ours.
        let mut sub = Deps::default();
        collect(ir, &mut sub);
        d.globals |= sub.globals;
        d.free_locals.extend(sub.free_locals);
    }

    fn collect(ir: &Ir, d: &mut Deps) {
        match ir {
            Ir::ContextItem => d.context = true,
            Ir::Root => d.context = true,
            Ir::Global(_) => d.globals = true,
            Ir::Local(s) => {
                d.free_locals.insert(*s);
            }
            Ir::Call(Func::Position | Func::Last, _) => d.context = true,
            Ir::Path(start, steps) => {
                collect(start, d);
                for s in steps {
                    match s {
                        Step::Axis { preds, .. } | Step::DescendantNamed { preds, .. } => {
                            for p in preds {
                                if let Pred::Bool(e) | Pred::General(e) = p {
                                    inner(e, d)
                                }
                            }
                        }
                        Step::Expr(e) => inner(e, d),
                    }
                }
            }
            Ir::Filter(base, preds) => {
                collect(base, d);
                for p in preds {
                    if let Pred::Bool(e) | Pred::General(e) = p {
                        inner(e, d)
                    }
                }
            }
            Ir::SimpleMap(a, b) => {
                collect(a, d);
                inner(b, d);
            }
            Ir::For(s, a, b) | Ir::Let(s, a, b) | Ir::Some(s, a, b) | Ir::Every(s, a, b) => {
                collect(a, d);
                let mut sub = Deps::default();
                collect(b, &mut sub);
                sub.free_locals.remove(s);
                d.context |= sub.context;
                d.globals |= sub.globals;
                d.free_locals.extend(sub.free_locals);
            }
            other => {
                for ch in other.children() {
                    collect(ch, d);
                }
            }
        }
    }
}

/// Context-free but for the root: within one document the root is constant, so such
/// expressions (paths from `/`, sums over them, ...) are computed once per document.
fn root_only(ir: &Ir) -> bool {
    let d = deps(ir);
    !d.globals && d.free_locals.is_empty() && !uses_context_beyond_root(ir)
}

fn uses_context_beyond_root(ir: &Ir) -> bool {
    match ir {
        Ir::Root => false,
        Ir::ContextItem => true,
        Ir::Call(Func::Position | Func::Last, _) => true,
        Ir::Path(start, _) => uses_context_beyond_root(start),
        Ir::Filter(base, _) => uses_context_beyond_root(base),
        Ir::SimpleMap(a, _) => uses_context_beyond_root(a),
        other => other.children().into_iter().any(uses_context_beyond_root),
    }
}

fn worth_caching(ir: &Ir) -> bool {
    !matches!(
        ir,
        Ir::Empty | Ir::Literal(_) | Ir::Root | Ir::ContextItem | Ir::Global(_) | Ir::Local(_)
    ) && !matches!(ir, Ir::Seq(v) if v.iter().all(|i| matches!(i, Ir::Literal(_))))
}

/// Wrap every maximal context-free subexpression into a per-document cache slot.
fn hoist(mut ir: Ir) -> Ir {
    if worth_caching(&ir) && !matches!(ir, Ir::Cached(..)) && root_only(&ir) && mentions_root(&ir) {
        return Ir::Cached(next_cache_id(), Box::new(ir));
    }
    for ch in ir.children_mut() {
        let taken = std::mem::replace(ch, Ir::Empty);
        *ch = hoist(taken);
    }
    ir
}

/// Only expressions that read the document are worth a cache slot.
fn mentions_root(ir: &Ir) -> bool {
    match ir {
        Ir::Root => true,
        other => other.children().into_iter().any(mentions_root),
    }
}
