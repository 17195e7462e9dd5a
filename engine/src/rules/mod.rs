//! Compiled rule packs and rule sets, and validation with Schematron semantics.
//!
//! A [`CompiledPack`] is plain data: compiled expressions, messages, flags. A [`RuleSet`]
//! stacks the packs of one profile (lowest first) with each higher pack's overrides
//! applied; it is `Send + Sync` and shared through `Arc` by every validating thread.
//!
//! A profile's rule set first checks the document element against the profile's document
//! types ([`crate::doctype`]): a document of another type gets the single finding
//! `INVEX-DOCTYPE` and no rule runs. Otherwise validation ([`RuleSet::validate`]), per pack:
//! 1. global lets (the pack's, then each pattern's) once, with the document node as context;
//! 2. per pattern, each rule's context nodes are selected once; a node is checked by the
//!    FIRST rule of the pattern whose context matches it, later rules skip it;
//! 3. per context node, the rule's lets in order, then its asserts (a finding when false)
//!    and reports (a finding when true);
//! 4. a dynamic error in a let, a context or a test becomes an `engine-error` finding
//!    (fatal) naming the rule, and validation goes on with the next rule.

mod compile;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

pub use compile::{build_ruleset, compile_dir, compile_pack, Compilation, CompiledProfile};

use crate::doctype::{DocumentGate, Scope, NO_PROFILE};
use crate::document::{Document, NodeId, ParseError};
use crate::pack::{DocumentTypeDef, OverrideAction};
use crate::report::{
    Counts, Finding, FindingLayer, PathBuilder, PrefixMap, Report, Severity, ENGINE_ERROR,
};
use crate::schema::Schema;
use crate::xpath::{DocumentNames, EvalError, Evaluator, Expr, RegionSelector, VarSlot};

/// A place in a pack file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourcePos {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for SourcePos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

#[derive(Debug)]
pub struct CompiledLet {
    pub name: String,
    pub slot: VarSlot,
    pub expr: Expr,
    /// The `value:` key.
    pub pos: SourcePos,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckKind {
    /// Fires when the test is false.
    Assert,
    /// Fires when the test is true.
    Report,
}

impl CheckKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::Assert => "assert",
            CheckKind::Report => "report",
        }
    }
}

/// An assert or report.
#[derive(Debug)]
pub struct CompiledCheck {
    /// Index of this check within its pack (0-based, in file order).
    pub index: usize,
    pub id: String,
    pub kind: CheckKind,
    /// The flag the pack gives it (a profile may re-flag it).
    pub flag: Severity,
    pub test: Expr,
    pub message: String,
    pub remediation: Option<String>,
    pub business_terms: Vec<String>,
    pub owner: Option<String>,
    /// Fixture documents that must not make the check fire.
    pub fixtures_pass: Vec<PathBuf>,
    /// Fixture documents that must make it fire.
    pub fixtures_fail: Vec<PathBuf>,
    /// The `id:` key.
    pub pos: SourcePos,
    /// The `test:` key.
    pub test_pos: SourcePos,
}

impl CompiledCheck {
    fn fires(&self, test_value: bool) -> bool {
        match self.kind {
            CheckKind::Assert => !test_value,
            CheckKind::Report => test_value,
        }
    }
}

#[derive(Debug)]
pub struct CompiledRule {
    pub context_source: String,
    pub context: Expr,
    pub lets: Vec<CompiledLet>,
    pub checks: Vec<CompiledCheck>,
    /// The rule's first key.
    pub pos: SourcePos,
}

#[derive(Debug)]
pub struct CompiledPattern {
    pub id: String,
    pub title: Option<String>,
    pub file: PathBuf,
    pub rules: Vec<CompiledRule>,
}

#[derive(Clone, Debug)]
pub struct CompiledOverride {
    pub rule: String,
    pub action: OverrideAction,
    pub flag: Option<Severity>,
    /// The `rule:` key.
    pub pos: SourcePos,
}

/// A compiled rule pack: plain data.
#[derive(Debug)]
pub struct CompiledPack {
    pub id: String,
    pub version: String,
    pub title: String,
    pub description: Option<String>,
    /// `<root>/<id>/<version>`.
    pub dir: PathBuf,
    /// Its `pack.yaml`.
    pub file: PathBuf,
    /// Prefix → URI, in declaration order.
    pub namespaces: Vec<(String, String)>,
    pub prefixes: PrefixMap,
    /// Pack lets, then every pattern's lets, in order.
    pub global_lets: Vec<CompiledLet>,
    pub patterns: Vec<CompiledPattern>,
    pub overrides: Vec<CompiledOverride>,
    /// Variable slots an evaluator needs for this pack.
    pub variable_count: usize,
    pub check_count: usize,
    /// A schema pack's schema layer, checked before the pack's patterns.
    pub schema: Option<CompiledSchema>,
}

/// The schema layer of a schema pack.
#[derive(Debug)]
pub struct CompiledSchema {
    pub schema: Arc<Schema>,
    /// One rule per kind of schema finding (the loader checked that every kind has one).
    pub rules: Vec<SchemaRule>,
}

impl CompiledSchema {
    /// The rule of a kind of finding.
    pub fn rule(&self, id: &str) -> Option<&SchemaRule> {
        self.rules.iter().find(|r| r.id == id)
    }
}

/// A kind of schema finding as a rule: always fatal.
#[derive(Debug)]
pub struct SchemaRule {
    pub id: String,
    pub title: String,
    pub remediation: String,
    pub owner: Option<String>,
    pub fixtures_pass: Vec<PathBuf>,
    pub fixtures_fail: Vec<PathBuf>,
    /// Its `id:` in `pack.yaml`.
    pub pos: SourcePos,
}

impl CompiledPack {
    /// `id@version`.
    pub fn reference(&self) -> String {
        format!("{}@{}", self.id, self.version)
    }

    /// Every check with its pattern and rule, in evaluation order.
    pub fn checks(
        &self,
    ) -> impl Iterator<Item = (&CompiledPattern, &CompiledRule, &CompiledCheck)> + '_ {
        self.patterns.iter().flat_map(|p| {
            p.rules
                .iter()
                .flat_map(move |r| r.checks.iter().map(move |c| (p, r, c)))
        })
    }

    /// Its rules: the checks of its patterns and the rules of its schema layer.
    pub fn rule_count(&self) -> usize {
        self.check_count + self.schema.as_ref().map_or(0, |s| s.rules.len())
    }

    pub fn check(&self, id: &str) -> Option<&CompiledCheck> {
        self.checks().map(|(_, _, c)| c).find(|c| c.id == id)
    }

    /// Every compiled expression of the pack with a label (for lint).
    pub fn expressions(&self) -> Vec<(String, &SourcePos, &Expr)> {
        let mut out = Vec::new();
        for l in &self.global_lets {
            out.push((format!("let ${}", l.name), &l.pos, &l.expr));
        }
        for p in &self.patterns {
            for r in &p.rules {
                let label = match r.checks.first() {
                    Some(c) => format!("context of the rule of {}", c.id),
                    None => "rule context".to_string(),
                };
                out.push((label, &r.pos, &r.context));
                for l in &r.lets {
                    out.push((format!("let ${}", l.name), &l.pos, &l.expr));
                }
                for c in &r.checks {
                    out.push((format!("test of {}", c.id), &c.test_pos, &c.test));
                }
            }
        }
        out
    }
}

/// One pack of a rule set with the flags the profile gives its checks.
#[derive(Debug)]
pub struct Layer {
    pub pack: Arc<CompiledPack>,
    /// `id@version`.
    pub reference: String,
    /// Effective flag per check index; `None` when a higher pack disabled or replaced it.
    pub effective: Vec<Option<Severity>>,
    /// Per pattern, per rule: (position in the rule's checks, flag) of the active checks.
    active: Vec<Vec<Vec<(usize, Severity)>>>,
}

impl Layer {
    /// A layer with every check at its own flag.
    fn new(pack: Arc<CompiledPack>) -> Layer {
        let mut effective = vec![None; pack.check_count];
        for (_, _, c) in pack.checks() {
            effective[c.index] = Some(c.flag);
        }
        let mut layer = Layer {
            reference: pack.reference(),
            pack,
            effective,
            active: Vec::new(),
        };
        layer.finish();
        layer
    }

    /// Recompute the active checks after `effective` changed.
    fn finish(&mut self) {
        let effective = &self.effective;
        self.active = self
            .pack
            .patterns
            .iter()
            .map(|p| {
                p.rules
                    .iter()
                    .map(|r| {
                        r.checks
                            .iter()
                            .enumerate()
                            .filter_map(|(i, c)| effective[c.index].map(|f| (i, f)))
                            .collect()
                    })
                    .collect()
            })
            .collect();
    }
}

/// The compiled packs of a profile, ready to validate documents. `Send + Sync`.
#[derive(Debug)]
pub struct RuleSet {
    profile: String,
    title: Option<String>,
    layers: Vec<Layer>,
    /// The document types the profile validates (none for a pack's own rule set).
    gate: Option<DocumentGate>,
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RuleSet>();
    assert_send_sync::<CompiledPack>();
};

/// A document could not be validated at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValidateError {
    #[error("the document is not well-formed XML: {0}")]
    Parse(#[from] ParseError),
}

impl RuleSet {
    /// A rule set of one pack alone (its overrides, which concern lower packs, are not
    /// applied). Used to run a pack's fixtures.
    pub fn single(pack: Arc<CompiledPack>) -> RuleSet {
        RuleSet {
            profile: pack.reference(),
            title: Some(pack.title.clone()),
            layers: vec![Layer::new(pack)],
            gate: None,
        }
    }

    /// The rule set for a document no installed profile takes: no packs, and a gate that
    /// refuses every document naming what the installed profiles take (`installed`).
    pub fn no_profile(
        installed: Vec<DocumentTypeDef>,
        declared: Arc<[DocumentTypeDef]>,
    ) -> RuleSet {
        RuleSet {
            profile: NO_PROFILE.to_string(),
            title: None,
            layers: Vec::new(),
            gate: Some(DocumentGate {
                scope: Scope::Installed,
                accepted: installed,
                declared,
            }),
        }
    }

    /// The document-type gate, when the rule set is a profile's.
    pub fn gate(&self) -> Option<&DocumentGate> {
        self.gate.as_ref()
    }

    /// The profile, `id@version`.
    pub fn profile(&self) -> &str {
        &self.profile
    }

    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// Every pack, `id@version`, lowest first.
    pub fn rules_version(&self) -> Vec<String> {
        self.layers.iter().map(|l| l.reference.clone()).collect()
    }

    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// The packs, lowest first.
    pub fn packs(&self) -> impl Iterator<Item = &CompiledPack> + '_ {
        self.layers.iter().map(|l| &*l.pack)
    }

    /// The flag a check runs with in this rule set (`None`: disabled or replaced).
    pub fn effective_flag(&self, pack: &str, rule_id: &str) -> Option<Severity> {
        let layer = self.layers.iter().find(|l| l.reference == pack)?;
        let check = layer.pack.check(rule_id)?;
        layer.effective[check.index]
    }

    /// Parse `bytes` and validate the document.
    pub fn validate_bytes(&self, bytes: &[u8]) -> Result<Report, ValidateError> {
        let start = Instant::now();
        let doc = Document::parse(bytes)?;
        let mut report = self.run(&doc, REGION_NODES, usize::MAX);
        report.duration_us = elapsed_us(start);
        Ok(report)
    }

    /// Validate a parsed document.
    pub fn validate(&self, doc: &Document) -> Report {
        self.validate_listing(doc, usize::MAX)
    }

    /// Validate a parsed document, listing at most `max_findings` findings: the rest are
    /// counted (and decide the verdict) but not listed, and cost no location or message.
    /// Servers use it so that memory stays bounded whatever a document triggers.
    pub fn validate_listing(&self, doc: &Document, max_findings: usize) -> Report {
        let start = Instant::now();
        let mut report = self.run(doc, REGION_NODES, max_findings);
        report.duration_us = elapsed_us(start);
        report
    }

    /// Validate with rules evaluated region by region, `region_nodes` nodes at a time (see
    /// [`REGION_NODES`]). The report does not depend on the region size; tests check that
    /// with tiny regions.
    #[doc(hidden)]
    pub fn validate_in_regions(&self, doc: &Document, region_nodes: usize) -> Report {
        self.run(doc, region_nodes, usize::MAX)
    }

    fn run(&self, doc: &Document, region_nodes: usize, max_findings: usize) -> Report {
        if let Some(gate) = self.gate.as_ref().filter(|g| !g.admits(doc)) {
            // Rules written for other document types find nothing to check in this one:
            // running them would call it valid.
            return Report::new(
                self.profile.clone(),
                self.rules_version(),
                vec![gate.refusal(doc)],
                0,
            );
        }
        let mut run = Run {
            doc,
            paths: PathBuilder::new(doc),
            findings: Vec::new(),
            max_findings,
            omitted: Counts::default(),
            claimed: Claimed::new(doc.len()),
            region_nodes: region_nodes.max(1),
        };
        let mut names = DocumentNames::default();
        for layer in &self.layers {
            if let Some(schema) = &layer.pack.schema {
                // A document element the schema does not declare is not a document the
                // rules above it were written for: they would only add noise. Any other
                // schema violation still lets every rule run, so that a sender sees every
                // problem at once.
                if run.schema(layer, schema) {
                    break;
                }
            }
            if !layer.pack.patterns.is_empty() {
                names = run.layer(layer, names);
            }
        }
        Report::new(self.profile.clone(), self.rules_version(), run.findings, 0)
            .with_omitted(run.omitted)
    }
}

/// Nodes per region of a document when a pack's rules are evaluated. A large document is
/// checked one region at a time, each rule of the pack on the context nodes inside the
/// region, so a region's part of the node arena stays in the CPU cache while hundreds of
/// rules visit it; rule by rule over the whole document, every rule would stream the
/// entire arena from memory again (a 10,000-line invoice has about 650,000 nodes, 23 MB).
/// About 300 KB of nodes: a typical invoice is one region.
const REGION_NODES: usize = 8192;

fn elapsed_us(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// Nodes already checked by a rule of the current pattern.
struct Claimed {
    words: Vec<u64>,
    touched: Vec<usize>,
}

impl Claimed {
    fn new(nodes: usize) -> Claimed {
        Claimed {
            words: vec![0; nodes.div_ceil(64).max(1)],
            touched: Vec::new(),
        }
    }

    /// Claim `n`; false when a previous rule already did.
    fn claim(&mut self, n: NodeId) -> bool {
        let i = n.0 as usize;
        let (w, b) = (i / 64, 1u64 << (i % 64));
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        let word = &mut self.words[w];
        if *word & b != 0 {
            return false;
        }
        if *word == 0 {
            self.touched.push(w);
        }
        *word |= b;
        true
    }

    fn reset(&mut self) {
        for w in self.touched.drain(..) {
            self.words[w] = 0;
        }
    }
}

struct Run<'d> {
    doc: &'d Document,
    paths: PathBuilder<'d>,
    findings: Vec<Finding>,
    /// Findings listed at most; the rest are only counted in `omitted`.
    max_findings: usize,
    omitted: Counts,
    claimed: Claimed,
    region_nodes: usize,
}

/// One rule's context nodes within a layer's selection: `nodes[next..end]` are still to
/// be checked.
struct Span {
    next: usize,
    end: usize,
}

/// The context nodes of a rule selected region by region: `nodes[next..]` are still to
/// be checked (selected in an earlier region, after that region's end).
struct Queue<'e> {
    selector: RegionSelector<'e>,
    nodes: Vec<NodeId>,
    next: usize,
}

impl<'e> Queue<'e> {
    fn new(selector: RegionSelector<'e>) -> Self {
        Queue {
            selector,
            nodes: Vec::new(),
            next: 0,
        }
    }

    /// Add a region's selection, keeping the pending nodes in document order.
    fn push(&mut self, selected: &[NodeId]) {
        self.nodes.drain(..self.next);
        self.next = 0;
        let pending = self.nodes.len();
        self.nodes.extend_from_slice(selected);
        // A node selected from an earlier region can follow one of this region's (a
        // named element nested in another of its name), or be selected again (through
        // another alternative of the context).
        if pending > 0 && !self.nodes.windows(2).all(|w| w[0] < w[1]) {
            self.nodes.sort_unstable();
            self.nodes.dedup();
        }
    }
}

fn to_u32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

impl<'d> Run<'d> {
    fn layer(&mut self, layer: &Layer, names: DocumentNames) -> DocumentNames {
        let pack = &*layer.pack;
        let doc = self.doc;
        let mut ev = Evaluator::with_names(doc, pack.variable_count, names);
        let root = doc.root();
        // Global lets are evaluated on first use, as XSLT does: an error surfaces as an
        // engine-error of the rule that uses the variable, never for an unused one.
        for l in &pack.global_lets {
            ev.set_variable_lazy(l.slot, &l.expr);
        }
        let first_finding = self.findings.len();
        // Findings are reordered at the end to what rule-by-rule evaluation gives: by rule
        // (in pack order), then document order. `batches` records which rule (its index in
        // the pack) produced which run of findings.
        let mut batches: Vec<(usize, std::ops::Range<usize>)> = Vec::new();

        let regions = doc.len().div_ceil(self.region_nodes).max(1);
        // Every rule's context nodes, in one buffer; or, for a rule whose context can be
        // selected region by region on a large document, its queue.
        let mut nodes: Vec<NodeId> = Vec::new();
        let mut spans: Vec<Span> = Vec::new();
        let mut queues: Vec<Option<Queue>> = Vec::new();
        let mut selected: Vec<NodeId> = Vec::new();
        for (pattern, active_rules) in pack.patterns.iter().zip(&layer.active) {
            let shadowing = pattern.rules.len() > 1;
            let last = pattern.rules.len().saturating_sub(1);
            for (ri, (rule, active)) in pattern.rules.iter().zip(active_rules).enumerate() {
                let start = nodes.len();
                // A rule without active checks still claims its nodes (Schematron: the
                // rule matched) when a later rule of the pattern could match them.
                let claims = shadowing && ri < last;
                let mut queue = None;
                if !active.is_empty() || claims {
                    let from = self.findings.len();
                    let by_region = if regions > 1 {
                        ev.region_selector(&rule.context)
                    } else {
                        Ok(None)
                    };
                    let whole = match by_region {
                        Ok(Some(selector)) => {
                            queue = Some(Queue::new(selector));
                            Ok(false)
                        }
                        Ok(None) => ev
                            .select_matching_into(&rule.context, root, &mut selected)
                            .map(|()| true),
                        Err(e) => Err(e),
                    };
                    match whole {
                        Ok(false) => {}
                        Ok(true) => {
                            // Regions are walked in node order, so a rule's nodes must be
                            // too (paths yield document order; this guards the invariant).
                            if !selected.is_sorted() {
                                selected.sort_unstable();
                                selected.dedup();
                            }
                            nodes.extend_from_slice(&selected);
                        }
                        Err(e) => {
                            self.context_failed(layer, rule, active, &e);
                            batches.push((spans.len(), from..self.findings.len()));
                        }
                    }
                }
                spans.push(Span {
                    next: start,
                    end: nodes.len(),
                });
                queues.push(queue);
            }
        }

        for region in 0..regions {
            let bound = if region + 1 == regions {
                usize::MAX
            } else {
                (region + 1) * self.region_nodes
            };
            let start = region * self.region_nodes;
            if regions > 1 {
                // Fetch the region in address order first: tree walks in it then hit the
                // cache instead of waiting on memory node by node.
                std::hint::black_box(doc.warm(start..start + self.region_nodes));
            }
            let mut k = 0;
            for (pattern, active_rules) in pack.patterns.iter().zip(&layer.active) {
                let shadowing = pattern.rules.len() > 1;
                for (rule, active) in pattern.rules.iter().zip(active_rules) {
                    let from = self.findings.len();
                    if let Some(q) = queues[k].as_mut() {
                        let end = bound.min(doc.len());
                        let range = to_u32(start)..to_u32(end);
                        match ev.select_matching_in_range(&q.selector, range, &mut selected) {
                            Ok(()) => q.push(&selected),
                            Err(e) => {
                                // Cannot happen with lenient predicates and child steps;
                                // reported as a failed context, like a whole selection,
                                // once: the rule selects nothing more.
                                self.context_failed(layer, rule, active, &e);
                                *q = Queue::new(RegionSelector::empty());
                            }
                        }
                    }
                    // This rule's nodes still to check: `list[*next..]`.
                    let (list, next): (&[NodeId], &mut usize) = match queues[k].as_mut() {
                        Some(q) => (&q.nodes, &mut q.next),
                        None => {
                            let span = &mut spans[k];
                            (&nodes[..span.end], &mut span.next)
                        }
                    };
                    while let Some(&node) = list.get(*next) {
                        if node.0 as usize >= bound {
                            break;
                        }
                        *next += 1;
                        if shadowing && !self.claimed.claim(node) {
                            continue;
                        }
                        if !active.is_empty() {
                            self.rule_at(layer, &mut ev, rule, active, node);
                        }
                    }
                    if self.findings.len() > from {
                        batches.push((k, from..self.findings.len()));
                    }
                    k += 1;
                }
                // Claims only matter within a pattern, and a node lies in one region.
                self.claimed.reset();
            }
        }
        self.reorder(first_finding, batches);
        ev.into_names()
    }

    /// Check the document against a schema pack's schema; its findings are fatal, listed
    /// within the same bound as every other finding. True when the document element
    /// itself is refused.
    fn schema(&mut self, layer: &Layer, compiled: &CompiledSchema) -> bool {
        let room = self.max_findings.saturating_sub(self.findings.len());
        let (found, omitted) = compiled.schema.check_listing(self.doc, room);
        self.omitted.fatal += omitted;
        for f in found {
            let id = f.class.rule_id();
            let rule = compiled.rule(id);
            let location = self.paths.location(f.node, &layer.pack.prefixes);
            self.findings.push(Finding {
                rule_id: id.to_string(),
                severity: Severity::Fatal,
                location,
                message: f.message,
                remediation: rule.map(|r| r.remediation.clone()).unwrap_or_default(),
                business_terms: Vec::new(),
                pack: layer.reference.clone(),
                owner: rule.and_then(|r| r.owner.clone()),
                about_rule: None,
                layer: FindingLayer::Schema,
            });
        }
        !compiled.schema.declares_root(self.doc)
    }

    /// A rule's context could not be selected: an engine error for each active check, at
    /// the document element.
    fn context_failed(
        &mut self,
        layer: &Layer,
        rule: &CompiledRule,
        active: &[(usize, Severity)],
        e: &EvalError,
    ) {
        let at = self.doc.document_element();
        for &(i, _) in active {
            self.engine_error(layer, at, &rule.checks[i].id, Some("context"), e);
        }
    }

    /// Put the findings from `first` on in rule order (stable: document order within a
    /// rule), given the runs each rule produced.
    fn reorder(&mut self, first: usize, mut batches: Vec<(usize, std::ops::Range<usize>)>) {
        if batches.windows(2).all(|w| w[0].0 <= w[1].0) {
            return;
        }
        batches.sort_by_key(|(rule, _)| *rule);
        let mut found: Vec<Option<Finding>> = self.findings.drain(first..).map(Some).collect();
        for (_, range) in batches {
            for i in range {
                if let Some(f) = found[i - first].take() {
                    self.findings.push(f);
                }
            }
        }
    }

    fn rule_at(
        &mut self,
        layer: &Layer,
        ev: &mut Evaluator<'_>,
        rule: &CompiledRule,
        active: &[(usize, Severity)],
        node: NodeId,
    ) {
        for l in &rule.lets {
            match ev.eval(&l.expr, node) {
                Ok(v) => ev.set_variable(l.slot, v),
                Err(e) => {
                    let what = format!("let ${}", l.name);
                    for &(i, _) in active {
                        self.engine_error(layer, node, &rule.checks[i].id, Some(&what), &e);
                    }
                    return;
                }
            }
        }
        for &(i, flag) in active {
            let c = &rule.checks[i];
            match ev.eval_boolean(&c.test, node) {
                Ok(v) => {
                    if c.fires(v) {
                        self.fire(layer, c, flag, node);
                    }
                }
                Err(e) => self.engine_error(layer, node, &c.id, None, &e),
            }
        }
    }

    /// Whether one more finding of `severity` is listed (else it is counted as omitted).
    fn lists(&mut self, severity: Severity) -> bool {
        if self.findings.len() < self.max_findings {
            return true;
        }
        self.omitted.add(severity);
        false
    }

    fn fire(&mut self, layer: &Layer, c: &CompiledCheck, flag: Severity, node: NodeId) {
        if !self.lists(flag) {
            return;
        }
        let location = self.paths.location(node, &layer.pack.prefixes);
        self.findings.push(Finding {
            rule_id: c.id.clone(),
            severity: flag,
            location,
            message: c.message.clone(),
            remediation: c.remediation.clone().unwrap_or_default(),
            business_terms: c.business_terms.clone(),
            pack: layer.reference.clone(),
            owner: c.owner.clone(),
            about_rule: None,
            layer: FindingLayer::Rules,
        });
    }

    /// `about`: the rule id (or `$let` for a global let); `part`: which part of the rule
    /// failed when not its test.
    fn engine_error(
        &mut self,
        layer: &Layer,
        node: NodeId,
        about: &str,
        part: Option<&str>,
        e: &EvalError,
    ) {
        if !self.lists(Severity::Fatal) {
            return;
        }
        let location = self.paths.location(node, &layer.pack.prefixes);
        let what = match part {
            Some(p) => format!("{about} ({p})"),
            None => about.to_string(),
        };
        let (message, remediation) = if about.starts_with('$') {
            (
                format!(
                    "global variable {about} of pack {} could not be evaluated: {}: {}",
                    layer.reference, e.code, e.message
                ),
                format!(
                    "The variable is treated as empty; rules that use it may be wrong. Report this to the maintainers of {}.",
                    layer.reference
                ),
            )
        } else {
            (
                format!(
                    "rule {what} could not be evaluated here: {}: {}",
                    e.code, e.message
                ),
                format!(
                    "The rule was not checked at this node. This is a defect of the rule or an unexpected document shape; report it to the maintainers of {}.",
                    layer.reference
                ),
            )
        };
        self.findings.push(Finding {
            rule_id: ENGINE_ERROR.to_string(),
            severity: Severity::Fatal,
            location,
            message,
            remediation,
            business_terms: Vec::new(),
            pack: layer.reference.clone(),
            owner: None,
            about_rule: Some(about.to_string()),
            layer: FindingLayer::Rules,
        });
    }
}
