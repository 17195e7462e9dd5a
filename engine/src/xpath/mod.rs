//! XPath 2.0 (as Schematron authors write it): parser (xee-xpath-ast) → IR → native evaluator.
//!
//! CONTRACT used by the rules layer:
//! ```ignore
//! let mut sc = StaticContext::new(namespaces);       // prefix → URI
//! let slot = sc.declare_variable("foo");             // a `let` the rules layer binds ($foo)
//! sc.declare_function_namespace("u", HELPERS_NS);    // native helpers callable as u:gln(...)
//! let expr = compile("exists(cbc:ID)", &sc)?;        // Expr: Send + Sync, plain data
//! let expr2 = compile_pattern("cac:InvoiceLine", &sc)?; // Schematron rule context → node selector from the root
//! let mut ev = Evaluator::new(&doc, sc.variable_count());
//! ev.set_variable(slot, value);                      // Sequence
//! let b: bool = ev.eval_boolean(&expr, node)?;       // effective boolean value
//! let nodes: Vec<NodeId> = ev.select_nodes(&expr2, doc.root())?;
//! ```

pub struct StaticContext { /* private */ }
pub struct Expr { /* private */ }
pub struct Evaluator<'d> { _d: std::marker::PhantomData<&'d ()> }
pub struct VarSlot(pub u32);
pub enum Item { Node(crate::document::NodeId), Atomic(Atomic) }
pub enum Atomic {}
pub type Sequence = Vec<Item>;
