//! Any bytes through the XML parser with the server's limits; on success, every node's
//! links, names, text and line/column are read, so a parse that builds an inconsistent
//! arena is found too.
#![no_main]

use invex_engine::document::{Document, Limits, NodeId, NodeKind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_bytes: 20 * 1024 * 1024,
        max_depth: 128,
    };
    let Ok(doc) = Document::parse_with_limits(data, &limits) else {
        return;
    };
    let root = doc.document_element();
    assert_eq!(doc.kind(root), NodeKind::Element);
    assert_eq!(doc.parent(root), Some(doc.root()));
    for i in 0..doc.len() as u32 {
        let n = NodeId(i);
        let _ = doc.line_column(n);
        let _ = doc.text(n);
        if let Some(name) = doc.name(n) {
            let _ = doc.qname(name);
        }
        for a in doc.attributes(n) {
            assert_eq!(doc.kind(NodeId(a)), NodeKind::Attribute);
            assert_eq!(doc.parent(NodeId(a)), Some(n));
        }
        let mut child = doc.first_child(n);
        while let Some(c) = child {
            assert_eq!(doc.parent(c), Some(n));
            child = doc.next_sibling(c);
        }
    }
    let _ = doc.string_value(root);
});
