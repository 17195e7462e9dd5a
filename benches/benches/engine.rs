//! Engine benchmarks: parse only vs parse + validate (with the profile's schema layer, and
//! without it), and the schema layer (UBL 2.1 XSD) on its own over a parsed document, for
//! a typical invoice and for generated invoices of 1,000 and 10,000 lines (BENCHMARKS.md
//! records the results).
//!
//! Run: `cargo bench -p invex-benches --bench engine`
//! Profile: `INVEX_BENCH_PROFILE=en16931-ubl` (default) or any profile of `rulepacks/`.

use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use invex_benches::generate_invoice;
use invex_engine::document::Document;
use invex_engine::registry::Catalog;
use invex_engine::rules::build_ruleset;

// The same allocator as the `invex` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn documents() -> Vec<(String, Vec<u8>)> {
    let typical = repo().join("examples/invoice-sk.xml");
    vec![
        (
            "typical".to_string(),
            std::fs::read(&typical).expect("examples/invoice-sk.xml is shipped in the repo"),
        ),
        (
            "lines-1000".to_string(),
            generate_invoice(1_000).into_bytes(),
        ),
        (
            "lines-10000".to_string(),
            generate_invoice(10_000).into_bytes(),
        ),
    ]
}

fn engine(c: &mut Criterion) {
    let profile =
        std::env::var("INVEX_BENCH_PROFILE").unwrap_or_else(|_| "en16931-ubl".to_string());
    let dir = std::env::var("INVEX_RULEPACKS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo().join("rulepacks"));
    let catalog = Catalog::load(&dir).expect("rule packs compile");
    let ruleset = catalog
        .ruleset(&profile)
        .unwrap_or_else(|| panic!("profile {profile} exists"));

    // The profile's schema layer, and the profile without it: what the layer adds.
    let schema = ruleset
        .packs()
        .find_map(|p| p.schema.as_ref())
        .map(|s| s.schema.clone())
        .unwrap_or_else(|| panic!("profile {profile} has a schema layer"));
    let rules_only = build_ruleset(
        format!("{profile} without its schema layer"),
        None,
        ruleset
            .layers()
            .iter()
            .filter(|l| l.pack.schema.is_none())
            .map(|l| l.pack.clone())
            .collect(),
        None,
    )
    .expect("the rule packs stack without the schema pack");

    let mut group = c.benchmark_group("engine");
    group.measurement_time(Duration::from_secs(8));
    for (name, bytes) in documents() {
        if name == "lines-10000" {
            group.sample_size(10);
        }
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new("parse", &name), &bytes, |b, bytes| {
            b.iter(|| Document::parse(bytes).expect("parses"))
        });
        group.bench_with_input(
            BenchmarkId::new("parse+validate", &name),
            &bytes,
            |b, bytes| b.iter(|| ruleset.validate_bytes(bytes).expect("validates")),
        );
        group.bench_with_input(
            BenchmarkId::new("parse+validate-without-schema", &name),
            &bytes,
            |b, bytes| b.iter(|| rules_only.validate_bytes(bytes).expect("validates")),
        );
        // The schema layer alone, over the parsed document: what it adds to a validation.
        let doc = Document::parse(&bytes).expect("parses");
        assert!(
            schema.check(&doc).is_empty(),
            "{name} is schema-valid, so the figure is the clean path"
        );
        group.bench_with_input(BenchmarkId::new("schema", &name), &doc, |b, doc| {
            b.iter(|| schema.check(doc))
        });
    }
    group.finish();
}

fn compile_packs(c: &mut Criterion) {
    let dir = repo().join("rulepacks");
    let mut group = c.benchmark_group("startup");
    group.sample_size(10);
    group.bench_function("compile-all-packs", |b| {
        b.iter(|| Catalog::load(&dir).expect("packs compile"))
    });
    group.finish();
}

criterion_group!(benches, engine, compile_packs);
criterion_main!(benches);
