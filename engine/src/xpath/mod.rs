//! XPath 2.0 as Schematron authors write it: parsed by `xee-xpath-ast` (parser), lowered to
//! invex's own IR (algebra, `ir`), evaluated natively over a [`Document`] (evaluator,
//! `eval` + `functions`). Expressions the native compiler does not cover run on xee-xpath
//! (`fallback`) in builds with the `xpath-fallback` feature, and `invex rules lint` lists
//! them; other builds refuse them when the pack compiles (no shipped rule needs it, and the
//! interpreter is most of the engine's dependencies).

mod eval;
#[cfg(feature = "xpath-fallback")]
mod fallback;
mod functions;
mod guard;
mod ir;
mod last_step;
pub mod lexical;
mod lower;
pub mod memo;
mod name_memo;
mod region_select;
mod value;
pub mod xsd_regex;

use std::sync::Arc;

use xee_xpath_ast::{Namespaces, VariableNames, XPathParserContext};

use crate::document::{Document, NodeId};
use eval::{Focus, State};
pub use functions::Func;
use lower::{LowerError, Lowerer};
pub use region_select::RegionSelector;
pub use value::{Atomic, AtomicType, Item, Sequence};

/// Namespace URI of invex's native helper functions (`invex:gln(...)` etc.).
pub const FUNCTIONS_NS: &str = "urn:invex:functions";
pub(crate) const XS_NS: &str = "http://www.w3.org/2001/XMLSchema";

/// A variable slot: `let`s of packs, patterns and rules are bound by the rules layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VarSlot(pub u32);

/// Names in scope when compiling: namespace prefixes and declared variables.
#[derive(Clone, Debug)]
pub struct StaticContext {
    namespaces: Vec<(String, String)>,
    variables: Vec<(String, u32)>,
    /// Variables known to hold a single xs:boolean (their predicates are not positional).
    boolean_variables: Vec<u32>,
}

impl Default for StaticContext {
    fn default() -> Self {
        Self::new()
    }
}

impl StaticContext {
    /// A context with `xs`, `fn` and `invex` predeclared.
    pub fn new() -> Self {
        StaticContext {
            namespaces: vec![
                ("xs".into(), XS_NS.into()),
                ("fn".into(), xee_xpath_ast::FN_NAMESPACE.into()),
                ("invex".into(), FUNCTIONS_NS.into()),
            ],
            variables: Vec::new(),
            boolean_variables: Vec::new(),
        }
    }

    /// Record that `$slot` is bound to `expr` (a `let`), so that the compiler knows its
    /// static type: a boolean variable in a predicate filters by value, never by position,
    /// which lets `//x[$flag]` use the name index.
    pub fn bind_variable(&mut self, slot: VarSlot, expr: &Expr) {
        if expr.is_boolean() {
            self.boolean_variables.push(slot.0);
        }
    }

    pub fn add_namespace(&mut self, prefix: &str, uri: &str) {
        self.namespaces.retain(|(p, _)| p != prefix);
        self.namespaces.push((prefix.to_string(), uri.to_string()));
    }

    /// Declare `$name`; later declarations of the same name shadow earlier ones.
    pub fn declare_variable(&mut self, name: &str) -> VarSlot {
        let slot = self.variables.len() as u32;
        self.variables.push((name.to_string(), slot));
        VarSlot(slot)
    }

    pub fn variable_count(&self) -> usize {
        self.variables.len()
    }

    /// Prefix → URI pairs in scope.
    pub fn namespaces(&self) -> &[(String, String)] {
        &self.namespaces
    }

    fn parser(&self) -> XPathParserContext {
        let mut ns = Namespaces::default();
        let pairs: Vec<(&str, &str)> = self
            .namespaces
            .iter()
            .map(|(p, u)| (p.as_str(), u.as_str()))
            .collect();
        ns.add(&pairs);
        let mut vars = VariableNames::default();
        for (name, _) in &self.variables {
            vars.insert(xee_xpath_ast::Name::name(name));
        }
        XPathParserContext::new(ns, vars)
    }
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct CompileError {
    pub message: String,
    /// Byte offset into the expression, when known.
    pub offset: Option<usize>,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{code}: {message}")]
pub struct EvalError {
    /// The XPath error code, e.g. FORG0001 (invalid cast), XPTY0004 (type error).
    pub code: String,
    pub message: String,
}

#[derive(Debug)]
enum Body {
    Native {
        ir: Arc<ir::Ir>,
        locals: u32,
        /// Decides the effective boolean value from absent names (see `guard`).
        bool_guard: Option<guard::BoolGuard>,
        /// Decides that the value is empty from absent names.
        empty_guard: Option<guard::Guard>,
    },
    // Only made in builds with the fallback (see `fallback_expr`).
    #[cfg_attr(not(feature = "xpath-fallback"), allow(dead_code))]
    Fallback {
        reason: String,
        sc: Arc<StaticContext>,
    },
}

/// A compiled expression: plain data, `Send + Sync`, shared by every worker.
#[derive(Debug)]
pub struct Expr {
    src: String,
    body: Body,
}

impl Expr {
    pub fn source(&self) -> &str {
        &self.src
    }

    /// Statically a single xs:boolean.
    pub fn is_boolean(&self) -> bool {
        match &self.body {
            Body::Native { ir, .. } => lower::is_boolean(ir),
            Body::Fallback { .. } => false,
        }
    }

    /// False when the expression runs on the xee-xpath fallback.
    pub fn is_native(&self) -> bool {
        matches!(self.body, Body::Native { .. })
    }

    /// Whether the expression's IR survives the memo's encoding unchanged (tests).
    #[cfg(test)]
    pub(crate) fn memo_round_trip(&self) -> Result<(), String> {
        match &self.body {
            Body::Native { ir, locals, .. } => memo::round_trips(ir, *locals),
            Body::Fallback { .. } => Ok(()),
        }
    }

    /// Why the native compiler could not take it (fallback only).
    pub fn fallback_reason(&self) -> Option<&str> {
        match &self.body {
            Body::Fallback { reason, .. } => Some(reason),
            Body::Native { .. } => None,
        }
    }
}

/// Longest expression compiled (the longest shipped one, a code list, is about 8 KB).
const MAX_EXPRESSION_BYTES: usize = 64 * 1024;
/// Deepest nesting of brackets compiled (shipped rules nest at most 7 deep). The XPath
/// parser we use (xee-xpath-ast, a backtracking combinator parser) takes time exponential
/// in the nesting depth — about twice as long per level: fuzzing found an 800-byte
/// expression that took minutes. Refusing deeper nesting up front keeps every compile
/// well under a second.
const MAX_NESTING: usize = 12;

/// Refuse an expression the parser would take too long over, before it sees it.
fn within_parser_limits(src: &str) -> Result<(), CompileError> {
    if src.len() > MAX_EXPRESSION_BYTES {
        return Err(CompileError {
            message: format!(
                "the expression is {} bytes long; at most {MAX_EXPRESSION_BYTES} are compiled",
                src.len()
            ),
            offset: None,
        });
    }
    let (mut depth, mut quote) = (0usize, None);
    for (i, c) in src.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[' | '{') => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(CompileError {
                        message: format!(
                            "brackets nest more than {MAX_NESTING} levels deep here; split the \
                             expression (a `let`, a helper function)"
                        ),
                        offset: Some(i),
                    });
                }
            }
            (None, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn parse(src: &str, sc: &StaticContext) -> Result<xee_xpath_ast::ast::XPath, CompileError> {
    within_parser_limits(src)?;
    sc.parser().parse_xpath(src).map_err(|e| {
        let span = e.span();
        CompileError {
            message: format!(
                "XPath syntax error at offset {}: {}",
                span.start,
                describe_parse_error(&e, src)
            ),
            offset: Some(span.start),
        }
    })
}

fn describe_parse_error(e: &xee_xpath_ast::ParserError, src: &str) -> String {
    use xee_xpath_ast::ParserError as P;
    match e {
        P::UnknownPrefix { prefix, .. } => format!("unknown namespace prefix '{prefix}'"),
        P::UnknownType { name, .. } => format!("unknown type {name:?}"),
        P::Reserved { name, .. } => format!("'{name}' is a reserved function name"),
        P::ArityOverflow { .. } => "too many arguments".into(),
        P::IllegalFunctionInPattern { .. } => "function not allowed in a pattern".into(),
        P::ExpectedFound { span } => {
            let near: String = src
                .get(span.start..)
                .unwrap_or("")
                .chars()
                .take(20)
                .collect();
            if near.is_empty() {
                "unexpected end of expression".into()
            } else {
                format!("unexpected input near '{near}'")
            }
        }
    }
}

fn finish(
    src: &str,
    sc: &StaticContext,
    xpath: &xee_xpath_ast::ast::XPath,
) -> Result<Expr, CompileError> {
    let mut l = Lowerer::new(&sc.variables, &sc.boolean_variables);
    match l.lower_xpath(xpath) {
        Ok(ir) => Ok(native(src, ir, l.local_count)),
        Err(LowerError::Invalid(message)) => Err(CompileError {
            message,
            offset: None,
        }),
        Err(LowerError::Unsupported(what)) => fallback_expr(src, sc, what),
    }
}

#[cfg(feature = "xpath-fallback")]
fn fallback_expr(src: &str, sc: &StaticContext, what: String) -> Result<Expr, CompileError> {
    Ok(Expr {
        src: src.to_string(),
        body: Body::Fallback {
            reason: format!("the native compiler does not support {what}"),
            sc: Arc::new(sc.clone()),
        },
    })
}

#[cfg(not(feature = "xpath-fallback"))]
fn fallback_expr(_src: &str, _sc: &StaticContext, what: String) -> Result<Expr, CompileError> {
    Err(CompileError {
        message: format!(
            "the native compiler does not support {what}, and this build has no XPath \
             fallback (build invex with the `xpath-fallback` feature, or rewrite the expression)"
        ),
        offset: None,
    })
}

fn native(src: &str, ir: ir::Ir, locals: u32) -> Expr {
    Expr {
        src: src.to_string(),
        body: Body::Native {
            bool_guard: guard::bool_guard(&ir),
            empty_guard: guard::empty_guard(&ir),
            ir: Arc::new(ir),
            locals,
        },
    }
}

/// Compile through the process's memo when one is installed (see [`memo`]): a natively
/// compiled expression is recalled or remembered; errors and fallbacks always compile.
fn memoised(
    kind: memo::Kind,
    src: &str,
    sc: &StaticContext,
    compile: impl FnOnce() -> Result<Expr, CompileError>,
) -> Result<Expr, CompileError> {
    if !memo::active() {
        return compile();
    }
    let key = memo::key(kind, src, sc);
    if let Some((ir, locals)) = memo::recall(&key) {
        return Ok(native(src, ir, locals));
    }
    let expr = compile()?;
    if let Body::Native { ir, locals, .. } = &expr.body {
        memo::remember(key, ir, *locals);
    }
    Ok(expr)
}

/// Compile an XPath expression.
pub fn compile(src: &str, sc: &StaticContext) -> Result<Expr, CompileError> {
    memoised(memo::Kind::Expression, src, sc, || {
        let xpath = parse(src, sc)?;
        finish(src, sc, &xpath)
    })
}

/// Compile a Schematron rule context (an XSLT pattern such as `cac:InvoiceLine` or
/// `/ubl:Invoice | /cn:CreditNote`) into an expression that, evaluated with the document
/// node as context, selects every matching node in document order.
pub fn compile_pattern(src: &str, sc: &StaticContext) -> Result<Expr, CompileError> {
    memoised(memo::Kind::Pattern, src, sc, || {
        compile_pattern_now(src, sc)
    })
}

fn compile_pattern_now(src: &str, sc: &StaticContext) -> Result<Expr, CompileError> {
    // A pattern matches a node when the node is selected by the pattern's path evaluated
    // from some ancestor; relative alternatives therefore become `//alt` (attributes:
    // `//@a`). Absolute alternatives stay as they are.
    let alternatives = split_union(src);
    let mut parts = Vec::new();
    for alt in &alternatives {
        let t = alt.trim();
        if t.is_empty() {
            return Err(CompileError {
                message: format!("empty alternative in the rule context '{src}'"),
                offset: None,
            });
        }
        if t.starts_with('/') {
            parts.push(t.to_string());
        } else {
            parts.push(format!("//{t}"));
        }
    }
    let rewritten = parts.join(" | ");
    let xpath = parse(&rewritten, sc).map_err(|mut e| {
        e.message = format!("in rule context '{src}': {}", e.message);
        e.offset = None;
        e
    })?;
    let mut expr = finish(&rewritten, sc, &xpath)?;
    expr.src = src.to_string();
    Ok(expr)
}

/// Split a pattern on top-level `|` (not inside brackets, parentheses or strings).
fn split_union(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut cur = String::new();
    for c in src.chars() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                cur.push(c);
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    cur.push(c);
                }
                '[' | '(' => {
                    depth += 1;
                    cur.push(c);
                }
                ']' | ')' => {
                    depth -= 1;
                    cur.push(c);
                }
                '|' if depth == 0 => out.push(std::mem::take(&mut cur)),
                _ => cur.push(c),
            },
        }
    }
    out.push(cur);
    out
}

/// Name resolutions for one document (opaque; see [`Evaluator::with_names`]).
#[derive(Default)]
pub struct DocumentNames(Vec<Option<Option<crate::document::NameId>>>);

/// Per-document evaluation state (variable bindings and per-document caches).
pub struct Evaluator<'d> {
    state: State<'d>,
    #[cfg(feature = "xpath-fallback")]
    fallback: Option<fallback::FallbackDoc>,
}

impl<'d> Evaluator<'d> {
    pub fn new(doc: &'d Document, variable_count: usize) -> Self {
        Evaluator {
            state: State::new(doc, variable_count),
            #[cfg(feature = "xpath-fallback")]
            fallback: None,
        }
    }

    /// A new evaluator for the same document reusing `names`, the name resolutions of a
    /// previous evaluator (from [`Evaluator::into_names`]): packs of one profile test many
    /// of the same names, and resolving each once per document is enough.
    pub fn with_names(doc: &'d Document, variable_count: usize, names: DocumentNames) -> Self {
        let mut ev = Evaluator::new(doc, variable_count);
        ev.state.names = names.0;
        ev
    }

    /// This evaluator's name resolutions, for the next evaluator on the same document.
    pub fn into_names(self) -> DocumentNames {
        DocumentNames(self.state.names)
    }

    pub fn document(&self) -> &'d Document {
        self.state.doc
    }

    fn guard_holds(&mut self, g: &guard::Guard) -> bool {
        let state = &mut self.state;
        g.holds(|k| state.name(k).is_none())
    }

    pub fn set_variable(&mut self, slot: VarSlot, value: Sequence) {
        self.set_global(slot, eval::Global::Value(value));
    }

    /// Bind `$slot` to `expr`, evaluated with the document node as context on first use.
    /// An evaluation error is raised in every expression that uses the variable.
    pub fn set_variable_lazy(&mut self, slot: VarSlot, expr: &Expr) {
        match &expr.body {
            Body::Native { ir, locals, .. } => {
                self.set_global(slot, eval::Global::Pending(ir.clone(), *locals))
            }
            Body::Fallback { .. } => {
                let root = self.state.doc.root();
                let g = match self.eval(expr, root) {
                    Ok(v) => eval::Global::Value(v),
                    Err(e) => eval::Global::Failed(e),
                };
                self.set_global(slot, g);
            }
        }
    }

    fn set_global(&mut self, slot: VarSlot, g: eval::Global) {
        let i = slot.0 as usize;
        if i >= self.state.globals.len() {
            self.state
                .globals
                .resize(i + 1, eval::Global::Value(Vec::new()));
        }
        self.state.globals[i] = g;
    }

    pub fn eval(&mut self, e: &Expr, context: NodeId) -> Result<Sequence, EvalError> {
        match &e.body {
            Body::Native { ir, locals, .. } => {
                if self.state.locals.len() < *locals as usize {
                    self.state.locals.resize(*locals as usize, Vec::new());
                }
                self.state.eval(ir, &Focus::node(context))
            }
            #[cfg(not(feature = "xpath-fallback"))]
            Body::Fallback { .. } => Err(EvalError {
                code: "XPST0017".into(),
                message: "this build has no XPath fallback".into(),
            }),
            #[cfg(feature = "xpath-fallback")]
            Body::Fallback { sc, .. } => {
                let doc = self.state.doc;
                if self.fallback.is_none() {
                    self.fallback = Some(fallback::FallbackDoc::new(doc)?);
                }
                let mut vars: Vec<(String, Sequence)> = Vec::new();
                for (name, slot) in &sc.variables {
                    vars.push((name.clone(), self.state.global_value(*slot as usize)?));
                }
                let fd = self.fallback.as_mut().ok_or_else(|| EvalError {
                    code: "XPST0001".into(),
                    message: "fallback document unavailable".into(),
                })?;
                fallback::evaluate(fd, doc, &e.src, sc.namespaces(), &vars, context)
            }
        }
    }

    /// Effective boolean value.
    pub fn eval_boolean(&mut self, e: &Expr, context: NodeId) -> Result<bool, EvalError> {
        match &e.body {
            Body::Native {
                ir,
                locals,
                bool_guard,
                ..
            } => {
                if let Some(g) = bool_guard {
                    if self.guard_holds(&g.guard) {
                        return Ok(g.value);
                    }
                }
                if self.state.locals.len() < *locals as usize {
                    self.state.locals.resize(*locals as usize, Vec::new());
                }
                self.state.eval_bool(ir, &Focus::node(context))
            }
            Body::Fallback { .. } => value::effective_boolean(&self.eval(e, context)?),
        }
    }

    /// Nodes in document order (error if the result holds atomic values).
    pub fn select_nodes(&mut self, e: &Expr, context: NodeId) -> Result<Vec<NodeId>, EvalError> {
        let mut out = Vec::new();
        self.select_nodes_into(e, context, &mut out)?;
        Ok(out)
    }

    /// [`Evaluator::select_nodes`] into `out` (cleared first), so that a caller selecting
    /// many rule contexts reuses one buffer instead of allocating a list per rule.
    pub fn select_nodes_into(
        &mut self,
        e: &Expr,
        context: NodeId,
        out: &mut Vec<NodeId>,
    ) -> Result<(), EvalError> {
        out.clear();
        if let Body::Native {
            ir,
            locals,
            empty_guard,
            ..
        } = &e.body
        {
            if let Some(g) = empty_guard {
                if self.guard_holds(g) {
                    return Ok(());
                }
            }
            if self.state.locals.len() < *locals as usize {
                self.state.locals.resize(*locals as usize, Vec::new());
            }
            // Rule contexts are mostly plain paths: walk them into a node list directly.
            if self.state.select_walk(ir, &Focus::node(context), out)? {
                return Ok(());
            }
        }
        let v = self.eval(e, context)?;
        out.reserve(v.len());
        for it in v {
            match it {
                Item::Node(n) => out.push(n),
                Item::Atomic(_) => {
                    out.clear();
                    return Err(EvalError {
                        code: "XPTY0019".into(),
                        message: "a rule context must select nodes".into(),
                    });
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(())
    }

    /// The nodes a Schematron rule context matches: like [`Evaluator::select_nodes`], but a
    /// dynamic error inside a predicate makes the pattern not match that node (XSLT
    /// pattern semantics) instead of failing the whole selection.
    pub fn select_matching(&mut self, e: &Expr, context: NodeId) -> Result<Vec<NodeId>, EvalError> {
        let mut out = Vec::new();
        self.select_matching_into(e, context, &mut out)?;
        Ok(out)
    }

    /// [`Evaluator::select_matching`] into `out` (cleared first).
    pub fn select_matching_into(
        &mut self,
        e: &Expr,
        context: NodeId,
        out: &mut Vec<NodeId>,
    ) -> Result<(), EvalError> {
        let before = std::mem::replace(&mut self.state.lenient_predicates, true);
        let r = self.select_nodes_into(e, context, out);
        self.state.lenient_predicates = before;
        r
    }

    /// Prepare a rule context for selection one region at a time
    /// ([`Evaluator::select_matching_in_range`]), with the semantics of
    /// [`Evaluator::select_matching`]. `Ok(None)`: the context is not of a shape that can
    /// be selected by region (see `region_select`); select it whole.
    pub fn region_selector<'e>(
        &mut self,
        e: &'e Expr,
    ) -> Result<Option<RegionSelector<'e>>, EvalError> {
        let Body::Native {
            ir,
            locals,
            empty_guard,
            ..
        } = &e.body
        else {
            return Ok(None);
        };
        if self.state.locals.len() < *locals as usize {
            self.state.locals.resize(*locals as usize, Vec::new());
        }
        let before = std::mem::replace(&mut self.state.lenient_predicates, true);
        let r = match empty_guard {
            Some(g) if self.guard_holds(g) => Ok(Some(RegionSelector::empty())),
            _ => self.state.region_selector(ir),
        };
        self.state.lenient_predicates = before;
        r
    }

    /// The nodes of a rule context (see [`Evaluator::region_selector`]) found below its
    /// named descendants with ids in `range`, in document order, into `out` (cleared
    /// first). Consecutive ranges together select what [`Evaluator::select_matching`]
    /// selects; a node can lie after its range.
    pub fn select_matching_in_range(
        &mut self,
        selector: &RegionSelector<'_>,
        range: std::ops::Range<u32>,
        out: &mut Vec<NodeId>,
    ) -> Result<(), EvalError> {
        let before = std::mem::replace(&mut self.state.lenient_predicates, true);
        let r = self.state.select_in_range(selector, range, out);
        self.state.lenient_predicates = before;
        r
    }

    /// The string value of the result (items joined with a space), for messages.
    pub fn eval_string(&mut self, e: &Expr, context: NodeId) -> Result<String, EvalError> {
        let v = self.eval(e, context)?;
        let doc = self.state.doc;
        Ok(value::atomize(doc, &v)
            .iter()
            .map(|a| a.display())
            .collect::<Vec<_>>()
            .join(" "))
    }
}

/// Evaluate an expression with the reference evaluator (xee-xpath), for differential tests.
#[cfg(feature = "xpath-fallback")]
pub fn reference_eval(
    doc: &Document,
    src: &str,
    sc: &StaticContext,
    context: NodeId,
) -> Result<Sequence, EvalError> {
    let mut fd = fallback::FallbackDoc::new(doc)?;
    fallback::evaluate(&mut fd, doc, src, sc.namespaces(), &[], context)
}

#[cfg(test)]
mod tests;
