//! Conversion throughput: a 10,000-row CSV export (1,000 invoices of 10 lines) read,
//! grouped, written as UBL, validated and gated — beside the reference of merely parsing
//! the same CSV records with the `csv` crate.
//!
//! `cargo bench -p invex-benches --bench convert`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use invex_engine::registry::Catalog;
use invex_server::convert::{extract, review};

const INVOICES: usize = 1_000;
const LINES: usize = 10;

/// A Slovak accounting-style export: semicolons, decimal commas, dd.mm.yyyy dates.
fn export() -> Vec<u8> {
    let mut out = String::from(
        "Číslo faktúry;Dátum vystavenia;Dátum splatnosti;Číslo objednávky;Dodávateľ;IČO dodávateľa;\
         IČ DPH dodávateľa;Ulica dodávateľa;Mesto dodávateľa;PSČ dodávateľa;Štát dodávateľa;\
         Odberateľ;IČ DPH odberateľa;Ulica odberateľa;Obec odberateľa;PSČ odberateľa;Štát odberateľa;\
         Mena;Forma úhrady;IBAN;Položka;Množstvo;MJ;Cena za MJ bez DPH;Sadzba DPH\r\n",
    );
    for i in 0..INVOICES {
        for l in 0..LINES {
            out.push_str(&format!(
                "FV-2027-{i:05};15.01.2027;29.01.2027;OBJ-{i};Dodávateľ s.r.o.;31322832;SK2022749619;\
                 Hlavná 1;Žilina;010 01;SK;Odberateľ a.s.;SK2020317068;Ľubovnianska 5;Bratislava;\
                 851 01;SK;EUR;30;SK3112000000198742637541;Položka č. {l} – služby;{q};ks;{p},50;23\r\n",
                q = l + 1,
                p = 10 + l,
            ));
        }
    }
    out.into_bytes()
}

fn convert(c: &mut Criterion) {
    let bytes = export();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../rulepacks");
    let catalog = Catalog::load(&dir).expect("rule packs");
    let mut group = c.benchmark_group("convert_10k_rows");
    group.sample_size(10);
    group.throughput(Throughput::Elements((INVOICES * LINES) as u64));

    group.bench_function("reference_csv_records", |b| {
        b.iter(|| {
            let mut reader = csv::ReaderBuilder::new()
                .delimiter(b';')
                .from_reader(bytes.as_slice());
            reader.records().filter(|r| r.is_ok()).count()
        })
    });
    group.bench_function("extract", |b| {
        b.iter(|| {
            extract::extract(
                &bytes,
                Some("export.csv"),
                invex_server::validation::Declared::Xml,
                None,
                &Default::default(),
            )
            .expect("extract")
            .candidates
            .len()
        })
    });
    group.bench_function("extract_write_validate_gate", |b| {
        b.iter_batched(
            || (),
            |()| {
                let extracted = extract::extract(
                    &bytes,
                    Some("export.csv"),
                    invex_server::validation::Declared::Xml,
                    None,
                    &Default::default(),
                )
                .expect("extract");
                let mut ready = 0;
                for candidate in &extracted.candidates {
                    let e = review::evaluate(&catalog, None, candidate, 0.8).expect("evaluate");
                    ready += usize::from(e.reasons.is_empty());
                }
                assert_eq!(ready, INVOICES, "every generated invoice converts ready");
                ready
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, convert);
criterion_main!(benches);
