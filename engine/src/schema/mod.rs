//! The schema layer: UBL 2.1 XML Schema validation, native, over the parsed [`Document`].
//!
//! Hand-written because no maintained Rust crate validates XSD 1.0 over our own
//! `Document` (the ones that exist wrap libxml2 or parse their own tree) and meets the
//! speed target: the layer must add little to a Schematron run that takes well under a
//! millisecond on a typical invoice.
//!
//! Split as parser → model → evaluator: `parse.rs` reads one XSD file into declarations,
//! `compile.rs` resolves them into per-type tables ([`Schema`]), `validate.rs` walks a
//! document once, checking each element's children against its type's content model,
//! its attributes and its simple content.
//!
//! What it covers is what the UBL 2.1 Invoice-2 and CreditNote-2 schemas use: global
//! elements with named types, `xsd:sequence`s of element references with minOccurs /
//! maxOccurs, one `xsd:any namespace="##other"`, simple content derived by extension or
//! restriction from the XSD built-ins, and attributes. Any other construct is refused
//! when the schema compiles ([`SchemaError::Unsupported`]), never silently ignored.
//!
//! One deliberate difference from a full XSD processor: the content of
//! `ext:ExtensionContent` (`xsd:any ##other processContents="lax"`) is not validated at
//! all; the XSD would validate it laxly against the signature schemas it imports. The
//! issue asks for the extension wrapper only, and extension content is the business of
//! whoever defined the extension.

mod compile;
mod parse;
mod simple;
#[cfg(test)]
mod tests;
mod validate;

use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

pub use compile::{compile, FsSource, SchemaSource};
pub use validate::{Class, SchemaFinding};

use simple::Builtin;

/// The rule ids of the schema layer's findings.
pub const RULE_ROOT: &str = "UBL-XSD-ROOT";
pub const RULE_UNEXPECTED: &str = "UBL-XSD-UNEXPECTED";
pub const RULE_MISSING: &str = "UBL-XSD-MISSING";
pub const RULE_VALUE: &str = "UBL-XSD-VALUE";
pub const RULE_ATTRIBUTE: &str = "UBL-XSD-ATTRIBUTE";
/// Every rule id the validator reports; a schema pack declares each once.
pub const RULE_IDS: &[&str] = &[
    RULE_ROOT,
    RULE_UNEXPECTED,
    RULE_MISSING,
    RULE_VALUE,
    RULE_ATTRIBUTE,
];

/// Why a schema did not compile.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("cannot read {}: {message}", file.display())]
    Read { file: PathBuf, message: String },
    #[error("{} is not well-formed XML: {message}", file.display())]
    Xml { file: PathBuf, message: String },
    #[error("{} is not a valid schema: {message}", file.display())]
    Invalid { file: PathBuf, message: String },
    #[error("{}: not supported by invex's schema compiler: {what}", file.display())]
    Unsupported { file: PathBuf, what: String },
    #[error("unresolved reference: {0}")]
    Unresolved(String),
}

pub(crate) type TypeId = u32;
pub(crate) const NO_TYPE: TypeId = u32::MAX;

#[derive(Clone, Debug)]
pub(crate) struct Attribute {
    /// Local name (UBL's attributes are unqualified).
    pub name: String,
    pub builtin: Builtin,
    pub required: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Particle {
    /// Element name id; None: the wildcard.
    pub name: Option<u32>,
    pub ty: TypeId,
    pub min: u32,
    pub max: u32,
}

/// A compiled sequence: a deterministic automaton whose state is (particle, count).
#[derive(Clone, Debug)]
pub(crate) struct Sequence {
    pub particles: Vec<Particle>,
    /// Element name id → particle index, sorted by name id (binary search).
    pub by_name: Vec<(u32, u16)>,
    /// The wildcard particle and the target namespace of its schema (`##other`).
    pub wildcard: Option<(u16, String)>,
    /// `next_required[i]`: the first particle at or after `i` with minOccurs > 0
    /// (`particles.len()` when none).
    pub next_required: Vec<u16>,
}

impl Sequence {
    fn particle_of(&self, name: u32) -> Option<u16> {
        self.by_name
            .binary_search_by_key(&name, |&(n, _)| n)
            .ok()
            .map(|i| self.by_name[i].1)
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Body {
    /// Being compiled (never seen after `compile` returns).
    Pending,
    Empty,
    Elements(Sequence),
    Simple(Builtin),
}

impl Body {
    fn is_pending(&self) -> bool {
        matches!(self, Body::Pending)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct TypeDef {
    pub name: String,
    pub attributes: Vec<Attribute>,
    pub body: Body,
}

/// A compiled schema set: plain data, `Send + Sync`, shared by every validating thread.
#[derive(Debug)]
pub struct Schema {
    /// Namespace → local name → element name id. Every document looks up each of its names
    /// here once; a fast hash without keys is safe because the table's keys come from the
    /// schema, so a document's names can only miss or hit, never grow a chain.
    names: FxHashMap<String, FxHashMap<String, u32>>,
    /// Element name id → (namespace, local).
    name_list: Vec<(String, String)>,
    /// Element name id → type of the global element of that name (NO_TYPE: none).
    globals: Vec<TypeId>,
    types: Vec<TypeDef>,
    /// The accepted document elements and their types.
    roots: Vec<(u32, TypeId)>,
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Schema>();
};

impl Schema {
    fn empty() -> Schema {
        Schema {
            names: FxHashMap::default(),
            name_list: Vec::new(),
            globals: Vec::new(),
            types: Vec::new(),
            roots: Vec::new(),
        }
    }

    fn intern(&mut self, ns: &str, local: &str) -> u32 {
        if let Some(&id) = self.names.get(ns).and_then(|m| m.get(local)) {
            return id;
        }
        let id = self.name_list.len() as u32;
        self.name_list.push((ns.to_string(), local.to_string()));
        self.globals.push(NO_TYPE);
        self.names
            .entry(ns.to_string())
            .or_default()
            .insert(local.to_string(), id);
        id
    }

    fn set_global(&mut self, name: u32, ty: TypeId) {
        if let Some(g) = self.globals.get_mut(name as usize) {
            *g = ty;
        }
    }

    fn lookup(&self, ns: &str, local: &str) -> Option<u32> {
        self.names.get(ns)?.get(local).copied()
    }

    /// The UBL 2.1 Invoice and CreditNote schemas under `xsd_dir` (the directory holding
    /// `maindoc/` and `common/`, e.g. `rulepacks/ubl-2.1-xsd/2.1/xsd`).
    pub fn ubl_2_1(xsd_dir: &Path) -> Result<Schema, SchemaError> {
        let invoice = xsd_dir.join("maindoc/UBL-Invoice-2.1.xsd");
        let credit_note = xsd_dir.join("maindoc/UBL-CreditNote-2.1.xsd");
        compile(&FsSource, &[&invoice, &credit_note])
    }

    /// Whether `value` is an `xs:date` (for tests that compare with other validators).
    pub fn accepts_date(value: &str) -> bool {
        Builtin::Date.accepts(value)
    }

    /// Whether `value` is an `xs:time`.
    pub fn accepts_time(value: &str) -> bool {
        Builtin::Time.accepts(value)
    }

    /// Whether `value` is an `xs:dateTime`.
    pub fn accepts_date_time(value: &str) -> bool {
        Builtin::DateTime.accepts(value)
    }

    /// Number of compiled types (for diagnostics and tests).
    pub fn type_count(&self) -> usize {
        self.types.len()
    }
}

/// The conventional prefix of a namespace in messages (None: written as `{uri}`).
fn known_prefix(ns: &str) -> Option<&'static str> {
    Some(match ns {
        "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" => "ubl",
        "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2" => "cn",
        "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2" => "cac",
        "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2" => "cbc",
        "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2" => "ext",
        "" => return None,
        _ => return None,
    })
}

/// A readable element name: `cbc:ID`, or `{urn:x}ID` for namespaces without a known
/// prefix, `ID` without a namespace.
fn display_name(ns: &str, local: &str) -> String {
    match known_prefix(ns) {
        Some(p) => format!("{p}:{local}"),
        None if ns.is_empty() => local.to_string(),
        None => format!("{{{ns}}}{local}"),
    }
}
