//! Workbooks through the tabular extractor, with the production limits: raw archives
//! (inputs starting with `PK`), or the template with its worksheet, shared strings and
//! workbook parts taken from the input (see `workbook_from_parts`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    invex_server_fuzz::contain_guarded_panics();
    let limits = invex_server_fuzz::limits();
    let built;
    let workbook = if data.starts_with(b"PK") {
        data
    } else {
        built = invex_server_fuzz::workbook_from_parts(data);
        &built
    };
    let _ = invex_server::convert::tabular::extract(
        workbook,
        Some("fuzz.xlsx"),
        None,
        &limits.tabular,
    );
});
