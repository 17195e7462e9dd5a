//! PDFs through the PDF extractor, with the production limits.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    invex_server_fuzz::contain_guarded_panics();
    let limits = invex_server_fuzz::limits();
    let _ = invex_server::convert::pdf::extract_with(data, &limits.pdf);
});
