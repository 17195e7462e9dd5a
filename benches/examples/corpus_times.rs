//! Per-document validation time over the corpus's example invoices (issue 3's "typical
//! invoices"): for every `*.xml` under `<corpus>/en16931/examples`, `<corpus>/peppol/examples`
//! and `<corpus>/peppol/national-examples` between 4 and 22 KB, the median of many timed
//! batches of parse + validate, and of parse alone; then the median over the documents.
//!
//! `cargo run --release -p invex-benches --example corpus_times -- [CORPUS] [PROFILE] [ROUNDS]`
//!
//! CORPUS defaults to `$INVEX_CONFORMANCE` or `../shared/conformance`, PROFILE to
//! `peppol-bis3-sk`. Rounds interleave the documents (each round times every document
//! once), so that a slow phase of a shared machine spreads over all of them.
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use invex_engine::document::Document;
use invex_engine::registry::Catalog;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Runs per timed batch: a batch lasts well over the timer's resolution.
const BATCH: u32 = 20;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let corpus = args
        .next()
        .or_else(|| std::env::var("INVEX_CONFORMANCE").ok())
        .unwrap_or_else(|| "../shared/conformance".into());
    let profile = args.next().unwrap_or_else(|| "peppol-bis3-sk".into());
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(60);
    let dir = std::env::var("INVEX_RULEPACKS").unwrap_or_else(|_| "rulepacks".into());
    let catalog =
        Catalog::load(Path::new(&dir)).map_err(|e| format!("rule packs in {dir}: {e}"))?;
    let ruleset = catalog
        .ruleset(&profile)
        .ok_or_else(|| format!("no profile {profile}"))?;

    let docs = examples(Path::new(&corpus))?;
    if docs.is_empty() {
        return Err(format!("no example invoices under {corpus}/corpus").into());
    }
    let mut validate: Vec<Vec<Duration>> = vec![Vec::new(); docs.len()];
    let mut parse: Vec<Vec<Duration>> = vec![Vec::new(); docs.len()];
    // One untimed round warms the caches the way a running server has them warm.
    for (_, bytes) in &docs {
        std::hint::black_box(ruleset.validate_bytes(bytes)?);
    }
    for _ in 0..rounds {
        for (i, (_, bytes)) in docs.iter().enumerate() {
            let t = Instant::now();
            for _ in 0..BATCH {
                std::hint::black_box(ruleset.validate_bytes(bytes)?);
            }
            validate[i].push(t.elapsed() / BATCH);
            let t = Instant::now();
            for _ in 0..BATCH {
                std::hint::black_box(Document::parse(bytes)?);
            }
            parse[i].push(t.elapsed() / BATCH);
        }
    }
    println!(
        "profile {profile}, {} documents, {rounds} rounds of {BATCH} runs each",
        docs.len()
    );
    println!(
        "{:<48} {:>8} {:>12} {:>12} {:>8}",
        "document", "bytes", "validate", "parse", "ratio"
    );
    let mut v_meds = Vec::new();
    let mut ratios = Vec::new();
    for (i, (path, bytes)) in docs.iter().enumerate() {
        let v = median(&mut validate[i]);
        let p = median(&mut parse[i]);
        let ratio = v.as_secs_f64() / p.as_secs_f64();
        println!(
            "{:<48} {:>8} {:>12?} {:>12?} {:>8.1}",
            path.strip_prefix(&corpus).unwrap_or(path).display(),
            bytes.len(),
            v,
            p,
            ratio
        );
        v_meds.push(v);
        ratios.push(ratio);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "median over documents: parse + validate {:?}, validate ÷ parse {:.1}",
        median(&mut v_meds),
        ratios[ratios.len() / 2]
    );
    Ok(())
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

fn examples(corpus: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut out = Vec::new();
    for sub in [
        "en16931/examples",
        "peppol/examples",
        "peppol/national-examples",
    ] {
        let Ok(entries) = std::fs::read_dir(corpus.join("corpus").join(sub)) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_some_and(|x| x == "xml") {
                let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                if (4_000..=22_528).contains(&bytes.len()) {
                    out.push((path, bytes));
                }
            }
        }
    }
    out.sort();
    Ok(out)
}
