//! XPath 2.0 as Schematron authors write it: parsed by `xee-xpath-ast`, lowered to invex's
//! own IR, evaluated natively over a [`Document`]. Expressions the native compiler does not
//! cover run on xee-xpath (the fallback), and `invex rules lint` lists them.

use crate::document::{Document, NodeId};

/// Namespace URI of invex's native helper functions (`invex:gln(...)` etc.).
pub const FUNCTIONS_NS: &str = "urn:invex:functions";

/// A variable slot: `let`s of packs, patterns and rules are bound by the rules layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VarSlot(pub u32);

/// Names in scope when compiling: namespace prefixes and declared variables.
#[derive(Clone, Debug, Default)]
pub struct StaticContext {}

impl StaticContext {
    /// A context with `xs`, `fn` and `invex` predeclared.
    pub fn new() -> Self { todo!() }
    pub fn add_namespace(&mut self, prefix: &str, uri: &str) { todo!() }
    /// Declare `$name`; later declarations of the same name shadow earlier ones.
    pub fn declare_variable(&mut self, name: &str) -> VarSlot { todo!() }
    pub fn variable_count(&self) -> usize { todo!() }
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

/// A compiled expression: plain data, `Send + Sync`, shared by every worker.
#[derive(Debug)]
pub struct Expr {}

impl Expr {
    pub fn source(&self) -> &str { todo!() }
    /// False when the expression runs on the xee-xpath fallback.
    pub fn is_native(&self) -> bool { todo!() }
    /// Why the native compiler could not take it (fallback only).
    pub fn fallback_reason(&self) -> Option<&str> { todo!() }
}

/// Compile an XPath expression.
pub fn compile(src: &str, sc: &StaticContext) -> Result<Expr, CompileError> { todo!() }

/// Compile a Schematron rule context (an XSLT pattern such as `cac:InvoiceLine` or
/// `/ubl:Invoice | /cn:CreditNote`) into an expression that, evaluated with the document
/// node as context, selects every matching node in document order.
pub fn compile_pattern(src: &str, sc: &StaticContext) -> Result<Expr, CompileError> { todo!() }

/// An XPath item.
#[derive(Clone, Debug)]
pub enum Item {
    Node(NodeId),
    Atomic(Atomic),
}

/// An atomic value.
#[derive(Clone, Debug)]
pub enum Atomic {
    String(std::sync::Arc<str>),
    Untyped(std::sync::Arc<str>),
    Boolean(bool),
    Integer(i64),
    Decimal(rust_decimal::Decimal),
    Double(f64),
}

pub type Sequence = Vec<Item>;

/// Per-document evaluation state (variable bindings and per-document caches).
pub struct Evaluator<'d> {
    _doc: &'d Document,
}

impl<'d> Evaluator<'d> {
    pub fn new(doc: &'d Document, variable_count: usize) -> Self { todo!() }
    pub fn document(&self) -> &'d Document { self._doc }
    pub fn set_variable(&mut self, slot: VarSlot, value: Sequence) { todo!() }
    pub fn eval(&mut self, e: &Expr, context: NodeId) -> Result<Sequence, EvalError> { todo!() }
    /// Effective boolean value.
    pub fn eval_boolean(&mut self, e: &Expr, context: NodeId) -> Result<bool, EvalError> { todo!() }
    /// Nodes in document order (error if the result holds atomic values).
    pub fn select_nodes(&mut self, e: &Expr, context: NodeId) -> Result<Vec<NodeId>, EvalError> { todo!() }
    /// The string value of the result (items joined with a space), for messages.
    pub fn eval_string(&mut self, e: &Expr, context: NodeId) -> Result<String, EvalError> { todo!() }
}
