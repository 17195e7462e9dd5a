//! Validate one document many times (for profilers):
//! `cargo run --release -p invex-benches --example validate_loop -- FILE [PROFILE] [N]`.
use invex_engine::registry::Catalog;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let file = args
        .next()
        .unwrap_or_else(|| "examples/invoice-sk.xml".into());
    let profile = args.next().unwrap_or_else(|| "en16931-ubl".into());
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let bytes = std::fs::read(&file).expect("readable file");
    let catalog = Catalog::load(std::path::Path::new(
        &std::env::var("INVEX_RULEPACKS").unwrap_or_else(|_| "rulepacks".into()),
    ))
    .expect("packs compile");
    let ruleset = catalog.ruleset(&profile).expect("profile exists");
    let start = std::time::Instant::now();
    let mut findings = 0;
    for _ in 0..n {
        findings += ruleset
            .validate_bytes(&bytes)
            .expect("validates")
            .findings
            .len();
    }
    let per = start.elapsed() / n as u32;
    println!(
        "{n} runs, {per:?} per document, {} findings each",
        findings / n
    );
    let start = std::time::Instant::now();
    for _ in 0..n {
        let d = invex_engine::document::Document::parse(&bytes).expect("parses");
        std::hint::black_box(&d);
    }
    println!("parse only: {:?} per document", start.elapsed() / n as u32);
}
