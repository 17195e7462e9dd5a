//! Compiling packs and profiles.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::doctype::{DocumentGate, Scope};
use crate::pack::yamlpos::{Pos, Seg};
use crate::pack::{
    self, Diagnostic, DocumentTypeDef, LetDef, LoadError, OverrideAction, PackSource, PatternDef,
    ProfileDef, RuleDef, Source, SourceTree,
};
use crate::report::PrefixMap;
use crate::xpath::{self, CompileError, StaticContext};

use super::{
    CheckKind, CompiledCheck, CompiledLet, CompiledOverride, CompiledPack, CompiledPattern,
    CompiledRule, CompiledSchema, Layer, RuleSet, SchemaRule, SourcePos,
};

fn source_pos(file: &Path, pos: Pos) -> SourcePos {
    SourcePos {
        file: file.to_path_buf(),
        line: pos.line,
        column: pos.column,
    }
}

fn xpath_message(what: &str, src: &str, e: &CompileError) -> String {
    let src_one_line = src.split_whitespace().collect::<Vec<_>>().join(" ");
    match e.offset {
        Some(off) => format!(
            "invalid XPath in `{what}`: {} (at offset {off} of `{src_one_line}`)",
            e.message
        ),
        None => format!(
            "invalid XPath in `{what}`: {} (in `{src_one_line}`)",
            e.message
        ),
    }
}

/// Compile `lets` into `sc` (each expression sees the lets before it), appending to `out`.
fn compile_lets<T>(
    source: &Source<T>,
    base: &[Seg<'_>],
    lets: &[LetDef],
    sc: &mut StaticContext,
    out: &mut Vec<CompiledLet>,
    diags: &mut Vec<Diagnostic>,
) {
    for (i, l) in lets.iter().enumerate() {
        let mut path = base.to_vec();
        path.push(Seg::Index(i));
        path.push(Seg::Key("value"));
        let compiled = xpath::compile(&l.value, sc);
        // Declared even when the expression is bad, so later references still resolve.
        let slot = sc.declare_variable(&l.name);
        match compiled {
            Ok(expr) => {
                sc.bind_variable(slot, &expr);
                out.push(CompiledLet {
                    name: l.name.clone(),
                    slot,
                    expr,
                    pos: source_pos(&source.file, source.positions.locate(&path)),
                })
            }
            Err(e) => diags.push(source.at(&path, xpath_message("let", &l.value, &e))),
        }
    }
}

/// Compile one loaded pack. Returns the pack when every expression compiled, and the
/// diagnostics of the expressions that did not.
pub fn compile_pack(src: &PackSource) -> (Option<CompiledPack>, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let def = &src.pack.def;
    let mut sc = StaticContext::new();
    for (prefix, uri) in def.namespaces.iter() {
        sc.add_namespace(prefix, uri);
    }

    let mut global_lets = Vec::new();
    compile_lets(
        &src.pack,
        &[Seg::Key("lets")],
        &def.lets,
        &mut sc,
        &mut global_lets,
        &mut diags,
    );
    for p in &src.patterns {
        compile_lets(
            p,
            &[Seg::Key("lets")],
            &p.def.lets,
            &mut sc,
            &mut global_lets,
            &mut diags,
        );
    }
    let mut variable_count = sc.variable_count();

    let fixtures_dir = src.fixtures_dir();
    // Every rule compiles against the pack's lets alone, independently of the others:
    // parsing XPath is most of the time a pack takes, so the rules are compiled in
    // parallel, then put together in file order (check indexes and diagnostics as a
    // sequential pass would give them).
    let jobs: Vec<(usize, usize)> = src
        .patterns
        .iter()
        .enumerate()
        .flat_map(|(pi, p)| (0..p.def.rules.len()).map(move |ri| (pi, ri)))
        .collect();
    let compiled: Vec<RuleOutcome> = parallel_map(&jobs, |&(pi, ri)| {
        let p = &src.patterns[pi];
        compile_rule(p, ri, &p.def.rules[ri], &sc, &fixtures_dir)
    });
    let mut compiled = compiled.into_iter();
    let mut patterns = Vec::new();
    for p in &src.patterns {
        let mut rules = Vec::new();
        for outcome in compiled.by_ref().take(p.def.rules.len()) {
            diags.extend(outcome.diagnostics);
            variable_count = variable_count.max(outcome.variable_count);
            rules.extend(outcome.rule);
        }
        patterns.push(CompiledPattern {
            id: p.def.pattern.clone(),
            title: p.def.title.clone(),
            file: p.file.clone(),
            rules,
        });
    }
    // Check indexes in file order.
    let mut check_index = 0usize;
    for c in patterns
        .iter_mut()
        .flat_map(|p| p.rules.iter_mut())
        .flat_map(|r| r.checks.iter_mut())
    {
        c.index = check_index;
        check_index += 1;
    }

    let overrides = def
        .overrides
        .iter()
        .enumerate()
        .map(|(i, o)| CompiledOverride {
            rule: o.rule.clone(),
            action: o.action,
            flag: o.flag,
            pos: source_pos(
                &src.pack.file,
                src.pack.positions.locate(&[
                    Seg::Key("overrides"),
                    Seg::Index(i),
                    Seg::Key("rule"),
                ]),
            ),
        })
        .collect();

    if !diags.is_empty() {
        return (None, diags);
    }
    let namespaces = def.namespaces.0.clone();
    let prefixes = PrefixMap::new(namespaces.iter().map(|(p, u)| (p.as_str(), u.as_str())));
    let schema = compile_schema(src);
    let pack = CompiledPack {
        id: def.pack.clone(),
        version: def.version.clone(),
        title: def.title.clone(),
        description: def.description.clone(),
        dir: src.dir.clone(),
        file: src.pack.file.clone(),
        namespaces,
        prefixes,
        global_lets,
        patterns,
        overrides,
        variable_count,
        check_count: check_index,
        schema,
    };
    (Some(pack), diags)
}

/// `f` over `items`, results in the order of `items`, on as many threads as there are
/// cores (item `i` on thread `i % threads`, which spreads long and short items alike).
/// Plain scoped threads rather than a shared pool: callers may be pool workers that wait
/// for this (a profile compiled on first use while documents are validated in parallel),
/// and work queued on the pool they block would never run.
fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let f = &f;
    let mut indexed: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    items
                        .iter()
                        .enumerate()
                        .skip(t)
                        .step_by(threads)
                        .map(|(i, item)| (i, f(item)))
                        .collect::<Vec<(usize, R)>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    indexed.sort_by_key(|(i, _)| *i);
    indexed.into_iter().map(|(_, r)| r).collect()
}

/// One rule of a pattern, compiled against the pack's static context `sc`.
struct RuleOutcome {
    /// None when its context did not compile.
    rule: Option<CompiledRule>,
    diagnostics: Vec<Diagnostic>,
    /// Variable slots with the rule's own lets.
    variable_count: usize,
}

fn compile_rule(
    p: &Source<PatternDef>,
    ri: usize,
    r: &RuleDef,
    sc: &StaticContext,
    fixtures_dir: &Path,
) -> RuleOutcome {
    let mut diags = Vec::new();
    let rule_path = [Seg::Key("rules"), Seg::Index(ri)];
    let context_path = [Seg::Key("rules"), Seg::Index(ri), Seg::Key("context")];
    let context = match xpath::compile_pattern(&r.context, sc) {
        Ok(e) => Some(e),
        Err(e) => {
            diags.push(p.at(&context_path, xpath_message("context", &r.context, &e)));
            None
        }
    };
    let mut rsc = sc.clone();
    let mut lets = Vec::new();
    compile_lets(
        p,
        &[Seg::Key("rules"), Seg::Index(ri), Seg::Key("lets")],
        &r.lets,
        &mut rsc,
        &mut lets,
        &mut diags,
    );
    let variable_count = rsc.variable_count();
    let mut checks = Vec::new();
    for (kind, key, list) in [
        (CheckKind::Assert, "asserts", &r.asserts),
        (CheckKind::Report, "reports", &r.reports),
    ] {
        for (ci, c) in list.iter().enumerate() {
            let at = |k: &'static str| {
                [
                    Seg::Key("rules"),
                    Seg::Index(ri),
                    Seg::Key(key),
                    Seg::Index(ci),
                    Seg::Key(k),
                ]
            };
            let test = match xpath::compile(&c.test, &rsc) {
                Ok(e) => e,
                Err(e) => {
                    diags.push(p.at(&at("test"), xpath_message("test", &c.test, &e)));
                    continue;
                }
            };
            checks.push(CompiledCheck {
                // Numbered in file order once every rule is compiled.
                index: 0,
                id: c.id.clone(),
                kind,
                flag: c.flag,
                test,
                message: c.message.trim().to_string(),
                remediation: c.remediation.as_ref().map(|r| r.trim().to_string()),
                business_terms: c.business_terms.clone(),
                owner: c.owner.clone(),
                fixtures_pass: c
                    .fixtures
                    .pass
                    .iter()
                    .map(|f| fixtures_dir.join(f))
                    .collect(),
                fixtures_fail: c
                    .fixtures
                    .fail
                    .iter()
                    .map(|f| fixtures_dir.join(f))
                    .collect(),
                pos: source_pos(&p.file, p.positions.locate(&at("id"))),
                test_pos: source_pos(&p.file, p.positions.locate(&at("test"))),
            });
        }
    }
    RuleOutcome {
        rule: context.map(|context| CompiledRule {
            context_source: r.context.trim().to_string(),
            context,
            lets,
            checks,
            pos: source_pos(&p.file, p.positions.locate(&rule_path)),
        }),
        diagnostics: diags,
        variable_count,
    }
}

/// The schema layer of a schema pack: the schema the loader compiled and the rules its
/// findings carry.
fn compile_schema(src: &PackSource) -> Option<CompiledSchema> {
    let (def, loaded) = (src.pack.def.schema.as_ref()?, src.schema.as_ref()?);
    let fixtures_dir = src.fixtures_dir();
    let rules = def
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| SchemaRule {
            id: r.id.clone(),
            title: r.title.trim().to_string(),
            remediation: r.remediation.trim().to_string(),
            owner: r.owner.clone(),
            fixtures_pass: r
                .fixtures
                .pass
                .iter()
                .map(|f| fixtures_dir.join(f))
                .collect(),
            fixtures_fail: r
                .fixtures
                .fail
                .iter()
                .map(|f| fixtures_dir.join(f))
                .collect(),
            pos: source_pos(
                &src.pack.file,
                src.pack.positions.locate(&[
                    Seg::Key("schema"),
                    Seg::Key("rules"),
                    Seg::Index(i),
                    Seg::Key("id"),
                ]),
            ),
        })
        .collect();
    Some(CompiledSchema {
        schema: loaded.schema.clone(),
        rules,
    })
}

/// Stack `packs` (lowest first) into a rule set, applying each higher pack's overrides to
/// the packs below it. An override whose target no lower pack defines is an error at the
/// override.
pub fn build_ruleset(
    profile: String,
    title: Option<String>,
    packs: Vec<Arc<CompiledPack>>,
    gate: Option<DocumentGate>,
) -> Result<RuleSet, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut layers: Vec<Layer> = packs.into_iter().map(Layer::new).collect();
    for k in 1..layers.len() {
        let (lower, upper) = layers.split_at_mut(k);
        let upper = &upper[0];
        for o in &upper.pack.overrides {
            let mut found = false;
            for layer in lower.iter_mut() {
                let targets: Vec<usize> = layer
                    .pack
                    .checks()
                    .filter(|(_, _, c)| c.id == o.rule)
                    .map(|(_, _, c)| c.index)
                    .collect();
                for idx in targets {
                    found = true;
                    match o.action {
                        OverrideAction::Replace | OverrideAction::Disable => {
                            layer.effective[idx] = None
                        }
                        OverrideAction::Reflag => {
                            if layer.effective[idx].is_some() {
                                layer.effective[idx] = o.flag;
                            }
                        }
                    }
                }
            }
            if !found {
                let below: Vec<&str> = lower.iter().map(|l| l.reference.as_str()).collect();
                diags.push(Diagnostic {
                    file: o.pos.file.clone(),
                    line: o.pos.line,
                    column: o.pos.column,
                    message: format!(
                        "unknown override target `{}`: no pack below {} in profile {} defines it (below: {})",
                        o.rule,
                        upper.reference,
                        profile,
                        if below.is_empty() { "none".to_string() } else { below.join(", ") }
                    ),
                });
            }
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    for layer in &mut layers {
        layer.finish();
    }
    Ok(RuleSet {
        profile,
        title,
        layers,
        gate,
    })
}

/// A profile of a compiled directory.
#[derive(Clone)]
pub struct CompiledProfile {
    pub def: ProfileDef,
    pub rules: Arc<RuleSet>,
}

impl CompiledProfile {
    pub fn reference(&self) -> String {
        self.def.reference()
    }
}

/// Everything compiled from a rule-pack directory.
pub struct Compilation {
    pub root: PathBuf,
    pub sources: SourceTree,
    /// Packs whose expressions all compiled, sorted by id then version.
    pub packs: Vec<Arc<CompiledPack>>,
    /// Profiles whose packs all compiled and whose overrides resolve.
    pub profiles: Vec<CompiledProfile>,
    /// Every document type `profiles.yaml` declares.
    pub document_types: Arc<[DocumentTypeDef]>,
    /// Every error found (loading, compiling, profiles). Empty when all is well.
    pub diagnostics: Vec<Diagnostic>,
}

impl Compilation {
    pub fn is_ok(&self) -> bool {
        self.diagnostics.is_empty()
    }

    /// The compilation when it has no errors.
    pub fn into_result(self) -> Result<Compilation, LoadError> {
        if self.diagnostics.is_empty() {
            Ok(self)
        } else {
            Err(LoadError {
                diagnostics: self.diagnostics,
            })
        }
    }

    pub fn pack(&self, reference: &str) -> Option<&Arc<CompiledPack>> {
        self.packs.iter().find(|p| p.reference() == reference)
    }
}

/// Load and compile every pack and profile under `root`.
pub fn compile_dir(root: &Path) -> Compilation {
    let (sources, mut diagnostics) = pack::load_dir(root);
    let mut packs = Vec::new();
    for src in &sources.packs {
        let (compiled, diags) = compile_pack(src);
        diagnostics.extend(diags);
        if let Some(p) = compiled {
            packs.push(Arc::new(p));
        }
    }
    let by_ref: HashMap<String, Arc<CompiledPack>> =
        packs.iter().map(|p| (p.reference(), p.clone())).collect();
    let mut profiles = Vec::new();
    let mut document_types: Arc<[DocumentTypeDef]> = Arc::new([]);
    if let Some(pf) = &sources.profiles {
        document_types = pf.def.document_types.clone().into();
        for def in &pf.def.profiles {
            let members: Option<Vec<Arc<CompiledPack>>> =
                def.packs.iter().map(|r| by_ref.get(r).cloned()).collect();
            // A missing member was reported by the loader or the pack's compilation.
            let Some(members) = members else { continue };
            // An unknown type was reported by the loader.
            let accepted = def
                .documents
                .iter()
                .filter_map(|d| document_types.iter().find(|t| t.id == *d).cloned())
                .collect();
            let gate = DocumentGate {
                scope: Scope::Profile(def.reference()),
                accepted,
                declared: document_types.clone(),
            };
            match build_ruleset(def.reference(), def.title.clone(), members, Some(gate)) {
                Ok(rs) => profiles.push(CompiledProfile {
                    def: def.clone(),
                    rules: Arc::new(rs),
                }),
                Err(d) => diagnostics.extend(d),
            }
        }
    }
    Compilation {
        root: root.to_path_buf(),
        sources,
        packs,
        profiles,
        document_types,
        diagnostics,
    }
}
