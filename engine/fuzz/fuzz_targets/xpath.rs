//! Any text through the XPath compiler (parser, lowering to invex's IR, code-list and
//! regex translation), as an expression and as a rule context, with the namespaces the
//! shipped packs declare.
#![no_main]

use invex_engine::xpath::{compile, compile_pattern, StaticContext};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let mut sc = StaticContext::new();
    for (prefix, uri) in [
        ("ubl", "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"),
        ("cn", "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"),
        ("cac", "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"),
        ("cbc", "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"),
    ] {
        sc.add_namespace(prefix, uri);
    }
    let slot = sc.declare_variable("v");
    if let Ok(e) = compile("true()", &sc) {
        sc.bind_variable(slot, &e);
    }
    let _ = compile(src, &sc);
    let _ = compile_pattern(src, &sc);
});
