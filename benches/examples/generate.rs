//! Print a generated invoice: `cargo run -p invex-benches --example generate -- LINES`.
fn main() {
    let lines = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    print!("{}", invex_benches::generate_invoice(lines));
}
