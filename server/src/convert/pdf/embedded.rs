//! Invoice XML attached to the PDF: the EmbeddedFiles name tree, the catalog's /AF array
//! (PDF/A-3, Factur-X, ZUGFeRD) and file-attachment annotations.

use super::load::{self, Budget};
use super::PdfError;
use lopdf::{Dictionary, Document, Object, ObjectId};
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;
use serde::Serialize;
use std::collections::HashSet;

/// What kind of invoice XML an attachment holds, from its root element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum XmlFlavour {
    /// UBL 2.1 `Invoice` or `CreditNote`: usable as the document itself.
    Ubl,
    /// UN/CEFACT CII `CrossIndustryInvoice` (Factur-X, XRechnung CII, or unnamed).
    FacturX,
    /// CII under a ZUGFeRD file name.
    Zugferd,
    /// Any other XML (or a root we do not recognise).
    Other,
}

impl XmlFlavour {
    pub fn as_str(self) -> &'static str {
        match self {
            XmlFlavour::Ubl => "ubl",
            XmlFlavour::FacturX => "factur-x",
            XmlFlavour::Zugferd => "zugferd",
            XmlFlavour::Other => "other",
        }
    }
}

/// One attached XML file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EmbeddedXml {
    /// The attachment's file name as the PDF states it.
    pub name: String,
    pub flavour: XmlFlavour,
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

const UBL_INVOICE: &[u8] = b"urn:oasis:names:specification:ubl:schema:xsd:Invoice-2";
const UBL_CREDIT_NOTE: &[u8] = b"urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2";

/// The flavour of an XML document by its root element (and, for CII, its name).
pub fn flavour(name: &str, bytes: &[u8]) -> XmlFlavour {
    let mut reader = NsReader::from_reader(bytes);
    loop {
        match reader.read_resolved_event() {
            Ok((ns, Event::Start(e) | Event::Empty(e))) => {
                let local = e.local_name();
                let ns = match ns {
                    ResolveResult::Bound(n) => n.0,
                    _ => b"",
                };
                return match (local.as_ref(), ns) {
                    (b"Invoice", UBL_INVOICE) | (b"CreditNote", UBL_CREDIT_NOTE) => XmlFlavour::Ubl,
                    (b"CrossIndustryInvoice", _)
                        if name.to_ascii_lowercase().contains("zugferd") =>
                    {
                        XmlFlavour::Zugferd
                    }
                    (b"CrossIndustryInvoice", _) => XmlFlavour::FacturX,
                    _ => XmlFlavour::Other,
                };
            }
            Ok((_, Event::Eof)) | Err(_) => return XmlFlavour::Other,
            Ok(_) => {}
        }
    }
}

/// Every attached `.xml` file, or any attachment whose content is an invoice XML.
pub(super) fn find(
    doc: &Document,
    pages: &[ObjectId],
    budget: &mut Budget,
) -> Result<Vec<EmbeddedXml>, PdfError> {
    let mut specs: Vec<&Dictionary> = Vec::new();
    let mut seen: HashSet<ObjectId> = HashSet::new();
    if let Ok(catalog) = doc.catalog() {
        if let Some(tree) = load::get_dict(doc, catalog, b"Names")
            .and_then(|n| load::get_dict(doc, n, b"EmbeddedFiles"))
        {
            let mut leaves = Vec::new();
            name_tree(doc, tree, 0, &mut leaves);
            for leaf in leaves {
                push(doc, leaf, &mut seen, &mut specs);
            }
        }
        if let Some(Object::Array(af)) = load::get(doc, catalog, b"AF") {
            for spec in af {
                push(doc, spec, &mut seen, &mut specs);
            }
        }
    }
    for &page in pages {
        for annot in doc.get_page_annotations(page).unwrap_or_default() {
            if load::get_name(doc, annot, b"Subtype") == Some(b"FileAttachment") {
                if let Ok(fs) = annot.get(b"FS") {
                    push(doc, fs, &mut seen, &mut specs);
                }
            }
        }
    }
    let mut out = Vec::new();
    for spec in specs {
        let name = ["UF", "F"]
            .iter()
            .find_map(|k| {
                load::get(doc, spec, k.as_bytes()).and_then(|o| lopdf::decode_text_string(o).ok())
            })
            .unwrap_or_default();
        let Some(ef) = load::get_dict(doc, spec, b"EF") else {
            continue;
        };
        let stream = ["UF", "F"]
            .iter()
            .find_map(|k| match load::get(doc, ef, k.as_bytes()) {
                Some(Object::Stream(s)) => Some(s),
                _ => None,
            });
        let Some(stream) = stream else { continue };
        let Some(bytes) = budget.decode(stream)? else {
            continue;
        };
        let looks_xml = name.to_ascii_lowercase().ends_with(".xml")
            || bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<');
        if !looks_xml {
            continue;
        }
        let flavour = flavour(&name, &bytes);
        out.push(EmbeddedXml {
            name,
            flavour,
            bytes,
        });
    }
    Ok(out)
}

/// Add a file specification once, however many routes lead to it.
fn push<'a>(
    doc: &'a Document,
    obj: &'a Object,
    seen: &mut HashSet<ObjectId>,
    specs: &mut Vec<&'a Dictionary>,
) {
    if let Ok(id) = obj.as_reference() {
        if !seen.insert(id) {
            return;
        }
    }
    if let Some(d) = load::dict(doc, obj) {
        if !specs.iter().any(|s| std::ptr::eq(*s, d)) {
            specs.push(d);
        }
    }
}

/// Values of a name tree (`Names` pairs, `Kids` recursion), bounded in depth.
fn name_tree<'a>(doc: &'a Document, node: &'a Dictionary, depth: usize, out: &mut Vec<&'a Object>) {
    if depth > 16 || out.len() > 1000 {
        return;
    }
    if let Some(Object::Array(names)) = load::get(doc, node, b"Names") {
        out.extend(names.iter().skip(1).step_by(2));
    }
    if let Some(Object::Array(kids)) = load::get(doc, node, b"Kids") {
        for kid in kids {
            if let Some(k) = load::dict(doc, kid) {
                name_tree(doc, k, depth + 1, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flavour_by_root() {
        let ubl = br#"<?xml version="1.0"?><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>"#;
        assert_eq!(flavour("a.xml", ubl), XmlFlavour::Ubl);
        let cii = br#"<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"></rsm:CrossIndustryInvoice>"#;
        assert_eq!(flavour("factur-x.xml", cii), XmlFlavour::FacturX);
        assert_eq!(flavour("ZUGFeRD-invoice.xml", cii), XmlFlavour::Zugferd);
        assert_eq!(flavour("x.xml", b"<Invoice/>"), XmlFlavour::Other);
        assert_eq!(flavour("x.xml", b"not xml"), XmlFlavour::Other);
    }
}
