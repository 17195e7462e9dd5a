//! Any bytes through the identifier scan of the send path (parties' electronic addresses,
//! VAT identifiers, IBANs, read from the engine's parse of the document).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for fault in invex_server::sending::identifiers::check(data) {
        assert!(!fault.business_term.is_empty());
    }
    let _ = invex_server::sending::document::identity(data);
});
