//! CSV text (any encoding) through the tabular extractor, with the production limits.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Archives and PDFs are the other targets' inputs.
    if data.starts_with(b"PK") || data.starts_with(b"%PDF") {
        return;
    }
    let limits = invex_server_fuzz::limits();
    let _ = invex_server::convert::tabular::extract(data, Some("fuzz.csv"), None, &limits.tabular);
});
