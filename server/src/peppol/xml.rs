//! A small namespace-aware element tree for SMP answers. SMP documents are small and
//! shallow; a tree keeps the parsing code readable. Document type declarations are
//! refused outright (no DTDs, so no entity expansion), and depth is bounded.

use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;

/// Deepest nesting accepted (a SignedServiceMetadata with its signature is about 8 deep).
const MAX_DEPTH: usize = 32;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Element {
    /// Namespace URI (empty when unqualified).
    pub ns: String,
    /// Local name.
    pub name: String,
    /// Attributes by local name (SMP attributes are unqualified).
    pub attrs: Vec<(String, String)>,
    /// Text content directly inside this element, trimmed.
    pub text: String,
    pub children: Vec<Element>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum XmlError {
    #[error("not well-formed XML: {0}")]
    Syntax(String),
    #[error("document type declarations are not accepted")]
    Doctype,
    #[error("nesting deeper than {MAX_DEPTH} elements")]
    TooDeep,
    #[error("no root element")]
    Empty,
}

impl Element {
    /// The first child in one of `namespaces` with local name `name`.
    pub fn child(&self, namespaces: &[&str], name: &str) -> Option<&Element> {
        self.children
            .iter()
            .find(|c| c.name == name && namespaces.contains(&c.ns.as_str()))
    }

    /// Every child in one of `namespaces` with local name `name`.
    pub fn children_named<'a>(
        &'a self,
        namespaces: &'a [&'a str],
        name: &'a str,
    ) -> impl Iterator<Item = &'a Element> + 'a {
        self.children
            .iter()
            .filter(move |c| c.name == name && namespaces.contains(&c.ns.as_str()))
    }

    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The trimmed text, or None when empty.
    pub fn text(&self) -> Option<&str> {
        Some(self.text.as_str()).filter(|t| !t.is_empty())
    }
}

/// Parse `bytes` into the root element.
pub fn parse(bytes: &[u8]) -> Result<Element, XmlError> {
    let mut reader = NsReader::from_reader(bytes);
    reader.config_mut().trim_text(true);
    let syntax = |e: quick_xml::Error| XmlError::Syntax(e.to_string());
    let mut stack: Vec<Element> = Vec::new();
    loop {
        let (ns, event) = reader.read_resolved_event().map_err(syntax)?;
        let namespace = match ns {
            ResolveResult::Bound(n) => String::from_utf8_lossy(n.as_ref()).into_owned(),
            _ => String::new(),
        };
        let self_closing = matches!(event, Event::Empty(_));
        match event {
            Event::DocType(_) => return Err(XmlError::Doctype),
            Event::Start(start) | Event::Empty(start) => {
                let mut element = Element {
                    ns: namespace,
                    name: String::from_utf8_lossy(start.local_name().as_ref()).into_owned(),
                    ..Element::default()
                };
                for attr in start.attributes() {
                    let attr = attr.map_err(|e| XmlError::Syntax(e.to_string()))?;
                    let key = String::from_utf8_lossy(attr.key.local_name().as_ref()).into_owned();
                    let value = attr.unescape_value().map_err(syntax)?.into_owned();
                    element.attrs.push((key, value));
                }
                stack.push(element);
                if stack.len() > MAX_DEPTH {
                    return Err(XmlError::TooDeep);
                }
                if self_closing {
                    if let Some(done) = close(&mut stack) {
                        return Ok(done);
                    }
                }
            }
            Event::End(_) => {
                if let Some(done) = close(&mut stack) {
                    return Ok(done);
                }
            }
            Event::Text(text) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&text.unescape().map_err(syntax)?);
                }
            }
            Event::CData(data) => {
                if let Some(top) = stack.last_mut() {
                    top.text
                        .push_str(&String::from_utf8_lossy(&data.into_inner()));
                }
            }
            Event::Eof => return Err(XmlError::Empty),
            _ => {}
        }
    }
}

/// Pop the innermost element into its parent; the root when it closes.
fn close(stack: &mut Vec<Element>) -> Option<Element> {
    let mut done = stack.pop()?;
    done.text = done.text.trim().to_string();
    match stack.last_mut() {
        Some(parent) => {
            parent.children.push(done);
            None
        }
        None => Some(done),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_resolve_through_prefixes_and_defaults() {
        let root = parse(
            br#"<?xml version="1.0"?><a:Root xmlns:a="urn:a" xmlns="urn:b"><Item k="v &amp; w">x &lt; y</Item><a:Empty/><![CDATA[z]]></a:Root>"#,
        )
        .expect("parse");
        assert_eq!((root.ns.as_str(), root.name.as_str()), ("urn:a", "Root"));
        let item = root.child(&["urn:b"], "Item").expect("item");
        assert_eq!(item.attr("k"), Some("v & w"));
        assert_eq!(item.text(), Some("x < y"));
        assert!(root.child(&["urn:a"], "Item").is_none());
        assert!(root.child(&["urn:a"], "Empty").is_some());
        assert_eq!(root.text, "z");
    }

    #[test]
    fn doctypes_and_broken_documents_are_refused() {
        assert_eq!(
            parse(br#"<!DOCTYPE x [<!ENTITY e "boom">]><x>&e;</x>"#),
            Err(XmlError::Doctype)
        );
        assert!(matches!(parse(b"<a><b></a>"), Err(XmlError::Syntax(_))));
        assert_eq!(parse(b""), Err(XmlError::Empty));
        let deep = format!("{}{}", "<a>".repeat(40), "</a>".repeat(40));
        assert_eq!(parse(deep.as_bytes()), Err(XmlError::TooDeep));
    }
}
