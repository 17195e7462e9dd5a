//! What the send pipeline reads from a document beside validation: its number (BT-1) and
//! the buyer's electronic address (BT-49), for the invoice record and support searches.

use quick_xml::events::Event;
use quick_xml::Reader;

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub document_id: Option<String>,
    /// `scheme:value`, e.g. `0245:2022749619`.
    pub buyer_endpoint: Option<String>,
}

fn local(name: &[u8]) -> &[u8] {
    name.rsplit(|b| *b == b':').next().unwrap_or(name)
}

/// Read the identity of an already validated UBL document (so it is well-formed and has
/// no DTD); anything unexpected just leaves a field empty.
pub fn identity(xml: &[u8]) -> Identity {
    let mut reader = Reader::from_reader(xml);
    let mut path: Vec<Vec<u8>> = Vec::new();
    let mut out = Identity::default();
    let mut scheme: Option<String> = None;
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => {
                let name = local(e.name().as_ref()).to_vec();
                if name == b"EndpointID" {
                    scheme = e
                        .try_get_attribute("schemeID")
                        .ok()
                        .flatten()
                        .and_then(|a| a.unescape_value().ok().map(|v| v.to_string()));
                }
                path.push(name);
            }
            Ok(Event::End(_)) => {
                path.pop();
            }
            Ok(Event::Text(t)) => {
                let Ok(value) = t.unescape() else { continue };
                let value = value.trim().to_string();
                let names: Vec<&[u8]> = path.iter().map(Vec::as_slice).collect();
                match names.as_slice() {
                    [_, b"ID"] if out.document_id.is_none() => out.document_id = Some(value),
                    [_, b"AccountingCustomerParty", b"Party", b"EndpointID"] => {
                        out.buyer_endpoint = Some(match &scheme {
                            Some(s) => format!("{s}:{value}"),
                            None => value,
                        });
                    }
                    _ => {}
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
        buf.clear();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_number_and_the_buyer_address() {
        let xml = br#"<Invoice xmlns:cbc="c" xmlns:cac="a"><cbc:ID>INV-7</cbc:ID>
            <cac:AccountingSupplierParty><cac:Party><cbc:EndpointID schemeID="0245">111</cbc:EndpointID></cac:Party></cac:AccountingSupplierParty>
            <cac:AccountingCustomerParty><cac:Party><cbc:EndpointID schemeID="0245">2022749619</cbc:EndpointID></cac:Party></cac:AccountingCustomerParty></Invoice>"#;
        let id = identity(xml);
        assert_eq!(id.document_id.as_deref(), Some("INV-7"));
        assert_eq!(id.buyer_endpoint.as_deref(), Some("0245:2022749619"));
    }
}
