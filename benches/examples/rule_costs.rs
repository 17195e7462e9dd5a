//! Time every rule context and test of a profile on one document, most expensive first:
//! `cargo run --release -p invex-benches --example rule_costs -- FILE [PROFILE] [REPEAT] [TOP]`.
//! Each context and test is run REPEAT times (default 200) so that the timer's own cost
//! does not dominate sub-microsecond rules; the figures are per single run.
use std::time::{Duration, Instant};

use invex_engine::document::Document;
use invex_engine::registry::Catalog;
use invex_engine::xpath::Evaluator;

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args
        .next()
        .unwrap_or_else(|| "examples/invoice-sk.xml".into());
    let profile = args.next().unwrap_or_else(|| "en16931-ubl".into());
    let repeat: u32 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(200)
        .max(1);
    let top: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(25);
    let dir = std::env::var("INVEX_RULEPACKS").unwrap_or_else(|_| "rulepacks".into());
    let catalog = Catalog::load(std::path::Path::new(&dir)).expect("packs compile");
    let ruleset = catalog.ruleset(&profile).expect("profile exists");
    let bytes = std::fs::read(&file).expect("readable file");
    let doc = Document::parse(&bytes).expect("parses");
    let mut costs: Vec<(Duration, String)> = Vec::new();
    // Warm-up pass (name tables, thread-local regexes), then the measured pass.
    for pass in 0..2 {
        costs.clear();
        for pack in ruleset.packs() {
            let mut ev = Evaluator::new(&doc, pack.variable_count);
            for pattern in &pack.patterns {
                for rule in &pattern.rules {
                    let t = Instant::now();
                    let mut nodes = Vec::new();
                    for _ in 0..repeat {
                        nodes = ev
                            .select_nodes(&rule.context, doc.root())
                            .unwrap_or_default();
                    }
                    costs.push((
                        t.elapsed() / repeat,
                        format!("context {}", rule.context_source),
                    ));
                    for c in &rule.checks {
                        let t = Instant::now();
                        for _ in 0..repeat {
                            for n in &nodes {
                                let _ = std::hint::black_box(ev.eval_boolean(&c.test, *n));
                            }
                        }
                        costs.push((
                            t.elapsed() / repeat,
                            format!("{} on {} node(s)", c.id, nodes.len()),
                        ));
                    }
                }
            }
        }
        let _ = pass;
    }
    costs.sort_by_key(|c| std::cmp::Reverse(c.0));
    let total: Duration = costs.iter().map(|c| c.0).sum();
    println!("total {total:?}");
    for (d, what) in costs.iter().take(top) {
        println!("{d:>12?}  {what}");
    }
}
