//! Differential test of the schema layer (issue 17, item 4): documents of the conformance
//! corpus and thousands of mutants of them, made deterministically from a seed, validated
//! by invex's schema layer (`invex_engine::schema`) and by xmllint (libxml2, the reference,
//! at test time only) against the same OASIS UBL 2.1 XSDs. Every verdict must agree, and
//! for invalid documents invex's first finding must be on the line of the first node
//! xmllint names.
//!
//! Mutations: swap two sibling elements, drop an element, rename an element, insert a
//! foreign element (another namespace) or an unexpected UBL element, corrupt a date,
//! decimal or indicator, drop `currencyID` / `unitCode`, duplicate an element. Nothing
//! inside `ext:UBLExtensions` is mutated: invex does not validate extension content (a
//! documented difference; xmllint checks it laxly).
//!
//! One known difference, counted and printed but not failed: libxml2 does not collapse the
//! white space around an `xs:date`, `xs:time` or `xs:dateTime` value (`<cbc:IssueDate>
//! 2024-06-01 </cbc:IssueDate>`), while XSD 1.0 (whiteSpace="collapse" on these types) and
//! the Java validators behind the official chains (phive, KoSIT) accept it; invex follows
//! the specification. Every other disagreement fails the test.
//!
//! The mutants are written to a temporary directory and handed to xmllint in batches (one
//! schema load per batch). `INVEX_XSD_SEED` and `INVEX_XSD_MUTANTS` change the seed and the
//! count (default 6,000). Without xmllint or the corpus when the tests are built
//! (engine/build.rs), the test is compiled as ignored and the summary says why, unless
//! `INVEX_REQUIRE_XMLLINT=1` / `INVEX_REQUIRE_CORPUS=1` (set by `.ci/run`) make that a build
//! error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use invex_engine::document::{Document, NodeId, NodeKind};
use invex_engine::schema::Schema;

const EXT_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2";
const INVOICE_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2";
const CREDIT_NOTE_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn xsd_dir() -> PathBuf {
    repo().join("rulepacks/ubl-2.1-xsd/2.1/xsd")
}

/// The conformance corpus (`INVEX_CONFORMANCE`, else `../shared/conformance` next to the
/// repository). It was there when the tests were built (else the tests that call this are
/// ignored), so its absence now fails.
fn corpus() -> PathBuf {
    let root = match std::env::var_os("INVEX_CONFORMANCE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => repo().join("../shared/conformance"),
    };
    let corpus = root.join("corpus");
    assert!(
        corpus.is_dir(),
        "the conformance corpus is missing at {}, though it was found when the tests were built",
        corpus.display()
    );
    corpus
}

fn xml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            xml_files(&path, out);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("xml"))
        {
            out.push(path);
        }
    }
}

/// xmllint was found when the tests were built (else the test that calls this is ignored),
/// so its absence now fails.
fn require_xmllint() {
    let runs = Command::new("xmllint")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        runs,
        "xmllint does not run, though it was found when the tests were built \
         (Debian: apt-get install libxml2-utils)"
    );
}

/// splitmix64: small, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> Option<&'a T> {
        if v.is_empty() {
            None
        } else {
            Some(&v[self.below(v.len())])
        }
    }
}

/// Which schema a document goes to, by its document element.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Root {
    Invoice,
    CreditNote,
}

fn root_of(doc: &Document) -> Option<Root> {
    let q = doc.qname(doc.element_name(doc.document_element())?);
    match (q.namespace.as_str(), q.local.as_str()) {
        (INVOICE_NS, "Invoice") => Some(Root::Invoice),
        (CREDIT_NOTE_NS, "CreditNote") => Some(Root::CreditNote),
        _ => None,
    }
}

/// A base document: normalised source text (no BOM, `\n` line ends) and its parse.
struct Base {
    name: String,
    text: String,
    doc: Document,
    root: Root,
    /// Elements outside ext:UBLExtensions, below the document element, that are followed
    /// by a sibling node (so that their end is known exactly).
    elements: Vec<NodeId>,
}

impl Base {
    fn new(name: String, bytes: &[u8]) -> Option<Base> {
        let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        let text = std::str::from_utf8(bytes).ok()?.replace("\r\n", "\n");
        if text.contains('\r') {
            return None;
        }
        let doc = Document::parse(text.as_bytes()).ok()?;
        let root = root_of(&doc)?;
        let ext = doc.lookup_name(EXT_NS, "UBLExtensions");
        let mut elements = Vec::new();
        let mut stack = vec![doc.document_element()];
        while let Some(e) = stack.pop() {
            for c in doc.children(e) {
                if doc.kind(c) != NodeKind::Element || Some(doc.element_name(c)) == Some(ext) {
                    continue;
                }
                if doc.next_sibling(c).is_some() {
                    elements.push(c);
                }
                stack.push(c);
            }
        }
        elements.sort();
        Some(Base {
            name,
            text,
            doc,
            root,
            elements,
        })
    }

    /// The byte span of element `e` (it has a next sibling): its `<` to its end's `>`.
    fn span(&self, e: NodeId) -> Option<(usize, usize)> {
        let start = self.doc.byte_offset(e);
        let next = self.doc.next_sibling(e)?;
        let end = self.text.get(..self.doc.byte_offset(next))?.rfind('>')? + 1;
        (end > start).then_some((start, end))
    }

    /// The qualified name of `e` as written.
    fn written_name(&self, e: NodeId) -> Option<&str> {
        let start = self.doc.byte_offset(e) + 1;
        let rest = self.text.get(start..)?;
        let len = rest.find(|c: char| c.is_whitespace() || c == '>' || c == '/')?;
        rest.get(..len)
    }

    fn local(&self, e: NodeId) -> &str {
        self.doc
            .element_name(e)
            .map_or("", |n| self.doc.qname(n).local.as_str())
    }

    fn is_leaf(&self, e: NodeId) -> bool {
        self.doc
            .children(e)
            .all(|c| self.doc.kind(c) != NodeKind::Element)
    }
}

fn splice(text: &str, start: usize, end: usize, with: &str) -> String {
    let mut s = String::with_capacity(text.len() + with.len());
    s.push_str(&text[..start]);
    s.push_str(with);
    s.push_str(&text[end..]);
    s
}

const KINDS: &[&str] = &[
    "swap",
    "drop",
    "rename",
    "foreign",
    "ubl-element",
    "date",
    "decimal",
    "boolean",
    "currency",
    "duplicate",
];

/// One mutation of `base` of the given kind, if the document offers a place for it.
fn mutate(base: &Base, kind: &str, rng: &mut Rng) -> Option<String> {
    let doc = &base.doc;
    let t = &base.text;
    match kind {
        "swap" => {
            let pairs: Vec<(NodeId, NodeId)> = base
                .elements
                .iter()
                .filter_map(|&e| {
                    let mut n = doc.next_sibling(e);
                    while let Some(s) = n {
                        if doc.kind(s) == NodeKind::Element {
                            return (doc.element_name(s) != doc.element_name(e)
                                && doc.next_sibling(s).is_some())
                            .then_some((e, s));
                        }
                        n = doc.next_sibling(s);
                    }
                    None
                })
                .collect();
            let &(a, b) = rng.pick(&pairs)?;
            let (a0, a1) = base.span(a)?;
            let (b0, b1) = base.span(b)?;
            let swapped = format!("{}{}{}", &t[b0..b1], &t[a1..b0], &t[a0..a1]);
            Some(splice(t, a0, b1, &swapped))
        }
        "drop" => {
            let &e = rng.pick(&base.elements)?;
            let (s, end) = base.span(e)?;
            Some(splice(t, s, end, ""))
        }
        "rename" => {
            let &e = rng.pick(&base.elements)?;
            let (s, end) = base.span(e)?;
            let name = base.written_name(e)?;
            let renamed = match rng.below(3) {
                0 => name[..name.len() - 1].to_string(),
                1 => format!("{name}s"),
                _ => name.to_lowercase(),
            };
            if renamed == name || renamed.ends_with(':') {
                return None;
            }
            let element = &t[s..end];
            let closing = format!("</{name}>");
            let new = if element.ends_with(&closing) {
                format!(
                    "<{renamed}{}</{renamed}>",
                    &element[name.len() + 1..element.len() - closing.len()]
                )
            } else {
                format!("<{renamed}{}", &element[name.len() + 1..])
            };
            Some(splice(t, s, end, &new))
        }
        "foreign" | "ubl-element" => {
            let &e = rng.pick(&base.elements)?;
            let s = doc.byte_offset(e);
            let insert = if kind == "foreign" {
                "<x:Foreign xmlns:x=\"urn:invex:mutant\">1</x:Foreign>".to_string()
            } else {
                let name = *rng.pick(&["Note", "ID", "Name", "TaxAmount", "Description"])?;
                format!("<cbc:{name} xmlns:cbc=\"urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2\">1</cbc:{name}>")
            };
            Some(splice(t, s, s, &insert))
        }
        "date" | "decimal" | "boolean" => {
            let suffixes: &[&str] = match kind {
                "date" => &["Date"],
                "decimal" => &[
                    "Amount", "Quantity", "Percent", "Rate", "Numeric", "Measure",
                ],
                _ => &["Indicator"],
            };
            let candidates: Vec<NodeId> = base
                .elements
                .iter()
                .copied()
                .filter(|&e| suffixes.iter().any(|s| base.local(e).ends_with(s)) && base.is_leaf(e))
                .collect();
            let &e = rng.pick(&candidates)?;
            let value = match kind {
                "date" => *rng.pick(&[
                    "2024-02-30",
                    "31.12.2024",
                    "2024-1-05",
                    "2024-12-31T00:00:00",
                    "",
                    "0000-01-01",
                    "2024-12-31+01:00",
                    " 2024-06-01 ",
                ])?,
                "decimal" => {
                    *rng.pick(&["12,50", "1e3", "", "EUR 5", "1.2.3", " -0.5 ", "+.5", "."])?
                }
                _ => *rng.pick(&["yes", "TRUE", "", "1", "0", " false ", "2"])?,
            };
            let (s, end) = base.span(e)?;
            let element = &t[s..end];
            let open_end = element.find('>')? + 1;
            if element.ends_with("/>") && open_end == element.len() {
                return None;
            }
            let close = element.rfind("</")?;
            Some(splice(t, s + open_end, s + close, value))
        }
        "currency" => {
            let mut attrs = Vec::new();
            for &e in &base.elements {
                for a in doc.attributes(e) {
                    let a = NodeId(a);
                    if let Some(n) = doc.name(a) {
                        let local = doc.qname(n).local.as_str();
                        if local == "currencyID" || local == "unitCode" {
                            attrs.push(a);
                        }
                    }
                }
            }
            let &a = rng.pick(&attrs)?;
            let s = doc.byte_offset(a);
            let rest = &t[s..];
            let eq = rest.find('=')?;
            let quote_at = s + eq + 1 + rest[eq + 1..].find(['"', '\''])?;
            let quote = &t[quote_at..quote_at + 1];
            let end = quote_at + 1 + t[quote_at + 1..].find(quote)? + 1;
            let start = t[..s].trim_end().len();
            Some(splice(t, start, end, ""))
        }
        "duplicate" => {
            let &e = rng.pick(&base.elements)?;
            let (s, end) = base.span(e)?;
            let copy = t[s..end].to_string();
            Some(splice(t, end, end, &copy))
        }
        _ => None,
    }
}

/// One document to judge.
struct Case {
    label: String,
    text: String,
    root: Root,
}

/// xmllint's verdict and first error line per file.
#[derive(Clone, Debug)]
struct Reference {
    valid: bool,
    first_line: Option<u32>,
    first_message: Option<String>,
}

fn run_xmllint(schema: &Path, files: &[PathBuf]) -> HashMap<PathBuf, Reference> {
    let mut out = HashMap::new();
    for chunk in files.chunks(400) {
        let result = Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(schema)
            .args(chunk)
            .output()
            .expect("xmllint runs");
        let stderr = String::from_utf8_lossy(&result.stderr);
        for f in chunk {
            out.insert(
                f.clone(),
                Reference {
                    valid: false,
                    first_line: None,
                    first_message: None,
                },
            );
        }
        for line in stderr.lines() {
            // "<file> validates", "<file> fails to validate", "<file>:<line>: element ...".
            if let Some(f) = line.strip_suffix(" validates") {
                if let Some(r) = out.get_mut(Path::new(f)) {
                    r.valid = true;
                }
                continue;
            }
            for f in chunk {
                let Some(rest) = f.to_str().and_then(|p| line.strip_prefix(p)) else {
                    continue;
                };
                let Some(rest) = rest.strip_prefix(':') else {
                    continue;
                };
                let Some((n, message)) = rest.split_once(':') else {
                    continue;
                };
                if let (Some(r), Ok(n)) = (out.get_mut(f), n.parse::<u32>()) {
                    if r.first_line.is_none() {
                        r.first_line = Some(n);
                        r.first_message = Some(message.trim().to_string());
                    }
                }
                break;
            }
        }
    }
    out
}

/// libxml2's one known deviation from XSD 1.0 (see the module comment): its first error
/// is a date/time value that is valid once its surrounding white space is collapsed.
fn libxml2_whitespace_quirk(r: &Reference) -> bool {
    let Some(m) = &r.first_message else {
        return false;
    };
    let Some((value, _)) = m
        .split_once("': '")
        .and_then(|(_, rest)| rest.split_once("' is not a valid value of the atomic type 'xs:"))
    else {
        return false;
    };
    let ty = m.rsplit("'xs:").next().unwrap_or("");
    let trimmed = value.trim_matches([' ', '\t', '\n', '\r']);
    trimmed != value
        && match ty {
            "date'." => Schema::accepts_date(trimmed),
            "time'." => Schema::accepts_time(trimmed),
            "dateTime'." => Schema::accepts_date_time(trimmed),
            _ => false,
        }
}

struct Outcome {
    cases: usize,
    known_differences: usize,
    invalid: usize,
    verdict_disagreements: Vec<String>,
    line_agreements: usize,
    line_disagreements: Vec<String>,
}

fn judge(schema: &Schema, cases: &[Case], dir: &Path) -> Outcome {
    let mut files: HashMap<Root, Vec<PathBuf>> = HashMap::new();
    let mut paths = Vec::with_capacity(cases.len());
    for (i, c) in cases.iter().enumerate() {
        let p = dir.join(format!("{i:05}.xml"));
        std::fs::write(&p, &c.text).expect("write a mutant");
        files.entry(c.root).or_default().push(p.clone());
        paths.push(p);
    }
    let mut reference = HashMap::new();
    for (root, list) in &files {
        let xsd = match root {
            Root::Invoice => xsd_dir().join("maindoc/UBL-Invoice-2.1.xsd"),
            Root::CreditNote => xsd_dir().join("maindoc/UBL-CreditNote-2.1.xsd"),
        };
        reference.extend(run_xmllint(&xsd, list));
    }
    let mut o = Outcome {
        cases: cases.len(),
        invalid: 0,
        known_differences: 0,
        verdict_disagreements: Vec::new(),
        line_agreements: 0,
        line_disagreements: Vec::new(),
    };
    for (c, p) in cases.iter().zip(&paths) {
        let Some(r) = reference.get(p) else { continue };
        // A mutant that is no longer well-formed is judged by neither (both refuse it).
        let Ok(doc) = Document::parse(c.text.as_bytes()) else {
            if r.valid {
                o.verdict_disagreements
                    .push(format!("{}: xmllint valid, invex cannot parse", c.label));
            }
            continue;
        };
        let ours = schema.check(&doc);
        if ours.is_empty() && !r.valid && libxml2_whitespace_quirk(r) {
            o.known_differences += 1;
            continue;
        }
        if ours.is_empty() != r.valid {
            o.verdict_disagreements.push(format!(
                "{} ({}): xmllint {}, invex {}: first xmllint error {:?} at line {:?}; invex {:?}",
                c.label,
                p.display(),
                if r.valid { "valid" } else { "invalid" },
                if ours.is_empty() { "valid" } else { "invalid" },
                r.first_message,
                r.first_line,
                ours.first()
                    .map(|f| (&f.message, doc.line_column(f.node).0)),
            ));
            continue;
        }
        if r.valid {
            continue;
        }
        if libxml2_whitespace_quirk(r) {
            // xmllint's first error is the white-space difference; invex's is a later one.
            o.known_differences += 1;
            continue;
        }
        o.invalid += 1;
        let our_line = doc.line_column(ours[0].node).0;
        if Some(our_line) == r.first_line {
            o.line_agreements += 1;
        } else {
            o.line_disagreements.push(format!(
                "{}: xmllint line {:?} {:?}; invex line {our_line} {}",
                c.label, r.first_line, r.first_message, ours[0].message
            ));
        }
    }
    o
}

#[test]
// One reason at a time: a second `ignore` would be a duplicate attribute (a warning).
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
#[cfg_attr(
    all(invex_no_xmllint, not(invex_no_corpus)),
    ignore = "xmllint not installed (Debian: libxml2-utils; .ci/run requires it)"
)]
fn schema_layer_agrees_with_xmllint_on_the_corpus_and_its_mutants() {
    let corpus = corpus();
    require_xmllint();
    let schema = Schema::ubl_2_1(&xsd_dir()).expect("the UBL 2.1 schemas compile");
    let mut files = Vec::new();
    xml_files(&corpus, &mut files);
    files.sort();
    let bases: Vec<Base> = files
        .iter()
        .filter_map(|f| {
            let bytes = std::fs::read(f).ok()?;
            let name = f.strip_prefix(&corpus).unwrap_or(f).display().to_string();
            Base::new(name, &bytes)
        })
        .collect();
    assert!(
        bases.len() > 1000,
        "only {} UBL documents in the corpus",
        bases.len()
    );

    let tmp = tempfile::tempdir().expect("temporary directory");
    // 1. The corpus as it is.
    let originals: Vec<Case> = bases
        .iter()
        .map(|b| Case {
            label: b.name.clone(),
            text: b.text.clone(),
            root: b.root,
        })
        .collect();
    let corpus_dir = tmp.path().join("corpus");
    std::fs::create_dir(&corpus_dir).unwrap();
    let c = judge(&schema, &originals, &corpus_dir);
    eprintln!(
        "xsd differential, corpus: {} documents, {} schema-invalid per both, verdicts disagree on {} (plus {} known libxml2 white-space differences), first-error line agrees on {}/{}",
        c.cases,
        c.invalid,
        c.verdict_disagreements.len(),
        c.known_differences,
        c.line_agreements,
        c.invalid
    );

    // 2. Mutants.
    let seed: u64 = std::env::var("INVEX_XSD_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(17);
    let count: usize = std::env::var("INVEX_XSD_MUTANTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6000);
    let mut rng = Rng(seed);
    let mut mutants = Vec::with_capacity(count);
    let mut by_kind: HashMap<&str, usize> = HashMap::new();
    let mut attempts = 0;
    while mutants.len() < count && attempts < count * 20 {
        attempts += 1;
        let base = &bases[rng.below(bases.len())];
        let kind = KINDS[rng.below(KINDS.len())];
        if let Some(text) = mutate(base, kind, &mut rng) {
            *by_kind.entry(kind).or_default() += 1;
            mutants.push(Case {
                label: format!("{} [{kind}]", base.name),
                text,
                root: base.root,
            });
        }
    }
    let mutant_dir = tmp.path().join("mutants");
    std::fs::create_dir(&mutant_dir).unwrap();
    let m = judge(&schema, &mutants, &mutant_dir);
    let mut kinds: Vec<_> = by_kind.into_iter().collect();
    kinds.sort();
    eprintln!(
        "xsd differential, mutants (seed {seed}): {} ({kinds:?}), {} invalid per both, verdicts disagree on {} (plus {} known libxml2 white-space differences), first-error line agrees on {}/{}",
        m.cases,
        m.invalid,
        m.verdict_disagreements.len(),
        m.known_differences,
        m.line_agreements,
        m.invalid
    );
    for d in c
        .verdict_disagreements
        .iter()
        .chain(&m.verdict_disagreements)
        .take(40)
    {
        eprintln!("  verdict: {d}");
    }
    for d in c
        .line_disagreements
        .iter()
        .chain(&m.line_disagreements)
        .take(40)
    {
        eprintln!("  line: {d}");
    }
    assert!(m.cases >= 5000, "only {} mutants", m.cases);
    assert!(
        c.verdict_disagreements.is_empty() && m.verdict_disagreements.is_empty(),
        "verdicts differ from xmllint on {} corpus documents and {} mutants",
        c.verdict_disagreements.len(),
        m.verdict_disagreements.len()
    );
    assert!(
        c.line_disagreements.is_empty() && m.line_disagreements.is_empty(),
        "the first offending node differs from xmllint's on {} corpus documents and {} mutants",
        c.line_disagreements.len(),
        m.line_disagreements.len()
    );
}

/// Without xmllint too: the example, test and snippet documents of the corpus, all
/// schema-valid per xmllint (CONFORMANCE.md), are valid for invex; the two Greek national
/// examples that xmllint refuses are refused at the same element.
#[test]
#[cfg_attr(
    invex_no_corpus,
    ignore = "no conformance corpus: set INVEX_CONFORMANCE or provide ../shared/conformance (.ci/run requires it)"
)]
fn corpus_examples_that_xmllint_accepts_are_schema_valid() {
    let corpus = corpus();
    let schema = Schema::ubl_2_1(&xsd_dir()).expect("the UBL 2.1 schemas compile");
    let mut files = Vec::new();
    for dir in [
        "en16931/examples",
        "en16931/testfiles",
        "peppol/examples",
        "peppol/snippets",
        "peppol/national-examples",
    ] {
        xml_files(&corpus.join(dir), &mut files);
    }
    files.sort();
    assert!(files.len() >= 75, "{} files", files.len());
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let doc = Document::parse(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let found = schema.check(&doc);
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("GR-base-example-") {
            assert_eq!(found.len(), 1, "{name}: {found:?}");
            assert!(
                found[0]
                    .message
                    .contains("found cac:AdditionalDocumentReference")
                    || found[0]
                        .message
                        .starts_with("cac:AdditionalDocumentReference is not expected after"),
                "{name}: {}",
                found[0].message
            );
        } else {
            assert!(found.is_empty(), "{}: {found:?}", f.display());
        }
    }
}
